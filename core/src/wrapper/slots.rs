//! Pending-call slots and the handles that name them.
//!
//! The host hands in an array of [`Slot`]s (metadata) and the arena holds each
//! slot's bytes: name, id, args and the outcome (the result an adapter recorded,
//! then the result or error the call ended with). A call that has ended keeps its
//! slot until its `TOOL_RESULT` is transmitted, which is encoded from these bytes
//! then. [`Slots`] is the one view through which the wrapper reaches both.

use crate::clock::Instant;
use crate::error::CallError;
use crate::frame::write::OutFrame;
use crate::json::{self, JsonStr};
use crate::outcome::CallOutcome;
use crate::queue::SlotFrame;
use crate::route::CallHandle;
use crate::texts::CANCELLED_AT;
use crate::tool::PendingKind;

use super::config::WrapperConfig;
use super::pipeline::CallRef;
use super::scratch::valid_utf8_prefix;

/// Where the call in a slot is in its life: it starts pending and ends once.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum SlotState {
    /// No call has used the slot.
    #[default]
    Free,
    /// Its call waits, run by the host or by its tool adapter.
    Pending(PendingKind),
    /// Its call ended so. While `queued`, its frames still wait in the output queue and the
    /// slot stays taken; after, the slot is free, and how its last call ended answers late
    /// inputs for it.
    Ended { how: Ended, queued: bool },
}

/// How a call ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Ended {
    /// With a result or an error (from a sync tool, the host, its adapter, or a check).
    Completed,
    /// Its deadline passed.
    TimedOut,
    /// The host cancelled it.
    Cancelled,
}

/// What an adapter call kept of its adapter's first `TOOL_RESULT`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum AdapterResult {
    /// No `TOOL_RESULT` yet.
    #[default]
    Nothing,
    /// A result of this many bytes, compact, in the slot's result buffer.
    Kept(u32),
    /// A result over `result_cap`: the call fails when it ends (SPEC §7.23).
    TooLarge,
}

/// What an ended call's outcome area holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Stored {
    #[default]
    None,
    /// A compact result of this many bytes.
    Result(u32),
    /// An error message (decoded UTF-8) of this many bytes.
    Error(u32),
}

/// One pending-call slot. Opaque: hand the wrapper an array of [`Slot::EMPTY`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Slot {
    state: SlotState,
    index: u32,
    tool: u16,
    name_len: u16,
    id_len: Option<u16>,
    args_len: u32,
    adapter_result: AdapterResult,
    outcome: Stored,
    timeout_ms: u32,
    deadline: Instant,
    /// `start + max_total_timeout_ms` for an adapter call whose progress restarts its
    /// timeout (SPEC §5); meaningless when the cap is off or the call is deferred (a plain
    /// instant, not an option: it keeps `Slot` 8 bytes smaller).
    cap: Instant,
    /// Whether `poll_event` has told the host of this call.
    event_sent: bool,
}

impl Slot {
    /// A free slot.
    pub const EMPTY: Slot = Slot {
        state: SlotState::Free,
        index: 0,
        tool: 0,
        name_len: 0,
        id_len: None,
        args_len: 0,
        adapter_result: AdapterResult::Nothing,
        outcome: Stored::None,
        timeout_ms: 0,
        deadline: Instant::ZERO,
        cap: Instant::ZERO,
        event_sent: false,
    };

    pub(crate) fn is_pending(&self) -> bool {
        matches!(self.state, SlotState::Pending(_))
    }

    /// How its call runs, while it is pending.
    pub(crate) fn pending_kind(&self) -> Option<PendingKind> {
        match self.state {
            SlotState::Pending(kind) => Some(kind),
            _ => None,
        }
    }

    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    pub(crate) fn tool(&self) -> usize {
        self.tool as usize
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The span whose end is the deadline, for the timeout message: the cap's when the
    /// deadline is the cap (SPEC §5), else the timeout.
    pub(crate) fn span_ms(&self, max_total_ms: u32) -> u32 {
        match self.is_capped(max_total_ms) && self.cap == self.deadline {
            true => max_total_ms,
            false => self.timeout_ms,
        }
    }

    // Equivalent mutant: -> `true`, `&&` -> `||`, `> 0` -> `>= 0`: `restart` sees only adapter
    // calls, and with no total cap their cap is the start, which never moves the deadline; in
    // `span_ms` the cap equals the deadline only with a zero timeout (both spans 0) or, for a
    // deferred call, when both spans are the same number.
    /// Whether progress restarts this call's timeout, up to its cap.
    fn is_capped(&self, max_total_ms: u32) -> bool {
        max_total_ms > 0 && self.pending_kind() == Some(PendingKind::Adapter)
    }

    pub(crate) fn adapter_result(&self) -> AdapterResult {
        self.adapter_result
    }
}

/// The sizes of one slot's buffers (`WrapperConfig::check` keeps them in these types).
#[derive(Copy, Clone, Debug)]
struct Layout {
    name_cap: u16,
    id_cap: u16,
    args_cap: u32,
    result_cap: u32,
    /// The outcome area: a result or an error message.
    outcome_cap: u32,
}

/// A new call for a free slot.
pub(crate) struct NewCall<'c> {
    pub(crate) index: u32,
    pub(crate) tool: usize,
    pub(crate) kind: PendingKind,
    pub(crate) name: &'c [u8],
    pub(crate) id: Option<&'c [u8]>,
    /// Raw args, stored compact; they fit `args_cap` compact (checked by the caller).
    pub(crate) args: &'c [u8],
    /// The args are known to be compact already: copied, not compacted.
    pub(crate) args_compact: bool,
    pub(crate) timeout_ms: u32,
    /// When it started.
    pub(crate) now: Instant,
    /// SPEC §5's cap on progress restarts, for an adapter call (0: none).
    pub(crate) max_total_ms: u32,
}

/// The slots and their bytes.
pub(crate) struct Slots<'a> {
    slots: &'a mut [Slot],
    bytes: &'a mut [u8],
    layout: Layout,
}

impl<'a> Slots<'a> {
    pub(crate) fn new(slots: &'a mut [Slot], bytes: &'a mut [u8], cfg: &WrapperConfig) -> Self {
        for s in slots.iter_mut() {
            *s = Slot::EMPTY;
        }
        Self {
            slots,
            bytes,
            layout: Layout {
                name_cap: cfg.name_cap as u16,
                id_cap: cfg.id_cap as u16,
                args_cap: cfg.args_cap as u32,
                result_cap: cfg.result_cap as u32,
                outcome_cap: cfg.outcome_area() as u32,
            },
        }
    }

    /// How many slots there are.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn get(&self, slot: usize) -> &Slot {
        &self.slots[slot]
    }

    /// The pending slots, with their positions.
    pub(crate) fn pending(&self) -> impl Iterator<Item = (usize, &Slot)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_pending())
    }

    /// A slot no call holds.
    pub(crate) fn free_slot(&self) -> Option<usize> {
        self.slots.iter().position(|s| {
            matches!(
                s.state,
                SlotState::Free | SlotState::Ended { queued: false, .. }
            )
        })
    }

    /// The first slot of an ended call whose frames wait in the queue.
    pub(crate) fn queued_slot(&self) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| matches!(s.state, SlotState::Ended { queued: true, .. }))
    }

    /// The byte ranges of `slot`'s name, id, args and outcome buffers.
    fn ranges(&self, slot: usize) -> [core::ops::Range<usize>; 4] {
        let l = self.layout;
        let (name_cap, id_cap) = (l.name_cap as usize, l.id_cap as usize);
        let (args_cap, outcome_cap) = (l.args_cap as usize, l.outcome_cap as usize);
        let name = slot * (name_cap + id_cap + args_cap + outcome_cap);
        let id = name + name_cap;
        let args = id + id_cap;
        let outcome = args + args_cap;
        [
            name..id,
            id..args,
            args..outcome,
            outcome..outcome + outcome_cap,
        ]
    }

    /// Whether a pending call has the id `id` (decoded, compared exactly: SPEC §7.19).
    pub(crate) fn holds_id(&self, id: JsonStr<'_>) -> bool {
        self.pending().any(|(k, s)| {
            s.id_len.is_some_and(|n| {
                let at = self.ranges(k)[1].start;
                id.eq_text(&self.bytes[at..at + n as usize])
            })
        })
    }

    /// The name, id and args of the call in `slot` (pending, or just released).
    pub(crate) fn call(&self, slot: usize) -> CallRef<'_> {
        let s = &self.slots[slot];
        let [name, id, args, _] = self.ranges(slot);
        CallRef {
            index: s.index,
            name: Some(valid_utf8_prefix(
                &self.bytes[name.start..name.start + s.name_len as usize],
            )),
            id: s
                .id_len
                .map(|n| valid_utf8_prefix(&self.bytes[id.start..id.start + n as usize])),
            args: &self.bytes[args.start..args.start + s.args_len as usize],
            args_compact: true,
            // Stored decoded: escaped again when written.
            names_plain: false,
        }
    }

    /// Stores the outcome of the call in `slot`: a result (compacted, or copied when known
    /// `compact`; it fits `result_cap` compact) or an error message (at most `message_cap`
    /// bytes of UTF-8).
    pub(crate) fn set_outcome(&mut self, slot: usize, outcome: CallOutcome<'_>, compact: bool) {
        let area = self.ranges(slot)[3].clone();
        let area = &mut self.bytes[area];
        self.slots[slot].outcome = match outcome {
            // Equivalent mutant: the `compact` guard -> `false`: compacting a compact result copies
            // it.
            CallOutcome::Result(raw) if compact => {
                let n = raw.len().min(area.len());
                area[..n].copy_from_slice(&raw[..n]);
                Stored::Result(n as u32)
            }
            CallOutcome::Result(raw) => Stored::Result(json::compact_into(raw, area) as u32),
            CallOutcome::Error(text) => {
                let n = text.len().min(area.len());
                area[..n].copy_from_slice(&text.as_bytes()[..n]);
                Stored::Error(n as u32)
            }
        };
    }

    /// Takes the adapter's kept result, already in the outcome area, as the outcome.
    pub(crate) fn take_kept_result(&mut self, slot: usize) {
        if let AdapterResult::Kept(n) = self.slots[slot].adapter_result {
            self.slots[slot].outcome = Stored::Result(n);
        }
    }

    /// The outcome stored by [`set_outcome`](Self::set_outcome) or [`take_kept_result`](Self::take_kept_result).
    pub(crate) fn outcome(&self, slot: usize) -> CallOutcome<'_> {
        let at = self.ranges(slot)[3].start;
        match self.slots[slot].outcome {
            Stored::Result(n) => CallOutcome::Result(&self.bytes[at..at + n as usize]),
            Stored::Error(n) => {
                CallOutcome::Error(valid_utf8_prefix(&self.bytes[at..at + n as usize]))
            }
            Stored::None => CallOutcome::Result(b"null"),
        }
    }

    /// A frame of the call in `slot`, encoded from its bytes.
    pub(crate) fn frame(&self, slot: usize, frame: SlotFrame) -> OutFrame<'_> {
        let call = self.call(slot);
        let (id, name) = (call.id_bytes(), call.name_bytes().unwrap_or(b""));
        match frame {
            SlotFrame::ToolCall => OutFrame::ToolCall {
                id,
                name,
                args: call.args,
            },
            // A cancel's reason is what follows `Tool <name> cancelled: ` in its message.
            SlotFrame::Cancel => OutFrame::Cancel {
                id,
                name,
                reason: match (self.slots[slot].state, self.outcome(slot)) {
                    (
                        SlotState::Ended {
                            how: Ended::Cancelled,
                            ..
                        },
                        CallOutcome::Error(m),
                    ) => m.as_bytes().get(CANCELLED_AT + name.len()..).unwrap_or(b""),
                    _ => b"timeout",
                },
            },
            SlotFrame::ToolResult => OutFrame::ToolResult {
                id,
                name: Some(name),
                outcome: self.outcome(slot),
            },
        }
    }

    /// Puts a new call in the free `slot`.
    pub(crate) fn occupy(&mut self, slot: usize, call: NewCall<'_>) -> CallHandle {
        let [name, id, args, _] = self.ranges(slot);
        self.bytes[name.start..name.start + call.name.len()].copy_from_slice(call.name);
        if let Some(i) = call.id {
            self.bytes[id.start..id.start + i.len()].copy_from_slice(i);
        }
        let timeout = call.now.saturating_add_millis(call.timeout_ms as u64);
        let capped = call.kind == PendingKind::Adapter && call.max_total_ms > 0;
        let cap = call.now.saturating_add_millis(call.max_total_ms as u64);
        let deadline = match capped {
            true => timeout.min(cap),
            false => timeout,
        };
        let area = &mut self.bytes[args];
        let args_len = match call.args_compact {
            true => {
                let n = call.args.len().min(area.len());
                area[..n].copy_from_slice(&call.args[..n]);
                n
            }
            false => json::compact_into(call.args, area),
        };
        self.slots[slot] = Slot {
            state: SlotState::Pending(call.kind),
            index: call.index,
            tool: call.tool as u16,
            name_len: call.name.len() as u16,
            id_len: call.id.map(|i| i.len() as u16),
            args_len: args_len as u32,
            adapter_result: AdapterResult::Nothing,
            outcome: Stored::None,
            timeout_ms: call.timeout_ms,
            deadline,
            cap,
            event_sent: false,
        };
        CallHandle::new(slot as u16, call.index)
    }

    /// Keeps an adapter's first result, compact, or notes that it is too large.
    pub(crate) fn keep_result(&mut self, slot: usize, raw: &[u8]) {
        let cap = self.layout.result_cap as usize;
        let fits = raw.len() <= cap || json::compact_len(raw) <= cap;
        let result = self.ranges(slot)[3].clone();
        self.slots[slot].adapter_result = match fits {
            true => AdapterResult::Kept(json::compact_into(raw, &mut self.bytes[result]) as u32),
            false => AdapterResult::TooLarge,
        };
    }

    /// A `PROGRESS` from the adapter of the call in `slot` at `now`: its deadline becomes
    /// `now + timeout`, never past its cap and never earlier (SPEC §5). Without a cap,
    /// nothing changes.
    pub(crate) fn restart(&mut self, slot: usize, now: Instant, max_total_ms: u32) {
        let s = &mut self.slots[slot];
        if s.is_capped(max_total_ms) {
            let restarted = now.saturating_add_millis(s.timeout_ms as u64).min(s.cap);
            s.deadline = s.deadline.max(restarted);
        }
    }

    /// Ends the call in `slot`: no longer pending, its bytes kept for the frames still queued.
    pub(crate) fn end(&mut self, slot: usize, how: Ended) {
        self.slots[slot].state = SlotState::Ended { how, queued: true };
    }

    /// Frees an ended call's `slot` (its `TOOL_RESULT` was transmitted, or encoded into the
    /// queue); its index and how it ended stay for refusing late inputs.
    pub(crate) fn free(&mut self, slot: usize) {
        if let SlotState::Ended { how, queued: true } = self.slots[slot].state {
            self.slots[slot].state = SlotState::Ended { how, queued: false };
        }
    }

    /// The slot of the call `handle` names, if that call is waiting at `now`.
    pub(crate) fn waiting(
        &self,
        now: Instant,
        handle: CallHandle,
        next_index: u32,
    ) -> Result<usize, CallError> {
        let slot = handle.slot() as usize;
        let Some(s) = self.slots.get(slot) else {
            return Err(CallError::Unknown);
        };
        if s.index == handle.index() {
            return match s.state {
                SlotState::Ended { how, .. } => Err(match how {
                    Ended::TimedOut => CallError::TimedOut,
                    Ended::Cancelled => CallError::Cancelled,
                    Ended::Completed => CallError::Completed,
                }),
                SlotState::Free => Err(CallError::Unknown),
                SlotState::Pending(_) if now >= s.deadline => Err(CallError::TimedOut),
                SlotState::Pending(_) => Ok(slot),
            };
        }
        if handle.index() < next_index {
            Err(CallError::Stale)
        } else {
            Err(CallError::Unknown)
        }
    }

    /// The oldest pending call the host has not been told of; marks it told.
    pub(crate) fn take_unannounced(&mut self, next_index: u32) -> Option<usize> {
        let slot = self
            .pending()
            .filter(|(_, s)| !s.event_sent)
            .min_by_key(|(_, s)| s.index.wrapping_sub(next_index))
            .map(|(i, _)| i)?;
        self.slots[slot].event_sent = true;
        Some(slot)
    }

    /// The earliest deadline of a pending call.
    pub(crate) fn earliest_deadline(&self) -> Option<Instant> {
        self.pending().map(|(_, s)| s.deadline).min()
    }
}
