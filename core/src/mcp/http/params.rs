//! `x-mcp-header` (2026-07-28's "Custom Headers from Tool Parameters", SPEC §9.11): a tool's
//! `inputSchema` may name parameters the client mirrors into `Mcp-Param-{Name}` headers.
//! At listing time each tool's annotations are checked (a tool with a bad one is not handed
//! out, as the revision says) and kept in a small table in host memory: the tool's name, and
//! per header its name and the chain of `properties` keys that leads to the value. At POST
//! time the values are read from the call's arguments along those chains.

use crate::json::valid::{get, string, Obj};
use crate::json::JsonStr;
use crate::sink::Sink;

use super::headers::put_value_runs;

/// Levels of `properties` an annotated parameter may sit under (deeper ones are refused).
pub(crate) const MAX_CHAIN: usize = 8;

/// Why a tool's annotations were refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// An annotation the revision does not allow.
    Bad,
    /// The table has no room for the tool's headers.
    Full,
}

/// Whether `name` is an HTTP token (RFC 9110 `1*tchar`).
fn token(name: &[u8]) -> bool {
    !name.is_empty()
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
}

/// Object keys equal to `x-mcp-header` anywhere in `json` (a scan, no recursion): the
/// annotations found along `properties` chains must be all of them.
fn annotations_anywhere(json: &[u8]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < json.len() {
        if json[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < json.len() && json[j] != b'"' {
            j += if json[j] == b'\\' { 2 } else { 1 };
        }
        let key = JsonStr::from_scanned_lenient(json.get(i..=j).unwrap_or(&[]));
        let next = json[(j + 1).min(json.len())..]
            .iter()
            .find(|b| !b.is_ascii_whitespace());
        if next == Some(&b':') && key.eq_text(b"x-mcp-header") {
            n += 1;
        }
        i = j + 1;
    }
    n
}

/// One annotation found: its header name and the chain of property names to its value.
struct Found<'s> {
    header: JsonStr<'s>,
    chain: [JsonStr<'s>; MAX_CHAIN],
    depth: usize,
}

/// Walks `properties` chains from `node` (at `depth`), handing each annotation to `each`;
/// false when one is bad.
fn walk<'s>(
    node: &'s [u8],
    chain: &mut [JsonStr<'s>; MAX_CHAIN],
    depth: usize,
    each: &mut dyn FnMut(Found<'s>) -> bool,
) -> bool {
    if let Some(h) = get(node, b"x-mcp-header") {
        let primitive = get(node, b"type").and_then(string).is_some_and(|t| {
            t.eq_text(b"string") || t.eq_text(b"integer") || t.eq_text(b"boolean")
        });
        let Some(header) = string(h).filter(|_| depth > 0 && primitive) else {
            return false;
        };
        if !each(Found {
            header,
            chain: *chain,
            depth,
        }) {
            return false;
        }
    }
    let Some(props) = get(node, b"properties").and_then(Obj::of) else {
        return true;
    };
    for (name, schema) in props {
        if depth == MAX_CHAIN {
            // Deeper chains are not followed: an annotation there counts as misplaced.
            return true;
        }
        chain[depth] = name;
        if !walk(schema, chain, depth + 1, each) {
            return false;
        }
    }
    true
}

/// The table of annotated tools, in host memory.
pub(crate) struct Params<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Params<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// Forgets every tool (a new listing).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, bytes: &[u8]) -> Result<(), Refusal> {
        let end = self.len + bytes.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(Refusal::Full)?
            .copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    fn push_text(&mut self, text: JsonStr<'_>) -> Result<(), Refusal> {
        let n = u8::try_from(text.decoded_len()).map_err(|_| Refusal::Bad)?;
        self.push(&[n])?;
        let mut res = Ok(());
        text.for_each_decoded_run(|run| {
            if res.is_ok() {
                res = self.push(run);
            }
        });
        res
    }

    /// Checks tool `name`'s entry and keeps its annotations; on a refusal nothing is kept.
    pub(crate) fn add(&mut self, name: &str, tool: &[u8]) -> Result<(), Refusal> {
        let Some(schema) = get(tool, b"inputSchema") else {
            return Ok(());
        };
        let total = annotations_anywhere(schema);
        if total == 0 {
            return Ok(());
        }
        let mark = self.len;
        let res = self.add_found(name, schema, total);
        if res.is_err() {
            self.len = mark;
        }
        res
    }

    fn add_found(&mut self, name: &str, schema: &[u8], total: usize) -> Result<(), Refusal> {
        let name_len = u8::try_from(name.len()).map_err(|_| Refusal::Full)?;
        self.push(&[name_len])?;
        self.push(name.as_bytes())?;
        let count_at = self.len;
        self.push(&[0])?;
        let first = self.len;
        let mut found = 0usize;
        let mut failed = None;
        let mut chain = [JsonStr::from_scanned_lenient(b"\"\""); MAX_CHAIN];
        let ok = walk(schema, &mut chain, 0, &mut |f| {
            found += 1;
            let unique = !self.has_header(first, f.header);
            let res = match token_of(f.header) && unique && found <= usize::from(u8::MAX) {
                true => self.push_found(&f),
                false => Err(Refusal::Bad),
            };
            failed = res.err();
            failed.is_none()
        });
        if let Some(r) = failed {
            return Err(r);
        }
        if !ok || found != total {
            return Err(Refusal::Bad);
        }
        self.buf[count_at] = found as u8;
        Ok(())
    }

    fn push_found(&mut self, f: &Found<'_>) -> Result<(), Refusal> {
        self.push_text(f.header)?;
        self.push(&[f.depth as u8])?;
        f.chain[..f.depth]
            .iter()
            .try_for_each(|seg| self.push_text(*seg))
    }

    /// Whether a header of the tool being added (from `first`) has `header`'s name, in any case.
    fn has_header(&self, first: usize, header: JsonStr<'_>) -> bool {
        let mut at = first;
        while at < self.len {
            let (h, next) = text_at(self.buf, at);
            let mut decoded = [0u8; 256];
            if let Ok(d) = header.decode_into(&mut decoded) {
                if d.as_bytes().eq_ignore_ascii_case(h) {
                    return true;
                }
            }
            at = skip_chain(self.buf, next);
        }
        false
    }

    /// Writes the `Mcp-Param-*` header lines of a call of tool `name` with `args`.
    pub(crate) fn write(&self, s: &mut dyn Sink, name: &[u8], args: &[u8]) {
        let mut at = 0;
        while at < self.len {
            let (tool, next) = text_at(self.buf, at);
            let count = self.buf[next];
            let mut h = next + 1;
            for _ in 0..count {
                let (header, chain_at) = text_at(self.buf, h);
                if tool == name {
                    put_param(s, header, self.buf, chain_at, args);
                }
                h = skip_chain(self.buf, chain_at);
            }
            if tool == name {
                return;
            }
            at = h;
        }
    }
}

/// Whether a header name is an HTTP token.
fn token_of(header: JsonStr<'_>) -> bool {
    let mut buf = [0u8; 256];
    header
        .decode_into(&mut buf)
        .is_ok_and(|d| token(d.as_bytes()))
}

/// The length-prefixed text at `at`, and where the next item starts.
fn text_at(buf: &[u8], at: usize) -> (&[u8], usize) {
    let n = usize::from(buf[at]);
    (&buf[at + 1..at + 1 + n], at + 1 + n)
}

/// Past a chain (its depth, then its segments).
fn skip_chain(buf: &[u8], at: usize) -> usize {
    let depth = buf[at];
    let mut p = at + 1;
    for _ in 0..depth {
        p = text_at(buf, p).1;
    }
    p
}

/// The largest integer JavaScript holds exactly, as the revision bounds header integers.
const SAFE: u64 = (1 << 53) - 1;

/// One `Mcp-Param-{header}` line, when `args` has a primitive value along the chain at `at`.
fn put_param(s: &mut dyn Sink, header: &[u8], buf: &[u8], at: usize, args: &[u8]) {
    let depth = buf[at];
    let mut p = at + 1;
    let mut v = args;
    for _ in 0..depth {
        let (seg, next) = text_at(buf, p);
        p = next;
        match get(v, seg) {
            Some(inner) => v = inner,
            None => return,
        }
    }
    let head = |s: &mut dyn Sink| {
        s.put(b"Mcp-Param-");
        s.put(header);
        s.put(b": ");
    };
    match v.first() {
        Some(b'"') => {
            let Some(text) = string(v) else { return };
            head(s);
            put_value_runs(s, |f| text.for_each_decoded_run(f));
        }
        Some(b't' | b'f') => {
            head(s);
            s.put(v);
        }
        Some(b'-' | b'0'..=b'9') => {
            let digits = v.strip_prefix(b"-").unwrap_or(v);
            let integer = !digits.is_empty()
                && digits.len() <= 16
                && digits.iter().all(u8::is_ascii_digit)
                && digits
                    .iter()
                    .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'))
                    <= SAFE;
            if !integer {
                return;
            }
            head(s);
            s.put(v);
        }
        _ => return,
    }
    s.put(b"\r\n");
}
