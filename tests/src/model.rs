//! The reference model of the core `Wrapper` (SPEC §3, §5, §7) and the harness that runs a
//! case through both and compares them after every step: `tests/tests/model.rs` drives it
//! with proptest, and the `wrapper` fuzz target with bytes ([`case_from_bytes`]).
//!
//! Model-based property test of the core `Wrapper` (SPEC §3, §5, §7).
//!
//! Random sequences of operations — model responses (tool calls of every kind,
//! with random, duplicate, missing or non-string ids and malformed contents;
//! text, `END`, other types, malformed frames), requests, completions, adapter
//! frames and closes, clock ticks past deadlines, inputs given an earlier
//! time than the last (refused, nothing changes), `cancel`, `abort` and
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
//! Each case also picks whether every frame is validated (`full_validation`:
//! frames broken after their `type`, doubled `type`s and too-deep pass-through
//! frames are then malformed, otherwise forwarded or held), and whether the host
//! first offers every frame a short buffer (the refusal must name the frame's
//! exact size and leave the queue as it was).
//!
//! SPEC §5 progress: each case picks `max_total_timeout_ms` off, below, equal to or above
//! the wrapper's timeout, or huge (`u32::MAX`); adapter frames include `PROGRESS` (plain,
//! with any content, escaped type, white space) and frames that are not progress or are
//! malformed; [`Op::Deadline`] lands a progress (or a completion or close) at a call's
//! deadline − 2, − 1 or exactly at it; `watch` is an adapter with its own timeout. The
//! model keeps each adapter call's cap and restarts its deadline; the timeout message names
//! the span that ran out.
//!
//! SPEC §5 `args_error`: calls may carry one (escapes, lone surrogates, empty, longer than the
//! message capacity once escaped, non-string values, escaped or near-miss keys, twice), on
//! every kind of call (malformed, unknown name, duplicate id, args over the args capacity,
//! no free slot, one that would run); `WrapperStats::messages_truncated` is compared too.
//!
//! `PROPTEST_CASES` overrides the number of cases (default 1024, about 2 s in a debug build).

use std::collections::{BTreeSet, VecDeque};
use std::sync::OnceLock;

use crate::assert_one_json_line;
use crate::host::{self, Entry, Host, Recorder, Storage};
use polyweave_tool_adapter::wrapper::{Disposition, PendingKind, Wrapper, WrapperConfig};
use polyweave_tool_adapter::CallError;
use polyweave_tool_adapter::{CallHandle, Error, Instant, Route, Tool};
use polyweave_tool_adapter::{ResultWriter, ToolFailed};
use proptest::prelude::*;
use serde_json::Value;

/// Bytes the wrapper's held buffer takes for each `END` on top of its length (`HeldFull`
/// reports the sum).
const HELD_HEADER: usize = 4;

// =====================================================================
// Registered tools
// =====================================================================

/// What a registered tool does.
#[derive(Copy, Clone, Debug)]
pub enum Def {
    /// A sync tool returning this raw JSON.
    Result(&'static str),
    /// A sync tool returning its args.
    Echo,
    /// A sync tool failing with this message.
    Fail(&'static str),
    Deferred,
    Adapter,
}

/// The registrations, in registration order (the index is `Event::CallStarted::tool`).
pub const TOOLS: [(&str, Def); 10] = [
    ("calc", Def::Result(r#"{"sum":3}"#)),
    ("echo", Def::Echo),
    ("fail", Def::Fail("boom")),
    ("天気", Def::Result(r#"{"error":"no sky","t":-0}"#)),
    ("flaky", Def::Result(r#"{"success":false,"n":1.50}"#)),
    ("raw", Def::Result(r#"{"error":{"code":1e400}}"#)),
    ("later", Def::Deferred),
    ("files", Def::Adapter),
    // With its own timeout (`Tool::with_timeout_ms`), so deadlines are not in call order.
    ("slow", Def::Deferred),
    // An adapter with its own timeout: progress restarts it from that, under the wrapper's cap.
    ("watch", Def::Adapter),
];

/// `slow`'s own timeout.
pub const SLOW_TIMEOUT_MS: u32 = 7;
/// `watch`'s own timeout.
pub const WATCH_TIMEOUT_MS: u32 = 5;

/// A tool's timeout: its own, or the wrapper's.
pub fn timeout_of(tool: usize, wrapper_ms: u64) -> u64 {
    match TOOLS[tool].0 {
        "slow" => SLOW_TIMEOUT_MS as u64,
        "watch" => WATCH_TIMEOUT_MS as u64,
        _ => wrapper_ms,
    }
}

/// The wrapper's capacities the model counts with (`run` configures the core with them).
/// A deferred or adapter call's args, compact (SPEC §7.23).
pub const ARGS_CAP: usize = 512;
/// A result, compact (SPEC §7.23).
pub const RESULT_CAP: usize = 512;
/// An error message, escaped (SPEC §5: the model's `args_error` is cut to fit it).
pub const MESSAGE_CAP: usize = 192;

pub fn sync_out(i: usize, args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    match TOOLS[i].1 {
        Def::Result(r) => {
            out.write(r.as_bytes());
            Ok(())
        }
        Def::Echo => {
            out.write(args);
            Ok(())
        }
        Def::Fail(m) => {
            out.write(m.as_bytes());
            Err(ToolFailed)
        }
        Def::Deferred | Def::Adapter => Err(ToolFailed),
    }
}

pub fn t0(a: &[u8], o: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    sync_out(0, a, o)
}
pub fn t1(a: &[u8], o: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    sync_out(1, a, o)
}
pub fn t2(a: &[u8], o: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    sync_out(2, a, o)
}
pub fn t3(a: &[u8], o: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    sync_out(3, a, o)
}
pub fn t4(a: &[u8], o: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    sync_out(4, a, o)
}
pub fn t5(a: &[u8], o: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    sync_out(5, a, o)
}

pub fn core_tools() -> Vec<Tool<'static>> {
    vec![
        Tool::sync(TOOLS[0].0, &t0),
        Tool::sync(TOOLS[1].0, &t1),
        Tool::sync(TOOLS[2].0, &t2),
        Tool::sync(TOOLS[3].0, &t3),
        Tool::sync(TOOLS[4].0, &t4),
        Tool::sync(TOOLS[5].0, &t5),
        Tool::deferred(TOOLS[6].0),
        Tool::adapter(TOOLS[7].0),
        Tool::deferred(TOOLS[8].0).with_timeout_ms(SLOW_TIMEOUT_MS),
        Tool::adapter(TOOLS[9].0).with_timeout_ms(WATCH_TIMEOUT_MS),
    ]
}

// =====================================================================
// Inputs, each with the meaning SPEC §1/§7 gives it
// =====================================================================

/// `content.name` as written, and its decoded string (`None`: not a string).
pub const NAMES: [(Option<&str>, Option<&str>); 18] = [
    (Some(r#""calc""#), Some("calc")),
    (Some(r#""echo""#), Some("echo")),
    (Some(r#""fail""#), Some("fail")),
    (Some(r#""later""#), Some("later")),
    (Some(r#""files""#), Some("files")),
    (Some(r#""flaky""#), Some("flaky")),
    (Some(r#""raw""#), Some("raw")),
    (Some(r#""天気""#), Some("天気")),
    (Some(r#""\u5929\u6c17""#), Some("天気")),
    (Some(r#""\u0066iles""#), Some("files")),
    (Some(r#""slow""#), Some("slow")),
    (Some(r#""watch""#), Some("watch")),
    (Some(r#""nope""#), Some("nope")),
    (Some(r#""Later""#), Some("Later")),
    (Some(r#""a\"b\n""#), Some("a\"b\n")),
    (None, None),
    (Some("42"), None),
    (Some("null"), None),
];
/// How many of `NAMES` are registered tools.
pub const KNOWN_NAMES: usize = 12;

/// `content.id` as written, and the id it gives (`None`: no id, SPEC §7.2).
pub const IDS: [(Option<&str>, Option<&str>); 10] = [
    (None, None),
    (Some(r#""a""#), Some("a")),
    (Some(r#""b""#), Some("b")),
    (Some(r#""c""#), Some("c")),
    (Some(r#""""#), Some("")),
    (Some(r#""\u0061""#), Some("a")),
    (Some(r#""q\"t""#), Some("q\"t")),
    (Some("7"), None),
    (Some("null"), None),
    (Some(r#"["a"]"#), None),
];

/// Nested arrays: `levels` deep around `1`.
pub fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

/// Tables built once (some entries are generated).
pub struct Tables {
    /// `content.args` as written (`None`: absent), and the args it gives (SPEC §1, §7.3):
    /// the first [`Tables::small_args`] small, the rest at or past [`ARGS_CAP`] (§7.23).
    pub args: Vec<(Option<String>, String)>,
    /// How many of `args` are small.
    pub small_args: usize,
    /// Members a call's `content` may also have, as written (key, value): an `args_error`
    /// (SPEC §5) of every kind, or members near it. Entry 0 is none. What they mean is worked
    /// out once the members are in their order ([`args_error_of`]): the last one counts.
    pub args_errors: Vec<Vec<(String, String)>>,
    /// `TOOL_CALL`s that are not valid JSON (or too deep): rejected on the response path.
    pub broken_calls: Vec<Vec<u8>>,
    /// Adapter frames and what they mean to a waiting call (SPEC §2, §5, §7.9, §7.10, §7.17).
    pub adapter: Vec<(Vec<u8>, AdMeaning)>,
    /// Where in `adapter` the frames about `PROGRESS` are (progress, and frames that look
    /// like it but are not, or are malformed).
    pub progress: std::ops::Range<usize>,
    /// Where in `adapter` the `PROGRESS` frames are (the start of `progress`).
    pub progress_only: std::ops::Range<usize>,
}

#[derive(Clone, Debug)]
pub enum AdMeaning {
    /// Record this raw result (when none is recorded yet).
    Record(String),
    /// Settle with this error (`None`: `Tool <name> failed`).
    Fail(Option<String>),
    End,
    Ignore,
    Malformed,
    /// A `PROGRESS` (SPEC §5): restarts the timeout under the cap; ignored with no cap.
    Progress,
}

pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let s = |x: &str| Some(x.to_string());
        // Args at level 3 of the frame: 30 levels reach the limit of 32 exactly.
        let deep_ok = nested(30);
        let args = vec![
            (None, "{}".to_string()),
            (s(r#"{"a":1}"#), r#"{"a":1}"#.to_string()),
            (
                s(r#"{ "b" : [1, 2.50, -0] }"#),
                r#"{ "b" : [1, 2.50, -0] }"#.to_string(),
            ),
            (s("[]"), "[]".to_string()),
            (s(r#""s""#), r#""s""#.to_string()),
            (s("null"), "null".to_string()),
            (s("1e400"), "1e400".to_string()),
            (
                s("12345678901234567890123"),
                "12345678901234567890123".to_string(),
            ),
            (
                s(r#"{"error":"in args"}"#),
                r#"{"error":"in args"}"#.to_string(),
            ),
            (Some(deep_ok.clone()), deep_ok),
            // Line breaks and tabs between tokens: what the library writes drops them (§7.22).
            (
                s("[\n1 ,\t{\"a\" : \"b c\"}\r\n]"),
                "[\n1 ,\t{\"a\" : \"b c\"}\r\n]".to_string(),
            ),
            (
                s("{\"error\":\r\n [1,\t\"x y\"],\n\"n\": -0}"),
                "{\"error\":\r\n [1,\t\"x y\"],\n\"n\": -0}".to_string(),
            ),
            // Not a member of the content: the args, as they are (SPEC §5).
            (
                s(r#"{"args_error":"in args"}"#),
                r#"{"args_error":"in args"}"#.to_string(),
            ),
        ];
        let mut broken_calls: Vec<Vec<u8>> = [
            r#"{"type":"TOOL_CALL","content":{"name":"calc",}}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"calc"}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"calc"}} x"#,
            r#"{"type":"TOOL_CALL","content":{"name":"calc","args":01}}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"calc","args":"\x"}}"#,
        ]
        .iter()
        .map(|f| f.as_bytes().to_vec())
        .collect();
        broken_calls.push(b"{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"ca\xfflc\"}}".to_vec());
        broken_calls.push(
            format!(
                r#"{{"type":"TOOL_CALL","content":{{"name":"calc","args":{}}}}}"#,
                nested(31)
            )
            .into_bytes(),
        );
        let r = |x: &str| AdMeaning::Record(x.to_string());
        let whole = |f: &str| (f.as_bytes().to_vec(), AdMeaning::Record(f.to_string()));
        let mut adapter: Vec<(Vec<u8>, AdMeaning)> = vec![
            (
                br#"{"type":"TOOL_RESULT","content":{"result":{"files":["a","b"]}}}"#.to_vec(),
                r(r#"{"files":["a","b"]}"#),
            ),
            (
                br#"{"type":"TOOL_RESULT","content":{"content":"text out","name":"files"}}"#
                    .to_vec(),
                r(r#""text out""#),
            ),
            (
                br#"{"type":"TOOL_RESULT","content":{"content":1,"result":null}}"#.to_vec(),
                r("null"),
            ),
            (
                br#"{"type":"TOOL_RESULT","content":{"result":{"error":"inner"}}}"#.to_vec(),
                r(r#"{"error":"inner"}"#),
            ),
            (
                br#"{"content":{"result":{"success":false}},"type":"TOOL_RESULT"}"#.to_vec(),
                r(r#"{"success":false}"#),
            ),
            (
                br#"{"type":"TOOL_RESULT","content":{"result":1.0e+2}}"#.to_vec(),
                r("1.0e+2"),
            ),
            whole(r#"{"type":"TOOL_RESULT","content":{"error":"nope"}}"#),
            whole(r#"{"type":"TOOL_RESULT","content":"str"}"#),
            whole(r#"{ "type" : "TOOL_RESULT" }"#),
            (
                br#"{"type":"ERROR","content":{"message":"disk gone"}}"#.to_vec(),
                AdMeaning::Fail(s("disk gone")),
            ),
            (
                br#"{"type":"ERROR","content":{"message":""}}"#.to_vec(),
                AdMeaning::Fail(s("")),
            ),
            (
                br#"{"type":"ERROR","content":{"message":"\u00e9\n\"x\""}}"#.to_vec(),
                AdMeaning::Fail(s("é\n\"x\"")),
            ),
            (
                br#"{"type":"ERROR","content":{"message":5}}"#.to_vec(),
                AdMeaning::Fail(None),
            ),
            (br#"{"type":"ERROR"}"#.to_vec(), AdMeaning::Fail(None)),
            (br#"{"type":"END"}"#.to_vec(), AdMeaning::End),
            (br#"{"type":"END","content":7}"#.to_vec(), AdMeaning::End),
            (
                br#"{"type":"TEXT","content":"progress"}"#.to_vec(),
                AdMeaning::Ignore,
            ),
            (br#"{"type":"CANCEL"}"#.to_vec(), AdMeaning::Ignore),
            (br#"{"type":7}"#.to_vec(), AdMeaning::Malformed),
            (b"not json".to_vec(), AdMeaning::Malformed),
            (
                br#"{"type":"TOOL_RESULT","content":{"result":}}"#.to_vec(),
                AdMeaning::Malformed,
            ),
            (
                br#"{"type":"END","content":[1,]}"#.to_vec(),
                AdMeaning::Malformed,
            ),
            (
                b"\xef\xbb\xbf{\"type\":\"END\"}".to_vec(),
                AdMeaning::Malformed,
            ),
        ];
        // The frame is level 1, its content level 2: 31 arrays reach 32, 32 arrays are too deep.
        adapter.push((
            format!(r#"{{"type":"TEXT","content":{}}}"#, nested(31)).into_bytes(),
            AdMeaning::Ignore,
        ));
        adapter.push((
            format!(r#"{{"type":"TEXT","content":{}}}"#, nested(32)).into_bytes(),
            AdMeaning::Malformed,
        ));
        // Results with line breaks between tokens, by member and whole frame.
        adapter.push((
            b"{\"type\":\"TOOL_RESULT\",\n\"content\":{\"result\":[ 1 ,\r\n {\"x\" : \"a b\"} ]}}"
                .to_vec(),
            r("[ 1 ,\r\n {\"x\" : \"a b\"} ]"),
        ));
        adapter.push(whole(
            "{ \"type\" : \"TOOL_RESULT\" ,\n \"content\" : [1,\t2] }",
        ));
        // SPEC §5 progress: plain, with content of every kind, escaped type, members in any
        // order; then frames that are not progress (another spelling, a type in the content)
        // and malformed ones (restarting nothing).
        let progress_start = adapter.len();
        let p = |f: &str, m: AdMeaning| (f.as_bytes().to_vec(), m);
        adapter.extend([
            p(r#"{"type":"PROGRESS"}"#, AdMeaning::Progress),
            p(
                r#"{"type":"PROGRESS","content":{"progress":1,"total":10}}"#,
                AdMeaning::Progress,
            ),
            p(
                r#"{"type":"PROG\u0052ESS","content":0.5}"#,
                AdMeaning::Progress,
            ),
            p(
                r#"{"content":"half way","type":"PROGRESS"}"#,
                AdMeaning::Progress,
            ),
            p(
                "{ \"type\" :\n\"PROGRESS\" ,\t\"content\" : [ 1 ] }",
                AdMeaning::Progress,
            ),
            p(r#"{"type":"progress"}"#, AdMeaning::Ignore),
            p(r#"{"type":"PROGRESS "}"#, AdMeaning::Ignore),
            p(
                r#"{"type":"TEXT","content":{"type":"PROGRESS"}}"#,
                AdMeaning::Ignore,
            ),
            p(r#"{"type":"PROGRESS","content":}"#, AdMeaning::Malformed),
            p(
                r#"{"type":"PROGRESS","content":[1,]}"#,
                AdMeaning::Malformed,
            ),
            p(r#"{"type":"PROGRESS","type":"END"}"#, AdMeaning::Malformed),
            p(r#"{"type":"PROGRESS"} x"#, AdMeaning::Malformed),
        ]);
        adapter.push((
            format!(r#"{{"type":"PROGRESS","content":{}}}"#, nested(32)).into_bytes(),
            AdMeaning::Malformed,
        ));
        let progress = progress_start..adapter.len();
        let progress_only = progress_start..progress_start + 5;
        assert!(adapter[progress_only.clone()]
            .iter()
            .all(|(_, m)| matches!(m, AdMeaning::Progress)));

        // Args at and past the args capacity (SPEC §7.23), by their size without white space:
        // exactly the cap (as written, and longer as written), one byte over.
        let small_args = args.len();
        let mut args = args;
        let body = |n: usize| "x".repeat(n);
        let at_cap = format!(r#"{{"k":"{}"}}"#, body(ARGS_CAP - 8));
        let at_cap_spaced = format!("{{ \"k\" :\n\"{}\" }}", body(ARGS_CAP - 8));
        let over_cap = format!(r#"{{"k":"{}"}}"#, body(ARGS_CAP - 7));
        for a in [at_cap, at_cap_spaced, over_cap] {
            args.push((Some(a.clone()), a));
        }

        let m = |k: &str, v: &str| vec![(format!("\"{k}\""), v.to_string())];
        let ae = |v: &str| m("args_error", v);
        let long = |unit: &str, n: usize| format!("\"{}\"", unit.repeat(n));
        let args_errors = vec![
            vec![],
            ae(r#""Unterminated string in JSON at position 12""#),
            ae(r#""""#),
            ae(r#""quote\" back\\ nl\n tab\t ctl\u0001 \u00e9 é \/ \u5929""#),
            // Controls: JSON's (below U+0020) escaped when written, DEL, C1 and U+2028 not.
            ae(r#""\u0000\u001f\b\f\r \u007f\u0085\u2028\uFFFF end""#),
            ae(r#""\ud800 lone""#),
            ae(r#""\udc00\ud83d\ude00\ud83d""#),
            // Longer than the message capacity once escaped: cut at a character boundary.
            ae(&long("x", 300)),
            ae(&format!("\"{}\\n\"", "y".repeat(MESSAGE_CAP - 2))),
            ae(&format!("\"{}\\n\"", "y".repeat(MESSAGE_CAP - 1))),
            ae(&format!("\"a{}\"", "é".repeat(100))),
            // A 6-byte escape that does not fit whole: cut before it.
            ae(&format!("\"{}\\u0001\"", "y".repeat(MESSAGE_CAP - 3))),
            ae(&long("\\u0001", 40)),
            ae(&long("\\ud800", 70)),
            ae(&long("\\n", 100)),
            ae(&long("\\u00e9", MESSAGE_CAP / 2 + 1)),
            // Not strings: ignored, the call goes on.
            ae("5"),
            ae("null"),
            ae(r#"{"message":"x"}"#),
            ae(r#"["e"]"#),
            ae("false"),
            // Keys compare decoded; another key is another member; the last one counts.
            m("args\\u005ferror", r#""escaped key""#),
            m("Args_error", r#""wrong key""#),
            m("args_errors", r#""wrong key""#),
            [ae(r#""first""#), ae("null")].concat(),
            [ae("7"), ae(r#""second""#)].concat(),
        ];
        Tables {
            args,
            small_args,
            args_errors,
            broken_calls,
            adapter,
            progress,
            progress_only,
        }
    })
}

/// Frames every path forwards unchanged (not `TOOL_CALL`, not `END`).
pub const PASS: [&str; 6] = [
    r#"{"type":"TEXT","content":"hi"}"#,
    r#"{"type":"CUSTOM","content":[1,{"x":null}]}"#,
    r#"{"type":"TOOL_RESULT","content":{"name":"calc","result":1}}"#,
    r#"{"type":"ERROR","content":{"message":"model err"}}"#,
    r#"{"content":"later","type":"TEXT"}"#,
    r#"{"type":"\u0054EXT","content":"escaped type"}"#,
];

/// Frames well formed up to their `type` and broken (or doubled) after it (SPEC §1, §7.25):
/// pass-through frames, read only as far as `type`, unless the wrapper validates every frame;
/// then they are malformed. The `bool` says whether the frame is an `END`.
pub fn loose_frames() -> &'static [(Vec<u8>, bool)] {
    static LOOSE: OnceLock<Vec<(Vec<u8>, bool)>> = OnceLock::new();
    LOOSE.get_or_init(|| {
        let mut v: Vec<(Vec<u8>, bool)> = [
            (&br#"{"type":"TEXT","content":[1,}"#[..], false),
            (
                br#"{"type":"TEXT","type":"TOOL_CALL","content":{"name":"calc"}}"#,
                false,
            ),
            (br#"{"type":"CUSTOM","content":"x"} trailing"#, false),
            (b"{\"type\":\"TEXT\",\"content\":\"tab\there\"}", false),
            (br#"{"type":"END","content":{]}"#, true),
            (br#"{"type":"END","type":"TEXT"}"#, true),
        ]
        .iter()
        .map(|(b, end)| (b.to_vec(), *end))
        .collect();
        // Depth counts only where the frame is validated: 32 arrays in the content are level 33.
        v.push((
            format!(r#"{{"type":"TEXT","content":{}}}"#, nested(32)).into_bytes(),
            false,
        ));
        v
    })
}

/// `END` frames (held byte for byte while calls are pending).
pub const ENDS: [&str; 5] = [
    r#"{"type":"END"}"#,
    r#"{"type":"END","content":{"reason":"stop"}}"#,
    r#"{ "type" : "END" , "content" : 1.50 }"#,
    r#"{"content":null,"type":"END"}"#,
    // Several lines: a held END is the host's bytes, released as they are (§7.22).
    "{\"type\":\"END\",\n\"content\":\"multi\"}",
];

/// Frames malformed at or before `type`: rejected on every path.
pub const MALFORMED: [&[u8]; 7] = [
    br#"{"type":7}"#,
    b"[1]",
    br#"{"content":1}"#,
    b"not json",
    b"",
    b"\xef\xbb\xbf{\"type\":\"TEXT\"}",
    b"{\"type\":\"TE\xffXT\"}",
];

/// Results given to `complete`: raw JSON (`Ok`, maybe invalid) or an error message.
pub const OUTCOMES: [Result<&str, &str>; 16] = [
    Ok(r#"{"ok":true}"#),
    Ok("1.50"),
    Ok("null"),
    Ok(r#"{"error":"bad"}"#),
    Ok(r#"{"success":false}"#),
    Ok(r#"{"success":false,"error":null}"#),
    Ok(r#"{"success":false,"error":false}"#),
    Ok(r#"{"error":null,"v":[1e400]}"#),
    Ok("[1,"),
    Ok(r#"{"a":1} x"#),
    Err("no disk"),
    Err(""),
    Err("quote\"\n\u{1}"),
    Err("天気 ✓"),
    Ok("[ 1,\n\t{\"k\" : \"v w\"} ]"),
    Ok("{\"error\":\n [1, \"x\"],\r\n\"v\":2}"),
];

pub const REASONS: [&str; 4] = ["user", "", "stop \"now\"\n", "天気"];

// =====================================================================
// Operations
// =====================================================================

#[derive(Clone, Debug)]
pub enum Content {
    Absent,
    NotObject(usize),
    Object {
        id: usize,
        name: usize,
        args: usize,
        /// One of [`Tables::args_errors`] (0: none).
        args_error: usize,
        order: usize,
    },
}

pub const NOT_OBJECT: [&str; 5] = [
    r#""calc""#,
    "5",
    "null",
    r#"[{"name":"calc"}]"#,
    // Only a member of an object content counts (SPEC §5): this call is malformed.
    r#"[{"name":"calc","args_error":"x"}]"#,
];

#[derive(Clone, Debug)]
pub enum Resp {
    Call {
        content: Content,
        type_last: bool,
        spaced: bool,
    },
    BrokenCall(usize),
    Pass(usize),
    End(usize),
    Malformed(usize),
    /// One of [`loose_frames`].
    Loose(usize),
}

/// Which call a completion or adapter input is for.
#[derive(Clone, Debug)]
pub enum Target {
    /// This call number, whatever it is (often one the host has no handle for).
    Number(u32),
    /// The `n`-th most recent call that took a slot (as the core's dispositions said),
    /// or call number `n` when there are fewer.
    Recent(usize),
    /// The `n`-th most recent adapter call (as the started calls said), pending or not, or
    /// call number `n` when there are fewer.
    Adapter(usize),
}

/// Weights of a target: recent, by number, recent adapter call.
const TARGET_WEIGHTS: [usize; 3] = [3, 1, 3];
/// Weights of the target of a progress at a deadline.
const PROGRESS_TARGET_WEIGHTS: [usize; 3] = [1, 1, 6];

fn target_strategy(w: [usize; 3]) -> impl Strategy<Value = Target> + Clone {
    prop_oneof![
        w[0] as u32 => (0usize..3).prop_map(Target::Recent),
        w[1] as u32 => (0u32..10).prop_map(Target::Number),
        w[2] as u32 => (0usize..2).prop_map(Target::Adapter),
    ]
}

#[derive(Clone, Debug)]
pub enum Op {
    Response(Resp),
    Request(usize),
    Complete {
        call: Target,
        outcome: usize,
    },
    Adapter {
        call: Target,
        frame: usize,
    },
    Close {
        call: Target,
    },
    Tick(u64),
    Cancel(usize),
    Abort,
    ClearTrace,
    /// The operation, given a time `back` ms before the latest one, or 0 ms when that is
    /// earlier (refused, nothing changes); skipped at 0 ms. Only timed operations are wrapped.
    Late {
        back: u64,
        op: Box<Op>,
    },
    /// A completion, adapter frame or close, `before` ms before its call's deadline as the
    /// model has it (SPEC §5, §7.5: at the deadline it has timed out, at `deadline − 1` it
    /// applies): the clock moves there first when that is later (then timeouts fire, as
    /// before every operation); otherwise the operation runs now.
    Deadline {
        before: u64,
        op: Box<Op>,
    },
}

impl Op {
    /// The call a completion, adapter frame or close is for.
    pub fn target(&self) -> Option<&Target> {
        match self {
            Op::Complete { call, .. } | Op::Adapter { call, .. } | Op::Close { call } => Some(call),
            _ => None,
        }
    }
}

/// What a response frame is, by SPEC §1, §5 and §7.1–7.3.
#[derive(Clone, Debug)]
pub enum RespMeaning {
    Call {
        name: Option<String>,
        id: Option<String>,
        args: String,
        /// `content.args_error`, decoded, when it is a string (SPEC §5).
        args_error: Option<String>,
    },
    Pass,
    End,
    Malformed,
    /// Broken after `type`: what it says without full validation, malformed with it.
    Loose(Box<RespMeaning>),
}

pub fn response_frame(r: &Resp) -> (Vec<u8>, RespMeaning) {
    let t = tables();
    match r {
        Resp::Call {
            content,
            type_last,
            spaced,
        } => {
            let (text, meaning) = match content {
                Content::Absent => (
                    None,
                    RespMeaning::Call {
                        name: None,
                        id: None,
                        args: "{}".into(),
                        args_error: None,
                    },
                ),
                Content::NotObject(i) => (
                    Some(NOT_OBJECT[*i].to_string()),
                    RespMeaning::Call {
                        name: None,
                        id: None,
                        args: "{}".into(),
                        args_error: None,
                    },
                ),
                Content::Object {
                    id,
                    name,
                    args,
                    args_error,
                    order,
                } => {
                    let mut members: Vec<(String, String)> = Vec::new();
                    if let Some(raw) = IDS[*id].0 {
                        members.push((jstr("id"), raw.to_string()));
                    }
                    if let Some(raw) = NAMES[*name].0 {
                        members.push((jstr("name"), raw.to_string()));
                    }
                    if let Some(raw) = &t.args[*args].0 {
                        members.push((jstr("args"), raw.clone()));
                    }
                    members.extend(t.args_errors[*args_error].iter().cloned());
                    if !members.is_empty() {
                        let n = members.len();
                        members.rotate_left(order % n);
                    }
                    if *order >= 3 {
                        members.reverse();
                    }
                    let (colon, comma) = if *spaced {
                        (" :\n", "\t,\r\n ")
                    } else {
                        (":", ",")
                    };
                    let body: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("{k}{colon}{v}"))
                        .collect();
                    (
                        Some(format!("{{{}}}", body.join(comma))),
                        RespMeaning::Call {
                            name: NAMES[*name].1.map(str::to_string),
                            id: IDS[*id].1.map(str::to_string),
                            args: t.args[*args].1.clone(),
                            args_error: args_error_of(&members),
                        },
                    )
                }
            };
            let frame = match (text, type_last) {
                (None, _) => r#"{"type":"TOOL_CALL"}"#.to_string(),
                (Some(c), false) => format!(r#"{{"type":"TOOL_CALL","content":{c}}}"#),
                (Some(c), true) => format!(r#"{{"content":{c},"type":"TOOL_CALL"}}"#),
            };
            (frame.into_bytes(), meaning)
        }
        Resp::BrokenCall(i) => (t.broken_calls[*i].clone(), RespMeaning::Malformed),
        Resp::Pass(i) => (PASS[*i].as_bytes().to_vec(), RespMeaning::Pass),
        Resp::End(i) => (ENDS[*i].as_bytes().to_vec(), RespMeaning::End),
        Resp::Malformed(i) => (MALFORMED[*i].to_vec(), RespMeaning::Malformed),
        Resp::Loose(i) => {
            let (bytes, end) = &loose_frames()[*i];
            let inner = if *end {
                RespMeaning::End
            } else {
                RespMeaning::Pass
            };
            (bytes.clone(), RespMeaning::Loose(Box::new(inner)))
        }
    }
}

/// SPEC §5: the `args_error` of a content with these members (keys and values as written),
/// when it is a string. Keys compare decoded; with the key twice, the last counts (what
/// `JSON.parse` does).
pub fn args_error_of(members: &[(String, String)]) -> Option<String> {
    let (_, value) = members
        .iter()
        .rev()
        .find(|(k, _)| decode_string(k) == "args_error")?;
    value.starts_with('"').then(|| decode_string(value))
}

/// A JSON string token, decoded as SPEC §7.24 says: an escaped surrogate that is not half of
/// a pair is U+FFFD.
pub fn decode_string(token: &str) -> String {
    enum Unit {
        Char(char),
        Surrogate(u16),
    }
    let body = &token[1..token.len() - 1];
    let mut units = Vec::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            units.push(Unit::Char(c));
            continue;
        }
        let unit = match chars.next().expect("an escape") {
            'b' => Unit::Char('\u{8}'),
            'f' => Unit::Char('\u{c}'),
            'n' => Unit::Char('\n'),
            'r' => Unit::Char('\r'),
            't' => Unit::Char('\t'),
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                let v = u16::from_str_radix(&hex, 16).expect("four hex digits");
                char::from_u32(v as u32).map_or(Unit::Surrogate(v), Unit::Char)
            }
            other => Unit::Char(other),
        };
        units.push(unit);
    }
    let mut out = String::new();
    let mut i = 0;
    while i < units.len() {
        match units[i] {
            Unit::Char(c) => out.push(c),
            Unit::Surrogate(hi @ 0xD800..=0xDBFF) => match units.get(i + 1) {
                Some(&Unit::Surrogate(lo @ 0xDC00..=0xDFFF)) => {
                    let c = 0x10000 + ((hi as u32 - 0xD800) << 10) + (lo as u32 - 0xDC00);
                    out.push(char::from_u32(c).expect("a pair"));
                    i += 1;
                }
                _ => out.push('\u{fffd}'),
            },
            Unit::Surrogate(_) => out.push('\u{fffd}'),
        }
        i += 1;
    }
    out
}

/// SPEC §5: a message cut to its longest prefix (at a character boundary) whose escaped form
/// (§1: minimal escapes) fits `cap` bytes, and whether it was cut.
pub fn cut_to_escaped(msg: &str, cap: usize) -> (String, bool) {
    let mut total = 0;
    for (i, c) in msg.char_indices() {
        total += match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            '\0'..='\u{1f}' => 6,
            c => c.len_utf8(),
        };
        if total > cap {
            return (msg[..i].to_string(), true);
        }
    }
    (msg.to_string(), false)
}

/// Request-path frames: every well-formed frame passes (a `TOOL_CALL` included), and a
/// loose one unless every frame is validated.
pub fn request_frame(i: usize, full_validation: bool) -> (Vec<u8>, bool) {
    if let Some(j) = i.checked_sub(REQUESTS - loose_frames().len()) {
        return (loose_frames()[j].0.clone(), !full_validation);
    }
    let well_formed: Vec<&[u8]> = PASS
        .iter()
        .chain(ENDS.iter())
        .map(|s| s.as_bytes())
        .chain([&br#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#[..]])
        .collect();
    if i < well_formed.len() {
        (well_formed[i].to_vec(), true)
    } else {
        (MALFORMED[i - well_formed.len()].to_vec(), false)
    }
}
pub const REQUESTS: usize = PASS.len() + ENDS.len() + 1 + MALFORMED.len() + LOOSE_FRAMES;

/// How many [`loose_frames`] there are.
pub const LOOSE_FRAMES: usize = 7;

pub fn content_strategy() -> impl Strategy<Value = Content> {
    // Deferred (`later`) and adapter (`files`) calls are the ones with a life after the call.
    let name = prop_oneof![
        3 => Just(3usize),
        4 => Just(4usize),
        1 => Just(9usize),
        2 => Just(10usize),
        3 => Just(11usize),
        4 => 0..KNOWN_NAMES,
        2 => KNOWN_NAMES..NAMES.len(),
    ];
    let id = prop_oneof![3 => 0usize..5, 1 => 0..IDS.len()];
    let t = tables();
    let args = prop_oneof![5 => 0..t.small_args, 1 => t.small_args..t.args.len()];
    let args_error = prop_oneof![4 => Just(0usize), 1 => 1..t.args_errors.len()];
    prop_oneof![
        1 => Just(Content::Absent),
        1 => (0..NOT_OBJECT.len()).prop_map(Content::NotObject),
        16 => (id, name, args, args_error, 0..6usize).prop_map(|(id, name, args, args_error, order)| Content::Object {
            id,
            name,
            args,
            args_error,
            order
        }),
    ]
}

pub fn resp_strategy() -> impl Strategy<Value = Resp> {
    prop_oneof![
        10 => (content_strategy(), any::<bool>(), prop::bool::weighted(0.2)).prop_map(
            |(content, type_last, spaced)| Resp::Call {
                content,
                type_last,
                spaced
            }
        ),
        1 => (0..tables().broken_calls.len()).prop_map(Resp::BrokenCall),
        2 => (0..PASS.len()).prop_map(Resp::Pass),
        3 => (0..ENDS.len()).prop_map(Resp::End),
        1 => (0..MALFORMED.len()).prop_map(Resp::Malformed),
        1 => (0..LOOSE_FRAMES).prop_map(Resp::Loose),
    ]
}

pub fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => timed_op_strategy(),
        1 => Just(Op::Abort),
        1 => Just(Op::ClearTrace),
        2 => (1u64..30, timed_op_strategy()).prop_map(|(back, op)| Op::Late { back, op: Box::new(op) }),
        5 => (prop_oneof![2 => Just(0u64), 3 => Just(1u64), 1 => Just(2u64)], deadline_op_strategy())
            .prop_map(|(before, op)| Op::Deadline { before, op: Box::new(op) }),
    ]
}

/// The operations [`Op::Deadline`] moves to a deadline: progress most often.
fn deadline_op_strategy() -> impl Strategy<Value = Op> {
    let t = tables();
    let call = target_strategy(TARGET_WEIGHTS);
    prop_oneof![
        3 => (target_strategy(PROGRESS_TARGET_WEIGHTS), t.progress_only.clone()).prop_map(|(call, frame)| Op::Adapter { call, frame }),
        1 => (target_strategy(PROGRESS_TARGET_WEIGHTS), t.progress.clone()).prop_map(|(call, frame)| Op::Adapter { call, frame }),
        2 => (call.clone(), 0..t.adapter.len()).prop_map(|(call, frame)| Op::Adapter { call, frame }),
        1 => (call.clone(), 0..OUTCOMES.len()).prop_map(|(call, outcome)| Op::Complete { call, outcome }),
        1 => call.prop_map(|call| Op::Close { call }),
    ]
}

/// How [`Case::max_total_ms`] relates to the wrapper's timeout: off, below, equal, above,
/// large (the weights [`case_strategy`] and [`case_from_bytes`] draw them with).
pub const CAP_KINDS: [usize; 5] = [2, 1, 1, 2, 1];
/// How far above the timeout an "above" cap goes.
pub const CAP_ABOVE: usize = 30;

/// SPEC §5's `max_total_timeout_ms` of this kind (one of [`CAP_KINDS`]) for a wrapper timeout
/// of `timeout` ms, `off` placing it in its range. A "below" with no room below is "equal".
pub fn cap_of(timeout: u32, kind: usize, off: usize) -> u32 {
    match kind {
        0 => 0,
        1 if timeout > 1 => 1 + (off % (timeout as usize - 1)) as u32,
        1 | 2 => timeout,
        3 => timeout + 1 + (off % CAP_ABOVE) as u32,
        _ => u32::MAX,
    }
}

/// The kind and offset [`cap_of`] gives `cap` from (its inverse).
pub fn cap_kind(timeout: u32, cap: u32) -> (usize, usize) {
    match cap {
        0 => (0, 0),
        c if c < timeout => (1, c as usize - 1),
        c if c == timeout => (2, 0),
        u32::MAX => (4, 0),
        c => (3, (c - timeout - 1) as usize),
    }
}

/// The operations that take the clock.
fn timed_op_strategy() -> impl Strategy<Value = Op> {
    let call = target_strategy(TARGET_WEIGHTS);
    prop_oneof![
        14 => resp_strategy().prop_map(Op::Response),
        2 => (0..REQUESTS).prop_map(Op::Request),
        6 => (call.clone(), 0..OUTCOMES.len()).prop_map(|(call, outcome)| Op::Complete { call, outcome }),
        6 => (call.clone(), prop_oneof![5 => 0..tables().adapter.len(), 1 => tables().progress_only.clone()])
            .prop_map(|(call, frame)| Op::Adapter { call, frame }),
        2 => call.prop_map(|call| Op::Close { call }),
        5 => prop_oneof![3 => 0u64..6, 1 => 0u64..40].prop_map(Op::Tick),
        1 => (0..REASONS.len()).prop_map(Op::Cancel),
    ]
}

#[derive(Clone, Debug)]
pub struct Case {
    pub slots: usize,
    /// `WrapperConfig::full_validation` (SPEC §7.25).
    pub full_validation: bool,
    /// When set, the host first offers every frame a buffer of this many bytes, and checks
    /// that a refusal names the frame's exact size and leaves the queue as it was.
    pub short_buffer: Option<usize>,
    /// When set, `WrapperConfig::held_bytes` is this small (a tiny capacity): `END`s held while
    /// calls are pending fill it, and one that does not fit is refused with `HeldFull`.
    pub held_bytes: Option<usize>,
    pub timeout_ms: u32,
    /// `WrapperConfig::max_total_timeout_ms` (SPEC §5; 0: progress restarts nothing).
    pub max_total_ms: u32,
    pub max_rounds: u32,
    pub mirror: bool,
    pub aborted: bool,
    pub trace_entries: usize,
    pub ops: Vec<Op>,
}

pub fn case_strategy() -> impl Strategy<Value = Case> {
    (
        0usize..=4,
        prop_oneof![1 => Just(0u32), 6 => 1u32..=20],
        prop_oneof![2 => Just(0u32), 1 => 1u32..=3],
        any::<bool>(),
        prop::bool::weighted(0.1),
        0usize..=6,
        prop::collection::vec(op_strategy(), 0..40),
        (
            any::<bool>(),
            prop_oneof![3 => Just(None), 1 => (0usize..400).prop_map(Some)],
            prop_oneof![3 => Just(None), 1 => (0usize..100).prop_map(Some)],
            (
                prop_oneof![
                    2 => Just(0usize),
                    1 => Just(1usize),
                    1 => Just(2usize),
                    2 => Just(3usize),
                    1 => Just(4usize)
                ],
                0usize..CAP_ABOVE * 20,
            ),
        ),
    )
        .prop_map(
            |(
                slots,
                timeout_ms,
                max_rounds,
                mirror,
                aborted,
                trace_entries,
                ops,
                (full_validation, short_buffer, held_bytes, (cap, off)),
            )| Case {
                slots,
                full_validation,
                short_buffer,
                held_bytes,
                timeout_ms,
                max_total_ms: cap_of(timeout_ms, cap, off),
                max_rounds,
                mirror,
                aborted,
                trace_entries,
                ops,
            },
        )
}

/// Weights of `content.name`: `later`, `files`, `"\u0066iles"`, `slow`, `watch`, any
/// registered name, any other.
const NAME_WEIGHTS: [usize; 7] = [3, 4, 1, 2, 3, 4, 2];
/// Weights of an operation: timed, `abort`, `clear_trace`, late, at a deadline.
const OP_WEIGHTS: [usize; 5] = [30, 1, 1, 2, 5];
/// Weights of the operation at a deadline: a `PROGRESS`, a frame about progress, any adapter
/// frame, complete, close.
const DEADLINE_OP_WEIGHTS: [usize; 5] = [3, 1, 2, 1, 1];

/// Reads choices from fuzzer bytes: each choice takes one byte (two for ranges over 256),
/// and an exhausted input reads zeros, so every byte string is a case.
struct Choices<'d> {
    data: &'d [u8],
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self
            .data
            .split_first()
            .map_or((0, &[][..]), |(b, r)| (*b, r));
        self.data = rest;
        b
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        let v = match n > 256 {
            true => u16::from_le_bytes([self.byte(), self.byte()]) as usize,
            false => self.byte() as usize,
        };
        v % n
    }

    /// An index into `weights`, each chosen in proportion to its weight.
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut x = self.below(weights.iter().sum());
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    fn target(&mut self) -> Target {
        self.target_with(&TARGET_WEIGHTS)
    }

    fn target_with(&mut self, weights: &[usize; 3]) -> Target {
        match self.weighted(weights) {
            0 => Target::Recent(self.below(3)),
            1 => Target::Number(self.below(10) as u32),
            _ => Target::Adapter(self.below(2)),
        }
    }

    fn content(&mut self) -> Content {
        match self.weighted(&[1, 1, 16]) {
            0 => Content::Absent,
            1 => Content::NotObject(self.below(NOT_OBJECT.len())),
            _ => {
                let id = match self.weighted(&[3, 1]) {
                    0 => self.below(5),
                    _ => self.below(IDS.len()),
                };
                let name = match self.weighted(&NAME_WEIGHTS) {
                    0 => 3,
                    1 => 4,
                    2 => 9,
                    3 => 10,
                    4 => 11,
                    5 => self.below(KNOWN_NAMES),
                    _ => KNOWN_NAMES + self.below(NAMES.len() - KNOWN_NAMES),
                };
                let t = tables();
                let args = match self.weighted(&[5, 1]) {
                    0 => self.below(t.small_args),
                    _ => t.small_args + self.below(t.args.len() - t.small_args),
                };
                let args_error = match self.weighted(&[4, 1]) {
                    0 => 0,
                    _ => 1 + self.below(t.args_errors.len() - 1),
                };
                Content::Object {
                    id,
                    name,
                    args,
                    args_error,
                    order: self.below(6),
                }
            }
        }
    }

    fn resp(&mut self) -> Resp {
        match self.weighted(&[10, 1, 2, 3, 1, 1]) {
            0 => Resp::Call {
                content: self.content(),
                type_last: self.byte() & 1 == 1,
                spaced: self.below(5) == 0,
            },
            1 => Resp::BrokenCall(self.below(tables().broken_calls.len())),
            2 => Resp::Pass(self.below(PASS.len())),
            3 => Resp::End(self.below(ENDS.len())),
            4 => Resp::Malformed(self.below(MALFORMED.len())),
            _ => Resp::Loose(self.below(LOOSE_FRAMES)),
        }
    }

    fn op(&mut self) -> Op {
        match self.weighted(&OP_WEIGHTS) {
            0 => self.timed_op(),
            1 => Op::Abort,
            2 => Op::ClearTrace,
            3 => Op::Late {
                back: 1 + self.below(30) as u64,
                op: Box::new(self.timed_op()),
            },
            _ => Op::Deadline {
                before: self.weighted(&[2, 3, 1]) as u64,
                op: Box::new(self.deadline_op()),
            },
        }
    }

    fn deadline_op(&mut self) -> Op {
        let t = tables();
        match self.weighted(&DEADLINE_OP_WEIGHTS) {
            0 => Op::Adapter {
                call: self.target_with(&PROGRESS_TARGET_WEIGHTS),
                frame: t.progress_only.start + self.below(t.progress_only.len()),
            },
            1 => Op::Adapter {
                call: self.target_with(&PROGRESS_TARGET_WEIGHTS),
                frame: t.progress.start + self.below(t.progress.len()),
            },
            2 => Op::Adapter {
                call: self.target(),
                frame: self.below(t.adapter.len()),
            },
            3 => Op::Complete {
                call: self.target(),
                outcome: self.below(OUTCOMES.len()),
            },
            _ => Op::Close {
                call: self.target(),
            },
        }
    }

    fn timed_op(&mut self) -> Op {
        match self.weighted(&[14, 2, 6, 6, 2, 5, 1]) {
            0 => Op::Response(self.resp()),
            1 => Op::Request(self.below(REQUESTS)),
            2 => Op::Complete {
                call: self.target(),
                outcome: self.below(OUTCOMES.len()),
            },
            3 => Op::Adapter {
                call: self.target(),
                frame: match self.weighted(&[5, 1]) {
                    0 => self.below(tables().adapter.len()),
                    _ => {
                        let only = tables().progress_only.clone();
                        only.start + self.below(only.len())
                    }
                },
            },
            4 => Op::Close {
                call: self.target(),
            },
            5 => Op::Tick(match self.weighted(&[3, 1]) {
                0 => self.below(6) as u64,
                _ => self.below(40) as u64,
            }),
            _ => Op::Cancel(self.below(REASONS.len())),
        }
    }
}

/// The case a fuzzer's bytes describe, drawn from the same ranges and weights as
/// [`case_strategy`]: the first bytes set up the wrapper, each later one or few an operation
/// (at most 64).
pub fn case_from_bytes(data: &[u8]) -> Case {
    let mut c = Choices { data };
    let slots = c.below(5);
    let timeout_ms = match c.weighted(&[1, 6]) {
        0 => 0,
        _ => 1 + c.below(20) as u32,
    };
    let max_rounds = match c.weighted(&[2, 1]) {
        0 => 0,
        _ => 1 + c.below(3) as u32,
    };
    let mirror = c.byte() & 1 == 1;
    let aborted = c.below(10) == 0;
    let trace_entries = c.below(7);
    let full_validation = c.byte() & 1 == 1;
    let short_buffer = match c.weighted(&[3, 1]) {
        0 => None,
        _ => Some(c.below(400)),
    };
    let held_bytes = match c.weighted(&[3, 1]) {
        0 => None,
        _ => Some(c.below(100)),
    };
    let max_total_ms = match c.weighted(&CAP_KINDS) {
        1 if timeout_ms > 1 => cap_of(timeout_ms, 1, c.below(timeout_ms as usize - 1)),
        3 => cap_of(timeout_ms, 3, c.below(CAP_ABOVE)),
        kind => cap_of(timeout_ms, kind, 0),
    };
    let mut ops = Vec::new();
    while !c.data.is_empty() && ops.len() < 64 {
        ops.push(c.op());
    }
    Case {
        slots,
        full_validation,
        short_buffer,
        held_bytes,
        timeout_ms,
        max_total_ms,
        max_rounds,
        mirror,
        aborted,
        trace_entries,
        ops,
    }
}

/// Writes the choices [`case_from_bytes`] reads back: each method undoes the `Choices`
/// method of the same name.
struct ChoiceWriter {
    out: Vec<u8>,
}

impl ChoiceWriter {
    fn byte(&mut self, b: u8) {
        self.out.push(b);
    }

    fn below(&mut self, n: usize, v: usize) {
        assert!(v < n, "{v} is not below {n}");
        match n > 256 {
            true => self.out.extend_from_slice(&(v as u16).to_le_bytes()),
            false => self.out.push(v as u8),
        }
    }

    fn weighted(&mut self, weights: &[usize], i: usize) {
        self.below(weights.iter().sum(), weights[..i].iter().sum());
    }

    fn target(&mut self, t: &Target) {
        match *t {
            Target::Recent(n) => {
                self.weighted(&TARGET_WEIGHTS, 0);
                self.below(3, n);
            }
            Target::Number(k) => {
                self.weighted(&TARGET_WEIGHTS, 1);
                self.below(10, k as usize);
            }
            Target::Adapter(n) => {
                self.weighted(&TARGET_WEIGHTS, 2);
                self.below(2, n);
            }
        }
    }

    fn content(&mut self, c: &Content) {
        match *c {
            Content::Absent => self.weighted(&[1, 1, 16], 0),
            Content::NotObject(i) => {
                self.weighted(&[1, 1, 16], 1);
                self.below(NOT_OBJECT.len(), i);
            }
            Content::Object {
                id,
                name,
                args,
                args_error,
                order,
            } => {
                self.weighted(&[1, 1, 16], 2);
                match id < 5 {
                    true => {
                        self.weighted(&[3, 1], 0);
                        self.below(5, id);
                    }
                    false => {
                        self.weighted(&[3, 1], 1);
                        self.below(IDS.len(), id);
                    }
                }
                match name < KNOWN_NAMES {
                    true => {
                        self.weighted(&NAME_WEIGHTS, 5);
                        self.below(KNOWN_NAMES, name);
                    }
                    false => {
                        self.weighted(&NAME_WEIGHTS, 6);
                        self.below(NAMES.len() - KNOWN_NAMES, name - KNOWN_NAMES);
                    }
                }
                let t = tables();
                match args < t.small_args {
                    true => {
                        self.weighted(&[5, 1], 0);
                        self.below(t.small_args, args);
                    }
                    false => {
                        self.weighted(&[5, 1], 1);
                        self.below(t.args.len() - t.small_args, args - t.small_args);
                    }
                }
                match args_error {
                    0 => self.weighted(&[4, 1], 0),
                    e => {
                        self.weighted(&[4, 1], 1);
                        self.below(t.args_errors.len() - 1, e - 1);
                    }
                }
                self.below(6, order);
            }
        }
    }

    fn resp(&mut self, r: &Resp) {
        let weights = [10, 1, 2, 3, 1, 1];
        match r {
            Resp::Call {
                content,
                type_last,
                spaced,
            } => {
                self.weighted(&weights, 0);
                self.content(content);
                self.byte(u8::from(*type_last));
                self.below(5, usize::from(!*spaced));
            }
            Resp::BrokenCall(i) => {
                self.weighted(&weights, 1);
                self.below(tables().broken_calls.len(), *i);
            }
            Resp::Pass(i) => {
                self.weighted(&weights, 2);
                self.below(PASS.len(), *i);
            }
            Resp::End(i) => {
                self.weighted(&weights, 3);
                self.below(ENDS.len(), *i);
            }
            Resp::Malformed(i) => {
                self.weighted(&weights, 4);
                self.below(MALFORMED.len(), *i);
            }
            Resp::Loose(i) => {
                self.weighted(&weights, 5);
                self.below(LOOSE_FRAMES, *i);
            }
        }
    }

    fn op(&mut self, op: &Op) {
        match op {
            Op::Abort => self.weighted(&OP_WEIGHTS, 1),
            Op::ClearTrace => self.weighted(&OP_WEIGHTS, 2),
            Op::Late { back, op } => {
                self.weighted(&OP_WEIGHTS, 3);
                self.below(30, *back as usize - 1);
                self.timed_op(op);
            }
            Op::Deadline { before, op } => {
                self.weighted(&OP_WEIGHTS, 4);
                self.weighted(&[2, 3, 1], *before as usize);
                self.deadline_op(op);
            }
            timed => {
                self.weighted(&OP_WEIGHTS, 0);
                self.timed_op(timed);
            }
        }
    }

    fn deadline_op(&mut self, op: &Op) {
        match op {
            // Any frame, progress or not (the decoder's progress branch gives the same ops).
            Op::Adapter { call, frame } => {
                self.weighted(&DEADLINE_OP_WEIGHTS, 2);
                self.target(call);
                self.below(tables().adapter.len(), *frame);
            }
            Op::Complete { call, outcome } => {
                self.weighted(&DEADLINE_OP_WEIGHTS, 3);
                self.target(call);
                self.below(OUTCOMES.len(), *outcome);
            }
            Op::Close { call } => {
                self.weighted(&DEADLINE_OP_WEIGHTS, 4);
                self.target(call);
            }
            other => panic!("{other:?} is not an operation at a deadline"),
        }
    }

    fn timed_op(&mut self, op: &Op) {
        let weights = [14, 2, 6, 6, 2, 5, 1];
        match op {
            Op::Response(r) => {
                self.weighted(&weights, 0);
                self.resp(r);
            }
            Op::Request(j) => {
                self.weighted(&weights, 1);
                self.below(REQUESTS, *j);
            }
            Op::Complete { call, outcome } => {
                self.weighted(&weights, 2);
                self.target(call);
                self.below(OUTCOMES.len(), *outcome);
            }
            Op::Adapter { call, frame } => {
                self.weighted(&weights, 3);
                self.target(call);
                // Any frame (the decoder's progress branch gives the same ops).
                self.weighted(&[5, 1], 0);
                self.below(tables().adapter.len(), *frame);
            }
            Op::Close { call } => {
                self.weighted(&weights, 4);
                self.target(call);
            }
            Op::Tick(dt) => {
                self.weighted(&weights, 5);
                match *dt < 6 {
                    true => {
                        self.weighted(&[3, 1], 0);
                        self.below(6, *dt as usize);
                    }
                    false => {
                        self.weighted(&[3, 1], 1);
                        self.below(40, *dt as usize);
                    }
                }
            }
            Op::Cancel(r) => {
                self.weighted(&weights, 6);
                self.below(REASONS.len(), *r);
            }
            other => panic!("{other:?} is not a timed operation"),
        }
    }
}

/// The bytes [`case_from_bytes`] decodes to `case` (at most 64 operations): a fuzzer's
/// corpus starts from the generator's cases this way.
pub fn case_to_bytes(case: &Case) -> Vec<u8> {
    let mut w = ChoiceWriter { out: Vec::new() };
    w.below(5, case.slots);
    match case.timeout_ms {
        0 => w.weighted(&[1, 6], 0),
        ms => {
            w.weighted(&[1, 6], 1);
            w.below(20, ms as usize - 1);
        }
    }
    match case.max_rounds {
        0 => w.weighted(&[2, 1], 0),
        n => {
            w.weighted(&[2, 1], 1);
            w.below(3, n as usize - 1);
        }
    }
    w.byte(u8::from(case.mirror));
    w.below(10, usize::from(!case.aborted));
    w.below(7, case.trace_entries);
    w.byte(u8::from(case.full_validation));
    match case.short_buffer {
        None => w.weighted(&[3, 1], 0),
        Some(len) => {
            w.weighted(&[3, 1], 1);
            w.below(400, len);
        }
    }
    match case.held_bytes {
        None => w.weighted(&[3, 1], 0),
        Some(len) => {
            w.weighted(&[3, 1], 1);
            w.below(100, len);
        }
    }
    match cap_kind(case.timeout_ms, case.max_total_ms) {
        (1, off) => {
            w.weighted(&CAP_KINDS, 1);
            w.below(case.timeout_ms as usize - 1, off);
        }
        (3, off) => {
            w.weighted(&CAP_KINDS, 3);
            w.below(CAP_ABOVE, off);
        }
        (kind, _) => w.weighted(&CAP_KINDS, kind),
    }
    for op in case.ops.iter().take(64) {
        w.op(op);
    }
    w.out
}

// =====================================================================
// What both sides report, in one comparable form
// =====================================================================

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum To {
    Model,
    Consumer,
    Adapter(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Result(String),
    Error(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A frame from `poll_transmit`.
    Tx(To, String),
    /// `on_tool_call(index, name, id, args)`.
    HookCall(u32, Option<String>, Option<String>, String),
    /// `on_tool_result(index, name, id, args, outcome)`.
    HookResult(u32, Option<String>, Option<String>, String, Outcome),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Forward,
    Intercepted {
        index: u32,
        pending: bool,
    },
    Held,
    Ok,
    /// The host has no handle for that call number, so it never asks the core.
    NoHandle,
    Rejected,
    InvalidResult,
    UnknownCall,
    /// `ClockWentBackwards`, with the latest time and the one given (ms).
    Backwards {
        last: u64,
        given: u64,
    },
    /// `HeldFull`: an `END` that does not fit the held buffer, with the bytes it needs and
    /// those free.
    HeldFull {
        needed: usize,
        free: usize,
    },
    CallFinished,
    CallTimedOut,
    CallCancelled,
    StaleCall,
    WrongKind,
    Other(String),
}

pub fn status_of_err(e: Error) -> Status {
    match e {
        Error::Malformed(_) => Status::Rejected,
        Error::InvalidResult(_) => Status::InvalidResult,
        Error::Call(CallError::Unknown) => Status::UnknownCall,
        Error::ClockWentBackwards(e) => Status::Backwards {
            last: e.last.as_millis(),
            given: e.given.as_millis(),
        },
        Error::HeldFull { needed, free } => Status::HeldFull { needed, free },
        Error::Call(CallError::Completed) => Status::CallFinished,
        Error::Call(CallError::TimedOut) => Status::CallTimedOut,
        Error::Call(CallError::Cancelled) => Status::CallCancelled,
        Error::Call(CallError::Stale) => Status::StaleCall,
        Error::Call(CallError::WrongKind) => Status::WrongKind,
        other => Status::Other(format!("{other:?}")),
    }
}

/// `CallStarted` as the host sees it: (call, adapter?, tool index, name, id, args).
pub type Started = (u32, bool, usize, String, Option<String>, String);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRow {
    pub name: Option<String>,
    pub args: String,
    pub outcome: Outcome,
}

// =====================================================================
// The reference model (SPEC §3, §5, §7), plain std + serde_json
// =====================================================================

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Finished,
    TimedOut,
    Cancelled,
}

#[derive(Clone, Debug)]
pub enum CallState {
    /// Completed inside the call that delivered it (sync, or refused before running).
    Immediate,
    Pending {
        adapter: bool,
        deadline: u64,
        recorded: Option<String>,
        tool: usize,
        /// Its timeout (the tool's own, or the wrapper's).
        timeout: u64,
        /// `start + max_total_timeout_ms` for an adapter call when the cap is on (SPEC §5).
        cap: Option<u64>,
    },
    Ended(Ended),
}

#[derive(Clone, Debug)]
pub struct MCall {
    pub name: Option<String>,
    pub id: Option<String>,
    pub args: String,
    pub state: CallState,
}

pub struct Model {
    pub slots: usize,
    pub full_validation: bool,
    pub timeout_ms: u64,
    /// SPEC §5's cap (0: off).
    pub max_total_ms: u64,
    pub max_rounds: u32,
    pub mirror: bool,
    pub trace_entries: usize,
    pub calls: Vec<MCall>,
    pub pending: usize,
    pub held: Vec<String>,
    /// `WrapperConfig::held_bytes` when the case makes it small; otherwise it never fills.
    pub held_bytes: Option<usize>,
    pub last_error: Option<String>,
    pub aborted: bool,
    pub rounds: u32,
    pub trace: Vec<TraceRow>,
    pub dropped: u32,
    pub out: Vec<Ev>,
    pub started: Vec<Started>,
    /// `WrapperStats::messages_truncated`: the model's `args_error`s cut to fit [`MESSAGE_CAP`].
    pub messages_truncated: u32,
    /// What the rules the model applied did, to show the generator reaches them.
    pub tally: Tally,
}

pub fn jstr(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

pub fn id_member(id: &Option<String>) -> String {
    id.as_ref()
        .map_or(String::new(), |i| format!(r#""id":{},"#, jstr(i)))
}

/// SPEC §7.22: a raw value as the library carries it, without the white space between tokens.
pub fn compact(raw: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in raw.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        } else {
            in_string = c == '"';
        }
        out.push(c);
    }
    out
}

/// SPEC §3.2.2 and §7.7: the last tool error a successful result sets.
pub fn result_error(raw: &str) -> Option<String> {
    let v: Value = serde_json::from_str(raw).ok()?;
    let obj = v.as_object()?;
    match obj.get("error") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => return Some(s.clone()),
        // Its raw text (serde_json would re-spell numbers such as `1e400`). In the tables, the
        // first `"error":` of a result is its top-level member.
        Some(_) => {
            let start = raw.find(r#""error":"#)? + r#""error":"#.len();
            let mut values = serde_json::Deserializer::from_str(&raw[start..]).into_iter::<Value>();
            values.next()?.ok()?;
            return Some(compact(&raw[start..start + values.byte_offset()]));
        }
    }
    (obj.get("success") == Some(&Value::Bool(false))).then(|| r#""success": false"#.to_string())
}

impl Model {
    pub fn new(c: &Case) -> Self {
        Model {
            slots: c.slots,
            full_validation: c.full_validation,
            timeout_ms: c.timeout_ms as u64,
            max_total_ms: c.max_total_ms as u64,
            max_rounds: c.max_rounds,
            mirror: c.mirror,
            trace_entries: c.trace_entries,
            calls: Vec::new(),
            pending: 0,
            held: Vec::new(),
            held_bytes: c.held_bytes,
            last_error: None,
            aborted: c.aborted,
            rounds: 0,
            trace: Vec::new(),
            dropped: 0,
            out: Vec::new(),
            started: Vec::new(),
            messages_truncated: 0,
            tally: Tally::new(),
        }
    }

    fn count(&mut self, what: &str) {
        *self.tally.entry(format!("model {what}")).or_default() += 1;
    }

    pub fn take(&mut self) -> (Vec<Ev>, Vec<Started>) {
        (
            std::mem::take(&mut self.out),
            std::mem::take(&mut self.started),
        )
    }

    pub fn holding_slots(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| matches!(c.state, CallState::Pending { .. }))
            .count()
    }

    /// SPEC §3.2, steps 1–6.
    pub fn complete(&mut self, k: usize, outcome: Outcome) {
        let c = self.calls[k].clone();
        // 1. trace
        if self.trace_entries == 0 {
            self.dropped += 1;
        } else {
            if self.trace.len() == self.trace_entries {
                self.trace.remove(0);
                self.dropped += 1;
            }
            self.trace.push(TraceRow {
                name: c.name.clone(),
                args: compact(&c.args),
                outcome: match &outcome {
                    Outcome::Result(r) => Outcome::Result(compact(r)),
                    error => error.clone(),
                },
            });
        }
        // 2. last tool error
        match &outcome {
            Outcome::Error(m) => self.last_error = Some(m.clone()),
            Outcome::Result(r) => {
                if let Some(e) = result_error(r) {
                    self.last_error = Some(e);
                }
            }
        }
        // 3. TOOL_RESULT
        let name = c.name.as_deref().map_or("null".to_string(), jstr);
        let tail = match &outcome {
            Outcome::Result(r) => format!(r#""result":{}"#, compact(r)),
            Outcome::Error(m) => format!(r#""error":{}"#, jstr(m)),
        };
        self.out.push(Ev::Tx(
            To::Model,
            format!(
                r#"{{"type":"TOOL_RESULT","content":{{{}"name":{name},{tail}}}}}"#,
                id_member(&c.id)
            ),
        ));
        // 4. hook
        self.out.push(Ev::HookResult(
            k as u32,
            c.name.clone(),
            c.id.clone(),
            c.args.clone(),
            outcome,
        ));
        // 5. pending, prompt; 6. released ENDs
        self.pending -= 1;
        if self.pending == 0 {
            if !self.aborted {
                if self.max_rounds > 0 && self.rounds >= self.max_rounds {
                    self.out.push(Ev::Tx(
                        To::Consumer,
                        format!(
                            r#"{{"type":"ERROR","content":{{"message":"Tool round limit reached ({})"}}}}"#,
                            self.max_rounds
                        ),
                    ));
                    self.aborted = true;
                } else {
                    self.rounds += 1;
                    let mut text = "Tool results above.".to_string();
                    if let Some(e) = &self.last_error {
                        text.push_str(" Last tool error: ");
                        text.push_str(e);
                    }
                    let prompt = format!(r#"{{"type":"TEXT","content":{}}}"#, jstr(&text));
                    self.out.push(Ev::Tx(To::Model, prompt.clone()));
                    if self.mirror {
                        self.out.push(Ev::Tx(To::Consumer, prompt));
                    }
                }
            }
            self.last_error = None;
            for end in std::mem::take(&mut self.held) {
                self.out.push(Ev::Tx(To::Consumer, end));
            }
        }
    }

    pub fn response(&mut self, now: u64, bytes: &[u8], meaning: RespMeaning) -> Status {
        match meaning {
            RespMeaning::Loose(_) if self.full_validation => Status::Rejected,
            RespMeaning::Loose(inner) => self.response(now, bytes, *inner),
            RespMeaning::Malformed => Status::Rejected,
            RespMeaning::Pass => Status::Forward,
            RespMeaning::End if self.pending > 0 => {
                // The host drains after every input, so the buffer holds only the held `END`s,
                // each with its 4-byte header.
                if let Some(cap) = self.held_bytes {
                    let used: usize = self.held.iter().map(|e| HELD_HEADER + e.len()).sum();
                    let needed = HELD_HEADER + bytes.len();
                    if needed > cap - used {
                        return Status::HeldFull {
                            needed,
                            free: cap - used,
                        };
                    }
                }
                self.held
                    .push(String::from_utf8(bytes.to_vec()).expect("UTF-8 END"));
                Status::Held
            }
            RespMeaning::End => Status::Forward,
            RespMeaning::Call {
                name,
                id,
                args,
                args_error,
            } => {
                let k = self.calls.len();
                self.out.push(Ev::HookCall(
                    k as u32,
                    name.clone(),
                    id.clone(),
                    args.clone(),
                ));
                self.pending += 1;
                self.calls.push(MCall {
                    name: name.clone(),
                    id: id.clone(),
                    args: args.clone(),
                    state: CallState::Immediate,
                });
                let tool = name
                    .as_deref()
                    .and_then(|n| TOOLS.iter().position(|(t, _)| *t == n));
                let duplicate = id.as_ref().is_some_and(|i| {
                    self.calls.iter().any(|c| {
                        matches!(c.state, CallState::Pending { .. }) && c.id.as_ref() == Some(i)
                    })
                });
                let holds_slot =
                    tool.is_some_and(|t| matches!(TOOLS[t].1, Def::Deferred | Def::Adapter));
                // SPEC §5, §7.4, §7.23: malformed → `args_error` → unknown name → duplicate id
                // → args capacity → free slot → run. (`args_error` is applied below.)
                let failure = match (&name, tool) {
                    (None, _) => {
                        Some("Malformed TOOL_CALL: content.name must be a string".to_string())
                    }
                    (Some(n), None) => Some(format!("Tool \"{n}\" not found")),
                    (Some(_), Some(_)) if duplicate => Some(format!(
                        "Duplicate tool call id \"{}\"",
                        id.as_deref().unwrap_or_default()
                    )),
                    (Some(n), Some(_)) if holds_slot && compact(&args).len() > ARGS_CAP => {
                        Some(format!("Tool {n} args exceed {ARGS_CAP} bytes"))
                    }
                    (Some(_), Some(_)) if holds_slot && self.holding_slots() == self.slots => {
                        Some(format!("Too many pending tool calls (max {})", self.slots))
                    }
                    _ => None,
                };
                // SPEC §5: a named call whose `args_error` is a string is answered with it,
                // cut to fit the message capacity once escaped; a malformed call stays one.
                let failure = match (&name, args_error) {
                    (None, Some(_)) => {
                        self.count("args_error on a malformed call");
                        failure
                    }
                    (Some(_), Some(given)) => {
                        let instead = match &failure {
                            None => "a call that runs",
                            Some(f) if f.contains("not found") => "an unknown name",
                            Some(f) if f.starts_with("Duplicate") => "a duplicate id",
                            Some(f) if f.contains("args exceed") => "args over capacity",
                            Some(_) => "no free slot",
                        };
                        self.count(&format!("args_error answers {instead}"));
                        let (msg, cut) = cut_to_escaped(&given, MESSAGE_CAP);
                        if cut {
                            self.messages_truncated += 1;
                            self.count("args_error cut to the message capacity");
                        }
                        Some(msg)
                    }
                    (_, None) => failure,
                };
                if let Some(msg) = failure {
                    self.complete(k, Outcome::Error(msg));
                    return Status::Intercepted {
                        index: k as u32,
                        pending: false,
                    };
                }
                let t = tool.expect("known tool");
                let name = name.expect("named");
                match TOOLS[t].1 {
                    Def::Result(r) => self.complete(k, Outcome::Result(r.to_string())),
                    // A sync tool runs on the frame's bytes: echoed args past the result
                    // capacity fail the call (SPEC §7.23).
                    Def::Echo if compact(&args).len() > RESULT_CAP => self.complete(
                        k,
                        Outcome::Error(format!("Tool {name} result exceeds {RESULT_CAP} bytes")),
                    ),
                    // The tool writes into an area of the larger of the result and message
                    // capacities; output longer than that as written is kept without its
                    // white space (`ResultWriter`), which is what the hook then sees.
                    Def::Echo if args.len() > RESULT_CAP.max(MESSAGE_CAP) => {
                        self.complete(k, Outcome::Result(compact(&args)))
                    }
                    Def::Echo => self.complete(k, Outcome::Result(args)),
                    Def::Fail(m) => self.complete(k, Outcome::Error(m.to_string())),
                    Def::Deferred | Def::Adapter => {
                        // A pending call keeps its args compact, as every later use sees them.
                        let args = compact(&args);
                        self.calls[k].args = args.clone();
                        let adapter = matches!(TOOLS[t].1, Def::Adapter);
                        // SPEC §5: an adapter call's deadline never passes its cap; deferred
                        // calls ignore it.
                        let timeout = timeout_of(t, self.timeout_ms);
                        let cap =
                            (adapter && self.max_total_ms > 0).then(|| now + self.max_total_ms);
                        self.calls[k].state = CallState::Pending {
                            adapter,
                            deadline: cap.map_or(now + timeout, |cap| cap.min(now + timeout)),
                            recorded: None,
                            tool: t,
                            timeout,
                            cap,
                        };
                        if adapter {
                            self.out.push(Ev::Tx(
                                To::Adapter(k as u32),
                                format!(
                                    r#"{{"type":"TOOL_CALL","content":{{{}"name":{},"args":{args}}}}}"#,
                                    id_member(&id),
                                    jstr(&name)
                                ),
                            ));
                        }
                        self.started.push((k as u32, adapter, t, name, id, args));
                        return Status::Intercepted {
                            index: k as u32,
                            pending: true,
                        };
                    }
                }
                Status::Intercepted {
                    index: k as u32,
                    pending: false,
                }
            }
        }
    }

    /// Why call `k` is not waiting for input of this kind, if it is not (SPEC §7.11).
    /// `reused`: a newer call took the old call's slot (the core then knows only that it ended long ago).
    pub fn waiting(&self, k: u32, adapter_input: bool, reused: bool) -> Result<usize, Status> {
        let Some(c) = self.calls.get(k as usize) else {
            return Err(Status::NoHandle);
        };
        match c.state {
            CallState::Immediate => Err(Status::NoHandle),
            CallState::Ended(_) if reused => Err(Status::StaleCall),
            CallState::Ended(Ended::Finished) => Err(Status::CallFinished),
            CallState::Ended(Ended::TimedOut) => Err(Status::CallTimedOut),
            CallState::Ended(Ended::Cancelled) => Err(Status::CallCancelled),
            CallState::Pending { adapter, .. } if adapter != adapter_input => {
                Err(Status::WrongKind)
            }
            CallState::Pending { .. } => Ok(k as usize),
        }
    }

    pub fn complete_op(&mut self, k: u32, outcome: Result<&str, &str>, reused: bool) -> Status {
        let k = match self.waiting(k, false, reused) {
            Ok(k) => k,
            Err(s) => return s,
        };
        let outcome = match outcome {
            Ok(raw) if serde_json::from_str::<Value>(raw).is_err() => return Status::InvalidResult,
            Ok(raw) => Outcome::Result(raw.to_string()),
            Err(m) => Outcome::Error(m.to_string()),
        };
        self.calls[k].state = CallState::Ended(Ended::Finished);
        self.complete(k, outcome);
        Status::Ok
    }

    pub fn settle_end(&mut self, k: usize) {
        let CallState::Pending { recorded, .. } = self.calls[k].state.clone() else {
            unreachable!("settling a call that is not pending")
        };
        self.calls[k].state = CallState::Ended(Ended::Finished);
        self.complete(
            k,
            Outcome::Result(recorded.unwrap_or_else(|| "null".to_string())),
        );
    }

    pub fn adapter_op(&mut self, now: u64, k: u32, meaning: &AdMeaning, reused: bool) -> Status {
        let k = match self.waiting(k, true, reused) {
            Ok(k) => k,
            Err(s) => return s,
        };
        match meaning {
            AdMeaning::Malformed => return Status::Rejected,
            AdMeaning::Ignore => {}
            // SPEC §5: the deadline becomes `now + timeout`, never past the cap, never earlier.
            AdMeaning::Progress => {
                let CallState::Pending {
                    deadline,
                    timeout,
                    cap,
                    ..
                } = &mut self.calls[k].state
                else {
                    unreachable!("waiting calls are pending")
                };
                let what = match *cap {
                    None => "progress with no cap (ignored)",
                    Some(cap) => {
                        let restarted = (now + *timeout).min(cap);
                        let what = match (restarted > *deadline, restarted == cap) {
                            (true, true) => "progress restart up to the cap",
                            (true, false) => "progress restart",
                            (false, true) => "progress at the cap already",
                            (false, false) => "progress that moves nothing",
                        };
                        *deadline = restarted.max(*deadline);
                        what
                    }
                };
                self.count(what);
            }
            AdMeaning::Record(raw) => {
                if let CallState::Pending { recorded, .. } = &mut self.calls[k].state {
                    if recorded.is_none() {
                        *recorded = Some(compact(raw));
                    }
                }
            }
            AdMeaning::Fail(msg) => {
                let name = self.calls[k].name.clone().expect("adapter calls are named");
                let msg = msg.clone().unwrap_or(format!("Tool {name} failed"));
                self.calls[k].state = CallState::Ended(Ended::Finished);
                self.complete(k, Outcome::Error(msg));
            }
            AdMeaning::End => self.settle_end(k),
        }
        Status::Ok
    }

    pub fn close_op(&mut self, k: u32, reused: bool) -> Status {
        match self.waiting(k, true, reused) {
            Ok(k) => {
                self.settle_end(k);
                Status::Ok
            }
            Err(s) => s,
        }
    }

    /// Ends pending calls (oldest deadline first for timeouts, oldest first for cancel).
    pub fn end_pending(&mut self, due: Vec<usize>, reason: Option<&str>) {
        for k in due {
            let c = self.calls[k].clone();
            let CallState::Pending {
                adapter,
                deadline,
                timeout,
                cap,
                ..
            } = c.state
            else {
                unreachable!()
            };
            let name = c.name.clone().expect("pending calls are named");
            if adapter {
                self.out.push(Ev::Tx(
                    To::Adapter(k as u32),
                    format!(
                        r#"{{"type":"CANCEL","content":{{{}"name":{},"reason":{}}}}}"#,
                        id_member(&c.id),
                        jstr(&name),
                        jstr(reason.unwrap_or("timeout"))
                    ),
                ));
            }
            let (msg, ended) = match reason {
                Some(r) => (format!("Tool {name} cancelled: {r}"), Ended::Cancelled),
                None => {
                    // SPEC §5: the message names the span that ran out.
                    let span = match cap == Some(deadline) {
                        true => {
                            self.count("timeout names the cap");
                            self.max_total_ms
                        }
                        false => {
                            if cap.is_some() {
                                self.count("timeout under a cap names the timeout");
                            }
                            timeout
                        }
                    };
                    (
                        format!("Tool {name} timed out after {span}ms"),
                        Ended::TimedOut,
                    )
                }
            };
            self.calls[k].state = CallState::Ended(ended);
            self.complete(k, Outcome::Error(msg));
        }
    }

    pub fn timeout(&mut self, now: u64) {
        let mut due: Vec<(u64, usize)> = self
            .calls
            .iter()
            .enumerate()
            .filter_map(|(k, c)| match c.state {
                CallState::Pending { deadline, .. } if now >= deadline => Some((deadline, k)),
                _ => None,
            })
            .collect();
        due.sort();
        self.end_pending(due.into_iter().map(|(_, k)| k).collect(), None);
    }

    pub fn cancel(&mut self, reason: &str) {
        let due: Vec<usize> = (0..self.calls.len())
            .filter(|&k| matches!(self.calls[k].state, CallState::Pending { .. }))
            .collect();
        self.end_pending(due, Some(reason));
    }

    pub fn next_deadline(&self) -> Option<u64> {
        self.calls
            .iter()
            .filter_map(|c| match c.state {
                CallState::Pending { deadline, .. } => Some(deadline),
                _ => None,
            })
            .min()
    }
}

// =====================================================================
// The core, driven through the test host (`polyweave_tests::host`)
// =====================================================================

pub fn utf8(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("UTF-8 from the core")
}

pub fn outcome_of(o: host::Outcome) -> Outcome {
    match o {
        host::Outcome::Result(r) => Outcome::Result(utf8(&r)),
        host::Outcome::Error(e) => Outcome::Error(e),
    }
}

/// What the harness tracks of the core, for model-free invariants.
#[derive(Default)]
pub struct Tracked {
    /// Handle per call number, as the core gave it.
    pub handles: Vec<Option<CallHandle>>,
    /// Calls intercepted / with a result (from hook events).
    pub called: BTreeSet<u32>,
    pub resulted: BTreeSet<u32>,
    /// `END`s the core said it held, oldest first.
    pub held: VecDeque<String>,
    /// Adapter calls (as the started calls said), oldest first.
    pub adapters: Vec<u32>,
    pub round_limit_errors: usize,
}

pub fn frame_type(frame: &str) -> String {
    // A loose END is released as the model wrote it: its first `type` is its type (§7.25).
    if let Some((_, end)) = loose_frames().iter().find(|(b, _)| b == frame.as_bytes()) {
        return if *end { "END" } else { "TEXT" }.to_string();
    }
    let v: Value = serde_json::from_str(frame)
        .unwrap_or_else(|e| panic!("the core wrote a frame that is not JSON ({e}): {frame}"));
    v["type"].as_str().unwrap_or_default().to_string()
}

impl Tracked {
    /// What the host drained (frames and hooks in the order they happened, then started
    /// calls), in the model's terms.
    pub fn drain(
        &mut self,
        host: &mut Host,
        w: &mut Wrapper<'_, Recorder>,
    ) -> (Vec<Ev>, Vec<Started>) {
        let mut out = Vec::new();
        let mut started = Vec::new();
        let given = |h: CallHandle| self.handles.get(h.index() as usize).copied().flatten();
        for entry in host.drive(w) {
            match entry {
                Entry::Frame { route, bytes, .. } => {
                    let to = match route {
                        Route::Model => To::Model,
                        Route::Consumer => To::Consumer,
                        Route::Adapter(h) => {
                            assert_eq!(
                                given(h),
                                Some(h),
                                "adapter frame routed to a handle the host was not given"
                            );
                            To::Adapter(h.index())
                        }
                    };
                    out.push(Ev::Tx(to, utf8(&bytes)));
                }
                Entry::ToolCall(c) => {
                    out.push(Ev::HookCall(c.index, c.name, c.id, utf8(&c.args)));
                }
                Entry::ToolResult(c, o) => out.push(Ev::HookResult(
                    c.index,
                    c.name,
                    c.id,
                    utf8(&c.args),
                    outcome_of(o),
                )),
                Entry::Started(s) => {
                    assert_eq!(given(s.handle), Some(s.handle));
                    if s.kind == PendingKind::Adapter {
                        self.adapters.push(s.handle.index());
                    }
                    started.push((
                        s.handle.index(),
                        s.kind == PendingKind::Adapter,
                        s.tool,
                        s.name,
                        s.id,
                        utf8(&s.args),
                    ));
                }
            }
        }
        assert_eq!(w.queued(), 0);
        (out, started)
    }

    /// Model-free invariants over one phase's output.
    pub fn check(
        &mut self,
        w: &Wrapper<'_, Recorder>,
        out: &[Ev],
        aborted_before: bool,
        what: &str,
    ) {
        let mut results_to_model = 0;
        let mut result_hooks = 0;
        let mut released = false;
        for ev in out {
            match ev {
                Ev::HookCall(k, ..) => {
                    assert!(self.called.insert(*k), "{what}: call {k} intercepted twice");
                }
                Ev::HookResult(k, ..) => {
                    result_hooks += 1;
                    assert!(
                        self.called.contains(k),
                        "{what}: result for unknown call {k}"
                    );
                    assert!(
                        self.resulted.insert(*k),
                        "{what}: second result for call {k}"
                    );
                }
                Ev::Tx(to, frame) => {
                    // Every frame the core writes is one JSON line (§7.22), but for a released
                    // END: the model's own bytes, which may span lines.
                    let release = *to == To::Consumer && self.held.front() == Some(frame);
                    if !release {
                        assert_one_json_line(frame.as_bytes(), what);
                    }
                    let ty = frame_type(frame);
                    match (to, ty.as_str()) {
                        (To::Model, "TOOL_RESULT") => results_to_model += 1,
                        (To::Consumer, "END") => {
                            let held = self.held.pop_front();
                            assert_eq!(
                                held.as_deref(),
                                Some(frame.as_str()),
                                "{what}: released END is not the oldest held one"
                            );
                            released = true;
                        }
                        (To::Adapter(_), "TOOL_CALL" | "CANCEL") => {}
                        (To::Consumer, "ERROR") => {
                            assert!(!aborted_before, "{what}: round-limit ERROR after abort");
                            self.round_limit_errors += 1;
                            assert_eq!(
                                self.round_limit_errors, 1,
                                "{what}: a second round-limit ERROR"
                            );
                        }
                        (To::Model | To::Consumer, "TEXT") => {
                            assert!(!aborted_before, "{what}: continue prompt after abort");
                        }
                        other => panic!("{what}: unexpected frame {other:?}: {frame}"),
                    }
                }
            }
        }
        assert_eq!(
            results_to_model, result_hooks,
            "{what}: one TOOL_RESULT per result hook"
        );
        assert_eq!(
            w.pending(),
            self.called.len() - self.resulted.len(),
            "{what}: pending() is intercepted calls without a result"
        );
        if released {
            assert_eq!(
                w.pending(),
                0,
                "{what}: END released while calls are pending"
            );
        }
        if w.pending() == 0 {
            assert!(self.held.is_empty(), "{what}: ENDs still held at pending 0");
        }
    }
}

pub fn core_trace(w: &Wrapper<'_, Recorder>) -> Vec<TraceRow> {
    w.trace()
        .iter()
        .map(|e| {
            assert!(!e.truncated, "no trace entry is cut here");
            TraceRow {
                name: e.name.map(str::to_string),
                args: utf8(e.args),
                outcome: outcome_of(e.outcome.into()),
            }
        })
        .collect()
}

/// How often each kind of thing happened, to show the generator reaches it.
pub type Tally = std::collections::BTreeMap<String, usize>;

pub fn tally_output(t: &mut Tally, phase: &str, out: &[Ev]) {
    for ev in out {
        let key = match ev {
            Ev::HookCall(..) => "hook toolCall".to_string(),
            Ev::HookResult(_, _, _, _, Outcome::Error(e)) => {
                let kind = [
                    "timed out",
                    "cancelled",
                    "not found",
                    "Duplicate",
                    "Too many",
                    "Malformed",
                    "args exceed",
                    "result exceeds",
                    "failed",
                ]
                .into_iter()
                .find(|k| e.contains(k))
                .unwrap_or("other");
                format!("{phase} error result: {kind}")
            }
            Ev::HookResult(..) => format!("{phase} result"),
            Ev::Tx(to, f) => {
                let last_error = if f.contains("Last tool error") {
                    " with last error"
                } else {
                    ""
                };
                format!("{phase} frame {to:?} {}{last_error}", frame_type(f))
            }
        };
        *t.entry(key).or_default() += 1;
    }
}

/// What one operation did, as the core and the model agreed on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The clock the operation ran at (ms).
    pub at: u64,
    /// What the timeouts that fired first wrote and called.
    pub timeouts: Vec<Ev>,
    pub status: Status,
    /// What the operation wrote and called.
    pub out: Vec<Ev>,
    /// Calls that started (`poll_event`).
    pub started: Vec<Started>,
    /// `WrapperStats::messages_truncated` after it.
    pub messages_truncated: u32,
}

/// Runs `case` through the core and the model, checking they agree after every phase; how
/// often each kind of thing happened.
pub fn run(case: &Case) -> Tally {
    run_steps(case).0
}

/// [`run`], and what every operation did.
pub fn run_steps(case: &Case) -> (Tally, Vec<Step>) {
    let mut tally = Tally::new();
    let mut steps = Vec::new();
    let tools = core_tools();
    let cfg = WrapperConfig {
        tool_timeout_ms: case.timeout_ms,
        max_total_timeout_ms: case.max_total_ms,
        args_cap: ARGS_CAP,
        result_cap: RESULT_CAP,
        message_cap: MESSAGE_CAP,
        mirror_continue: case.mirror,
        max_rounds: case.max_rounds,
        trace_entries: case.trace_entries,
        // Room enough that only the entry count drops entries, and that ENDs always fit.
        trace_bytes: 64 * 1024,
        held_bytes: case.held_bytes.unwrap_or(8 * 1024),
        full_validation: case.full_validation,
        ..WrapperConfig::DEFAULT
    };
    let mut storage = Storage::new(cfg, case.slots);
    let mut w = storage.wrapper(&tools, Recorder::default());
    let mut m = Model::new(case);
    if case.aborted {
        w.abort();
    }
    let mut host = Host::new();
    if let Some(len) = case.short_buffer {
        host.offer_short_buffer_first(len);
    }
    let mut tracked = Tracked::default();
    let resolve = |tracked: &Tracked, target: &Target| match *target {
        Target::Number(k) => k,
        Target::Recent(n) => tracked
            .handles
            .iter()
            .rev()
            .flatten()
            .nth(n)
            .map_or(n as u32, |h| h.index()),
        Target::Adapter(n) => tracked
            .adapters
            .iter()
            .rev()
            .nth(n)
            .copied()
            .unwrap_or(n as u32),
    };
    for (i, op) in case.ops.iter().enumerate() {
        if let Op::Tick(dt) = op {
            host.advance(*dt);
        }
        // An operation at a deadline: there first, when that is later.
        let op_here = match op {
            Op::Deadline { before, op: inner } => {
                let k = inner.target().map(|target| resolve(&tracked, target));
                let state = k.and_then(|k| m.calls.get(k as usize)).map(|c| &c.state);
                if let Some(CallState::Pending { deadline, .. }) = state {
                    let at = deadline.saturating_sub(*before);
                    if at > host.now().as_millis() {
                        host.set_now(at);
                    }
                }
                &**inner
            }
            op => op,
        };
        let t = host.now();
        let now = t.as_millis();

        // Timeouts first, as the replay does.
        let aborted_before = w.is_aborted();
        w.handle_timeout(t).expect("handle_timeout");
        m.timeout(now);
        let (got, got_started) = tracked.drain(&mut host, &mut w);
        let (want, want_started) = m.take();
        let what = format!("op {i} ({op:?}) at {now}ms, timeouts");
        assert_eq!(got, want, "{what}: output");
        assert_eq!(got_started, want_started, "{what}: started calls");
        tracked.check(&w, &got, aborted_before, &what);
        tally_output(&mut tally, "timeout", &got);
        assert!(
            w.poll_timeout().is_none_or(|d| d > t),
            "{what}: poll_timeout {:?} not after {now}",
            w.poll_timeout()
        );
        assert_eq!(w.poll_timeout().map(Instant::as_millis), m.next_deadline());
        let timeouts = got;

        // The operation.
        let aborted_before = w.is_aborted();
        let reused = |tracked: &Tracked, k: u32| {
            // A newer call holds the same slot: the core cannot tell how the old one ended.
            let slot = tracked
                .handles
                .get(k as usize)
                .copied()
                .flatten()
                .map(|h| h.slot());
            slot.is_some()
                && tracked.handles[k as usize + 1..]
                    .iter()
                    .any(|h| h.map(|h| h.slot()) == slot)
        };
        let handle = |tracked: &Tracked, k: u32| tracked.handles.get(k as usize).copied().flatten();
        let (got_status, want_status) = match op_here {
            Op::Response(r) => {
                let (bytes, meaning) = response_frame(r);
                let got = match w.handle_response(t, &bytes) {
                    Ok(Disposition::Forward) => Status::Forward,
                    Ok(Disposition::Held) => {
                        tracked.held.push_back(utf8(&bytes));
                        Status::Held
                    }
                    Ok(Disposition::Intercepted {
                        index: call,
                        handle,
                    }) => {
                        let k = call as usize;
                        assert_eq!(k, tracked.handles.len(), "call numbers count every call");
                        tracked.handles.push(handle);
                        Status::Intercepted {
                            index: call,
                            pending: handle.is_some(),
                        }
                    }
                    Err(e) => status_of_err(e),
                };
                (got, m.response(now, &bytes, meaning))
            }
            Op::Request(j) => {
                let (bytes, ok) = request_frame(*j, case.full_validation);
                let got = match w.handle_request(t, &bytes) {
                    Ok(Disposition::Forward) => Status::Forward,
                    Ok(d) => Status::Other(format!("{d:?}")),
                    Err(e) => status_of_err(e),
                };
                (
                    got,
                    if ok {
                        Status::Forward
                    } else {
                        Status::Rejected
                    },
                )
            }
            Op::Complete { call, outcome } => {
                let call = &resolve(&tracked, call);
                let o = OUTCOMES[*outcome];
                let got = match handle(&tracked, *call) {
                    None => Status::NoHandle,
                    Some(h) => w
                        .complete(t, h, o.map(str::as_bytes))
                        .map_or_else(status_of_err, |_| Status::Ok),
                };
                (got, m.complete_op(*call, o, reused(&tracked, *call)))
            }
            Op::Adapter { call, frame } => {
                let call = &resolve(&tracked, call);
                let (bytes, meaning) = &tables().adapter[*frame];
                let got = match handle(&tracked, *call) {
                    None => Status::NoHandle,
                    Some(h) => w
                        .handle_adapter_frame(t, h, bytes)
                        .map_or_else(status_of_err, |_| Status::Ok),
                };
                (
                    got,
                    m.adapter_op(now, *call, meaning, reused(&tracked, *call)),
                )
            }
            Op::Close { call } => {
                let call = &resolve(&tracked, call);
                let got = match handle(&tracked, *call) {
                    None => Status::NoHandle,
                    Some(h) => w
                        .handle_adapter_closed(t, h)
                        .map_or_else(status_of_err, |_| Status::Ok),
                };
                (got, m.close_op(*call, reused(&tracked, *call)))
            }
            Op::Tick(_) => (Status::Ok, Status::Ok),
            Op::Cancel(r) => {
                let got = w
                    .cancel(t, REASONS[*r])
                    .map_or_else(status_of_err, |left| match left {
                        0 => Status::Ok,
                        n => Status::Other(format!("{n} calls left")),
                    });
                m.cancel(REASONS[*r]);
                (got, Status::Ok)
            }
            Op::Abort => {
                w.abort();
                m.aborted = true;
                (Status::Ok, Status::Ok)
            }
            Op::ClearTrace => {
                w.clear_trace();
                m.trace.clear();
                (Status::Ok, Status::Ok)
            }
            Op::Late { .. } if now == 0 => (Status::Ok, Status::Ok),
            Op::Late { back, op: inner } => {
                // SPEC §4: an earlier time is refused before anything else is looked at.
                let back = (*back).min(now);
                let at = Instant::from_millis(now - back);
                let want = Status::Backwards {
                    last: now,
                    given: now - back,
                };
                let status = |r: Result<(), Error>| r.map_or_else(status_of_err, |()| Status::Ok);
                match &**inner {
                    Op::Complete { call, outcome } => {
                        match handle(&tracked, resolve(&tracked, call)) {
                            None => (Status::NoHandle, Status::NoHandle),
                            Some(h) => (
                                status(
                                    w.complete(at, h, OUTCOMES[*outcome].map(str::as_bytes))
                                        .map(drop),
                                ),
                                want,
                            ),
                        }
                    }
                    Op::Adapter { call, frame } => {
                        match handle(&tracked, resolve(&tracked, call)) {
                            None => (Status::NoHandle, Status::NoHandle),
                            Some(h) => (
                                status(w.handle_adapter_frame(at, h, &tables().adapter[*frame].0)),
                                want,
                            ),
                        }
                    }
                    Op::Close { call } => match handle(&tracked, resolve(&tracked, call)) {
                        None => (Status::NoHandle, Status::NoHandle),
                        Some(h) => (status(w.handle_adapter_closed(at, h)), want),
                    },
                    Op::Response(r) => (
                        status(w.handle_response(at, &response_frame(r).0).map(drop)),
                        want,
                    ),
                    Op::Request(j) => (
                        status(
                            w.handle_request(at, &request_frame(*j, case.full_validation).0)
                                .map(drop),
                        ),
                        want,
                    ),
                    Op::Cancel(r) => (status(w.cancel(at, REASONS[*r]).map(drop)), want),
                    _ => (status(w.handle_timeout(at)), want),
                }
            }
            Op::Deadline { .. } => unreachable!("moved to its deadline above"),
        };
        let what = format!("op {i} ({op:?}) at {now}ms");
        assert_eq!(got_status, want_status, "{what}: status");
        let op_name = format!("{op:?}");
        let op_name = op_name.split([' ', '(']).next().unwrap_or_default();
        let status_key = match (op, &got_status) {
            (Op::Late { .. }, Status::Backwards { .. }) => "Backwards".to_string(),
            (Op::Deadline { before, op }, s) => {
                let inner = format!("{op:?}");
                let inner = inner.split([' ', '(']).next().unwrap_or_default();
                let progress = match **op {
                    Op::Adapter { frame, .. } if tables().progress.contains(&frame) => " progress",
                    _ => "",
                };
                format!("-{before} {inner}{progress} {s:?}")
            }
            (Op::Adapter { frame, .. }, s) if tables().progress.contains(frame) => {
                format!("{s:?} progress")
            }
            (Op::Response(Resp::Loose(_)), s) => {
                format!("{s:?} loose, full validation {}", case.full_validation)
            }
            (_, Status::HeldFull { .. }) => "HeldFull".to_string(),
            (_, s) => format!("{s:?}"),
        };
        *tally
            .entry(format!("status {op_name} {status_key}"))
            .or_default() += 1;
        let (got, got_started) = tracked.drain(&mut host, &mut w);
        tally_output(&mut tally, "op", &got);
        let (want, want_started) = m.take();
        assert_eq!(got, want, "{what}: output");
        assert_eq!(got_started, want_started, "{what}: started calls");
        tracked.check(&w, &got, aborted_before, &what);
        assert!(
            w.poll_timeout().is_none_or(|d| d >= t),
            "{what}: poll_timeout in the past"
        );
        assert_eq!(w.poll_timeout().map(Instant::as_millis), m.next_deadline());
        assert_eq!(w.pending(), m.pending, "{what}: pending");
        assert_eq!(w.is_aborted(), m.aborted, "{what}: aborted");
        assert_eq!(w.stats().rounds, m.rounds, "{what}: rounds");
        assert_eq!(
            w.stats().messages_truncated,
            m.messages_truncated,
            "{what}: messages truncated"
        );
        assert_eq!(w.stats().last_error_truncated, 0);
        assert_eq!(w.now(), t, "{what}: now");
        assert_eq!(core_trace(&w), m.trace, "{what}: trace");
        assert_eq!(
            w.trace().dropped(),
            m.dropped,
            "{what}: trace entries dropped"
        );
        assert_eq!(w.trace().truncated(), 0);
        steps.push(Step {
            at: now,
            timeouts,
            status: got_status,
            out: got,
            started: got_started,
            messages_truncated: w.stats().messages_truncated,
        });
    }
    assert_eq!(core_trace(&w), m.trace, "final trace");
    for (k, v) in std::mem::take(&mut m.tally) {
        *tally.entry(k).or_default() += v;
    }
    if host.short_refusals() > 0 {
        *tally.entry("short buffer refused".into()).or_default() += host.short_refusals() as usize;
    }
    if w.trace().dropped() > 0 {
        *tally.entry("trace entries dropped".into()).or_default() += 1;
    }
    (tally, steps)
}
