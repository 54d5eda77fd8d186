//! Model-based property test of the core `Wrapper` (SPEC §3, §5, §7).
//!
//! Random sequences of operations — model responses (tool calls of every kind,
//! with random, duplicate, missing or non-string ids and malformed contents;
//! text, `END`, other types, malformed frames), requests, completions, adapter
//! frames and closes, clock ticks past deadlines, `cancel`, `abort` and
//! `clear_trace` — drive the core wrapper and a small reference model written
//! here in plain std Rust. The model implements the SPEC rules directly; it
//! never calls the core. Before each operation both are given the clock
//! (timeouts fire first), as the replay program does.
//!
//! After every phase the two must agree exactly: frames written (route and
//! bytes, in order, interleaved with hook events as the hooks' `seq` says),
//! hook events, dispositions, errors, started calls (`poll_event`), pending
//! count, rounds, abort state and the trace. Invariants that need no model are
//! checked on the core alone (one result per call, held `END`s released once
//! and only at pending 0, `poll_timeout` never in the past, nothing but results
//! and releases after abort), and every frame `poll_transmit` hands out is one
//! JSON line (SPEC §7.22; `polyweave_tests::is_one_json_line`) except a released
//! `END`, the model's own bytes (the generators feed one that spans lines, and args,
//! results and adapter results with line breaks and tabs between tokens).
//!
//! `PROPTEST_CASES` overrides the number of cases (default 1024, about 2 s in a debug build).

use polyweave_tests::model::*;
use polyweave_tests::proptest_cases;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: proptest_cases(1024),
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    })]

    #[test]
    fn wrapper_matches_reference_model(case in case_strategy()) {
        run(&case);
    }
}

/// The generator reaches every status and kind of output the properties are about
/// (256 cases from a fixed seed, so the counts are exact).
#[test]
fn generator_reaches_every_case() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = case_strategy();
    let mut total = Tally::new();
    for _ in 0..256 {
        let case = strategy.new_tree(&mut runner).expect("a case").current();
        for (k, v) in run(&case) {
            *total.entry(k).or_default() += v;
        }
    }
    for (k, v) in &total {
        println!("{v:>6}  {k}");
    }
    let must = [
        "status Response Forward",
        "status Response Held",
        "status Response Rejected",
        "status Response Intercepted { index: 0, pending: true }",
        "status Response Intercepted { index: 0, pending: false }",
        "status Request Forward",
        "status Request Rejected",
        "status Complete Ok",
        "status Complete InvalidResult",
        "status Complete CallFinished",
        "status Complete CallTimedOut",
        "status Complete CallCancelled",
        "status Complete WrongKind",
        "status Complete NoHandle",
        "status Adapter Ok",
        "status Adapter Rejected",
        "status Adapter CallTimedOut",
        "status Adapter WrongKind",
        "status Close Ok",
        "status Close CallFinished",
        "timeout error result: timed out",
        "timeout frame Adapter(0) CANCEL",
        "op error result: cancelled",
        "op error result: not found",
        "op error result: Duplicate",
        "op error result: Too many",
        "op error result: Malformed",
        "op error result: failed",
        "op frame Consumer END",
        "timeout frame Consumer END",
        "op frame Consumer ERROR",
        "op frame Model TEXT with last error",
        "op frame Consumer TEXT with last error",
        "timeout frame Model TEXT with last error",
        "op frame Adapter(0) TOOL_CALL",
        "trace entries dropped",
        "status Late Backwards",
        "status Response HeldFull",
        "status Late NoHandle",
        "status Response Forward loose, full validation false",
        "status Response Held loose, full validation false",
        "status Response Rejected loose, full validation true",
        "status Request Rejected",
        "short buffer refused",
    ];
    let missing: Vec<&str> = must
        .iter()
        .copied()
        .filter(|k| !total.contains_key(*k))
        .collect();
    assert!(missing.is_empty(), "never reached: {missing:?}");
}

// =====================================================================
// Fixed sequences: the model itself, on cases worked out by hand
// =====================================================================

fn call(name: usize, id: usize, args: usize) -> Op {
    Op::Response(Resp::Call {
        content: Content::Object {
            id,
            name,
            args,
            order: 0,
        },
        type_last: false,
        spaced: false,
    })
}

fn base_case(slots: usize, ops: Vec<Op>) -> Case {
    Case {
        slots,
        full_validation: false,
        short_buffer: None,
        held_bytes: None,
        timeout_ms: 10,
        max_rounds: 0,
        mirror: true,
        aborted: false,
        trace_entries: 4,
        ops,
    }
}

#[test]
fn model_sync_call_then_prompt() {
    let mut m = Model::new(&base_case(2, vec![]));
    let (bytes, meaning) = response_frame(&match call(0, 1, 1) {
        Op::Response(r) => r,
        _ => unreachable!(),
    });
    assert_eq!(
        bytes,
        br#"{"type":"TOOL_CALL","content":{"id":"a","name":"calc","args":{"a":1}}}"#
    );
    assert_eq!(
        m.response(0, &bytes, meaning),
        Status::Intercepted {
            index: 0,
            pending: false
        }
    );
    let (out, started) = m.take();
    assert!(started.is_empty());
    assert_eq!(
        out,
        vec![
            Ev::HookCall(
                0,
                Some("calc".into()),
                Some("a".into()),
                r#"{"a":1}"#.into()
            ),
            Ev::Tx(
                To::Model,
                r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"calc","result":{"sum":3}}}"#
                    .into()
            ),
            Ev::HookResult(
                0,
                Some("calc".into()),
                Some("a".into()),
                r#"{"a":1}"#.into(),
                Outcome::Result(r#"{"sum":3}"#.into())
            ),
            Ev::Tx(
                To::Model,
                r#"{"type":"TEXT","content":"Tool results above."}"#.into()
            ),
            Ev::Tx(
                To::Consumer,
                r#"{"type":"TEXT","content":"Tool results above."}"#.into()
            ),
        ]
    );
}

#[test]
fn fixed_sequences_agree() {
    use Op::*;
    let end = Response(Resp::End(1));
    // Deferred call, END held, duplicate id, timeout, late completion refused.
    run(&base_case(
        2,
        vec![
            call(3, 1, 0),
            end.clone(),
            call(0, 1, 0),
            Complete {
                call: Target::Number(0),
                outcome: 0,
            },
            Tick(10),
            Complete {
                call: Target::Number(0),
                outcome: 0,
            },
            Close {
                call: Target::Number(0),
            },
        ],
    ));
    // Adapter call: record, ignore a second result, END; then a stale handle after slot reuse.
    run(&base_case(
        1,
        vec![
            call(4, 2, 1),
            Adapter {
                call: Target::Number(0),
                frame: 0,
            },
            Adapter {
                call: Target::Number(0),
                frame: 1,
            },
            Adapter {
                call: Target::Number(0),
                frame: 14,
            },
            call(3, 2, 0),
            Adapter {
                call: Target::Number(0),
                frame: 14,
            },
            Complete {
                call: Target::Number(0),
                outcome: 1,
            },
            Complete {
                call: Target::Number(1),
                outcome: 10,
            },
        ],
    ));
    // No slots: deferred and adapter calls fail at once; sync calls still run.
    run(&base_case(
        0,
        vec![call(3, 0, 0), call(4, 0, 0), call(1, 0, 2), call(13, 6, 0)],
    ));
    // Cancel with an adapter and a deferred call pending, round limit 1, then abort.
    let mut c = base_case(
        3,
        vec![
            call(4, 1, 0),
            call(3, 2, 0),
            end,
            Cancel(2),
            call(0, 0, 0),
            Abort,
            call(2, 0, 0),
        ],
    );
    c.max_rounds = 1;
    run(&c);
    // Both malformed-content forms, and a too-deep TOOL_CALL.
    run(&base_case(
        1,
        vec![
            Response(Resp::Call {
                content: Content::NotObject(3),
                type_last: true,
                spaced: false,
            }),
            Response(Resp::Call {
                content: Content::Absent,
                type_last: false,
                spaced: false,
            }),
            call(14, 1, 9),
            Response(Resp::BrokenCall(6)),
            Request(REQUESTS - 1),
        ],
    ));
}

/// The fuzz target's decoding: every byte string is a case, and the same bytes the same case.
#[test]
fn bytes_decode_to_cases_the_model_agrees_on() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut ops = 0;
    for len in 0..300usize {
        let data: Vec<u8> = (0..len)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            })
            .collect();
        let case = case_from_bytes(&data);
        assert_eq!(format!("{case:?}"), format!("{:?}", case_from_bytes(&data)));
        assert!(case.slots <= 4 && case.trace_entries <= 6 && case.ops.len() <= 64);
        ops += case.ops.len();
        run(&case);
    }
    assert!(ops > 2000, "{ops} operations decoded");
    assert_eq!(case_from_bytes(&[]).ops.len(), 0);
}

/// The fuzz target's corpus starts from generated cases: the bytes `case_to_bytes` writes
/// decode to the same case (256 cases from a fixed seed).
#[test]
fn generated_cases_round_trip_through_fuzzer_bytes() {
    use polyweave_tests::model::{case_from_bytes, case_to_bytes};
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = case_strategy();
    for _ in 0..256 {
        let case = strategy.new_tree(&mut runner).expect("a case").current();
        let bytes = case_to_bytes(&case);
        assert_eq!(
            format!("{:?}", case_from_bytes(&bytes)),
            format!("{case:?}"),
            "{bytes:?}"
        );
    }
}

/// Writes the fuzz target `wrapper`'s seeds: 512 generated cases (a fixed seed), one file
/// each, into `$POLYWEAVE_SEED_DIR` (tests/fuzz/fuzz.sh runs it).
#[test]
#[ignore = "writes files: run by tests/fuzz/fuzz.sh"]
fn write_wrapper_fuzz_seeds() {
    use polyweave_tests::model::case_to_bytes;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let dir = std::env::var("POLYWEAVE_SEED_DIR").expect("POLYWEAVE_SEED_DIR");
    let mut runner = TestRunner::deterministic();
    let strategy = case_strategy();
    for i in 0..512 {
        let case = strategy.new_tree(&mut runner).expect("a case").current();
        std::fs::write(format!("{dir}/gen-{i:03}"), case_to_bytes(&case)).expect("seed written");
    }
}
