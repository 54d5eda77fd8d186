//! Ending pending calls before they complete: by their deadline (`handle_timeout`) or by the
//! host (`cancel`), oldest first, adapters told with `CANCEL` (SPEC §5, §7.5, §7.18).

use crate::clock::Instant;
use crate::error::Error;
use crate::hooks::Hooks;
use crate::outcome::CallOutcome;
use crate::queue::SlotFrame;
use crate::room::record_cost;
use crate::route::Route;
use crate::texts::Message;

use super::pipeline::Delivery;
use super::scratch::valid_utf8_prefix;
use super::slots::{Ended, Slot};
use super::Wrapper;
use crate::frame::write::escaped_len;
use crate::json::escape::escaped_prefix;
use crate::route::CallHandle;
use crate::texts::CANCELLED_AT;
use crate::tool::PendingKind;

/// Why calls are being ended.
#[derive(Copy, Clone)]
enum Ending<'r> {
    /// Their deadline passed.
    Timeout,
    /// The host cancelled them, for this reason.
    Cancel(&'r [u8]),
}

impl<'r> Ending<'r> {
    /// The error the call ends with.
    fn message<'m>(self, name: &'m [u8], s: &Slot, max_total_ms: u32) -> Message<'m>
    where
        'r: 'm,
    {
        match self {
            Ending::Cancel(r) => Message::Cancelled(name, r),
            Ending::Timeout => Message::TimedOut(name, s.span_ms(max_total_ms)),
        }
    }
}

impl<H: Hooks> Wrapper<'_, H> {
    /// Gives the clock: every call at or past its deadline fails with a timeout (adapters get
    /// `CANCEL` first), in deadline order. When the queue fills up first, the rest stay due:
    /// [`poll_timeout`](Self::poll_timeout) keeps reporting them, so drain and call again.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
        self.clock.check(now)?;
        self.end_where(|s| now >= s.deadline(), Ending::Timeout)?;
        self.clock.advance(now);
        Ok(())
    }

    /// Completes every pending call, oldest first, with `Tool <name> cancelled: <reason>`
    /// (adapters get `CANCEL` first). Returns how many are still pending because the queue
    /// filled up first: drain `poll_transmit` and call again until it returns `Ok(0)`.
    pub fn cancel(&mut self, now: Instant, reason: &str) -> Result<usize, Error> {
        self.clock.check(now)?;
        let left = self.end_where(|_| true, Ending::Cancel(reason.as_bytes()))?;
        self.clock.advance(now);
        Ok(left)
    }

    /// Ends the pending calls `pick` selects, in (deadline, index) order for timeouts and
    /// index order for cancel, one at a time while the queue has room. Returns how many
    /// selected calls are left; refuses (changing nothing) only when not even the first fits.
    fn end_where(
        &mut self,
        pick: impl Fn(&Slot) -> bool,
        ending: Ending<'_>,
    ) -> Result<usize, Error> {
        let next = self.next_index;
        let order = |s: &Slot| match ending {
            Ending::Cancel(_) => (Instant::ZERO, s.index().wrapping_sub(next)),
            Ending::Timeout => (s.deadline(), s.index().wrapping_sub(next)),
        };
        let how = match ending {
            Ending::Cancel(_) => Ended::Cancelled,
            Ending::Timeout => Ended::TimedOut,
        };
        let mut ended_any = false;
        while let Some(slot) = self
            .slots
            .pending()
            .filter(|(_, s)| pick(s))
            .min_by_key(|(_, s)| order(s))
            .map(|(i, _)| i)
        {
            let s = *self.slots.get(slot);
            let adapter = s.pending_kind() == Some(PendingKind::Adapter);
            // Records only: the `CANCEL` and `TOOL_RESULT` are encoded from the slot.
            let mut need = self.out.slot_completion_cost(&self.cfg);
            if adapter {
                need += record_cost(0);
            }
            if let Err(e) = self.out.reserve(need) {
                if !ended_any {
                    return Err(e);
                }
                return Ok(self.slots.pending().filter(|(_, s)| pick(s)).count());
            }
            if adapter {
                let handle = CallHandle::new(slot as u16, s.index());
                let route = Route::Adapter(handle);
                self.out
                    .queue
                    .push_slot(route, SlotFrame::Cancel, slot as u16, s.index());
            }
            match ending {
                Ending::Timeout => debug!("call {} timed out", s.index()),
                Ending::Cancel(_) => debug!("call {} cancelled", s.index()),
            }
            let name = self.slots.call(slot).name_bytes().unwrap_or(b"");
            // The host's reason is cut, never refused, so that the message fits `message_cap`
            // once escaped (as far as the name, kept whole, allows): every call ends.
            let (this_call, cut) = match ending {
                Ending::Cancel(reason) => {
                    let head = escaped_len(name) + CANCELLED_AT;
                    let room = self.cfg.message_cap.saturating_sub(head);
                    let kept = escaped_prefix(reason, room);
                    (Ending::Cancel(&reason[..kept]), kept < reason.len())
                }
                Ending::Timeout => (Ending::Timeout, false),
            };
            let msg = this_call.message(name, &s, self.cfg.max_total_timeout_ms);
            let message = valid_utf8_prefix(msg.compose(self.scratch.message(&self.cfg)));
            if cut {
                self.out.stats.messages_truncated =
                    self.out.stats.messages_truncated.saturating_add(1);
            }
            self.slots
                .set_outcome(slot, CallOutcome::Error(message), true);
            let call = self.slots.call(slot);
            let delivery = Delivery::FromSlot(slot as u16);
            self.out.fail(&self.cfg, call, message, delivery);
            self.slots.end(slot, how);
            ended_any = true;
        }
        Ok(0)
    }
}
