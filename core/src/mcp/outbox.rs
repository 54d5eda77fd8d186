//! Lines waiting to go to the server, oldest first, in the host's outbox bytes.
//!
//! Each record is a header (the line's length, whether it was withdrawn, and the request
//! id of the call it carries, 0 for none) and the line. A call cancelled before its
//! `tools/call` went out has its record withdrawn, so the server never hears of it.

use super::config::OUTBOX_HEADER;

const DEAD: u32 = 1 << 31;

/// The outbox lacks room for a line now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct NoRoom {
    pub(crate) needed: usize,
    pub(crate) free: usize,
}

#[derive(Debug)]
pub(crate) struct Outbox<'a> {
    buf: &'a mut [u8],
    head: usize,
    tail: usize,
    lines: usize,
}

impl<'a> Outbox<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self {
            buf,
            head: 0,
            tail: 0,
            lines: 0,
        }
    }

    /// Bytes a line of `len` bytes takes.
    pub(crate) const fn cost(len: usize) -> usize {
        len + OUTBOX_HEADER
    }

    /// Whether a line of `len` bytes fits an empty outbox.
    pub(crate) fn could_hold(&self, len: usize) -> bool {
        Self::cost(len) <= self.buf.len() && len < DEAD as usize
    }

    /// Bytes free once the outbox is compacted.
    pub(crate) fn free(&self) -> usize {
        self.buf.len() - (self.tail - self.head)
    }

    /// Lines waiting (withdrawn ones included until they reach the front).
    pub(crate) fn len(&self) -> usize {
        self.lines
    }

    /// Checks that a line of `len` bytes fits now.
    pub(crate) fn reserve(&self, len: usize) -> Result<(), NoRoom> {
        let needed = Self::cost(len);
        match needed <= self.free() && len < DEAD as usize {
            true => Ok(()),
            false => Err(NoRoom {
                needed,
                free: self.free(),
            }),
        }
    }

    /// Appends a line of `len` bytes that `write` fills; [`reserve`](Self::reserve) first.
    pub(crate) fn push(&mut self, rpc: u64, len: usize, write: impl FnOnce(&mut [u8])) {
        let need = Self::cost(len);
        if self.tail + need > self.buf.len() {
            self.buf.copy_within(self.head..self.tail, 0);
            self.tail -= self.head;
            self.head = 0;
        }
        let Some(rec) = self.buf.get_mut(self.tail..self.tail + need) else {
            debug_assert!(false, "push without reserve");
            return;
        };
        rec[..4].copy_from_slice(&(len as u32).to_le_bytes());
        rec[4..12].copy_from_slice(&rpc.to_le_bytes());
        write(&mut rec[OUTBOX_HEADER..]);
        self.tail += need;
        self.lines += 1;
    }

    fn header(&self, at: usize) -> (usize, bool, u64) {
        let h = &self.buf[at..at + OUTBOX_HEADER];
        let word = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let mut rpc = [0u8; 8];
        rpc.copy_from_slice(&h[4..12]);
        (
            (word & !DEAD) as usize,
            word & DEAD != 0,
            u64::from_le_bytes(rpc),
        )
    }

    /// Drops withdrawn lines at the front.
    fn skip_dead(&mut self) {
        while self.head < self.tail {
            let (len, dead, _) = self.header(self.head);
            if !dead {
                return;
            }
            self.head += Self::cost(len);
            self.lines -= 1;
        }
        self.head = 0;
        self.tail = 0;
    }

    /// The oldest line and the request id it carries (0: none).
    pub(crate) fn front(&mut self) -> Option<(&[u8], u64)> {
        self.skip_dead();
        if self.head == self.tail {
            return None;
        }
        let (len, _, rpc) = self.header(self.head);
        let start = self.head + OUTBOX_HEADER;
        Some((&self.buf[start..start + len], rpc))
    }

    /// Removes the oldest line.
    pub(crate) fn pop(&mut self) {
        self.skip_dead();
        if self.head < self.tail {
            let (len, _, _) = self.header(self.head);
            self.head += Self::cost(len);
            self.lines -= 1;
            if self.head == self.tail {
                self.head = 0;
                self.tail = 0;
            }
        }
    }

    /// Withdraws the waiting `tools/call` of request `rpc`; false when it already went.
    pub(crate) fn withdraw(&mut self, rpc: u64) -> bool {
        let mut at = self.head;
        while at < self.tail {
            let (len, dead, r) = self.header(at);
            if !dead && r == rpc {
                let word = (len as u32) | DEAD;
                self.buf[at..at + 4].copy_from_slice(&word.to_le_bytes());
                return true;
            }
            at += Self::cost(len);
        }
        false
    }

    /// Drops every line (the transport closed).
    pub(crate) fn clear(&mut self) {
        self.head = 0;
        self.tail = 0;
        self.lines = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_order_withdrawn_ones_skipped_room_reused() {
        let mut mem = [0u8; 3 * (OUTBOX_HEADER + 4)];
        let mut o = Outbox::new(&mut mem);
        for (rpc, text) in [(1u64, b"aaaa"), (2, b"bbbb"), (0, b"cccc")] {
            o.reserve(4).unwrap();
            o.push(rpc, 4, |dst| dst.copy_from_slice(text));
        }
        assert_eq!(
            o.reserve(1),
            Err(NoRoom {
                needed: OUTBOX_HEADER + 1,
                free: 0
            })
        );
        assert!(o.withdraw(2));
        assert!(!o.withdraw(2));
        assert!(!o.withdraw(9));
        assert_eq!(o.front(), Some((&b"aaaa"[..], 1)));
        o.pop();
        // The freed front is reused once the outbox is compacted.
        o.reserve(4).unwrap();
        o.push(3, 4, |dst| dst.copy_from_slice(b"dddd"));
        assert_eq!(o.front(), Some((&b"cccc"[..], 0)));
        o.pop();
        assert_eq!(o.front(), Some((&b"dddd"[..], 3)));
        o.pop();
        assert_eq!(o.front(), None);
        assert_eq!(o.len(), 0);
        assert_eq!(o.free(), 3 * (OUTBOX_HEADER + 4));
    }
}
