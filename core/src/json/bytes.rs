//! Byte-level helpers every part of the scanner shares: JSON white space, and the
//! eight-bytes-at-a-time masks (and the one byte hash the library keys its filters and
//! mapped names with). A leaf of `json`.

/// Where an FNV-1a hash (32 bits) starts.
pub(crate) const FNV_START: u32 = 0x811c_9dc5;

/// FNV-1a (32 bits) of `bytes` taken on from `h` (a text handed out in runs hashes as one).
pub(crate) fn fnv1a(h: u32, bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// Returns the offset of the first byte at or after `pos` that is not JSON white space.
#[inline]
pub fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(&b) = bytes.get(pos) {
        if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        pos += 1;
    }
    pos
}

/// [`skip_ws`], noting in `spaced` whether there was any white space to skip.
#[inline(always)]
pub(crate) fn skip_ws_noted(bytes: &[u8], pos: usize, spaced: &mut bool) -> usize {
    // The flag is set on the white-space path only: compact input pays one comparison,
    // as with `skip_ws`.
    match bytes.get(pos) {
        Some(&b) if is_ws(b) => {
            *spaced = true;
            // Equivalent mutant: `pos + 1` -> `pos * 1`: `skip_ws` then starts on the white space
            // itself.
            skip_ws(bytes, pos + 1)
        }
        _ => pos,
    }
}

/// `bytes` without the white space around it.
#[inline]
pub fn trim_ws(bytes: &[u8]) -> &[u8] {
    let start = skip_ws(bytes, 0);
    let mut end = bytes.len();
    while end > start && is_ws(bytes[end - 1]) {
        end -= 1;
    }
    &bytes[start..end]
}

/// True for the four bytes RFC 8259 calls insignificant white space.
#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A byte of ones in every lane, and the high bit of every lane: for eight bytes at a time.
pub(crate) const LO: u64 = 0x0101_0101_0101_0101;
pub(crate) const HI: u64 = 0x8080_8080_8080_8080;

/// Flags (high bit per byte) the zero bytes of `v`; the lowest flagged byte is always a
/// real one (borrows only flag bytes above it).
#[inline]
pub(crate) fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

/// The offset of the first byte at or after `from` that is `a` or `b`, or `bytes.len()`:
/// eight bytes at a time (long strings and lines are what the library searches most).
#[inline]
pub(crate) fn find_either(bytes: &[u8], mut from: usize, a: u8, b: u8) -> usize {
    while let Some(chunk) = bytes.get(from..from + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let m = zero_bytes(x ^ (LO * a as u64)) | zero_bytes(x ^ (LO * b as u64));
        if m != 0 {
            return from + (m.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    let rest = bytes.get(from..).unwrap_or(&[]);
    from + rest
        .iter()
        .position(|&c| c == a || c == b)
        .unwrap_or(rest.len())
}

/// The offset of the first control byte (below U+0020) in `bytes`, or `bytes.len()`: eight
/// bytes at a time (the item templates' part marks are such bytes, found in every item).
pub(crate) fn first_control(bytes: &[u8]) -> usize {
    let mut pos = 0;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let m = x.wrapping_sub(LO * 0x20) & !x & HI;
        if m != 0 {
            return pos + (m.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    let rest = &bytes[pos..];
    pos + rest.iter().position(|&b| b < b' ').unwrap_or(rest.len())
}

/// The offset just past the string whose opening quote is at `start` (escapes skipped,
/// nothing validated), or the end of `bytes` when it is not closed.
pub(crate) fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut pos = start + 1;
    loop {
        pos = find_either(bytes, pos, b'"', b'\\');
        match bytes.get(pos) {
            Some(b'"') => return pos + 1,
            Some(_) => pos += 2,
            None => return bytes.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first control byte is found at its offset in texts of every length around the
    /// word size, wherever it is, with bytes at and above U+0020 (non-ASCII too) elsewhere.
    #[test]
    fn first_control_finds_the_first_byte_below_a_space() {
        for len in 0..20 {
            for control in [None, Some(0x00), Some(0x01), Some(0x1f)] {
                for at in 0..len.max(1) {
                    let mut text = [0u8; 20];
                    for (i, b) in text[..len].iter_mut().enumerate() {
                        *b = [b' ', b'x', 0xc3, 0xa9, 0x7f, 0x20, 0xff][i % 7];
                    }
                    if let Some(c) = control.filter(|_| at < len) {
                        text[at] = c;
                        if at + 3 < len {
                            text[at + 3] = 0x02; // a later one does not count
                        }
                    }
                    let text = &text[..len];
                    let want = text.iter().position(|&b| b < b' ').unwrap_or(len);
                    assert_eq!(first_control(text), want, "{text:?}");
                }
            }
        }
    }
}
