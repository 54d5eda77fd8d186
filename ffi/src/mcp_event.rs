//! What an MCP client tells the host besides frames and lines (start-up, the listed tools,
//! the server's other notifications), and what it counted.

#![allow(non_camel_case_types)]

use polyweave_tool_adapter::mcp::{McpEvent, McpStartError, McpStats, McpToolSkip};

use crate::boundary::{ffi, out_slot, placed, require_non_null, span};
use crate::codes::pw_result;
use crate::enums::{pw_mcp_event_kind, pw_mcp_skip, pw_mcp_start_error};
use crate::mcp::pw_mcp;
use crate::wrapper::pw_str;

/// Something the host learns from the server. Spans point into the client's block and are
/// valid until the next call on the client; a span a kind does not use is empty.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_event {
    /// What happened; it says which fields count.
    pub kind: pw_mcp_event_kind,
    /// For `PW_MCP_EVENT_NOTIFICATION`: 1 when it has `params`.
    pub has_params: u8,
    /// For `PW_MCP_EVENT_NOTIFICATION`: 1 when `method` was cut to `PW_MCP_METHOD_CAP` bytes.
    pub method_cut: u8,
    /// For `PW_MCP_EVENT_READY`: the tools handed out as `PW_MCP_EVENT_TOOL`.
    pub tools: u32,
    /// For `PW_MCP_EVENT_TOOL_SKIPPED`: why (`PW_MCP_SKIP_NONE` otherwise).
    pub skip: pw_mcp_skip,
    /// For `PW_MCP_EVENT_START_FAILED`: why (`PW_MCP_START_NONE` otherwise).
    pub start_error: pw_mcp_start_error,
    /// `PW_MCP_SKIP_NAME_TOO_LONG`: the name's decoded length; `PW_MCP_START_CURSOR_TOO_LONG`:
    /// the cursor's length; 0 otherwise.
    pub len: usize,
    /// `PW_MCP_SKIP_NAME_TOO_LONG`: `name_cap`; 0 otherwise.
    pub cap: usize,
    /// For `PW_MCP_EVENT_INITIALIZED`: the protocol revision the server chose.
    pub version: pw_str,
    /// For `PW_MCP_EVENT_TOOL`: the tool's decoded name (register it under this name).
    pub name: pw_str,
    /// Raw JSON as the server sent it: the `initialize` result (`INITIALIZED`), the tool's
    /// entry with its `description` and `inputSchema` (`TOOL`, `TOOL_SKIPPED`), the value
    /// the start-up failed on (`START_FAILED` with `UNSUPPORTED_VERSION`, `BAD_RESULT`,
    /// `REFUSED`).
    pub raw: pw_str,
    /// For `PW_MCP_EVENT_NOTIFICATION`: the decoded method.
    pub method: pw_str,
    /// For `PW_MCP_EVENT_NOTIFICATION` with `has_params`: its params as sent.
    pub params: pw_str,
}

impl pw_mcp_event {
    const fn of_kind(kind: pw_mcp_event_kind) -> Self {
        let empty = pw_str {
            ptr: core::ptr::null(),
            len: 0,
        };
        Self {
            kind,
            has_params: 0,
            method_cut: 0,
            tools: 0,
            skip: pw_mcp_skip::PW_MCP_SKIP_NONE,
            start_error: pw_mcp_start_error::PW_MCP_START_NONE,
            len: 0,
            cap: 0,
            version: empty,
            name: empty,
            raw: empty,
            method: empty,
            params: empty,
        }
    }
}

/// The C form of a failed start-up: its kind, the value as sent, a length.
fn start_error(e: McpStartError<'_>) -> (pw_mcp_start_error, &[u8], usize) {
    match e {
        McpStartError::UnsupportedVersion(v) => {
            (pw_mcp_start_error::PW_MCP_START_UNSUPPORTED_VERSION, v, 0)
        }
        McpStartError::BadResult(r) => (pw_mcp_start_error::PW_MCP_START_BAD_RESULT, r, 0),
        McpStartError::Refused(e) => (pw_mcp_start_error::PW_MCP_START_REFUSED, e, 0),
        McpStartError::CursorTooLong(n) => {
            (pw_mcp_start_error::PW_MCP_START_CURSOR_TOO_LONG, &[], n)
        }
        McpStartError::TooManyPages => (pw_mcp_start_error::PW_MCP_START_TOO_MANY_PAGES, &[], 0),
        McpStartError::ResponseTooLarge => {
            (pw_mcp_start_error::PW_MCP_START_RESPONSE_TOO_LARGE, &[], 0)
        }
        // A start-up failure newer than this table: the result was not one to go on with.
        _ => (pw_mcp_start_error::PW_MCP_START_BAD_RESULT, &[], 0),
    }
}

/// The next thing the host learns from the server, in `*out`: `PW_OK`, or `PW_NOTHING`.
/// Listed tools come as `PW_MCP_EVENT_TOOL` before `PW_MCP_EVENT_READY`; a host registers
/// the ones it wants as adapter tools of its wrapper (copying the names: the spans end at
/// the next call on the client).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently, and `out` valid for
/// one write outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_event(c: *mut pw_mcp, out: *mut pw_mcp_event) -> pw_result {
    ffi(|| {
        require_non_null!(c, out);
        // SAFETY: as the function's contract.
        let c = unsafe { placed(c, &[span(out.cast_const(), 1)]) }?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let method_buf = &mut *c.method;
        let ev = c.client.poll_event().ok_or(pw_result::PW_NOTHING)?;
        out.write(match ev {
            McpEvent::Initialized {
                protocol_version,
                result,
            } => pw_mcp_event {
                version: pw_str::of(protocol_version.as_bytes()),
                raw: pw_str::of(result),
                ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_INITIALIZED)
            },
            McpEvent::Tool { name, tool } => pw_mcp_event {
                name: pw_str::of(name.as_bytes()),
                raw: pw_str::of(tool),
                ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_TOOL)
            },
            McpEvent::ToolSkipped { reason, tool } => {
                let (skip, len, cap) = match reason {
                    McpToolSkip::NameTooLong { len, cap } => {
                        (pw_mcp_skip::PW_MCP_SKIP_NAME_TOO_LONG, len, cap)
                    }
                    McpToolSkip::NoName => (pw_mcp_skip::PW_MCP_SKIP_NO_NAME, 0, 0),
                };
                pw_mcp_event {
                    skip,
                    len,
                    cap,
                    raw: pw_str::of(tool),
                    ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_TOOL_SKIPPED)
                }
            }
            McpEvent::Ready { tools } => pw_mcp_event {
                tools,
                ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_READY)
            },
            McpEvent::StartFailed(e) => {
                let (start_error, raw, len) = start_error(e);
                pw_mcp_event {
                    start_error,
                    len,
                    raw: pw_str::of(raw),
                    ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_START_FAILED)
                }
            }
            McpEvent::Notification { method, params } => {
                // Zero-copy when the method has no escapes; decoded into the block otherwise.
                let (text, cut) = match method.as_plain_str() {
                    Some(m) if m.len() <= method_buf.len() => (m, false),
                    _ => method.decode_prefix_into(method_buf),
                };
                pw_mcp_event {
                    has_params: params.is_some().into(),
                    method_cut: cut.into(),
                    method: pw_str::of(text.as_bytes()),
                    params: pw_str::of(params.unwrap_or(&[])),
                    ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_NOTIFICATION)
                }
            }
        });
        Ok(())
    })
}

/// Counters of an MCP client (`pw_mcp_stats`; each saturates).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct pw_mcp_client_stats {
    /// Lines read from the server (blank ones not counted).
    pub lines: u64,
    /// Lines that are not JSON.
    pub not_json: u32,
    /// JSON lines that are not JSON-RPC 2.0 messages.
    pub not_jsonrpc: u32,
    /// Lines longer than `line_cap`.
    pub too_long: u32,
    /// Lines nested deeper than the depth limit.
    pub too_deep: u32,
    /// Responses whose id is none the client issued.
    pub unknown_id: u32,
    /// Responses and progress for calls already ended (answered, cancelled, timed out).
    pub late: u32,
    /// Progress notifications whose token is none the client issued.
    pub unknown_progress: u32,
    /// `ping` requests answered.
    pub pings: u32,
    /// Other requests from the server, answered `-32601`.
    pub refused_requests: u32,
    /// Notifications handed to the host as events.
    pub notifications: u32,
    /// `tools/call` requests queued.
    pub calls: u64,
    /// Calls answered by the server (result or error).
    pub answered: u64,
    /// Calls the client failed itself.
    pub failed: u64,
}

impl pw_mcp_client_stats {
    fn of(s: McpStats) -> Self {
        Self {
            lines: s.lines,
            not_json: s.not_json,
            not_jsonrpc: s.not_jsonrpc,
            too_long: s.too_long,
            too_deep: s.too_deep,
            unknown_id: s.unknown_id,
            late: s.late,
            unknown_progress: s.unknown_progress,
            pings: s.pings,
            refused_requests: s.refused_requests,
            notifications: s.notifications,
            calls: s.calls,
            answered: s.answered,
            failed: s.failed,
        }
    }
}

/// Copies what the client counted into `*out`.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently, and `out` valid for
/// one write outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_stats(
    c: *const pw_mcp,
    out: *mut pw_mcp_client_stats,
) -> pw_result {
    ffi(|| {
        require_non_null!(c, out);
        // SAFETY: as the function's contract; only read.
        let c = unsafe { placed(c.cast_mut(), &[span(out.cast_const(), 1)]) }?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        out.write(pw_mcp_client_stats::of(c.client.stats()));
        Ok(())
    })
}
