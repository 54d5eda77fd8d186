//! `END` frames held while calls are pending, kept byte for byte.

use crate::queue;

/// Bytes each held `END` costs on top of its own length.
pub const HELD_HEADER: usize = 4;

/// The shortest `END` frame: `{"type":"END"}`.
const MIN_END_LEN: usize = br#"{"type":"END"}"#.len();

/// The most queue bytes releasing `held_bytes` of held `END`s can take: the shortest `END`s
/// pay the most record headers.
pub(crate) const fn release_cost_bound(held_bytes: usize) -> usize {
    let ends = held_bytes / (HELD_HEADER + MIN_END_LEN);
    held_bytes.saturating_add(ends.saturating_mul(queue::cost(0) - HELD_HEADER))
}

#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Held<'a> {
    buf: &'a mut [u8],
    used: usize,
    count: usize,
}

impl<'a> Held<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self {
            buf,
            used: 0,
            count: 0,
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
        self.used - self.count * HELD_HEADER + self.count * queue::cost(0)
    }

    pub(crate) fn count(&self) -> usize {
        self.count
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

    /// The held frames, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut pos = 0;
        let buf = &self.buf[..self.used];
        core::iter::from_fn(move || {
            let h = buf.get(pos..pos + HELD_HEADER)?;
            let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
            let frame = buf.get(pos + HELD_HEADER..pos + HELD_HEADER + len)?;
            pos += HELD_HEADER + len;
            Some(frame)
        })
    }

    pub(crate) fn clear(&mut self) {
        self.used = 0;
        self.count = 0;
    }
}
