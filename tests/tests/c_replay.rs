//! The C replay program (`examples/c-host`, SPEC §6 through the C API only) conforms like the
//! Rust one: built with `make` (the staticlib, then `build/pw-replay` and the sanitized
//! `build/pw-replay-asan`), it runs every shared scenario and prints what its `*.out.ndjson`
//! expects, compared channel by channel as `conformance` does
//! (`polyweave_tests::ndjson_compare`). The sanitized binary runs every scenario with nothing
//! on stderr, and, when `valgrind` is installed, so does the plain one under valgrind.
//!
//! Skipped, with a message, only when `cc` or `make` is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use polyweave_tests::library::workspace_root;
use polyweave_tests::ndjson_compare;
use polyweave_tests::programs::installed;
use polyweave_tests::scenarios::{
    bad_scenarios, each_scenario, fffd, output_lines, replay_failures, scenario_name as name,
    scratch, SCENARIOS,
};

// ------------------------------------------------------------ the binaries

/// `examples/c-host`.
fn c_host() -> PathBuf {
    workspace_root().join("examples/c-host")
}

/// The two binaries `make` built.
struct Binaries {
    plain: PathBuf,
    asan: PathBuf,
}

/// The binaries, built once per test process; `None` (with a message) without `cc` or `make`.
fn binaries() -> Option<&'static Binaries> {
    static BUILT: OnceLock<Option<Binaries>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if !installed(&["cc", "make"], "the C replay tests") {
                return None;
            }
            // `make` runs `cargo build --release -p polyweave-tool-adapter-ffi` when the
            // staticlib is older than its sources (`CARGO` is inherited from `cargo test`).
            let out = Command::new("make")
                .arg("-C")
                .arg(c_host())
                .args(["all", "asan"])
                .output()
                .expect("running make");
            assert!(
                out.status.success(),
                "make -C examples/c-host all asan failed:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let build = c_host().join("build");
            let bins = Binaries {
                plain: build.join("pw-replay"),
                asan: build.join("pw-replay-asan"),
            };
            for bin in [&bins.plain, &bins.asan] {
                assert!(bin.is_file(), "make built no {}", bin.display());
            }
            Some(bins)
        })
        .as_ref()
}

fn run(bin: &Path, file: &Path) -> Output {
    Command::new(bin)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", bin.display()))
}

// ------------------------------------------------------------ conformance

#[test]
fn every_shared_scenario_conforms() {
    let Some(bins) = binaries() else { return };
    let failures = replay_failures(1, |file| run(&bins.plain, file));
    assert!(
        failures.is_empty(),
        "{} of {SCENARIOS} scenarios do not conform in C:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ------------------------------------------------------------ sanitizers

#[test]
fn the_sanitized_build_runs_every_scenario_clean() {
    let Some(bins) = binaries() else { return };
    let failures = each_scenario(2, |file| {
        let out = run(&bins.asan, file);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(0) || !stderr.is_empty() {
            return Some(format!(
                "{}: exit {:?}, stderr:\n{stderr}",
                name(file),
                out.status.code()
            ));
        }
        // The same lines as the plain build.
        let plain = run(&bins.plain, file);
        (out.stdout != plain.stdout)
            .then(|| format!("{}: output differs from pw-replay", name(file)))
    });
    assert!(
        failures.is_empty(),
        "pw-replay-asan (address, undefined):\n{}",
        failures.join("\n\n")
    );
}

#[test]
fn the_plain_build_runs_every_scenario_clean_under_valgrind() {
    let Some(bins) = binaries() else { return };
    if !installed(&["valgrind"], "the valgrind run") {
        return;
    }
    let failures = each_scenario(2, |file| {
        let out = Command::new("valgrind")
            .args(["-q", "--error-exitcode=1", "--leak-check=full"])
            .arg(&bins.plain)
            .arg(file)
            .output()
            .expect("running valgrind");
        (out.status.code() != Some(0)).then(|| {
            format!(
                "{}: exit {:?}, stderr:\n{}",
                name(file),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    });
    assert!(
        failures.is_empty(),
        "pw-replay under valgrind:\n{}",
        failures.join("\n\n")
    );
}

// ------------------------------------------------------------ the reader and the printer

/// Runs a scenario that must run (plain and sanitized): exit 0, nothing on stderr; its lines.
fn replay_lines(bins: &Binaries, file: &str, text: &str) -> Vec<String> {
    let path = scratch("c-replay", file, text);
    let mut lines = Vec::new();
    for bin in [&bins.plain, &bins.asan] {
        let out = run(bin, &path);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{file}: {stderr}");
        assert!(stderr.is_empty(), "{file}: {stderr}");
        lines = output_lines(out.stdout);
    }
    lines
}

#[test]
fn lone_surrogates_decode_to_u_fffd_and_raw_values_keep_the_escape() {
    let Some(bins) = binaries() else { return };
    // Decoded: the tool name (a key and a call's name), a sync tool's error, a completion error,
    // a cancel reason, a string frame's own text. Raw: args, results, frames as written.
    let lines = replay_lines(
        bins,
        "surrogates.json",
        r#"{"description":"\udc00","tools":{"\ud800":{"kind":"sync","result":{"x":"\ud800","n":1e400}},"d":{"kind":"deferred"}},"steps":[
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"a","name":"\udfff","args":{"l":"\udc00","p":"\ud83d\ude00"}}}},
            {"at":0,"response":{"type":"TOOL_CALL","content":{"id":"b","name":"d"}}},
            {"at":1,"complete":1,"error":"lost \udc00"},
            {"at":2,"request":"{\"type\":\"TEXT\",\"content\":\"\ud800 \\ud800\"}"},
            {"at":3,"response":{"type":"TOOL_CALL","content":{"id":"c","name":"d"}}},
            {"at":4,"cancel":"user \ud800 stopped"}
        ]}"#,
    );
    let args = r#"{"l":"\udc00","p":"\ud83d\ude00"}"#;
    let result = r#"{"x":"\ud800","n":1e400}"#;
    let prompt = |tail: &str| {
        [
            format!(
                r#"{{"to":"model","frame":{{"type":"TEXT","content":"Tool results above.{tail}"}}}}"#
            ),
            format!(
                r#"{{"to":"consumer","frame":{{"type":"TEXT","content":"Tool results above.{tail}"}}}}"#
            ),
        ]
    };
    let mut expected = vec![
        format!(r#"{{"hook":"toolCall","name":"<FFFD>","args":{args}}}"#),
        format!(
            r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"id":"a","name":"<FFFD>","result":{result}}}}}}}"#
        ),
        format!(
            r#"{{"hook":"toolResult","name":"<FFFD>","args":{args},"result":{result},"error":null}}"#
        ),
    ];
    expected.extend(prompt(""));
    expected.extend([
        r#"{"hook":"toolCall","name":"d","args":{}}"#.to_string(),
        r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"id":"b","name":"d","error":"lost <FFFD>"}}}"#.to_string(),
        r#"{"hook":"toolResult","name":"d","args":{},"result":null,"error":"lost <FFFD>"}"#.to_string(),
    ]);
    expected.extend(prompt(" Last tool error: lost <FFFD>"));
    expected.extend([
        r#"{"to":"model","frame":{"type":"TEXT","content":"<FFFD> \ud800"}}"#.to_string(),
        r#"{"hook":"toolCall","name":"d","args":{}}"#.to_string(),
        r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"id":"c","name":"d","error":"Tool d cancelled: user <FFFD> stopped"}}}"#.to_string(),
        r#"{"hook":"toolResult","name":"d","args":{},"result":null,"error":"Tool d cancelled: user <FFFD> stopped"}"#.to_string(),
    ]);
    expected.extend(prompt(
        " Last tool error: Tool d cancelled: user <FFFD> stopped",
    ));
    expected.push(format!(
        r#"{{"trace":[{{"name":"<FFFD>","args":{args},"result":{result},"error":null}},{{"name":"d","args":{{}},"result":null,"error":"lost <FFFD>"}},{{"name":"d","args":{{}},"result":null,"error":"Tool d cancelled: user <FFFD> stopped"}}]}}"#
    ));
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    assert_eq!(lines, fffd(&expected));
}

#[test]
fn raw_values_print_as_written_on_one_line() {
    let Some(bins) = binaries() else { return };
    // Number text, escapes and member order as written; white space between tokens dropped;
    // repeated members kept (the first `type` wins on the pass-through path); a frame broken
    // after `type` prints as a string; nesting deeper than any fixed limit is read.
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let lines = replay_lines(
        bins,
        "raw_values.json",
        &format!(
            r#"{{"tools":{{"e":{{"kind":"sync","echo":true}}}},"steps":[
            {{"at":0,"response":{{"type":"TEXT","type":"TOOL_CALL","content":[1e400, -0, 1.50,
                12345678901234567890123, "\u00e9"],"z":{{"b":1,"a":2}}}}}},
            {{"at":0,"request":"{{\"type\":\"TEXT\",\"content\":[1,\n}}"}},
            {{"at":0,"request":{{"type":"TEXT","content":{deep}}}}},
            {{"at":1,"response":"{{\"type\":\"TOOL_CALL\",\"content\":{{\"name\":\"e\",\"args\":{{\n\t\"q\" : [ 1 ,\n 2 ]\n}}}}}}"}}
        ]}}"#
        ),
    );
    let q = r#"{"q":[1,2]}"#;
    assert_eq!(
        lines,
        [
            r#"{"to":"consumer","frame":{"type":"TEXT","type":"TOOL_CALL","content":[1e400,-0,1.50,12345678901234567890123,"\u00e9"],"z":{"b":1,"a":2}}}"#.to_string(),
            r#"{"to":"model","frame":"{\"type\":\"TEXT\",\"content\":[1,\n}"}"#.to_string(),
            format!(r#"{{"to":"model","frame":{{"type":"TEXT","content":{deep}}}}}"#),
            format!(r#"{{"hook":"toolCall","name":"e","args":{q}}}"#),
            format!(r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"name":"e","result":{q}}}}}}}"#),
            format!(r#"{{"hook":"toolResult","name":"e","args":{q},"result":{q},"error":null}}"#),
            r#"{"to":"model","frame":{"type":"TEXT","content":"Tool results above."}}"#.to_string(),
            r#"{"to":"consumer","frame":{"type":"TEXT","content":"Tool results above."}}"#.to_string(),
            format!(r#"{{"trace":[{{"name":"e","args":{q},"result":{q},"error":null}}]}}"#),
        ]
    );
}

// ------------------------------------------------------------ scenarios it cannot run

/// Runs a bad scenario (plain and sanitized): exit 2, one stderr line naming the file and
/// holding each of `must`.
fn refused(bins: &Binaries, file: &str, text: impl AsRef<[u8]>, must: &[&str]) {
    let path = scratch("c-replay", file, text);
    for bin in [&bins.plain, &bins.asan] {
        ndjson_compare::assert_refused(run(bin, &path), "pw-replay", &path, must);
    }
}

#[test]
fn bad_scenarios_exit_2_with_one_line_naming_the_file_and_step() {
    let Some(bins) = binaries() else { return };
    for (file, text, must) in bad_scenarios() {
        refused(bins, file, text, must);
    }
}
