//! The wrapper's C ABI, called from Rust as C would call it: every input and output, and
//! every kind of bad argument with its own code and the wrapper still usable afterwards.

use core::ffi::c_void;
use std::ptr;

use polyweave_tool_adapter_ffi::*;
use polyweave_tool_adapter_ffi::{
    pw_completed::*, pw_disposition_kind::*, pw_pending_kind::*, pw_route::*, pw_tool_kind::*,
    pw_tool_status::*,
};

mod support;

use support::{span, text, written};

/// A memory block aligned for the wrapper (`u64`s; `pw_wrapper_align()` is at most 8 here).
struct Block(Vec<u64>);

impl Block {
    fn new(bytes: usize) -> Self {
        Block(vec![0; bytes.div_ceil(8) + 1])
    }
    fn ptr(&mut self) -> *mut c_void {
        self.0.as_mut_ptr().cast()
    }
    fn len(&self) -> usize {
        (self.0.len() - 1) * 8
    }
}

unsafe extern "C" fn echo(_: *mut c_void, args: pw_str, out: *mut pw_writer) -> u32 {
    // SAFETY: the library hands a live writer and readable args.
    unsafe { pw_writer_write(out, args.ptr, args.len) };
    PW_TOOL_STATUS_OK as u32
}

unsafe extern "C" fn boom(_: *mut c_void, _: pw_str, out: *mut pw_writer) -> u32 {
    let m = b"boom";
    // SAFETY: as in `echo`.
    unsafe { pw_writer_write(out, m.as_ptr(), m.len()) };
    7 // any status but PW_TOOL_STATUS_OK is a failure
}

/// Hook calls, recorded through userdata.
#[derive(Default)]
struct Seen(Vec<String>);

unsafe extern "C" fn on_call(ud: *mut c_void, c: *const pw_call_info) {
    // SAFETY: userdata is the `Seen` the test registered; `c` is live during the hook.
    let (seen, c) = unsafe { (&mut *ud.cast::<Seen>(), &*c) };
    seen.0
        .push(format!("call {} {} seq {}", c.index, text(&c.name), c.seq));
}

unsafe extern "C" fn on_result(ud: *mut c_void, c: *const pw_call_info, o: *const pw_outcome) {
    // SAFETY: as in `on_call`.
    let (seen, c, o) = unsafe { (&mut *ud.cast::<Seen>(), &*c, &*o) };
    seen.0.push(format!(
        "result {} {} {}",
        c.index,
        o.is_error,
        text(&o.text)
    ));
}

fn tools() -> [pw_tool; 4] {
    let t = |name, kind, call: pw_sync_fn| pw_tool {
        name: span(name),
        kind,
        timeout_ms: PW_TOOL_DEFAULT_TIMEOUT,
        call,
        userdata: ptr::null_mut(),
        schema: pw_str {
            ptr: ptr::null(),
            len: 0,
        },
        schema_index: ptr::null_mut(),
        schema_index_words: 0,
    };
    [
        t("echo", PW_TOOL_KIND_SYNC as u32, Some(echo)),
        t("boom", PW_TOOL_KIND_SYNC as u32, Some(boom)),
        t("later", PW_TOOL_KIND_DEFERRED as u32, None),
        t("files", PW_TOOL_KIND_ADAPTER as u32, None),
    ]
}

fn config() -> pw_wrapper_config {
    // SAFETY: `c` is valid for one write.
    written(|c| unsafe { pw_wrapper_config_default(c) })
}

/// A wrapper over `tools()` with 2 slots in `block`, hooks recording into `seen`.
fn make(block: &mut Block, tools: &[pw_tool], seen: &mut Seen) -> *mut pw_wrapper {
    make_with(block, &config(), tools, seen)
}

/// [`make`] with the configuration `cfg`.
fn make_with(
    block: &mut Block,
    cfg: &pw_wrapper_config,
    tools: &[pw_tool],
    seen: &mut Seen,
) -> *mut pw_wrapper {
    let hooks = pw_hooks {
        userdata: ptr::from_mut(seen).cast(),
        on_tool_call: Some(on_call),
        on_tool_result: Some(on_result),
    };
    let (r, w) = init(block, cfg, tools, &hooks);
    assert_eq!(r, pw_result::PW_OK);
    w
}

/// `pw_wrapper_init` into `block` with 2 slots: its code and `*out` (NULL unless written).
fn init(
    block: &mut Block,
    cfg: &pw_wrapper_config,
    tools: &[pw_tool],
    hooks: &pw_hooks,
) -> (pw_result, *mut pw_wrapper) {
    let mut w = ptr::null_mut();
    // SAFETY: every pointer is valid; the block (and any index memory) outlives the wrapper
    // in each test.
    let r = unsafe {
        pw_wrapper_init(
            block.ptr(),
            block.len(),
            cfg,
            2,
            tools.as_ptr(),
            tools.len(),
            hooks,
            &mut w,
        )
    };
    (r, w)
}

fn size(cfg: &pw_wrapper_config, slots: usize, tools: usize) -> usize {
    let mut n = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_wrapper_size(cfg, slots, tools, &mut n) },
        pw_result::PW_OK
    );
    n
}

/// [`init`] with no hooks: its code, and whether `*out` stayed NULL.
fn init_unhooked(
    block: &mut Block,
    cfg: &pw_wrapper_config,
    tools: &[pw_tool],
) -> (pw_result, bool) {
    let hooks = pw_hooks {
        userdata: ptr::null_mut(),
        on_tool_call: None,
        on_tool_result: None,
    };
    let (r, w) = init(block, cfg, tools, &hooks);
    (r, w.is_null())
}

/// Every queued frame as (route, text).
fn drain(w: *mut pw_wrapper) -> Vec<(pw_route, String)> {
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let mut t = std::mem::MaybeUninit::uninit();
        // SAFETY: valid pointers, `buf` outside the wrapper's block.
        match unsafe { pw_wrapper_poll_transmit(w, buf.as_mut_ptr(), buf.len(), t.as_mut_ptr()) } {
            pw_result::PW_OK => {
                // SAFETY: written on PW_OK.
                let t = unsafe { t.assume_init() };
                out.push((t.route, String::from_utf8(buf[..t.len].to_vec()).unwrap()));
            }
            pw_result::PW_NOTHING => return out,
            other => panic!("poll_transmit: {other:?}"),
        }
    }
}

fn respond(w: *mut pw_wrapper, now: u64, frame: &str) -> Result<pw_disposition, pw_result> {
    let mut d = std::mem::MaybeUninit::uninit();
    // SAFETY: valid pointers; the frame is outside the block.
    match unsafe { pw_wrapper_handle_response(w, now, frame.as_ptr(), frame.len(), d.as_mut_ptr()) }
    {
        // SAFETY: written on PW_OK.
        pw_result::PW_OK => Ok(unsafe { d.assume_init() }),
        e => Err(e),
    }
}

fn event(w: *mut pw_wrapper) -> Option<pw_event> {
    let mut e = std::mem::MaybeUninit::uninit();
    // SAFETY: valid pointers.
    match unsafe { pw_wrapper_poll_event(w, e.as_mut_ptr()) } {
        // SAFETY: written on PW_OK.
        pw_result::PW_OK => Some(unsafe { e.assume_init() }),
        pw_result::PW_NOTHING => None,
        other => panic!("poll_event: {other:?}"),
    }
}

fn complete(
    w: *mut pw_wrapper,
    now: u64,
    h: pw_call_handle,
    is_error: u8,
    s: &str,
) -> Result<u32, pw_result> {
    let o = pw_outcome {
        is_error,
        text: pw_str {
            ptr: s.as_ptr(),
            len: s.len(),
        },
    };
    let mut c = u32::MAX;
    // SAFETY: valid pointers.
    match unsafe { pw_wrapper_complete(w, now, h, &o, (&raw mut c).cast::<pw_completed>()) } {
        pw_result::PW_OK => Ok(c),
        e => Err(e),
    }
}

/// A tool's schema (SPEC §11): args that do not satisfy it complete the call at once with
/// the validator's text, unrun (no event for a deferred tool); args that do run it. A schema
/// the validator refuses is `PW_BAD_SCHEMA`, before anything is written: a wrapper in the
/// block stays as it was.
#[test]
fn a_tool_schema_checks_its_args_and_a_refused_one_changes_nothing() {
    let mut tools = tools();
    tools[0].schema =
        span(r#"{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}"#);
    tools[2].schema = span(r#" {"properties":{"days":{"type":"integer","minimum":1}}} "#);
    let cfg = config();
    let mut block = Block::new(size(&cfg, 2, tools.len()));
    let mut seen = Seen::default();
    let w = make(&mut block, &tools, &mut seen);
    let call = |now, id: &str, name: &str, args: &str| {
        let frame = format!(
            r#"{{"type":"TOOL_CALL","content":{{"id":"{id}","name":"{name}","args":{args}}}}}"#
        );
        let d = respond(w, now, &frame).unwrap();
        assert_eq!(
            (d.kind, d.has_handle),
            (PW_DISPOSITION_INTERCEPTED, 0),
            "{frame}"
        );
        drain(w).into_iter().next().unwrap()
    };
    assert_eq!(
        call(0, "a", "echo", r#"{"city":7}"#),
        (
            PW_ROUTE_MODEL,
            r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"echo","error":"Tool echo arguments are invalid: /city: expected string"}}"#.into()
        )
    );
    assert_eq!(
        call(1, "b", "echo", "{}"),
        (
            PW_ROUTE_MODEL,
            r#"{"type":"TOOL_RESULT","content":{"id":"b","name":"echo","error":"Tool echo arguments are invalid: (args): missing required property \"city\""}}"#.into()
        )
    );
    assert_eq!(
        call(2, "c", "later", r#"{"days":0}"#),
        (
            PW_ROUTE_MODEL,
            r#"{"type":"TOOL_RESULT","content":{"id":"c","name":"later","error":"Tool later arguments are invalid: /days: must be >= 1"}}"#.into()
        )
    );
    assert!(event(w).is_none(), "an invalid call is never started");
    assert_eq!(
        call(3, "d", "echo", r#"{"city":"Paris"}"#),
        (
            PW_ROUTE_MODEL,
            r#"{"type":"TOOL_RESULT","content":{"id":"d","name":"echo","result":{"city":"Paris"}}}"#.into()
        )
    );
    let d = respond(
        w,
        4,
        r#"{"type":"TOOL_CALL","content":{"id":"e","name":"later","args":{"days":2}}}"#,
    )
    .unwrap();
    assert_eq!(d.has_handle, 1);
    assert_eq!(text(&event(w).unwrap().args), r#"{"days":2}"#);
    // Each completed call queues its result and the round's two prompts.
    assert_eq!(
        seen.0,
        [
            "call 0 echo seq 0",
            r#"result 0 1 Tool echo arguments are invalid: /city: expected string"#,
            "call 1 echo seq 3",
            r#"result 1 1 Tool echo arguments are invalid: (args): missing required property "city""#,
            "call 2 later seq 6",
            "result 2 1 Tool later arguments are invalid: /days: must be >= 1",
            "call 3 echo seq 9",
            r#"result 3 0 {"city":"Paris"}"#,
            "call 4 later seq 12",
        ]
    );

    // Refused schemas: a $ref to another document, a keyword of the wrong shape, not JSON.
    for bad in [
        r#"{"$ref":"https://example.com/s.json"}"#,
        r#"{"minimum":"1"}"#,
        r#"{"type":"#,
    ] {
        let mut bad_tools = tools;
        bad_tools[3].schema = span(bad);
        let init = |block: &mut Block| {
            assert_eq!(
                init_unhooked(block, &cfg, &bad_tools),
                (pw_result::PW_BAD_SCHEMA, true),
                "{bad}"
            );
        };
        // Into a block of a known pattern, which stays whole; and over the live wrapper.
        let mut fresh = Block::new(block.len());
        fresh.0.fill(0xA5A5_A5A5_A5A5_A5A5);
        init(&mut fresh);
        assert!(
            fresh.0.iter().all(|w| *w == 0xA5A5_A5A5_A5A5_A5A5),
            "the block is untouched"
        );
        init(&mut block);
    }
    // The wrapper placed before is still whole: its pending call completes.
    assert_eq!(complete(w, 5, d.handle, 0, "1"), Ok(0));
    assert_eq!(
        drain(w)[0].1,
        r#"{"type":"TOOL_RESULT","content":{"id":"e","name":"later","result":1}}"#
    );
}

/// A tool's schema index (`pw_tool.schema_index`, SPEC §11): `pw_schema_index_words` sizes it,
/// `pw_wrapper_init` writes it and calls are answered as without it. Too few words, a
/// misaligned index, one over the block or shared by two tools are each refused with their
/// code before anything is written: the block and the index memory stay as they were.
#[test]
fn a_schema_index_answers_alike_and_a_bad_one_changes_nothing() {
    const CITY: &str =
        r#"{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}"#;
    const DAYS: &str = r#"{"properties":{"days":{"type":"integer","minimum":1}}}"#;
    let words_of = |schema: &str| {
        let mut n = usize::MAX;
        // SAFETY: valid pointers, apart.
        let r = unsafe { pw_schema_index_words(schema.as_ptr(), schema.len(), &mut n) };
        (r, n)
    };
    // The root's `type`, `required` (one name) and `properties` (one property), then
    // `city`'s `type`.
    assert_eq!(
        words_of(CITY),
        (pw_result::PW_OK, 1 + 2 * 2 + (2 + 3 * 3 + 2 + 4) + (2 + 3))
    );
    assert_eq!(
        words_of(r#"{"minimum":"1"}"#),
        (pw_result::PW_BAD_SCHEMA, usize::MAX)
    );
    assert_eq!(words_of("true"), (pw_result::PW_OK, 1));
    let mut n = 7usize;
    // SAFETY: one NULL argument each; nothing is written.
    unsafe {
        assert_eq!(
            pw_schema_index_words(ptr::null(), 0, &mut n),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_schema_index_words(CITY.as_ptr(), CITY.len(), ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
    }
    assert_eq!(n, 7);

    let need = words_of(CITY).1;
    let mut city_index = vec![0xEEEE_EEEEu32; need + 1];
    let mut days_index = vec![0u32; words_of(DAYS).1];
    let mut tools = tools();
    tools[0].schema = span(CITY);
    tools[0].schema_index = city_index.as_mut_ptr();
    tools[0].schema_index_words = need;
    // DAYS's text in memory an index could be placed over (aligned, writable).
    let mut days_text = vec![0u32; DAYS.len().div_ceil(4)];
    let days_ptr = days_text.as_mut_ptr();
    // SAFETY: `days_text` holds at least DAYS.len() bytes.
    unsafe { ptr::copy_nonoverlapping(DAYS.as_ptr(), days_ptr.cast::<u8>(), DAYS.len()) };
    tools[2].schema = pw_str {
        ptr: days_ptr.cast_const().cast::<u8>(),
        len: DAYS.len(),
    };
    tools[2].schema_index = days_index.as_mut_ptr();
    tools[2].schema_index_words = days_index.len();
    let cfg = config();
    let init = |block: &mut Block, tools: &[pw_tool]| init_unhooked(block, &cfg, tools);
    let mut fresh = Block::new(size(&cfg, 2, tools.len()));
    fresh.0.fill(0xA5A5_A5A5_A5A5_A5A5);
    let odd = city_index.as_mut_ptr().wrapping_byte_add(1);
    let block_start = fresh.ptr().cast::<u32>();
    let refused = [
        (
            pw_tool {
                schema_index_words: need - 1,
                ..tools[0]
            },
            pw_result::PW_STORAGE_TOO_SMALL,
        ),
        (
            pw_tool {
                schema_index: odd,
                ..tools[0]
            },
            pw_result::PW_STORAGE_MISALIGNED,
        ),
        (
            pw_tool {
                schema_index: block_start,
                ..tools[0]
            },
            pw_result::PW_STORAGE_OVERLAP,
        ),
        (
            pw_tool {
                schema_index: days_index.as_mut_ptr(),
                ..tools[0]
            },
            pw_result::PW_STORAGE_OVERLAP,
        ),
        // Over another tool's schema text.
        (
            pw_tool {
                schema_index: days_ptr,
                schema_index_words: need.min(days_text.len()),
                ..tools[0]
            },
            pw_result::PW_STORAGE_OVERLAP,
        ),
    ];
    for (bad, code) in refused {
        let mut bad_tools = tools;
        bad_tools[0] = bad;
        assert_eq!(init(&mut fresh, &bad_tools), (code, true));
        assert!(
            fresh.0.iter().all(|w| *w == 0xA5A5_A5A5_A5A5_A5A5),
            "the block is untouched"
        );
        assert!(
            city_index.iter().all(|w| *w == 0xEEEE_EEEE),
            "the index is untouched"
        );
        assert!(days_index.iter().all(|w| *w == 0), "the index is untouched");
        // SAFETY: `days_text` holds DAYS.len() bytes, written above.
        let text = unsafe { std::slice::from_raw_parts(days_ptr.cast::<u8>(), DAYS.len()) };
        assert_eq!(
            text,
            DAYS.as_bytes(),
            "the other tool's schema is untouched"
        );
    }

    let mut block = Block::new(fresh.len());
    let mut seen = Seen::default();
    let w = make(&mut block, &tools, &mut seen);
    assert_eq!(
        city_index[need], 0xEEEE_EEEE,
        "nothing past the words given"
    );
    assert_eq!(city_index[0], 2, "two subschemas indexed");
    let answers = [
        (
            "echo",
            r#"{"city":7}"#,
            r#""error":"Tool echo arguments are invalid: /city: expected string"}"#,
        ),
        (
            "echo",
            "{}",
            r#""error":"Tool echo arguments are invalid: (args): missing required property \"city\""}"#,
        ),
        (
            "later",
            r#"{"days":0}"#,
            r#""error":"Tool later arguments are invalid: /days: must be >= 1"}"#,
        ),
        (
            "echo",
            r#"{"city":"Paris"}"#,
            r#""result":{"city":"Paris"}}"#,
        ),
    ];
    for (i, (name, args, tail)) in answers.into_iter().enumerate() {
        let frame = format!(
            r#"{{"type":"TOOL_CALL","content":{{"id":"{i}","name":"{name}","args":{args}}}}}"#
        );
        let d = respond(w, i as u64, &frame).unwrap();
        assert_eq!(
            (d.kind, d.has_handle),
            (PW_DISPOSITION_INTERCEPTED, 0),
            "{frame}"
        );
        let (route, sent) = drain(w).into_iter().next().unwrap();
        assert_eq!(route, PW_ROUTE_MODEL);
        assert_eq!(
            sent,
            format!(r#"{{"type":"TOOL_RESULT","content":{{"id":"{i}","name":"{name}",{tail}}}"#)
        );
    }
}

#[test]
fn a_sync_a_deferred_and_an_adapter_call_round_trip() {
    let tools = tools();
    let mut block = Block::new(size(&config(), 2, tools.len()));
    let mut seen = Seen::default();
    let w = make(&mut block, &tools, &mut seen);

    let d = respond(
        w,
        0,
        r#"{"type":"TOOL_CALL","content":{"id":"1","name":"echo","args":[ 1 ]}}"#,
    )
    .unwrap();
    assert_eq!(
        (d.kind, d.index, d.has_handle),
        (PW_DISPOSITION_INTERCEPTED, 0, 0)
    );
    assert_eq!(
        drain(w),
        [
            (
                PW_ROUTE_MODEL,
                r#"{"type":"TOOL_RESULT","content":{"id":"1","name":"echo","result":[1]}}"#.into()
            ),
            (
                PW_ROUTE_MODEL,
                r#"{"type":"TEXT","content":"Tool results above."}"#.into()
            ),
            (
                PW_ROUTE_CONSUMER,
                r#"{"type":"TEXT","content":"Tool results above."}"#.into()
            ),
        ]
    );

    // A deferred call and an adapter call, an END held between them.
    let d = respond(
        w,
        1,
        r#"{"type":"TOOL_CALL","content":{"name":"later","args":{"q":1}}}"#,
    )
    .unwrap();
    assert_eq!(
        (d.kind, d.index, d.has_handle),
        (PW_DISPOSITION_INTERCEPTED, 1, 1)
    );
    let deferred = d.handle;
    assert_eq!(
        respond(w, 1, r#"{"type":"END"}"#).unwrap().kind,
        PW_DISPOSITION_HELD
    );
    let files = respond(
        w,
        2,
        r#"{"type":"TOOL_CALL","content":{"id":"f","name":"files"}}"#,
    )
    .unwrap()
    .handle;
    let e = event(w).unwrap();
    assert_eq!(
        (e.kind, e.tool, text(&e.name), text(&e.args)),
        (PW_PENDING_DEFERRED, 2, "later".into(), r#"{"q":1}"#.into())
    );
    let e = event(w).unwrap();
    assert_eq!(
        (e.kind, e.has_id, text(&e.id)),
        (PW_PENDING_ADAPTER, 1, "f".into())
    );
    assert!(event(w).is_none());
    assert_eq!(
        drain(w),
        [(
            PW_ROUTE_ADAPTER,
            r#"{"type":"TOOL_CALL","content":{"id":"f","name":"files","args":{}}}"#.into()
        )]
    );
    // SAFETY: a valid wrapper.
    assert_eq!(unsafe { pw_wrapper_pending(w) }, 2);
    // SAFETY: as above.
    assert_eq!(unsafe { pw_wrapper_poll_timeout(w) }, 30_001);

    assert_eq!(
        complete(w, 3, deferred, 0, r#"{"ok":true}"#),
        Ok(PW_COMPLETED_AS_GIVEN as u32)
    );
    let frame = br#"{"type":"TOOL_RESULT","content":{"result":"x"}}"#;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_wrapper_handle_adapter_frame(w, 4, files, frame.as_ptr(), frame.len()) },
        pw_result::PW_OK
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { pw_wrapper_handle_adapter_closed(w, 5, files) },
        pw_result::PW_OK
    );
    assert_eq!(
        drain(w),
        [
            (
                PW_ROUTE_MODEL,
                r#"{"type":"TOOL_RESULT","content":{"name":"later","result":{"ok":true}}}"#.into()
            ),
            (
                PW_ROUTE_MODEL,
                r#"{"type":"TOOL_RESULT","content":{"id":"f","name":"files","result":"x"}}"#.into()
            ),
            (
                PW_ROUTE_MODEL,
                r#"{"type":"TEXT","content":"Tool results above."}"#.into()
            ),
            (
                PW_ROUTE_CONSUMER,
                r#"{"type":"TEXT","content":"Tool results above."}"#.into()
            ),
            (PW_ROUTE_CONSUMER, r#"{"type":"END"}"#.into()),
        ]
    );
    // SAFETY: as above.
    assert_eq!(unsafe { pw_wrapper_poll_timeout(w) }, PW_NO_TIMEOUT);

    // Late and foreign completions get their own codes.
    assert_eq!(
        complete(w, 6, deferred, 0, "1"),
        Err(pw_result::PW_CALL_COMPLETED)
    );
    let foreign = pw_call_handle {
        owner: deferred.owner + 8,
        ..deferred
    };
    assert_eq!(
        complete(w, 6, foreign, 0, "1"),
        Err(pw_result::PW_CALL_FOREIGN)
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { pw_wrapper_handle_adapter_closed(w, 6, deferred) },
        pw_result::PW_CALL_COMPLETED
    );

    // The trace, oldest first, and the hooks in order.
    let mut entry = std::mem::MaybeUninit::uninit();
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_wrapper_trace_entry(w, 1, entry.as_mut_ptr()) },
        pw_result::PW_OK
    );
    // SAFETY: written on PW_OK.
    let entry = unsafe { entry.assume_init() };
    assert_eq!(
        (
            text(&entry.name),
            text(&entry.args),
            text(&entry.outcome.text)
        ),
        ("later".into(), r#"{"q":1}"#.into(), r#"{"ok":true}"#.into())
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { pw_wrapper_trace_entry(w, 3, ptr::from_mut(&mut std::mem::zeroed())) },
        pw_result::PW_NOTHING
    );
    // Each completed call queues its result and the round's two prompts.
    assert_eq!(
        seen.0,
        [
            "call 0 echo seq 0",
            "result 0 0 [ 1 ]",
            "call 1 later seq 3",
            "call 2 files seq 3",
            r#"result 1 0 {"ok":true}"#,
            "result 2 0 \"x\"",
        ]
    );
}

/// An `END` read only as far as its `type` (SPEC §1: a pass-through frame) is held and
/// released byte for byte, broken JSON after the type included, while a call is pending; with
/// full validation the same frame is refused. (The `ffi` fuzz target met such a frame, and
/// its own "every frame is JSON" check was too strict for released `END`s: fixed there.)
#[test]
fn an_end_broken_after_its_type_is_held_and_released_as_given() {
    const LOOSE: &str = "{\"type\":\"END\",\"conte\u{16}4p}";
    let tools = tools();
    let mut block = Block::new(size(&config(), 2, tools.len()));
    let mut seen = Seen::default();
    let w = make(&mut block, &tools, &mut seen);
    let call = respond(w, 0, r#"{"type":"TOOL_CALL","content":{"name":"later"}}"#).unwrap();
    drain(w);
    assert_eq!(respond(w, 1, LOOSE).unwrap().kind, PW_DISPOSITION_HELD);
    assert_eq!(complete(w, 2, call.handle, 0, "1"), Ok(0));
    let frames = drain(w);
    assert_eq!(frames.last(), Some(&(PW_ROUTE_CONSUMER, LOOSE.to_string())));

    let mut cfg = config();
    cfg.full_validation = 1;
    let mut block = Block::new(size(&cfg, 2, tools.len()));
    let mut seen = Seen::default();
    let w = make_with(&mut block, &cfg, &tools, &mut seen);
    respond(w, 0, r#"{"type":"TOOL_CALL","content":{"name":"later"}}"#).unwrap();
    assert_eq!(
        respond(w, 1, LOOSE).map(|d| d.kind),
        Err(pw_result::PW_INVALID_JSON)
    );
}

#[test]
fn sync_failures_and_cancel() {
    let tools = tools();
    let mut block = Block::new(size(&config(), 2, tools.len()));
    let mut seen = Seen::default();
    let w = make(&mut block, &tools, &mut seen);
    respond(w, 0, r#"{"type":"TOOL_CALL","content":{"name":"boom"}}"#).unwrap();
    assert_eq!(
        drain(w)[0].1,
        r#"{"type":"TOOL_RESULT","content":{"name":"boom","error":"boom"}}"#
    );
    respond(w, 0, r#"{"type":"TOOL_CALL","content":{"name":"files"}}"#).unwrap();
    drain(w);
    let mut left = 9;
    let reason = "user stopped";
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_wrapper_cancel(w, 1, reason.as_ptr(), reason.len(), &mut left) },
        pw_result::PW_OK
    );
    assert_eq!(left, 0);
    let frames = drain(w);
    assert_eq!(
        frames[0],
        (
            PW_ROUTE_ADAPTER,
            r#"{"type":"CANCEL","content":{"name":"files","reason":"user stopped"}}"#.into()
        )
    );
    assert_eq!(
        frames[1].1,
        r#"{"type":"TOOL_RESULT","content":{"name":"files","error":"Tool files cancelled: user stopped"}}"#
    );
}

#[test]
fn bad_arguments_get_their_codes_and_change_nothing() {
    let tools = tools();
    let cfg = config();
    let need = size(&cfg, 2, tools.len());
    let mut seen = Seen::default();
    let hooks = pw_hooks {
        userdata: ptr::null_mut(),
        on_tool_call: None,
        on_tool_result: None,
    };
    let mut out = ptr::null_mut();
    let mut block = Block::new(need);
    let base = block.ptr();
    // Each refusal writes nothing to `*out`.
    let init = |len: usize, cfg: &pw_wrapper_config, tools: &[pw_tool; 4]| {
        let mut out = ptr::null_mut();
        // SAFETY: the pointers are valid; the variations are the test's point.
        let r = unsafe { pw_wrapper_init(base, len, cfg, 2, tools.as_ptr(), 4, &hooks, &mut out) };
        assert!(
            r == pw_result::PW_OK || out.is_null(),
            "nothing written on error"
        );
        r
    };
    // SAFETY (every call below): the pointers are valid or deliberately NULL / short / odd.
    unsafe {
        assert_eq!(
            pw_wrapper_init(
                ptr::null_mut(),
                need,
                &cfg,
                2,
                tools.as_ptr(),
                4,
                &hooks,
                &mut out
            ),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            init(need - 1, &cfg, &tools),
            pw_result::PW_STORAGE_TOO_SMALL
        );
        let odd = block.ptr().cast::<u8>().add(1).cast();
        assert_eq!(
            pw_wrapper_init(odd, need, &cfg, 2, tools.as_ptr(), 4, &hooks, &mut out),
            pw_result::PW_STORAGE_MISALIGNED
        );
        let bad = pw_wrapper_config {
            mirror_continue: 2,
            ..cfg
        };
        assert_eq!(init(need, &bad, &tools), pw_result::PW_BAD_CONFIG);
        let mut bad_tools = tools;
        bad_tools[0].kind = 9;
        assert_eq!(init(need, &cfg, &bad_tools), pw_result::PW_BAD_TOOL);
        bad_tools[0] = pw_tool {
            kind: PW_TOOL_KIND_SYNC as u32,
            call: None,
            ..tools[0]
        };
        assert_eq!(init(need, &cfg, &bad_tools), pw_result::PW_BAD_TOOL);
        bad_tools[0] = pw_tool {
            name: pw_str {
                ptr: b"\xff".as_ptr(),
                len: 1,
            },
            ..tools[0]
        };
        assert_eq!(init(need, &cfg, &bad_tools), pw_result::PW_BAD_TOOL);
        assert!(out.is_null(), "nothing written on error");
        let mut n = 0;
        let huge = pw_wrapper_config {
            args_cap: usize::MAX,
            ..cfg
        };
        assert_eq!(
            pw_wrapper_size(&huge, 2, 4, &mut n),
            pw_result::PW_BAD_CONFIG
        );
        assert_eq!(n, 0);
    }
    let w = make(&mut block, &tools, &mut seen);
    let mut buf = [0u8; 8];
    let mut t = std::mem::MaybeUninit::uninit();
    respond(
        w,
        5,
        r#"{"type":"TOOL_CALL","content":{"name":"echo","args":1}}"#,
    )
    .unwrap();
    // SAFETY (every call below): as above.
    unsafe {
        // Too small a buffer: the needed size, the frame kept.
        assert_eq!(
            pw_wrapper_poll_transmit(w, buf.as_mut_ptr(), buf.len(), t.as_mut_ptr()),
            pw_result::PW_BUFFER_TOO_SMALL
        );
        assert_eq!(
            t.assume_init().len,
            r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":1}}"#.len()
        );
        assert_eq!(drain(w).len(), 3);
        // A clock that goes backwards, a malformed frame, a NULL wrapper.
        assert_eq!(
            respond(w, 4, r#"{"type":"TEXT"}"#).unwrap_err(),
            pw_result::PW_CLOCK_WENT_BACKWARDS
        );
        assert_eq!(
            respond(w, 5, r#"{"type":7}"#).unwrap_err(),
            pw_result::PW_FRAME_TYPE_NOT_STRING
        );
        assert_eq!(
            pw_wrapper_abort(ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(pw_wrapper_poll_timeout(ptr::null()), PW_NO_TIMEOUT);
        assert_eq!(pw_wrapper_pending(ptr::null()), 0);
        // Input inside the wrapper's own memory.
        let inside = block.ptr().cast::<u8>().add(16);
        assert_eq!(
            pw_wrapper_handle_request(w, 5, inside, 4),
            pw_result::PW_STORAGE_OVERLAP
        );
        // A handle no call ever had.
        let never = pw_call_handle {
            index: 0,
            slot: 0,
            reserved: 0,
            owner: w.addr(),
        };
        assert_eq!(
            pw_wrapper_handle_adapter_closed(w, 5, never),
            pw_result::PW_CALL_UNKNOWN
        );
    }
    // A stale handle: its call ended and a newer call took its slot.
    let old = respond(w, 5, r#"{"type":"TOOL_CALL","content":{"name":"later"}}"#)
        .unwrap()
        .handle;
    assert_eq!(
        complete(w, 5, old, 1, "done"),
        Ok(PW_COMPLETED_AS_GIVEN as u32)
    );
    // Drained, its TOOL_RESULT is written and the slot is free again.
    assert_eq!(drain(w).len(), 1 + 2);
    let new = respond(w, 5, r#"{"type":"TOOL_CALL","content":{"name":"later"}}"#)
        .unwrap()
        .handle;
    assert_eq!((old.slot, new.slot), (0, 0));
    assert_eq!(complete(w, 5, old, 0, "1"), Err(pw_result::PW_CALL_STALE));
    // Of another kind, and not JSON.
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_wrapper_handle_adapter_closed(w, 5, new) },
        pw_result::PW_CALL_WRONG_KIND
    );
    assert_eq!(
        complete(w, 5, new, 0, "[1,"),
        Err(pw_result::PW_INVALID_RESULT)
    );
    assert_eq!(complete(w, 5, new, 2, "x"), Err(pw_result::PW_BAD_ARGUMENT));
    // Still usable.
    assert_eq!(
        respond(w, 6, r#"{"type":"TEXT","content":"x"}"#)
            .unwrap()
            .kind,
        PW_DISPOSITION_FORWARD
    );
}

/// `pw_wrapper_complete_unwritable` fails a deferred call with the library's own text; a
/// second time the call is over and the code says so, changing nothing.
#[test]
fn a_deferred_result_the_host_cannot_write_fails_with_the_librarys_text() {
    let tools = tools();
    let mut block = Block::new(size(&config(), 2, tools.len()));
    let mut seen = Seen::default();
    let w = make(&mut block, &tools, &mut seen);
    let d = respond(
        w,
        0,
        r#"{"type":"TOOL_CALL","content":{"id":"7","name":"later","args":{}}}"#,
    )
    .unwrap();
    assert_eq!(d.has_handle, 1);
    // SAFETY: `w` was placed by `make`; the handle is the one the wrapper gave.
    assert_eq!(
        unsafe { pw_wrapper_complete_unwritable(w, 1, d.handle) },
        pw_result::PW_OK
    );
    assert_eq!(
        drain(w)[0],
        (
            PW_ROUTE_MODEL,
            r#"{"type":"TOOL_RESULT","content":{"id":"7","name":"later","error":"Tool later returned invalid JSON"}}"#.into()
        )
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { pw_wrapper_complete_unwritable(w, 2, d.handle) },
        pw_result::PW_CALL_COMPLETED
    );
    assert!(drain(w).is_empty());
    // SAFETY: a NULL wrapper is refused before anything is read.
    assert_eq!(
        unsafe { pw_wrapper_complete_unwritable(ptr::null_mut(), 2, d.handle) },
        pw_result::PW_NULL_POINTER
    );
}
