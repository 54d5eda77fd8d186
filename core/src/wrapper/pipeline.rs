//! The completion pipeline and the round it closes (SPEC §3.2): trace, last tool error,
//! `TOOL_RESULT`, hook, pending count, then the prompt (or the round-limit `ERROR`) and
//! the held `END`s.

use crate::error::Error;
use crate::frame::write::{Known, OutFrame};
use crate::held::Held;
use crate::hooks::{CallInfo, Hooks};
use crate::json;
use crate::json::escape::escaped_prefix;
use crate::outcome::CallOutcome;
use crate::queue::{Queue, SlotFrame};
use crate::room::{record_cost, RELEASE_COST_BOUND};
use crate::route::Route;
use crate::trace::Trace;

use super::config::WrapperConfig;
use super::result::{LastError, SUCCESS_FALSE};

/// A call's name, id and args while it completes (from the frame or from its slot).
#[derive(Copy, Clone)]
pub(crate) struct CallRef<'c> {
    pub(crate) index: u32,
    /// Kept as text so the hooks' `CallInfo` needs no UTF-8 check per hook.
    pub(crate) name: Option<&'c str>,
    pub(crate) id: Option<&'c str>,
    pub(crate) args: &'c [u8],
    /// The args have no white space between their tokens (validated so, or stored compact).
    pub(crate) args_compact: bool,
    /// The name and id were read from the frame without escapes: they need none.
    pub(crate) names_plain: bool,
}

impl<'c> CallRef<'c> {
    fn info(&self, seq: u64) -> CallInfo<'c> {
        CallInfo {
            seq,
            index: self.index,
            name: self.name,
            id: self.id,
            args: self.args,
        }
    }

    pub(crate) fn name_bytes(&self) -> Option<&'c [u8]> {
        self.name.map(str::as_bytes)
    }

    pub(crate) fn id_bytes(&self) -> Option<&'c [u8]> {
        self.id.map(str::as_bytes)
    }
}

/// Counters for what was cut or refused rather than lost silently.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WrapperStats {
    /// Continue prompts written.
    pub rounds: u32,
    /// Error messages from sync tools and tool adapters cut to fit `message_cap` once escaped.
    pub messages_truncated: u32,
    /// Last tool errors cut to `message_cap` in the prompt.
    pub last_error_truncated: u32,
}

/// How a completion's `TOOL_RESULT` is queued.
#[derive(Copy, Clone)]
pub(crate) enum Delivery {
    /// Encoded now: the call never took a slot.
    Now,
    /// Encoded from this slot, where the outcome was stored, when it is transmitted.
    FromSlot(u16),
}

/// What records and sends completions, and closes rounds.
pub(crate) struct Pipeline<'a, H> {
    pub(crate) hooks: H,
    pub(crate) queue: Queue<'a>,
    pub(crate) trace: Trace<'a>,
    pub(crate) held: Held<'a>,
    /// The last tool error, decoded, cut so that escaped it fits `message_cap`.
    last_error: &'a mut [u8],
    last_error_len: Option<usize>,
    pub(crate) pending: usize,
    pub(crate) aborted: bool,
    pub(crate) stats: WrapperStats,
}

impl<'a, H: Hooks> Pipeline<'a, H> {
    pub(crate) fn new(
        hooks: H,
        queue: Queue<'a>,
        trace: Trace<'a>,
        held: Held<'a>,
        last_error: &'a mut [u8],
    ) -> Self {
        Self {
            hooks,
            queue,
            trace,
            held,
            last_error,
            last_error_len: None,
            pending: 0,
            aborted: false,
            stats: WrapperStats::default(),
        }
    }

    /// Queue bytes a completion may need, the round's end included: `escaped`, the call's
    /// id and name escaped lengths; `outcome_len`, its result's or quoted, escaped error's.
    pub(crate) fn completion_cost(
        &self,
        cfg: &WrapperConfig,
        (id, name): (Option<usize>, Option<usize>),
        outcome_len: usize,
    ) -> usize {
        record_cost(crate::frame::write::tool_result_len(id, name, outcome_len))
            + self.end_cost(cfg)
    }

    /// Queue bytes completing a call whose outcome is in its slot may need, the round's
    /// end included.
    pub(crate) fn slot_completion_cost(&self, cfg: &WrapperConfig) -> usize {
        record_cost(0) + self.end_cost(cfg)
    }

    /// Queue bytes ending the round now may need.
    pub(crate) fn end_cost(&self, cfg: &WrapperConfig) -> usize {
        cfg.round_end_len() - RELEASE_COST_BOUND + self.held.release_cost()
    }

    /// Refuses, changing nothing, unless `needed` queue bytes are free.
    pub(crate) fn reserve(&self, needed: usize) -> Result<(), Error> {
        self.queue.reserve(needed).map_err(|q| Error::QueueFull {
            needed: q.needed,
            free: q.free,
        })
    }

    /// Completes `call` with an error message (SPEC §3.2).
    pub(crate) fn fail(
        &mut self,
        cfg: &WrapperConfig,
        call: CallRef<'_>,
        message: &str,
        delivery: Delivery,
    ) {
        self.complete_with(cfg, call, CallOutcome::Error(message), true, None, delivery);
    }

    /// SPEC §3.2: trace, last error, `TOOL_RESULT`, hook, pending, prompt, released `END`s.
    /// `result_compact`: a result outcome is known to have no white space between its
    /// tokens (an error outcome has no raw value: either is right).
    pub(crate) fn complete_with(
        &mut self,
        cfg: &WrapperConfig,
        call: CallRef<'_>,
        outcome: CallOutcome<'_>,
        result_compact: bool,
        source: Option<LastError<'_>>,
        delivery: Delivery,
    ) {
        let args = (call.args, call.args_compact);
        self.trace
            .push_known(call.name_bytes(), args, outcome, result_compact);
        match (outcome, source) {
            (CallOutcome::Error(e), _) => self.set_last_error(e.as_bytes()),
            (CallOutcome::Result(_), Some(source)) => self.set_last_error_from(source),
            (CallOutcome::Result(_), None) => {}
        }
        match delivery {
            Delivery::Now => {
                let frame = OutFrame::ToolResult {
                    id: call.id_bytes(),
                    name: call.name_bytes(),
                    outcome,
                };
                let known = Known {
                    raw_compact: result_compact,
                    names_plain: call.names_plain,
                };
                self.queue.push_known(Route::Model, &frame, known);
            }
            Delivery::FromSlot(slot) => {
                self.queue
                    .push_slot(Route::Model, SlotFrame::ToolResult, slot, call.index)
            }
        }
        debug!(
            "call {} ended: {}",
            call.index,
            matches!(outcome, CallOutcome::Result(_))
        );
        self.hooks
            .on_tool_result(&call.info(self.queue.pushed()), outcome);
        self.pending = self.pending.saturating_sub(1);
        if self.pending == 0 {
            self.end(cfg);
        }
    }

    /// A call was intercepted: its hook, and one more pending.
    pub(crate) fn start(&mut self, call: &CallRef<'_>) {
        self.hooks.on_tool_call(&call.info(self.queue.pushed()));
        self.pending += 1;
    }

    fn end(&mut self, cfg: &WrapperConfig) {
        if !self.aborted {
            if cfg.max_rounds > 0 && self.stats.rounds >= cfg.max_rounds {
                let frame = OutFrame::RoundLimit {
                    max_rounds: cfg.max_rounds,
                };
                self.queue.push(Route::Consumer, &frame);
                self.aborted = true;
                debug!("round limit {} reached", cfg.max_rounds);
            } else {
                self.stats.rounds = self.stats.rounds.saturating_add(1);
                let prompt = OutFrame::Prompt {
                    last_error: self.last_error_len.map(|n| &self.last_error[..n]),
                };
                match cfg.mirror_continue {
                    true => self.queue.push_mirrored(&prompt),
                    false => self.queue.push(Route::Model, &prompt),
                }
                debug!("round {} ended with a prompt", self.stats.rounds);
            }
        }
        self.last_error_len = None;
        if let Some((offset, count)) = self.held.release() {
            debug!("{} held ENDs released", count);
            self.queue.push_held(offset, count);
        }
    }

    /// Sets the last tool error to `text` (decoded), cut so that escaped it fits.
    fn set_last_error(&mut self, text: &[u8]) {
        // Every failure message is at most `message_cap` bytes where it enters, so only its
        // escapes can cut it; the `min` keeps a broken invariant from panicking.
        debug_assert!(text.len() <= self.last_error.len());
        let n = text.len().min(self.last_error.len());
        self.last_error[..n].copy_from_slice(&text[..n]);
        // Equivalent mutant: `<` -> `>`: every failure message fits `message_cap` where it enters
        // (the assertion above), so `n == text.len()` and both forms are false.
        self.cut_last_error(n, n < text.len());
    }

    fn set_last_error_from(&mut self, source: LastError<'_>) {
        // Escaped text is never shorter than the text: `message_cap` bytes of it are enough.
        let (n, cut) = match source {
            LastError::Text(s) => {
                let (decoded, cut) = s.decode_prefix_into(self.last_error);
                (decoded.len(), cut)
            }
            LastError::Raw(raw) => {
                let n = json::compact_into(raw, self.last_error);
                (n, n == self.last_error.len() && json::compact_len(raw) > n)
            }
            LastError::SuccessFalse => return self.set_last_error(SUCCESS_FALSE),
        };
        self.cut_last_error(n, cut);
    }

    /// Keeps the longest prefix of the first `len` bytes that fits `message_cap` escaped.
    fn cut_last_error(&mut self, len: usize, cut: bool) {
        let n = escaped_prefix(&self.last_error[..len], self.last_error.len());
        self.last_error_len = Some(n);
        if cut || n < len {
            self.stats.last_error_truncated = self.stats.last_error_truncated.saturating_add(1);
        }
    }
}
