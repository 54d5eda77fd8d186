//! Stream decoders against hostile models, careless hosts and broken providers: every
//! call that starts comes out as exactly one `TOOL_CALL` (broken arguments with
//! `args_error`), bad provider data is skipped and counted, a short frame buffer changes
//! nothing, memory does not grow with the stream, and a broken call reaches the model
//! as a `TOOL_RESULT` error through the wrapper.

use polyweave_tests::alloc_count::{measure, Counting};
use polyweave_tests::drive::{at, drain, echo};
use polyweave_tests::streams::{decode, decode_polled, decode_with, feed_all, recordings};
use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig, DecoderStats};
use polyweave_tool_adapter::{NoHooks, Route, Slot, Tool, Wrapper, WrapperConfig};
use polyweave_tool_adapter::{Provider, StorageError};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn whole(provider: Provider, body: &str) -> Vec<String> {
    decode(provider, body.as_bytes(), || usize::MAX).frames
}

fn chat(chunks: &[&str]) -> String {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect()
}

const CHAT_CALL: &str = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c0","function":{"name":"get","arguments":"{\"q\":"}}]}}]}"#;
const CHAT_MORE: &str = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}"#;
const CHAT_FINISH: &str = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;

#[test]
fn a_cut_stream_writes_the_open_call_as_incomplete_then_end_null() {
    let frames = whole(Provider::OpenAiChat, &chat(&[CHAT_CALL]));
    assert_eq!(
        frames,
        [
            r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args":"{\"q\":","args_error":"Tool get arguments are incomplete"}}"#,
            r#"{"type":"END","content":{"reason":null}}"#,
        ]
    );
}

#[test]
fn args_that_are_not_json_are_written_as_text_with_args_error() {
    let bad = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]}"#;
    let frames = whole(
        Provider::OpenAiChat,
        &chat(&[CHAT_CALL, bad, CHAT_FINISH, "[DONE]"]),
    );
    assert_eq!(
        frames[0],
        r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args":"{\"q\":}","args_error":"Tool get arguments are not valid JSON"}}"#
    );
    assert_eq!(
        frames[1],
        r#"{"type":"END","content":{"reason":"tool_calls"}}"#
    );
    assert_eq!(frames.len(), 2);
}

#[test]
fn args_nested_past_the_depth_limit_are_not_valid_json() {
    let cfg = DecoderConfig {
        max_depth: 3,
        ..DecoderConfig::DEFAULT
    };
    let call = |args: &str| {
        let chunk = serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":args}}]},"finish_reason":"stop"}]});
        let body = chat(&[&chunk.to_string()]);
        decode_with(Provider::OpenAiChat, cfg, 2, body.as_bytes(), || usize::MAX).frames[0].clone()
    };
    assert_eq!(
        call(r#"{"a":[{"b":1}]}"#),
        r#"{"type":"TOOL_CALL","content":{"name":"f","args":{"a":[{"b":1}]}}}"#
    );
    assert_eq!(
        call(r#"{"a":[{"b":[]}]}"#),
        r#"{"type":"TOOL_CALL","content":{"name":"f","args":"{\"a\":[{\"b\":[]}]}","args_error":"Tool f arguments are not valid JSON"}}"#
    );
}

#[test]
fn args_over_the_capacity_fail_the_call_without_args() {
    let cfg = DecoderConfig {
        args_cap: 4,
        ..DecoderConfig::DEFAULT
    };
    let body = chat(&[CHAT_CALL, CHAT_MORE, CHAT_FINISH]);
    let frames = decode_with(Provider::OpenAiChat, cfg, 1, body.as_bytes(), || 7).frames;
    assert_eq!(
        frames,
        [
            r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args_error":"Tool get args exceed 4 bytes"}}"#,
            r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
        ]
    );
}

#[test]
fn a_call_with_no_free_slot_is_written_at_once_and_its_pieces_are_dropped() {
    let second = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c1","function":{"name":"put","arguments":"{}"}}]}}]}"#;
    let more = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}"#;
    let body = chat(&[CHAT_CALL, second, more, CHAT_MORE, CHAT_FINISH, "[DONE]"]);
    let frames = decode_with(
        Provider::OpenAiChat,
        DecoderConfig::DEFAULT,
        1,
        body.as_bytes(),
        || usize::MAX,
    )
    .frames;
    assert_eq!(
        frames,
        [
            r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"put","args_error":"Too many parallel tool calls (max 1)"}}"#,
            r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args":{"q":1}}}"#,
            r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
        ]
    );
    // With no slot at all, every call still comes out once.
    let frames = decode_with(
        Provider::OpenAiChat,
        DecoderConfig::DEFAULT,
        0,
        body.as_bytes(),
        || usize::MAX,
    )
    .frames;
    assert_eq!(frames.len(), 3);
    assert!(frames[0]
        .contains(r#""id":"c0","name":"get","args_error":"Too many parallel tool calls (max 0)""#));
    assert!(frames[1]
        .contains(r#""id":"c1","name":"put","args_error":"Too many parallel tool calls (max 0)""#));
}

#[test]
fn an_overlong_event_is_skipped_and_fails_the_call_it_carried() {
    let cfg = DecoderConfig {
        event_cap: 200,
        ..DecoderConfig::DEFAULT
    };
    let long = format!(
        r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":"{}"}}}}]}}}}]}}"#,
        "x".repeat(300)
    );
    let text = r#"{"choices":[{"index":0,"delta":{"content":"after"}}]}"#;
    let body = chat(&[CHAT_CALL, &long, text, CHAT_MORE, CHAT_FINISH]);
    let d = decode_with(Provider::OpenAiChat, cfg, 2, body.as_bytes(), || 13);
    assert_eq!(
        d.frames,
        [
            r#"{"type":"TEXT","content":"after"}"#,
            r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args":"{\"q\":1}","args_error":"Tool get arguments are not valid JSON"}}"#,
            r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
        ]
    );
    assert_eq!(
        d.stats,
        DecoderStats {
            overlong: 1,
            calls_started: 1,
            calls_written: 1,
            ..DecoderStats::default()
        }
    );
}

#[test]
fn bad_provider_data_is_counted_by_kind_and_decoding_goes_on() {
    let body = "data: {not json\n\nevent: surprise\ndata: {}\n\ndata: {\"choices\":7}\n\n"
        .to_string()
        + &chat(&[CHAT_CALL, CHAT_MORE, CHAT_FINISH, "[DONE]"])
        + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"late\"}}]}\n\n";
    let d = decode(Provider::OpenAiChat, body.as_bytes(), || 5);
    assert_eq!(
        d.frames,
        [
            r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args":{"q":1}}}"#,
            r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
        ]
    );
    assert_eq!(
        d.stats,
        DecoderStats {
            not_json: 1,
            unknown_event: 1,
            bad_shape: 1,
            after_end: 1,
            calls_started: 1,
            calls_written: 1,
            ..DecoderStats::default()
        }
    );
}

/// A Chat chunk's top level is read from what its validation noted (up to ten members), else
/// walked: the same frames and counts either way, whatever the members around `choices`, white
/// space (spaces and tabs: a line break would end the SSE line), an escaped name, a repeated
/// `choices` (the last wins) or a null `error`.
#[test]
fn a_chat_chunk_reads_the_same_however_its_top_level_is_written() {
    let text = r#""choices":[{"index":0,"delta":{"content":"hi"}}]"#;
    let chunks = [
        text,
        &CHAT_CALL[1..CHAT_CALL.len() - 1],
        &CHAT_MORE[1..CHAT_MORE.len() - 1],
        &CHAT_FINISH[1..CHAT_FINISH.len() - 1],
    ];
    let around = r#""id":"c-1","object":"chat.completion.chunk","created":1770772293,"model":"m""#;
    let after = r#""system_fingerprint":"fp","usage":null,"service_tier":"default""#;
    let many = (0..11)
        .map(|i| format!(r#""x{i}":{i}"#))
        .collect::<Vec<_>>()
        .join(",");
    let many = many.as_str();
    let decoy = r#""choices":[{"index":0,"delta":{"content":"not this"}}]"#;
    type Dress<'a> = Box<dyn Fn(&str) -> String + 'a>;
    let dressings: [(&str, Dress); 7] = [
        ("bare", Box::new(|c| format!("{{{c}}}"))),
        (
            "a real chunk's members (noted)",
            Box::new(move |c| format!("{{{around},{c},{after}}}")),
        ),
        (
            "eleven more (walked)",
            Box::new(move |c| format!("{{{many},{c}}}")),
        ),
        (
            "white space",
            Box::new(|c| {
                format!(
                    " {{ \"id\" : \"x\" ,\t{} , \"n\" : [ 1 , {{ }} ] }} ",
                    c.replacen(':', " : ", 1)
                )
            }),
        ),
        (
            "an escaped name",
            Box::new(|c| format!("{{\"\\u0063hoices\"{}}}", &c["\"choices\"".len()..])),
        ),
        (
            "a repeated choices",
            Box::new(move |c| format!("{{{decoy},\"error\":null,{c}}}")),
        ),
        (
            "eleven and a repeated choices",
            Box::new(move |c| format!("{{{decoy},{many},{c}}}")),
        ),
    ];
    let want = [
        r#"{"type":"TEXT","content":"hi"}"#,
        r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args":{"q":1}}}"#,
        r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
    ];
    for (how, dress) in &dressings {
        let dressed: Vec<String> = chunks.iter().map(|c| dress(c)).collect();
        let refs: Vec<&str> = dressed.iter().map(String::as_str).collect();
        let body = chat(&refs);
        for piece in [usize::MAX, 7] {
            let d = decode(Provider::OpenAiChat, body.as_bytes(), || piece);
            assert_eq!(d.frames, want, "{how}, pieces of {piece}: {body}");
            let stats = DecoderStats {
                calls_started: 1,
                calls_written: 1,
                ..DecoderStats::default()
            };
            assert_eq!(d.stats, stats, "{how}");
        }
    }
    // An `error` among the members ends the response, noted or walked alike.
    for (how, prefix) in [("noted", String::new()), ("walked", format!("{many},"))] {
        let failing = format!(r#"{{{prefix}"id":"e","error":{{"message":"overloaded"}},{text}}}"#);
        let d = decode(
            Provider::OpenAiChat,
            chat(&[&failing, CHAT_CALL]).as_bytes(),
            || usize::MAX,
        );
        assert_eq!(
            d.frames,
            [
                r#"{"type":"ERROR","content":{"message":"overloaded"}}"#,
                r#"{"type":"END","content":{"reason":null}}"#,
            ],
            "{how}"
        );
    }
}

#[test]
fn an_error_in_the_stream_ends_the_response_and_nothing_after_it_is_read() {
    let err = r#"{"error":{"message":"overloaded","type":"server_error"}}"#;
    let body = chat(&[CHAT_CALL, err, CHAT_MORE, CHAT_FINISH]);
    let d = decode(Provider::OpenAiChat, body.as_bytes(), || usize::MAX);
    assert_eq!(
        d.frames,
        [
            r#"{"type":"ERROR","content":{"message":"overloaded"}}"#,
            r#"{"type":"TOOL_CALL","content":{"id":"c0","name":"get","args":"{\"q\":","args_error":"Tool get arguments are incomplete"}}"#,
            r#"{"type":"END","content":{"reason":null}}"#,
        ]
    );
    assert_eq!(d.stats.after_end, 2);
    // An SSE `error` event, as OpenAI-compatible servers send one, is the stream's error too.
    let body = format!(
        "data: {CHAT_CALL}\n\nevent: error\ndata: {{\"error\":{{\"message\":\"quota\"}}}}\n\n"
    );
    let frames = whole(Provider::OpenAiChat, &body);
    assert_eq!(
        frames[0],
        r#"{"type":"ERROR","content":{"message":"quota"}}"#
    );
    assert_eq!(frames.len(), 3);
    // An error value without a message is written as its own JSON text.
    let frames = whole(Provider::Ollama, "{\"error\":{\"code\":7}}\n");
    assert_eq!(
        frames[0],
        r#"{"type":"ERROR","content":{"message":"{\"code\":7}"}}"#
    );
}

/// Every recording with every frame first polled into a 16-byte buffer, then a big one:
/// the short poll reports the size needed, writes nothing and changes nothing. With 8 slots,
/// 1 and none, so that calls refused for want of a slot (whose refusal already changed the
/// state when their frame is asked for) are written once too.
#[test]
fn a_short_frame_buffer_gets_the_size_needed_and_changes_nothing() {
    for r in recordings() {
        for slot_count in [8, 1, 0] {
            let cfg = DecoderConfig::DEFAULT;
            let want = decode_with(r.provider, cfg, slot_count, &r.body, || usize::MAX).frames;
            let mut slots = vec![CallSlot::EMPTY; slot_count];
            let mut arena = vec![0u8; cfg.arena_len(slot_count)];
            let mut d = Decoder::new(r.provider, cfg, &mut slots, &mut arena).unwrap();
            let mut got = Vec::new();
            let mut small = [0u8; 16];
            let mut big = vec![0u8; cfg.max_frame_len()];
            let mut take = |d: &mut Decoder<'_>, got: &mut Vec<String>| loop {
                match d.poll_frame(&mut small) {
                    Ok(None) => break,
                    Ok(Some(_)) => panic!("no frame is 16 bytes or less"),
                    Err(e) => {
                        assert_eq!(small, [0; 16], "a short buffer is untouched");
                        // Asking again with a short buffer changes nothing either.
                        assert_eq!(d.poll_frame(&mut small), Err(e));
                        let n = d.poll_frame(&mut big).unwrap().unwrap();
                        assert_eq!(n, e.needed, "{}", r.name);
                        got.push(String::from_utf8(big[..n].to_vec()).unwrap());
                    }
                }
            };
            feed_all(&mut d, &r.body, usize::MAX, |d| take(d, &mut got));
            assert_eq!(got, want, "{} with {slot_count} slots", r.name);
            let stats = d.stats();
            assert_eq!(
                stats.calls_started, stats.calls_written,
                "{} with {slot_count} slots",
                r.name
            );
        }
    }
}

#[test]
fn after_finish_the_same_decoder_reads_the_next_body_alike() {
    for r in recordings() {
        let want = decode(r.provider, &r.body, || usize::MAX).frames;
        let cfg = DecoderConfig::DEFAULT;
        let mut slots = [CallSlot::EMPTY; 8];
        let mut arena = vec![0u8; cfg.arena_len(8)];
        let mut d = Decoder::new(r.provider, cfg, &mut slots, &mut arena).unwrap();
        let mut out = vec![0u8; cfg.max_frame_len()];
        for round in 0..3 {
            let mut got = Vec::new();
            // Feeding while frames wait takes nothing.
            let mut input = &r.body[..];
            while !input.is_empty() {
                let n = d.feed(input);
                input = &input[n..];
                if d.has_frames() {
                    assert_eq!(d.feed(input), 0);
                }
                while let Some(n) = d.poll_frame(&mut out).unwrap() {
                    got.push(String::from_utf8(out[..n].to_vec()).unwrap());
                }
            }
            d.finish();
            while let Some(n) = d.poll_frame(&mut out).unwrap() {
                got.push(String::from_utf8(out[..n].to_vec()).unwrap());
            }
            assert_eq!(got, want, "{} round {round}", r.name);
        }
    }
}

#[test]
fn storage_is_checked() {
    let cfg = DecoderConfig::SMALL;
    let mut slots = [CallSlot::EMPTY; 2];
    let mut arena = vec![0u8; cfg.arena_len(2) - 1];
    assert_eq!(
        Decoder::new(Provider::Gemini, cfg, &mut slots, &mut arena).err(),
        Some(StorageError::ArenaTooSmall {
            needed: cfg.arena_len(2),
            given: cfg.arena_len(2) - 1
        })
    );
    let bad = DecoderConfig {
        id_cap: 70_000,
        ..cfg
    };
    assert_eq!(
        Decoder::new(Provider::Gemini, bad, &mut slots, &mut arena).err(),
        Some(StorageError::BadConfig)
    );
    assert_eq!(cfg.arena_len(2), 2048 + 64 + 256 + 2 * (48 + 32 + 512));
}

/// An Anthropic body of `calls` tool_use blocks, each with a text block before it.
fn anthropic_body(calls: usize, text_pieces: usize) -> String {
    let ev = |name: &str, data: String| format!("event: {name}\ndata: {data}\n\n");
    let mut s = ev(
        "message_start",
        r#"{"type":"message_start","message":{"id":"m","content":[]}}"#.into(),
    );
    for i in 0..calls {
        let (t, c) = (2 * i, 2 * i + 1);
        s += &ev(
            "content_block_start",
            format!(
                r#"{{"type":"content_block_start","index":{t},"content_block":{{"type":"text","text":""}}}}"#
            ),
        );
        for _ in 0..text_pieces {
            s += &ev(
                "content_block_delta",
                format!(
                    r#"{{"type":"content_block_delta","index":{t},"delta":{{"type":"text_delta","text":"thinking about it, step by step, with care..."}}}}"#
                ),
            );
        }
        s += &ev(
            "content_block_stop",
            format!(r#"{{"type":"content_block_stop","index":{t}}}"#),
        );
        s += &ev(
            "content_block_start",
            format!(
                r#"{{"type":"content_block_start","index":{c},"content_block":{{"type":"tool_use","id":"toolu_{i}","name":"echo","input":{{}}}}}}"#
            ),
        );
        for piece in [r#"{\"text\":"#, r#"\"0123456789abcdef\"}"#] {
            s += &ev(
                "content_block_delta",
                format!(
                    r#"{{"type":"content_block_delta","index":{c},"delta":{{"type":"input_json_delta","partial_json":"{piece}"}}}}"#
                ),
            );
        }
        s += &ev(
            "content_block_stop",
            format!(r#"{{"type":"content_block_stop","index":{c}}}"#),
        );
    }
    s += &ev(
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#.into(),
    );
    s + &ev("message_stop", r#"{"type":"message_stop"}"#.into())
}

#[test]
fn a_10_mb_body_of_1000_calls_decodes_in_the_memory_of_a_1_kb_one_without_the_heap() {
    let big = anthropic_body(1000, 60);
    let small = anthropic_body(1, 1);
    assert!(
        big.len() > 10_000_000 && small.len() < 1500,
        "{} {}",
        big.len(),
        small.len()
    );
    // One slot and the small configuration: 2,960 bytes of arena for either body.
    let cfg = DecoderConfig::SMALL;
    let mut slots = [CallSlot::EMPTY; 1];
    let mut arena = [0u8; DecoderConfig::SMALL.arena_len(1)];
    assert_eq!(arena.len(), 2960);
    let mut d = Decoder::new(Provider::Anthropic, cfg, &mut slots, &mut arena).unwrap();
    let mut out = [0u8; 512];
    let mut run = |d: &mut Decoder<'_>, body: &str| {
        let (mut calls, mut texts) = (0, 0);
        let mut count = |d: &mut Decoder<'_>| {
            while let Some(n) = d.poll_frame(&mut out).unwrap() {
                match &out[..n] {
                    f if f.starts_with(br#"{"type":"TOOL_CALL","content":{"id":"toolu_"#) => {
                        assert!(
                            f.ends_with(br#""name":"echo","args":{"text":"0123456789abcdef"}}}"#)
                        );
                        calls += 1
                    }
                    f if f.starts_with(br#"{"type":"TEXT""#) => texts += 1,
                    f => assert_eq!(f, br#"{"type":"END","content":{"reason":"tool_use"}}"#),
                }
            }
        };
        feed_all(d, body.as_bytes(), usize::MAX, &mut count);
        (calls, texts)
    };
    let (got, allocs, frees) = measure(|| (run(&mut d, &big), run(&mut d, &small)));
    assert_eq!(got, ((1000, 60_000), (1, 1)));
    assert_eq!((allocs, frees), (0, 0));
    assert_eq!(
        d.stats(),
        DecoderStats {
            calls_started: 1001,
            calls_written: 1001,
            ..DecoderStats::default()
        }
    );
}

/// Broken arguments reach the model as the call's `TOOL_RESULT` error, through the wrapper.
#[test]
fn broken_arguments_reach_the_model_through_the_wrapper() {
    let by_name = |name: &str| recordings().into_iter().find(|r| r.name == name).unwrap();
    for (name, tool, error) in [
        (
            "anthropic/anthropic-sdk-incomplete-partial-json-response",
            "make_file",
            "Tool make_file arguments are not valid JSON",
        ),
        (
            "anthropic/variant-cut-mid-input",
            "weather",
            "Tool weather arguments are incomplete",
        ),
        (
            "openai-responses/variant-cut-mid-arguments",
            "get_weather",
            "Tool get_weather arguments are incomplete",
        ),
    ] {
        let r = by_name(name);
        let frames = decode(r.provider, &r.body, || usize::MAX).frames;
        let tools = [Tool::sync(tool, &echo)];
        let mut slots = [Slot::EMPTY; 2];
        let mut arena = vec![0u8; WrapperConfig::DEFAULT.arena_len(2)];
        let mut w = Wrapper::new(
            WrapperConfig::DEFAULT,
            &tools,
            NoHooks,
            &mut slots,
            &mut arena,
        )
        .unwrap();
        let mut to_model = Vec::new();
        for f in &frames {
            w.handle_response(at(1), f.as_bytes()).unwrap();
            to_model.extend(
                drain(&mut w)
                    .into_iter()
                    .filter(|(r, _)| *r == Route::Model)
                    .map(|(_, f)| f),
            );
        }
        let id = r.expected["tool_calls"][0]["id"].as_str().unwrap();
        assert_eq!(
            to_model[0],
            format!(
                r#"{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{tool}","error":"{error}"}}}}"#
            ),
            "{name}"
        );
    }
}

fn gemini(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| format!("data: {{\"candidates\":[{{\"content\":{{\"parts\":[{p}]}}}}]}}\r\n\r\n"))
        .collect()
}

#[test]
fn gemini_streamed_arguments_are_assembled_at_any_depth() {
    let body = gemini(&[
        r#"{"functionCall":{"name":"f","id":"g1","willContinue":true}}"#,
        r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.a[0][0]","numberValue":1},{"jsonPath":"$.a[0][1]","boolValue":true}],"willContinue":true}}"#,
        r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.a[1].b","nullValue":null},{"jsonPath":"$['c d']","stringValue":"x\"","willContinue":true}],"willContinue":true}}"#,
        r#"{"functionCall":{"partialArgs":[{"jsonPath":"$['c d']","stringValue":"y"}],"willContinue":true}}"#,
        r#"{"functionCall":{"willContinue":true}}"#,
        r#"{"functionCall":{}}"#,
        r#"{"text":"done"},{"text":"hm","thought":true}"#,
    ]);
    assert_eq!(
        whole(Provider::Gemini, &body),
        [
            r#"{"type":"TOOL_CALL","content":{"id":"g1","name":"f","args":{"a":[[1,true],{"b":null}],"c d":"x\"y"}}}"#,
            r#"{"type":"TEXT","content":"done"}"#,
            r#"{"type":"REASONING","content":"hm"}"#,
            r#"{"type":"END","content":{"reason":null}}"#,
        ]
    );
}

#[test]
fn gemini_a_path_that_cannot_be_placed_breaks_the_call_only() {
    for bad in [r#""$a""#, r#""a.b""#, r#""$.a[x]""#, r#""$""#, "7"] {
        let piece = format!(
            r#"{{"functionCall":{{"partialArgs":[{{"jsonPath":"$.ok","numberValue":1}},{{"jsonPath":{bad},"numberValue":2}}],"willContinue":true}}}}"#
        );
        let body = gemini(&[
            r#"{"functionCall":{"name":"f","willContinue":true}}"#,
            &piece,
            r#"{"functionCall":{}}"#,
            r#"{"functionCall":{"name":"g","args":{"z":1}}}"#,
        ]);
        let frames = whole(Provider::Gemini, &body);
        assert_eq!(
            frames[0],
            r#"{"type":"TOOL_CALL","content":{"name":"f","args":"{\"ok\":1","args_error":"Tool f arguments are not valid JSON"}}"#,
            "{bad}"
        );
        assert_eq!(
            frames[1],
            r#"{"type":"TOOL_CALL","content":{"name":"g","args":{"z":1}}}"#
        );
    }
    // A path that changes a container's kind starts a new member of that name (a duplicate
    // key: JSON readers keep the last).
    let body = gemini(&[
        r#"{"functionCall":{"name":"f","willContinue":true}}"#,
        r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.a[0]","numberValue":1},{"jsonPath":"$.a.b","numberValue":2}]}}"#,
    ]);
    assert_eq!(
        whole(Provider::Gemini, &body)[0],
        r#"{"type":"TOOL_CALL","content":{"name":"f","args":{"a":[1],"a":{"b":2}}}}"#
    );
}

#[test]
fn every_provider_writes_a_call_with_no_free_slot_at_once() {
    let anthropic = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"n\",\"input\":{}}}\n\n";
    let responses = "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc\",\"call_id\":\"t1\",\"name\":\"n\",\"arguments\":\"\"}}\n\n";
    let gemini_call = gemini(&[r#"{"functionCall":{"name":"n","id":"t1","args":{}}}"#]);
    let ollama = "{\"message\":{\"tool_calls\":[{\"id\":\"t1\",\"function\":{\"name\":\"n\",\"arguments\":{}}}]}}\n";
    for (provider, body) in [
        (Provider::Anthropic, anthropic.to_string()),
        (Provider::OpenAiResponses, responses.to_string()),
        (Provider::Gemini, gemini_call),
        (Provider::Ollama, ollama.to_string()),
    ] {
        let frames = decode_with(provider, DecoderConfig::DEFAULT, 0, body.as_bytes(), || 3).frames;
        assert_eq!(
            frames,
            [
                r#"{"type":"TOOL_CALL","content":{"id":"t1","name":"n","args_error":"Too many parallel tool calls (max 0)"}}"#,
                r#"{"type":"END","content":{"reason":null}}"#,
            ],
            "{provider:?}"
        );
    }
}

/// A decoder made to fit a wrapper (`DecoderConfig::fitting`) never writes a call the
/// wrapper refuses: args at the wrapper's depth limit less two go through, one level deeper
/// comes out with `args_error`, and each call gets its `TOOL_RESULT`.
#[test]
fn a_decoder_fitting_a_wrapper_writes_only_calls_the_wrapper_answers() {
    let wcfg = WrapperConfig::DEFAULT;
    let dcfg = DecoderConfig::DEFAULT.fit(&wcfg);
    assert_eq!((dcfg.max_depth, dcfg.name_cap, dcfg.id_cap), (30, 64, 64));
    let nested =
        |depth: usize| format!("{}{}", "{\"a\":".repeat(depth - 1) + "{", "}".repeat(depth));
    for (depth, fails) in [(30, false), (31, true)] {
        let args = nested(depth);
        let chunk = serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":args}}]},"finish_reason":"tool_calls"}]});
        let body = chat(&[&chunk.to_string()]);
        let frames = decode_with(Provider::OpenAiChat, dcfg, 2, body.as_bytes(), || {
            usize::MAX
        })
        .frames;
        assert_eq!(frames[0].contains("args_error"), fails, "depth {depth}");
        let tools = [Tool::sync("echo", &echo)];
        let mut slots = [Slot::EMPTY; 2];
        let mut arena = vec![0u8; wcfg.arena_len(2)];
        let mut w = Wrapper::new(wcfg, &tools, NoHooks, &mut slots, &mut arena).unwrap();
        w.handle_response(at(1), frames[0].as_bytes()).unwrap();
        let results: Vec<String> = drain(&mut w)
            .into_iter()
            .filter(|(r, f)| *r == Route::Model && f.starts_with(r#"{"type":"TOOL_RESULT""#))
            .map(|(_, f)| f)
            .collect();
        assert_eq!(results.len(), 1, "depth {depth}");
        let error = r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","error":"Tool echo arguments are not valid JSON"}}"#;
        assert_eq!(results[0] == error, fails, "depth {depth}: {}", results[0]);
    }
    // Without fitting, the default decoder's deepest args make a frame the default wrapper
    // refuses as malformed: the pairing rule is needed.
    let args = nested(32);
    let chunk = serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":args}}]},"finish_reason":"tool_calls"}]});
    let body = chat(&[&chunk.to_string()]);
    let frame = &decode(Provider::OpenAiChat, body.as_bytes(), || usize::MAX).frames[0];
    assert!(!frame.contains("args_error"));
    let tools = [Tool::sync("echo", &echo)];
    let mut slots = [Slot::EMPTY; 2];
    let mut arena = vec![0u8; wcfg.arena_len(2)];
    let mut w = Wrapper::new(wcfg, &tools, NoHooks, &mut slots, &mut arena).unwrap();
    assert!(matches!(
        w.handle_response(at(1), frame.as_bytes()),
        Err(polyweave_tool_adapter::Error::Malformed(_))
    ));
}

/// A Gemini part that starts a call ends the streamed call still open: that call is
/// written first, then the new one (here refused: the one slot is still the first call's),
/// whatever the frame buffer; a short buffer is told the size of the frame that comes next.
#[test]
fn gemini_a_new_call_that_ends_a_streamed_one_writes_the_streamed_one_first() {
    let body = gemini(&[
        r#"{"functionCall":{"name":"f","willContinue":true}}"#,
        r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.a","numberValue":1}],"willContinue":true}},{"functionCall":{"name":"g","args":{}}}"#,
    ]);
    let want = [
        r#"{"type":"TOOL_CALL","content":{"name":"f","args":{"a":1}}}"#,
        r#"{"type":"TOOL_CALL","content":{"name":"g","args_error":"Too many parallel tool calls (max 1)"}}"#,
        r#"{"type":"END","content":{"reason":null}}"#,
    ];
    let cfg = DecoderConfig::DEFAULT;
    assert_eq!(
        decode_with(Provider::Gemini, cfg, 1, body.as_bytes(), || usize::MAX).frames,
        want
    );
    let mut slots = [CallSlot::EMPTY; 1];
    let mut arena = vec![0u8; cfg.arena_len(1)];
    let mut d = Decoder::new(Provider::Gemini, cfg, &mut slots, &mut arena).unwrap();
    let (mut small, mut big) = ([0u8; 8], vec![0u8; cfg.max_frame_len()]);
    let mut got = Vec::new();
    let mut take = |d: &mut Decoder<'_>, got: &mut Vec<String>| {
        while let Err(e) = d.poll_frame(&mut small) {
            let n = d.poll_frame(&mut big).unwrap().unwrap();
            assert_eq!(n, e.needed);
            got.push(String::from_utf8(big[..n].to_vec()).unwrap());
        }
    };
    feed_all(&mut d, body.as_bytes(), usize::MAX, |d| take(d, &mut got));
    assert_eq!(got, want);
}

/// `feed` stops at the end of the event that owes frames, and takes nothing until they are
/// polled: an `END` owed, calls completed by the end of the response, both.
#[test]
fn feed_takes_nothing_while_an_end_or_a_completed_call_waits() {
    let done = "data: [DONE]\n\n";
    let later = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n";
    for (first, frames) in [
        (done.to_string(), 1),
        (format!("data: {CHAT_CALL}\n\n{done}"), 2),
    ] {
        let body = first.clone() + later;
        let cfg = DecoderConfig::DEFAULT;
        let mut slots = [CallSlot::EMPTY; 2];
        let mut arena = vec![0u8; cfg.arena_len(2)];
        let mut d = Decoder::new(Provider::OpenAiChat, cfg, &mut slots, &mut arena).unwrap();
        let mut at = 0;
        // Up to the end of `[DONE]`: the events before it owe nothing the host must poll
        // first (a call's piece), or stop at their own end.
        while at < first.len() {
            let n = d.feed(&body.as_bytes()[at..]);
            assert!(n > 0);
            at += n;
            if at < first.len() {
                let mut out = [0u8; 512];
                while d.poll_frame(&mut out).unwrap().is_some() {}
            }
        }
        assert_eq!(
            at,
            first.len(),
            "stops at the end of the event that ended the response"
        );
        assert!(d.has_frames());
        assert_eq!(
            d.feed(&body.as_bytes()[at..]),
            0,
            "takes nothing while frames wait"
        );
        let mut out = [0u8; 512];
        let mut written = Vec::new();
        while let Some(n) = d.poll_frame(&mut out).unwrap() {
            written.push(String::from_utf8(out[..n].to_vec()).unwrap());
        }
        assert_eq!(written.len(), frames, "{written:?}");
        assert!(written.last().unwrap().starts_with(r#"{"type":"END""#));
        assert!(!d.has_frames());
        // The rest is after the end: read, counted, nothing written.
        assert_eq!(d.feed(&body.as_bytes()[at..]), later.len());
        assert_eq!(d.poll_frame(&mut out), Ok(None));
        assert_eq!(d.stats().after_end, 1);
        // Once the host says the body is over, nothing is taken until the body is polled out.
        d.finish();
        assert!(d.has_frames());
        assert_eq!(d.feed(later.as_bytes()), 0);
        assert_eq!(d.poll_frame(&mut out), Ok(None));
        assert!(!d.has_frames());
        assert_eq!(
            d.feed(later.as_bytes()),
            later.len(),
            "the next body is taken"
        );
    }
}

/// Ids, names and finish reasons over their capacities are cut, on a character boundary,
/// and each cut is counted.
#[test]
fn cut_ids_names_and_reasons_are_counted() {
    let cfg = DecoderConfig {
        id_cap: 4,
        name_cap: 5,
        ..DecoderConfig::DEFAULT
    };
    let long_reason = "r".repeat(70);
    let chunk = format!(
        r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"abcdefgh","function":{{"name":"caf\u00e9\u00e9x","arguments":"{{}}"}}}}]}},"finish_reason":"{long_reason}"}}]}}"#
    );
    let d = decode_with(
        Provider::OpenAiChat,
        cfg,
        2,
        chat(&[&chunk]).as_bytes(),
        || usize::MAX,
    );
    assert_eq!(
        d.frames,
        [
            // "café" is 5 bytes: the second é does not fit whole, so it is left out.
            r#"{"type":"TOOL_CALL","content":{"id":"abcd","name":"café","args":{}}}"#.to_string(),
            format!(
                r#"{{"type":"END","content":{{"reason":"{}"}}}}"#,
                "r".repeat(64)
            ),
        ]
    );
    assert_eq!(d.stats.cut, 3);
}

/// `data: [DONE]` ends an OpenAI Chat or Responses stream (the SDK stops there); any
/// other provider's reader takes it for what it is, data that is not JSON, and goes on.
#[test]
fn done_ends_only_the_openai_streams() {
    let text = |p: Provider| {
        match p {
        Provider::OpenAiChat => "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n".to_string(),
        Provider::OpenAiResponses => "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\n".to_string(),
        Provider::Anthropic => "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n".to_string(),
        Provider::Gemini => "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}\n\n".to_string(),
        _ => "{\"message\":{\"content\":\"x\"}}\n".to_string(),
    }
    };
    for p in Provider::ALL.iter().copied() {
        let done = if p == Provider::Ollama {
            "[DONE]\n"
        } else {
            "data: [DONE]\n\n"
        };
        let d = decode(p, (done.to_string() + &text(p)).as_bytes(), || usize::MAX);
        let ends = matches!(p, Provider::OpenAiChat | Provider::OpenAiResponses);
        if ends {
            assert_eq!(
                d.frames,
                [r#"{"type":"END","content":{"reason":null}}"#],
                "{p:?}"
            );
            assert_eq!((d.stats.after_end, d.stats.not_json), (1, 0), "{p:?}");
        } else {
            assert_eq!(
                d.frames,
                [
                    r#"{"type":"TEXT","content":"x"}"#,
                    r#"{"type":"END","content":{"reason":null}}"#
                ],
                "{p:?}"
            );
            assert_eq!((d.stats.after_end, d.stats.not_json), (0, 1), "{p:?}");
        }
    }
}

/// The refusals say what they are.
#[test]
fn refusals_have_their_own_texts() {
    use polyweave_tool_adapter::encode::ItemError;
    let texts: Vec<String> = [
        ItemError::BufferTooSmall { needed: 9 },
        ItemError::NotACallOrResult,
        ItemError::NoName,
        ItemError::NoId,
        ItemError::NoOutcome,
    ]
    .iter()
    .map(|e| e.to_string())
    .collect();
    assert_eq!(
        texts,
        [
            "item needs 9 bytes",
            "neither a TOOL_CALL nor a TOOL_RESULT",
            "no string name",
            "the provider needs the call's id, and it has none",
            "a TOOL_RESULT with neither result nor error",
        ]
    );
    assert_eq!(
        StorageError::ArenaTooSmall {
            needed: 9,
            given: 3
        }
        .to_string(),
        "arena of 3 bytes, 9 needed"
    );
    assert_eq!(
        StorageError::BadConfig.to_string(),
        "configuration out of range"
    );
}

/// The same frames whole and byte by byte.
fn whole_and_bytewise(provider: Provider, body: &str) -> Vec<String> {
    let frames = whole(provider, body);
    let bytewise = decode(provider, body.as_bytes(), || 1).frames;
    assert_eq!(frames, bytewise, "byte by byte");
    frames
}

/// SPEC §8 rule 3: a Gemini part with `partialArgs` and no `willContinue` (Vertex sends
/// these) is a whole call whose args are those values, never `{}`.
#[test]
fn gemini_partial_args_without_will_continue_are_the_whole_args() {
    let body = gemini(&[
        r#"{"functionCall":{"name":"get_weather","id":"v1","partialArgs":[{"jsonPath":"$.city","stringValue":"Paris"},{"jsonPath":"$.days","numberValue":3},{"jsonPath":"$.units.temp","stringValue":"C"}]}}"#,
        r#"{"functionCall":{"name":"noop","partialArgs":[]}}"#,
        r#"{"functionCall":{"name":"g","args":{"z":1}}}"#,
    ]);
    assert_eq!(
        whole_and_bytewise(Provider::Gemini, &body),
        [
            r#"{"type":"TOOL_CALL","content":{"id":"v1","name":"get_weather","args":{"city":"Paris","days":3,"units":{"temp":"C"}}}}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"noop","args":{}}}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"g","args":{"z":1}}}"#,
            r#"{"type":"END","content":{"reason":null}}"#,
        ]
    );
    // In one chunk with the finish reason, and a second whole call in the same chunk.
    let chunk = r#"data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"a","partialArgs":[{"jsonPath":"$.n","numberValue":1}]}},{"functionCall":{"name":"b","partialArgs":[{"jsonPath":"$.s","stringValue":"x"}]}}]},"finishReason":"STOP"}]}"#;
    assert_eq!(
        whole_and_bytewise(Provider::Gemini, &format!("{chunk}\n\n")),
        [
            r#"{"type":"TOOL_CALL","content":{"name":"a","args":{"n":1}}}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"b","args":{"s":"x"}}}"#,
            r#"{"type":"END","content":{"reason":"STOP"}}"#,
        ]
    );
}

/// SPEC §8 rule 2: a Gemini `finishReason` does not end the body; everything up to its end
/// is read and `END` carries the last reason.
#[test]
fn gemini_reads_past_a_finish_reason_and_end_carries_the_last() {
    let chunk = |parts: &str, finish: &str| {
        format!("data: {{\"candidates\":[{{\"content\":{{\"parts\":[{parts}]}}{finish}}}]}}\n\n")
    };
    let body = [
        chunk(r#"{"text":"Searching."}"#, r#","finishReason":"STOP""#),
        chunk(r#"{"text":"Found it: "}"#, ""),
        chunk(
            r#"{"functionCall":{"name":"book","args":{"id":7}}}"#,
            r#","finishReason":"MAX_TOKENS""#,
        ),
        chunk(r#"{"text":"done","thought":true}"#, ""),
    ]
    .concat();
    let frames = whole_and_bytewise(Provider::Gemini, &body);
    assert_eq!(
        frames,
        [
            r#"{"type":"TEXT","content":"Searching."}"#,
            r#"{"type":"TEXT","content":"Found it: "}"#,
            r#"{"type":"TOOL_CALL","content":{"name":"book","args":{"id":7}}}"#,
            r#"{"type":"REASONING","content":"done"}"#,
            r#"{"type":"END","content":{"reason":"MAX_TOKENS"}}"#,
        ]
    );
    let d = decode(Provider::Gemini, body.as_bytes(), || usize::MAX);
    assert_eq!(
        d.stats,
        DecoderStats {
            calls_started: 1,
            calls_written: 1,
            ..DecoderStats::default()
        },
        "nothing skipped, nothing counted after the end"
    );
    // A streamed call still open at the body's end is complete with the values that came,
    // even after a finish reason.
    let body = [
        chunk(r#"{"functionCall":{"name":"f","willContinue":true}}"#, ""),
        chunk(
            r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.a","numberValue":1}],"willContinue":true}}"#,
            r#","finishReason":"STOP""#,
        ),
    ]
    .concat();
    assert_eq!(
        whole_and_bytewise(Provider::Gemini, &body),
        [
            r#"{"type":"TOOL_CALL","content":{"name":"f","args":{"a":1}}}"#,
            r#"{"type":"END","content":{"reason":"STOP"}}"#,
        ]
    );
}

/// SPEC §8 rule 2: an in-stream error after a finish reason ends the response, and `END`
/// carries the reason given before the error, as the providers' SDKs keep it.
#[test]
fn an_error_after_a_finish_reason_keeps_the_reason() {
    let err = r#"{"error":{"message":"overloaded"}}"#;
    let length = r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"length"}]}"#;
    assert_eq!(
        whole_and_bytewise(Provider::OpenAiChat, &chat(&[length, err, CHAT_CALL])),
        [
            r#"{"type":"TEXT","content":"Hi"}"#,
            r#"{"type":"ERROR","content":{"message":"overloaded"}}"#,
            r#"{"type":"END","content":{"reason":"length"}}"#,
        ]
    );
    // Gemini: a finish reason, then an error chunk.
    let body = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]},\"finishReason\":\"STOP\"}]}\n\n\
                data: {\"error\":{\"code\":500,\"message\":\"internal\"}}\n\n\
                data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"late\"}]}}]}\n\n";
    assert_eq!(
        whole_and_bytewise(Provider::Gemini, body),
        [
            r#"{"type":"TEXT","content":"Hi"}"#,
            r#"{"type":"ERROR","content":{"message":"internal"}}"#,
            r#"{"type":"END","content":{"reason":"STOP"}}"#,
        ]
    );
    // Anthropic: `message_delta`'s stop reason, then an `error` event.
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}\n\n\
                event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\n\
                event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    assert_eq!(
        whole_and_bytewise(Provider::Anthropic, body),
        [
            r#"{"type":"ERROR","content":{"message":"Overloaded"}}"#,
            r#"{"type":"END","content":{"reason":"max_tokens"}}"#,
        ]
    );
    // With no reason before the error, `END` is null as before.
    assert_eq!(
        whole(Provider::OpenAiChat, &chat(&[err]))[1],
        r#"{"type":"END","content":{"reason":null}}"#
    );
}

/// OpenAI Chat's `choices` is read where it stands in the chunk (choice 0 and its `delta`
/// walked once): every rule of the walk that skipped each level whole still holds, whatever
/// the order of the members, their repeats, the brackets inside strings and the white space.
#[test]
fn chat_choices_read_in_place_keep_every_rule() {
    let text = |t: &str| format!(r#"{{"type":"TEXT","content":"{t}"}}"#);
    let end = r#"{"type":"END","content":{"reason":null}}"#;
    let cases: [(&str, Vec<String>); 11] = [
        // `index` after `delta`, choice 1 first: choice 0's delta is read.
        (
            r#"{"choices":[{"delta":{"content":"one"},"index":1},{"delta":{"content":"zero"},"index":0}]}"#,
            vec![text("zero"), end.into()],
        ),
        // The first choice 0 wins; a later one is not read.
        (
            r#"{"choices":[{"index":0,"delta":{"content":"a"}},{"index":0,"delta":{"content":"b"}}]}"#,
            vec![text("a"), end.into()],
        ),
        // A repeated `delta`: the last one, whole (the first's reasoning does not stay).
        (
            r#"{"choices":[{"index":0,"delta":{"content":"a","reasoning_content":"r"},"delta":{"content":"b"}}]}"#,
            vec![text("b"), end.into()],
        ),
        // A repeated `choices`: the last one.
        (
            r#"{"choices":[{"index":0,"delta":{"content":"first"}}],"choices":[{"index":0,"delta":{"content":"second"}}]}"#,
            vec![text("second"), end.into()],
        ),
        // An `error` after `choices` still ends the response, nothing of the chunk written.
        (
            r#"{"choices":[{"index":0,"delta":{"content":"x"}}],"error":{"message":"late"}}"#,
            vec![
                r#"{"type":"ERROR","content":{"message":"late"}}"#.into(),
                end.into(),
            ],
        ),
        // A choice that is not an object is a choice 0 with nothing in it.
        (
            r#"{"choices":[7,{"index":0,"delta":{"content":"no"}}]}"#,
            vec![end.into()],
        ),
        // Brackets and quotes inside strings, objects of any depth around and inside.
        (
            r#"{"id":"]}\"[{","choices":[{"index":0,"logprobs":{"a":[1,{"b":"}]"}]},"delta":{"extra":{"x":"{"},"content":"c]}"}}],"usage":{"t":[[1],{"u":"]"}]}}"#,
            vec![text("c]}"), end.into()],
        ),
        // White space everywhere.
        (
            " { \"choices\" : [ { \"index\" : 0 , \"delta\" : { \"content\" : \"ws\" } , \"finish_reason\" : \"stop\" } ] } ",
            vec![text("ws"), r#"{"type":"END","content":{"reason":"stop"}}"#.into()],
        ),
        // An empty `reasoning_content` gives way to `reasoning`.
        (
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"think"}}]}"#,
            vec![
                r#"{"type":"REASONING","content":"think"}"#.into(),
                end.into(),
            ],
        ),
        // A `delta` that is not an object has nothing in it; the finish reason is still read.
        (
            r#"{"choices":[{"index":0,"delta":[{"content":"no"}],"finish_reason":"stop"}]}"#,
            vec![r#"{"type":"END","content":{"reason":"stop"}}"#.into()],
        ),
        // No choice 0: nothing (an empty `choices` is checked below).
        (r#"{"choices":[{"index":2,"delta":{"content":"two"}}],"x":[]}"#, vec![end.into()]),
    ];
    for (chunk, want) in cases {
        assert_eq!(
            whole_and_bytewise(Provider::OpenAiChat, &chat(&[chunk])),
            want,
            "{chunk}"
        );
    }
    // `choices` that is not an array is bad provider data, counted; the chunk is skipped.
    let d = decode(
        Provider::OpenAiChat,
        chat(&[r#"{"choices":{"index":0},"x":1}"#]).as_bytes(),
        || usize::MAX,
    );
    assert_eq!(
        (d.frames.as_slice(), d.stats.bad_shape),
        (&[end.to_string()][..], 1)
    );
    let d = decode(
        Provider::OpenAiChat,
        chat(&[r#"{"choices":[],"x":1}"#]).as_bytes(),
        || usize::MAX,
    );
    assert_eq!(
        (d.frames.as_slice(), d.stats.bad_shape),
        (&[end.to_string()][..], 0)
    );
}

/// A buffer of `max_frame_len` gets each frame written in one pass, a shorter one each frame
/// measured first: the same frames on every recording either way, and, frame by frame, a
/// buffer too small is told the size needed and left untouched.
#[test]
fn frames_are_the_same_written_once_or_measured_first() {
    let max = DecoderConfig::DEFAULT.max_frame_len();
    let mut refused = 0;
    for r in recordings() {
        let (once, short) = decode_polled(r.provider, 8, &r.body, usize::MAX, max);
        assert_eq!(
            short, 0,
            "{}: a buffer of max_frame_len was refused",
            r.name
        );
        let (measured, _) = decode_polled(r.provider, 8, &r.body, usize::MAX, max - 1);
        assert_eq!(measured, once, "{}", r.name);
        let (tight, short) = decode_polled(r.provider, 8, &r.body, usize::MAX, 1);
        assert_eq!(tight, once, "{}", r.name);
        assert_eq!(
            short,
            once.len(),
            "{}: every frame is longer than one byte",
            r.name
        );
        refused += short;
    }
    // Every frame of the 71 recordings.
    assert_eq!(refused, 785);
}
