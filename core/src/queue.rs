//! The output queue: frames waiting for the host, and where each goes.
//!
//! A record is a frame encoded when the machine decided to send it (a mirrored
//! prompt once, for two routes), or a reference to bytes that already sit
//! elsewhere: a pending-call slot whose frame (`TOOL_CALL`, `CANCEL`,
//! `TOOL_RESULT`) is encoded from the slot's name, id, args and outcome when it is
//! transmitted, or the `END`s a round released, read from the held buffer. So the
//! queue does not pay for those bytes a second time. The queue owns its record
//! format: the machines ask what a record will cost and reserve it before their
//! state changes, so that the push itself cannot fail.

use crate::frame::write::{Known, OutFrame};
use crate::room::{HELD_HEADER, RECORD_HEADER};
use crate::route::{CallHandle, Route};

/// A frame encoded from a pending-call slot when it is transmitted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum SlotFrame {
    /// The call's `TOOL_CALL` to its tool adapter.
    ToolCall,
    /// The `CANCEL` to its tool adapter.
    Cancel,
    /// Its `TOOL_RESULT` to the model; the slot is free once it is written.
    ToolResult,
}

/// What a record holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Body {
    /// An encoded frame of this many bytes.
    Inline(usize),
    /// An encoded frame of this many bytes for the model, then again for the consumer.
    Mirrored(usize),
    /// The frame of the call in this slot.
    Slot(SlotFrame, u16),
    /// Released `END`s, this many, read from the held buffer from this offset on.
    Held { offset: usize, count: usize },
}

/// The oldest record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) route: Route,
    pub(crate) body: Body,
}

/// The queue lacks room for what an input would queue: it was refused, nothing changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueueFull {
    /// Bytes of records the input needs.
    pub(crate) needed: usize,
    /// Bytes free.
    pub(crate) free: usize,
}

#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Queue<'a> {
    buf: &'a mut [u8],
    head: usize,
    tail: usize,
    frames: usize,
    /// Frames queued since creation.
    pushed: u64,
}

impl<'a> Queue<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self {
            buf,
            head: 0,
            tail: 0,
            frames: 0,
            pushed: 0,
        }
    }

    /// Bytes free for records.
    pub(crate) fn free(&self) -> usize {
        self.buf.len() - (self.tail - self.head)
    }

    /// Frames waiting.
    pub(crate) fn len(&self) -> usize {
        self.frames
    }

    /// Frames queued since creation.
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    pub(crate) fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Refuses, changing nothing, unless `needed` bytes of records can be pushed now.
    pub(crate) fn reserve(&self, needed: usize) -> Result<(), QueueFull> {
        // `WrapperConfig::queue_len` sizes the queue so that, drained, it takes any input: were that
        // ever wrong, the input would still be refused (as `QueueFull`), never half done.
        debug_assert!(needed <= self.capacity(), "{needed} > {}", self.capacity());
        let free = self.free();
        if needed > free {
            return Err(QueueFull { needed, free });
        }
        Ok(())
    }

    /// Queues `frame`, encoded now. Its cost must have been reserved.
    pub(crate) fn push(&mut self, route: Route, frame: &OutFrame<'_>) {
        self.push_inline(route, frame, false, Known::NOTHING);
    }

    /// [`push`](Self::push) for a frame whose parts are `known` in their final form.
    pub(crate) fn push_known(&mut self, route: Route, frame: &OutFrame<'_>, known: Known) {
        self.push_inline(route, frame, false, known);
    }

    /// Queues `frame` for the model, then the same bytes for the consumer (a mirrored
    /// prompt): one record, `record_cost(len)`, transmitted twice.
    pub(crate) fn push_mirrored(&mut self, frame: &OutFrame<'_>) {
        self.push_inline(Route::Model, frame, true, Known::NOTHING);
    }

    fn push_inline(&mut self, route: Route, frame: &OutFrame<'_>, mirrored: bool, known: Known) {
        // One pass: the frame is encoded straight after the header's place at the tail,
        // counted as it goes. Only when the room past the tail is short (free bytes sit before
        // the head) are the records moved up and the frame written a second time.
        let body_at = self.tail + RECORD_HEADER;
        let room = self.buf.get_mut(body_at..).unwrap_or_default();
        let len = frame.encode_within(room, known);
        let (body, frames) = match mirrored {
            true => (Body::Mirrored(len), 2),
            false => (Body::Inline(len), 1),
        };
        // Equivalent mutant: `>` -> `>=` or `+` -> `*`: these only compact and encode again a frame
        // that fitted (both factors exceed 1, so the product is never the smaller).
        if body_at + len > self.buf.len() {
            if !self.make_room(record_len(body)) {
                return;
            }
            let body_at = self.tail + RECORD_HEADER;
            frame.encode_exact(&mut self.buf[body_at..body_at + len], known);
        }
        self.commit(route, body, 0, frames);
    }

    /// Queues the frame of the call (`index`) in `slot`, to be encoded from the slot when it
    /// is transmitted. Its cost, `record_cost(0)`, must have been reserved.
    pub(crate) fn push_slot(&mut self, route: Route, frame: SlotFrame, slot: u16, index: u32) {
        self.append(route, Body::Slot(frame, slot), index, 1);
    }

    /// Queues the release of `count` held `END`s (consumer route) from `offset` in the held
    /// buffer: one record, `record_cost(0)`, transmitted once per `END`.
    pub(crate) fn push_held(&mut self, offset: usize, count: usize) {
        self.append(Route::Consumer, Body::Held { offset, count }, 0, count);
    }

    /// Appends a record of `frames` frames without an encoded frame. Its cost must have
    /// been reserved.
    fn append(&mut self, route: Route, body: Body, index: u32, frames: usize) {
        if self.make_room(record_len(body)) {
            self.commit(route, body, index, frames);
        }
    }

    /// Makes `need` bytes follow the tail, compacting when they are free but not all there.
    /// The callers' room checks make a full queue here a bug, which debug builds report.
    fn make_room(&mut self, need: usize) -> bool {
        // Equivalent mutant: `<` -> `<=` (reached from `append` and `push_inline`): compacting when
        // the room is exactly enough moves the records but changes nothing anyone sees.
        if self.buf.len() - self.tail < need {
            if self.free() < need {
                debug_assert!(false, "{need} bytes pushed without a reservation");
                return false;
            }
            self.compact();
        }
        true
    }

    /// Writes the header of a record whose bytes follow the tail, and takes them.
    fn commit(&mut self, route: Route, body: Body, index: u32, frames: usize) {
        let at = self.tail;
        write_header(&mut self.buf[at..at + RECORD_HEADER], route, body, index);
        self.tail = at + record_len(body);
        self.frames += frames;
        self.pushed += frames as u64;
    }

    /// The oldest frame, an `END` of a release record (`len` bytes), was transmitted: the
    /// record moves on to the next `END`, or goes. True when it went.
    pub(crate) fn held_sent(&mut self, len: usize) -> bool {
        let Some(Record {
            body: Body::Held { offset, count },
            ..
        }) = self.front()
        else {
            return false;
        };
        if count <= 1 {
            self.drop_front();
            return true;
        }
        let next = Body::Held {
            offset: offset + HELD_HEADER + len,
            count: count - 1,
        };
        let h = &mut self.buf[self.head..self.head + RECORD_HEADER];
        write_header(h, Route::Consumer, next, 0);
        self.frames -= 1;
        false
    }

    /// Moves the records to the start of the buffer, so that all free bytes follow them.
    fn compact(&mut self) {
        self.buf.copy_within(self.head..self.tail, 0);
        self.tail -= self.head;
        self.head = 0;
    }

    /// The oldest record.
    pub(crate) fn front(&self) -> Option<Record> {
        if self.frames == 0 {
            return None;
        }
        let (route, body) = read_header(&self.buf[self.head..self.head + RECORD_HEADER]);
        Some(Record { route, body })
    }

    /// The oldest record's encoded frame (empty for a record without one).
    pub(crate) fn front_frame(&self) -> &[u8] {
        match self.front().map(|r| r.body) {
            Some(Body::Inline(len) | Body::Mirrored(len)) => {
                let start = self.head + RECORD_HEADER;
                &self.buf[start..start + len]
            }
            _ => &[],
        }
    }

    /// Drops the oldest frame: its record, or a mirrored record's first transmission.
    pub(crate) fn drop_front(&mut self) {
        let Some(r) = self.front() else {
            return;
        };
        let len = match r.body {
            Body::Mirrored(len) => {
                let h = &mut self.buf[self.head..self.head + RECORD_HEADER];
                write_header(h, Route::Consumer, Body::Inline(len), 0);
                self.frames -= 1;
                return;
            }
            Body::Inline(len) => len,
            Body::Slot(..) | Body::Held { .. } => 0,
        };
        self.head += RECORD_HEADER + len;
        self.frames -= 1;
        if self.frames == 0 {
            self.head = 0;
            self.tail = 0;
        }
    }

    /// Queue bytes turning every record of `slot` into an encoded frame takes (`len`: a slot
    /// frame's encoded length).
    pub(crate) fn inline_cost(&self, slot: u16, len: impl Fn(SlotFrame) -> usize) -> usize {
        self.records()
            .filter_map(|r| match r.body {
                Body::Slot(f, s) if s == slot => Some(len(f)),
                _ => None,
            })
            .sum()
    }

    /// Encodes every record of `slot` in place, in queue order, so that the slot can be
    /// reused before they are transmitted. [`inline_cost`](Self::inline_cost) bytes must be
    /// free. A slot's raw values are stored compacted, so they are copied as they are.
    pub(crate) fn inline_slot<'f>(&mut self, slot: u16, frame: impl Fn(SlotFrame) -> OutFrame<'f>) {
        let need = self.inline_cost(slot, |f| frame(f).len_as(Known::RAW_COMPACT));
        if need > self.free() {
            debug_assert!(false, "{need} bytes inlined without a reservation");
            return;
        }
        self.compact();
        let mut at = self.head;
        while at < self.tail {
            let (route, body) = read_header(&self.buf[at..at + RECORD_HEADER]);
            match body {
                Body::Slot(f, s) if s == slot => {
                    let out = frame(f);
                    let len = out.len_as(Known::RAW_COMPACT);
                    let body_at = at + RECORD_HEADER;
                    self.buf.copy_within(body_at..self.tail, body_at + len);
                    out.encode_exact(&mut self.buf[body_at..body_at + len], Known::RAW_COMPACT);
                    write_header(&mut self.buf[at..body_at], route, Body::Inline(len), 0);
                    self.tail += len;
                    at = body_at + len;
                }
                other => at += record_len(other),
            }
        }
    }

    /// Every record, oldest first.
    fn records(&self) -> impl Iterator<Item = Record> + '_ {
        let mut at = self.head;
        core::iter::from_fn(move || {
            let h = self
                .buf
                .get(at..at + RECORD_HEADER)
                .filter(|_| at < self.tail)?;
            let (route, body) = read_header(h);
            at += record_len(body);
            Some(Record { route, body })
        })
    }
}

/// Bytes of a record: its header and encoded frame.
fn record_len(body: Body) -> usize {
    RECORD_HEADER
        + match body {
            Body::Inline(len) | Body::Mirrored(len) => len,
            Body::Slot(..) | Body::Held { .. } => 0,
        }
}

fn write_header(h: &mut [u8], route: Route, body: Body, index: u32) {
    let (tag, route_slot, index) = match route {
        Route::Model => (0u8, 0u16, index),
        Route::Consumer => (1, 0, index),
        Route::Adapter(c) => (2, c.slot(), c.index()),
    };
    let (kind, slot, len) = match body {
        Body::Inline(len) => (0u8, route_slot, len as u32),
        Body::Mirrored(len) => (4, route_slot, len as u32),
        Body::Held { offset, count } => {
            let (offset, count) = (offset as u32, count as u32);
            h[0] = tag;
            h[1] = 5;
            h[2..4].copy_from_slice(&[0, 0]);
            h[4..8].copy_from_slice(&offset.to_le_bytes());
            h[8..12].copy_from_slice(&count.to_le_bytes());
            return;
        }
        Body::Slot(SlotFrame::ToolCall, s) => (1, s, 0),
        Body::Slot(SlotFrame::Cancel, s) => (2, s, 0),
        Body::Slot(SlotFrame::ToolResult, s) => (3, s, 0),
    };
    h[0] = tag;
    h[1] = kind;
    h[2..4].copy_from_slice(&slot.to_le_bytes());
    h[4..8].copy_from_slice(&index.to_le_bytes());
    h[8..12].copy_from_slice(&len.to_le_bytes());
}

fn read_header(h: &[u8]) -> (Route, Body) {
    let slot = u16::from_le_bytes([h[2], h[3]]);
    let index = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
    let route = match h[0] {
        0 => Route::Model,
        1 => Route::Consumer,
        _ => Route::Adapter(CallHandle::new(slot, index)),
    };
    let body = match h[1] {
        0 => Body::Inline(len),
        4 => Body::Mirrored(len),
        5 => Body::Held {
            offset: index as usize,
            count: len,
        },
        1 => Body::Slot(SlotFrame::ToolCall, slot),
        2 => Body::Slot(SlotFrame::Cancel, slot),
        _ => Body::Slot(SlotFrame::ToolResult, slot),
    };
    (route, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_past_the_tail_are_stale_and_not_counted() {
        // Records taken leave their bytes behind the tail; a slot's cost counts only the
        // live ones.
        let mut buf = [0u8; 128];
        let mut q = Queue::new(&mut buf);
        for _ in 0..3 {
            q.push_slot(Route::Model, SlotFrame::ToolResult, 0, 7);
        }
        for _ in 0..3 {
            q.drop_front();
        }
        assert_eq!(q.len(), 0);
        q.push_slot(Route::Model, SlotFrame::Cancel, 0, 7);
        assert_eq!(q.inline_cost(0, |_| 10), 10);
        assert_eq!(q.inline_cost(1, |_| 10), 0);
    }
}
