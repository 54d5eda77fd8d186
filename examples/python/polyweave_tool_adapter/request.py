"""Asking the model again (SPEC §10) over the C ABI's `pw_conversation_*` and `pw_request_*`:
a `Conversation` takes the system text, the user's texts, the model's responses as a decoder
gave them and the wrapper's results; `Conversation.request` gives the next request body, whole
(`Request.body()`) or in chunks (`Request.chunks()`), with its length known first::

    conv = Conversation()
    conv.push_user("Weather in Paris?")
    conv.begin_response("openai-chat")
    for frame in decode_raw("openai-chat", response.iter_bytes()):
        conv.push_frame(frame)
    conv.push_frame(tool_result_frame)          # the wrapper's TOOL_RESULT
    req = conv.request("openai-chat", RequestOptions("gpt-5"), [Declaration("get_weather")])
    httpx.post(url, content=req.chunks(), headers={"Content-Length": str(len(req))})

The conversation lives in one `bytearray` of the capacity given (64 KiB by default); when an
entry does not fit, the oldest are evicted, whole exchanges at a time (`stats().evicted`).
"""

from __future__ import annotations

import ctypes
import enum
import json
from ctypes import byref, c_size_t, c_uint32
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from . import _ffi
from ._owned import _Block, _Owned
from .decode import Frame, Provider, _frame_bytes, _provider
from .errors import check, error_for
from .wrapper import Data, _bytes

__all__ = [
    "Conversation",
    "ConversationStats",
    "Declaration",
    "Pushed",
    "Request",
    "RequestOptions",
    "ToolChoice",
    "gemini_path",
]

#: A JSON value given as its text (`bytes` / `str`, taken as written) or as a Python value
#: (serialised compactly with `json.dumps`).
Json = Union[bytes, bytearray, memoryview, str, Dict[str, Any]]

_SIZE_MAX = ctypes.c_size_t(-1).value


def _json_bytes(value: Json, what: str) -> bytes:
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return _bytes(value, what)


class _Keep:
    """Bytes handed to the library as `pw_str` spans, kept alive (and unmoved) as long as this
    object is: a request borrows them for as long as it is written."""

    def __init__(self) -> None:
        self._buffers: List[Any] = []

    def span(self, data: bytes) -> _ffi.pw_str:
        if not data:
            return _ffi.pw_str(None, 0)
        buf = ctypes.create_string_buffer(data, len(data))
        self._buffers.append(buf)
        return _ffi.pw_str(ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8)), len(data))


class Pushed(enum.IntEnum):
    """`enum pw_pushed`: what a frame came to in a conversation."""

    KEPT = _ffi.PW_PUSHED_KEPT
    """Kept."""
    IGNORED = _ffi.PW_PUSHED_IGNORED
    """Not part of what goes back to a provider (another type, or reasoning and state the
    turn's provider does not take back); nothing changed."""
    ENDED = _ffi.PW_PUSHED_ENDED
    """`END` or `ERROR`: the response is over."""


@dataclass(frozen=True)
class ConversationStats:
    """`pw_conversation_stats`: what a conversation holds."""

    used: int
    """Bytes of its memory in use."""
    capacity: int
    """Bytes of memory it has."""
    entries: int
    """Entries held, the system text included."""
    evicted: int
    """Entries evicted since it was made or cleared (a user text, or an exchange with its
    results, counts one)."""


class ToolChoice:
    """Which tool the model must call (`pw_tool_choice`): `ToolChoice.AUTO`, `NONE`,
    `REQUIRED`, or `ToolChoice.tool(name)` (its declared name or the name the model sees).
    `RequestOptions` also takes the strings `"auto"`, `"none"` and `"required"`."""

    __slots__ = ("mode", "name")
    AUTO: ClassVar[ToolChoice]
    NONE: ClassVar[ToolChoice]
    REQUIRED: ClassVar[ToolChoice]

    def __init__(self, mode: str, name: Optional[str] = None) -> None:
        if mode not in _CHOICES:
            raise ValueError("tool choice must be one of auto, none, required, tool; not %r" % (mode,))
        if (mode == "tool") != (name is not None):
            raise ValueError("a tool name goes with the choice 'tool', and only with it")
        #: `"auto"`, `"none"`, `"required"` or `"tool"`.
        self.mode: str = mode
        #: The tool's name for `"tool"`, else None.
        self.name: Optional[str] = name

    @classmethod
    def tool(cls, name: str) -> "ToolChoice":
        """The model must call the tool `name`."""
        if not isinstance(name, str):
            raise TypeError("a tool name must be a str, not %s" % type(name).__name__)
        return cls("tool", name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolChoice) and (self.mode, self.name) == (other.mode, other.name)

    def __hash__(self) -> int:
        return hash((self.mode, self.name))

    def __repr__(self) -> str:
        return "ToolChoice.tool(%r)" % self.name if self.mode == "tool" else "ToolChoice.%s" % self.mode.upper()


_CHOICES = {
    "auto": _ffi.PW_TOOL_CHOICE_AUTO,
    "none": _ffi.PW_TOOL_CHOICE_NONE,
    "required": _ffi.PW_TOOL_CHOICE_REQUIRED,
    "tool": _ffi.PW_TOOL_CHOICE_TOOL,
}
ToolChoice.AUTO = ToolChoice("auto")
ToolChoice.NONE = ToolChoice("none")
ToolChoice.REQUIRED = ToolChoice("required")


class Declaration:
    """A tool the model is told of (`pw_declaration`, SPEC §10.1): the host's own,
    `Declaration(name, schema=None, description=None, strict=False)`, or an MCP server's
    `tools/list` entry, `Declaration.from_mcp(entry)`.

    `schema` is the input JSON Schema: its JSON text (`bytes` / `str`, sent as written, only
    compacted) or a `dict` (serialised with `json.dumps`); None sends
    `{"type":"object","properties":{}}`. `strict` asks for strict arguments (the schema must
    meet the strict rules). Nothing is checked here: `Conversation.request` refuses a
    declaration the provider cannot take with its `DeclarationRefused` class, `.index` naming
    it."""

    __slots__ = ("name", "schema", "description", "strict", "mcp_entry")

    def __init__(
        self,
        name: str,
        schema: Optional[Json] = None,
        description: Optional[str] = None,
        strict: bool = False,
    ) -> None:
        if not isinstance(strict, bool):
            raise TypeError("strict must be a bool")
        #: The name the provider is given (UTF-8 bytes).
        self.name: bytes = _bytes(name, "name")
        #: The schema's JSON text, or None.
        self.schema: Optional[bytes] = None if schema is None else _json_bytes(schema, "schema")
        #: The description (UTF-8 bytes), or None.
        self.description: Optional[bytes] = None if description is None else _bytes(description, "description")
        self.strict: bool = strict
        #: The MCP `tools/list` entry's JSON text for `from_mcp`, else None.
        self.mcp_entry: Optional[bytes] = None

    @classmethod
    def from_mcp(cls, entry: Json) -> "Declaration":
        """An MCP `tools/list` entry as the server sent it (its JSON text, or parsed as a
        `dict`): its `name`, `description` and `inputSchema` are sent; a name the provider
        cannot take is mapped to one it takes (SPEC §10.1)."""
        d = cls.__new__(cls)
        d.name, d.schema, d.description, d.strict = b"", None, None, False
        d.mcp_entry = _json_bytes(entry, "MCP entry")
        return d

    def _c(self, keep: _Keep) -> _ffi.pw_declaration:
        d = _ffi.pw_declaration()
        if self.mcp_entry is not None:
            # An empty entry would mean "the host's own tool": give the library something
            # to refuse instead.
            d.mcp_entry = keep.span(self.mcp_entry or b" ")
            return d
        d.name = keep.span(self.name)
        d.description = keep.span(self.description or b"")
        d.schema = keep.span(self.schema or b"")
        d.strict = 1 if self.strict else 0
        return d

    def __repr__(self) -> str:
        if self.mcp_entry is not None:
            return "Declaration.from_mcp(%r)" % self.mcp_entry
        return "Declaration(%r%s)" % (self.name.decode("utf-8", "replace"), ", strict=True" if self.strict else "")


class RequestOptions:
    """What a request body says beside the conversation and the tools
    (`pw_request_options`): the `model` (for Gemini it goes in the path, `gemini_path`),
    `max_tokens` (None: not sent; Anthropic then sends 4096), `tool_choice` (None: not sent;
    `"auto"`, `"none"`, `"required"` or a `ToolChoice`), and `extra`: members added at the
    top level, a `dict` or a JSON object's text (`b'{"temperature":0.2}'`)."""

    __slots__ = ("model", "max_tokens", "tool_choice", "extra")

    def __init__(
        self,
        model: str,
        max_tokens: Optional[int] = None,
        tool_choice: Union[None, str, ToolChoice] = None,
        extra: Optional[Json] = None,
    ) -> None:
        if max_tokens is not None:
            if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
                raise TypeError("max_tokens must be an int or None")
            if not 1 <= max_tokens <= 0xFFFFFFFF:
                raise ValueError("max_tokens must be from 1 to 4294967295 (None sends none)")
        if isinstance(tool_choice, str):
            tool_choice = ToolChoice(tool_choice)
        elif tool_choice is not None and not isinstance(tool_choice, ToolChoice):
            raise TypeError("tool_choice must be None, a str or a ToolChoice")
        #: The model (UTF-8 bytes).
        self.model: bytes = _bytes(model, "model")
        self.max_tokens: Optional[int] = max_tokens
        self.tool_choice: Optional[ToolChoice] = tool_choice
        #: The extra members' JSON text, or None.
        self.extra: Optional[bytes] = None if extra is None else _json_bytes(extra, "extra")

    def _c(self, keep: _Keep) -> _ffi.pw_request_options:
        o = _ffi.pw_request_options()
        check(_ffi.lib.pw_request_options_default(byref(o)))
        o.model = keep.span(self.model)
        o.max_tokens = self.max_tokens or 0
        choice = self.tool_choice
        if choice is not None:
            o.tool_choice = _CHOICES[choice.mode]
            if choice.name is not None:
                o.tool = keep.span(_bytes(choice.name, "tool name"))
        # An empty text means "none" to the library: give it something to refuse instead.
        o.extra = keep.span(b"" if self.extra is None else (self.extra or b" "))
        return o

    def __repr__(self) -> str:
        return "RequestOptions(%r, max_tokens=%r, tool_choice=%r, extra=%r)" % (
            self.model.decode("utf-8", "replace"),
            self.max_tokens,
            self.tool_choice,
            self.extra,
        )


class Conversation(_Owned):
    """`pw_conversation`: the system text, the user's texts, the model's responses as a
    decoder gave them and the results of their calls, for the next request (SPEC §10.2).

    It lives in one `bytearray` of `capacity` bytes of memory (default 64 KiB) beside the
    object: the memory a Rust `Conversation::new` is handed, and a SPEC §10.4 file's
    `capacity`, counted alike (`stats().capacity`). When an entry does not fit, reasoning of older exchanges goes first, then the
    oldest entries (a user text, or an exchange with all its results; never the latest
    exchange, nor the first user text once pinned). An entry that does not fit even then is
    refused (`ConversationNoRoom`). Every refusal (a `ConversationRefused` class,
    `TextNotUtf8`, a `MalformedFrame` class) changes nothing. `close()` (or leaving a `with`
    block) lets the memory go; requests made from it can then no longer be written.
    """

    def __init__(self, capacity: int = 64 * 1024) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 0:
            raise TypeError("capacity must be a non-negative int")
        size = c_size_t(0)
        check(_ffi.lib.pw_conversation_size(capacity, byref(size)))
        self._block = _Block(size.value, _ffi.lib.pw_conversation_align())
        c = ctypes.POINTER(_ffi.pw_conversation)()
        check(_ffi.lib.pw_conversation_init(self._block.address, self._block.size, byref(c)))
        self._c = c
        self._pushed = c_uint32(0)

    def set_system(self, text: Data) -> None:
        """Sets the system text (replacing the one held): written first, never evicted."""
        raw = _bytes(text, "text")
        check(_ffi.lib.pw_conversation_set_system(self._ptr(), _nonnull(raw), len(raw)))

    def push_user(self, text: Data) -> None:
        """Adds a user text (it ends a response still open)."""
        raw = _bytes(text, "text")
        check(_ffi.lib.pw_conversation_push_user(self._ptr(), _nonnull(raw), len(raw)))

    def pin_first_user(self, pin: bool = True) -> None:
        """Keeps the first user text whatever else is evicted (or not, with False)."""
        if not isinstance(pin, bool):
            raise TypeError("pin must be a bool")
        check(_ffi.lib.pw_conversation_pin_first_user(self._ptr(), 1 if pin else 0))

    def begin_response(self, provider: Union[str, Provider]) -> None:
        """Begins the model's turn of one response from `provider`; its decoder's frames follow
        through `push_frame`. It ends a response still open."""
        number = _provider(provider)
        check(_ffi.lib.pw_conversation_begin_response(self._ptr(), number))

    def push_frame(self, frame: Frame) -> Pushed:
        """One frame: a decoder's `TEXT`, `REASONING`, `STATE`, `TOOL_CALL`, `END`, `ERROR`
        (into the response begun) or a wrapper's `TOOL_RESULT` (beside its call).

        Give frames as their bytes (`Decoder.feed_raw`, `decode_raw`, `Transmit.frame`): they
        are kept as they came, arguments and signatures byte for byte. A `dict` is serialised
        with `json.dumps`, which may spell numbers otherwise (`1e5` parsed is `100000.0`)."""
        raw = _frame_bytes(frame)
        check(_ffi.lib.pw_conversation_push_frame(self._ptr(), _nonnull(raw), len(raw), byref(self._pushed)))
        return Pushed(self._pushed.value)

    def push_frames(self, frames: Iterable[Frame]) -> List[Pushed]:
        """`push_frame` for each frame, in order; a refusal stops at that frame (the ones
        before it stay)."""
        return [self.push_frame(f) for f in frames]

    def end_response(self) -> None:
        """Ends the response being read (a decoder's `END` does it too)."""
        check(_ffi.lib.pw_conversation_end_response(self._ptr()))

    def clear(self) -> None:
        """Forgets every entry (the memory is kept; `evicted` restarts from 0)."""
        check(_ffi.lib.pw_conversation_clear(self._ptr()))

    def stats(self) -> ConversationStats:
        """`pw_conversation_get_stats`: memory used, capacity, entries held, entries evicted.
        It only reads: a request made from the conversation stays good."""
        s = _ffi.pw_conversation_stats()
        check(_ffi.lib.pw_conversation_get_stats(self._ptr(), byref(s)))
        return ConversationStats(s.used, s.capacity, s.entries, s.evicted)

    def request(
        self,
        provider: Union[str, Provider],
        options: Union[RequestOptions, str],
        declarations: Sequence[Declaration] = (),
    ) -> "Request":
        """The next request body for `provider` (`pw_request_init`): this conversation, the
        tools `declarations` and the `options` (a `RequestOptions`, or just the model's
        name), checked and measured. A refused declaration raises its `DeclarationRefused`
        class (or `TextNotUtf8`) with `.index`; refused options a `RequestRefused` class.
        The request reads the conversation as it is when written: changing the conversation
        makes it stale (`RequestStale`); make it again."""
        return Request(self, provider, options, declarations)

    def __repr__(self) -> str:
        if self.closed:
            return "Conversation(closed)"
        s = self.stats()
        return "Conversation(%d entries, %d of %d bytes)" % (s.entries, s.used, s.capacity)


def _nonnull(raw: bytes) -> Any:
    """`raw` for a `const uint8_t *`: never NULL, even when empty (the library refuses NULL)."""
    return raw if raw else b"\0"


class Request(_Owned):
    """`pw_request`: one request body, its length known before any of it is written
    (`len(request)`, `length`: `Content-Length`), written whole (`body()`) or in chunks of
    any size (`chunks(size)`: the same bytes whatever the size). Made by
    `Conversation.request`; each `body()` or `chunks()` writes the body from its start.

    It reads its conversation's memory while written: once the conversation is changed (any
    call that may change it, even one refused) it raises `RequestStale`; once the
    conversation is closed, `ValueError`. It owns its own block and copies of the options
    and declarations; `close()` (or leaving a `with` block) lets them go.
    """

    def __init__(
        self,
        conversation: Conversation,
        provider: Union[str, Provider],
        options: Union[RequestOptions, str],
        declarations: Sequence[Declaration] = (),
    ) -> None:
        if isinstance(options, str):
            options = RequestOptions(options)
        if not isinstance(options, RequestOptions):
            raise TypeError("options must be a RequestOptions or a model's name")
        decls = list(declarations)
        for d in decls:
            if not isinstance(d, Declaration):
                raise TypeError("declarations must be Declaration objects, not %s" % type(d).__name__)
        self._conversation = conversation
        self._number = _provider(provider)
        self.options = options
        self.declarations = tuple(decls)
        self._keep = _Keep()
        self._opts = options._c(self._keep)
        # Never a NULL array, even for no declarations.
        self._decls = (_ffi.pw_declaration * max(1, len(decls)))(*(d._c(self._keep) for d in decls))
        size = c_size_t(0)
        check(_ffi.lib.pw_request_size(len(decls), byref(size)))
        block = _Block(size.value, _ffi.lib.pw_request_align())
        self._place(block)
        self._block = block
        #: The `Provider` the body is for.
        self.provider = Provider(self._number)
        self._len = c_size_t(0)
        # Whether the body was written from (the next body() or chunks() places it again),
        # and which of them writes it now (a chunks() overtaken by another stops).
        self._started = False
        self._turn = 0

    def _place(self, block: _Block) -> None:
        r = ctypes.POINTER(_ffi.pw_request)()
        bad = c_size_t(_SIZE_MAX)
        code = _ffi.lib.pw_request_init(
            block.address,
            block.size,
            self._conversation._ptr(),
            self._number,
            byref(self._opts),
            self._decls,
            len(self.declarations),
            byref(r),
            byref(bad),
        )
        if code != _ffi.PW_OK:
            e = error_for(code)
            if bad.value != _SIZE_MAX:
                e.index = bad.value
            raise e
        self._c = r

    def _request(self) -> Any:
        """The request's pointer, its conversation still open (`ValueError` otherwise)."""
        self._conversation._ptr()
        return self._ptr()

    @property
    def length(self) -> int:
        """The body's length in bytes (`pw_request_len`); `RequestStale` once the conversation
        changed."""
        check(_ffi.lib.pw_request_len(self._request(), byref(self._len)))
        return self._len.value

    def __len__(self) -> int:
        return self.length

    def _rewind(self) -> int:
        """Ready to write from the start: the body's length, after checking the conversation
        did not change (placing the request again would read the changed one)."""
        n = self.length
        if self._started:
            block = self._block
            if block is None:  # length checked it; this says so to the type checker
                raise ValueError("operation on a closed Request")
            self._place(block)
        self._started = True
        self._turn += 1
        return n

    def _write(self, out: Any, cap: int) -> int:
        """Up to `cap` bytes of the body into `out`: their count, 0 once it is all written."""
        r = _ffi.lib.pw_request_write(self._request(), out, cap, byref(self._len))
        if r == _ffi.PW_NOTHING:
            return 0
        check(r)
        return self._len.value

    def body(self) -> bytes:
        """The whole body."""
        n = self._rewind()
        out = ctypes.create_string_buffer(max(1, n))
        at = 0
        while at < n:
            got = self._write(ctypes.addressof(out) + at, n - at)
            if got == 0:
                raise RuntimeError("pw_request_write ended the body at %d of %d bytes" % (at, n))
            at += got
        return out.raw[:n]

    def chunks(self, size: int = 4096) -> Iterator[bytes]:
        """The body in chunks of `size` bytes (the last one shorter), e.g. as an HTTP client's
        streamed content. The body is written as the chunks are taken: a change to the
        conversation meanwhile raises `RequestStale`, and a later `body()` or `chunks()` of
        the same request stops this one (`RuntimeError`)."""
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError("size must be a positive int")
        return self._chunks(size)

    def _chunks(self, size: int) -> Iterator[bytes]:
        self._rewind()
        turn = self._turn
        out = ctypes.create_string_buffer(size)
        while True:
            if self._turn != turn:
                raise RuntimeError("another body() or chunks() of this Request started: this one stops")
            n = self._write(out, size)
            if n == 0:
                return
            yield out.raw[:n]

    def __repr__(self) -> str:
        state = "closed" if self.closed else "%d declarations" % len(self.declarations)
        return "Request(%s, %s)" % (self.provider.name, state)


def gemini_path(model: str) -> str:
    """The path Gemini takes a body at: `models/<model>:streamGenerateContent?alt=sse`
    (`pw_request_gemini_path`)."""
    raw = _bytes(model, "model")
    src = ctypes.create_string_buffer(raw, len(raw) + 1)
    out = ctypes.create_string_buffer(len(raw) + 64)
    n = c_size_t(0)
    while True:
        r = _ffi.lib.pw_request_gemini_path(src, len(raw), out, len(out), byref(n))
        if r != _ffi.PW_BUFFER_TOO_SMALL:
            break
        out = ctypes.create_string_buffer(n.value)
    check(r)
    return out.raw[: n.value].decode("utf-8")
