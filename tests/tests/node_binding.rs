//! The Node package (`examples/node`: @polyweave/tool-adapter's API over the C ABI through
//! koffi) passes its own `npm test`, and its replay program (`replay.mjs`, built on the package's
//! exported API only) conforms on every shared scenario, compared channel by channel as
//! `conformance` does (`polyweave_tests::ndjson_compare`).
//!
//! The shared library is built first when it is missing or older than the ffi and core sources
//! (into a private target directory: the outer cargo holds the lock of the main one) and handed
//! to Node through `PW_LIB`. `npm install` runs once (idempotent: skipped when koffi is there).
//!
//! Skipped, with a message, only when `node` or `npm` is missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::SystemTime;

use polyweave_tests::scenarios::{replay_failures, SCENARIOS};

const LIB: &str = "libpolyweave_tool_adapter_ffi.so";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn node_dir() -> PathBuf {
    root().join("examples/node")
}

fn on_path(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The newest modification time of the files under `dir` (recursively).
fn newest(dir: &Path) -> SystemTime {
    let mut t = SystemTime::UNIX_EPOCH;
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            let m = if p.is_dir() {
                newest(&p)
            } else {
                e.metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH)
            };
            t = t.max(m);
        }
    }
    t
}

fn modified(p: &Path) -> Option<SystemTime> {
    fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The release shared library, built from the current sources when needed.
fn shared_lib() -> PathBuf {
    let main = root().join("target/release").join(LIB);
    let sources = ["ffi/src", "core/src", "ffi/Cargo.toml", "core/Cargo.toml"]
        .iter()
        .map(|p| {
            let p = root().join(p);
            if p.is_dir() {
                newest(&p)
            } else {
                modified(&p).unwrap_or(SystemTime::UNIX_EPOCH)
            }
        })
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    if modified(&main).is_some_and(|t| t >= sources) {
        return main;
    }
    let private = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("node-ffi-build");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "-p",
            "polyweave-tool-adapter-ffi",
            "--target-dir",
        ])
        .arg(&private)
        .current_dir(root())
        .status()
        .expect("running cargo build");
    assert!(status.success(), "cargo build of the shared library failed");
    let lib = private.join("release").join(LIB);
    assert!(lib.is_file(), "{} not found", lib.display());
    lib
}

/// `PW_LIB` for Node, after `npm install` (once); `None` (with a message) without node or npm.
fn setup() -> Option<&'static PathBuf> {
    static READY: OnceLock<Option<PathBuf>> = OnceLock::new();
    READY
        .get_or_init(|| {
            for tool in ["node", "npm"] {
                if !on_path(tool) {
                    eprintln!("skipping the Node binding tests: `{tool}` is not installed");
                    return None;
                }
            }
            let lib = shared_lib();
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
    assert!(
        out.status.success(),
        "npm test failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
