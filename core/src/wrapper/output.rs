//! `poll_output`: the frames the wrapper owes and the hook events its [`Log`] kept, in the
//! order SPEC §6 prints them, so that no host merges the two itself.

use crate::hook_log::{Log, Output};
use crate::json::BufferTooSmall;

use super::Wrapper;

impl<H: Log> Wrapper<'_, H> {
    /// The next frame or hook event, in SPEC order: a hook comes right after the frame that
    /// was queued last when it fired (and before any frame when none was). Frames are
    /// written into `buf` as by [`poll_transmit`](Self::poll_transmit): a short buffer is
    /// refused with the size needed and the frame stays. The hook event handed out is
    /// forgotten at the next call. Drain it like `poll_transmit`, until `Ok(None)`.
    #[must_use = "a frame taken from the queue must be written where its route says"]
    pub fn poll_output(&mut self, buf: &mut [u8]) -> Result<Option<Output<'_>>, BufferTooSmall> {
        if self.hook_out {
            self.out.hooks.drop_oldest();
            self.hook_out = false;
        }
        let due = self
            .out
            .hooks
            .oldest()
            .is_some_and(|e| e.event.call().seq <= self.transmitted);
        if due {
            self.hook_out = true;
            return Ok(self.out.hooks.oldest().map(Output::Hook));
        }
        Ok(self.poll_transmit(buf)?.map(Output::Frame))
    }
}
