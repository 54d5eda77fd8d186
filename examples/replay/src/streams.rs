//! The provider-stream modes of `polyweave-replay` (SPEC §8):
//!
//! - `--decode PROVIDER [--chunk N] FILE`: a response body through the stream decoder, in
//!   feeds of N bytes (0 or absent: the whole body at once); prints its frames, one a line.
//! - `--encode PROVIDER FILE`: `TOOL_CALL` and `TOOL_RESULT` frames (NDJSON) through the
//!   item encoders; prints one item a line (other frames are skipped).
//! - `--stream PROVIDER FILE`: the demo: a recorded body → decoder → a wrapper with the
//!   demo's sync tools → the items of the next request.

use std::io::Write;

use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig, DecoderStats};
use polyweave_tool_adapter::encode::{encode_item, ItemError};
use polyweave_tool_adapter::request::{Conversation, Declaration, Request, RequestOptions};
use polyweave_tool_adapter::wrapper::{Disposition, Wrapper, WrapperConfig};
use polyweave_tool_adapter::Provider;
use polyweave_tool_adapter::{Instant, NoHooks, Route, Slot, Tool};
use polyweave_tool_adapter::{ResultWriter, ToolFailed};

/// Calls one response may have open at once.
const SLOTS: usize = 16;
/// The decoder's capacities: events up to 256 KiB, names and ids as the wrapper's.
pub const DECODER: DecoderConfig = DecoderConfig {
    event_cap: 256 * 1024,
    args_cap: 4096,
    name_cap: 1024,
    id_cap: 1024,
    max_depth: 32,
};

/// The provider named on the command line.
pub fn provider(name: &str) -> Result<Provider, String> {
    Provider::from_name(name.as_bytes()).ok_or_else(|| {
        let names: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
        format!("unknown provider {name:?} (one of {})", names.join(", "))
    })
}

/// Runs `body` through a decoder of `cfg` in feeds of `chunk` bytes (0: all at once), handing each
/// frame to `each`.
pub fn decode_body(
    provider: Provider,
    cfg: DecoderConfig,
    body: &[u8],
    chunk: usize,
    mut each: impl FnMut(&[u8]),
) -> Result<(), String> {
    let mut slots = [CallSlot::EMPTY; SLOTS];
    let mut arena = vec![0u8; cfg.arena_len(SLOTS)];
    let mut d =
        Decoder::new(provider, cfg, &mut slots, &mut arena).map_err(|e| format!("decoder: {e}"))?;
    let mut out = vec![0u8; cfg.max_frame_len()];
    let step = if chunk == 0 { body.len().max(1) } else { chunk };
    let mut drain = |d: &mut Decoder<'_>| -> Result<(), String> {
        while let Some(n) = d.poll_frame(&mut out).map_err(|e| e.to_string())? {
            each(&out[..n]);
        }
        Ok(())
    };
    for piece in body.chunks(step) {
        let mut at = 0;
        while at < piece.len() {
            at += d.feed(&piece[at..]);
            drain(&mut d)?;
        }
    }
    d.finish();
    drain(&mut d)?;
    let stats = d.stats();
    let skipped = DecoderStats {
        calls_started: 0,
        calls_written: 0,
        ..stats
    };
    if skipped != DecoderStats::default() {
        eprintln!("polyweave-replay: skipped provider data: {skipped:?}");
    }
    Ok(())
}

/// `--decode`.
pub fn run_decode(provider: Provider, chunk: usize, file: &str) -> Result<(), String> {
    let body = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    decode_body(provider, DECODER, &body, chunk, |frame| {
        let _ = out.write_all(frame);
        let _ = out.write_all(b"\n");
    })?;
    out.flush().map_err(|e| e.to_string())
}

/// One frame as its provider item, or `None` for a frame that is neither a call nor a result.
pub fn item(provider: Provider, frame: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut out = vec![0u8; 4096];
    loop {
        match encode_item(provider, frame, &mut out) {
            Ok(n) => {
                out.truncate(n);
                return Ok(Some(out));
            }
            Err(ItemError::BufferTooSmall { needed }) => out.resize(needed, 0),
            Err(ItemError::NotACallOrResult) => return Ok(None),
            Err(e) => return Err(format!("{e}: {}", String::from_utf8_lossy(frame))),
        }
    }
}

/// `--encode`.
pub fn run_encode(provider: Provider, file: &str) -> Result<(), String> {
    let text = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(item) = item(provider, line).map_err(|e| format!("line {}: {e}", n + 1))? {
            let _ = out.write_all(&item);
            let _ = out.write_all(b"\n");
        }
    }
    out.flush().map_err(|e| e.to_string())
}

/// The demo's weather tool: the December climate normals of a few cities, from a table
/// built into the demo (no network here), in the units asked for.
fn weather(args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    let v: serde_json::Value = serde_json::from_slice(args).unwrap_or_default();
    let city = v["city"].as_str().unwrap_or("");
    let normals = [
        ("Edinburgh", 5.0, "rain"),
        ("London", 7.9, "cloud"),
        ("New York City", 4.4, "cloud"),
        ("Paris", 5.7, "rain"),
        ("San Francisco", 11.1, "rain"),
    ];
    let Some(&(name, celsius, sky)) = normals.iter().find(|(n, _, _)| *n == city) else {
        out.write(format!("no climate normals for {city:?}").as_bytes());
        return Err(ToolFailed);
    };
    let fahrenheit = v["units"].as_str() == Some("f");
    let temp = if fahrenheit {
        celsius * 9.0 / 5.0 + 32.0
    } else {
        celsius
    };
    let result = serde_json::json!({
        "city": name,
        "december_mean": (temp * 10.0f64).round() / 10.0,
        "units": if fahrenheit { "f" } else { "c" },
        "sky": sky,
    });
    out.write(result.to_string().as_bytes());
    Ok(())
}

/// The demo's quote tool: it knows no prices (no network), and says so; the model gets an
/// error it can act on.
fn stock_price(args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    let v: serde_json::Value = serde_json::from_slice(args).unwrap_or_default();
    let ticker = v["ticker"].as_str().unwrap_or("?");
    out.write(format!("no market data offline for {ticker}").as_bytes());
    Err(ToolFailed)
}

/// The question the demo's conversation starts with.
const QUESTION: &str = "What is the weather in Edinburgh, and Apple's share price?";
const WEATHER_SCHEMA: &[u8] =
    br#"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"#;
const STOCK_SCHEMA: &[u8] =
    br#"{"type":"object","properties":{"ticker":{"type":"string"}},"required":["ticker"]}"#;

/// `--stream`: decoder → wrapper → the next request.
pub fn run_stream(provider: Provider, file: &str, pretty: bool) -> Result<(), String> {
    let body = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let tools = [
        Tool::sync("GetWeatherArgs", &weather),
        Tool::sync("get_weather", &weather),
        Tool::sync("get_stock_price", &stock_price),
    ];
    let cfg = WrapperConfig {
        args_cap: 4096,
        result_cap: 4096,
        ..WrapperConfig::DEFAULT
    };
    let mut frames = Vec::new();
    decode_body(provider, DECODER.fit(&cfg), &body, 0, |f| {
        frames.push(f.to_vec())
    })?;
    let mut slots = [Slot::EMPTY; 4];
    let mut arena = vec![0u8; cfg.arena_len(4)];
    let mut w = Wrapper::new(cfg, &tools, NoHooks, &mut slots, &mut arena)
        .map_err(|e| format!("wrapper: {e}"))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // `(direction, party)`: `("from", "decoder")`, `("to", "model")`, `("to", "consumer")`.
    let mut show = |(dir, who): (&str, &str), frame: &[u8]| {
        let text = String::from_utf8_lossy(frame);
        let line = if pretty {
            format!("{:<14} {text}", format!("{dir} {who}"))
        } else {
            format!("{{\"{dir}\":\"{who}\",\"frame\":{text}}}")
        };
        let _ = writeln!(out, "{line}");
    };
    let mut results = Vec::new();
    let mut buf = vec![0u8; cfg.max_frame_len()];
    for (t, frame) in frames.iter().enumerate() {
        show(("from", "decoder"), frame);
        let now = Instant::from_millis(t as u64);
        // An intercepted call reaches the conversation as the decoder wrote it.
        let disposition = w
            .handle_response(now, frame)
            .map_err(|e| format!("wrapper: {e}"))?;
        if disposition == Disposition::Forward {
            show(("to", "consumer"), frame);
        }
        while let Some(tx) = w.poll_transmit(&mut buf).map_err(|e| e.to_string())? {
            let f = &buf[..tx.len];
            match tx.route {
                Route::Model => {
                    if f.starts_with(br#"{"type":"TOOL_RESULT""#) {
                        results.push(f.to_vec());
                    }
                    show(("to", "model"), f);
                }
                _ => show(("to", "consumer"), f),
            }
        }
    }
    // The next request, written by the library from the conversation: the question, this
    // response as the decoder gave it, the wrapper's results (SPEC §10).
    let mut memory = vec![0u8; 64 * 1024];
    let mut conv = Conversation::new(&mut memory);
    let step = |e: polyweave_tool_adapter::request::ConversationError| format!("conversation: {e}");
    conv.set_system("Answer with what the tools return.")
        .map_err(step)?;
    conv.push_user(QUESTION).map_err(step)?;
    conv.begin_response(provider).map_err(step)?;
    for f in frames.iter().chain(&results) {
        conv.push_frame(f).map_err(step)?;
    }
    let declared = [
        Declaration::new("GetWeatherArgs", Some(WEATHER_SCHEMA)).description("Weather in a city"),
        Declaration::new("get_weather", Some(WEATHER_SCHEMA)).description("Weather in a city"),
        Declaration::new("get_stock_price", Some(STOCK_SCHEMA)).description("A stock's price"),
    ];
    let opts = RequestOptions::new("gpt-4o");
    let mut req =
        Request::new(&conv, provider, &opts, &declared).map_err(|e| format!("request: {e}"))?;
    let mut next = vec![0u8; req.len()];
    let mut n = 0;
    while n < next.len() {
        n += req.write(&mut next[n..]);
    }
    if pretty {
        let _ = writeln!(
            out,
            "\nnext request ({}, {} bytes), written by the library:",
            provider.name(),
            next.len()
        );
        let v: serde_json::Value = serde_json::from_slice(&next).map_err(|e| e.to_string())?;
        let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?;
        let _ = writeln!(out, "{text}");
    } else {
        let _ = writeln!(
            out,
            "{{\"next_request\":{}}}",
            String::from_utf8_lossy(&next)
        );
    }
    out.flush().map_err(|e| e.to_string())
}
