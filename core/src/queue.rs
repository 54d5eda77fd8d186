//! The output queue: encoded frames waiting for the host, and where each goes.
//!
//! Frames are encoded once, when the machine decides to send them, into a
//! byte region the caller handed in; `poll_transmit` copies the oldest into
//! the host's buffer. The queue owns its record format: the machines ask what
//! a frame will cost and reserve it before their state changes, so that the
//! push itself cannot fail.

use crate::encode::{BufferTooSmall, OutFrame};
use crate::error::Error;
use crate::wrapper::CallHandle;

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

/// Bytes of a record's header: route tag, slot, call index, frame length.
const HEADER: usize = 12;

/// Bytes a queued frame of `len` bytes takes in the queue.
pub(crate) const fn cost(len: usize) -> usize {
    len.saturating_add(HEADER)
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

    fn free(&self) -> usize {
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
    pub(crate) fn reserve(&self, needed: usize) -> Result<(), Error> {
        let (free, cap) = (self.free(), self.capacity());
        if needed > cap {
            return Err(Error::OutputTooLarge { needed, cap });
        }
        if needed > free {
            return Err(Error::QueueFull { needed, free });
        }
        Ok(())
    }

    /// Queues `frame`, encoded now. Its cost must have been reserved: the callers' room
    /// checks make a full queue here a bug, which debug builds report.
    pub(crate) fn push(&mut self, route: Route, frame: &OutFrame<'_>) {
        self.push_each(&[route], frame);
    }

    /// Queues `frame` once for each route (a mirrored prompt), encoding it once.
    pub(crate) fn push_each(&mut self, routes: &[Route], frame: &OutFrame<'_>) {
        let len = frame.encoded_len();
        let need = cost(len) * routes.len();
        if self.buf.len() - self.tail < need {
            if self.free() < need {
                debug_assert!(false, "{need} bytes pushed without a reservation");
                return;
            }
            self.buf.copy_within(self.head..self.tail, 0);
            self.tail -= self.head;
            self.head = 0;
        }
        let first = self.tail + HEADER;
        for (i, &route) in routes.iter().enumerate() {
            let at = self.tail;
            write_header(&mut self.buf[at..at + HEADER], route, len);
            let body = at + HEADER;
            match i {
                // Exactly `len` bytes: written without counting the frame a second time.
                0 => frame.encode_exact(&mut self.buf[body..body + len]),
                _ => self.buf.copy_within(first..first + len, body),
            }
            self.tail = body + len;
        }
        self.frames += routes.len();
        self.pushed += routes.len() as u64;
    }

    /// The route and length of the oldest frame.
    pub(crate) fn peek(&self) -> Option<Transmit> {
        if self.frames == 0 {
            return None;
        }
        let (route, len) = read_header(&self.buf[self.head..self.head + HEADER]);
        Some(Transmit { route, len })
    }

    /// Writes the oldest frame into `out` and drops it; a short `out` keeps it queued.
    pub(crate) fn pop_into(&mut self, out: &mut [u8]) -> Result<Option<Transmit>, BufferTooSmall> {
        let Some(t) = self.peek() else {
            return Ok(None);
        };
        let Some(dst) = out.get_mut(..t.len) else {
            return Err(BufferTooSmall { needed: t.len });
        };
        let start = self.head + HEADER;
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
    let (tag, slot, index) = match route {
        Route::Model => (0u8, 0u16, 0u32),
        Route::Consumer => (1, 0, 0),
        Route::Adapter(c) => (2, c.slot(), c.index()),
    };
    h[0] = tag;
    h[1] = 0;
    h[2..4].copy_from_slice(&slot.to_le_bytes());
    h[4..8].copy_from_slice(&index.to_le_bytes());
    h[8..12].copy_from_slice(&(len as u32).to_le_bytes());
}

fn read_header(h: &[u8]) -> (Route, usize) {
    let slot = u16::from_le_bytes([h[2], h[3]]);
    let index = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
    let route = match h[0] {
        0 => Route::Model,
        1 => Route::Consumer,
        _ => Route::Adapter(CallHandle::new(slot, index)),
    };
    (route, len)
}
