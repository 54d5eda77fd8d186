//! Builds tests/c/test_api.c and tests/c/test_wrapper.c with the system C compiler
//! against the checked-in header and the host static library, runs each, and expects
//! exit status 0.
//! Also compiles the header alone as C++ when `g++` (or `$CXX`) exists.

use std::path::{Path, PathBuf};
use std::process::Command;

const LIB: &str = "libpolyweave_tool_adapter_ffi.a";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn include_dir() -> PathBuf {
    manifest_dir().join("..").join("include")
}

/// `target/<profile>/`: the test executable lives in `target/<profile>/deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The newest `libpolyweave_tool_adapter_ffi-<hash>.a` in `dir`.
fn newest_hashed_lib(dir: &Path) -> Option<PathBuf> {
    let (stem, ext) = LIB.split_once('.').expect("lib name has an extension");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&format!("{stem}-")) && name.ends_with(&format!(".{ext}"))
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
fn static_lib() -> PathBuf {
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

fn tool_exists(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    eprintln!("$ {cmd:?}");
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Compiles `tests/c/<name>.c` as C99 with every warning an error, links it with the static
/// library, runs it and expects exit status 0 with its "N checks, 0 failed" line.
fn c_program_passes(name: &str) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let lib = static_lib();
    eprintln!("static library: {}", lib.display());
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pw_{name}"));
    let compile = run(Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(include_dir())
        .arg(
            manifest_dir()
                .join("tests")
                .join("c")
                .join(format!("{name}.c")),
        )
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe));
    assert!(compile.status.success(), "compiling {name}.c failed");
    let out = run(&mut Command::new(&exe));
    assert!(
        out.status.success(),
        "{name} failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("{name}: ")) && stdout.contains(", 0 failed"),
        "unexpected output: {stdout}"
    );
}

#[test]
fn c_api_program_passes() {
    c_program_passes("test_api");
}

/// The wrapper's C API from C: every `pw_wrapper_*` function and `pw_writer_write` with bad
/// arguments, foreign and stale handles, capacities, clock and malformed frames.
#[test]
fn c_wrapper_program_passes() {
    c_program_passes("test_wrapper");
}

#[test]
fn header_compiles_as_cpp() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    if !tool_exists(&cxx) {
        eprintln!("skipped: no C++ compiler ({cxx})");
        return;
    }
    let out = run(Command::new(&cxx)
        .args([
            "-fsyntax-only",
            "-std=c++11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-x",
            "c++",
        ])
        .arg(include_dir().join("polyweave_tool_adapter.h")));
    assert!(out.status.success(), "the header does not compile as C++");
}
