//! Criterion benchmarks for writing request bodies (SPEC §10.3), on a 20-exchange
//! conversation per provider built from the recorded provider bodies of
//! `data/provider-streams/`.
//!
//! The conversation, for each provider: a system text, then 20 exchanges, each a user text,
//! the decoded frames of one of that provider's recordings with tool calls (cycled in name
//! order), and a `TOOL_RESULT` per call (every fifth an error). Its tools are the names the
//! recordings call, each with a small object schema. Nothing is evicted.
//!
//! * `request/<provider>`: `Request::new` (which measures the body) and `write` into a
//!   4096-byte buffer until the body is written. Throughput in **bytes of body**.
//! * `request_64/<provider>`: the same through a 64-byte buffer (a device's case: each
//!   `write` resumes at the start of the message it stopped in).
//! * `request_validate/<provider>`: [`json::validate`] over the same body bytes, the yardstick
//!   of the issue's goal ("at most 2× json::validate's instructions per byte of body").
//!
//! Run: `cargo bench -p polyweave-tests --bench request -- --warm-up-time 1 --measurement-time 3`
//!
//! For instruction counts without criterion's own work, set `POLYWEAVE_BENCH_ONCE` to a
//! workload name (`request_<provider>`, `request64_<provider>`, `measure_request_<provider>`
//! (`Request::new` alone) or `validate_request_<provider>`, the provider as SPEC §8 names it)
//! and an optional `POLYWEAVE_BENCH_ITERS` (default 1); the binary then runs just that loop (in
//! `run_once`) and prints the body bytes one pass covers, which
//! `tests/bench/instructions.sh request` divides by.
//!
//! Two more switches serve `tests/bench/request_compare.sh`: `POLYWEAVE_REQUEST_BODIES=<path>`
//! writes the five bodies as NDJSON (`{"provider":…,"body":…}`) for the Python SDKs to build
//! again, and `POLYWEAVE_REQUEST_TIME=1` prints nanoseconds per body for each workload, timed
//! with `Instant` the way the Python side times itself (best of 7 batches of about 0.1 s).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use polyweave_tests::streams::{decode, recordings};
use polyweave_tool_adapter::json::{self, DEFAULT_MAX_DEPTH};
use polyweave_tool_adapter::request::{Conversation, Declaration, Request, RequestOptions};
use polyweave_tool_adapter::Provider;
use serde_json::{json, Value};

/// Exchanges in each conversation.
const EXCHANGES: usize = 20;

/// The conversation's memory (the 20 exchanges take at most about a third of it).
const MEMORY: usize = 1 << 20;

/// What a user asks, turn after turn.
const QUESTIONS: [&str; 10] = [
    "What is the weather in Paris right now, and should I take an umbrella?",
    "Thanks. Can you check the same for Lyon tomorrow morning?",
    "Look up the train times from Lyon to Marseille after 9am.",
    "Which of those is the fastest? I need to be there before noon.",
    "Book the 9:34 one for two adults, window seats if possible.",
    "Send the confirmation to my work address, not the personal one.",
    "Now find a restaurant near the Vieux-Port for 8pm, seafood, not too loud.",
    "What do the reviews say about \"Chez Fonfon\"? Summarise in two lines.",
    "Add the dinner to my calendar with a reminder an hour before.",
    "Finally, what's the exchange rate EUR→USD today? I'm paying with a US card.",
];

/// One provider's conversation, its declarations and its body.
struct Workload {
    provider: Provider,
    conv: Conversation<'static>,
    decls: Vec<Declaration<'static>>,
    opts: RequestOptions<'static>,
    body: Vec<u8>,
}

fn model(p: Provider) -> &'static str {
    match p {
        Provider::OpenAiChat | Provider::OpenAiResponses => "gpt-5",
        Provider::Anthropic => "claude-sonnet-4-5",
        Provider::Gemini => "gemini-2.5-flash",
        _ => "qwen3:8b",
    }
}

/// A realistic result for call `k` of exchange `t` (every fifth call an error).
fn result_frame(call: &Value, t: usize, k: usize) -> String {
    let name = call["name"].as_str().expect("call name");
    let mut content = json!({ "name": name });
    if let Some(id) = call.get("id") {
        content["id"] = id.clone();
    }
    if (t + k) % 5 == 4 {
        content["error"] = json!(format!("Tool {name} failed: upstream timed out after 10 s"));
    } else {
        content["result"] = json!({
            "status": "ok",
            "exchange": t,
            "call": k,
            "summary": format!("{name} finished: 3 items found, the first one matches the request"),
            "items": [{"id": 1, "score": 0.93}, {"id": 2, "score": 0.71}, {"id": 3, "score": 0.42}],
        });
    }
    json!({"type": "TOOL_RESULT", "content": content}).to_string()
}

/// `frame` with its call's id made unique in the conversation, as a provider issues them:
/// the recordings come from SDK fixtures that share ids (`call_abc123`), and they are cycled.
/// Only the id's text changes (`-<exchange>` appended); the frame stays canonical.
fn unique_id(frame: &str, ids: &mut Vec<String>, t: usize) -> String {
    let Some(rest) = frame.strip_prefix(r#"{"type":"TOOL_CALL","content":{"id":""#) else {
        return frame.to_string();
    };
    let end = rest.find('"').expect("the id's end");
    let mut id = rest[..end].to_string();
    if ids.contains(&id) {
        id = format!("{id}-{t}");
    }
    assert!(!ids.contains(&id), "unique id {id}");
    ids.push(id.clone());
    format!(
        r#"{{"type":"TOOL_CALL","content":{{"id":"{id}"{}"#,
        &rest[end + 1..]
    )
}

/// Whether every provider takes `name` as a declared name (SPEC §10.1).
fn declarable(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.as_bytes()[0].is_ascii_digit()
}

fn workload(provider: Provider) -> Workload {
    let responses: Vec<Vec<String>> = recordings()
        .into_iter()
        .filter(|r| r.provider == provider)
        .map(|r| decode(provider, &r.body, || usize::MAX).frames)
        .filter(|frames| {
            frames
                .iter()
                .any(|f| f.starts_with(r#"{"type":"TOOL_CALL""#))
        })
        .collect();
    assert!(
        !responses.is_empty(),
        "{}: recordings with calls",
        provider.name()
    );
    let mem: &'static mut [u8] = Box::leak(vec![0u8; MEMORY].into_boxed_slice());
    let mut conv = Conversation::new(mem);
    conv.set_system(
        "You are a travel assistant. Use the tools for anything that changes (weather, \
         trains, bookings, rates); answer in short paragraphs.",
    )
    .unwrap();
    let mut names: Vec<String> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for t in 0..EXCHANGES {
        conv.push_user(QUESTIONS[t % QUESTIONS.len()]).unwrap();
        conv.begin_response(provider).unwrap();
        let frames: Vec<String> = responses[t % responses.len()]
            .iter()
            .map(|f| unique_id(f, &mut ids, t))
            .collect();
        for f in &frames {
            conv.push_frame(f.as_bytes())
                .unwrap_or_else(|e| panic!("{}: {f}: {e}", provider.name()));
        }
        let calls = frames
            .iter()
            .map(|f| serde_json::from_str::<Value>(f).unwrap())
            .filter(|v| v["type"] == "TOOL_CALL");
        for (k, v) in calls.enumerate() {
            let call = &v["content"];
            let name = call["name"].as_str().unwrap().to_string();
            if declarable(&name) && !names.contains(&name) {
                names.push(name);
            }
            conv.push_frame(result_frame(call, t, k).as_bytes())
                .unwrap_or_else(|e| panic!("{}: result: {e}", provider.name()));
        }
    }
    assert_eq!(conv.evicted(), 0, "{}: nothing evicted", provider.name());
    let decls = names
        .into_iter()
        .map(|n| {
            let n: &'static str = Box::leak(n.into_boxed_str());
            Declaration::new(
                n,
                Some(
                    br#"{"type":"object","properties":{"query":{"type":"string","description":"What to look up"},"limit":{"type":"integer","minimum":1}},"required":["query"]}"#,
                ),
            )
            .description("Looks things up for the travel assistant")
        })
        .collect();
    let mut w = Workload {
        provider,
        conv,
        decls,
        opts: RequestOptions::new(model(provider)),
        body: Vec::new(),
    };
    let mut buf = [0u8; 4096];
    let mut req = w.request();
    let mut body = Vec::with_capacity(req.len());
    loop {
        let n = req.write(&mut buf);
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    assert_eq!(body.len(), req.len());
    w.body = body;
    w
}

impl Workload {
    fn request(&self) -> Request<'_> {
        Request::new(&self.conv, self.provider, &self.opts, &self.decls).expect("request")
    }
}

fn workloads() -> Vec<Workload> {
    let workloads: Vec<Workload> = Provider::ALL.iter().map(|&p| workload(p)).collect();
    // The numbers only mean something if the body is the one the tests check: JSON, the
    // same through a small buffer, and the conversation whole.
    for w in &workloads {
        let v: Value = serde_json::from_slice(&w.body)
            .unwrap_or_else(|e| panic!("{}: body is not JSON: {e}", w.provider.name()));
        let history = ["messages", "input", "contents"]
            .iter()
            .find_map(|k| v.get(k))
            .and_then(Value::as_array)
            .expect("history")
            .len();
        let mut small = Vec::new();
        let mut buf = [0u8; 64];
        let mut req = w.request();
        loop {
            let n = req.write(&mut buf);
            if n == 0 {
                break;
            }
            small.extend_from_slice(&buf[..n]);
        }
        assert_eq!(small, w.body, "{}: 64-byte buffer", w.provider.name());
        assert!(json::validate(&w.body, DEFAULT_MAX_DEPTH).is_ok());
        eprintln!(
            "request bench: {:<16} {:>6} B body, {:>3} history items, {} tools, conversation {} B",
            w.provider.name(),
            w.body.len(),
            history,
            w.decls.len(),
            w.conv.used()
        );
    }
    workloads
}

/// The whole body written through `buf`; returns its bytes.
#[inline(always)]
fn write_body(w: &Workload, buf: &mut [u8]) -> usize {
    let mut req = black_box(w).request();
    let mut total = 0;
    loop {
        let n = req.write(buf);
        if n == 0 {
            break;
        }
        total += black_box(n);
    }
    total
}

/// `Request::new` alone (it measures the body); returns its length.
#[inline(always)]
fn measure_body(w: &Workload) -> usize {
    black_box(w).request().len()
}

fn validate_body(w: &Workload) -> usize {
    usize::from(json::validate(black_box(&w.body), DEFAULT_MAX_DEPTH).is_ok())
}

fn bench(c: &mut Criterion, workloads: &[Workload]) {
    for (group_name, chunk) in [("request", 4096usize), ("request_64", 64)] {
        let mut group = c.benchmark_group(group_name);
        let mut buf = vec![0u8; chunk];
        for w in workloads {
            group.throughput(Throughput::Bytes(w.body.len() as u64));
            group.bench_function(w.provider.name(), |b| b.iter(|| write_body(w, &mut buf)));
        }
        group.finish();
    }
    let mut group = c.benchmark_group("request_validate");
    for w in workloads {
        group.throughput(Throughput::Bytes(w.body.len() as u64));
        group.bench_function(w.provider.name(), |b| b.iter(|| validate_body(w)));
    }
    group.finish();
}

/// The workload a `POLYWEAVE_BENCH_ONCE` name picks, and what it runs.
fn pick<'w>(name: &str, workloads: &'w [Workload]) -> (&'w Workload, &'static str) {
    for what in [
        "validate_request_",
        "measure_request_",
        "request64_",
        "request_",
    ] {
        if let Some(provider) = name.strip_prefix(what) {
            if let Some(w) = workloads.iter().find(|w| w.provider.name() == provider) {
                let what: &'static str = match what {
                    "validate_request_" => "validate",
                    "measure_request_" => "measure",
                    "request64_" => "write64",
                    _ => "write",
                };
                return (w, what);
            }
        }
    }
    panic!("unknown POLYWEAVE_BENCH_ONCE workload {name:?}")
}

/// Runs one workload `iters` times with no criterion machinery (for callgrind / perf).
#[inline(never)]
fn run_once(name: &str, iters: usize, workloads: &[Workload]) {
    let (w, what) = pick(name, workloads);
    let mut buf = vec![0u8; if what == "write64" { 64 } else { 4096 }];
    let sink: usize = match what {
        "validate" => (0..iters).map(|_| validate_body(w)).sum(),
        "measure" => (0..iters).map(|_| measure_body(w)).sum(),
        _ => (0..iters).map(|_| write_body(w, &mut buf)).sum(),
    };
    println!(
        "{name} x{iters}: {} ({} bytes a pass)",
        black_box(sink),
        w.body.len()
    );
}

/// Nanoseconds per call of `f`: the best of 7 batches of about 0.1 s each (as
/// `request_python.py` times the SDKs).
fn time_ns(mut f: impl FnMut() -> usize) -> f64 {
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < Duration::from_millis(20) {
        black_box(f());
        calls += 1;
    }
    let per = start.elapsed().as_secs_f64() / calls as f64;
    let n = ((0.1 / per) as u64).max(1);
    (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                black_box(f());
            }
            t.elapsed().as_secs_f64() * 1e9 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let workloads = workloads();
    if let Some(path) = std::env::var_os("POLYWEAVE_REQUEST_BODIES") {
        let mut out = Vec::new();
        for w in &workloads {
            out.extend_from_slice(
                format!(r#"{{"provider":"{}","body":"#, w.provider.name()).as_bytes(),
            );
            out.extend_from_slice(&w.body);
            out.extend_from_slice(b"}\n");
        }
        std::fs::write(&path, out).expect("write the bodies");
    }
    if std::env::var_os("POLYWEAVE_REQUEST_TIME").is_some() {
        println!("provider bytes write_4096_ns write_64_ns measure_ns validate_ns");
        for w in &workloads {
            let mut big = [0u8; 4096];
            let mut small = [0u8; 64];
            println!(
                "{} {} {:.0} {:.0} {:.0} {:.0}",
                w.provider.name(),
                w.body.len(),
                time_ns(|| write_body(w, &mut big)),
                time_ns(|| write_body(w, &mut small)),
                time_ns(|| measure_body(w)),
                time_ns(|| validate_body(w)),
            );
        }
        return;
    }
    if let Ok(name) = std::env::var("POLYWEAVE_BENCH_ONCE") {
        let iters = std::env::var("POLYWEAVE_BENCH_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        run_once(&name, iters, &workloads);
        return;
    }
    if std::env::var_os("POLYWEAVE_REQUEST_BODIES").is_some() {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &workloads);
    c.final_summary();
}
