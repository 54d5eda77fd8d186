//! Completing pending calls: by the host (`complete`, deferred calls) and by tool adapters
//! (their frames and their closing, SPEC §2).

use crate::call::{read_adapter_frame, AdapterStep};
use crate::clock::Instant;
use crate::error::{CallError, Error};
use crate::frame::Frame;
use crate::hooks::Hooks;
use crate::json;
use crate::json::escape::escaped_prefix;
use crate::outcome::CallOutcome;
use crate::texts::Message;

use super::pipeline::Delivery;
use super::result::{check_result, result_error, ResultCheck};
use super::scratch::{compose_into, valid_utf8_prefix};
use super::slots::{AdapterResult, Ended};
use super::{Completed, Wrapper};
use crate::route::CallHandle;
use crate::tool::PendingKind;

/// Reserves what completing the call in `slot` costs, stores the outcome in the slot (its
/// `TOOL_RESULT` is encoded from there when transmitted), completes the call and ends it. A
/// macro rather than a method: the outcome may borrow scratch or the host's bytes, which a
/// `&mut self` method could not also take.
macro_rules! complete_slot {
    ($w:ident, $slot:expr, $outcome:expr, $compact:expr, $last_error:expr) => {{
        $w.out.reserve($w.out.slot_completion_cost(&$w.cfg))?;
        $w.slots.set_outcome($slot, $outcome, $compact);
        let call = $w.slots.call($slot);
        let delivery = Delivery::FromSlot($slot as u16);
        $w.out
            .complete_with(&$w.cfg, call, $outcome, $compact, $last_error, delivery);
        $w.slots.end($slot, Ended::Completed);
    }};
}

impl<H: Hooks> Wrapper<'_, H> {
    /// Completes a deferred call with a raw JSON result or an error message.
    ///
    /// A result that is not JSON is refused ([`Error::InvalidResult`]), changing nothing. A
    /// valid result the wrapper cannot carry — longer than `result_cap` once its white space
    /// is dropped, or nested deeper than `max_depth` — completes the call with the error the
    /// model is told (SPEC §7.23), and the return value says so.
    pub fn complete(
        &mut self,
        now: Instant,
        handle: CallHandle,
        outcome: Result<&[u8], &str>,
    ) -> Result<Completed, Error> {
        self.clock.check(now)?;
        let slot = self.waiting(now, handle, PendingKind::Deferred)?;
        let name = self.slots.call(slot).name_bytes().unwrap_or(b"");
        let (failure, completed) = match outcome {
            Ok(raw) => match check_result(raw, &self.cfg) {
                ResultCheck::Invalid(e) => return Err(Error::InvalidResult(e)),
                ResultCheck::Fits {
                    last_error,
                    compact,
                } => {
                    let outcome = CallOutcome::Result(json::trim_ws(raw));
                    complete_slot!(self, slot, outcome, compact, last_error);
                    self.clock.advance(now);
                    return Ok(Completed::AsGiven);
                }
                ResultCheck::TooLarge(len) => (
                    Message::ResultTooLarge(name, self.cfg.result_cap),
                    Completed::ResultTooLarge {
                        len,
                        cap: self.cfg.result_cap,
                    },
                ),
                ResultCheck::TooDeep => (
                    Message::ResultTooDeep(name, self.cfg.max_depth),
                    Completed::ResultTooDeep {
                        max_depth: self.cfg.max_depth,
                    },
                ),
            },
            Err(msg) => {
                // Cut to fit `message_cap` once escaped, never refused (as a sync tool's
                // message is): the call ends, and the return value says it was cut.
                let n = escaped_prefix(msg.as_bytes(), self.cfg.message_cap);
                let text = valid_utf8_prefix(&msg.as_bytes()[..n]);
                complete_slot!(self, slot, CallOutcome::Error(text), true, None);
                self.clock.advance(now);
                if n == msg.len() {
                    return Ok(Completed::AsGiven);
                }
                self.out.stats.messages_truncated =
                    self.out.stats.messages_truncated.saturating_add(1);
                return Ok(Completed::MessageCut {
                    len: msg.len(),
                    cap: self.cfg.message_cap,
                });
            }
        };
        let message = compose_into(self.scratch.message(&self.cfg), &failure);
        complete_slot!(self, slot, CallOutcome::Error(message), true, None);
        self.clock.advance(now);
        Ok(completed)
    }

    /// Fails a deferred call whose result the host could not write as JSON (its serialiser
    /// failed, or the value has no JSON form), with the error a sync tool's invalid output
    /// gets, `Tool <name> returned invalid JSON`: the library owns that text, so a binding
    /// never composes it. Refused as [`complete`](Self::complete) is when the call is not
    /// waiting.
    pub fn complete_unwritable(&mut self, now: Instant, handle: CallHandle) -> Result<(), Error> {
        self.clock.check(now)?;
        let slot = self.waiting(now, handle, PendingKind::Deferred)?;
        let name = self.slots.call(slot).name_bytes().unwrap_or(b"");
        let message = compose_into(self.scratch.message(&self.cfg), &Message::InvalidJson(name));
        complete_slot!(self, slot, CallOutcome::Error(message), true, None);
        self.clock.advance(now);
        Ok(())
    }

    /// A frame from a pending adapter call's tool adapter (fully validated; SPEC §2 rules).
    pub fn handle_adapter_frame(
        &mut self,
        now: Instant,
        handle: CallHandle,
        bytes: &[u8],
    ) -> Result<(), Error> {
        self.clock.check(now)?;
        let slot = self.waiting(now, handle, PendingKind::Adapter)?;
        let frame = Frame::parse_validated(bytes, self.cfg.max_depth)?;
        let kept = self.slots.get(slot).adapter_result() != AdapterResult::Nothing;
        match read_adapter_frame(&frame, kept)? {
            AdapterStep::Ignore => {}
            // Kept without white space; one that does not fit fails the call when it ends.
            AdapterStep::Record(raw) => self.slots.keep_result(slot, raw),
            AdapterStep::Fail(msg) => {
                let name = self.slots.call(slot).name_bytes().unwrap_or(b"");
                let cap = self.cfg.message_cap;
                // The adapter's message is cut, never refused, so the call still ends: to
                // its longest prefix that fits `message_cap` once escaped.
                let (message, cut) = match msg {
                    Some(m) => {
                        let (decoded, cut) = m.decode_prefix_into(self.scratch.message(&self.cfg));
                        let n = escaped_prefix(decoded.as_bytes(), cap);
                        (
                            valid_utf8_prefix(&decoded.as_bytes()[..n]),
                            cut || n < decoded.len(),
                        )
                    }
                    None => {
                        let failed = Message::Failed(name);
                        (
                            compose_into(self.scratch.message(&self.cfg), &failed),
                            false,
                        )
                    }
                };
                complete_slot!(self, slot, CallOutcome::Error(message), true, None);
                if cut {
                    self.out.stats.messages_truncated =
                        self.out.stats.messages_truncated.saturating_add(1);
                }
            }
            AdapterStep::End => self.adapter_end(slot)?,
            AdapterStep::Progress => self.slots.restart(slot, now, self.cfg.max_total_timeout_ms),
        }
        self.clock.advance(now);
        Ok(())
    }

    /// The adapter of a pending call closed its source: ends like `END`.
    pub fn handle_adapter_closed(&mut self, now: Instant, handle: CallHandle) -> Result<(), Error> {
        self.clock.check(now)?;
        let slot = self.waiting(now, handle, PendingKind::Adapter)?;
        self.adapter_end(slot)?;
        self.clock.advance(now);
        Ok(())
    }

    /// The slot of the call `handle` names, if it waits for an input of this kind.
    fn waiting(&self, now: Instant, handle: CallHandle, kind: PendingKind) -> Result<usize, Error> {
        let slot = self.slots.waiting(now, handle, self.next_index)?;
        if self.slots.get(slot).pending_kind() != Some(kind) {
            return Err(CallError::WrongKind.into());
        }
        Ok(slot)
    }

    /// Ends an adapter call with what it kept (SPEC §2.2), or fails it when that was too large.
    fn adapter_end(&mut self, slot: usize) -> Result<(), Error> {
        if self.slots.get(slot).adapter_result() == AdapterResult::TooLarge {
            let name = self.slots.call(slot).name_bytes().unwrap_or(b"");
            let msg = Message::ResultTooLarge(name, self.cfg.result_cap);
            let message = compose_into(self.scratch.message(&self.cfg), &msg);
            complete_slot!(self, slot, CallOutcome::Error(message), true, None);
            return Ok(());
        }
        // The kept result (or `null`) is already in the slot's outcome area.
        self.out.reserve(self.out.slot_completion_cost(&self.cfg))?;
        self.slots.take_kept_result(slot);
        let (call, outcome) = (self.slots.call(slot), self.slots.outcome(slot));
        let source = match outcome {
            CallOutcome::Result(result) => result_error(result, self.cfg.max_depth),
            CallOutcome::Error(_) => None,
        };
        let delivery = Delivery::FromSlot(slot as u16);
        // The kept result was stored compacted.
        self.out
            .complete_with(&self.cfg, call, outcome, true, source, delivery);
        self.slots.end(slot, Ended::Completed);
        Ok(())
    }
}
