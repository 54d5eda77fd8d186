//! The stream decoders' and item encoders' C ABI, called from Rust as C would call it:
//! frames identical to the Rust decoder's, and every refusal its own code with nothing
//! written.

use core::ffi::c_void;
use std::ptr;

use polyweave_tool_adapter_ffi::*;

mod support;

use support::{out_or_code, written};

const BODY: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n\
data: [DONE]\n\n";

const FRAMES: [&str; 3] = [
    r#"{"type":"TEXT","content":"Hi"}"#,
    r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{"a":1}}}"#,
    r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
];

fn config() -> pw_decoder_config {
    // SAFETY: one write.
    let mut c = written(|c| unsafe { pw_decoder_config_default(c) });
    // Small, so miri runs it quickly.
    c.event_cap = 512;
    c.args_cap = 128;
    c
}

fn size(cfg: &pw_decoder_config, calls: usize) -> usize {
    let mut n = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_decoder_size(cfg, calls, &mut n) },
        pw_result::PW_OK
    );
    n
}

fn init(
    block: &mut [u64],
    provider: u32,
    cfg: &pw_decoder_config,
    calls: usize,
) -> Result<*mut pw_decoder, pw_result> {
    let (mem, len) = (block.as_mut_ptr().cast::<c_void>(), block.len() * 8);
    // SAFETY: the block outlives the decoder in each test.
    out_or_code(|d| unsafe { pw_decoder_init(mem, len, provider, cfg, calls, d) })
}

/// Feeds `body` in pieces of `step` bytes and collects the frames, C-style.
fn run(d: *mut pw_decoder, body: &[u8], step: usize) -> Vec<String> {
    let mut frames = Vec::new();
    let mut out = [0u8; 512];
    let mut drain = |frames: &mut Vec<String>| loop {
        let mut n = 0;
        // SAFETY: valid pointers, disjoint from the decoder's block.
        match unsafe { pw_decoder_poll_frame(d, out.as_mut_ptr(), out.len(), &mut n) } {
            pw_result::PW_OK => frames.push(String::from_utf8(out[..n].to_vec()).unwrap()),
            pw_result::PW_NOTHING => {
                assert_eq!(n, 0);
                break;
            }
            e => panic!("{e:?}"),
        }
    };
    for piece in body.chunks(step) {
        let mut at = 0;
        while at < piece.len() {
            let mut used = 0;
            // SAFETY: valid pointers.
            let r =
                unsafe { pw_decoder_feed(d, piece[at..].as_ptr(), piece.len() - at, &mut used) };
            assert_eq!(r, pw_result::PW_OK);
            at += used;
            drain(&mut frames);
        }
    }
    // SAFETY: a decoder from pw_decoder_init.
    assert_eq!(unsafe { pw_decoder_finish(d) }, pw_result::PW_OK);
    drain(&mut frames);
    frames
}

#[test]
fn a_body_decodes_through_the_c_abi_at_any_split_and_again_after_finish() {
    let cfg = config();
    let mut block = vec![0u64; size(&cfg, 2) / 8 + 1];
    let d = init(
        &mut block,
        pw_provider::PW_PROVIDER_OPENAI_CHAT as u32,
        &cfg,
        2,
    )
    .unwrap();
    for step in [BODY.len(), 1, 7, 40] {
        assert_eq!(run(d, BODY, step), FRAMES, "step {step}");
    }
    // SAFETY: valid pointers.
    let stats = written(|s| unsafe { pw_decoder_get_stats(d, s) });
    assert_eq!(
        (stats.calls_started, stats.calls_written, stats.not_json),
        (4, 4, 0)
    );
}

#[test]
fn refusals_have_their_own_codes_and_write_nothing() {
    let cfg = config();
    let need = size(&cfg, 1);
    let mut block = vec![0u64; need / 8 + 2];
    // Unknown provider, memory too small, misaligned, bad config.
    assert_eq!(
        init(&mut block, 0, &cfg, 1).err(),
        Some(pw_result::PW_UNKNOWN_PROVIDER)
    );
    assert_eq!(
        init(&mut block, 6, &cfg, 1).err(),
        Some(pw_result::PW_UNKNOWN_PROVIDER)
    );
    let mut d = ptr::null_mut();
    // SAFETY: valid pointers; the lengths say less than the block has.
    let small = unsafe { pw_decoder_init(block.as_mut_ptr().cast(), need - 1, 1, &cfg, 1, &mut d) };
    assert_eq!(
        (small, d.is_null()),
        (pw_result::PW_STORAGE_TOO_SMALL, true)
    );
    // SAFETY: one byte into the block, still inside it.
    let odd = unsafe {
        pw_decoder_init(
            block.as_mut_ptr().cast::<u8>().add(1).cast(),
            need,
            1,
            &cfg,
            1,
            &mut d,
        )
    };
    assert_eq!((odd, d.is_null()), (pw_result::PW_STORAGE_MISALIGNED, true));
    let bad = pw_decoder_config {
        event_cap: 3,
        ..cfg
    };
    assert_eq!(
        init(&mut block, 1, &bad, 1).err(),
        Some(pw_result::PW_BAD_CONFIG)
    );
    // SAFETY: NULL arguments are refused before anything is read.
    assert_eq!(
        unsafe { pw_decoder_size(ptr::null(), 1, &mut 0) },
        pw_result::PW_NULL_POINTER
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { pw_decoder_finish(ptr::null_mut()) },
        pw_result::PW_NULL_POINTER
    );

    // A short frame buffer: the size needed, nothing written, the frame still there.
    let d = init(&mut block, 1, &cfg, 1).unwrap();
    let mut used = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_decoder_feed(d, BODY.as_ptr(), BODY.len(), &mut used) },
        pw_result::PW_OK
    );
    let mut tiny = [9u8; 8];
    let mut n = 0;
    // SAFETY: valid pointers.
    let r = unsafe { pw_decoder_poll_frame(d, tiny.as_mut_ptr(), tiny.len(), &mut n) };
    assert_eq!(
        (r, n, tiny),
        (pw_result::PW_BUFFER_TOO_SMALL, FRAMES[0].len(), [9; 8])
    );
    // Output overlapping the decoder's own block is refused.
    // SAFETY: a pointer into the block; the check refuses it before any write.
    let inside = unsafe { block.as_mut_ptr().cast::<u8>().add(need - 16) };
    // SAFETY: as above.
    let r = unsafe { pw_decoder_poll_frame(d, inside, 8, &mut n) };
    assert_eq!(r, pw_result::PW_STORAGE_OVERLAP);
    let mut out = [0u8; 64];
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_decoder_poll_frame(d, out.as_mut_ptr(), out.len(), &mut n) },
        pw_result::PW_OK
    );
    assert_eq!(&out[..n], FRAMES[0].as_bytes());
}

#[test]
fn a_decoder_config_fits_a_wrapper_config() {
    let mut cfg = config();
    // SAFETY: one write.
    let mut w = written(|w| unsafe { pw_wrapper_config_default(w) });
    w.name_cap = 40;
    w.id_cap = 50;
    w.max_depth = 10;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_decoder_config_fit(&mut cfg, &w) },
        pw_result::PW_OK
    );
    assert_eq!(
        (cfg.name_cap, cfg.id_cap, cfg.max_depth, cfg.event_cap),
        (40, 50, 8, 512)
    );
    w.mirror_continue = 2;
    let before = (cfg.name_cap, cfg.id_cap, cfg.max_depth);
    // SAFETY: valid pointers; the wrapper configuration is out of range (a flag of 2).
    assert_eq!(
        unsafe { pw_decoder_config_fit(&mut cfg, &w) },
        pw_result::PW_BAD_CONFIG
    );
    assert_eq!((cfg.name_cap, cfg.id_cap, cfg.max_depth), before);
}

#[test]
fn providers_by_name_and_items() {
    let mut p = 0u32;
    for (name, want) in [
        ("openai-chat", pw_provider::PW_PROVIDER_OPENAI_CHAT),
        (
            "openai-responses",
            pw_provider::PW_PROVIDER_OPENAI_RESPONSES,
        ),
        ("anthropic", pw_provider::PW_PROVIDER_ANTHROPIC),
        ("gemini", pw_provider::PW_PROVIDER_GEMINI),
        ("ollama", pw_provider::PW_PROVIDER_OLLAMA),
    ] {
        // SAFETY: valid pointers.
        assert_eq!(
            unsafe { pw_provider_from_name(name.as_ptr(), name.len(), &mut p) },
            pw_result::PW_OK
        );
        assert_eq!(p, want as u32);
    }
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { pw_provider_from_name(b"bedrock".as_ptr(), 7, &mut p) },
        pw_result::PW_UNKNOWN_PROVIDER
    );

    let encode = |provider: u32, frame: &str, cap: usize| -> (pw_result, usize, Vec<u8>) {
        let mut out = vec![0xAAu8; cap];
        let mut n = 0;
        // SAFETY: valid pointers.
        let r = unsafe {
            pw_encode_item(
                provider,
                frame.as_ptr(),
                frame.len(),
                out.as_mut_ptr(),
                cap,
                &mut n,
            )
        };
        (r, n, out)
    };
    let result = r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"add","error":"boom"}}"#;
    let want = br#"{"type":"tool_result","tool_use_id":"c1","content":"boom","is_error":true}"#;
    let (r, n, out) = encode(3, result, 128);
    assert_eq!((r, &out[..n]), (pw_result::PW_OK, &want[..]));
    let (r, n, out) = encode(3, result, 10);
    assert_eq!(
        (r, n, out),
        (pw_result::PW_BUFFER_TOO_SMALL, want.len(), vec![0xAA; 10])
    );
    for (frame, code) in [
        (
            r#"{"type":"TEXT","content":"x"}"#,
            pw_result::PW_ITEM_NOT_CALL_OR_RESULT,
        ),
        (
            r#"{"type":"TOOL_CALL","content":{"id":"c"}}"#,
            pw_result::PW_ITEM_NO_NAME,
        ),
        (
            r#"{"type":"TOOL_CALL","content":{"name":"n"}}"#,
            pw_result::PW_ITEM_NO_ID,
        ),
        (
            r#"{"type":"TOOL_RESULT","content":{"id":"c","name":"n"}}"#,
            pw_result::PW_ITEM_NO_OUTCOME,
        ),
        (r#"{"type":"TOOL_CALL","#, pw_result::PW_INVALID_JSON),
        ("[1]", pw_result::PW_FRAME_NOT_OBJECT),
    ] {
        let (r, _, out) = encode(1, frame, 64);
        assert_eq!((r, out), (code, vec![0xAA; 64]), "{frame}");
    }
    assert_eq!(encode(9, result, 64).0, pw_result::PW_UNKNOWN_PROVIDER);
}
