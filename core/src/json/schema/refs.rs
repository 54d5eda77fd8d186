//! `$ref` inside one document: `#`, JSON Pointer fragments, `$anchor`s and embedded `$id`s,
//! and the walk over every subschema that finding an anchor or an `$id` needs.

use super::super::valid::{Arr, Obj};
use super::super::{trim_ws, JsonStr};
use super::document::{keyword, Draft, Schema, SchemaErrorKind};
use super::number::Decimal;
use super::uri::{Uri, URI_MAX};

/// The longest `$ref` (decoded) this module resolves.
const REF_MAX: usize = 256;

/// Where a `$ref` leads: the target subschema and the resource (the subschema with the
/// nearest `$id`, or the root) that `#` means inside it.
pub(super) type Target<'s> = (&'s [u8], &'s [u8]);

/// How [`resolve`] takes a name (an `$anchor`, an `$id`) the document may give twice.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum Names {
    /// The first subschema that gives it: what validating follows.
    First,
    /// Refused when two give it (`AmbiguousRef`): which one a `$ref` means is then undefined
    /// (JSON Schema lets a validator refuse it, and validators differ: the first, the last).
    /// Read once, when the schema is registered, so validating never walks a resource twice
    /// to look for a twin.
    Unique,
}

/// Resolves a `$ref` string met inside the resource `base`.
pub(super) fn resolve<'s>(
    schema: &Schema<'s>,
    r: JsonStr<'_>,
    base: &'s [u8],
    names: Names,
) -> Result<Target<'s>, SchemaErrorKind> {
    let upto = match names {
        Names::First => 1,
        Names::Unique => 2,
    };
    let mut buf = [0u8; REF_MAX];
    let text = r
        .decode_into(&mut buf)
        .map_err(|_| SchemaErrorKind::UnresolvedRef)?
        .as_bytes();
    let (uri, fragment) = match text.iter().position(|&b| b == b'#') {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let resource = match uri {
        b"" => base,
        _ => match find_id(schema, uri, base, upto) {
            (Some(_), n) if n > 1 => return Err(SchemaErrorKind::AmbiguousRef),
            (Some(node), _) => node,
            (None, _) => return Err(SchemaErrorKind::RemoteRef),
        },
    };
    match fragment {
        None | Some(b"") => Ok((resource, resource)),
        Some(f) if f.first() == Some(&b'/') => pointer(resource, f),
        Some(name) => match find_anchor(schema, resource, name, upto) {
            (Some(_), n) if n > 1 => Err(SchemaErrorKind::AmbiguousRef),
            (Some(node), _) => Ok((node, resource)),
            (None, _) => Err(SchemaErrorKind::UnresolvedRef),
        },
    }
}

/// Follows a JSON Pointer (`/a/b~1c/0`, each token percent-decoded) from `node`.
fn pointer<'s>(mut node: &'s [u8], fragment: &[u8]) -> Result<Target<'s>, SchemaErrorKind> {
    let mut resource = node;
    for raw in fragment[1..].split(|&b| b == b'/') {
        let mut tok = [0u8; REF_MAX];
        let tok = unescape(raw, &mut tok).ok_or(SchemaErrorKind::UnresolvedRef)?;
        node = match node.first() {
            Some(b'{') => Obj::of(node)
                .and_then(|mut o| o.find(|(k, _)| k.eq_text(tok)))
                .map(|(_, v)| v),
            Some(b'[') => index(tok).and_then(|i| Arr::of(node).and_then(|mut a| a.nth(i))),
            _ => None,
        }
        .ok_or(SchemaErrorKind::UnresolvedRef)?;
        if own_id(node).is_some() {
            resource = node;
        }
    }
    Ok((node, resource))
}

/// A pointer token decoded: `%XX` escapes, then `~1` → `/` and `~0` → `~`.
fn unescape<'b>(raw: &[u8], out: &'b mut [u8; REF_MAX]) -> Option<&'b [u8]> {
    let mut n = 0;
    let mut i = 0;
    let mut pct = [0u8; REF_MAX];
    while i < raw.len() {
        let b = match raw[i] {
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16);
                let v = hex(*raw.get(i + 1)?)? * 16 + hex(*raw.get(i + 2)?)?;
                i += 2;
                v as u8
            }
            b => b,
        };
        pct[n] = b;
        n += 1;
        i += 1;
    }
    let mut m = 0;
    let mut j = 0;
    while j < n {
        out[m] = match (pct[j], pct.get(j + 1).filter(|_| j + 1 < n)) {
            (b'~', Some(b'0')) => {
                j += 1;
                b'~'
            }
            (b'~', Some(b'1')) => {
                j += 1;
                b'/'
            }
            (b'~', _) => return None,
            (b, _) => b,
        };
        m += 1;
        j += 1;
    }
    Some(&out[..m])
}

/// An array index token: digits, no leading zero.
fn index(tok: &[u8]) -> Option<usize> {
    if tok.is_empty() || (tok.len() > 1 && tok[0] == b'0') {
        return None;
    }
    Decimal::parse(tok)?
        .as_u64()
        .and_then(|v| usize::try_from(v).ok())
}

/// A subschema's own `$id` when it names a resource (draft-07's `"$id":"#x"` is an anchor).
pub(super) fn own_id<'s>(node: &'s [u8]) -> Option<JsonStr<'s>> {
    let (_, v) = Obj::of(node)?.find(|(k, _)| k.eq_text(b"$id"))?;
    let id = JsonStr::from_token(trim_ws(v)).ok()?;
    (id.raw().first() != Some(&b'#')).then_some(id)
}

/// A subschema's `$id` as it sets the base URI: draft-07 ignores one beside `$ref`.
fn base_id<'s>(schema: &Schema<'s>, node: &'s [u8]) -> Option<JsonStr<'s>> {
    let beside_ref = || Obj::of(node).is_some_and(|mut o| o.any(|(k, _)| k.eq_text(b"$ref")));
    own_id(node).filter(|_| schema.draft != Draft::Draft07 || !beside_ref())
}

/// The absolute URI of `resource` (a subschema of the document): its `$id` resolved
/// against those of the subschemas around it, outermost first.
fn absolute<'s>(schema: &Schema<'s>, resource: &'s [u8]) -> Option<Uri> {
    let inside = |outer: &[u8]| {
        let (o, r) = (outer.as_ptr() as usize, resource.as_ptr() as usize);
        o <= r && r + resource.len() <= o + outer.len()
    };
    let mut uri = Some(Uri::new());
    walk(
        schema,
        schema.root(),
        schema.root(),
        schema.limits.max_depth,
        // The walk goes depth first, so the subschemas around `resource` come outermost first.
        &mut |node, _| {
            if let (Some(id), Some(base)) = (base_id(schema, node).filter(|_| inside(node)), uri) {
                let mut buf = [0u8; URI_MAX];
                uri = id
                    .decode_into(&mut buf)
                    .ok()
                    .and_then(|id| base.join(id.as_bytes()));
            }
            uri.is_none()
        },
    );
    uri
}

/// The first subschema whose `$id` is `uri` resolved against the resource `base` it is met
/// in, and how many there are, counted up to `upto`.
fn find_id<'s>(
    schema: &Schema<'s>,
    uri: &[u8],
    base: &'s [u8],
    upto: usize,
) -> (Option<&'s [u8]>, usize) {
    let Some(target) = absolute(schema, base).and_then(|b| b.join(uri)) else {
        return (None, 0);
    };
    let (mut found, mut count) = (None, 0);
    walk(
        schema,
        schema.root(),
        schema.root(),
        schema.limits.max_depth,
        &mut |node, _| {
            let named = base_id(schema, node).is_some_and(|id| may_name(id, target.as_bytes()))
                && absolute(schema, node).is_some_and(|a| a.as_bytes() == target.as_bytes());
            if named {
                found = found.or(Some(node));
                count += 1;
            }
            count >= upto
        },
    );
    (found, count)
}

/// Whether `id`, resolved against any base, can be `target`: resolving keeps an `$id`'s last
/// path segment (a dot segment or a query aside), so most `$id`s are ruled out without the
/// walk [`absolute`] takes.
fn may_name(id: JsonStr<'_>, target: &[u8]) -> bool {
    let raw = id.raw().split(|&b| b == b'#').next().unwrap_or(b"");
    let last = raw.rsplit(|&b| b == b'/').next().unwrap_or(b"");
    raw.contains(&b'\\')
        || raw.contains(&b'?')
        || matches!(last, b"" | b"." | b"..")
        || target.ends_with(last)
}

/// The first subschema in `resource` with `$anchor` `name` (or draft-07's `"$id":"#name"`),
/// and how many name it, counted up to `upto`. When counting past one, a 2020-12
/// `$dynamicAnchor` of that name counts too: it names the same fragment (SPEC §11 leaves it
/// unread, so a `$ref` never leads to one, but one beside an `$anchor` makes the ref ambiguous).
fn find_anchor<'s>(
    schema: &Schema<'s>,
    resource: &'s [u8],
    name: &[u8],
    upto: usize,
) -> (Option<&'s [u8]>, usize) {
    let dynamic_too = upto > 1 && schema.draft == Draft::Draft2020_12;
    let (mut found, mut count) = (None, 0);
    walk(
        schema,
        resource,
        resource,
        schema.limits.max_depth,
        &mut |node, base| {
            // An anchor belongs to its own resource: one inside an embedded `$id` is not this one's.
            if !core::ptr::eq(base, resource) {
                return false;
            }
            let (mut anchored, mut dynamic) = (false, false);
            for (k, v) in Obj::of(node).into_iter().flatten() {
                let Ok(s) = JsonStr::from_token(v) else {
                    continue;
                };
                anchored |= (k.eq_text(b"$anchor") && s.eq_text(name))
                    || (k.eq_text(b"$id")
                        && s.raw()
                            .split(|&b| b == b'#')
                            .nth(1)
                            .is_some_and(|f| JsonStr::from_inner(f).eq_text(name)));
                dynamic |= dynamic_too && k.eq_text(b"$dynamicAnchor") && s.eq_text(name);
            }
            if anchored {
                found = found.or(Some(node));
            }
            count += usize::from(anchored || dynamic);
            count >= upto
        },
    );
    (found, count)
}

/// Visits `node` and every subschema below it that a keyword holds, until `visit` says
/// stop (true). Values of other keywords (`enum`, `const`, `default`, unknown ones) are not
/// schemas and are not entered. Returns whether it stopped.
pub(super) fn walk<'s>(
    schema: &Schema<'s>,
    node: &'s [u8],
    base: &'s [u8],
    depth: u8,
    visit: &mut dyn FnMut(&'s [u8], &'s [u8]) -> bool,
) -> bool {
    let base = match own_id(node) {
        Some(_) => node,
        None => base,
    };
    if visit(node, base) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let Some(members) = Obj::of(node) else {
        return false;
    };
    for (key, value) in members {
        let value = trim_ws(value);
        let stop = match holds(schema.draft, key, value) {
            Holds::One => walk(schema, value, base, depth - 1, visit),
            Holds::Each => Arr::of(value)
                .into_iter()
                .flatten()
                .any(|v| walk(schema, v, base, depth - 1, visit)),
            // Draft-07's `dependencies` mixes schemas with arrays of names.
            Holds::Values => Obj::of(value)
                .into_iter()
                .flatten()
                .filter(|(_, v)| v.first() != Some(&b'['))
                .any(|(_, v)| walk(schema, v, base, depth - 1, visit)),
            Holds::Nothing => false,
        };
        if stop {
            return true;
        }
    }
    false
}

/// How a keyword's value holds subschemas.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum Holds {
    /// The value is one schema.
    One,
    /// The value is an array of schemas.
    Each,
    /// The value is an object whose member values are schemas.
    Values,
    /// The value is no schema.
    Nothing,
}

/// Which keywords hold subschemas, and how.
pub(super) fn holds(draft: Draft, key: JsonStr<'_>, value: &[u8]) -> Holds {
    let mut buf = [0u8; 24];
    match keyword(key, &mut buf) {
        b"properties" | b"patternProperties" | b"$defs" | b"definitions" | b"dependentSchemas" => {
            Holds::Values
        }
        b"dependencies" if draft == Draft::Draft07 => Holds::Values,
        b"allOf" | b"anyOf" | b"oneOf" | b"prefixItems" => Holds::Each,
        b"items" if value.first() == Some(&b'[') => Holds::Each,
        b"items"
        | b"additionalProperties"
        | b"propertyNames"
        | b"contains"
        | b"not"
        | b"if"
        | b"then"
        | b"else"
        | b"additionalItems"
        | b"unevaluatedItems"
        | b"unevaluatedProperties"
        | b"contentSchema" => Holds::One,
        _ => Holds::Nothing,
    }
}
