//! The next request on the device is the host's (SPEC §10): the host build takes the turns of
//! the footprint probe's request run (`examples/firmware/src/bin/footprint.rs`, features
//! `request-*`) step by step with the same inputs (a recorded response per provider decoded
//! 64 bytes a feed, its calls through a wrapper with the same sync tools, everything kept in
//! a 4 KiB conversation) and writes each body through a 64-byte buffer. Each body must be
//! `examples/firmware/request-bodies/<provider>.json` byte for byte; `footprint.sh` compares
//! the bodies the Cortex-M4F writes under QEMU with the same files, so the device's bodies
//! are the host's. `PW_BLESS=1 cargo test -p polyweave-tests --test request_device` rewrites
//! the files (then run footprint.sh).

use std::fs;

use polyweave_tests::library::workspace_root;
use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
use polyweave_tool_adapter::request::{Conversation, Declaration, Request, RequestOptions};
use polyweave_tool_adapter::{
    Instant, NoHooks, Provider, ResultWriter, Route, Slot, Tool, ToolFailed, Wrapper, WrapperConfig,
};

// The probe's inputs, as it has them.
const CONVERSATION: usize = 4096;
const PIECE: usize = 64;
const WRAPPER: WrapperConfig = WrapperConfig::SMALL;
const DECODER: DecoderConfig = DecoderConfig::SMALL.fit(&WRAPPER);
const SLOTS: usize = 4;
const CALLS: usize = 2;
const SYSTEM: &str = "Answer with what the tools return.";
const QUESTION: &str = "What is the weather in Edinburgh, and Apple's share price?";
const BODIES: [(Provider, &str); 5] = [
    (
        Provider::OpenAiChat,
        "openai-chat/openai-python-parse-multiple-pydantic-tools",
    ),
    (
        Provider::OpenAiResponses,
        "openai-responses/vercel-ai-openai-reasoning-encrypted-content-step1",
    ),
    (
        Provider::Anthropic,
        "anthropic/anthropic-sdk-tool-use-response",
    ),
    (
        Provider::Gemini,
        "gemini/vercel-ai-google-stream-tool-call-arguments",
    ),
    (Provider::Ollama, "ollama/variant-text-and-parallel-calls"),
];
const CITY: &[u8] =
    br#"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"#;
const LOCATION: &[u8] =
    br#"{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}"#;
const CALC: &[u8] = br#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"op":{"type":"string"}}}"#;
const TICKER: &[u8] =
    br#"{"type":"object","properties":{"ticker":{"type":"string"}},"required":["ticker"]}"#;
const DECLARATIONS: [Declaration<'static>; 8] = [
    Declaration::new("GetWeatherArgs", Some(CITY)).description("Weather in a city"),
    Declaration::new("calculator", Some(CALC)).description("Arithmetic"),
    Declaration::new("getWeather", Some(LOCATION)).description("Weather in a place"),
    Declaration::new("get_conditions", Some(CITY)).description("The sky in a city"),
    Declaration::new("get_stock_price", Some(TICKER)).description("A stock's price"),
    Declaration::new("get_temperature", Some(CITY)).description("The temperature in a city"),
    Declaration::new("get_weather", Some(CITY)).description("Weather in a city"),
    Declaration::new("weather", Some(LOCATION)).description("Weather in a place"),
];

fn weather(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(br#"{"sky":"rain","temp_c":5.7}"#);
    Ok(())
}

fn calculator(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(b"19");
    Ok(())
}

fn stock_price(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(b"no market data offline");
    Err(ToolFailed)
}

/// One frame: into the conversation, through the wrapper, its results for the model kept.
fn take(f: &[u8], conv: &mut Conversation<'_>, w: &mut Wrapper<'_>, tx: &mut [u8]) {
    conv.push_frame(f)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(f)));
    w.handle_response(Instant::ZERO, f).unwrap();
    while let Some(out) = w.poll_transmit(tx).unwrap() {
        let t = &tx[..out.len];
        if out.route == Route::Model && t.starts_with(br#"{"type":"TOOL_RESULT""#) {
            conv.push_frame(t).unwrap();
        }
    }
    while w.poll_event().is_some() {}
}

/// The probe's turns for one recorded response, and the body of the next request; the
/// entries the conversation evicted.
fn next_request(provider: Provider, body: &[u8]) -> (Vec<u8>, u32) {
    let tools = [
        Tool::sync("GetWeatherArgs", &weather),
        Tool::sync("calculator", &calculator),
        Tool::sync("getWeather", &weather),
        Tool::sync("get_conditions", &weather),
        Tool::sync("get_stock_price", &stock_price),
        Tool::sync("get_temperature", &weather),
        Tool::sync("get_weather", &weather),
        Tool::sync("weather", &weather),
    ];
    let mut w_slots = [Slot::EMPTY; SLOTS];
    let mut w_arena = vec![0u8; WRAPPER.arena_len(SLOTS)];
    let mut tx = vec![0u8; WRAPPER.max_frame_len()];
    let mut d_slots = [CallSlot::EMPTY; CALLS];
    let mut d_arena = vec![0u8; DECODER.arena_len(CALLS)];
    let mut frame = vec![0u8; DECODER.max_frame_len()];
    let mut memory = [0u8; CONVERSATION];
    let mut w = Wrapper::new(WRAPPER, &tools, NoHooks, &mut w_slots, &mut w_arena).unwrap();
    let mut d = Decoder::new(provider, DECODER, &mut d_slots, &mut d_arena).unwrap();
    let mut conv = Conversation::new(&mut memory);
    conv.set_system(SYSTEM).unwrap();
    conv.push_user(QUESTION).unwrap();
    conv.begin_response(provider).unwrap();
    for piece in body.chunks(64) {
        let mut at = 0;
        while at < piece.len() {
            at += d.feed(&piece[at..]);
            while let Some(n) = d.poll_frame(&mut frame).unwrap() {
                take(&frame[..n], &mut conv, &mut w, &mut tx);
            }
        }
    }
    d.finish();
    while let Some(n) = d.poll_frame(&mut frame).unwrap() {
        take(&frame[..n], &mut conv, &mut w, &mut tx);
    }
    let opts = RequestOptions::new("some-model");
    let mut req = Request::new(&conv, provider, &opts, &DECLARATIONS).unwrap();
    let mut out = Vec::new();
    let mut piece = [0u8; PIECE];
    loop {
        let n = req.write(&mut piece);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&piece[..n]);
    }
    assert_eq!(
        out.len(),
        req.len(),
        "{}: len() is the body's",
        provider.name()
    );
    (out, conv.evicted())
}

/// Each provider's next request on the host is the file the device's is compared with.
#[test]
fn the_devices_bodies_are_the_hosts() {
    let root = workspace_root();
    let bless = std::env::var_os("PW_BLESS").is_some_and(|v| v == "1");
    for (provider, name) in BODIES {
        let recorded = root.join(format!("tests/data/provider-streams/{name}.body"));
        let (body, evicted) = next_request(provider, &fs::read(&recorded).unwrap());
        // The memory was never short, and every call has the result its tool gave.
        assert_eq!(evicted, 0, "{}", provider.name());
        let text = String::from_utf8(body.clone()).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap();
        assert!(
            !text.contains("got no result"),
            "{}: {text}",
            provider.name()
        );
        let path = root.join(format!(
            "examples/firmware/request-bodies/{}.json",
            provider.name()
        ));
        if bless {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &body).unwrap();
            continue;
        }
        let expected = fs::read(&path).unwrap_or_default();
        assert!(
            body == expected,
            "{} differs from the host's body:\n  {}\nrewrite the files with\n  \
             PW_BLESS=1 cargo test -p polyweave-tests --test request_device\n\
             and run examples/firmware/footprint.sh",
            path.display(),
            String::from_utf8_lossy(&body)
        );
    }
}
