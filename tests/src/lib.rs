//! Shared helpers for the integration tests of `polyweave-tool-adapter`.
//!
//! The test data lives in `tests/data/` (see `tests/data/README.md`); these
//! helpers find and load it, and give the tests a small deterministic PRNG.
//! [`host`] is the one deterministic host the tests, the benches and the replay
//! program drive a `Wrapper` with; [`drive`] has the pieces for driving one by hand.
//! [`library`] finds what cargo built (the C ABI's shared library, a replay binary's target
//! directory) and [`programs`] says whether an outside program is installed.

pub mod alloc_count;
pub mod drive;
pub mod host;
pub mod library;
pub mod mcp_hostile;
pub mod mcp_loop;
pub mod mcp_revision_hostile;
pub mod model;
pub mod ndjson_compare;
pub mod programs;
pub mod request_hostile;
pub mod scenarios;
pub mod streams;

pub use host::{Entry, Host, Recorder, Script, Storage};

use std::fs;
use std::path::{Path, PathBuf};

use polyweave_tool_adapter::Error;

/// Number of lines (frames) in `data/bfcl/tool-calls.ndjson`.
pub const BFCL_LINES: usize = 3302;
/// Length in bytes of the longest BFCL line (without its `\n`).
pub const BFCL_LONGEST_LINE: usize = 1309;
/// Length in bytes of the shortest BFCL line (without its `\n`).
pub const BFCL_SHORTEST_LINE: usize = 90;

/// `tests/data/`.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// The whole BFCL corpus file.
pub fn bfcl_bytes() -> Vec<u8> {
    let path = data_dir().join("bfcl/tool-calls.ndjson");
    fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The lines of an NDJSON file that ends with `\n` (no allocation: an iterator of slices).
pub fn ndjson_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|&b| b == b'\n')
}

/// Every JSONTestSuite case as `(file name, bytes)`, sorted by name (the LICENSE is left out).
pub fn json_suite_files() -> Vec<(String, Vec<u8>)> {
    let dir = data_dir().join("json-test-suite");
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.expect("directory entry");
            let name = entry.file_name().into_string().expect("UTF-8 file name");
            (name, entry.path())
        })
        .filter(|(name, _)| name != "LICENSE")
        .map(|(name, path)| {
            let bytes =
                fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Xorshift64*: a tiny deterministic PRNG, so chunkings are reproducible.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from a seed (0 is mapped to a fixed non-zero state).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `1..=max` (`max` ≥ 1).
    pub fn in_1_to(&mut self, max: usize) -> usize {
        1 + (self.next_u64() % max as u64) as usize
    }
}

/// A copy of `bytes` in which the four hex digits of every escaped surrogate (`\uD800` to
/// `\uDFFF`, any case) inside a JSON string become `FFFD`, so serde_json, which refuses an
/// unpaired surrogate, can parse what the core legitimately writes (SPEC §7.24: raw values keep
/// such escapes as written). Only real escapes are rewritten: in `"\\ud800"` the backslash is
/// itself escaped and `ud800` is plain text. The copy has the same length; bytes outside
/// strings and every other escape are left alone.
pub fn mask_surrogate_escapes(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut in_string = false;
    let mut i = 0;
    while i < out.len() {
        match (in_string, out[i]) {
            (false, b'"') => in_string = true,
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                if out.get(i + 1) == Some(&b'u') {
                    let hex = out
                        .get(i + 2..i + 6)
                        .and_then(|h| std::str::from_utf8(h).ok());
                    let code = hex.and_then(|h| u16::from_str_radix(h, 16).ok());
                    // `from_str_radix` takes a sign: only four hex digits count.
                    let digits = hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
                    if digits && code.is_some_and(|c| (0xD800..=0xDFFF).contains(&c)) {
                        out[i + 2..i + 6].copy_from_slice(b"FFFD");
                    }
                }
                // The escape's second byte is never a string delimiter.
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Checks that `frame` is one NDJSON line (SPEC §1, §7.22): no `\n` or `\r` byte anywhere,
/// valid UTF-8, and exactly one complete JSON value (white space around it allowed), parsed
/// by serde_json after [`mask_surrogate_escapes`].
pub fn is_one_json_line(frame: &[u8]) -> Result<(), String> {
    if let Some(at) = frame.iter().position(|&b| b == b'\n' || b == b'\r') {
        return Err(format!("line break byte {:#04x} at {at}", frame[at]));
    }
    std::str::from_utf8(frame).map_err(|e| format!("not UTF-8: {e}"))?;
    let masked = mask_surrogate_escapes(frame);
    serde_json::from_slice::<serde_json::Value>(&masked)
        .map(drop)
        .map_err(|e| format!("not one JSON value: {e}"))
}

/// Panics unless [`is_one_json_line`] accepts `frame`; `what` says where it came from.
#[track_caller]
pub fn assert_one_json_line(frame: &[u8], what: &str) {
    if let Err(e) = is_one_json_line(frame) {
        panic!(
            "{what}: frame is not one JSON line ({e}): {:?}",
            String::from_utf8_lossy(frame)
        );
    }
}

/// Proptest cases: `PROPTEST_CASES` when set (for a longer hunt), else `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// True for every refusal SPEC §4 names; nothing else may come out of the state machines.
pub fn is_spec_refusal(e: &Error) -> bool {
    matches!(
        e,
        Error::Malformed(_)
            | Error::NameTooLong { .. }
            | Error::IdTooLong { .. }
            | Error::InvalidResult(_)
            | Error::HeldFull { .. }
            | Error::QueueFull { .. }
            | Error::Call(_)
    )
}
