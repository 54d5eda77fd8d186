//! Where a body's bytes go: a counter, a window over the host's buffer, and two small
//! sinks the items need.

use crate::json::escape::{escape_bytes, escape_into, escaped_len, escaped_split, write_escaped};
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
        // Most pieces go straight on where the last one ended, and fit.
        if start == from {
            if let Some(dst) = self.out.get_mut(self.written..self.written + bytes.len()) {
                // A quote or a comma, a third of the pieces: a store, not a call to `memcpy`.
                if let ([d], [b]) = (&mut *dst, bytes) {
                    *d = *b;
                } else {
                    dst.copy_from_slice(bytes);
                }
                self.written += bytes.len();
                return;
            }
        }
        if self.pos <= from || self.written == self.out.len() {
            return;
        }
        let b = &bytes[from.saturating_sub(start)..];
        let n = b.len().min(self.out.len() - self.written);
        self.out[self.written..self.written + n].copy_from_slice(&b[..n]);
        self.written += n;
    }

    fn put_escaped(&mut self, text: &[u8]) {
        if self.pos != self.skip + self.written {
            write_escaped(text, |piece| self.put(piece));
        } else if let Some(cut) = self.escape_on(text) {
            // Cut by the window's end: the rest is counted.
            self.pos += escaped_len(text.get(cut + 1..).unwrap_or(&[]));
        }
    }

    fn put_escaped_sized(&mut self, text: &[u8], escaped: usize) {
        // A text wholly before the window (written by an earlier call), or after it (the
        // window is full), is only counted.
        let end = self.pos + escaped;
        let from = self.skip + self.written;
        if end <= from || self.written == self.out.len() {
            self.pos = end;
            return;
        }
        let mut text = text;
        if self.pos < from {
            // Begun by an earlier call: its written part is skipped by counting, eight bytes
            // at a time, to the byte whose escape the window starts in.
            let (j, into) = escaped_split(text, from - self.pos);
            if let Some(&b) = text.get(j) {
                self.pos = from - into;
                text = &text[j..];
                if into > 0 {
                    let (e, len) = escape_bytes(b);
                    self.put(&e[..len]);
                    text = &text[1..];
                }
            }
        }
        self.escape_on(text);
        self.pos = end;
    }
}

impl Window<'_> {
    /// Escapes `text`, which starts where the window goes on, straight into the buffer: all
    /// of it, or (the window fills) up to the window's end, the escape the end cuts written
    /// in part; then the offset in `text` of the byte cut.
    fn escape_on(&mut self, text: &[u8]) -> Option<usize> {
        let (cut, n) = match escape_into(text, &mut self.out[self.written..]) {
            Ok(n) => (None, n),
            Err((i, n)) => (Some(i), n),
        };
        self.written += n;
        self.pos += n;
        let b = *text.get(cut?)?;
        let (e, len) = escape_bytes(b);
        self.put(&e[..len]);
        cut
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
