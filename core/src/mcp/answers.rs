//! What the client owes a call's adapter: the frames of its answer, progress and failures,
//! polled in order (SPEC §9.3, §9.4, §9.7).

use crate::json::valid::get_str;
use crate::json::BufferTooSmall;
use crate::sink::write_counted;

use super::calls::CallState;
use super::frames;
#[cfg(feature = "schema")]
use super::output;
use super::stats::bump64;
use super::{McpAdapterFrame, McpClient, Owed};

impl McpClient<'_> {
    /// The next frame for a call's adapter, written into `out`: hand it to
    /// [`Wrapper::handle_adapter_frame`](crate::Wrapper::handle_adapter_frame).
    pub fn poll_frame(
        &mut self,
        out: &mut [u8],
    ) -> Result<Option<McpAdapterFrame>, BufferTooSmall> {
        let (slot, len, next) = match self.owed {
            Owed::Result { slot, value } => {
                let (name, v) = (self.calls.name(slot), &self.line[value.0..value.1]);
                let n = write_counted(out, |s| frames::tool_result(s, name, v))?;
                (slot, n, Owed::End { slot })
            }
            Owed::End { slot } => (slot, write_counted(out, frames::end)?, Owed::Nothing),
            Owed::IsError { slot, result } => {
                let (name, r) = (self.calls.name(slot), &self.line[result.0..result.1]);
                let n = write_counted(out, |s| frames::error_texts(s, name, r))?;
                (slot, n, Owed::Nothing)
            }
            #[cfg(feature = "schema")]
            Owed::OutputInvalid {
                slot,
                value,
                schema,
                invalid,
            } => {
                let (name, v) = (self.calls.name(slot), &self.line[value.0..value.1]);
                let Some(schema) = self.output_schema(schema) else {
                    return Ok(None);
                };
                let cap = self.cfg.line_cap;
                let n = write_counted(out, |s| {
                    frames::error_with(s, |s| output::write_text(s, name, schema, invalid, v, cap))
                })?;
                (slot, n, Owed::Nothing)
            }
            Owed::RpcError { slot, error } => {
                let name = self.calls.name(slot);
                let message = get_str(&self.line[error.0..error.1], b"message");
                let n = write_counted(out, |s| frames::error_message(s, name, message))?;
                (slot, n, Owed::Nothing)
            }
            Owed::Progress { slot, params } => {
                let p = &self.line[params.0..params.1];
                let n = write_counted(out, |s| frames::progress(s, p))?;
                let handle = self.calls.get(slot).handle;
                self.owed = Owed::Nothing;
                return Ok(Some(McpAdapterFrame { handle, len: n }));
            }
            _ => return self.poll_failure(out),
        };
        let handle = self.calls.get(slot).handle;
        self.owed = next;
        if next == Owed::Nothing {
            self.calls.set_state(slot, CallState::Free);
            bump64(&mut self.stats.answered);
        }
        Ok(Some(McpAdapterFrame { handle, len }))
    }

    /// The `ERROR` of a call the client failed itself, oldest first.
    fn poll_failure(&mut self, out: &mut [u8]) -> Result<Option<McpAdapterFrame>, BufferTooSmall> {
        if let Some(imm) = self.immediate {
            let name = &self.imm_name[..imm.name_len];
            let len = write_counted(out, |s| frames::failure(s, name, imm.why))?;
            self.immediate = None;
            bump64(&mut self.stats.failed);
            return Ok(Some(McpAdapterFrame {
                handle: imm.handle,
                len,
            }));
        }
        let Some((slot, why)) = self.calls.oldest_failing() else {
            return Ok(None);
        };
        let name = self.calls.name(slot);
        let len = write_counted(out, |s| frames::failure(s, name, why))?;
        let handle = self.calls.get(slot).handle;
        self.calls.set_state(slot, CallState::Free);
        bump64(&mut self.stats.failed);
        Ok(Some(McpAdapterFrame { handle, len }))
    }
}
