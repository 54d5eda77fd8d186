//! Reading bytes already validated: skipping values and walking an object's members or an
//! array's elements without checking them again. A stream decoder validates a provider's
//! event once, then looks inside it many times; these readers make each look cost a
//! search for brackets and quotes, not a second validation. On bytes that are not valid
//! JSON they return nonsense but never panic and always end.

use super::bytes::{skip_ws, string_end as skip_string};
use super::string::JsonStr;

/// The offset just past the value that starts at `pos` (after white space).
pub(crate) fn skip(b: &[u8], pos: usize) -> usize {
    let pos = skip_ws(b, pos);
    match b.get(pos) {
        Some(b'"') => skip_string(b, pos),
        Some(b'{' | b'[') => skip_container(b, pos),
        Some(_) => {
            let mut i = pos;
            while let Some(&c) = b.get(i) {
                if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                i += 1;
            }
            i
        }
        None => pos,
    }
}

/// The offset just past the object or array whose bracket is at `pos`.
fn skip_container(b: &[u8], pos: usize) -> usize {
    let mut depth = 0usize;
    let mut i = pos;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i = skip_string(b, i);
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Just past `bracket` when `value` starts with it (after white space).
fn opened_by(value: &[u8], bracket: u8) -> Option<usize> {
    let pos = skip_ws(value, 0);
    (value.get(pos) == Some(&bracket)).then_some(pos + 1)
}

/// The members of a validated object, in order.
#[derive(Clone, Debug)]
pub(crate) struct Obj<'a> {
    b: &'a [u8],
    pos: usize,
    /// Just past the closing brace, once the walk reached it (0 until then).
    closed: usize,
}

impl<'a> Obj<'a> {
    /// The members of `value` when it is an object (white space around it allowed).
    pub(crate) fn of(value: &'a [u8]) -> Option<Self> {
        let pos = opened_by(value, b'{')?;
        Some(Self {
            b: value,
            pos,
            closed: 0,
        })
    }
}

impl<'a> Obj<'a> {
    /// The next member's name and the offset in the object's text where its value starts;
    /// the caller then takes the value with [`Obj::value_at`] (which skips it) or, having read
    /// it whole itself, goes on past it with [`Obj::resume`]. So a value read in place is not
    /// also skipped first.
    #[inline]
    pub(crate) fn next_name(&mut self) -> Option<(JsonStr<'a>, usize)> {
        let mut pos = skip_ws(self.b, self.pos);
        if self.b.get(pos) == Some(&b',') {
            pos = skip_ws(self.b, pos + 1);
        }
        if self.b.get(pos) != Some(&b'"') {
            if self.b.get(pos) == Some(&b'}') {
                self.closed = pos + 1;
            }
            self.pos = self.b.len();
            return None;
        }
        let key_end = skip_string(self.b, pos);
        let key = JsonStr::from_scanned_lenient(self.b.get(pos..key_end)?);
        let colon = skip_ws(self.b, key_end);
        let start = skip_ws(self.b, colon + 1);
        self.pos = start;
        Some((key, start))
    }

    /// The value [`Obj::next_name`] found at `start`, the walk going on after it.
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(crate) fn value_at(&mut self, start: usize) -> &'a [u8] {
        let end = skip(self.b, start);
        self.pos = end;
        self.b.get(start..end).unwrap_or(&[])
    }

    /// Goes on after a value the caller read whole: `end` is just past it.
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(crate) fn resume(&mut self, end: usize) {
        self.pos = end;
    }

    /// Where the walk stands in the object's text.
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Just past the object's closing brace, once the walk has ended there.
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(crate) fn closed(&self) -> Option<usize> {
        (self.closed > 0).then_some(self.closed)
    }
}

impl<'a> Iterator for Obj<'a> {
    type Item = (JsonStr<'a>, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let (key, start) = self.next_name()?;
        let end = skip(self.b, start);
        self.pos = end;
        Some((key, self.b.get(start..end)?))
    }
}

/// The elements of a validated array, in order.
#[derive(Clone, Debug)]
pub(crate) struct Arr<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Arr<'a> {
    /// The elements of `value` when it is an array (white space around it allowed).
    pub(crate) fn of(value: &'a [u8]) -> Option<Self> {
        let pos = opened_by(value, b'[')?;
        Some(Self { b: value, pos })
    }
}

impl<'a> Arr<'a> {
    /// Goes on reading elements at `pos`, an offset [`pos`](Self::pos) gave.
    pub(crate) fn resume(value: &'a [u8], pos: usize) -> Self {
        Self { b: value, pos }
    }

    /// Where the next element is looked for.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Where the next element starts, for a caller that reads it in place and then goes on
    /// past it with [`Arr::resume_at`] (so an element read whole is not also skipped first).
    /// `None` past the last, the walk then standing just past the closing bracket
    /// ([`Arr::pos`]; the end of the text when there is none): unlike the iterator's, this
    /// walk ends there and is not called again.
    pub(crate) fn next_start(&mut self) -> Option<usize> {
        let mut pos = skip_ws(self.b, self.pos);
        if self.b.get(pos) == Some(&b',') {
            pos = skip_ws(self.b, pos + 1);
        }
        match self.b.get(pos) {
            None => {
                self.pos = self.b.len();
                None
            }
            Some(b']') => {
                self.pos = pos + 1;
                None
            }
            Some(_) => {
                self.pos = pos;
                Some(pos)
            }
        }
    }

    /// Goes on after an element the caller read whole: `end` is just past it.
    #[cfg_attr(not(feature = "openai-chat"), allow(dead_code))]
    pub(crate) fn resume_at(&mut self, end: usize) {
        // An element that took no bytes (only in text that is not JSON) ends the walk rather
        // than being found again.
        self.pos = if end > self.pos { end } else { self.b.len() };
    }
}

impl<'a> Iterator for Arr<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let Some(pos) = self.next_start() else {
            // Past the last, for good: the iterator is fused.
            self.pos = self.b.len();
            return None;
        };
        let end = skip(self.b, pos);
        if end <= pos {
            self.pos = self.b.len();
            return None;
        }
        self.pos = end;
        self.b.get(pos..end)
    }
}

/// The value of the last member named `key` (later duplicates win, as in `JSON.parse` and
/// the providers' SDKs), when `object` is an object.
pub(crate) fn get<'a>(object: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    Obj::of(object)?
        .filter(|(k, _)| k.eq_text(key))
        .last()
        .map(|(_, v)| v)
}

/// The values of the members named `keys` of `object`, in one pass (later duplicates win).
pub(crate) fn pick<'a, const N: usize>(
    object: &'a [u8],
    keys: [&[u8]; N],
) -> [Option<&'a [u8]>; N] {
    let mut out = [None; N];
    for (k, v) in Obj::of(object).into_iter().flatten() {
        if let Some(i) = keys.iter().position(|key| k.eq_text(key)) {
            out[i] = Some(v);
        }
    }
    out
}

/// The string `value` is, when it is one.
pub(crate) fn string(value: &[u8]) -> Option<JsonStr<'_>> {
    let v = super::bytes::trim_ws(value);
    (v.len() >= 2 && v[0] == b'"').then(|| JsonStr::from_scanned_lenient(v))
}

/// The string member `key` of `object`, when there is one.
pub(crate) fn get_str<'a>(object: &'a [u8], key: &[u8]) -> Option<JsonStr<'a>> {
    string(get(object, key)?)
}

/// True when `value` is the literal `true`.
pub(crate) fn is_true(value: &[u8]) -> bool {
    super::bytes::trim_ws(value) == b"true"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_members_and_elements_of_valid_json() {
        let doc = br#" { "a" : [1, {"x":"]}\""}, "s"] , "b":"q\"","a":7 } "#;
        let keys: heapless::Vec<&[u8], 4> = Obj::of(doc).unwrap().map(|(k, _)| k.raw()).collect();
        assert_eq!(keys, [&b"a"[..], b"b", b"a"]);
        assert_eq!(get(doc, b"a"), Some(&b"7"[..]));
        assert_eq!(get_str(doc, b"b").unwrap().raw(), br#"q\""#);
        let first = Obj::of(doc).unwrap().next().unwrap().1;
        let items: heapless::Vec<&[u8], 4> = Arr::of(first).unwrap().collect();
        assert_eq!(items, [&b"1"[..], br#"{"x":"]}\""}"#, br#""s""#]);
        assert_eq!(Arr::of(b"[]").unwrap().count(), 0);
        assert!(Obj::of(b"[1]").is_none());
    }

    #[test]
    fn never_panics_on_garbage() {
        for doc in [
            &b"{\"a"[..],
            b"{\"a\":",
            b"[1,",
            b"{\"\\",
            b"[\"",
            b"{,,}",
            b"[,]",
            b"[,,]",
            b"[}",
            b"[1}",
        ] {
            let _ = Obj::of(doc).map(|o| o.count());
            let _ = Arr::of(doc).map(|a| a.count());
            let _ = skip(doc, 0);
            if let Some(mut list) = Arr::of(doc) {
                while let Some(at) = list.next_start() {
                    list.resume_at(skip(doc, at));
                }
            }
        }
    }
}
