//! The code points of a JSON string's raw contents, its escapes decoded on the way.
//!
//! `minLength`, `maxLength` and `pattern` count and match by code point, while the validator
//! holds strings as the bytes between their quotes. Reading those bytes in place keeps the
//! validator allocation-free: nothing is decoded into a buffer first.
//!
//! The text has been validated as JSON before it gets here, but this reader never panics on
//! anything: a stray backslash reads as itself, a byte that starts no UTF-8 sequence as
//! U+FFFD, one byte each.

/// The code points of a JSON string's raw contents (the bytes between the quotes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodePoints<'a> {
    raw: &'a [u8],
    pos: usize,
}

/// The code points of `raw`, from its start.
pub(crate) fn code_points(raw: &[u8]) -> CodePoints<'_> {
    CodePoints { raw, pos: 0 }
}

/// U+FFFD, for a byte that starts no UTF-8 sequence.
const REPLACEMENT: u32 = 0xFFFD;

impl<'a> CodePoints<'a> {
    /// The code points of `raw` from byte `pos`, a position an earlier [`Self::pos`] gave.
    pub(crate) fn at(raw: &'a [u8], pos: usize) -> Self {
        CodePoints { raw, pos }
    }

    /// The byte offset in the raw text of the next code point (its length once all are read).
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The next code point without moving past it.
    pub(crate) fn peek(&self) -> Option<u32> {
        let mut copy = *self;
        copy.next()
    }

    /// The escape at `pos` (its backslash), as its value and its length in bytes.
    fn escape(&self) -> (u32, usize) {
        let Some(&e) = self.raw.get(self.pos + 1) else {
            return (u32::from(b'\\'), 1);
        };
        let value = match e {
            b'"' | b'\\' | b'/' => u32::from(e),
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => 0x0A,
            b'r' => 0x0D,
            b't' => 0x09,
            b'u' => return self.unicode_escape(),
            _ => return (u32::from(b'\\'), 1),
        };
        (value, 2)
    }

    /// A `\uXXXX` escape at `pos`, joined with a following low-surrogate escape when it is
    /// a high surrogate (the pair is one code point); a lone surrogate is its own value.
    fn unicode_escape(&self) -> (u32, usize) {
        let Some(high) = hex4(self.raw, self.pos + 2) else {
            return (u32::from(b'\\'), 1);
        };
        if (0xD800..0xDC00).contains(&high) {
            let next = self.pos + 6;
            if self.raw.get(next) == Some(&b'\\') && self.raw.get(next + 1) == Some(&b'u') {
                if let Some(low) = hex4(self.raw, next + 2) {
                    if (0xDC00..0xE000).contains(&low) {
                        return (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), 12);
                    }
                }
            }
        }
        (high, 6)
    }

    /// The UTF-8 sequence at `pos`, as its code point and its length in bytes.
    fn utf8(&self, lead: u8) -> (u32, usize) {
        let (len, bits) = match lead {
            0x00..=0x7F => return (u32::from(lead), 1),
            0xC0..=0xDF => (2, u32::from(lead & 0x1F)),
            0xE0..=0xEF => (3, u32::from(lead & 0x0F)),
            0xF0..=0xF7 => (4, u32::from(lead & 0x07)),
            _ => return (REPLACEMENT, 1),
        };
        let mut value = bits;
        for i in 1..len {
            match self.raw.get(self.pos + i) {
                Some(&b) if b & 0xC0 == 0x80 => value = (value << 6) | u32::from(b & 0x3F),
                _ => return (REPLACEMENT, 1),
            }
        }
        (value, len)
    }
}

impl Iterator for CodePoints<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let &b = self.raw.get(self.pos)?;
        let (value, len) = if b == b'\\' {
            self.escape()
        } else {
            self.utf8(b)
        };
        self.pos += len;
        Some(value)
    }
}

/// Four hex digits at `at`, as their value.
fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    let digits = raw.get(at..at + 4)?;
    let mut value = 0;
    for &d in digits {
        value = (value << 4) | char::from(d).to_digit(16)?;
    }
    Some(value)
}

/// How many code points the raw contents of a JSON string hold (`minLength`'s count).
pub(crate) fn code_point_count(raw: &[u8]) -> usize {
    if raw.contains(&b'\\') {
        code_points(raw).count()
    } else {
        // Without escapes every code point is one UTF-8 sequence: count their lead bytes.
        raw.iter().filter(|&&b| !(0x80..=0xBF).contains(&b)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code points of `raw`, with the byte position before each.
    fn read(raw: &[u8]) -> ([u32; 16], [usize; 16], usize) {
        let mut values = [0; 16];
        let mut positions = [0; 16];
        let mut it = code_points(raw);
        let mut n = 0;
        loop {
            let pos = it.pos();
            let Some(c) = it.next() else { break };
            values[n] = c;
            positions[n] = pos;
            n += 1;
        }
        assert_eq!(it.pos(), raw.len());
        (values, positions, n)
    }

    fn values(raw: &[u8]) -> ([u32; 16], usize) {
        let (v, _, n) = read(raw);
        (v, n)
    }

    #[test]
    fn ascii_reads_byte_by_byte() {
        let (v, p, n) = read(b"ab");
        assert_eq!((&v[..n], &p[..n]), (&[0x61, 0x62][..], &[0, 1][..]));
        assert_eq!(code_point_count(b"ab"), 2);
        assert_eq!(code_point_count(b""), 0);
    }

    #[test]
    fn every_short_escape() {
        let raw = br#"\"\\\/\b\f\n\r\t"#;
        let (v, p, n) = read(raw);
        assert_eq!(
            &v[..n],
            &[0x22, 0x5C, 0x2F, 0x08, 0x0C, 0x0A, 0x0D, 0x09][..]
        );
        assert_eq!(&p[..n], &[0, 2, 4, 6, 8, 10, 12, 14][..]);
        assert_eq!(code_point_count(raw), 8);
    }

    #[test]
    fn unicode_escapes() {
        let (v, n) = values(br"\u0041\u00e9\u20AC");
        assert_eq!(&v[..n], &[0x41, 0xE9, 0x20AC][..]);
        assert_eq!(code_point_count(br"\u0041\u00e9\u20AC"), 3);
    }

    #[test]
    fn astral_raw_and_escaped() {
        let raw = "😀".as_bytes();
        assert_eq!(raw.len(), 4);
        let (v, n) = values(raw);
        assert_eq!(&v[..n], &[0x1F600][..]);
        assert_eq!(code_point_count(raw), 1);

        let (v, p, n) = read(br"a\uD83D\uDE00b");
        assert_eq!(&v[..n], &[0x61, 0x1F600, 0x62][..]);
        assert_eq!(&p[..n], &[0, 1, 13][..]);
        assert_eq!(code_point_count(br"a\uD83D\uDE00b"), 3);
        assert_eq!(code_point_count(br"\ud83d\ude00"), 1);
    }

    #[test]
    fn lone_surrogates_are_their_own_values() {
        let (v, n) = values(br"\uD83Dx");
        assert_eq!(&v[..n], &[0xD83D, 0x78][..]);
        let (v, n) = values(br"\uDE00\uD83D");
        assert_eq!(&v[..n], &[0xDE00, 0xD83D][..]);
        // A high surrogate followed by another high one: two values.
        let (v, n) = values(br"\uD83D\uD83D");
        assert_eq!(&v[..n], &[0xD83D, 0xD83D][..]);
        // A high surrogate followed by a non-surrogate escape.
        let (v, n) = values(br"\uD83D\u0041");
        assert_eq!(&v[..n], &[0xD83D, 0x41][..]);
        assert_eq!(code_point_count(br"\uD83D\u0041"), 2);
    }

    #[test]
    fn raw_utf8_of_every_length() {
        let raw = "aé€😀".as_bytes();
        let (v, p, n) = read(raw);
        assert_eq!(&v[..n], &[0x61, 0xE9, 0x20AC, 0x1F600][..]);
        assert_eq!(&p[..n], &[0, 1, 3, 6][..]);
        assert_eq!(code_point_count(raw), 4);
        // Mixed with an escape: the slow path gives the same count.
        assert_eq!(code_point_count("é\\n😀".as_bytes()), 3);
    }

    #[test]
    fn malformed_input_never_panics() {
        let (v, n) = values(b"\\");
        assert_eq!(&v[..n], &[0x5C][..]);
        let (v, n) = values(b"\\q");
        assert_eq!(&v[..n], &[0x5C, 0x71][..]);
        let (v, n) = values(b"\\u12");
        assert_eq!(&v[..n], &[0x5C, 0x75, 0x31, 0x32][..]);
        let (v, n) = values(b"\\uD83D\\u");
        assert_eq!(&v[..n], &[0xD83D, 0x5C, 0x75][..]);
        let (v, n) = values(&[0xE2, 0x82]);
        assert_eq!(&v[..n], &[0xFFFD, 0xFFFD][..]);
        let (v, n) = values(&[0xFF, 0x41]);
        assert_eq!(&v[..n], &[0xFFFD, 0x41][..]);
    }

    #[test]
    fn restart_at_a_position() {
        let raw = br"x\n\uD83D\uDE00y";
        let mut it = code_points(raw);
        it.next();
        it.next();
        let pos = it.pos();
        assert_eq!(pos, 3);
        let mut again = CodePoints::at(raw, pos);
        assert_eq!(again.peek(), Some(0x1F600));
        assert_eq!(again.next(), Some(0x1F600));
        assert_eq!(again.next(), Some(0x79));
        assert_eq!(again.next(), None);
        assert_eq!(CodePoints::at(raw, raw.len() + 5).next(), None);
    }
}
