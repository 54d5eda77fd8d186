//! An object's top level noted while it is validated: where each member's name and value
//! lie, so a stream decoder that validated a provider's event finds its members without
//! walking the object a second time (the Chat decoder read six names and skipped five values
//! of every chunk again).

use super::error::JsonError;
use super::scan::{scan_value, validate_with, TopNotes};
use super::string::JsonStr;
use super::valid::Obj;

/// The most members noted; an object with more is walked as before (a Chat chunk has six to
/// nine: `id`, `object`, `created`, `model`, `choices`, `system_fingerprint`, `usage`,
/// `service_tier`, `obfuscation`).
const NOTED: usize = 10;

/// The top-level members of the last object [`validate_noted`] accepted, as offsets into its
/// text: `[name start, name end, value start, value end]` (the name with its quotes).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct TopMembers {
    /// How many are noted; `None` when they are not (not an object, more than [`NOTED`]
    /// members, a text past `u16` offsets, or not valid).
    len: Option<u8>,
    spans: [[u16; 4]; NOTED],
}

impl TopMembers {
    /// Nothing noted.
    pub(crate) const NONE: Self = Self {
        len: None,
        spans: [[0; 4]; NOTED],
    };

    /// A walk over the members of `text`, the object last validated with these notes (or,
    /// without notes, a walk of `text` itself): `None` when it is not an object.
    pub(crate) fn walk<'a>(&'a self, text: &'a [u8]) -> Option<TopWalk<'a>> {
        match self.len {
            Some(n) => Some(TopWalk::Noted {
                text,
                spans: self.spans.get(..usize::from(n)).unwrap_or(&[]),
                at: 0,
            }),
            None => Obj::of(text).map(TopWalk::Walked),
        }
    }

    /// The walk of the notes alone: `None` when nothing was noted (for the tests' door, which
    /// must tell the notes from the walk of the text they fall back to).
    #[cfg(any(test, feature = "_internals"))]
    pub(crate) fn noted<'a>(&'a self, text: &'a [u8]) -> Option<TopWalk<'a>> {
        self.len.and_then(|_| self.walk(text))
    }
}

/// The scan's notes going into [`TopMembers::spans`]; `n` counts past the last noted.
struct Noting<'s> {
    spans: &'s mut [[u16; 4]; NOTED],
    n: usize,
}

impl TopNotes for Noting<'_> {
    const ON: bool = true;

    // Offsets past `u16` are cut: [`validate_noted`] keeps no notes of such a text.
    #[inline(always)]
    fn member(&mut self, name: usize, name_end: usize, value: usize) {
        if let Some(span) = self.spans.get_mut(self.n) {
            span[0] = name as u16;
            span[1] = name_end as u16;
            span[2] = value as u16;
        }
        self.n += 1;
    }

    #[inline(always)]
    fn end(&mut self, end: usize) {
        if let Some(span) = self.spans.get_mut(self.n.wrapping_sub(1)) {
            span[3] = end as u16;
        }
    }
}

/// [`validate`](super::validate), noting in `top` the members of an object's top level
/// (its answer is `validate`'s in every case; only an object it accepts is noted).
pub(crate) fn validate_noted(
    bytes: &[u8],
    max_depth: u8,
    top: &mut TopMembers,
) -> Result<(), JsonError> {
    top.len = None;
    let mut notes = Noting {
        spans: &mut top.spans,
        n: 0,
    };
    let mut object = false;
    validate_with(bytes, |start, spaced| {
        object = bytes.get(start) == Some(&b'{');
        scan_value::<false, _>(bytes, start, max_depth, spaced, &mut notes)
    })?;
    // Past `u16` offsets the notes are wrong (cut to 16 bits): not kept.
    let n = notes.n;
    if object && n <= NOTED && bytes.len() <= usize::from(u16::MAX) {
        top.len = Some(n as u8);
    }
    Ok(())
}

/// The members of a validated object in order, from notes or by walking its text: the
/// calls of [`Obj`]'s walk, so a reader is written once for both.
pub(crate) enum TopWalk<'a> {
    /// From the notes [`validate_noted`] took.
    Noted {
        text: &'a [u8],
        spans: &'a [[u16; 4]],
        at: usize,
    },
    /// Walked ([`Obj`]).
    Walked(Obj<'a>),
}

impl<'a> TopWalk<'a> {
    /// The next member's name and where its value starts ([`Obj::next_name`]).
    #[inline]
    pub(crate) fn next_name(&mut self) -> Option<(JsonStr<'a>, usize)> {
        match self {
            Self::Noted { text, spans, at } => {
                let [name, name_end, start, _] = *spans.get(*at)?;
                *at += 1;
                let name = text.get(usize::from(name)..usize::from(name_end))?;
                Some((JsonStr::from_scanned_lenient(name), usize::from(start)))
            }
            Self::Walked(obj) => obj.next_name(),
        }
    }

    /// The value [`next_name`](Self::next_name) found at `start` ([`Obj::value_at`]).
    #[inline]
    pub(crate) fn value_at(&mut self, start: usize) -> &'a [u8] {
        match self {
            Self::Noted { text, spans, at } => {
                let end = spans
                    .get(at.wrapping_sub(1))
                    .map_or(start, |s| usize::from(s[3]));
                text.get(start..end).unwrap_or(&[])
            }
            Self::Walked(obj) => obj.value_at(start),
        }
    }

    /// Goes on after a value the caller read whole ([`Obj::resume`]): a noted walk knows
    /// where the next member is already.
    #[inline]
    pub(crate) fn resume(&mut self, end: usize) {
        if let Self::Walked(obj) = self {
            obj.resume(end);
        }
    }
}

impl<'a> Iterator for TopWalk<'a> {
    type Item = (JsonStr<'a>, &'a [u8]);

    /// The next member's name and value ([`Obj`]'s iterator).
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (name, start) = self.next_name()?;
        Some((name, self.value_at(start)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::edits::{self, Edit};
    use crate::json::validate;

    type Seen<'a> = heapless::Vec<(&'a [u8], &'a [u8]), 16>;

    /// The members a walk hands out, every value taken with `value_at`.
    fn members<'a>(mut walk: TopWalk<'a>) -> Seen<'a> {
        let mut seen = Seen::new();
        while let Some((name, start)) = walk.next_name() {
            seen.push((name.raw(), walk.value_at(start))).unwrap();
        }
        seen
    }

    /// Wherever `validate_noted` notes an object, its members are the walk's, names and
    /// values exactly; it answers as `validate` does on every text, noted or not.
    fn agree(bytes: &[u8], depth: u8) -> bool {
        let mut top = TopMembers::NONE;
        let got = validate_noted(bytes, depth, &mut top);
        assert_eq!(
            got,
            validate(bytes, depth),
            "{:?}",
            core::str::from_utf8(bytes)
        );
        let Some(n) = top.len else {
            return false;
        };
        assert!(got.is_ok(), "noted but refused: {bytes:?}");
        let noted = members(top.walk(bytes).unwrap());
        let walked = members(TopWalk::Walked(Obj::of(bytes).unwrap()));
        assert_eq!(noted, walked, "{:?}", core::str::from_utf8(bytes));
        assert_eq!(noted.len(), usize::from(n));
        true
    }

    /// Objects it notes and texts it does not: white space, escapes in names, duplicates,
    /// nesting at the depth limit, more members than it notes, other values, bad JSON.
    #[test]
    fn notes_what_the_walk_reads() {
        let noted: [&[u8]; 8] = [
            br#"{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"}}],"system_fingerprint":"fp"}"#,
            b" {\n \"a\" : [1, {\"b\" : null}] ,\t\"c\":\"d\" } \r\n",
            br#"{}"#,
            b"{ }",
            br#"{"\u0063hoices":1,"choices":2,"choices":{"x":[]}}"#,
            br#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}"#,
            "{\"é\":\"天\",\"k\":\"\\ud800\",\"n\":-1.5e3,\"t\":true,\"f\":false}".as_bytes(),
            br#"{"x":[[[1]]]}"#,
        ];
        for text in noted {
            assert!(agree(text, 32), "{:?}", core::str::from_utf8(text));
        }
        // `{"x":[[[1]]]}` is four levels: refused at three, as `validate` refuses it.
        assert!(!agree(br#"{"x":[[[1]]]}"#, 3));
        assert!(agree(br#"{"x":[[[1]]]}"#, 4));
        let not_noted: [&[u8]; 9] = [
            br#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11}"#,
            b"[1,2]",
            b"\"text\"",
            b"12",
            br#"{"a":1}{"b":2}"#,
            br#"{"a":1,}"#,
            br#"{"a" 1}"#,
            br#"{"a":01}"#,
            b"{\"a\":\"\x01\"}",
        ];
        for text in not_noted {
            assert!(!agree(text, 32), "{:?}", core::str::from_utf8(text));
        }
        // A walk without notes still reads an object, and finds no members in anything else.
        assert!(TopMembers::NONE.walk(b"[1]").is_none());
        // Past `u16` offsets: not noted, still validated.
        let mut long = [b' '; 70_000];
        long[..2].copy_from_slice(b"{}");
        assert!(!agree(&long, 32));
    }

    /// Every one-byte change, insertion, deletion and cut of chunks and objects, at depth
    /// limits around their own: the answer is `validate`'s and the notes are the walk's.
    #[test]
    fn every_edit_agrees_with_validate_and_the_walk() {
        let seeds: [&[u8]; 5] = [
            br#"{"id":"c","created":17,"choices":[{"index":0,"delta":{"reasoning_content":" the"}}],"x":"fp"}"#,
            br#"{"error":{"message":"bad \n thing","code":null},"choices":[]}"#,
            b"{ \"a\" : {\"b\":[{\"c\":[]}]}, \"\\u0065rror\" : [1, 2] }",
            "{\"é\":\"天\",\"k\":\"\\ud800\",\"t\":true}".as_bytes(),
            br#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":0}"#,
        ];
        const BYTES: [u8; 16] = *b" \"\\{}[],:0e-t\x01\xc3a";
        let (mut noted, mut all) = (0usize, 0usize);
        for seed in seeds {
            edits::each(seed, &BYTES, |bytes, edit| {
                let depths: &[u8] = match edit {
                    Edit::Change => &[0, 1, 2, 3, 32],
                    _ => &[2, 32],
                };
                for &depth in depths {
                    all += 1;
                    noted += usize::from(agree(bytes, depth));
                }
            });
        }
        assert!(
            noted > if cfg!(miri) { 10 } else { 1000 },
            "{noted} of {all}"
        );
    }
}
