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
//! The generators also cover SPEC §5's progress (a cap on or off, below, at or above the
//! timeout; `PROGRESS` frames, also at a deadline − 1 and at it) and `args_error` (on every
//! kind of call, cut to the message capacity); fixed sequences at the end pin the exact
//! frames of both rules.
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
        // SPEC §5 progress.
        "model progress restart",
        "model progress restart up to the cap",
        "model progress at the cap already",
        "model progress that moves nothing",
        "model progress with no cap (ignored)",
        "model timeout names the cap",
        "model timeout under a cap names the timeout",
        "status Adapter Ok progress",
        "status Adapter Rejected progress",
        "status Adapter CallFinished progress",
        "status Adapter CallTimedOut progress",
        "status Adapter WrongKind progress",
        "status Deadline -1 Adapter progress Ok",
        "status Deadline -0 Adapter progress CallTimedOut",
        "status Deadline -1 Complete Ok",
        "status Deadline -0 Complete CallTimedOut",
        "status Deadline -1 Close Ok",
        "status Deadline -0 Close CallTimedOut",
        // SPEC §5 args_error, over every check it comes before; §7.23 args capacity.
        "model args_error answers a call that runs",
        "model args_error answers an unknown name",
        "model args_error answers a duplicate id",
        "model args_error answers args over capacity",
        "model args_error answers no free slot",
        "model args_error on a malformed call",
        "model args_error cut to the message capacity",
        "op error result: args exceed",
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
            args_error: 0,
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
        max_total_ms: 0,
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
        vec![call(3, 0, 0), call(4, 0, 0), call(1, 0, 2), call(14, 6, 0)],
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
            call(15, 1, 9),
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

// =====================================================================
// SPEC §5 Progress and args_error: fixed sequences with their exact frames (the core and the
// model agree on every step, `run_steps` checks; these pin what both say)
// =====================================================================

/// The name indices (into `NAMES`) the sequences below use.
const CALC: usize = 0;
const LATER: usize = 3;
const FILES: usize = 4;
const WATCH: usize = 11;
const NOPE: usize = 12;
const NAME_NULL: usize = 17;

fn adapter_frame(bytes: &str) -> usize {
    tables()
        .adapter
        .iter()
        .position(|(b, _)| b == bytes.as_bytes())
        .unwrap_or_else(|| panic!("no adapter frame {bytes}"))
}

const PROGRESS: &str = r#"{"type":"PROGRESS"}"#;

fn progress(call: u32, before: u64) -> Op {
    Op::Deadline {
        before,
        op: Box::new(Op::Adapter {
            call: Target::Number(call),
            frame: adapter_frame(PROGRESS),
        }),
    }
}

fn adapter(call: u32, bytes: &str) -> Op {
    Op::Adapter {
        call: Target::Number(call),
        frame: adapter_frame(bytes),
    }
}

/// The `args_errors` entry that is `args_error` with this value alone.
fn args_error(value: &str) -> usize {
    tables()
        .args_errors
        .iter()
        .position(|m| m.len() == 1 && m[0].0 == r#""args_error""# && m[0].1 == value)
        .unwrap_or_else(|| panic!("no args_error {value}"))
}

fn call_ae(name: usize, id: usize, args: usize, args_error: usize) -> Op {
    Op::Response(Resp::Call {
        content: Content::Object {
            id,
            name,
            args,
            args_error,
            order: 0,
        },
        type_last: false,
        spaced: false,
    })
}

fn model(frame: &str) -> Ev {
    Ev::Tx(To::Model, frame.to_string())
}

fn consumer(frame: &str) -> Ev {
    Ev::Tx(To::Consumer, frame.to_string())
}

fn to_adapter(call: u32, frame: &str) -> Ev {
    Ev::Tx(To::Adapter(call), frame.to_string())
}

fn hook_call(k: u32, name: Option<&str>, id: Option<&str>, args: &str) -> Ev {
    Ev::HookCall(
        k,
        name.map(str::to_string),
        id.map(str::to_string),
        args.into(),
    )
}

fn hook_error(k: u32, name: Option<&str>, id: Option<&str>, args: &str, error: &str) -> Ev {
    Ev::HookResult(
        k,
        name.map(str::to_string),
        id.map(str::to_string),
        args.into(),
        Outcome::Error(error.into()),
    )
}

/// The continue prompt to the model and (mirrored) the consumer.
fn prompt(last_error: Option<&str>) -> [Ev; 2] {
    let text = match last_error {
        Some(e) => format!("Tool results above. Last tool error: {e}"),
        None => "Tool results above.".to_string(),
    };
    let frame = format!(
        r#"{{"type":"TEXT","content":{}}}"#,
        serde_json::to_string(&text).unwrap()
    );
    [model(&frame), consumer(&frame)]
}

fn error_result(id: Option<&str>, name: Option<&str>, error: &str) -> Ev {
    let id = id.map_or(String::new(), |i| format!(r#""id":{},"#, jstr(i)));
    let name = name.map_or("null".to_string(), jstr);
    model(&format!(
        r#"{{"type":"TOOL_RESULT","content":{{{id}"name":{name},"error":{}}}}}"#,
        jstr(error)
    ))
}

/// What a timed-out adapter call writes and calls: `CANCEL`, its `TOOL_RESULT`, the hook.
fn adapter_timeout(k: u32, id: &str, name: &str, error: &str) -> Vec<Ev> {
    vec![
        to_adapter(
            k,
            &format!(
                r#"{{"type":"CANCEL","content":{{"id":{},"name":{},"reason":"timeout"}}}}"#,
                jstr(id),
                jstr(name)
            ),
        ),
        error_result(Some(id), Some(name), error),
        hook_error(k, Some(name), Some(id), "{}", error),
    ]
}

fn started_adapter(k: u32, id: &str, name: &str) -> Vec<Ev> {
    vec![
        hook_call(k, Some(name), Some(id), "{}"),
        to_adapter(
            k,
            &format!(
                r#"{{"type":"TOOL_CALL","content":{{"id":{},"name":{},"args":{{}}}}}}"#,
                jstr(id),
                jstr(name)
            ),
        ),
    ]
}

fn progress_case(timeout_ms: u32, max_total_ms: u32, ops: Vec<Op>) -> Case {
    let mut c = base_case(2, ops);
    c.timeout_ms = timeout_ms;
    c.max_total_ms = max_total_ms;
    c
}

fn at_of(steps: &[Step]) -> Vec<u64> {
    steps.iter().map(|s| s.at).collect()
}

#[test]
fn progress_restarts_up_to_the_cap() {
    // Timeout 10, cap 25: progress at 9 (deadline 19), at 18 (25, the cap), at 24 (still 25);
    // at 25 the cap has run out, and a progress then is refused.
    let (_, steps) = run_steps(&progress_case(
        10,
        25,
        vec![
            call(FILES, 1, 0),
            progress(0, 1),
            progress(0, 1),
            progress(0, 1),
            progress(0, 0),
        ],
    ));
    assert_eq!(at_of(&steps), [0, 9, 18, 24, 25]);
    assert_eq!(steps[0].out, started_adapter(0, "a", "files"));
    assert_eq!(steps[0].started.len(), 1);
    for s in &steps[1..4] {
        assert_eq!(
            (&s.status, &s.timeouts, &s.out),
            (&Status::Ok, &vec![], &vec![])
        );
    }
    let msg = "Tool files timed out after 25ms";
    let mut want = adapter_timeout(0, "a", "files", msg);
    want.extend(prompt(Some(msg)));
    assert_eq!(steps[4].timeouts, want);
    assert_eq!(steps[4].status, Status::CallTimedOut);
    assert_eq!(steps[4].out, vec![]);
}

#[test]
fn progress_under_a_cap_below_the_timeout() {
    // Cap 4 < timeout 10: the first deadline is the cap; progress cannot move it.
    let (_, steps) = run_steps(&progress_case(
        10,
        4,
        vec![call(FILES, 1, 0), progress(0, 1), Op::Tick(1)],
    ));
    assert_eq!(at_of(&steps), [0, 3, 4]);
    assert_eq!(steps[1].status, Status::Ok);
    let msg = "Tool files timed out after 4ms";
    let mut want = adapter_timeout(0, "a", "files", msg);
    want.extend(prompt(Some(msg)));
    assert_eq!(steps[2].timeouts, want);
}

#[test]
fn progress_with_no_cap_is_an_ordinary_frame() {
    let (_, steps) = run_steps(&progress_case(
        10,
        0,
        vec![call(FILES, 1, 0), progress(0, 1), Op::Tick(1)],
    ));
    assert_eq!(at_of(&steps), [0, 9, 10]);
    assert_eq!((&steps[1].status, &steps[1].out), (&Status::Ok, &vec![]));
    let msg = "Tool files timed out after 10ms";
    let mut want = adapter_timeout(0, "a", "files", msg);
    want.extend(prompt(Some(msg)));
    assert_eq!(steps[2].timeouts, want);
}

#[test]
fn progress_by_decoded_type_only_and_malformed_restarts_nothing() {
    let malformed = Op::Deadline {
        before: 1,
        op: Box::new(adapter(0, r#"{"type":"PROGRESS","content":}"#)),
    };
    let lower = Op::Deadline {
        before: 1,
        op: Box::new(adapter(0, r#"{"type":"progress"}"#)),
    };
    let (_, steps) = run_steps(&progress_case(
        10,
        100,
        vec![
            call(FILES, 1, 0),
            malformed,
            adapter(0, r#"{"type":"PROG\u0052ESS","content":0.5}"#),
            lower,
            Op::Tick(1),
        ],
    ));
    assert_eq!(at_of(&steps), [0, 9, 9, 18, 19]);
    assert_eq!(steps[1].status, Status::Rejected);
    assert_eq!(steps[2].status, Status::Ok);
    assert_eq!(
        (&steps[3].status, &steps[3].timeouts),
        (&Status::Ok, &vec![])
    );
    let msg = "Tool files timed out after 10ms";
    let mut want = adapter_timeout(0, "a", "files", msg);
    want.extend(prompt(Some(msg)));
    assert_eq!(steps[4].timeouts, want);
}

#[test]
fn progress_landing_on_the_cap_names_it_and_ties_fire_in_call_order() {
    // Timeout 10, cap 15. Call 0 starts at 0, call 1 at 1; both get progress at 5: call 0's
    // deadline becomes 15, its cap; call 1's becomes 15 too, short of its cap 16.
    let (_, steps) = run_steps(&progress_case(
        10,
        15,
        vec![
            call(FILES, 1, 0),
            Op::Tick(1),
            call(FILES, 2, 0),
            Op::Tick(4),
            adapter(0, PROGRESS),
            adapter(1, PROGRESS),
            Op::Tick(9),
            Op::Tick(1),
        ],
    ));
    assert_eq!(at_of(&steps), [0, 1, 1, 5, 5, 5, 14, 15]);
    assert_eq!(steps[6].timeouts, vec![]);
    let mut want = adapter_timeout(0, "a", "files", "Tool files timed out after 15ms");
    want.extend(adapter_timeout(
        1,
        "b",
        "files",
        "Tool files timed out after 10ms",
    ));
    want.extend(prompt(Some("Tool files timed out after 10ms")));
    assert_eq!(steps[7].timeouts, want);
}

#[test]
fn progress_restarts_a_tools_own_timeout_and_deferred_calls_ignore_the_cap() {
    // Wrapper timeout 20, cap 12. `watch` (its own 5 ms): progress at 4 (deadline 9), 8 (12,
    // the cap), 11 (still 12). `later` (deferred): deadline 20, no cap, no progress.
    let complete_late = Op::Deadline {
        before: 0,
        op: Box::new(Op::Complete {
            call: Target::Number(1),
            outcome: 0,
        }),
    };
    let (_, steps) = run_steps(&progress_case(
        20,
        12,
        vec![
            call(WATCH, 1, 0),
            call(LATER, 2, 0),
            adapter(1, PROGRESS),
            progress(0, 1),
            progress(0, 1),
            progress(0, 1),
            Op::Tick(1),
            complete_late,
        ],
    ));
    assert_eq!(at_of(&steps), [0, 0, 0, 4, 8, 11, 12, 20]);
    assert_eq!(steps[2].status, Status::WrongKind);
    let mut want = adapter_timeout(0, "a", "watch", "Tool watch timed out after 12ms");
    assert_eq!(steps[6].timeouts, want);
    let msg = "Tool later timed out after 20ms";
    want = vec![
        error_result(Some("b"), Some("later"), msg),
        hook_error(1, Some("later"), Some("b"), "{}", msg),
    ];
    want.extend(prompt(Some(msg)));
    assert_eq!(steps[7].timeouts, want);
    assert_eq!(steps[7].status, Status::CallTimedOut);
}

#[test]
fn progress_after_settlement_is_refused() {
    let (_, steps) = run_steps(&progress_case(
        10,
        30,
        vec![
            call(FILES, 1, 0),
            adapter(0, r#"{"type":"END"}"#),
            adapter(0, PROGRESS),
        ],
    ));
    assert_eq!(
        steps[1].out[0],
        model(r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"files","result":null}}"#)
    );
    assert_eq!(steps[2].status, Status::CallFinished);
}

const UNTERMINATED: &str = "Unterminated string in JSON at position 12";

#[test]
fn args_error_answers_the_call_with_its_words() {
    let ae = args_error(&jstr(UNTERMINATED));
    let (_, steps) = run_steps(&base_case(2, vec![call_ae(CALC, 1, 1, ae)]));
    let mut want = vec![
        hook_call(0, Some("calc"), Some("a"), r#"{"a":1}"#),
        model(
            r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"calc","error":"Unterminated string in JSON at position 12"}}"#,
        ),
        hook_error(0, Some("calc"), Some("a"), r#"{"a":1}"#, UNTERMINATED),
    ];
    want.extend(prompt(Some(UNTERMINATED)));
    assert_eq!(
        steps[0].status,
        Status::Intercepted {
            index: 0,
            pending: false
        }
    );
    assert_eq!(steps[0].out, want);
}

#[test]
fn args_error_before_unknown_name_after_malformed() {
    let empty = args_error(r#""""#);
    let (_, steps) = run_steps(&base_case(
        2,
        vec![call_ae(NOPE, 0, 0, empty), call_ae(NAME_NULL, 0, 0, empty)],
    ));
    // No args: `{}` in the hooks; the empty string is the error, and a set last error.
    let mut want = vec![
        hook_call(0, Some("nope"), None, "{}"),
        model(r#"{"type":"TOOL_RESULT","content":{"name":"nope","error":""}}"#),
        hook_error(0, Some("nope"), None, "{}", ""),
    ];
    want.extend(prompt(Some("")));
    assert_eq!(steps[0].out, want);
    let malformed = "Malformed TOOL_CALL: content.name must be a string";
    let mut want = vec![
        hook_call(1, None, None, "{}"),
        model(
            r#"{"type":"TOOL_RESULT","content":{"name":null,"error":"Malformed TOOL_CALL: content.name must be a string"}}"#,
        ),
        hook_error(1, None, None, "{}", malformed),
    ];
    want.extend(prompt(Some(malformed)));
    assert_eq!(steps[1].out, want);
}

#[test]
fn args_error_that_is_not_a_string_is_ignored() {
    for value in ["5", "null", r#"{"message":"x"}"#, r#"["e"]"#, "false"] {
        let (_, steps) = run_steps(&base_case(2, vec![call_ae(CALC, 1, 1, args_error(value))]));
        assert_eq!(
            steps[0].out[1],
            model(
                r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"calc","result":{"sum":3}}}"#
            ),
            "{value}"
        );
    }
    // Only a member of an object content counts: inside the args it is an arg; in a content
    // that is not an object the call is malformed.
    let in_args = tables()
        .args
        .iter()
        .position(|(raw, _)| raw.as_deref() == Some(r#"{"args_error":"in args"}"#))
        .unwrap();
    let not_object = NOT_OBJECT
        .iter()
        .position(|c| c.contains("args_error"))
        .unwrap();
    let (_, steps) = run_steps(&base_case(
        2,
        vec![
            call(1, 0, in_args),
            Op::Response(Resp::Call {
                content: Content::NotObject(not_object),
                type_last: false,
                spaced: false,
            }),
        ],
    ));
    assert_eq!(
        steps[0].out[1],
        model(
            r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{"args_error":"in args"}}}"#
        )
    );
    assert_eq!(
        steps[1].out[1],
        model(
            r#"{"type":"TOOL_RESULT","content":{"name":null,"error":"Malformed TOOL_CALL: content.name must be a string"}}"#
        )
    );
    // With the member twice the last one counts.
    let twice = |last: &str| {
        tables()
            .args_errors
            .iter()
            .position(|m| m.len() == 2 && m[1].1 == last)
            .unwrap()
    };
    let (_, steps) = run_steps(&base_case(
        2,
        vec![
            call_ae(CALC, 1, 1, twice("null")),
            call_ae(CALC, 1, 1, twice(r#""second""#)),
        ],
    ));
    assert_eq!(
        steps[0].out[1],
        model(r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"calc","result":{"sum":3}}}"#)
    );
    assert_eq!(
        steps[1].out[1],
        model(r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"calc","error":"second"}}"#)
    );
}

#[test]
fn args_error_before_duplicate_id_and_free_slot_and_holds_neither() {
    let ae = args_error(&jstr(UNTERMINATED));
    let (_, steps) = run_steps(&base_case(
        1,
        vec![
            call(LATER, 1, 0),
            // Duplicate id and no free slot: answered with its args_error.
            call_ae(LATER, 1, 0, ae),
            Op::Complete {
                call: Target::Number(0),
                outcome: 0,
            },
            // It held no slot and no id: the same id then runs, in the one slot.
            call_ae(LATER, 2, 0, ae),
            call(LATER, 2, 0),
        ],
    ));
    assert_eq!(
        steps[1].out,
        vec![
            hook_call(1, Some("later"), Some("a"), "{}"),
            error_result(Some("a"), Some("later"), UNTERMINATED),
            hook_error(1, Some("later"), Some("a"), "{}", UNTERMINATED),
        ]
    );
    // The last error it set goes with the prompt when the pending call completes.
    assert_eq!(steps[2].out[2..], prompt(Some(UNTERMINATED)));
    assert_eq!(
        steps[4].status,
        Status::Intercepted {
            index: 3,
            pending: true
        }
    );
}

#[test]
fn args_error_before_args_capacity() {
    let over = tables().args.len() - 1;
    let over_args = tables().args[over].1.clone();
    assert_eq!(over_args.len(), 513);
    let ae = args_error(&jstr(UNTERMINATED));
    let (_, steps) = run_steps(&base_case(
        2,
        vec![call_ae(LATER, 1, over, ae), call(LATER, 2, over)],
    ));
    assert_eq!(
        steps[0].out[1],
        error_result(Some("a"), Some("later"), UNTERMINATED)
    );
    assert_eq!(
        steps[1].out[1],
        error_result(Some("b"), Some("later"), "Tool later args exceed 512 bytes")
    );
    // At the cap without white space (longer as written) they fit; a sync tool has no args
    // capacity, but what it writes has the result capacity.
    let at_cap_spaced = over - 1;
    let (_, steps) = run_steps(&base_case(
        2,
        vec![
            call(LATER, 1, at_cap_spaced),
            call(1, 2, at_cap_spaced),
            call(1, 3, over),
        ],
    ));
    let compact_args = format!(r#"{{"k":"{}"}}"#, "x".repeat(504));
    assert_eq!(
        steps[0].started,
        vec![(
            0,
            false,
            6,
            "later".to_string(),
            Some("a".to_string()),
            compact_args.clone()
        )]
    );
    assert_eq!(
        steps[1].out[1],
        model(&format!(
            r#"{{"type":"TOOL_RESULT","content":{{"id":"b","name":"echo","result":{compact_args}}}}}"#
        ))
    );
    assert_eq!(
        steps[2].out[1],
        error_result(
            Some("c"),
            Some("echo"),
            "Tool echo result exceeds 512 bytes"
        )
    );
}

#[test]
fn args_error_decodes_lone_surrogates_to_the_replacement_character() {
    let (_, steps) = run_steps(&base_case(
        2,
        vec![
            call_ae(CALC, 0, 0, args_error(r#""\ud800 lone""#)),
            call_ae(CALC, 0, 0, args_error(r#""\udc00\ud83d\ude00\ud83d""#)),
        ],
    ));
    assert_eq!(
        steps[0].out[1],
        model("{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"calc\",\"error\":\"\u{fffd} lone\"}}")
    );
    assert_eq!(
        steps[1].out[1],
        model("{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"calc\",\"error\":\"\u{fffd}\u{1f600}\u{fffd}\"}}")
    );
    assert_eq!(steps[1].messages_truncated, 0);
}

#[test]
fn args_error_longer_than_the_message_capacity_is_cut_and_counted() {
    let y = "y".repeat(MESSAGE_CAP - 2);
    let cases: Vec<(String, String, bool)> = vec![
        // 300 bytes: cut to the capacity.
        (jstr(&"x".repeat(300)), "x".repeat(MESSAGE_CAP), true),
        // Escaped exactly the capacity (190 + 2): whole.
        (format!("\"{y}\\n\""), format!("{y}\n"), false),
        // One byte more: the newline's escape does not fit.
        (format!("\"{y}y\\n\""), format!("{y}y"), true),
        // At a character boundary: `a` and 95 two-byte characters (191 bytes).
        (
            format!("\"a{}\"", "é".repeat(100)),
            format!("a{}", "é".repeat(95)),
            true,
        ),
        // A 6-byte escape that does not fit whole (189 + 6 > 192): cut before it.
        (
            format!("\"{}\\u0001\"", "y".repeat(MESSAGE_CAP - 3)),
            "y".repeat(MESSAGE_CAP - 3),
            true,
        ),
        // Escapes count as written out: 6 bytes each, 2 bytes each.
        (
            format!("\"{}\"", "\\u0001".repeat(40)),
            "\u{1}".repeat(MESSAGE_CAP / 6),
            true,
        ),
        (
            format!("\"{}\"", "\\n".repeat(100)),
            "\n".repeat(MESSAGE_CAP / 2),
            true,
        ),
        // Lone surrogates are U+FFFD (3 bytes) before the cut.
        (
            format!("\"{}\"", "\\ud800".repeat(70)),
            "\u{fffd}".repeat(MESSAGE_CAP / 3),
            true,
        ),
    ];
    for (value, want, cut) in cases {
        let (_, steps) = run_steps(&base_case(2, vec![call_ae(CALC, 0, 0, args_error(&value))]));
        assert_eq!(
            steps[0].out[1],
            error_result(None, Some("calc"), &want),
            "{value}"
        );
        assert_eq!(
            steps[0].out[2],
            hook_error(0, Some("calc"), None, "{}", &want)
        );
        assert_eq!(steps[0].messages_truncated, u32::from(cut), "{value}");
        // The prompt carries it whole: it fits the capacity once escaped.
        assert_eq!(steps[0].out[3..], prompt(Some(&want)), "{value}");
    }
}

#[test]
fn args_error_is_written_with_minimal_escapes() {
    let value = r#""\u0000\u001f\b\f\r \u007f\u0085\u2028\uFFFF end""#;
    let (_, steps) = run_steps(&base_case(2, vec![call_ae(CALC, 0, 0, args_error(value))]));
    let decoded = "\u{0}\u{1f}\u{8}\u{c}\r \u{7f}\u{85}\u{2028}\u{ffff} end";
    assert_eq!(
        steps[0].out[2],
        hook_error(0, Some("calc"), None, "{}", decoded)
    );
    // SPEC §1: `\b \f \n \r \t`, other controls below U+0020 as `\u00XX`, the rest as UTF-8.
    assert_eq!(
        steps[0].out[1],
        model(
            "{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"calc\",\"error\":\
             \"\\u0000\\u001f\\b\\f\\r \u{7f}\u{85}\u{2028}\u{ffff} end\"}}"
        )
    );
    assert_eq!(steps[0].messages_truncated, 0);
}
