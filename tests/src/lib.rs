//! Shared helpers for the integration tests of `polyweave-tool-adapter`.
//!
//! The test data lives in `tests/data/` (see `tests/data/README.md`); these
//! helpers find and load it, and give the tests a small deterministic PRNG.

use std::fs;
use std::path::{Path, PathBuf};

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
