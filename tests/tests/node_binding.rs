//! The Node package (`examples/node`: @polyweave/tool-adapter's API over the C ABI through
//! koffi) passes its own `npm test` (among it `test/decode.test.mjs`: the stream decoders on every
//! recorded provider body through `createDecoder`, the Transforms and `framesFromResponse`, and
//! `encodeItem`), and its replay program (`replay.mjs`, built on the package's exported API only)
//! conforms on every shared scenario, compared channel by channel as `conformance` does
//! (`polyweave_tests::ndjson_compare`).
//!
//! The release shared library is the main target directory's when it is as new as the ffi and
//! core sources, else it is built into a private one (the outer cargo holds the lock of the
//! main one): `polyweave_tests::library::ffi_shared_lib`. It is handed to Node through
//! `PW_LIB`. `npm install` runs once (idempotent: skipped when koffi is there).
//!
//! Skipped, with a message, only when `node` or `npm` is missing.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

use polyweave_tests::library::{ffi_shared_lib, workspace_root as root};
use polyweave_tests::programs::installed;
use polyweave_tests::scenarios::{replay_failures, SCENARIOS};

fn node_dir() -> PathBuf {
    root().join("examples/node")
}

/// `PW_LIB` for Node, after `npm install` (once); `None` (with a message) without node or npm.
fn setup() -> Option<&'static PathBuf> {
    static READY: OnceLock<Option<PathBuf>> = OnceLock::new();
    READY
        .get_or_init(|| {
            if !installed(&["node", "npm"], "the Node binding tests") {
                return None;
            }
            let lib = ffi_shared_lib("release");
            if !node_dir().join("node_modules/koffi/package.json").is_file() {
                let out = npm(&["install", "--no-audit", "--no-fund"]);
                assert!(
                    out.status.success(),
                    "npm install failed:\n{}\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Some(lib)
        })
        .as_ref()
}

fn npm(args: &[&str]) -> Output {
    Command::new("npm")
        .args(args)
        .current_dir(node_dir())
        .output()
        .expect("running npm")
}

#[test]
fn npm_test_passes() {
    let Some(lib) = setup() else { return };
    let out = Command::new("npm")
        .arg("test")
        .current_dir(node_dir())
        .env("PW_LIB", lib)
        .output()
        .expect("running npm test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "npm test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The decoder tests were found and ran.
    for name in [
        "every recording whole gives what its SDK reconstructs",
        "framesFromResponse over a chunked fetch Response",
        "encodeItem: every refusal throws with its pw_result code",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("ok ") && l.contains(name)),
            "the decoder test {name:?} did not pass in npm test:\n{stdout}"
        );
    }
}

#[test]
fn replay_conforms_on_the_shared_scenarios() {
    let Some(lib) = setup() else { return };
    let failures = replay_failures(1, |file| {
        Command::new("node")
            .arg(node_dir().join("replay.mjs"))
            .arg(file)
            .env("PW_LIB", lib)
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
