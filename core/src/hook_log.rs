//! Hooks that keep what they saw, so that a host gets hook events and frames in the one
//! order SPEC §6 states, from [`Wrapper::poll_output`](crate::Wrapper::poll_output), instead
//! of merging them itself.
//!
//! A hook fires while an input runs, before the frames that input queued are transmitted;
//! SPEC order puts it right after the frame that was queued last when it fired (its
//! [`CallInfo::seq`]). A [`Log`] keeps the events until `poll_output` hands them out in
//! that place. [`HookLog`] keeps them in host memory: an event that does not fit is kept
//! without its args and outcome (`null` in their place, flagged `cut`), or dropped and
//! counted when not even its name and id fit — never a broken value.

use crate::hooks::{CallInfo, Hooks, NoHooks};
use crate::outcome::CallOutcome;
use crate::route::Transmit;

/// A hook event as a [`Log`] kept it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum HookEvent<'a> {
    /// `on_tool_call`.
    ToolCall(CallInfo<'a>),
    /// `on_tool_result`.
    ToolResult(CallInfo<'a>, CallOutcome<'a>),
}

impl<'a> HookEvent<'a> {
    /// The call the event is about.
    pub fn call(&self) -> &CallInfo<'a> {
        match self {
            HookEvent::ToolCall(c) | HookEvent::ToolResult(c, _) => c,
        }
    }
}

/// One kept event, and whether its args and outcome had to be left out (`null`) for room.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Logged<'a> {
    /// The event.
    pub event: HookEvent<'a>,
    /// Its args and outcome did not fit the log: they read `null` (an error reads empty).
    pub cut: bool,
}

/// Hooks that keep their events, oldest first, for [`Wrapper::poll_output`](crate::Wrapper::poll_output).
pub trait Log: Hooks {
    /// The oldest event kept.
    fn oldest(&self) -> Option<Logged<'_>>;
    /// Forgets the oldest event.
    fn drop_oldest(&mut self);
}

impl<L: Log + ?Sized> Log for &mut L {
    fn oldest(&self) -> Option<Logged<'_>> {
        (**self).oldest()
    }
    fn drop_oldest(&mut self) {
        (**self).drop_oldest()
    }
}

/// Keeps nothing: `poll_output` then hands out frames only.
impl Log for NoHooks {
    fn oldest(&self) -> Option<Logged<'_>> {
        None
    }
    fn drop_oldest(&mut self) {}
}

/// What [`Wrapper::poll_output`](crate::Wrapper::poll_output) hands out next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Output<'w> {
    /// A frame, written into the buffer given (as `Wrapper::poll_transmit` writes it).
    Frame(Transmit),
    /// A hook event, at its place among the frames.
    Hook(Logged<'w>),
}

/// Bytes of an event's header: kind, flags, name and id lengths, args and outcome lengths,
/// the call's index and the event's `seq`.
const HEADER: usize = 28;
const HAS_NAME: u8 = 1;
const HAS_ID: u8 = 2;
const IS_ERROR: u8 = 4;
const CUT: u8 = 8;

/// A [`Log`] in host memory: events in arrival order, each `28` bytes plus its name, id,
/// args and outcome.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HookLog<'b> {
    buf: &'b mut [u8],
    head: usize,
    tail: usize,
    cut: u32,
    dropped: u32,
}

impl<'b> HookLog<'b> {
    /// A log over `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            head: 0,
            tail: 0,
            cut: 0,
            dropped: 0,
        }
    }

    /// Bytes a log needs to keep one event whole: its name, id, args and outcome lengths.
    pub const fn event_len(name: usize, id: usize, args: usize, outcome: usize) -> usize {
        HEADER
            .saturating_add(name)
            .saturating_add(id)
            .saturating_add(args)
            .saturating_add(outcome)
    }

    /// Bytes of the log.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Events kept without their args and outcome, for want of room.
    pub fn cut(&self) -> u32 {
        self.cut
    }

    /// Events not kept at all (not even their name and id fitted).
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// Makes `need` bytes follow the tail, moving the kept events to the front if that is
    /// what it takes; false when the log lacks them.
    fn room(&mut self, need: usize) -> bool {
        if self.buf.len() - self.tail >= need {
            return true;
        }
        let used = self.tail - self.head;
        if self.buf.len() - used < need {
            return false;
        }
        self.buf.copy_within(self.head..self.tail, 0);
        (self.head, self.tail) = (0, used);
        true
    }

    fn push(&mut self, call: &CallInfo<'_>, outcome: Option<CallOutcome<'_>>) {
        let (name, id) = (call.name.unwrap_or(""), call.id.unwrap_or(""));
        let (is_error, text) = match outcome {
            Some(CallOutcome::Error(m)) => (true, m.as_bytes()),
            Some(CallOutcome::Result(r)) => (false, r),
            None => (false, &b""[..]),
        };
        let whole = Self::event_len(name.len(), id.len(), call.args.len(), text.len());
        let (args, text, cut) = if self.room(whole) {
            (call.args, text, false)
        } else {
            let empty: &[u8] = if is_error { b"" } else { b"null" };
            let text = if outcome.is_some() { empty } else { b"" };
            if !self.room(Self::event_len(name.len(), id.len(), 4, text.len())) {
                self.dropped = self.dropped.saturating_add(1);
                return;
            }
            self.cut = self.cut.saturating_add(1);
            (&b"null"[..], text, true)
        };
        let mut flags = 0;
        if call.name.is_some() {
            flags |= HAS_NAME;
        }
        if call.id.is_some() {
            flags |= HAS_ID;
        }
        if is_error {
            flags |= IS_ERROR;
        }
        if cut {
            flags |= CUT;
        }
        let at = self.tail;
        let h = &mut self.buf[at..at + HEADER];
        h[0] = outcome.is_some() as u8;
        h[1] = flags;
        h[2..4].copy_from_slice(&(name.len() as u16).to_le_bytes());
        h[4..6].copy_from_slice(&(id.len() as u16).to_le_bytes());
        h[6..8].fill(0);
        h[8..12].copy_from_slice(&(args.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(text.len() as u32).to_le_bytes());
        h[16..20].copy_from_slice(&call.index.to_le_bytes());
        h[20..28].copy_from_slice(&call.seq.to_le_bytes());
        let mut pos = at + HEADER;
        for part in [name.as_bytes(), id.as_bytes(), args, text] {
            self.buf[pos..pos + part.len()].copy_from_slice(part);
            pos += part.len();
        }
        self.tail = pos;
    }

    /// The lengths in the header at `at`: name, id, args, outcome.
    fn lens(&self, at: usize) -> [usize; 4] {
        let h = &self.buf[at..at + HEADER];
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]) as usize;
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]) as usize;
        [u16_at(2), u16_at(4), u32_at(8), u32_at(12)]
    }
}

/// Bytes stored from a `&str`, so UTF-8.
fn utf8(bytes: &[u8]) -> &str {
    core::str::from_utf8(bytes).unwrap_or("")
}

impl Hooks for HookLog<'_> {
    fn on_tool_call(&mut self, call: &CallInfo<'_>) {
        self.push(call, None);
    }
    fn on_tool_result(&mut self, call: &CallInfo<'_>, outcome: CallOutcome<'_>) {
        self.push(call, Some(outcome));
    }
}

impl Log for HookLog<'_> {
    fn oldest(&self) -> Option<Logged<'_>> {
        if self.head == self.tail {
            return None;
        }
        let at = self.head;
        let h = &self.buf[at..at + HEADER];
        let (result, flags) = (h[0] == 1, h[1]);
        let index = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&h[20..28]);
        let [name, id, args, text] = self.lens(at);
        let mut pos = at + HEADER;
        let mut part = |n: usize| {
            let s = &self.buf[pos..pos + n];
            pos += n;
            s
        };
        let (name, id, args, text) = (utf8(part(name)), utf8(part(id)), part(args), part(text));
        let call = CallInfo {
            index,
            name: (flags & HAS_NAME != 0).then_some(name),
            id: (flags & HAS_ID != 0).then_some(id),
            args,
            seq: u64::from_le_bytes(seq),
        };
        let event = match (result, flags & IS_ERROR != 0) {
            (false, _) => HookEvent::ToolCall(call),
            (true, true) => HookEvent::ToolResult(call, CallOutcome::Error(utf8(text))),
            (true, false) => HookEvent::ToolResult(call, CallOutcome::Result(text)),
        };
        Some(Logged {
            event,
            cut: flags & CUT != 0,
        })
    }

    fn drop_oldest(&mut self) {
        if self.head == self.tail {
            return;
        }
        let [name, id, args, text] = self.lens(self.head);
        self.head += HEADER + name + id + args + text;
        if self.head == self.tail {
            (self.head, self.tail) = (0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(index: u32, seq: u64, args: &[u8]) -> CallInfo<'_> {
        CallInfo {
            index,
            name: Some("t"),
            id: Some("c1"),
            args,
            seq,
        }
    }

    #[test]
    fn events_come_back_in_order_and_whole() {
        let mut buf = [0u8; 256];
        let mut log = HookLog::new(&mut buf);
        log.on_tool_call(&call(0, 0, b"{\"a\":1}"));
        log.on_tool_result(&call(0, 1, b"{\"a\":1}"), CallOutcome::Error("boom"));
        let first = log.oldest().unwrap();
        assert_eq!(first.event, HookEvent::ToolCall(call(0, 0, b"{\"a\":1}")));
        assert!(!first.cut);
        log.drop_oldest();
        assert_eq!(
            log.oldest().unwrap().event,
            HookEvent::ToolResult(call(0, 1, b"{\"a\":1}"), CallOutcome::Error("boom"))
        );
        log.drop_oldest();
        assert_eq!(log.oldest(), None);
        log.drop_oldest();
        assert_eq!((log.head, log.tail), (0, 0));
    }

    #[test]
    fn an_event_too_large_keeps_its_name_and_id_or_is_counted() {
        // 28 + 1 + 2 + 4 = 35 bytes for a cut event; 40 bytes hold one.
        let mut buf = [0u8; 40];
        let mut log = HookLog::new(&mut buf);
        log.on_tool_result(&call(3, 7, b"[1,2,3,4,5,6]"), CallOutcome::Result(b"12345"));
        let kept = log.oldest().unwrap();
        assert!(kept.cut);
        assert_eq!(
            kept.event,
            HookEvent::ToolResult(call(3, 7, b"null"), CallOutcome::Result(b"null"))
        );
        assert_eq!((log.cut(), log.dropped()), (1, 0));
        // No room left for another: dropped and counted; the kept one is untouched.
        log.on_tool_call(&call(4, 7, b"{}"));
        assert_eq!((log.cut(), log.dropped()), (1, 1));
        assert!(log.oldest().unwrap().cut);
        log.drop_oldest();
        // Emptied, the log takes events at its start again.
        log.on_tool_call(&call(5, 8, b"{}"));
        assert_eq!(
            log.oldest().unwrap().event,
            HookEvent::ToolCall(call(5, 8, b"{}"))
        );
    }

    #[test]
    fn names_ids_and_long_texts_come_back_as_they_were() {
        let mut buf = [0u8; 2048];
        let mut log = HookLog::new(&mut buf);
        assert_eq!(log.capacity(), 2048);
        // No name (a malformed call), no id, and args and a message over 255 bytes.
        let args = [b'7'; 300];
        let message = "m".repeat(700);
        let anonymous = CallInfo {
            index: 9,
            name: None,
            id: None,
            args: &args,
            seq: 300,
        };
        log.on_tool_result(&anonymous, CallOutcome::Error(&message));
        let kept = log.oldest().unwrap();
        assert_eq!(
            kept.event,
            HookEvent::ToolResult(anonymous, CallOutcome::Error(&message))
        );
        log.drop_oldest();
        assert_eq!(log.oldest(), None);
    }

    #[test]
    fn lengths_past_64_kib_come_back_whole() {
        // Each length is four bytes: a byte read from the wrong place shows only when a
        // length's third byte is not zero.
        extern crate std;
        let mut buf = std::vec![0u8; 80_000];
        let mut log = HookLog::new(&mut buf);
        let args = std::vec![b'1'; 70_000];
        let c = call(1, 2, &args);
        log.on_tool_result(&c, CallOutcome::Result(b"[2]"));
        assert_eq!(
            log.oldest().unwrap().event,
            HookEvent::ToolResult(c, CallOutcome::Result(b"[2]"))
        );
    }

    #[test]
    fn a_log_lent_by_reference_is_the_same_log() {
        let mut buf = [0u8; 128];
        let mut log = HookLog::new(&mut buf);
        {
            let mut lent = &mut log;
            lent.on_tool_call(&call(1, 0, b"{}"));
            assert_eq!(Log::oldest(&lent).unwrap().event.call().index, 1);
            Log::drop_oldest(&mut lent);
            assert_eq!(Log::oldest(&lent), None);
        }
        assert_eq!(log.oldest(), None);
    }

    #[test]
    fn an_event_that_fills_the_log_exactly_after_moving_is_kept_whole() {
        // Three events of 43 bytes (28 + 1 + 2 + 12) in 86: the third fits only once the
        // second moves to the front, and then exactly.
        let mut buf = [0u8; 86];
        let mut log = HookLog::new(&mut buf);
        log.on_tool_call(&call(0, 0, b"[0000000000]"));
        log.on_tool_call(&call(1, 0, b"[1111111111]"));
        log.drop_oldest();
        log.on_tool_call(&call(2, 0, b"[2222222222]"));
        assert_eq!((log.cut(), log.dropped()), (0, 0));
        log.drop_oldest();
        assert_eq!(log.oldest().unwrap().event.call().args, b"[2222222222]");
    }

    #[test]
    fn kept_events_move_to_the_front_to_make_room() {
        let mut buf = [0u8; 100];
        let mut log = HookLog::new(&mut buf);
        log.on_tool_call(&call(0, 0, b"[0000000000]"));
        log.on_tool_call(&call(1, 0, b"[1111111111]"));
        log.drop_oldest();
        // 43 more bytes after 86: they fit only once event 1 moves to the front.
        log.on_tool_call(&call(2, 0, b"[2222222222]"));
        assert_eq!(log.cut(), 0);
        assert_eq!(log.oldest().unwrap().event.call().index, 1);
        log.drop_oldest();
        assert_eq!(log.oldest().unwrap().event.call().args, b"[2222222222]");
    }
}
