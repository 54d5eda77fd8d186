//! String tokens as views: compared and decoded without copying first.

use super::bytes::{zero_bytes, LO};
use super::error::{JsonError, JsonErrorKind};
use super::scan::scan_string;

/// A validated JSON string: the raw bytes between its quotes, escapes undecoded.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct JsonStr<'a> {
    raw: &'a [u8],
}

/// A decode target was too small; `needed` is the decoded length in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferTooSmall {
    /// Bytes the whole output needs.
    pub needed: usize,
}

impl<'a> JsonStr<'a> {
    /// Views the string token at `bytes[start..]` (`start` at its opening quote), validating it.
    pub fn parse_at(bytes: &'a [u8], start: usize) -> Result<(Self, usize), JsonError> {
        if bytes.get(start) != Some(&b'"') {
            let kind = if start >= bytes.len() {
                JsonErrorKind::UnexpectedEnd
            } else {
                JsonErrorKind::UnexpectedByte
            };
            return Err(JsonError::new(kind, start));
        }
        let end = scan_string(bytes, start)?;
        Ok((
            Self {
                raw: &bytes[start + 1..end - 1],
            },
            end,
        ))
    }

    /// Views one whole JSON string token (quotes included), validating it.
    pub fn from_token(token: &'a [u8]) -> Result<Self, JsonError> {
        let (s, end) = Self::parse_at(token, 0)?;
        if end != token.len() {
            return Err(JsonError::new(JsonErrorKind::TrailingData, end));
        }
        Ok(s)
    }

    /// Views a string token this module's scanner already validated (a `Member` value or key
    /// span starting with `"`), without scanning it again.
    #[inline]
    pub(crate) fn from_scanned(token: &'a [u8]) -> Self {
        debug_assert!(Self::from_token(token).is_ok());
        Self {
            raw: &token[1..token.len() - 1],
        }
    }

    /// Views the inside of a string this crate wrote canonically (no quotes), unchecked.
    #[inline]
    pub(crate) fn from_inner(raw: &'a [u8]) -> Self {
        Self { raw }
    }

    /// Views a token of bytes already validated (quotes included) without checking it: on
    /// anything shorter than two bytes the view is empty.
    #[inline]
    pub(crate) fn from_scanned_lenient(token: &'a [u8]) -> Self {
        Self {
            raw: token.get(1..token.len().saturating_sub(1)).unwrap_or(&[]),
        }
    }

    /// Hands the decoded text to `put` in runs: stretches without escapes as they are, each
    /// escape (a surrogate pair as one character) as its UTF-8 bytes.
    pub(crate) fn for_each_decoded_run(&self, mut put: impl FnMut(&[u8])) {
        let raw = self.raw;
        let mut i = 0;
        while i < raw.len() {
            let run = raw[i..]
                .iter()
                .position(|&b| b == b'\\')
                .map_or(raw.len(), |n| i + n);
            if run > i {
                put(&raw[i..run]);
            }
            if run >= raw.len() {
                break;
            }
            // One escape: `\uXXXX\uXXXX` for a pair, else 6 or 2 bytes.
            let len = match raw.get(run + 1) {
                Some(b'u') => {
                    let hi = raw.get(run + 2..run + 6).map_or(0, hex4);
                    if (0xD800..0xDC00).contains(&hi)
                        && raw.get(run + 6..run + 8) == Some(b"\\u")
                        && (0xDC00..0xE000).contains(&raw.get(run + 8..run + 12).map_or(0, hex4))
                    {
                        12
                    } else {
                        6
                    }
                }
                _ => 2,
            };
            let end = (run + len).min(raw.len());
            let mut buf = [0u8; 4];
            let mut n = 0;
            for b in (JsonStr {
                raw: &raw[run..end],
            })
            .decoded()
            {
                if n < buf.len() {
                    buf[n] = b;
                    n += 1;
                }
            }
            put(&buf[..n]);
            i = end;
        }
    }

    /// The raw bytes between the quotes, escapes as written.
    #[inline]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// True when the string has no escapes, so its raw bytes are its text.
    #[inline]
    pub fn is_plain(&self) -> bool {
        // Eight bytes at a time, inline: keys and names are short, and a call to `memchr`
        // costs more than the search.
        let mut words = self.raw.chunks_exact(8);
        for chunk in words.by_ref() {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if zero_bytes(u64::from_le_bytes(word) ^ (LO * b'\\' as u64)) != 0 {
                return false;
            }
        }
        words.remainder().iter().all(|&b| b != b'\\')
    }

    /// The decoded text when it has no escapes: zero-copy.
    pub fn as_plain_str(&self) -> Option<&'a str> {
        if self.is_plain() {
            core::str::from_utf8(self.raw).ok()
        } else {
            None
        }
    }

    /// Decoded UTF-8 bytes, one at a time, escapes resolved.
    pub fn decoded(&self) -> Decoded<'a> {
        Decoded {
            raw: self.raw,
            pos: 0,
            pending: [0; 4],
            pending_len: 0,
            pending_pos: 0,
        }
    }

    /// Length of the decoded text in bytes.
    pub fn decoded_len(&self) -> usize {
        if self.is_plain() {
            self.raw.len()
        } else {
            self.decoded().count()
        }
    }

    /// Compares the decoded text with `text`, without a buffer.
    #[inline]
    pub fn eq_text(&self, text: &[u8]) -> bool {
        // Decoding only ever shortens (every escape is longer than what it stands for), so
        // the lengths settle most comparisons; inlined, a constant `text` makes the byte
        // comparison a few loads rather than a call.
        match self.raw.len().cmp(&text.len()) {
            core::cmp::Ordering::Less => false,
            core::cmp::Ordering::Equal => self.raw == text && self.is_plain(),
            // Only an escape can make it shorter: unless it starts with one, the first bytes
            // must agree (an empty `text` never matches: every escape decodes to a byte).
            core::cmp::Ordering::Greater => match (self.raw.first(), text.first()) {
                // Equivalent mutant: the first-byte guard -> `true`: `eq_decoded` then decides.
                (Some(&r), Some(&t)) if r == t || r == b'\\' => self.eq_decoded(text),
                _ => false,
            },
        }
    }

    /// [`eq_text`](Self::eq_text) the long way, decoding as it compares (a mismatch usually
    /// shows at the first byte).
    #[inline(never)]
    fn eq_decoded(&self, text: &[u8]) -> bool {
        let mut it = self.decoded();
        for &b in text {
            if it.next() != Some(b) {
                return false;
            }
        }
        it.next().is_none()
    }

    /// Decodes into `out` and returns the text; a short buffer is an error that writes nothing.
    pub fn decode_into<'o>(&self, out: &'o mut [u8]) -> Result<&'o str, BufferTooSmall> {
        if self.is_plain() {
            // No escapes: the text is the raw bytes, copied at once.
            let needed = self.raw.len();
            let Some(dst) = out.get_mut(..needed) else {
                return Err(BufferTooSmall { needed });
            };
            dst.copy_from_slice(self.raw);
            return core::str::from_utf8(dst).map_err(|_| BufferTooSmall { needed });
        }
        self.decode_escaped_into(out)
    }

    /// [`decode_into`](Self::decode_into) the long way, escapes or not (for callers that
    /// take a plain string's own bytes instead).
    pub(crate) fn decode_escaped_into<'o>(
        &self,
        out: &'o mut [u8],
    ) -> Result<&'o str, BufferTooSmall> {
        let needed = self.decoded_len();
        let Some(dst) = out.get_mut(..needed) else {
            return Err(BufferTooSmall { needed });
        };
        for (d, b) in dst.iter_mut().zip(self.decoded()) {
            *d = b;
        }
        // Validated input decodes to UTF-8; the check keeps the core free of unsafe.
        core::str::from_utf8(dst).map_err(|_| BufferTooSmall { needed })
    }

    /// Decodes as much as fits into `out`, ending on a character boundary; the flag says
    /// whether the text was cut.
    pub fn decode_prefix_into<'o>(&self, out: &'o mut [u8]) -> (&'o str, bool) {
        let mut n = 0;
        let mut cut = false;
        for b in self.decoded() {
            if n == out.len() {
                cut = true;
                break;
            }
            out[n] = b;
            n += 1;
        }
        // Decoded text is UTF-8, so only a character cut at the end can fail the check.
        let text = match core::str::from_utf8(&out[..n]) {
            Ok(t) => t,
            Err(e) => core::str::from_utf8(&out[..e.valid_up_to()]).unwrap_or(""),
        };
        (text, cut)
    }
}

/// The value of four hex digits (any other byte counts as 0: the text was validated).
fn hex4(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |v, &b| {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => 0,
        };
        (v << 4) | d as u32
    })
}

/// Iterator over the decoded UTF-8 bytes of a [`JsonStr`].
#[derive(Clone, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Decoded<'a> {
    raw: &'a [u8],
    pos: usize,
    pending: [u8; 4],
    pending_len: u8,
    pending_pos: u8,
}

impl Decoded<'_> {
    fn hex_at(&self, at: usize) -> u32 {
        let mut v = 0u32;
        for i in 0..4 {
            let b = self.raw.get(at + i).copied().unwrap_or(b'0');
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => 0,
            };
            // Equivalent mutant: `|` -> `^`: `v << 4` has a zero low nibble, `d` only that.
            v = (v << 4) | d as u32;
        }
        v
    }
}

impl Iterator for Decoded<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if self.pending_pos < self.pending_len {
            let b = self.pending[self.pending_pos as usize];
            self.pending_pos += 1;
            return Some(b);
        }
        let b = *self.raw.get(self.pos)?;
        if b != b'\\' {
            self.pos += 1;
            return Some(b);
        }
        let esc = self.raw.get(self.pos + 1).copied().unwrap_or(b'\\');
        self.pos += 2;
        let simple = match esc {
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'u' => None,
            other => Some(other),
        };
        if let Some(s) = simple {
            return Some(s);
        }
        let mut cp = self.hex_at(self.pos);
        self.pos += 4;
        // A high surrogate pairs only with an escaped low one right after it; any other
        // surrogate stands alone and decodes as U+FFFD (SPEC §7.24).
        if (0xD800..0xDC00).contains(&cp) && self.raw.get(self.pos..self.pos + 2) == Some(b"\\u") {
            let low = self.hex_at(self.pos + 2);
            if (0xDC00..0xE000).contains(&low) {
                self.pos += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
        }
        let c = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
        let len = c.encode_utf8(&mut self.pending).len();
        self.pending_len = len as u8;
        self.pending_pos = 1;
        Some(self.pending[0])
    }
}

impl core::fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "buffer too small: {} bytes needed", self.needed)
    }
}

impl core::error::Error for BufferTooSmall {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_high_surrogate_pairs_with_the_escape_after_it() {
        let mut out = [0u8; 16];
        for (token, text) in [
            (&br#""\u0041\udc00""#[..], "A\u{FFFD}"),
            (br#""\u00e9\ude00""#, "é\u{FFFD}"),
            (br#""\ud83d\ude00""#, "😀"),
            (br#""\ud83d\u0041""#, "\u{FFFD}A"),
        ] {
            let s = JsonStr::from_token(token).unwrap();
            assert_eq!(s.decode_into(&mut out), Ok(text), "{token:?}");
        }
    }

    #[test]
    fn decodes_escapes_and_pairs() {
        let s = JsonStr::from_token(b"\"a\\n\\u00e9\\ud83d\\ude00\\/\"").unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(s.decode_into(&mut buf).unwrap(), "a\n\u{e9}\u{1F600}/");
        assert_eq!(s.decoded_len(), 9);
        assert!(s.eq_text("a\n\u{e9}\u{1F600}/".as_bytes()));
        let mut small = [0u8; 4];
        assert_eq!(s.decode_into(&mut small), Err(BufferTooSmall { needed: 9 }));
        assert_eq!(small, [0; 4]);
    }

    #[test]
    fn unpaired_surrogates_decode_to_the_replacement_character() {
        let cases: [(&[u8], &str); 7] = [
            (b"\"\\ud800\"", "\u{FFFD}"),
            (b"\"\\udc00\"", "\u{FFFD}"),
            (b"\"\\ud800\\ud800\"", "\u{FFFD}\u{FFFD}"),
            (b"\"\\ud800x\"", "\u{FFFD}x"),
            (b"\"\\ud800\\u0041\"", "\u{FFFD}A"),
            (b"\"\\udc00\\ud83d\\ude00\"", "\u{FFFD}\u{1F600}"),
            (b"\"\\ud83d\\ude00\\ud83d\"", "\u{1F600}\u{FFFD}"),
        ];
        for (token, text) in cases {
            let s = JsonStr::from_token(token).unwrap();
            let mut buf = [0u8; 16];
            assert_eq!(s.decode_into(&mut buf), Ok(text));
            assert_eq!(s.decoded_len(), text.len());
            assert!(s.eq_text(text.as_bytes()));
        }
    }
}
