//! SPEC §11 on real tool calls: each of BFCL's 3,302 ground-truth calls
//! (`tests/data/bfcl/tool-calls.ndjson`) checked against the input schema of its function
//! (`tests/data/bfcl/functions.ndjson`), answered as Python `jsonschema` 4.26.0 answers:
//! 2,932 valid (tests/data/README.md).
//!
//! A call's id is its BFCL entry's id, `_`, and its place in the answer
//! (`live_multiple_2-1-0_0`); a declaration carries its entry's id (`live_multiple_2-1-0`)
//! and its function's name: the call's declaration is the one with both.

use std::collections::BTreeMap;
use std::fs;

use polyweave_tests::{bfcl_bytes, data_dir, ndjson_lines, BFCL_LINES};
use polyweave_tool_adapter::frame::Frame;
use polyweave_tool_adapter::json::find_member;
use polyweave_tool_adapter::json::schema::Schema;

/// Lines of `functions.ndjson`.
const DECLARATIONS: usize = 2452;
/// Calls whose args satisfy their declaration's schema (Python `jsonschema` 4.26.0).
const VALID: usize = 2932;
/// Calls whose entry has a declaration, but none of the call's name.
const NAME_NOT_DECLARED: usize = 8;
/// Calls whose entry has no declaration at all.
const ENTRY_NOT_DECLARED: usize = 359;
/// The calls whose ground-truth args break their own schema, with what the validator says.
const INVALID: &[(&str, &str)] = &[
    (
        "live_parallel_15-11-0_1",
        "/unit: not one of the allowed values",
    ),
    (
        "live_parallel_multiple_2-2-0_1",
        "/command: not one of the allowed values",
    ),
    ("parallel_multiple_94_0", "/elements/0: expected integer"),
];

/// The declarations: (entry id, function name) → the input schema as written.
fn declarations(file: &[u8]) -> BTreeMap<(String, String), Vec<u8>> {
    let mut out = BTreeMap::new();
    for (i, line) in ndjson_lines(file).enumerate() {
        let tree: serde_json::Value = serde_json::from_slice(line).expect("JSON");
        let key = (
            tree["id"].as_str().expect("id").to_string(),
            tree["name"].as_str().expect("name").to_string(),
        );
        let schema = find_member(line, b"input_schema", 64)
            .expect("valid JSON")
            .unwrap_or_else(|| panic!("line {}: no input_schema", i + 1));
        let before = out.insert(key.clone(), schema.to_vec());
        assert!(before.is_none(), "declared twice: {key:?}");
    }
    out
}

fn decoded(s: polyweave_tool_adapter::json::JsonStr<'_>) -> String {
    String::from_utf8(s.decoded().collect()).expect("UTF-8")
}

#[test]
fn every_call_is_checked_against_its_functions_schema() {
    let path = data_dir().join("bfcl/functions.ndjson");
    let functions = fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let declared = declarations(&functions);
    assert_eq!(declared.len(), DECLARATIONS);
    // Every declaration's schema is one the validator reads whole.
    for ((id, name), schema) in &declared {
        if let Err(e) = Schema::new(schema) {
            panic!("{id} {name}: refused: {e}");
        }
    }

    let calls = bfcl_bytes();
    let (mut valid, mut name_not_declared, mut entry_not_declared) = (0, 0, 0);
    let mut invalid = Vec::new();
    for line in ndjson_lines(&calls) {
        let frame = Frame::parse_validated(line, 32).expect("a frame");
        let call = frame.tool_call().expect("a TOOL_CALL");
        let id = decoded(call.id.expect("an id"));
        let name = decoded(call.name.expect("a name"));
        let (entry, _) = id.rsplit_once('_').expect("id ends in _N");
        let Some(schema) = declared.get(&(entry.to_string(), name.clone())) else {
            if declared.keys().any(|(e, _)| e == entry) {
                name_not_declared += 1;
            } else {
                entry_not_declared += 1;
            }
            continue;
        };
        let schema = Schema::new(schema).expect("read above");
        let mut words = vec![0u32; schema.index_words().unwrap()];
        let indexed = schema.indexed(&mut words).unwrap();
        assert_eq!(
            indexed.validate(call.args),
            schema.validate(call.args),
            "{id}: indexed"
        );
        match schema.validate(call.args) {
            Ok(()) => valid += 1,
            Err(e) => {
                assert!(!e.is_limit(), "{id}: a limit was hit");
                invalid.push((id, e.display(&schema, call.args).to_string()));
            }
        }
    }
    let want: Vec<(String, String)> = INVALID
        .iter()
        .map(|(id, why)| (id.to_string(), why.to_string()))
        .collect();
    assert_eq!(invalid, want);
    assert_eq!(
        (valid, name_not_declared, entry_not_declared),
        (VALID, NAME_NOT_DECLARED, ENTRY_NOT_DECLARED)
    );
    assert_eq!(
        VALID + INVALID.len() + NAME_NOT_DECLARED + ENTRY_NOT_DECLARED,
        BFCL_LINES
    );
}
