//! A failed validation: where in the value, why, and its text (SPEC §11's `<where>: <why>`).

use core::fmt;

use super::super::valid::{self, Arr, Obj};
use super::super::{skip_ws, JsonStr};
use super::document::{offset, Schema};
use super::number::Decimal;

/// Why a value does not satisfy its schema. The bounds and names a text quotes are held as
/// byte offsets into the schema's text (or, for a property name, the value's).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Why {
    /// The value is not JSON.
    NotJson,
    /// Not of the type(s) `type` names (the offset of `type`'s value).
    Type(u32),
    /// Not one of `enum`'s values.
    Enum,
    /// Not equal to `const`.
    Const,
    /// The schema is `false`: no value is allowed.
    False,
    /// A property `required` names is missing (the offset of its name in `required`).
    Required(u32),
    /// A property `dependentRequired` names is missing: (its name, the present property that requires it).
    DependentRequired(u32, u32),
    /// A property that `additionalProperties: false` leaves out.
    PropertyNotAllowed,
    /// A property name `propertyNames` refuses (the offset of the name in the value).
    PropertyName(u32),
    /// Fewer properties than `minProperties` (the offset of the bound).
    MinProperties(u32),
    /// More properties than `maxProperties`.
    MaxProperties(u32),
    /// Fewer items than `minItems`.
    MinItems(u32),
    /// More items than `maxItems`.
    MaxItems(u32),
    /// Two equal items under `uniqueItems`.
    UniqueItems,
    /// No item matches `contains`.
    Contains,
    /// Fewer matching items than `minContains`.
    MinContains(u32),
    /// More matching items than `maxContains`.
    MaxContains(u32),
    /// Fewer code points than `minLength`.
    MinLength(u32),
    /// More code points than `maxLength`.
    MaxLength(u32),
    /// No match for `pattern` (the offset of the pattern's string).
    Pattern(u32),
    /// Below `minimum`.
    Minimum(u32),
    /// Above `maximum`.
    Maximum(u32),
    /// Not above `exclusiveMinimum`.
    ExclusiveMinimum(u32),
    /// Not below `exclusiveMaximum`.
    ExclusiveMaximum(u32),
    /// Not a multiple of `multipleOf`.
    MultipleOf(u32),
    /// Matches none of `anyOf`'s schemas.
    AnyOf,
    /// Matches none of `oneOf`'s schemas.
    OneOfNone,
    /// Matches more than one of `oneOf`'s schemas.
    OneOfMany,
    /// Matches `not`'s schema.
    Not,
    /// A member name given twice in one object (at the second one's value): which of the
    /// two a tool reads is its parser's choice, so the value is not checked.
    RepeatedName,
    /// A limit: subschemas nested deeper than [`Limits::max_depth`](super::Limits::max_depth).
    TooDeep,
    /// A limit: more subschemas applied than [`Limits::max_subschemas`](super::Limits::max_subschemas).
    TooManySubschemas,
    /// A limit: `pattern` took more than [`Limits::max_pattern_steps`](super::Limits::max_pattern_steps).
    PatternTooCostly,
}

/// A value that does not satisfy its schema: the failing value's offset in the value's text,
/// and why.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Invalid {
    at: u32,
    why: Why,
}

impl Invalid {
    pub(super) fn new(at: usize, why: Why) -> Self {
        Self { at: at as u32, why }
    }

    /// Offset of the failing value in the value's text.
    pub fn at(&self) -> usize {
        self.at as usize
    }

    /// Why it fails.
    pub fn why(&self) -> Why {
        self.why
    }

    /// True when a limit of the validator stopped it, not the schema: the value is neither
    /// shown valid nor invalid.
    pub fn is_limit(&self) -> bool {
        matches!(
            self.why,
            Why::TooDeep | Why::TooManySubschemas | Why::PatternTooCostly
        )
    }

    /// The text SPEC §11 gives: `<where>: <why>`, `<where>` the JSON Pointer of the failing
    /// value (`(args)` for the value itself).
    pub fn display<'a>(&self, schema: &Schema<'a>, value: &'a [u8]) -> InvalidDisplay<'a> {
        InvalidDisplay {
            invalid: *self,
            schema: schema.text,
            value,
            root: "(args)",
        }
    }
}

/// [`Invalid`]'s text, borrowing the two documents it quotes.
#[derive(Copy, Clone, Debug)]
pub struct InvalidDisplay<'a> {
    invalid: Invalid,
    schema: &'a [u8],
    value: &'a [u8],
    root: &'static str,
}

impl InvalidDisplay<'_> {
    /// The same text with another name for the value itself (`(result)` for an MCP result).
    pub fn with_root(mut self, root: &'static str) -> Self {
        self.root = root;
        self
    }
}

impl InvalidDisplay<'_> {
    /// Hands the text to `put` in pieces, with no `core::fmt` machinery (a firmware that
    /// writes the text into a buffer links none); `Display` writes the same pieces.
    pub fn write_to(&self, put: &mut dyn FnMut(&str)) {
        if !write_pointer(put, self.value, self.invalid.at()) {
            put(self.root);
        }
        put(": ");
        let token = |at: u32| raw(token_at(self.schema, at as usize));
        // "1 item", not "1 items": the bound is a number token, any spelling of one counts.
        let one = |at: u32| {
            Decimal::parse(token_at(self.schema, at as usize)).and_then(|d| d.as_u64()) == Some(1)
        };
        let counted = |at: u32, one_of: &'static str, many: &'static str| {
            if one(at) {
                one_of
            } else {
                many
            }
        };
        let value_token = |at: u32| raw(token_at(self.value, at as usize));
        let (lead, quoted, tail): (&str, &str, &str) = match self.invalid.why {
            Why::NotJson => ("not valid JSON", "", ""),
            Why::Type(at) => return write_types(put, token_at(self.schema, at as usize)),
            Why::Enum => ("not one of the allowed values", "", ""),
            Why::Const => ("not the allowed value", "", ""),
            Why::False => ("no value is allowed here", "", ""),
            Why::Required(at) => ("missing required property ", token(at), ""),
            Why::DependentRequired(at, by) => {
                put("missing property ");
                put(token(at));
                ((", required when "), token(by), " is present")
            }
            Why::PropertyNotAllowed => ("property not allowed", "", ""),
            Why::PropertyName(at) => (
                "property name ",
                value_token(at),
                " does not match its schema",
            ),
            Why::MinProperties(at) => (
                "must have at least ",
                token(at),
                counted(at, " property", " properties"),
            ),
            Why::MaxProperties(at) => (
                "must have at most ",
                token(at),
                counted(at, " property", " properties"),
            ),
            Why::MinItems(at) => (
                "must have at least ",
                token(at),
                counted(at, " item", " items"),
            ),
            Why::MaxItems(at) => (
                "must have at most ",
                token(at),
                counted(at, " item", " items"),
            ),
            Why::UniqueItems => ("items must be unique", "", ""),
            Why::Contains => ("must contain a matching item", "", ""),
            Why::MinContains(at) => (
                "must contain at least ",
                token(at),
                counted(at, " matching item", " matching items"),
            ),
            Why::MaxContains(at) => (
                "must contain at most ",
                token(at),
                counted(at, " matching item", " matching items"),
            ),
            Why::MinLength(at) => (
                "must be at least ",
                token(at),
                counted(at, " character long", " characters long"),
            ),
            Why::MaxLength(at) => (
                "must be at most ",
                token(at),
                counted(at, " character long", " characters long"),
            ),
            Why::Pattern(at) => ("must match the pattern ", token(at), ""),
            Why::Minimum(at) => ("must be >= ", token(at), ""),
            Why::Maximum(at) => ("must be <= ", token(at), ""),
            Why::ExclusiveMinimum(at) => ("must be > ", token(at), ""),
            Why::ExclusiveMaximum(at) => ("must be < ", token(at), ""),
            Why::MultipleOf(at) => ("must be a multiple of ", token(at), ""),
            Why::AnyOf => ("does not match any of the allowed schemas", "", ""),
            Why::OneOfNone => ("does not match any of the oneOf schemas", "", ""),
            Why::OneOfMany => ("matches more than one of the oneOf schemas", "", ""),
            Why::Not => ("must not match the schema under \"not\"", "", ""),
            Why::RepeatedName => ("property given more than once", "", ""),
            Why::TooDeep => ("too deeply nested to check", "", ""),
            Why::TooManySubschemas => ("too many subschemas to check", "", ""),
            Why::PatternTooCostly => ("a pattern too costly to check", "", ""),
        };
        put(lead);
        put(quoted);
        put(tail);
    }
}

impl fmt::Display for InvalidDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut result = Ok(());
        self.write_to(&mut |piece| {
            if result.is_ok() {
                result = f.write_str(piece);
            }
        });
        result
    }
}

/// The value (one token or container) that starts at `at`, as written.
fn token_at(doc: &[u8], at: usize) -> &[u8] {
    let end = valid::skip(doc, at);
    doc.get(at..end).unwrap_or(&[])
}

/// A token as written (numbers, and strings with their quotes and escapes): validated JSON
/// is UTF-8; anything else shows as nothing rather than panicking.
fn raw(token: &[u8]) -> &str {
    core::str::from_utf8(token).unwrap_or("")
}

/// `expected string`, `expected string or null`, `expected integer, number or null`.
fn write_types<'a>(put: &mut dyn FnMut(&str), types: &'a [u8]) {
    put("expected ");
    let mut names: [&'a [u8]; 7] = [b""; 7];
    let mut n = 0;
    let mut keep = |t: &'a [u8]| {
        if let (Some(slot), Some(s)) = (names.get_mut(n), JsonStr::from_token(t).ok()) {
            *slot = s.raw();
            n += 1;
        }
    };
    match Arr::of(types) {
        Some(items) => items.for_each(&mut keep),
        None => keep(types),
    }
    for (i, name) in names[..n].iter().enumerate() {
        put(match (i, n - i) {
            (0, _) => "",
            (_, 1) => " or ",
            _ => ", ",
        });
        put(raw(name));
    }
}

/// Writes the JSON Pointer of the value at `at` in `doc`; false (nothing written) for the
/// document itself. Each level finds the member or element whose text holds `at`.
fn write_pointer(put: &mut dyn FnMut(&str), doc: &[u8], at: usize) -> bool {
    let mut node = {
        let start = skip_ws(doc, 0);
        doc.get(start..valid::skip(doc, start)).unwrap_or(&[])
    };
    let mut wrote = false;
    loop {
        if offset(doc, node) >= at {
            return wrote;
        }
        let holds = |v: &[u8]| {
            let start = offset(doc, v);
            start <= at && at < start + v.len().max(1)
        };
        let next = match node.first() {
            Some(b'{') => Obj::of(node)
                .and_then(|mut o| o.find(|(_, v)| holds(v)))
                .map(|(k, v)| (Some(k), 0, v)),
            Some(b'[') => Arr::of(node)
                .and_then(|a| a.enumerate().find(|(_, v)| holds(v)))
                .map(|(i, v)| (None, i, v)),
            _ => None,
        };
        let Some((key, index, value)) = next else {
            return wrote;
        };
        put("/");
        match key {
            Some(k) => write_token(put, k),
            None => {
                let mut digits = [0u8; 20];
                put(decimal(index, &mut digits));
            }
        }
        wrote = true;
        node = value;
    }
}

/// `n` in decimal, in `buf`.
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    core::str::from_utf8(&buf[i..]).unwrap_or("")
}

/// A member name as a JSON Pointer token: decoded, `~` as `~0`, `/` as `~1`.
fn write_token(put: &mut dyn FnMut(&str), key: JsonStr<'_>) {
    let mut buf = [0u8; 4];
    let mut n = 0;
    for b in key.decoded() {
        buf[n] = b;
        n += 1;
        let need = match buf[0] {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        if n < need {
            continue;
        }
        put(match &buf[..n] {
            b"~" => "~0",
            b"/" => "~1",
            bytes => core::str::from_utf8(bytes).unwrap_or("\u{fffd}"),
        });
        n = 0;
    }
}

/// Writes the pieces `text` hands out into `buf`, cut after the last whole character that
/// fits (nothing after a cut): the bytes written, and whether the text was cut. The
/// wrapper's invalid-args message and the C ABI's `pw_schema_validate` both write this way.
pub fn write_cut(buf: &mut [u8], text: impl FnOnce(&mut dyn FnMut(&str))) -> (usize, bool) {
    let (mut len, mut cut) = (0, false);
    text(&mut |piece: &str| {
        if cut {
            return;
        }
        let mut n = piece.len().min(buf.len() - len);
        while !piece.is_char_boundary(n) {
            n -= 1;
        }
        buf[len..len + n].copy_from_slice(&piece.as_bytes()[..n]);
        len += n;
        cut = n < piece.len();
    });
    (len, cut)
}

#[cfg(test)]
mod tests {
    use super::write_cut;

    #[test]
    fn a_cut_ends_on_a_character_and_stops() {
        let mut buf = [0u8; 6];
        // "é" is 2 bytes: 5 fit, then "é" would end at 7; nothing after the cut is taken.
        let (n, cut) = write_cut(&mut buf, |put| {
            ["abcde", "é", "f"].into_iter().for_each(put)
        });
        assert_eq!((&buf[..n], cut), (&b"abcde"[..], true));
        let (n, cut) = write_cut(&mut buf, |put| ["abcdé", "f"].into_iter().for_each(put));
        assert_eq!((&buf[..n], cut), ("abcdé".as_bytes(), true));
        let (n, cut) = write_cut(&mut buf, |put| ["ab", "cd"].into_iter().for_each(put));
        assert_eq!((&buf[..n], cut), (&b"abcd"[..], false));
        assert_eq!(write_cut(&mut [], |put| put("x")), (0, true));
    }
}
