//! The conversation's and the request's C ABI, called from Rust as C would call it: bodies
//! identical to the Rust API's whatever the buffer, every refusal its own code with nothing
//! changed and nothing written, and a conversation changed under a request refused.

use core::ffi::c_void;
use std::ptr;

use polyweave_tool_adapter::request::{
    Conversation, Declaration, Request, RequestOptions, ToolChoice,
};
use polyweave_tool_adapter::Provider;
use polyweave_tool_adapter_ffi::*;

mod support;

use support::{out_or_code, written};

const FRAMES: [&str; 5] = [
    r#"{"type":"TEXT","content":"Let me "}"#,
    r#"{"type":"TEXT","content":"add."}"#,
    r#"{"type":"TOOL_CALL","content":{"id":"call_1","name":"add","args":{"a":2,"b":3}}}"#,
    r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
    r#"{"type":"TOOL_RESULT","content":{"id":"call_1","name":"add","result":5}}"#,
];
const SCHEMA: &str =
    r#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}"#;
const MCP_ENTRY: &str = r#"{"name":"fs.read","title":"Read","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}"#;

const PROVIDERS: [(pw_provider, Provider); 5] = [
    (pw_provider::PW_PROVIDER_OPENAI_CHAT, Provider::OpenAiChat),
    (
        pw_provider::PW_PROVIDER_OPENAI_RESPONSES,
        Provider::OpenAiResponses,
    ),
    (pw_provider::PW_PROVIDER_ANTHROPIC, Provider::Anthropic),
    (pw_provider::PW_PROVIDER_GEMINI, Provider::Gemini),
    (pw_provider::PW_PROVIDER_OLLAMA, Provider::Ollama),
];

fn s(text: &'static str) -> pw_str {
    pw_str {
        ptr: text.as_ptr(),
        len: text.len(),
    }
}

fn bytes(b: &'static [u8]) -> pw_str {
    pw_str {
        ptr: b.as_ptr(),
        len: b.len(),
    }
}

/// A conversation's block: `capacity` bytes of memory after the object.
fn conversation_block(capacity: usize) -> Vec<u64> {
    // SAFETY: one write.
    let n = written(|n| unsafe { pw_conversation_size(capacity, n) });
    assert!(n <= PW_CONVERSATION_MAX_BASE_SIZE + capacity);
    vec![0u64; n.div_ceil(8)]
}

fn conversation(block: &mut [u64]) -> *mut pw_conversation {
    let (mem, len) = (block.as_mut_ptr().cast::<c_void>(), block.len() * 8);
    // SAFETY: the block outlives the conversation in each test.
    written(|c| unsafe { pw_conversation_init(mem, len, c) })
}

fn stats(c: *const pw_conversation) -> (usize, usize, usize, u32) {
    // SAFETY: valid pointers.
    let s = written(|s| unsafe { pw_conversation_get_stats(c, s) });
    (s.used, s.capacity, s.entries, s.evicted)
}

fn user(c: *mut pw_conversation, text: &[u8]) -> pw_result {
    // SAFETY: valid pointers.
    unsafe { pw_conversation_push_user(c, text.as_ptr(), text.len()) }
}

/// Hands a frame in: the code, and what `*out` holds after (`u32::MAX`: unwritten).
fn push(c: *mut pw_conversation, frame: &str) -> (pw_result, u32) {
    let mut out = u32::MAX;
    // SAFETY: valid pointers; a `pw_pushed` is a `uint32_t` in C.
    let r = unsafe {
        pw_conversation_push_frame(
            c,
            frame.as_ptr(),
            frame.len(),
            (&raw mut out).cast::<pw_pushed>(),
        )
    };
    (r, out)
}

/// The test's conversation through the C ABI.
fn fill(c: *mut pw_conversation) {
    let sys = "Be \"terse\".";
    // SAFETY: valid pointers.
    let r = unsafe { pw_conversation_set_system(c, sys.as_ptr(), sys.len()) };
    assert_eq!(r, pw_result::PW_OK);
    assert_eq!(user(c, b"Add 2 and 3"), pw_result::PW_OK);
    // SAFETY: a conversation from pw_conversation_init.
    let r =
        unsafe { pw_conversation_begin_response(c, pw_provider::PW_PROVIDER_OPENAI_CHAT as u32) };
    assert_eq!(r, pw_result::PW_OK);
    let want = [
        pw_pushed::PW_PUSHED_KEPT,
        pw_pushed::PW_PUSHED_KEPT,
        pw_pushed::PW_PUSHED_KEPT,
        pw_pushed::PW_PUSHED_ENDED,
        pw_pushed::PW_PUSHED_KEPT,
    ];
    for (f, w) in FRAMES.iter().zip(want) {
        assert_eq!(push(c, f), (pw_result::PW_OK, w as u32), "{f}");
    }
    assert_eq!(user(c, b"Thanks \xe2\x9c\x93"), pw_result::PW_OK);
}

/// The same conversation through the Rust API.
fn fill_rust(c: &mut Conversation<'_>) {
    c.set_system("Be \"terse\".").unwrap();
    c.push_user("Add 2 and 3").unwrap();
    c.begin_response(Provider::OpenAiChat).unwrap();
    for f in FRAMES {
        c.push_frame(f.as_bytes()).unwrap();
    }
    c.push_user("Thanks \u{2713}").unwrap();
}

fn c_declarations() -> [pw_declaration; 2] {
    [
        pw_declaration {
            mcp_entry: pw_str {
                ptr: ptr::null(),
                len: 0,
            },
            name: s("add"),
            description: s("Adds two numbers"),
            schema: s(SCHEMA),
            strict: 0,
        },
        pw_declaration {
            mcp_entry: s(MCP_ENTRY),
            name: s(""),
            description: s(""),
            schema: s(""),
            strict: 0,
        },
    ]
}

fn options() -> pw_request_options {
    // SAFETY: one write.
    let mut o = written(|o| unsafe { pw_request_options_default(o) });
    o.model = s("m");
    o.max_tokens = 100;
    o.tool_choice = pw_tool_choice::PW_TOOL_CHOICE_AUTO as u32;
    o.extra = s(r#"{"temperature":0.2}"#);
    o
}

fn request_block(n: usize) -> Vec<u64> {
    // SAFETY: one write.
    let size = written(|k| unsafe { pw_request_size(n, k) });
    assert!(size <= PW_REQUEST_MAX_BASE_SIZE + n * PW_REQUEST_MAX_DECLARATION_SIZE);
    vec![0u64; size.div_ceil(8)]
}

/// `pw_request_init` on `block`: the request, or the code and what `*bad_index` holds after
/// (`usize::MAX`: unwritten).
fn request(
    block: &mut [u64],
    c: *const pw_conversation,
    provider: u32,
    opts: &pw_request_options,
    decls: &[pw_declaration],
) -> Result<*mut pw_request, (pw_result, usize)> {
    let (mem, len) = (block.as_mut_ptr().cast::<c_void>(), block.len() * 8);
    let mut index = usize::MAX;
    let mut r = ptr::null_mut();
    // SAFETY: the block, the declarations and their spans outlive the request in each test.
    let code = unsafe {
        pw_request_init(
            mem,
            len,
            c,
            provider,
            opts,
            decls.as_ptr(),
            decls.len(),
            &mut r,
            &mut index,
        )
    };
    match code {
        pw_result::PW_OK => Ok(r),
        e => {
            assert!(r.is_null(), "{e:?} wrote *out");
            Err((e, index))
        }
    }
}

/// The whole body through buffers of `chunk` bytes, then `PW_NOTHING` twice.
fn body(r: *mut pw_request, chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; chunk];
    loop {
        let mut n = usize::MAX;
        // SAFETY: valid pointers, apart from every block.
        match unsafe { pw_request_write(r, buf.as_mut_ptr(), chunk, &mut n) } {
            pw_result::PW_OK => {
                assert!((1..=chunk).contains(&n));
                out.extend_from_slice(&buf[..n]);
            }
            pw_result::PW_NOTHING => {
                assert_eq!(n, 0);
                break;
            }
            e => panic!("{e:?}"),
        }
    }
    let mut n = 7;
    // SAFETY: as above.
    let again = unsafe { pw_request_write(r, buf.as_mut_ptr(), chunk, &mut n) };
    assert_eq!((again, n), (pw_result::PW_NOTHING, 0));
    out
}

fn len(r: *const pw_request) -> Result<usize, pw_result> {
    // SAFETY: valid pointers.
    out_or_code(|n| unsafe { pw_request_len(r, n) })
}

/// SPEC §10.3 through the C ABI: the Rust API's body for every provider, the same bytes
/// whatever the buffer's size, its length known first.
#[test]
fn a_body_through_the_c_abi_is_the_rust_body_in_any_buffer() {
    let mut block = conversation_block(2048);
    let c = conversation(&mut block);
    fill(c);
    let mut mem = [0u8; 2048];
    let mut rust = Conversation::new(&mut mem);
    fill_rust(&mut rust);
    assert_eq!(stats(c), (rust.used(), 2048, 4, 0));

    let decls = c_declarations();
    let rust_decls = [
        Declaration::new("add", Some(SCHEMA.as_bytes())).description("Adds two numbers"),
        Declaration::from_mcp(MCP_ENTRY.as_bytes()).unwrap(),
    ];
    let opts = options();
    let rust_opts = RequestOptions {
        model: "m",
        max_tokens: Some(100),
        tool_choice: Some(ToolChoice::Auto),
        extra: Some(br#"{"temperature":0.2}"#),
    };
    let mut rblock = request_block(decls.len());
    for (cp, p) in PROVIDERS {
        let mut want = vec![0u8; 4096];
        let mut req = Request::new(&rust, p, &rust_opts, &rust_decls).unwrap();
        let n = req.write(&mut want);
        assert_eq!((n, req.write(&mut want[n..])), (req.len(), 0));
        want.truncate(n);
        // Under miri one provider takes the 1-byte buffers (the same code for every one):
        // a byte at a time is a write call per byte, each checked.
        let chunks: &[usize] = match (cfg!(miri), p) {
            (true, Provider::Anthropic) | (false, _) => &[1, 7, 64],
            (true, _) => &[7, 64],
        };
        for &chunk in chunks {
            let r = request(&mut rblock, c, cp as u32, &opts, &decls).unwrap();
            assert_eq!(len(r), Ok(want.len()));
            assert_eq!(body(r, chunk), want, "{} in {chunk}-byte buffers", p.name());
        }
    }
    // The same bytes for one provider, spelled out.
    let r = request(
        &mut rblock,
        c,
        pw_provider::PW_PROVIDER_ANTHROPIC as u32,
        &opts,
        &decls,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(body(r, 64)).unwrap(),
        concat!(
            r#"{"model":"m","max_tokens":100,"system":"Be \"terse\".","messages":["#,
            r#"{"role":"user","content":"Add 2 and 3"},"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"Let me add."},{"type":"tool_use","id":"call_1","name":"add","input":{"a":2,"b":3}}]},"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"5"},{"type":"text","text":"Thanks ✓"}]}],"#,
            r#""tools":[{"name":"add","description":"Adds two numbers","input_schema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}},"#,
            r#"{"name":"fs_read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],"#,
            r#""tool_choice":{"type":"auto"},"stream":true,"temperature":0.2}"#
        )
    );
}

/// SPEC §10.2 through the C ABI: each refusal (a result for no call, a second result, no
/// room, …) its own code, and nothing changed.
#[test]
fn conversation_refusals_have_their_own_codes_and_change_nothing() {
    let mut block = conversation_block(256);
    let c = conversation(&mut block);
    let (sys, empty) = (b"sys", b"");
    // SAFETY: valid pointers.
    let r = unsafe { pw_conversation_set_system(c, empty.as_ptr(), 0) };
    assert_eq!(r, pw_result::PW_CONVERSATION_EMPTY_TEXT);
    // SAFETY: valid pointers.
    let r = unsafe { pw_conversation_set_system(c, sys.as_ptr(), 3) };
    assert_eq!(r, pw_result::PW_OK);
    assert_eq!(user(c, b"go"), pw_result::PW_OK);
    // A response frame before any response begun.
    assert_eq!(
        push(c, FRAMES[0]),
        (pw_result::PW_CONVERSATION_NO_RESPONSE, u32::MAX)
    );
    // SAFETY: a conversation from pw_conversation_init.
    let r = unsafe { pw_conversation_begin_response(c, pw_provider::PW_PROVIDER_ANTHROPIC as u32) };
    assert_eq!(r, pw_result::PW_OK);
    assert_eq!(
        push(c, FRAMES[2]),
        (pw_result::PW_OK, pw_pushed::PW_PUSHED_KEPT as u32)
    );
    let before = stats(c);
    assert_eq!(before.2, 3);
    let refused = [
        (
            r#"{"type":"TEXT","content":5}"#,
            pw_result::PW_CONVERSATION_BAD_CONTENT,
        ),
        (
            r#"{"type":"TOOL_RESULT","content":{"id":"call_1","result":1}}"#,
            pw_result::PW_CONVERSATION_NO_NAME,
        ),
        (
            r#"{"type":"TOOL_RESULT","content":{"id":"nope","name":"add","result":1}}"#,
            pw_result::PW_CONVERSATION_UNKNOWN_CALL,
        ),
        (
            r#"{"type":"TOOL_RESULT","content":{"id":"call_1","name":"add"}}"#,
            pw_result::PW_CONVERSATION_NO_OUTCOME,
        ),
        ("[1]", pw_result::PW_FRAME_NOT_OBJECT),
        (r#"{"content":1}"#, pw_result::PW_FRAME_MISSING_TYPE),
        (r#"{"type":"TEXT","#, pw_result::PW_INVALID_JSON),
    ];
    for (frame, code) in refused {
        assert_eq!(push(c, frame), (code, u32::MAX), "{frame}");
        assert_eq!(stats(c), before, "{frame} changed the conversation");
    }
    assert_eq!(
        push(c, r#"{"type":"PING","content":1}"#),
        (pw_result::PW_OK, pw_pushed::PW_PUSHED_IGNORED as u32)
    );
    assert_eq!(stats(c), before);
    assert_eq!(
        push(c, FRAMES[4]),
        (pw_result::PW_OK, pw_pushed::PW_PUSHED_KEPT as u32)
    );
    let answered = stats(c);
    assert_eq!(
        push(c, FRAMES[4]),
        (pw_result::PW_CONVERSATION_ALREADY_ANSWERED, u32::MAX)
    );
    // Texts: empty, not UTF-8, too big for the memory.
    for (text, code) in [
        (&b""[..], pw_result::PW_CONVERSATION_EMPTY_TEXT),
        (b"\xff", pw_result::PW_TEXT_NOT_UTF8),
        (&[b'x'; 300][..], pw_result::PW_CONVERSATION_NO_ROOM),
    ] {
        assert_eq!(user(c, text), code);
        assert_eq!(stats(c), answered);
    }
    // SAFETY: a conversation from pw_conversation_init; 2 is not a flag.
    assert_eq!(
        unsafe { pw_conversation_pin_first_user(c, 2) },
        pw_result::PW_BAD_ARGUMENT
    );
    // SAFETY: as above; 9 is no provider.
    assert_eq!(
        unsafe { pw_conversation_begin_response(c, 9) },
        pw_result::PW_UNKNOWN_PROVIDER
    );
    assert_eq!(stats(c), answered);
    // NULLs.
    // SAFETY: NULL arguments are refused before anything is read.
    unsafe {
        assert_eq!(
            pw_conversation_push_user(c, ptr::null(), 0),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_conversation_clear(ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_conversation_get_stats(c, ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_conversation_size(1, ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
    }
    // A text inside the conversation's own block.
    // SAFETY: a pointer into the block; refused before it is read.
    let inside = unsafe { block.as_ptr().cast::<u8>().add(200) };
    // SAFETY: as above.
    let r = unsafe { pw_conversation_push_user(c, inside, 4) };
    assert_eq!(r, pw_result::PW_STORAGE_OVERLAP);
    assert_eq!(stats(c), answered);
    // SAFETY: a conversation from pw_conversation_init.
    assert_eq!(unsafe { pw_conversation_clear(c) }, pw_result::PW_OK);
    assert_eq!(stats(c), (0, 256, 0, 0));

    // Placing: too small, misaligned, a size past SIZE_MAX.
    let mut small = vec![0u64; 16];
    let mut out = ptr::null_mut();
    // SAFETY: valid pointers; the length says less than the object needs.
    let r = unsafe { pw_conversation_init(small.as_mut_ptr().cast(), 8, &mut out) };
    assert_eq!((r, out.is_null()), (pw_result::PW_STORAGE_TOO_SMALL, true));
    // SAFETY: one byte into the block, still inside it.
    let r = unsafe {
        pw_conversation_init(small.as_mut_ptr().cast::<u8>().add(1).cast(), 120, &mut out)
    };
    assert_eq!((r, out.is_null()), (pw_result::PW_STORAGE_MISALIGNED, true));
    let mut n = 0;
    // SAFETY: valid pointers.
    let r = unsafe { pw_conversation_size(usize::MAX, &mut n) };
    assert_eq!((r, n), (pw_result::PW_BAD_ARGUMENT, 0));
}

/// SPEC §10.1 and §10.3 through the C ABI: every refusal from the declarations, its code and
/// the declaration's index, nothing placed; the options' refusals leave the index alone.
#[test]
fn request_refusals_have_their_own_codes_and_name_the_declaration() {
    let mut block = conversation_block(512);
    let c = conversation(&mut block);
    assert_eq!(user(c, b"hi"), pw_result::PW_OK);
    let mut rblock = request_block(3);
    let opts = options();
    let chat = pw_provider::PW_PROVIDER_OPENAI_CHAT as u32;
    let host = |name: &'static str, schema: &'static str, strict: u8| pw_declaration {
        mcp_entry: s(""),
        name: s(name),
        description: s(""),
        schema: s(schema),
        strict,
    };
    let ok = host("add", SCHEMA, 0);
    let cases: [([pw_declaration; 2], (pw_result, usize)); 8] = [
        (
            [ok, host("bad name", "", 0)],
            (pw_result::PW_DECLARATION_BAD_NAME, 1),
        ),
        (
            [host("x", SCHEMA, 1), ok],
            (pw_result::PW_DECLARATION_NOT_STRICT, 0),
        ),
        (
            [ok, host("x", "[1]", 0)],
            (pw_result::PW_DECLARATION_BAD_SCHEMA, 1),
        ),
        (
            [
                ok,
                pw_declaration {
                    mcp_entry: s(r#"{"title":"no name"}"#),
                    ..ok
                },
            ],
            (pw_result::PW_DECLARATION_BAD_ENTRY, 1),
        ),
        ([ok, ok], (pw_result::PW_DECLARATION_DUPLICATE_NAME, 1)),
        (
            [
                ok,
                pw_declaration {
                    name: bytes(b"\xffx"),
                    ..ok
                },
            ],
            (pw_result::PW_TEXT_NOT_UTF8, 1),
        ),
        (
            [
                pw_declaration {
                    description: bytes(b"\xc3"),
                    ..ok
                },
                ok,
            ],
            (pw_result::PW_TEXT_NOT_UTF8, 0),
        ),
        ([host("x", "", 2), ok], (pw_result::PW_BAD_ARGUMENT, 0)),
    ];
    for (decls, want) in cases {
        assert_eq!(
            request(&mut rblock, c, chat, &opts, &decls).err(),
            Some(want),
            "{want:?}"
        );
    }
    // Options: the index stays unwritten.
    let decls = [ok];
    let with = |f: &dyn Fn(&mut pw_request_options)| {
        let mut o = options();
        f(&mut o);
        o
    };
    let ollama = pw_provider::PW_PROVIDER_OLLAMA as u32;
    let tool_choice = |choice: pw_tool_choice| with(&|o| o.tool_choice = choice as u32);
    let cases = [
        (
            ollama,
            tool_choice(pw_tool_choice::PW_TOOL_CHOICE_REQUIRED),
            pw_result::PW_REQUEST_TOOL_CHOICE_UNSUPPORTED,
        ),
        (
            chat,
            with(&|o| {
                o.tool_choice = pw_tool_choice::PW_TOOL_CHOICE_TOOL as u32;
                o.tool = s("nothing");
            }),
            pw_result::PW_REQUEST_UNKNOWN_TOOL,
        ),
        (
            chat,
            with(&|o| o.extra = s(r#"{"temperature":}"#)),
            pw_result::PW_REQUEST_BAD_EXTRA,
        ),
        (
            chat,
            with(&|o| o.extra = s("[1]")),
            pw_result::PW_REQUEST_BAD_EXTRA,
        ),
        (
            chat,
            with(&|o| o.extra = s(r#"{"messages":[]}"#)),
            pw_result::PW_REQUEST_EXTRA_CLASH,
        ),
        (
            chat,
            with(&|o| o.tool_choice = 5),
            pw_result::PW_BAD_ARGUMENT,
        ),
        (
            chat,
            with(&|o| o.model = bytes(b"\xfe")),
            pw_result::PW_TEXT_NOT_UTF8,
        ),
        (9, options(), pw_result::PW_UNKNOWN_PROVIDER),
    ];
    for (p, o, code) in cases {
        assert_eq!(
            request(&mut rblock, c, p, &o, &decls).err(),
            Some((code, usize::MAX)),
            "{code:?}"
        );
    }
    // Ollama takes `auto`; a named tool is found by its declared or its model name.
    assert!(request(&mut rblock, c, ollama, &opts, &decls).is_ok());
    let named = with(&|o| {
        o.tool_choice = pw_tool_choice::PW_TOOL_CHOICE_TOOL as u32;
        o.tool = s("fs_read");
    });
    let mcp = c_declarations();
    let r = request(&mut rblock, c, chat, &named, &mcp).unwrap();
    let text = String::from_utf8(body(r, 64)).unwrap();
    assert!(
        text.contains(r#""tool_choice":{"type":"function","function":{"name":"fs_read"}}"#),
        "{text}"
    );

    // Memory: too small, misaligned, the conversation's block, a span inside the block.
    // SAFETY: one write.
    let need = written(|k| unsafe { pw_request_size(1, k) });
    let mut r = ptr::null_mut();
    let mut index = usize::MAX;
    // SAFETY: valid pointers; the length says less than the block needs.
    let code = unsafe {
        pw_request_init(
            rblock.as_mut_ptr().cast(),
            need - 1,
            c,
            chat,
            &opts,
            decls.as_ptr(),
            1,
            &mut r,
            &mut index,
        )
    };
    assert_eq!(
        (code, r.is_null(), index),
        (pw_result::PW_STORAGE_TOO_SMALL, true, usize::MAX)
    );
    // SAFETY: one byte into the block, still inside it.
    let code = unsafe {
        pw_request_init(
            rblock.as_mut_ptr().cast::<u8>().add(1).cast(),
            need,
            c,
            chat,
            &opts,
            decls.as_ptr(),
            1,
            &mut r,
            &mut index,
        )
    };
    assert_eq!(
        (code, r.is_null()),
        (pw_result::PW_STORAGE_MISALIGNED, true)
    );
    let before = stats(c);
    // SAFETY: the conversation's own block as the request's: refused before any write.
    let code = unsafe {
        pw_request_init(
            block.as_mut_ptr().cast(),
            block.len() * 8,
            c,
            chat,
            &opts,
            decls.as_ptr(),
            1,
            &mut r,
            &mut index,
        )
    };
    assert_eq!((code, r.is_null()), (pw_result::PW_STORAGE_OVERLAP, true));
    assert_eq!(stats(c), before);
    let model_inside = with(&|o| {
        o.model = pw_str {
            ptr: rblock.as_ptr().cast::<u8>().wrapping_add(8),
            len: 1,
        }
    });
    assert_eq!(
        request(&mut rblock, c, chat, &model_inside, &decls).err(),
        Some((pw_result::PW_STORAGE_OVERLAP, usize::MAX))
    );
    // A declaration's span with no bytes behind it: its index.
    let null_name = [
        ok,
        pw_declaration {
            name: pw_str {
                ptr: ptr::null(),
                len: 3,
            },
            ..ok
        },
    ];
    assert_eq!(
        request(&mut rblock, c, chat, &opts, &null_name).err(),
        Some((pw_result::PW_NULL_POINTER, 1))
    );
    // A misaligned array of declarations: refused before any is read.
    let mut words = [0u64; 8];
    // SAFETY: one byte into `words`; refused before it is read.
    let odd = unsafe { words.as_mut_ptr().cast::<u8>().add(1) }.cast::<pw_declaration>();
    // SAFETY: as above.
    let code = unsafe {
        pw_request_init(
            rblock.as_mut_ptr().cast(),
            need,
            c,
            chat,
            &opts,
            odd,
            1,
            &mut r,
            &mut index,
        )
    };
    assert_eq!(
        (code, index),
        (pw_result::PW_STORAGE_MISALIGNED, usize::MAX)
    );
    // SAFETY: NULL arguments are refused before anything is read.
    let code = unsafe {
        pw_request_init(
            rblock.as_mut_ptr().cast(),
            need,
            c,
            chat,
            &opts,
            ptr::null(),
            0,
            &mut r,
            &mut index,
        )
    };
    assert_eq!(code, pw_result::PW_NULL_POINTER);
    let mut n = 0;
    // SAFETY: valid pointers.
    let code = unsafe { pw_request_size(usize::MAX / 8, &mut n) };
    assert_eq!((code, n), (pw_result::PW_BAD_ARGUMENT, 0));

    // Writing: a buffer of 0 bytes, one inside the conversation's block.
    let r = request(&mut rblock, c, chat, &opts, &decls).unwrap();
    let mut buf = [0u8; 4];
    // SAFETY: valid pointers.
    let code = unsafe { pw_request_write(r, buf.as_mut_ptr(), 0, &mut n) };
    assert_eq!((code, n), (pw_result::PW_BUFFER_TOO_SMALL, 1));
    n = 99;
    // SAFETY: a pointer into the conversation's block; refused before any write.
    let code = unsafe { pw_request_write(r, block.as_mut_ptr().cast::<u8>().add(100), 4, &mut n) };
    assert_eq!((code, n), (pw_result::PW_STORAGE_OVERLAP, 99));
    // SAFETY: valid pointers.
    let code = unsafe { pw_request_write(r, buf.as_mut_ptr(), 4, &mut n) };
    assert_eq!((code, n, &buf), (pw_result::PW_OK, 4, b"{\"mo"));
}

/// A request borrows its conversation: any call that may change it makes the request stale,
/// a query does not.
#[test]
fn a_conversation_changed_under_a_request_is_refused() {
    let mut block = conversation_block(512);
    let c = conversation(&mut block);
    assert_eq!(user(c, b"hi"), pw_result::PW_OK);
    let mut rblock = request_block(0);
    let opts = options();
    let chat = pw_provider::PW_PROVIDER_OPENAI_CHAT as u32;
    let want = br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":100,"stream":true,"stream_options":{"include_usage":true},"temperature":0.2}"#;
    let r = request(&mut rblock, c, chat, &opts, &[]).unwrap();
    assert_eq!(body(r, 7), want);

    type Change = dyn Fn(*mut pw_conversation) -> pw_result;
    let changes: [(&Change, pw_result); 10] = [
        (&|c| user(c, b"more"), pw_result::PW_OK),
        // A refused call counts too: it was handed the conversation to change.
        (&|c| user(c, b""), pw_result::PW_CONVERSATION_EMPTY_TEXT),
        (&|c| user(c, b"\xff"), pw_result::PW_TEXT_NOT_UTF8),
        // SAFETY (each): a conversation from pw_conversation_init.
        (
            &|c| unsafe { pw_conversation_pin_first_user(c, 2) },
            pw_result::PW_BAD_ARGUMENT,
        ),
        (
            &|c| unsafe { pw_conversation_begin_response(c, 0) },
            pw_result::PW_UNKNOWN_PROVIDER,
        ),
        (
            &|c| unsafe { pw_conversation_pin_first_user(c, 1) },
            pw_result::PW_OK,
        ),
        (
            &|c| unsafe { pw_conversation_end_response(c) },
            pw_result::PW_OK,
        ),
        (
            &|c| unsafe { pw_conversation_begin_response(c, 3) },
            pw_result::PW_OK,
        ),
        (&|c| push(c, r#"{"type":"PING"}"#).0, pw_result::PW_OK),
        (&|c| unsafe { pw_conversation_clear(c) }, pw_result::PW_OK),
    ];
    for (i, (change, returns)) in changes.into_iter().enumerate() {
        let r = request(&mut rblock, c, chat, &opts, &[]).unwrap();
        let mut buf = [0u8; 16];
        let mut n = 0;
        // SAFETY: valid pointers.
        let code = unsafe { pw_request_write(r, buf.as_mut_ptr(), buf.len(), &mut n) };
        assert_eq!((code, n), (pw_result::PW_OK, 16));
        // Queries do not change it: the request goes on where it was.
        let measured = len(r).unwrap();
        assert_eq!(stats(c).1, 512);
        assert_eq!(len(r), Ok(measured));
        // SAFETY: valid pointers.
        let code = unsafe { pw_request_write(r, buf.as_mut_ptr(), buf.len(), &mut n) };
        assert_eq!(
            (code, n, &buf),
            (pw_result::PW_OK, 16, br#"ssages":[{"role""#)
        );
        assert_eq!(change(c), returns, "change {i}");
        assert_eq!(len(r), Err(pw_result::PW_REQUEST_STALE), "change {i}");
        n = 99;
        // SAFETY: valid pointers.
        let code = unsafe { pw_request_write(r, buf.as_mut_ptr(), buf.len(), &mut n) };
        assert_eq!((code, n), (pw_result::PW_REQUEST_STALE, 99), "change {i}");
    }
    // A request made again reads the conversation as it is now: cleared.
    let r = request(&mut rblock, c, chat, &opts, &[]).unwrap();
    assert_eq!(
        String::from_utf8(body(r, 64)).unwrap(),
        r#"{"model":"m","messages":[],"max_completion_tokens":100,"stream":true,"stream_options":{"include_usage":true},"temperature":0.2}"#
    );
}

#[test]
fn gemini_paths_and_sizes() {
    let mut out = [0u8; 64];
    let mut n = 0;
    let model = "gemini-2.5-flash";
    // SAFETY: valid pointers.
    let code = unsafe {
        pw_request_gemini_path(model.as_ptr(), model.len(), out.as_mut_ptr(), 64, &mut n)
    };
    assert_eq!(
        (code, &out[..n]),
        (
            pw_result::PW_OK,
            &b"models/gemini-2.5-flash:streamGenerateContent?alt=sse"[..]
        )
    );
    let mut short = [7u8; 10];
    // SAFETY: valid pointers.
    let code = unsafe {
        pw_request_gemini_path(model.as_ptr(), model.len(), short.as_mut_ptr(), 10, &mut n)
    };
    assert_eq!(
        (code, n, short),
        (pw_result::PW_BUFFER_TOO_SMALL, 53, [7; 10])
    );
    // SAFETY: valid pointers.
    let code = unsafe { pw_request_gemini_path(b"\xff".as_ptr(), 1, out.as_mut_ptr(), 64, &mut n) };
    assert_eq!(code, pw_result::PW_TEXT_NOT_UTF8);
    // SAFETY: the output overlaps the input: refused before any write.
    let code = unsafe { pw_request_gemini_path(out.as_ptr(), 4, out.as_mut_ptr(), 64, &mut n) };
    assert_eq!(code, pw_result::PW_STORAGE_OVERLAP);

    assert!(pw_conversation_align() <= PW_MAX_ALIGN && pw_request_align() <= PW_MAX_ALIGN);
    // SAFETY: one write each.
    let (zero, ten) = (
        written(|k| unsafe { pw_conversation_size(0, k) }),
        written(|k| unsafe { pw_conversation_size(10, k) }),
    );
    assert_eq!(ten, zero + 10);
    let mut block = conversation_block(100);
    let c = conversation(&mut block);
    // The capacity is every byte after the object.
    assert_eq!(stats(c).1, block.len() * 8 - zero);
}
