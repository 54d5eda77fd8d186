//! Inputs shared by the benchmarks: the BFCL corpus, its tool names and `TEXT` frames of a
//! given size. The sync echo tool is `polyweave_tests::drive::echo`, the tests' own.
// Each bench compiles this module and uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;

use polyweave_tool_adapter::json::DEFAULT_MAX_DEPTH;
use polyweave_tool_adapter::{Frame, FrameKind, WrapperConfig};

/// Pending-call slots of the round-trip benches: one call at a time is ever pending.
pub const SLOTS: usize = 4;

/// Capacities for the corpus (args up to 1,309 bytes, names up to 64, ids up to 32).
pub const CFG: WrapperConfig = WrapperConfig {
    args_cap: 2048,
    result_cap: 2048,
    trace_entries: 8,
    // Room for the largest entry (name + args + echoed result) without cutting it.
    trace_bytes: 8192,
    ..WrapperConfig::DEFAULT
};

const CORPUS: &str = "bfcl/tool-calls.ndjson";
const FUNCTIONS: &str = "bfcl/functions.ndjson";

/// The corpus bytes: the workspace copy when present, else the shared one.
pub fn corpus() -> Vec<u8> {
    data(CORPUS)
}

/// The BFCL function declarations (`{id, name, description, input_schema}` a line).
pub fn functions() -> Vec<u8> {
    data(FUNCTIONS)
}

/// A file of `tests/data`: the workspace copy when present, else the shared one.
fn data(name: &str) -> Vec<u8> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        manifest.join("data").join(name),
        manifest.join("../../shared/data").join(name),
    ];
    for path in &candidates {
        if let Ok(bytes) = std::fs::read(path) {
            return bytes;
        }
    }
    panic!("{name} not found; looked at {candidates:?}");
}

/// Non-blank lines of `bytes`, line endings (`\n`, `\r\n`) excluded.
pub fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The decoded tool name of a corpus line (each is a `TOOL_CALL` with a name).
pub fn tool_name(line: &[u8]) -> String {
    let frame = Frame::parse_validated(line, DEFAULT_MAX_DEPTH).unwrap();
    let mut buf = [0u8; 256];
    let name = frame.tool_call().unwrap().name.unwrap();
    name.decode_into(&mut buf).unwrap().to_owned()
}

/// A valid `TEXT` frame of exactly `len` bytes.
pub fn text_frame(len: usize) -> Vec<u8> {
    const HEAD: &[u8] = b"{\"type\":\"TEXT\",\"content\":\"";
    const TAIL: &[u8] = b"\"}";
    const FILL: &[u8] = b"The quick brown fox jumps over the lazy dog. ";
    let body = len - HEAD.len() - TAIL.len();
    let mut frame = HEAD.to_vec();
    frame.extend(FILL.iter().cycle().take(body));
    frame.extend_from_slice(TAIL);
    assert_eq!(frame.len(), len);
    assert_eq!(Frame::parse(&frame).unwrap().kind(), FrameKind::Text);
    assert!(Frame::parse_validated(&frame, DEFAULT_MAX_DEPTH).is_ok());
    frame
}

/// One BFCL function declaration: its id, its name and its input schema's text as written.
pub struct Declaration<'a> {
    pub id: String,
    pub name: String,
    pub schema: &'a [u8],
}

/// The declarations of [`functions`], in file order.
pub fn declarations(bytes: &[u8]) -> Vec<Declaration<'_>> {
    let member = |line, key: &[u8]| {
        polyweave_tool_adapter::json::find_member(line, key, DEFAULT_MAX_DEPTH)
            .unwrap()
            .unwrap()
    };
    let text = |line, key: &[u8]| serde_json::from_slice::<String>(member(line, key)).unwrap();
    lines(bytes)
        .into_iter()
        .map(|line| Declaration {
            id: text(line, b"id"),
            name: text(line, b"name"),
            schema: member(line, b"input_schema"),
        })
        .collect()
}

/// The args of a corpus line (each is a `TOOL_CALL` with args).
pub fn call_args(line: &[u8]) -> &[u8] {
    Frame::parse_validated(line, DEFAULT_MAX_DEPTH)
        .unwrap()
        .tool_call()
        .unwrap()
        .args
}

/// The declaration of each corpus line's function, when it has one: the one whose id is the
/// call's id without its `_N` suffix (the call's place in its answer) and whose name is the
/// call's: 2,935 of the 3,302 calls have one.
pub fn function_of(lines: &[&[u8]], declarations: &[Declaration<'_>]) -> Vec<Option<usize>> {
    let index: std::collections::HashMap<(&str, &str), usize> = declarations
        .iter()
        .enumerate()
        .map(|(i, d)| ((d.id.as_str(), d.name.as_str()), i))
        .collect();
    lines
        .iter()
        .map(|line| {
            let frame = Frame::parse_validated(line, DEFAULT_MAX_DEPTH).unwrap();
            let call = frame.tool_call().unwrap();
            let mut buf = [0u8; 256];
            let id = call.id.unwrap().decode_into(&mut buf).unwrap().to_owned();
            let name = tool_name(line);
            let (question, _) = id.rsplit_once('_').unwrap();
            index.get(&(question, name.as_str())).copied()
        })
        .collect()
}
