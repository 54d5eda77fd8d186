//! What the C ABI costs on top of the Rust API: the same sync round trip, the BFCL corpus
//! (every `TOOL_CALL` to a sync echo tool, its `TOOL_RESULT` and prompts drained), once
//! through `Wrapper` and once through `pw_wrapper_*` as a C host calls them (the echo tool
//! an `extern "C"` function writing through `pw_writer_write`). Both loops are the bare loop
//! a host writes: feed a frame, poll until nothing is queued.
//!
//! * `c_abi/rust_sync_echo`, `c_abi/c_sync_echo`: criterion, in the same run.
//! * `POLYWEAVE_BENCH_ONCE=rust_sync_echo|c_sync_echo` (and `POLYWEAVE_BENCH_ITERS`): one
//!   loop without criterion, for `tests/bench/instructions.sh` (callgrind, N and 2N runs).

use core::ffi::c_void;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::ptr;

mod common;

use common::{corpus, lines, tool_name, CFG, SLOTS};
use criterion::{Criterion, Throughput};
use polyweave_tests::drive::echo;
use polyweave_tests::host::Storage;
use polyweave_tool_adapter::{Disposition, Instant, NoHooks, Tool, Wrapper};
use polyweave_tool_adapter_ffi::*;
use polyweave_tool_adapter_ffi::{pw_disposition_kind::*, pw_tool_kind::*, pw_tool_status::*};

unsafe extern "C" fn c_echo(_: *mut c_void, args: pw_str, out: *mut pw_writer) -> u32 {
    // SAFETY: the library hands the running tool a live writer and readable args.
    unsafe { pw_writer_write(out, args.ptr, args.len) };
    PW_TOOL_STATUS_OK as u32
}

/// Every distinct tool name of the corpus, sorted (both wrappers binary-search them).
fn tool_names(lines: &[&[u8]]) -> Vec<String> {
    let mut names: Vec<String> = lines.iter().map(|line| tool_name(line)).collect();
    names.sort();
    names.dedup();
    names
}

/// A wrapper built through the C ABI, in a block of `u64`s (aligned as it asks).
struct CWrapper {
    w: *mut pw_wrapper,
    _block: Vec<u64>,
    _tools: Vec<pw_tool>,
}

impl CWrapper {
    fn new(names: &[String]) -> Self {
        let tools: Vec<pw_tool> = names
            .iter()
            .map(|n| pw_tool {
                name: pw_str {
                    ptr: n.as_ptr(),
                    len: n.len(),
                },
                kind: PW_TOOL_KIND_SYNC as u32,
                timeout_ms: PW_TOOL_DEFAULT_TIMEOUT,
                call: Some(c_echo),
                userdata: ptr::null_mut(),
                schema: pw_str {
                    ptr: ptr::null(),
                    len: 0,
                },
                schema_index: ptr::null_mut(),
                schema_index_words: 0,
            })
            .collect();
        let mut cfg = MaybeUninit::uninit();
        let hooks = pw_hooks {
            userdata: ptr::null_mut(),
            on_tool_call: None,
            on_tool_result: None,
        };
        // SAFETY: every pointer is valid; the block and the tool table (and the names it
        // points at) outlive the wrapper, which lives in `Self` with them.
        unsafe {
            assert_eq!(
                pw_wrapper_config_default(cfg.as_mut_ptr()),
                pw_result::PW_OK
            );
            let mut cfg = cfg.assume_init();
            cfg.args_cap = CFG.args_cap;
            cfg.result_cap = CFG.result_cap;
            cfg.trace_entries = CFG.trace_entries;
            cfg.trace_bytes = CFG.trace_bytes;
            let mut len = 0;
            assert_eq!(
                pw_wrapper_size(&cfg, SLOTS, tools.len(), &mut len),
                pw_result::PW_OK
            );
            assert!(pw_wrapper_align() <= 8);
            let mut block = vec![0u64; len.div_ceil(8)];
            let mut w = ptr::null_mut();
            let r = pw_wrapper_init(
                block.as_mut_ptr().cast(),
                block.len() * 8,
                &cfg,
                SLOTS,
                tools.as_ptr(),
                tools.len(),
                &hooks,
                &mut w,
            );
            assert_eq!(r, pw_result::PW_OK);
            Self {
                w,
                _block: block,
                _tools: tools,
            }
        }
    }
}

/// Every line through the Rust API; returns the bytes written.
fn rust_round_trips(w: &mut Wrapper<'_>, lines: &[&[u8]], buf: &mut [u8]) -> usize {
    let mut bytes = 0;
    for line in lines {
        let d = w.handle_response(Instant::ZERO, black_box(line)).unwrap();
        debug_assert!(matches!(d, Disposition::Intercepted { handle: None, .. }));
        while let Some(t) = w.poll_transmit(buf).unwrap() {
            bytes += black_box(&buf[..t.len]).len();
        }
    }
    bytes
}

/// Every line through the C ABI; returns the bytes written.
fn c_round_trips(w: &CWrapper, lines: &[&[u8]], buf: &mut [u8]) -> usize {
    let mut bytes = 0;
    for line in lines {
        let line = black_box(line);
        let mut d = MaybeUninit::uninit();
        let mut t = MaybeUninit::<pw_transmit>::uninit();
        // SAFETY: valid pointers; `buf` and `line` are outside the wrapper's block.
        unsafe {
            let r = pw_wrapper_handle_response(w.w, 0, line.as_ptr(), line.len(), d.as_mut_ptr());
            debug_assert_eq!(r, pw_result::PW_OK);
            debug_assert_eq!(d.assume_init().kind, PW_DISPOSITION_INTERCEPTED);
            while pw_wrapper_poll_transmit(w.w, buf.as_mut_ptr(), buf.len(), t.as_mut_ptr())
                == pw_result::PW_OK
            {
                bytes += black_box(&buf[..t.assume_init().len]).len();
            }
        }
    }
    bytes
}

/// Runs `f` with a fresh Rust-API wrapper over the echo tools.
fn with_rust<R>(names: &[String], f: impl FnOnce(&mut Wrapper<'_>) -> R) -> R {
    let tools: Vec<Tool<'_>> = names.iter().map(|n| Tool::sync(n, &echo)).collect();
    let mut storage = Storage::new(CFG, SLOTS);
    let mut w = storage.wrapper(&tools, NoHooks);
    f(&mut w)
}

fn main() {
    let data = corpus();
    let lines = lines(&data);
    let names = tool_names(&lines);
    let mut buf = vec![0u8; 4096];
    // Both paths write the same bytes, or the comparison means nothing.
    let c = CWrapper::new(&names);
    let want = with_rust(&names, |w| rust_round_trips(w, &lines, &mut buf));
    assert_eq!(c_round_trips(&c, &lines, &mut buf), want);

    if let Ok(name) = std::env::var("POLYWEAVE_BENCH_ONCE") {
        let iters: usize = std::env::var("POLYWEAVE_BENCH_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let c = CWrapper::new(&names);
        let sink = with_rust(&names, |w| {
            run_once(&name, iters, || match name.as_str() {
                "rust_sync_echo" => rust_round_trips(w, &lines, &mut buf),
                "c_sync_echo" => c_round_trips(&c, &lines, &mut buf),
                other => panic!("unknown POLYWEAVE_BENCH_ONCE workload {other:?}"),
            })
        });
        println!("{name} x{iters}: {}", black_box(sink));
        return;
    }
    let mut crit = Criterion::default().configure_from_args();
    let mut group = crit.benchmark_group("c_abi");
    group.throughput(Throughput::Elements(lines.len() as u64));
    with_rust(&names, |w| {
        group.bench_function("rust_sync_echo", |b| {
            b.iter(|| rust_round_trips(w, &lines, &mut buf))
        });
    });
    group.bench_function("c_sync_echo", |b| {
        b.iter(|| c_round_trips(&c, &lines, &mut buf))
    });
    group.finish();
    crit.final_summary();
}

/// The loop callgrind counts (`--toggle-collect='*run_once*'`).
#[inline(never)]
fn run_once(_name: &str, iters: usize, mut round: impl FnMut() -> usize) -> usize {
    (0..iters).map(|_| round()).sum()
}
