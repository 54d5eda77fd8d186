//! Builds the C++17 example host (examples/cpp-host, through its Makefile when `make`
//! exists, else with the C++ compiler directly, with the same flags) against the checked-in
//! headers and the host static library, runs it, and expects exit status 0: its round trip
//! through include/polyweave_tool_adapter.hpp produced exactly the expected frames. Also
//! compiles that header alone. Skipped when there is no C++ compiler (`g++`, or `$CXX`).

use std::path::PathBuf;
use std::process::Command;

mod support;

use support::{cxx, root_dir, run, run_program, static_lib, tool_exists, SYSTEM_LIBS};

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
            .args(SYSTEM_LIBS)
            .arg("-o")
            .arg(&exe))
    };
    assert!(build.status.success(), "building examples/cpp-host failed");
    let out = run_program(&exe, "cpp-host");
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
