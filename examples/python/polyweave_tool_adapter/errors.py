"""One exception class per `pw_result` code, each with the library's own message."""

from __future__ import annotations

import ctypes
from typing import Dict, Optional, Type

from . import _ffi


def result_text(code: int) -> str:
    """`pw_result_text(code)`: the library's message for any code."""
    buf = ctypes.create_string_buffer(256)
    n = ctypes.c_size_t(0)
    r = _ffi.lib.pw_result_text(code, buf, len(buf), ctypes.byref(n))
    if r == _ffi.PW_BUFFER_TOO_SMALL:
        buf = ctypes.create_string_buffer(n.value)
        r = _ffi.lib.pw_result_text(code, buf, len(buf), ctypes.byref(n))
    return buf.raw[: n.value].decode("ascii", "replace") if r == _ffi.PW_OK else "code %d" % code


class PolyweaveError(Exception):
    """A `pw_result` other than `PW_OK`: `.code` is the number, `.message` the library's text."""

    #: The class's code; None only on this base class, which takes the code as an argument.
    code: Optional[int] = None

    def __init__(self, code: Optional[int] = None, message: Optional[str] = None) -> None:
        if code is None:
            code = type(self).code
        if code is None:
            raise TypeError("PolyweaveError needs a code")
        self.code: int = code
        self.message: str = message if message is not None else result_text(code)
        #: A JSON error's byte offset (`validate_json`, the decoders), else None.
        self.offset: Optional[int] = None
        #: The refused declaration's index in the list given (`Conversation.request`), else None.
        self.index: Optional[int] = None
        super().__init__("%s (code %d)" % (self.message, code))


class MalformedFrame(PolyweaveError, ValueError):
    """A frame (or JSON value) the library refused as malformed (`pw_result_is_malformed`)."""


class CallNotWaiting(PolyweaveError):
    """A completion or adapter input for a call that is not waiting for it
    (`pw_result_is_not_waiting`)."""


class BufferTooSmall(PolyweaveError, ValueError):
    """An output buffer was too small: `.needed` is the size the library asked for."""

    code = _ffi.PW_BUFFER_TOO_SMALL

    def __init__(self, needed: Optional[int] = None, code: Optional[int] = None, message: Optional[str] = None) -> None:
        self.needed: Optional[int] = needed
        super().__init__(code, message)
        if needed is not None:
            self.args = ("%s (code %d): %d bytes needed" % (self.message, self.code, needed),)


class StorageError(PolyweaveError, ValueError):
    """Memory handed to the library is too small, misaligned, or overlaps another region
    (the `PW_STORAGE_*` codes); nothing was placed."""


class ItemRefused(PolyweaveError, ValueError):
    """A frame an item encoder cannot turn into the provider's item (codes 401-404): not a
    `TOOL_CALL` / `TOOL_RESULT`, no name, no id where the provider needs one, no outcome."""


class McpRefused(PolyweaveError):
    """What the MCP client refused (codes 500-513 but the retired 502): a frame that is not for it, a call it
    cannot take now (`McpOutboxFull`, `McpFramePending`: poll, then hand the frame in again),
    a second start, a `clientInfo` text too long; over HTTP a response input out of order
    (`McpUnknownStream`, `McpHeadTwice`, `McpNoHead`, `McpPollFirst`: poll, then give it again)
    or given to a line client (`McpNotHttp`). Nothing changed in the client."""


class ConversationRefused(PolyweaveError, ValueError):
    """What a `Conversation` refused (codes 600-607): a text or frame it cannot keep, a result
    for no call it holds, an entry too big for its memory. Nothing changed in the conversation."""


class DeclarationRefused(PolyweaveError, ValueError):
    """A tool declaration the provider cannot be told of (codes 610-614); `.index` is its place
    in the declarations given to `Conversation.request`. No request was made."""


class RequestRefused(PolyweaveError, ValueError):
    """Request options the provider cannot take (codes 620-623), or a request whose
    conversation changed since it was made (`RequestStale`, 624: make it again)."""


class SchemaError(PolyweaveError, ValueError):
    """A JSON Schema the validator refuses (`PW_BAD_SCHEMA`, SPEC §11): `.kind` says why (a
    `SchemaErrorKind`), `.offset` where in the schema's text, `.tool` the tool's name when a
    `Wrapper` or `McpClient.set_output_schemas` was given it. Nothing was registered."""

    code = _ffi.PW_BAD_SCHEMA

    def __init__(self, code: Optional[int] = None, message: Optional[str] = None) -> None:
        super().__init__(code, message)
        #: Why (a `SchemaErrorKind`), when the schema was checked alone (`check_schema`).
        self.kind: Optional[int] = None
        #: The tool whose schema it is, for a `Wrapper`'s tool or an MCP output schema.
        self.tool: Optional[str] = None


class ReentrantCall(RuntimeError):
    """Not a `pw_result`: a call into the library refused by the binding itself, made from
    inside one of the same object's sync tools or hooks while the C function that runs them is
    still working in its memory (which the header forbids: see `_owned.py`). Nothing changed."""


def _base(code: int) -> Type[PolyweaveError]:
    """The class a code's exception derives from, as the library classifies the code."""
    if _ffi.lib.pw_result_is_malformed(code):
        return MalformedFrame
    if _ffi.lib.pw_result_is_not_waiting(code):
        return CallNotWaiting
    if _ffi.PW_STORAGE_TOO_SMALL <= code <= _ffi.PW_STORAGE_OVERLAP:
        return StorageError
    if _ffi.PW_ITEM_NOT_CALL_OR_RESULT <= code <= _ffi.PW_ITEM_NO_OUTCOME:
        return ItemRefused
    if _ffi.PW_MCP_NOT_ADAPTER_FRAME <= code <= _ffi.PW_MCP_POLL_FIRST:
        return McpRefused
    if _ffi.PW_CONVERSATION_NO_ROOM <= code <= _ffi.PW_CONVERSATION_EMPTY_TEXT:
        return ConversationRefused
    if _ffi.PW_DECLARATION_BAD_NAME <= code <= _ffi.PW_DECLARATION_DUPLICATE_NAME:
        return DeclarationRefused
    if _ffi.PW_REQUEST_TOOL_CHOICE_UNSUPPORTED <= code <= _ffi.PW_REQUEST_STALE:
        return RequestRefused
    return PolyweaveError


def _make(name: str, code: int, doc: Optional[str] = None) -> Type[PolyweaveError]:
    return type(name, (_base(code),), {"code": code, "__doc__": doc or result_text(code)})


NullPointer = _make("NullPointer", _ffi.PW_NULL_POINTER)
StorageTooSmall = _make("StorageTooSmall", _ffi.PW_STORAGE_TOO_SMALL)
StorageMisaligned = _make("StorageMisaligned", _ffi.PW_STORAGE_MISALIGNED)
StorageOverlap = _make("StorageOverlap", _ffi.PW_STORAGE_OVERLAP)
BadConfig = _make("BadConfig", _ffi.PW_BAD_CONFIG)
BadTool = _make("BadTool", _ffi.PW_BAD_TOOL)
TooMany = _make("TooMany", _ffi.PW_TOO_MANY)
BadArgument = _make("BadArgument", _ffi.PW_BAD_ARGUMENT)
TextNotUtf8: Type[PolyweaveError] = type(
    "TextNotUtf8",
    (PolyweaveError, ValueError),
    {"code": _ffi.PW_TEXT_NOT_UTF8, "__doc__": result_text(_ffi.PW_TEXT_NOT_UTF8)},
)
FrameNotObject = _make("FrameNotObject", _ffi.PW_FRAME_NOT_OBJECT)
FrameMissingType = _make("FrameMissingType", _ffi.PW_FRAME_MISSING_TYPE)
FrameTypeNotString = _make("FrameTypeNotString", _ffi.PW_FRAME_TYPE_NOT_STRING)
InvalidJson = _make("InvalidJson", _ffi.PW_INVALID_JSON)
JsonTooDeep = _make("JsonTooDeep", _ffi.PW_JSON_TOO_DEEP)
InvalidUtf8 = _make("InvalidUtf8", _ffi.PW_INVALID_UTF8)
WrongFrameKind = _make("WrongFrameKind", _ffi.PW_WRONG_FRAME_KIND)
FrameDuplicateType = _make("FrameDuplicateType", _ffi.PW_FRAME_DUPLICATE_TYPE)
LineTooLong = _make("LineTooLong", _ffi.PW_LINE_TOO_LONG)
Nothing = _make("Nothing", _ffi.PW_NOTHING)
ClockWentBackwards = _make("ClockWentBackwards", _ffi.PW_CLOCK_WENT_BACKWARDS)
NameTooLong = _make("NameTooLong", _ffi.PW_NAME_TOO_LONG)
IdTooLong = _make("IdTooLong", _ffi.PW_ID_TOO_LONG)
InvalidResult = _make("InvalidResult", _ffi.PW_INVALID_RESULT)
HeldFull = _make("HeldFull", _ffi.PW_HELD_FULL)
QueueFull = _make("QueueFull", _ffi.PW_QUEUE_FULL)
CallUnknown = _make("CallUnknown", _ffi.PW_CALL_UNKNOWN)
CallCompleted = _make("CallCompleted", _ffi.PW_CALL_COMPLETED)
CallTimedOut = _make("CallTimedOut", _ffi.PW_CALL_TIMED_OUT)
CallCancelled = _make("CallCancelled", _ffi.PW_CALL_CANCELLED)
CallStale = _make("CallStale", _ffi.PW_CALL_STALE)
CallWrongKind = _make("CallWrongKind", _ffi.PW_CALL_WRONG_KIND)
CallForeign = _make("CallForeign", _ffi.PW_CALL_FOREIGN)
UnknownProvider: Type[PolyweaveError] = type(
    "UnknownProvider",
    (PolyweaveError, ValueError),
    {"code": _ffi.PW_UNKNOWN_PROVIDER, "__doc__": result_text(_ffi.PW_UNKNOWN_PROVIDER)},
)
ItemNotCallOrResult = _make("ItemNotCallOrResult", _ffi.PW_ITEM_NOT_CALL_OR_RESULT)
ItemNoName = _make("ItemNoName", _ffi.PW_ITEM_NO_NAME)
ItemNoId = _make("ItemNoId", _ffi.PW_ITEM_NO_ID)
ItemNoOutcome = _make("ItemNoOutcome", _ffi.PW_ITEM_NO_OUTCOME)
McpNotAdapterFrame = _make("McpNotAdapterFrame", _ffi.PW_MCP_NOT_ADAPTER_FRAME)
McpNoName = _make("McpNoName", _ffi.PW_MCP_NO_NAME)
McpDuplicateCall = _make("McpDuplicateCall", _ffi.PW_MCP_DUPLICATE_CALL)
McpUnknownCall = _make("McpUnknownCall", _ffi.PW_MCP_UNKNOWN_CALL)
McpOutboxFull = _make("McpOutboxFull", _ffi.PW_MCP_OUTBOX_FULL)
McpFramePending = _make("McpFramePending", _ffi.PW_MCP_FRAME_PENDING)
McpAlreadyStarted = _make("McpAlreadyStarted", _ffi.PW_MCP_ALREADY_STARTED)
McpClientInfoTooLong = _make("McpClientInfoTooLong", _ffi.PW_MCP_CLIENT_INFO_TOO_LONG)
McpNotHttp = _make("McpNotHttp", _ffi.PW_MCP_NOT_HTTP)
McpUnknownStream = _make("McpUnknownStream", _ffi.PW_MCP_UNKNOWN_STREAM)
McpHeadTwice = _make("McpHeadTwice", _ffi.PW_MCP_HEAD_TWICE)
McpNoHead = _make("McpNoHead", _ffi.PW_MCP_NO_HEAD)
McpPollFirst = _make("McpPollFirst", _ffi.PW_MCP_POLL_FIRST)
ConversationNoRoom = _make("ConversationNoRoom", _ffi.PW_CONVERSATION_NO_ROOM)
ConversationBadContent = _make("ConversationBadContent", _ffi.PW_CONVERSATION_BAD_CONTENT)
ConversationNoResponse = _make("ConversationNoResponse", _ffi.PW_CONVERSATION_NO_RESPONSE)
ConversationNoName = _make("ConversationNoName", _ffi.PW_CONVERSATION_NO_NAME)
ConversationUnknownCall = _make("ConversationUnknownCall", _ffi.PW_CONVERSATION_UNKNOWN_CALL)
ConversationAlreadyAnswered = _make("ConversationAlreadyAnswered", _ffi.PW_CONVERSATION_ALREADY_ANSWERED)
ConversationNoOutcome = _make("ConversationNoOutcome", _ffi.PW_CONVERSATION_NO_OUTCOME)
ConversationEmptyText = _make("ConversationEmptyText", _ffi.PW_CONVERSATION_EMPTY_TEXT)
DeclarationBadName = _make("DeclarationBadName", _ffi.PW_DECLARATION_BAD_NAME)
DeclarationNotStrict = _make("DeclarationNotStrict", _ffi.PW_DECLARATION_NOT_STRICT)
DeclarationBadSchema = _make("DeclarationBadSchema", _ffi.PW_DECLARATION_BAD_SCHEMA)
DeclarationBadEntry = _make("DeclarationBadEntry", _ffi.PW_DECLARATION_BAD_ENTRY)
DeclarationDuplicateName = _make("DeclarationDuplicateName", _ffi.PW_DECLARATION_DUPLICATE_NAME)
RequestToolChoiceUnsupported = _make("RequestToolChoiceUnsupported", _ffi.PW_REQUEST_TOOL_CHOICE_UNSUPPORTED)
RequestUnknownTool = _make("RequestUnknownTool", _ffi.PW_REQUEST_UNKNOWN_TOOL)
RequestBadExtra = _make("RequestBadExtra", _ffi.PW_REQUEST_BAD_EXTRA)
RequestExtraClash = _make("RequestExtraClash", _ffi.PW_REQUEST_EXTRA_CLASH)
RequestStale = _make("RequestStale", _ffi.PW_REQUEST_STALE)
SchemaInvalid = _make("SchemaInvalid", _ffi.PW_SCHEMA_INVALID)
SchemaLimit = _make("SchemaLimit", _ffi.PW_SCHEMA_LIMIT)
Panic = _make("Panic", _ffi.PW_PANIC)

#: Every class by its code.
BY_CODE: Dict[int, Type[PolyweaveError]] = {}
for _v in [BufferTooSmall] + list(globals().values()):
    if isinstance(_v, type) and issubclass(_v, PolyweaveError) and _v.code is not None:
        BY_CODE[_v.code] = _v

# Each generated class shows as a member of this module.
for _cls in BY_CODE.values():
    _cls.__module__ = __name__


def error_for(code: int, needed: Optional[int] = None) -> PolyweaveError:
    """The exception for a code (`BufferTooSmall` with `needed`; unknown codes: `PolyweaveError`)."""
    if code == _ffi.PW_BUFFER_TOO_SMALL:
        return BufferTooSmall(needed)
    cls = BY_CODE.get(code)
    return cls() if cls is not None else PolyweaveError(code)


def check(code: int) -> None:
    """Raises the exception of `code` unless it is `PW_OK`."""
    if code != _ffi.PW_OK:
        raise error_for(code)


__all__ = [
    "PolyweaveError",
    "MalformedFrame",
    "CallNotWaiting",
    "StorageError",
    "ItemRefused",
    "McpRefused",
    "ConversationRefused",
    "DeclarationRefused",
    "RequestRefused",
    "ReentrantCall",
    "result_text",
    "error_for",
    "check",
] + sorted(cls.__name__ for cls in BY_CODE.values())
