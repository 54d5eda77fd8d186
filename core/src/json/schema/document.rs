//! A schema's text as the validator holds it (a `Copy` view), its dialect and limits, and
//! why one is refused.

use super::super::{trim_ws, JsonStr};

/// Which JSON Schema dialect the schema is read as.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Draft {
    /// Draft 2020-12, the default (and what a schema without `$schema` is read as).
    Draft2020_12,
    /// Draft-07, when `$schema` names it: array `items`, `definitions`, `$ref` overriding its siblings.
    Draft07,
}

/// The bounds on one validation's stack and work.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Limits {
    /// Subschemas applied inside one another (a level per property, item, `$ref` or
    /// applicator), and containers nested in either document.
    pub max_depth: u8,
    /// Subschemas applied to values in one validation, in all, and pairs of items
    /// `uniqueItems` compares (each is work of the same order).
    pub max_subschemas: u32,
    /// Steps of the `pattern` matcher in one validation, in all.
    pub max_pattern_steps: u32,
}

impl Limits {
    /// 32 levels, 100,000 subschemas, 1,000,000 pattern steps.
    pub const DEFAULT: Self = Self {
        max_depth: 32,
        max_subschemas: 100_000,
        max_pattern_steps: 1_000_000,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A schema's text, checked to be one this validator reads whole. A `Copy` view: the text
/// stays where the host keeps it (flash, a static, a buffer).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Schema<'s> {
    pub(super) text: &'s [u8],
    pub(super) draft: Draft,
    pub(super) limits: Limits,
    /// Some subschema below the root has an `$id`: `#` refs then resolve against it.
    pub(super) nested_ids: bool,
    /// Where each subschema's keywords stand ([`Schema::indexed`]), or empty.
    pub(super) index: &'s [u32],
    /// The words of that index, counted when the schema is read (`index::TOO_LONG`: none).
    pub(super) index_need: u32,
    /// The subschema objects it lists.
    pub(super) index_nodes: u32,
}

/// Why a schema's text cannot be validated against.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SchemaErrorKind {
    /// The text is not JSON.
    NotJson,
    /// A schema (the root or a subschema) that is neither an object nor a boolean.
    NotASchema,
    /// A keyword whose value has the wrong shape (`"minimum":"1"`, `"required":{}`).
    BadKeyword,
    /// A `$ref` to another document: this validator never fetches one.
    RemoteRef,
    /// A `$ref` inside the document that names nothing there (or is longer than 256 bytes).
    UnresolvedRef,
    /// A `$ref` to an `$anchor` or `$id` the document gives twice (in one resource): which
    /// one it means is undefined.
    AmbiguousRef,
    /// A `pattern` (or `patternProperties` name) using syntax the matcher does not read.
    UnsupportedPattern,
    /// A `pattern` that is not an ECMA-262 regular expression.
    BadPattern,
    /// A `pattern` too large for the matcher's fixed program.
    PatternTooLarge,
    /// Containers nested deeper than [`Limits::max_depth`].
    TooDeep,
    /// An object that gives a name twice (a keyword, a property, a member of an `enum`
    /// value): this validator would read the first where other readers keep the last.
    RepeatedName,
    /// Finding that no object repeats a name compared more pairs of names than
    /// [`Limits::max_subschemas`] allows.
    TooCostly,
}

/// A schema refused when it is read, and where (a byte offset into its text).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SchemaError {
    /// What is wrong.
    pub kind: SchemaErrorKind,
    /// Offset into the schema's text.
    pub at: usize,
}

impl core::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let what = match self.kind {
            SchemaErrorKind::NotJson => "not valid JSON",
            SchemaErrorKind::NotASchema => "a schema must be an object or a boolean",
            SchemaErrorKind::BadKeyword => "a keyword's value has the wrong shape",
            SchemaErrorKind::RemoteRef => "a $ref to another document (never fetched)",
            SchemaErrorKind::UnresolvedRef => "a $ref that names nothing in the document",
            SchemaErrorKind::AmbiguousRef => "a $ref to a name the document gives twice",
            SchemaErrorKind::UnsupportedPattern => {
                "a pattern using syntax the matcher does not read"
            }
            SchemaErrorKind::BadPattern => "a pattern that is not an ECMA-262 regular expression",
            SchemaErrorKind::PatternTooLarge => "a pattern too large for the matcher",
            SchemaErrorKind::TooDeep => "nested deeper than the validator's depth limit",
            SchemaErrorKind::RepeatedName => "an object gives a name twice",
            SchemaErrorKind::TooCostly => {
                "more names in one object than the validator's work limit compares"
            }
        };
        write!(f, "schema at byte {}: {what}", self.at)
    }
}

impl core::error::Error for SchemaError {}

impl<'s> Schema<'s> {
    /// The schema's text, as given.
    pub fn text(&self) -> &'s [u8] {
        self.text
    }

    /// The root schema's own bytes (the text without surrounding white space).
    pub(super) fn root(&self) -> &'s [u8] {
        trim_ws(self.text)
    }

    /// The dialect it is read as.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// The bounds each validation keeps to.
    pub fn limits(&self) -> Limits {
        self.limits
    }
}

/// True for a `$schema` naming draft-07 (or the drafts before it, read alike here).
pub(super) fn is_draft7(value: &[u8]) -> bool {
    let s = trim_ws(value);
    ["draft-07", "draft-06", "draft-04"]
        .iter()
        .any(|d| s.windows(d.len()).any(|w| w == d.as_bytes()))
}

/// A member name read as a keyword: its decoded text, so that `"\u0074ype"` is `type` as it
/// is to every JSON reader; a name with escapes decoding past `buf` (longer than any
/// keyword) reads as none. Registration and validation both read names through this.
#[inline]
pub(super) fn keyword<'a>(key: JsonStr<'a>, buf: &'a mut [u8; 24]) -> &'a [u8] {
    match key.is_plain() {
        true => key.raw(),
        false => key.decode_into(buf).map_or(&b""[..], str::as_bytes),
    }
}

/// Where `part` (a sub-slice of `doc`) starts in `doc`.
pub(super) fn offset(doc: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).wrapping_sub(doc.as_ptr() as usize)
}
