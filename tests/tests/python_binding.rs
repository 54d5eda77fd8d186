//! The Python binding (`examples/python`, the package `polyweave_tool_adapter`: `ctypes` over
//! the C ABI's shared library) conforms like the Rust and C replay programs: the release shared
//! library, as new as the current sources (`polyweave_tests::library::ffi_shared_lib`: the main
//! target directory's when it is current, else built into a private one), is handed to Python
//! through `PW_LIB`; the binding's unit tests pass from the source folder (among them
//! `test_decode.py`: the stream decoders on every recorded provider body, whole and in random
//! pieces, and the item encoders; `test_request.py`: conversations and request bodies, compared
//! with what `polyweave-replay --request` prints, its path in `PW_REPLAY`; `test_package.py`:
//! the source package imported, the `PW_LIB` library loaded, Python 3.9 sources), and
//! `replay.py` runs every shared scenario and prints what its `*.out.ndjson` expects, compared
//! channel by channel as `conformance` does (`polyweave_tests::ndjson_compare`). The same tests
//! against the installed wheel, in a venv:
//! `tests/python_wheel.sh`.
//!
//! Skipped, with a message, only when `python3` is missing (the version check below needs no
//! Python and always runs), and then not under CI (`CI` set) or the test command
//! (`PW_REQUIRE_MCP_SERVERS=1`): there a missing `python3` fails them, as a missing `node` fails
//! `node_binding.rs`, so that a CI image without Python cannot pass by skipping them all.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use polyweave_tests::library::{ffi_shared_lib, replay_bin, workspace_root as root};
use polyweave_tests::ndjson_compare::assert_refused;
use polyweave_tests::programs::installed;
use polyweave_tests::scenarios::{
    bad_scenarios, output_lines, replay_failures, scratch, SCENARIOS,
};

fn python_dir() -> PathBuf {
    root().join("examples/python")
}

/// Whether a missing `python3` fails the tests instead of skipping them: under CI (`CI` set and
/// not empty) or the test command (`PW_REQUIRE_MCP_SERVERS=1`); node_binding.rs's
/// `node_required()` reads the same two.
fn python_required_by(ci: Option<&OsStr>, require: Option<&str>) -> bool {
    ci.is_some_and(|v| !v.is_empty()) || require == Some("1")
}

fn python_required() -> bool {
    let require = std::env::var("PW_REQUIRE_MCP_SERVERS").ok();
    python_required_by(std::env::var_os("CI").as_deref(), require.as_deref())
}

/// Whether to run the tests: `found` (python3 is on PATH); missing, a skip, or a panic when
/// `required`.
fn run_or_skip(found: bool, required: bool) -> bool {
    assert!(
        found || !required,
        "`python3` is required here (CI or PW_REQUIRE_MCP_SERVERS=1): install it"
    );
    found
}

/// The release shared library as new as the current sources, once per test process; `None`
/// (with a message) without `python3`, a panic instead where it is required.
fn shared_lib() -> Option<&'static PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let found = installed(&["python3"], "the Python binding tests");
            run_or_skip(found, python_required()).then(|| ffi_shared_lib("release"))
        })
        .as_ref()
}

#[test]
fn a_missing_python3_fails_under_ci_or_the_test_command_and_skips_elsewhere() {
    for (ci, require, want) in [
        (Some("true"), None, true),
        (Some("1"), Some("0"), true),
        (None, Some("1"), true),
        (Some(""), None, false),
        (None, Some("0"), false),
        (None, None, false),
    ] {
        assert_eq!(
            python_required_by(ci.map(OsStr::new), require),
            want,
            "CI={ci:?} PW_REQUIRE_MCP_SERVERS={require:?}"
        );
    }
    assert!(run_or_skip(true, true));
    assert!(run_or_skip(true, false));
    assert!(!run_or_skip(false, false));
    let panic = std::panic::catch_unwind(|| run_or_skip(false, true)).unwrap_err();
    // A message without arguments panics with a `&str`; one with them, with a `String`.
    let message = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    assert_eq!(
        message,
        Some("`python3` is required here (CI or PW_REQUIRE_MCP_SERVERS=1): install it")
    );
}

/// `python3 ARGS` in the repository's root with `PW_LIB` set, and `env` besides.
fn python_with(lib: &Path, args: &[&OsStr], env: &[(&str, &OsStr)]) -> Output {
    Command::new("python3")
        .args(args)
        .env("PW_LIB", lib)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .envs(env.iter().copied())
        .current_dir(root())
        .output()
        .expect("running python3")
}

fn replay(lib: &Path, file: &Path) -> Output {
    let script = python_dir().join("replay.py");
    python_with(lib, &[script.as_os_str(), file.as_os_str()], &[])
}

#[test]
fn the_unit_tests_pass() {
    let Some(lib) = shared_lib() else { return };
    let tests = python_dir().join("tests");
    // test_request.py runs `polyweave-replay --request` on its conversations and compares.
    let out = python_with(
        lib,
        &[
            "-m".as_ref(),
            "unittest".as_ref(),
            "discover".as_ref(),
            "-v".as_ref(),
            "-s".as_ref(),
            tests.as_os_str(),
        ],
        &[("PW_REPLAY", replay_bin().as_os_str())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python3 -m unittest discover -s examples/python/tests: exit {:?}\n{}\n{stderr}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
    );
    // The decoder, request and package tests were found and ran (one line per test with `-v`).
    for class in [
        "test_decode.Recordings",
        "test_decode.DecoderObject",
        "test_decode.Items",
        "test_request.Bodies",
        "test_request.Api",
        "test_request.Refusals",
        "test_request.Staleness",
        "test_request.Readme",
        "test_package.WhichCopy",
        "test_package.OneVersion",
        "test_package.Python39",
    ] {
        assert!(
            stderr.contains(&format!("({class}.")),
            "{class} did not run:\n{stderr}"
        );
    }
}

#[test]
fn every_shared_scenario_conforms() {
    let Some(lib) = shared_lib() else { return };
    let failures = replay_failures(2, |file| replay(lib, file));
    assert!(
        failures.is_empty(),
        "{} of {SCENARIOS} scenarios do not conform in Python:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Runs a bad scenario: exit 2, one stderr line naming the file and holding each of `must`.
fn refused(lib: &Path, file: &str, text: impl AsRef<[u8]>, must: &[&str]) {
    let path = scratch("python-replay", file, text);
    assert_refused(replay(lib, &path), "replay.py", &path, must);
}

#[test]
fn bad_scenarios_exit_2_with_one_line_naming_the_file_and_step() {
    let Some(lib) = shared_lib() else { return };
    for (file, text, must) in bad_scenarios() {
        refused(lib, file, text, must);
    }
}

#[test]
fn raw_values_print_as_written_and_lone_surrogates_decode_to_u_fffd() {
    let Some(lib) = shared_lib() else { return };
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let path = scratch(
        "python-replay",
        "raw.json",
        format!(
            r#"{{"tools":{{"\ud800":{{"kind":"sync","result":{{"x":"\ud800", "n":1e400}}}}}},"steps":[
            {{"at":0,"response":{{"type":"TEXT","type":"TOOL_CALL","content":[1e400, -0, 1.50,
                12345678901234567890123, "\u00e9"]}}}},
            {{"at":0,"request":"{{\"type\":\"TEXT\",\"content\":[1,\n}}"}},
            {{"at":0,"request":{{"type":"TEXT","content":{deep}}}}},
            {{"at":1,"response":{{"type":"TOOL_CALL","content":{{"name":"\udfff","args":{{"l":"\udc00"}}}}}}}}
        ]}}"#
        ),
    );
    let out = replay(lib, &path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines = output_lines(out.stdout);
    let (args, result) = (r#"{"l":"\udc00"}"#, r#"{"x":"\ud800","n":1e400}"#);
    let r = '\u{FFFD}';
    assert_eq!(
        lines,
        [
            r#"{"to":"consumer","frame":{"type":"TEXT","type":"TOOL_CALL","content":[1e400,-0,1.50,12345678901234567890123,"\u00e9"]}}"#.to_string(),
            r#"{"to":"model","frame":"{\"type\":\"TEXT\",\"content\":[1,\n}"}"#.to_string(),
            format!(r#"{{"to":"model","frame":{{"type":"TEXT","content":{deep}}}}}"#),
            format!(r#"{{"hook":"toolCall","name":"{r}","args":{args}}}"#),
            format!(r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"name":"{r}","result":{result}}}}}}}"#),
            format!(r#"{{"hook":"toolResult","name":"{r}","args":{args},"result":{result},"error":null}}"#),
            r#"{"to":"model","frame":{"type":"TEXT","content":"Tool results above."}}"#.to_string(),
            r#"{"to":"consumer","frame":{"type":"TEXT","content":"Tool results above."}}"#.to_string(),
            format!(r#"{{"trace":[{{"name":"{r}","args":{args},"result":{result},"error":null}}]}}"#),
        ]
    );
}

/// `version = "X"` in the first line of `section` in a TOML file that has one, as written.
fn toml_version(rel: &str, section: &str) -> String {
    let text = std::fs::read_to_string(root().join(rel)).expect(rel);
    let body = text
        .split_once(&format!("\n{section}\n"))
        .unwrap_or_else(|| panic!("{rel} has no {section}"))
        .1;
    let body = body.split("\n[").next().unwrap_or(body);
    let line = body
        .lines()
        .find(|l| l.starts_with("version = "))
        .unwrap_or_else(|| panic!("{rel} {section} has no version"));
    line["version = ".len()..].trim_matches('"').to_string()
}

/// The wheel carries the crate's library, whose `pw_version()` says the crate's version: the
/// Python distribution has that version too (setup.py refuses to build otherwise; this says it
/// without building).
#[test]
fn the_python_distribution_has_the_workspace_version() {
    let cargo = toml_version("Cargo.toml", "[workspace.package]");
    assert_eq!(
        toml_version("examples/python/pyproject.toml", "[project]"),
        cargo
    );
    assert_eq!(cargo, env!("CARGO_PKG_VERSION"));
}
