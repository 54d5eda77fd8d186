//! The output queue: encoded frames waiting for the host, and where each goes.
//!
//! Frames are encoded once, when the machine decides to send them, into a
//! byte region the caller handed in; the wrapper's `poll_transmit` copies the oldest
//! into the host's buffer. Each record is a 12-byte header and the frame.

use crate::encode::{BufferTooSmall, OutFrame};

/// A pending call, as the host names it. The call number doubles as the slot's generation.
///
/// A handle belongs to the wrapper that issued it; given to another wrapper it names
/// whatever that wrapper has in the same slot under the same number.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CallHandle {
    pub(crate) slot: u16,
    pub(crate) call: u32,
}

impl CallHandle {
    /// The call's number (0-based, counting every intercepted `TOOL_CALL`).
    pub fn index(&self) -> u32 {
        self.call
    }

    /// The slot the call occupies.
    pub fn slot(&self) -> u16 {
        self.slot
    }
}

/// Where a queued frame must be written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Route {
    /// The model's sink (`TOOL_RESULT`s, the continue prompt).
    Model,
    /// The consumer (mirrored prompt, released `END`s, the round-limit `ERROR`).
    Consumer,
    /// A pending call's tool adapter (`TOOL_CALL`, `CANCEL`).
    Adapter(CallHandle),
}

/// One frame handed to the host by `poll_transmit`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Transmit {
    /// Where to write it.
    pub route: Route,
    /// Its length in the host's buffer.
    pub len: usize,
}

/// Bytes each queued frame costs on top of its own length.
pub const RECORD_HEADER: usize = 12;

/// The queue had no room for what an input would produce.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueueFull;

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

    pub(crate) fn free(&self) -> usize {
        self.buf.len() - (self.tail - self.head)
    }

    pub(crate) fn len(&self) -> usize {
        self.frames
    }

    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    pub(crate) fn capacity(&self) -> usize {
        self.buf.len()
    }

    fn make_room(&mut self, need: usize) -> Result<usize, QueueFull> {
        if self.buf.len() - self.tail < need {
            if self.free() < need {
                return Err(QueueFull);
            }
            self.buf.copy_within(self.head..self.tail, 0);
            self.tail -= self.head;
            self.head = 0;
        }
        Ok(self.tail)
    }

    pub(crate) fn push(&mut self, route: Route, frame: &OutFrame<'_>) -> Result<(), QueueFull> {
        let len = frame.encoded_len();
        let at = self.make_room(RECORD_HEADER + len)?;
        write_header(&mut self.buf[at..at + RECORD_HEADER], route, len);
        let body = &mut self.buf[at + RECORD_HEADER..at + RECORD_HEADER + len];
        // `body` is exactly `len` bytes: write without counting the frame a second time.
        frame.encode_exact(body);
        self.tail = at + RECORD_HEADER + len;
        self.frames += 1;
        self.pushed += 1;
        Ok(())
    }

    pub(crate) fn push_raw(&mut self, route: Route, bytes: &[u8]) -> Result<(), QueueFull> {
        let at = self.make_room(RECORD_HEADER + bytes.len())?;
        write_header(&mut self.buf[at..at + RECORD_HEADER], route, bytes.len());
        self.buf[at + RECORD_HEADER..at + RECORD_HEADER + bytes.len()].copy_from_slice(bytes);
        self.tail = at + RECORD_HEADER + bytes.len();
        self.frames += 1;
        self.pushed += 1;
        Ok(())
    }

    /// Queues a frame given as parts already in wire form.
    pub(crate) fn push_parts(&mut self, route: Route, parts: &[&[u8]]) -> Result<(), QueueFull> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let at = self.make_room(RECORD_HEADER + len)?;
        write_header(&mut self.buf[at..at + RECORD_HEADER], route, len);
        let mut pos = at + RECORD_HEADER;
        for p in parts {
            self.buf[pos..pos + p.len()].copy_from_slice(p);
            pos += p.len();
        }
        self.tail = pos;
        self.frames += 1;
        self.pushed += 1;
        Ok(())
    }

    /// The route and length of the oldest frame.
    pub(crate) fn peek(&self) -> Option<Transmit> {
        if self.frames == 0 {
            return None;
        }
        let (route, len) = read_header(&self.buf[self.head..self.head + RECORD_HEADER]);
        Some(Transmit { route, len })
    }

    pub(crate) fn pop_into(&mut self, out: &mut [u8]) -> Result<Option<Transmit>, BufferTooSmall> {
        let Some(t) = self.peek() else {
            return Ok(None);
        };
        let Some(dst) = out.get_mut(..t.len) else {
            return Err(BufferTooSmall { needed: t.len });
        };
        let start = self.head + RECORD_HEADER;
        dst.copy_from_slice(&self.buf[start..start + t.len]);
        self.head = start + t.len;
        self.frames -= 1;
        if self.frames == 0 {
            self.head = 0;
            self.tail = 0;
        }
        Ok(Some(t))
    }
}

fn write_header(h: &mut [u8], route: Route, len: usize) {
    let (tag, slot, call) = match route {
        Route::Model => (0u8, 0u16, 0u32),
        Route::Consumer => (1, 0, 0),
        Route::Adapter(c) => (2, c.slot, c.call),
    };
    h[0] = tag;
    h[1] = 0;
    h[2..4].copy_from_slice(&slot.to_le_bytes());
    h[4..8].copy_from_slice(&call.to_le_bytes());
    h[8..12].copy_from_slice(&(len as u32).to_le_bytes());
}

fn read_header(h: &[u8]) -> (Route, usize) {
    let slot = u16::from_le_bytes([h[2], h[3]]);
    let call = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
    let route = match h[0] {
        0 => Route::Model,
        1 => Route::Consumer,
        _ => Route::Adapter(CallHandle { slot, call }),
    };
    (route, len)
}
