"""MCP servers as tool adapters (SPEC §9), over the C ABI's `pw_mcp_*`.

Two levels:

- `McpClient`: the sans-IO client itself. Bytes from the server go in with `feed`, the
  wrapper's adapter frames (`Route.ADAPTER`) with `handle_frame`, the end of the transport with
  `handle_closed`; lines for the server come out of `poll_transmit`, frames for the wrapper's
  adapter calls out of `poll_frame` (hand them to `Wrapper.handle_adapter_frame`), the start-up,
  the listed tools and the server's notifications out of `poll_event` (small dataclasses). After
  every input, drain all three. Its only clock is the start-up's: by default it asks
  `server/discover` first (SPEC §9.9) and speaks 2026-07-28 to a server that lists it, else the
  `initialize` handshake of 2025-11-25 follows on the same connection, when the server refuses
  the probe or leaves it unanswered until `poll_timeout()` (call `handle_timeout(now_ms)` then);
  `revision=` fixes one. The wrapper times calls out (restarted by the server's progress) and
  sends the `CANCEL` that becomes `notifications/cancelled`.
- `McpServer` (a context manager) and `serve_stdio`: a server run as a child process
  (`subprocess.Popen`, its stdin and stdout on pipes, served with `selectors`), started, its
  tools listed and registered as adapter tools of a `Wrapper`; `run(frames)` runs model frames
  through that wrapper and returns what it sent to the model and to the consumer, with the
  clock (`time.monotonic`), the start-up's deadline, progress and timeouts handled.
- `McpHttpServer` / `connect_http`: the same for a server at an `http://` URL over Streamable
  HTTP (SPEC §9.11), with `McpClient.http` (POSTs out of `poll_request`, each response reported
  as its stream) on `http.client` threads, one connection per POST.

    with McpServer(["node", "server-everything/dist/index.js", "stdio"], timeout_ms=5000) as s:
        print([t.name for t in s.tools])
        print(s.call("echo", {"message": "hi"}))   # [{'type': 'text', 'text': 'Echo: hi'}]
"""

from __future__ import annotations

import ctypes
import enum
import http.client
import json
import os
import queue
import selectors
import socket
import subprocess
import threading
import time
import urllib.parse
from collections import deque
from ctypes import byref, c_size_t, c_uint32
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _ffi
from .errors import (
    CallNotWaiting,
    McpFramePending,
    McpOutboxFull,
    McpPollFirst,
    McpUnknownCall,
    QueueFull,
    check,
)
from ._owned import _Block, _Owned
from .errors import SchemaError
from .wrapper import (
    CallHandle,
    Data,
    Disposition,
    Route,
    SchemaLike,
    Wrapper,
    WrapperConfig,
    _bytes,
    _schema_bytes,
    adapter,
    check_schema,
)

__all__ = [
    "Failure",
    "Handled",
    "HandledKind",
    "Initialized",
    "ListedTool",
    "McpClient",
    "McpConfig",
    "McpRevision",
    "McpFrame",
    "McpHttpServer",
    "McpPost",
    "McpClose",
    "McpServer",
    "McpStartupError",
    "McpState",
    "McpStats",
    "McpToolError",
    "Notification",
    "Ready",
    "Sent",
    "SkipReason",
    "StartError",
    "StartFailed",
    "ToolListed",
    "ToolSkipped",
    "ToolsChanged",
    "UncheckedSchema",
    "connect_http",
    "serve_stdio",
]


def _value_end(t: bytes, i: int) -> int:
    """Just past the JSON value that starts at `i` in valid JSON `t`."""
    c = t[i:i + 1]
    if c == b'"':
        return _string_end(t, i)
    if c in (b"{", b"["):
        depth = 0
        while i < len(t):
            c = t[i:i + 1]
            if c == b'"':
                i = _string_end(t, i)
                continue
            if c in (b"{", b"["):
                depth += 1
            elif c in (b"}", b"]"):
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return len(t)
    while i < len(t) and t[i:i + 1] not in (b" ", b"\t", b"\n", b"\r", b",", b"}", b"]"):
        i += 1
    return i


def _string_end(t: bytes, i: int) -> int:
    i += 1
    while i < len(t):
        c = t[i:i + 1]
        if c == b"\\":
            i += 2
            continue
        if c == b'"':
            return i + 1
        i += 1
    return len(t)


def _skip_ws(t: bytes, i: int) -> int:
    while i < len(t) and t[i:i + 1] in (b" ", b"\t", b"\n", b"\r"):
        i += 1
    return i


def _member_text(entry: bytes, key: str) -> Optional[bytes]:
    """The exact text of member `key`'s value in `entry`, a JSON object's valid text (the last
    member so named, as `json.loads` reads it), or None: a tool's `inputSchema` as the server
    wrote it, numbers past a double's precision included."""
    i = _skip_ws(entry, 0)
    if entry[i:i + 1] != b"{":
        return None
    found = None
    i += 1
    while True:
        i = _skip_ws(entry, i)
        if entry[i:i + 1] == b",":
            i = _skip_ws(entry, i + 1)
        if entry[i:i + 1] != b'"':
            return found
        name_end = _string_end(entry, i)
        name = json.loads(entry[i:name_end])
        start = _skip_ws(entry, _skip_ws(entry, name_end) + 1)
        end = _value_end(entry, start)
        if name == key:
            found = entry[start:end]
        i = end


#: An event of `McpClient.poll_event`.
McpEvent = Union["Initialized", "ToolListed", "ToolSkipped", "Ready", "ToolsChanged", "StartFailed", "Notification"]
#: What names an adapter call to the client: the wrapper's `CallHandle`, an `McpFrame`, or
#: `(slot, index)`.
CallRef = Union[CallHandle, "McpFrame", Tuple[int, int]]
#: A model frame for `McpServer.run`: its bytes (or str), or a JSON value to serialise.
FrameLike = Union[Data, Dict[str, Any]]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# ------------------------------------------------------------ typed values


class McpState(enum.IntEnum):
    """Where a client is in its life (`pw_mcp_state`)."""

    IDLE = _ffi.PW_MCP_STATE_IDLE
    STARTING = _ffi.PW_MCP_STATE_STARTING
    READY = _ffi.PW_MCP_STATE_READY
    FAILED = _ffi.PW_MCP_STATE_FAILED
    CLOSED = _ffi.PW_MCP_STATE_CLOSED


class SkipReason(enum.IntEnum):
    """Why a listed tool was skipped."""

    NAME_TOO_LONG = _ffi.PW_MCP_SKIP_NAME_TOO_LONG
    NO_NAME = _ffi.PW_MCP_SKIP_NO_NAME
    BAD_HEADER_ANNOTATION = _ffi.PW_MCP_SKIP_BAD_HEADER_ANNOTATION
    HEADER_TABLE_FULL = _ffi.PW_MCP_SKIP_HEADER_TABLE_FULL


class StartError(enum.IntEnum):
    """Why the start-up failed."""

    UNSUPPORTED_VERSION = _ffi.PW_MCP_START_UNSUPPORTED_VERSION
    BAD_RESULT = _ffi.PW_MCP_START_BAD_RESULT
    REFUSED = _ffi.PW_MCP_START_REFUSED
    CURSOR_TOO_LONG = _ffi.PW_MCP_START_CURSOR_TOO_LONG
    TOO_MANY_PAGES = _ffi.PW_MCP_START_TOO_MANY_PAGES
    RESPONSE_TOO_LARGE = _ffi.PW_MCP_START_RESPONSE_TOO_LARGE
    NO_ANSWER = _ffi.PW_MCP_START_NO_ANSWER
    NO_RESPONSE = _ffi.PW_MCP_START_NO_RESPONSE


class McpRevision(str, enum.Enum):
    """Which MCP revision a client speaks (`McpConfig(revision=...)`; SPEC §9.9): `AUTO` finds
    it out with `server/discover`; the others fix one. Each is also its string."""

    AUTO = "auto"
    V2025_11_25 = "2025-11-25"
    V2026_07_28 = "2026-07-28"


# `pw_mcp_revision` of each `McpRevision`, and back.
_REVISION_C = {
    McpRevision.AUTO: _ffi.PW_MCP_REVISION_AUTO,
    McpRevision.V2025_11_25: _ffi.PW_MCP_REVISION_2025_11_25,
    McpRevision.V2026_07_28: _ffi.PW_MCP_REVISION_2026_07_28,
}
_REVISION_OF_C = {v: k for k, v in _REVISION_C.items()}


class HandledKind(enum.IntEnum):
    """What `McpClient.handle_frame` did with a frame."""

    SENT = _ffi.PW_MCP_HANDLED_SENT
    FAILED = _ffi.PW_MCP_HANDLED_FAILED
    CANCELLED = _ffi.PW_MCP_HANDLED_CANCELLED


class Failure(enum.IntEnum):
    """Why the client failed a call itself (its `ERROR` waits in `poll_frame`)."""

    NONE = _ffi.PW_MCP_FAILURE_NONE
    CLOSED = _ffi.PW_MCP_FAILURE_CLOSED
    NOT_STARTED = _ffi.PW_MCP_FAILURE_NOT_STARTED
    ARGS_NOT_OBJECT = _ffi.PW_MCP_FAILURE_ARGS_NOT_OBJECT
    TOO_MANY = _ffi.PW_MCP_FAILURE_TOO_MANY
    REQUEST_TOO_LONG = _ffi.PW_MCP_FAILURE_REQUEST_TOO_LONG
    RESPONSE_TOO_LONG = _ffi.PW_MCP_FAILURE_RESPONSE_TOO_LONG
    RESPONSE_TOO_DEEP = _ffi.PW_MCP_FAILURE_RESPONSE_TOO_DEEP
    NO_OUTCOME = _ffi.PW_MCP_FAILURE_NO_OUTCOME
    INPUT_REQUIRED = _ffi.PW_MCP_FAILURE_INPUT_REQUIRED
    HTTP = _ffi.PW_MCP_FAILURE_HTTP


# Events (`McpClient.poll_event`): raw JSON stays bytes as the server sent it; `.json` parses.


@dataclass(frozen=True)
class Initialized:
    """The server answered `initialize` with a revision the client speaks, or listed
    2026-07-28 in its `server/discover` result; `protocol_version` is the revision spoken from
    now on, `result` the answer as sent."""

    protocol_version: str
    result: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.result)


@dataclass(frozen=True)
class ToolListed:
    """A listed tool (`name` decoded; its entry as sent): register it as an adapter tool."""

    name: str
    tool: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.tool)


@dataclass(frozen=True)
class ToolSkipped:
    """A listed tool the client cannot serve: `NAME_TOO_LONG` (`len` > `cap`) or `NO_NAME`."""

    reason: SkipReason
    tool: bytes
    len: int = 0
    cap: int = 0


@dataclass(frozen=True)
class Ready:
    """Every page is listed (`tools` handed out as `ToolListed`): calls go to the server."""

    tools: int


@dataclass(frozen=True)
class ToolsChanged:
    """The server's tools changed and were listed again (SPEC §9.12): the `ToolListed`s since
    its `notifications/tools/list_changed` are its whole list now (`tools` of them)."""

    tools: int


@dataclass(frozen=True)
class StartFailed:
    """The start-up failed (`raw`: the value it failed on as sent, `len` for a cursor too long);
    calls waiting fail, later ones fail at once."""

    error: StartError
    raw: bytes = b""
    len: int = 0


@dataclass(frozen=True)
class Notification:
    """A notification other than progress; `params` as sent (None without), `method_cut` when
    the method was cut to `PW_MCP_METHOD_CAP` bytes."""

    method: str
    params: Optional[bytes] = None
    method_cut: bool = False


@dataclass(frozen=True)
class Handled:
    """What `handle_frame` did: `SENT` as JSON-RPC `request` (also the progress token),
    `FAILED` at once (`failure`, its `limit` and `len`; the `ERROR` waits in `poll_frame`), or
    `CANCELLED` (`notified`: `notifications/cancelled` was queued)."""

    kind: HandledKind
    request: int = 0
    failure: Failure = Failure.NONE
    limit: int = 0
    len: int = 0
    notified: bool = False


@dataclass(frozen=True)
class McpFrame:
    """A frame for the adapter call `(slot, index)` names: hand it to
    `Wrapper.handle_adapter_frame` with that call's handle."""

    slot: int
    index: int
    frame: bytes


@dataclass(frozen=True)
class McpPost:
    """A POST to make (`McpClient.poll_request`): `body` to the MCP endpoint with the header
    lines `headers` (`Name: value` CRLF each, as sent; `header_items` splits them); report its
    response as `stream`."""

    stream: int
    body: bytes
    headers: bytes

    @property
    def header_items(self) -> List[Tuple[str, str]]:
        """The headers as `(name, value)` pairs, in order."""
        lines = self.headers.decode("latin-1").split("\r\n")
        return [tuple(line.split(": ", 1)) for line in lines if line]  # type: ignore[misc]


@dataclass(frozen=True)
class McpClose:
    """Close `stream`'s response (a cancelled call) and report nothing more of it."""

    stream: int


@dataclass(frozen=True)
class McpStats:
    """`pw_mcp_stats`: what the client counted (each saturates)."""

    lines: int
    not_json: int
    not_jsonrpc: int
    too_long: int
    too_deep: int
    unknown_id: int
    late: int
    unknown_progress: int
    pings: int
    refused_requests: int
    notifications: int
    calls: int
    answered: int
    failed: int


# ------------------------------------------------------------ the client


class McpConfig:
    """`pw_mcp_config`: the defaults of `pw_mcp_config_default`, any field overridden by keyword
    (`McpConfig(line_cap=1 << 20)`). `revision` is an `McpRevision` (given as one or as its
    string: `"auto"`, the default, `"2025-11-25"` or `"2026-07-28"`; anything else raises
    `ValueError`); `start_timeout_ms` how long `server/discover` may go unanswered (10000).
    `fit(wrapper_config)` gives the wrapper's `name_cap` and `max_depth` (`pw_mcp_config_fit`)."""

    FIELDS: List[str] = [f[0] for f in _ffi.pw_mcp_config._fields_]

    def __init__(self, **fields: Any) -> None:
        c = _ffi.pw_mcp_config()
        check(_ffi.lib.pw_mcp_config_default(byref(c)))
        for name in self.FIELDS:
            setattr(self, name, getattr(c, name))
        self.revision = _REVISION_OF_C[c.revision]
        for name, value in fields.items():
            if name not in self.FIELDS:
                raise TypeError("unknown MCP configuration field %r" % name)
            setattr(self, name, McpRevision(value) if name == "revision" else value)

    def __getattr__(self, name: str) -> Any:
        # Only reached for a name that is not set: every FIELDS name is, in __init__. Here so
        # that type checkers take `McpConfig(...).line_cap` (the fields come from the header).
        raise AttributeError(name)

    def _c(self) -> _ffi.pw_mcp_config:
        c = _ffi.pw_mcp_config()
        for name in self.FIELDS:
            value = getattr(self, name)
            setattr(c, name, _REVISION_C[McpRevision(value)] if name == "revision" else int(value))
        return c

    def fit(self, wrapper_config: WrapperConfig) -> McpConfig:
        """A copy fitted to a wrapper's `WrapperConfig`: its `name_cap` and `max_depth`."""
        c = self._c()
        w = wrapper_config._c()
        check(_ffi.lib.pw_mcp_config_fit(byref(c), byref(w)))
        fitted = {name: getattr(c, name) for name in self.FIELDS}
        fitted["revision"] = _REVISION_OF_C[c.revision]
        return McpConfig(**fitted)

    def size(self, calls: int) -> int:
        """Bytes of the client's block for `calls` call slots (`pw_mcp_size`)."""
        n = c_size_t(0)
        check(_ffi.lib.pw_mcp_size(byref(self._c()), calls, byref(n)))
        return n.value

    @property
    def max_frame_len(self) -> int:
        """The longest frame `poll_frame` can write (`pw_mcp_max_frame_len`)."""
        n = c_size_t(0)
        check(_ffi.lib.pw_mcp_max_frame_len(byref(self._c()), byref(n)))
        return n.value

    @property
    def max_line_len(self) -> int:
        """The longest line `poll_transmit` can write, LF included (`pw_mcp_max_line_len`)."""
        n = c_size_t(0)
        check(_ffi.lib.pw_mcp_max_line_len(byref(self._c()), byref(n)))
        return n.value

    @property
    def max_headers_len(self) -> int:
        """The longest header lines `poll_request` writes (`pw_mcp_max_headers_len`)."""
        n = c_size_t(0)
        check(_ffi.lib.pw_mcp_max_headers_len(byref(self._c()), byref(n)))
        return n.value

    def __repr__(self) -> str:
        shown = ("%s=%r" % (n, getattr(self, n).value if n == "revision" else getattr(self, n)) for n in self.FIELDS)
        return "McpConfig(%s)" % ", ".join(shown)


def _handle_parts(handle: CallRef) -> Tuple[int, int]:
    """`(slot, index)` of a wrapper `CallHandle`, an `McpFrame` or a `(slot, index)` pair."""
    if isinstance(handle, tuple):
        slot, index = handle
        return slot, index
    return handle.slot, handle.index


class McpClient(_Owned):
    """`pw_mcp`: an MCP client in one `bytearray` of `pw_mcp_size` bytes (no I/O, no clock).

    `calls` is the most calls in flight (give it the wrapper's slots); `config` an `McpConfig`
    (fields may also be given by keyword); `wrapper_config`, when given, fits it to the wrapper
    whose adapter tools it serves. `name` and `version` are its `clientInfo` (at most 64 bytes
    each, else `McpClientInfoTooLong`); `revision=` and `start_timeout_ms=` are `McpConfig`
    fields like the others. Call `start()`, then move bytes and frames, and give the clock to
    `handle_timeout` at `poll_timeout()` while the start-up waits for `server/discover`; refusals
    raise the `McpRefused` classes (`McpOutboxFull` / `McpFramePending`: poll, then hand the
    frame in again) and change nothing."""

    def __init__(self, *, calls: int = 8, config: Optional[McpConfig] = None, wrapper_config: Optional[WrapperConfig] = None,
                 name: Data = "polyweave-python", version: Optional[Data] = None, streams: int = 0,
                 **fields: Any) -> None:
        cfg = config if config is not None else McpConfig()
        if fields:
            cfg = McpConfig(**{**{n: getattr(cfg, n) for n in McpConfig.FIELDS}, **fields})
        if wrapper_config is not None:
            cfg = cfg.fit(wrapper_config)
        self.config = cfg
        ccfg = cfg._c()
        size = c_size_t(0)
        if streams:
            check(_ffi.lib.pw_mcp_http_size(byref(ccfg), calls, streams, byref(size)))
        else:
            check(_ffi.lib.pw_mcp_size(byref(ccfg), calls, byref(size)))
        self._block = _Block(size.value, _ffi.lib.pw_mcp_align())
        name_b = _bytes(name, "name")
        version_b = _bytes(version if version is not None else _default_version(), "version")
        c = ctypes.POINTER(_ffi.pw_mcp)()
        if streams:
            check(
                _ffi.lib.pw_mcp_http_init(
                    self._block.address, size.value, byref(ccfg), calls, streams, name_b, len(name_b), version_b,
                    len(version_b), byref(c),
                )
            )
        else:
            check(
                _ffi.lib.pw_mcp_init(
                    self._block.address, size.value, byref(ccfg), calls, name_b, len(name_b), version_b,
                    len(version_b), byref(c),
                )
            )
        self._c = c
        self.streams = streams
        if streams:
            self._body = ctypes.create_string_buffer(min(cfg.max_line_len, 64 * 1024))
            self._headers = ctypes.create_string_buffer(cfg.max_headers_len)
            self._post = _ffi.pw_mcp_post()
        self._line = ctypes.create_string_buffer(min(cfg.max_line_len, 64 * 1024))
        self._frame = ctypes.create_string_buffer(min(cfg.max_frame_len, 64 * 1024))
        self._event = _ffi.pw_mcp_event()
        self._handled = _ffi.pw_mcp_handled()
        self._frame_out = _ffi.pw_mcp_frame()

    # (memory: close, with, closed, memory_size: `_Owned`)

    def set_output_schemas(self, schemas: Iterable[Tuple[Data, SchemaLike]]) -> None:
        """Registers the output schemas results are checked against (SPEC §11), replacing the
        earlier ones (an empty list removes them): a result whose `structuredContent` does not
        satisfy its tool's fails the call with `Tool <name> returned a result that does not
        match its output schema: <where>: <why>`. `schemas`: `(tool, schema)` pairs, `tool` the
        name calls are made under. A schema the validator refuses raises `SchemaError` (`.kind`,
        `.offset`, and `.tool`) and changes nothing."""
        pairs = [(_bytes(tool, "tool"), _schema_bytes(schema)) for tool, schema in schemas]
        size = c_size_t(0)
        check(_ffi.lib.pw_mcp_output_schemas_size(len(pairs), byref(size)))
        block = _Block(size.value, _ffi.PW_MAX_ALIGN)
        keep: List[Any] = []
        entries = (_ffi.pw_mcp_output_schema * max(1, len(pairs)))()

        def span(raw: bytes) -> _ffi.pw_str:
            buf = ctypes.create_string_buffer(raw, len(raw) + 1)
            keep.append(buf)
            return _ffi.pw_str(ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8)), len(raw))

        for i, (tool, schema) in enumerate(pairs):
            entries[i].tool = span(tool)
            entries[i].schema = span(schema)
        r = _ffi.lib.pw_mcp_set_output_schemas(self._ptr(), block.address, size.value, entries, len(pairs))
        if r == _ffi.PW_BAD_SCHEMA:
            # The library says only PW_BAD_SCHEMA: which one, why and where, from the first it refuses.
            for tool, schema in pairs:
                try:
                    check_schema(schema)
                except SchemaError as e:
                    e.tool = tool.decode("utf-8", "replace")
                    raise
        check(r)
        # The client reads the names, the schemas and the block until they are replaced.
        self._output_schemas = (block, keep)

    # -------------------------------------------------- inputs

    def start(self, now_ms: Optional[int] = None) -> None:
        """Begins the start-up at `now_ms` (by default `time.monotonic()` in ms: give
        `handle_timeout` the same clock): `server/discover` goes out at the next `poll_transmit`
        (`initialize` with `revision="2025-11-25"`). `McpAlreadyStarted` the second time."""
        now = monotonic_ms() if now_ms is None else now_ms
        check(_ffi.lib.pw_mcp_start(self._ptr(), now))

    def poll_timeout(self) -> Optional[int]:
        """When the start-up's `server/discover` counts as unanswered (ms, the clock of
        `start`): call `handle_timeout` then. None when it is not awaited (calls are timed by
        the wrapper)."""
        t: int = _ffi.lib.pw_mcp_poll_timeout(self._ptr())
        return None if t == _ffi.PW_NO_TIMEOUT else t

    def handle_timeout(self, now_ms: int) -> None:
        """Gives the clock: a `server/discover` unanswered past its deadline makes the client
        send `initialize` (fixed to 2026-07-28: the start-up fails with `NO_ANSWER`); its late
        answer is counted and ignored. Nothing is decided while what the last line owes is not
        polled out: drain, then call again."""
        check(_ffi.lib.pw_mcp_handle_timeout(self._ptr(), now_ms))

    def feed(self, data: Data, start: int = 0) -> int:
        """Bytes from the server, from offset `start`: returns how many it took (up to the end
        of one line, and none while what the last line owes is not polled out: drain the
        events, frames and lines, then feed the rest)."""
        raw = _bytes(data, "data")
        if start < 0 or start > len(raw):
            raise ValueError("start out of range")
        n = c_size_t(0)
        base = ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p).value or 0
        check(_ffi.lib.pw_mcp_feed(self._ptr(), base + start, len(raw) - start, byref(n)))
        return n.value

    def handle_frame(self, handle: CallRef, frame: Data) -> Handled:
        """A frame the wrapper routed to an adapter call (a `TOOL_CALL` or a `CANCEL`), the call
        named by its `CallHandle` (or `(slot, index)`): returns a `Handled`."""
        slot, index = _handle_parts(handle)
        raw = _bytes(frame)
        h = self._handled
        check(_ffi.lib.pw_mcp_handle_frame(self._ptr(), slot, index, raw, len(raw), byref(h)))
        return Handled(
            HandledKind(h.kind), h.request, Failure(h.failure), h.limit, h.len, bool(h.notified)
        )

    def handle_closed(self) -> None:
        """The transport closed: every call in flight fails with `Tool <name> failed: the MCP
        server closed the connection`, later ones at once. Poll their frames out."""
        check(_ffi.lib.pw_mcp_handle_closed(self._ptr()))

    # -------------------------------------------------- outputs

    def poll_transmit(self) -> Optional[bytes]:
        """The next line for the server (bytes, LF included), or None."""
        n = c_size_t(0)
        while True:
            r = _ffi.lib.pw_mcp_poll_transmit(self._ptr(), self._line, len(self._line), byref(n))
            if r != _ffi.PW_BUFFER_TOO_SMALL:
                break
            self._line = ctypes.create_string_buffer(n.value)
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        return ctypes.string_at(self._line, n.value)

    def poll_frame(self) -> Optional[McpFrame]:
        """The next frame for an adapter call (an `McpFrame`), or None."""
        f = self._frame_out
        while True:
            r = _ffi.lib.pw_mcp_poll_frame(self._ptr(), self._frame, len(self._frame), byref(f))
            if r != _ffi.PW_BUFFER_TOO_SMALL:
                break
            self._frame = ctypes.create_string_buffer(f.len)
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        return McpFrame(f.slot, f.index, ctypes.string_at(self._frame, f.len))

    def poll_event(self) -> Optional[McpEvent]:
        """The next event (`Initialized`, `ToolListed`, `ToolSkipped`, `Ready`, `ToolsChanged`,
        `StartFailed`, `Notification`), or None. Its texts are copies."""
        e = self._event
        r = _ffi.lib.pw_mcp_poll_event(self._ptr(), byref(e))
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        raw = _ffi.span_bytes(e.raw)
        k = e.kind
        if k == _ffi.PW_MCP_EVENT_INITIALIZED:
            return Initialized(_text(_ffi.span_bytes(e.version)), raw)
        if k == _ffi.PW_MCP_EVENT_TOOL:
            return ToolListed(_text(_ffi.span_bytes(e.name)), raw)
        if k == _ffi.PW_MCP_EVENT_TOOL_SKIPPED:
            return ToolSkipped(SkipReason(e.skip), raw, e.len, e.cap)
        if k == _ffi.PW_MCP_EVENT_READY:
            return Ready(e.tools)
        if k == _ffi.PW_MCP_EVENT_TOOLS_CHANGED:
            return ToolsChanged(e.tools)
        if k == _ffi.PW_MCP_EVENT_START_FAILED:
            return StartFailed(StartError(e.start_error), raw, e.len)
        return Notification(
            _text(_ffi.span_bytes(e.method)),
            _ffi.span_bytes(e.params) if e.has_params else None,
            bool(e.method_cut),
        )

    def transmits(self) -> Iterator[bytes]:
        """Drains the lines for the server."""
        while True:
            line = self.poll_transmit()
            if line is None:
                return
            yield line

    def frames(self) -> Iterator[McpFrame]:
        """Drains the frames for the wrapper."""
        while True:
            f = self.poll_frame()
            if f is None:
                return
            yield f

    def events(self) -> Iterator[McpEvent]:
        """Drains the events."""
        while True:
            e = self.poll_event()
            if e is None:
                return
            yield e

    # -------------------------------------------------- Streamable HTTP (SPEC §9.11)

    @classmethod
    def http(cls, *, streams: int = 4, **options: Any) -> McpClient:
        """A client over Streamable HTTP (`pw_mcp_http_init`) reading up to `streams` responses
        at once (1 to 65535; with 2 or more a 2026-07-28 client keeps one open for tool-list
        changes when the server offers them); the other options are the constructor's. Instead
        of `feed` and `poll_transmit` its host uses `poll_request` (a POST to make, or a response
        to close) and reports each response as its stream: `handle_response`, `feed_response`,
        `handle_response_end`."""
        if streams < 1:
            raise ValueError("an HTTP client needs at least one stream")
        return cls(streams=streams, **options)

    @property
    def is_http(self) -> bool:
        """Whether this client speaks Streamable HTTP (`McpClient.http`)."""
        return bool(_ffi.lib.pw_mcp_is_http(self._ptr()))

    def poll_request(self) -> Optional[Union[McpPost, McpClose]]:
        """The next thing to do over HTTP: an `McpPost` (POST its body with its headers to the
        endpoint, report the response as its stream) or an `McpClose` (close that stream's
        response), or None when nothing is to be sent or no stream is free. `McpNotHttp` for a
        line client."""
        p = self._post if self.streams else _ffi.pw_mcp_post()
        body = getattr(self, "_body", None) or ctypes.create_string_buffer(1)
        headers = getattr(self, "_headers", None) or ctypes.create_string_buffer(1)
        while True:
            r = _ffi.lib.pw_mcp_poll_request(self._ptr(), body, len(body), headers, len(headers), byref(p))
            if r != _ffi.PW_BUFFER_TOO_SMALL:
                break
            if p.body_len:
                body = self._body = ctypes.create_string_buffer(p.body_len)
            else:
                headers = self._headers = ctypes.create_string_buffer(p.headers_len)
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        if p.kind == _ffi.PW_MCP_POST_CLOSE:
            return McpClose(p.stream)
        return McpPost(p.stream, ctypes.string_at(body, p.body_len), ctypes.string_at(headers, p.headers_len))

    def requests(self) -> Iterator[Union[McpPost, McpClose]]:
        """Drains `poll_request`."""
        while True:
            r = self.poll_request()
            if r is None:
                return
            yield r

    def handle_response(self, stream: int, status: int, content_type: Data = b"",
                        session: Optional[Data] = None) -> None:
        """The head of `stream`'s response: its HTTP status, its `Content-Type` (empty when it
        has none) and its `Mcp-Session-Id` (None when it has none). `McpPollFirst`: drain the
        events, frames and requests, then give it again."""
        ct = _bytes(content_type, "content_type")
        sid = None if session is None else _bytes(session, "session")
        check(
            _ffi.lib.pw_mcp_handle_response(
                self._ptr(), stream, status, ct, len(ct), sid, 0 if sid is None else len(sid)
            )
        )

    def feed_response(self, stream: int, data: Data, start: int = 0) -> int:
        """Bytes of `stream`'s body, from offset `start`: returns how many it took (all of a JSON
        body, up to the end of one event of an event stream, and none while another stream's
        message is half read or what the last message owes is not polled out)."""
        raw = _bytes(data, "data")
        if start < 0 or start > len(raw):
            raise ValueError("start out of range")
        n = c_size_t(0)
        base = ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p).value or 0
        check(_ffi.lib.pw_mcp_feed_response(self._ptr(), stream, base + start, len(raw) - start, byref(n)))
        return n.value

    def handle_response_end(self, stream: int) -> None:
        """`stream`'s response ended, whole or broken (or the POST got none): the stream is free
        again, and a request it did not answer fails (a call with `Tool <name> failed: HTTP
        <status>` when the status was no success)."""
        check(_ffi.lib.pw_mcp_handle_response_end(self._ptr(), stream))


    # -------------------------------------------------- state

    @property
    def state(self) -> McpState:
        """An `McpState`."""
        s = c_uint32(0)
        check(_ffi.lib.pw_mcp_state(self._ptr(), byref(s)))
        return McpState(s.value)

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision spoken once the server said (`initialize`'s answer, or
        `"2026-07-28"`), else None."""
        v: Optional[bytes] = _ffi.lib.pw_mcp_protocol_version(self._ptr())
        return None if v is None else v.decode("ascii")

    @property
    def in_flight(self) -> int:
        """Calls waiting for the server, or with frames not yet polled."""
        n: int = _ffi.lib.pw_mcp_in_flight(self._ptr())
        return n

    @property
    def queued(self) -> int:
        """Lines waiting for `poll_transmit`."""
        n: int = _ffi.lib.pw_mcp_queued(self._ptr())
        return n

    def stats(self) -> McpStats:
        """The client's `McpStats`."""
        s = _ffi.pw_mcp_stats()
        check(_ffi.lib.pw_mcp_get_stats(self._ptr(), byref(s)))
        return McpStats(*(getattr(s, f[0]) for f in _ffi.pw_mcp_stats._fields_))


def monotonic_ms() -> int:
    """`time.monotonic()` in whole milliseconds: `McpClient.start`'s clock by default."""
    return int(time.monotonic() * 1000)


def _default_version() -> str:
    return "%d.%d.%d" % (_ffi.PW_VERSION_MAJOR, _ffi.PW_VERSION_MINOR, _ffi.PW_VERSION_PATCH)


# ------------------------------------------------------------ a server over a child's stdio


class McpStartupError(RuntimeError):
    """The server could not be started, or its start-up failed (`event`: the `StartFailed`,
    None when it closed its output or took too long)."""

    def __init__(self, message: str, event: Optional[StartFailed] = None) -> None:
        super().__init__(message)
        self.event = event


class McpToolError(RuntimeError):
    """`McpServer.call`: the call failed; the message is the `TOOL_RESULT`'s error."""


@dataclass(frozen=True)
class ListedTool:
    """A tool the server listed: its `name`, its entry parsed (`description`, `inputSchema`,
    ...) and the entry's exact text (`entry`)."""

    name: str
    tool: Dict[str, Any]
    entry: bytes = b""


@dataclass(frozen=True)
class UncheckedSchema:
    """A listed schema the validator refuses (SPEC §11): `tool`'s `schema` (`"inputSchema"` or
    `"outputSchema"`) is not checked; `kind` and `offset` say why and where."""

    tool: str
    schema: str
    kind: Any
    offset: int


@dataclass(frozen=True)
class Sent:
    """A frame the wrapper sent: `to` is `"model"` or `"consumer"`; `frame` its bytes."""

    to: str
    frame: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.frame)


_START_WHY = {
    StartError.UNSUPPORTED_VERSION: "the server chose a protocol revision this client does not speak: ",
    StartError.BAD_RESULT: "the server's answer lacks what the start-up needs: ",
    StartError.REFUSED: "the server refused the start-up: ",
    StartError.CURSOR_TOO_LONG: "a tools/list cursor is longer than the client keeps",
    StartError.TOO_MANY_PAGES: "the server never stops paging tools/list",
    StartError.RESPONSE_TOO_LARGE: "the server's answer is longer or deeper than the client reads",
    StartError.NO_ANSWER: "the server did not answer server/discover (the client is fixed to 2026-07-28)",
}

#: The wrapper's capacities for a server's tools (the C defaults are sized for microcontrollers).
WRAPPER_LIMITS: Dict[str, int] = dict(
    name_cap=256,
    id_cap=256,
    args_cap=64 * 1024,
    result_cap=1 << 20,
    message_cap=64 * 1024,
    trace_entries=16,
    trace_bytes=64 * 1024,
    held_bytes=64 * 1024,
)


def _frame_bytes(frame: FrameLike) -> bytes:
    if isinstance(frame, (bytes, bytearray, memoryview, str)):
        return _bytes(frame)
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class McpServer:
    """An MCP server run as a child process (`command`: a list, as for `subprocess.Popen`),
    started and listed by an `McpClient`, its tools served as adapter tools of a `Wrapper`.

    Calls time out after `timeout_ms` without progress, never later than `max_total_ms` after
    they started (0: progress restarts nothing); `extra_tools` are registered too, unlisted,
    so that calls to them reach the server. `revision` (`"auto"`, `"2025-11-25"`,
    `"2026-07-28"`) and `start_timeout_ms`, when given, set the client's `McpConfig` fields; the
    start-up must finish within `startup_timeout_ms`, counted once `server/discover` is
    answered or given up on (so at most `start_timeout_ms` + `startup_timeout_ms` in all), else
    `McpStartupError`. `slots` calls may be in flight at once.
    `env`, `cwd` and `stderr` go to `Popen` (stderr: inherited by default). `log(direction,
    data)`, when given, sees the wire: `("send", line)` for every line the client writes and
    `("recv", chunk)` for every chunk the server's stdout gives. Keyword `fields`
    override the wrapper's `WrapperConfig` (`WRAPPER_LIMITS` and the timeouts by default).

    After the start-up: `tools` (`ListedTool`s, in the server's order; replaced by the new list
    when the server's tools change, `tools_changed` counting those re-listings: the wrapper
    keeps the tools it was built with), `wrapper`, `client`, `protocol_version` (the revision
    spoken), `server_info` (the `initialize` or `server/discover` result, parsed),
    `notifications` (every `Notification`).
    With `validate` (true by default), each call's args are checked against its tool's listed
    `inputSchema` (a call that does not satisfy it fails at once, the server never sees it) and
    each result's `structuredContent` against its `outputSchema` (SPEC §11); `unchecked` lists
    the schemas the validator refuses (`UncheckedSchema`: that side of the tool runs unchecked).
    `run(frames)` and `call(name, args)` drive it; `close()` (or the end of a `with` block)
    closes the server's stdin, waits `grace_ms` for it to exit and kills it otherwise."""

    #: The wrapper serving the tools, and the client speaking to the server: set once the
    #: constructor returns (it raises otherwise); `close()` frees both.
    wrapper: Wrapper
    client: McpClient

    def __init__(
        self,
        command: Sequence[str],
        *,
        timeout_ms: int = 30000,
        max_total_ms: int = 0,
        extra_tools: Iterable[str] = (),
        startup_timeout_ms: int = 10000,
        slots: int = 16,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        stderr: Any = None,
        grace_ms: int = 2000,
        client_config: Optional[McpConfig] = None,
        revision: Optional[Union[str, McpRevision]] = None,
        start_timeout_ms: Optional[int] = None,
        name: Data = "polyweave-python",
        version: Optional[Data] = None,
        log: Optional[Callable[[str, bytes], Any]] = None,
        validate: bool = True,
        **fields: Any,
    ) -> None:
        self.command = list(command)
        self.validate = validate
        self.unchecked: List[UncheckedSchema] = []
        self._input_schemas: Dict[str, bytes] = {}
        self._log = log
        self.grace_ms = grace_ms
        self.tools: List[ListedTool] = []
        self.tools_changed = 0
        self._relisted: List[ListedTool] = []  # the tools listed again, until ToolsChanged
        self.notifications: List[Notification] = []
        self.server_info: Any = None
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.returncode: Optional[int] = None
        self._t0 = time.monotonic()
        self._sent: List[Sent] = []
        self._fifo: Deque[Tuple[CallHandle, bytes]] = deque()  # for the client, in order
        self._handles: Dict[Tuple[int, int], CallHandle] = {}  # (slot, index) -> the wrapper's handle
        self._held: Optional[McpFrame] = None  # a client frame the wrapper could not take yet
        self._rx, self._rx_off = b"", 0
        self._tx = bytearray()
        self._closed = False  # the client was told the transport closed
        self._ready = False
        self._start_failed: Optional[StartFailed] = None
        self._sel = selectors.DefaultSelector()
        self._calls = 0

        limits = {**WRAPPER_LIMITS, "tool_timeout_ms": timeout_ms, "max_total_timeout_ms": max_total_ms, **fields}
        self.wrapper_config = WrapperConfig(**limits)
        cfg = client_config
        if cfg is None:
            args_cap, name_cap = self.wrapper_config.args_cap, self.wrapper_config.name_cap
            # Room for every slot's tools/call (args and name escaped) or its notifications/cancelled.
            outbox = slots * (args_cap + 6 * name_cap + 256 + _ffi.PW_MCP_MIN_OUTBOX + 12)
            cfg = McpConfig(line_cap=self.wrapper_config.result_cap, outbox_cap=outbox, cursor_cap=4096)
        chosen = {k: v for k, v in (("revision", revision), ("start_timeout_ms", start_timeout_ms)) if v is not None}
        if chosen:
            cfg = McpConfig(**{**{n: getattr(cfg, n) for n in McpConfig.FIELDS}, **chosen})
        try:
            self.client = McpClient(calls=slots, config=cfg, wrapper_config=self.wrapper_config, name=name,
                                    version=version, **self._client_options())
            self._open(env, cwd, stderr)
            self.client.start(self.now_ms())
            self._start_up(startup_timeout_ms)
            self._read_schemas()
            names = [t.name for t in self.tools]
            names += [n for n in extra_tools if n not in names]
            inputs = self._input_schemas
            self.wrapper = Wrapper({n: adapter(schema=inputs.get(n)) for n in dict.fromkeys(names)}, slots=slots,
                                   config=self.wrapper_config)
        except BaseException:
            self.close()
            raise

    def _read_schemas(self) -> None:
        """Reads the listed tools' schemas (SPEC §11): each `inputSchema` for the wrapper (a
        call's args are checked before the server sees them; the wrapper keeps those it was
        built with), each `outputSchema` for the client (a result's `structuredContent` is
        checked, the current list's). A schema the validator refuses leaves that side unchecked
        and is noted in `unchecked`. Nothing with `validate=False`."""
        self.unchecked = []
        if not self.validate:
            return
        inputs: Dict[str, bytes] = {}
        outputs: List[Tuple[str, bytes]] = []
        for t in self.tools:
            for member in ("inputSchema", "outputSchema"):
                schema = _member_text(t.entry, member)
                if schema is None:
                    continue
                try:
                    check_schema(schema)
                except SchemaError as e:
                    self.unchecked.append(UncheckedSchema(t.name, member, e.kind, e.offset or 0))
                    continue
                if member == "inputSchema":
                    inputs[t.name] = schema
                else:
                    outputs.append((t.name, schema))
        self._input_schemas = inputs
        self.client.set_output_schemas(outputs)

    def _client_options(self) -> Dict[str, Any]:
        """What the client's constructor gets besides the configuration (a line client: none)."""
        return {}

    def _open(self, env: Optional[Dict[str, str]], cwd: Optional[str], stderr: Any) -> None:
        """Starts the server as a child process, its stdin and stdout on pipes."""
        try:
            self.proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=cwd,
                bufsize=0,
            )
        except OSError as e:
            raise McpStartupError("cannot start the MCP server %r: %s" % (self.command, e)) from e
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both PIPE
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        self._sel.register(self._out, selectors.EVENT_READ)

    # -------------------------------------------------- life

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the server's stdin, waits up to `grace_ms` for it to exit (killing it after),
        and frees the wrapper and the client. Idempotent."""
        if self.proc is not None:
            proc, self.proc = self.proc, None
            for f in (proc.stdin, proc.stdout):
                try:
                    if f is not None:
                        f.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=self.grace_ms / 1000)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self.returncode = proc.returncode
        try:
            self._sel.close()
        except (OSError, ValueError):
            pass
        # Either may be missing when the constructor failed part way.
        for part in (getattr(self, "wrapper", None), getattr(self, "client", None)):
            if part is not None:
                part.close()

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision the server is spoken to in (`McpClient.protocol_version`)."""
        return self.client.protocol_version

    @property
    def transport_closed(self) -> bool:
        """Whether the server's output ended (or it died)."""
        return self._closed

    def now_ms(self) -> int:
        """The clock given to the wrapper: ms of `time.monotonic()` since the server started."""
        return int((time.monotonic() - self._t0) * 1000)

    def _start_up(self, startup_timeout_ms: int) -> None:
        deadline = self.now_ms() + startup_timeout_ms
        while True:
            self._pump(self.now_ms())
            discovering = self.client.poll_timeout()
            if discovering is not None:
                # The start-up's time counts once server/discover is answered or given up on.
                deadline = max(deadline, discovering + startup_timeout_ms)
            if self._start_failed is not None:
                e = self._start_failed
                why = _START_WHY.get(e.error, "the start-up failed: ")
                raise McpStartupError("MCP start-up failed: " + why + _text(e.raw), e)
            if self._ready:
                return
            if self._closed:
                raise McpStartupError("the MCP server closed its output before listing its tools")
            now = self.now_ms()
            if now >= deadline:
                raise McpStartupError("the MCP server did not finish its start-up within %d ms" % startup_timeout_ms)
            wake = deadline if discovering is None else min(deadline, discovering)
            self._wait(max(0, wake - now))

    # -------------------------------------------------- driving the wrapper

    def run(self, frames: Iterable[FrameLike], *, max_wait_ms: Optional[int] = None) -> List[Sent]:
        """Runs model frames (bytes, str or JSON values) through the wrapper, in order, then
        serves the server until no call is pending: returns what the wrapper sent (`Sent`s,
        to the model and the consumer, in order). A malformed frame raises its `MalformedFrame`
        class with `.sent` (what was sent before it). With `max_wait_ms`, a wait longer than
        that raises `TimeoutError` (the wrapper's own timeouts end every call anyway)."""
        out: List[Sent] = []
        self._sent = out
        for frame in frames:
            data = _frame_bytes(frame)
            self._tick()
            try:
                d = self._with_room(lambda: self.wrapper.handle_response(self.now_ms(), data))
            except Exception as e:
                setattr(e, "sent", list(out))
                raise
            if d.disposition == Disposition.FORWARD:
                out.append(Sent("consumer", data))
            self._pump(self.now_ms())
        start = self.now_ms()
        limit: Optional[int] = None if max_wait_ms is None else start + max_wait_ms
        while True:
            self._tick()
            if self.wrapper.pending == 0 and self._held is None and not self._fifo:
                break
            now = self.now_ms()
            if limit is not None and now >= limit:
                raise TimeoutError("calls still pending after %d ms" % (limit - start))
            wake = self.wrapper.poll_timeout()
            wait: Optional[int] = None if wake is None else max(0, wake - now)
            if limit is not None:
                wait = limit - now if wait is None else min(wait, limit - now)
            self._wait(wait)
        self._pump(self.now_ms())
        return out

    def call(self, name: str, args: Optional[Dict[str, Any]] = None, *, id: Optional[str] = None) -> Any:
        """Calls one tool through the wrapper and returns its result, parsed; a failed call
        raises `McpToolError` with its message."""
        self._calls += 1
        id = id if id is not None else "py-%d" % self._calls
        content: Dict[str, Any] = {"id": id, "name": name, "args": {} if args is None else args}
        for s in self.run([{"type": "TOOL_CALL", "content": content}]):
            if s.to != "model":
                continue
            v = s.json
            if v.get("type") == "TOOL_RESULT" and v["content"].get("id") == id:
                if "error" in v["content"]:
                    raise McpToolError(v["content"]["error"])
                return v["content"]["result"]
        raise McpToolError("Tool %s: no TOOL_RESULT" % name)

    def cancel(self, reason: Data = "cancelled") -> List[Sent]:
        """Cancels every pending call (`Wrapper.cancel`; the server gets
        `notifications/cancelled`): returns what the wrapper sent."""
        out: List[Sent] = []
        self._sent = out
        while self.wrapper.cancel(self.now_ms(), reason) > 0:
            self._pump(self.now_ms())
        self._pump(self.now_ms())
        return out

    def _with_room(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except QueueFull:
            self._pump(self.now_ms())
            return fn()

    def _tick(self) -> None:
        """Fires the wrapper's due timeouts (their CANCELs go to the server)."""
        while True:
            now = self.now_ms()
            t = self.wrapper.poll_timeout()
            if t is None or t > now:
                return
            self.wrapper.handle_timeout(now)
            self._pump(now)
            if self.wrapper.poll_timeout() == t:
                return  # nothing moved (cannot happen once the queue is drained)

    # -------------------------------------------------- the pump (SPEC polling order)

    def _pump(self, now: int) -> None:
        discovering = self.client.poll_timeout()
        if discovering is not None and discovering <= now:
            self.client.handle_timeout(now)
        moved = True
        while moved:
            moved = self._drain_wrapper()
            moved |= self._frames_to_client()
            moved |= self._client_events()
            moved |= self._frames_to_wrapper(now)
            moved |= self._client_transmit()
            moved |= self._client_feed()

    def _drain_wrapper(self) -> bool:
        # None while the constructor runs the start-up, before the wrapper exists.
        w: Optional[Wrapper] = getattr(self, "wrapper", None)
        if w is None:
            return False
        moved = False
        for t in w.transmits():
            moved = True
            if t.route == Route.ADAPTER:
                assert t.handle is not None  # an adapter's frame always names its call
                self._handles[(t.handle.slot, t.handle.index)] = t.handle
                self._fifo.append((t.handle, t.frame))
            else:
                self._sent.append(Sent("model" if t.route == Route.MODEL else "consumer", t.frame))
        for _ in w.events():
            moved = True
        return moved

    def _frames_to_client(self) -> bool:
        moved = False
        while self._fifo:
            handle, frame = self._fifo[0]
            try:
                h = self.client.handle_frame(handle, frame)
                if h.kind == HandledKind.CANCELLED:
                    self._handles.pop((handle.slot, handle.index), None)
            except (McpOutboxFull, McpFramePending):
                break  # taken once its lines are written, or its failure polled
            except McpUnknownCall:
                self._handles.pop((handle.slot, handle.index), None)  # a CANCEL for a call already ended
            self._fifo.popleft()
            moved = True
        return moved

    def _client_events(self) -> bool:
        moved = False
        for e in self.client.events():
            moved = True
            if isinstance(e, ToolListed):
                listing = self._relisted if self._ready else self.tools
                if all(t.name != e.name for t in listing):
                    listing.append(ListedTool(e.name, e.json, e.tool))
            elif isinstance(e, Ready):
                self._ready = True
            elif isinstance(e, ToolsChanged):
                self.tools, self._relisted = self._relisted, []
                self.tools_changed += 1
                self._read_schemas()
            elif isinstance(e, StartFailed):
                self._start_failed = e
            elif isinstance(e, Initialized):
                self.server_info = e.json
            elif isinstance(e, Notification):
                self.notifications.append(e)
        return moved

    def _frames_to_wrapper(self, now: int) -> bool:
        w: Optional[Wrapper] = getattr(self, "wrapper", None)
        if w is None:
            return False
        moved = False
        while True:
            f = self._held
            if f is None:
                f = self.client.poll_frame()
                if f is None:
                    return moved
                moved = True
            key = (f.slot, f.index)
            handle = self._handles.get(key)
            self._held = None
            if handle is None:
                continue
            try:
                w.handle_adapter_frame(now, handle, f.frame)
            except QueueFull:
                self._held = f
                return moved
            except CallNotWaiting:
                pass  # a call that timed out meanwhile refuses its frames
            moved = True
            if f.frame.startswith((b'{"type":"END"', b'{"type":"ERROR"')):
                self._handles.pop(key, None)

    def _client_transmit(self) -> bool:
        moved = False
        for line in self.client.transmits():
            if self._log is not None:
                self._log("send", line)
            self._tx += line
            moved = True
        if self._tx and not self._closed:
            try:
                n = os.write(self._in, self._tx)
                del self._tx[:n]
                moved = moved or n > 0
            except BlockingIOError:
                pass
            except OSError:
                self._transport_closed()
                return True
        self._want_write(bool(self._tx) and not self._closed)
        return moved

    def _want_write(self, on: bool) -> None:
        key: Optional[selectors.SelectorKey]
        try:
            key = self._sel.get_key(self._in)
        except (KeyError, ValueError):
            key = None
        if on and key is None:
            self._sel.register(self._in, selectors.EVENT_WRITE)
        elif not on and key is not None:
            self._sel.unregister(self._in)

    def _client_feed(self) -> bool:
        if self._rx_off >= len(self._rx):
            return False
        n = self.client.feed(self._rx, self._rx_off)
        self._rx_off += n
        if self._rx_off >= len(self._rx):
            self._rx, self._rx_off = b"", 0
        return n > 0

    def _transport_closed(self) -> None:
        if not self._closed:
            self.client.handle_closed()
        self._closed = True
        self._tx.clear()
        self._rx, self._rx_off = b"", 0
        for fd in (self._in, self._out):
            try:
                self._sel.unregister(fd)
            except (KeyError, ValueError):
                pass

    def _wait(self, timeout_ms: Optional[int]) -> None:
        """Waits up to `timeout_ms` (None: no limit) for the server's pipes; moves their bytes."""
        timeout = None if timeout_ms is None else timeout_ms / 1000
        if not self._sel.get_map():
            if timeout is None:
                raise RuntimeError("stuck: calls pending with nothing to wait for")
            time.sleep(timeout)
            return
        for key, _ in self._sel.select(timeout):
            if key.fd == self._out:
                try:
                    chunk = os.read(self._out, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    if self._log is not None:
                        self._log("recv", chunk)
                    self._rx = self._rx[self._rx_off:] + chunk
                    self._rx_off = 0
                else:
                    self._transport_closed()  # the server closed its output, or died
            elif key.fd == self._in:
                self._client_transmit()
        self._pump(self.now_ms())


def serve_stdio(command: Sequence[str], timeout_ms: int = 30000, max_total_ms: int = 0, **options: Any) -> McpServer:
    """Starts `command` as an MCP server over its stdio: the started `McpServer` (use it as a
    context manager, or `close()` it). See `McpServer` for the options."""
    return McpServer(command, timeout_ms=timeout_ms, max_total_ms=max_total_ms, **options)


# ------------------------------------------------------------ a server over Streamable HTTP


class McpHttpServer(McpServer):
    """An MCP server at `url` (`http://host:port/mcp`) over Streamable HTTP (SPEC §9.11), served
    as `McpServer` serves a child's stdio: the same `tools`, `run`, `call`, `cancel`, `close`
    and options (but `env`, `cwd` and `stderr`, which start no process here).

    Only the standard library: each POST the client asks for is made on a connection of its
    own (`http.client`), on a thread that reads the response's body in small reads
    (`read_size` bytes at most) and hands head, pieces and end to the thread driving the
    client; closing a stream closes its connection. `streams` responses are read at once at
    most; `headers` are sent with every POST besides the client's (for example an
    `Authorization`). `log("send", body)` sees each POST's body, `log("recv", chunk)` each
    piece of a response."""

    def __init__(self, url: str, *, streams: int = 4, headers: Optional[Dict[str, str]] = None,
                 read_size: int = 4096, **options: Any) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("not an http:// or https:// URL: %r" % url)
        self.url = url
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        self._stream_count = streams
        self._extra_headers = dict(headers or {})
        self.read_size = read_size
        self._responses: "queue.Queue[Tuple[int, int, str, Any]]" = queue.Queue()
        # stream -> (its POST's token, its connection); a token tells a closed stream's late
        # pieces from those of the next POST on the same stream.
        self._conns: Dict[int, Tuple[int, http.client.HTTPConnection]] = {}
        self._pending: Dict[int, Deque[List[Any]]] = {}  # stream -> what the client is still to take
        self._token = 0
        super().__init__([url], **options)

    def _client_options(self) -> Dict[str, Any]:
        return {"streams": self._stream_count}

    def _open(self, env: Optional[Dict[str, str]], cwd: Optional[str], stderr: Any) -> None:
        pass  # every POST opens its own connection

    def close(self) -> None:
        """Closes every connection still open, then frees the wrapper and the client."""
        for stream in list(self._conns):
            self._close_stream(stream)
        super().close()

    # -------------------------------------------------- the client's requests and responses

    def _client_transmit(self) -> bool:
        moved = False
        for r in self.client.requests():
            moved = True
            if isinstance(r, McpClose):
                self._close_stream(r.stream)
            else:
                self._post(r)
        return moved

    def _post(self, r: McpPost) -> None:
        if self._log is not None:
            self._log("send", r.body)
        self._token += 1
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port)
        self._conns[r.stream] = (self._token, conn)
        self._pending[r.stream] = deque()
        t = threading.Thread(target=self._exchange, args=(self._token, r, conn), daemon=True)
        t.start()

    def _exchange(self, token: int, r: McpPost, conn: http.client.HTTPConnection) -> None:
        """On its own thread: one POST, its response's head, body pieces and end."""
        put = self._responses.put
        try:
            conn.putrequest("POST", self._path, skip_accept_encoding=True)
            for name, value in r.header_items + list(self._extra_headers.items()):
                conn.putheader(name, value)
            conn.putheader("Content-Length", str(len(r.body)))
            conn.endheaders(r.body)
            resp = conn.getresponse()
            head = (resp.status, resp.getheader("Content-Type", ""), resp.getheader("Mcp-Session-Id"))
            put((token, r.stream, "head", head))
            while True:
                chunk = resp.read1(self.read_size)
                if not chunk:
                    break
                put((token, r.stream, "body", chunk))
        except Exception:  # noqa: BLE001 (any failure of the connection ends the response)
            pass
        finally:
            put((token, r.stream, "end", None))
            conn.close()

    def _close_stream(self, stream: int) -> None:
        entry = self._conns.pop(stream, None)
        self._pending.pop(stream, None)
        if entry is None:
            return
        conn = entry[1]
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked reading it
            except OSError:
                pass
        conn.close()

    def _take(self, item: Tuple[int, int, str, Any]) -> None:
        token, stream, kind, data = item
        entry = self._conns.get(stream)
        if entry is None or entry[0] != token:
            return  # a closed stream's
        if kind == "body" and self._log is not None:
            self._log("recv", data)
        self._pending[stream].append([kind, data, 0])

    def _client_feed(self) -> bool:
        moved = False
        for stream in list(self._pending):
            q = self._pending.get(stream)
            while q:
                kind, data, off = q[0]
                try:
                    if kind == "head":
                        status, ct, session = data
                        self.client.handle_response(stream, status, ct or "", session)
                        q.popleft()
                    elif kind == "body":
                        n = self.client.feed_response(stream, data, off)
                        if n == 0:
                            break
                        q[0][2] = off + n
                        if off + n >= len(data):
                            q.popleft()
                    else:
                        self.client.handle_response_end(stream)
                        del self._pending[stream]
                        del self._conns[stream]
                        q = None
                except McpPollFirst:
                    break
                moved = True
        return moved

    def _wait(self, timeout_ms: Optional[int]) -> None:
        timeout = None if timeout_ms is None else timeout_ms / 1000
        if not self._conns:
            if timeout is None:
                raise RuntimeError("stuck: calls pending with nothing to wait for")
            time.sleep(timeout)
            return
        try:
            self._take(self._responses.get(timeout=timeout))
            while True:
                self._take(self._responses.get_nowait())
        except queue.Empty:
            pass
        self._pump(self.now_ms())


def connect_http(url: str, timeout_ms: int = 30000, max_total_ms: int = 0, **options: Any) -> McpHttpServer:
    """Connects to the MCP server at `url` over Streamable HTTP: the started `McpHttpServer`
    (use it as a context manager, or `close()` it). See `McpHttpServer` and `McpServer` for the
    options."""
    return McpHttpServer(url, timeout_ms=timeout_ms, max_total_ms=max_total_ms, **options)
