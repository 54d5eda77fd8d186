//! The adapter frames the client gives the wrapper for a call (SPEC §9.3, §9.4, §9.7), and
//! the messages of the calls it fails itself.

use crate::json::valid::{get, get_str, Arr};
use crate::json::JsonStr;
use crate::sink::{put_escaped, put_json_string, put_u64, Sink};

/// Why the client failed a call itself.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpFailure {
    /// The transport closed with the call in flight (SPEC §9.7).
    Closed,
    /// The server's start-up failed, so the call was never sent.
    NotStarted,
    /// The call's args are not a JSON object (SPEC §9.2).
    ArgsNotObject,
    /// Every call slot is taken.
    TooMany {
        /// Call slots.
        max: usize,
    },
    /// The `tools/call` line can never fit the outbox.
    RequestTooLong {
        /// The line's length.
        len: usize,
        /// Bytes of outbox a line can take.
        cap: usize,
    },
    /// The response was longer than the line buffer.
    ResponseTooLong {
        /// `line_cap`.
        cap: usize,
    },
    /// The response nested deeper than the depth limit.
    ResponseTooDeep {
        /// `max_depth`.
        max_depth: u8,
    },
    /// The response had neither `result` nor `error`.
    NoOutcome,
    /// Over Streamable HTTP, the response ended without the answer and its status was not
    /// a success (SPEC §9.11).
    Http {
        /// The HTTP status.
        status: u16,
    },
    /// The result's `resultType` is `input_required`: the server asks for elicitation,
    /// sampling or roots, which this client does not give (SPEC §9.10).
    InputRequired,
}

/// `{"type":"TOOL_RESULT","content":{"name":…,"result":…}}`.
pub(crate) fn tool_result(s: &mut dyn Sink, name: &[u8], result: &[u8]) {
    s.put(br#"{"type":"TOOL_RESULT","content":{"name":"#);
    put_json_string(s, name);
    s.put(br#","result":"#);
    s.put_raw(result);
    s.put(b"}}");
}

/// `{"type":"END"}`.
pub(crate) fn end(s: &mut dyn Sink) {
    s.put(br#"{"type":"END"}"#);
}

/// `{"type":"PROGRESS","content":<params>}`.
pub(crate) fn progress(s: &mut dyn Sink, params: &[u8]) {
    s.put(br#"{"type":"PROGRESS","content":"#);
    s.put_raw(params);
    s.put(b"}");
}

const ERROR_HEAD: &[u8] = br#"{"type":"ERROR","content":{"message":""#;
const ERROR_TAIL: &[u8] = br#""}}"#;

/// `Tool <name> failed`, inside a JSON string.
fn put_failed(s: &mut dyn Sink, name: &[u8]) {
    s.put(b"Tool ");
    put_escaped(s, name);
    s.put(b" failed");
}

/// The `ERROR` of an `isError` result: the texts of its text items joined with LF, or
/// `Tool <name> failed` when it has none (SPEC §9.3).
pub(crate) fn error_texts(s: &mut dyn Sink, name: &[u8], result: &[u8]) {
    s.put(ERROR_HEAD);
    let mut any = false;
    let content = get(result, b"content").and_then(Arr::of);
    for item in content.into_iter().flatten() {
        let is_text = get_str(item, b"type").is_some_and(|t| t.eq_text(b"text"));
        let Some(text) = get_str(item, b"text").filter(|_| is_text) else {
            continue;
        };
        if any {
            s.put(b"\\n");
        }
        any = true;
        text.for_each_decoded_run(|run| put_escaped(s, run));
    }
    if !any {
        put_failed(s, name);
    }
    s.put(ERROR_TAIL);
}

/// An `ERROR` frame around the escaped text `text` writes.
pub(crate) fn error_with(s: &mut dyn Sink, text: impl FnOnce(&mut dyn Sink)) {
    s.put(ERROR_HEAD);
    text(s);
    s.put(ERROR_TAIL);
}

/// The `ERROR` of a JSON-RPC error: its `message`, or `Tool <name> failed` without one.
pub(crate) fn error_message(s: &mut dyn Sink, name: &[u8], message: Option<JsonStr<'_>>) {
    s.put(ERROR_HEAD);
    match message {
        Some(m) => m.for_each_decoded_run(|run| put_escaped(s, run)),
        None => put_failed(s, name),
    }
    s.put(ERROR_TAIL);
}

/// The `ERROR` of a call the client failed itself.
pub(crate) fn failure(s: &mut dyn Sink, name: &[u8], why: McpFailure) {
    s.put(ERROR_HEAD);
    let alone: &[u8] = match why {
        McpFailure::ArgsNotObject => b" arguments must be an object",
        McpFailure::InputRequired => b" needs input this client cannot give",
        _ => b"",
    };
    if !alone.is_empty() {
        s.put(b"Tool ");
        put_escaped(s, name);
        s.put(alone);
        s.put(ERROR_TAIL);
        return;
    }
    put_failed(s, name);
    s.put(b": ");
    match why {
        McpFailure::Closed => s.put(b"the MCP server closed the connection"),
        McpFailure::NotStarted => s.put(b"the MCP server did not start"),
        McpFailure::ArgsNotObject | McpFailure::InputRequired => {}
        McpFailure::TooMany { max } => {
            s.put(b"too many MCP calls in flight (max ");
            put_u64(s, max as u64);
            s.put(b")");
        }
        McpFailure::RequestTooLong { len, cap } => {
            s.put(b"its request of ");
            put_u64(s, len as u64);
            s.put(b" bytes exceeds the MCP client's outbox of ");
            put_u64(s, cap as u64);
            s.put(b" bytes");
        }
        McpFailure::ResponseTooLong { cap } => {
            s.put(b"the MCP server's response exceeds ");
            put_u64(s, cap as u64);
            s.put(b" bytes");
        }
        McpFailure::ResponseTooDeep { max_depth } => {
            s.put(b"the MCP server's response is nested deeper than ");
            put_u64(s, u64::from(max_depth));
            s.put(b" levels");
        }
        McpFailure::NoOutcome => s.put(b"the MCP server's response has no result or error"),
        McpFailure::Http { status } => {
            s.put(b"HTTP ");
            put_u64(s, u64::from(status));
        }
    }
    s.put(ERROR_TAIL);
}
