//! The MCP client's traffic with the wrapper and the server: the wrapper's adapter frames
//! in (`pw_mcp_handle_frame`), frames for the wrapper and lines for the server out.

#![allow(non_camel_case_types)]

use polyweave_tool_adapter::mcp::{McpFailure, McpHandled};
use polyweave_tool_adapter::CallHandle;

use crate::boundary::{
    disjoint, ffi, in_bytes, out_bytes, out_slot, placed, require_non_null, span,
};
use crate::codes::pw_result;
use crate::enums::{pw_mcp_failure, pw_mcp_handled_kind};
use crate::mcp::pw_mcp;

/// What `pw_mcp_handle_frame` did with a frame.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_handled {
    /// Sent, failed at once, or cancelled.
    pub kind: pw_mcp_handled_kind,
    /// For `PW_MCP_HANDLED_CANCELLED`: 1 when `notifications/cancelled` was queued (0 when
    /// the call's request had not gone out yet: it was withdrawn).
    pub notified: u8,
    /// For `PW_MCP_HANDLED_SENT`: the request's JSON-RPC id, also its progress token.
    pub request: u64,
    /// For `PW_MCP_HANDLED_FAILED`: why (`PW_MCP_FAILURE_NONE` otherwise).
    pub failure: pw_mcp_failure,
    /// The failure's limit: the slots (`TOO_MANY`), the outbox's room for a line
    /// (`REQUEST_TOO_LONG`), `line_cap`, `max_depth`; 0 otherwise.
    pub limit: usize,
    /// For `PW_MCP_FAILURE_REQUEST_TOO_LONG`: the line's length; 0 otherwise.
    pub len: usize,
}

/// The C form of a failure: its kind, limit and length.
pub(crate) fn failure(f: McpFailure) -> (pw_mcp_failure, usize, usize) {
    match f {
        McpFailure::Closed => (pw_mcp_failure::PW_MCP_FAILURE_CLOSED, 0, 0),
        McpFailure::NotStarted => (pw_mcp_failure::PW_MCP_FAILURE_NOT_STARTED, 0, 0),
        McpFailure::ArgsNotObject => (pw_mcp_failure::PW_MCP_FAILURE_ARGS_NOT_OBJECT, 0, 0),
        McpFailure::TooMany { max } => (pw_mcp_failure::PW_MCP_FAILURE_TOO_MANY, max, 0),
        McpFailure::RequestTooLong { len, cap } => {
            (pw_mcp_failure::PW_MCP_FAILURE_REQUEST_TOO_LONG, cap, len)
        }
        McpFailure::ResponseTooLong { cap } => {
            (pw_mcp_failure::PW_MCP_FAILURE_RESPONSE_TOO_LONG, cap, 0)
        }
        McpFailure::ResponseTooDeep { max_depth } => (
            pw_mcp_failure::PW_MCP_FAILURE_RESPONSE_TOO_DEEP,
            usize::from(max_depth),
            0,
        ),
        McpFailure::NoOutcome => (pw_mcp_failure::PW_MCP_FAILURE_NO_OUTCOME, 0, 0),
    }
}

impl pw_mcp_handled {
    fn of(h: McpHandled) -> Self {
        let none = Self {
            kind: pw_mcp_handled_kind::PW_MCP_HANDLED_SENT,
            notified: 0,
            request: 0,
            failure: pw_mcp_failure::PW_MCP_FAILURE_NONE,
            limit: 0,
            len: 0,
        };
        match h {
            McpHandled::Sent { request } => Self { request, ..none },
            McpHandled::Failed(f) => {
                let (failure, limit, len) = failure(f);
                Self {
                    kind: pw_mcp_handled_kind::PW_MCP_HANDLED_FAILED,
                    failure,
                    limit,
                    len,
                    ..none
                }
            }
            McpHandled::Cancelled { notified } => Self {
                kind: pw_mcp_handled_kind::PW_MCP_HANDLED_CANCELLED,
                notified: notified.into(),
                ..none
            },
        }
    }
}

/// A frame the wrapper routed to an adapter call (`PW_ROUTE_ADAPTER`: a `TOOL_CALL` or a
/// `CANCEL`), the call named by its handle's `slot` and `index` (the client keeps the pair
/// only as the call's key: any pair unique among the calls in flight works); `*out` says
/// what became of it. Refusals change nothing: a malformed frame gives its frame code,
/// `PW_MCP_OUTBOX_FULL` and `PW_MCP_FRAME_PENDING` ask the host to poll first and hand the
/// frame in again, and the other `PW_MCP_*` codes name a frame the wrapper never sends.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `bytes` valid for
/// `len` reads and `out` for one write, both outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_handle_frame(
    c: *mut pw_mcp,
    slot: u16,
    index: u32,
    bytes: *const u8,
    len: usize,
    out: *mut pw_mcp_handled,
) -> pw_result {
    ffi(|| {
        require_non_null!(c, bytes, out);
        let (out_span, bytes_span) = (span(out, 1), span(bytes, len));
        disjoint(&[out_span], &[bytes_span])?;
        // SAFETY: as the function's contract.
        let c = unsafe { placed(c, &[out_span, bytes_span]) }?;
        // SAFETY: the caller hands `bytes` for `len` reads and `out` for one write.
        let (input, out) = unsafe { (in_bytes(bytes, len)?, out_slot(out)?) };
        let handled = c
            .client
            .handle_frame(CallHandle::from_parts(slot, index), input)?;
        out.write(pw_mcp_handled::of(handled));
        Ok(())
    })
}

/// The checked client, output buffer and out slot of a poll.
///
/// # Safety
///
/// As `pw_mcp_poll_transmit`'s contract.
unsafe fn poll_args<'a, T>(
    c: *mut pw_mcp,
    buf: *mut u8,
    cap: usize,
    out: *mut T,
) -> Result<
    (
        &'a mut pw_mcp,
        &'a mut [u8],
        &'a mut core::mem::MaybeUninit<T>,
    ),
    pw_result,
> {
    require_non_null!(c, buf, out);
    let writes = [span(buf.cast_const(), cap), span(out.cast_const(), 1)];
    disjoint(&writes, &[])?;
    // SAFETY: as the function's contract.
    let c = unsafe { placed(c, &writes) }?;
    // SAFETY: the caller hands `buf` for `cap` writes and `out` for one.
    let (buf, out) = unsafe { (out_bytes(buf, cap)?, out_slot(out)?) };
    Ok((c, buf, out))
}

/// Writes the next line for the server (LF included) into `buf` (`cap` bytes) and its
/// length into `*len`: `PW_OK`; `PW_NOTHING` (`*len` 0) when none waits;
/// `PW_BUFFER_TOO_SMALL` with the size needed in `*len`, nothing written and the line kept
/// (`pw_mcp_max_line_len` gives a buffer that always fits).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `buf` valid for
/// `cap` writes and `len` for one, apart from each other and from the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_transmit(
    c: *mut pw_mcp,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, buf, len) = unsafe { poll_args(c, buf, cap, len) }?;
        match c.client.poll_transmit(buf) {
            Ok(Some(n)) => {
                len.write(n);
                Ok(())
            }
            Ok(None) => {
                len.write(0);
                Err(pw_result::PW_NOTHING)
            }
            Err(e) => {
                len.write(e.needed);
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}

/// A frame `pw_mcp_poll_frame` wrote, for the adapter call its wrapper handle names: hand
/// it to `pw_wrapper_handle_adapter_frame` with the handle of that slot and index.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_frame {
    /// The call's index (`pw_call_handle.index`).
    pub index: u32,
    /// Its slot (`pw_call_handle.slot`).
    pub slot: u16,
    /// Always 0.
    pub reserved: u16,
    /// The frame's length in the buffer (with `PW_BUFFER_TOO_SMALL`, the length needed).
    pub len: usize,
}

/// Writes the next frame for a call's adapter into `buf` (`cap` bytes) and fills `*out`:
/// `PW_OK`; `PW_NOTHING` (`out->len` 0) when none waits; `PW_BUFFER_TOO_SMALL` with the size
/// needed in `out->len`, nothing written and the frame kept (`pw_mcp_max_frame_len` gives a
/// buffer that always fits).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `buf` valid for
/// `cap` writes and `out` for one, apart from each other and from the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_frame(
    c: *mut pw_mcp,
    buf: *mut u8,
    cap: usize,
    out: *mut pw_mcp_frame,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, buf, out) = unsafe { poll_args(c, buf, cap, out) }?;
        let frame = |index: u32, slot: u16, len: usize| pw_mcp_frame {
            index,
            slot,
            reserved: 0,
            len,
        };
        match c.client.poll_frame(buf) {
            Ok(Some(f)) => {
                out.write(frame(f.handle.index(), f.handle.slot(), f.len));
                Ok(())
            }
            Ok(None) => {
                out.write(frame(0, 0, 0));
                Err(pw_result::PW_NOTHING)
            }
            Err(e) => {
                out.write(frame(0, 0, e.needed));
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}
