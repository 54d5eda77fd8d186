//! Criterion benchmarks for [`Wrapper`], the tool-call router.
//!
//! * `passthrough/{64B,16KiB}`: [`Wrapper::handle_response`] on a `TEXT` frame
//!   only reads as far as `type` and answers [`Disposition::Forward`] without
//!   copying, so both sizes should cost the same (ns per frame).
//! * `roundtrip/bfcl_sync_echo`: every `TOOL_CALL` of the BFCL corpus, with
//!   every tool name of the corpus registered as a sync tool that echoes its
//!   args; each call is fed to `handle_response`, then `poll_transmit` is
//!   drained into the host's buffer by its lean [`Host::pop_frames`]
//!   (`TOOL_RESULT` and continue prompt to the model, mirrored prompt to the
//!   consumer). Throughput is in calls.
//! * `roundtrip/bfcl_deferred`: the same calls with every tool deferred,
//!   completed at once through `poll_event` + [`Wrapper::complete`] (the slot path).
//! * `roundtrip/bfcl_sync_echo_schema`: the sync round trip with every tool that has a BFCL
//!   declaration registered with its input schema ([`Tool::with_schema`]), so each call's
//!   args are checked before the tool runs; `roundtrip/bfcl_sync_echo_checked_calls` is the
//!   same calls without schemas. A name declared more than once (263 of the 960 declared
//!   names) takes the declaration that accepts most of its calls; the calls its schema
//!   refuses would take the error path instead of the echo, so both runs leave them out
//!   (3,106 calls remain, 2,888 of them checked against a schema).
//! * `full_validation/…`: the pass-through and the sync round trip with
//!   `WrapperConfig::full_validation` on (SPEC §7.25): every pass-through frame is then
//!   scanned whole, so its cost grows with the frame; a `TOOL_CALL` is validated
//!   once either way.
//!
//! Run: `cargo bench -p polyweave-tests --bench wrapper -- --warm-up-time 1 --measurement-time 3`
//!
//! The corpus has 1,147 distinct tool names. Registered sorted by name (as the
//! wrapper's docs advise) they are found by binary search; `bfcl_sync_echo_unsorted_tools`
//! registers them in order of first use, so each call pays a linear scan.
//!
//! For instruction counts without criterion's own work, set `POLYWEAVE_BENCH_ONCE`
//! to a workload name (`passthrough_64B`, `passthrough_16KiB`, `sync_echo`, `sync_echo_unsorted`,
//! `deferred`, `full_passthrough_64B`, `full_passthrough_16KiB`, `full_sync_echo`, `schema_sync_echo`,
//! `sync_echo_checked`) and an optional `POLYWEAVE_BENCH_ITERS` (default 1); the binary
//! then runs just that loop (in `run_once`) and exits:
//!
//! ```text
//! cargo bench -p polyweave-tests --bench wrapper --no-run   # prints the binary path
//! POLYWEAVE_BENCH_ONCE=sync_echo valgrind --tool=callgrind --toggle-collect='wrapper::run_once*' target/release/deps/wrapper-<hash>
//! ```
//!
//! The collected total over 3302 is the cost of one round trip plus about 15 Ir of
//! wrapper set-up per call; for the exact figure, run with `POLYWEAVE_BENCH_ITERS`
//! `N` and `2N` and divide the difference by `N * 3302` (by `N` for the pass-through).

use std::collections::HashSet;
use std::hint::black_box;

mod common;

use common::{
    call_args, corpus, declarations, functions, lines, text_frame, tool_name, CFG, SLOTS,
};
use criterion::{Criterion, Throughput};
use polyweave_tests::drive::echo;
use polyweave_tests::host::{Entry, Host, Script, Storage};
use polyweave_tool_adapter::json::schema::Schema;
use polyweave_tool_adapter::json::DEFAULT_MAX_DEPTH;
use polyweave_tool_adapter::wrapper::Event;
use polyweave_tool_adapter::{
    Disposition, Frame, FrameKind, Instant, NoHooks, Route, Tool, Wrapper, WrapperConfig,
};

/// Bytes of the host's buffer for `poll_transmit` (the largest frame is about 1.5 KiB).
const OUT_BUF: usize = 4096;

/// Every distinct tool name of the corpus, in order of first use.
fn tool_names(lines: &[&[u8]]) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for line in lines {
        let name = tool_name(line);
        if seen.insert(name.clone()) {
            names.push(name);
        }
    }
    names
}

/// [`CFG`] with every frame validated.
const FULL: WrapperConfig = WrapperConfig {
    full_validation: true,
    ..CFG
};

/// Runs `f` on a fresh wrapper over `tools` with [`CFG`], and its host.
fn with_wrapper<R>(tools: &[Tool<'_>], f: impl FnOnce(&mut Wrapper<'_>, &mut Host) -> R) -> R {
    with_config(CFG, tools, f)
}

/// Runs `f` on a fresh wrapper over `tools` with `cfg`, and its host.
fn with_config<R>(
    cfg: WrapperConfig,
    tools: &[Tool<'_>],
    f: impl FnOnce(&mut Wrapper<'_>, &mut Host) -> R,
) -> R {
    let mut storage = Storage::new(cfg, SLOTS);
    let mut w = storage.wrapper(tools, NoHooks);
    f(&mut w, &mut Host::with_buffer(OUT_BUF))
}

fn passthrough(w: &mut Wrapper<'_>, frame: &[u8]) -> Disposition {
    w.handle_response(Instant::ZERO, black_box(frame)).unwrap()
}

/// Drains `poll_transmit` into the host's buffer; returns (frames, bytes). The host's lean
/// drain is the loop a host would write; it also counts the frames taken (for hooks' `seq`),
/// about 10 instructions a round trip over a bare loop (0.1 %).
#[inline(always)]
fn drain(w: &mut Wrapper<'_>, host: &mut Host) -> (usize, usize) {
    let mut bytes = 0;
    let frames = host.pop_frames(w, |_, frame| bytes += black_box(frame).len());
    (frames, bytes)
}

/// Every line through a wrapper of sync echo tools; returns (frames, bytes) written.
fn roundtrip_sync(w: &mut Wrapper<'_>, host: &mut Host, lines: &[&[u8]]) -> (usize, usize) {
    let (mut frames, mut bytes) = (0, 0);
    for line in lines {
        let d = w.handle_response(Instant::ZERO, black_box(line)).unwrap();
        debug_assert!(matches!(d, Disposition::Intercepted { handle: None, .. }));
        let (f, b) = drain(w, host);
        frames += f;
        bytes += b;
    }
    (frames, bytes)
}

/// Every line through a wrapper of deferred tools, each completed at once with its args.
///
/// The host's `drive` with [`Script::Echo`] does the same (`verify` checks it that way), but
/// it logs every frame and started call as owned entries and polls once more for events:
/// harness work that would be timed with the wrapper. This loop is the slot path a host
/// writes, `poll_event` and `complete`, and nothing else.
fn roundtrip_deferred(w: &mut Wrapper<'_>, host: &mut Host, lines: &[&[u8]]) -> (usize, usize) {
    let mut args = [0u8; 2048];
    let (mut frames, mut bytes) = (0, 0);
    for line in lines {
        let d = w.handle_response(Instant::ZERO, black_box(line)).unwrap();
        debug_assert!(matches!(
            d,
            Disposition::Intercepted {
                handle: Some(_),
                ..
            }
        ));
        let Some(Event::CallStarted {
            handle, args: a, ..
        }) = w.poll_event()
        else {
            panic!("no CallStarted event for a deferred call");
        };
        // The event borrows the wrapper: the host keeps its own copy of the args.
        let n = a.len();
        args[..n].copy_from_slice(a);
        w.complete(Instant::ZERO, handle, Ok(&args[..n])).unwrap();
        let (f, b) = drain(w, host);
        frames += f;
        bytes += b;
    }
    (frames, bytes)
}

struct Inputs {
    small: Vec<u8>,
    large: Vec<u8>,
    data: Vec<u8>,
    names: Vec<String>,
    functions: Vec<u8>,
}

/// The BFCL input schemas, read once, and the one registered for each tool name.
struct Schemas<'a> {
    schemas: Vec<Schema<'a>>,
    /// The same, each indexed ([`Schema::indexed`]) as a host registering for speed does.
    indexed: Vec<Schema<'a>>,
    /// Per tool name (as `Inputs::names`), the index of its schema, when it has one.
    of_name: Vec<Option<usize>>,
}

impl Inputs {
    fn new() -> Self {
        let data = corpus();
        let names = tool_names(&lines(&data));
        Self {
            small: text_frame(64),
            large: text_frame(16 * 1024),
            data,
            names,
            functions: functions(),
        }
    }

    /// Each declared name's schema: of its declarations, the one that accepts most of the
    /// calls by that name (the first on a tie).
    fn schemas(&self) -> Schemas<'_> {
        let declarations = declarations(&self.functions);
        let schemas: Vec<Schema<'_>> = declarations
            .iter()
            .map(|d| Schema::new(d.schema).unwrap())
            .collect();
        let lines = lines(&self.data);
        let calls: Vec<(String, &[u8])> =
            lines.iter().map(|l| (tool_name(l), call_args(l))).collect();
        let of_name = self
            .names
            .iter()
            .map(|name| {
                let accepted = |i: usize| {
                    calls
                        .iter()
                        .filter(|(n, args)| n == name && schemas[i].validate(args).is_ok())
                        .count()
                };
                let candidates = (0..declarations.len()).filter(|&i| declarations[i].name == *name);
                // `max_by_key` keeps the last of equals: reversed, the first declaration wins.
                candidates.rev().max_by_key(|&i| accepted(i))
            })
            .collect();
        let indexed = schemas
            .iter()
            .map(|s| {
                let words = s.index_words().unwrap();
                // Index memory for the process's life, as a static would be.
                s.indexed(Box::leak(vec![0u32; words].into_boxed_slice()))
                    .unwrap()
            })
            .collect();
        Schemas {
            schemas,
            indexed,
            of_name,
        }
    }

    /// Sync echo tools sorted by name, each declared one with its schema (indexed or not).
    fn schema_tools<'a>(&'a self, schemas: &'a Schemas<'a>, indexed: bool) -> Vec<Tool<'a>> {
        let registered = match indexed {
            true => &schemas.indexed,
            false => &schemas.schemas,
        };
        let mut tools: Vec<Tool<'a>> = self
            .names
            .iter()
            .zip(&schemas.of_name)
            .map(|(n, s)| match s {
                Some(i) => Tool::sync(n, &echo).with_schema(&registered[*i]),
                None => Tool::sync(n, &echo),
            })
            .collect();
        tools.sort_by(|a, b| a.name.cmp(b.name));
        tools
    }

    /// The calls whose args the schema registered for their name accepts (or that have none).
    fn checked_lines<'a>(&'a self, schemas: &Schemas<'_>) -> Vec<&'a [u8]> {
        lines(&self.data)
            .into_iter()
            .filter(|line| {
                let name = tool_name(line);
                let at = self.names.iter().position(|n| *n == name).unwrap();
                schemas.of_name[at]
                    .is_none_or(|i| schemas.schemas[i].validate(call_args(line)).is_ok())
            })
            .collect()
    }

    /// Sync echo tools, registered sorted by name (found by binary search).
    fn sync_tools(&self) -> Vec<Tool<'_>> {
        let mut tools = self.sync_tools_unsorted();
        tools.sort_by(|a, b| a.name.cmp(b.name));
        tools
    }

    /// Sync echo tools in order of first use (found by a linear scan).
    fn sync_tools_unsorted(&self) -> Vec<Tool<'_>> {
        self.names.iter().map(|n| Tool::sync(n, &echo)).collect()
    }

    /// Deferred tools, registered sorted by name.
    fn deferred_tools(&self) -> Vec<Tool<'_>> {
        let mut tools: Vec<Tool<'_>> = self.names.iter().map(|n| Tool::deferred(n)).collect();
        tools.sort_by(|a, b| a.name.cmp(b.name));
        tools
    }

    /// The numbers only mean something if every call takes the path it is meant to.
    fn verify(&self) {
        let lines = lines(&self.data);
        with_wrapper(&[], |w, _| {
            assert_eq!(passthrough(w, &self.small), Disposition::Forward);
            assert_eq!(passthrough(w, &self.large), Disposition::Forward);
            assert_eq!(w.queued(), 0);
        });
        let sync = self.sync_tools();
        let unsorted = self.sync_tools_unsorted();
        let deferred = self.deferred_tools();
        let schemas = self.schemas();
        let schema_tools = self.schema_tools(&schemas, false);
        let indexed_tools = self.schema_tools(&schemas, true);
        let checked = self.checked_lines(&schemas);
        assert_eq!(checked.len(), 3106);
        assert_eq!(
            schema_tools.iter().filter(|t| t.schema.is_some()).count(),
            960
        );
        for (tools, is_sync, lines) in [
            (&sync, true, &lines),
            (&unsorted, true, &lines),
            (&deferred, false, &lines),
            (&schema_tools, true, &checked),
            (&indexed_tools, true, &checked),
        ] {
            with_wrapper(tools, |w, host| {
                // Each deferred call is completed at once with its args.
                host.script_all(Script::Echo);
                for line in lines {
                    let frame = Frame::parse_validated(line, DEFAULT_MAX_DEPTH).unwrap();
                    let args = frame.tool_call().unwrap().args;
                    let d = w.handle_response(Instant::ZERO, line).unwrap();
                    let log = host.drive(w);
                    let started = log.iter().filter_map(Entry::started).count();
                    if is_sync {
                        assert!(matches!(d, Disposition::Intercepted { handle: None, .. }));
                        assert_eq!(started, 0);
                    } else {
                        assert_eq!(started, 1, "no event");
                    }
                    let sent: Vec<(Route, &[u8])> = log.iter().filter_map(Entry::frame).collect();
                    let routes: Vec<Route> = sent.iter().map(|(route, _)| *route).collect();
                    assert_eq!(routes, [Route::Model, Route::Model, Route::Consumer]);
                    for (i, (_, out)) in sent.into_iter().enumerate() {
                        let want = if i == 0 {
                            FrameKind::ToolResult
                        } else {
                            FrameKind::Text
                        };
                        let f = Frame::parse_validated(out, DEFAULT_MAX_DEPTH).unwrap();
                        assert_eq!(f.kind(), want);
                        if i == 0 {
                            let r = f.tool_result().unwrap();
                            assert_eq!(r.result, Some(args), "echo mismatch");
                            assert!(r.error.is_none());
                        }
                    }
                    assert_eq!(w.pending(), 0);
                }
                assert_eq!(w.trace().len(), CFG.trace_entries);
                assert_eq!(w.trace().truncated(), 0);
            });
        }
        // The calls left out are refused by the schema: the bench's schemas are really checked.
        with_wrapper(&schema_tools, |w, host| {
            let refused = lines
                .iter()
                .filter(|line| !checked.contains(line))
                .filter(|line| {
                    w.handle_response(Instant::ZERO, line).unwrap();
                    let log = host.drive(w);
                    let sent: Vec<(Route, &[u8])> = log.iter().filter_map(Entry::frame).collect();
                    let f = Frame::parse_validated(sent[0].1, DEFAULT_MAX_DEPTH).unwrap();
                    f.tool_result().unwrap().error.is_some()
                });
            assert_eq!(refused.count(), lines.len() - checked.len());
        });
        // The timed loops count what they write.
        let per_call = |(frames, _): (usize, usize)| frames / lines.len();
        assert_eq!(
            with_wrapper(&sync, |w, host| per_call(roundtrip_sync(w, host, &lines))),
            3
        );
        assert_eq!(
            with_wrapper(&deferred, |w, host| per_call(roundtrip_deferred(
                w, host, &lines
            ))),
            3
        );
    }
}

fn bench(c: &mut Criterion, inputs: &Inputs) {
    let mut group = c.benchmark_group("passthrough");
    group.throughput(Throughput::Elements(1));
    with_wrapper(&[], |w, _| {
        group.bench_function("64B", |b| b.iter(|| passthrough(w, &inputs.small)));
        group.bench_function("16KiB", |b| b.iter(|| passthrough(w, &inputs.large)));
    });
    group.finish();

    let lines = lines(&inputs.data);
    let sync = inputs.sync_tools();
    let deferred = inputs.deferred_tools();
    let mut group = c.benchmark_group("roundtrip");
    group.throughput(Throughput::Elements(lines.len() as u64));
    with_wrapper(&sync, |w, host| {
        group.bench_function("bfcl_sync_echo", |b| {
            b.iter(|| roundtrip_sync(w, host, &lines))
        });
    });
    let schemas = inputs.schemas();
    let checked = inputs.checked_lines(&schemas);
    group.throughput(Throughput::Elements(checked.len() as u64));
    with_wrapper(&sync, |w, host| {
        group.bench_function("bfcl_sync_echo_checked_calls", |b| {
            b.iter(|| roundtrip_sync(w, host, &checked))
        });
    });
    with_wrapper(&inputs.schema_tools(&schemas, false), |w, host| {
        group.bench_function("bfcl_sync_echo_schema", |b| {
            b.iter(|| roundtrip_sync(w, host, &checked))
        });
    });
    with_wrapper(&inputs.schema_tools(&schemas, true), |w, host| {
        group.bench_function("bfcl_sync_echo_schema_indexed", |b| {
            b.iter(|| roundtrip_sync(w, host, &checked))
        });
    });
    group.throughput(Throughput::Elements(lines.len() as u64));
    let unsorted = inputs.sync_tools_unsorted();
    with_wrapper(&unsorted, |w, host| {
        group.bench_function("bfcl_sync_echo_unsorted_tools", |b| {
            b.iter(|| roundtrip_sync(w, host, &lines))
        });
    });
    with_wrapper(&deferred, |w, host| {
        group.bench_function("bfcl_deferred", |b| {
            b.iter(|| roundtrip_deferred(w, host, &lines))
        });
    });
    group.finish();

    let mut group = c.benchmark_group("full_validation");
    with_config(FULL, &sync, |w, host| {
        group.throughput(Throughput::Elements(1));
        group.bench_function("passthrough_64B", |b| {
            b.iter(|| passthrough(w, &inputs.small))
        });
        group.bench_function("passthrough_16KiB", |b| {
            b.iter(|| passthrough(w, &inputs.large))
        });
        group.throughput(Throughput::Elements(lines.len() as u64));
        group.bench_function("bfcl_sync_echo", |b| {
            b.iter(|| roundtrip_sync(w, host, &lines))
        });
    });
    group.finish();
}

/// Runs one workload `iters` times with no criterion machinery (for callgrind / perf).
#[inline(never)]
fn run_once(name: &str, iters: usize, inputs: &Inputs, lines: &[&[u8]], tools: &[Tool<'_>]) {
    let (cfg, workload) = match name.strip_prefix("full_") {
        Some(rest) => (FULL, rest),
        None => (CFG, name),
    };
    let sink = with_config(cfg, tools, |w, host| {
        let mut sink = 0usize;
        for _ in 0..iters {
            sink += match workload {
                "passthrough_64B" => {
                    usize::from(passthrough(w, &inputs.small) == Disposition::Forward)
                }
                "passthrough_16KiB" => {
                    usize::from(passthrough(w, &inputs.large) == Disposition::Forward)
                }
                "sync_echo"
                | "sync_echo_unsorted"
                | "schema_sync_echo"
                | "schema_sync_echo_indexed"
                | "sync_echo_checked" => roundtrip_sync(w, host, lines).0,
                "deferred" => roundtrip_deferred(w, host, lines).0,
                other => panic!("unknown POLYWEAVE_BENCH_ONCE workload {other:?}"),
            };
        }
        sink
    });
    println!(
        "{name} x{iters}: {} ({} calls a pass)",
        black_box(sink),
        lines.len()
    );
}

fn main() {
    let inputs = Inputs::new();
    let lines = lines(&inputs.data);
    eprintln!(
        "wrapper bench: {} calls, {} distinct tool names registered (sorted: binary search; unsorted: linear scan)",
        lines.len(),
        inputs.names.len()
    );
    inputs.verify();
    if let Ok(name) = std::env::var("POLYWEAVE_BENCH_ONCE") {
        let iters = std::env::var("POLYWEAVE_BENCH_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let schemas = inputs.schemas();
        let (tools, lines) = match name.as_str() {
            "deferred" => (inputs.deferred_tools(), lines),
            "sync_echo_unsorted" => (inputs.sync_tools_unsorted(), lines),
            "schema_sync_echo" => (
                inputs.schema_tools(&schemas, false),
                inputs.checked_lines(&schemas),
            ),
            "schema_sync_echo_indexed" => (
                inputs.schema_tools(&schemas, true),
                inputs.checked_lines(&schemas),
            ),
            "sync_echo_checked" => (inputs.sync_tools(), inputs.checked_lines(&schemas)),
            _ => (inputs.sync_tools(), lines),
        };
        run_once(&name, iters, &inputs, &lines, &tools);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &inputs);
    c.final_summary();
}
