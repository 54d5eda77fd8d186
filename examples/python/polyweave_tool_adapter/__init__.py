"""Python binding of the polyweave tool-call router, over its C ABI with `ctypes` only.

Everything goes through the C functions of `libpolyweave_tool_adapter_ffi`: the copy inside
this package's directory (which the wheel carries), or `$PW_LIB` when set. See `Wrapper` and
`AdapterCall`; `LineSplitter` for NDJSON lines out of a byte stream; for a provider's streamed
response body `Decoder` / `decode` (frames out) and `encode_item` (a frame as the provider's
request item); for the next request's body `Conversation` (system and user texts, the decoded
responses, the results) and `Conversation.request` (a `Request`: its length, then its bytes
whole or in chunks); for MCP servers as tool adapters `polyweave_tool_adapter.mcp`
(`McpClient`, `McpServer` / `serve_stdio` over a child's stdio, `McpHttpServer` /
`connect_http` over Streamable HTTP).
"""

from . import errors, mcp
from .decode import *  # noqa: F401,F403
from .decode import __all__ as _decode_all
from .errors import *  # noqa: F401,F403 (one class per pw_result code)
from .lines import LineSplitter
from .wrapper import *  # noqa: F401,F403
from .wrapper import __all__ as _wrapper_all
from .request import *  # noqa: F401,F403
from .request import __all__ as _request_all
from .mcp import (
    McpClient,
    McpConfig,
    McpHttpServer,
    McpServer,
    McpStartupError,
    McpToolError,
    connect_http,
    serve_stdio,
)

_mcp_all = [
    "mcp",
    "McpClient",
    "McpConfig",
    "McpHttpServer",
    "McpServer",
    "McpStartupError",
    "McpToolError",
    "connect_http",
    "serve_stdio",
]
#: The package's version: its library's (`pw_version()`), which is the crates' and the
#: distribution's (setup.py refuses to build a wheel where they differ).
__version__: str = version().split("/", 1)[1]

__all__ = (
    ["__version__", "LineSplitter"]
    + list(_wrapper_all)
    + list(_decode_all)
    + list(_request_all)
    + list(errors.__all__)
    + _mcp_all
)
