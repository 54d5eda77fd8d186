//! The calls a response has started and not yet written: one slot each, with its id, name
//! and argument bytes in the host's arena, and the `TOOL_CALL` frame each one becomes
//! (SPEC §8 rules 2–4).

use crate::json::JsonStr;
use crate::sink::{put_escaped, put_json_string, put_u64, Sink};

/// One call a decoder is assembling. The host provides `[CallSlot::EMPTY; N]`: `N` is the
/// most calls one response may have open at once.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CallSlot {
    state: State,
    /// The provider's key for the call (tool-call index, block index, output index).
    key: u32,
    /// Completion order, for writing ready calls in the order they completed.
    seq: u32,
    id_len: u16,
    name_len: u16,
    args_len: u32,
    flags: u8,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum State {
    Free,
    Open,
    Ready,
}

/// The call has an id.
const HAS_ID: u8 = 1;
/// Its arguments are a raw JSON value (gemini, ollama, anthropic's start `input`), not text.
const RAW: u8 = 2;
/// Argument text came in pieces (so a whole `arguments`/`input` member no longer counts).
const PIECES: u8 = 4;
/// The arguments went past the args capacity.
const OVER: u8 = 8;
/// An over-long event carried part of the arguments, or they were assembled wrongly.
const BROKEN: u8 = 16;
/// The response ended while the call was open.
const INCOMPLETE: u8 = 32;
/// Set when ready: the argument bytes are one valid JSON value (or empty, meaning `{}`).
const VALID: u8 = 64;

impl CallSlot {
    /// A free slot.
    pub const EMPTY: Self = Self {
        state: State::Free,
        key: 0,
        seq: 0,
        id_len: 0,
        name_len: 0,
        args_len: 0,
        flags: 0,
    };
}

/// How calls still open end.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Close {
    /// The provider said they are complete.
    Complete,
    /// The response ended first (rule 4: `arguments are incomplete`).
    Incomplete,
}

/// The slots, their bytes and the capacities: what the provider readers work on.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Calls<'a> {
    pub(crate) slots: &'a mut [CallSlot],
    store: &'a mut [u8],
    id_cap: usize,
    name_cap: usize,
    args_cap: usize,
    max_depth: u8,
    next_seq: u32,
    /// Slots in `State::Ready`: a poll with none (nearly every poll of a text stream) looks
    /// at no slot.
    ready: usize,
    /// Ids or names cut to their capacity so far.
    pub(crate) cut: u32,
}

/// Appends to one call's argument bytes; what does not fit is dropped and flagged.
pub(crate) struct ArgsSink<'s> {
    area: &'s mut [u8],
    len: usize,
    over: bool,
}

impl Sink for ArgsSink<'_> {
    fn put(&mut self, bytes: &[u8]) {
        if self.over {
            return;
        }
        match self.area.get_mut(self.len..self.len + bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.over = true,
        }
    }
}

/// No slot was free for a new call.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct NoSlot;

impl<'a> Calls<'a> {
    /// Slots over `store`, which holds `slots.len()` times `id_cap + name_cap + args_cap`.
    pub(crate) fn new(
        slots: &'a mut [CallSlot],
        store: &'a mut [u8],
        (id_cap, name_cap, args_cap): (usize, usize, usize),
        max_depth: u8,
    ) -> Self {
        slots.fill(CallSlot::EMPTY);
        Self {
            slots,
            store,
            id_cap,
            name_cap,
            args_cap,
            max_depth,
            next_seq: 0,
            ready: 0,
            cut: 0,
        }
    }

    /// Forgets every call (a new body).
    pub(crate) fn reset(&mut self) {
        self.slots.fill(CallSlot::EMPTY);
        self.next_seq = 0;
        self.ready = 0;
    }

    fn stride(&self) -> usize {
        self.id_cap + self.name_cap + self.args_cap
    }

    /// The slot's id, name and argument areas.
    fn areas(&self, i: usize) -> (&[u8], &[u8], &[u8]) {
        let at = i * self.stride();
        let s = &self.store[at..at + self.stride()];
        let (id, rest) = s.split_at(self.id_cap);
        let (name, args) = rest.split_at(self.name_cap);
        (id, name, args)
    }

    fn areas_mut(&mut self, i: usize) -> (&mut [u8], &mut [u8], &mut [u8]) {
        let (stride, id_cap, name_cap) = (self.stride(), self.id_cap, self.name_cap);
        let s = &mut self.store[i * stride..(i + 1) * stride];
        let (id, rest) = s.split_at_mut(id_cap);
        let (name, args) = rest.split_at_mut(name_cap);
        (id, name, args)
    }

    /// The open call with this key.
    pub(crate) fn find(&self, key: u32) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.state == State::Open && s.key == key)
    }

    /// The keys of the open calls.
    pub(crate) fn open_keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .filter(|s| s.state == State::Open)
            .map(|s| s.key)
    }

    /// Opens a call; its id and name as far as they are known.
    pub(crate) fn open(
        &mut self,
        key: u32,
        id: Option<JsonStr<'_>>,
        name: Option<JsonStr<'_>>,
    ) -> Result<usize, NoSlot> {
        let i = self
            .slots
            .iter()
            .position(|s| s.state == State::Free)
            .ok_or(NoSlot)?;
        self.slots[i] = CallSlot {
            state: State::Open,
            key,
            ..CallSlot::EMPTY
        };
        if let Some(id) = id {
            self.set_id(i, id);
        }
        if let Some(name) = name {
            self.set_name(i, name);
        }
        Ok(i)
    }

    /// Gives the call its id, unless it has one: the first non-empty id wins (servers
    /// repeat `"id":""`, or the whole id, in later chunks).
    pub(crate) fn set_id(&mut self, i: usize, id: JsonStr<'_>) {
        if self.slots[i].flags & HAS_ID != 0 || id.raw().is_empty() {
            return;
        }
        let (area, _, _) = self.areas_mut(i);
        let (text, cut) = id.decode_prefix_into(area);
        self.slots[i].id_len = text.len() as u16;
        self.slots[i].flags |= HAS_ID;
        self.cut += cut as u32;
    }

    /// Gives the call its name, unless it has one (the first non-empty name wins).
    pub(crate) fn set_name(&mut self, i: usize, name: JsonStr<'_>) {
        if self.slots[i].name_len != 0 || name.raw().is_empty() {
            return;
        }
        let (_, area, _) = self.areas_mut(i);
        let (text, cut) = name.decode_prefix_into(area);
        self.slots[i].name_len = text.len() as u16;
        self.cut += cut as u32;
    }

    /// Appends a piece of argument text (a JSON string's decoded text); an empty piece
    /// changes nothing.
    pub(crate) fn append_text(&mut self, i: usize, piece: JsonStr<'_>) {
        if piece.raw().is_empty() {
            return;
        }
        if self.slots[i].flags & (RAW | PIECES) == RAW {
            // The first piece replaces a whole value given at the start.
            self.slots[i].args_len = 0;
            self.slots[i].flags &= !RAW;
        }
        self.slots[i].flags |= PIECES;
        self.write_args(i, |sink| piece.for_each_decoded_run(|run| sink.put(run)));
    }

    /// Sets the arguments to a whole text (a JSON string's decoded text), unless pieces came.
    pub(crate) fn set_text(&mut self, i: usize, text: JsonStr<'_>) {
        if self.slots[i].flags & PIECES != 0 {
            return;
        }
        self.slots[i].args_len = 0;
        self.slots[i].flags &= !(RAW | OVER);
        self.write_args(i, |sink| text.for_each_decoded_run(|run| sink.put(run)));
    }

    /// Sets the arguments to a raw JSON value, compacted, unless text pieces came.
    pub(crate) fn set_raw(&mut self, i: usize, value: &[u8]) {
        if self.slots[i].flags & PIECES != 0 {
            return;
        }
        self.slots[i].args_len = 0;
        self.slots[i].flags = (self.slots[i].flags & !OVER) | RAW;
        self.write_args(i, |sink| sink.put_raw(value));
    }

    /// Appends to the call's argument bytes through `f` (past the capacity: flagged, not kept).
    pub(crate) fn write_args(&mut self, i: usize, f: impl FnOnce(&mut ArgsSink<'_>)) {
        let len = self.slots[i].args_len as usize;
        let (_, _, area) = self.areas_mut(i);
        let mut sink = ArgsSink {
            area,
            len,
            over: false,
        };
        f(&mut sink);
        let (len, over) = (sink.len, sink.over);
        self.slots[i].args_len = len as u32;
        if over {
            self.slots[i].flags |= OVER;
        }
    }

    /// True when the call's arguments are already past the capacity.
    pub(crate) fn is_over(&self, i: usize) -> bool {
        self.slots[i].flags & OVER != 0
    }

    /// Marks the call's arguments broken (an over-long event carried part of them).
    pub(crate) fn break_args(&mut self, i: usize) {
        self.slots[i].flags |= BROKEN;
    }

    /// Marks every open call broken.
    pub(crate) fn break_all_open(&mut self) {
        for s in self.slots.iter_mut().filter(|s| s.state == State::Open) {
            s.flags |= BROKEN;
        }
    }

    /// The call is complete: decide how its arguments are written, and queue it.
    pub(crate) fn ready(&mut self, i: usize, how: Close) {
        let flags = self.slots[i].flags;
        let mut valid = false;
        if flags & (OVER | BROKEN) == 0 {
            let (_, _, args) = self.areas(i);
            let args = &args[..self.slots[i].args_len as usize];
            let trimmed = crate::json::trim_ws(args);
            valid = trimmed.is_empty() || crate::json::validate(trimmed, self.max_depth).is_ok();
        }
        let s = &mut self.slots[i];
        s.flags |= if valid { VALID } else { 0 };
        if how == Close::Incomplete {
            s.flags |= INCOMPLETE;
        }
        if s.state != State::Ready {
            self.ready += 1;
        }
        s.state = State::Ready;
        s.seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
    }

    /// Every open call is complete (or cut off), in key order.
    pub(crate) fn close_all(&mut self, how: Close) {
        while let Some(i) = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state == State::Open)
            .min_by_key(|(_, s)| s.key)
            .map(|(i, _)| i)
        {
            self.ready(i, how);
        }
    }

    /// The ready call to write next (the first completed).
    pub(crate) fn next_ready(&self) -> Option<usize> {
        if self.ready == 0 {
            return None;
        }
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state == State::Ready)
            .min_by_key(|(_, s)| s.seq)
            .map(|(i, _)| i)
    }

    /// Frees a written call.
    pub(crate) fn free(&mut self, i: usize) {
        if self.slots[i].state == State::Ready {
            self.ready -= 1;
        }
        self.slots[i] = CallSlot::EMPTY;
    }

    /// Writes the ready call's `TOOL_CALL` frame.
    pub(crate) fn write_frame<S: Sink + ?Sized>(&self, i: usize, s: &mut S) {
        let slot = &self.slots[i];
        let (id, name, args) = self.areas(i);
        let id = (slot.flags & HAS_ID != 0).then(|| &id[..slot.id_len as usize]);
        let name = &name[..slot.name_len as usize];
        let args = &args[..slot.args_len as usize];
        s.put(b"{\"type\":\"TOOL_CALL\",\"content\":{");
        if let Some(id) = id {
            s.put(b"\"id\":");
            put_json_string(s, id);
            s.put(b",");
        }
        s.put(b"\"name\":");
        put_json_string(s, name);
        let problem: Option<&[u8]> = if slot.flags & OVER != 0 {
            s.put(b",\"args_error\":\"Tool ");
            put_escaped(s, name);
            s.put(b" args exceed ");
            put_u64(s, self.args_cap as u64);
            s.put(b" bytes\"}}");
            return;
        } else if slot.flags & INCOMPLETE != 0 {
            Some(b" arguments are incomplete")
        } else if slot.flags & VALID == 0 {
            Some(b" arguments are not valid JSON")
        } else {
            None
        };
        s.put(b",\"args\":");
        match problem {
            None => {
                let trimmed = crate::json::trim_ws(args);
                if trimmed.is_empty() {
                    s.put(b"{}");
                } else {
                    s.put_raw(trimmed);
                }
                s.put(b"}}");
            }
            Some(what) => {
                put_json_string(s, args);
                s.put(b",\"args_error\":\"Tool ");
                put_escaped(s, name);
                s.put(what);
                s.put(b"\"}}");
            }
        }
    }

    /// Writes the frame of a call that found no free slot (rule 4).
    pub(crate) fn write_no_slot<S: Sink + ?Sized>(
        &self,
        id: Option<JsonStr<'_>>,
        name: Option<JsonStr<'_>>,
        s: &mut S,
    ) {
        s.put(b"{\"type\":\"TOOL_CALL\",\"content\":{");
        if let Some(id) = id.filter(|id| !id.raw().is_empty()) {
            s.put(b"\"id\":");
            crate::sink::put_json_str(s, id);
            s.put(b",");
        }
        s.put(b"\"name\":");
        match name {
            Some(name) => crate::sink::put_json_str(s, name),
            None => s.put(b"\"\""),
        }
        s.put(b",\"args_error\":\"Too many parallel tool calls (max ");
        put_u64(s, self.slots.len() as u64);
        s.put(b")\"}}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ready calls come out in the order they completed, each once, whatever the slots they
    /// sit in; the count that lets a poll skip the slots follows every way a call is readied,
    /// written or forgotten (readied twice counts once).
    #[test]
    fn ready_calls_come_out_in_completion_order_and_the_count_follows() {
        let mut slots = [CallSlot::EMPTY; 4];
        let mut store = [0u8; 4 * 24];
        let mut calls = Calls::new(&mut slots, &mut store, (8, 8, 8), 8);
        assert_eq!(calls.next_ready(), None);
        let a = calls.open(7, None, None).unwrap();
        let b = calls.open(3, None, None).unwrap();
        let c = calls.open(5, None, None).unwrap();
        assert_eq!(calls.next_ready(), None, "open calls are not ready");
        calls.ready(c, Close::Complete);
        calls.ready(a, Close::Complete);
        calls.ready(a, Close::Incomplete);
        assert_eq!(calls.ready, 2);
        assert_eq!(calls.next_ready(), Some(c));
        calls.free(c);
        // The one left open is closed by key; it completes after `a`.
        calls.close_all(Close::Incomplete);
        assert_eq!(calls.next_ready(), Some(a));
        calls.free(a);
        assert_eq!(calls.next_ready(), Some(b));
        calls.free(b);
        assert_eq!((calls.next_ready(), calls.ready), (None, 0));
        // A slot freed is taken again; a reset forgets the ready ones.
        let d = calls.open(1, None, None).unwrap();
        calls.ready(d, Close::Complete);
        assert_eq!(calls.next_ready(), Some(d));
        calls.reset();
        assert_eq!((calls.next_ready(), calls.ready), (None, 0));
        // A slot that was never ready is freed without touching the count.
        let e = calls.open(2, None, None).unwrap();
        calls.free(e);
        assert_eq!(calls.ready, 0);
    }
}
