//! SPEC §11's words: what `Invalid::display` writes for each reason (`<where>: <why>`, the
//! JSON Pointer of the failing value or `(args)` for the args themselves), where `at` points,
//! and each kind of `SchemaError` `Schema::new` refuses a schema with.

use std::collections::BTreeSet;

use polyweave_tool_adapter::json::schema::{Limits, Schema, SchemaErrorKind, Why};

/// The offset of the first `needle` in `hay` (where a `Why` says the schema's bound is).
fn off(hay: &str, needle: &str) -> u32 {
    let i = hay
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in {hay}"));
    u32::try_from(i).expect("small")
}

/// One rejection: the schema, the value, the failing value's offset, the text, the reason.
struct Case {
    schema: &'static str,
    value: &'static str,
    at: usize,
    text: &'static str,
    why: Why,
}

fn case(
    schema: &'static str,
    value: &'static str,
    at: usize,
    text: &'static str,
    why: Why,
) -> Case {
    Case {
        schema,
        value,
        at,
        text,
        why,
    }
}

/// Every reason a value fails for, under the default limits.
fn verdicts() -> Vec<Case> {
    use Why::*;
    let s1 = r#"{"properties":{"city":{"type":"string"}}}"#;
    let s2 = r#"{"type":["string","null"]}"#;
    let s3 = r#"{"type":["integer","number","null"]}"#;
    let s4 = r#"{"required":["name","city"]}"#;
    let s5 = r#"{"dependentRequired":{"card":["billing"]}}"#;
    let s6 = r#"{"propertyNames":{"maxLength":3}}"#;
    let s7 = r#"{"minProperties":2}"#;
    let s8 = r#"{"maxProperties":2}"#;
    let s9 = r#"{"properties":{"stops":{"minItems":2}}}"#;
    let s10 = r#"{"maxItems":2}"#;
    let s11 = r#"{"contains":{"type":"string"},"minContains":2}"#;
    let s12 = r#"{"contains":{"type":"string"},"maxContains":1}"#;
    let s13 = r#"{"properties":{"s":{"minLength":2}}}"#;
    let s14 = r#"{"maxLength":2}"#;
    let s15 = r#"{"pattern":"^[a-z]+$"}"#;
    let s16 = r#"{"properties":{"days":{"minimum":1}}}"#;
    let s17 = r#"{"maximum":10}"#;
    let s18 = r#"{"exclusiveMinimum":0}"#;
    let s19 = r#"{"exclusiveMaximum":1.5}"#;
    let s20 = r#"{"multipleOf":0.5}"#;
    let s21 = r#"{"properties":{"stops":{"items":{"type":"integer"}}}}"#;
    let s22 = r#"{"properties":{"a/b~c":{"type":"string"}}}"#;
    vec![
        // SPEC §11's own examples.
        case(
            s1,
            r#"{"city":1}"#,
            8,
            "/city: expected string",
            Type(off(s1, r#""string""#)),
        ),
        case(
            s4,
            r#"{"name":"x"}"#,
            0,
            r#"(args): missing required property "city""#,
            Required(off(s4, r#""city""#)),
        ),
        case(
            r#"{"properties":{"unit":{"enum":["C","F"]}}}"#,
            r#"{"unit":"K"}"#,
            8,
            "/unit: not one of the allowed values",
            Enum,
        ),
        case(
            s16,
            r#"{"days":0}"#,
            8,
            "/days: must be >= 1",
            Minimum(off(s16, "1")),
        ),
        case(
            s21,
            r#"{"stops":[1, 2, "x"]}"#,
            16,
            "/stops/2: expected integer",
            Type(off(s21, r#""integer""#)),
        ),
        // Several types, a pointer token with `/` and `~` in it.
        case(
            s2,
            "1",
            0,
            "(args): expected string or null",
            Type(off(s2, "[")),
        ),
        case(
            s3,
            "true",
            0,
            "(args): expected integer, number or null",
            Type(off(s3, "[")),
        ),
        case(
            s22,
            r#"{"a/b~c":2}"#,
            9,
            "/a~1b~0c: expected string",
            Type(off(s22, r#""string""#)),
        ),
        // Each other reason.
        case(
            r#"{"const":{"a":[1,2]}}"#,
            r#"{"a":[2,1]}"#,
            0,
            "(args): not the allowed value",
            Const,
        ),
        case(
            r#"{"properties":{"x":false}}"#,
            r#"{"x":null}"#,
            5,
            "/x: no value is allowed here",
            False,
        ),
        case(
            s5,
            r#"{"card":"4242"}"#,
            0,
            r#"(args): missing property "billing", required when "card" is present"#,
            DependentRequired(off(s5, r#""billing""#), off(s5, r#""card""#)),
        ),
        case(
            r#"{"properties":{"a":{}},"additionalProperties":false}"#,
            r#"{"a":1,"b":2}"#,
            11,
            "/b: property not allowed",
            PropertyNotAllowed,
        ),
        case(
            s6,
            r#"{"ok":1,"long":2}"#,
            0,
            r#"(args): property name "long" does not match its schema"#,
            PropertyName(8),
        ),
        case(
            s7,
            r#"{"a":1}"#,
            0,
            "(args): must have at least 2 properties",
            MinProperties(off(s7, "2")),
        ),
        case(
            s8,
            r#"{"a":1,"b":2,"c":3}"#,
            0,
            "(args): must have at most 2 properties",
            MaxProperties(off(s8, "2")),
        ),
        case(
            s9,
            r#"{"stops":[1]}"#,
            9,
            "/stops: must have at least 2 items",
            MinItems(off(s9, "2")),
        ),
        case(
            s10,
            "[1,2,3]",
            0,
            "(args): must have at most 2 items",
            MaxItems(off(s10, "2")),
        ),
        case(
            r#"{"uniqueItems":true}"#,
            r#"[1,{"a":2},1.0]"#,
            0,
            "(args): items must be unique",
            UniqueItems,
        ),
        case(
            r#"{"contains":{"type":"string"}}"#,
            "[1,2]",
            0,
            "(args): must contain a matching item",
            Contains,
        ),
        case(
            s11,
            r#"["a",1]"#,
            0,
            "(args): must contain at least 2 matching items",
            MinContains(off(s11, "2")),
        ),
        case(
            s12,
            r#"["a","b"]"#,
            0,
            "(args): must contain at most 1 matching item",
            MaxContains(off(s12, "1")),
        ),
        // One code point in two bytes is shorter than 2.
        case(
            s13,
            r#"{"s":"é"}"#,
            5,
            "/s: must be at least 2 characters long",
            MinLength(off(s13, "2")),
        ),
        case(
            s14,
            r#""abc""#,
            0,
            "(args): must be at most 2 characters long",
            MaxLength(off(s14, "2")),
        ),
        case(
            s15,
            r#""A1""#,
            0,
            r#"(args): must match the pattern "^[a-z]+$""#,
            Pattern(off(s15, r#""^"#)),
        ),
        case(
            s17,
            "10.5",
            0,
            "(args): must be <= 10",
            Maximum(off(s17, "10")),
        ),
        case(
            s18,
            "0",
            0,
            "(args): must be > 0",
            ExclusiveMinimum(off(s18, "0")),
        ),
        case(
            s19,
            "1.5",
            0,
            "(args): must be < 1.5",
            ExclusiveMaximum(off(s19, "1.5")),
        ),
        case(
            s20,
            "0.75",
            0,
            "(args): must be a multiple of 0.5",
            MultipleOf(off(s20, "0.5")),
        ),
        case(
            r#"{"anyOf":[{"type":"string"},{"type":"integer"}]}"#,
            "true",
            0,
            "(args): does not match any of the allowed schemas",
            AnyOf,
        ),
        case(
            r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
            "true",
            0,
            "(args): does not match any of the oneOf schemas",
            OneOfNone,
        ),
        case(
            r#"{"oneOf":[{"type":"number"},{"type":"integer"}]}"#,
            "1",
            0,
            "(args): matches more than one of the oneOf schemas",
            OneOfMany,
        ),
        case(
            r#"{"not":{"type":"null"}}"#,
            "null",
            0,
            r#"(args): must not match the schema under "not""#,
            Not,
        ),
        case(
            r#"{"type":"object"}"#,
            r#"{"a":}"#,
            0,
            "(args): not valid JSON",
            NotJson,
        ),
    ]
}

/// SPEC §11: each reason's text, on a small schema and a value that breaks it.
#[test]
fn each_reason_reads_as_the_spec_words_it() {
    let mut seen = BTreeSet::new();
    for c in verdicts() {
        let s = Schema::new(c.schema.as_bytes()).unwrap_or_else(|e| panic!("{}: {e}", c.schema));
        let e = s
            .validate(c.value.as_bytes())
            .expect_err(&format!("{} accepts {}", c.schema, c.value));
        let text = e.display(&s, c.value.as_bytes()).to_string();
        assert_eq!(
            (e.at(), text.as_str(), e.why(), e.is_limit()),
            (c.at, c.text, c.why, false),
            "{} / {}",
            c.schema,
            c.value
        );
        seen.insert(format!("{:?}", std::mem::discriminant(&c.why)));
    }
    // The reasons above are 29 different ones; with the three limits below, all 32 of `Why`.
    assert_eq!(seen.len(), 29);
}

/// Each limit is its own reason, said as a limit and never as a verdict.
// SPEC §11
#[test]
fn each_limit_reads_as_a_limit() {
    let limits = |max_depth, max_subschemas, max_pattern_steps| Limits {
        max_depth,
        max_subschemas,
        max_pattern_steps,
    };
    let d = Limits::DEFAULT;
    let cases: &[(&str, &str, Limits, usize, &str, Why)] = &[
        (
            r#"{"items":{"items":{"items":{}}}}"#,
            "[[[[[1]]]]]",
            limits(4, d.max_subschemas, d.max_pattern_steps),
            0,
            "(args): too deeply nested to check",
            Why::TooDeep,
        ),
        (
            r#"{"items":{"type":"integer"}}"#,
            "[1,2,3,4,5,6]",
            limits(d.max_depth, 4, d.max_pattern_steps),
            // The root and three items are the four subschemas allowed.
            7,
            "/3: too many subschemas to check",
            Why::TooManySubschemas,
        ),
        (
            r#"{"pattern":"a*b"}"#,
            r#""aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa""#,
            limits(d.max_depth, d.max_subschemas, 20),
            0,
            "(args): a pattern too costly to check",
            Why::PatternTooCostly,
        ),
    ];
    for &(schema, value, limits, at, text, why) in cases {
        let s = Schema::with_limits(schema.as_bytes(), limits).expect("a schema");
        let e = s.validate(value.as_bytes()).expect_err("a limit");
        let got = e.display(&s, value.as_bytes()).to_string();
        assert_eq!(
            (e.at(), got.as_str(), e.why(), e.is_limit()),
            (at, text, why, true),
            "{schema} / {value}"
        );
        // The default limits give a verdict on the same value.
        let s = Schema::new(schema.as_bytes()).expect("a schema");
        let verdict = s.validate(value.as_bytes());
        assert!(
            verdict.map_or_else(|e| !e.is_limit(), |()| true),
            "{schema} / {value}"
        );
    }
}

/// An MCP result is named `(result)` where the args are `(args)`.
#[test]
fn the_value_itself_can_be_named_otherwise() {
    let s = Schema::new(br#"{"required":["temp"]}"#).expect("a schema");
    let e = s.validate(b"{}").expect_err("missing");
    assert_eq!(
        e.display(&s, b"{}").with_root("(result)").to_string(),
        r#"(result): missing required property "temp""#
    );
}

/// A count of one reads in the singular, whichever way the schema spells the number; others
/// (zero included) in the plural.
#[test]
fn a_count_of_one_is_singular() {
    for (schema, value, text) in [
        (
            r#"{"minProperties":1}"#,
            "{}",
            "(args): must have at least 1 property",
        ),
        (
            r#"{"maxProperties":1.0}"#,
            r#"{"a":1,"b":2}"#,
            "(args): must have at most 1.0 property",
        ),
        (
            r#"{"maxProperties":0}"#,
            r#"{"a":1}"#,
            "(args): must have at most 0 properties",
        ),
        (
            r#"{"minItems":1}"#,
            "[]",
            "(args): must have at least 1 item",
        ),
        (
            r#"{"maxItems":1e0}"#,
            "[1,2]",
            "(args): must have at most 1e0 item",
        ),
        (
            r#"{"maxItems":10E-1}"#,
            "[1,2]",
            "(args): must have at most 10E-1 item",
        ),
        (
            r#"{"maxItems":2}"#,
            "[1,2,3]",
            "(args): must have at most 2 items",
        ),
        (
            r#"{"contains":{},"maxContains":1}"#,
            "[1,2]",
            "(args): must contain at most 1 matching item",
        ),
        (
            r#"{"minLength":1}"#,
            r#""""#,
            "(args): must be at least 1 character long",
        ),
        (
            r#"{"maxLength":1}"#,
            r#""ab""#,
            "(args): must be at most 1 character long",
        ),
        (
            r#"{"maxLength":11}"#,
            r#""abcdefghijkl""#,
            "(args): must be at most 11 characters long",
        ),
    ] {
        let s = Schema::new(schema.as_bytes()).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let e = s.validate(value.as_bytes()).expect_err(schema);
        assert_eq!(
            e.display(&s, value.as_bytes()).to_string(),
            text,
            "{schema} / {value}"
        );
    }
}

/// Each kind of `SchemaError`, from a schema that has that fault and no other, with its text.
// SPEC §11
#[test]
fn each_schema_error_kind_has_a_schema() {
    use SchemaErrorKind::*;
    let long_pattern = format!(r#"{{"pattern":"{}"}}"#, "(a|b)".repeat(2000));
    let deep = format!(
        "{}{}",
        r#"{"not":"#.repeat(40),
        "{}".to_string() + &"}".repeat(40)
    );
    let many_names = format!(
        r#"{{"properties":{{{}}}}}"#,
        (0..1000)
            .map(|i| format!(r#""p{i}":{{}}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let cases: Vec<(&str, SchemaErrorKind, usize, &str)> = vec![
        (r#"{"type":"#, NotJson, 8, "not valid JSON"),
        (
            "42",
            NotASchema,
            0,
            "a schema must be an object or a boolean",
        ),
        (
            r#"{"type":"strin"}"#,
            BadKeyword,
            8,
            "a keyword's value has the wrong shape",
        ),
        (
            r#"{"$ref":"https://example.com/s.json"}"#,
            RemoteRef,
            8,
            "a $ref to another document (never fetched)",
        ),
        (
            r##"{"$ref":"#/$defs/missing"}"##,
            UnresolvedRef,
            8,
            "a $ref that names nothing in the document",
        ),
        (
            r##"{"$defs":{"a":{"$anchor":"n"},"b":{"$anchor":"n"}},"$ref":"#n"}"##,
            AmbiguousRef,
            58,
            "a $ref to a name the document gives twice",
        ),
        (
            r#"{"pattern":"\\p{L}"}"#,
            UnsupportedPattern,
            11,
            "a pattern using syntax the matcher does not read",
        ),
        (
            r#"{"pattern":"a)"}"#,
            BadPattern,
            11,
            "a pattern that is not an ECMA-262 regular expression",
        ),
        (
            &long_pattern,
            PatternTooLarge,
            11,
            "a pattern too large for the matcher",
        ),
        (
            &deep,
            TooDeep,
            224,
            "nested deeper than the validator's depth limit",
        ),
        (
            r#"{"type":"string","type":"integer"}"#,
            RepeatedName,
            24,
            "an object gives a name twice",
        ),
        (
            &many_names,
            TooCostly,
            // Where the 100,001st pair of names would be compared: the 454th property's
            // value (FNV-1a's 64-bit filter of `p0`..`p999` is full well before).
            4442,
            "more names in one object than the validator's work limit compares",
        ),
    ];
    let mut seen = BTreeSet::new();
    for (schema, kind, at, text) in cases {
        let e = Schema::new(schema.as_bytes()).expect_err(schema);
        assert_eq!(
            (e.kind, e.at, e.to_string()),
            (kind, at, format!("schema at byte {at}: {text}")),
            "{schema}"
        );
        seen.insert(format!("{kind:?}"));
    }
    assert_eq!(seen.len(), 12);
}

/// SPEC §11: numbers compare as the decimals they are written as, however many digits, where a
/// validator reading them as `f64` takes a value a hair past a bound for the bound itself (the
/// schema fuzz target found the `jsonschema` crate doing so against a bound written `3.0`).
#[test]
fn numbers_past_f64_precision_compare_exactly() {
    let hair = "3.00000000000000000000000007422382741338048283";
    let below = "2.99999999999999999999999999999999999999999999";
    for (schema, value, verdict) in [
        (r#"{"maximum":3.0}"#, hair, Err(Why::Maximum(11))),
        (r#"{"maximum":3e0}"#, hair, Err(Why::Maximum(11))),
        (r#"{"maximum":3}"#, hair, Err(Why::Maximum(11))),
        (
            r#"{"maximum":3.0}"#,
            "3.000000000000000000000000000",
            Ok(()),
        ),
        (r#"{"exclusiveMaximum":3.0}"#, below, Ok(())),
        (r#"{"exclusiveMinimum":3.0}"#, hair, Ok(())),
        (r#"{"minimum":3.0}"#, below, Err(Why::Minimum(11))),
        (
            r#"{"exclusiveMinimum":30e-1}"#,
            "3",
            Err(Why::ExclusiveMinimum(20)),
        ),
        (r#"{"const":3.0}"#, hair, Err(Why::Const)),
        (r#"{"enum":[1,3e0]}"#, "300000000000000000000e-20", Ok(())),
        (r#"{"enum":[1,3e0]}"#, hair, Err(Why::Enum)),
        (r#"{"multipleOf":0.5}"#, hair, Err(Why::MultipleOf(14))),
        (r#"{"type":"integer"}"#, hair, Err(Why::Type(8))),
        (
            r#"{"type":"integer"}"#,
            "3.000000000000000000000000000e5",
            Ok(()),
        ),
    ] {
        let s = Schema::new(schema.as_bytes()).expect(schema);
        assert_eq!(
            s.validate(value.as_bytes()).map_err(|e| e.why()),
            verdict,
            "{schema} / {value}"
        );
    }
}
