//! Writers for every frame the adapter emits, in SPEC §1 canonical form.
//!
//! Each frame is described by an [`OutFrame`] of borrowed parts. Encoding runs
//! the same writer twice: once into a byte counter, once into the caller's
//! buffer, so the length is exact and a short buffer is refused before a byte
//! is written ([`BufferTooSmall`] carries the size needed). Text parts are
//! decoded UTF-8 and get minimal escaping; raw parts (args, results, an `END`'s
//! content) are copied as written but for the white space between their tokens
//! (SPEC §7.22), so every frame written is one NDJSON line.

pub use crate::json::BufferTooSmall;
use crate::outcome::CallOutcome;

/// Where encoded bytes go: a counter or a buffer.
pub trait Sink {
    /// Appends bytes.
    fn put(&mut self, bytes: &[u8]);

    /// Appends a raw JSON value in its compact form (no white space between tokens).
    fn put_raw(&mut self, value: &[u8]) {
        crate::json::for_each_compact_run(value, |run| self.put(run));
    }

    /// Appends a call's id or name as a JSON string (quoted, escaped).
    fn put_name(&mut self, text: &[u8]) {
        put_json_string(self, text);
    }
}

/// What the crate's own encoders know about a frame's parts, so that they copy them
/// rather than rework them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Known {
    /// Every raw value is compact already (validated so, or stored compacted).
    pub(crate) raw_compact: bool,
    /// The id and name need no escaping: read from the frame, they had no escapes (so
    /// they hold no quote, backslash or control character either).
    pub(crate) names_plain: bool,
}

impl Known {
    /// Nothing known: raw values are compacted, ids and names escaped.
    pub(crate) const NOTHING: Self = Self {
        raw_compact: false,
        names_plain: false,
    };
    /// Raw values stored compacted (a slot's), ids and names stored decoded.
    pub(crate) const RAW_COMPACT: Self = Self {
        raw_compact: true,
        names_plain: false,
    };
}

/// A sink that only counts.
#[derive(Default, Debug, Clone, Copy)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Counter(pub usize);

impl Sink for Counter {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

/// `put_raw` of the crate's own sinks. Raw values the wrapper has seen validated without
/// white space between their tokens (or stored compacted) are copied as they are (`as_is`):
/// compacting them again would only copy. Others are compacted through one `dyn` closure,
/// so that the sinks share one copy of the compaction (the rare case).
fn put_raw_known<S: Sink>(s: &mut S, value: &[u8], as_is: bool) {
    if as_is {
        debug_assert_eq!(crate::json::compact_len(value), value.len(), "not compact");
        return s.put(value);
    }
    let emit: &mut dyn FnMut(&[u8]) = &mut |run| s.put(run);
    crate::json::for_each_compact_run(value, emit);
}

/// A counter of a frame whose parts may be known in their final form. (It counts names
/// escaped: a plain one escapes to itself, so `names_plain` would change nothing.)
struct Count {
    n: usize,
    known: Known,
}

impl Sink for Count {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.n += bytes.len();
    }

    fn put_raw(&mut self, value: &[u8]) {
        put_raw_known(self, value, self.known.raw_compact);
    }
}

/// Bytes of `text` escaped: its length when nothing needs escaping (names and ids, almost
/// always), else counted by the escaper (the crate's one counting sink: one copy of it).
pub(crate) fn escaped_len(text: &[u8]) -> usize {
    if next_escape(text, 0) == text.len() {
        return text.len();
    }
    let mut c = Count {
        n: 0,
        known: Known::NOTHING,
    };
    put_escaped(&mut c, text);
    c.n
}

/// Bytes of a `TOOL_RESULT` frame whose id and name escape to these lengths (`None`: no id,
/// a `null` name) and whose result or quoted error takes `outcome` bytes: what
/// [`OutFrame::encoded_len`] counts, without escaping the name and id again.
pub(crate) fn tool_result_len(id: Option<usize>, name: Option<usize>, outcome: usize) -> usize {
    const HEAD: usize = br#"{"type":"TOOL_RESULT","content":{"name":,"result":}}"#.len();
    HEAD + id.map_or(0, |n| br#""id":"","#.len() + n)
        + name.map_or(b"null".len(), |n| n + 2)
        + outcome
}

/// A sink over a slice, for a frame whose parts may be known in their final form.
struct SliceSink<'b> {
    buf: &'b mut [u8],
    pos: usize,
    known: Known,
}

impl Sink for SliceSink<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        // Bytes past the end are counted, not written: `encode_within` learns the length
        // of a frame that does not fit from the same pass.
        if let Some(dst) = self.buf.get_mut(self.pos..self.pos + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
        self.pos += bytes.len();
    }

    fn put_raw(&mut self, value: &[u8]) {
        put_raw_known(self, value, self.known.raw_compact);
    }

    fn put_name(&mut self, text: &[u8]) {
        put_quoted(self, text, self.known.names_plain);
    }
}

/// Writes `text` as a JSON string with quotes and minimal escapes.
pub fn put_json_string<S: Sink + ?Sized>(s: &mut S, text: &[u8]) {
    put_quoted(s, text, false);
}

/// [`put_json_string`], copying a `plain` text (one known to need no escapes) as it is.
fn put_quoted<S: Sink + ?Sized>(s: &mut S, text: &[u8], plain: bool) {
    s.put(b"\"");
    match plain {
        true => {
            debug_assert_eq!(escaped_len(text), text.len(), "not plain");
            s.put(text);
        }
        false => put_escaped(s, text),
    }
    s.put(b"\"");
}

/// The offset of the first byte at or after `from` that needs escaping, or `text.len()`.
fn next_escape(text: &[u8], mut from: usize) -> usize {
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

/// Writes `text` escaped for the inside of a JSON string (no quotes).
pub fn put_escaped<S: Sink + ?Sized>(s: &mut S, text: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut run = 0;
    let mut i = 0;
    while i < text.len() {
        i = next_escape(text, i);
        let Some(&b) = text.get(i) else {
            break;
        };
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            // Another control character (`next_escape` stops at nothing else): `\u00XX`.
            _ => b"",
        };
        s.put(&text[run..i]);
        if short.is_empty() {
            s.put(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 15) as usize],
            ]);
        } else {
            s.put(short);
        }
        i += 1;
        run = i;
    }
    s.put(&text[run..]);
}

/// Flags (high bit per byte) the bytes of `x` that are `"`, `\` or below U+0020; the lowest
/// flagged byte is always a real one (borrows only flag bytes above it).
#[inline]
fn escape_mask(x: u64) -> u64 {
    use crate::json::{zero_bytes, HI, LO};
    zero_bytes(x ^ (LO * b'"' as u64))
        | zero_bytes(x ^ (LO * b'\\' as u64))
        | (x.wrapping_sub(LO * 0x20) & !x & HI)
}

/// Decimal digits of `n` without allocation.
pub fn put_u64<S: Sink + ?Sized>(s: &mut S, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        let (q, r) = div_rem_10(n);
        i -= 1;
        digits[i] = b'0' + r;
        n = q;
        if n == 0 {
            break;
        }
    }
    s.put(&digits[i..]);
}

/// `n / 10` and `n % 10` by long division in 16-bit limbs: 32-bit targets have no 64-bit
/// divide, and the library routine for it costs about 860 bytes of flash on a Cortex-M.
fn div_rem_10(n: u64) -> (u64, u8) {
    let (mut q, mut rem) = (0u64, 0u32);
    for shift in [48u32, 32, 16, 0] {
        let cur = (rem << 16) | ((n >> shift) as u32 & 0xFFFF);
        q |= ((cur / 10) as u64) << shift;
        rem = cur % 10;
    }
    (q, rem as u8)
}

/// The text of the continue prompt.
pub const CONTINUE_PROMPT: &[u8] = b"Tool results above.";
/// What follows the prompt when a last tool error is set.
pub const LAST_ERROR_PREFIX: &[u8] = b" Last tool error: ";

/// The start of every `TEXT` frame the adapter writes.
const TEXT_HEAD: &[u8] = b"{\"type\":\"TEXT\",\"content\":\"";
/// The round-limit `ERROR` frame around its number.
const ROUND_LIMIT_HEAD: &[u8] =
    b"{\"type\":\"ERROR\",\"content\":{\"message\":\"Tool round limit reached (";
const ROUND_LIMIT_TAIL: &[u8] = b")\"}}";

/// Bytes of the continue prompt frame besides its (escaped) last tool error.
pub(crate) const PROMPT_BASE_LEN: usize =
    TEXT_HEAD.len() + CONTINUE_PROMPT.len() + LAST_ERROR_PREFIX.len() + 2;
/// A bound on the round-limit `ERROR` frame (75 bytes with the longest `u32`).
pub(crate) const ROUND_LIMIT_LEN_BOUND: usize = 80;
/// A bound on what a `TOOL_RESULT`, adapter `TOOL_CALL` or `CANCEL` frame holds besides its
/// id, name and value or reason (62 bytes for a `TOOL_RESULT`).
pub(crate) const FRAME_AROUND_BOUND: usize = 64;

const _: () =
    assert!(ROUND_LIMIT_HEAD.len() + 10 + ROUND_LIMIT_TAIL.len() <= ROUND_LIMIT_LEN_BOUND);

/// One frame the adapter writes, by its parts. Text parts are decoded UTF-8.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum OutFrame<'a> {
    /// `{"type":"TOOL_CALL","content":{"id"?,"name","args"}}` (to a tool adapter).
    ToolCall {
        /// The call's id, when it had one.
        id: Option<&'a [u8]>,
        /// The tool name.
        name: &'a [u8],
        /// Raw JSON args.
        args: &'a [u8],
    },
    /// `{"type":"TOOL_RESULT","content":{"id"?,"name","result"|"error"}}`; a `None` name is `null`.
    ToolResult {
        /// The call's id, when it had one.
        id: Option<&'a [u8]>,
        /// The tool name, `None` for a malformed call.
        name: Option<&'a [u8]>,
        /// The result or the error.
        outcome: CallOutcome<'a>,
    },
    /// `{"type":"TEXT","content":"…"}`.
    Text(&'a [u8]),
    /// The continue prompt, with `" Last tool error: …"` when one is set.
    Prompt {
        /// The last tool error, if any.
        last_error: Option<&'a [u8]>,
    },
    /// `{"type":"ERROR","content":{"message":"…"}}`.
    Error {
        /// The message text.
        message: &'a [u8],
    },
    /// The round-limit `ERROR`: `Tool round limit reached (<N>)`.
    RoundLimit {
        /// The configured limit.
        max_rounds: u32,
    },
    /// `{"type":"CANCEL","content":{"id"?,"name","reason"}}` (to a tool adapter).
    Cancel {
        /// The call's id, when it had one.
        id: Option<&'a [u8]>,
        /// The tool name.
        name: &'a [u8],
        /// Why the call is cancelled.
        reason: &'a [u8],
    },
    /// `{"type":"END"}`, with raw content when given.
    End {
        /// Raw JSON content.
        content: Option<&'a [u8]>,
    },
    /// A frame of the host's own, written as it is (a held `END` released).
    Verbatim(&'a [u8]),
}

impl OutFrame<'_> {
    /// Writes the canonical frame into any sink.
    pub fn write_to<S: Sink + ?Sized>(&self, s: &mut S) {
        match *self {
            OutFrame::ToolCall { id, name, args } => {
                s.put(b"{\"type\":\"TOOL_CALL\",\"content\":{");
                put_id(s, id);
                s.put(b"\"name\":");
                s.put_name(name);
                s.put(b",\"args\":");
                s.put_raw(args);
                s.put(b"}}");
            }
            OutFrame::ToolResult { id, name, outcome } => {
                s.put(b"{\"type\":\"TOOL_RESULT\",\"content\":{");
                put_id(s, id);
                s.put(b"\"name\":");
                match name {
                    Some(n) => s.put_name(n),
                    None => s.put(b"null"),
                }
                match outcome {
                    CallOutcome::Result(raw) => {
                        s.put(b",\"result\":");
                        s.put_raw(raw);
                    }
                    CallOutcome::Error(text) => {
                        s.put(b",\"error\":");
                        put_json_string(s, text.as_bytes());
                    }
                }
                s.put(b"}}");
            }
            OutFrame::Text(text) => {
                s.put(TEXT_HEAD);
                put_escaped(s, text);
                s.put(b"\"}");
            }
            OutFrame::Prompt { last_error } => {
                s.put(TEXT_HEAD);
                s.put(CONTINUE_PROMPT);
                if let Some(e) = last_error {
                    s.put(LAST_ERROR_PREFIX);
                    put_escaped(s, e);
                }
                s.put(b"\"}");
            }
            OutFrame::Error { message } => {
                s.put(b"{\"type\":\"ERROR\",\"content\":{\"message\":");
                put_json_string(s, message);
                s.put(b"}}");
            }
            OutFrame::RoundLimit { max_rounds } => {
                s.put(ROUND_LIMIT_HEAD);
                put_u64(s, max_rounds as u64);
                s.put(ROUND_LIMIT_TAIL);
            }
            OutFrame::Cancel { id, name, reason } => {
                s.put(b"{\"type\":\"CANCEL\",\"content\":{");
                put_id(s, id);
                s.put(b"\"name\":");
                s.put_name(name);
                s.put(b",\"reason\":");
                put_json_string(s, reason);
                s.put(b"}}");
            }
            OutFrame::End { content } => {
                s.put(b"{\"type\":\"END\"");
                if let Some(c) = content {
                    s.put(b",\"content\":");
                    s.put_raw(c);
                }
                s.put(b"}");
            }
            OutFrame::Verbatim(bytes) => s.put(bytes),
        }
    }

    /// The exact encoded length in bytes.
    pub fn encoded_len(&self) -> usize {
        self.len_as(Known::NOTHING)
    }

    /// Encodes into `out`, returning the length; a short buffer gets the needed size and is left untouched.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        self.encode_as(out, Known::NOTHING)
    }
}

// The crate's own encoders take what is `known` about the frame's parts.
impl OutFrame<'_> {
    /// [`encoded_len`](Self::encoded_len).
    pub(crate) fn len_as(&self, known: Known) -> usize {
        let mut c = Count { n: 0, known };
        self.write_to(&mut c);
        c.n
    }

    /// [`encode`](Self::encode).
    pub(crate) fn encode_as(&self, out: &mut [u8], known: Known) -> Result<usize, BufferTooSmall> {
        let needed = self.len_as(known);
        if out.len() < needed {
            return Err(BufferTooSmall { needed });
        }
        self.encode_exact(&mut out[..needed], known);
        Ok(needed)
    }

    /// Encodes into `out` in one pass when the frame fits, and returns its length either
    /// way: a length over `out.len()` means the bytes written are not the frame.
    pub(crate) fn encode_within(&self, out: &mut [u8], known: Known) -> usize {
        let mut sink = SliceSink {
            buf: out,
            pos: 0,
            known,
        };
        self.write_to(&mut sink);
        sink.pos
    }

    /// Writes into `out`, which is exactly [`encoded_len`](Self::encoded_len) bytes (no second count).
    pub(crate) fn encode_exact(&self, out: &mut [u8], known: Known) {
        let _len = self.encode_within(out, known);
        debug_assert_eq!(_len, out.len());
    }
}

fn put_id<S: Sink + ?Sized>(s: &mut S, id: Option<&[u8]>) {
    if let Some(id) = id {
        s.put(b"\"id\":");
        s.put_name(id);
        s.put(b",");
    }
}

#[cfg(test)]
mod tests {
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

    /// The shortcuts agree with the escaper: `escaped_len` with the bytes it writes, and
    /// `tool_result_len` with the frame's encoded length, for texts with and without escapes
    /// at every position of the eight-byte words.
    #[test]
    fn escaped_and_tool_result_lengths_match_the_encoder() {
        let pieces: [&[u8]; 6] = [b"abcdefgh", b"x", b"\"", b"\\", b"\n\x01", "é天".as_bytes()];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for n in 0..if cfg!(miri) { 100 } else { 2000 } {
            let mut text = [0u8; 40];
            let mut len = 0;
            while len < n % 37 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let p = pieces[(x % 6) as usize];
                let take = p.len().min(40 - len);
                text[len..len + take].copy_from_slice(&p[..take]);
                len += take;
            }
            let text = &text[..len];
            let mut c = Counter(0);
            put_escaped(&mut c, text);
            assert_eq!(escaped_len(text), c.0, "{text:?}");
            for (id, name) in [
                (Some(text), Some(&b"n"[..])),
                (None, Some(text)),
                (Some(text), None),
            ] {
                let frame = OutFrame::ToolResult {
                    id,
                    name,
                    outcome: CallOutcome::Result(b"[1]"),
                };
                let got = tool_result_len(id.map(escaped_len), name.map(escaped_len), 3);
                assert_eq!(got, frame.encoded_len(), "{text:?}");
            }
        }
    }

    #[test]
    fn u64_digits_by_long_division() {
        for n in [
            0,
            9,
            10,
            65_535,
            65_536,
            4_294_967_295,
            4_294_967_296,
            u64::MAX - 1,
            u64::MAX,
        ]
        .into_iter()
        .chain(
            (0..if cfg!(miri) { 100 } else { 2000u64 })
                .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        ) {
            assert_eq!(div_rem_10(n), (n / 10, (n % 10) as u8), "{n}");
            let mut out = [0u8; 20];
            let mut sink = SliceSink {
                buf: &mut out,
                pos: 0,
                known: Known::NOTHING,
            };
            put_u64(&mut sink, n);
            let len = sink.pos;
            let digits = &out[..len];
            assert!(len == 1 || digits[0] != b'0', "{n}");
            let back = digits.iter().fold(0u128, |v, d| {
                assert!(d.is_ascii_digit());
                v * 10 + (d - b'0') as u128
            });
            assert_eq!(back, n as u128);
        }
    }

    use super::*;

    fn enc(f: OutFrame<'_>) -> ([u8; 256], usize) {
        let mut buf = [0u8; 256];
        let n = f.encode(&mut buf).unwrap();
        (buf, n)
    }

    #[test]
    fn canonical_forms() {
        let (b, n) = enc(OutFrame::ToolResult {
            id: Some(b"c1"),
            name: Some(b"calc"),
            outcome: CallOutcome::Result(b"{\"sum\":3}"),
        });
        assert_eq!(&b[..n], b"{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c1\",\"name\":\"calc\",\"result\":{\"sum\":3}}}");
        let (b, n) = enc(OutFrame::ToolResult {
            id: None,
            name: None,
            outcome: CallOutcome::Error("a\"b\x01\n"),
        });
        assert_eq!(&b[..n], b"{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":null,\"error\":\"a\\\"b\\u0001\\n\"}}");
        let (b, n) = enc(OutFrame::Prompt {
            last_error: Some(b"boom"),
        });
        assert_eq!(
            &b[..n],
            b"{\"type\":\"TEXT\",\"content\":\"Tool results above. Last tool error: boom\"}"
        );
        let (b, n) = enc(OutFrame::RoundLimit { max_rounds: 12 });
        assert_eq!(
            &b[..n],
            b"{\"type\":\"ERROR\",\"content\":{\"message\":\"Tool round limit reached (12)\"}}"
        );
    }

    #[test]
    fn short_buffer_writes_nothing() {
        let f = OutFrame::Text("café".as_bytes());
        let mut buf = [7u8; 10];
        assert_eq!(
            f.encode(&mut buf),
            Err(BufferTooSmall {
                needed: f.encoded_len()
            })
        );
        assert_eq!(buf, [7u8; 10]);
        assert_eq!(
            f.encoded_len(),
            "{\"type\":\"TEXT\",\"content\":\"café\"}".len()
        );
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
    struct V(Vec<u8>);
    impl Sink for V {
        fn put(&mut self, b: &[u8]) {
            self.0.extend_from_slice(b)
        }
    }
    #[test]
    fn same_as_bytewise() {
        let mut x: u64 = 0x9E3779B97F4A7C15;
        let alphabet: &[u8] = b"ab\"\\\x00\x01\x1f\x20\x7f\x80\xc3\xa9\xff\n\t\r\x08\x0c~!";
        for n in 0..if cfg!(miri) { 400 } else { 20000 } {
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
            let mut a = V(Vec::new());
            put_escaped(&mut a, &t);
            let b = reference(&t);
            assert_eq!(a.0, b, "{t:?}");
            let mut c = Counter(0);
            put_escaped(&mut c, &t);
            assert_eq!(c.0, b.len());
        }
    }
}
