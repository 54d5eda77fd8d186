//! The argument validator (SPEC §11) on arbitrary schema bytes and value bytes: no panic, the
//! same answer twice (and from a copy of the schema view), a failing value's offset inside the
//! value; and on a schema made only of the keywords SPEC §11 lists, the same valid/invalid
//! answer as the Rust `jsonschema` crate (draft 2020-12, or draft-07 when `$schema` names it),
//! where every number in both is one `f64` holds exactly enough to order (`f64_faithful`).
//!
//! Input: two bytes (little-endian) give the schema's length, taken modulo what follows plus
//! one; the schema is that many bytes after them, the value the rest.
#![no_main]

use std::collections::BTreeSet;
use std::fmt;

use libfuzzer_sys::fuzz_target;
use polyweave_tool_adapter::json::schema::{Invalid, Schema, SchemaErrorKind};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The input's schema and value: see the file's documentation.
fn split(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((head, rest)) = data.split_first_chunk::<2>() else {
        return (data, &[]);
    };
    let n = usize::from(u16::from_le_bytes(*head)) % (rest.len() + 1);
    rest.split_at(n)
}

/// Everything the validator says about one value, for comparing two runs.
fn answer(schema: &Schema<'_>, value: &[u8]) -> Result<(), (usize, bool, String)> {
    schema.validate(value).map_err(|e: Invalid| {
        assert!(
            e.at() <= value.len(),
            "offset {} past the value's {} bytes",
            e.at(),
            value.len()
        );
        (e.at(), e.is_limit(), e.display(schema, value).to_string())
    })
}

/// With `arbitrary_precision`, serde_json reads an object holding this key as one of its
/// numbers (see the `json` target): such input is left to that target.
const SERDE_NUMBER_TOKEN: &[u8] = b"$serde_json::private::Number";

/// A JSON text serde_json reads with no object holding the same name twice (JSON leaves what a
/// repeated name means open; the validators need not agree on it).
struct Distinct;

impl<'de> Deserialize<'de> for Distinct {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DistinctVisitor)
    }
}

struct DistinctVisitor;

impl<'de> Visitor<'de> for DistinctVisitor {
    type Value = Distinct;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Distinct, E> {
        Ok(Distinct)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Distinct, E> {
        Ok(Distinct)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Distinct, E> {
        Ok(Distinct)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Distinct, E> {
        Ok(Distinct)
    }
    fn visit_str<E>(self, _: &str) -> Result<Distinct, E> {
        Ok(Distinct)
    }
    fn visit_unit<E>(self) -> Result<Distinct, E> {
        Ok(Distinct)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Distinct, A::Error> {
        while seq.next_element::<Distinct>()?.is_some() {}
        Ok(Distinct)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Distinct, A::Error> {
        let mut names = BTreeSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !names.insert(name) {
                return Err(de::Error::custom("a repeated member name"));
            }
            map.next_value::<Distinct>()?;
        }
        Ok(Distinct)
    }
}

/// `text` as a serde_json value, when it is JSON without repeated member names.
fn plain_json(text: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Distinct>(text).ok()?;
    serde_json::from_slice(text).ok()
}

/// Whether the number written as `text` is one `f64` keeps apart from every other number of
/// its kind: at most 15 significant digits (`f64` holds 15 decimal digits apart) and a
/// magnitude well inside its normal range. SPEC §11 compares numbers as the decimals written;
/// the reference reads some as `f64` (against a bound written `3.0`, it takes
/// `3.00000000000000000000000007` for `3`), so its answer is taken only on such numbers, where
/// rounding keeps every order and equality. Exact comparison past that is tested on its own
/// (`tests/tests/schema_errors.rs`, `numbers_past_f64_precision_compare_exactly`).
fn f64_faithful(text: &str) -> bool {
    let text = text.strip_prefix('-').unwrap_or(text);
    // i128: an exponent may be written up to i64's bounds, and the sums below go past them.
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(i) => match text[i + 1..].parse::<i64>() {
            Ok(e) => (&text[..i], i128::from(e)),
            Err(_) => return false,
        },
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let Some(first) = digits.iter().position(|&d| d != b'0') else {
        return true;
    };
    let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
    let wide = |n: usize| i128::try_from(n).unwrap_or(i128::MAX);
    // The power of ten of the last significant digit, and of the first.
    let low = exp - wide(frac.len()) + wide(digits.len() - 1 - last);
    let high = low + wide(last - first);
    last - first < 15 && (-307..=307).contains(&high)
}

/// Whether every number in `v` is `f64_faithful`.
fn numbers_faithful(v: &Value) -> bool {
    match v {
        Value::Number(n) => f64_faithful(&n.to_string()),
        Value::Array(a) => a.iter().all(numbers_faithful),
        Value::Object(m) => m.values().all(numbers_faithful),
        _ => true,
    }
}

/// The drafts a schema can name, as far as this target compares.
#[derive(Clone, Copy, PartialEq)]
enum Draft {
    D202012,
    D7,
}

/// Keywords SPEC §11 lists for both drafts, and the annotations and identifiers it reads.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "type", "enum", "const", "properties", "required", "additionalProperties",
    "patternProperties", "propertyNames", "minProperties", "maxProperties", "items", "contains",
    "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "allOf", "anyOf", "oneOf",
    "not", "if", "then", "else", "$ref", "$defs", "definitions", "$comment", "format", "title",
    "description", "default", "examples",
];
/// Keywords 2020-12 has and draft-07 does not.
#[rustfmt::skip]
const KEYWORDS_2020: &[&str] = &[
    "prefixItems", "dependentRequired", "minContains", "maxContains", "$anchor",
];

/// Whether the subschema `s` uses only the keywords SPEC §11 lists (so that both validators
/// check the same things), in the shapes both read.
fn supported(s: &Value, draft: Draft, root: bool) -> bool {
    let map = match s {
        Value::Bool(_) => return true,
        Value::Object(map) => map,
        _ => return false,
    };
    let all = |v: &Value| {
        v.as_array()
            .is_some_and(|a| a.iter().all(|s| supported(s, draft, false)))
    };
    let each = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.values().all(|s| supported(s, draft, false)))
    };
    map.iter().all(|(k, v)| match k.as_str() {
        // Only at the root, where SPEC §11 reads them: the draft, and a base leaving `#` refs
        // in the document.
        "$schema" | "$id" => root,
        "properties" | "patternProperties" | "$defs" | "definitions" => each(v),
        "allOf" | "anyOf" | "oneOf" => all(v),
        "prefixItems" => draft == Draft::D202012 && all(v),
        "items" => match v {
            Value::Array(_) => draft == Draft::D7 && all(v),
            _ => supported(v, draft, false),
        },
        "additionalProperties" | "propertyNames" | "contains" | "not" | "if" | "then" | "else" => {
            supported(v, draft, false)
        }
        // A same-document reference; any other is refused at registration by ours.
        "$ref" => v.as_str().is_some_and(|r| r.starts_with('#')),
        k if KEYWORDS.contains(&k) => true,
        k => draft == Draft::D202012 && KEYWORDS_2020.contains(&k),
    })
}

/// The draft the schema names (`$schema`), if it is one this target compares.
fn draft_of(schema: &Value) -> Option<Draft> {
    match schema.get("$schema").map(Value::as_str) {
        None => Some(Draft::D202012),
        Some(Some("https://json-schema.org/draft/2020-12/schema")) => Some(Draft::D202012),
        Some(Some(
            "http://json-schema.org/draft-07/schema#" | "http://json-schema.org/draft-07/schema",
        )) => Some(Draft::D7),
        _ => None,
    }
}

/// The reference's answer for `value` against `schema`, when the schema is one this target
/// compares and the reference builds it.
fn reference(schema: &Value, value: &Value) -> Option<bool> {
    let draft = draft_of(schema)?;
    if !supported(schema, draft, true) {
        return None;
    }
    let options = match draft {
        Draft::D202012 => jsonschema::draft202012::options(),
        Draft::D7 => jsonschema::draft7::options(),
    };
    // `format` is an annotation in SPEC §11, whatever the draft's default.
    let validator = options.should_validate_formats(false).build(schema).ok()?;
    Some(validator.is_valid(value))
}

fuzz_target!(|data: &[u8]| {
    let (schema_text, value) = split(data);
    let first = Schema::new(schema_text);
    let again = Schema::new(schema_text);
    assert_eq!(
        format!("{:?}", first.as_ref().err()),
        format!("{:?}", again.as_ref().err()),
        "registration answered twice differently"
    );
    // A schema that is JSON giving a name twice in an object is refused for it (or for its
    // depth), and one refused for it gives one, as serde_json's names decode.
    // Read into a tree: ignoring a value, serde_json does not check a string's UTF-8. Both
    // readings serve the comparison below too (`plain_json`'s, done once).
    let schema_tree = serde_json::from_slice::<Value>(schema_text).ok();
    let distinct = serde_json::from_slice::<Distinct>(schema_text);
    let repeats = distinct
        .as_ref()
        .err()
        .map(|e| schema_tree.is_some() && e.to_string().contains("a repeated member name"));
    match (&first, repeats) {
        (Err(e), None) if e.kind == SchemaErrorKind::RepeatedName => {
            panic!("refused for a repeated name serde_json does not see: {e}")
        }
        (Ok(_), Some(true)) => panic!("accepted with a repeated name"),
        (Err(e), Some(true)) => assert!(
            matches!(
                e.kind,
                SchemaErrorKind::RepeatedName
                    | SchemaErrorKind::TooDeep
                    | SchemaErrorKind::TooCostly
            ),
            "a repeated name refused as {e}"
        ),
        _ => {}
    }
    let Ok(schema) = first else { return };
    let ours = answer(&schema, value);
    let copy = schema;
    assert_eq!(
        ours,
        answer(&copy, value),
        "validation answered twice differently"
    );
    // The index changes where keywords are read from, never the answer (limits included).
    let mut words = vec![0u32; schema.index_words().expect("a text under 4 GiB")];
    let indexed = schema.indexed(&mut words).expect("sized by index_words");
    assert_eq!(
        ours,
        answer(&indexed, value),
        "the indexed schema answered differently"
    );

    if data
        .windows(SERDE_NUMBER_TOKEN.len())
        .any(|w| w == SERDE_NUMBER_TOKEN)
    {
        return;
    }
    let schema_json = distinct.ok().and(schema_tree);
    let (Some(schema_json), Some(value_json)) = (schema_json, plain_json(value)) else {
        return;
    };
    // A limit of ours hit is no verdict.
    if matches!(ours, Err((_, true, _))) {
        return;
    }
    if !numbers_faithful(&schema_json) || !numbers_faithful(&value_json) {
        return;
    }
    if let Some(theirs) = reference(&schema_json, &value_json) {
        assert_eq!(
            ours.is_ok(),
            theirs,
            "schema {}\nvalue {}\nours {ours:?}, jsonschema {}",
            String::from_utf8_lossy(schema_text),
            String::from_utf8_lossy(value),
            if theirs { "valid" } else { "invalid" }
        );
    }
});
