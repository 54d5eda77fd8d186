//! The one NDJSON line splitter: the wrapper's input ([`LineSplitter`]), the MCP client's
//! server stream and the decoder's NDJSON bodies all cut lines with [`Lines`].
//!
//! Feed byte chunks of any size with [`LineSplitter::feed`]; take complete lines with
//! [`LineSplitter::next_line`]. `\r\n` is accepted, blank lines (spaces, tabs and `\r`
//! only) are skipped whatever their length. A line longer than the buffer is not stored
//! whole: its first bytes are kept as far as they fit, the rest counted, and it is reported
//! once as [`LineTooLong`] with its full length, so the frame after it is not lost.

/// A line did not fit the splitter's buffer; it was dropped whole.
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

/// What a feed (or the end of the stream) ended with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Cut {
    /// No line is complete (or the one that ended was blank).
    Partial,
    /// `buf[..n]` is a whole line, its line ending left out.
    Line(usize),
    /// A line of this many bytes (line ending left out) did not fit; `buf` holds its start.
    TooLong(usize),
}

/// The state of the line being cut. Its bytes live in a buffer, and its length so far (stored
/// or not, a `\r` before the `\n` included) in a count, that the caller passes each time:
/// the decoder's event buffer and count serve its SSE reader too.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Lines {
    /// Every byte so far is blank: a blank line is skipped, not reported.
    blank: bool,
    /// The last byte was a `\r` (it ends the line when `\n` comes, maybe in a later feed).
    cr: bool,
}

impl Lines {
    pub(crate) const fn new() -> Self {
        Self {
            blank: true,
            cr: false,
        }
    }

    /// Takes bytes of `input` up to and including the first `\n`, storing them in `buf`
    /// after the `len` already there as far as they fit. Returns how many it took, those of
    /// them that did not fit (for a scan of an over-long line), and what the line came to.
    // One copy for its three users (the splitter, the MCP client, the NDJSON decoder):
    // inlined, a build with two of them carried it twice.
    #[inline(never)]
    pub(crate) fn feed<'i>(
        &mut self,
        len: &mut usize,
        buf: &mut [u8],
        input: &'i [u8],
    ) -> (usize, &'i [u8], Cut) {
        let newline = input.iter().position(|&b| b == b'\n');
        let body = &input[..newline.unwrap_or(input.len())];
        let taken = newline.map_or(input.len(), |i| i + 1);
        let stored = buf.len().saturating_sub(*len).min(body.len());
        if stored > 0 {
            buf[*len..*len + stored].copy_from_slice(&body[..stored]);
        }
        if let Some(&last) = body.last() {
            self.cr = last == b'\r';
        }
        self.blank &= is_blank(body);
        *len += body.len();
        let cut = match newline {
            Some(_) => self.end(len, buf.len()),
            None => Cut::Partial,
        };
        (taken, &body[stored..], cut)
    }

    /// The line ends (at its `\n`, or the end of the stream): what it was, with `len` and
    /// the state ready for the next.
    pub(crate) fn end(&mut self, len: &mut usize, cap: usize) -> Cut {
        let (total, blank, cr) = (*len, self.blank, self.cr);
        *self = Self::new();
        *len = 0;
        let content = total - cr as usize;
        match () {
            _ if blank => Cut::Partial,
            _ if total > cap => Cut::TooLong(content),
            _ => Cut::Line(content),
        }
    }
}

/// True when `bytes` holds nothing but the white space a blank line may have.
fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Ready {
    /// Nothing complete yet.
    None,
    /// `buf[..n]` is a complete line, not yet taken.
    Line(usize),
    /// The line in the buffer was handed out.
    Taken,
    /// An over-long line ended; report it.
    TooLong(usize),
}

impl From<Cut> for Ready {
    fn from(cut: Cut) -> Self {
        match cut {
            Cut::Partial => Ready::None,
            Cut::Line(n) => Ready::Line(n),
            Cut::TooLong(len) => Ready::TooLong(len),
        }
    }
}

/// Splits a byte stream into lines, storing at most one partial line.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LineSplitter<'b> {
    buf: &'b mut [u8],
    /// Bytes of the unfinished line, stored or not.
    len: usize,
    lines: Lines,
    ready: Ready,
}

impl<'b> LineSplitter<'b> {
    /// A splitter whose longest line is `buf.len()` bytes (line ending excluded, a `\r`
    /// included).
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            len: 0,
            lines: Lines::new(),
            ready: Ready::None,
        }
    }

    /// The longest line the splitter can hold.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Bytes of an unfinished line held (or being dropped) right now; a complete line
    /// waiting in `next_line`, or one already handed out, is not unfinished.
    pub fn buffered(&self) -> usize {
        self.len
    }

    /// Consumes bytes from `input` up to and including the first line end; returns how many.
    ///
    /// It stops early once a line (or an over-long line's report) is ready: call
    /// [`next_line`](Self::next_line) until it returns `None`, then feed the rest.
    pub fn feed(&mut self, input: &[u8]) -> usize {
        if matches!(self.ready, Ready::Line(_) | Ready::TooLong(_)) {
            return 0;
        }
        let (taken, _, cut) = self.lines.feed(&mut self.len, self.buf, input);
        self.ready = cut.into();
        taken
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
        if matches!(self.ready, Ready::None | Ready::Taken) {
            self.ready = self.lines.end(&mut self.len, self.buf.len()).into();
        }
        self.next_line()
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

    #[test]
    fn an_overlong_line_is_its_stored_start_then_its_spill_at_every_split() {
        // What the MCP client scans of a line too long to hold: the buffer's bytes once the
        // line outgrows it, then every byte that did not fit, so the whole line in order.
        let input = b"{\"id\":3,\"result\":\"0123456789abcdef\"}\r\n{\"id\":4}\n";
        for split in 0..=input.len() {
            let mut buf = [0u8; 16];
            let mut lines = Lines::new();
            let mut len = 0;
            let mut seen = [0u8; 64];
            let mut seen_len = 0;
            let mut cuts = [Cut::Partial; 2];
            let mut n_cuts = 0;
            for part in [&input[..split], &input[split..]] {
                let mut rest = part;
                while !rest.is_empty() {
                    let was_over = len > buf.len();
                    let (n, spill, cut) = lines.feed(&mut len, &mut buf, rest);
                    rest = &rest[n..];
                    if !spill.is_empty() {
                        if !was_over {
                            seen[..16].copy_from_slice(&buf);
                            seen_len = 16;
                        }
                        seen[seen_len..seen_len + spill.len()].copy_from_slice(spill);
                        seen_len += spill.len();
                    }
                    if cut != Cut::Partial {
                        cuts[n_cuts] = cut;
                        n_cuts += 1;
                    }
                }
            }
            assert_eq!(&seen[..seen_len], &input[..37], "split {split}");
            assert_eq!(cuts, [Cut::TooLong(36), Cut::Line(8)], "split {split}");
            assert_eq!(&buf[..8], b"{\"id\":4}");
            assert_eq!(len, 0);
        }
    }
}
