//! What the ffi crate's tests share. For those that build C and C++ programs: the paths, the
//! host static library built from the current sources, the C++ compiler, and running a
//! command with its output shown. For those that call the C ABI from Rust: `pw_str` spans and
//! what a function writes through its out pointer.
//!
//! (The ffi tests cannot depend on `polyweave-tests`, whose `tests/src` holds the rest.)

#![allow(dead_code)] // each test binary uses its own part

use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use polyweave_tool_adapter_ffi::{pw_result, pw_str};

const LIB: &str = "libpolyweave_tool_adapter_ffi.a";

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's root.
pub fn root_dir() -> PathBuf {
    manifest_dir().join("..")
}

pub fn include_dir() -> PathBuf {
    root_dir().join("include")
}

/// `target/<profile>/`: the test executable lives in `target/<profile>/deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The newest `libpolyweave_tool_adapter_ffi.a` or `libpolyweave_tool_adapter_ffi-<hash>.a` in `dir`.
fn newest_hashed_lib(dir: &Path) -> Option<PathBuf> {
    let (stem, ext) = LIB.split_once('.').expect("lib name has an extension");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            // Hashed (`libx-<hash>.a`) or not (`libx.a`, what newer cargo writes).
            name == format!("{stem}.{ext}")
                || (name.starts_with(&format!("{stem}-")) && name.ends_with(&format!(".{ext}")))
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, path)| path)
}

/// The host static library built from the current sources.
///
/// `cargo test` builds the library (rlib and staticlib) into
/// `target/<profile>/deps/` for the tests but does not copy it up to
/// `target/<profile>/`, where a stale one from an earlier `cargo build` may
/// sit. So: the newest staticlib in `deps/` (this run's, as cargo just
/// rebuilt it if the sources changed); failing that, a `cargo build` into a
/// private target directory (the outer cargo holds the lock of the main one).
pub fn static_lib() -> PathBuf {
    let dir = profile_dir();
    if let Some(lib) = newest_hashed_lib(&dir.join("deps")) {
        return lib;
    }
    let private = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ffi-build");
    let release = dir.file_name().is_some_and(|p| p == "release");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "polyweave-tool-adapter-ffi", "--target-dir"])
        .arg(&private)
        .current_dir(manifest_dir());
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("run cargo build");
    assert!(status.success(), "cargo build of the static library failed");
    let lib = private
        .join(if release { "release" } else { "debug" })
        .join(LIB);
    assert!(lib.exists(), "{} not found", lib.display());
    lib
}

/// The system libraries a program linked with the static library needs, after it.
pub const SYSTEM_LIBS: [&str; 3] = ["-lpthread", "-ldl", "-lm"];

pub fn tool_exists(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

pub fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    eprintln!("$ {cmd:?}");
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Runs the built program `exe` (output shown, see [`run`]); panics unless it exits 0, naming
/// it `what`, with its stderr. Its output.
pub fn run_program(exe: &Path, what: &str) -> Output {
    let out = run(&mut Command::new(exe));
    assert!(
        out.status.success(),
        "{what} failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The C++ compiler (`$CXX`, else `g++`), or `None` with a message when it is not installed
/// (the test is then skipped).
pub fn cxx() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    if tool_exists(&cxx) {
        Some(cxx)
    } else {
        eprintln!("skipped: no C++ compiler ({cxx})");
        None
    }
}

/// A span over `s`, for an input the library reads (a literal: it outlives every call).
pub fn span(s: &'static str) -> pw_str {
    pw_str {
        ptr: s.as_ptr(),
        len: s.len(),
    }
}

/// The UTF-8 text of a span the library handed out.
pub fn text(s: &pw_str) -> String {
    // SAFETY: spans the library hands out are readable for their length.
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// What `call` writes through the out pointer it is given when it returns `PW_OK` (an
/// object `_init` placed, a `_default` configuration, counters); else the code it returned.
pub fn out_or_code<T>(call: impl FnOnce(*mut T) -> pw_result) -> Result<T, pw_result> {
    let mut v = MaybeUninit::uninit();
    match call(v.as_mut_ptr()) {
        // SAFETY: the library writes `*out` whole on PW_OK.
        pw_result::PW_OK => Ok(unsafe { v.assume_init() }),
        e => Err(e),
    }
}

/// What `call` writes through the out pointer it is given; it must return `PW_OK`.
pub fn written<T>(call: impl FnOnce(*mut T) -> pw_result) -> T {
    out_or_code(call).unwrap_or_else(|e| panic!("{e:?}, not PW_OK"))
}
