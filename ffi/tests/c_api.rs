//! Builds tests/c/test_api.c, tests/c/test_wrapper.c, tests/c/mcp.c, tests/c/mcp_http.c,
//! tests/c/request.c and
//! tests/c/request_example.c with the system C compiler
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

/// ffi/README.md's host loop (`tests/c/host_loop.c`) prints exactly these frames.
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

/// The MCP client's C API from C (`tests/c/mcp.c`): the test plays a scripted MCP server for
/// a client serving a wrapper's adapter tools; start-up over two pages, results, `isError`,
/// progress and a timeout's cancel, ping, a refused request, a notification, a JSON-RPC
/// error, the transport closing; every refusal with its code.
#[test]
fn c_mcp_program_passes() {
    c_program_passes("mcp");
}

/// The MCP client over Streamable HTTP from C (`tests/c/mcp_http.c`): recorded exchanges
/// byte for byte (a 2026-07-28 server with JSON and event-stream bodies in small pieces, a
/// 2025-11-25 server with its session id, an HTTP 500, a cancel closing its stream), and
/// every refusal with its code and nothing changed.
#[test]
fn c_mcp_http_program_passes() {
    c_program_passes("mcp_http");
}

/// The conversation's and the request's C API from C (`tests/c/request.c`): a conversation
/// from a decoder's frames, a result and user texts; its openai-chat and anthropic bodies
/// through small buffers, byte for byte; refusals with their codes and declaration indexes;
/// a request made stale by a change; Gemini's path.
#[test]
fn c_request_program_passes() {
    c_program_passes("request");
}

/// ffi/README.md's request example (`tests/c/request_example.c`) prints exactly this body.
#[test]
fn readme_request_example_runs() {
    let body = concat!(
        r#"{"model":"gpt-5","messages":[{"role":"user","content":"Add 2 and 3"},"#,
        r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]},"#,
        r#"{"role":"tool","tool_call_id":"c1","content":"5"}],"#,
        r#""tools":[{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"number"}}}}}],"#,
        r#""stream":true,"stream_options":{"include_usage":true}}"#
    );
    assert_eq!(
        c_program_output("request_example"),
        format!("Content-Length: {}\n\n{body}\n", body.len())
    );
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

/// `tests/c/decode.c`, built once: a decoder and the item encoders over the header only.
fn decode_program() -> &'static PathBuf {
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pw_decode");
        let compile = run(Command::new(&cc)
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
            .arg(include_dir())
            .arg(manifest_dir().join("tests/c/decode.c"))
            .arg(static_lib())
            .args(SYSTEM_LIBS)
            .arg("-o")
            .arg(&exe));
        assert!(compile.status.success(), "compiling decode.c failed");
        exe
    })
}

/// Every recorded provider body, decoded by a C program in whole, 1-byte and 13-byte feeds,
/// gives the Rust decoder's frames; its items are the Rust encoders' items.
#[test]
fn c_decodes_every_recorded_body_like_rust() {
    use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
    use polyweave_tool_adapter::encode::encode_item;
    use polyweave_tool_adapter::Provider;
    let root = support::root_dir().join("tests/data/provider-streams");
    let cfg = DecoderConfig {
        event_cap: 256 * 1024,
        ..DecoderConfig::DEFAULT
    };
    let mut bodies = 0;
    for p in Provider::ALL {
        let dir = root.join(p.name());
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|f| f.extension().is_some_and(|x| x == "body"))
            .collect();
        files.sort();
        for file in files {
            let body = std::fs::read(&file).unwrap();
            let mut slots = [CallSlot::EMPTY; 8];
            let mut arena = vec![0u8; cfg.arena_len(8)];
            let mut d = Decoder::new(*p, cfg, &mut slots, &mut arena).unwrap();
            let mut out = vec![0u8; 64 * 1024];
            let (mut frames, mut items) = (String::new(), String::new());
            let mut take = |d: &mut Decoder<'_>, frames: &mut String, items: &mut String| {
                while let Some(n) = d.poll_frame(&mut out).unwrap() {
                    let f = String::from_utf8(out[..n].to_vec()).unwrap();
                    frames.push_str(&f);
                    frames.push('\n');
                    if f.starts_with(r#"{"type":"TOOL_CALL","#) {
                        let v: serde_json::Value = serde_json::from_str(&f).unwrap();
                        let mut content = serde_json::json!({"name": v["content"]["name"], "result": {"ok": true}});
                        if let Some(id) = v["content"].get("id") {
                            content = serde_json::json!({"id": id, "name": v["content"]["name"], "result": {"ok": true}});
                        }
                        let result = serde_json::json!({"type": "TOOL_RESULT", "content": content})
                            .to_string();
                        for frame in [f.as_str(), result.as_str()] {
                            let mut buf = [0u8; 8192];
                            let n = encode_item(*p, frame.as_bytes(), &mut buf).unwrap();
                            items.push_str(std::str::from_utf8(&buf[..n]).unwrap());
                            items.push('\n');
                        }
                    }
                }
            };
            let mut input = &body[..];
            while !input.is_empty() {
                let n = d.feed(input);
                input = &input[n..];
                take(&mut d, &mut frames, &mut items);
            }
            d.finish();
            take(&mut d, &mut frames, &mut items);
            let path = file.to_str().unwrap();
            for chunk in ["0", "1", "13"] {
                let out = run_args(decode_program(), &[p.name(), chunk, path]);
                assert_eq!(out, frames, "{} chunk {chunk}", file.display());
            }
            assert_eq!(
                run_args(decode_program(), &["--items", p.name(), path]),
                items,
                "{}",
                file.display()
            );
            bodies += 1;
        }
    }
    assert_eq!(bodies, 71);
}

/// Runs `exe ARGS`, asserting exit 0; its standard output (not echoed: it is long).
fn run_args(exe: &PathBuf, args: &[&str]) -> String {
    let out = Command::new(exe).args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "{exe:?} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
