//! SPEC §6 conformance: every shared scenario, run through the replay binary,
//! prints what its `*.out.ndjson` expects, channel by channel.
//!
//! Channels are `model`, `consumer`, each adapter call, hooks, settlement,
//! rejected, refused and trace. Inside a channel the sequence of parsed JSON
//! values must be equal, with object member order ignored and numbers compared
//! exactly as decimals (`1.0` = `1` = `1e0`, `1e400` ≠ `1e401`, every digit of a
//! long integer counts).
//!
//! The replay program is a binary-only package, so it cannot be a dependency
//! of this crate: the tests build it once with `cargo build -p polyweave-replay`
//! and run the executable cargo reports.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use polyweave_tests::data_dir;
use polyweave_tests::library::{replay_bin, workspace_root};
use polyweave_tests::ndjson_compare::{self, compare, decimal, json_eq};
use polyweave_tests::scenarios::{fffd, output_lines, scenario_files, scratch, SCENARIOS};
use serde_json::Value;

// ------------------------------------------------------------ the binary

fn run_replay(args: &[&str], file: &Path) -> Output {
    Command::new(replay_bin())
        .args(args)
        .arg(file)
        .output()
        .expect("running polyweave-replay")
}

// ------------------------------------------------------------ comparison

// The comparison itself (channels, parsed values, numbers as exact decimals) is shared with the
// C replay's test: `polyweave_tests::ndjson_compare`.

// ------------------------------------------------------------ tests

#[test]
fn every_shared_scenario_conforms() {
    let files = scenario_files();
    assert_eq!(files.len(), SCENARIOS, "scenario count: {files:?}");
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in &files {
        let expected_path = file.with_extension("out.ndjson");
        let expected = fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", expected_path.display()));
        let out = run_replay(&[], file);
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        ran += 1;
        if out.status.code() != Some(0) {
            failures.push(format!(
                "{name}: exit {:?}, stderr {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let actual = String::from_utf8(out.stdout).expect("UTF-8 output");
        let problems = compare(&expected, &actual);
        if !problems.is_empty() {
            failures.push(format!("{name}:\n{}", problems.join("\n")));
        }
    }
    assert_eq!(ran, SCENARIOS);
    assert!(
        failures.is_empty(),
        "{} of {SCENARIOS} scenarios do not conform:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_scenario_has_an_expected_output_and_nothing_else_is_there() {
    let dir = data_dir().join("scenarios");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .expect("scenarios dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("UTF-8"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 2 * SCENARIOS);
    for file in scenario_files() {
        assert!(
            file.with_extension("out.ndjson").is_file(),
            "{}",
            file.display()
        );
    }
}

#[test]
fn comparator_numbers_and_member_order() {
    let v = |s: &str| serde_json::from_str::<Value>(s).expect("JSON");
    // Numbers as decimals.
    assert!(json_eq(&v("1.0"), &v("1")));
    assert!(json_eq(&v("1"), &v("1e0")));
    assert!(json_eq(&v("100"), &v("1E2")));
    assert!(json_eq(&v("0.5"), &v("5e-1")));
    assert!(json_eq(&v("1.50"), &v("1.5")));
    assert!(json_eq(&v("-0"), &v("0")));
    assert!(json_eq(&v("0.000"), &v("0e10")));
    assert!(json_eq(&v("1e400"), &v("10e399")));
    assert!(!json_eq(&v("1e400"), &v("1e401")));
    assert!(!json_eq(&v("1"), &v("-1")));
    assert!(!json_eq(&v("1.5"), &v("1.05")));
    assert!(json_eq(
        &v("12345678901234567890123"),
        &v("12345678901234567890123.0")
    ));
    assert!(!json_eq(
        &v("12345678901234567890123"),
        &v("12345678901234567890124")
    ));
    assert!(!json_eq(
        &v("12345678901234567890123"),
        &v("1.2345678901234567e22")
    ));
    // Member order ignored, everything else counts.
    assert!(json_eq(
        &v(r#"{"a":1,"b":[1,2]}"#),
        &v(r#"{"b":[1,2.0],"a":1}"#)
    ));
    assert!(!json_eq(
        &v(r#"{"a":1,"b":[1,2]}"#),
        &v(r#"{"a":1,"b":[2,1]}"#)
    ));
    assert!(!json_eq(&v(r#"{"a":1}"#), &v(r#"{"a":1,"b":null}"#)));
    assert!(!json_eq(
        &v(r#"{"a":1,"b":null}"#),
        &v(r#"{"a":1,"c":null}"#)
    ));
    assert!(!json_eq(&v(r#""1""#), &v("1")));
    assert!(!json_eq(&v("null"), &v("false")));
    assert!(!json_eq(&v("[]"), &v("{}")));
    // The normal form itself.
    assert_eq!(decimal("-12.3400e+3"), (true, "1234".to_string(), 1));
    assert_eq!(decimal("0.00120"), (false, "12".to_string(), -4));
    assert_eq!(decimal("-0.0e7"), (false, String::new(), 0));
    assert_eq!(decimal("1E400"), (false, "1".to_string(), 400));
}

#[test]
fn comparator_groups_by_channel() {
    let expected = concat!(
        r#"{"to":"model","frame":{"type":"TEXT","content":"a"}}"#,
        "\n",
        r#"{"to":"consumer","frame":{"type":"TEXT","content":"b"}}"#,
        "\n",
        r#"{"to":"adapter","call":0,"frame":{"type":"END"}}"#,
        "\n",
        r#"{"to":"adapter","call":1,"frame":{"type":"END","content":1.0}}"#,
        "\n",
        r#"{"trace":[]}"#,
        "\n"
    );
    // Interleaving across channels does not matter; order inside one does.
    let reordered = concat!(
        r#"{"to":"adapter","call":1,"frame":{"content":1,"type":"END"}}"#,
        "\n",
        r#"{"to":"consumer","frame":{"type":"TEXT","content":"b"}}"#,
        "\n",
        r#"{"frame":{"type":"TEXT","content":"a"},"to":"model"}"#,
        "\n",
        r#"{"to":"adapter","call":0,"frame":{"type":"END"}}"#,
        "\n",
        r#"{"trace":[]}"#,
        "\n"
    );
    assert_eq!(compare(expected, reordered), Vec::<String>::new());
    // A frame for the wrong adapter call is a difference in two channels.
    let swapped = expected.replace(r#""call":1"#, r#""call":2"#);
    assert_eq!(compare(expected, &swapped).len(), 2);
    // A missing line is reported.
    let missing: String = expected.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        compare(expected, &missing),
        vec!["channel model: 1 events expected, 0 printed".to_string()]
    );
}

#[test]
fn quickstart_runs() {
    let file = workspace_root().join("examples/scenarios/quickstart.json");
    let out = run_replay(&[], &file);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(events.len(), 16);
    let last = events.last().expect("a last line");
    let trace = last["trace"].as_array().expect("ends with a trace line");
    assert_eq!(trace.len(), 3);
    let names: Vec<&str> = trace.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["weather", "files", "lookup"]);
    // The held END comes out last, after the mirrored prompt.
    assert_eq!(
        events[events.len() - 2],
        serde_json::json!({"to":"consumer","frame":{"type":"END","content":{"reason":"tool_calls"}}})
    );
}

#[test]
fn pretty_prints_a_timeline() {
    let file = workspace_root().join("examples/scenarios/quickstart.json");
    let out = run_replay(&["--pretty"], &file);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    // Not NDJSON: a row per input and event, each starting with its clock.
    assert!(text
        .lines()
        .all(|l| serde_json::from_str::<Value>(l).is_err()));
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("ms  ")).collect();
    assert_eq!(rows.len(), 27, "{text}");
    assert!(
        rows[0].trim_start().starts_with("0ms  ← consumer"),
        "{}",
        rows[0]
    );
    assert!(rows.iter().any(|r| r.contains("450ms  ≡ trace 3 entries")));
    assert!(rows.iter().any(|r| r.contains("→ adapter#0   TOOL_CALL")));
    assert!(rows
        .iter()
        .any(|r| r.contains("END held while calls are pending")));
    // No colour codes when stdout is not a terminal.
    assert!(!text.contains('\x1b'));
}

/// Runs a bad scenario: exit 2, one stderr line naming the file (and `must` parts), no panic.
fn refused(name: &str, text: &str, must: &[&str]) -> String {
    let path = scratch("conformance", name, text);
    let out = run_replay(&[], &path);
    ndjson_compare::assert_refused(out, "polyweave-replay", &path, must)
}

#[test]
fn bad_scenarios_exit_2_with_one_line() {
    refused("not_json.json", "{", &["not JSON"]);
    refused("empty.json", "", &["not JSON"]);
    refused("array.json", "[]", &["must be a JSON object"]);
    // A missing mode means a wrapper; any other mode is a bad file.
    for (name, mode) in [
        ("mode_number.json", "7"),
        ("mode_null.json", "null"),
        ("mode_unknown.json", r#""bogus""#),
        ("mode_case.json", r#""Wrapper""#),
    ] {
        refused(
            name,
            &format!(r#"{{"mode":{mode},"steps":[{{"tick":true}}]}}"#),
            &["mode must be"],
        );
    }
    refused(
        "options_not_object.json",
        r#"{"options":[],"steps":[{"tick":true}]}"#,
        &["options must be an object"],
    );
    refused(
        "options_aborted_not_bool.json",
        r#"{"options":{"aborted":1},"steps":[{"tick":true}]}"#,
        &["aborted must be true or false"],
    );
    refused(
        "full_validation_not_bool.json",
        r#"{"options":{"fullValidation":"yes"},"steps":[{"tick":true}]}"#,
        &["fullValidation must be true or false"],
    );
    refused(
        "adapter_step_neither.json",
        r#"{"steps":[{"tick":true},{"adapter":0,"close":false}]}"#,
        &["step 1: ", "frame or close: true"],
    );
    refused(
        "decreasing.json",
        r#"{"mode":"wrapper","steps":[{"at":5,"tick":true},{"at":3,"tick":true}]}"#,
        &["step 1: ", "at 3 is earlier than the previous step's 5"],
    );
    refused(
        "decreasing_call.json",
        r#"{"mode":"call","steps":[{"at":1,"close":true},{"tick":true},{"at":0,"tick":true}]}"#,
        &["step 2: "],
    );
    refused(
        "unknown_step.json",
        r#"{"mode":"wrapper","steps":[{"tick":true},{"tick":true},{"bogus":1}]}"#,
        &["step 2: unknown step"],
    );
    refused(
        "unknown_call_step.json",
        r#"{"mode":"call","steps":[{"response":{"type":"END"}}]}"#,
        &["step 0: "],
    );
    refused(
        "negative_at.json",
        r#"{"mode":"wrapper","steps":[{"tick":true},{"at":-1,"tick":true}]}"#,
        &["step 1: ", "at must be"],
    );
    refused(
        "fraction_at.json",
        r#"{"mode":"wrapper","steps":[{"at":1.5,"tick":true}]}"#,
        &["step 0: "],
    );
    refused(
        "bad_complete.json",
        r#"{"mode":"wrapper","steps":[{"complete":"x"}]}"#,
        &["step 0: "],
    );
    refused(
        "bad_cancel.json",
        r#"{"mode":"wrapper","steps":[{"tick":true},{"cancel":5}]}"#,
        &["step 1: "],
    );
    refused(
        "step_not_object.json",
        r#"{"mode":"wrapper","steps":[7]}"#,
        &["step 0: "],
    );
    refused(
        "bad_tool.json",
        r#"{"mode":"wrapper","tools":{"t":{"kind":"magic"}},"steps":[]}"#,
        &["tool \"t\""],
    );
    refused("no_steps.json", r#"{"mode":"wrapper"}"#, &["steps"]);
    // Beyond the replay's capacities (names and ids 1024 bytes): refused, naming the step.
    let long = "i".repeat(1025);
    refused(
        "long_id.json",
        &format!(
            r#"{{"mode":"wrapper","steps":[{{"tick":true}},{{"response":{{"type":"TOOL_CALL","content":{{"id":"{long}","name":"x"}}}}}}]}}"#
        ),
        &["step 1: "],
    );
}

/// The replay must refuse a scenario whose slot count it cannot allocate, not abort.
#[test]

fn huge_max_pending_is_refused_not_aborted() {
    let path = scratch(
        "conformance",
        "huge_pending.json",
        r#"{"mode":"wrapper","options":{"maxPending":4294967295},"steps":[{"tick":true}]}"#,
    );
    // Cap the address space so a machine that overcommits does not try to fill 170 GB.
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000; exec \"$0\" \"$1\"")
        .arg(replay_bin())
        .arg(&path)
        .output()
        .expect("sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches('\n').count(), 1, "{stderr}");
}

// ------------------------------------------------------------ replay behaviour

/// Runs a scenario that must run: exit 0, nothing on stderr; its output lines.
fn replay_lines(name: &str, text: &str) -> Vec<String> {
    let path = scratch("conformance", name, text);
    let out = run_replay(&[], &path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
    assert!(stderr.is_empty(), "{name}: {stderr}");
    output_lines(out.stdout)
}

/// Each line is one JSON value serde_json reads.
fn assert_json_lines(name: &str, lines: &[String]) {
    for (i, line) in lines.iter().enumerate() {
        if let Err(e) = serde_json::from_str::<Value>(line) {
            panic!("{name}: line {} is not JSON ({e}): {line}", i + 1);
        }
    }
}

/// One sync call to `t` (result 1), with and without the continue prompt.
const SYNC_CALL: [&str; 3] = [
    r#"{"hook":"toolCall","name":"t","args":{}}"#,
    r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"name":"t","result":1}}}"#,
    r#"{"hook":"toolResult","name":"t","args":{},"result":1,"error":null}"#,
];
const PROMPT: [&str; 2] = [
    r#"{"to":"model","frame":{"type":"TEXT","content":"Tool results above."}}"#,
    r#"{"to":"consumer","frame":{"type":"TEXT","content":"Tool results above."}}"#,
];
const SYNC_TRACE: &str = r#"{"trace":[{"name":"t","args":{},"result":1,"error":null}]}"#;

fn sync_scenario(top: &str) -> String {
    format!(
        r#"{{{top}"tools":{{"t":{{"kind":"sync","result":1}}}},"steps":[{{"at":0,"response":{{"type":"TOOL_CALL","content":{{"name":"t"}}}}}}]}}"#
    )
}

#[test]
fn missing_mode_means_wrapper() {
    let expected: Vec<&str> = [&SYNC_CALL[..], &PROMPT[..], &[SYNC_TRACE]].concat();
    assert_eq!(replay_lines("no_mode.json", &sync_scenario("")), expected);
    assert_eq!(
        replay_lines("mode_wrapper.json", &sync_scenario(r#""mode":"wrapper","#)),
        expected
    );
    // fullValidation is read (it reaches the core once the core has the option).
    assert_eq!(
        replay_lines(
            "full_validation.json",
            &sync_scenario(r#""options":{"fullValidation":false},"#)
        ),
        expected
    );
}

#[test]
fn aborted_is_read_from_options_only() {
    // At the top level `aborted` is an unknown member: ignored, the prompt goes out.
    let with_prompt: Vec<&str> = [&SYNC_CALL[..], &PROMPT[..], &[SYNC_TRACE]].concat();
    assert_eq!(
        replay_lines("top_aborted.json", &sync_scenario(r#""aborted":true,"#)),
        with_prompt
    );
    let without_prompt: Vec<&str> = [&SYNC_CALL[..], &[SYNC_TRACE]].concat();
    assert_eq!(
        replay_lines(
            "options_aborted.json",
            &sync_scenario(r#""options":{"aborted":true},"#)
        ),
        without_prompt
    );
    assert_eq!(
        replay_lines(
            "options_not_aborted.json",
            &sync_scenario(r#""aborted":true,"options":{"aborted":false},"#)
        ),
        with_prompt
    );
}

#[test]
fn adapter_step_with_frame_and_close() {
    let call = |n: u32, id: &str| {
        [
            r#"{"hook":"toolCall","name":"a","args":{}}"#.to_string(),
            format!(
                r#"{{"to":"adapter","call":{n},"frame":{{"type":"TOOL_CALL","content":{{{id}"name":"a","args":{{}}}}}}}}"#
            ),
        ]
    };
    let settled = |id: &str, result: &str| {
        [
            format!(
                r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{{id}"name":"a","result":{result}}}}}}}"#
            ),
            format!(
                r#"{{"hook":"toolResult","name":"a","args":{{}},"result":{result},"error":null}}"#
            ),
            PROMPT[0].to_string(),
            PROMPT[1].to_string(),
        ]
    };
    let entry =
        |result: &str| format!(r#"{{"name":"a","args":{{}},"result":{result},"error":null}}"#);

    // Applied: the frame records the result, the close settles with it. Then the call is
    // finished: a second frame-and-close step is refused once, not twice.
    let lines = replay_lines(
        "frame_close_applied.json",
        r#"{"tools":{"a":{"kind":"adapter"}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"x","name":"a"}}},
            {"at":1,"adapter":0,"frame":{"type":"TOOL_RESULT","content":{"result":1}},"close":true},
            {"at":2,"adapter":0,"frame":{"type":"END"},"close":true}
        ]}"#,
    );
    let mut expected: Vec<String> = call(0, r#""id":"x","#).into();
    expected.extend(settled(r#""id":"x","#, "1"));
    expected.push(r#"{"refused":{"call":0}}"#.into());
    expected.push(format!(r#"{{"trace":[{}]}}"#, entry("1")));
    assert_eq!(lines, expected);

    // Refused: the call timed out before the step; one refused line, the close is not tried.
    let lines = replay_lines(
        "frame_close_refused.json",
        r#"{"options":{"toolTimeoutMs":10},"tools":{"a":{"kind":"adapter"}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"name":"a"}}},
            {"at":10,"adapter":0,"frame":{"type":"TOOL_RESULT","content":{"result":1}},"close":true}
        ]}"#,
    );
    assert_eq!(
        lines[lines.len() - 2..],
        [
            r#"{"refused":{"call":0}}"#,
            r#"{"trace":[{"name":"a","args":{},"result":null,"error":"Tool a timed out after 10ms"}]}"#
        ]
    );
    assert_eq!(lines.iter().filter(|l| l.contains("refused")).count(), 1);

    // Rejected: a malformed frame leaves the call waiting, so the close still settles it.
    let lines = replay_lines(
        "frame_close_rejected.json",
        r#"{"tools":{"a":{"kind":"adapter"}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"name":"a"}}},
            {"at":1,"adapter":0,"frame":"{\"type\":7}","close":true}
        ]}"#,
    );
    let mut expected: Vec<String> = call(0, "").into();
    expected.push(r#"{"rejected":{"path":"adapter","call":0}}"#.into());
    expected.extend(settled("", "null"));
    expected.push(format!(r#"{{"trace":[{}]}}"#, entry("null")));
    assert_eq!(lines, expected);

    // A frame that settles the call: applied, then the close finds the call finished.
    let lines = replay_lines(
        "frame_end_close.json",
        r#"{"tools":{"a":{"kind":"adapter"}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"name":"a"}}},
            {"at":1,"adapter":0,"frame":{"type":"END"},"close":true}
        ]}"#,
    );
    let mut expected: Vec<String> = call(0, "").into();
    expected.extend(settled("", "null"));
    expected.push(r#"{"refused":{"call":0}}"#.into());
    expected.push(format!(r#"{{"trace":[{}]}}"#, entry("null")));
    assert_eq!(lines, expected);
}

#[test]
fn frames_with_raw_white_space_print_one_line_each() {
    // Raw texts with line feeds, tabs and CRs between members: a forwarded response frame,
    // a request frame, a TOOL_CALL's args (hook and trace) and a held END.
    let lines = replay_lines(
        "white_space.json",
        r#"{"tools":{"d":{"kind":"deferred"}},"steps":[
            {"at":0,"response":"{\"type\":\"TEXT\",\n\"content\":\"x\"}"},
            {"at":0,"request":"{\t\"type\" :\r\n\"TEXT\",\n\t\"content\": {\"a b\" :\n[1,\t2], \"s\": \"c \\n\\t d\"}}\n"},
            {"at":1,"response":"{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"d\",\"args\":{\n\t\"q\" : [ 1 ,\n 2 ]\n}}}"},
            {"at":1,"response":"{\n\"type\":\"END\",\n\"content\":{\"r\":\n1}\n}"},
            {"at":2,"complete":0,"result":{"ok":true}}
        ]}"#,
    );
    let expected = [
        r#"{"to":"consumer","frame":{"type":"TEXT","content":"x"}}"#,
        r#"{"to":"model","frame":{"type":"TEXT","content":{"a b":[1,2],"s":"c \n\t d"}}}"#,
        r#"{"hook":"toolCall","name":"d","args":{"q":[1,2]}}"#,
        r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"name":"d","result":{"ok":true}}}}"#,
        r#"{"hook":"toolResult","name":"d","args":{"q":[1,2]},"result":{"ok":true},"error":null}"#,
        PROMPT[0],
        PROMPT[1],
        r#"{"to":"consumer","frame":{"type":"END","content":{"r":1}}}"#,
        r#"{"trace":[{"name":"d","args":{"q":[1,2]},"result":{"ok":true},"error":null}]}"#,
    ];
    assert_eq!(lines.len(), 9);
    assert_json_lines("white_space.json", &lines);
    assert_eq!(lines, expected);
}

#[test]
fn number_text_and_member_order_are_kept() {
    // Raw frames (strings), so the core and the replay see the number text as written.
    let lines = replay_lines(
        "numbers.json",
        r#"{"tools":{"e":{"kind":"sync","echo":true}},"steps":[
            {"at":0,"response":"{\"type\":\"TEXT\",\"content\":[1e400, -0, 1.50, 12345678901234567890123, 1E+2],\"z\":{\"b\":1,\"a\":2}}"},
            {"at":0,"request":"{\"content\":-0.0e-0,\"type\":\"TEXT\"}"},
            {"at":1,"response":"{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"e\",\"args\":[1e400,\n-0, 1.50, 12345678901234567890123, {\"z\":1, \"a\":2}]}}"}
        ]}"#,
    );
    let v = r#"[1e400,-0,1.50,12345678901234567890123,{"z":1,"a":2}]"#;
    let expected = [
        r#"{"to":"consumer","frame":{"type":"TEXT","content":[1e400,-0,1.50,12345678901234567890123,1E+2],"z":{"b":1,"a":2}}}"#.to_string(),
        r#"{"to":"model","frame":{"content":-0.0e-0,"type":"TEXT"}}"#.to_string(),
        format!(r#"{{"hook":"toolCall","name":"e","args":{v}}}"#),
        format!(r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"name":"e","result":{v}}}}}}}"#),
        format!(r#"{{"hook":"toolResult","name":"e","args":{v},"result":{v},"error":null}}"#),
        PROMPT[0].to_string(),
        PROMPT[1].to_string(),
        format!(r#"{{"trace":[{{"name":"e","args":{v},"result":{v},"error":null}}]}}"#),
    ];
    assert_json_lines("numbers.json", &lines);
    assert_eq!(lines, expected);
}

#[test]
fn lone_surrogate_escapes_are_kept_as_written() {
    // serde_json refuses `\ud800` alone, so the line is checked as text: the escapes as written
    // (an escaped backslash before `ud800` is no escape), one line, nothing else.
    let lines = replay_lines(
        "lone_surrogates.json",
        r#"{"steps":[
            {"response":"{\"type\":\"TEXT\",\n\"content\":\"\\ud800 \\udc00 \\ud83d\\ude00 \\\\ud800\"}"}
        ]}"#,
    );
    assert_eq!(
        lines,
        [
            r#"{"to":"consumer","frame":{"type":"TEXT","content":"\ud800 \udc00 \ud83d\ude00 \\ud800"}}"#,
            r#"{"trace":[]}"#
        ]
    );
}

#[test]
fn object_form_frame_with_a_lone_surrogate_name_runs_like_the_string_form() {
    // JSON.stringify writes a lone surrogate as `\ud800`, in object-form frames too: the file
    // is read, the name decodes to U+FFFD (SPEC §7.24), as with the shared string-form scenario.
    let shared = data_dir().join("scenarios/wrapper_lone_surrogate_name");
    let expected: Vec<String> = fs::read_to_string(shared.with_extension("out.ndjson"))
        .expect("shared expected output")
        .lines()
        .map(str::to_owned)
        .collect();
    let out = run_replay(&[], &shared.with_extension("json"));
    assert_eq!(out.status.code(), Some(0));
    let string_form = output_lines(out.stdout);
    assert_eq!(string_form, expected);
    let object_form = replay_lines(
        "object_lone_surrogate_name.json",
        r#"{"tools":{},"steps":[{"at":0,"response":{"type":"TOOL_CALL","content":{"name":"\ud800"}}}]}"#,
    );
    assert_eq!(
        object_form,
        fffd(&[
            r#"{"hook":"toolCall","name":"<FFFD>","args":{}}"#,
            r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"name":"<FFFD>","error":"Tool \"<FFFD>\" not found"}}}"#,
            r#"{"hook":"toolResult","name":"<FFFD>","args":{},"result":null,"error":"Tool \"<FFFD>\" not found"}"#,
            r#"{"to":"model","frame":{"type":"TEXT","content":"Tool results above. Last tool error: Tool \"<FFFD>\" not found"}}"#,
            r#"{"to":"consumer","frame":{"type":"TEXT","content":"Tool results above. Last tool error: Tool \"<FFFD>\" not found"}}"#,
            r#"{"trace":[{"name":"<FFFD>","args":{},"result":null,"error":"Tool \"<FFFD>\" not found"}]}"#,
        ])
    );
    assert_eq!(object_form, expected);
}

#[test]
fn a_tool_registered_under_a_lone_surrogate_key_is_found() {
    // Tool names are decoded keys: `"\ud800"` registers U+FFFD, which a call named `"\ud800"`
    // (or `"\udfff"`) finds; an escaped pair is one character, not two U+FFFD. A lone surrogate
    // in an unknown member (`description`) is ignored like the member.
    let lines = replay_lines(
        "lone_surrogate_key.json",
        r#"{"description":"\udc00","tools":{"\ud800":{"kind":"sync","result":1},"\ud83d\ude00":{"kind":"sync","result":2}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"a","name":"\ud800"}}},
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"b","name":"\udfff"}}},
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"c","name":"😀"}}}
        ]}"#,
    );
    let call = |id: &str, name: &str, result: u8| {
        [
            format!(r#"{{"hook":"toolCall","name":"{name}","args":{{}}}}"#),
            format!(
                r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","result":{result}}}}}}}"#
            ),
            format!(
                r#"{{"hook":"toolResult","name":"{name}","args":{{}},"result":{result},"error":null}}"#
            ),
            PROMPT[0].to_string(),
            PROMPT[1].to_string(),
        ]
    };
    let mut expected: Vec<String> = call("a", "\u{FFFD}", 1).into();
    expected.extend(call("b", "\u{FFFD}", 1));
    expected.extend(call("c", "😀", 2));
    expected.extend(fffd(&[
        r#"{"trace":[{"name":"<FFFD>","args":{},"result":1,"error":null},{"name":"<FFFD>","args":{},"result":1,"error":null},{"name":"😀","args":{},"result":2,"error":null}]}"#,
    ]));
    assert_eq!(lines, expected);
}

#[test]
fn object_form_args_reach_the_core_as_written() {
    // Not re-serialised: number text, escapes (`\u00e9` stays 6 characters, `\udc00` stays)
    // and spacing inside strings as in the file; white space between tokens is dropped (§7.22).
    let lines = replay_lines(
        "object_args.json",
        r#"{"tools":{"e":{"kind":"sync","echo":true}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"name":"e","args":{"n":1e400,"m":-0,"d":1.50,"i":12345678901234567890123,"s":"\u00e9","l":"\udc00"}}}}
        ]}"#,
    );
    let a = r#"{"n":1e400,"m":-0,"d":1.50,"i":12345678901234567890123,"s":"\u00e9","l":"\udc00"}"#;
    let expected = [
        format!(r#"{{"hook":"toolCall","name":"e","args":{a}}}"#),
        format!(
            r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"name":"e","result":{a}}}}}}}"#
        ),
        format!(r#"{{"hook":"toolResult","name":"e","args":{a},"result":{a},"error":null}}"#),
        PROMPT[0].to_string(),
        PROMPT[1].to_string(),
        format!(r#"{{"trace":[{{"name":"e","args":{a},"result":{a},"error":null}}]}}"#),
    ];
    assert_eq!(lines, expected);
}

#[test]
fn sync_and_complete_results_are_carried_as_written() {
    let lines = replay_lines(
        "raw_results.json",
        r#"{"tools":{"s":{"kind":"sync","result":{"x":"\ud800","n":1e400}},"d":{"kind":"deferred"}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"name":"s"}}},
            {"at":1,"response":{"type":"TOOL_CALL","content":{"name":"d"}}},
            {"at":2,"complete":1,"result":["\ud800",1e400,-0.0]}
        ]}"#,
    );
    let s = r#"{"x":"\ud800","n":1e400}"#;
    let d = r#"["\ud800",1e400,-0.0]"#;
    let expected = [
        r#"{"hook":"toolCall","name":"s","args":{}}"#.to_string(),
        format!(
            r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"name":"s","result":{s}}}}}}}"#
        ),
        format!(r#"{{"hook":"toolResult","name":"s","args":{{}},"result":{s},"error":null}}"#),
        PROMPT[0].to_string(),
        PROMPT[1].to_string(),
        r#"{"hook":"toolCall","name":"d","args":{}}"#.to_string(),
        format!(
            r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"name":"d","result":{d}}}}}}}"#
        ),
        format!(r#"{{"hook":"toolResult","name":"d","args":{{}},"result":{d},"error":null}}"#),
        PROMPT[0].to_string(),
        PROMPT[1].to_string(),
        format!(
            r#"{{"trace":[{{"name":"s","args":{{}},"result":{s},"error":null}},{{"name":"d","args":{{}},"result":{d},"error":null}}]}}"#
        ),
    ];
    assert_eq!(lines, expected);
}

#[test]
fn object_form_frames_keep_repeated_members() {
    // The core sees both `type` members: the O(1) path takes the first (TEXT, forwarded with
    // both), full validation refuses the frame (SPEC §7.25). A merged `{"type":"TOOL_CALL"}`
    // would have been intercepted.
    let frame = r#"{"type":"TEXT","type":"TOOL_CALL","content":{"name":"t"}}"#;
    let tools = r#""tools":{"t":{"kind":"sync","result":1}}"#;
    let lines = replay_lines(
        "repeated_members.json",
        &format!(
            r#"{{{tools},"steps":[{{"at":0,"response":{frame}}},{{"at":0,"request":{{"type":"TEXT","content":"a","content":"b"}}}}]}}"#
        ),
    );
    assert_eq!(
        lines,
        [
            format!(r#"{{"to":"consumer","frame":{frame}}}"#).as_str(),
            r#"{"to":"model","frame":{"type":"TEXT","content":"a","content":"b"}}"#,
            r#"{"trace":[]}"#,
        ]
    );
    let lines = replay_lines(
        "repeated_members_full.json",
        &format!(
            r#"{{"options":{{"fullValidation":true}},{tools},"steps":[{{"at":0,"response":{frame}}}]}}"#
        ),
    );
    assert_eq!(
        lines,
        [r#"{"rejected":{"path":"response"}}"#, r#"{"trace":[]}"#]
    );
}

#[test]
fn call_mode_args_and_id_as_written() {
    // Args raw (number text and escapes kept); the id is decoded (U+FFFD), like the name.
    let lines = replay_lines(
        "call_raw_args.json",
        r#"{"mode":"call","name":"t\ud800","id":"\ud800","args":{"x":1e400,"s":"\udc00"},"steps":[
            {"at":1,"frame":{"type":"TOOL_RESULT","content":{"result":{"n":1e400,"e":"\u00e9"}}}},
            {"at":1,"close":true}
        ]}"#,
    );
    assert_eq!(
        lines,
        fffd(&[
            r#"{"to":"adapter","call":0,"frame":{"type":"TOOL_CALL","content":{"id":"<FFFD>","name":"t<FFFD>","args":{"x":1e400,"s":"\udc00"}}}}"#,
            r#"{"settled":{"result":{"n":1e400,"e":"\u00e9"}}}"#,
        ])
    );
}

#[test]
fn lone_surrogates_in_messages_and_reasons_decode_to_u_fffd() {
    // A sync tool's error, a completion error and a cancel reason are decoded strings.
    let lines = replay_lines(
        "lone_surrogate_messages.json",
        r#"{"tools":{"d":{"kind":"deferred"},"f":{"kind":"sync","error":"no \ud800 disk"}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"1","name":"f"}}},
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"2","name":"d"}}},
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"3","name":"d"}}},
            {"at":1,"complete":1,"error":"lost \udc00"},
            {"at":2,"cancel":"user \ud800 stopped"}
        ]}"#,
    );
    assert_eq!(
        lines,
        fffd(&[
            r#"{"hook":"toolCall","name":"f","args":{}}"#,
            r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"id":"1","name":"f","error":"no <FFFD> disk"}}}"#,
            r#"{"hook":"toolResult","name":"f","args":{},"result":null,"error":"no <FFFD> disk"}"#,
            r#"{"to":"model","frame":{"type":"TEXT","content":"Tool results above. Last tool error: no <FFFD> disk"}}"#,
            r#"{"to":"consumer","frame":{"type":"TEXT","content":"Tool results above. Last tool error: no <FFFD> disk"}}"#,
            r#"{"hook":"toolCall","name":"d","args":{}}"#,
            r#"{"hook":"toolCall","name":"d","args":{}}"#,
            r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"id":"2","name":"d","error":"lost <FFFD>"}}}"#,
            r#"{"hook":"toolResult","name":"d","args":{},"result":null,"error":"lost <FFFD>"}"#,
            r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"id":"3","name":"d","error":"Tool d cancelled: user <FFFD> stopped"}}}"#,
            r#"{"hook":"toolResult","name":"d","args":{},"result":null,"error":"Tool d cancelled: user <FFFD> stopped"}"#,
            r#"{"to":"model","frame":{"type":"TEXT","content":"Tool results above. Last tool error: Tool d cancelled: user <FFFD> stopped"}}"#,
            r#"{"to":"consumer","frame":{"type":"TEXT","content":"Tool results above. Last tool error: Tool d cancelled: user <FFFD> stopped"}}"#,
            r#"{"trace":[{"name":"f","args":{},"result":null,"error":"no <FFFD> disk"},{"name":"d","args":{},"result":null,"error":"lost <FFFD>"},{"name":"d","args":{},"result":null,"error":"Tool d cancelled: user <FFFD> stopped"}]}"#,
        ])
    );
}

#[test]
fn a_string_frame_decodes_to_its_raw_text() {
    // A frame given as a string is its decoded text: a lone surrogate of the file's string
    // itself (not of the frame's JSON) becomes the UTF-8 of U+FFFD in the frame's bytes.
    let lines = replay_lines(
        "string_frame_surrogate.json",
        r#"{"steps":[{"request":"{\"type\":\"TEXT\",\"content\":\"\ud800 \\ud800\"}"}]}"#,
    );
    assert_eq!(
        lines,
        fffd(&[
            r#"{"to":"model","frame":{"type":"TEXT","content":"<FFFD> \ud800"}}"#,
            r#"{"trace":[]}"#
        ])
    );
}

#[test]
fn object_form_frames_of_any_depth_are_read() {
    // Only what a step needs is decoded: a frame nested deeper than serde_json's own limit
    // (128) reaches the core (which passes a TEXT through unvalidated) and prints as itself.
    let content = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let lines = replay_lines(
        "deep_frame.json",
        &format!(r#"{{"steps":[{{"response":{{"type":"TEXT","content":{content}}}}}]}}"#),
    );
    assert_eq!(
        lines,
        [
            format!(r#"{{"to":"consumer","frame":{{"type":"TEXT","content":{content}}}}}"#),
            r#"{"trace":[]}"#.to_string()
        ]
    );
}

#[test]
fn a_pass_through_frame_broken_after_type_prints_as_a_string() {
    // Only `type` is read on the pass-through path; the rest is not JSON: a JSON string of its text.
    let lines = replay_lines(
        "broken_after_type.json",
        r#"{"steps":[{"response":"{\"type\":\"TEXT\",\"content\":[1,\n}"}]}"#,
    );
    assert_json_lines("broken_after_type.json", &lines);
    assert_eq!(
        lines,
        [
            r#"{"to":"consumer","frame":"{\"type\":\"TEXT\",\"content\":[1,\n}"}"#,
            r#"{"trace":[]}"#
        ]
    );
}

#[test]
fn a_trace_entry_cut_to_fit_is_valid_and_flagged() {
    // A sync tool's args are the frame's own bytes (no args capacity): args larger than the
    // whole trace region are cut mid-value by the core.
    let big = "x".repeat(2_300_000);
    let lines = replay_lines(
        "cut_trace.json",
        &format!(
            r#"{{"tools":{{"t":{{"kind":"sync","result":1}}}},"steps":[{{"response":"{{\"type\":\"TOOL_CALL\",\"content\":{{\"name\":\"t\",\"args\":\"{big}\"}}}}"}}]}}"#
        ),
    );
    assert_eq!(lines.len(), 6);
    assert_json_lines("cut_trace.json", &lines);
    let hook: Value = serde_json::from_str(&lines[0]).expect("JSON");
    assert_eq!(hook["args"].as_str().map(str::len), Some(big.len()));
    let trace: Value = serde_json::from_str(&lines[5]).expect("JSON");
    let entry = &trace["trace"][0];
    assert_eq!(entry["truncated"], true, "{}", &lines[5][..200]);
    assert_eq!(entry["name"], "t");
    // The cut args are not a JSON value: their text, as a string.
    let args = entry["args"].as_str().expect("cut args as a string");
    assert!(
        args.starts_with("\"xxx") && args.len() < big.len(),
        "{}",
        args.len()
    );
    assert_eq!(entry["error"], Value::Null);
    // A whole entry has no flag.
    let lines = replay_lines("whole_trace.json", &sync_scenario(""));
    assert!(!lines.last().expect("trace").contains("truncated"));
}

#[test]
fn ids_and_names_of_1024_bytes_run() {
    let id = "i".repeat(1024);
    let name = "n".repeat(1024);
    let lines = replay_lines(
        "long_names.json",
        &format!(
            r#"{{"tools":{{"{name}":{{"kind":"sync","result":1}}}},"steps":[{{"response":{{"type":"TOOL_CALL","content":{{"id":"{id}","name":"{name}"}}}}}}]}}"#
        ),
    );
    assert_json_lines("long_names.json", &lines);
    assert_eq!(
        lines[1],
        format!(
            r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","result":1}}}}}}"#
        )
    );
}
