//! Where a body's bytes go: a counter, a window over the host's buffer, and two small
//! sinks the items need.

use crate::json::escape::{escape_into, write_escaped, write_escaped_while};
use crate::sink::{Counter, Sink};

/// Where body bytes go: a counter, or a window over the host's buffer.
pub(super) trait BodySink {
    fn sink(&mut self) -> &mut dyn Sink;
    fn pos(&self) -> usize;
    fn full(&self) -> bool;
}

impl BodySink for Counter {
    fn sink(&mut self) -> &mut dyn Sink {
        self
    }
    fn pos(&self) -> usize {
        self.0
    }
    fn full(&self) -> bool {
        false
    }
}

/// The body's bytes from `skip` on, as many as `out` holds; `pos` counts every byte.
pub(super) struct Window<'o> {
    pub(super) out: &'o mut [u8],
    pub(super) skip: usize,
    pub(super) pos: usize,
    pub(super) written: usize,
}

impl Sink for Window<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let start = self.pos;
        self.pos += bytes.len();
        let from = self.skip + self.written;
        if self.pos <= from || self.written == self.out.len() {
            return;
        }
        let b = &bytes[from.saturating_sub(start)..];
        let n = b.len().min(self.out.len() - self.written);
        let dst = &mut self.out[self.written..self.written + n];
        // A quote or a comma, a third of the pieces: a store, not a call to `memcpy`.
        if let ([d], [s]) = (&mut *dst, b) {
            *d = *s;
        } else {
            dst.copy_from_slice(&b[..n]);
        }
        self.written += n;
    }

    fn put_escaped(&mut self, text: &[u8]) {
        if !self.escape_in_place(text) {
            write_escaped(text, |piece| self.put(piece));
        }
    }

    fn put_escaped_sized(&mut self, text: &[u8], escaped: usize) {
        // A text wholly before the window (written by an earlier call), or after it (the
        // window is full), is only counted.
        let end = self.pos + escaped;
        if end <= self.skip + self.written || self.written == self.out.len() {
            self.pos = end;
        } else if !self.escape_in_place(text) {
            // Piece by piece, cut to the window as `put` cuts them, until the window is full:
            // the text's end is known without escaping the rest.
            write_escaped_while(text, |piece| {
                self.put(piece);
                self.written < self.out.len()
            });
            self.pos = end;
        }
    }
}

impl Window<'_> {
    /// Escapes `text` straight into the buffer when all of it is to be written there and
    /// fits: most args and results, in a buffer of a few KiB. Otherwise (false) it is
    /// written piece by piece, each piece cut to the window as `put` cuts it.
    fn escape_in_place(&mut self, text: &[u8]) -> bool {
        if self.pos < self.skip + self.written {
            return false;
        }
        match escape_into(text, &mut self.out[self.written..]) {
            Some(n) => {
                self.written += n;
                self.pos += n;
                true
            }
            None => false,
        }
    }
}

impl BodySink for Window<'_> {
    fn sink(&mut self) -> &mut dyn Sink {
        self
    }
    fn pos(&self) -> usize {
        self.pos
    }
    fn full(&self) -> bool {
        self.written == self.out.len()
    }
}

/// A sink passing everything on but the last byte it is given (an item's closing brace).
pub(super) struct HoldLast<'s> {
    pub(super) s: &'s mut dyn Sink,
    pub(super) held: bool,
}

impl Sink for HoldLast<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let Some((&last, rest)) = bytes.split_last() else {
            return;
        };
        if self.held {
            self.s.put(b"}");
        }
        self.s.put(rest);
        // Every item ends with `}`: only that byte is ever held.
        self.held = last == b'}';
        if !self.held {
            self.s.put(&[last]);
        }
    }

    fn put_escaped(&mut self, text: &[u8]) {
        self.escaped(text, None);
    }

    fn put_escaped_sized(&mut self, text: &[u8], escaped: usize) {
        self.escaped(text, Some(escaped));
    }
}

impl HoldLast<'_> {
    fn escaped(&mut self, text: &[u8], escaped: Option<usize>) {
        // Escaping leaves `}` as it is and makes none: the escaped text ends with `}` exactly
        // when `text` does, and that byte is held as `put` would hold it.
        let Some((&last, rest)) = text.split_last() else {
            return;
        };
        if self.held {
            self.s.put(b"}");
        }
        self.held = last == b'}';
        let (text, escaped) = match self.held {
            true => (rest, escaped.map(|n| n.saturating_sub(1))),
            false => (text, escaped),
        };
        match escaped {
            Some(n) => self.s.put_escaped_sized(text, n),
            None => self.s.put_escaped(text),
        }
    }
}
