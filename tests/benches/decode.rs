//! Criterion benchmarks for the stream decoders, on the 71 recorded provider bodies of
//! `data/provider-streams/` (SPEC §8).
//!
//! * `decode/<provider>`: every body of that provider through one [`Decoder`] (made once,
//!   reused body after body as a host does): each body fed whole, frames polled into a
//!   buffer of [`DecoderConfig::max_frame_len`], then `finish` and the last frames.
//!   Throughput is in **bytes of body** (the HTTP response bodies as recorded: SSE field
//!   names, `event:` lines, blank lines and all).
//! * `decode_validate/<provider>`: [`json::validate`] over the JSON payloads of the same bodies:
//!   each SSE event's data (its `data:` lines joined with LF, as the decoder keeps it; the
//!   `[DONE]` marker left out) or each non-blank NDJSON line, white space around it trimmed.
//!   Throughput is in **bytes of payload**, fewer than the body's. The decoder validates
//!   every one of these payloads itself before reading it, so `decode_validate/<provider>` is
//!   the floor under `decode/<provider>` on the same bytes.
//!
//! Run: `cargo bench -p polyweave-tests --bench decode -- --warm-up-time 1 --measurement-time 3`
//! (`tests/bench/decode_compare.sh` runs it beside the Python SDKs and Node).
//!
//! For instruction counts without criterion's own work, set `POLYWEAVE_BENCH_ONCE` to a
//! workload name (`decode_<provider>` or `validate_<provider>`, the provider as SPEC §8
//! names it: `openai-chat`, `openai-responses`, `anthropic`, `gemini`, `ollama`) and an
//! optional `POLYWEAVE_BENCH_ITERS` (default 1); the binary then runs just that loop (in
//! `run_once`) and prints the bytes one pass covers (body bytes for `decode_*`, payload
//! bytes for `validate_*`), which `tests/bench/instructions.sh` divides by:
//!
//! ```text
//! cargo bench -p polyweave-tests --bench decode --no-run   # prints the binary path
//! POLYWEAVE_BENCH_ONCE=decode_anthropic valgrind --tool=callgrind --toggle-collect='*run_once*' target/release/deps/decode-<hash>
//! ```
//!
//! Run with `POLYWEAVE_BENCH_ITERS` `N` and `2N` and divide the difference by `N` times
//! the bytes printed: set-up (and the decoder's construction) then costs nothing.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use polyweave_tests::streams::{self, recordings};
use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
use polyweave_tool_adapter::json::{self, DEFAULT_MAX_DEPTH};
use polyweave_tool_adapter::Provider;

/// The decoder's capacities and call slots (those of `polyweave_tests::streams::decode`,
/// which the conformance tests use on the same bodies).
const CFG: DecoderConfig = DecoderConfig::DEFAULT;
const SLOTS: usize = 8;

/// One provider's bodies and their JSON payloads.
struct Workload {
    provider: Provider,
    bodies: Vec<Vec<u8>>,
    payloads: Vec<Vec<u8>>,
}

impl Workload {
    fn body_bytes(&self) -> usize {
        self.bodies.iter().map(Vec::len).sum()
    }

    fn payload_bytes(&self) -> usize {
        self.payloads.iter().map(Vec::len).sum()
    }
}

/// The lines of `body`, split at CR, LF or CRLF (SSE's line ends); a last line without
/// its end is a line.
fn sse_lines(body: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\n' => {
                lines.push(&body[start..i]);
                i += 1;
                start = i;
            }
            b'\r' => {
                lines.push(&body[start..i]);
                i += if body.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < body.len() {
        lines.push(&body[start..]);
    }
    lines
}

/// The JSON payloads of a body: each SSE event's joined data (a last event without its
/// blank line included, as the decoder reads it at `finish`) or each NDJSON line; trimmed,
/// `[DONE]` left out.
fn payloads(provider: Provider, body: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut keep = |data: &[u8]| {
        let data = json::trim_ws(data);
        if !data.is_empty() && data != b"[DONE]" {
            out.push(data.to_vec());
        }
    };
    if provider == Provider::Ollama {
        for line in body.split(|&b| b == b'\n') {
            keep(line);
        }
        return out;
    }
    let mut data: Option<Vec<u8>> = None;
    for line in sse_lines(body) {
        if line.is_empty() {
            if let Some(d) = data.take() {
                keep(&d);
            }
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => continue, // a comment
            Some(c) => (&line[..c], &line[c + 1..]),
            None => (line, &b""[..]),
        };
        if field == b"data" {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            match &mut data {
                Some(d) => {
                    d.push(b'\n');
                    d.extend_from_slice(value);
                }
                None => data = Some(value.to_vec()),
            }
        }
    }
    if let Some(d) = data {
        keep(&d);
    }
    out
}

/// Decodes one body whole with `d`; returns (frames, frame bytes).
#[inline(always)]
fn decode_body(d: &mut Decoder<'_>, body: &[u8], out: &mut [u8]) -> (usize, usize) {
    let (mut frames, mut bytes) = (0, 0);
    let mut input = black_box(body);
    loop {
        let n = d.feed(input);
        input = &input[n..];
        while let Some(len) = d.poll_frame(out).expect("frame fits max_frame_len") {
            frames += 1;
            bytes += black_box(len);
        }
        if input.is_empty() {
            break;
        }
    }
    d.finish();
    while let Some(len) = d.poll_frame(out).expect("frame fits max_frame_len") {
        frames += 1;
        bytes += black_box(len);
    }
    (frames, bytes)
}

/// Every body of the workload through `d`; returns the frames written.
fn decode_all(d: &mut Decoder<'_>, bodies: &[Vec<u8>], out: &mut [u8]) -> usize {
    bodies.iter().map(|b| decode_body(d, b, out).0).sum()
}

/// Every payload validated; returns how many are JSON.
fn validate_all(payloads: &[Vec<u8>]) -> usize {
    payloads
        .iter()
        .filter(|p| json::validate(black_box(p), DEFAULT_MAX_DEPTH).is_ok())
        .count()
}

/// Runs `f` on a fresh decoder for `provider` and a frame buffer.
fn with_decoder<R>(provider: Provider, f: impl FnOnce(&mut Decoder<'_>, &mut [u8]) -> R) -> R {
    let mut slots = vec![CallSlot::EMPTY; SLOTS];
    let mut arena = vec![0u8; CFG.arena_len(SLOTS)];
    let mut out = vec![0u8; CFG.max_frame_len()];
    let mut d = Decoder::new(provider, CFG, &mut slots, &mut arena).expect("decoder");
    f(&mut d, &mut out)
}

fn workloads() -> Vec<Workload> {
    let all = recordings();
    let workloads: Vec<Workload> = Provider::ALL
        .iter()
        .map(|&provider| {
            let bodies: Vec<Vec<u8>> = all
                .iter()
                .filter(|r| r.provider == provider)
                .map(|r| r.body.clone())
                .collect();
            let payloads = bodies.iter().flat_map(|b| payloads(provider, b)).collect();
            Workload {
                provider,
                bodies,
                payloads,
            }
        })
        .collect();
    // The numbers only mean something if the bench's loop writes what the tests' does,
    // and every payload is JSON (so `validate_*` scans each to its end).
    for w in &workloads {
        let expected: usize = w
            .bodies
            .iter()
            .map(|b| streams::decode(w.provider, b, || usize::MAX).frames.len())
            .sum();
        let frames = with_decoder(w.provider, |d, out| decode_all(d, &w.bodies, out));
        assert_eq!(frames, expected, "{}: frames", w.provider.name());
        assert_eq!(
            validate_all(&w.payloads),
            w.payloads.len(),
            "{}: a payload is not JSON",
            w.provider.name()
        );
        eprintln!(
            "decode bench: {:<16} {:>2} bodies {:>7} B, {:>4} payloads {:>7} B, {:>4} frames",
            w.provider.name(),
            w.bodies.len(),
            w.body_bytes(),
            w.payloads.len(),
            w.payload_bytes(),
            frames
        );
    }
    assert_eq!(workloads.iter().map(|w| w.bodies.len()).sum::<usize>(), 71);
    workloads
}

fn bench(c: &mut Criterion, workloads: &[Workload]) {
    let mut group = c.benchmark_group("decode");
    for w in workloads {
        group.throughput(Throughput::Bytes(w.body_bytes() as u64));
        with_decoder(w.provider, |d, out| {
            group.bench_function(w.provider.name(), |b| {
                b.iter(|| decode_all(d, &w.bodies, out))
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("decode_validate");
    for w in workloads {
        group.throughput(Throughput::Bytes(w.payload_bytes() as u64));
        group.bench_function(w.provider.name(), |b| b.iter(|| validate_all(&w.payloads)));
    }
    group.finish();
}

/// Runs one workload `iters` times with no criterion machinery (for callgrind / perf).
#[inline(never)]
fn run_once(name: &str, iters: usize, workloads: &[Workload]) {
    let (what, provider) = name
        .split_once('_')
        .unwrap_or_else(|| panic!("unknown POLYWEAVE_BENCH_ONCE workload {name:?}"));
    let w = workloads
        .iter()
        .find(|w| w.provider.name() == provider)
        .unwrap_or_else(|| panic!("unknown POLYWEAVE_BENCH_ONCE workload {name:?}"));
    let (sink, bytes) = match what {
        "decode" => {
            let sink = with_decoder(w.provider, |d, out| {
                (0..iters).map(|_| decode_all(d, &w.bodies, out)).sum()
            });
            (sink, w.body_bytes())
        }
        "validate" => {
            let sink: usize = (0..iters).map(|_| validate_all(&w.payloads)).sum();
            (sink, w.payload_bytes())
        }
        _ => panic!("unknown POLYWEAVE_BENCH_ONCE workload {name:?}"),
    };
    println!(
        "{name} x{iters}: {} ({bytes} bytes a pass)",
        black_box(sink)
    );
}

fn main() {
    let workloads = workloads();
    if let Ok(name) = std::env::var("POLYWEAVE_BENCH_ONCE") {
        let iters = std::env::var("POLYWEAVE_BENCH_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        run_once(&name, iters, &workloads);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &workloads);
    c.final_summary();
}
