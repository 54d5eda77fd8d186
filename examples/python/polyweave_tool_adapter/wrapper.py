"""`Wrapper` and `AdapterCall`: the C API's objects, each in one block of Python-owned memory."""

from __future__ import annotations

import ctypes
import enum
import json
from ctypes import byref, c_size_t, c_uint32
from typing import Any, Callable, Iterator, List, Mapping, Optional, Union

from . import _ffi
from ._owned import _Block, _Owned
from .errors import BufferTooSmall, SchemaError, check, error_for

__all__ = [
    "AdapterCall",
    "CallHandle",
    "CallInfo",
    "Completed",
    "Disposition",
    "Event",
    "EventKind",
    "Handled",
    "HookEvent",
    "Outcome",
    "Route",
    "SchemaErrorKind",
    "Tool",
    "TraceEntry",
    "Transmit",
    "Wrapper",
    "WrapperConfig",
    "WrapperStats",
    "adapter",
    "check_schema",
    "deferred",
    "sync",
    "validate",
    "validate_json",
    "version",
]


#: What the inputs take as bytes: `bytes`, `bytearray`, `memoryview`, or `str` (as UTF-8).
Data = Union[bytes, bytearray, memoryview, str]
#: A JSON Schema: its JSON text (`bytes` or `str`), or a `dict` (or `True` / `False`) that
#: `json.dumps` writes once.
SchemaLike = Union[bytes, bytearray, memoryview, str, Mapping[str, Any], bool]
#: A sync tool: the call's raw JSON arguments in, its raw JSON result out.
SyncFn = Callable[[bytes], Data]
#: `on_tool_call(name, args)`: the call's name (None without one) and raw JSON arguments.
ToolCallHook = Callable[[Optional[str], bytes], Any]
#: `on_tool_result(name, args, result, error)`: raw JSON `result` or `error` text, the other None.
ToolResultHook = Callable[[Optional[str], bytes, Optional[bytes], Optional[str]], Any]


def version() -> str:
    """`pw_version()`: e.g. `polyweave-tool-adapter-ffi/0.1.0`."""
    raw: bytes = _ffi.lib.pw_version()
    return raw.decode("ascii")


def _bytes(data: Any, what: str = "frame") -> bytes:
    """Input bytes: `bytes`, `bytearray`, `memoryview` or `str` (UTF-8)."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError("%s must be bytes or str, not %s" % (what, type(data).__name__))


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def validate_json(data: Data, max_depth: int = _ffi.PW_DEFAULT_MAX_DEPTH) -> None:
    """`pw_json_validate`: None when `data` is one JSON value, else raises `InvalidJson`,
    `JsonTooDeep` or `InvalidUtf8` (`.offset` is the byte offset of the error)."""
    data = _bytes(data, "data")
    off = c_size_t(0)
    r = _ffi.lib.pw_json_validate(data, len(data), max_depth, byref(off))
    if r != _ffi.PW_OK:
        e = error_for(r)
        e.offset = off.value
        raise e


class SchemaErrorKind(enum.IntEnum):
    """Why the validator refuses a schema (`pw_schema_error_kind`, `SchemaError.kind`)."""

    NOT_JSON = _ffi.PW_SCHEMA_ERROR_NOT_JSON
    NOT_A_SCHEMA = _ffi.PW_SCHEMA_ERROR_NOT_A_SCHEMA
    BAD_KEYWORD = _ffi.PW_SCHEMA_ERROR_BAD_KEYWORD
    REMOTE_REF = _ffi.PW_SCHEMA_ERROR_REMOTE_REF
    UNRESOLVED_REF = _ffi.PW_SCHEMA_ERROR_UNRESOLVED_REF
    UNSUPPORTED_PATTERN = _ffi.PW_SCHEMA_ERROR_UNSUPPORTED_PATTERN
    BAD_PATTERN = _ffi.PW_SCHEMA_ERROR_BAD_PATTERN
    PATTERN_TOO_LARGE = _ffi.PW_SCHEMA_ERROR_PATTERN_TOO_LARGE
    TOO_DEEP = _ffi.PW_SCHEMA_ERROR_TOO_DEEP
    AMBIGUOUS_REF = _ffi.PW_SCHEMA_ERROR_AMBIGUOUS_REF
    REPEATED_NAME = _ffi.PW_SCHEMA_ERROR_REPEATED_NAME
    TOO_COSTLY = _ffi.PW_SCHEMA_ERROR_TOO_COSTLY


def _schema_bytes(schema: SchemaLike) -> bytes:
    """A schema's JSON text: as given, or a `dict` / `bool` written by `json.dumps`."""
    if isinstance(schema, (Mapping, bool)):
        return json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return _bytes(schema, "schema")


def check_schema(schema: SchemaLike) -> None:
    """`pw_schema_check`: None when the validator reads `schema` whole, else raises
    `SchemaError` with `.kind` (a `SchemaErrorKind`) and `.offset` (in the schema's text)."""
    raw = _schema_bytes(schema)
    e = _ffi.pw_schema_error()
    r = _ffi.lib.pw_schema_check(raw, len(raw), byref(e))
    if r == _ffi.PW_BAD_SCHEMA:
        err = SchemaError()
        err.kind, err.offset = SchemaErrorKind(e.kind), e.at
        raise err
    check(r)


def validate(schema: SchemaLike, value: Data) -> Optional[str]:
    """`pw_schema_validate` (SPEC §11): None when the JSON text `value` satisfies `schema`,
    else why, as the wrapper tells the model: `/city: expected string`, `(args): missing
    required property "city"` (a limit of the validator, `(args): too deeply nested to check`,
    is refused the same way). Raises `SchemaError` for a schema the validator refuses and
    `InvalidJson` for a value that is not JSON."""
    raw, val = _schema_bytes(schema), _bytes(value, "value")
    # The text quotes the value's path (each byte at most twice, as `~0`) and schema tokens.
    cap = 2 * (len(raw) + len(val)) + 128
    buf = ctypes.create_string_buffer(cap)
    n = c_size_t(0)
    r = _ffi.lib.pw_schema_validate(raw, len(raw), val, len(val), buf, cap, byref(n))
    if r == _ffi.PW_OK:
        return None
    if r in (_ffi.PW_SCHEMA_INVALID, _ffi.PW_SCHEMA_LIMIT):
        return buf.raw[: n.value].decode("utf-8")
    if r == _ffi.PW_BAD_SCHEMA:
        check_schema(raw)  # raises with why and where
    raise error_for(r)


# ------------------------------------------------------------ typed values


class Disposition(enum.IntEnum):
    """Where a model frame goes after `Wrapper.handle_response` (`pw_disposition_kind`)."""

    FORWARD = _ffi.PW_DISPOSITION_FORWARD
    INTERCEPTED = _ffi.PW_DISPOSITION_INTERCEPTED
    HELD = _ffi.PW_DISPOSITION_HELD


class Route(enum.IntEnum):
    MODEL = _ffi.PW_ROUTE_MODEL
    CONSUMER = _ffi.PW_ROUTE_CONSUMER
    ADAPTER = _ffi.PW_ROUTE_ADAPTER


class EventKind(enum.IntEnum):
    DEFERRED = _ffi.PW_PENDING_DEFERRED
    ADAPTER = _ffi.PW_PENDING_ADAPTER


class Completed(enum.IntEnum):
    AS_GIVEN = _ffi.PW_COMPLETED_AS_GIVEN
    RESULT_TOO_LARGE = _ffi.PW_COMPLETED_RESULT_TOO_LARGE
    RESULT_TOO_DEEP = _ffi.PW_COMPLETED_RESULT_TOO_DEEP
    MESSAGE_CUT = _ffi.PW_COMPLETED_MESSAGE_CUT


class CallHandle:
    """Names a pending deferred or adapter call of one wrapper (a copy of `pw_call_handle`)."""

    __slots__ = ("index", "slot", "owner")
    index: int
    slot: int
    owner: int

    def __init__(self, c: Any) -> None:
        self.index, self.slot, self.owner = c.index, c.slot, c.owner

    def _c(self) -> _ffi.pw_call_handle:
        return _ffi.pw_call_handle(self.index, self.slot, 0, self.owner)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallHandle) and (self.index, self.slot, self.owner) == (
            other.index,
            other.slot,
            other.owner,
        )

    def __hash__(self) -> int:
        return hash((self.index, self.slot, self.owner))

    def __repr__(self) -> str:
        return "CallHandle(index=%d, slot=%d)" % (self.index, self.slot)


class _Record:
    __slots__: Any = ()

    def __init__(self, *values: Any, **named: Any) -> None:
        for k, v in zip(self.__slots__, values):
            setattr(self, k, v)
        for k, v in named.items():
            setattr(self, k, v)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self) -> str:
        inner = ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)
        return "%s(%s)" % (type(self).__name__, inner)


class Handled(_Record):
    """How `Wrapper.handle_response` took a model frame (`pw_disposition`): its `disposition`;
    for `INTERCEPTED` the call's `index` and, when it is pending (deferred or adapter), its
    `handle` (else None)."""

    __slots__ = ("disposition", "index", "handle")
    disposition: Disposition
    index: Optional[int]
    handle: Optional[CallHandle]


class Transmit(_Record):
    """A frame to write (`frame`, bytes) and where (`route`; `handle` for `Route.ADAPTER`)."""

    __slots__ = ("route", "frame", "handle")
    route: Route
    frame: bytes
    handle: Optional[CallHandle]


class HookEvent(_Record):
    """A hook event from `Wrapper.poll_output`, at its place among the frames: `kind`
    (`"toolCall"` or `"toolResult"`), the `call` (`CallInfo`), its `outcome` (`Outcome`, for
    `"toolResult"`) and `cut` (the hook log lacked room: args and outcome read `null`)."""

    __slots__ = ("kind", "call", "outcome", "cut")
    kind: str
    call: CallInfo
    outcome: Optional[Outcome]
    cut: bool


class WrapperStats(_Record):
    """`pw_wrapper_stats`: what the wrapper cut or could not keep, rather than lose silently."""

    __slots__ = ("rounds", "messages_truncated", "last_error_truncated", "hook_events_cut",
                 "hook_events_dropped")
    rounds: int
    messages_truncated: int
    last_error_truncated: int
    hook_events_cut: int
    hook_events_dropped: int


class Event(_Record):
    """A call the host must start: `handle`, `kind`, `tool` (registration index), `name`,
    `id` (None without one) and raw `args` (bytes)."""

    __slots__ = ("handle", "kind", "tool", "name", "id", "args")
    handle: CallHandle
    kind: EventKind
    tool: int
    name: str
    id: Optional[str]
    args: bytes


class CallInfo(_Record):
    """A call as the hooks see it (`Wrapper.current_call` during a hook): `seq` is the number of
    frames queued when the hook fired."""

    __slots__ = ("index", "name", "id", "args", "seq")
    index: int
    name: Optional[str]
    id: Optional[str]
    args: bytes
    seq: int


class Outcome(_Record):
    """How a call ended: raw JSON `result` (bytes) or `error` (str); the other is None."""

    __slots__ = ("result", "error")
    result: Optional[bytes]
    error: Optional[str]


class TraceEntry(_Record):
    """One finished call, as the trace keeps it: raw JSON `result` or `error` text (the other
    None); `truncated` when the trace cut it to fit."""

    __slots__ = ("name", "args", "result", "error", "truncated")
    name: Optional[str]
    args: bytes
    result: Optional[bytes]
    error: Optional[str]
    truncated: bool


def _outcome(o: Any) -> Outcome:
    text = _ffi.span_bytes(o.text)
    return Outcome(None, _text(text)) if o.is_error else Outcome(text, None)


# ------------------------------------------------------------ configuration and tools


class WrapperConfig:
    """`pw_wrapper_config`: the defaults from `pw_wrapper_config_default`, any field overridden
    by keyword (`WrapperConfig(result_cap=4096, mirror_continue=False)`)."""

    FIELDS: List[str] = [f[0] for f in _ffi.pw_wrapper_config._fields_]

    def __init__(self, **fields: Any) -> None:
        c = _ffi.pw_wrapper_config()
        check(_ffi.lib.pw_wrapper_config_default(byref(c)))
        for name in self.FIELDS:
            setattr(self, name, bool(getattr(c, name)) if name in ("mirror_continue", "full_validation") else getattr(c, name))
        for name, value in fields.items():
            if name not in self.FIELDS:
                raise TypeError("unknown configuration field %r" % name)
            setattr(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only reached for a name that is not set: every FIELDS name is, in __init__. Here so
        # that type checkers take `WrapperConfig(...).result_cap` (the fields come from the header).
        raise AttributeError(name)

    def _c(self) -> _ffi.pw_wrapper_config:
        c = _ffi.pw_wrapper_config()
        for name in self.FIELDS:
            v = getattr(self, name)
            setattr(c, name, int(v))
        return c

    def __repr__(self) -> str:
        return "WrapperConfig(%s)" % ", ".join("%s=%r" % (n, getattr(self, n)) for n in self.FIELDS)


class Tool:
    """A tool registration: `sync(fn)`, `deferred()` or `adapter()`, with an optional timeout
    and an optional input `schema` (SPEC §11): a call whose args do not satisfy it completes at
    once with `Tool <name> arguments are invalid: <where>: <why>`, unrun."""

    def __init__(
        self,
        kind: int,
        fn: Optional[SyncFn] = None,
        timeout_ms: Optional[int] = None,
        schema: Optional[SchemaLike] = None,
    ) -> None:
        if kind == _ffi.PW_TOOL_KIND_SYNC and not callable(fn):
            raise TypeError("a sync tool needs a callable")
        self.kind, self.fn, self.timeout_ms = kind, fn, timeout_ms
        #: The schema's JSON text (a `dict` written once), or None.
        self.schema: Optional[bytes] = None if schema is None else _schema_bytes(schema)


def sync(fn: SyncFn, timeout_ms: Optional[int] = None, *, schema: Optional[SchemaLike] = None) -> Tool:
    """A sync tool: `fn(args: bytes)` returns the raw JSON result (bytes or str); an exception
    fails the call with its message."""
    return Tool(_ffi.PW_TOOL_KIND_SYNC, fn, timeout_ms, schema)


def deferred(timeout_ms: Optional[int] = None, *, schema: Optional[SchemaLike] = None) -> Tool:
    """A deferred tool: `poll_event` tells, `complete` finishes it."""
    return Tool(_ffi.PW_TOOL_KIND_DEFERRED, None, timeout_ms, schema)


def adapter(timeout_ms: Optional[int] = None, *, schema: Optional[SchemaLike] = None) -> Tool:
    """An adapter tool: its frames go to `poll_transmit(Route.ADAPTER)` and come back through
    `handle_adapter_frame` / `handle_adapter_closed`."""
    return Tool(_ffi.PW_TOOL_KIND_ADAPTER, None, timeout_ms, schema)


# ------------------------------------------------------------ the wrapper


class Wrapper(_Owned):
    """`pw_wrapper`: routes a model's frames and a consumer's, runs tools, holds `END`s.

    `tools` maps each name to a callable (a sync tool), `sync(fn)`, `deferred()` or
    `adapter()`. The wrapper lives in one `bytearray` of `pw_wrapper_size` bytes, aligned to
    `pw_wrapper_align`; `close()` (or leaving a `with` block) lets it go. Hook exceptions are
    caught and kept in `hook_errors`; a sync tool's exception fails its call with `str(exc)`.
    A sync tool or hook must not use its own wrapper: every method that enters the library, and
    `close()`, raises `ReentrantCall` there (and changes nothing); `current_call` and the
    attributes are plain Python and may be read.
    """

    def __init__(
        self,
        tools: Optional[Mapping[Union[str, bytes], Union[Tool, SyncFn]]] = None,
        *,
        slots: int = 8,
        config: Optional[WrapperConfig] = None,
        on_tool_call: Optional[ToolCallHook] = None,
        on_tool_result: Optional[ToolResultHook] = None,
        **fields: Any,
    ) -> None:
        cfg = config if config is not None else WrapperConfig()
        if fields:
            cfg = WrapperConfig(**{**{n: getattr(cfg, n) for n in WrapperConfig.FIELDS}, **fields})
        self.config = cfg
        ccfg = cfg._c()
        specs = list((tools or {}).items())
        self.tool_names: List[Union[str, bytes]] = [name for name, _ in specs]
        n = len(specs)
        size = c_size_t(0)
        check(_ffi.lib.pw_wrapper_size(byref(ccfg), slots, n, byref(size)))
        self._block = _Block(size.value, _ffi.lib.pw_wrapper_align())

        self._fns: List[Optional[SyncFn]] = []
        self._names: List[Any] = []  # borrowed by the library: kept alive and unmoved here
        self._tools = (_ffi.pw_tool * max(n, 1))()
        self._sync_cb = _ffi.pw_sync_fn(self._run_sync)
        for i, (name, spec) in enumerate(specs):
            if not isinstance(spec, Tool):
                spec = sync(spec)
            raw = _bytes(name, "tool name")
            keep = ctypes.create_string_buffer(raw, len(raw) + 1)
            self._names.append(keep)
            t = self._tools[i]
            t.name = _ffi.pw_str(ctypes.cast(keep, ctypes.POINTER(ctypes.c_uint8)), len(raw))
            t.kind = spec.kind
            t.timeout_ms = _ffi.PW_TOOL_DEFAULT_TIMEOUT if spec.timeout_ms is None else spec.timeout_ms
            if spec.kind == _ffi.PW_TOOL_KIND_SYNC:
                t.call = self._sync_cb
            t.userdata = i
            if spec.schema is not None:
                try:
                    check_schema(spec.schema)  # why and where, which pw_wrapper_init does not say
                except SchemaError as e:
                    e.tool = _text(raw)
                    raise
                kept = ctypes.create_string_buffer(spec.schema, len(spec.schema) + 1)
                self._names.append(kept)
                t.schema = _ffi.pw_str(ctypes.cast(kept, ctypes.POINTER(ctypes.c_uint8)), len(spec.schema))
                # The schema's index (SPEC §11), written by pw_wrapper_init: each call's args
                # are then checked without reading the schema's annotations or keyword names.
                words = c_size_t(0)
                check(_ffi.lib.pw_schema_index_words(kept, len(spec.schema), byref(words)))
                index = (ctypes.c_uint32 * max(words.value, 1))()
                self._names.append(index)
                t.schema_index = ctypes.cast(index, ctypes.POINTER(ctypes.c_uint32))
                t.schema_index_words = words.value
            self._fns.append(spec.fn)

        self.on_tool_call = on_tool_call
        self.on_tool_result = on_tool_result
        self.hook_errors: List[BaseException] = []
        self.current_call: Optional[CallInfo] = None
        self._hook_call = _ffi.on_tool_call_fn(self._hook_tool_call)
        self._hook_result = _ffi.on_tool_result_fn(self._hook_tool_result)
        hooks = _ffi.pw_hooks(None, self._hook_call, self._hook_result)
        self._pending_exc: Optional[BaseException] = None
        w = ctypes.POINTER(_ffi.pw_wrapper)()
        check(
            _ffi.lib.pw_wrapper_init(
                self._block.address, size.value, byref(ccfg), slots, self._tools, n, byref(hooks), byref(w)
            )
        )
        self._c = w
        self._out = ctypes.create_string_buffer(max(cfg.result_cap, cfg.message_cap) + 1024)
        self._transmit = _ffi.pw_transmit()
        self._disp = _ffi.pw_disposition()

    # -------------------------------------------------- callbacks (never raise into C)
    # Each counts itself in `_inside` while it runs Python code: the C call that called it is
    # still in the wrapper, so `_ptr()` and `close()` refuse meanwhile (`_owned.py`).

    def _run_sync(self, userdata: Optional[int], args: Any, out: Any) -> int:
        self._inside += 1
        try:
            fn = self._fns[userdata or 0]
            assert fn is not None  # the library calls back only the sync tools
            result = fn(_ffi.span_bytes(args))
            data = _bytes(result, "a sync tool's result")
            status = _ffi.PW_TOOL_STATUS_OK
        except Exception as e:  # the tool failed: its message is the call's error
            data = (str(e) if e.args else type(e).__name__).encode("utf-8", "replace")
            status = _ffi.PW_TOOL_STATUS_FAILED
        except BaseException as e:  # KeyboardInterrupt and the like: re-raised after the C call
            self._pending_exc = e
            data, status = b"interrupted", _ffi.PW_TOOL_STATUS_FAILED
        finally:
            self._inside -= 1
        try:
            # The writer is the one function a sync tool may call (the header says so).
            _ffi.lib.pw_writer_write(out, data, len(data))
        except BaseException:
            status = _ffi.PW_TOOL_STATUS_FAILED
        return status

    def _info(self, c: Any) -> CallInfo:
        c = c.contents
        return CallInfo(
            c.index,
            _text(_ffi.span_bytes(c.name)) if c.has_name else None,
            _text(_ffi.span_bytes(c.id)) if c.has_id else None,
            _ffi.span_bytes(c.args),
            c.seq,
        )

    def _hook(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception as e:
            self.hook_errors.append(e)
        except BaseException as e:
            self._pending_exc = e

    def _hook_tool_call(self, _userdata: Any, c: Any) -> None:
        if self.on_tool_call is None:
            return
        self._inside += 1
        try:
            self.current_call = info = self._info(c)
            self._hook(self.on_tool_call, info.name, info.args)
        except BaseException as e:
            self.hook_errors.append(e)
        finally:
            self.current_call = None
            self._inside -= 1

    def _hook_tool_result(self, _userdata: Any, c: Any, o: Any) -> None:
        if self.on_tool_result is None:
            return
        self._inside += 1
        try:
            self.current_call = info = self._info(c)
            out = _outcome(o.contents)
            self._hook(self.on_tool_result, info.name, info.args, out.result, out.error)
        except BaseException as e:
            self.hook_errors.append(e)
        finally:
            self.current_call = None
            self._inside -= 1

    def _done(self, r: int) -> None:
        if self._pending_exc is not None:
            e, self._pending_exc = self._pending_exc, None
            raise e
        check(r)

    # -------------------------------------------------- inputs

    def handle_response(self, now_ms: int, frame: Data) -> Handled:
        """A model frame: returns `Handled`, whose `disposition` says forward it, intercepted,
        or held."""
        frame = _bytes(frame)
        d = self._disp
        self._done(_ffi.lib.pw_wrapper_handle_response(self._ptr(), now_ms, frame, len(frame), byref(d)))
        disposition = Disposition(d.kind)
        if disposition == Disposition.INTERCEPTED:
            return Handled(disposition, d.index, CallHandle(d.handle) if d.has_handle else None)
        return Handled(disposition, None, None)

    def handle_request(self, now_ms: int, frame: Data) -> None:
        """A consumer frame: returns normally when it is to be forwarded to the model."""
        frame = _bytes(frame)
        self._done(_ffi.lib.pw_wrapper_handle_request(self._ptr(), now_ms, frame, len(frame)))

    def complete(
        self, now_ms: int, handle: CallHandle, result: Optional[Data] = None, *, error: Optional[Data] = None
    ) -> Completed:
        """Completes a deferred call with a raw JSON `result` (bytes or str; None means `null`)
        or an `error` message. Returns a `Completed`."""
        if error is not None:
            text, is_error = _bytes(error, "error"), 1
        else:
            text, is_error = (b"null" if result is None else _bytes(result, "result")), 0
        keep = ctypes.create_string_buffer(text, len(text) + 1)
        o = _ffi.pw_outcome(is_error, _ffi.pw_str(ctypes.cast(keep, ctypes.POINTER(ctypes.c_uint8)), len(text)))
        how = c_uint32(0)
        self._done(_ffi.lib.pw_wrapper_complete(self._ptr(), now_ms, handle._c(), byref(o), byref(how)))
        return Completed(how.value)

    def handle_adapter_frame(self, now_ms: int, handle: CallHandle, frame: Data) -> None:
        """A frame from a pending adapter call's tool adapter."""
        frame = _bytes(frame)
        self._done(_ffi.lib.pw_wrapper_handle_adapter_frame(self._ptr(), now_ms, handle._c(), frame, len(frame)))

    def handle_adapter_closed(self, now_ms: int, handle: CallHandle) -> None:
        """The adapter of a pending call closed its source (ends like `END`)."""
        self._done(_ffi.lib.pw_wrapper_handle_adapter_closed(self._ptr(), now_ms, handle._c()))

    def handle_timeout(self, now_ms: int) -> None:
        """Gives the clock: due calls fail with a timeout."""
        self._done(_ffi.lib.pw_wrapper_handle_timeout(self._ptr(), now_ms))

    def cancel(self, now_ms: int, reason: Data) -> int:
        """Cancels every pending call; returns how many are left (drain and call again)."""
        reason = _bytes(reason, "reason")
        left = c_size_t(0)
        self._done(_ffi.lib.pw_wrapper_cancel(self._ptr(), now_ms, reason, len(reason), byref(left)))
        return left.value

    def abort(self) -> None:
        """Stops every later continue prompt."""
        self._done(_ffi.lib.pw_wrapper_abort(self._ptr()))

    def clear_trace(self) -> None:
        """Empties the trace."""
        self._done(_ffi.lib.pw_wrapper_clear_trace(self._ptr()))

    # -------------------------------------------------- outputs

    def poll_transmit(self, buffer: Optional[bytearray] = None) -> Optional[Transmit]:
        """The oldest queued frame as a `Transmit`, or None. Without `buffer` the wrapper's own
        buffer is used (grown as needed); with a writable `buffer` too small for the frame,
        `BufferTooSmall` is raised with `.needed` and the frame stays queued."""
        t = self._transmit
        if buffer is not None:
            view = (ctypes.c_char * len(buffer)).from_buffer(buffer)
            r = _ffi.lib.pw_wrapper_poll_transmit(self._ptr(), view, len(buffer), byref(t))
            if r == _ffi.PW_BUFFER_TOO_SMALL:
                raise BufferTooSmall(t.len)
            if r == _ffi.PW_NOTHING:
                return None
            check(r)
            frame = bytes(buffer[: t.len])
        else:
            while True:
                r = _ffi.lib.pw_wrapper_poll_transmit(self._ptr(), self._out, len(self._out), byref(t))
                if r != _ffi.PW_BUFFER_TOO_SMALL:
                    break
                self._out = ctypes.create_string_buffer(t.len)
            if r == _ffi.PW_NOTHING:
                return None
            check(r)
            frame = self._out.raw[: t.len] if t.len > 4096 else ctypes.string_at(self._out, t.len)
        route = Route(t.route)
        return Transmit(route, frame, CallHandle(t.handle) if route == Route.ADAPTER else None)

    def poll_output(self) -> Optional[Union[Transmit, HookEvent]]:
        """The next `Transmit` or `HookEvent`, in SPEC order (`pw_wrapper_poll_output`), or
        None. Hook events are kept when the configuration has `hook_log_bytes`; the hook
        functions are called either way. The wrapper's own buffer is grown as needed."""
        o = _ffi.pw_output()
        while True:
            r = _ffi.lib.pw_wrapper_poll_output(self._ptr(), self._out, len(self._out), byref(o))
            if r != _ffi.PW_BUFFER_TOO_SMALL:
                break
            self._out = ctypes.create_string_buffer(o.frame.len)
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        if o.kind == _ffi.PW_OUTPUT_FRAME:
            t = o.frame
            frame = self._out.raw[: t.len] if t.len > 4096 else ctypes.string_at(self._out, t.len)
            route = Route(t.route)
            return Transmit(route, frame, CallHandle(t.handle) if route == Route.ADAPTER else None)
        info = self._info(ctypes.pointer(o.call))
        if o.kind == _ffi.PW_OUTPUT_TOOL_CALL:
            return HookEvent("toolCall", info, None, bool(o.cut))
        return HookEvent("toolResult", info, _outcome(o.outcome), bool(o.cut))

    def outputs(self) -> Iterator[Union[Transmit, HookEvent]]:
        """Drains the queue and the hook log: every `Transmit` and `HookEvent`, in SPEC order."""
        while True:
            o = self.poll_output()
            if o is None:
                return
            yield o

    def stats(self) -> WrapperStats:
        """The wrapper's `WrapperStats` (`pw_wrapper_get_stats`)."""
        s = _ffi.pw_wrapper_stats()
        check(_ffi.lib.pw_wrapper_get_stats(self._ptr(), byref(s)))
        return WrapperStats(s.rounds, s.messages_truncated, s.last_error_truncated, s.hook_events_cut,
                     s.hook_events_dropped)

    def transmits(self) -> Iterator[Transmit]:
        """Drains the queue: every queued `Transmit`, oldest first."""
        while True:
            t = self.poll_transmit()
            if t is None:
                return
            yield t

    def poll_event(self) -> Optional[Event]:
        """The next call to start (an `Event`), or None."""
        e = _ffi.pw_event()
        r = _ffi.lib.pw_wrapper_poll_event(self._ptr(), byref(e))
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        return Event(
            CallHandle(e.handle),
            EventKind(e.kind),
            e.tool,
            _text(_ffi.span_bytes(e.name)),
            _text(_ffi.span_bytes(e.id)) if e.has_id else None,
            _ffi.span_bytes(e.args),
        )

    def events(self) -> Iterator[Event]:
        """Drains the calls to start: every `Event`, oldest first."""
        while True:
            e = self.poll_event()
            if e is None:
                return
            yield e

    def poll_timeout(self) -> Optional[int]:
        """The earliest deadline (ms) of a pending call, or None."""
        t: int = _ffi.lib.pw_wrapper_poll_timeout(self._ptr())
        return None if t == _ffi.PW_NO_TIMEOUT else t

    @property
    def pending(self) -> int:
        """Calls intercepted and not yet completed."""
        n: int = _ffi.lib.pw_wrapper_pending(self._ptr())
        return n

    def trace(self) -> List[TraceEntry]:
        """The trace, oldest first: `TraceEntry(name, args, result, error, truncated)`."""
        entries: List[TraceEntry] = []
        e = _ffi.pw_trace_entry()
        i = 0
        while True:
            r = _ffi.lib.pw_wrapper_trace_entry(self._ptr(), i, byref(e))
            if r == _ffi.PW_NOTHING:
                return entries
            check(r)
            o = _outcome(e.outcome)
            entries.append(
                TraceEntry(
                    _text(_ffi.span_bytes(e.name)) if e.has_name else None,
                    _ffi.span_bytes(e.args),
                    o.result,
                    o.error,
                    bool(e.truncated),
                )
            )
            i += 1


# ------------------------------------------------------------ a standalone call


class AdapterCall(_Owned):
    """`pw_adapter_call`: one call through a tool adapter, started at `now_ms`; its `TOOL_CALL` waits in
    `poll_transmit`. Lives in one `bytearray` of `pw_adapter_call_size(result_cap)` bytes."""

    def __init__(self, now_ms: int = 0, *, name: Data = "unknown", id: Optional[Data] = None, args: Data = b"{}",
                 timeout_ms: int = 30000, max_total_timeout_ms: int = 0, max_depth: int = _ffi.PW_DEFAULT_MAX_DEPTH,
                 result_cap: int = 4096) -> None:
        opts = _ffi.pw_adapter_call_options()
        check(_ffi.lib.pw_adapter_call_options_default(byref(opts)))
        self._keep: List[Any] = []

        def span(data: Data, what: str) -> _ffi.pw_str:
            raw = _bytes(data, what)
            buf = ctypes.create_string_buffer(raw, len(raw) + 1)
            self._keep.append(buf)
            return _ffi.pw_str(ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8)), len(raw))

        opts.name = span(name, "name")
        opts.args = span(args, "args")
        if id is not None:
            opts.id = span(id, "id")
            opts.has_id = 1
        opts.timeout_ms = timeout_ms
        opts.max_total_timeout_ms = max_total_timeout_ms
        opts.max_depth = max_depth
        self._opts = opts
        size = c_size_t(0)
        check(_ffi.lib.pw_adapter_call_size(result_cap, byref(size)))
        self._block = _Block(size.value, _ffi.lib.pw_adapter_call_align())
        c = ctypes.POINTER(_ffi.pw_adapter_call)()
        check(_ffi.lib.pw_adapter_call_init(self._block.address, size.value, result_cap, now_ms, byref(opts), byref(c)))
        self._c = c
        self._out = ctypes.create_string_buffer(result_cap + 4096)

    def handle_frame(self, now_ms: int, frame: Data) -> None:
        """One frame from the adapter (`CallCompleted` / `CallTimedOut` after it ended)."""
        frame = _bytes(frame)
        check(_ffi.lib.pw_adapter_call_handle_frame(self._ptr(), now_ms, frame, len(frame)))

    def handle_closed(self, now_ms: int) -> None:
        """The adapter closed its source: ends the call like `END`."""
        check(_ffi.lib.pw_adapter_call_handle_closed(self._ptr(), now_ms))

    def handle_timeout(self, now_ms: int) -> None:
        """Gives the clock: at or past its deadline a waiting call queues `CANCEL` and fails
        with a timeout."""
        check(_ffi.lib.pw_adapter_call_handle_timeout(self._ptr(), now_ms))

    def poll_transmit(self) -> Optional[bytes]:
        """The next frame for the adapter (bytes), or None."""
        n = c_size_t(0)
        while True:
            r = _ffi.lib.pw_adapter_call_poll_transmit(self._ptr(), self._out, len(self._out), byref(n))
            if r != _ffi.PW_BUFFER_TOO_SMALL:
                break
            self._out = ctypes.create_string_buffer(n.value)
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        return self._out.raw[: n.value]

    def transmits(self) -> Iterator[bytes]:
        """Drains the frames for the adapter, oldest first."""
        while True:
            f = self.poll_transmit()
            if f is None:
                return
            yield f

    def poll_timeout(self) -> Optional[int]:
        """When `handle_timeout` must next be called (ms) while the call waits; None after its
        end."""
        t: int = _ffi.lib.pw_adapter_call_poll_timeout(self._ptr())
        return None if t == _ffi.PW_NO_TIMEOUT else t

    @property
    def outcome(self) -> Optional[Outcome]:
        """How the call ended (`Outcome`), or None while it waits."""
        o = _ffi.pw_outcome()
        r = _ffi.lib.pw_adapter_call_outcome(self._ptr(), byref(o))
        if r == _ffi.PW_NOTHING:
            return None
        check(r)
        return _outcome(o)

