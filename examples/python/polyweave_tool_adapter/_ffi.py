"""ctypes declarations mirroring include/polyweave_tool_adapter.h exactly.

The shared library is `$PW_LIB` when set (an explicit override: the tests of the source folder
use it), else the copy inside this package's own directory, which the wheel carries
(`setup.py` builds it with `cargo build --release -p polyweave-tool-adapter-ffi`). Neither
there: `import` fails with an `ImportError` that says both.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

# ------------------------------------------------------------ constants

PW_DEFAULT_MAX_DEPTH = 32
PW_TOOL_CALL_HAS_ID = 1
PW_TOOL_CALL_HAS_NAME = 2
PW_TOOL_CALL_HAS_ARGS = 4
PW_TOOL_CALL_CONTENT_IS_OBJECT = 8
PW_LINE_SPLITTER_SIZE_BOUND = 128
PW_MAX_ALIGN = 8
PW_TOOL_KIND_SYNC = 0
PW_TOOL_KIND_DEFERRED = 1
PW_TOOL_KIND_ADAPTER = 2
PW_TOOL_DEFAULT_TIMEOUT = 0xFFFFFFFF
PW_TOOL_STATUS_OK = 0
PW_TOOL_STATUS_FAILED = 1
PW_DISPOSITION_FORWARD = 0
PW_DISPOSITION_INTERCEPTED = 1
PW_DISPOSITION_HELD = 2
PW_COMPLETED_AS_GIVEN = 0
PW_COMPLETED_RESULT_TOO_LARGE = 1
PW_COMPLETED_RESULT_TOO_DEEP = 2
PW_COMPLETED_MESSAGE_CUT = 3
PW_ROUTE_MODEL = 0
PW_ROUTE_CONSUMER = 1
PW_ROUTE_ADAPTER = 2
PW_PENDING_DEFERRED = 0
PW_PENDING_ADAPTER = 1
PW_OUTPUT_FRAME = 0
PW_OUTPUT_TOOL_CALL = 1
PW_OUTPUT_TOOL_RESULT = 2
PW_WRAPPER_MAX_BASE_SIZE = 640
PW_WRAPPER_MAX_SLOT_SIZE = 64
PW_WRAPPER_MAX_TOOL_SIZE = 128
PW_NO_TIMEOUT = 0xFFFFFFFFFFFFFFFF
PW_VERSION_MAJOR = 0
PW_VERSION_MINOR = 1
PW_VERSION_PATCH = 0
PW_DECODER_MAX_BASE_SIZE = 640
PW_DECODER_MAX_SLOT_SIZE = 32
PW_MCP_MIN_OUTBOX = 396
PW_MCP_CLIENT_TEXT_CAP = 64
PW_MCP_METHOD_CAP = 256
PW_MCP_MAX_BASE_SIZE = 1536
PW_MCP_MAX_SLOT_SIZE = 64
PW_MCP_DEFAULT_START_TIMEOUT_MS = 10000
PW_MCP_MAX_STREAM_SIZE = 160
PW_CONVERSATION_MAX_BASE_SIZE = 64
PW_REQUEST_MAX_BASE_SIZE = 256
PW_REQUEST_MAX_DECLARATION_SIZE = 96
# enum pw_pushed
PW_PUSHED_KEPT = 0
PW_PUSHED_IGNORED = 1
PW_PUSHED_ENDED = 2
# enum pw_tool_choice
PW_TOOL_CHOICE_UNSET = 0
PW_TOOL_CHOICE_AUTO = 1
PW_TOOL_CHOICE_NONE = 2
PW_TOOL_CHOICE_REQUIRED = 3
PW_TOOL_CHOICE_TOOL = 4

# enum pw_mcp_client_state
PW_MCP_STATE_IDLE = 0
PW_MCP_STATE_STARTING = 1
PW_MCP_STATE_READY = 2
PW_MCP_STATE_FAILED = 3
PW_MCP_STATE_CLOSED = 4
# enum pw_mcp_event_kind
PW_MCP_EVENT_INITIALIZED = 0
PW_MCP_EVENT_TOOL = 1
PW_MCP_EVENT_TOOL_SKIPPED = 2
PW_MCP_EVENT_READY = 3
PW_MCP_EVENT_START_FAILED = 4
PW_MCP_EVENT_NOTIFICATION = 5
PW_MCP_EVENT_TOOLS_CHANGED = 6
# enum pw_mcp_skip
PW_MCP_SKIP_NONE = 0
PW_MCP_SKIP_NAME_TOO_LONG = 1
PW_MCP_SKIP_NO_NAME = 2
PW_MCP_SKIP_BAD_HEADER_ANNOTATION = 3
PW_MCP_SKIP_HEADER_TABLE_FULL = 4
# enum pw_mcp_start_error
PW_MCP_START_NONE = 0
PW_MCP_START_UNSUPPORTED_VERSION = 1
PW_MCP_START_BAD_RESULT = 2
PW_MCP_START_REFUSED = 3
PW_MCP_START_CURSOR_TOO_LONG = 4
PW_MCP_START_TOO_MANY_PAGES = 5
PW_MCP_START_RESPONSE_TOO_LARGE = 6
PW_MCP_START_NO_ANSWER = 7
PW_MCP_START_NO_RESPONSE = 8
# enum pw_mcp_revision
PW_MCP_REVISION_AUTO = 0
PW_MCP_REVISION_2025_11_25 = 1
PW_MCP_REVISION_2026_07_28 = 2
# enum pw_mcp_handled_kind
PW_MCP_HANDLED_SENT = 0
PW_MCP_HANDLED_FAILED = 1
PW_MCP_HANDLED_CANCELLED = 2
# enum pw_mcp_post_kind
PW_MCP_POST = 0
PW_MCP_POST_CLOSE = 1
# enum pw_mcp_failure
PW_MCP_FAILURE_NONE = 0
PW_MCP_FAILURE_CLOSED = 1
PW_MCP_FAILURE_NOT_STARTED = 2
PW_MCP_FAILURE_ARGS_NOT_OBJECT = 3
PW_MCP_FAILURE_TOO_MANY = 4
PW_MCP_FAILURE_REQUEST_TOO_LONG = 5
PW_MCP_FAILURE_RESPONSE_TOO_LONG = 6
PW_MCP_FAILURE_RESPONSE_TOO_DEEP = 7
PW_MCP_FAILURE_NO_OUTCOME = 8
PW_MCP_FAILURE_INPUT_REQUIRED = 9
PW_MCP_FAILURE_HTTP = 10

# enum pw_result (retired, never reused: 9, 200, 304, 308, 502)
PW_OK = 0
PW_NULL_POINTER = 1
PW_BUFFER_TOO_SMALL = 2
PW_STORAGE_TOO_SMALL = 3
PW_STORAGE_MISALIGNED = 4
PW_STORAGE_OVERLAP = 5
PW_BAD_CONFIG = 6
PW_BAD_TOOL = 7
PW_TOO_MANY = 8
PW_BAD_ARGUMENT = 10
PW_TEXT_NOT_UTF8 = 11
PW_FRAME_NOT_OBJECT = 100
PW_FRAME_MISSING_TYPE = 101
PW_FRAME_TYPE_NOT_STRING = 102
PW_INVALID_JSON = 103
PW_JSON_TOO_DEEP = 104
PW_INVALID_UTF8 = 105
PW_WRONG_FRAME_KIND = 106
PW_FRAME_DUPLICATE_TYPE = 107
PW_LINE_TOO_LONG = 201
PW_NOTHING = 300
PW_CLOCK_WENT_BACKWARDS = 301
PW_NAME_TOO_LONG = 302
PW_ID_TOO_LONG = 303
PW_INVALID_RESULT = 305
PW_HELD_FULL = 306
PW_QUEUE_FULL = 307
PW_CALL_UNKNOWN = 309
PW_CALL_COMPLETED = 310
PW_CALL_TIMED_OUT = 311
PW_CALL_CANCELLED = 312
PW_CALL_STALE = 313
PW_CALL_WRONG_KIND = 314
PW_CALL_FOREIGN = 315
PW_UNKNOWN_PROVIDER = 400
PW_ITEM_NOT_CALL_OR_RESULT = 401
PW_ITEM_NO_NAME = 402
PW_ITEM_NO_ID = 403
PW_ITEM_NO_OUTCOME = 404
PW_MCP_NOT_ADAPTER_FRAME = 500
PW_MCP_NO_NAME = 501
PW_MCP_DUPLICATE_CALL = 503
PW_MCP_UNKNOWN_CALL = 504
PW_MCP_OUTBOX_FULL = 505
PW_MCP_FRAME_PENDING = 506
PW_MCP_ALREADY_STARTED = 507
PW_MCP_CLIENT_INFO_TOO_LONG = 508
PW_MCP_NOT_HTTP = 509
PW_MCP_UNKNOWN_STREAM = 510
PW_MCP_HEAD_TWICE = 511
PW_MCP_NO_HEAD = 512
PW_MCP_POLL_FIRST = 513
PW_CONVERSATION_NO_ROOM = 600
PW_CONVERSATION_BAD_CONTENT = 601
PW_CONVERSATION_NO_RESPONSE = 602
PW_CONVERSATION_NO_NAME = 603
PW_CONVERSATION_UNKNOWN_CALL = 604
PW_CONVERSATION_ALREADY_ANSWERED = 605
PW_CONVERSATION_NO_OUTCOME = 606
PW_CONVERSATION_EMPTY_TEXT = 607
PW_DECLARATION_BAD_NAME = 610
PW_DECLARATION_NOT_STRICT = 611
PW_DECLARATION_BAD_SCHEMA = 612
PW_DECLARATION_BAD_ENTRY = 613
PW_DECLARATION_DUPLICATE_NAME = 614
PW_REQUEST_TOOL_CHOICE_UNSUPPORTED = 620
PW_REQUEST_UNKNOWN_TOOL = 621
PW_REQUEST_BAD_EXTRA = 622
PW_REQUEST_EXTRA_CLASH = 623
PW_REQUEST_STALE = 624
PW_BAD_SCHEMA = 700
PW_SCHEMA_INVALID = 701
PW_SCHEMA_LIMIT = 702
PW_PANIC = 900

# enum pw_schema_error_kind
PW_SCHEMA_ERROR_NOT_JSON = 0
PW_SCHEMA_ERROR_NOT_A_SCHEMA = 1
PW_SCHEMA_ERROR_BAD_KEYWORD = 2
PW_SCHEMA_ERROR_REMOTE_REF = 3
PW_SCHEMA_ERROR_UNRESOLVED_REF = 4
PW_SCHEMA_ERROR_UNSUPPORTED_PATTERN = 5
PW_SCHEMA_ERROR_BAD_PATTERN = 6
PW_SCHEMA_ERROR_PATTERN_TOO_LARGE = 7
PW_SCHEMA_ERROR_TOO_DEEP = 8
PW_SCHEMA_ERROR_AMBIGUOUS_REF = 9
PW_SCHEMA_ERROR_REPEATED_NAME = 10
PW_SCHEMA_ERROR_TOO_COSTLY = 11

# enum pw_provider
PW_PROVIDER_OPENAI_CHAT = 1
PW_PROVIDER_OPENAI_RESPONSES = 2
PW_PROVIDER_ANTHROPIC = 3
PW_PROVIDER_GEMINI = 4
PW_PROVIDER_OLLAMA = 5

pw_result = c_uint32
pw_frame_kind = c_uint32
pw_provider = c_uint32

# ------------------------------------------------------------ structs


class pw_str(Structure):
    _fields_ = [("ptr", POINTER(c_uint8)), ("len", c_size_t)]


class pw_adapter_call_options(Structure):
    _fields_ = [
        ("name", pw_str),
        ("id", pw_str),
        ("args", pw_str),
        ("timeout_ms", c_uint32),
        ("max_total_timeout_ms", c_uint32),
        ("has_id", c_uint8),
        ("max_depth", c_uint8),
    ]


class pw_outcome(Structure):
    _fields_ = [("is_error", c_uint8), ("text", pw_str)]


class pw_tool_call(Structure):
    _fields_ = [
        ("id", POINTER(c_uint8)),
        ("id_len", c_size_t),
        ("name", POINTER(c_uint8)),
        ("name_len", c_size_t),
        ("args", POINTER(c_uint8)),
        ("args_len", c_size_t),
        ("flags", c_uint32),
    ]


class pw_wrapper_config(Structure):
    _fields_ = [
        ("tool_timeout_ms", c_uint32),
        ("max_total_timeout_ms", c_uint32),
        ("max_rounds", c_uint32),
        ("mirror_continue", c_uint8),
        ("full_validation", c_uint8),
        ("max_depth", c_uint8),
        ("name_cap", c_size_t),
        ("id_cap", c_size_t),
        ("args_cap", c_size_t),
        ("result_cap", c_size_t),
        ("message_cap", c_size_t),
        ("trace_entries", c_size_t),
        ("trace_bytes", c_size_t),
        ("held_bytes", c_size_t),
        ("hook_log_bytes", c_size_t),
    ]


class pw_writer(Structure):
    """Opaque."""


class pw_wrapper(Structure):
    """Opaque."""


class pw_adapter_call(Structure):
    """Opaque."""


class pw_line_splitter(Structure):
    """Opaque."""


pw_sync_fn = CFUNCTYPE(c_uint32, c_void_p, pw_str, POINTER(pw_writer))


class pw_tool(Structure):
    _fields_ = [
        ("name", pw_str),
        ("kind", c_uint32),
        ("timeout_ms", c_uint32),
        ("call", pw_sync_fn),
        ("userdata", c_void_p),
        ("schema", pw_str),
        ("schema_index", POINTER(c_uint32)),
        ("schema_index_words", c_size_t),
    ]


class pw_schema_error(Structure):
    _fields_ = [("kind", c_uint32), ("at", c_size_t)]


class pw_call_info(Structure):
    _fields_ = [
        ("index", c_uint32),
        ("has_name", c_uint8),
        ("has_id", c_uint8),
        ("seq", c_uint64),
        ("name", pw_str),
        ("id", pw_str),
        ("args", pw_str),
    ]


on_tool_call_fn = CFUNCTYPE(None, c_void_p, POINTER(pw_call_info))
on_tool_result_fn = CFUNCTYPE(None, c_void_p, POINTER(pw_call_info), POINTER(pw_outcome))


class pw_hooks(Structure):
    _fields_ = [
        ("userdata", c_void_p),
        ("on_tool_call", on_tool_call_fn),
        ("on_tool_result", on_tool_result_fn),
    ]


class pw_call_handle(Structure):
    _fields_ = [
        ("index", c_uint32),
        ("slot", c_uint16),
        ("reserved", c_uint16),
        ("owner", c_size_t),
    ]


class pw_disposition(Structure):
    _fields_ = [
        ("kind", c_uint32),
        ("index", c_uint32),
        ("has_handle", c_uint8),
        ("handle", pw_call_handle),
    ]


class pw_transmit(Structure):
    _fields_ = [("route", c_uint32), ("handle", pw_call_handle), ("len", c_size_t)]


class pw_output(Structure):
    _fields_ = [
        ("kind", c_uint32),
        ("cut", c_uint8),
        ("frame", pw_transmit),
        ("call", pw_call_info),
        ("outcome", pw_outcome),
    ]


class pw_wrapper_stats(Structure):
    _fields_ = [
        ("rounds", c_uint32),
        ("messages_truncated", c_uint32),
        ("last_error_truncated", c_uint32),
        ("hook_events_cut", c_uint32),
        ("hook_events_dropped", c_uint32),
    ]


class pw_event(Structure):
    _fields_ = [
        ("handle", pw_call_handle),
        ("kind", c_uint32),
        ("has_id", c_uint8),
        ("tool", c_size_t),
        ("name", pw_str),
        ("id", pw_str),
        ("args", pw_str),
    ]


class pw_trace_entry(Structure):
    _fields_ = [
        ("has_name", c_uint8),
        ("truncated", c_uint8),
        ("name", pw_str),
        ("args", pw_str),
        ("outcome", pw_outcome),
    ]


class pw_decoder_config(Structure):
    _fields_ = [
        ("event_cap", c_size_t),
        ("args_cap", c_size_t),
        ("name_cap", c_size_t),
        ("id_cap", c_size_t),
        ("max_depth", c_uint8),
    ]


class pw_decoder_stats(Structure):
    _fields_ = [
        ("not_json", c_uint32),
        ("unknown_event", c_uint32),
        ("bad_shape", c_uint32),
        ("overlong", c_uint32),
        ("after_end", c_uint32),
        ("cut", c_uint32),
        ("calls_started", c_uint64),
        ("calls_written", c_uint64),
    ]


class pw_decoder(Structure):
    """Opaque."""


# the MCP client (pw_mcp_*)


class pw_mcp(Structure):
    """Opaque."""


class pw_mcp_config(Structure):
    _fields_ = [
        ("line_cap", c_size_t),
        ("outbox_cap", c_size_t),
        ("name_cap", c_size_t),
        ("cursor_cap", c_size_t),
        ("max_depth", c_uint8),
        ("revision", c_uint32),
        ("start_timeout_ms", c_uint32),
        ("header_table_cap", c_size_t),
    ]


class pw_mcp_event(Structure):
    _fields_ = [
        ("kind", c_uint32),
        ("has_params", c_uint8),
        ("method_cut", c_uint8),
        ("tools", c_uint32),
        ("skip", c_uint32),
        ("start_error", c_uint32),
        ("len", c_size_t),
        ("cap", c_size_t),
        ("version", pw_str),
        ("name", pw_str),
        ("raw", pw_str),
        ("method", pw_str),
        ("params", pw_str),
    ]


class pw_mcp_output_schema(Structure):
    _fields_ = [("tool", pw_str), ("schema", pw_str)]


class pw_mcp_stats(Structure):
    _fields_ = [
        ("lines", c_uint64),
        ("not_json", c_uint32),
        ("not_jsonrpc", c_uint32),
        ("too_long", c_uint32),
        ("too_deep", c_uint32),
        ("unknown_id", c_uint32),
        ("late", c_uint32),
        ("unknown_progress", c_uint32),
        ("pings", c_uint32),
        ("refused_requests", c_uint32),
        ("notifications", c_uint32),
        ("calls", c_uint64),
        ("answered", c_uint64),
        ("failed", c_uint64),
    ]


class pw_mcp_handled(Structure):
    _fields_ = [
        ("kind", c_uint32),
        ("notified", c_uint8),
        ("request", c_uint64),
        ("failure", c_uint32),
        ("limit", c_size_t),
        ("len", c_size_t),
    ]


class pw_mcp_frame(Structure):
    _fields_ = [("index", c_uint32), ("slot", c_uint16), ("reserved", c_uint16), ("len", c_size_t)]


class pw_mcp_post(Structure):
    _fields_ = [
        ("kind", c_uint32),
        ("stream", c_uint16),
        ("reserved", c_uint16),
        ("body_len", c_size_t),
        ("headers_len", c_size_t),
    ]


# the conversation and requests (pw_conversation_*, pw_request_*)


class pw_conversation(Structure):
    """Opaque."""


class pw_request(Structure):
    """Opaque."""


class pw_conversation_stats(Structure):
    _fields_ = [("used", c_size_t), ("capacity", c_size_t), ("entries", c_size_t), ("evicted", c_uint32)]


class pw_request_options(Structure):
    _fields_ = [
        ("model", pw_str),
        ("max_tokens", c_uint32),
        ("tool_choice", c_uint32),
        ("tool", pw_str),
        ("extra", pw_str),
    ]


class pw_declaration(Structure):
    _fields_ = [
        ("mcp_entry", pw_str),
        ("name", pw_str),
        ("description", pw_str),
        ("schema", pw_str),
        ("strict", c_uint8),
    ]


# ------------------------------------------------------------ the library


#: The file name of the shared library on this platform, as `cargo build` names it and as the
#: wheel carries it beside this module.
LIB_NAME = {
    "darwin": "libpolyweave_tool_adapter_ffi.dylib",
    "win32": "polyweave_tool_adapter_ffi.dll",
}.get(sys.platform, "libpolyweave_tool_adapter_ffi.so")

#: Where an installed package keeps its library: beside this module.
PACKAGE_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), LIB_NAME)


def _library_path() -> str:
    env = os.environ.get("PW_LIB")
    if env:
        # An override that names nothing is a mistake to report, not a reason to fall back
        # silently to another copy of the library.
        if not os.path.isfile(env):
            raise ImportError("PW_LIB=%r: no such file (unset PW_LIB to use %s)" % (env, PACKAGE_LIB))
        return env
    if os.path.isfile(PACKAGE_LIB):
        return PACKAGE_LIB
    raise ImportError(
        "polyweave_tool_adapter: the shared library %s is not in the package directory %s, and "
        "PW_LIB is not set. Install the package as a wheel (`pip install ./examples/python` "
        "from a checkout builds one with cargo), or build the library with `cargo build "
        "--release -p polyweave-tool-adapter-ffi` and set PW_LIB to "
        "target/release/%s." % (LIB_NAME, os.path.dirname(PACKAGE_LIB), LIB_NAME)
    )


#: The library this process loaded: `$PW_LIB` or `PACKAGE_LIB`.
LIB_PATH = _library_path()
lib = ctypes.CDLL(LIB_PATH)

_P = POINTER
# Byte inputs are declared `c_void_p` (the header's `const uint8_t *`) so that `bytes` pass as is.
_SIGNATURES = {
    "pw_version": (c_char_p, []),
    "pw_result_text": (pw_result, [c_uint32, c_void_p, c_size_t, _P(c_size_t)]),
    "pw_result_is_malformed": (c_uint8, [c_uint32]),
    "pw_result_is_not_waiting": (c_uint8, [c_uint32]),
    "pw_adapter_call_options_default": (pw_result, [_P(pw_adapter_call_options)]),
    "pw_adapter_call_align": (c_size_t, []),
    "pw_adapter_call_size": (pw_result, [c_size_t, _P(c_size_t)]),
    "pw_adapter_call_init": (
        pw_result,
        [c_void_p, c_size_t, c_size_t, c_uint64, _P(pw_adapter_call_options), _P(_P(pw_adapter_call))],
    ),
    "pw_adapter_call_handle_frame": (pw_result, [_P(pw_adapter_call), c_uint64, c_void_p, c_size_t]),
    "pw_adapter_call_handle_closed": (pw_result, [_P(pw_adapter_call), c_uint64]),
    "pw_adapter_call_handle_timeout": (pw_result, [_P(pw_adapter_call), c_uint64]),
    "pw_adapter_call_poll_transmit": (pw_result, [_P(pw_adapter_call), c_void_p, c_size_t, _P(c_size_t)]),
    "pw_adapter_call_poll_timeout": (c_uint64, [_P(pw_adapter_call)]),
    "pw_adapter_call_outcome": (pw_result, [_P(pw_adapter_call), _P(pw_outcome)]),
    "pw_json_validate": (pw_result, [c_void_p, c_size_t, c_uint8, _P(c_size_t)]),
    "pw_frame_peek_kind": (
        pw_result,
        [c_void_p, c_size_t, _P(pw_frame_kind), _P(_P(c_uint8)), _P(c_size_t)],
    ),
    "pw_frame_validate": (pw_result, [c_void_p, c_size_t, c_uint8, _P(pw_frame_kind)]),
    "pw_tool_call_fields": (pw_result, [c_void_p, c_size_t, c_uint8, _P(pw_tool_call)]),
    "pw_json_string_decode": (pw_result, [c_void_p, c_size_t, c_void_p, c_size_t, _P(c_size_t)]),
    "pw_schema_check": (pw_result, [c_void_p, c_size_t, _P(pw_schema_error)]),
    "pw_schema_index_words": (pw_result, [c_void_p, c_size_t, _P(c_size_t)]),
    "pw_schema_validate": (
        pw_result,
        [c_void_p, c_size_t, c_void_p, c_size_t, c_void_p, c_size_t, _P(c_size_t)],
    ),
    "pw_line_splitter_size": (c_size_t, []),
    "pw_line_splitter_align": (c_size_t, []),
    "pw_line_splitter_init": (pw_result, [c_void_p, c_size_t, c_void_p, c_size_t, _P(_P(pw_line_splitter))]),
    "pw_line_splitter_feed": (pw_result, [_P(pw_line_splitter), c_void_p, c_size_t, _P(c_size_t)]),
    "pw_line_splitter_next_line": (pw_result, [_P(pw_line_splitter), _P(_P(c_uint8)), _P(c_size_t)]),
    "pw_line_splitter_finish": (pw_result, [_P(pw_line_splitter), _P(_P(c_uint8)), _P(c_size_t)]),
    "pw_writer_write": (pw_result, [_P(pw_writer), c_void_p, c_size_t]),
    "pw_wrapper_align": (c_size_t, []),
    "pw_wrapper_config_default": (pw_result, [_P(pw_wrapper_config)]),
    "pw_wrapper_size": (pw_result, [_P(pw_wrapper_config), c_size_t, c_size_t, _P(c_size_t)]),
    "pw_wrapper_init": (
        pw_result,
        [
            c_void_p,
            c_size_t,
            _P(pw_wrapper_config),
            c_size_t,
            _P(pw_tool),
            c_size_t,
            _P(pw_hooks),
            _P(_P(pw_wrapper)),
        ],
    ),
    "pw_wrapper_handle_response": (
        pw_result,
        [_P(pw_wrapper), c_uint64, c_void_p, c_size_t, _P(pw_disposition)],
    ),
    "pw_wrapper_handle_request": (pw_result, [_P(pw_wrapper), c_uint64, c_void_p, c_size_t]),
    "pw_wrapper_complete": (
        pw_result,
        [_P(pw_wrapper), c_uint64, pw_call_handle, _P(pw_outcome), _P(c_uint32)],
    ),
    "pw_wrapper_handle_adapter_frame": (
        pw_result,
        [_P(pw_wrapper), c_uint64, pw_call_handle, c_void_p, c_size_t],
    ),
    "pw_wrapper_handle_adapter_closed": (pw_result, [_P(pw_wrapper), c_uint64, pw_call_handle]),
    "pw_wrapper_handle_timeout": (pw_result, [_P(pw_wrapper), c_uint64]),
    "pw_wrapper_cancel": (
        pw_result,
        [_P(pw_wrapper), c_uint64, c_void_p, c_size_t, _P(c_size_t)],
    ),
    "pw_wrapper_abort": (pw_result, [_P(pw_wrapper)]),
    "pw_wrapper_clear_trace": (pw_result, [_P(pw_wrapper)]),
    "pw_wrapper_poll_transmit": (pw_result, [_P(pw_wrapper), c_void_p, c_size_t, _P(pw_transmit)]),
    "pw_wrapper_poll_output": (pw_result, [_P(pw_wrapper), c_void_p, c_size_t, _P(pw_output)]),
    "pw_wrapper_get_stats": (pw_result, [_P(pw_wrapper), _P(pw_wrapper_stats)]),
    "pw_wrapper_max_frame_len": (pw_result, [_P(pw_wrapper_config), _P(c_size_t)]),
    "pw_wrapper_poll_event": (pw_result, [_P(pw_wrapper), _P(pw_event)]),
    "pw_wrapper_poll_timeout": (c_uint64, [_P(pw_wrapper)]),
    "pw_wrapper_pending": (c_size_t, [_P(pw_wrapper)]),
    "pw_wrapper_trace_entry": (pw_result, [_P(pw_wrapper), c_size_t, _P(pw_trace_entry)]),
    # stream decoders and item encoders
    "pw_decoder_config_default": (pw_result, [_P(pw_decoder_config)]),
    "pw_decoder_align": (c_size_t, []),
    "pw_decoder_size": (pw_result, [_P(pw_decoder_config), c_size_t, _P(c_size_t)]),
    "pw_decoder_max_frame_len": (pw_result, [_P(pw_decoder_config), _P(c_size_t)]),
    "pw_decoder_init": (
        pw_result,
        [c_void_p, c_size_t, pw_provider, _P(pw_decoder_config), c_size_t, _P(_P(pw_decoder))],
    ),
    "pw_decoder_feed": (pw_result, [_P(pw_decoder), c_void_p, c_size_t, _P(c_size_t)]),
    "pw_decoder_finish": (pw_result, [_P(pw_decoder)]),
    "pw_decoder_poll_frame": (pw_result, [_P(pw_decoder), c_void_p, c_size_t, _P(c_size_t)]),
    "pw_decoder_get_stats": (pw_result, [_P(pw_decoder), _P(pw_decoder_stats)]),
    "pw_provider_from_name": (pw_result, [c_void_p, c_size_t, _P(pw_provider)]),
    "pw_encode_item": (pw_result, [pw_provider, c_void_p, c_size_t, c_void_p, c_size_t, _P(c_size_t)]),
    # the MCP client
    "pw_mcp_config_default": (pw_result, [_P(pw_mcp_config)]),
    "pw_mcp_config_fit": (pw_result, [_P(pw_mcp_config), _P(pw_wrapper_config)]),
    "pw_mcp_align": (c_size_t, []),
    "pw_mcp_size": (pw_result, [_P(pw_mcp_config), c_size_t, _P(c_size_t)]),
    "pw_mcp_max_frame_len": (pw_result, [_P(pw_mcp_config), _P(c_size_t)]),
    "pw_mcp_max_line_len": (pw_result, [_P(pw_mcp_config), _P(c_size_t)]),
    "pw_mcp_init": (
        pw_result,
        [c_void_p, c_size_t, _P(pw_mcp_config), c_size_t, c_void_p, c_size_t, c_void_p, c_size_t, _P(_P(pw_mcp))],
    ),
    "pw_mcp_start": (pw_result, [_P(pw_mcp), c_uint64]),
    "pw_mcp_poll_timeout": (c_uint64, [_P(pw_mcp)]),
    "pw_mcp_handle_timeout": (pw_result, [_P(pw_mcp), c_uint64]),
    "pw_mcp_protocol_version": (ctypes.c_char_p, [_P(pw_mcp)]),
    "pw_mcp_feed": (pw_result, [_P(pw_mcp), c_void_p, c_size_t, _P(c_size_t)]),
    "pw_mcp_handle_closed": (pw_result, [_P(pw_mcp)]),
    "pw_mcp_state": (pw_result, [_P(pw_mcp), _P(c_uint32)]),
    "pw_mcp_in_flight": (c_size_t, [_P(pw_mcp)]),
    "pw_mcp_queued": (c_size_t, [_P(pw_mcp)]),
    "pw_mcp_output_schemas_size": (pw_result, [c_size_t, _P(c_size_t)]),
    "pw_mcp_set_output_schemas": (pw_result, [_P(pw_mcp), c_void_p, c_size_t, _P(pw_mcp_output_schema), c_size_t]),
    "pw_mcp_poll_event": (pw_result, [_P(pw_mcp), _P(pw_mcp_event)]),
    "pw_mcp_get_stats": (pw_result, [_P(pw_mcp), _P(pw_mcp_stats)]),
    "pw_mcp_handle_frame": (pw_result, [_P(pw_mcp), c_uint16, c_uint32, c_void_p, c_size_t, _P(pw_mcp_handled)]),
    "pw_mcp_poll_transmit": (pw_result, [_P(pw_mcp), c_void_p, c_size_t, _P(c_size_t)]),
    "pw_mcp_poll_frame": (pw_result, [_P(pw_mcp), c_void_p, c_size_t, _P(pw_mcp_frame)]),
    # the MCP client over Streamable HTTP
    "pw_mcp_http_size": (pw_result, [_P(pw_mcp_config), c_size_t, c_size_t, _P(c_size_t)]),
    "pw_mcp_http_init": (
        pw_result,
        [
            c_void_p,
            c_size_t,
            _P(pw_mcp_config),
            c_size_t,
            c_size_t,
            c_void_p,
            c_size_t,
            c_void_p,
            c_size_t,
            _P(_P(pw_mcp)),
        ],
    ),
    "pw_mcp_is_http": (c_uint8, [_P(pw_mcp)]),
    "pw_mcp_max_headers_len": (pw_result, [_P(pw_mcp_config), _P(c_size_t)]),
    "pw_mcp_poll_request": (pw_result, [_P(pw_mcp), c_void_p, c_size_t, c_void_p, c_size_t, _P(pw_mcp_post)]),
    "pw_mcp_handle_response": (pw_result, [_P(pw_mcp), c_uint16, c_uint16, c_void_p, c_size_t, c_void_p, c_size_t]),
    "pw_mcp_feed_response": (pw_result, [_P(pw_mcp), c_uint16, c_void_p, c_size_t, _P(c_size_t)]),
    "pw_mcp_handle_response_end": (pw_result, [_P(pw_mcp), c_uint16]),
    # the conversation and requests
    "pw_conversation_size": (pw_result, [c_size_t, _P(c_size_t)]),
    "pw_conversation_align": (c_size_t, []),
    "pw_conversation_init": (pw_result, [c_void_p, c_size_t, _P(_P(pw_conversation))]),
    "pw_conversation_set_system": (pw_result, [_P(pw_conversation), c_void_p, c_size_t]),
    "pw_conversation_push_user": (pw_result, [_P(pw_conversation), c_void_p, c_size_t]),
    "pw_conversation_pin_first_user": (pw_result, [_P(pw_conversation), c_uint8]),
    "pw_conversation_begin_response": (pw_result, [_P(pw_conversation), pw_provider]),
    "pw_conversation_push_frame": (pw_result, [_P(pw_conversation), c_void_p, c_size_t, _P(c_uint32)]),
    "pw_conversation_end_response": (pw_result, [_P(pw_conversation)]),
    "pw_conversation_clear": (pw_result, [_P(pw_conversation)]),
    "pw_conversation_get_stats": (pw_result, [_P(pw_conversation), _P(pw_conversation_stats)]),
    "pw_request_size": (pw_result, [c_size_t, _P(c_size_t)]),
    "pw_request_align": (c_size_t, []),
    "pw_request_options_default": (pw_result, [_P(pw_request_options)]),
    "pw_request_init": (
        pw_result,
        [
            c_void_p,
            c_size_t,
            _P(pw_conversation),
            pw_provider,
            _P(pw_request_options),
            _P(pw_declaration),
            c_size_t,
            _P(_P(pw_request)),
            _P(c_size_t),
        ],
    ),
    "pw_request_len": (pw_result, [_P(pw_request), _P(c_size_t)]),
    "pw_request_write": (pw_result, [_P(pw_request), c_void_p, c_size_t, _P(c_size_t)]),
    "pw_request_gemini_path": (pw_result, [c_void_p, c_size_t, c_void_p, c_size_t, _P(c_size_t)]),
}

for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


def span_bytes(s: pw_str) -> bytes:
    """The bytes of a `pw_str` (copied)."""
    if not s.len:
        return b""
    return ctypes.string_at(s.ptr, s.len)


def ptr_bytes(ptr: Any, length: int) -> bytes:
    """`length` bytes at a `const uint8_t *` (copied)."""
    if not length:
        return b""
    return ctypes.string_at(ptr, length)
