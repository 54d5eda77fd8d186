//! Pending-call slots and the handles that name them.
//!
//! The host hands in an array of [`Slot`]s (metadata) and the arena holds each
//! slot's bytes: name, id, args and the outcome (the result an adapter recorded,
//! then the result or error the call ended with). A call that has ended keeps its
//! slot until its `TOOL_RESULT` is transmitted, which is encoded from these bytes
//! then. [`Slots`] is the one view through which the wrapper reaches both.

use crate::clock::Instant;
use crate::encode::OutFrame;
use crate::error::CallError;
use crate::json::{self, JsonStr};
use crate::message::CANCELLED_AT;
use crate::outcome::CallOutcome;
use crate::queue::SlotFrame;

use super::config::Config;
use super::round::CallRef;
use super::scratch::valid_utf8_prefix;

/// A pending call, as the host names it. The call index doubles as the slot's generation.
///
/// A handle belongs to the wrapper that issued it; given to another wrapper it names
/// whatever that wrapper has in the same slot under the same index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CallHandle {
    slot: u16,
    index: u32,
}

impl CallHandle {
    pub(crate) const fn new(slot: u16, index: u32) -> Self {
        Self { slot, index }
    }

    /// A handle from its parts, for bindings that carry handles across a boundary. A handle
    /// the wrapper did not issue names no waiting call: it is refused as unknown or stale.
    pub const fn from_parts(slot: u16, index: u32) -> Self {
        Self::new(slot, index)
    }

    /// The call's index (0-based, counting every intercepted `TOOL_CALL`).
    pub const fn index(&self) -> u32 {
        self.index
    }

    /// The slot the call occupies.
    pub const fn slot(&self) -> u16 {
        self.slot
    }
}

/// What a slot holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum SlotState {
    #[default]
    Free,
    Deferred,
    Adapter,
    /// Ended (no longer pending), its frames not all transmitted yet.
    Answered,
}

/// How the last call in a slot ended, for refusing late inputs with the right error.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum HowEnded {
    #[default]
    NotYet,
    Finished,
    TimedOut,
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
    /// A result over `result_cap`: the call fails when it settles (SPEC §7.23).
    TooLarge,
}

/// What an ended call's outcome area holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Answer {
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
    answer: Answer,
    timeout_ms: u32,
    deadline: Instant,
    /// `start + max_total_timeout_ms` for an adapter call whose progress restarts its
    /// timeout (SPEC §5); `None` when nothing restarts it.
    cap: Option<Instant>,
    /// Whether `poll_event` has told the host of this call.
    event_sent: bool,
    how_ended: HowEnded,
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
        answer: Answer::None,
        timeout_ms: 0,
        deadline: Instant::ZERO,
        cap: None,
        event_sent: false,
        how_ended: HowEnded::NotYet,
    };

    pub(crate) fn state(&self) -> SlotState {
        self.state
    }

    pub(crate) fn is_pending(&self) -> bool {
        matches!(self.state, SlotState::Deferred | SlotState::Adapter)
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
        match self.cap {
            Some(cap) if cap == self.deadline => max_total_ms,
            _ => self.timeout_ms,
        }
    }

    pub(crate) fn adapter_result(&self) -> AdapterResult {
        self.adapter_result
    }
}

/// The sizes of one slot's buffers (`Config::check` keeps them in these types).
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
    pub(crate) adapter: bool,
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
    pub(crate) fn new(slots: &'a mut [Slot], bytes: &'a mut [u8], cfg: &Config) -> Self {
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
        self.slots.iter().position(|s| s.state == SlotState::Free)
    }

    /// The first slot of an ended call whose frames wait in the queue.
    pub(crate) fn answered_slot(&self) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.state == SlotState::Answered)
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
    pub(crate) fn set_answer(&mut self, slot: usize, outcome: CallOutcome<'_>, compact: bool) {
        let area = self.ranges(slot)[3].clone();
        let area = &mut self.bytes[area];
        self.slots[slot].answer = match outcome {
            CallOutcome::Result(raw) if compact => {
                let n = raw.len().min(area.len());
                area[..n].copy_from_slice(&raw[..n]);
                Answer::Result(n as u32)
            }
            CallOutcome::Result(raw) => Answer::Result(json::compact_into(raw, area) as u32),
            CallOutcome::Error(text) => {
                let n = text.len().min(area.len());
                area[..n].copy_from_slice(&text.as_bytes()[..n]);
                Answer::Error(n as u32)
            }
        };
    }

    /// Takes the adapter's kept result, already in the outcome area, as the outcome.
    pub(crate) fn answer_kept(&mut self, slot: usize) {
        if let AdapterResult::Kept(n) = self.slots[slot].adapter_result {
            self.slots[slot].answer = Answer::Result(n);
        }
    }

    /// The outcome stored by [`set_answer`](Self::set_answer) or [`answer_kept`](Self::answer_kept).
    pub(crate) fn answer(&self, slot: usize) -> CallOutcome<'_> {
        let at = self.ranges(slot)[3].start;
        match self.slots[slot].answer {
            Answer::Result(n) => CallOutcome::Result(&self.bytes[at..at + n as usize]),
            Answer::Error(n) => {
                CallOutcome::Error(valid_utf8_prefix(&self.bytes[at..at + n as usize]))
            }
            Answer::None => CallOutcome::Result(b"null"),
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
                reason: match (self.slots[slot].how_ended, self.answer(slot)) {
                    (HowEnded::Cancelled, CallOutcome::Error(m)) => {
                        m.as_bytes().get(CANCELLED_AT + name.len()..).unwrap_or(b"")
                    }
                    _ => b"timeout",
                },
            },
            SlotFrame::ToolResult => OutFrame::ToolResult {
                id,
                name: Some(name),
                outcome: self.answer(slot),
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
        let cap = (call.adapter && call.max_total_ms > 0)
            .then(|| call.now.saturating_add_millis(call.max_total_ms as u64));
        let deadline = cap.map_or(timeout, |cap| timeout.min(cap));
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
            state: if call.adapter {
                SlotState::Adapter
            } else {
                SlotState::Deferred
            },
            index: call.index,
            tool: call.tool as u16,
            name_len: call.name.len() as u16,
            id_len: call.id.map(|i| i.len() as u16),
            args_len: args_len as u32,
            adapter_result: AdapterResult::Nothing,
            answer: Answer::None,
            timeout_ms: call.timeout_ms,
            deadline,
            cap,
            event_sent: false,
            how_ended: HowEnded::NotYet,
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
    pub(crate) fn restart(&mut self, slot: usize, now: Instant) {
        let s = &mut self.slots[slot];
        if let Some(cap) = s.cap {
            let restarted = now.saturating_add_millis(s.timeout_ms as u64).min(cap);
            s.deadline = s.deadline.max(restarted);
        }
    }

    /// Ends the call in `slot`: no longer pending, its bytes kept for the frames still queued.
    pub(crate) fn end(&mut self, slot: usize, how: HowEnded) {
        self.slots[slot].state = SlotState::Answered;
        self.slots[slot].how_ended = how;
    }

    /// Frees an ended call's `slot` (its `TOOL_RESULT` was transmitted, or encoded into the
    /// queue); its index and how it ended stay for refusing late inputs.
    pub(crate) fn free(&mut self, slot: usize) {
        if self.slots[slot].state == SlotState::Answered {
            self.slots[slot].state = SlotState::Free;
        }
    }

    /// The slot of the call `handle` names, if that call is waiting at `now`.
    pub(crate) fn waiting(
        &self,
        now: Instant,
        handle: CallHandle,
        next_index: u32,
    ) -> Result<usize, CallError> {
        let slot = handle.slot as usize;
        let Some(s) = self.slots.get(slot) else {
            return Err(CallError::Unknown);
        };
        if s.index == handle.index {
            return match (s.is_pending(), s.how_ended) {
                (false, HowEnded::TimedOut) => Err(CallError::TimedOut),
                (false, HowEnded::Cancelled) => Err(CallError::Cancelled),
                (false, HowEnded::Finished) => Err(CallError::Finished),
                (false, HowEnded::NotYet) => Err(CallError::Unknown),
                _ if now >= s.deadline => Err(CallError::TimedOut),
                _ => Ok(slot),
            };
        }
        if handle.index < next_index {
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
