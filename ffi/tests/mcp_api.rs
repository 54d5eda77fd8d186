//! The MCP client's C ABI, called from Rust as C would call it (and run under miri): a
//! scripted server through start-up, calls, progress, notifications, ping, cancel and the
//! transport closing; every refusal its own code with nothing written.

use core::ffi::{c_void, CStr};
use std::mem::MaybeUninit;
use std::ptr;

use polyweave_tool_adapter_ffi::*;

mod support;

use support::{out_or_code, text, written};

/// Small, so miri runs it quickly; fixed to 2025-11-25, whose handshake most scripts here
/// play (the 2026-07-28 tests set `revision` back).
fn config() -> pw_mcp_config {
    // SAFETY: one write.
    let mut c = written(|c| unsafe { pw_mcp_config_default(c) });
    assert_eq!(
        (
            c.line_cap,
            c.outbox_cap,
            c.name_cap,
            c.cursor_cap,
            c.max_depth,
            c.revision,
            c.start_timeout_ms
        ),
        (
            8192,
            4096,
            64,
            256,
            32,
            pw_mcp_revision::PW_MCP_REVISION_AUTO as u32,
            PW_MCP_DEFAULT_START_TIMEOUT_MS
        )
    );
    assert_eq!(PW_MCP_DEFAULT_START_TIMEOUT_MS, 10_000);
    c.line_cap = 512;
    c.outbox_cap = PW_MCP_MIN_OUTBOX + 200;
    c.name_cap = 16;
    c.cursor_cap = 16;
    c.revision = pw_mcp_revision::PW_MCP_REVISION_2025_11_25 as u32;
    c
}

fn size(cfg: &pw_mcp_config, calls: usize) -> usize {
    let mut n = 0;
    // SAFETY: valid pointers.
    assert_eq!(unsafe { pw_mcp_size(cfg, calls, &mut n) }, pw_result::PW_OK);
    n
}

const NAME: &[u8] = b"mcp-api-test";
const VERSION: &[u8] = b"1.0";

fn init_with(
    block: &mut [u64],
    cfg: &pw_mcp_config,
    calls: usize,
    name: &[u8],
) -> Result<*mut pw_mcp, pw_result> {
    let mut c = ptr::null_mut();
    // SAFETY: the block outlives the client in each test; the texts are copied.
    match unsafe {
        pw_mcp_init(
            block.as_mut_ptr().cast::<c_void>(),
            block.len() * 8,
            cfg,
            calls,
            name.as_ptr(),
            name.len(),
            VERSION.as_ptr(),
            VERSION.len(),
            &mut c,
        )
    } {
        pw_result::PW_OK => Ok(c),
        e => {
            assert!(c.is_null(), "written on {e:?}");
            Err(e)
        }
    }
}

/// The next line for the server, or `None`.
fn transmit(c: *mut pw_mcp) -> Option<String> {
    let mut buf = [0u8; 1024];
    let mut n = 99;
    // SAFETY: valid pointers, outside the client's block.
    match unsafe { pw_mcp_poll_transmit(c, buf.as_mut_ptr(), buf.len(), &mut n) } {
        pw_result::PW_OK => Some(String::from_utf8(buf[..n].to_vec()).unwrap()),
        pw_result::PW_NOTHING => {
            assert_eq!(n, 0);
            None
        }
        e => panic!("{e:?}"),
    }
}

/// The next frame for the wrapper, with its slot and index, or `None`.
fn frame(c: *mut pw_mcp) -> Option<(u16, u32, String)> {
    let mut buf = [0u8; 1024];
    let mut f = MaybeUninit::<pw_mcp_frame>::uninit();
    // SAFETY: valid pointers, outside the client's block.
    let r = unsafe { pw_mcp_poll_frame(c, buf.as_mut_ptr(), buf.len(), f.as_mut_ptr()) };
    // SAFETY: written on PW_OK and PW_NOTHING.
    let f = unsafe { f.assume_init() };
    match r {
        pw_result::PW_OK => Some((
            f.slot,
            f.index,
            String::from_utf8(buf[..f.len].to_vec()).unwrap(),
        )),
        pw_result::PW_NOTHING => {
            assert_eq!(f.len, 0);
            None
        }
        e => panic!("{e:?}"),
    }
}

fn event(c: *mut pw_mcp) -> Option<pw_mcp_event> {
    let mut ev = MaybeUninit::uninit();
    // SAFETY: valid pointers.
    match unsafe { pw_mcp_poll_event(c, ev.as_mut_ptr()) } {
        // SAFETY: written on PW_OK.
        pw_result::PW_OK => Some(unsafe { ev.assume_init() }),
        pw_result::PW_NOTHING => None,
        e => panic!("{e:?}"),
    }
}

/// Feeds a whole line (it must be taken whole: nothing owed before it).
fn feed(c: *mut pw_mcp, line: &str) {
    let mut used = 0;
    // SAFETY: valid pointers.
    let r = unsafe { pw_mcp_feed(c, line.as_ptr(), line.len(), &mut used) };
    assert_eq!((r, used), (pw_result::PW_OK, line.len()), "{line}");
}

fn handle(c: *mut pw_mcp, slot: u16, index: u32, f: &str) -> Result<pw_mcp_handled, pw_result> {
    // SAFETY: valid pointers.
    out_or_code(|out| unsafe { pw_mcp_handle_frame(c, slot, index, f.as_ptr(), f.len(), out) })
}

fn state(c: *mut pw_mcp) -> pw_mcp_client_state {
    // SAFETY: valid pointers.
    written(|s| unsafe { pw_mcp_state(c, s) })
}

/// The revision the client speaks, once known.
fn spoken(c: *mut pw_mcp) -> Option<String> {
    // SAFETY: a client from pw_mcp_init; the string is static and NUL-terminated.
    let p = unsafe { pw_mcp_protocol_version(c) };
    // SAFETY: non-NULL: a static NUL-terminated string.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned())
}

fn stats(c: *mut pw_mcp) -> pw_mcp_stats {
    // SAFETY: valid pointers.
    written(|s| unsafe { pw_mcp_get_stats(c, s) })
}

/// A client through `initialize` and one `tools/list` page (tools `echo`, one without a
/// name, one whose name is over `name_cap`).
fn started(block: &mut [u64], cfg: &pw_mcp_config, calls: usize) -> *mut pw_mcp {
    let c = init_with(block, cfg, calls, NAME).unwrap();
    assert_eq!(state(c), pw_mcp_client_state::PW_MCP_STATE_IDLE);
    assert_eq!(transmit(c), None);
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_start(c, 0) }, pw_result::PW_OK);
    // SAFETY: as above.
    assert_eq!(
        unsafe { pw_mcp_start(c, 0) },
        pw_result::PW_MCP_ALREADY_STARTED
    );
    // Fixed to 2025-11-25: no `server/discover`, so no deadline.
    // SAFETY: as above.
    assert_eq!(unsafe { pw_mcp_poll_timeout(c) }, PW_NO_TIMEOUT);
    assert_eq!(spoken(c), None);
    assert_eq!(state(c), pw_mcp_client_state::PW_MCP_STATE_STARTING);
    assert_eq!(
        transmit(c).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\
         \"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp-api-test\",\"version\":\
         \"1.0\"}}}\n"
    );
    assert_eq!(transmit(c), None);
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"serverInfo\":{\"name\":\"s\"}}}\r\n",
    );
    let ev = event(c).unwrap();
    assert_eq!(ev.kind, pw_mcp_event_kind::PW_MCP_EVENT_INITIALIZED);
    assert_eq!(text(&ev.version), "2025-06-18");
    assert_eq!(spoken(c).as_deref(), Some("2025-06-18"));
    assert_eq!(
        text(&ev.raw),
        "{\"protocolVersion\":\"2025-06-18\",\"serverInfo\":{\"name\":\"s\"}}"
    );
    assert!(event(c).is_none());
    assert_eq!(
        transmit(c).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
    );
    assert_eq!(
        transmit(c).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
    );
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{}},\
         {\"title\":\"x\"},{\"name\":\"a_name_over_sixteen\"}]}}\n",
    );
    let ev = event(c).unwrap();
    assert_eq!(ev.kind, pw_mcp_event_kind::PW_MCP_EVENT_TOOL);
    assert_eq!(
        (text(&ev.name), text(&ev.raw)),
        (
            "echo".into(),
            "{\"name\":\"echo\",\"inputSchema\":{}}".into()
        )
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, ev.skip, text(&ev.raw)),
        (
            pw_mcp_event_kind::PW_MCP_EVENT_TOOL_SKIPPED,
            pw_mcp_skip::PW_MCP_SKIP_NO_NAME,
            "{\"title\":\"x\"}".into()
        )
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, ev.skip, ev.len, ev.cap),
        (
            pw_mcp_event_kind::PW_MCP_EVENT_TOOL_SKIPPED,
            pw_mcp_skip::PW_MCP_SKIP_NAME_TOO_LONG,
            19,
            16
        )
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, ev.tools),
        (pw_mcp_event_kind::PW_MCP_EVENT_READY, 1)
    );
    assert!(event(c).is_none());
    assert_eq!(state(c), pw_mcp_client_state::PW_MCP_STATE_READY);
    c
}

const ECHO: &str =
    r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"echo","args":{"message":"hi"}}}"#;

#[test]
fn a_call_goes_out_and_its_answer_comes_back_to_its_slot_and_index() {
    let cfg = config();
    let mut block = vec![0u64; size(&cfg, 2) / 8 + 1];
    let c = started(&mut block, &cfg, 2);

    let h = handle(c, 1, 7, ECHO).unwrap();
    assert_eq!(
        (h.kind, h.request, h.failure),
        (
            pw_mcp_handled_kind::PW_MCP_HANDLED_SENT,
            3,
            pw_mcp_failure::PW_MCP_FAILURE_NONE
        )
    );
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(
        (unsafe { pw_mcp_in_flight(c) }, unsafe { pw_mcp_queued(c) }),
        (1, 1)
    );
    assert_eq!(
        handle(c, 1, 7, ECHO).err(),
        Some(pw_result::PW_MCP_DUPLICATE_CALL)
    );
    assert_eq!(
        transmit(c).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\
         \"arguments\":{\"message\":\"hi\"},\"_meta\":{\"progressToken\":3}}}\n"
    );
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":3,\"progress\":1}}\n",
    );
    assert_eq!(
        frame(c).unwrap(),
        (
            1,
            7,
            r#"{"type":"PROGRESS","content":{"progressToken":3,"progress":1}}"#.into()
        )
    );
    assert_eq!(frame(c), None);
    // A line fed in two pieces, the second with the next line's start: one line at a time.
    let answer = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n";
    let ping = "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n";
    let both = format!("{answer}{ping}");
    let mut used = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_mcp_feed(c, both.as_ptr(), 10, &mut used) },
        pw_result::PW_OK
    );
    assert_eq!(used, 10);
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_mcp_feed(c, both[10..].as_ptr(), both.len() - 10, &mut used) },
        pw_result::PW_OK
    );
    assert_eq!(used, answer.len() - 10);
    // Nothing more is taken while the answer's frames wait.
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_mcp_feed(c, ping.as_ptr(), ping.len(), &mut used) },
        pw_result::PW_OK
    );
    assert_eq!(used, 0);
    assert_eq!(
        frame(c).unwrap(),
        (
            1,
            7,
            r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":[{"type":"text","text":"hi"}]}}"#.into()
        )
    );
    assert_eq!(frame(c).unwrap(), (1, 7, r#"{"type":"END"}"#.into()));
    assert_eq!(frame(c), None);
    feed(c, ping);
    assert_eq!(
        transmit(c).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":{}}\n"
    );
    // A notification, its method escaped: decoded into the block.
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/\\u006dessage\",\"params\":{\"level\":\"info\"}}\n",
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, ev.has_params, ev.method_cut),
        (pw_mcp_event_kind::PW_MCP_EVENT_NOTIFICATION, 1, 0)
    );
    assert_eq!(
        (text(&ev.method), text(&ev.params)),
        (
            "notifications/message".into(),
            "{\"level\":\"info\"}".into()
        )
    );
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.has_params, text(&ev.method)),
        (0, "notifications/tools/list_changed".into())
    );
    feed(c, "not json\n");
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n");
    let s = stats(c);
    assert_eq!(
        (
            s.lines,
            s.calls,
            s.answered,
            s.pings,
            s.notifications,
            s.not_json,
            s.unknown_id
        ),
        (9, 1, 1, 1, 2, 1, 1)
    );
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_in_flight(c) }, 0);
}

#[test]
fn cancel_close_and_calls_failed_at_once() {
    let cfg = config();
    let mut block = vec![0u64; size(&cfg, 1) / 8 + 1];
    let c = started(&mut block, &cfg, 1);

    // Args that are not an object fail at once; the next call waits for that ERROR.
    let h = handle(
        c,
        0,
        0,
        r#"{"type":"TOOL_CALL","content":{"name":"echo","args":[1]}}"#,
    )
    .unwrap();
    assert_eq!(
        (h.kind, h.failure),
        (
            pw_mcp_handled_kind::PW_MCP_HANDLED_FAILED,
            pw_mcp_failure::PW_MCP_FAILURE_ARGS_NOT_OBJECT
        )
    );
    assert_eq!(
        handle(c, 0, 1, ECHO).err(),
        Some(pw_result::PW_MCP_FRAME_PENDING)
    );
    assert_eq!(
        frame(c).unwrap(),
        (
            0,
            0,
            r#"{"type":"ERROR","content":{"message":"Tool echo arguments must be an object"}}"#
                .into()
        )
    );
    // One slot: a second call fails with its limit.
    assert_eq!(handle(c, 0, 1, ECHO).unwrap().request, 3);
    let h = handle(c, 1, 2, ECHO).unwrap();
    assert_eq!(
        (h.failure, h.limit),
        (pw_mcp_failure::PW_MCP_FAILURE_TOO_MANY, 1)
    );
    assert_eq!(
        frame(c).unwrap().2,
        r#"{"type":"ERROR","content":{"message":"Tool echo failed: too many MCP calls in flight (max 1)"}}"#
    );
    // A CANCEL after the request went out is told to the server.
    assert!(transmit(c)
        .unwrap()
        .contains("\"id\":3,\"method\":\"tools/call\""));
    let cancel = r#"{"type":"CANCEL","content":{"id":"c1","name":"echo","reason":"timeout"}}"#;
    let h = handle(c, 0, 1, cancel).unwrap();
    assert_eq!(
        (h.kind, h.notified),
        (pw_mcp_handled_kind::PW_MCP_HANDLED_CANCELLED, 1)
    );
    assert_eq!(
        transmit(c).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3,\"reason\":\"timeout\"}}\n"
    );
    assert_eq!(
        handle(c, 0, 1, cancel).err(),
        Some(pw_result::PW_MCP_UNKNOWN_CALL)
    );
    // Its late answer is counted, and gives nothing.
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n",
    );
    assert_eq!((frame(c), stats(c).late), (None, 1));

    // The transport closes with a call in flight.
    assert_eq!(handle(c, 0, 3, ECHO).unwrap().request, 4);
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_handle_closed(c) }, pw_result::PW_OK);
    assert_eq!(state(c), pw_mcp_client_state::PW_MCP_STATE_CLOSED);
    assert_eq!(
        frame(c).unwrap(),
        (
            0,
            3,
            r#"{"type":"ERROR","content":{"message":"Tool echo failed: the MCP server closed the connection"}}"#.into()
        )
    );
    assert_eq!(transmit(c), None);
    let h = handle(c, 0, 4, ECHO).unwrap();
    assert_eq!(h.failure, pw_mcp_failure::PW_MCP_FAILURE_CLOSED);
    assert!(frame(c).is_some());
    // Closed: bytes are taken and not read.
    let mut used = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_mcp_feed(c, b"xyz".as_ptr(), 3, &mut used) },
        pw_result::PW_OK
    );
    assert_eq!(used, 3);
    let s = stats(c);
    assert_eq!((s.calls, s.answered, s.failed), (2, 0, 4));
}

#[test]
fn frames_the_wrapper_never_sends_are_refused_with_their_codes() {
    let cfg = config();
    let mut block = vec![0u64; size(&cfg, 1) / 8 + 1];
    let c = started(&mut block, &cfg, 1);
    for (f, code) in [
        ("[1]", pw_result::PW_FRAME_NOT_OBJECT),
        (r#"{"type":"TOOL_CALL","#, pw_result::PW_INVALID_JSON),
        (r#"{"content":1}"#, pw_result::PW_FRAME_MISSING_TYPE),
        (
            r#"{"type":"TEXT","content":"x"}"#,
            pw_result::PW_MCP_NOT_ADAPTER_FRAME,
        ),
        (
            r#"{"type":"TOOL_CALL","content":{"args":{}}}"#,
            pw_result::PW_MCP_NO_NAME,
        ),
        (
            r#"{"type":"TOOL_CALL","content":{"name":"a_name_over_sixteen","args":{}}}"#,
            pw_result::PW_NAME_TOO_LONG,
        ),
        (
            r#"{"type":"CANCEL","content":{"name":"echo","reason":"r"}}"#,
            pw_result::PW_MCP_UNKNOWN_CALL,
        ),
    ] {
        let mut out = MaybeUninit::<pw_mcp_handled>::new(pw_mcp_handled {
            kind: pw_mcp_handled_kind::PW_MCP_HANDLED_CANCELLED,
            notified: 9,
            request: 9,
            failure: pw_mcp_failure::PW_MCP_FAILURE_NONE,
            limit: 9,
            len: 9,
        });
        // SAFETY: valid pointers.
        let r = unsafe { pw_mcp_handle_frame(c, 0, 0, f.as_ptr(), f.len(), out.as_mut_ptr()) };
        assert_eq!(r, code, "{f}");
        // SAFETY: initialised above and not written on a refusal.
        let out = unsafe { out.assume_init() };
        assert_eq!((out.notified, out.request, out.limit), (9, 9, 9), "{f}");
    }
    // SAFETY: a client from pw_mcp_init.
    assert_eq!((unsafe { pw_mcp_in_flight(c) }, transmit(c)), (0, None));
    assert_eq!(pw_result_is_malformed(pw_result::PW_INVALID_JSON as u32), 1);
    assert_eq!(
        pw_result_is_malformed(pw_result::PW_MCP_NOT_ADAPTER_FRAME as u32),
        0
    );
}

#[test]
fn a_start_up_that_fails_fails_the_calls() {
    let cfg = config();
    let mut block = vec![0u64; size(&cfg, 1) / 8 + 1];
    let c = init_with(&mut block, &cfg, 1, NAME).unwrap();
    // A call handed in before the start-up ends waits in the outbox...
    assert_eq!(handle(c, 0, 0, ECHO).unwrap().request, 1);
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_start(c, 0) }, pw_result::PW_OK);
    assert!(transmit(c)
        .unwrap()
        .contains("\"id\":2,\"method\":\"initialize\""));
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"1999-01-01\"}}\n",
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, ev.start_error, text(&ev.raw)),
        (
            pw_mcp_event_kind::PW_MCP_EVENT_START_FAILED,
            pw_mcp_start_error::PW_MCP_START_UNSUPPORTED_VERSION,
            "\"1999-01-01\"".into()
        )
    );
    assert_eq!(state(c), pw_mcp_client_state::PW_MCP_STATE_FAILED);
    // ...and fails with it.
    assert_eq!(
        frame(c).unwrap().2,
        r#"{"type":"ERROR","content":{"message":"Tool echo failed: the MCP server did not start"}}"#
    );
    assert_eq!(
        handle(c, 0, 1, ECHO).unwrap().failure,
        pw_mcp_failure::PW_MCP_FAILURE_NOT_STARTED
    );
    assert_eq!(transmit(c), None);
}

#[test]
fn memory_and_arguments_are_checked_before_anything_is_written() {
    let cfg = config();
    let need = size(&cfg, 2);
    let arena = cfg.line_cap
        + cfg.outbox_cap
        + cfg.cursor_cap
        + cfg.name_cap * (2 + 2)
        + cfg.header_table_cap;
    assert!(need > arena && need <= PW_MCP_MAX_BASE_SIZE + 2 * PW_MCP_MAX_SLOT_SIZE + arena);
    assert!(pw_mcp_align().is_power_of_two() && pw_mcp_align() <= 8);
    let mut block = vec![0u64; need / 8 + 2];
    let mut c = ptr::null_mut();
    let base = block.as_mut_ptr().cast::<u8>();
    // SAFETY: every call below is refused before it touches anything (the lengths say less
    // than the block has, or a pointer is NULL).
    unsafe {
        assert_eq!(
            pw_mcp_init(
                base.cast(),
                need - 1,
                &cfg,
                2,
                NAME.as_ptr(),
                3,
                NAME.as_ptr(),
                3,
                &mut c
            ),
            pw_result::PW_STORAGE_TOO_SMALL
        );
        assert_eq!(
            pw_mcp_init(
                base.add(1).cast(),
                need,
                &cfg,
                2,
                NAME.as_ptr(),
                3,
                NAME.as_ptr(),
                3,
                &mut c
            ),
            pw_result::PW_STORAGE_MISALIGNED
        );
        assert_eq!(
            pw_mcp_init(
                base.cast(),
                need,
                &cfg,
                2,
                ptr::null(),
                0,
                NAME.as_ptr(),
                3,
                &mut c
            ),
            pw_result::PW_NULL_POINTER
        );
        // The out-pointer inside the block.
        let inside = block.as_mut_ptr().add(4).cast::<*mut pw_mcp>();
        assert_eq!(
            pw_mcp_init(
                base.cast(),
                need,
                &cfg,
                2,
                NAME.as_ptr(),
                3,
                NAME.as_ptr(),
                3,
                inside
            ),
            pw_result::PW_STORAGE_OVERLAP
        );
        assert_eq!(
            pw_mcp_size(ptr::null(), 1, &mut 0),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(pw_mcp_size(&cfg, 70_000, &mut 0), pw_result::PW_TOO_MANY);
        assert_eq!(pw_mcp_start(ptr::null_mut(), 0), pw_result::PW_NULL_POINTER);
        assert_eq!(
            pw_mcp_handle_timeout(ptr::null_mut(), 0),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(pw_mcp_poll_timeout(ptr::null()), PW_NO_TIMEOUT);
        assert!(pw_mcp_protocol_version(ptr::null()).is_null());
        assert_eq!(
            pw_mcp_handle_closed(ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(pw_mcp_in_flight(ptr::null()), 0);
        assert_eq!(pw_mcp_queued(ptr::null()), 0);
    }
    assert!(c.is_null());
    for bad in [
        pw_mcp_config {
            max_depth: 2,
            ..cfg
        },
        pw_mcp_config { line_cap: 0, ..cfg },
        pw_mcp_config { name_cap: 0, ..cfg },
        pw_mcp_config {
            outbox_cap: PW_MCP_MIN_OUTBOX - 1,
            ..cfg
        },
        pw_mcp_config {
            line_cap: usize::MAX,
            ..cfg
        },
        pw_mcp_config { revision: 3, ..cfg },
    ] {
        assert_eq!(
            init_with(&mut block, &bad, 1, NAME).err(),
            Some(pw_result::PW_BAD_CONFIG)
        );
        let mut n = 0;
        // SAFETY: valid pointers.
        assert_eq!(
            unsafe { pw_mcp_size(&bad, 1, &mut n) },
            pw_result::PW_BAD_CONFIG
        );
        // SAFETY: valid pointers.
        assert_eq!(
            unsafe { pw_mcp_max_frame_len(&bad, &mut n) },
            pw_result::PW_BAD_CONFIG
        );
        assert_eq!(n, 0);
    }
    let long = [b'n'; PW_MCP_CLIENT_TEXT_CAP + 1];
    assert_eq!(
        init_with(&mut block, &cfg, 1, &long).err(),
        Some(pw_result::PW_MCP_CLIENT_INFO_TOO_LONG)
    );
    assert!(init_with(&mut block, &cfg, 1, &long[1..]).is_ok());
    assert_eq!(
        init_with(&mut block, &cfg, 1, b"\xff").err(),
        Some(pw_result::PW_INVALID_UTF8)
    );

    // Short buffers: the size needed, nothing written, the line kept.
    let c = init_with(&mut block, &cfg, 2, NAME).unwrap();
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_start(c, 0) }, pw_result::PW_OK);
    let mut tiny = [7u8; 8];
    let mut n = 0;
    // SAFETY: valid pointers.
    let r = unsafe { pw_mcp_poll_transmit(c, tiny.as_mut_ptr(), tiny.len(), &mut n) };
    assert_eq!((r, tiny), (pw_result::PW_BUFFER_TOO_SMALL, [7; 8]));
    let mut max = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_mcp_max_line_len(&cfg, &mut max) },
        pw_result::PW_OK
    );
    assert!(n > 100 && n <= max, "{n} {max}");
    // An output inside the client's block is refused.
    // SAFETY: a pointer into the block; refused before any write.
    let r = unsafe { pw_mcp_poll_transmit(c, base.add(need - 64), 32, &mut n) };
    assert_eq!(r, pw_result::PW_STORAGE_OVERLAP);
    // SAFETY: a misaligned client pointer, refused before it is read.
    let r = unsafe { pw_mcp_start(c.cast::<u8>().add(1).cast(), 0) };
    assert_eq!(r, pw_result::PW_STORAGE_MISALIGNED);
    assert_eq!(transmit(c).unwrap().len(), n);

    // A frame too long for the buffer: its size, and it stays.
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n",
    );
    assert!(event(c).is_some());
    assert!(transmit(c).is_some() && transmit(c).is_some());
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[]}}\n",
    );
    assert_eq!(event(c).unwrap().tools, 0);
    assert_eq!(handle(c, 0, 0, ECHO).unwrap().request, 3);
    feed(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"Unknown tool: echo\"}}\n");
    let mut f = MaybeUninit::<pw_mcp_frame>::uninit();
    // SAFETY: valid pointers.
    let r = unsafe { pw_mcp_poll_frame(c, tiny.as_mut_ptr(), tiny.len(), f.as_mut_ptr()) };
    // SAFETY: written with PW_BUFFER_TOO_SMALL.
    let needed = unsafe { f.assume_init() }.len;
    let want = r#"{"type":"ERROR","content":{"message":"Unknown tool: echo"}}"#;
    assert_eq!(
        (r, needed, tiny),
        (pw_result::PW_BUFFER_TOO_SMALL, want.len(), [7; 8])
    );
    assert_eq!(frame(c).unwrap(), (0, 0, want.into()));
}

#[test]
fn a_config_fits_a_wrapper_config() {
    let mut cfg = config();
    // SAFETY: one write.
    let mut w = written(|w| unsafe { pw_wrapper_config_default(w) });
    w.name_cap = 40;
    w.max_depth = 12;
    // SAFETY: valid pointers.
    assert_eq!(unsafe { pw_mcp_config_fit(&mut cfg, &w) }, pw_result::PW_OK);
    assert_eq!((cfg.name_cap, cfg.max_depth, cfg.line_cap), (40, 12, 512));
    w.full_validation = 3;
    // SAFETY: valid pointers; the wrapper configuration is out of range.
    assert_eq!(
        unsafe { pw_mcp_config_fit(&mut cfg, &w) },
        pw_result::PW_BAD_CONFIG
    );
    assert_eq!((cfg.name_cap, cfg.max_depth), (40, 12));
    // SAFETY: NULL is refused.
    assert_eq!(
        unsafe { pw_mcp_config_fit(ptr::null_mut(), &w) },
        pw_result::PW_NULL_POINTER
    );
}

/// 2026-07-28's `_meta` members naming the revision and this test's client.
const ENVELOPE: &str = "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\
\"io.modelcontextprotocol/clientCapabilities\":{},\
\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcp-api-test\",\"version\":\"1.0\"}";

/// A client of `revision` whose `server/discover` may go 500 ms unanswered, started at
/// 1000 ms, its `server/discover` polled out.
fn discovering(block: &mut [u64], revision: pw_mcp_revision) -> *mut pw_mcp {
    let cfg = pw_mcp_config {
        revision: revision as u32,
        start_timeout_ms: 500,
        ..config()
    };
    let c = init_with(block, &cfg, 2, NAME).unwrap();
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_poll_timeout(c) }, PW_NO_TIMEOUT);
    // SAFETY: as above.
    assert_eq!(unsafe { pw_mcp_start(c, 1000) }, pw_result::PW_OK);
    // SAFETY: as above.
    assert_eq!(unsafe { pw_mcp_poll_timeout(c) }, 1500);
    assert_eq!(
        transmit(c).unwrap(),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{{\"_meta\":{{{ENVELOPE}}}}}}}\n"
        )
    );
    assert_eq!((transmit(c), spoken(c)), (None, None));
    c
}

/// The tools of a `tools/list` answer, then its last event.
fn listed(c: *mut pw_mcp) -> (Vec<String>, pw_mcp_event) {
    let mut names = Vec::new();
    loop {
        let ev = event(c).unwrap();
        if ev.kind != pw_mcp_event_kind::PW_MCP_EVENT_TOOL {
            return (names, ev);
        }
        names.push(text(&ev.name));
    }
}

/// No handshake and the envelope on every request (SPEC §9.9), `input_required` failing its
/// call (SPEC §9.10), the tools listed again when they change (SPEC §9.12).
#[test]
fn a_server_listing_2026_07_28_is_spoken_to_in_it() {
    let mut block = vec![0u64; size(&config(), 2) / 8 + 1];
    let c = discovering(&mut block, pw_mcp_revision::PW_MCP_REVISION_AUTO);
    let result = r#"{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"2"}}"#;
    feed(
        c,
        &format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{result}}}\n"),
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, text(&ev.version), text(&ev.raw)),
        (
            pw_mcp_event_kind::PW_MCP_EVENT_INITIALIZED,
            "2026-07-28".into(),
            result.into()
        )
    );
    assert_eq!(spoken(c).as_deref(), Some("2026-07-28"));
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_poll_timeout(c) }, PW_NO_TIMEOUT);
    // No handshake: the tools are listed at once, with the envelope.
    assert_eq!(
        transmit(c).unwrap(),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{{\"_meta\":{{{ENVELOPE}}}}}}}\n"
        )
    );
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\"}]}}\n",
    );
    let (names, ev) = listed(c);
    assert_eq!(
        (names, ev.kind, ev.tools),
        (
            vec!["echo".into()],
            pw_mcp_event_kind::PW_MCP_EVENT_READY,
            1
        )
    );
    // The server tells of changes: the client listens for them.
    assert_eq!(
        transmit(c).unwrap(),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"subscriptions/listen\",\"params\":{{\"notifications\":{{\"toolsListChanged\":true}},\"_meta\":{{{ENVELOPE}}}}}}}\n"
        )
    );
    // A call carries the envelope inside its `_meta`, after the progress token.
    assert_eq!(handle(c, 1, 9, ECHO).unwrap().request, 4);
    assert_eq!(
        transmit(c).unwrap(),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"hi\"}},\"_meta\":{{\"progressToken\":4,{ENVELOPE}}}}}}}\n"
        )
    );
    // A result asking for input the client cannot give fails the call.
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{}}}\n",
    );
    assert_eq!(
        frame(c).unwrap(),
        (
            1,
            9,
            r#"{"type":"ERROR","content":{"message":"Tool echo needs input this client cannot give"}}"#.into()
        )
    );
    assert_eq!(frame(c), None);
    // The tools change: the notification, the list asked for again, the new list.
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
    );
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, text(&ev.method)),
        (
            pw_mcp_event_kind::PW_MCP_EVENT_NOTIFICATION,
            "notifications/tools/list_changed".into()
        )
    );
    assert_eq!(
        transmit(c).unwrap(),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{{\"_meta\":{{{ENVELOPE}}}}}}}\n"
        )
    );
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"tools\":[{\"name\":\"add\"},{\"name\":\"echo\"}]}}\n",
    );
    let (names, ev) = listed(c);
    assert_eq!(
        (names, ev.kind, ev.tools),
        (
            vec!["add".into(), "echo".into()],
            pw_mcp_event_kind::PW_MCP_EVENT_TOOLS_CHANGED,
            2
        )
    );
    assert!(event(c).is_none());
    assert_eq!(state(c), pw_mcp_client_state::PW_MCP_STATE_READY);
    let s = stats(c);
    assert_eq!(
        (s.calls, s.answered, s.failed, s.notifications),
        (1, 0, 1, 1)
    );
}

/// The handshake on the same connection (SPEC §9.9).
#[test]
fn a_server_refusing_server_discover_gets_initialize() {
    let initialize =
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\
         \"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp-api-test\",\"version\":\
         \"1.0\"}}}\n";
    for refusal in [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n",
        // An earlier revision's server may not read the id of a request it does not know.
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request\"}}\n",
    ] {
        let mut block = vec![0u64; size(&config(), 2) / 8 + 1];
        let c = discovering(&mut block, pw_mcp_revision::PW_MCP_REVISION_AUTO);
        feed(c, refusal);
        assert!(event(c).is_none(), "{refusal}");
        // SAFETY: a client from pw_mcp_init.
        assert_eq!(unsafe { pw_mcp_poll_timeout(c) }, PW_NO_TIMEOUT);
        assert_eq!(transmit(c).unwrap(), initialize);
        feed(
            c,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n",
        );
        let ev = event(c).unwrap();
        assert_eq!(
            (ev.kind, text(&ev.version)),
            (
                pw_mcp_event_kind::PW_MCP_EVENT_INITIALIZED,
                "2025-11-25".into()
            )
        );
        assert_eq!(spoken(c).as_deref(), Some("2025-11-25"));
        assert_eq!(
            transmit(c).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        );
        assert_eq!(
            transmit(c).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}\n"
        );
    }
}

/// `initialize` at the start-up's deadline; fixed to 2026-07-28, the start-up fails
/// (SPEC §9.9).
#[test]
fn an_unanswered_server_discover_times_out() {
    let mut block = vec![0u64; size(&config(), 2) / 8 + 1];
    let c = discovering(&mut block, pw_mcp_revision::PW_MCP_REVISION_AUTO);
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_handle_timeout(c, 1499) }, pw_result::PW_OK);
    // SAFETY: as above.
    assert_eq!(
        (transmit(c), unsafe { pw_mcp_poll_timeout(c) }),
        (None, 1500)
    );
    // SAFETY: as above.
    assert_eq!(unsafe { pw_mcp_handle_timeout(c, 1500) }, pw_result::PW_OK);
    // SAFETY: as above.
    assert_eq!(unsafe { pw_mcp_poll_timeout(c) }, PW_NO_TIMEOUT);
    assert!(transmit(c)
        .unwrap()
        .starts_with("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","));
    // The late answer is counted and changes nothing.
    feed(
        c,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}\n",
    );
    assert!(event(c).is_none());
    assert_eq!((spoken(c), transmit(c)), (None, None));
    assert_eq!((stats(c).late, stats(c).unknown_id), (1, 0));

    // Fixed to 2026-07-28, the start-up fails instead.
    let c = discovering(&mut block, pw_mcp_revision::PW_MCP_REVISION_2026_07_28);
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_handle_timeout(c, 5000) }, pw_result::PW_OK);
    let ev = event(c).unwrap();
    assert_eq!(
        (ev.kind, ev.start_error, ev.raw.len),
        (
            pw_mcp_event_kind::PW_MCP_EVENT_START_FAILED,
            pw_mcp_start_error::PW_MCP_START_NO_ANSWER,
            0
        )
    );
    assert_eq!(state(c), pw_mcp_client_state::PW_MCP_STATE_FAILED);
    assert_eq!(transmit(c), None);
    assert_eq!(
        handle(c, 0, 0, ECHO).unwrap().failure,
        pw_mcp_failure::PW_MCP_FAILURE_NOT_STARTED
    );
}

#[test]
fn fitting_keeps_the_revision_and_its_timeout() {
    let mut cfg = pw_mcp_config {
        revision: pw_mcp_revision::PW_MCP_REVISION_2026_07_28 as u32,
        start_timeout_ms: 7,
        ..config()
    };
    // SAFETY: one write.
    let w = written(|w| unsafe { pw_wrapper_config_default(w) });
    // SAFETY: valid pointers.
    assert_eq!(unsafe { pw_mcp_config_fit(&mut cfg, &w) }, pw_result::PW_OK);
    assert_eq!(
        (cfg.revision, cfg.start_timeout_ms, cfg.name_cap),
        (2, 7, 64)
    );
    // A revision out of range stays so: the configuration is still refused after fitting.
    cfg.revision = 3;
    cfg.name_cap = 9;
    // SAFETY: valid pointers.
    assert_eq!(unsafe { pw_mcp_config_fit(&mut cfg, &w) }, pw_result::PW_OK);
    assert_eq!((cfg.revision, cfg.name_cap), (3, 64));
    let mut n = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_mcp_size(&cfg, 1, &mut n) },
        pw_result::PW_BAD_CONFIG
    );
}

/// SPEC §11 from C: output schemas read into memory the host hands in; a `structuredContent`
/// that does not satisfy its tool's schema fails the call with the text SPEC gives. A refused
/// schema or name, short, misaligned or overlapping memory change nothing; the memory is then
/// lent (an input inside it is refused); it may be given again, and `n` 0 removes them.
#[test]
fn output_schemas_check_structured_content_in_memory_the_host_hands_in() {
    let cfg = config();
    let mut block = vec![0u64; size(&cfg, 2) / 8 + 1];
    let c = started(&mut block, &cfg, 2);
    let s = |tool: &'static str, schema: &'static str| pw_mcp_output_schema {
        tool: support::span(tool),
        schema: support::span(schema),
    };
    let entries = [s(
        "echo",
        r#"{"type":"object","required":["t"],"properties":{"t":{"type":"number"}}}"#,
    )];
    // SAFETY: valid pointers.
    let need = written(|n| unsafe { pw_mcp_output_schemas_size(1, n) });
    assert!(need > 0 && need <= PW_MCP_MAX_OUTPUT_SCHEMA_SIZE);
    let mut mem = vec![0u64; need.div_ceil(8) + 1];
    let m = mem.as_mut_ptr().cast::<c_void>();
    let set = |mem: *mut c_void, len: usize, e: &[pw_mcp_output_schema]| {
        // SAFETY: valid pointers; `mem` and the texts outlive the client.
        unsafe { pw_mcp_set_output_schemas(c, mem, len, e.as_ptr(), e.len()) }
    };
    assert_eq!(set(m, need - 1, &entries), pw_result::PW_STORAGE_TOO_SMALL);
    let odd = m.cast::<u8>().wrapping_add(1).cast::<c_void>();
    assert_eq!(set(odd, need, &entries), pw_result::PW_STORAGE_MISALIGNED);
    let over = block.as_mut_ptr().cast::<c_void>();
    assert_eq!(set(over, need, &entries), pw_result::PW_STORAGE_OVERLAP);
    assert_eq!(
        set(m, need, &[s("echo", r#"{"$ref":"other.json"}"#)]),
        pw_result::PW_BAD_SCHEMA
    );
    let bad_name = pw_mcp_output_schema {
        tool: pw_str {
            ptr: b"\xff".as_ptr(),
            len: 1,
        },
        ..entries[0]
    };
    assert_eq!(set(m, need, &[bad_name]), pw_result::PW_TEXT_NOT_UTF8);
    assert!(mem.iter().all(|w| *w == 0), "nothing written");
    assert_eq!(set(m, need, &entries), pw_result::PW_OK);

    handle(c, 1, 7, ECHO).unwrap();
    assert!(transmit(c).is_some());
    let structured = |id: u32, content: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"x\"}}],\"structuredContent\":{content}}}}}\n"
        )
    };
    feed(c, &structured(3, r#"{"c":1}"#));
    assert_eq!(
        frame(c).unwrap(),
        (
            1,
            7,
            r#"{"type":"ERROR","content":{"message":"Tool echo returned a result that does not match its output schema: (result): missing required property \"t\""}}"#.into()
        )
    );
    assert_eq!(frame(c), None, "an ERROR ends the call");
    // An input inside the lent memory is refused before it is read.
    let mut used = 0;
    // SAFETY: refused before anything is read.
    let r = unsafe { pw_mcp_feed(c, m.cast::<u8>().cast_const(), 1, &mut used) };
    assert_eq!(r, pw_result::PW_STORAGE_OVERLAP);

    // The same memory again, then none: a result passes unchecked.
    assert_eq!(set(m, need, &entries), pw_result::PW_OK);
    assert_eq!(set(m, need, &[]), pw_result::PW_OK);
    handle(c, 1, 8, ECHO).unwrap();
    assert!(transmit(c).is_some());
    feed(c, &structured(4, r#"{"c":1}"#));
    assert_eq!(
        frame(c).unwrap(),
        (
            1,
            8,
            r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{"c":1}}}"#.into()
        )
    );
}
