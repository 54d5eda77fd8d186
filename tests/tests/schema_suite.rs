//! SPEC §11 conformance: the JSON Schema Test Suite (json-schema-org; its draft2020-12 and
//! draft7 files of §11's keywords and of those the validator reads besides, copied unchanged
//! under `tests/data/json-schema-test-suite/`). Every group's schema goes through
//! `Schema::new`, every test's data through `validate`, and the answer is the test's `valid`.
//! The groups `Schema::new` refuses are listed here with the reason (a `$ref` to another
//! document, a Unicode property escape), and no other group may be refused; the two tests
//! whose answer rests on `unevaluatedProperties`, which §11 does not read, are listed too.
//!
//! The schemas and values are handed over as the bytes the suite's files hold them in
//! (indented, over several lines), sliced out of the file without being parsed and written
//! again; serde_json reads the same files to check the slicing.

use std::fs;
use std::path::{Path, PathBuf};

use polyweave_tests::data_dir;
use polyweave_tool_adapter::json::schema::{Draft, Schema, SchemaErrorKind};
use polyweave_tool_adapter::json::{skip_value, skip_ws, Members};

/// What `$schema` says for a draft-07 schema (SPEC §11: a schema naming draft-07 is read as
/// draft-07 reads it). The suite's draft7 schemas say nothing (the folder says it): the test
/// writes it into their root, as a host registering a draft-07 tool would have it.
const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

/// Why a group is left out: the kind `Schema::new` refuses it with, and the reason.
type Reason = (SchemaErrorKind, &'static str);

const METASCHEMA: Reason = (
    SchemaErrorKind::RemoteRef,
    "a `$ref` to the JSON Schema metaschema, another document",
);
const UNICODE_PROPERTY: Reason = (
    SchemaErrorKind::UnsupportedPattern,
    "a Unicode property escape (`\\p{…}`), which SPEC §11 lets the validator count as \
     beyond it",
);

/// The groups `Schema::new` refuses: (file, group description, why).
const LEFT_OUT: &[(&str, &str, Reason)] = &[
    (
        "draft2020-12/defs.json",
        "validate definition against metaschema",
        METASCHEMA,
    ),
    (
        "draft2020-12/pattern.json",
        "pattern with Unicode property escape requires unicode mode",
        UNICODE_PROPERTY,
    ),
    (
        "draft2020-12/patternProperties.json",
        "patternProperties with Unicode property escape",
        UNICODE_PROPERTY,
    ),
    (
        "draft2020-12/ref.json",
        "remote ref, containing refs itself",
        METASCHEMA,
    ),
    (
        "draft7/definitions.json",
        "validate definition against metaschema",
        METASCHEMA,
    ),
    (
        "draft7/ref.json",
        "remote ref, containing refs itself",
        METASCHEMA,
    ),
];

/// Tests whose answer in the suite rests on `unevaluatedProperties`, a keyword SPEC §11 does
/// not list ("other keywords are ignored"): the validator, ignoring it, gives the other
/// answer. (file, group, test.)
const UNEVALUATED: &[(&str, &str, &str)] = &[
    (
        "draft2020-12/not.json",
        "collect annotations inside a 'not', even if collection is disabled",
        "unevaluated property",
    ),
    (
        "draft2020-12/ref.json",
        "ref creates new scope when adjacent to keywords",
        "referenced subschema doesn't see annotations from properties",
    ),
];

/// Per file: (file, groups, tests run, groups left out).
const FIGURES: &[(&str, usize, usize, usize)] = &[
    ("draft2020-12/additionalProperties.json", 9, 21, 0),
    ("draft2020-12/allOf.json", 12, 30, 0),
    ("draft2020-12/anchor.json", 4, 8, 0),
    ("draft2020-12/anyOf.json", 8, 18, 0),
    ("draft2020-12/boolean_schema.json", 2, 18, 0),
    ("draft2020-12/const.json", 17, 54, 0),
    ("draft2020-12/contains.json", 7, 21, 0),
    ("draft2020-12/default.json", 3, 7, 0),
    ("draft2020-12/defs.json", 1, 0, 1),
    ("draft2020-12/dependentRequired.json", 4, 20, 0),
    ("draft2020-12/dependentSchemas.json", 4, 20, 0),
    ("draft2020-12/enum.json", 15, 51, 0),
    ("draft2020-12/exclusiveMaximum.json", 1, 4, 0),
    ("draft2020-12/exclusiveMinimum.json", 1, 4, 0),
    ("draft2020-12/if-then-else.json", 12, 30, 0),
    ("draft2020-12/infinite-loop-detection.json", 1, 2, 0),
    ("draft2020-12/items.json", 10, 29, 0),
    ("draft2020-12/maxContains.json", 5, 14, 0),
    ("draft2020-12/maxItems.json", 2, 6, 0),
    ("draft2020-12/maxLength.json", 2, 7, 0),
    ("draft2020-12/maxProperties.json", 3, 10, 0),
    ("draft2020-12/maximum.json", 2, 8, 0),
    ("draft2020-12/minContains.json", 8, 28, 0),
    ("draft2020-12/minItems.json", 2, 6, 0),
    ("draft2020-12/minLength.json", 2, 7, 0),
    ("draft2020-12/minProperties.json", 2, 10, 0),
    ("draft2020-12/minimum.json", 2, 11, 0),
    ("draft2020-12/multipleOf.json", 5, 11, 0),
    ("draft2020-12/not.json", 9, 40, 0),
    ("draft2020-12/oneOf.json", 11, 27, 0),
    ("draft2020-12/pattern.json", 3, 9, 1),
    ("draft2020-12/patternProperties.json", 6, 23, 1),
    ("draft2020-12/prefixItems.json", 4, 11, 0),
    ("draft2020-12/properties.json", 6, 28, 0),
    ("draft2020-12/propertyNames.json", 6, 22, 0),
    ("draft2020-12/ref.json", 36, 77, 1),
    ("draft2020-12/required.json", 5, 18, 0),
    ("draft2020-12/type.json", 11, 80, 0),
    ("draft2020-12/uniqueItems.json", 6, 69, 0),
    ("draft7/additionalItems.json", 10, 19, 0),
    ("draft7/additionalProperties.json", 7, 16, 0),
    ("draft7/allOf.json", 12, 30, 0),
    ("draft7/anyOf.json", 8, 18, 0),
    ("draft7/boolean_schema.json", 2, 18, 0),
    ("draft7/const.json", 17, 54, 0),
    ("draft7/contains.json", 7, 21, 0),
    ("draft7/default.json", 3, 7, 0),
    ("draft7/definitions.json", 1, 0, 1),
    ("draft7/dependencies.json", 7, 36, 0),
    ("draft7/enum.json", 14, 45, 0),
    ("draft7/exclusiveMaximum.json", 1, 4, 0),
    ("draft7/exclusiveMinimum.json", 1, 4, 0),
    ("draft7/if-then-else.json", 12, 30, 0),
    ("draft7/infinite-loop-detection.json", 1, 2, 0),
    ("draft7/items.json", 9, 28, 0),
    ("draft7/maxItems.json", 2, 6, 0),
    ("draft7/maxLength.json", 2, 7, 0),
    ("draft7/maxProperties.json", 3, 10, 0),
    ("draft7/maximum.json", 2, 8, 0),
    ("draft7/minItems.json", 2, 6, 0),
    ("draft7/minLength.json", 2, 7, 0),
    ("draft7/minProperties.json", 2, 10, 0),
    ("draft7/minimum.json", 2, 11, 0),
    ("draft7/multipleOf.json", 5, 11, 0),
    ("draft7/not.json", 8, 38, 0),
    ("draft7/oneOf.json", 11, 27, 0),
    ("draft7/pattern.json", 2, 9, 0),
    ("draft7/patternProperties.json", 5, 23, 0),
    ("draft7/properties.json", 6, 28, 0),
    ("draft7/propertyNames.json", 6, 22, 0),
    ("draft7/ref.json", 35, 76, 1),
    ("draft7/required.json", 5, 18, 0),
    ("draft7/type.json", 11, 80, 0),
    ("draft7/uniqueItems.json", 6, 69, 0),
];

/// Deep enough for every file of the suite (the deepest nests a dozen levels).
const FILE_DEPTH: u8 = 64;

fn suite_dir() -> PathBuf {
    data_dir().join("json-schema-test-suite")
}

/// One test of a group: the value as written in the file, and the suite's answer.
struct Case<'a> {
    description: String,
    data: &'a [u8],
    valid: bool,
}

/// One group: its schema as written in the file, and its tests.
struct Group<'a> {
    description: String,
    schema: &'a [u8],
    tests: Vec<Case<'a>>,
}

/// The elements of the array `value`, each as written.
fn elements(value: &[u8]) -> Vec<&[u8]> {
    let mut pos = skip_ws(value, 0);
    assert_eq!(value.get(pos), Some(&b'['), "an array");
    pos = skip_ws(value, pos + 1);
    let mut out = Vec::new();
    if value.get(pos) == Some(&b']') {
        return out;
    }
    loop {
        let end = skip_value(value, pos, FILE_DEPTH).expect("valid JSON");
        out.push(&value[pos..end]);
        pos = skip_ws(value, end);
        match value.get(pos) {
            Some(b',') => pos = skip_ws(value, pos + 1),
            Some(b']') => return out,
            other => panic!("after an array element: {other:?}"),
        }
    }
}

/// The members of the object `value`: (decoded name, value as written).
fn members(value: &[u8]) -> Vec<(String, &[u8])> {
    Members::new(value, 0, FILE_DEPTH)
        .expect("an object")
        .map(|m| {
            let m = m.expect("valid JSON");
            let name = String::from_utf8(m.key.decoded().collect()).expect("UTF-8");
            (name, m.value)
        })
        .collect()
}

fn member<'a>(object: &[(String, &'a [u8])], name: &str) -> &'a [u8] {
    object
        .iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no member {name:?}"))
        .1
}

fn string(value: &[u8]) -> String {
    serde_json::from_slice(value).expect("a JSON string")
}

/// The groups of one file of the suite, read from `bytes` as written.
fn groups(bytes: &[u8]) -> Vec<Group<'_>> {
    elements(bytes)
        .into_iter()
        .map(|g| {
            let g = members(g);
            let tests = elements(member(&g, "tests"))
                .into_iter()
                .map(|t| {
                    let t = members(t);
                    Case {
                        description: string(member(&t, "description")),
                        data: member(&t, "data"),
                        valid: match member(&t, "valid") {
                            b"true" => true,
                            b"false" => false,
                            other => panic!("valid: {}", String::from_utf8_lossy(other)),
                        },
                    }
                })
                .collect();
            Group {
                description: string(member(&g, "description")),
                schema: member(&g, "schema"),
                tests,
            }
        })
        .collect()
}

/// The slices [`groups`] takes out are the values serde_json reads from the same file.
fn check_slicing(file: &str, bytes: &[u8], groups: &[Group<'_>]) {
    let tree: serde_json::Value = serde_json::from_slice(bytes).expect("JSON");
    let tree = tree.as_array().expect("an array of groups");
    assert_eq!(tree.len(), groups.len(), "{file}");
    let parse = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).expect("JSON");
    for (want, got) in tree.iter().zip(groups) {
        assert_eq!(want["description"], got.description.as_str(), "{file}");
        assert_eq!(
            want["schema"],
            parse(got.schema),
            "{file}: {}",
            got.description
        );
        let tests = want["tests"].as_array().expect("tests");
        assert_eq!(tests.len(), got.tests.len(), "{file}: {}", got.description);
        for (w, g) in tests.iter().zip(&got.tests) {
            assert_eq!(w["description"], g.description.as_str());
            assert_eq!(w["data"], parse(g.data), "{file}: {}", g.description);
            assert_eq!(w["valid"], g.valid);
        }
    }
}

/// A draft7 file's schema with `"$schema": DRAFT7` written first into its root object (a
/// boolean schema is the same in both drafts and stays as it is).
fn as_draft7(schema: &[u8]) -> Vec<u8> {
    let start = skip_ws(schema, 0);
    if schema.get(start) != Some(&b'{') {
        return schema.to_vec();
    }
    let rest = &schema[start + 1..];
    let empty = rest.get(skip_ws(rest, 0)) == Some(&b'}');
    let mut out = Vec::with_capacity(schema.len() + DRAFT7.len() + 16);
    out.extend_from_slice(&schema[..=start]);
    out.extend_from_slice(format!("\"$schema\":\"{DRAFT7}\"").as_bytes());
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(rest);
    out
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What one file gave: (groups, tests run, groups left out, tests of [`UNEVALUATED`]), and
/// every disagreement.
fn run_file(file: &str, problems: &mut Vec<String>) -> (usize, usize, usize, usize) {
    let path = suite_dir().join(file);
    let bytes = fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let groups = groups(&bytes);
    check_slicing(file, &bytes, &groups);
    let draft7 = file.starts_with("draft7/");
    let (mut run, mut left_out, mut otherwise) = (0, 0, 0);
    for group in &groups {
        let schema = if draft7 {
            as_draft7(group.schema)
        } else {
            group.schema.to_vec()
        };
        let listed = LEFT_OUT
            .iter()
            .find(|(f, g, _)| *f == file && *g == group.description);
        let at = format!("{file}: {:?}", group.description);
        match (Schema::new(&schema), listed) {
            (Err(e), Some((_, _, (kind, _)))) => {
                if e.kind != *kind {
                    problems.push(format!("{at}: refused as {:?}, not {kind:?}: {e}", e.kind));
                }
                left_out += 1;
            }
            (Err(e), None) => problems.push(format!("{at}: refused: {e}")),
            (Ok(_), Some((_, _, (_, why)))) => {
                problems.push(format!("{at}: accepted, but listed as left out ({why})"));
            }
            (Ok(s), None) => {
                // A boolean schema has no `$schema`: it means the same in both drafts.
                let marked = schema.as_slice() != group.schema;
                let draft = if marked {
                    Draft::Draft07
                } else {
                    Draft::Draft2020_12
                };
                if s.draft() != draft {
                    problems.push(format!("{at}: read as {:?}", s.draft()));
                }
                let mut words = vec![0u32; s.index_words().expect("indexable")];
                let indexed = s.indexed(&mut words).expect("sized by index_words");
                for case in &group.tests {
                    let got = s.validate(case.data);
                    // The index changes where the keywords are read from, never the answer.
                    if indexed.validate(case.data) != got {
                        problems.push(format!("{at} / {:?}: indexed differs", case.description));
                    }
                    let at = format!("{at} / {:?} ({})", case.description, show(case.data));
                    let flipped =
                        UNEVALUATED.contains(&(file, &group.description, &case.description));
                    let valid = case.valid != flipped;
                    otherwise += usize::from(flipped);
                    if let Err(e) = got {
                        let text = e.display(&s, case.data).to_string();
                        let pointer = text.starts_with("(args): ") || text.starts_with('/');
                        if e.at() >= case.data.len() || !pointer {
                            problems.push(format!("{at}: at {} says {text:?}", e.at()));
                        }
                    }
                    match got {
                        Err(e) if e.is_limit() => problems.push(format!(
                            "{at}: a limit was hit: {}",
                            e.display(&s, case.data)
                        )),
                        Ok(()) if !valid => problems.push(format!("{at}: accepted")),
                        Err(e) if valid => {
                            problems.push(format!("{at}: rejected: {}", e.display(&s, case.data)))
                        }
                        _ => {}
                    }
                    run += 1;
                }
            }
        }
    }
    (groups.len(), run, left_out, otherwise)
}

/// SPEC §11 "Conformance": every test of every group of the copied files, answered as the
/// suite says; the groups left out are exactly the listed ones.
#[test]
fn every_suite_test_gets_the_suites_answer() {
    let mut problems = Vec::new();
    let mut got = Vec::new();
    let mut otherwise = 0;
    for &(file, ..) in FIGURES {
        let (groups, run, left_out, flipped) = run_file(file, &mut problems);
        otherwise += flipped;
        println!("{file}: {groups} groups, {run} tests run, {left_out} groups left out");
        got.push((file, groups, run, left_out));
    }
    assert!(
        problems.is_empty(),
        "{} disagreements with the suite:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
    assert_eq!(got, FIGURES);
    let total = |f: fn(&(&str, usize, usize, usize)) -> usize| FIGURES.iter().map(f).sum::<usize>();
    println!(
        "{} files: {} groups, {} tests run, {} groups left out",
        FIGURES.len(),
        total(|f| f.1),
        total(|f| f.2),
        total(|f| f.3)
    );
    assert_eq!(
        (
            FIGURES.len(),
            total(|f| f.1),
            total(|f| f.2),
            total(|f| f.3)
        ),
        (74, 478, 1657, LEFT_OUT.len())
    );
    assert_eq!(LEFT_OUT.len(), 6);
    // Each test answered otherwise is found, once.
    assert_eq!(otherwise, UNEVALUATED.len());
}

/// The same schemas with their members sorted and no white space, and the same values with
/// no white space, get the same answers: the validator reads JSON, not a layout.
#[test]
fn answers_do_not_depend_on_layout_or_member_order() {
    let mut compared = 0;
    let mut problems = Vec::new();
    for &(file, ..) in FIGURES {
        let bytes = fs::read(suite_dir().join(file)).expect("readable");
        let draft7 = file.starts_with("draft7/");
        for group in groups(&bytes) {
            if LEFT_OUT
                .iter()
                .any(|(f, g, _)| *f == file && *g == group.description)
            {
                continue;
            }
            // serde_json's map keeps members sorted by name.
            let tree: serde_json::Value = serde_json::from_slice(group.schema).expect("JSON");
            let sorted = serde_json::to_vec(&tree).expect("JSON");
            let (written, sorted) = if draft7 {
                (as_draft7(group.schema), as_draft7(&sorted))
            } else {
                (group.schema.to_vec(), sorted)
            };
            let written = Schema::new(&written).expect("read in the other test");
            let sorted = Schema::new(&sorted).expect("sorted members");
            for case in &group.tests {
                let value: serde_json::Value = serde_json::from_slice(case.data).expect("JSON");
                let compact = serde_json::to_vec(&value).expect("JSON");
                let want = written.validate(case.data).is_ok();
                if sorted.validate(&compact).is_ok() != want {
                    problems.push(format!(
                        "{file}: {:?} / {:?}: {want} as written, not compact and sorted",
                        group.description, case.description
                    ));
                }
                compared += 1;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(compared, 1657);
}

/// The copy holds exactly the files of [`FIGURES`], its README and its LICENSE.
#[test]
fn the_copy_holds_the_listed_files() {
    let mut found: Vec<String> = Vec::new();
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).expect("readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let dir = suite_dir();
    walk(&dir, &dir, &mut found);
    found.sort();
    let mut want: Vec<String> = FIGURES.iter().map(|f| f.0.to_string()).collect();
    want.extend(["LICENSE".to_string(), "README.md".to_string()]);
    want.sort();
    assert_eq!(found, want);
    // Every listed group belongs to a file the test runs.
    for (file, group, _) in LEFT_OUT {
        assert!(FIGURES.iter().any(|f| f.0 == *file), "{file}: {group}");
    }
}

/// The draft-07 marker goes into the root object, before its first member.
#[test]
fn draft7_marker_goes_first_in_the_root() {
    let marked = |s: &str| String::from_utf8(as_draft7(s.as_bytes())).expect("UTF-8");
    assert_eq!(
        marked("{\n  \"type\": \"integer\"\n}"),
        format!("{{\"$schema\":\"{DRAFT7}\",\n  \"type\": \"integer\"\n}}")
    );
    assert_eq!(marked(" { } "), format!(" {{\"$schema\":\"{DRAFT7}\" }} "));
    assert_eq!(marked("true"), "true");
    assert_eq!(marked("false"), "false");
}
