//! The standalone adapter call's C ABI, called from Rust as C would call it.

use core::ffi::c_void;
use std::mem::MaybeUninit;
use std::ptr;

use polyweave_tool_adapter_ffi::*;

mod support;

use support::{out_or_code, span, text, written};

/// A call with a 64-byte result capacity, started at `now` in `block`.
fn start(
    block: &mut [u64],
    opts: &pw_adapter_call_options,
    now: u64,
) -> Result<*mut pw_adapter_call, pw_result> {
    let (mem, len) = (block.as_mut_ptr().cast::<c_void>(), block.len() * 8);
    // SAFETY: valid pointers; the block and the options' spans outlive the call in each test.
    out_or_code(|c| unsafe { pw_adapter_call_init(mem, len, 64, now, opts, c) })
}

fn options() -> pw_adapter_call_options {
    // SAFETY: one write.
    written(|o| unsafe { pw_adapter_call_options_default(o) })
}

fn next_frame(c: *mut pw_adapter_call) -> Option<String> {
    let mut buf = [0u8; 256];
    let mut n = 0;
    // SAFETY: valid pointers.
    match unsafe { pw_adapter_call_poll_transmit(c, buf.as_mut_ptr(), buf.len(), &mut n) } {
        pw_result::PW_OK => Some(String::from_utf8(buf[..n].to_vec()).unwrap()),
        pw_result::PW_NOTHING => None,
        e => panic!("poll_transmit: {e:?}"),
    }
}

fn settlement(c: *mut pw_adapter_call) -> Option<(u8, String)> {
    let mut o = MaybeUninit::uninit();
    // SAFETY: valid pointers.
    match unsafe { pw_adapter_call_outcome(c, o.as_mut_ptr()) } {
        pw_result::PW_OK => {
            // SAFETY: written on PW_OK.
            let o = unsafe { o.assume_init() };
            Some((o.is_error, text(&o.text)))
        }
        pw_result::PW_NOTHING => None,
        e => panic!("settlement: {e:?}"),
    }
}

fn frame(c: *mut pw_adapter_call, now: u64, f: &str) -> pw_result {
    // SAFETY: valid pointers.
    unsafe { pw_adapter_call_handle_frame(c, now, f.as_ptr(), f.len()) }
}

#[test]
fn a_call_settles_on_its_first_result_then_end() {
    let mut size = 0;
    // SAFETY: one write.
    assert_eq!(
        unsafe { pw_adapter_call_size(64, &mut size) },
        pw_result::PW_OK
    );
    let mut block = vec![0u64; size.div_ceil(8)];
    let opts = pw_adapter_call_options {
        name: span("search"),
        id: span("q1"),
        has_id: 1,
        args: span("{ \"q\" : \"oslo\" }"),
        timeout_ms: 1000,
        ..options()
    };
    let c = start(&mut block, &opts, 10).unwrap();
    assert_eq!(
        next_frame(c).as_deref(),
        Some(r#"{"type":"TOOL_CALL","content":{"id":"q1","name":"search","args":{"q":"oslo"}}}"#)
    );
    assert_eq!(next_frame(c), None);
    // SAFETY: a valid call.
    assert_eq!(unsafe { pw_adapter_call_poll_timeout(c) }, 1010);
    assert_eq!(settlement(c), None);
    assert_eq!(
        frame(
            c,
            11,
            r#"{"type":"TOOL_RESULT","content":{"result":[ 21 ]}}"#
        ),
        pw_result::PW_OK
    );
    assert_eq!(
        frame(c, 11, r#"{"type":7}"#),
        pw_result::PW_FRAME_TYPE_NOT_STRING
    );
    assert_eq!(frame(c, 12, r#"{"type":"END"}"#), pw_result::PW_OK);
    assert_eq!(settlement(c), Some((0, "[21]".into())));
    assert_eq!(
        frame(c, 13, r#"{"type":"END"}"#),
        pw_result::PW_CALL_COMPLETED
    );
    // SAFETY: as above.
    assert_eq!(unsafe { pw_adapter_call_poll_timeout(c) }, PW_NO_TIMEOUT);
}

#[test]
fn a_timeout_sends_cancel_and_settles_with_its_message() {
    let mut block = vec![0u64; 64];
    let opts = pw_adapter_call_options {
        timeout_ms: 100,
        ..options()
    };
    let c = start(&mut block, &opts, 0).unwrap();
    next_frame(c);
    // SAFETY: a valid call.
    assert_eq!(
        unsafe { pw_adapter_call_handle_timeout(c, 100) },
        pw_result::PW_OK
    );
    assert_eq!(
        next_frame(c).as_deref(),
        Some(r#"{"type":"CANCEL","content":{"name":"unknown","reason":"timeout"}}"#)
    );
    assert_eq!(
        settlement(c),
        Some((1, "Tool unknown timed out after 100ms".into()))
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { pw_adapter_call_handle_closed(c, 101) },
        pw_result::PW_CALL_TIMED_OUT
    );
}

#[test]
fn bad_arguments_get_their_codes() {
    let mut block = vec![0u64; 64];
    let o = options();
    // SAFETY (every call below): pointers valid or deliberately NULL / short / odd.
    unsafe {
        let mut c = ptr::null_mut();
        assert_eq!(
            pw_adapter_call_init(ptr::null_mut(), 512, 64, 0, &o, &mut c),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_adapter_call_init(block.as_mut_ptr().cast(), 16, 64, 0, &o, &mut c),
            pw_result::PW_STORAGE_TOO_SMALL
        );
        let odd = block.as_mut_ptr().cast::<u8>().add(1).cast();
        assert_eq!(
            pw_adapter_call_init(odd, 500, 64, 0, &o, &mut c),
            pw_result::PW_STORAGE_MISALIGNED
        );
        let bad_args = pw_adapter_call_options {
            args: span("{\"a\":"),
            ..o
        };
        assert_eq!(
            pw_adapter_call_init(block.as_mut_ptr().cast(), 512, 64, 0, &bad_args, &mut c),
            pw_result::PW_INVALID_JSON
        );
        let bad_flag = pw_adapter_call_options { has_id: 3, ..o };
        assert_eq!(
            pw_adapter_call_init(block.as_mut_ptr().cast(), 512, 64, 0, &bad_flag, &mut c),
            pw_result::PW_BAD_ARGUMENT
        );
        // A result buffer that cannot hold `Tool unknown timed out after 30000ms`.
        assert_eq!(
            pw_adapter_call_init(block.as_mut_ptr().cast(), 512, 8, 0, &o, &mut c),
            pw_result::PW_BAD_CONFIG
        );
        assert!(c.is_null(), "nothing written on error");
        let c = start(&mut block, &o, 0).unwrap();
        let mut small = [0u8; 8];
        let mut n = 0;
        assert_eq!(
            pw_adapter_call_poll_transmit(c, small.as_mut_ptr(), small.len(), &mut n),
            pw_result::PW_BUFFER_TOO_SMALL
        );
        assert_eq!(
            n,
            r#"{"type":"TOOL_CALL","content":{"name":"unknown","args":{}}}"#.len()
        );
        assert_eq!(
            pw_adapter_call_handle_closed(ptr::null_mut(), 0),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(pw_adapter_call_handle_timeout(c, 0), pw_result::PW_OK);
        let inside = block.as_ptr().cast::<u8>().add(8);
        assert_eq!(
            pw_adapter_call_handle_frame(c, 0, inside, 4),
            pw_result::PW_STORAGE_OVERLAP
        );
        assert_eq!(pw_adapter_call_poll_timeout(ptr::null()), PW_NO_TIMEOUT);
        // Still usable.
        assert!(next_frame(c).is_some());
        assert_eq!(pw_adapter_call_handle_closed(c, 1), pw_result::PW_OK);
        assert_eq!(settlement(c), Some((0, "null".into())));
    }
}
