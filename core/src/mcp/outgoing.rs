//! The lines the client writes to the server (SPEC §9.1, §9.2, §9.5, §9.6): each one
//! compact JSON-RPC message, LF terminated.

use crate::json::JsonStr;
use crate::sink::{put_json_str, put_json_string, put_u64, Sink};

use super::config::{McpClientInfo, PROTOCOL_VERSION, PROTOCOL_VERSION_2026};

const HEAD: &[u8] = br#"{"jsonrpc":"2.0","#;

/// `initialize`, request `rpc`.
pub(crate) fn initialize(s: &mut dyn Sink, rpc: u64, info: &McpClientInfo<'_>) {
    s.put(HEAD);
    s.put(br#""id":"#);
    put_u64(s, rpc);
    s.put(br#","method":"initialize","params":{"protocolVersion":""#);
    s.put(PROTOCOL_VERSION.as_bytes());
    s.put(br#"","capabilities":{},"clientInfo":{"name":"#);
    put_json_string(s, info.name.as_bytes());
    s.put(br#","version":"#);
    put_json_string(s, info.version.as_bytes());
    s.put(b"}}}\n");
}

/// 2026-07-28's `_meta` members naming the revision, the client's capabilities and the client
/// (SPEC §9.9), without their braces.
fn envelope(s: &mut dyn Sink, info: &McpClientInfo<'_>) {
    s.put(br#""io.modelcontextprotocol/protocolVersion":""#);
    s.put(PROTOCOL_VERSION_2026.as_bytes());
    s.put(br#"","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"#);
    put_json_string(s, info.name.as_bytes());
    s.put(br#","version":"#);
    put_json_string(s, info.version.as_bytes());
    s.put(b"}");
}

/// `server/discover`, request `rpc`, in 2026-07-28's form.
pub(crate) fn discover(s: &mut dyn Sink, rpc: u64, info: &McpClientInfo<'_>) {
    s.put(HEAD);
    s.put(br#""id":"#);
    put_u64(s, rpc);
    s.put(br#","method":"server/discover","params":{"_meta":{"#);
    envelope(s, info);
    s.put(b"}}}\n");
}

/// `subscriptions/listen` for tool-list changes, request `rpc` (2026-07-28, SPEC §9.12).
pub(crate) fn listen(s: &mut dyn Sink, rpc: u64, info: &McpClientInfo<'_>) {
    s.put(HEAD);
    s.put(br#""id":"#);
    put_u64(s, rpc);
    s.put(br#","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"#);
    envelope(s, info);
    s.put(b"}}}\n");
}

/// `notifications/initialized`.
pub(crate) fn initialized(s: &mut dyn Sink) {
    s.put(HEAD);
    s.put(b"\"method\":\"notifications/initialized\"}\n");
}

/// `tools/list`, request `rpc`, from the page `cursor` (a JSON string's text as the server
/// wrote it, escapes included), with 2026-07-28's envelope when `meta` names the client.
pub(crate) fn tools_list(
    s: &mut dyn Sink,
    rpc: u64,
    cursor: Option<&[u8]>,
    meta: Option<&McpClientInfo<'_>>,
) {
    s.put(HEAD);
    s.put(br#""id":"#);
    put_u64(s, rpc);
    s.put(br#","method":"tools/list""#);
    if cursor.is_some() || meta.is_some() {
        s.put(br#","params":{"#);
        if let Some(c) = cursor {
            s.put(br#""cursor":""#);
            s.put(c);
            s.put(b"\"");
        }
        if let Some(info) = meta {
            if cursor.is_some() {
                s.put(b",");
            }
            s.put(br#""_meta":{"#);
            envelope(s, info);
            s.put(b"}");
        }
        s.put(b"}");
    }
    s.put(b"}\n");
}

/// A tool's name as `tools/call` gives it.
#[derive(Copy, Clone, Debug)]
pub(crate) enum ToolName<'a> {
    /// As a frame wrote it.
    Json(JsonStr<'a>),
    /// Decoded text from the host.
    Text(&'a [u8]),
}

/// `tools/call` of request `rpc`, its progress token the same number. Queued as this before
/// the revision is known; [`with_envelope`] makes it 2026-07-28's as it goes out.
pub(crate) fn tools_call(s: &mut dyn Sink, rpc: u64, name: ToolName<'_>, args: &[u8]) {
    s.put(HEAD);
    s.put(br#""id":"#);
    put_u64(s, rpc);
    s.put(br#","method":"tools/call","params":{"name":"#);
    match name {
        ToolName::Json(n) => put_json_str(s, n),
        ToolName::Text(n) => put_json_string(s, n),
    }
    s.put(br#","arguments":"#);
    s.put_raw(args);
    s.put(br#","_meta":{"progressToken":"#);
    put_u64(s, rpc);
    s.put(CALL_TAIL);
}

/// How every [`tools_call`] line ends: its `_meta`, `params` and message closed.
const CALL_TAIL: &[u8] = b"}}}\n";

/// A queued [`tools_call`] line with 2026-07-28's envelope added to its `_meta`.
pub(crate) fn with_envelope(s: &mut dyn Sink, line: &[u8], info: &McpClientInfo<'_>) {
    let head = line.strip_suffix(CALL_TAIL).unwrap_or(line);
    s.put(head);
    s.put(b",");
    envelope(s, info);
    s.put(CALL_TAIL);
}

/// `notifications/cancelled` for request `rpc`, with its reason (decoded text).
pub(crate) fn cancelled(s: &mut dyn Sink, rpc: u64, reason: &[u8]) {
    s.put(HEAD);
    s.put(br#""method":"notifications/cancelled","params":{"requestId":"#);
    put_u64(s, rpc);
    s.put(br#","reason":"#);
    put_json_string(s, reason);
    s.put(b"}}\n");
}

/// The answer to a server's request whose id is `id` (raw): `{}` to a `ping`, else
/// `-32601 Method not found`.
pub(crate) fn reply(s: &mut dyn Sink, id: &[u8], ping: bool) {
    s.put(HEAD);
    s.put(br#""id":"#);
    s.put_raw(id);
    match ping {
        true => s.put(br#","result":{}}"#),
        false => s.put(br#","error":{"code":-32601,"message":"Method not found"}}"#),
    }
    s.put(b"\n");
}
