//! Texts as the conversation keeps them (the inside of a canonical JSON string), the
//! lengths they take, and the lengths of the fields that hold them.

pub(super) use crate::json::escape::escaped_len;
use crate::json::{self, JsonStr};
use crate::request::store::{read_u32, FIELD, HEAD};
use crate::sink::{put_escaped, Counter, Sink};

/// The length of the last field of the part at `part`, which ends at `end`.
pub(super) fn last_field_len(buf: &[u8], part: usize, end: usize) -> usize {
    let mut at = part + HEAD;
    let mut last = 0;
    while at < end {
        last = read_u32(buf, at);
        if at + FIELD + last >= end {
            return last;
        }
        at += FIELD + last;
    }
    last
}

pub(super) fn put_field(s: &mut dyn Sink, n: usize, write: impl FnOnce(&mut dyn Sink)) {
    s.put(&(n as u32).to_le_bytes());
    write(s);
}

/// A JSON string's text escaped canonically, without quotes.
pub(super) fn put_canonical(s: &mut dyn Sink, text: JsonStr<'_>) {
    text.for_each_decoded_run(|run| put_escaped(s, run));
}

pub(super) fn canonical_len(text: JsonStr<'_>) -> usize {
    let mut c = Counter(0);
    put_canonical(&mut c, text);
    c.0
}

pub(super) fn escaped_compact_len(value: &[u8]) -> usize {
    let mut c = Counter(0);
    json::for_each_compact_run(value, |run| put_escaped(&mut c, run));
    c.0
}

/// Whether a JSON string and a stored canonical text say the same.
pub(super) fn canonical_eq(a: JsonStr<'_>, stored: &[u8]) -> bool {
    let mut pos = 0;
    let mut same = true;
    let mut cmp = Cmp {
        other: stored,
        pos: &mut pos,
        same: &mut same,
    };
    put_canonical(&mut cmp, a);
    same && pos == stored.len()
}

pub(super) struct Cmp<'a> {
    other: &'a [u8],
    pos: &'a mut usize,
    same: &'a mut bool,
}

impl Sink for Cmp<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = *self.pos + bytes.len();
        if self.other.get(*self.pos..end) != Some(bytes) {
            *self.same = false;
        }
        *self.pos = end;
    }
}
