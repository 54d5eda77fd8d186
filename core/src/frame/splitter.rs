//! NDJSON line framing over a caller-chosen fixed buffer.
//!
//! Feed byte chunks of any size with [`LineSplitter::feed`]; take complete lines
//! with [`LineSplitter::next_line`]. `\r\n` is accepted, blank lines (spaces, tabs
//! and `\r` only) are skipped whatever their length. A line longer than the
//! buffer is not stored: its bytes are counted and dropped up to the next
//! newline, then reported once as [`LineTooLong`] with its full length, so the
//! frame after it is not lost.

/// A line did not fit the framer's buffer; it was dropped whole.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LineTooLong {
    /// The line's length in bytes, without its line ending.
    pub len: usize,
}

impl core::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "line of {} bytes is longer than the buffer", self.len)
    }
}

impl core::error::Error for LineTooLong {}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Ready {
    /// Nothing complete yet.
    None,
    /// `buf[..n]` is a complete line, not yet taken.
    Line(usize),
    /// The line in `buf[..n]` was handed out; clear before the next byte.
    Taken,
    /// An over-long line ended; report it.
    TooLong(usize),
}

/// Splits a byte stream into lines, storing at most one partial line.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LineSplitter<'b> {
    buf: &'b mut [u8],
    len: usize,
    /// Bytes of an over-long line dropped so far, when discarding.
    discarding: Option<usize>,
    /// Whether the last byte dropped was a `\r` (it may end the line when `\n` comes in a later feed).
    dropped_cr: bool,
    /// Whether every byte of the line being dropped was blank (then it is skipped, not reported).
    dropped_blank: bool,
    ready: Ready,
}

impl<'b> LineSplitter<'b> {
    /// A framer whose longest line is `buf.len()` bytes (line ending excluded, a `\r` included).
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            len: 0,
            discarding: None,
            dropped_cr: false,
            dropped_blank: true,
            ready: Ready::None,
        }
    }

    /// The longest line the framer can hold.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Bytes of an unfinished line held (or being dropped) right now; a complete line waiting
    /// in `next_line`, or one already handed out, is not unfinished.
    pub fn buffered(&self) -> usize {
        match self.ready {
            Ready::None => self.discarding.unwrap_or(self.len),
            Ready::Line(_) | Ready::Taken | Ready::TooLong(_) => 0,
        }
    }

    /// Consumes bytes from `input` up to and including the first line end; returns how many.
    ///
    /// It stops early once a line (or an over-long line's report) is ready: call
    /// [`next_line`](Self::next_line) until it returns `None`, then feed the rest.
    pub fn feed(&mut self, input: &[u8]) -> usize {
        match self.ready {
            Ready::Line(_) | Ready::TooLong(_) => return 0,
            Ready::Taken => {
                self.len = 0;
                self.ready = Ready::None;
            }
            Ready::None => {}
        }
        let newline = input.iter().position(|&b| b == b'\n');
        let body = &input[..newline.unwrap_or(input.len())];
        let consumed = newline.map_or(input.len(), |i| i + 1);
        if let Some(dropped) = self.discarding {
            let total = dropped + body.len();
            if let Some(&last) = body.last() {
                self.dropped_cr = last == b'\r';
            }
            self.dropped_blank &= is_blank(body);
            if newline.is_some() {
                self.discarding = None;
                self.end_dropped(total);
            } else {
                self.discarding = Some(total);
            }
            return consumed;
        }
        let total = self.len + body.len();
        if total > self.buf.len() {
            // A `\r` that only fits because the line ends here still counts against the buffer.
            self.dropped_blank = is_blank(&self.buf[..self.len]) && is_blank(body);
            self.len = 0;
            // `total` exceeds what was stored, so `body` is not empty.
            self.dropped_cr = body.last() == Some(&b'\r');
            if newline.is_some() {
                self.end_dropped(total);
            } else {
                self.discarding = Some(total);
            }
            return consumed;
        }
        self.buf[self.len..total].copy_from_slice(body);
        self.len = total;
        if newline.is_some() {
            match content_end(&self.buf[..self.len]) {
                Some(end) => self.ready = Ready::Line(end),
                None => self.len = 0,
            }
        }
        consumed
    }

    /// A dropped line of `total` bytes ended: report it, unless it was blank.
    fn end_dropped(&mut self, total: usize) {
        if !self.dropped_blank {
            self.ready = Ready::TooLong(strip_cr_len(total, self.dropped_cr));
        }
    }

    /// The next complete line (without its line ending), or the report of an over-long one.
    pub fn next_line(&mut self) -> Option<Result<&[u8], LineTooLong>> {
        match self.ready {
            Ready::Line(n) => {
                self.ready = Ready::Taken;
                Some(Ok(&self.buf[..n]))
            }
            Ready::TooLong(len) => {
                self.ready = Ready::None;
                Some(Err(LineTooLong { len }))
            }
            Ready::None | Ready::Taken => None,
        }
    }

    /// At the end of the stream: the last line when it had no newline.
    pub fn finish(&mut self) -> Option<Result<&[u8], LineTooLong>> {
        if matches!(self.ready, Ready::Line(_) | Ready::TooLong(_)) {
            return self.next_line();
        }
        if let Some(dropped) = self.discarding.take() {
            // Like a stored last line, a final `\r` is not part of it.
            return (!self.dropped_blank).then_some(Err(LineTooLong {
                len: strip_cr_len(dropped, self.dropped_cr),
            }));
        }
        if matches!(self.ready, Ready::Taken) {
            self.len = 0;
        }
        let Some(end) = content_end(&self.buf[..self.len]) else {
            self.len = 0;
            self.ready = Ready::None;
            return None;
        };
        self.ready = Ready::Taken;
        Some(Ok(&self.buf[..end]))
    }
}

/// The length of `line` without its trailing `\r`, or `None` for a blank line
/// (spaces, tabs and stray `\r`s only), which is skipped.
fn content_end(line: &[u8]) -> Option<usize> {
    let end = line.strip_suffix(b"\r").unwrap_or(line).len();
    (!is_blank(line)).then_some(end)
}

/// True when `bytes` holds nothing but the white space a blank line may have.
fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

fn strip_cr_len(len: usize, ends_with_cr: bool) -> usize {
    if ends_with_cr {
        len - 1
    } else {
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_at_a_time_crlf_blank_and_overlong() {
        let input = b"{\"a\":1}\r\n\n  \n0123456789ABCDEF\n{\"b\":2}\ntail";
        let mut storage = [0u8; 10];
        let mut f = LineSplitter::new(&mut storage);
        let mut got: [(u8, usize); 8] = [(0, 0); 8];
        let mut n = 0;
        for &b in input.iter() {
            let mut rest = &[b][..];
            while !rest.is_empty() {
                let c = f.feed(rest);
                rest = &rest[c..];
                while let Some(item) = f.next_line() {
                    got[n] = match item {
                        Ok(l) => (l[2], l.len()),
                        Err(e) => (0, e.len),
                    };
                    n += 1;
                }
            }
        }
        assert_eq!(&got[..n], &[(b'a', 7), (0, 16), (b'b', 7)]);
        assert_eq!(f.finish(), Some(Ok(&b"tail"[..])));
        assert_eq!(f.finish(), None);
    }

    #[test]
    fn blank_lines_longer_than_the_buffer_are_skipped() {
        // Blank lines of every length around the 4-byte buffer, fed whole and byte by byte,
        // then a real line: only the real line comes out, and no over-long report.
        for len in 0..12 {
            let mut input = [b' '; 16];
            input[..len]
                .iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b = b" \t\r"[i % 3]);
            input[len] = b'\n';
            input[len + 1..len + 4].copy_from_slice(b"ab\n");
            let input = &input[..len + 4];
            for step in [1, input.len()] {
                let mut storage = [0u8; 4];
                let mut f = LineSplitter::new(&mut storage);
                let mut lines = 0;
                for chunk in input.chunks(step) {
                    let mut rest = chunk;
                    while !rest.is_empty() {
                        let c = f.feed(rest);
                        rest = &rest[c..];
                        while let Some(item) = f.next_line() {
                            assert_eq!(item, Ok(&b"ab"[..]), "blank of {len}, step {step}");
                            lines += 1;
                        }
                    }
                }
                assert_eq!(lines, 1, "blank of {len}, step {step}");
            }
            // Unterminated at the end of the stream: nothing to report either.
            let mut storage = [0u8; 4];
            let mut f = LineSplitter::new(&mut storage);
            assert_eq!(f.feed(&input[..len]), len);
            assert_eq!(f.finish(), None, "blank of {len} at the end");
        }
        // One non-blank byte makes it a real over-long line.
        let mut storage = [0u8; 4];
        let mut f = LineSplitter::new(&mut storage);
        assert_eq!(f.feed(b"      x  \n"), 10);
        assert_eq!(f.next_line(), Some(Err(LineTooLong { len: 9 })));
    }

    #[test]
    fn buffered_counts_only_an_unfinished_line() {
        let mut storage = [0u8; 16];
        let mut f = LineSplitter::new(&mut storage);
        assert_eq!(f.feed(b"{\"a\""), 4);
        assert_eq!(f.buffered(), 4);
        assert_eq!(f.feed(b":1}\n{\"b"), 4);
        assert_eq!(f.buffered(), 0, "a complete line is not unfinished");
        assert_eq!(f.next_line(), Some(Ok(&b"{\"a\":1}"[..])));
        assert_eq!(f.buffered(), 0, "nor is a line handed out");
        assert_eq!(f.feed(b"{\"b"), 3);
        assert_eq!(f.buffered(), 3);
    }
}
