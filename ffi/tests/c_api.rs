//! Builds tests/c/test_api.c and tests/c/test_wrapper.c with the system C compiler
//! against the checked-in header and the host static library, runs each, and expects
//! exit status 0.
//! Also compiles the header alone as C++ when `g++` (or `$CXX`) exists.

use std::path::PathBuf;
use std::process::Command;

mod support;

use support::{cxx, include_dir, manifest_dir, run, run_program, static_lib, SYSTEM_LIBS};

/// Compiles `tests/c/<name>.c` as C99 with every warning an error, links it with the static
/// library, runs it and returns its output (exit status 0 asserted).
fn c_program_output(name: &str) -> String {
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
        .args(SYSTEM_LIBS)
        .arg("-o")
        .arg(&exe));
    assert!(compile.status.success(), "compiling {name}.c failed");
    let out = run_program(&exe, name);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `c_program_output`, expecting its "N checks, 0 failed" line.
fn c_program_passes(name: &str) {
    let stdout = c_program_output(name);
    assert!(
        stdout.starts_with(&format!("{name}: ")) && stdout.contains(", 0 failed"),
        "unexpected output: {stdout}"
    );
}

/// The README's host loop (`tests/c/host_loop.c`) prints exactly these frames.
#[test]
fn readme_host_loop_runs() {
    assert_eq!(
        c_program_output("host_loop"),
        concat!(
            "model {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c1\",\"name\":\"add\",\"result\":5}}\n",
            "model {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}\n",
            "consumer {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}\n",
            "deadline 18446744073709551615\n",
            "run lookup {\"q\":1}\n",
            "deadline 30011\n",
            "model {\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"lookup\",\"result\":\"8259\"}}\n",
            "model {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}\n",
            "consumer {\"type\":\"TEXT\",\"content\":\"Tool results above.\"}\n",
            "deadline 18446744073709551615\n",
        )
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
    let Some(cxx) = cxx() else { return };
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
