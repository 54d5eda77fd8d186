//! Bytes in, events out: the one SSE reader every SSE provider and MCP's Streamable HTTP
//! share (the WHATWG EventSource rules), and NDJSON lines cut by the crate's one line
//! splitter, both over their owner's buffer.
//!
//! The reader stores only what an event dispatches: its `data` lines joined with LF, and
//! its `event` name. Input may stop anywhere (inside a field name, a CRLF, a UTF-8
//! sequence); the reader keeps a few bytes of line state between feeds and never looks
//! back. An event longer than the buffer is kept as far as it fits and reported
//! over-long, so the decoder can still tell which call it carried.

use crate::frame::splitter::{Cut, Lines};

/// The longest `event` name kept; longer names are no provider's, so the event is unknown.
pub(crate) const NAME_CAP: usize = 48;

/// How the body is framed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Framing {
    /// Server-sent events.
    Sse,
    /// One JSON value a line.
    Ndjson,
}

// The framings the build's providers use. `feed` and `finish` match on them first, so in a
// build with one framing the other's reader is not linked (at opt-level "z", 0.2 KiB of an
// SSE provider's flash, 1.2 KiB of Ollama's); with both, `framing` decides as before.
/// An SSE provider is built in.
const SSE: bool = cfg!(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini",
    feature = "mcp-http"
));
/// Ollama (NDJSON) is built in.
const NDJSON: bool = cfg!(feature = "ollama");

impl Framing {
    /// How `provider` frames its stream body.
    #[cfg(feature = "_providers")]
    pub(crate) fn of(provider: crate::provider::Provider) -> Self {
        match provider {
            #[cfg(feature = "ollama")]
            crate::provider::Provider::Ollama => Framing::Ndjson,
            #[allow(unreachable_patterns)]
            _ => Framing::Sse,
        }
    }
}

/// Which field the current line's value belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Field {
    Data,
    Event,
    Ignored,
}

/// Where the reader is inside a line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum At {
    /// At the start of a line.
    LineStart,
    /// Reading a field name: its first bytes so far (only `data` and `event` matter).
    Name { len: u8, buf: [u8; 5] },
    /// Just after the colon: one space may follow.
    AfterColon(Field),
    /// Reading a value.
    Value(Field),
    /// Inside a comment line, or (NDJSON) never used.
    Comment,
}

/// What one feed produced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Fed {
    /// The bytes were consumed; no event is complete.
    More,
    /// An event is complete in the buffer.
    Event,
}

/// The line and event state of the reader (the bytes live in the decoder's buffer).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Reader {
    framing: Framing,
    at: At,
    /// The last byte was a CR: an LF right after it ends nothing more.
    after_cr: bool,
    /// Bytes of the event's data, joined; past the buffer they are counted, not kept.
    pub(crate) len: usize,
    /// A `data` line has been seen in this event.
    has_data: bool,
    /// The event's name.
    pub(crate) name: [u8; NAME_CAP],
    /// Its length; `None` when it had no `event` line, `usize::MAX` when it was too long.
    pub(crate) name_len: Option<usize>,
    /// NDJSON: the line being cut (its bytes go where an event's data goes).
    lines: Lines,
    /// Bytes of a byte-order mark read at the start of the body (3: past it, or none came).
    bom: u8,
}

/// The offset of the first CR or LF in `bytes`, or its length.
fn line_end(bytes: &[u8]) -> usize {
    crate::json::bytes::find_either(bytes, 0, b'\n', b'\r')
}

/// The UTF-8 byte-order mark an event stream may start with (the WHATWG rules drop it).
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

impl Reader {
    /// A reader at the start of a body.
    pub(crate) const fn new(framing: Framing) -> Self {
        Self {
            framing,
            at: At::LineStart,
            after_cr: false,
            len: 0,
            has_data: false,
            name: [0; NAME_CAP],
            name_len: None,
            lines: Lines::new(),
            bom: 0,
        }
    }

    /// The name of the event in the buffer, when it had a usable one.
    pub(crate) fn event_name(&self) -> Option<&[u8]> {
        self.name.get(..self.name_len?)
    }

    /// True when the event's data did not fit the buffer.
    pub(crate) fn overlong(&self, cap: usize) -> bool {
        self.len > cap
    }

    /// Whether bytes of an event not yet complete are in the buffer (or a `data` line was
    /// seen): the buffer is this reader's until the event is read.
    #[cfg(feature = "mcp-http")]
    pub(crate) fn holds_event(&self) -> bool {
        self.len > 0 || self.has_data
    }

    /// Makes room for the next event (after the decoder has read this one).
    pub(crate) fn clear_event(&mut self) {
        self.len = 0;
        self.has_data = false;
        self.name_len = None;
    }

    /// Consumes bytes of `input` into `buf` up to the end of the first complete event;
    /// returns how many bytes it took and whether an event is ready.
    pub(crate) fn feed(&mut self, buf: &mut [u8], input: &[u8]) -> (usize, Fed) {
        match self.framing {
            Framing::Sse if SSE => self.feed_sse(buf, input),
            _ if NDJSON => self.feed_ndjson(buf, input),
            _ => self.feed_sse(buf, input),
        }
    }

    /// At the end of the body: whether an event left without its terminator is ready.
    pub(crate) fn finish(&mut self) -> bool {
        let ready = match self.framing {
            Framing::Sse if SSE => self.has_data,
            // Whole or over-long, the decoder reads the line from `len` (no capacity needed).
            _ if NDJSON => {
                let cut = self.lines.end(&mut self.len, usize::MAX);
                self.line_cut(cut)
            }
            _ => self.has_data,
        };
        self.at = At::LineStart;
        self.after_cr = false;
        if !ready {
            self.clear_event();
        }
        ready
    }

    fn push(&mut self, buf: &mut [u8], bytes: &[u8]) {
        let end = self.len.saturating_add(bytes.len());
        if let Some(dst) = buf.get_mut(self.len..end) {
            dst.copy_from_slice(bytes);
        } else if let Some(room) = buf.get_mut(self.len..) {
            let n = room.len();
            room.copy_from_slice(&bytes[..n]);
        }
        self.len = end;
    }

    fn feed_ndjson(&mut self, buf: &mut [u8], input: &[u8]) -> (usize, Fed) {
        let mut i = 0;
        while i < input.len() {
            let (n, _, cut) = self.lines.feed(&mut self.len, buf, &input[i..]);
            i += n;
            if self.line_cut(cut) {
                return (i, Fed::Event);
            }
        }
        (i, Fed::More)
    }

    /// A line ended: its data is `buf[..len]` (over-long, as much of it as fitted).
    fn line_cut(&mut self, cut: Cut) -> bool {
        match cut {
            Cut::Partial => false,
            Cut::Line(len) | Cut::TooLong(len) => {
                self.len = len;
                true
            }
        }
    }

    fn feed_sse(&mut self, buf: &mut [u8], input: &[u8]) -> (usize, Fed) {
        let mut i = 0;
        while self.bom < 3 {
            match input.get(i) {
                None => return (i, Fed::More),
                Some(&b) if b == BOM[self.bom as usize] => {
                    self.bom += 1;
                    i += 1;
                }
                // No mark (or a broken one, whose bytes start no field a provider sends).
                Some(_) => self.bom = 3,
            }
        }
        while i < input.len() {
            let b = input[i];
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    i += 1;
                    continue;
                }
            }
            match self.at {
                At::LineStart => match b {
                    b'\r' | b'\n' => {
                        self.after_cr = b == b'\r';
                        i += 1;
                        if self.has_data {
                            self.at = At::LineStart;
                            return (i, Fed::Event);
                        }
                        // A block with no data dispatches nothing, and forgets its name.
                        self.clear_event();
                    }
                    b':' => {
                        self.at = At::Comment;
                        i += 1;
                    }
                    _ => {
                        self.at = At::Name {
                            len: 0,
                            buf: [0; 5],
                        }
                    }
                },
                At::Name {
                    mut len,
                    buf: mut name,
                } => {
                    let rest = &input[i..];
                    let stop = rest
                        .iter()
                        .position(|&c| matches!(c, b':' | b'\r' | b'\n'))
                        .unwrap_or(rest.len());
                    for &c in &rest[..stop] {
                        if (len as usize) < name.len() {
                            name[len as usize] = c;
                        }
                        len = len.saturating_add(1);
                    }
                    i += stop;
                    let field = match &name[..(len as usize).min(5)] {
                        b"data" if len == 4 => Field::Data,
                        b"event" if len == 5 => Field::Event,
                        _ => Field::Ignored,
                    };
                    match rest.get(stop) {
                        None => self.at = At::Name { len, buf: name },
                        Some(b':') => {
                            i += 1;
                            self.at = At::AfterColon(field);
                        }
                        // A line with no colon is a field with an empty value.
                        Some(_) => {
                            self.begin_value(buf, field);
                            self.at = At::Value(field);
                        }
                    }
                }
                At::AfterColon(field) => {
                    if b == b' ' {
                        i += 1;
                    }
                    self.begin_value(buf, field);
                    self.at = At::Value(field);
                }
                At::Value(field) => {
                    let rest = &input[i..];
                    let stop = line_end(rest);
                    match field {
                        Field::Data => self.push(buf, &rest[..stop]),
                        Field::Event => self.push_name(&rest[..stop]),
                        Field::Ignored => {}
                    }
                    i += stop;
                    if let Some(&end) = rest.get(stop) {
                        self.after_cr = end == b'\r';
                        i += 1;
                        self.at = At::LineStart;
                    }
                }
                At::Comment => {
                    let rest = &input[i..];
                    match Some(line_end(rest)).filter(|&n| n < rest.len()) {
                        Some(stop) => {
                            self.after_cr = rest[stop] == b'\r';
                            i += stop + 1;
                            self.at = At::LineStart;
                        }
                        None => i = input.len(),
                    }
                }
            }
        }
        (i, Fed::More)
    }

    /// A value starts: a second `data` line joins the first with LF; `event` starts afresh.
    fn begin_value(&mut self, buf: &mut [u8], field: Field) {
        match field {
            Field::Data => {
                if self.has_data {
                    self.push(buf, b"\n");
                }
                self.has_data = true;
            }
            Field::Event => self.name_len = Some(0),
            Field::Ignored => {}
        }
    }

    fn push_name(&mut self, bytes: &[u8]) {
        let len = self.name_len.unwrap_or(0);
        let end = len.saturating_add(bytes.len());
        match self.name.get_mut(len..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.name_len = Some(end);
            }
            // Too long for any provider's name: no name matches it.
            None => self.name_len = Some(usize::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each framing's tests run in the builds that have it: a build without it never reads
    // with it (`feed` reads the framing it has whatever `framing` says).

    /// Every event of `body` fed in pieces of `step` bytes: (name, data, overlong).
    fn events(
        framing: Framing,
        body: &[u8],
        step: usize,
        cap: usize,
    ) -> heapless::Vec<(heapless::String<48>, heapless::Vec<u8, 256>, bool), 16> {
        let mut r = Reader::new(framing);
        let mut buf = [0u8; 256];
        let buf = &mut buf[..cap];
        let mut out = heapless::Vec::new();
        let mut take = |r: &mut Reader, buf: &[u8]| {
            let name = r
                .event_name()
                .map(|n| heapless::String::try_from(core::str::from_utf8(n).unwrap()).unwrap())
                .unwrap_or_default();
            let data = heapless::Vec::from_slice(&buf[..r.len.min(cap)]).unwrap();
            out.push((name, data, r.overlong(cap))).unwrap();
            r.clear_event();
        };
        for piece in body.chunks(step) {
            let mut at = 0;
            while at < piece.len() {
                let (n, fed) = r.feed(buf, &piece[at..]);
                at += n;
                if fed == Fed::Event {
                    take(&mut r, buf);
                }
            }
        }
        if r.finish() {
            take(&mut r, buf);
        }
        out
    }

    #[test]
    #[cfg(any(
        feature = "openai-chat",
        feature = "openai-responses",
        feature = "anthropic",
        feature = "gemini"
    ))]
    fn sse_fields_line_endings_and_comments_at_every_split() {
        let body = b": hi\r\nevent: a\r\ndata: {\"x\"\r\ndata:1}\r\nid: 7\r\n\r\nretry: 5\n\n:c\revent:b\rdata\r\rdata: last";
        for step in 1..body.len() {
            let ev = events(Framing::Sse, body, step, 64);
            assert_eq!(ev.len(), 3, "step {step}");
            assert_eq!((ev[0].0.as_str(), &ev[0].1[..]), ("a", &b"{\"x\"\n1}"[..]));
            assert_eq!((ev[1].0.as_str(), &ev[1].1[..]), ("b", &b""[..]));
            assert_eq!((ev[2].0.as_str(), &ev[2].1[..]), ("", &b"last"[..]));
        }
    }

    #[test]
    #[cfg(any(
        feature = "openai-chat",
        feature = "openai-responses",
        feature = "anthropic",
        feature = "gemini"
    ))]
    fn a_byte_order_mark_at_the_start_is_dropped_at_any_split() {
        let body = b"\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n";
        for step in 1..body.len() {
            let ev = events(Framing::Sse, body, step, 64);
            // Only the first is a mark; the second starts a field named "\u{FEFF}data".
            assert_eq!(ev.len(), 1, "step {step}");
            assert_eq!(&ev[0].1[..], b"a");
        }
    }

    #[test]
    #[cfg(any(
        feature = "openai-chat",
        feature = "openai-responses",
        feature = "anthropic",
        feature = "gemini"
    ))]
    fn an_overlong_event_keeps_its_prefix_and_the_next_one_is_whole() {
        let body = b"data: 0123456789abcdef\n\ndata: ok\n\n";
        for step in 1..body.len() {
            let ev = events(Framing::Sse, body, step, 8);
            assert_eq!(ev.len(), 2);
            assert_eq!((&ev[0].1[..], ev[0].2), (&b"01234567"[..], true));
            assert_eq!((&ev[1].1[..], ev[1].2), (&b"ok"[..], false));
        }
    }

    #[test]
    #[cfg(feature = "ollama")]
    fn ndjson_lines_skip_blanks_and_strip_cr() {
        let body = b"\n  \r\n{\"a\":1}\r\n\n{\"b\":2}";
        for step in 1..body.len() {
            let ev = events(Framing::Ndjson, body, step, 64);
            assert_eq!(ev.len(), 2, "step {step}");
            assert_eq!(&ev[0].1[..], b"{\"a\":1}");
            assert_eq!(&ev[1].1[..], b"{\"b\":2}");
        }
    }
}
