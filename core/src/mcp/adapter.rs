//! Frames the wrapper routes to an adapter call: a `TOOL_CALL` becomes a `tools/call`
//! request (or fails at once), a `CANCEL` ends the call and tells the server.

use crate::frame::Frame;
use crate::json;
use crate::json::valid::get_str;
use crate::route::CallHandle;
use crate::sink::write_counted;

use super::calls::CallState;
use super::config::{OUTBOX_HEADER, REASON_CAP};
use super::error::{McpError, McpHandled};
use super::frames::McpFailure;
use super::outgoing;
use super::stats::bump64;
use super::{Immediate, McpClient, Owed, Phase};

impl McpClient<'_> {
    pub(super) fn call(
        &mut self,
        handle: CallHandle,
        f: &Frame<'_>,
        server_name: Option<&[u8]>,
    ) -> Result<McpHandled, McpError> {
        if self.immediate.is_some() {
            return Err(McpError::FramePending);
        }
        let call = f.tool_call().map_err(McpError::Malformed)?;
        let name = call.name.ok_or(McpError::NoName)?;
        let cap = self.cfg.name_cap;
        let name_len = name.decoded_len();
        if name_len > cap {
            return Err(McpError::NameTooLong { len: name_len, cap });
        }
        if self.calls.by_handle(handle).is_some() {
            return Err(McpError::DuplicateCall);
        }
        let rpc = self.next_rpc;
        let args = json::bytes::trim_ws(call.args);
        // The name the server knows the tool by: the frame's, unless the host gave another.
        let tool = server_name.map_or(outgoing::ToolName::Json(name), outgoing::ToolName::Text);
        let mut counted = crate::sink::Counter(0);
        outgoing::tools_call(&mut counted, rpc, tool, args);
        let len = counted.0;
        let slot = self.calls.free_slot();
        let fail = match self.phase {
            Phase::Closed => Some(McpFailure::Closed),
            Phase::Failed => Some(McpFailure::NotStarted),
            _ if args.first() != Some(&b'{') => Some(McpFailure::ArgsNotObject),
            _ if slot.is_none() => Some(McpFailure::TooMany {
                max: self.calls.len(),
            }),
            _ if !self.outbox.could_hold(len) => Some(McpFailure::RequestTooLong {
                len,
                cap: self.cfg.outbox_cap - OUTBOX_HEADER,
            }),
            _ => None,
        };
        let (Some(slot), None) = (slot, fail) else {
            let why = fail.unwrap_or(McpFailure::NotStarted);
            // The name fits: its length was checked against the cap.
            let _ = name.decode_into(self.imm_name);
            self.immediate = Some(Immediate {
                handle,
                why,
                name_len,
            });
            return Ok(McpHandled::Failed(why));
        };
        self.outbox.reserve(len).map_err(|e| McpError::OutboxFull {
            needed: e.needed,
            free: e.free,
        })?;
        let _ = name.decode_into(self.calls.name_buf(slot));
        self.calls.take(slot, handle, rpc, name_len);
        self.outbox.push(rpc, len, |dst| {
            let _ = write_counted(dst, |s| outgoing::tools_call(s, rpc, tool, args));
        });
        self.next_rpc += 1;
        bump64(&mut self.stats.calls);
        Ok(McpHandled::Sent { request: rpc })
    }

    pub(super) fn cancel(
        &mut self,
        handle: CallHandle,
        f: &Frame<'_>,
    ) -> Result<McpHandled, McpError> {
        if self.immediate.is_some_and(|i| i.handle == handle) {
            self.immediate = None;
            return Ok(McpHandled::Cancelled { notified: false });
        }
        let slot = self.calls.by_handle(handle).ok_or(McpError::UnknownCall)?;
        let call = self.calls.get(slot);
        let mut notified = false;
        // A call not yet sent is withdrawn; one sent is told of, or (over HTTP in
        // 2026-07-28) its response stream closed.
        let sent = call.state == CallState::Waiting && !self.outbox.withdraw(call.rpc);
        if sent && self.close_stream_of(call.rpc) {
            notified = true;
        } else if sent {
            let content = f.content().map_err(McpError::Malformed)?;
            let mut text = [0u8; REASON_CAP];
            let reason = match content.and_then(|c| get_str(c, b"reason")) {
                Some(r) => {
                    let decoded = r.decode_prefix_into(&mut text).0.as_bytes();
                    // Cut so that it fits once escaped, on a character boundary.
                    &decoded[..json::escape::escaped_prefix(decoded, REASON_CAP)]
                }
                None => b"",
            };
            let mut counted = crate::sink::Counter(0);
            outgoing::cancelled(&mut counted, call.rpc, reason);
            if let Err(e) = self.outbox.reserve(counted.0) {
                // Withdrawn above only when found, so nothing changed.
                return Err(McpError::OutboxFull {
                    needed: e.needed,
                    free: e.free,
                });
            }
            let rpc = call.rpc;
            self.outbox.push(0, counted.0, |dst| {
                let _ = write_counted(dst, |s| outgoing::cancelled(s, rpc, reason));
            });
            notified = true;
        }
        // What the line in the buffer owed this call goes with it.
        let owes = self.owed.call_slot() == Some(slot);
        if owes {
            self.owed = Owed::Nothing;
        }
        self.calls.set_state(slot, CallState::Free);
        Ok(McpHandled::Cancelled { notified })
    }
}
