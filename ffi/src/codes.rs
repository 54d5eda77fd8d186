//! `pw_result`: the status every fallible function returns, and its text.

use polyweave_tool_adapter::frame::FrameError;
use polyweave_tool_adapter::json::{JsonError, JsonErrorKind};
use polyweave_tool_adapter::mcp::http::McpStreamError;
use polyweave_tool_adapter::mcp::McpError;
use polyweave_tool_adapter::request::{ConversationError, DeclarationError, RequestError};
use polyweave_tool_adapter::{CallError, Error, StorageError};

/// The status of a call: `PW_OK` (0) or why it did not succeed.
///
/// The numbers are stable ABI and never reused. They come in groups so that
/// later API slices can add codes without renumbering: 1-99 arguments and
/// memory and configuration, 100-199 JSON and frames, 200-299 the line
/// splitter, 300-399 the wrapper and its calls, 400-499 the stream decoders and item
/// encoders, 500-599 the MCP client, 600-699 the conversation and requests, 700-799 JSON
/// Schema validation, 900 and up internal failures.
/// Use `pw_result_text` for a message.
///
/// Retired numbers (never returned, never reused; `pw_result_text` calls them unknown):
/// 9 and 502 (a name too long: `PW_NAME_TOO_LONG`), 200 (no line yet: `PW_NOTHING`),
/// 304 and 308 (never returned).
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum pw_result {
    /// Success.
    PW_OK = 0,
    /// A pointer argument was NULL; nothing was written.
    PW_NULL_POINTER = 1,
    /// An output buffer is too small; the needed size was reported and nothing else written.
    PW_BUFFER_TOO_SMALL = 2,
    /// A memory block handed in for an object is smaller than its `_size()` query says.
    PW_STORAGE_TOO_SMALL = 3,
    /// A memory block or output pointer is not aligned as its type (or `_align()` query) needs.
    PW_STORAGE_MISALIGNED = 4,
    /// Two memory regions handed in overlap where they must not (for example input and output).
    PW_STORAGE_OVERLAP = 5,
    /// A configuration value is out of range (see `pw_wrapper_config`).
    PW_BAD_CONFIG = 6,
    /// A tool registration is invalid: unknown kind, a sync tool without a function, or a name that is not UTF-8.
    PW_BAD_TOOL = 7,
    /// More slots or tools than the library can number (65535 each).
    PW_TOO_MANY = 8,
    // 9: retired (was PW_TOOL_NAME_TOO_LONG; a registered tool's name too long now gives
    // PW_NAME_TOO_LONG).
    /// An argument is out of range: a flag that is neither 0 nor 1, an unknown kind.
    PW_BAD_ARGUMENT = 10,
    /// A text handed in (a user or system text, a model or tool name, a description) is not
    /// UTF-8; nothing changed.
    PW_TEXT_NOT_UTF8 = 11,
    /// Malformed frame: the bytes are not a JSON object (white space around it is allowed).
    PW_FRAME_NOT_OBJECT = 100,
    /// Malformed frame: the object has no `type` member.
    PW_FRAME_MISSING_TYPE = 101,
    /// Malformed frame: the `type` member is not a JSON string.
    PW_FRAME_TYPE_NOT_STRING = 102,
    /// Invalid JSON (grammar, number, escape, control character, trailing data, not a string token...).
    PW_INVALID_JSON = 103,
    /// JSON nested deeper than the depth limit (the outermost value is level 1).
    PW_JSON_TOO_DEEP = 104,
    /// A JSON string holds bytes that are not UTF-8.
    PW_INVALID_UTF8 = 105,
    /// The frame is valid but is not of the kind the function needs (for example not a `TOOL_CALL`).
    PW_WRONG_FRAME_KIND = 106,
    /// Malformed frame: a validated frame has more than one `type` member.
    PW_FRAME_DUPLICATE_TYPE = 107,
    // 200: retired (was PW_NO_LINE; a line splitter with no complete line now gives
    // PW_NOTHING).
    /// A line longer than the line splitter's line buffer was dropped whole; its length was
    /// reported.
    PW_LINE_TOO_LONG = 201,
    /// Nothing to hand out now: no complete line yet, no frame queued, no event, no such
    /// trace entry.
    PW_NOTHING = 300,
    /// The time given is earlier than one the wrapper already saw; nothing changed.
    PW_CLOCK_WENT_BACKWARDS = 301,
    /// A name is longer than its capacity (`name_cap`): a registered tool's (nothing
    /// placed), a `TOOL_CALL`'s at the wrapper (the host must answer that call itself) or at
    /// the MCP client (`pw_mcp_config_fit` avoids it; nothing changed).
    PW_NAME_TOO_LONG = 302,
    /// A `TOOL_CALL`'s decoded id is longer than `id_cap`; the host must answer that call itself.
    PW_ID_TOO_LONG = 303,
    // 304: retired (was PW_MESSAGE_TOO_LONG, never returned: a message longer than
    // `message_cap` is cut, and the cut is counted).
    /// A result given to `pw_wrapper_complete` is not one JSON value; nothing changed.
    PW_INVALID_RESULT = 305,
    /// An `END` to hold does not fit the held-`END` buffer; nothing changed.
    PW_HELD_FULL = 306,
    /// The output queue lacks room: drain `pw_wrapper_poll_transmit` and try again; nothing changed.
    PW_QUEUE_FULL = 307,
    // 308: retired (was PW_OUTPUT_TOO_LARGE, never returned: a drained queue takes any
    // input).
    /// No call with this handle was ever started by this wrapper.
    PW_CALL_UNKNOWN = 309,
    /// The call already completed.
    PW_CALL_COMPLETED = 310,
    /// The call timed out (or is past its deadline).
    PW_CALL_TIMED_OUT = 311,
    /// The call was cancelled.
    PW_CALL_CANCELLED = 312,
    /// The call ended long ago and its slot holds a newer call.
    PW_CALL_STALE = 313,
    /// The call is of another kind (a completion for an adapter call, adapter input for a deferred one).
    PW_CALL_WRONG_KIND = 314,
    /// The handle was issued by another wrapper.
    PW_CALL_FOREIGN = 315,
    /// A provider number (or name) this build of the library does not have.
    PW_UNKNOWN_PROVIDER = 400,
    /// An item encoder was handed a frame that is neither a `TOOL_CALL` nor a `TOOL_RESULT`.
    PW_ITEM_NOT_CALL_OR_RESULT = 401,
    /// An item encoder was handed a frame with no string `name`.
    PW_ITEM_NO_NAME = 402,
    /// The provider matches results to calls by id, and the frame has none.
    PW_ITEM_NO_ID = 403,
    /// An item encoder was handed a `TOOL_RESULT` with neither `result` nor `error`.
    PW_ITEM_NO_OUTCOME = 404,
    /// `pw_mcp_handle_frame` was handed a valid frame that is neither a `TOOL_CALL` nor a
    /// `CANCEL`; nothing changed.
    PW_MCP_NOT_ADAPTER_FRAME = 500,
    /// `pw_mcp_handle_frame` was handed a `TOOL_CALL` without a string `content.name`;
    /// nothing changed.
    PW_MCP_NO_NAME = 501,
    // 502: retired (was PW_MCP_NAME_TOO_LONG; now PW_NAME_TOO_LONG).
    /// A `TOOL_CALL` for a call (slot and index) already in flight at the MCP client;
    /// nothing changed.
    PW_MCP_DUPLICATE_CALL = 503,
    /// A `CANCEL` for a call not in flight at the MCP client; nothing changed.
    PW_MCP_UNKNOWN_CALL = 504,
    /// The MCP client's outbox lacks room for the line now: write what
    /// `pw_mcp_poll_transmit` gives, then hand the frame in again; nothing changed.
    PW_MCP_OUTBOX_FULL = 505,
    /// The `ERROR` of a call the MCP client failed at once is not polled yet: call
    /// `pw_mcp_poll_frame` first, then hand the frame in again; nothing changed.
    PW_MCP_FRAME_PENDING = 506,
    /// `pw_mcp_start` was called on a client already started; nothing changed.
    PW_MCP_ALREADY_STARTED = 507,
    /// The MCP client's name or version (`clientInfo`) is longer than
    /// `PW_MCP_CLIENT_TEXT_CAP` bytes.
    PW_MCP_CLIENT_INFO_TOO_LONG = 508,
    /// An HTTP entry (`pw_mcp_poll_request`, `pw_mcp_handle_response`, ...) on a client of
    /// `pw_mcp_init`, which speaks over lines; nothing changed.
    PW_MCP_NOT_HTTP = 509,
    /// No POST of this stream awaits its response (never handed out, ended, or closed);
    /// nothing changed.
    PW_MCP_UNKNOWN_STREAM = 510,
    /// The stream's response head (`pw_mcp_handle_response`) was given already; nothing
    /// changed.
    PW_MCP_HEAD_TWICE = 511,
    /// Body bytes before the stream's response head (`pw_mcp_handle_response`); nothing
    /// changed.
    PW_MCP_NO_HEAD = 512,
    /// What the last message owes is not polled out: drain `pw_mcp_poll_event`,
    /// `pw_mcp_poll_frame` and `pw_mcp_poll_request`, then call again; nothing changed.
    PW_MCP_POLL_FIRST = 513,
    /// The entry does not fit the conversation's memory even with every entry evicted that may
    /// be; nothing changed.
    PW_CONVERSATION_NO_ROOM = 600,
    /// A `TEXT` or `REASONING` frame whose content is not a string, or a `STATE` frame whose
    /// content is not one of the shapes the decoders write; nothing changed.
    PW_CONVERSATION_BAD_CONTENT = 601,
    /// A frame of the model's response came with no response begun
    /// (`pw_conversation_begin_response`); nothing changed.
    PW_CONVERSATION_NO_RESPONSE = 602,
    /// A `TOOL_CALL` or `TOOL_RESULT` without a string `name`; nothing changed.
    PW_CONVERSATION_NO_NAME = 603,
    /// A `TOOL_RESULT` for a call the conversation does not hold; nothing changed.
    PW_CONVERSATION_UNKNOWN_CALL = 604,
    /// A second `TOOL_RESULT` for a call; nothing changed.
    PW_CONVERSATION_ALREADY_ANSWERED = 605,
    /// A `TOOL_RESULT` with neither `result` nor `error`; nothing changed.
    PW_CONVERSATION_NO_OUTCOME = 606,
    /// An empty system or user text (no provider takes an empty message); nothing changed.
    PW_CONVERSATION_EMPTY_TEXT = 607,
    /// A declaration's name is not one the provider takes (SPEC §10.1).
    PW_DECLARATION_BAD_NAME = 610,
    /// A declaration asks for strict arguments and its schema does not meet the strict rules.
    PW_DECLARATION_NOT_STRICT = 611,
    /// A declaration's schema is not a JSON object.
    PW_DECLARATION_BAD_SCHEMA = 612,
    /// An MCP `tools/list` entry that is not an object with a string `name`.
    PW_DECLARATION_BAD_ENTRY = 613,
    /// Two declarations give the model the same name.
    PW_DECLARATION_DUPLICATE_NAME = 614,
    /// A tool choice the provider has not (Ollama takes only `PW_TOOL_CHOICE_AUTO`).
    PW_REQUEST_TOOL_CHOICE_UNSUPPORTED = 620,
    /// The tool choice names no declared tool.
    PW_REQUEST_UNKNOWN_TOOL = 621,
    /// The extra members are not a JSON object.
    PW_REQUEST_BAD_EXTRA = 622,
    /// An extra member names a member the library writes.
    PW_REQUEST_EXTRA_CLASH = 623,
    /// The conversation was changed (or given to a call that may change it) after the request
    /// was made: make the request again.
    PW_REQUEST_STALE = 624,
    /// A schema the validator refuses (SPEC §11): not JSON, a keyword of the wrong shape, a
    /// `$ref` to another document, a `pattern` it does not read; `pw_schema_check` says which
    /// and where. Nothing changed.
    PW_BAD_SCHEMA = 700,
    /// The value does not satisfy the schema (`pw_schema_validate` wrote why).
    PW_SCHEMA_INVALID = 701,
    /// A limit of the validator (depth, subschemas tried, pattern steps) stopped the check:
    /// the value is neither shown valid nor invalid (`pw_schema_validate` wrote which).
    PW_SCHEMA_LIMIT = 702,
    /// A Rust panic was caught at the C boundary (a bug: please report it); outputs are unspecified.
    PW_PANIC = 900,
}

/// Every code, in numeric order.
const ALL_RESULTS: [pw_result; 74] = [
    pw_result::PW_OK,
    pw_result::PW_NULL_POINTER,
    pw_result::PW_BUFFER_TOO_SMALL,
    pw_result::PW_STORAGE_TOO_SMALL,
    pw_result::PW_STORAGE_MISALIGNED,
    pw_result::PW_STORAGE_OVERLAP,
    pw_result::PW_BAD_CONFIG,
    pw_result::PW_BAD_TOOL,
    pw_result::PW_TOO_MANY,
    pw_result::PW_BAD_ARGUMENT,
    pw_result::PW_TEXT_NOT_UTF8,
    pw_result::PW_FRAME_NOT_OBJECT,
    pw_result::PW_FRAME_MISSING_TYPE,
    pw_result::PW_FRAME_TYPE_NOT_STRING,
    pw_result::PW_INVALID_JSON,
    pw_result::PW_JSON_TOO_DEEP,
    pw_result::PW_INVALID_UTF8,
    pw_result::PW_WRONG_FRAME_KIND,
    pw_result::PW_FRAME_DUPLICATE_TYPE,
    pw_result::PW_LINE_TOO_LONG,
    pw_result::PW_NOTHING,
    pw_result::PW_CLOCK_WENT_BACKWARDS,
    pw_result::PW_NAME_TOO_LONG,
    pw_result::PW_ID_TOO_LONG,
    pw_result::PW_INVALID_RESULT,
    pw_result::PW_HELD_FULL,
    pw_result::PW_QUEUE_FULL,
    pw_result::PW_CALL_UNKNOWN,
    pw_result::PW_CALL_COMPLETED,
    pw_result::PW_CALL_TIMED_OUT,
    pw_result::PW_CALL_CANCELLED,
    pw_result::PW_CALL_STALE,
    pw_result::PW_CALL_WRONG_KIND,
    pw_result::PW_CALL_FOREIGN,
    pw_result::PW_UNKNOWN_PROVIDER,
    pw_result::PW_ITEM_NOT_CALL_OR_RESULT,
    pw_result::PW_ITEM_NO_NAME,
    pw_result::PW_ITEM_NO_ID,
    pw_result::PW_ITEM_NO_OUTCOME,
    pw_result::PW_MCP_NOT_ADAPTER_FRAME,
    pw_result::PW_MCP_NO_NAME,
    pw_result::PW_MCP_DUPLICATE_CALL,
    pw_result::PW_MCP_UNKNOWN_CALL,
    pw_result::PW_MCP_OUTBOX_FULL,
    pw_result::PW_MCP_FRAME_PENDING,
    pw_result::PW_MCP_ALREADY_STARTED,
    pw_result::PW_MCP_CLIENT_INFO_TOO_LONG,
    pw_result::PW_MCP_NOT_HTTP,
    pw_result::PW_MCP_UNKNOWN_STREAM,
    pw_result::PW_MCP_HEAD_TWICE,
    pw_result::PW_MCP_NO_HEAD,
    pw_result::PW_MCP_POLL_FIRST,
    pw_result::PW_CONVERSATION_NO_ROOM,
    pw_result::PW_CONVERSATION_BAD_CONTENT,
    pw_result::PW_CONVERSATION_NO_RESPONSE,
    pw_result::PW_CONVERSATION_NO_NAME,
    pw_result::PW_CONVERSATION_UNKNOWN_CALL,
    pw_result::PW_CONVERSATION_ALREADY_ANSWERED,
    pw_result::PW_CONVERSATION_NO_OUTCOME,
    pw_result::PW_CONVERSATION_EMPTY_TEXT,
    pw_result::PW_DECLARATION_BAD_NAME,
    pw_result::PW_DECLARATION_NOT_STRICT,
    pw_result::PW_DECLARATION_BAD_SCHEMA,
    pw_result::PW_DECLARATION_BAD_ENTRY,
    pw_result::PW_DECLARATION_DUPLICATE_NAME,
    pw_result::PW_REQUEST_TOOL_CHOICE_UNSUPPORTED,
    pw_result::PW_REQUEST_UNKNOWN_TOOL,
    pw_result::PW_REQUEST_BAD_EXTRA,
    pw_result::PW_REQUEST_EXTRA_CLASH,
    pw_result::PW_REQUEST_STALE,
    pw_result::PW_BAD_SCHEMA,
    pw_result::PW_SCHEMA_INVALID,
    pw_result::PW_SCHEMA_LIMIT,
    pw_result::PW_PANIC,
];

impl pw_result {
    /// The code for a number, if it is one.
    pub fn from_code(code: u32) -> Option<Self> {
        ALL_RESULTS.into_iter().find(|r| *r as u32 == code)
    }

    /// The fixed English message for this code (what `pw_result_text` writes).
    pub const fn message(self) -> &'static str {
        match self {
            pw_result::PW_OK => "ok",
            pw_result::PW_NULL_POINTER => "a pointer argument was NULL",
            pw_result::PW_BUFFER_TOO_SMALL => "output buffer too small",
            pw_result::PW_STORAGE_TOO_SMALL => "memory block too small",
            pw_result::PW_STORAGE_MISALIGNED => "memory block or pointer misaligned",
            pw_result::PW_STORAGE_OVERLAP => "memory regions overlap",
            pw_result::PW_BAD_CONFIG => "configuration out of range",
            pw_result::PW_BAD_TOOL => "invalid tool registration",
            pw_result::PW_TOO_MANY => "too many slots or tools",
            pw_result::PW_BAD_ARGUMENT => "argument out of range",
            pw_result::PW_TEXT_NOT_UTF8 => "a text handed in is not UTF-8",
            pw_result::PW_FRAME_NOT_OBJECT => "malformed frame: not a JSON object",
            pw_result::PW_FRAME_MISSING_TYPE => "malformed frame: no type member",
            pw_result::PW_FRAME_TYPE_NOT_STRING => "malformed frame: type is not a string",
            pw_result::PW_INVALID_JSON => "invalid JSON",
            pw_result::PW_JSON_TOO_DEEP => "JSON nested too deep",
            pw_result::PW_INVALID_UTF8 => "invalid UTF-8 in a JSON string",
            pw_result::PW_WRONG_FRAME_KIND => "frame is not of the kind required",
            pw_result::PW_FRAME_DUPLICATE_TYPE => "malformed frame: more than one type member",
            pw_result::PW_LINE_TOO_LONG => "line longer than the line buffer (dropped)",
            pw_result::PW_NOTHING => "nothing to hand out",
            pw_result::PW_CLOCK_WENT_BACKWARDS => "clock went backwards",
            pw_result::PW_NAME_TOO_LONG => "a name is longer than name_cap",
            pw_result::PW_ID_TOO_LONG => "call id longer than id_cap",
            pw_result::PW_INVALID_RESULT => "result is not JSON",
            pw_result::PW_HELD_FULL => "held END buffer full",
            pw_result::PW_QUEUE_FULL => "output queue full: drain it first",
            pw_result::PW_CALL_UNKNOWN => "unknown call",
            pw_result::PW_CALL_COMPLETED => "call already completed",
            pw_result::PW_CALL_TIMED_OUT => "call timed out",
            pw_result::PW_CALL_CANCELLED => "call was cancelled",
            pw_result::PW_CALL_STALE => "call ended and its slot was reused",
            pw_result::PW_CALL_WRONG_KIND => "call is of another kind",
            pw_result::PW_CALL_FOREIGN => "handle from another wrapper",
            pw_result::PW_UNKNOWN_PROVIDER => "provider not in this build",
            pw_result::PW_ITEM_NOT_CALL_OR_RESULT => {
                "frame is neither a TOOL_CALL nor a TOOL_RESULT"
            }
            pw_result::PW_ITEM_NO_NAME => "frame has no string name",
            pw_result::PW_ITEM_NO_ID => "the provider needs the call's id, and the frame has none",
            pw_result::PW_ITEM_NO_OUTCOME => "TOOL_RESULT with neither result nor error",
            pw_result::PW_MCP_NOT_ADAPTER_FRAME => {
                "MCP client: frame is neither TOOL_CALL nor CANCEL"
            }
            pw_result::PW_MCP_NO_NAME => "MCP client: TOOL_CALL without a string content.name",
            pw_result::PW_MCP_DUPLICATE_CALL => "MCP client: a call with this handle is in flight",
            pw_result::PW_MCP_UNKNOWN_CALL => "MCP client: no call with this handle is in flight",
            pw_result::PW_MCP_OUTBOX_FULL => "MCP client: outbox full, transmit its lines first",
            pw_result::PW_MCP_FRAME_PENDING => "MCP client: poll_frame first, a frame is waiting",
            pw_result::PW_MCP_ALREADY_STARTED => "MCP client: already started",
            pw_result::PW_MCP_CLIENT_INFO_TOO_LONG => {
                "MCP client: clientInfo name or version too long"
            }
            pw_result::PW_MCP_NOT_HTTP => "MCP client: not a Streamable HTTP client",
            pw_result::PW_MCP_UNKNOWN_STREAM => "MCP client: no request is answered on this stream",
            pw_result::PW_MCP_HEAD_TWICE => "MCP client: the stream's status was given already",
            pw_result::PW_MCP_NO_HEAD => "MCP client: the stream's status is not given yet",
            pw_result::PW_MCP_POLL_FIRST => "MCP client: poll what the client owes first",
            pw_result::PW_CONVERSATION_NO_ROOM => "conversation: the entry does not fit its memory",
            pw_result::PW_CONVERSATION_BAD_CONTENT => {
                "conversation: a frame content of the wrong shape"
            }
            pw_result::PW_CONVERSATION_NO_RESPONSE => {
                "conversation: a response frame with no response begun"
            }
            pw_result::PW_CONVERSATION_NO_NAME => {
                "conversation: a call or result without a string name"
            }
            pw_result::PW_CONVERSATION_UNKNOWN_CALL => {
                "conversation: a result for a call it does not hold"
            }
            pw_result::PW_CONVERSATION_ALREADY_ANSWERED => {
                "conversation: the call already has its result"
            }
            pw_result::PW_CONVERSATION_NO_OUTCOME => {
                "conversation: a TOOL_RESULT with neither result nor error"
            }
            pw_result::PW_CONVERSATION_EMPTY_TEXT => "conversation: an empty text",
            pw_result::PW_DECLARATION_BAD_NAME => "declaration: the provider cannot take its name",
            pw_result::PW_DECLARATION_NOT_STRICT => "declaration: strict, and the schema is not",
            pw_result::PW_DECLARATION_BAD_SCHEMA => "declaration: the schema is not a JSON object",
            pw_result::PW_DECLARATION_BAD_ENTRY => {
                "declaration: a tools/list entry without a string name"
            }
            pw_result::PW_DECLARATION_DUPLICATE_NAME => {
                "declaration: another tool has the same name"
            }
            pw_result::PW_REQUEST_TOOL_CHOICE_UNSUPPORTED => {
                "request: the provider has no such tool choice"
            }
            pw_result::PW_REQUEST_UNKNOWN_TOOL => "request: the tool choice names no declared tool",
            pw_result::PW_REQUEST_BAD_EXTRA => "request: the extra members are not a JSON object",
            pw_result::PW_REQUEST_EXTRA_CLASH => {
                "request: an extra member names one the library writes"
            }
            pw_result::PW_REQUEST_STALE => "request: the conversation changed since it was made",
            pw_result::PW_BAD_SCHEMA => "schema: not one the validator reads whole",
            pw_result::PW_SCHEMA_INVALID => "schema: the value does not satisfy it",
            pw_result::PW_SCHEMA_LIMIT => "schema: a limit of the validator stopped the check",
            pw_result::PW_PANIC => "internal panic caught at the C boundary",
        }
    }

    /// A malformed frame (see `pw_result_is_malformed`).
    pub const fn is_malformed(self) -> bool {
        matches!(
            self,
            pw_result::PW_FRAME_NOT_OBJECT
                | pw_result::PW_FRAME_MISSING_TYPE
                | pw_result::PW_FRAME_TYPE_NOT_STRING
                | pw_result::PW_INVALID_JSON
                | pw_result::PW_JSON_TOO_DEEP
                | pw_result::PW_INVALID_UTF8
                | pw_result::PW_FRAME_DUPLICATE_TYPE
        )
    }

    /// A call that is not waiting for the input (see `pw_result_is_not_waiting`).
    pub const fn is_not_waiting(self) -> bool {
        matches!(
            self,
            pw_result::PW_CALL_UNKNOWN
                | pw_result::PW_CALL_COMPLETED
                | pw_result::PW_CALL_TIMED_OUT
                | pw_result::PW_CALL_CANCELLED
                | pw_result::PW_CALL_STALE
                | pw_result::PW_CALL_WRONG_KIND
        )
    }

    /// `Ok(())` for `PW_OK`, the code itself otherwise.
    pub fn ok(self) -> Result<(), pw_result> {
        match self {
            pw_result::PW_OK => Ok(()),
            e => Err(e),
        }
    }
}

/// The message for codes `pw_result_text` does not know.
pub(crate) const UNKNOWN_MESSAGE: &str = "unknown pw_result code";

impl From<JsonError> for pw_result {
    fn from(e: JsonError) -> Self {
        match e.kind {
            JsonErrorKind::TooDeep => pw_result::PW_JSON_TOO_DEEP,
            JsonErrorKind::InvalidUtf8 => pw_result::PW_INVALID_UTF8,
            _ => pw_result::PW_INVALID_JSON,
        }
    }
}

impl From<FrameError> for pw_result {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::NotAnObject => pw_result::PW_FRAME_NOT_OBJECT,
            FrameError::MissingType => pw_result::PW_FRAME_MISSING_TYPE,
            FrameError::TypeNotString => pw_result::PW_FRAME_TYPE_NOT_STRING,
            FrameError::DuplicateType => pw_result::PW_FRAME_DUPLICATE_TYPE,
            FrameError::Json(j) => j.into(),
            // A kind of malformed frame newer than this table.
            _ => pw_result::PW_INVALID_JSON,
        }
    }
}

impl From<CallError> for pw_result {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Unknown => pw_result::PW_CALL_UNKNOWN,
            CallError::Completed => pw_result::PW_CALL_COMPLETED,
            CallError::TimedOut => pw_result::PW_CALL_TIMED_OUT,
            CallError::Cancelled => pw_result::PW_CALL_CANCELLED,
            CallError::Stale => pw_result::PW_CALL_STALE,
            CallError::WrongKind => pw_result::PW_CALL_WRONG_KIND,
            // A refusal newer than this table: the call is not waiting.
            _ => pw_result::PW_CALL_UNKNOWN,
        }
    }
}

impl From<Error> for pw_result {
    fn from(e: Error) -> Self {
        match e {
            Error::Malformed(f) => f.into(),
            Error::ClockWentBackwards(_) => pw_result::PW_CLOCK_WENT_BACKWARDS,
            Error::NameTooLong { .. } => pw_result::PW_NAME_TOO_LONG,
            Error::IdTooLong { .. } => pw_result::PW_ID_TOO_LONG,
            Error::InvalidResult(_) => pw_result::PW_INVALID_RESULT,
            Error::HeldFull { .. } => pw_result::PW_HELD_FULL,
            Error::QueueFull { .. } => pw_result::PW_QUEUE_FULL,
            Error::Call(c) => c.into(),
            // A refusal newer than this table: nothing changed, which PANIC would not say.
            _ => pw_result::PW_BAD_ARGUMENT,
        }
    }
}

impl From<StorageError> for pw_result {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::ArenaTooSmall { .. } => pw_result::PW_STORAGE_TOO_SMALL,
            StorageError::TooManySlots | StorageError::TooManyTools => pw_result::PW_TOO_MANY,
            StorageError::NameTooLong { .. } => pw_result::PW_NAME_TOO_LONG,
            StorageError::ClientInfoTooLong => pw_result::PW_MCP_CLIENT_INFO_TOO_LONG,
            // `BadConfig`, and a refusal newer than this table.
            _ => pw_result::PW_BAD_CONFIG,
        }
    }
}

impl From<McpError> for pw_result {
    fn from(e: McpError) -> Self {
        match e {
            McpError::Malformed(f) => f.into(),
            McpError::NotAdapterFrame => pw_result::PW_MCP_NOT_ADAPTER_FRAME,
            McpError::NoName => pw_result::PW_MCP_NO_NAME,
            McpError::NameTooLong { .. } => pw_result::PW_NAME_TOO_LONG,
            McpError::DuplicateCall => pw_result::PW_MCP_DUPLICATE_CALL,
            McpError::UnknownCall => pw_result::PW_MCP_UNKNOWN_CALL,
            McpError::OutboxFull { .. } => pw_result::PW_MCP_OUTBOX_FULL,
            McpError::FramePending => pw_result::PW_MCP_FRAME_PENDING,
            McpError::AlreadyStarted => pw_result::PW_MCP_ALREADY_STARTED,
            // A refusal newer than this table: nothing changed.
            _ => pw_result::PW_BAD_ARGUMENT,
        }
    }
}

impl From<McpStreamError> for pw_result {
    fn from(e: McpStreamError) -> Self {
        match e {
            McpStreamError::NotHttp => pw_result::PW_MCP_NOT_HTTP,
            McpStreamError::UnknownStream => pw_result::PW_MCP_UNKNOWN_STREAM,
            McpStreamError::HeadTwice => pw_result::PW_MCP_HEAD_TWICE,
            McpStreamError::NoHead => pw_result::PW_MCP_NO_HEAD,
            McpStreamError::PollFirst => pw_result::PW_MCP_POLL_FIRST,
        }
    }
}

impl From<ConversationError> for pw_result {
    fn from(e: ConversationError) -> Self {
        match e {
            ConversationError::NoRoom { .. } => pw_result::PW_CONVERSATION_NO_ROOM,
            ConversationError::Malformed(f) => f.into(),
            ConversationError::BadContent => pw_result::PW_CONVERSATION_BAD_CONTENT,
            ConversationError::NoResponse => pw_result::PW_CONVERSATION_NO_RESPONSE,
            ConversationError::NoName => pw_result::PW_CONVERSATION_NO_NAME,
            ConversationError::UnknownCall => pw_result::PW_CONVERSATION_UNKNOWN_CALL,
            ConversationError::AlreadyAnswered => pw_result::PW_CONVERSATION_ALREADY_ANSWERED,
            ConversationError::NoOutcome => pw_result::PW_CONVERSATION_NO_OUTCOME,
            ConversationError::EmptyText => pw_result::PW_CONVERSATION_EMPTY_TEXT,
        }
    }
}

impl pw_result {
    /// The code for a declaration's refusal, and the declaration's index when it names one.
    pub(crate) fn of_declaration(e: DeclarationError) -> (Self, Option<usize>) {
        match e {
            DeclarationError::BadName(i) => (pw_result::PW_DECLARATION_BAD_NAME, Some(i)),
            DeclarationError::NotStrict(i) => (pw_result::PW_DECLARATION_NOT_STRICT, Some(i)),
            DeclarationError::BadSchema(i) => (pw_result::PW_DECLARATION_BAD_SCHEMA, Some(i)),
            DeclarationError::BadEntry => (pw_result::PW_DECLARATION_BAD_ENTRY, None),
            DeclarationError::DuplicateName(i) => {
                (pw_result::PW_DECLARATION_DUPLICATE_NAME, Some(i))
            }
        }
    }

    /// The code for a request's refusal, and the declaration's index when it names one.
    pub(crate) fn of_request(e: RequestError) -> (Self, Option<usize>) {
        match e {
            RequestError::Declaration(d) => Self::of_declaration(d),
            RequestError::ToolChoiceUnsupported => {
                (pw_result::PW_REQUEST_TOOL_CHOICE_UNSUPPORTED, None)
            }
            RequestError::UnknownTool => (pw_result::PW_REQUEST_UNKNOWN_TOOL, None),
            RequestError::BadExtra => (pw_result::PW_REQUEST_BAD_EXTRA, None),
            RequestError::ExtraClash => (pw_result::PW_REQUEST_EXTRA_CLASH, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_round_trip() {
        for (i, a) in ALL_RESULTS.iter().enumerate() {
            assert_eq!(pw_result::from_code(*a as u32), Some(*a));
            for b in &ALL_RESULTS[i + 1..] {
                assert!((*a as u32) < (*b as u32));
                assert_ne!(a.message(), b.message());
            }
        }
        assert_eq!(pw_result::from_code(99), None);
        for retired in [9, 200, 304, 308, 502] {
            assert_eq!(pw_result::from_code(retired), None);
        }
    }
}
