//! Criterion benchmarks for the hot paths of the frame pipeline.
//!
//! * `kind_lookup/{64B,16KiB}`: [`Frame::parse`] reads only up to `type`, so a
//!   64-byte and a 16 KiB `TEXT` frame should cost the same.
//! * `validate/*`: every line of the BFCL corpus, validated by the scanner, by
//!   `serde_json` into `IgnoredAny` (the cheapest serde_json check), and by
//!   [`Frame::parse_validated`] plus [`Frame::tool_call`].
//! * `framer/4KiB_chunks`: the whole corpus through a [`LineSplitter`].
//!
//! Run: `cargo bench -p polyweave-tests --bench frames -- --warm-up-time 1 --measurement-time 3`
//!
//! For instruction counts without criterion's own work, set `POLYWEAVE_BENCH_ONCE`
//! to a workload name (`kind_64B`, `kind_16KiB`, `polyweave`, `serde_json`,
//! `frame_parse_validated`, `framer`) and an optional `POLYWEAVE_BENCH_ITERS`
//! (default 1); the binary then runs just that loop and exits:
//!
//! ```text
//! cargo bench -p polyweave-tests --bench frames --no-run   # prints the binary path
//! POLYWEAVE_BENCH_ONCE=polyweave valgrind --tool=callgrind target/release/deps/frames-<hash>
//! ```

use std::hint::black_box;

mod common;

use common::{corpus, lines, text_frame};
use criterion::{Criterion, Throughput};
use polyweave_tool_adapter::frame::LineSplitter;
use polyweave_tool_adapter::json::{self, DEFAULT_MAX_DEPTH};
use polyweave_tool_adapter::{Frame, FrameKind};

fn kind_lookup(frame: &[u8]) -> FrameKind<'_> {
    Frame::parse(black_box(frame)).unwrap().kind()
}

fn validate_all(lines: &[&[u8]]) -> usize {
    lines
        .iter()
        .filter(|l| json::validate(black_box(l), DEFAULT_MAX_DEPTH).is_ok())
        .count()
}

fn serde_all(lines: &[&[u8]]) -> usize {
    lines
        .iter()
        .filter(|l| serde_json::from_slice::<serde::de::IgnoredAny>(black_box(l)).is_ok())
        .count()
}

fn frame_all(lines: &[&[u8]]) -> usize {
    lines
        .iter()
        .filter(|l| {
            let frame = Frame::parse_validated(black_box(l), DEFAULT_MAX_DEPTH).unwrap();
            black_box(frame.tool_call().unwrap()).name.is_some()
        })
        .count()
}

/// Feeds `data` in 4 KiB chunks; returns (lines, bytes of lines).
fn frame_lines(data: &[u8], storage: &mut [u8]) -> (usize, usize) {
    let mut framer = LineSplitter::new(storage);
    let (mut count, mut bytes) = (0, 0);
    for chunk in data.chunks(4096) {
        let mut rest = black_box(chunk);
        while !rest.is_empty() {
            rest = &rest[framer.feed(rest)..];
            while let Some(line) = framer.next_line() {
                count += 1;
                bytes += black_box(line.unwrap()).len();
            }
        }
    }
    if let Some(line) = framer.finish() {
        count += 1;
        bytes += line.unwrap().len();
    }
    (count, bytes)
}

struct Inputs {
    small: Vec<u8>,
    large: Vec<u8>,
    data: Vec<u8>,
}

impl Inputs {
    fn new() -> Self {
        let inputs = Self {
            small: text_frame(64),
            large: text_frame(16 * 1024),
            data: corpus(),
        };
        let lines = lines(&inputs.data);
        // The numbers only mean something if every line is accepted by every path.
        assert_eq!(validate_all(&lines), lines.len(), "scanner rejects a line");
        assert_eq!(serde_all(&lines), lines.len(), "serde_json rejects a line");
        assert_eq!(frame_all(&lines), lines.len(), "a line is not a named call");
        let mut storage = [0u8; 4096];
        assert_eq!(frame_lines(&inputs.data, &mut storage).0, lines.len());
        inputs
    }
}

fn bench(c: &mut Criterion, inputs: &Inputs) {
    let mut group = c.benchmark_group("kind_lookup");
    group.throughput(Throughput::Elements(1));
    group.bench_function("64B", |b| b.iter(|| kind_lookup(&inputs.small)));
    group.bench_function("16KiB", |b| b.iter(|| kind_lookup(&inputs.large)));
    group.finish();

    let lines = lines(&inputs.data);
    let line_bytes: usize = lines.iter().map(|l| l.len()).sum();
    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Bytes(line_bytes as u64));
    group.bench_function("polyweave", |b| b.iter(|| validate_all(&lines)));
    group.bench_function("serde_json_ignored_any", |b| b.iter(|| serde_all(&lines)));
    group.bench_function("frame_parse_validated", |b| b.iter(|| frame_all(&lines)));
    group.finish();

    let mut group = c.benchmark_group("framer");
    group.throughput(Throughput::Bytes(inputs.data.len() as u64));
    let mut storage = [0u8; 4096];
    group.bench_function("4KiB_chunks", |b| {
        b.iter(|| frame_lines(&inputs.data, &mut storage))
    });
    group.finish();
}

/// Runs one workload `iters` times with no criterion machinery (for callgrind / perf).
fn run_once(name: &str, iters: usize, inputs: &Inputs) {
    let lines = lines(&inputs.data);
    let mut storage = [0u8; 4096];
    let mut sink = 0usize;
    for _ in 0..iters {
        sink += match name {
            "kind_64B" => usize::from(kind_lookup(&inputs.small) == FrameKind::Text),
            "kind_16KiB" => usize::from(kind_lookup(&inputs.large) == FrameKind::Text),
            "polyweave" => validate_all(&lines),
            "serde_json" => serde_all(&lines),
            "frame_parse_validated" => frame_all(&lines),
            "framer" => frame_lines(&inputs.data, &mut storage).0,
            other => panic!("unknown POLYWEAVE_BENCH_ONCE workload {other:?}"),
        };
    }
    println!("{name} x{iters}: {}", black_box(sink));
}

fn main() {
    let inputs = Inputs::new();
    if let Ok(name) = std::env::var("POLYWEAVE_BENCH_ONCE") {
        let iters = std::env::var("POLYWEAVE_BENCH_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        run_once(&name, iters, &inputs);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &inputs);
    c.final_summary();
}
