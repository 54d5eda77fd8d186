//! What [`Schema::new`](super::Schema::new) settles before any value is checked: every
//! subschema an object or a boolean, every keyword of the shape its check reads, every
//! `$ref` found in the document and every `pattern` one the matcher reads.

use super::super::valid::{Arr, Obj};
use super::super::{skip_ws, trim_ws, JsonError, JsonErrorKind, JsonStr};
use super::document::{
    is_draft7, keyword, offset, Draft, Limits, Schema, SchemaError, SchemaErrorKind,
};
use super::index::Count;
use super::names;
use super::number::Decimal;
use super::pattern::{self, PatternErrorKind};
use super::refs::{self, holds, Holds};

impl<'s> Schema<'s> {
    /// Reads a schema with [`Limits::DEFAULT`].
    pub fn new(text: &'s [u8]) -> Result<Self, SchemaError> {
        Self::with_limits(text, Limits::DEFAULT)
    }

    /// Reads a schema: valid JSON giving no name twice in an object, every keyword of the
    /// right shape, every `$ref` found in the document, every `pattern` one the matcher reads.
    pub fn with_limits(text: &'s [u8], limits: Limits) -> Result<Self, SchemaError> {
        let json_error = |e: JsonError| SchemaError {
            kind: match e.kind {
                JsonErrorKind::TooDeep => SchemaErrorKind::TooDeep,
                _ => SchemaErrorKind::NotJson,
            },
            at: e.at,
        };
        super::super::validate(text, limits.max_depth).map_err(json_error)?;
        let start = skip_ws(text, 0);
        let root = trim_ws(text);
        // A level more than the text's own: its depth was checked just above, and this walk
        // counts the values inside the deepest container as a level too.
        let mut budget = limits.max_subschemas;
        names::once(root, limits.max_depth.saturating_add(1), &mut budget).map_err(
            |(fault, part)| SchemaError {
                kind: match fault {
                    names::Fault::Repeated => SchemaErrorKind::RepeatedName,
                    names::Fault::TooDeep => SchemaErrorKind::TooDeep,
                    names::Fault::OverBudget => SchemaErrorKind::TooCostly,
                },
                at: offset(text, part),
            },
        )?;
        let draft = match Obj::of(root).and_then(|mut o| o.find(|(k, _)| k.eq_text(b"$schema"))) {
            Some((_, v)) if is_draft7(v) => Draft::Draft07,
            _ => Draft::Draft2020_12,
        };
        let mut schema = Self {
            text,
            draft,
            limits,
            nested_ids: false,
            index: &[],
            index_need: 0,
            index_nodes: 0,
        };
        let mut count = Count::default();
        schema.nested_ids = check(&schema, start, &mut count)?;
        (schema.index_need, schema.index_nodes) = count.total(text);
        Ok(schema)
    }
}

/// Checks every subschema, counting its index; returns whether one below the root has an
/// `$id` of its own.
pub(super) fn check(
    schema: &Schema<'_>,
    _start: usize,
    count: &mut Count,
) -> Result<bool, SchemaError> {
    let mut error = None;
    let mut nested_ids = false;
    let root = schema.root();
    refs::walk(schema, root, root, u8::MAX, &mut |node, base| {
        if !core::ptr::eq(node, root) && refs::own_id(node).is_some() {
            nested_ids = true;
        }
        error = subschema(schema, node, base, count).err();
        error.is_some()
    });
    match error {
        Some(e) => Err(e),
        None => Ok(nested_ids),
    }
}

/// One subschema's own keywords (the walk visits the ones below).
fn subschema<'s>(
    schema: &Schema<'s>,
    node: &'s [u8],
    base: &'s [u8],
    count: &mut Count,
) -> Result<(), SchemaError> {
    let at = |part: &[u8], kind| SchemaError {
        kind,
        at: offset(schema.text, part),
    };
    let node = trim_ws(node);
    match node.first() {
        Some(b'{') => {}
        Some(b't' | b'f') => return Ok(()),
        _ => return Err(at(node, SchemaErrorKind::NotASchema)),
    }
    count.node();
    for (key, value) in Obj::of(node).into_iter().flatten() {
        let bad = || at(value, SchemaErrorKind::BadKeyword);
        let mut buf = [0u8; 24];
        let name = keyword(key, &mut buf);
        count.member(name, value);
        let ok = match name {
            b"type" => match Arr::of(value) {
                Some(mut names) => names.all(type_name),
                None => type_name(value),
            },
            b"enum" => value.first() == Some(&b'['),
            b"required" => strings(value),
            b"dependentRequired" => Obj::of(value).is_some_and(|mut o| o.all(|(_, v)| strings(v))),
            b"minLength" | b"maxLength" | b"minItems" | b"maxItems" | b"minProperties"
            | b"maxProperties" | b"minContains" | b"maxContains" => {
                Decimal::parse(value).is_some_and(|d| d.as_u64().is_some())
            }
            b"minimum" | b"maximum" => Decimal::parse(value).is_some(),
            b"exclusiveMinimum" | b"exclusiveMaximum" => {
                Decimal::parse(value).is_some() || matches!(value, b"true" | b"false")
            }
            // Positive, its significant digits within 64 bits: a divisor taken exactly.
            b"multipleOf" => Decimal::parse(value).is_some_and(|d| {
                d.cmp(&Decimal::parse(b"0").unwrap_or(d)).is_gt() && d.divisor_digits().is_some()
            }),
            b"uniqueItems" => matches!(value, b"true" | b"false"),
            b"allOf" | b"anyOf" | b"oneOf" => {
                Arr::of(value).is_some_and(|mut a| a.next().is_some())
            }
            b"prefixItems" => value.first() == Some(&b'['),
            b"properties" | b"patternProperties" | b"$defs" | b"definitions"
            | b"dependentSchemas" => value.first() == Some(&b'{'),
            b"$ref" => {
                let r = JsonStr::from_token(value).map_err(|_| bad())?;
                refs::resolve(schema, r, base, refs::Names::Unique)
                    .map_err(|kind| at(value, kind))?;
                true
            }
            b"pattern" => {
                let p = JsonStr::from_token(value).map_err(|_| bad())?;
                readable(p.raw()).map_err(|kind| at(value, kind))?;
                true
            }
            _ => true,
        };
        if !ok {
            return Err(bad());
        }
        if name == b"patternProperties" {
            for (p, _) in Obj::of(value).into_iter().flatten() {
                let token_at = offset(schema.text, p.raw()).saturating_sub(1);
                readable(p.raw()).map_err(|kind| SchemaError { kind, at: token_at })?;
            }
        }
        // Every holder's value is visited by the walk; its shape must let the walk see it.
        if holds(schema.draft, key, value) == Holds::Each && value.first() != Some(&b'[') {
            return Err(bad());
        }
    }
    Ok(())
}

/// A `pattern` the matcher reads, or why not.
fn readable(raw: &[u8]) -> Result<(), SchemaErrorKind> {
    pattern::check(raw).map_err(|e| match e.kind {
        PatternErrorKind::Syntax => SchemaErrorKind::BadPattern,
        PatternErrorKind::Unsupported => SchemaErrorKind::UnsupportedPattern,
        PatternErrorKind::TooLarge => SchemaErrorKind::PatternTooLarge,
    })
}

fn type_name(t: &[u8]) -> bool {
    JsonStr::from_token(t).is_ok_and(|s| {
        matches!(
            s.raw(),
            b"object" | b"array" | b"string" | b"number" | b"integer" | b"boolean" | b"null"
        )
    })
}

fn strings(v: &[u8]) -> bool {
    Arr::of(v).is_some_and(|mut a| a.all(|s| s.first() == Some(&b'"')))
}
