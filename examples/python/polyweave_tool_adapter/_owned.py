"""The one base of the objects that live in a block of Python-owned memory (`Wrapper`,
`AdapterCall`, `Decoder`, `McpClient`): the block's lifetime (`close()`, `with`), and the guard
against a call into the library from Python code the library itself is running.

A `Wrapper` runs Python code from inside its C calls: its sync tools and its hooks. While one of
them runs, the C function that called it is still working in the wrapper's memory, so the header
forbids them to call any function on that wrapper (in the Rust behind it, a second `&mut` to the
same wrapper: undefined behaviour), and releasing the block then would free memory the library
is about to go on writing (a use after free). So while such a callback runs, every method that
would enter C refuses with `ReentrantCall`, before touching anything, and so does `close()`:
refused rather than deferred to the end of the outermost call, so that the object a callback
sees stays usable and `close()` means the same everywhere. The other objects' C functions call
no Python code, so for them the guard never fires; it is here, in the one base, so that any
callback added to them later is guarded the same way.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional, TypeVar

from .errors import ReentrantCall

_Self = TypeVar("_Self", bound="_Owned")


class _Block:
    """One `bytearray` pinned for the object's life (ctypes exports its buffer, so it can neither
    be resized nor freed while the view lives), with an address aligned to `align`."""

    def __init__(self, size: int, align: int) -> None:
        self.data: Optional[bytearray] = bytearray(size + align)
        self.view: Optional[ctypes.Array[ctypes.c_char]] = (ctypes.c_char * len(self.data)).from_buffer(self.data)
        base = ctypes.addressof(self.view)
        self.address = base + (-base) % align
        self.size = size

    def release(self) -> None:
        self.view = None
        self.data = None


class _Owned:
    """An object in one `_Block`: `_c` is the library's pointer to it (None once closed).

    Class-level defaults, so that `close()` works on an object whose constructor failed part
    way (`McpServer` closes what it made)."""

    _block: Optional[_Block] = None
    _c: Any = None
    #: How many of the object's Python callbacks are running inside its C calls: 0 or 1 (a
    #: nested one would need a call into C from a callback, which is what is refused).
    _inside: int = 0

    def _refuse_inside(self, what: str) -> None:
        if self._inside:
            name = type(self).__name__
            raise ReentrantCall(
                "%s called from inside one of the %s's own sync tools or hooks: the library is still "
                "running in it (call it after the outer call returns)" % (what % name, name)
            )

    def close(self) -> None:
        """Lets the memory block go; any later call raises `ValueError`. Idempotent. From inside
        the object's own sync tool or hook it raises `ReentrantCall` and changes nothing."""
        self._refuse_inside("%s.close()")
        self._c = None
        if self._block is not None:
            self._block.release()
            self._block = None

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._c is None

    @property
    def memory_size(self) -> int:
        """Bytes of the block (the library's `pw_*_size`); 0 once closed."""
        return self._block.size if self._block is not None else 0

    def _ptr(self) -> Any:
        """The pointer every C call takes: `ValueError` once closed, `ReentrantCall` from
        inside the object's own callbacks (checked first: a callback never sees it closed)."""
        self._refuse_inside("a %s method")
        if self._c is None:
            raise ValueError("operation on a closed %s" % type(self).__name__)
        return self._c
