//! `END` frames held while calls are pending, kept byte for byte.
//!
//! Released `END`s are not copied into the output queue: a round's release is one queue
//! record that `poll_transmit` reads from here, `END` by `END`. Their bytes stay until the
//! last released `END` is transmitted; `END`s held meanwhile go after them.

use crate::room::{record_cost, HELD_HEADER};

#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Held<'a> {
    buf: &'a mut [u8],
    /// Bytes in use: released `END`s not yet all transmitted, then the held ones.
    used: usize,
    /// Where the held (not yet released) `END`s start.
    held_at: usize,
    /// `END`s held, not yet released.
    count: usize,
    /// Releases whose record is still queued.
    releases: usize,
}

impl<'a> Held<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self {
            buf,
            used: 0,
            held_at: 0,
            count: 0,
            releases: 0,
        }
    }

    /// Bytes one more `END` of `len` bytes needs.
    pub(crate) fn needed(len: usize) -> usize {
        HELD_HEADER + len
    }

    pub(crate) fn free(&self) -> usize {
        self.buf.len() - self.used
    }

    /// The queue bytes releasing every held `END` takes.
    pub(crate) fn release_cost(&self) -> usize {
        match self.count {
            0 => 0,
            _ => record_cost(0),
        }
    }

    /// Stores a copy; `false` (nothing stored) when it does not fit.
    pub(crate) fn push(&mut self, frame: &[u8]) -> bool {
        let need = Self::needed(frame.len());
        if need > self.free() {
            return false;
        }
        let at = self.used;
        self.buf[at..at + HELD_HEADER].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        self.buf[at + HELD_HEADER..at + need].copy_from_slice(frame);
        self.used += need;
        self.count += 1;
        true
    }

    /// Releases the held `END`s: where the first is, and how many, for the queue's record.
    pub(crate) fn release(&mut self) -> Option<(usize, usize)> {
        if self.count == 0 {
            return None;
        }
        let released = (self.held_at, self.count);
        self.held_at = self.used;
        self.count = 0;
        self.releases += 1;
        Some(released)
    }

    /// The released `END` at `offset`; empty if there is none (a record that is not ours).
    pub(crate) fn frame_at(&self, offset: usize) -> &[u8] {
        let Some(h) = self.buf.get(offset..offset + HELD_HEADER) else {
            return &[];
        };
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let start = offset + HELD_HEADER;
        self.buf.get(start..start + len).unwrap_or(&[])
    }

    /// A release's last `END` was transmitted; once none is left, the held ones move to
    /// the front.
    pub(crate) fn release_done(&mut self) {
        self.releases = self.releases.saturating_sub(1);
        if self.releases == 0 {
            self.buf.copy_within(self.held_at..self.used, 0);
            self.used -= self.held_at;
            self.held_at = 0;
        }
    }
}
