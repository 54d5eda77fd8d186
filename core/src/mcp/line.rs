//! The server's byte stream cut into lines, one at a time, in the host's line buffer.
//!
//! A line longer than the buffer is not kept: its bytes stream through a [`Salvage`] scan
//! so that a response among them still names the call it answers. Blank lines are skipped
//! and a `\r` before the `\n` is dropped.

use super::salvage::Salvage;

/// What a feed ended with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fed {
    /// The line is not over yet.
    Partial,
    /// `buf[..n]` is a whole line.
    Line(usize),
    /// A line of `len` bytes did not fit; what the scan of it found.
    TooLong { len: usize, scan: Salvage },
}

/// The line being read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct LineReader {
    len: usize,
    /// The scan of a line that outgrew the buffer, and its length so far.
    over: Option<(Salvage, usize)>,
}

impl LineReader {
    pub(crate) const fn new() -> Self {
        Self { len: 0, over: None }
    }

    /// Bytes of an unfinished line read so far.
    pub(crate) fn buffered(&self) -> usize {
        self.over.map_or(self.len, |(_, n)| n)
    }

    /// Drops the unfinished line (the transport closed).
    pub(crate) fn clear(&mut self) {
        *self = Self::new();
    }

    /// Takes bytes of `input` up to and including the first `\n`; returns how many, and
    /// whether a line is complete.
    pub(crate) fn feed(&mut self, buf: &mut [u8], input: &[u8]) -> (usize, Fed) {
        let newline = input.iter().position(|&b| b == b'\n');
        let body = &input[..newline.unwrap_or(input.len())];
        let taken = newline.map_or(input.len(), |i| i + 1);
        if let Some((mut scan, n)) = self.over {
            scan.feed(body);
            let len = n + body.len();
            if newline.is_none() {
                self.over = Some((scan, len));
                return (taken, Fed::Partial);
            }
            self.over = None;
            return (taken, Fed::TooLong { len, scan });
        }
        let total = self.len + body.len();
        if total > buf.len() {
            let mut scan = Salvage::new();
            scan.feed(&buf[..self.len]);
            scan.feed(body);
            self.len = 0;
            if newline.is_none() {
                self.over = Some((scan, total));
                return (taken, Fed::Partial);
            }
            return (taken, Fed::TooLong { len: total, scan });
        }
        buf[self.len..total].copy_from_slice(body);
        self.len = total;
        if newline.is_none() {
            return (taken, Fed::Partial);
        }
        let mut end = total;
        if end > 0 && buf[end - 1] == b'\r' {
            end -= 1;
        }
        self.len = 0;
        match buf[..end].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            true => (taken, Fed::Partial),
            false => (taken, Fed::Line(end)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_at_every_split_blank_lines_skipped_cr_dropped() {
        let input = b"{\"a\":1}\r\n\n  \r\n{\"b\":2}\n";
        for split in 0..=input.len() {
            let mut buf = [0u8; 16];
            let mut r = LineReader::new();
            let mut lines = heapless::Vec::<heapless::Vec<u8, 16>, 4>::new();
            for part in [&input[..split], &input[split..]] {
                let mut rest = part;
                while !rest.is_empty() {
                    let (n, fed) = r.feed(&mut buf, rest);
                    rest = &rest[n..];
                    if let Fed::Line(len) = fed {
                        lines
                            .push(heapless::Vec::from_slice(&buf[..len]).unwrap())
                            .unwrap();
                    }
                }
            }
            assert_eq!(lines.len(), 2, "split {split}");
            assert_eq!(&lines[0][..], b"{\"a\":1}");
            assert_eq!(&lines[1][..], b"{\"b\":2}");
        }
    }

    #[test]
    fn an_overlong_line_is_scanned_and_the_next_is_whole() {
        let input = b"{\"id\":3,\"result\":\"0123456789abcdef\"}\n{\"id\":4}\n";
        for split in 0..=input.len() {
            let mut buf = [0u8; 16];
            let mut r = LineReader::new();
            let mut seen = heapless::Vec::<Fed, 4>::new();
            for part in [&input[..split], &input[split..]] {
                let mut rest = part;
                while !rest.is_empty() {
                    let (n, fed) = r.feed(&mut buf, rest);
                    rest = &rest[n..];
                    if fed != Fed::Partial {
                        seen.push(fed).unwrap();
                    }
                }
            }
            match seen[0] {
                Fed::TooLong { len, scan } => {
                    assert_eq!(len, 36);
                    assert_eq!(scan.response_id(), Some(3));
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(seen[1], Fed::Line(8));
            assert_eq!(r.buffered(), 0);
        }
    }
}
