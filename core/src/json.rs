//! A validating JSON scanner over `&[u8]`: no recursion, no allocation.
//!
//! The scanner never builds a tree. It answers three questions about bytes the
//! caller owns: *is this one valid JSON value* ([`validate`]), *where does the
//! value starting here end* ([`skip_value`]), and *what are this object's
//! members* ([`Members`]). Strings are handed out as [`JsonStr`] views that can
//! be compared with or decoded into caller buffers without copying first.
//!
//! Nesting is tracked with an explicit depth counter and a 256-bit stack of
//! container kinds, so hostile input (`[[[[…`) costs a bounded amount of stack
//! and is refused with [`JsonErrorKind::TooDeep`] past the caller's limit.

/// The depth limit used where the caller gives none (the frame object is level 1).
pub const DEFAULT_MAX_DEPTH: u8 = 32;

/// Why a byte string is not the JSON the caller asked for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A byte that cannot start or continue the value here.
    UnexpectedByte,
    /// A number that breaks the RFC 8259 grammar (leading zero, bare `-`, `1.`…).
    InvalidNumber,
    /// A backslash escape that RFC 8259 does not define, or a bad `\u` escape.
    InvalidEscape,
    /// A raw control character (below U+0020) inside a string.
    ControlCharacter,
    /// Bytes inside a string that are not UTF-8.
    InvalidUtf8,
    /// Containers nested deeper than the configured limit.
    TooDeep,
    /// Non-white-space bytes after a complete value.
    TrailingData,
}

/// A JSON error and the byte offset where it was found.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct JsonError {
    /// What is wrong.
    pub kind: JsonErrorKind,
    /// Offset into the scanned bytes.
    pub at: usize,
}

impl JsonError {
    const fn new(kind: JsonErrorKind, at: usize) -> Self {
        Self { kind, at }
    }
}

impl core::error::Error for JsonError {}

impl core::fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "buffer too small: {} bytes needed", self.needed)
    }
}

impl core::error::Error for BufferTooSmall {}

impl core::fmt::Display for JsonError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "invalid JSON at byte {}: {:?}", self.at, self.kind)
    }
}

/// Checks that `bytes` is exactly one JSON value, with optional white space around it.
pub fn validate(bytes: &[u8], max_depth: u8) -> Result<(), JsonError> {
    let start = skip_ws(bytes, 0);
    let end = skip_value(bytes, start, max_depth)?;
    let end = skip_ws(bytes, end);
    if end == bytes.len() {
        Ok(())
    } else {
        Err(JsonError::new(JsonErrorKind::TrailingData, end))
    }
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

/// `bytes` without the white space around it.
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
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Hands `emit` the runs of a valid JSON value that remain once the white space between
/// its tokens is dropped (SPEC §7.22): strings, number text and member order stay as written.
///
/// The runs, joined, are the *compact* form of the value; a value without such white
/// space is one run (itself). Bytes that are not valid JSON are passed through the same
/// way, so the result is defined but meaningless for them.
pub fn for_each_compact_run(value: &[u8], mut emit: impl FnMut(&[u8])) {
    // Most values hold no byte at or below a space at all: then they are their compact form.
    let Some(first) = first_space_or_below(value) else {
        if !value.is_empty() {
            emit(value);
        }
        return;
    };
    // The bytes before the first such byte hold no white space; strings may span it.
    let mut run = 0;
    let mut i = 0;
    while let Some(&b) = value.get(i) {
        if b == b'"' {
            i = string_end(value, i);
        } else if is_ws(b) {
            if run < i {
                emit(&value[run..i]);
            }
            i = skip_ws(value, i);
            run = i;
        } else if i < first {
            // Nothing but tokens before `first`: jump to the next quote or to `first`.
            i = value[i..first]
                .iter()
                .position(|&b| b == b'"')
                .map_or(first, |p| i + p);
        } else {
            i += 1;
        }
    }
    if run < value.len() {
        emit(&value[run..]);
    }
}

/// The offset of the first byte at or below a space (white space, or a control character),
/// eight bytes at a time.
fn first_space_or_below(bytes: &[u8]) -> Option<usize> {
    let mut pos = 0;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let m = x.wrapping_sub(LO * 0x21) & !x & HI;
        if m != 0 {
            return Some(pos + (m.trailing_zeros() / 8) as usize);
        }
        pos += 8;
    }
    bytes[pos..]
        .iter()
        .position(|&b| b <= b' ')
        .map(|p| pos + p)
}

/// The length of `value`'s compact form (see [`for_each_compact_run`]).
pub fn compact_len(value: &[u8]) -> usize {
    let mut n = 0;
    for_each_compact_run(value, |run| n += run.len());
    n
}

/// Copies as much of `value`'s compact form as fits into `out`; returns the bytes written.
///
/// The copy is whole when the return equals [`compact_len`]; otherwise it is a prefix.
pub fn compact_into(value: &[u8], out: &mut [u8]) -> usize {
    let mut n = 0;
    for_each_compact_run(value, |run| {
        let take = run.len().min(out.len() - n);
        out[n..n + take].copy_from_slice(&run[..take]);
        n += take;
    });
    n
}

/// The offset just past the string whose opening quote is at `start` (escapes skipped,
/// nothing validated), or the end of `bytes` when it is not closed.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut pos = start + 1;
    loop {
        // Eight bytes at a time while none is a quote or a backslash.
        while let Some(chunk) = bytes.get(pos..pos + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let x = u64::from_le_bytes(word);
            let zero_in = |v: u64| v.wrapping_sub(LO) & !v & HI;
            let m = zero_in(x ^ (LO * b'"' as u64)) | zero_in(x ^ (LO * b'\\' as u64));
            if m != 0 {
                pos += (m.trailing_zeros() / 8) as usize;
                break;
            }
            pos += 8;
        }
        match bytes.get(pos) {
            Some(b'"') => return pos + 1,
            Some(b'\\') => pos += 2,
            Some(_) => pos += 1,
            None => return bytes.len(),
        }
    }
}

/// A fixed stack of container kinds: bit set = object, clear = array.
struct KindStack {
    bits: [u64; 4],
}

impl KindStack {
    const fn new() -> Self {
        Self { bits: [0; 4] }
    }
    #[inline]
    fn set(&mut self, level: u8, is_object: bool) {
        let (word, bit) = ((level / 64) as usize, level % 64);
        if is_object {
            self.bits[word] |= 1 << bit;
        } else {
            self.bits[word] &= !(1 << bit);
        }
    }
    #[inline]
    fn is_object(&self, level: u8) -> bool {
        let (word, bit) = ((level / 64) as usize, level % 64);
        self.bits[word] & (1 << bit) != 0
    }
}

/// Scans the value that starts exactly at `start` and returns the offset just past it.
///
/// `max_depth` bounds container nesting: a value at the top counts as level 1.
/// The whole value is validated on the way (strings, escapes, UTF-8, numbers).
pub fn skip_value(bytes: &[u8], start: usize, max_depth: u8) -> Result<usize, JsonError> {
    use JsonErrorKind::*;
    if !matches!(bytes.get(start), Some(b'{' | b'[')) {
        return scan_scalar(bytes, start);
    }
    let mut stack = KindStack::new();
    let mut depth: u8 = 0;
    // The kind of the innermost open container (kept in sync with `stack`).
    let mut in_object = false;
    let mut pos = start;
    'value: loop {
        // Here a value must start, inside a container unless `depth == 0` (the first one).
        if let Some(&open @ (b'{' | b'[')) = bytes.get(pos) {
            if depth >= max_depth {
                return Err(JsonError::new(TooDeep, pos));
            }
            in_object = open == b'{';
            stack.set(depth, in_object);
            depth += 1;
            pos = skip_ws(bytes, pos + 1);
            let close = if in_object { b'}' } else { b']' };
            if bytes.get(pos) != Some(&close) {
                if in_object {
                    pos = object_key(bytes, pos)?;
                }
                continue 'value;
            }
        } else {
            pos = scan_scalar(bytes, pos)?;
        }
        // Here a value has just ended inside a container, or `pos` is at an empty container's close.
        loop {
            pos = skip_ws(bytes, pos);
            match bytes.get(pos) {
                None => return Err(JsonError::new(UnexpectedEnd, pos)),
                Some(b',') => {
                    pos = skip_ws(bytes, pos + 1);
                    if in_object {
                        pos = object_key(bytes, pos)?;
                    }
                    continue 'value;
                }
                Some(b'}') if in_object => {}
                Some(b']') if !in_object => {}
                Some(_) => return Err(JsonError::new(UnexpectedByte, pos)),
            }
            depth -= 1;
            pos += 1;
            if depth == 0 {
                return Ok(pos);
            }
            in_object = stack.is_object(depth - 1);
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

/// Scans `"key" :` with white space, returning the offset of the member's value.
#[inline]
fn object_key(bytes: &[u8], pos: usize) -> Result<usize, JsonError> {
    match bytes.get(pos) {
        Some(b'"') => {}
        Some(_) => return Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
        None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
    }
    let pos = skip_ws(bytes, scan_string(bytes, pos)?);
    match bytes.get(pos) {
        Some(b':') => Ok(skip_ws(bytes, pos + 1)),
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

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Flags (high bit per byte) the bytes of `x` that are `"`, `\`, a control character, or non-ASCII.
///
/// Bytes above a flagged one may be flagged falsely (borrows), but the lowest
/// flagged byte is always a real one: `trailing_zeros() / 8` finds it.
#[inline]
fn care_mask(x: u64) -> u64 {
    let quote = x ^ (LO * b'"' as u64);
    let backslash = x ^ (LO * b'\\' as u64);
    let zero_in = |v: u64| v.wrapping_sub(LO) & !v & HI;
    let below_space = x.wrapping_sub(LO * 0x20) & !x & HI;
    zero_in(quote) | zero_in(backslash) | below_space | (x & HI)
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
        Some(b'u') => hex4(bytes, pos + 2).map(|_| pos + 6),
        Some(_) => Err(JsonError::new(InvalidEscape, pos)),
    }
}

fn hex4(bytes: &[u8], pos: usize) -> Result<u16, JsonError> {
    let mut value: u16 = 0;
    for i in 0..4 {
        let Some(&b) = bytes.get(pos + i) else {
            return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos + i));
        };
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(JsonError::new(JsonErrorKind::InvalidEscape, pos + i)),
        };
        value = (value << 4) | digit as u16;
    }
    Ok(value)
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

    /// The raw bytes between the quotes, escapes as written.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// True when the string has no escapes, so its raw bytes are its text.
    pub fn is_plain(&self) -> bool {
        !self.raw.contains(&b'\\')
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
    pub fn eq_text(&self, text: &[u8]) -> bool {
        if self.is_plain() {
            return self.raw == text;
        }
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

/// One member of an object: its key and its raw value bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Member<'a> {
    /// The member's name.
    pub key: JsonStr<'a>,
    /// The member's value exactly as written (validated).
    pub value: &'a [u8],
}

/// Iterator over the members of one object, validating each value as it goes.
///
/// After the last member it checks the closing brace; the first error ends it.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Members<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: u8,
    state: MembersState,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum MembersState {
    First,
    Next,
    Done,
    Failed,
}

impl<'a> Members<'a> {
    /// Starts at the `{` found at `bytes[start..]` after white space; `max_depth` counts that object as level 1.
    pub fn new(bytes: &'a [u8], start: usize, max_depth: u8) -> Result<Self, JsonError> {
        let pos = skip_ws(bytes, start);
        match bytes.get(pos) {
            Some(b'{') if max_depth >= 1 => Ok(Self {
                bytes,
                pos: pos + 1,
                max_depth: max_depth - 1,
                state: MembersState::First,
            }),
            Some(b'{') => Err(JsonError::new(JsonErrorKind::TooDeep, pos)),
            Some(_) => Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
            None => Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
        }
    }

    /// Offset just past the closing brace, once iteration has finished cleanly.
    pub fn end(&self) -> Option<usize> {
        (self.state == MembersState::Done).then_some(self.pos)
    }

    /// The next member, its value read by `scan`: given the key, the bytes, where the value
    /// starts and the depth left for it, `scan` validates the value as [`skip_value`] would and
    /// returns where it ends. This lets a caller look inside a value while it is validated.
    pub fn next_scanned<F>(&mut self, scan: F) -> Option<Result<Member<'a>, JsonError>>
    where
        F: FnOnce(JsonStr<'a>, &'a [u8], usize, u8) -> Result<usize, JsonError>,
    {
        match self.step(scan) {
            Ok(Some(m)) => Some(Ok(m)),
            Ok(None) => None,
            Err(e) => {
                self.state = MembersState::Failed;
                self.pos = e.at;
                Some(Err(e))
            }
        }
    }

    fn step<F>(&mut self, scan: F) -> Result<Option<Member<'a>>, JsonError>
    where
        F: FnOnce(JsonStr<'a>, &'a [u8], usize, u8) -> Result<usize, JsonError>,
    {
        if matches!(self.state, MembersState::Done | MembersState::Failed) {
            return Ok(None);
        }
        let mut pos = skip_ws(self.bytes, self.pos);
        if self.bytes.get(pos) == Some(&b'}') {
            self.state = MembersState::Done;
            self.pos = pos + 1;
            return Ok(None);
        }
        if self.state == MembersState::Next {
            match self.bytes.get(pos) {
                Some(b',') => pos = skip_ws(self.bytes, pos + 1),
                Some(_) => return Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
                None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
            }
        }
        let (key, after_key) = JsonStr::parse_at(self.bytes, pos)?;
        pos = skip_ws(self.bytes, after_key);
        match self.bytes.get(pos) {
            Some(b':') => pos = skip_ws(self.bytes, pos + 1),
            Some(_) => return Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
            None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
        }
        let end = scan(key, self.bytes, pos, self.max_depth)?;
        self.pos = end;
        self.state = MembersState::Next;
        Ok(Some(Member {
            key,
            value: &self.bytes[pos..end],
        }))
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = Result<Member<'a>, JsonError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_scanned(|_, bytes, start, depth| skip_value(bytes, start, depth))
    }
}

/// Finds the last member named `key` in the object `bytes` (like `JSON.parse`, later duplicates win).
pub fn find_member<'a>(
    bytes: &'a [u8],
    key: &[u8],
    max_depth: u8,
) -> Result<Option<&'a [u8]>, JsonError> {
    let mut found = None;
    for m in Members::new(bytes, 0, max_depth)? {
        let m = m?;
        if m.key.eq_text(key) {
            found = Some(m.value);
        }
    }
    Ok(found)
}

/// True when the raw value is a JSON object (first byte `{`).
pub fn is_object(value: &[u8]) -> bool {
    value.first() == Some(&b'{')
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            validate(b"01", 32).unwrap_err().kind,
            JsonErrorKind::InvalidNumber
        );
        assert_eq!(
            validate(b"[1,]", 32).unwrap_err().kind,
            JsonErrorKind::UnexpectedByte
        );
        assert_eq!(
            validate(b"\"\\x\"", 32).unwrap_err().kind,
            JsonErrorKind::InvalidEscape
        );
        assert_eq!(validate(b"\"\\ud800\"", 32), Ok(()));
        assert_eq!(
            validate(b"[[1]]", 1).unwrap_err(),
            JsonError {
                kind: JsonErrorKind::TooDeep,
                at: 1
            }
        );
        assert_eq!(
            validate(b"{} x", 32).unwrap_err(),
            JsonError {
                kind: JsonErrorKind::TrailingData,
                at: 3
            }
        );
        assert_eq!(
            validate(b"\"\xff\"", 32).unwrap_err().kind,
            JsonErrorKind::InvalidUtf8
        );
        assert_eq!(
            validate(b"\"a\x01\"", 32).unwrap_err().kind,
            JsonErrorKind::ControlCharacter
        );
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
    fn members_last_wins_and_checks_close() {
        let obj = b"{\"a\":1, \"b\" : [2], \"a\":3}";
        assert_eq!(find_member(obj, b"a", 32), Ok(Some(&b"3"[..])));
        assert_eq!(find_member(obj, b"z", 32), Ok(None));
        assert!(find_member(b"{\"a\":1", b"a", 32).is_err());
        assert!(find_member(b"{\"a\":1,}", b"a", 32).is_err());
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

    #[test]
    fn compaction_drops_only_white_space_between_tokens() {
        let value = b" {\"a b\" :\t[ 1 , -0.50e+3 ,\r\n\"x\\\" y\" ] , \"\\\\\" : { } }\n";
        let want = b"{\"a b\":[1,-0.50e+3,\"x\\\" y\"],\"\\\\\":{}}";
        assert_eq!(compact_len(value), want.len());
        let mut out = [0u8; 64];
        let n = compact_into(value, &mut out);
        assert_eq!(&out[..n], want);
        // A short buffer takes a prefix of the compact form.
        let mut short = [0u8; 10];
        assert_eq!(compact_into(value, &mut short), 10);
        assert_eq!(&short, &want[..10]);
        // The word-at-a-time scan agrees with a byte-at-a-time reference on every shape.
        let alphabet: &[u8] = b" \t\r\n\"\\ab{}[]:,1";
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for n in 0..4000 {
            let mut v = [0u8; 40];
            let len = n % 40;
            for b in v.iter_mut().take(len) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = alphabet[(x >> 8) as usize % alphabet.len()];
            }
            let v = &v[..len];
            let (mut reference, mut r) = ([0u8; 40], 0);
            let (mut in_string, mut escaped) = (false, false);
            for &b in v {
                if in_string {
                    in_string = escaped || b != b'"';
                    escaped = !escaped && b == b'\\';
                } else if is_ws(b) {
                    continue;
                } else {
                    in_string = b == b'"';
                }
                reference[r] = b;
                r += 1;
            }
            let mut out = [0u8; 40];
            let got = compact_into(v, &mut out);
            assert_eq!(&out[..got], &reference[..r], "{v:?}");
            assert_eq!(compact_len(v), r);
        }
    }
}
