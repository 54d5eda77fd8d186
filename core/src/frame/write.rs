//! Writers for every frame the adapter emits, in SPEC §1 canonical form.
//!
//! Each frame is described by an [`OutFrame`] of borrowed parts. Encoding runs
//! the same writer twice: once into a byte counter, once into the caller's
//! buffer, so the length is exact and a short buffer is refused before a byte
//! is written ([`BufferTooSmall`] carries the size needed). Text parts are
//! decoded UTF-8 and get minimal escaping; raw parts (args, results, an `END`'s
//! content) are copied as written but for the white space between their tokens
//! (SPEC §7.22), so every frame written is one NDJSON line.

pub(crate) use crate::json::BufferTooSmall;
use crate::outcome::CallOutcome;
use crate::room::{PROMPT_BASE_LEN, ROUND_LIMIT_LEN_BOUND};
use crate::sink::put_quoted;
pub(crate) use crate::sink::{put_escaped, put_json_string, put_u64, Sink};

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

pub(crate) use crate::json::escape::escaped_len;

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

const _: () =
    assert!(ROUND_LIMIT_HEAD.len() + 10 + ROUND_LIMIT_TAIL.len() <= ROUND_LIMIT_LEN_BOUND);
const _: () = assert!(
    TEXT_HEAD.len() + CONTINUE_PROMPT.len() + LAST_ERROR_PREFIX.len() + 2 == PROMPT_BASE_LEN
);

/// One frame the adapter writes, by its parts. Text parts are decoded UTF-8. (`Text`, `Error`,
/// `End` and `Verbatim` are written by the project's tests through `internals`.)
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "_internals"), allow(dead_code))]
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
    #[cfg(any(test, feature = "_internals"))]
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
    use super::*;
    use crate::sink::Counter;
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
