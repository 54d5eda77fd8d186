//! JSONTestSuite (`test_parsing`, Nicolas Seriot): every `y_*` case is accepted,
//! every `n_*` case is rejected, every `i_*` case gets a recorded, stable outcome.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use polyweave_tests::json_suite_files;
use polyweave_tool_adapter::json::{validate, JsonError, JsonErrorKind, DEFAULT_MAX_DEPTH};

const Y_FILES: usize = 95;
const N_FILES: usize = 188;
const I_FILES: usize = 35;
const ALL_FILES: usize = 318;

/// What `validate(.., 32)` answers for each implementation-defined case.
fn expected_i(name: &str) -> Result<(), JsonError> {
    use JsonErrorKind::*;
    let err = |kind, at| Err(JsonError { kind, at });
    match name {
        // Numbers of any size are accepted: raw values keep their text (SPEC §7.16).
        "i_number_double_huge_neg_exp.json"
        | "i_number_huge_exp.json"
        | "i_number_neg_int_huge_exp.json"
        | "i_number_pos_double_huge_exp.json"
        | "i_number_real_neg_overflow.json"
        | "i_number_real_pos_overflow.json"
        | "i_number_real_underflow.json"
        | "i_number_too_big_neg_int.json"
        | "i_number_too_big_pos_int.json"
        | "i_number_very_big_negative_int.json" => Ok(()),
        // An escaped surrogate without its partner is accepted; decoding gives U+FFFD (SPEC §7.24).
        "i_object_key_lone_2nd_surrogate.json"
        | "i_string_1st_surrogate_but_2nd_missing.json"
        | "i_string_1st_valid_surrogate_2nd_invalid.json"
        | "i_string_incomplete_surrogate_and_escape_valid.json"
        | "i_string_incomplete_surrogate_pair.json"
        | "i_string_incomplete_surrogates_escape_valid.json"
        | "i_string_invalid_lonely_surrogate.json"
        | "i_string_invalid_surrogate.json"
        | "i_string_inverted_surrogates_U+1D11E.json"
        | "i_string_lone_second_surrogate.json" => Ok(()),
        // Frames are UTF-8 (SPEC §1): anything else is refused where it starts.
        "i_string_UTF-8_invalid_sequence.json" => err(InvalidUtf8, 7),
        "i_string_UTF8_surrogate_U+D800.json"
        | "i_string_invalid_utf-8.json"
        | "i_string_iso_latin_1.json"
        | "i_string_lone_utf8_continuation_byte.json"
        | "i_string_not_in_unicode_range.json"
        | "i_string_overlong_sequence_2_bytes.json"
        | "i_string_overlong_sequence_6_bytes.json"
        | "i_string_overlong_sequence_6_bytes_null.json"
        | "i_string_truncated-utf-8.json" => err(InvalidUtf8, 2),
        "i_string_UTF-16LE_with_BOM.json" | "i_string_utf16BE_no_BOM.json" => {
            err(UnexpectedByte, 0)
        }
        "i_string_utf16LE_no_BOM.json" => err(UnexpectedByte, 1),
        // A byte-order mark is malformed (SPEC §7.17).
        "i_structure_UTF-8_BOM_empty_object.json" => err(UnexpectedByte, 0),
        // Level 33 is the first one refused.
        "i_structure_500_nested_arrays.json" => err(TooDeep, 32),
        other => panic!("unexpected i_ file {other}"),
    }
}

/// Every file, checked on a worker thread so that a hang fails the test instead of blocking it.
#[test]
fn json_test_suite() {
    let files = json_suite_files();
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        let mut seen = [0usize; 3];
        let mut failures = Vec::new();
        let mut n_kinds: BTreeMap<String, usize> = BTreeMap::new();
        let mut i_outcomes = Vec::new();
        for (name, bytes) in &files {
            let outcome = validate(bytes, DEFAULT_MAX_DEPTH);
            // The same bytes give the same answer every time.
            assert_eq!(outcome, validate(bytes, DEFAULT_MAX_DEPTH), "{name}");
            match name.get(..2) {
                Some("y_") => {
                    seen[0] += 1;
                    if outcome.is_err() {
                        failures.push(format!("{name}: must be accepted, got {outcome:?}"));
                    }
                }
                Some("n_") => {
                    seen[1] += 1;
                    match outcome {
                        Ok(()) => failures.push(format!("{name}: must be rejected, was accepted")),
                        Err(e) => {
                            if e.at > bytes.len() {
                                failures
                                    .push(format!("{name}: error offset {} past the end", e.at));
                            }
                            *n_kinds.entry(format!("{:?}", e.kind)).or_default() += 1;
                        }
                    }
                }
                Some("i_") => {
                    seen[2] += 1;
                    let expected = expected_i(name);
                    if outcome != expected {
                        failures.push(format!("{name}: expected {expected:?}, got {outcome:?}"));
                    }
                    i_outcomes.push((name.clone(), outcome));
                }
                _ => failures.push(format!("{name}: not a y_/n_/i_ file")),
            }
        }
        tx.send((seen, failures, n_kinds, i_outcomes))
            .expect("send");
    });
    let received = rx.recv_timeout(Duration::from_secs(120));
    let (seen, failures, n_kinds, i_outcomes) = match received {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("validate did not finish within 120 s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let panic = worker
                .join()
                .expect_err("the worker ended without a result");
            std::panic::resume_unwind(panic)
        }
    };
    worker.join().expect("worker");

    for (name, outcome) in &i_outcomes {
        println!("{name}: {outcome:?}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(seen, [Y_FILES, N_FILES, I_FILES]);
    assert_eq!(seen.iter().sum::<usize>(), ALL_FILES);
    assert_eq!(i_outcomes.iter().filter(|(_, o)| o.is_ok()).count(), 20);

    // The mix of reasons the rejected cases get; a change here is a change of behaviour.
    let kinds: Vec<(&str, usize)> = n_kinds.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    assert_eq!(
        kinds,
        [
            ("ControlCharacter", 4),
            ("InvalidEscape", 16),
            ("InvalidNumber", 32),
            ("InvalidUtf8", 1),
            ("TooDeep", 2),
            ("TrailingData", 17),
            ("UnexpectedByte", 86),
            ("UnexpectedEnd", 30),
        ]
    );
}

/// The accepted cases are also accepted with the tightest depth they need, and refused one below.
#[test]
fn y_cases_depth_boundary() {
    let mut needed = BTreeMap::new();
    for (name, bytes) in json_suite_files() {
        if !name.starts_with("y_") {
            continue;
        }
        let depth = (0..=DEFAULT_MAX_DEPTH)
            .find(|&d| validate(&bytes, d).is_ok())
            .unwrap_or_else(|| panic!("{name} needs more than {DEFAULT_MAX_DEPTH} levels"));
        if depth > 0 {
            let err = validate(&bytes, depth - 1).expect_err(&name);
            assert_eq!(err.kind, JsonErrorKind::TooDeep, "{name}");
            assert!(matches!(bytes[err.at], b'{' | b'['), "{name}: {err:?}");
        }
        *needed.entry(depth).or_insert(0usize) += 1;
    }
    println!("levels needed by y_ cases: {needed:?}");
    assert_eq!(needed.values().sum::<usize>(), Y_FILES);
    assert_eq!(
        needed.into_iter().collect::<Vec<_>>(),
        [(0, 8), (1, 83), (2, 3), (3, 1)]
    );
}
