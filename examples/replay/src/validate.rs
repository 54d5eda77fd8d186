//! `--validate SCHEMA.json`: the argument validator (SPEC §11) on values read from standard
//! input, one JSON value per line, one answer line each:
//! `{"valid":true}`, or `{"valid":false,"error":"<where>: <why>"}` with the validator's text
//! (`/city: expected string`); a line that is not JSON gets
//! `{"valid":false,"error":"(args): not valid JSON: <the scanner's error>"}`, and a value on
//! which a limit of the validator was hit (no verdict) adds `"limit":true`. A schema the
//! validator refuses is the run's error (exit status 2, its text on stderr).

use std::io::{self, BufRead, Write};

use polyweave_tool_adapter::json;
use polyweave_tool_adapter::json::schema::Schema;

use crate::jstr;

/// Depth the "is it JSON" check allows: the scanner's most, so that a deep value reaches the
/// validator, whose own depth limit answers it (as a limit, not as "not JSON").
const SCAN_DEPTH: u8 = u8::MAX;

/// Reads the schema at `path`, then answers every line of standard input on standard output.
pub fn run_validate(path: &str) -> Result<(), String> {
    let text = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let schema = Schema::new(&text).map_err(|e| format!("{path}: {e}"))?;
    // Indexed, as a host validating many values registers it: the same answers, less work.
    let mut index = vec![0u32; schema.index_words().map_err(|e| format!("{path}: {e}"))?];
    let schema = schema
        .indexed(&mut index)
        .map_err(|e| format!("{path}: {e}"))?;
    let stdin = io::stdin().lock();
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in stdin.split(b'\n') {
        // A CRLF file's CR stays on the line: JSON white space after the value.
        let line = line.map_err(|e| format!("standard input: {e}"))?;
        writeln!(out, "{}", answer(&schema, &line)).map_err(|e| format!("standard output: {e}"))?;
    }
    out.flush().map_err(|e| format!("standard output: {e}"))
}

/// The answer line for one value's text.
fn answer(schema: &Schema<'_>, value: &[u8]) -> String {
    if let Err(e) = json::validate(value, SCAN_DEPTH) {
        return format!(
            "{{\"valid\":false,\"error\":{}}}",
            jstr(&format!("(args): not valid JSON: {e}"))
        );
    }
    match schema.validate(value) {
        Ok(()) => "{\"valid\":true}".to_string(),
        Err(invalid) => {
            let text = jstr(&invalid.display(schema, value).to_string());
            if invalid.is_limit() {
                format!("{{\"valid\":false,\"limit\":true,\"error\":{text}}}")
            } else {
                format!("{{\"valid\":false,\"error\":{text}}}")
            }
        }
    }
}
