//! Builds the C++17 example host (examples/cpp-host, through its Makefile when `make`
//! exists, else with the C++ compiler directly, with the same flags) against the checked-in
//! headers and the host static library, runs it, and expects exit status 0: its round trip
//! through include/polyweave_tool_adapter.hpp produced exactly the expected frames. Also
//! compiles that header alone. Skipped when there is no C++ compiler (`g++`, or `$CXX`).

use std::path::{Path, PathBuf};
use std::process::Command;

const LIB: &str = "libpolyweave_tool_adapter_ffi.a";

/// The flags the example is built with (the Makefile's `WARN`).
const CXX_FLAGS: [&str; 7] = [
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-fno-exceptions",
    "-fno-rtti",
];

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn root_dir() -> PathBuf {
    manifest_dir().join("..")
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

/// The host static library built from the current sources (as in tests/c_api.rs): the
/// newest staticlib cargo built for this test run, else a `cargo build` into a private
/// target directory.
fn static_lib() -> PathBuf {
    let dir = profile_dir();
    if let Some(lib) = newest_hashed_lib(&dir.join("deps")) {
        return lib;
    }
    let private = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ffi-build-cpp");
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

/// The C++ compiler, or `None` (the test is then skipped).
fn cxx() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    if tool_exists(&cxx) {
        Some(cxx)
    } else {
        eprintln!("skipped: no C++ compiler ({cxx})");
        None
    }
}

#[test]
fn cpp_host_round_trip_passes() {
    let Some(cxx) = cxx() else { return };
    let lib = static_lib();
    eprintln!("static library: {}", lib.display());
    let example = root_dir().join("examples").join("cpp-host");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pw_cpp_host");
    let build = if tool_exists("make") {
        run(Command::new("make")
            .arg("-B")
            .arg("-C")
            .arg(&example)
            .arg(format!("CXX={cxx}"))
            .arg(format!("LIB={}", lib.display()))
            .arg(format!("OUT={}", exe.display())))
    } else {
        run(Command::new(&cxx)
            .args(CXX_FLAGS)
            .arg("-I")
            .arg(root_dir().join("include"))
            .arg(example.join("main.cpp"))
            .arg(&lib)
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(&exe))
    };
    assert!(build.status.success(), "building examples/cpp-host failed");
    let out = run(&mut Command::new(&exe));
    assert!(
        out.status.success(),
        "cpp-host failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("cpp-host: 9 frames, all as expected"),
        "unexpected output: {stdout}"
    );
}

/// The header alone, as its own translation unit: with and without exceptions and RTTI.
#[test]
fn hpp_compiles_alone() {
    let Some(cxx) = cxx() else { return };
    let hpp = root_dir()
        .join("include")
        .join("polyweave_tool_adapter.hpp");
    for extra in [&[][..], &["-fno-exceptions", "-fno-rtti"][..]] {
        let out = run(Command::new(&cxx)
            .args([
                "-std=c++17",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
            ])
            .args(extra)
            .args(["-x", "c++"])
            .arg(&hpp));
        assert!(
            out.status.success(),
            "polyweave_tool_adapter.hpp does not compile alone ({extra:?})"
        );
    }
}
