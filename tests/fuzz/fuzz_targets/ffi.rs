//! Sequences of operations from bytes through the C ABI, called as C would call it, with bad
//! arguments mixed in: NULL pointers, misaligned and too-small memory, buffers too small,
//! clocks that go backwards, handles that are stale, made up or from another wrapper.
//! Checked: no call panics (`PW_PANIC` never comes back), bad arguments get their own codes,
//! the pending count stays within the slots, every frame written is one JSON line (a released
//! `END` is one the host gave and is held, relayed byte for byte: a pass-through frame is read
//! only as far as its `type`, SPEC §1), and every call the model makes gets exactly one
//! `TOOL_RESULT` once the host cancels and drains.
#![no_main]

use core::ffi::c_void;
use std::mem::MaybeUninit;
use std::ptr;

use libfuzzer_sys::fuzz_target;
use polyweave_tool_adapter_ffi::*;
use polyweave_tool_adapter_ffi::{
    pw_disposition_kind::*, pw_route::*, pw_tool_kind::*, pw_tool_status::*,
};

/// Reads choices from the fuzzer's bytes; zeros once they run out.
struct Bytes<'d>(&'d [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }
    fn below(&mut self, n: usize) -> usize {
        self.byte() as usize % n
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
}

unsafe extern "C" fn echo(_: *mut c_void, args: pw_str, out: *mut pw_writer) -> u32 {
    // SAFETY: the library hands a live writer and readable args.
    unsafe { pw_writer_write(out, args.ptr, args.len) };
    PW_TOOL_STATUS_OK as u32
}

unsafe extern "C" fn boom(_: *mut c_void, _: pw_str, out: *mut pw_writer) -> u32 {
    let m = b"bo\"om\n";
    // SAFETY: as in `echo`.
    unsafe { pw_writer_write(out, m.as_ptr(), m.len()) };
    PW_TOOL_STATUS_FAILED as u32
}

fn lit(s: &'static str) -> pw_str {
    pw_str {
        ptr: s.as_ptr(),
        len: s.len(),
    }
}

const CALLS: [&str; 8] = [
    r#"{"type":"TOOL_CALL","content":{"id":"a","name":"echo","args":{"x":[1, 2]}}}"#,
    r#"{"type":"TOOL_CALL","content":{"id":"b","name":"boom"}}"#,
    r#"{"type":"TOOL_CALL","content":{"id":"c","name":"later","args":{"n":1}}}"#,
    r#"{"type":"TOOL_CALL","content":{"id":"d","name":"files","args":[1,2]}}"#,
    r#"{"type":"TOOL_CALL","content":{"name":"later"}}"#,
    r#"{"type":"TOOL_CALL","content":{"id":"c","name":"files"}}"#,
    r#"{"type":"TOOL_CALL","content":{"id":"\u0001\ud800","name":"nope"}}"#,
    r#"{"type":"TOOL_CALL","content":{"name":5}}"#,
];
const OTHER: [&str; 4] = [
    r#"{"type":"END"}"#,
    r#"{"type":"TEXT","content":"hi"}"#,
    r#"{"type":"END","content":{"a" : 1}}"#,
    r#"{"type":"TEXT","type":"END"}"#,
];
const ADAPTER: [&str; 5] = [
    r#"{"type":"TOOL_RESULT","content":{"result":{"ok":true}}}"#,
    r#"{"type":"END"}"#,
    r#"{"type":"ERROR","content":{"message":"down"}}"#,
    r#"{"type":"TEXT","content":"working"}"#,
    r#"{"type":"TOOL_RESULT","content":{"error":"no"}}"#,
];
const RESULTS: [(u8, &str); 5] = [
    (0, r#"{"a":1}"#),
    (0, "not json"),
    (1, "it failed"),
    (
        0,
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    ),
    (1, ""),
];

/// A block aligned for the wrapper.
struct Block(Vec<u64>);

impl Block {
    fn bytes(&mut self) -> (*mut c_void, usize) {
        (self.0.as_mut_ptr().cast(), self.0.len() * 8)
    }
}

fn ok_or_known(r: pw_result, what: &str) {
    assert_ne!(r, pw_result::PW_PANIC, "{what} panicked");
}

impl Run {
    /// An input given `self.now` came back `r`: the wrapper's clock moved when it was taken.
    fn timed(&mut self, r: pw_result, what: &str) {
        ok_or_known(r, what);
        if r == pw_result::PW_OK {
            self.seen = self.now;
        }
    }
}

struct Run {
    w: *mut pw_wrapper,
    slots: usize,
    now: u64,
    /// The latest time an input was accepted at: the wrapper's clock.
    seen: u64,
    handles: Vec<pw_call_handle>,
    intercepted: usize,
    results: usize,
    /// `END`s the wrapper held, as given: released, they come back as they are.
    held: Vec<Vec<u8>>,
}

impl Run {
    fn respond(&mut self, frame: &[u8]) -> pw_result {
        let mut d = MaybeUninit::<pw_disposition>::uninit();
        // SAFETY: valid pointers; the frame is outside the wrapper's block.
        let r = unsafe {
            pw_wrapper_handle_response(
                self.w,
                self.now,
                frame.as_ptr(),
                frame.len(),
                d.as_mut_ptr(),
            )
        };
        self.timed(r, "handle_response");
        if r == pw_result::PW_OK {
            // SAFETY: written on PW_OK.
            let d = unsafe { d.assume_init() };
            if d.kind == PW_DISPOSITION_HELD {
                self.held.push(frame.to_vec());
            }
            if d.kind == PW_DISPOSITION_INTERCEPTED {
                self.intercepted += 1;
                if d.has_handle == 1 {
                    self.handles.push(d.handle);
                }
            }
        }
        r
    }

    fn handle(&self, b: &mut Bytes<'_>) -> pw_call_handle {
        match (b.below(4), self.handles.len()) {
            (0, _) | (_, 0) => pw_call_handle {
                index: b.byte() as u32 % 8,
                slot: b.byte() as u16 % 5,
                reserved: 0,
                owner: self.w as usize,
            },
            (1, n) => pw_call_handle {
                owner: self.w as usize + 8,
                ..self.handles[b.below(n)]
            },
            (_, n) => self.handles[n - 1 - b.below(n)],
        }
    }

    fn drain(&mut self, cap: usize) -> pw_result {
        let mut buf = vec![0u8; cap];
        loop {
            let mut t = MaybeUninit::<pw_transmit>::uninit();
            // SAFETY: valid pointers, `buf` outside the block.
            let r =
                unsafe { pw_wrapper_poll_transmit(self.w, buf.as_mut_ptr(), cap, t.as_mut_ptr()) };
            ok_or_known(r, "poll_transmit");
            if r != pw_result::PW_OK {
                return r;
            }
            // SAFETY: written on PW_OK.
            let t = unsafe { t.assume_init() };
            let frame = &buf[..t.len];
            assert!(!frame.contains(&b'\n'), "a frame spans lines");
            if t.route == PW_ROUTE_CONSUMER && self.held.iter().any(|h| h == frame) {
                continue;
            }
            let v: serde_json::Value = serde_json::from_slice(frame)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(frame)));
            if t.route == PW_ROUTE_MODEL && v["type"] == "TOOL_RESULT" {
                self.results += 1;
            }
        }
    }

    fn pending(&self) -> usize {
        // SAFETY: a live wrapper.
        unsafe { pw_wrapper_pending(self.w) }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let mut index = [0u32; 32];
    let tools = [
        pw_tool {
            name: lit("echo"),
            kind: PW_TOOL_KIND_SYNC as u32,
            timeout_ms: PW_TOOL_DEFAULT_TIMEOUT,
            call: Some(echo),
            userdata: ptr::null_mut(),
            schema: lit(""),
            schema_index: ptr::null_mut(),
            schema_index_words: 0,
        },
        pw_tool {
            name: lit("boom"),
            kind: PW_TOOL_KIND_SYNC as u32,
            timeout_ms: PW_TOOL_DEFAULT_TIMEOUT,
            call: Some(boom),
            userdata: ptr::null_mut(),
            schema: lit(""),
            schema_index: ptr::null_mut(),
            schema_index_words: 0,
        },
        pw_tool {
            name: lit("later"),
            kind: PW_TOOL_KIND_DEFERRED as u32,
            timeout_ms: 30,
            call: None,
            userdata: ptr::null_mut(),
            // A schema on one tool: the fuzzed args go through the validator too.
            schema: lit(r#"{"properties":{"q":{"type":"integer","minimum":1}}}"#),
            // Its index: the validator reads the keywords from there.
            schema_index: index.as_mut_ptr(),
            schema_index_words: index.len(),
        },
        pw_tool {
            name: lit("files"),
            kind: PW_TOOL_KIND_ADAPTER as u32,
            timeout_ms: PW_TOOL_DEFAULT_TIMEOUT,
            call: None,
            userdata: ptr::null_mut(),
            schema: lit(""),
            schema_index: ptr::null_mut(),
            schema_index_words: 0,
        },
    ];
    let mut cfg = MaybeUninit::<pw_wrapper_config>::uninit();
    // SAFETY: valid for one write.
    assert_eq!(
        unsafe { pw_wrapper_config_default(cfg.as_mut_ptr()) },
        pw_result::PW_OK
    );
    // SAFETY: written on PW_OK.
    let mut cfg = unsafe { cfg.assume_init() };
    if b.byte() & 1 == 1 {
        // Tiny capacities, so that every limit is reachable.
        cfg.name_cap = 8;
        cfg.id_cap = 8;
        cfg.args_cap = 16;
        cfg.result_cap = 16;
        cfg.message_cap = 72;
        cfg.trace_entries = 2;
        cfg.trace_bytes = 96;
        cfg.held_bytes = 32;
    }
    cfg.full_validation = b.byte() & 1;
    cfg.mirror_continue = b.byte() & 1;
    cfg.max_rounds = b.below(3) as u32;
    let slots = b.below(4);
    let mut size = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_wrapper_size(&cfg, slots, tools.len(), &mut size) },
        pw_result::PW_OK
    );
    let mut block = Block(vec![0; size.div_ceil(8) + 1]);
    let (mem, len) = block.bytes();
    let mut w = ptr::null_mut();
    let hooks = pw_hooks {
        userdata: ptr::null_mut(),
        on_tool_call: None,
        on_tool_result: None,
    };
    let init = |mem: *mut c_void, len: usize, out: *mut *mut pw_wrapper| {
        // SAFETY: `mem` is in `block` (or NULL) for `len` bytes; the others are valid.
        unsafe {
            pw_wrapper_init(
                mem,
                len,
                &cfg,
                slots,
                tools.as_ptr(),
                tools.len(),
                &hooks,
                out,
            )
        }
    };
    // Bad memory first: each gets its own code and nothing is written.
    // SAFETY (of the pointer arithmetic): one byte into the block.
    let odd = unsafe { mem.cast::<u8>().add(1) }.cast::<c_void>();
    assert_eq!(init(odd, size, &mut w), pw_result::PW_STORAGE_MISALIGNED);
    assert_eq!(init(mem, size - 1, &mut w), pw_result::PW_STORAGE_TOO_SMALL);
    assert_eq!(
        init(ptr::null_mut(), size, &mut w),
        pw_result::PW_NULL_POINTER
    );
    assert_eq!(init(mem, size, ptr::null_mut()), pw_result::PW_NULL_POINTER);
    assert!(w.is_null());
    assert_eq!(init(mem, len, &mut w), pw_result::PW_OK);
    let mut run = Run {
        w,
        slots,
        now: 0,
        seen: 0,
        handles: Vec::new(),
        intercepted: 0,
        results: 0,
        held: Vec::new(),
    };

    while !b.0.is_empty() {
        match b.below(14) {
            0 | 1 => {
                let frame = CALLS[b.below(CALLS.len())];
                run.respond(frame.as_bytes());
            }
            2 => {
                let n = b.below(48);
                let raw = b.take(n).to_vec();
                run.respond(&raw);
            }
            3 => {
                run.respond(OTHER[b.below(OTHER.len())].as_bytes());
            }
            4 => {
                let h = run.handle(&mut b);
                let (is_error, text) = RESULTS[b.below(RESULTS.len())];
                let o = pw_outcome {
                    is_error,
                    text: pw_str {
                        ptr: text.as_ptr(),
                        len: text.len(),
                    },
                };
                let mut how = u32::MAX;
                // SAFETY: valid pointers.
                let r = unsafe {
                    pw_wrapper_complete(
                        run.w,
                        run.now,
                        h,
                        &o,
                        (&raw mut how).cast::<pw_completed>(),
                    )
                };
                run.timed(r, "complete");
            }
            5 => {
                let h = run.handle(&mut b);
                let f = ADAPTER[b.below(ADAPTER.len())];
                // SAFETY: valid pointers.
                let r = unsafe {
                    pw_wrapper_handle_adapter_frame(run.w, run.now, h, f.as_ptr(), f.len())
                };
                run.timed(r, "handle_adapter_frame");
            }
            6 => {
                let h = run.handle(&mut b);
                // SAFETY: a live wrapper.
                let r = unsafe { pw_wrapper_handle_adapter_closed(run.w, run.now, h) };
                run.timed(r, "handle_adapter_closed");
            }
            7 => {
                match b.below(4) {
                    // A clock that goes backwards is refused on every input.
                    0 if run.seen > 0 => {
                        // SAFETY: a live wrapper.
                        let r = unsafe { pw_wrapper_handle_timeout(run.w, run.seen - 1) };
                        assert_eq!(r, pw_result::PW_CLOCK_WENT_BACKWARDS);
                    }
                    _ => {
                        run.now += b.below(50) as u64;
                        // SAFETY: a live wrapper.
                        let r = unsafe { pw_wrapper_handle_timeout(run.w, run.now) };
                        run.timed(r, "handle_timeout");
                    }
                }
            }
            8 => {
                let reason = [
                    "stop",
                    "",
                    "\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}",
                ][b.below(3)];
                let mut left = usize::MAX;
                // SAFETY: valid pointers.
                let r = unsafe {
                    pw_wrapper_cancel(run.w, run.now, reason.as_ptr(), reason.len(), &mut left)
                };
                run.timed(r, "cancel");
            }
            9 => {
                // SAFETY: a live wrapper.
                let r = match b.below(2) {
                    0 => unsafe { pw_wrapper_abort(run.w) },
                    _ => unsafe { pw_wrapper_clear_trace(run.w) },
                };
                assert_eq!(r, pw_result::PW_OK);
            }
            10 => {
                let cap = b.below(200);
                let r = run.drain(cap);
                assert!(
                    matches!(r, pw_result::PW_NOTHING | pw_result::PW_BUFFER_TOO_SMALL),
                    "{r:?}"
                );
            }
            11 => {
                let mut e = MaybeUninit::<pw_event>::uninit();
                // SAFETY: valid pointers.
                let r = unsafe { pw_wrapper_poll_event(run.w, e.as_mut_ptr()) };
                assert!(
                    matches!(r, pw_result::PW_OK | pw_result::PW_NOTHING),
                    "{r:?}"
                );
            }
            12 => {
                // NULL where a pointer is required: refused, nothing changes.
                let mut t = MaybeUninit::<pw_transmit>::uninit();
                let mut e = MaybeUninit::<pw_trace_entry>::uninit();
                // SAFETY: NULL pointers are what is being checked; the others are valid.
                let codes = unsafe {
                    [
                        pw_wrapper_handle_response(
                            ptr::null_mut(),
                            run.now,
                            b"{}".as_ptr(),
                            2,
                            ptr::null_mut(),
                        ),
                        pw_wrapper_handle_response(run.w, run.now, ptr::null(), 5, ptr::null_mut()),
                        pw_wrapper_poll_transmit(run.w, ptr::null_mut(), 64, t.as_mut_ptr()),
                        pw_wrapper_poll_transmit(run.w, [0u8; 4].as_mut_ptr(), 4, ptr::null_mut()),
                        pw_wrapper_trace_entry(ptr::null_mut(), 0, e.as_mut_ptr()),
                        pw_wrapper_abort(ptr::null_mut()),
                        pw_wrapper_handle_timeout(ptr::null_mut(), run.now),
                    ]
                };
                assert!(
                    codes.iter().all(|&c| c == pw_result::PW_NULL_POINTER),
                    "{codes:?}"
                );
            }
            _ => {
                let mut e = MaybeUninit::<pw_trace_entry>::uninit();
                let index = b.below(6);
                // SAFETY: valid pointers.
                let r = unsafe { pw_wrapper_trace_entry(run.w, index, e.as_mut_ptr()) };
                assert!(
                    matches!(r, pw_result::PW_OK | pw_result::PW_NOTHING),
                    "{r:?}"
                );
            }
        }
        assert!(
            run.pending() <= run.slots,
            "{} pending in {} slots",
            run.pending(),
            run.slots
        );
    }
    // The host drains, cancels until nothing is left, and drains: every call the model made
    // has had exactly one TOOL_RESULT.
    assert_eq!(run.drain(1 << 16), pw_result::PW_NOTHING);
    loop {
        let mut left = usize::MAX;
        // SAFETY: valid pointers.
        let r = unsafe { pw_wrapper_cancel(run.w, run.now, b"end".as_ptr(), 3, &mut left) };
        assert_eq!(r, pw_result::PW_OK);
        assert_eq!(run.drain(1 << 16), pw_result::PW_NOTHING);
        if left == 0 {
            break;
        }
    }
    assert_eq!(run.pending(), 0);
    assert_eq!(
        run.results, run.intercepted,
        "TOOL_RESULTs against calls intercepted"
    );
});
