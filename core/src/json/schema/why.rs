//! A failed validation: where in the value, why, and its text (SPEC §11's `<where>: <why>`).

use core::fmt::{self, Write};

use super::super::valid::{self, Arr, Obj};
use super::super::{skip_ws, JsonStr};
use super::document::{offset, Schema};

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

impl fmt::Display for InvalidDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !write_pointer(f, self.value, self.invalid.at())? {
            f.write_str(self.root)?;
        }
        f.write_str(": ")?;
        let token = |at: u32| token_at(self.schema, at as usize);
        let value_token = |at: u32| token_at(self.value, at as usize);
        let text = |f: &mut fmt::Formatter<'_>, t: &str| f.write_str(t);
        match self.invalid.why {
            Why::NotJson => text(f, "not valid JSON"),
            Why::Type(at) => write_types(f, token(at)),
            Why::Enum => text(f, "not one of the allowed values"),
            Why::Const => text(f, "not the allowed value"),
            Why::False => text(f, "no value is allowed here"),
            Why::Required(at) => write!(f, "missing required property {}", Raw(token(at))),
            Why::DependentRequired(at, by) => write!(
                f,
                "missing property {}, required when {} is present",
                Raw(token(at)),
                Raw(token(by))
            ),
            Why::PropertyNotAllowed => text(f, "property not allowed"),
            Why::PropertyName(at) => write!(
                f,
                "property name {} does not match its schema",
                Raw(value_token(at))
            ),
            Why::MinProperties(at) => write!(f, "must have at least {} properties", Raw(token(at))),
            Why::MaxProperties(at) => write!(f, "must have at most {} properties", Raw(token(at))),
            Why::MinItems(at) => write!(f, "must have at least {} items", Raw(token(at))),
            Why::MaxItems(at) => write!(f, "must have at most {} items", Raw(token(at))),
            Why::UniqueItems => text(f, "items must be unique"),
            Why::Contains => text(f, "must contain a matching item"),
            Why::MinContains(at) => {
                write!(f, "must contain at least {} matching items", Raw(token(at)))
            }
            Why::MaxContains(at) => {
                write!(f, "must contain at most {} matching items", Raw(token(at)))
            }
            Why::MinLength(at) => {
                write!(f, "must be at least {} characters long", Raw(token(at)))
            }
            Why::MaxLength(at) => write!(f, "must be at most {} characters long", Raw(token(at))),
            Why::Pattern(at) => write!(f, "must match the pattern {}", Raw(token(at))),
            Why::Minimum(at) => write!(f, "must be >= {}", Raw(token(at))),
            Why::Maximum(at) => write!(f, "must be <= {}", Raw(token(at))),
            Why::ExclusiveMinimum(at) => write!(f, "must be > {}", Raw(token(at))),
            Why::ExclusiveMaximum(at) => write!(f, "must be < {}", Raw(token(at))),
            Why::MultipleOf(at) => write!(f, "must be a multiple of {}", Raw(token(at))),
            Why::AnyOf => text(f, "does not match any of the allowed schemas"),
            Why::OneOfNone => text(f, "does not match any of the oneOf schemas"),
            Why::OneOfMany => text(f, "matches more than one of the oneOf schemas"),
            Why::Not => text(f, "must not match the schema under \"not\""),
            Why::TooDeep => text(f, "too deeply nested to check"),
            Why::TooManySubschemas => text(f, "too many subschemas to check"),
            Why::PatternTooCostly => text(f, "a pattern too costly to check"),
        }
    }
}

/// The value (one token or container) that starts at `at`, as written.
fn token_at(doc: &[u8], at: usize) -> &[u8] {
    let end = valid::skip(doc, at);
    doc.get(at..end).unwrap_or(&[])
}

/// A token printed as written (numbers, and strings with their quotes and escapes).
struct Raw<'a>(&'a [u8]);

impl fmt::Display for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Validated JSON is UTF-8; anything else prints nothing rather than panicking.
        f.write_str(core::str::from_utf8(self.0).unwrap_or(""))
    }
}

/// `expected string`, `expected string or null`, `expected integer, number or null`.
fn write_types<'a>(f: &mut fmt::Formatter<'_>, types: &'a [u8]) -> fmt::Result {
    f.write_str("expected ")?;
    let mut names: [&'a [u8]; 7] = [b""; 7];
    let mut n = 0;
    let mut put = |t: &'a [u8]| {
        if let (Some(slot), Some(s)) = (names.get_mut(n), JsonStr::from_token(t).ok()) {
            *slot = s.raw();
            n += 1;
        }
    };
    match Arr::of(types) {
        Some(items) => items.for_each(&mut put),
        None => put(types),
    }
    for (i, name) in names[..n].iter().enumerate() {
        let sep = match (i, n - i) {
            (0, _) => "",
            (_, 1) => " or ",
            _ => ", ",
        };
        f.write_str(sep)?;
        f.write_str(core::str::from_utf8(name).unwrap_or(""))?;
    }
    Ok(())
}

/// Writes the JSON Pointer of the value at `at` in `doc`; false (nothing written) for the
/// document itself. Each level finds the member or element whose text holds `at`.
fn write_pointer(f: &mut fmt::Formatter<'_>, doc: &[u8], at: usize) -> Result<bool, fmt::Error> {
    let mut node = {
        let start = skip_ws(doc, 0);
        doc.get(start..valid::skip(doc, start)).unwrap_or(&[])
    };
    let mut wrote = false;
    loop {
        if offset(doc, node) >= at {
            return Ok(wrote);
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
            return Ok(wrote);
        };
        f.write_char('/')?;
        match key {
            Some(k) => write_token(f, k)?,
            None => write!(f, "{index}")?,
        }
        wrote = true;
        node = value;
    }
}

/// A member name as a JSON Pointer token: decoded, `~` as `~0`, `/` as `~1`.
fn write_token(f: &mut fmt::Formatter<'_>, key: JsonStr<'_>) -> fmt::Result {
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
        match &buf[..n] {
            b"~" => f.write_str("~0")?,
            b"/" => f.write_str("~1")?,
            bytes => f.write_str(core::str::from_utf8(bytes).unwrap_or("\u{fffd}"))?,
        }
        n = 0;
    }
    Ok(())
}
