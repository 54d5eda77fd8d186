"""Python binding of the polyweave tool-call router, over its C ABI with `ctypes` only.

Everything goes through the C functions of `libpolyweave_tool_adapter_ffi` (`$PW_LIB`, or
`target/release/` under the repository root); see `Wrapper` and `AdapterCall`.
"""

from . import errors
from .errors import *  # noqa: F401,F403 (one class per pw_result code)
from .wrapper import *  # noqa: F401,F403
from .wrapper import __all__ as _wrapper_all

__all__ = list(_wrapper_all) + list(errors.__all__)
