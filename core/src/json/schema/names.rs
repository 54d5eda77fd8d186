//! Names given once: every object in a document names each member once. A lookup reads the
//! first of two alike names, while a tool's parser, or another validator reading a schema,
//! may keep the last; so a value (SPEC §11's args) or a schema that gives a name twice is
//! refused rather than read one way here and another there. One walk serves both.

use super::super::bytes::{fnv1a, FNV_START};
use super::super::valid::{self, Arr, Obj};
use super::super::JsonStr;
use super::equal::str_eq;

/// Why a walk stopped, at the part of the document it names.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Fault {
    /// A name given twice in one object: at the second one's value.
    Repeated,
    /// Nested deeper than the depth given: at the value past it.
    TooDeep,
    /// More pairs of names compared than the budget: at the value being compared.
    OverBudget,
}

/// Every object in the value at the start of `rest` (valid JSON, no white space before it)
/// names each member once: one walk, depth first, so the repeat found is the first in the
/// text's order. A name is compared with the ones before it only when a 64-bit filter of
/// their hashes says it may repeat one; each pair compared takes one from `budget`. Returns
/// the value's length.
pub(super) fn once<'a>(
    rest: &'a [u8],
    depth: u8,
    budget: &mut u32,
) -> Result<usize, (Fault, &'a [u8])> {
    if depth == 0 {
        return Err((Fault::TooDeep, rest));
    }
    match rest.first() {
        Some(b'{') => {
            let Some(mut members) = Obj::of(rest) else {
                return Ok(0);
            };
            let mut seen = 0u64;
            while let Some((name, start)) = members.next_name() {
                let bit = name_bit(name);
                if seen & bit != 0 {
                    earlier(rest, name, &rest[start..], budget)?;
                }
                seen |= bit;
                // Only a container can hold names (or be too deep); a scalar is stepped over.
                match rest.get(start) {
                    Some(b'{' | b'[') => {
                        let len = once(&rest[start..], depth - 1, budget)?;
                        members.resume(start + len.max(1));
                    }
                    _ if depth == 1 => return Err((Fault::TooDeep, &rest[start..])),
                    _ => {
                        members.value_at(start);
                    }
                }
            }
            Ok(members.closed().unwrap_or(rest.len()))
        }
        Some(b'[') => {
            let Some(mut items) = Arr::of(rest) else {
                return Ok(0);
            };
            while let Some(start) = items.next_start() {
                let len = match rest.get(start) {
                    Some(b'{' | b'[') => once(&rest[start..], depth - 1, budget)?,
                    _ if depth == 1 => return Err((Fault::TooDeep, &rest[start..])),
                    _ => valid::skip(rest, start) - start,
                };
                items.resume_at(start + len);
            }
            Ok(items.pos())
        }
        _ => Ok(valid::skip(rest, 0)),
    }
}

/// `name`, a member of `object` whose value is at `again`, against each name before it.
fn earlier<'a>(
    object: &'a [u8],
    name: JsonStr<'_>,
    again: &'a [u8],
    budget: &mut u32,
) -> Result<(), (Fault, &'a [u8])> {
    let here = name.raw().as_ptr() as usize;
    for (before, _) in Obj::of(object).into_iter().flatten() {
        if before.raw().as_ptr() as usize >= here {
            break;
        }
        if *budget == 0 {
            return Err((Fault::OverBudget, again));
        }
        *budget -= 1;
        if str_eq(before, name) {
            return Err((Fault::Repeated, again));
        }
    }
    Ok(())
}

/// A name's bit in a 64-bit filter: a hash (FNV-1a) of its decoded text, so names that
/// decode alike share it.
fn name_bit(name: JsonStr<'_>) -> u64 {
    // A name with no escapes is its own decoded text: hashed where it stands.
    let h = match name.is_plain() {
        true => fnv1a(FNV_START, name.raw()),
        false => {
            let mut h = FNV_START;
            name.for_each_decoded_run(|run| h = fnv1a(h, run));
            h
        }
    };
    1u64 << (h & 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names that decode alike (however escaped) always share their bit.
    #[test]
    fn alike_names_share_their_filter_bit() {
        let bit = |n: &[u8]| name_bit(JsonStr::from_scanned_lenient(n));
        assert_ne!(bit(br#""a""#), bit(br#""b""#));
        assert_eq!(bit(br#""\u0061""#), bit(br#""a""#));
        assert_eq!(bit(br#""caf\u00e9""#), bit("\"café\"".as_bytes()));
        assert_eq!(bit(br#""\ud83d\ude00x""#), bit("\"😀x\"".as_bytes()));
        assert_eq!(bit(br#""a\/b""#), bit(br#""a/b""#));
    }

    /// The walk's length is the value's, its faults at the parts they name, and a budget
    /// of one pair is spent on the first comparison.
    #[test]
    fn walks_a_value_and_names_where_it_stopped() {
        let doc = br#"{"a":[1,{"b":2}],"c":"x"} tail"#;
        assert_eq!(once(doc, 8, &mut 0), Ok(25));
        let doc = br#"{"a":1,"b":{"c":2,"\u0063":3}}"#;
        let (fault, at) = once(doc, 8, &mut 10).unwrap_err();
        assert_eq!((fault, at.first()), (Fault::Repeated, Some(&b'3')));
        assert_eq!(once(doc, 2, &mut 10).unwrap_err().0, Fault::TooDeep);
        let mut budget = 0;
        assert_eq!(once(doc, 8, &mut budget).unwrap_err().0, Fault::OverBudget);
        let mut budget = 1;
        assert_eq!(once(doc, 8, &mut budget).unwrap_err().0, Fault::Repeated);
        assert_eq!(budget, 0);
    }

    /// Each value is a level, a scalar too: past the depth given, the value there is named.
    #[test]
    fn a_scalar_past_the_depth_is_too_deep() {
        for (doc, depth, want) in [
            (&b"[[1]]"[..], 3, Ok(5)),
            (b"[[1]]", 2, Err((Fault::TooDeep, &b"1]]"[..]))),
            (br#"{"a":{"b":"x"}}"#, 3, Ok(15)),
            (
                br#"{"a":{"b":"x"}}"#,
                2,
                Err((Fault::TooDeep, &br#""x"}}"#[..])),
            ),
            (br#"{"a":[]}"#, 1, Err((Fault::TooDeep, &b"[]}"[..]))),
            (b"7", 1, Ok(1)),
            (b"7", 0, Err((Fault::TooDeep, &b"7"[..]))),
        ] {
            assert_eq!(once(doc, depth, &mut 0), want, "{doc:?} {depth}");
        }
    }
}
