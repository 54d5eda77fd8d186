"""Stream decoders and item encoders (SPEC §8) over the C ABI's `pw_decoder_*` and
`pw_encode_item`.

A `Decoder` turns one LLM provider's streamed HTTP response body (SSE, or NDJSON for Ollama),
split anywhere, into the library's frames: `TEXT`, `REASONING`, `STATE` (the provider's state
for a conversation to give back), `TOOL_CALL` (each call once, complete; broken arguments carry
`args_error`), `ERROR` and one `END` per body::

    for frame in decode("openai-chat", response.iter_bytes()):
        if frame["type"] == "TOOL_CALL":
            ...

`encode_item` turns a `TOOL_CALL` or `TOOL_RESULT` frame into the provider's item for the next
request (an assistant tool call, or the tool's answer).
"""

from __future__ import annotations

import ctypes
import enum
import json
from ctypes import byref, c_size_t
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

from . import _ffi
from .errors import check, error_for
from ._owned import _Block, _Owned
from .wrapper import _bytes

__all__ = [
    "DecoderStats",
    "Decoder",
    "Provider",
    "decode",
    "decode_raw",
    "encode_item",
    "encode_item_raw",
    "provider_from_name",
]

BytesLike = Union[bytes, bytearray, memoryview, str]
Frame = Union[Dict[str, Any], str, bytes, bytearray, memoryview]


class Provider(enum.IntEnum):
    """`enum pw_provider`: the response formats the decoders read and the encoders write."""

    OPENAI_CHAT = _ffi.PW_PROVIDER_OPENAI_CHAT
    OPENAI_RESPONSES = _ffi.PW_PROVIDER_OPENAI_RESPONSES
    ANTHROPIC = _ffi.PW_PROVIDER_ANTHROPIC
    GEMINI = _ffi.PW_PROVIDER_GEMINI
    OLLAMA = _ffi.PW_PROVIDER_OLLAMA


def provider_from_name(name: str) -> Provider:
    """`pw_provider_from_name`: `openai-chat`, `openai-responses`, `anthropic`, `gemini` or
    `ollama`; raises `UnknownProvider` for any other name."""
    raw = _bytes(name, "provider name")
    p = _ffi.pw_provider(0)
    # A non-NULL pointer even for the empty name.
    buf = ctypes.create_string_buffer(raw, len(raw) + 1)
    check(_ffi.lib.pw_provider_from_name(buf, len(raw), byref(p)))
    return Provider(p.value)


def _provider(provider: Union[str, int, Provider]) -> int:
    """A provider's number: a name goes through `pw_provider_from_name`; a number is passed as
    is (the library refuses one it does not have with `UnknownProvider`)."""
    if isinstance(provider, (str, bytes)):
        return int(provider_from_name(provider if isinstance(provider, str) else provider.decode("utf-8")))
    if isinstance(provider, int) and not isinstance(provider, bool):
        return int(provider)
    raise TypeError("provider must be a name or a Provider, not %s" % type(provider).__name__)


@dataclass(frozen=True)
class DecoderStats:
    """`pw_decoder_stats`: what a decoder skipped, by kind, and the calls it saw since it was
    made. `calls_started == calls_written` once a body is finished."""

    not_json: int
    """Events whose data is not JSON."""
    unknown_event: int
    """Events of a name the provider does not send."""
    bad_shape: int
    """Events of a known kind with members of the wrong shape."""
    overlong: int
    """Events longer than `event_cap` (skipped)."""
    after_end: int
    """Events after the response ended, until the body ended."""
    cut: int
    """Ids, names and finish reasons cut to their capacity."""
    calls_started: int
    """Calls that started."""
    calls_written: int
    """`TOOL_CALL` frames written."""


class Decoder(_Owned):
    """`pw_decoder`: one provider's response bodies in, frames out.

    `provider` is a name (`"openai-chat"`, `"openai-responses"`, `"anthropic"`, `"gemini"`,
    `"ollama"`) or a `Provider`. The capacities default to `pw_decoder_config_default`'s:
    `event_cap` (the longest provider event kept, 16 KiB; a longer one is skipped and counted
    in `stats.overlong`), `args_cap` (argument bytes per call, 4 KiB), `name_cap` and `id_cap`
    (64 bytes each), `max_depth` (32); `calls` is the most calls one response may have open
    at once. The decoder lives in one `bytearray` of `pw_decoder_size` bytes; `close()` (or
    leaving a `with` block) lets it go.

    `feed(data)` returns the frames that `data` completed; `finish()` ends the body and returns
    the last frames (calls still open, then `END`), after which the decoder takes the next
    body. `feed_raw` / `finish_raw` give the frames as their exact bytes (one JSON object
    each, as `Wrapper.handle_response` takes them).

    `frame_buffer` is the first size of the output buffer (default `pw_decoder_max_frame_len`,
    never too small); a smaller one is grown when the library asks for more.
    """

    def __init__(
        self,
        provider: Union[str, Provider],
        *,
        event_cap: Optional[int] = None,
        args_cap: Optional[int] = None,
        name_cap: Optional[int] = None,
        id_cap: Optional[int] = None,
        max_depth: Optional[int] = None,
        calls: int = 8,
        frame_buffer: Optional[int] = None,
    ) -> None:
        number = _provider(provider)
        cfg = _ffi.pw_decoder_config()
        check(_ffi.lib.pw_decoder_config_default(byref(cfg)))
        for name, value in (
            ("event_cap", event_cap),
            ("args_cap", args_cap),
            ("name_cap", name_cap),
            ("id_cap", id_cap),
            ("max_depth", max_depth),
        ):
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise TypeError("%s must be a non-negative int" % name)
                if name == "max_depth" and value > 255:
                    raise ValueError("max_depth must be at most 255")
                setattr(cfg, name, value)
        self._cfg = cfg
        self.calls = calls
        size = c_size_t(0)
        check(_ffi.lib.pw_decoder_size(byref(cfg), calls, byref(size)))
        longest = c_size_t(0)
        check(_ffi.lib.pw_decoder_max_frame_len(byref(cfg), byref(longest)))
        #: The longest frame this configuration can write (`pw_decoder_max_frame_len`).
        self.max_frame_len = longest.value
        self._block = _Block(size.value, _ffi.lib.pw_decoder_align())
        self._number = number
        self._init()
        #: The `Provider` it reads.
        self.provider = Provider(number)
        self._out = ctypes.create_string_buffer(max(1, frame_buffer if frame_buffer is not None else longest.value))
        self._len = c_size_t(0)
        self._used = c_size_t(0)

    def _init(self) -> None:
        block = self._block
        if block is None:  # reset() checks first; this says so to the type checker
            raise ValueError("operation on a closed Decoder")
        d = ctypes.POINTER(_ffi.pw_decoder)()
        check(_ffi.lib.pw_decoder_init(block.address, block.size, self._number, byref(self._cfg), self.calls, byref(d)))
        self._c = d

    # -------------------------------------------------- memory (close, with, closed,
    # memory_size: `_Owned`)

    def reset(self) -> None:
        """Starts afresh (`pw_decoder_init` on the same memory): a body half read is dropped
        and the stats restart from zero."""
        self._ptr()
        self._init()

    # -------------------------------------------------- frames

    def _drain(self, out: List[bytes]) -> None:
        d = self._ptr()
        n = self._len
        while True:
            r = _ffi.lib.pw_decoder_poll_frame(d, self._out, len(self._out), byref(n))
            if r == _ffi.PW_BUFFER_TOO_SMALL:
                self._out = ctypes.create_string_buffer(n.value)
                continue
            if r == _ffi.PW_NOTHING:
                return
            check(r)
            out.append(ctypes.string_at(self._out, n.value))

    def feed_raw(self, data: BytesLike) -> List[bytes]:
        """Body bytes in (any split; a `str` is taken as UTF-8): the frames they completed,
        each as its exact bytes."""
        data = _bytes(data, "data")
        frames: List[bytes] = []
        d = self._ptr()
        if not data:
            return frames
        base = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
        total, at, used = len(data), 0, self._used
        while at < total:
            check(_ffi.lib.pw_decoder_feed(d, base + at, total - at, byref(used)))
            at += used.value
            before = len(frames)
            self._drain(frames)
            if used.value == 0 and len(frames) == before:
                # The library takes nothing only while frames wait, and they were all drained.
                raise RuntimeError("pw_decoder_feed took no bytes with no frame waiting")
        return frames

    def finish_raw(self) -> List[bytes]:
        """Ends the body: its last frames (calls still open, then `END`), as exact bytes. The
        decoder then takes the next body."""
        check(_ffi.lib.pw_decoder_finish(self._ptr()))
        frames: List[bytes] = []
        self._drain(frames)
        return frames

    def feed(self, data: BytesLike) -> List[Dict[str, Any]]:
        """Body bytes in (any split): the frames they completed, parsed (`json.loads`)."""
        return [json.loads(f) for f in self.feed_raw(data)]

    def finish(self) -> List[Dict[str, Any]]:
        """Ends the body: its last frames, parsed. The decoder then takes the next body."""
        return [json.loads(f) for f in self.finish_raw()]

    @property
    def stats(self) -> DecoderStats:
        """`pw_decoder_get_stats`: what it skipped and the calls it saw since it was made."""
        s = _ffi.pw_decoder_stats()
        check(_ffi.lib.pw_decoder_get_stats(self._ptr(), byref(s)))
        return DecoderStats(*(getattr(s, f[0]) for f in _ffi.pw_decoder_stats._fields_))

    def __repr__(self) -> str:
        name = self.provider.name
        state = "closed" if self.closed else "%d bytes" % self.memory_size
        return "Decoder(%s, %s)" % (name, state)


def decode_raw(provider: Union[str, Provider], chunks: Iterable[BytesLike], **options: Any) -> Iterator[bytes]:
    """`decode`, with each frame as its exact bytes."""
    with Decoder(provider, **options) as d:
        for chunk in chunks:
            yield from d.feed_raw(chunk)
        yield from d.finish_raw()


def decode(provider: Union[str, Provider], chunks: Iterable[BytesLike], **options: Any) -> Iterator[Dict[str, Any]]:
    """The frames of one response body given as an iterable of byte chunks (split anywhere),
    as they complete, e.g. ``for frame in decode("anthropic", response.iter_bytes())``. The
    options are `Decoder`'s."""
    for f in decode_raw(provider, chunks, **options):
        yield json.loads(f)


# ------------------------------------------------------------ items


def _frame_bytes(frame: Frame) -> bytes:
    if isinstance(frame, dict):
        return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return _bytes(frame)


def encode_item_raw(provider: Union[str, Provider], frame: Frame) -> bytes:
    """`encode_item`, with the item as its exact bytes."""
    number = _provider(provider)
    data = _frame_bytes(frame)
    src = ctypes.create_string_buffer(data, len(data) + 1)  # never NULL, even when empty
    out = ctypes.create_string_buffer(max(256, 2 * len(data) + 128))
    n = c_size_t(0)
    while True:
        r = _ffi.lib.pw_encode_item(number, src, len(data), out, len(out), byref(n))
        if r != _ffi.PW_BUFFER_TOO_SMALL:
            break
        out = ctypes.create_string_buffer(n.value)
    if r != _ffi.PW_OK:
        raise error_for(r)
    return out.raw[: n.value]


def encode_item(provider: Union[str, Provider], frame: Frame) -> Dict[str, Any]:
    """`pw_encode_item`: a `TOOL_CALL` frame (for the assistant turn) or a `TOOL_RESULT` frame
    (a dict, or its JSON text as `str` / `bytes`) as `provider`'s request item, parsed.

    Refusals raise the code's `PolyweaveError`: `ItemNotCallOrResult`, `ItemNoName`,
    `ItemNoId` (OpenAI and Anthropic match results by id), `ItemNoOutcome` (all `ItemRefused`),
    a `MalformedFrame` for a frame that is not valid, `UnknownProvider`."""
    item: Dict[str, Any] = json.loads(encode_item_raw(provider, frame))
    return item
