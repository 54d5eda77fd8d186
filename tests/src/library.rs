//! Where cargo puts what it builds, for the tests that run a built program or load the C ABI's
//! shared library: the workspace root, the target directory (`CARGO_TARGET_DIR` honoured), the
//! profile of the running test, a `cargo build` for a profile, and
//! `libpolyweave_tool_adapter_ffi` built from the current sources ([`ffi_shared_lib`]).
//!
//! The ffi crate's own tests (`ffi/tests/support`) find its static library their own way, the
//! newest one cargo built into `deps/` for them: they cannot depend on this crate.

use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

use serde_json::Value;

/// The C ABI's package.
pub const FFI_PACKAGE: &str = "polyweave-tool-adapter-ffi";

/// What the C ABI's library is built from, relative to the workspace root: a library older than
/// any file here (or under a folder here) is stale.
pub const FFI_SOURCES: [&str; 6] = [
    "ffi/src",
    "core/src",
    "ffi/Cargo.toml",
    "core/Cargo.toml",
    "Cargo.toml",
    "Cargo.lock",
];

/// The workspace root (the parent of `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The provider SDKs' Python: `PW_SDK_PYTHON`, or the venv `tests/run.sh` makes in `target/`.
pub fn sdk_python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PW_SDK_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let p = workspace_root().join("target/sdk-venv/bin/python");
    p.is_file().then_some(p)
}

/// `target/<profile>`: the directory the running test executable lives in, as
/// `…/target/debug/deps/conformance-…`. Panics when it is not under a `deps/` folder.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .filter(|d| d.file_name() == Some("deps".as_ref()))
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("{} is not under target/<profile>/deps", exe.display()))
}

/// The profile the running test was built with, as its folder is named: `debug` (cargo's
/// `dev`), `release`, or a custom profile's name.
pub fn profile() -> String {
    profile_dir()
        .file_name()
        .and_then(|n| n.to_str())
        .expect("profile dir name")
        .to_string()
}

/// The target directory: `CARGO_TARGET_DIR` when set (a relative one taken from the workspace
/// root, where [`cargo_build`] runs cargo), else the one the running test executable was built
/// in (`target/<profile>/..`; `target/<triple>` when cross-building, which is why
/// `CARGO_TARGET_DIR` comes first).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => profile_dir().parent().expect("target dir").to_path_buf(),
    }
}

/// `cargo build -p <package>` for `profile` (a profile folder's name, as [`profile`] gives
/// it: `debug` adds nothing, `release` adds `--release`, any other `--profile <name>`) into
/// `target_dir`, from the workspace root, with the cargo that runs the tests (`CARGO`).
pub fn cargo_build(package: &str, profile: &str, target_dir: &Path) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root())
        .args(["build", "-p", package])
        .arg("--target-dir")
        .arg(target_dir);
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    cmd
}

/// The file name of the C ABI's shared library: `libpolyweave_tool_adapter_ffi.so` (`.dylib`
/// on macOS, `polyweave_tool_adapter_ffi.dll` on Windows).
pub fn ffi_shared_lib_name() -> String {
    format!("{DLL_PREFIX}polyweave_tool_adapter_ffi{DLL_SUFFIX}")
}

/// The C ABI's shared library built for `profile` (`"release"` for the Python and Node
/// bindings) from the current sources; call it once per test process (keep it in a
/// `OnceLock`).
///
/// * `<target dir>/<profile>/` (see [`target_dir`]: `CARGO_TARGET_DIR` honoured) when the
///   library there is at least as new as every file of [`FFI_SOURCES`]: what
///   `cargo build --release -p polyweave-tool-adapter-ffi` left there.
/// * Else a `cargo build` of it for `profile` into the private target directory
///   `<target dir>/tmp/ffi-build` (cargo's `CARGO_TARGET_TMPDIR`; the outer cargo holds the
///   lock of the main one), and the library built there.
///
/// Panics when that build fails or leaves no library.
///
/// The Python test always built privately; the Node test took `target/release` when fresh
/// (without `CARGO_TARGET_DIR`) and built privately otherwise. This does what both wanted, a
/// library as new as the sources, without a second build when the main one is current.
pub fn ffi_shared_lib(profile: &str) -> PathBuf {
    let name = ffi_shared_lib_name();
    let main = target_dir().join(profile).join(&name);
    let root = workspace_root();
    let sources = FFI_SOURCES
        .iter()
        .map(|p| newest(&root.join(p)))
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    if modified(&main).is_some_and(|t| t >= sources) {
        return main;
    }
    let private = target_dir().join("tmp").join("ffi-build");
    let mut cmd = cargo_build(FFI_PACKAGE, profile, &private);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = private.join(profile).join(&name);
    assert!(lib.is_file(), "cargo built no {}", lib.display());
    lib
}

/// When `p` was last modified, if it exists.
fn modified(p: &Path) -> Option<SystemTime> {
    fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The newest modification time of `p`: of the file, or of the files under the folder
/// (recursively); the epoch when there is none.
fn newest(p: &Path) -> SystemTime {
    let Ok(entries) = fs::read_dir(p) else {
        return modified(p).unwrap_or(SystemTime::UNIX_EPOCH);
    };
    entries
        .flatten()
        .map(|e| newest(&e.path()))
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The replay executable (`polyweave-replay`), built once per test process.
pub fn replay_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(build_replay)
}

/// `polyweave-replay`, built for this test's profile into the main target directory.
fn build_replay() -> PathBuf {
    let profile_name = profile();
    let target_dir = target_dir();
    let mut cmd = cargo_build("polyweave-replay", &profile_name, &target_dir);
    cmd.args(["-q", "--message-format=json"]);
    let out = cmd
        .output()
        .expect("running cargo build -p polyweave-replay");
    assert!(
        out.status.success(),
        "cargo build -p polyweave-replay failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Cargo names the executable it produced in its JSON messages.
    let reported = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "polyweave-replay")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from));
    let bin = reported.unwrap_or_else(|| {
        target_dir
            .join(&profile_name)
            .join(format!("polyweave-replay{}", std::env::consts::EXE_SUFFIX))
    });
    assert!(bin.is_file(), "no replay executable at {}", bin.display());
    bin
}
