//! SPEC §11's bounds: a depth limit and a cap on the work of one validation, each a distinct
//! answer, never a panic and never a value let through; and schemas that loop or grow work
//! with the value.

use polyweave_tool_adapter::json::schema::{Limits, Schema, SchemaErrorKind, Why};

fn why(schema: &Schema<'_>, value: &str) -> Result<(), (Why, String)> {
    schema
        .validate(value.as_bytes())
        .map_err(|e| (e.why(), e.display(schema, value.as_bytes()).to_string()))
}

/// A `$ref` that loops without going into the value stops at the depth limit.
// SPEC §11
#[test]
fn a_ref_loop_stops_at_the_depth_limit() {
    for text in [
        r##"{"$ref":"#"}"##,
        r##"{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}"##,
        r##"{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"}"##,
    ] {
        let s = Schema::new(text.as_bytes()).unwrap();
        let e = s.validate(b"1").unwrap_err();
        assert_eq!(e.why(), Why::TooDeep, "{text}");
        assert!(e.is_limit());
        assert_eq!(
            e.display(&s, b"1").to_string(),
            "(args): too deeply nested to check"
        );
    }
    // Recursion that follows the value ends with it.
    let tree = Schema::new(
        br##"{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}}}"##,
    )
    .unwrap();
    assert_eq!(
        why(&tree, r#"{"kids":[{"kids":[{"kids":[]}]},{}]}"#),
        Ok(())
    );
    assert_eq!(
        why(&tree, r#"{"kids":[{"kids":[{"kids":[7]}]}]}"#),
        Err((
            Why::Type(8),
            "/kids/0/kids/0/kids/0: expected object".into()
        ))
    );
}

/// A value deeper than the limit is refused as such, before any keyword is read.
// SPEC §11
#[test]
fn values_and_schemas_deeper_than_the_limit() {
    let s = Schema::new(b"{}").unwrap();
    let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
    assert_eq!(
        why(&s, &deep),
        Err((Why::TooDeep, "(args): too deeply nested to check".into()))
    );
    let shallow = Limits {
        max_depth: 4,
        ..Limits::DEFAULT
    };
    let nested = br#"{"items":{"items":{"items":{"items":{"items":{}}}}}}"#;
    let e = Schema::with_limits(nested, shallow).unwrap_err();
    assert_eq!(e.kind, SchemaErrorKind::TooDeep);
    let s = Schema::with_limits(br#"{"items":{"items":{"type":"integer"}}}"#, shallow).unwrap();
    assert_eq!(why(&s, "[[1]]"), Ok(()));
    assert_eq!(why(&s, "[[[1]]]").unwrap_err().0, Why::Type(26));
}

/// `uniqueItems` over n items compares up to n²/2 pairs: each pays the subschema budget.
// SPEC §11
#[test]
fn unique_items_work_is_budgeted() {
    let s = Schema::with_limits(
        br#"{"uniqueItems":true}"#,
        Limits {
            max_subschemas: 1_000,
            ..Limits::DEFAULT
        },
    )
    .unwrap();
    let items = |n: usize| {
        format!(
            "[{}]",
            (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        )
    };
    // 44 items: 1 subschema and 946 pairs; 46 items: 1,035 pairs.
    assert_eq!(why(&s, &items(44)), Ok(()));
    assert_eq!(
        why(&s, &items(46)),
        Err((
            Why::TooManySubschemas,
            "(args): too many subschemas to check".into()
        ))
    );
    assert_eq!(
        why(&s, "[1,2,1.0]"),
        Err((Why::UniqueItems, "(args): items must be unique".into()))
    );
}

/// A limit inside `anyOf`, `oneOf`, `not` or `if` is the answer: it is not read as "this branch
/// does not match" (which `not` would turn into a pass).
// SPEC §11
#[test]
fn a_limit_is_never_taken_for_a_verdict() {
    let tight = Limits {
        max_pattern_steps: 50,
        ..Limits::DEFAULT
    };
    let long = format!("\"{}\"", "a".repeat(200));
    for text in [
        r#"{"not":{"pattern":"c"}}"#,
        r#"{"anyOf":[{"pattern":"c"},{"type":"string"}]}"#,
        r#"{"oneOf":[{"pattern":"c"},{"type":"number"}]}"#,
        r#"{"if":{"pattern":"c"},"else":true}"#,
    ] {
        let s = Schema::with_limits(text.as_bytes(), tight).unwrap();
        assert_eq!(
            why(&s, &long),
            Err((
                Why::PatternTooCostly,
                "(args): a pattern too costly to check".into()
            )),
            "{text}"
        );
    }
}

/// What the validator cannot check is said when the schema is read, each its own kind.
// SPEC §11
#[test]
fn schemas_refused_at_registration() {
    let cases: &[(&str, SchemaErrorKind, usize)] = &[
        ("{", SchemaErrorKind::NotJson, 1),
        ("[]", SchemaErrorKind::NotASchema, 0),
        (r#"{"items":3}"#, SchemaErrorKind::NotASchema, 9),
        (r#"{"minLength":-1}"#, SchemaErrorKind::BadKeyword, 13),
        (r#"{"required":"a"}"#, SchemaErrorKind::BadKeyword, 12),
        (
            r#"{"$ref":"https://example.com/s.json"}"#,
            SchemaErrorKind::RemoteRef,
            8,
        ),
        (
            r##"{"$ref":"#/$defs/nope"}"##,
            SchemaErrorKind::UnresolvedRef,
            8,
        ),
        (
            r#"{"pattern":"(a)\\1"}"#,
            SchemaErrorKind::UnsupportedPattern,
            11,
        ),
        (r#"{"pattern":"(a"}"#, SchemaErrorKind::BadPattern, 11),
        (
            r#"{"patternProperties":{"\\p{L}":{}}}"#,
            SchemaErrorKind::UnsupportedPattern,
            22,
        ),
    ];
    for (text, kind, at) in cases {
        let e = Schema::new(text.as_bytes()).unwrap_err();
        assert_eq!((e.kind, e.at), (*kind, *at), "{text}");
    }
    // A property named like a keyword is a property; `const`/`enum` values are no schemas.
    let s = Schema::new(
        br#"{"properties":{"pattern":{"type":"string"},"$ref":{"const":{"$ref":"x"}}}}"#,
    )
    .unwrap();
    assert_eq!(why(&s, r#"{"pattern":"(","$ref":{"$ref":"x"}}"#), Ok(()));
    assert_eq!(
        why(&s, r#"{"pattern":1}"#).unwrap_err().1,
        "/pattern: expected string"
    );
}

/// A `$ref` to an `$anchor` or `$id` given twice in its resource is refused when the schema is
/// read (JSON Schema leaves its meaning undefined; the Rust `jsonschema` crate takes the last,
/// Python's `jsonschema` the first); a name given twice and never referred to, or once in each of two
/// resources, is no fault.
// SPEC §11
#[test]
fn a_ref_to_a_name_given_twice_is_refused() {
    let refused: &[(&str, usize)] = &[
        // What the `schema` fuzz target found: 5 is valid by the first, not by the last.
        (
            r##"{"$defs":{"bigint":{"$anchor":"bigint","maximum":10},"smallint":{"$anchor":"bigint","maximum":2}},"$ref":"#bigint"}"##,
            105,
        ),
        // One at the root, one below it; the ref inside a subschema.
        (
            r##"{"$anchor":"a","properties":{"x":{"$ref":"#a"},"y":{"$anchor":"a"}}}"##,
            41,
        ),
        // Draft-07 spells an anchor `"$id":"#name"`.
        (
            r##"{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"p":{"$id":"#n"},"q":{"$id":"#n"}},"items":{"$ref":"#n"}}"##,
            119,
        ),
        // 2020-12's `$dynamicAnchor` names the same fragment as an `$anchor`.
        (
            r##"{"$defs":{"a":{"$anchor":"n","maximum":10},"b":{"$dynamicAnchor":"n","maximum":2}},"$ref":"#n"}"##,
            90,
        ),
        // Two embedded resources with one URI.
        (
            r##"{"$id":"https://x.test/r","$defs":{"a":{"$id":"s","type":"string"},"b":{"$id":"s","type":"integer"}},"$ref":"s"}"##,
            108,
        ),
    ];
    for (text, at) in refused {
        let e = Schema::new(text.as_bytes()).expect_err(text);
        assert_eq!(
            (e.kind, e.at),
            (SchemaErrorKind::AmbiguousRef, *at),
            "{text}"
        );
        assert_eq!(
            e.to_string(),
            format!("schema at byte {at}: a $ref to a name the document gives twice")
        );
    }
    let accepted = [
        // Given twice, referred to by neither.
        r##"{"$defs":{"a":{"$anchor":"n","maximum":10},"b":{"$anchor":"n","maximum":2}}}"##,
        // Once in each of two resources: each `$ref` means its own resource's.
        r##"{"$id":"https://x.test/r","$defs":{"a":{"$anchor":"n","maximum":2},"b":{"$id":"b","$defs":{"m":{"$anchor":"n","maximum":10}},"$ref":"#n"}},"$ref":"#/$defs/b"}"##,
    ];
    for text in accepted {
        Schema::new(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    // The second: the ref inside `b` means `b`'s own anchor (maximum 10), the root's ref `b`.
    let s = Schema::new(accepted[1].as_bytes()).unwrap();
    assert_eq!(why(&s, "5"), Ok(()));
    assert_eq!(why(&s, "11").unwrap_err().1, "(args): must be <= 10");
}

/// A member name given twice would leave one of its values unchecked (lookups read the
/// first, a tool's parser may keep the last): the value is refused, at the second one.
// SPEC §11
#[test]
fn a_name_given_twice_is_refused() {
    let s = Schema::new(br#"{"properties":{"a":{"type":"integer"}}}"#).unwrap();
    for (value, text) in [
        (r#"{"a":1,"a":"x"}"#, "/a: property given more than once"),
        (r#"{"a":1,"\u0061":1}"#, "/a: property given more than once"),
        (
            r#"{"a":1,"b":[0,{"c":1,"d":2,"c":3}]}"#,
            "/b/1/c: property given more than once",
        ),
    ] {
        assert_eq!(
            why(&s, value),
            Err((Why::RepeatedName, text.into())),
            "{value}"
        );
    }
    assert_eq!(
        why(&s, r#"{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}"#),
        Ok(())
    );
}

/// A reference for the repeated-name rule, written apart from the validator: where the
/// first value stands, in the text's order, whose name decodes alike to an earlier name of
/// its object (serde_json decodes the names), or `None`.
fn first_repeat(text: &str) -> Option<usize> {
    fn value(b: &[u8], mut i: usize, found: &mut Option<usize>) -> usize {
        let ws = |b: &[u8], mut i: usize| {
            while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
                i += 1;
            }
            i
        };
        let string_end = |b: &[u8], mut i: usize| {
            i += 1;
            while b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i + 1
        };
        i = ws(b, i);
        match b[i] {
            b'{' | b'[' => {
                let close = if b[i] == b'{' { b'}' } else { b']' };
                let mut names = std::collections::HashSet::new();
                i = ws(b, i + 1);
                while b[i] != close {
                    if close == b'}' {
                        let end = string_end(b, i);
                        let name: String =
                            serde_json::from_slice(&b[i..end]).expect("a name the test wrote");
                        i = ws(b, ws(b, end) + 1);
                        if !names.insert(name) && found.is_none() {
                            *found = Some(i);
                        }
                    }
                    i = ws(b, value(b, i, found));
                    if b[i] == b',' {
                        i = ws(b, i + 1);
                    }
                }
                i + 1
            }
            b'"' => string_end(b, i),
            _ => {
                while b.get(i).is_some_and(|c| !b",]} \n".contains(c)) {
                    i += 1;
                }
                i
            }
        }
    }
    let mut found = None;
    value(text.as_bytes(), 0, &mut found);
    found
}

/// A generated value: objects whose names are drawn from a few spellings, some of which
/// decode alike (`a`, `\u0061`; `é`, `\u00e9`), nested in arrays and objects, with white
/// space here and there.
fn generated_value() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let names = prop::sample::select(vec![
        "a",
        r"\u0061",
        "b",
        "ab",
        r"a\u0062",
        "é",
        r"\u00e9",
        "key",
        "k\\\"",
        r#"\u006b\""#,
    ]);
    let leaf = prop::sample::select(vec!["1", "\"x\"", "null", "[]", "{}", "\"a\\\"\"", "2.5e1"])
        .prop_map(str::to_string);
    leaf.prop_recursive(4, 48, 6, move |inner| {
        let sp = prop::sample::select(vec!["", " ", "\n "]);
        prop_oneof![
            prop::collection::vec((inner.clone(), sp.clone()), 0..6).prop_map(|items| {
                let items: Vec<String> =
                    items.into_iter().map(|(v, s)| format!("{s}{v}")).collect();
                format!("[{}]", items.join(","))
            }),
            prop::collection::vec((names.clone(), inner, sp), 0..7).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(n, v, s)| format!("{s}\"{n}\"{s}:{s}{v}"))
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]

    /// Every value, under a schema that accepts anything: refused exactly when some object
    /// gives a name twice (however spelled), at the first repeat in the text's order; and
    /// under a budget too small for the names compared, a limit, never a pass.
    // SPEC §11
    #[test]
    fn a_name_given_twice_is_found_wherever_it_is(text in generated_value()) {
        let s = Schema::new(b"{}").unwrap();
        let ours = s.validate(text.as_bytes());
        match first_repeat(&text) {
            None => proptest::prop_assert_eq!(ours, Ok(()), "{}", text),
            Some(at) => {
                let e = ours.unwrap_err();
                proptest::prop_assert_eq!((e.why(), e.at()), (Why::RepeatedName, at), "{}", text);
                let tight = Schema::with_limits(
                    b"{}",
                    Limits { max_subschemas: 1, ..Limits::DEFAULT },
                )
                .unwrap();
                let e = tight.validate(text.as_bytes()).unwrap_err();
                proptest::prop_assert!(
                    matches!(e.why(), Why::RepeatedName | Why::TooManySubschemas),
                    "{}: {:?}", text, e
                );
            }
        }
    }
}

/// A schema that gives a name twice in any object is refused when it is read, at the second
/// one's value: this validator would apply both keywords, or look up the first, where other
/// readers (Python's `json`, serde_json, the providers) keep the last. The same names in
/// different objects are no repeat; the pairs compared pay the work budget.
// SPEC §11
#[test]
fn a_schema_giving_a_name_twice_is_refused() {
    for (text, at) in [
        (r#"{"type":"string","type":"integer"}"#, 24),
        (r#"{"properties":{"a":{},"\u0061":{"type":"null"}}}"#, 31),
        (r#"{"enum":[1,{"x":1,"y":2,"x":3}]}"#, 28),
        (r#"{"const":{"k":[{"k":0,"k":1}]}}"#, 26),
        (
            r##"{"$defs":{"d":{"minimum":1,"minimum":2}},"$ref":"#/$defs/d"}"##,
            37,
        ),
        // Before any keyword is read: the second `minimum` is fine, the first is not.
        (r#"{"minimum":"x","minimum":1}"#, 25),
        (r#"{"description":"a","description":"b"}"#, 33),
    ] {
        let e = Schema::new(text.as_bytes()).expect_err(text);
        assert_eq!(
            (e.kind, e.at),
            (SchemaErrorKind::RepeatedName, at),
            "{text}"
        );
    }
    for text in [
        r#"{"properties":{"type":{"type":"string"},"a":{"properties":{"type":{}}}}}"#,
        r#"{"enum":[{"x":1},{"x":2}],"type":"object"}"#,
    ] {
        assert!(Schema::new(text.as_bytes()).is_ok(), "{text}");
    }
    let many = format!(
        r#"{{"properties":{{{}}}}}"#,
        (0..1000)
            .map(|i| format!(r#""p{i}":{{}}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let e = Schema::new(many.as_bytes()).unwrap_err();
    assert_eq!(e.kind, SchemaErrorKind::TooCostly);
    let roomy = Limits {
        max_subschemas: 1_000_000,
        ..Limits::DEFAULT
    };
    let s = Schema::with_limits(many.as_bytes(), roomy).unwrap();
    assert_eq!(why(&s, r#"{"p999":1}"#), Ok(()));
}

/// A keyword spelled with escapes is that keyword to every JSON reader: registration reads it
/// as validation does (it was checked at validation but not read at registration, so a bad
/// `$ref` or pattern so spelled passed registration and then refused every value).
// SPEC §11
#[test]
fn a_keyword_spelled_with_escapes_is_that_keyword() {
    for (text, kind, at) in [
        (r#"{"\u0074ype":"strin"}"#, SchemaErrorKind::BadKeyword, 13),
        (
            r##"{"\u0024ref":"#/$defs/nowhere"}"##,
            SchemaErrorKind::UnresolvedRef,
            13,
        ),
        (
            r#"{"\u0070roperties":{"a":{"pattern":"(?<=a)b"}}}"#,
            SchemaErrorKind::UnsupportedPattern,
            35,
        ),
        (
            r#"{"items":{"\u006dinimum":"1"}}"#,
            SchemaErrorKind::BadKeyword,
            25,
        ),
    ] {
        let e = Schema::new(text.as_bytes()).expect_err(text);
        assert_eq!((e.kind, e.at), (kind, at), "{text}");
    }
    let s = Schema::new(
        br##"{"\u0024defs":{"n":{"type":"integer"}},"\u0070roperties":{"a":{"\u0024ref":"#/$defs/n"}}}"##,
    )
    .unwrap();
    assert_eq!(why(&s, r#"{"a":1}"#), Ok(()));
    assert_eq!(
        why(&s, r#"{"a":"x"}"#),
        Err((Why::Type(27), "/a: expected integer".into()))
    );
}
