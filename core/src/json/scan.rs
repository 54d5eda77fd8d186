//! The validating scanner: where a value ends, checking everything on the way.

use super::bytes::{skip_ws, skip_ws_noted, HI, LO};
use super::error::{JsonError, JsonErrorKind};

/// The kinds of the open containers, innermost first: bit set = object, clear = array.
///
/// The innermost 64 live in one word that shifts on every open and close, so the
/// common shallow document never indexes memory; deeper levels spill their bits
/// to `deep` (levels up to 255 in all).
struct KindStack {
    recent: u64,
    deep: [u64; 3],
}

impl KindStack {
    const fn new() -> Self {
        Self {
            recent: 0,
            deep: [0; 3],
        }
    }
    // Equivalent mutant: either `|` -> `^` in `push`: each joins a bit into a place just cleared.
    /// Opens a container inside `open` others.
    #[inline]
    fn push(&mut self, open: u8, is_object: bool) {
        if open >= 64 {
            let (word, bit) = (((open - 64) / 64) as usize, (open - 64) % 64);
            let spilled = self.recent >> 63;
            self.deep[word] = self.deep[word] & !(1 << bit) | spilled << bit;
        }
        self.recent = self.recent << 1 | is_object as u64;
    }
    /// Closes the innermost container, leaving `open` others.
    #[inline]
    fn pop(&mut self, open: u8) {
        self.recent >>= 1;
        if open >= 64 {
            let (word, bit) = (((open - 64) / 64) as usize, (open - 64) % 64);
            self.recent |= (self.deep[word] >> bit & 1) << 63;
        }
    }
    /// Whether the innermost open container is an object (false before the first opens).
    #[inline]
    fn in_object(&self) -> bool {
        self.recent & 1 != 0
    }
}

/// [`validate`](super::validate) with `scan` reading the value from its start (and noting
/// white space, or not): whether the value had none between its tokens.
#[inline(always)]
pub(crate) fn validate_with(
    bytes: &[u8],
    scan: impl FnOnce(usize, &mut bool) -> Result<usize, JsonError>,
) -> Result<bool, JsonError> {
    let start = skip_ws(bytes, 0);
    let mut spaced = false;
    let end = scan(start, &mut spaced)?;
    let end = skip_ws(bytes, end);
    if end == bytes.len() {
        Ok(!spaced)
    } else {
        Err(JsonError::new(JsonErrorKind::TrailingData, end))
    }
}

/// Scans the value that starts exactly at `start` and returns the offset just past it.
///
/// `max_depth` bounds container nesting: a value at the top counts as level 1.
/// The whole value is validated on the way (strings, escapes, UTF-8, numbers).
pub fn skip_value(bytes: &[u8], start: usize, max_depth: u8) -> Result<usize, JsonError> {
    scan_value::<false, ()>(bytes, start, max_depth, &mut false, &mut ())
}

/// [`skip_value`], setting `spaced` when the value has white space between its tokens.
pub(crate) fn skip_value_noted(
    bytes: &[u8],
    start: usize,
    max_depth: u8,
    spaced: &mut bool,
) -> Result<usize, JsonError> {
    scan_value::<true, ()>(bytes, start, max_depth, spaced, &mut ())
}

/// White space skipped, and noted in `spaced` when `NOTE`: the scan that only validates
/// keeps the plain loop, which is measurably faster.
#[inline(always)]
fn skip_ws_if<const NOTE: bool>(bytes: &[u8], pos: usize, spaced: &mut bool) -> usize {
    match NOTE {
        true => skip_ws_noted(bytes, pos, spaced),
        false => skip_ws(bytes, pos),
    }
}

/// What a scan notes of the top-level object's members as it goes: nothing for `()`, whose
/// scan has no noting code at all.
pub(crate) trait TopNotes {
    /// Whether anything is noted.
    const ON: bool;
    /// A member of the top-level object: its name from `name` (the opening quote) to
    /// `name_end`, its value at `value`.
    fn member(&mut self, name: usize, name_end: usize, value: usize);
    /// The member noted last ends just before `end`.
    fn end(&mut self, end: usize);
}

impl TopNotes for () {
    const ON: bool = false;
    fn member(&mut self, _: usize, _: usize, _: usize) {}
    fn end(&mut self, _: usize) {}
}

/// The scanner, noting white space between tokens in `spaced` when `NOTE`, and telling
/// `notes` where the members of a top-level object lie (`()`: nothing). (Copies: the wrapper
/// uses only the white-space noting one, so a firmware without decoders links one. Inlined
/// into its few callers, so [`validate`](super::validate) pays no call and no second start
/// dispatch.)
#[inline(always)]
pub(crate) fn scan_value<const NOTE: bool, T: TopNotes>(
    bytes: &[u8],
    start: usize,
    max_depth: u8,
    spaced: &mut bool,
    notes: &mut T,
) -> Result<usize, JsonError> {
    use JsonErrorKind::*;
    if !matches!(bytes.get(start), Some(b'{' | b'[')) {
        return scan_scalar(bytes, start);
    }
    // Kept in a local (a register) while scanning; written back once the value ends.
    let mut sp = false;
    let mut stack = KindStack::new();
    let mut depth: u8 = 0;
    let mut pos = start;
    'value: loop {
        // Here a value must start, inside a container unless `depth == 0` (the first one);
        // in an object its key comes first. (One call site keeps the key scan inlined.)
        if stack.in_object() {
            let name = pos;
            let name_end;
            (name_end, pos) = object_key::<NOTE>(bytes, pos, &mut sp)?;
            if T::ON && depth == 1 {
                notes.member(name, name_end, pos);
            }
        }
        match bytes.get(pos) {
            // Equivalent mutant: this arm deleted: `scan_scalar` scans the string the same way.
            Some(b'"') => pos = scan_string(bytes, pos)?,
            Some(&open @ (b'{' | b'[')) => {
                if depth >= max_depth {
                    return Err(JsonError::new(TooDeep, pos));
                }
                stack.push(depth, open == b'{');
                depth += 1;
                pos = skip_ws_if::<NOTE>(bytes, pos + 1, &mut sp);
                let close = if stack.in_object() { b'}' } else { b']' };
                if bytes.get(pos) != Some(&close) {
                    continue 'value;
                }
            }
            _ => pos = scan_scalar(bytes, pos)?,
        }
        // Here a value has just ended inside a container, or `pos` is at an empty container's close.
        loop {
            // At depth 1 a member of the top level (if any: an empty object has none) ends.
            if T::ON && depth == 1 {
                notes.end(pos);
            }
            pos = skip_ws_if::<NOTE>(bytes, pos, &mut sp);
            match bytes.get(pos) {
                None => return Err(JsonError::new(UnexpectedEnd, pos)),
                Some(b',') => {
                    pos = skip_ws_if::<NOTE>(bytes, pos + 1, &mut sp);
                    continue 'value;
                }
                Some(b'}') if stack.in_object() => {}
                Some(b']') if !stack.in_object() => {}
                Some(_) => return Err(JsonError::new(UnexpectedByte, pos)),
            }
            depth -= 1;
            pos += 1;
            if depth == 0 {
                *spaced |= sp;
                return Ok(pos);
            }
            stack.pop(depth);
        }
    }
}

/// Scans the non-container value that starts exactly at `pos`.
#[inline(always)]
fn scan_scalar(bytes: &[u8], pos: usize) -> Result<usize, JsonError> {
    use JsonErrorKind::*;
    match bytes.get(pos) {
        Some(b'"') => scan_string(bytes, pos),
        Some(b'-' | b'0'..=b'9') => scan_number(bytes, pos),
        Some(b't') => literal(bytes, pos, b"true"),
        Some(b'f') => literal(bytes, pos, b"false"),
        Some(b'n') => literal(bytes, pos, b"null"),
        None => Err(JsonError::new(UnexpectedEnd, pos)),
        Some(_) => Err(JsonError::new(UnexpectedByte, pos)),
    }
}

/// Scans `"key" :` with white space, returning the offsets just past the key and of the
/// member's value.
#[inline(always)]
fn object_key<const NOTE: bool>(
    bytes: &[u8],
    pos: usize,
    spaced: &mut bool,
) -> Result<(usize, usize), JsonError> {
    match bytes.get(pos) {
        Some(b'"') => {}
        Some(_) => return Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
        None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
    }
    let key_end = scan_string(bytes, pos)?;
    let mut pos = key_end;
    // The colon of compact JSON is tested before white space is looked for.
    if bytes.get(pos) != Some(&b':') {
        pos = skip_ws_if::<NOTE>(bytes, pos, spaced);
    }
    match bytes.get(pos) {
        Some(b':') => Ok((key_end, skip_ws_if::<NOTE>(bytes, pos + 1, spaced))),
        Some(_) => Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
        None => Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
    }
}

fn literal(bytes: &[u8], pos: usize, word: &[u8]) -> Result<usize, JsonError> {
    let end = pos + word.len();
    match bytes.get(pos..end) {
        Some(s) if s == word => Ok(end),
        _ => {
            // Report the first byte that differs, or the end of input.
            let mut i = pos;
            // Equivalent mutant: `<` -> `<=`: the bytes differ from `word` (or run out) before
            // `end`, so the loop never reaches it.
            while i < end {
                match bytes.get(i) {
                    None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, i)),
                    Some(&b) if b != word[i - pos] => break,
                    Some(_) => i += 1,
                }
            }
            Err(JsonError::new(JsonErrorKind::UnexpectedByte, i))
        }
    }
}

fn digits(bytes: &[u8], mut pos: usize) -> usize {
    while matches!(bytes.get(pos), Some(b'0'..=b'9')) {
        pos += 1;
    }
    pos
}

/// Scans an RFC 8259 number starting at `pos`.
fn scan_number(bytes: &[u8], start: usize) -> Result<usize, JsonError> {
    use JsonErrorKind::*;
    let mut pos = start;
    if bytes.get(pos) == Some(&b'-') {
        pos += 1;
    }
    match bytes.get(pos) {
        Some(b'0') => pos += 1,
        // Equivalent mutant: `pos + 1` -> `pos * 1`: `pos` is on a digit, which `digits` skips too.
        Some(b'1'..=b'9') => pos = digits(bytes, pos + 1),
        None => return Err(JsonError::new(UnexpectedEnd, pos)),
        Some(_) => return Err(JsonError::new(InvalidNumber, pos)),
    }
    if bytes.get(pos) == Some(&b'.') {
        let after = digits(bytes, pos + 1);
        if after == pos + 1 {
            return Err(JsonError::new(InvalidNumber, pos + 1));
        }
        pos = after;
    }
    if matches!(bytes.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(bytes.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let after = digits(bytes, pos);
        if after == pos {
            return Err(JsonError::new(InvalidNumber, pos));
        }
        pos = after;
    }
    // A number glued to more digit-like bytes (`01`, `1.2.3`) is one bad number.
    if matches!(
        bytes.get(pos),
        Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
    ) {
        return Err(JsonError::new(InvalidNumber, pos));
    }
    Ok(pos)
}

// Equivalent mutant: flagging more bytes (or all: `care_mask` -> `1`, the first `^` -> `&`, the
// final `& HI` -> `|` or `^`) stops `scan_string` earlier; `string_step` then checks the same bytes
// one by one. The first `|` -> `^`: at the lowest real flag only one of the two tests holds (no
// byte is both a quote or control character and a backslash).
/// Flags (high bit per byte) the bytes of `x` that are `"`, `\`, a control character, or non-ASCII.
///
/// Bytes above a flagged one may be flagged falsely (borrows), but the lowest
/// flagged byte is always a real one: `trailing_zeros() / 8` finds it.
///
/// Two tests cover the four classes: `b ^ 0x02 < 0x21` holds exactly for a control
/// character or `"` (the XOR swaps `"` and space and keeps 0x00..=0x1F among
/// themselves), and `b ^ b'\\' == 0` for a backslash. The usual `& !v` of these
/// tests is left out: it only clears bytes with the high bit set, and those are
/// flagged as non-ASCII anyway.
#[inline]
fn care_mask(x: u64) -> u64 {
    let control_or_quote = (x ^ (LO * 0x02)).wrapping_sub(LO * 0x21);
    let backslash = (x ^ (LO * b'\\' as u64)).wrapping_sub(LO);
    (control_or_quote | backslash | x) & HI
}

/// Scans a string whose opening quote is at `start`; returns the offset after the closing quote.
///
/// Inlined: the plain-ASCII path stays in the caller; anything else is [`string_step`].
#[inline]
pub(crate) fn scan_string(bytes: &[u8], start: usize) -> Result<usize, JsonError> {
    let mut pos = start + 1;
    loop {
        // Eight plain ASCII bytes at a time: the common case in tool-call JSON.
        while let Some(chunk) = bytes.get(pos..pos + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let care = care_mask(u64::from_le_bytes(word));
            if care != 0 {
                // Jump straight to the first byte that needs a look.
                pos += (care.trailing_zeros() / 8) as usize;
                break;
            }
            pos += 8;
        }
        if bytes.get(pos) == Some(&b'"') {
            return Ok(pos + 1);
        }
        pos = string_step(bytes, pos)?;
    }
}

/// One step inside a string at `pos`, which is not the closing quote; returns the next offset.
#[inline(never)]
fn string_step(bytes: &[u8], pos: usize) -> Result<usize, JsonError> {
    use JsonErrorKind::*;
    let Some(&b) = bytes.get(pos) else {
        return Err(JsonError::new(UnexpectedEnd, pos));
    };
    match b {
        b'\\' => scan_escape(bytes, pos),
        0x00..=0x1f => Err(JsonError::new(ControlCharacter, pos)),
        // Plain ASCII reaches here only under eight bytes from the end: take the run.
        0x20..=0x7f => Ok(pos + 1 + plain_run(bytes.get(pos + 1..).unwrap_or_default())),
        _ => Ok(pos + utf8_sequence(bytes, pos)?),
    }
}

// Equivalent mutant: a shorter run leaves the rest to `scan_string`'s next round, same answer.
/// Length of the leading run of plain ASCII (no `"`, `\\`, control) in `rest`.
fn plain_run(rest: &[u8]) -> usize {
    rest.iter()
        .position(|&b| !(0x20..0x80).contains(&b) || b == b'"' || b == b'\\')
        .unwrap_or(rest.len())
}

/// Validates one escape starting at the backslash at `pos`; returns the offset after it.
///
/// An escaped surrogate without its partner is accepted (SPEC §7.24): raw values keep
/// it as written, and decoding turns it into U+FFFD.
fn scan_escape(bytes: &[u8], pos: usize) -> Result<usize, JsonError> {
    use JsonErrorKind::*;
    match bytes.get(pos + 1) {
        None => Err(JsonError::new(UnexpectedEnd, pos + 1)),
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(pos + 2),
        Some(b'u') => hex4(bytes, pos + 2).map(|()| pos + 6),
        Some(_) => Err(JsonError::new(InvalidEscape, pos)),
    }
}

/// Checks the four hex digits of a `\u` escape (only validity matters: raw values keep the
/// escape as written, and decoding reads the digits again).
fn hex4(bytes: &[u8], pos: usize) -> Result<(), JsonError> {
    for i in 0..4 {
        match bytes.get(pos + i) {
            Some(b) if b.is_ascii_hexdigit() => {}
            Some(_) => return Err(JsonError::new(JsonErrorKind::InvalidEscape, pos + i)),
            None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos + i)),
        }
    }
    Ok(())
}

/// Validates one multi-byte UTF-8 sequence at `pos` (RFC 3629 table); returns its length.
fn utf8_sequence(bytes: &[u8], pos: usize) -> Result<usize, JsonError> {
    let bad = JsonError::new(JsonErrorKind::InvalidUtf8, pos);
    let lead = bytes[pos];
    let (len, lo, hi) = match lead {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return Err(bad),
    };
    match bytes.get(pos + 1) {
        Some(&b) if (lo..=hi).contains(&b) => {}
        None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos + 1)),
        Some(_) => return Err(bad),
    }
    for i in 2..len {
        match bytes.get(pos + i) {
            Some(&b) if (0x80..=0xBF).contains(&b) => {}
            None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos + i)),
            Some(_) => return Err(bad),
        }
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{validate, validate_compact};

    #[test]
    fn accepts_and_rejects_basics() {
        for ok in [
            &b"{}"[..],
            b"[]",
            b" 1 ",
            b"-0.5e+3",
            b"\"a\\u00e9\"",
            b"{\"a\":[1,{\"b\":null}]}",
        ] {
            assert_eq!(validate(ok, 32), Ok(()), "{:?}", core::str::from_utf8(ok));
        }
        let refused: [(&[u8], u8, JsonErrorKind, Option<usize>); 7] = [
            (b"01", 32, JsonErrorKind::InvalidNumber, None),
            (b"[1,]", 32, JsonErrorKind::UnexpectedByte, None),
            (b"\"\\x\"", 32, JsonErrorKind::InvalidEscape, None),
            (b"[[1]]", 1, JsonErrorKind::TooDeep, Some(1)),
            (b"{} x", 32, JsonErrorKind::TrailingData, Some(3)),
            (b"\"\xff\"", 32, JsonErrorKind::InvalidUtf8, None),
            (b"\"a\x01\"", 32, JsonErrorKind::ControlCharacter, None),
        ];
        for (bytes, depth, kind, at) in refused {
            let e = validate(bytes, depth).unwrap_err();
            assert_eq!(e.kind, kind, "{bytes:?}");
            if let Some(at) = at {
                assert_eq!(e.at, at, "{bytes:?}");
            }
        }
        // An unpaired surrogate is accepted (SPEC §7.24).
        assert_eq!(validate(b"\"\\ud800\"", 32), Ok(()));
    }

    /// Every byte that needs a look is found wherever it sits in the eight-byte words the
    /// string scan reads, with the exact error and offset.
    #[test]
    fn string_bytes_are_checked_at_every_offset() {
        use JsonErrorKind::*;
        let bad: [(&[u8], JsonErrorKind, usize); 7] = [
            // A lead byte followed by ASCII is a broken sequence.
            (b"\xc3", InvalidUtf8, 0),
            (b"\xff", InvalidUtf8, 0),
            (b"\x80", InvalidUtf8, 0),
            (b"\xe2\x28\xa1", InvalidUtf8, 0),
            (b"\x01", ControlCharacter, 0),
            (b"\\x", InvalidEscape, 0),
            (b"\\u12g4", InvalidEscape, 4),
        ];
        for off in 0..17 {
            for (piece, kind, at) in bad {
                let mut doc: heapless::Vec<u8, 64> = heapless::Vec::new();
                doc.extend_from_slice(b"\"").unwrap();
                doc.extend_from_slice(&b"abcdefghijklmnopq"[..off]).unwrap();
                doc.extend_from_slice(piece).unwrap();
                doc.extend_from_slice(b"rstuvwxyz0123456\"").unwrap();
                assert_eq!(
                    validate(&doc, 32),
                    Err(JsonError::new(kind, 1 + off + at)),
                    "{piece:?} at {off}"
                );
            }
            for good in ["é", "€", "😀", "\\n", "\\u00e9", "\\ud800"] {
                let mut doc: heapless::Vec<u8, 64> = heapless::Vec::new();
                doc.extend_from_slice(b"\"").unwrap();
                doc.extend_from_slice(&b"abcdefghijklmnopq"[..off]).unwrap();
                doc.extend_from_slice(good.as_bytes()).unwrap();
                doc.extend_from_slice(b"rstuvwxyz0123456\"").unwrap();
                assert_eq!(validate(&doc, 32), Ok(()), "{good} at {off}");
            }
        }
    }

    /// A document cut inside a multi-byte character or an escape ends where the input does.
    #[test]
    fn cut_sequences_end_at_the_end() {
        for (bytes, at) in [
            (&b"\"\xc3"[..], 2),
            (b"\"\xe2\x82", 3),
            (b"\"\xf0\x9f\x98", 4),
            (b"\"\\u12", 5),
            (b"\"\\", 2),
        ] {
            assert_eq!(
                validate(bytes, 32),
                Err(JsonError::new(JsonErrorKind::UnexpectedEnd, at)),
                "{bytes:?}"
            );
        }
    }

    /// Container kinds past the 64 kept in one word spill and come back exactly: at
    /// every depth up to 255, a close with the other container's bracket is refused
    /// where it stands, and the right one is accepted.
    #[test]
    fn kinds_are_kept_at_every_depth() {
        // Level `i` (0-based) is an object when `i % 3 == 1` or `i % 7 == 0`, else an array.
        let is_object = |i: usize| i % 3 == 1 || i.is_multiple_of(7);
        let depths: &[usize] = match cfg!(miri) {
            true => &[65, 255],
            false => &[1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255],
        };
        for &depth in depths {
            let mut doc: heapless::Vec<u8, 2048> = heapless::Vec::new();
            for i in 0..depth {
                let open: &[u8] = if is_object(i) { b"{\"k\":" } else { b"[" };
                doc.extend_from_slice(open).unwrap();
            }
            doc.push(b'1').unwrap();
            let closes_at = doc.len();
            for i in (0..depth).rev() {
                doc.push(if is_object(i) { b'}' } else { b']' }).unwrap();
            }
            assert_eq!(validate(&doc, 255), Ok(()), "depth {depth}");
            assert_eq!(validate_compact(&doc, 255), Ok(true), "depth {depth}");
            for wrong in [0, depth / 2, depth - 1] {
                // The close of level `wrong` sits `depth - 1 - wrong` bytes after the first.
                let at = closes_at + depth - 1 - wrong;
                let mut bad = doc.clone();
                bad[at] = if is_object(wrong) { b']' } else { b'}' };
                let e = Err(JsonError::new(JsonErrorKind::UnexpectedByte, at));
                assert_eq!(validate(&bad, 255), e, "depth {depth}, level {wrong}");
                assert_eq!(validate_compact(&bad, 255).map(drop), e, "depth {depth}");
            }
        }
    }

    /// A spilled kind is overwritten, not merged: two sibling subtrees 100 deep whose
    /// first levels differ (an object, then an array) each close with their own bracket.
    #[test]
    fn a_spilled_kind_is_replaced_by_the_next_sibling() {
        let mut doc: heapless::Vec<u8, 1024> = heapless::Vec::new();
        doc.push(b'[').unwrap();
        for (open, close) in [(&b"{\"k\":"[..], b'}'), (b"[", b']')] {
            doc.extend_from_slice(open).unwrap();
            doc.extend_from_slice(&[b'['; 99]).unwrap();
            doc.push(b'1').unwrap();
            doc.extend_from_slice(&[b']'; 99]).unwrap();
            doc.extend_from_slice(&[close, b',']).unwrap();
        }
        let last = doc.len() - 1;
        doc[last] = b']';
        assert_eq!(validate(&doc, 255), Ok(()));
        assert_eq!(validate_compact(&doc, 255), Ok(true));
    }

    #[test]
    fn a_container_closes_only_with_its_own_bracket() {
        for (bytes, at) in [
            (&b"{\"a\":1]"[..], 6),
            (b"[1}", 2),
            (b"[{\"a\":[1}]}", 8),
            (b"{\"a\":[1]]", 8),
        ] {
            assert_eq!(
                validate(bytes, 32),
                Err(JsonError::new(JsonErrorKind::UnexpectedByte, at)),
                "{:?}",
                core::str::from_utf8(bytes)
            );
        }
    }
}
