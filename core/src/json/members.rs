//! An object's members, one at a time, each value validated as it goes.

use super::bytes::{skip_ws, skip_ws_noted};
use super::error::{JsonError, JsonErrorKind};
use super::scan::{scan_string, skip_value_noted};
use super::string::JsonStr;

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
    /// White space seen between the object's tokens so far (or a value read by a caller's
    /// scan, which may have had some).
    spaced: bool,
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
    #[inline]
    pub fn new(bytes: &'a [u8], start: usize, max_depth: u8) -> Result<Self, JsonError> {
        let pos = skip_ws(bytes, start);
        match bytes.get(pos) {
            Some(b'{') if max_depth >= 1 => Ok(Self {
                bytes,
                pos: pos + 1,
                max_depth: max_depth - 1,
                state: MembersState::First,
                spaced: false,
            }),
            Some(b'{') => Err(JsonError::new(JsonErrorKind::TooDeep, pos)),
            Some(_) => Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
            None => Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
        }
    }

    /// Offset just past the closing brace, once iteration has finished cleanly.
    #[inline]
    pub fn end(&self) -> Option<usize> {
        (self.state == MembersState::Done).then_some(self.pos)
    }

    /// The next member, its value read by `scan`: given the key, the bytes, where the value
    /// starts and the depth left for it, `scan` validates the value as
    /// [`skip_value`](super::skip_value) would and returns where it ends. This lets a caller
    /// look inside a value while it is validated.
    pub fn next_scanned<F>(&mut self, scan: F) -> Option<Result<Member<'a>, JsonError>>
    where
        F: FnOnce(JsonStr<'a>, &'a [u8], usize, u8) -> Result<usize, JsonError>,
    {
        // Whether the caller's scan met white space is unknown: assume it did.
        self.next_noted(|key, bytes, start, depth, spaced| {
            *spaced = true;
            scan(key, bytes, start, depth)
        })
    }

    /// [`next_scanned`](Self::next_scanned), with `scan` setting its last argument when the
    /// value has white space between its tokens.
    pub(crate) fn next_noted<F>(&mut self, scan: F) -> Option<Result<Member<'a>, JsonError>>
    where
        F: FnOnce(JsonStr<'a>, &'a [u8], usize, u8, &mut bool) -> Result<usize, JsonError>,
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

    /// True when white space was seen between the object's tokens, as far as it was read.
    /// Once it has ended cleanly, false means the object is already compact.
    pub(crate) fn spaced(&self) -> bool {
        self.spaced
    }

    fn step<F>(&mut self, scan: F) -> Result<Option<Member<'a>>, JsonError>
    where
        F: FnOnce(JsonStr<'a>, &'a [u8], usize, u8, &mut bool) -> Result<usize, JsonError>,
    {
        if matches!(self.state, MembersState::Done | MembersState::Failed) {
            return Ok(None);
        }
        let mut pos = skip_ws_noted(self.bytes, self.pos, &mut self.spaced);
        if self.bytes.get(pos) == Some(&b'}') {
            self.state = MembersState::Done;
            self.pos = pos + 1;
            return Ok(None);
        }
        if self.state == MembersState::Next {
            match self.bytes.get(pos) {
                Some(b',') => pos = skip_ws_noted(self.bytes, pos + 1, &mut self.spaced),
                Some(_) => return Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
                None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
            }
        }
        let (key, after_key) = JsonStr::parse_at(self.bytes, pos)?;
        pos = skip_ws_noted(self.bytes, after_key, &mut self.spaced);
        match self.bytes.get(pos) {
            Some(b':') => pos = skip_ws_noted(self.bytes, pos + 1, &mut self.spaced),
            Some(_) => return Err(JsonError::new(JsonErrorKind::UnexpectedByte, pos)),
            None => return Err(JsonError::new(JsonErrorKind::UnexpectedEnd, pos)),
        }
        let end = scan(key, self.bytes, pos, self.max_depth, &mut self.spaced)?;
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
        self.next_noted(|_, bytes, start, depth, spaced| {
            skip_value_noted(bytes, start, depth, spaced)
        })
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

/// The members of the object whose `{` is at `start`, handed to `each` in order, each
/// value validated (`max_depth` counts the object as level 1, as in [`Members::new`]);
/// returns the offset after its `}` and sets `spaced` when a value has white space inside.
///
/// A straight loop for the compact objects frames and tool results almost always are:
/// `None` where white space sits between the object's own tokens or the bytes are not
/// valid, and the caller then reads the object with [`Members`], which reports the error
/// (so `each` may have seen members of an object that turns out invalid).
pub(crate) fn compact_members<'a>(
    bytes: &'a [u8],
    start: usize,
    max_depth: u8,
    spaced: &mut bool,
    each: &mut dyn FnMut(Member<'a>),
) -> Option<usize> {
    if bytes.get(start) != Some(&b'{') || max_depth == 0 {
        return None;
    }
    let mut pos = start + 1;
    if bytes.get(pos) == Some(&b'}') {
        return Some(pos + 1);
    }
    loop {
        if bytes.get(pos) != Some(&b'"') {
            return None;
        }
        let key_end = scan_string(bytes, pos).ok()?;
        if bytes.get(key_end) != Some(&b':') {
            return None;
        }
        let at = key_end + 1;
        // A string value is scanned here, without the value scanner's set-up.
        let end = match bytes.get(at) {
            // Equivalent mutant: this arm deleted: `skip_value_noted` scans the string the same
            // way.
            Some(b'"') => scan_string(bytes, at).ok()?,
            _ => skip_value_noted(bytes, at, max_depth - 1, spaced).ok()?,
        };
        each(Member {
            key: JsonStr::from_scanned(&bytes[pos..key_end]),
            value: &bytes[at..end],
        });
        match bytes.get(end) {
            Some(b',') => pos = end + 1,
            Some(b'}') => return Some(end + 1),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::edits::Edit;

    /// The public `next_scanned` hands the caller each value to read; what it read is not
    /// known to be compact, so the iterator no longer says the object is.
    // kills: members.rs `Members::next_scanned` → `None`
    #[test]
    fn next_scanned_reads_values_through_the_callers_scan() {
        let obj = b"{\"a\":[1,2],\"b\":\"x\"}";
        let mut m = Members::new(obj, 0, 32).unwrap();
        let mut seen: heapless::Vec<(&[u8], &[u8]), 4> = heapless::Vec::new();
        while let Some(r) =
            m.next_scanned(|_, bytes, start, depth| super::super::skip_value(bytes, start, depth))
        {
            let member = r.unwrap();
            seen.push((member.key.raw(), member.value)).unwrap();
        }
        assert_eq!(
            seen.as_slice(),
            [(&b"a"[..], &b"[1,2]"[..]), (&b"b"[..], &b"\"x\""[..])]
        );
        assert_eq!(m.end(), Some(obj.len()));
        assert!(m.spaced());
        // Read by the iterator itself, the same object is known to be compact.
        let mut m = Members::new(obj, 0, 32).unwrap();
        assert!(m.by_ref().all(|r| r.is_ok()));
        assert!(!m.spaced());
    }

    /// Wherever the straight loop answers, `Members` reads the same members, end and white
    /// space, for objects it reads and for every one-byte change, insertion, deletion and
    /// cut of them, at depth limits around their own depth.
    #[test]
    fn compact_members_agree_with_members() {
        type Seen<'a> = heapless::Vec<(&'a [u8], &'a [u8]), 16>;
        let seeds: [&[u8]; 6] = [
            br#"{"id":"c1","name":"get_weather","args":{"city":"Paris","days":[1,2.5e3,-0]}}"#,
            br#"{"error":"bad \n thing","success":false,"error":null}"#,
            br#"{}"#,
            br#"{"a":{"b":[{"c":[]}]},"\u0065rror":[1, 2],"s":true}"#,
            "{\"é\":\"天\",\"k\":\"\\ud800\"}".as_bytes(),
            br#"{"x":[[[[1]]]],"y":"z"}"#,
        ];
        let mut checked = 0usize;
        fn fast<'a>(bytes: &'a [u8], depth: u8) -> Option<(Seen<'a>, usize, bool)> {
            let (mut seen, mut spaced) = (Seen::new(), false);
            let mut keep = |m: Member<'a>| seen.push((m.key.raw(), m.value)).unwrap();
            let end = compact_members(bytes, 0, depth, &mut spaced, &mut keep)?;
            Some((seen, end, spaced))
        }
        let mut agree = |bytes: &[u8], depths: &[u8]| {
            for &depth in depths {
                let Some((fast, end, spaced)) = fast(bytes, depth) else {
                    continue;
                };
                let mut general = Members::new(bytes, 0, depth).unwrap();
                let mut seen = Seen::new();
                for m in general.by_ref() {
                    let m = m.unwrap();
                    seen.push((m.key.raw(), m.value)).unwrap();
                }
                let text = core::str::from_utf8(bytes);
                assert_eq!(fast, seen, "{text:?} at depth {depth}");
                assert_eq!(Some(end), general.end(), "{text:?} at depth {depth}");
                assert_eq!(spaced, general.spaced(), "{text:?} at depth {depth}");
                checked += 1;
            }
        };
        const BYTES: [u8; 15] = *b" \"\\{}[],:0e-t\x01\xc3";
        for seed in seeds {
            crate::json::edits::each(seed, &BYTES, |bytes, edit| match edit {
                Edit::Cut | Edit::Delete => agree(bytes, &[32]),
                Edit::Change => agree(bytes, &[0, 1, 2, 4, 32]),
                Edit::Insert => agree(bytes, &[2, 32]),
            });
        }
        assert!(checked > if cfg!(miri) { 10 } else { 500 }, "{checked}");
    }

    #[test]
    fn members_last_wins_and_checks_close() {
        let obj = b"{\"a\":1, \"b\" : [2], \"a\":3}";
        assert_eq!(find_member(obj, b"a", 32), Ok(Some(&b"3"[..])));
        assert_eq!(find_member(obj, b"z", 32), Ok(None));
        assert!(find_member(b"{\"a\":1", b"a", 32).is_err());
        assert!(find_member(b"{\"a\":1,}", b"a", 32).is_err());
    }
}
