//! JSON equality of two values' texts, as `enum`, `const` and `uniqueItems` need it.

use super::super::valid::{Arr, Obj};
use super::super::{skip_ws, JsonStr};
use super::number::Decimal;

/// True when the two validated values are equal as JSON: numbers by value, strings by their
/// decoded text, objects whatever the order of their members, arrays element by element.
/// `depth` bounds the recursion (the documents were validated to that depth already).
pub(super) fn json_eq(a: &[u8], b: &[u8], depth: u8) -> bool {
    let (a, b) = (trim(a), trim(b));
    let (Some(&x), Some(&y)) = (a.first(), b.first()) else {
        return false;
    };
    match (x, y) {
        (b'"', b'"') => str_eq(
            JsonStr::from_scanned_lenient(a),
            JsonStr::from_scanned_lenient(b),
        ),
        (b'{', b'{') if depth > 0 => objects_eq(a, b, depth - 1),
        (b'[', b'[') if depth > 0 => {
            let (mut i, mut j) = (
                Arr::of(a).into_iter().flatten(),
                Arr::of(b).into_iter().flatten(),
            );
            loop {
                match (i.next(), j.next()) {
                    (None, None) => return true,
                    (Some(p), Some(q)) if json_eq(p, q, depth - 1) => {}
                    _ => return false,
                }
            }
        }
        (b'-' | b'0'..=b'9', b'-' | b'0'..=b'9') => match (Decimal::parse(a), Decimal::parse(b)) {
            (Some(p), Some(q)) => p.cmp(&q).is_eq(),
            _ => false,
        },
        (b't' | b'f' | b'n', _) => a == b,
        _ => false,
    }
}

fn trim(v: &[u8]) -> &[u8] {
    let start = skip_ws(v, 0);
    let v = &v[start.min(v.len())..];
    let end = v
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .map_or(0, |i| i + 1);
    &v[..end]
}

/// Same member count, and each member of `a` found in `b` with an equal value (a document
/// with a duplicate name compares by the first, as lookups read it).
fn objects_eq(a: &[u8], b: &[u8], depth: u8) -> bool {
    let count = |v| Obj::of(v).map_or(0, Iterator::count);
    if count(a) != count(b) {
        return false;
    }
    Obj::of(a)
        .into_iter()
        .flatten()
        .all(|(k, va)| member(b, k).is_some_and(|vb| json_eq(va, vb, depth)))
}

/// The value of the first member of `object` named `name`.
pub(super) fn member<'a>(object: &'a [u8], name: JsonStr<'_>) -> Option<&'a [u8]> {
    Obj::of(object)?
        .find(|(k, _)| str_eq(*k, name))
        .map(|(_, v)| v)
}

/// [`member`] in an object whose names all differ (a value `names_once` passed), looked for
/// from `cursor` on, then from the start up to it; `cursor` is left just past the member
/// found. Names asked for in the order the object gives them (a model writes args in its
/// schema's order) are each found at the first look, not after walking the ones before.
pub(super) fn member_from<'a>(
    object: &'a [u8],
    name: JsonStr<'_>,
    cursor: &mut usize,
) -> Option<&'a [u8]> {
    let mut o = Obj::of(object)?;
    let from = (*cursor).max(o.position());
    let wraps = from > o.position();
    o.resume(from);
    let mut wrapped = false;
    loop {
        match o.next_name() {
            // Back where the first leg began: every member was looked at.
            Some((_, start)) if wrapped && start > from => return None,
            Some((k, start)) => {
                let v = o.value_at(start);
                if str_eq(k, name) {
                    *cursor = o.position();
                    return Some(v);
                }
            }
            None if wraps && !wrapped => {
                wrapped = true;
                o = Obj::of(object)?;
            }
            None => return None,
        }
    }
}

/// True when two strings decode to the same text.
pub(super) fn str_eq(a: JsonStr<'_>, b: JsonStr<'_>) -> bool {
    // The same bytes decode alike: a name found where it is looked for is settled without
    // looking for escapes.
    if a.raw() == b.raw() {
        return true;
    }
    match (a.is_plain(), b.is_plain()) {
        (true, true) => false,
        (true, false) => b.eq_text(a.raw()),
        (false, true) => a.eq_text(b.raw()),
        (false, false) => a.decoded().eq(b.decoded()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `member_from` finds what `member` finds, in any order of asking, from any cursor.
    #[test]
    fn member_from_finds_what_member_finds() {
        extern crate std;
        let obj = br#" { "a" : 1, "b":[2,{"a":0}], "\u0063" : "x" ,"d":{} } "#;
        // Name tokens as an object's walk gives them: quoted.
        let names: [&[u8]; 6] = [
            br#""a""#,
            br#""b""#,
            br#""c""#,
            br#""d""#,
            br#""e""#,
            br#""\u0061""#,
        ];
        for order in [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 0, 3, 1, 5, 4]] {
            let mut cursor = 0;
            for &i in &order {
                let name = JsonStr::from_scanned_lenient(names[i]);
                let want = member(obj, name);
                assert_eq!(want.is_some(), i != 4, "{i}");
                assert_eq!(member_from(obj, name, &mut cursor), want, "{i}");
                if want.is_none() {
                    continue;
                }
                // From every place a cursor can be (before the first member, just past each
                // value), the same.
                let mut o = Obj::of(obj).unwrap();
                let mut places = std::vec![o.position()];
                while let Some((_, start)) = o.next_name() {
                    o.value_at(start);
                    places.push(o.position());
                }
                assert_eq!(places.len(), 5);
                for at in places {
                    let mut c = at;
                    assert_eq!(member_from(obj, name, &mut c), want, "{i} from {at}");
                }
            }
        }
        let mut c = 0;
        let a = JsonStr::from_scanned_lenient(br#""a""#);
        assert_eq!(member_from(b"{}", a, &mut c), None);
        assert_eq!(member_from(b"[1]", a, &mut c), None);
    }

    #[test]
    fn equal_as_json() {
        let yes: &[(&str, &str)] = &[
            ("1", "1.0"),
            (
                "{\"a\":1,\"b\":[true,null]}",
                "{ \"b\" : [true, null], \"a\": 1e0 }",
            ),
            ("\"\\u0061\"", "\"a\""),
            ("\"\\ud83d\\ude00\"", "\"😀\""),
            ("[]", " [ ] "),
            ("{}", "{}"),
        ];
        for (a, b) in yes {
            assert!(json_eq(a.as_bytes(), b.as_bytes(), 32), "{a} {b}");
        }
        let no: &[(&str, &str)] = &[
            ("1", "\"1\""),
            ("true", "1"),
            ("false", "0"),
            ("null", "false"),
            ("{\"a\":1}", "{\"a\":1,\"b\":1}"),
            ("[1,2]", "[2,1]"),
            ("[1]", "[1,1]"),
            ("{\"a\":1}", "{\"A\":1}"),
        ];
        for (a, b) in no {
            assert!(!json_eq(a.as_bytes(), b.as_bytes(), 32), "{a} {b}");
        }
    }
}
