//! Escaping text for the inside of a JSON string (the other way from
//! [`JsonStr`](super::JsonStr)'s decoding): minimal escapes, eight bytes at a time, and the
//! lengths and cuts the library needs before it writes (SPEC §1, §7.22).

use super::bytes::{zero_bytes, HI, LO};

/// The offset of the first byte at or after `from` that needs escaping, or `text.len()`.
pub(crate) fn next_escape(text: &[u8], mut from: usize) -> usize {
    // Equivalent mutant: `<` -> `<=`: a look at the end finds only padding, which is never flagged.
    while from < text.len() {
        // Eight bytes at a time (the last few padded with a byte that never needs escaping,
        // so short names take one look).
        let mut word = [b'a'; 8];
        match text.get(from..from + 8) {
            Some(chunk) => word.copy_from_slice(chunk),
            // Byte by byte: a copy of a variable length would be a call to `memcpy`.
            None => text[from..]
                .iter()
                .zip(&mut word)
                .for_each(|(b, w)| *w = *b),
        }
        let m = escape_mask(u64::from_le_bytes(word));
        if m != 0 {
            // The lowest flagged byte is a real one, never padding.
            return from + (m.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    text.len()
}

/// Writes `text` escaped for the inside of a JSON string (no quotes), piece by piece.
pub(crate) fn write_escaped(text: &[u8], mut put: impl FnMut(&[u8])) {
    let mut run = 0;
    let mut i = 0;
    // Equivalent mutant (`put_escaped`'s loop): `<` -> `<=`: a look at the end finds nothing.
    while i < text.len() {
        i = next_escape(text, i);
        let Some(&b) = text.get(i) else {
            break;
        };
        put(&text[run..i]);
        let (e, len) = escape_of(b);
        put(&e[..len]);
        i += 1;
        run = i;
    }
    put(&text[run..]);
}

/// The escape of a byte that needs one (`"`, `\\`, a control character): its bytes, its length.
#[inline]
fn escape_of(b: u8) -> ([u8; 6], usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            let hex = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 15) as usize],
            ];
            return (hex, 6);
        }
    };
    ([b'\\', short, 0, 0, 0, 0], 2)
}

/// The length of `text` escaped (what [`write_escaped`] writes), eight bytes at a time.
pub(crate) fn escaped_len(text: &[u8]) -> usize {
    let mut n = text.len();
    let mut i = 0;
    loop {
        i = next_escape(text, i);
        let Some(&b) = text.get(i) else {
            return n;
        };
        n += escape_of(b).1 - 1;
        i += 1;
    }
}

/// Where the escaped form of `text` reaches `skip` bytes: the byte of `text` whose escape
/// holds escaped offset `skip`, and how far into that escape it is (`(text.len(), 0)` when
/// `skip` is at or past the end). Eight bytes at a time between escapes.
pub(crate) fn escaped_split(text: &[u8], skip: usize) -> (usize, usize) {
    let (mut i, mut n) = (0, 0);
    loop {
        let e = next_escape(text, i);
        if n + (e - i) > skip {
            return (i + (skip - n), 0);
        }
        n += e - i;
        let Some(&b) = text.get(e) else {
            return (text.len(), 0);
        };
        let len = escape_of(b).1;
        if n + len > skip {
            return (e, skip - n);
        }
        n += len;
        i = e + 1;
    }
}

/// The bytes of the escape of `b` (`b` itself when it needs none), and how many there are.
pub(crate) fn escape_bytes(b: u8) -> ([u8; 6], usize) {
    if b == b'"' || b == b'\\' || b < 0x20 {
        escape_of(b)
    } else {
        ([b, 0, 0, 0, 0, 0], 1)
    }
}

/// Writes `text` escaped into the front of `out` and returns that length ([`escaped_len`]):
/// [`write_escaped`]'s bytes, written in place rather than handed out in pieces (JSON written
/// as a string is escaped every few bytes, and each piece handed on costs more than the bytes
/// it carries). When `out` is too short, `Err((i, n))`: `text[..i]` is `out[..n]`, and the
/// escape of `text[i]` ([`escape_bytes`]) is longer than the rest of `out` (which holds
/// anything).
pub(crate) fn escape_into(text: &[u8], out: &mut [u8]) -> Result<usize, (usize, usize)> {
    let mut n = 0;
    let mut i = 0;
    // Whole words while `out` has room for a word's worst case (eight six-byte escapes) and
    // an eight-byte store past it: the bytes between escapes are stored a word at a time
    // (the word shifted past what was written), each escape where it goes, and the word is
    // not looked at again (JSON written as a string has a quote every few bytes). Stores
    // reach at most eight bytes past a word's output, so a word is taken this way only when
    // another follows it: what follows overwrites them, and nothing past the escaped text
    // is touched.
    while let (Some(chunk), true, Some(dst)) = (
        text.get(i..i + 8),
        i + 16 <= text.len(),
        out.get_mut(n..n + WORST),
    ) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let mut m = escape_mask(w);
        // `dst[..at]` is written and stands for `word[..done]`; the bytes of the word after
        // the last escape are always stored just after it, so an escape's prefix is in place.
        dst[..8].copy_from_slice(&word);
        let (mut at, mut done) = (0, 0);
        while m != 0 {
            let k = (m.trailing_zeros() / 8) as usize;
            m &= m - 1;
            let b = word[k];
            if b == b'"' || b == b'\\' {
                // A backslash, then the byte and the rest of the word, in one store.
                at += k - done;
                dst[at..at + 8]
                    .copy_from_slice(&((w >> (8 * k)) << 8 | u64::from(b'\\')).to_le_bytes());
                at += 2;
                done = k + 1;
            } else if b < 0x20 {
                at += k - done;
                let (e, len) = escape_of(b);
                dst[at..at + 6].copy_from_slice(&e);
                at += len;
                done = k + 1;
                dst[at..at + 8]
                    .copy_from_slice(&w.checked_shr(8 * done as u32).unwrap_or(0).to_le_bytes());
            }
            // Otherwise a flag a borrow set above a real one.
        }
        if done < 8 {
            dst[at..at + 8].copy_from_slice(&(w >> (8 * done)).to_le_bytes());
        }
        at += 8 - done;
        n += at;
        i += 8;
    }
    // The last bytes, or all of them near the end of `out`.
    loop {
        // Eight bytes at a time: all of a word is copied (when `out` has room for it), then
        // as many of them kept as come before the first byte to escape.
        if let (Some(chunk), true) = (text.get(i..i + 8), n + 8 <= out.len()) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            out[n..n + 8].copy_from_slice(&word);
            let m = escape_mask(u64::from_le_bytes(word));
            if m == 0 {
                n += 8;
                i += 8;
                continue;
            }
            let k = (m.trailing_zeros() / 8) as usize;
            n += k;
            i += k;
        }
        let &b = match text.get(i) {
            Some(b) => b,
            None => return Ok(n),
        };
        let (e, len) = escape_bytes(b);
        match out.get_mut(n..n + len) {
            Some([d]) => *d = b,
            Some(d) => d.copy_from_slice(&e[..len]),
            None => return Err((i, n)),
        }
        n += len;
        i += 1;
    }
}

/// What [`escape_into`]'s word loop needs free in `out`: a word's worst case (eight six-byte
/// escapes) and an eight-byte store past it.
const WORST: usize = 56;

/// Flags (high bit per byte) the bytes of `x` that are `"`, `\` or below U+0020; the lowest
/// flagged byte is always a real one (borrows only flag bytes above it).
#[inline]
fn escape_mask(x: u64) -> u64 {
    zero_bytes(x ^ (LO * b'"' as u64))
        | zero_bytes(x ^ (LO * b'\\' as u64))
        | (x.wrapping_sub(LO * 0x20) & !x & HI)
}

/// Length of the longest prefix of `text`, ending on a character boundary, whose escaped form fits `cap` bytes.
pub(crate) fn escaped_prefix(text: &[u8], cap: usize) -> usize {
    let mut total = 0;
    for (i, &b) in text.iter().enumerate() {
        total += match b {
            b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
            0x00..=0x1f => 6,
            _ => 1,
        };
        if total > cap {
            return utf8_prefix(text, i);
        }
    }
    text.len()
}

/// The longest prefix of `text` of at most `max` bytes that ends on a UTF-8 boundary.
pub(crate) fn utf8_prefix(text: &[u8], max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    let mut n = max;
    while n > 0 && (text[n] & 0xC0) == 0x80 {
        n -= 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first byte needing an escape is found at its exact offset from every start, in
    /// texts of every length around the word size, with bytes that need none (non-ASCII
    /// included) everywhere else.
    #[test]
    fn next_escape_finds_the_first_byte_from_every_start() {
        for len in 0..if cfg!(miri) { 10 } else { 20 } {
            for special in [None, Some(b'"'), Some(b'\\'), Some(0x00), Some(0x1f)] {
                for at in 0..len.max(1) {
                    let mut text = [0u8; 20];
                    for (i, b) in text[..len].iter_mut().enumerate() {
                        *b = [b'x', 0xc3, 0xa9, b' ', 0x7f][i % 5];
                    }
                    if let Some(b) = special.filter(|_| at < len) {
                        text[at] = b;
                    }
                    let text = &text[..len];
                    for from in 0..=len {
                        let want = (from..len)
                            .find(|&i| matches!(text[i], b'"' | b'\\' | 0x00..=0x1f))
                            .unwrap_or(len);
                        assert_eq!(next_escape(text, from), want, "{text:?} from {from}");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod swar_equivalence {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    /// A byte-at-a-time reference: minimal escapes, control characters as `\u00xx`.
    fn reference(text: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in text {
            match b {
                b'"' | b'\\' => out.extend([b'\\', b]),
                0x08 => out.extend(b"\\b"),
                0x0c => out.extend(b"\\f"),
                b'\n' => out.extend(b"\\n"),
                b'\r' => out.extend(b"\\r"),
                b'\t' => out.extend(b"\\t"),
                0x00..=0x1f => out.extend(std::format!("\\u{b:04x}").bytes()),
                _ => out.push(b),
            }
        }
        out
    }
    /// `escaped_split` finds, for every offset of the escaped form, the byte whose escape
    /// holds it and the offset inside that escape.
    #[test]
    fn escaped_split_at_every_offset() {
        let texts: [&[u8]; 4] = [
            b"",
            b"plain words, longer than a word",
            b"a\"b\\c\x01d\ne",
            b"\"\"\x1f\x1f0123456789\"",
        ];
        for t in texts {
            let total = escaped_len(t);
            for skip in 0..total + 3 {
                let want = if skip >= total {
                    (t.len(), 0)
                } else {
                    let j = (0..t.len())
                        .rfind(|&j| escaped_len(&t[..j]) <= skip)
                        .unwrap();
                    (j, skip - escaped_len(&t[..j]))
                };
                assert_eq!(escaped_split(t, skip), want, "{t:?} at {skip}");
            }
        }
    }

    #[test]
    fn same_as_bytewise() {
        let mut x: u64 = 0x9E3779B97F4A7C15;
        // `#` and `]` sit one above `"` and `\\`: a borrow from either flags them falsely.
        let alphabet: &[u8] = b"ab\"\\\x00\x01\x1f\x20\x7f\x80\xc3\xa9\xff\n\t\r\x08\x0c~!#]";
        // Under miri (safe integer work only: nothing for it to find past the plain run) two
        // rounds of every length, 0 to 39: 400 took 83 s of CI's 45 minutes.
        for n in 0..if cfg!(miri) { 80 } else { 20000 } {
            let len = n % 40;
            let mut t = Vec::new();
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t.push(if x.is_multiple_of(3) {
                    alphabet[(x >> 8) as usize % alphabet.len()]
                } else {
                    (x >> 16) as u8
                });
            }
            let mut a = Vec::new();
            write_escaped(&t, |piece| a.extend_from_slice(piece));
            let b = reference(&t);
            assert_eq!(a, b, "{t:?}");
            assert_eq!(escaped_len(&t), b.len());
            // In place: into a buffer of exactly its length (the words' fast path then stops
            // short of the end) and into a larger one, whose bytes past it stay untouched.
            for extra in [0, 1, 7, 8, 64] {
                let mut out = std::vec![0xAAu8; b.len() + extra];
                assert_eq!(escape_into(&t, &mut out), Ok(b.len()), "{t:?}");
                assert_eq!(&out[..b.len()], &b[..], "{t:?} with {extra} to spare");
                assert!(
                    out[b.len()..].iter().all(|&x| x == 0xAA),
                    "{t:?} wrote past its end"
                );
            }
            // Into anything shorter: where it stopped, exactly (the bytes so far written, the
            // escape that did not fit longer than the room left), never past the buffer.
            for short in [0, b.len() / 2, b.len().saturating_sub(1)] {
                if short < b.len() {
                    let mut out = std::vec![0u8; short];
                    let Err((i, n)) = escape_into(&t, &mut out) else {
                        panic!("{t:?} fit {short} bytes");
                    };
                    assert_eq!(reference(&t[..i]), &out[..n], "{t:?} into {short}");
                    assert!(escape_bytes(t[i]).1 > short - n, "{t:?} into {short}");
                }
            }
        }
    }
}
