//! The recorded provider streams of `data/provider-streams/` and a host loop that runs a
//! [`Decoder`] over a body cut into pieces, with what the provider's own SDK reconstructs
//! from the frames (text, calls, finish reason, error) to compare with the expected file.

use std::fs;
use std::path::PathBuf;

use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig, DecoderStats};
use polyweave_tool_adapter::Provider;
use serde_json::Value;

use crate::data_dir;

/// One recorded body and its expected reconstruction.
#[derive(Clone, Debug)]
pub struct Recording {
    /// `provider/name`.
    pub name: String,
    /// The provider.
    pub provider: Provider,
    /// The body's exact bytes.
    pub body: Vec<u8>,
    /// `NAME.expected.json`.
    pub expected: Value,
}

/// Every recording, sorted by name.
pub fn recordings() -> Vec<Recording> {
    let root = data_dir().join("provider-streams");
    let mut out = Vec::new();
    for provider in Provider::ALL {
        let dir = root.join(provider.name());
        let mut names: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "body"))
            .collect();
        names.sort();
        for body_path in names {
            let stem = body_path.file_stem().unwrap().to_string_lossy().to_string();
            let expected_path = dir.join(format!("{stem}.expected.json"));
            let expected = fs::read(&expected_path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", expected_path.display()));
            out.push(Recording {
                name: format!("{}/{stem}", provider.name()),
                provider: *provider,
                body: fs::read(&body_path).expect("body"),
                expected: serde_json::from_slice(&expected).expect("expected JSON"),
            });
        }
    }
    out
}

/// What a decoder wrote for one body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The frames, in order.
    pub frames: Vec<String>,
    /// What it counted: skipped data by kind, calls started and written.
    pub stats: DecoderStats,
}

/// Decodes `body` fed in the pieces `cut` gives (each call returns the next piece's length),
/// with `slots` call slots and `cfg`; the frame buffer is `DecoderConfig::max_frame_len`.
pub fn decode_with(
    provider: Provider,
    cfg: DecoderConfig,
    slots: usize,
    body: &[u8],
    mut cut: impl FnMut() -> usize,
) -> Decoded {
    let mut slot_store = vec![CallSlot::EMPTY; slots];
    let mut arena = vec![0u8; cfg.arena_len(slots)];
    let mut d = Decoder::new(provider, cfg, &mut slot_store, &mut arena).expect("decoder");
    let mut out = vec![0u8; cfg.max_frame_len()];
    let mut frames = Vec::new();
    let mut drain = |d: &mut Decoder<'_>, frames: &mut Vec<String>| {
        while let Some(n) = d.poll_frame(&mut out).expect("frame fits max_frame_len") {
            frames.push(String::from_utf8(out[..n].to_vec()).expect("UTF-8 frame"));
        }
    };
    let mut at = 0;
    while at < body.len() {
        let piece = &body[at..at.saturating_add(cut().max(1)).min(body.len())];
        let mut used = 0;
        while used < piece.len() {
            let n = d.feed(&piece[used..]);
            used += n;
            drain(&mut d, &mut frames);
        }
        at += piece.len();
    }
    d.finish();
    drain(&mut d, &mut frames);
    let stats = d.stats();
    assert_eq!(
        stats.calls_started, stats.calls_written,
        "every call that started is written once"
    );
    let tool_calls = frames
        .iter()
        .filter(|f| f.starts_with(r#"{"type":"TOOL_CALL""#))
        .count();
    assert_eq!(stats.calls_written, tool_calls as u64);
    Decoded { frames, stats }
}

/// Decodes `body` fed in pieces of `piece` bytes, with `slots` call slots at the default
/// capacities, polling each frame first into a buffer of `len` bytes, as a careful host with
/// a small buffer does: a frame refused there must be told a size past `len`, be refused again
/// one byte short of that size with the same answer, leave both buffers untouched (each starts
/// filled with 0xAA), and then fit exactly that size. The frames, and how many were refused.
pub fn decode_polled(
    provider: Provider,
    slots: usize,
    body: &[u8],
    piece: usize,
    len: usize,
) -> (Vec<String>, usize) {
    let cfg = DecoderConfig::DEFAULT;
    let mut slot_store = vec![CallSlot::EMPTY; slots];
    let mut arena = vec![0u8; cfg.arena_len(slots)];
    let mut d = Decoder::new(provider, cfg, &mut slot_store, &mut arena).expect("decoder");
    let (mut frames, mut refused) = (Vec::new(), 0);
    let mut take = |d: &mut Decoder<'_>, frames: &mut Vec<String>| loop {
        let mut out = vec![0xAA; len];
        let needed = match d.poll_frame(&mut out) {
            Ok(None) => return,
            Ok(Some(n)) => {
                frames.push(String::from_utf8(out[..n].to_vec()).expect("UTF-8 frame"));
                continue;
            }
            Err(e) => e.needed,
        };
        refused += 1;
        assert!(
            out.iter().all(|&b| b == 0xAA),
            "a refused buffer was written"
        );
        assert!(needed > len, "refused {len} bytes for a frame of {needed}");
        let mut short = vec![0xAA; needed - 1];
        assert_eq!(d.poll_frame(&mut short).unwrap_err().needed, needed);
        assert!(
            short.iter().all(|&b| b == 0xAA),
            "a refused buffer was written"
        );
        let mut exact = vec![0xAA; needed];
        assert_eq!(d.poll_frame(&mut exact), Ok(Some(needed)));
        frames.push(String::from_utf8(exact).expect("UTF-8 frame"));
    };
    feed_all(&mut d, body, piece, |d| take(d, &mut frames));
    (frames, refused)
}

/// Feeds `body` to `d` in pieces of `piece` bytes, as a host hands on what it read, calling
/// `poll` after every feed and after `finish` (a decoder takes no bytes while frames wait, so a
/// piece is fed again until it is all taken).
pub fn feed_all<'a>(
    d: &mut Decoder<'a>,
    body: &[u8],
    piece: usize,
    mut poll: impl FnMut(&mut Decoder<'a>),
) {
    for chunk in body.chunks(piece.max(1)) {
        let mut input = chunk;
        while !input.is_empty() {
            let n = d.feed(input);
            input = &input[n..];
            poll(d);
        }
    }
    d.finish();
    poll(d);
}

/// [`decode_with`] at the default capacities and 8 slots.
pub fn decode(provider: Provider, body: &[u8], cut: impl FnMut() -> usize) -> Decoded {
    decode_with(provider, DecoderConfig::DEFAULT, 8, body, cut)
}

/// What the provider's SDK reconstructs, from the frames: the expected file's shape.
pub fn reconstruct(frames: &[String]) -> Value {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut finish = Value::Null;
    let mut error = Value::Null;
    let mut ends = 0;
    for f in frames {
        let v: Value = serde_json::from_str(f).expect("frame is JSON");
        let content = &v["content"];
        match v["type"].as_str().expect("type") {
            "TEXT" => text.push_str(content.as_str().expect("TEXT content is a string")),
            "REASONING" | "STATE" => {}
            "TOOL_CALL" => {
                let mut call = serde_json::Map::new();
                call.insert(
                    "id".into(),
                    content.get("id").cloned().unwrap_or(Value::Null),
                );
                call.insert("name".into(), content["name"].clone());
                if content.get("args_error").is_some() {
                    call.insert("arguments_text".into(), content["args"].clone());
                    call.insert("invalid".into(), Value::Bool(true));
                } else {
                    call.insert("arguments".into(), content["args"].clone());
                }
                calls.push(Value::Object(call));
            }
            "ERROR" => error = content["message"].clone(),
            "END" => {
                ends += 1;
                finish = content["reason"].clone();
            }
            other => panic!("unexpected frame type {other}"),
        }
    }
    assert_eq!(ends, 1, "one END per body: {frames:?}");
    serde_json::json!({"text": text, "tool_calls": calls, "finish": finish, "error": error})
}
