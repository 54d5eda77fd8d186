//! The npm package (`examples/node`: @polyweave/tool-adapter's API over the C ABI compiled to
//! WebAssembly) passes its own test suite from the source folder (among it
//! `test/decode.test.mjs`: the stream decoders on every recorded provider body through
//! `createDecoder`, the Transforms and `framesFromResponse`, and `encodeItem`;
//! `test/package.test.mjs`: the struct layouts against the module's own, the allocator, no
//! top-level `node:` import; `test/request.test.mjs`: conversations and request bodies equal to
//! `polyweave-replay --request`'s), and its replay program (`replay.mjs`, built on the package's
//! exported API only) conforms on every shared scenario, compared channel by channel as
//! `conformance` does (`polyweave_tests::ndjson_compare`); the request bodies its tests want are
//! what `polyweave-replay --request` prints.
//!
//! The module is built first from the current sources by the package's own build script
//! (`node build.mjs`: `cargo build --release --target wasm32-unknown-unknown -p
//! polyweave-tool-adapter-wasm` into this test's target directory, copied next to
//! `binding.mjs`), so the suite never runs against a stale module. The installed package is
//! tested by `tests/npm_package.sh`.
//!
//! Without `node` the tests are skipped with a message, except under CI (`CI` set) or the test
//! command (`PW_REQUIRE_MCP_SERVERS=1`): there a missing `node` fails them.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use polyweave_tests::library::{replay_bin, target_dir, workspace_root as root};
use polyweave_tests::programs::installed;
use polyweave_tests::scenarios::{replay_failures, SCENARIOS};

fn node_dir() -> PathBuf {
    root().join("examples/node")
}

/// Whether a missing `node` must fail the tests rather than skip them.
fn node_required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("PW_REQUIRE_MCP_SERVERS").is_ok_and(|v| v == "1")
}

/// Builds the wasm module (once per test process); `false` (with a message) without node.
fn setup() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        if !installed(&["node"], "the Node package tests") {
            assert!(
                !node_required(),
                "`node` (>= 20) is required here (CI or PW_REQUIRE_MCP_SERVERS=1): install it"
            );
            return false;
        }
        let out = Command::new("node")
            .arg("build.mjs")
            .arg("--target-dir")
            .arg(target_dir())
            .current_dir(node_dir())
            .output()
            .expect("running node build.mjs");
        assert!(
            out.status.success(),
            "node build.mjs failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        true
    })
}

#[test]
fn node_test_passes() {
    if !setup() {
        return;
    }
    // TAP explicitly: the checks below read its `ok ...` lines, and Node >= 23 reports in the
    // `spec` format by default.
    let out = Command::new("node")
        .args(["--test", "--test-reporter=tap", "test/"])
        .current_dir(node_dir())
        .output()
        .expect("running node --test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The decoder, package and trap tests were found and ran.
    for name in [
        "every recording whole gives what its SDK reconstructs",
        "framesFromResponse over a chunked fetch Response",
        "encodeItem: every refusal throws with its pw_result code",
        "package: every struct the binding lays out has the size and alignment the wasm module gives it",
        "package: the modules a browser loads import nothing from node: at the top level",
        "package: a request the memory cannot grow to throws RangeError and changes nothing",
        "trap: a trap under a sync tool stops the outer C call, and every later call on any object throws",
        "request: every case gives the body polyweave-replay --request prints, as text, bytes and stream",
        "request: every refusal throws its code and errno, and changes nothing",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("ok ") && l.contains(name) && !l.contains("# SKIP")),
            "the test {name:?} did not pass in node --test:\n{stdout}"
        );
    }
}

#[test]
fn replay_conforms_on_the_shared_scenarios() {
    if !setup() {
        return;
    }
    let failures = replay_failures(1, |file| {
        Command::new("node")
            .arg(node_dir().join("replay.mjs"))
            .arg(file)
            .output()
            .expect("running node replay.mjs")
    });
    let passed = SCENARIOS - failures.len();
    eprintln!("node replay: {passed} of {SCENARIOS} scenarios conform");
    assert!(
        failures.is_empty(),
        "{} scenarios do not conform through the Node package:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The bodies `test/request.test.mjs` wants (`test/request_bodies.json`) are what
/// `polyweave-replay --request` prints today for the same conversation files
/// (`test/request_cases.mjs` writes them and runs the replay): the fixture cannot drift from
/// the library.
#[test]
fn request_bodies_are_what_the_replay_prints() {
    if !setup() {
        return;
    }
    let out = Command::new("node")
        .arg("test/request_cases.mjs")
        .arg(replay_bin())
        .current_dir(node_dir())
        .output()
        .expect("running node test/request_cases.mjs");
    assert!(
        out.status.success(),
        "node test/request_cases.mjs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read_to_string(node_dir().join("test/request_bodies.json")).unwrap();
    let got = String::from_utf8(out.stdout).unwrap();
    assert_eq!(got.lines().count(), 11, "{got}");
    assert_eq!(
        got, want,
        "test/request_bodies.json is not what polyweave-replay --request prints: \
         `node test/request_cases.mjs REPLAY > test/request_bodies.json` in examples/node"
    );
}
