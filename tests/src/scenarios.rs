//! The shared scenarios (`tests/data/scenarios/`) and running a replay program over them:
//! what the Rust, C, Python and Node replay tests share.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Mutex;

use crate::data_dir;
use crate::ndjson_compare::compare;

/// Number of shared scenarios (each with its expected output).
pub const SCENARIOS: usize = 60;

/// Every scenario file, sorted by name (their count checked).
pub fn scenario_files() -> Vec<PathBuf> {
    let dir = data_dir().join("scenarios");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), SCENARIOS, "scenario count: {files:?}");
    files
}

/// A scenario's file name.
pub fn scenario_name(file: &Path) -> String {
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs `check` on every scenario, on `threads` threads; the failures it reports, in file order.
pub fn each_scenario(
    threads: usize,
    check: impl Fn(&Path) -> Option<String> + Sync,
) -> Vec<String> {
    let files = scenario_files();
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(file) = files.get(i) else { break };
                if let Some(problem) = check(file) {
                    failures.lock().unwrap().push((i, problem));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    failures.into_iter().map(|(_, p)| p).collect()
}

/// Runs a replay program (`run(file)` gives its output) on every scenario, `threads` at a
/// time, and compares each output with the scenario's expected one, channel by channel. The
/// failures, in file order: a run that did not exit 0 with an empty stderr, or the channels
/// that differ.
pub fn replay_failures(threads: usize, run: impl Fn(&Path) -> Output + Sync) -> Vec<String> {
    each_scenario(threads, |file| {
        let expected_path = file.with_extension("out.ndjson");
        let expected = fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", expected_path.display()));
        let out = run(file);
        let name = scenario_name(file);
        if out.status.code() != Some(0) || !out.stderr.is_empty() {
            return Some(format!(
                "{name}: exit {:?}, stderr {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let actual = String::from_utf8(out.stdout).expect("UTF-8 output");
        let problems = compare(&expected, &actual);
        (!problems.is_empty()).then(|| format!("{name}:\n{}", problems.join("\n")))
    })
}

/// A replay program's stdout as its lines (without their `\n`); panics unless it is UTF-8.
pub fn output_lines(stdout: Vec<u8>) -> Vec<String> {
    String::from_utf8(stdout)
        .expect("UTF-8 output")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Expected lines with `<FFFD>` standing for U+FFFD (what a decoded lone surrogate becomes).
pub fn fffd(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.replace("<FFFD>", "\u{FFFD}"))
        .collect()
}

/// Writes `text` to `file` in a scratch directory of this test process, named after `prefix`.
pub fn scratch(prefix: &str, file: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("polyweave-{prefix}-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(file);
    fs::write(&path, text).expect("writing a scenario");
    path
}

/// Scenarios every replay program must refuse (SPEC §6): `(file, text, parts of the stderr
/// line)`. The last two are refused at run time (an id over the replays' 1024 bytes) and when
/// the file is empty.
pub fn bad_scenarios() -> Vec<(&'static str, Vec<u8>, &'static [&'static str])> {
    let long_id = format!(
        r#"{{"steps":[{{"tick":true}},{{"response":{{"type":"TOOL_CALL","content":{{"id":"{}","name":"x"}}}}}}]}}"#,
        "i".repeat(1025)
    );
    vec![
        ("not_json.json", b"{".to_vec(), &["not JSON"]),
        (
            "trailing_comma.json",
            br#"{"steps":[],}"#.to_vec(),
            &["not JSON"],
        ),
        (
            "bad_utf8.json",
            b"{\"steps\":[{\"request\":\"\x80\"}]}".to_vec(),
            &["not JSON"],
        ),
        ("array.json", b"[]".to_vec(), &["must be a JSON object"]),
        (
            "mode.json",
            br#"{"mode":"Wrapper","steps":[]}"#.to_vec(),
            &["mode must be"],
        ),
        (
            "tool.json",
            br#"{"tools":{"t\n":{"kind":"magic"}},"steps":[]}"#.to_vec(),
            &[r#"tool "t\n""#],
        ),
        (
            "pending.json",
            br#"{"options":{"maxPending":4294967295},"steps":[]}"#.to_vec(),
            &["maxPending 4294967295 exceeds"],
        ),
        (
            "decreasing.json",
            br#"{"mode":"call","steps":[{"at":5,"tick":true},{"at":3,"tick":true}]}"#.to_vec(),
            &["step 1: ", "at 3 is earlier than the previous step's 5"],
        ),
        (
            "unknown_step.json",
            br#"{"steps":[{"tick":true},{"tick":true},{"bogus":1}]}"#.to_vec(),
            &["step 2: unknown step"],
        ),
        (
            "long_id.json",
            long_id.into_bytes(),
            &["step 1: response refused"],
        ),
        ("missing.json", Vec::new(), &["not JSON"]),
    ]
}
