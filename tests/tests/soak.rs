//! Soak: millions of random operations through one wrapper with small capacities.
//!
//! A careless host and a hostile model: tool calls of every kind (some malformed, some over
//! the caps, duplicate ids), text, `END`s, garbage; completions and adapter frames for live,
//! stale and made-up handles; clocks that stand still, jump, and (refused) go backwards;
//! cancels; `poll_transmit` with buffers of random sizes, and draining that sometimes waits
//! for several inputs. After every step: the wrapper allocated nothing (a counting allocator
//! measures each call), the pending count is within the slots, every frame written is one
//! JSON line, and a refusal's error is one the input can get. At the end the host drains and
//! cancels: every call the model made got exactly one `TOOL_RESULT`, every held `END` came
//! out once and in order, and the wrapper behaves exactly like a fresh one on a follow-up.
//!
//! `soak_short` (500,000 operations) runs in the test command; the ten-million-operation run
//! is `cargo test --release -p polyweave-tests --test soak -- --ignored`
//! (tests/README.md "Reliability").

use std::collections::VecDeque;

use polyweave_tests::alloc_count::{measure, Counting};
use polyweave_tests::drive::echo;
use polyweave_tests::{is_spec_refusal, XorShift};
use polyweave_tool_adapter::json;
use polyweave_tool_adapter::CallError;
use polyweave_tool_adapter::{
    CallHandle, Disposition, Error, Instant, NoHooks, ResultWriter, Route, Slot, Tool, ToolFailed,
    Wrapper, WrapperConfig,
};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn fail(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(b"it \"broke\"\n");
    Err(ToolFailed)
}

const CFG: WrapperConfig = WrapperConfig {
    tool_timeout_ms: 40,
    name_cap: 16,
    id_cap: 8,
    args_cap: 48,
    result_cap: 48,
    message_cap: 80,
    trace_entries: 3,
    trace_bytes: 200,
    held_bytes: 48,
    ..WrapperConfig::DEFAULT
};
const SLOTS: usize = 3;

/// Model frames, built once (the loop itself allocates nothing it measures).
fn model_frames() -> Vec<Vec<u8>> {
    let mut f: Vec<String> = Vec::new();
    for name in [
        "echo",
        "fail",
        "later",
        "files",
        "nope",
        "a-name-too-long-for-16",
    ] {
        for id in [
            None,
            Some("a"),
            Some("b"),
            Some("\\u0001\\ud800"),
            Some("too-long-id"),
        ] {
            for args in [
                "",
                r#","args":{"n" : [1, 2]}"#,
                r#","args":"0123456789012345678901234567890123456789012345678""#,
            ] {
                let id = id.map_or(String::new(), |i| format!(r#""id":"{i}","#));
                f.push(format!(
                    r#"{{"type":"TOOL_CALL","content":{{{id}"name":"{name}"{args}}}}}"#
                ));
            }
        }
    }
    f.extend(
        [
            r#"{"type":"TOOL_CALL","content":{"name":5}}"#,
            r#"{"type":"TOOL_CALL"}"#,
            r#"{"type":"TEXT","content":"hello"}"#,
            r#"{"type":"END"}"#,
            r#"{"type":"END","n":1}"#,
            r#"{"type":"END","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#,
            r#"{"type":"ERROR","content":{"message":"x"}}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"echo","args":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}"#,
            "not json",
            r#"{"type":"TEXT""#,
            "",
        ]
        .map(String::from),
    );
    f.into_iter().map(String::into_bytes).collect()
}

const ADAPTER: [&[u8]; 6] = [
    br#"{"type":"TOOL_RESULT","content":{"result":{"ok":true}}}"#,
    br#"{"type":"TOOL_RESULT","content":{"result":"0123456789012345678901234567890123456789012345678"}}"#,
    br#"{"type":"END"}"#,
    br#"{"type":"ERROR","content":{"message":"down"}}"#,
    br#"{"type":"TEXT","content":"working"}"#,
    b"{broken",
];

const RESULTS: [Result<&[u8], &str>; 5] = [
    Ok(br#"{"a" : 1}"#),
    Ok(b"not json"),
    Err("it failed"),
    Ok(br#""0123456789012345678901234567890123456789012345678""#),
    Err(""),
];

/// What the host saw.
#[derive(Default)]
struct Seen {
    intercepted: u64,
    results: u64,
    held: VecDeque<Vec<u8>>,
    released: u64,
    frames: u64,
    refusals: u64,
}

fn new_wrapper<'a>(
    tools: &'a [Tool<'a>],
    slots: &'a mut [Slot],
    arena: &'a mut [u8],
) -> Wrapper<'a> {
    Wrapper::new(CFG, tools, NoHooks, slots, arena).expect("a valid configuration")
}

/// Takes frames with a buffer of `cap` bytes until the queue is empty or the buffer is too
/// small; checks each frame. Returns the frames taken.
fn drain(w: &mut Wrapper<'_>, buf: &mut [u8], cap: usize, seen: &mut Seen) -> usize {
    let mut n = 0;
    loop {
        let (r, allocs, _) = measure(|| w.poll_transmit(&mut buf[..cap]));
        assert_eq!(allocs, 0, "poll_transmit allocated");
        let t = match r {
            Ok(Some(t)) => t,
            Ok(None) => return n,
            Err(e) => {
                assert!(e.needed > cap);
                return n;
            }
        };
        n += 1;
        seen.frames += 1;
        let frame = &buf[..t.len];
        if t.route == Route::Consumer && frame.starts_with(br#"{"type":"END""#) {
            // A released END: the model's own bytes, in the order they were held.
            let want = seen.held.pop_front().expect("an END was held");
            assert_eq!(frame, &want[..], "released END out of order");
            seen.released += 1;
            continue;
        }
        assert!(!frame.contains(&b'\n'), "a frame spans lines");
        assert_eq!(
            json::validate(frame, 64),
            Ok(()),
            "{}",
            String::from_utf8_lossy(frame)
        );
        if t.route == Route::Model && frame.starts_with(br#"{"type":"TOOL_RESULT""#) {
            seen.results += 1;
        }
    }
}

fn soak(ops: u64, seed: u64) {
    let tools = [
        Tool::sync("echo", &echo),
        Tool::sync("fail", &fail),
        Tool::deferred("later").with_timeout_ms(25),
        Tool::adapter("files"),
    ];
    let frames = model_frames();
    let mut slots = [Slot::EMPTY; SLOTS];
    let mut arena = vec![0u8; CFG.arena_len(SLOTS)];
    let mut w = new_wrapper(&tools, &mut slots, &mut arena);
    let mut rng = XorShift::new(seed);
    let mut buf = vec![0u8; 1024];
    let mut handles = [None::<CallHandle>; 8];
    let mut seen = Seen::default();
    let mut now = 0u64;
    for step in 0..ops {
        let r = rng.next_u64();
        let pick = |n: u64| ((r >> 8) % n) as usize;
        let handle = match handles[pick(8)] {
            Some(h) if r & 3 != 0 => h,
            // Made up: a slot and an index nobody may have had.
            _ => CallHandle::from_parts((r >> 20) as u16 % 4, (r >> 30) as u32 % 64),
        };
        let t = Instant::from_millis(now);
        let result = match r % 100 {
            0..=39 => {
                let frame = &frames[pick(frames.len() as u64)];
                let (d, allocs, _) = measure(|| w.handle_response(t, frame));
                assert_eq!(allocs, 0, "handle_response allocated");
                match d {
                    Ok(Disposition::Intercepted { handle, .. }) => {
                        seen.intercepted += 1;
                        if let Some(h) = handle {
                            handles[h.slot() as usize % 8] = Some(h);
                        }
                    }
                    Ok(Disposition::Held) => seen.held.push_back(frame.clone()),
                    _ => {}
                }
                d.map(|_| ())
            }
            40..=47 => {
                let frame = &frames[pick(frames.len() as u64)];
                let (d, allocs, _) = measure(|| w.handle_request(t, frame));
                assert_eq!(allocs, 0);
                d.map(|_| ())
            }
            48..=59 => {
                let outcome = RESULTS[pick(RESULTS.len() as u64)];
                let (c, allocs, _) = measure(|| w.complete(t, handle, outcome));
                assert_eq!(allocs, 0, "complete allocated");
                c.map(|_| ())
            }
            60..=69 => {
                let frame = ADAPTER[pick(ADAPTER.len() as u64)];
                let (c, allocs, _) = measure(|| w.handle_adapter_frame(t, handle, frame));
                assert_eq!(allocs, 0, "handle_adapter_frame allocated");
                c
            }
            70..=71 => {
                let (c, allocs, _) = measure(|| w.handle_adapter_closed(t, handle));
                assert_eq!(allocs, 0);
                c
            }
            72..=79 => {
                now += pick(30) as u64;
                let (c, allocs, _) = measure(|| w.handle_timeout(Instant::from_millis(now)));
                assert_eq!(allocs, 0, "handle_timeout allocated");
                c
            }
            80 if now > 0 && w.now().as_millis() > 0 => {
                let back = Instant::from_millis(w.now().as_millis() - 1);
                let (c, allocs, _) = measure(|| w.handle_response(back, b"{\"type\":\"END\"}"));
                assert_eq!(allocs, 0);
                assert!(matches!(c, Err(Error::ClockWentBackwards(_))), "{c:?}");
                Ok(())
            }
            81 => {
                let reason = ["stop", "", "\u{1}\u{1}\u{1}"][pick(3)];
                let (c, allocs, _) = measure(|| w.cancel(t, reason));
                assert_eq!(allocs, 0, "cancel allocated");
                c.map(|_| ())
            }
            82 => {
                let ((), allocs, _) = measure(|| w.clear_trace());
                assert_eq!(allocs, 0);
                Ok(())
            }
            83 if step * 100 > ops * 99 => {
                w.abort();
                Ok(())
            }
            _ => {
                // Draining, with a buffer of any size (a short one keeps the frame queued).
                let cap = match r & 1 {
                    0 => pick(buf.len() as u64 + 1),
                    _ => buf.len(),
                };
                drain(&mut w, &mut buf, cap, &mut seen);
                Ok(())
            }
        };
        if let Err(e) = result {
            assert!(is_spec_refusal(&e), "step {step}: unexpected {e:?}");
            seen.refusals += 1;
        }
        assert!(w.pending() <= SLOTS, "step {step}: {} pending", w.pending());
    }
    // The host drains and cancels until nothing is pending, then drains again.
    drain(&mut w, &mut buf, 1024, &mut seen);
    while w.pending() > 0 {
        let left = w
            .cancel(Instant::from_millis(now), "end")
            .expect("a drained queue takes it");
        drain(&mut w, &mut buf, 1024, &mut seen);
        assert_eq!(left, 0, "a drained queue ends every pending call at once");
    }
    assert_eq!(w.queued(), 0);
    assert_eq!(seen.results, seen.intercepted, "one TOOL_RESULT per call");
    assert!(
        seen.held.is_empty(),
        "{} held ENDs never released",
        seen.held.len()
    );
    assert!(seen.intercepted > ops / 10 && seen.released > 0 && seen.refusals > 0);
    println!(
        "{ops} operations: {} calls, {} frames, {} ENDs held and released, {} refusals",
        seen.intercepted, seen.frames, seen.released, seen.refusals
    );

    // As good as new: the same follow-up on a fresh wrapper writes the same bytes.
    w.clear_trace();
    let mut fresh_slots = [Slot::EMPTY; SLOTS];
    let mut fresh_arena = vec![0u8; CFG.arena_len(SLOTS)];
    let mut fresh = new_wrapper(&tools, &mut fresh_slots, &mut fresh_arena);
    if w.is_aborted() {
        fresh.abort();
    }
    assert_eq!(w.queue_capacity(), fresh.queue_capacity());
    let follow_up = |w: &mut Wrapper<'_>| -> Vec<String> {
        let t = Instant::from_millis(now + 1000);
        let mut out = Vec::new();
        let mut b = [0u8; 1024];
        let mut take = |w: &mut Wrapper<'_>, out: &mut Vec<String>| {
            while let Some(tx) = w.poll_transmit(&mut b).unwrap() {
                out.push(format!(
                    "{:?} {}",
                    tx.route,
                    String::from_utf8_lossy(&b[..tx.len])
                ));
            }
        };
        let d = w
            .handle_response(
                t,
                br#"{"type":"TOOL_CALL","content":{"id":"x","name":"later"}}"#,
            )
            .unwrap();
        let Disposition::Intercepted {
            handle: Some(h), ..
        } = d
        else {
            panic!("{d:?}")
        };
        w.handle_response(t, br#"{"type":"END"}"#).unwrap();
        w.handle_response(
            t,
            br#"{"type":"TOOL_CALL","content":{"id":"y","name":"echo","args":[1]}}"#,
        )
        .unwrap();
        take(w, &mut out);
        w.complete(t, h, Ok(b"2")).unwrap();
        take(w, &mut out);
        assert_eq!(
            w.complete(t, h, Ok(b"3")),
            Err(Error::Call(CallError::Completed))
        );
        out.push(format!(
            "{} pending, trace {}",
            w.pending(),
            w.trace().len()
        ));
        out
    };
    assert_eq!(follow_up(&mut w), follow_up(&mut fresh));
}

#[test]
fn soak_short() {
    soak(500_000, 1);
}

#[test]
#[ignore = "ten million operations: run with --release (tests/README.md \"Reliability\")"]
fn soak_ten_million() {
    soak(10_000_000, 2);
}
