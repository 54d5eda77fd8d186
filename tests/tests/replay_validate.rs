//! `polyweave-replay --validate SCHEMA.json` (SPEC §11): NDJSON values on standard input, one
//! answer line each, exactly; a line that is not JSON answered as such; a schema the validator
//! refuses ends the run with status 2 and one line on stderr. tests/schema/differential.py
//! runs the same program against Python `jsonschema` on real tools' schemas.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use polyweave_tests::library::replay_bin;
use polyweave_tests::scenarios::scratch;

/// A weather tool's input schema: the keywords real MCP servers' tools use.
const WEATHER: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "city": {"type": "string", "minLength": 1},
    "unit": {"enum": ["celsius", "fahrenheit"]},
    "days": {"type": "integer", "minimum": 1, "maximum": 14},
    "stops": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["city"],
  "additionalProperties": false
}"#;

/// Runs `--validate` on `schema` (written to a file) with `stdin`.
fn validate(name: &str, schema: &str, stdin: &[u8]) -> (Output, String) {
    let path = scratch("replay-validate", name, schema);
    let mut child = Command::new(replay_bin())
        .arg("--validate")
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running polyweave-replay");
    // A refused schema ends the program before it reads: the pipe may be closed by then.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    (out, path.display().to_string())
}

fn stdout_lines(out: &Output) -> Vec<&str> {
    std::str::from_utf8(&out.stdout).unwrap().lines().collect()
}

#[test]
fn validate_answers_each_line_with_the_validators_verdict() {
    let input = concat!(
        "{\"city\":\"Paris\"}\n",
        "{\"city\":\"Paris\",\"unit\":\"celsius\",\"days\":3.0,\"stops\":[\"Lyon\"]}\n",
        "  { \"city\" : \"\\u004Cyon\" }  \r\n",
        "{\"city\":7}\n",
        "{}\n",
        "{\"city\":\"Oslo\",\"unit\":\"kelvin\"}\n",
        "{\"city\":\"Oslo\",\"days\":0}\n",
        "{\"city\":\"Oslo\",\"stops\":[\"a\",2]}\n",
        "{\"city\":\"Oslo\",\"wind\":true}\n",
        "[\"Paris\"]\n",
        "{\"city\":\"Paris\"\n",
        "\n",
        "{\"city\":\"\\\"quoted\\\"\",\"days\":1.5}",
    );
    let (out, _) = validate("weather.json", WEATHER, input.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    assert_eq!(
        stdout_lines(&out),
        [
            r#"{"valid":true}"#,
            r#"{"valid":true}"#,
            r#"{"valid":true}"#,
            r#"{"valid":false,"error":"/city: expected string"}"#,
            r#"{"valid":false,"error":"(args): missing required property \"city\""}"#,
            r#"{"valid":false,"error":"/unit: not one of the allowed values"}"#,
            r#"{"valid":false,"error":"/days: must be >= 1"}"#,
            r#"{"valid":false,"error":"/stops/1: expected string"}"#,
            r#"{"valid":false,"error":"/wind: property not allowed"}"#,
            r#"{"valid":false,"error":"(args): expected object"}"#,
            r#"{"valid":false,"error":"(args): not valid JSON: invalid JSON at byte 15: UnexpectedEnd"}"#,
            r#"{"valid":false,"error":"(args): not valid JSON: invalid JSON at byte 0: UnexpectedEnd"}"#,
            r#"{"valid":false,"error":"/days: expected integer"}"#,
        ]
    );
}

#[test]
fn validate_with_no_input_prints_nothing() {
    let (out, _) = validate("empty-input.json", WEATHER, b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn a_refused_schema_exits_2_with_its_error_on_one_line() {
    for (name, schema, why) in [
        (
            "remote-ref.json",
            r#"{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}"#,
            "schema at byte 43: a $ref to another document (never fetched)",
        ),
        (
            "not-json.json",
            r#"{"type":"object""#,
            "schema at byte 16: not valid JSON",
        ),
        (
            "not-a-schema.json",
            "17",
            "schema at byte 0: a schema must be an object or a boolean",
        ),
        (
            "bad-keyword.json",
            r#"{"type":"strin"}"#,
            "schema at byte 8: a keyword's value has the wrong shape",
        ),
    ] {
        let (out, path) = validate(name, schema, b"{}\n");
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(out.stdout.is_empty(), "{name}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("polyweave-replay: {path}: {why}\n"),
            "{name}"
        );
    }
}

#[test]
fn validate_takes_no_other_file_and_needs_a_schema() {
    let path = scratch("replay-validate", "extra.json", WEATHER);
    for args in [
        vec!["--validate", path.to_str().unwrap(), "values.ndjson"],
        vec!["--validate"],
    ] {
        let out = Command::new(replay_bin())
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let missing = Path::new("/nonexistent/schema.json");
    let out = Command::new(replay_bin())
        .arg("--validate")
        .arg(missing)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "polyweave-replay: /nonexistent/schema.json: No such file or directory (os error 2)\n"
    );
}

#[test]
fn a_limit_hit_is_marked_as_no_verdict() {
    // Each level of the value is a level of subschemas: 40 is past the default depth of 32.
    let nested =
        r##"{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}"##;
    let input = format!(
        "{}{}\n{}{}\n",
        "[".repeat(40),
        "]".repeat(40),
        "[".repeat(10),
        "]".repeat(10)
    );
    let (out, _) = validate("nested.json", nested, input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout_lines(&out),
        [
            r#"{"valid":false,"limit":true,"error":"(args): too deeply nested to check"}"#,
            r#"{"valid":true}"#,
        ]
    );
}

/// Where Python `jsonschema` (tests/schema/differential.py's reference) answers in doubles,
/// the validator answers exactly: `1e400` is an integer and `1e-400` is not, `19.99` is a
/// multiple of `0.01`, `3e100` of 3, `9007199254740993` is not `9007199254740992`. The
/// differential test keeps its values where both agree; these are the exact answers.
#[test]
fn numbers_are_read_exactly_where_a_double_would_round() {
    for (schema, input, want) in [
        (
            r#"{"type":"integer"}"#,
            "1e400\n1e-400\n1.0e2\n",
            &[
                r#"{"valid":true}"#,
                r#"{"valid":false,"error":"(args): expected integer"}"#,
                r#"{"valid":true}"#,
            ][..],
        ),
        (
            r#"{"multipleOf":0.01}"#,
            "19.99\n0.07\n0.015\n",
            &[
                r#"{"valid":true}"#,
                r#"{"valid":true}"#,
                r#"{"valid":false,"error":"(args): must be a multiple of 0.01"}"#,
            ],
        ),
        (
            r#"{"multipleOf":3}"#,
            "3e100\n3e-100\n",
            &[
                r#"{"valid":true}"#,
                r#"{"valid":false,"error":"(args): must be a multiple of 3"}"#,
            ],
        ),
        (
            r#"{"const":9007199254740992}"#,
            "9007199254740992.0\n9007199254740993E0\n",
            &[
                r#"{"valid":true}"#,
                r#"{"valid":false,"error":"(args): not the allowed value"}"#,
            ],
        ),
        (
            r#"{"maximum":0.3}"#,
            "0.30000000000000004\n3e-1\n",
            &[
                r#"{"valid":false,"error":"(args): must be <= 0.3"}"#,
                r#"{"valid":true}"#,
            ],
        ),
    ] {
        let (out, _) = validate("numbers.json", schema, input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{schema}");
        assert_eq!(stdout_lines(&out), want, "{schema}");
    }
}
