"""`LineSplitter`: NDJSON lines out of a byte stream cut anywhere (`pw_line_splitter`)."""

from __future__ import annotations

import ctypes
from ctypes import byref, c_size_t
from typing import List

from . import _ffi
from ._owned import _Block, _Owned
from .errors import check
from .wrapper import Data, _bytes

__all__ = ["LineSplitter"]


class LineSplitter(_Owned):
    """`pw_line_splitter`: a byte stream in, in chunks cut anywhere; its lines out, without
    their line ending (`\\n` or `\\r\\n`), blank lines skipped.

    `line_cap` is the longest line kept, in bytes; a longer one is dropped whole and counted in
    `too_long` (the line after it is intact). `feed(data)` returns the lines `data` completed;
    `finish()` ends the stream and returns its last line, if it had no line ending, after which
    the splitter takes the next stream. The splitter and its line buffer live in memory this
    object owns; `close()` (or leaving a `with` block) lets it go.
    """

    def __init__(self, line_cap: int = 64 * 1024) -> None:
        if not isinstance(line_cap, int) or isinstance(line_cap, bool) or line_cap < 1:
            raise TypeError("line_cap must be a positive int")
        #: Lines dropped as longer than `line_cap`, since the splitter was made.
        self.too_long = 0
        self.line_cap = line_cap
        self._line_buf = ctypes.create_string_buffer(line_cap)
        self._block = _Block(_ffi.lib.pw_line_splitter_size(), _ffi.lib.pw_line_splitter_align())
        s = ctypes.POINTER(_ffi.pw_line_splitter)()
        check(
            _ffi.lib.pw_line_splitter_init(
                self._block.address, self._block.size, self._line_buf, line_cap, byref(s)
            )
        )
        self._c = s
        self._line = ctypes.POINTER(ctypes.c_uint8)()
        self._len = c_size_t(0)

    def _take(self, out: List[bytes], finishing: bool) -> None:
        s = self._ptr()
        step = _ffi.lib.pw_line_splitter_finish if finishing else _ffi.lib.pw_line_splitter_next_line
        while True:
            r = step(s, byref(self._line), byref(self._len))
            if r == _ffi.PW_NOTHING:
                return
            if r == _ffi.PW_LINE_TOO_LONG:
                self.too_long += 1
                continue
            check(r)
            out.append(ctypes.string_at(self._line, self._len.value))

    def feed(self, data: Data) -> List[bytes]:
        """Stream bytes in (a `str` as UTF-8): the lines they completed."""
        raw = _bytes(data, "data")
        lines: List[bytes] = []
        s = self._ptr()
        base = ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p).value or 0
        at, used = 0, c_size_t(0)
        while at < len(raw):
            check(_ffi.lib.pw_line_splitter_feed(s, base + at, len(raw) - at, byref(used)))
            at += used.value
            before = len(lines)
            too_long = self.too_long
            self._take(lines, False)
            if used.value == 0 and len(lines) == before and self.too_long == too_long:
                # The library takes nothing only while a line waits, and it was taken.
                raise RuntimeError("pw_line_splitter_feed took no bytes with no line waiting")
        return lines

    def finish(self) -> List[bytes]:
        """Ends the stream: its last line when it had no line ending (else nothing). The
        splitter then takes the next stream."""
        lines: List[bytes] = []
        self._take(lines, True)
        return lines

    def __repr__(self) -> str:
        state = "closed" if self.closed else "line_cap=%d" % self.line_cap
        return "LineSplitter(%s)" % state
