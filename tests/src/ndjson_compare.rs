//! The SPEC §6 comparison of a replay program's NDJSON output with the expected one, shared by
//! every test that runs a replay program (the Rust one in `conformance`, the C one in
//! `c_replay`).
//!
//! Output lines are grouped by channel (`model`, `consumer`, each adapter call, hooks,
//! settlement, rejected, refused, trace). Inside a channel the sequence of parsed JSON values
//! must be equal, with object member order ignored and numbers compared exactly as decimals
//! (`1.0` = `1` = `1e0`, `1e400` ≠ `1e401`, every digit of a long integer counts).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// A JSON number as an exact decimal: `(negative, significand digits, exponent)`,
/// meaning `±digits × 10^exponent`, with no leading or trailing zero digits; zero is `(false, "", 0)`.
pub fn decimal(text: &str) -> (bool, String, i128) {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => {
            let e = &rest[i + 1..];
            let e = e.strip_prefix('+').unwrap_or(e);
            let e: i128 = e
                .parse()
                .unwrap_or_else(|_| panic!("exponent out of range in {text}"));
            (&rest[..i], e)
        }
        None => (rest, 0),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    assert!(
        !int.is_empty() && (int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit()),
        "not a JSON number: {text}"
    );
    let digits = format!("{int}{frac}");
    let mut exp = exp - frac.len() as i128;
    let digits = digits.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    exp += (digits.len() - trimmed.len()) as i128;
    if trimmed.is_empty() {
        return (false, String::new(), 0);
    }
    (negative, trimmed.to_string(), exp)
}

/// JSON equality for conformance: object member order ignored, numbers as exact decimals.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => decimal(&x.to_string()) == decimal(&y.to_string()),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => false,
    }
}

/// The channel an output event belongs to (SPEC §6); panics for an event of no channel.
pub fn channel(event: &Value) -> String {
    if let Some(to) = event.get("to").and_then(Value::as_str) {
        return match to {
            "adapter" => format!("adapter {}", event["call"]),
            other => other.to_string(),
        };
    }
    for key in ["hook", "settled", "rejected", "refused", "trace"] {
        if event.get(key).is_some() {
            return key.to_string();
        }
    }
    panic!("event of no channel: {event}")
}

/// Output lines grouped by channel, in order inside each channel; panics (naming `what`) at
/// a line that is not JSON.
pub fn channels(ndjson: &str, what: &str) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (i, line) in ndjson.lines().enumerate() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{what}: line {} is not JSON ({e}): {line}", i + 1));
        out.entry(channel(&v)).or_default().push(v);
    }
    out
}

/// Differences between two outputs, channel by channel (empty when they conform).
pub fn compare(expected: &str, actual: &str) -> Vec<String> {
    let want = channels(expected, "expected");
    let got = channels(actual, "actual");
    let mut problems = Vec::new();
    for name in want.keys().chain(got.keys()).collect::<BTreeSet<_>>() {
        let empty = Vec::new();
        let w = want.get(name).unwrap_or(&empty);
        let g = got.get(name).unwrap_or(&empty);
        if w.len() != g.len() {
            problems.push(format!(
                "channel {name}: {} events expected, {} printed",
                w.len(),
                g.len()
            ));
        }
        for (i, (a, b)) in w.iter().zip(g).enumerate() {
            if !json_eq(a, b) {
                problems.push(format!(
                    "channel {name}, event {i}:\n  expected {a}\n  printed  {b}"
                ));
            }
        }
    }
    problems
}

/// A replay program's answer to a scenario it cannot run (SPEC §6): exit status 2 and
/// exactly one stderr line, `<program>: <file>: …`, holding each of `must` and no panic.
/// Returns that line.
pub fn assert_refused(
    out: std::process::Output,
    program: &str,
    file: &std::path::Path,
    must: &[&str],
) -> String {
    let stderr = String::from_utf8(out.stderr).expect("UTF-8 stderr");
    let what = file.display();
    assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert_eq!(
        stderr.matches('\n').count(),
        1,
        "{what}: one line: {stderr:?}"
    );
    assert!(stderr.ends_with('\n'));
    assert!(
        stderr.starts_with(&format!("{program}: {what}: ")),
        "{what}: {stderr}"
    );
    for part in must {
        assert!(stderr.contains(part), "{what}: {part:?} not in {stderr:?}");
    }
    stderr
}
