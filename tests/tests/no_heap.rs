//! The core never touches the heap: the whole BFCL corpus and JSONTestSuite go
//! through every reader and writer under a counting global allocator, and the
//! count must stay at zero.
//!
//! The counters are per thread and only count on a thread that switched measuring
//! on, so neither the test harness's other threads nor the other measuring test
//! (the tests run in parallel) can disturb them. The state machines get the same
//! treatment in a second test. Every entry point of the allocator counts
//! (`alloc`, `alloc_zeroed`, `realloc`, `dealloc`); self-tests check that, and
//! that a measuring thread is never blamed for another's allocations.

use std::alloc::Layout;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

use polyweave_tests::alloc_count::{measure, Counting};
use polyweave_tests::drive::echo;
use polyweave_tests::host::Host;
use polyweave_tests::{bfcl_bytes, json_suite_files, ndjson_lines, XorShift, BFCL_LINES};
use polyweave_tool_adapter::frame::LineSplitter;
use polyweave_tool_adapter::frame::{Frame, FrameKind};
use polyweave_tool_adapter::internals::OutFrame;
use polyweave_tool_adapter::json::{self, JsonStr, Members, DEFAULT_MAX_DEPTH};
use polyweave_tool_adapter::wrapper::typed;
use polyweave_tool_adapter::{
    AdapterCall, CallOptions, CallOutcome, Disposition, Instant, NoHooks, Slot, Tool, Wrapper,
    WrapperConfig,
};
use serde::{Deserialize, Serialize};

#[global_allocator]
static GLOBAL: Counting = Counting;

// kills: a counting allocator that forwards `alloc_zeroed` or `realloc` (or `dealloc`)
// without counting, which would let zeroed or grown buffers through unseen.
#[test]
fn counter_sees_every_allocator_entry_point() {
    let layout = Layout::from_size_align(64, 8).unwrap();
    let (p, allocs, frees) = measure(|| {
        // SAFETY: `layout` has a non-zero size.
        black_box(unsafe { std::alloc::alloc_zeroed(layout) })
    });
    assert!(!p.is_null());
    assert_eq!((allocs, frees), (1, 0), "alloc_zeroed is not counted");
    // SAFETY: `p` was allocated just above with `layout`, and is read within its 64 bytes.
    assert_eq!(unsafe { p.read() }, 0);
    let (p, allocs, frees) = measure(|| {
        // SAFETY: `p` came from this allocator with `layout`; 4096 is non-zero and, rounded
        // up to the alignment, does not overflow `isize`.
        black_box(unsafe { std::alloc::realloc(p, layout, 4096) })
    });
    assert!(!p.is_null());
    assert_eq!((allocs, frees), (1, 0), "realloc is not counted");
    let grown = Layout::from_size_align(4096, 8).unwrap();
    let ((), allocs, frees) = measure(|| {
        // SAFETY: `p` came from this allocator and now has the layout `grown`.
        unsafe { std::alloc::dealloc(black_box(p), grown) }
    });
    assert_eq!((allocs, frees), (0, 1), "dealloc is not counted");
    let (v, allocs, frees) = measure(|| black_box(vec![0u8; 1000]));
    assert_eq!((allocs, frees), (1, 0), "a zeroed vector is not counted");
    drop(v);
}

// kills: counters shared between threads (global statics): a measuring thread would be
// blamed for what another measuring thread allocates at the same time.
#[test]
fn counter_never_blames_another_measuring_thread() {
    static GO: AtomicBool = AtomicBool::new(false);
    static DONE: AtomicBool = AtomicBool::new(false);
    let other = std::thread::spawn(|| {
        while !GO.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        let ((), allocs, frees) = measure(|| {
            for i in 0..100u8 {
                drop(black_box(Box::new([i; 32])));
            }
        });
        DONE.store(true, Ordering::SeqCst);
        (allocs, frees)
    });
    // This thread measures the whole time the other one allocates, and allocates nothing.
    let ((), allocs, frees) = measure(|| {
        GO.store(true, Ordering::SeqCst);
        // (Stop waiting if the other thread died before saying it was done.)
        while !DONE.load(Ordering::SeqCst) && !other.is_finished() {
            std::hint::spin_loop();
        }
    });
    assert_eq!(other.join().unwrap(), (100, 100));
    assert_eq!(
        (allocs, frees),
        (0, 0),
        "blamed for another thread's allocations"
    );
}

/// What the measured run saw; checked after counting stops.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    suite_files: usize,
    suite_valid: usize,
    suite_frames: usize,
    suite_validated_frames: usize,
    suite_members: usize,
    suite_keys_decoded: usize,
    wrapped_lazy_first: usize,
    wrapped_validated_first: usize,
    wrapped_args_exact: usize,
    wrapped_lazy_last: usize,
    wrapped_validated_last: usize,
    bfcl_lines: usize,
    bfcl_validated_tool_calls: usize,
    bfcl_lazy_tool_calls: usize,
    bfcl_re_encoded_identical: usize,
    bfcl_short_buffer_refused: usize,
    bfcl_other_frames_encoded: usize,
    bfcl_framed_lines_identical: usize,
    framer_runs: usize,
    small_framer_lines: usize,
    small_framer_too_long: usize,
    typed_ok: usize,
}

#[derive(Deserialize)]
struct Args<'a> {
    city: &'a str,
    days: u8,
}

#[derive(Serialize)]
struct Forecast {
    high: i16,
    low: i16,
}

fn exercise_suite(files: &[(String, Vec<u8>)], t: &mut Tally) {
    for (_, bytes) in files {
        let bytes = bytes.as_slice();
        t.suite_files += 1;
        if json::validate(bytes, DEFAULT_MAX_DEPTH).is_ok() {
            t.suite_valid += 1;
        }
        if let Ok(frame) = Frame::parse(bytes) {
            t.suite_frames += 1;
            let _ = black_box(frame.tool_call());
            let _ = black_box(frame.tool_result());
            let _ = black_box(frame.error_message());
        }
        if Frame::parse_validated(bytes, DEFAULT_MAX_DEPTH).is_ok() {
            t.suite_validated_frames += 1;
        }
        if let Ok(members) = Members::new(bytes, 0, DEFAULT_MAX_DEPTH) {
            for m in members.flatten() {
                t.suite_members += 1;
                let mut buf = [0u8; 64];
                if let Ok(text) = m.key.decode_into(&mut buf) {
                    if m.key.eq_text(text.as_bytes()) && text.len() == m.key.decoded_len() {
                        t.suite_keys_decoded += 1;
                    }
                }
            }
        }
        // Every string value at the top of an array decodes (or reports its size).
        if let Some(b'[') = bytes.get(json::skip_ws(bytes, 0)) {
            let at = json::skip_ws(bytes, json::skip_ws(bytes, 0) + 1);
            if let Ok((s, _)) = JsonStr::parse_at(bytes, at) {
                let mut buf = [0u8; 16];
                let _ = black_box(s.decode_into(&mut buf));
            }
        }
    }
}

/// Each suite file as the `args` of a `TOOL_CALL`, with `type` first and last.
fn wrap(files: &[(String, Vec<u8>)]) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    files
        .iter()
        .map(|(_, bytes)| {
            let first = [
                &br#"{"type":"TOOL_CALL","content":{"name":"t","args":"#[..],
                bytes,
                b"}}",
            ]
            .concat();
            let last = [
                &br#"{"content":{"name":"t","args":"#[..],
                bytes,
                br#"},"type":"TOOL_CALL"}"#,
            ]
            .concat();
            let start = json::skip_ws(bytes, 0);
            let mut end = bytes.len();
            while end > start && matches!(bytes[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
                end -= 1;
            }
            (first, last, bytes[start..end].to_vec())
        })
        .collect()
}

fn exercise_wrapped(wrapped: &[(Vec<u8>, Vec<u8>, Vec<u8>)], t: &mut Tally) {
    for (first, last, trimmed) in wrapped {
        if let Ok(f) = Frame::parse(first) {
            if f.kind() == FrameKind::ToolCall {
                t.wrapped_lazy_first += 1;
            }
        }
        if let Ok(f) = Frame::parse_validated(first, DEFAULT_MAX_DEPTH) {
            t.wrapped_validated_first += 1;
            if let Ok(call) = f.tool_call() {
                if call.args == trimmed.as_slice() && call.name.is_some_and(|n| n.eq_text(b"t")) {
                    t.wrapped_args_exact += 1;
                }
            }
        }
        if let Ok(f) = Frame::parse(last) {
            if f.kind() == FrameKind::ToolCall {
                t.wrapped_lazy_last += 1;
            }
        }
        if Frame::parse_validated(last, DEFAULT_MAX_DEPTH).is_ok() {
            t.wrapped_validated_last += 1;
        }
    }
}

fn exercise_bfcl(file: &[u8], t: &mut Tally) {
    for line in ndjson_lines(file) {
        t.bfcl_lines += 1;
        let Ok(frame) = Frame::parse_validated(line, 32) else {
            continue;
        };
        let Ok(call) = frame.tool_call() else {
            continue;
        };
        if frame.kind() == FrameKind::ToolCall {
            t.bfcl_validated_tool_calls += 1;
        }
        if let Ok(lazy) = Frame::parse(line) {
            if lazy.kind() == FrameKind::ToolCall && lazy.tool_call() == Ok(call) {
                t.bfcl_lazy_tool_calls += 1;
            }
        }
        let mut id_buf = [0u8; 128];
        let mut name_buf = [0u8; 128];
        let id = match call.id.map(|id| id.decode_into(&mut id_buf)) {
            Some(Ok(id)) => Some(id.as_bytes()),
            _ => None,
        };
        let Some(Ok(name)) = call.name.map(|n| n.decode_into(&mut name_buf)) else {
            continue;
        };
        let name = name.as_bytes();
        let out_frame = OutFrame::ToolCall {
            id,
            name,
            args: call.args,
        };
        let mut out = [0u8; 2048];
        if let Ok(n) = out_frame.encode(&mut out) {
            if &out[..n] == line {
                t.bfcl_re_encoded_identical += 1;
            }
        }
        let mut short = [0u8; 64];
        if out_frame.encode(&mut short).is_err() {
            t.bfcl_short_buffer_refused += 1;
        }
        for other in [
            OutFrame::ToolResult {
                id,
                name: Some(name),
                outcome: CallOutcome::Result(call.args),
            },
            OutFrame::ToolResult {
                id,
                name: None,
                outcome: CallOutcome::Error(std::str::from_utf8(line).expect("BFCL is UTF-8")),
            },
            OutFrame::Text(line),
            OutFrame::Prompt {
                last_error: Some(name),
            },
            OutFrame::Error { message: name },
            OutFrame::RoundLimit { max_rounds: 7 },
            OutFrame::Cancel {
                id,
                name,
                reason: b"timeout",
            },
            OutFrame::End {
                content: Some(call.args),
            },
        ] {
            let mut buf = [0u8; 4096];
            if let Ok(n) = other.encode(&mut buf) {
                if n == other.encoded_len() && json::validate(&buf[..n], 34).is_ok() {
                    t.bfcl_other_frames_encoded += 1;
                }
            }
        }
    }
}

fn framer_pass(file: &[u8], storage: &mut [u8], seed: u64, max_chunk: usize, t: &mut Tally) {
    let capacity = storage.len();
    let mut framer = LineSplitter::new(storage);
    let mut rng = XorShift::new(seed);
    let mut want = ndjson_lines(file).filter(|l| l.len() <= capacity);
    let mut pos = 0;
    let (mut lines, mut too_long, mut identical) = (0, 0, 0);
    while pos < file.len() {
        let size = rng.in_1_to(max_chunk).min(file.len() - pos);
        let mut chunk = &file[pos..pos + size];
        pos += size;
        while !chunk.is_empty() {
            let used = framer.feed(chunk);
            if used == 0 {
                return; // no progress: the tally will show it
            }
            chunk = &chunk[used..];
            while let Some(item) = framer.next_line() {
                match item {
                    Ok(line) => {
                        lines += 1;
                        if Some(line) == want.next() {
                            identical += 1;
                        }
                    }
                    Err(_) => too_long += 1,
                }
            }
        }
    }
    if framer.finish().is_none() {
        t.framer_runs += 1;
    }
    if capacity >= polyweave_tests::BFCL_LONGEST_LINE {
        if lines == BFCL_LINES && identical == BFCL_LINES && too_long == 0 {
            t.bfcl_framed_lines_identical += 1;
        }
    } else if identical == lines {
        t.small_framer_lines += lines;
        t.small_framer_too_long += too_long;
    }
}

fn exercise_typed(t: &mut Tally) {
    if let Ok(args) = typed::parse_args::<Args>(br#"{"city":"Oslo","days":2}"#) {
        if args.city == "Oslo" && args.days == 2 {
            t.typed_ok += 1;
        }
    }
    if typed::parse_args::<Args>(br#"{"city":1}"#).is_err() {
        t.typed_ok += 1;
    }
    let mut out = [0u8; 32];
    if let Ok(n) = typed::write_result(&Forecast { high: 9, low: -2 }, &mut out) {
        if &out[..n] == br#"{"high":9,"low":-2}"# {
            t.typed_ok += 1;
        }
    }
    let mut tiny = [0u8; 4];
    if typed::write_result(&Forecast { high: 9, low: -2 }, &mut tiny).is_err() {
        t.typed_ok += 1;
    }
}

#[test]
fn core_never_allocates() {
    // Loading allocates: do it before counting.
    let bfcl = bfcl_bytes();
    let suite = json_suite_files();
    assert_eq!(suite.len(), 318);
    let wrapped = wrap(&suite);

    // The counter works: one allocation and one free are seen as such.
    let (boxed, allocs, frees) = measure(|| black_box(Box::new([7u8; 32])));
    assert_eq!((allocs, frees), (1, 0));
    let ((), allocs, frees) = measure(|| drop(black_box(boxed)));
    assert_eq!((allocs, frees), (0, 1));

    let (tally, allocs, frees) = measure(|| {
        let mut t = Tally::default();
        exercise_suite(&suite, &mut t);
        exercise_wrapped(&wrapped, &mut t);
        exercise_bfcl(&bfcl, &mut t);
        let mut storage = [0u8; 2048];
        framer_pass(&bfcl, &mut storage, 1, 1, &mut t);
        framer_pass(&bfcl, &mut storage, 2, 97, &mut t);
        framer_pass(&bfcl, &mut storage, 3, 5000, &mut t);
        let mut small = [0u8; 500];
        framer_pass(&bfcl, &mut small, 4, 700, &mut t);
        exercise_typed(&mut t);
        t
    });
    assert_eq!(
        (allocs, frees),
        (0, 0),
        "heap use while measuring; tally {tally:?}"
    );
    assert_eq!(
        tally,
        Tally {
            suite_files: 318,
            suite_valid: 115,
            suite_frames: 0,
            suite_validated_frames: 0,
            suite_members: 31,
            suite_keys_decoded: 31,
            // `type` first: read without looking at the args, whatever they are.
            wrapped_lazy_first: 318,
            wrapped_validated_first: 115,
            wrapped_args_exact: 115,
            // `type` last: the args before it are scanned, so only valid ones pass.
            wrapped_lazy_last: 115,
            wrapped_validated_last: 115,
            bfcl_lines: BFCL_LINES,
            bfcl_validated_tool_calls: BFCL_LINES,
            bfcl_lazy_tool_calls: BFCL_LINES,
            bfcl_re_encoded_identical: BFCL_LINES,
            bfcl_short_buffer_refused: BFCL_LINES,
            bfcl_other_frames_encoded: 8 * BFCL_LINES,
            bfcl_framed_lines_identical: 3,
            framer_runs: 4,
            small_framer_lines: BFCL_LINES - 35,
            small_framer_too_long: 35,
            typed_ok: 4,
        }
    );
}

/// What the measured run of the state machines saw.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct MachineTally {
    sync_intercepted: usize,
    sync_frames_out: usize,
    deferred_completed: usize,
    adapter_settled: usize,
    cancelled: usize,
    timed_out: usize,
    call_settled: usize,
}

/// Every BFCL call through a wrapper (sync echo), then deferred, adapter, cancel and timeout
/// paths, and a standalone `AdapterCall`, with host memory only. The host's clock and its
/// lean forms (`pop_frames`, `skip_events`, `advance_to_next_timeout`) allocate nothing; the
/// host itself (its buffer) is built before counting.
fn exercise_machines(lines: &[&[u8]], tools: &[Tool<'_>], host: &mut Host, t: &mut MachineTally) {
    let mut slots = [Slot::EMPTY; 4];
    let mut arena = [0u8; ARENA];
    let Ok(mut w) = Wrapper::new(CFG, tools, NoHooks, &mut slots, &mut arena) else {
        return;
    };
    for line in lines {
        if let Ok(Disposition::Intercepted { handle: None, .. }) =
            w.handle_response(host.advance(1), line)
        {
            t.sync_intercepted += 1;
        }
        t.sync_frames_out += host.pop_frames(&mut w, |_, _| {});
    }
    // Deferred and adapter calls through the slot path.
    let calls: [&[u8]; 4] = [
        br#"{"type":"TOOL_CALL","content":{"id":"d","name":"later","args":{"q":1}}}"#,
        br#"{"type":"TOOL_CALL","content":{"id":"a","name":"files","args":{"op":"ls"}}}"#,
        br#"{"type":"TOOL_CALL","content":{"id":"c","name":"later","args":{}}}"#,
        br#"{"type":"TOOL_CALL","content":{"id":"s","name":"files","args":{}}}"#,
    ];
    let mut handles = [None; 4];
    for (h, call) in handles.iter_mut().zip(calls) {
        if let Ok(Disposition::Intercepted { handle, .. }) = w.handle_response(host.now(), call) {
            *h = handle;
        }
    }
    let _ = w.handle_response(host.now(), br#"{"type":"END"}"#);
    host.skip_events(&mut w);
    if let Some(h) = handles[0] {
        if w.complete(host.advance(1), h, Ok(br#"{"ok":true}"#))
            .is_ok()
        {
            t.deferred_completed += 1;
        }
    }
    if let Some(h) = handles[1] {
        let r = br#"{"type":"TOOL_RESULT","content":{"result":[1,2]}}"#;
        let ok = w.handle_adapter_frame(host.advance(1), h, r) == Ok(())
            && w.handle_adapter_closed(host.advance(1), h) == Ok(());
        if ok {
            t.adapter_settled += 1;
        }
    }
    if w.cancel(host.advance(1), "stop") == Ok(0) && w.pending() == 0 {
        t.cancelled += 2;
    }
    let _ = w.handle_response(host.advance(1), calls[2]);
    // Its deadline: 30 s after it started.
    if host.advance_to_next_timeout(&mut w) == Some(host.now()) && w.pending() == 0 {
        t.timed_out += 1;
    }
    host.pop_frames(&mut w, |_, _| {});
    // A standalone call.
    let mut result = [0u8; 256];
    let mut out = [0u8; 4096];
    let opts = CallOptions {
        name: "search",
        ..CallOptions::DEFAULT
    };
    if let Ok(mut call) =
        AdapterCall::start(Instant::ZERO, opts, Some("q"), br#"{"q":1}"#, &mut result)
    {
        let _ = call.poll_transmit(&mut out);
        let _ = call.handle_frame(
            Instant::from_millis(1),
            br#"{"type":"TOOL_RESULT","content":{"result":"x"}}"#,
        );
        let _ = call.handle_frame(Instant::from_millis(2), br#"{"type":"END"}"#);
        if call.outcome() == Some(CallOutcome::Result(br#""x""#)) {
            t.call_settled += 1;
        }
    }
}

const CFG: WrapperConfig = WrapperConfig {
    args_cap: 2048,
    result_cap: 2048,
    ..WrapperConfig::DEFAULT
};
const ARENA: usize = CFG.arena_len(4);

#[test]
fn state_machines_never_allocate() {
    // Building the inputs and the tool list allocates: do it before counting.
    let bfcl = bfcl_bytes();
    let lines: Vec<&[u8]> = ndjson_lines(&bfcl).collect();
    let mut names: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let f = Frame::parse_validated(l, DEFAULT_MAX_DEPTH).ok()?;
            let mut buf = [0u8; 256];
            Some(
                f.tool_call()
                    .ok()?
                    .name?
                    .decode_into(&mut buf)
                    .ok()?
                    .to_owned(),
            )
        })
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 1147);
    let mut tools: Vec<Tool<'_>> = names.iter().map(|n| Tool::sync(n, &echo)).collect();
    tools.push(Tool::deferred("later"));
    tools.push(Tool::adapter("files"));

    let mut host = Host::with_buffer(4096);

    let (tally, allocs, frees) = measure(|| {
        let mut t = MachineTally::default();
        exercise_machines(&lines, &tools, &mut host, &mut t);
        t
    });
    assert_eq!(
        (allocs, frees),
        (0, 0),
        "heap use while measuring; {tally:?}"
    );
    assert_eq!(
        tally,
        MachineTally {
            sync_intercepted: BFCL_LINES,
            // TOOL_RESULT and the prompt to the model, the prompt to the consumer.
            sync_frames_out: 3 * BFCL_LINES,
            deferred_completed: 1,
            adapter_settled: 1,
            cancelled: 2,
            timed_out: 1,
            call_settled: 1,
        }
    );
}
