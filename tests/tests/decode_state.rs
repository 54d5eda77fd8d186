//! SPEC §8 rule 2's last item: the provider's state for what it said comes out as
//! `{"type":"STATE","content":{…}}` frames, at the place the conversation (SPEC §10.2.2)
//! needs it — Gemini `thoughtSignature`s right before the frames of the part that carried
//! them, Anthropic `signature`s where the thinking block closes and `redacted_thinking`
//! data where its block starts, Responses `reasoning` items as they came, compacted — the
//! same bytes whatever the split, through the short-buffer path like any other frame, and
//! with nothing else in the output or in the counters changed.

use polyweave_tests::streams::{decode, decode_polled, decode_with, recordings, Recording};
use polyweave_tests::XorShift;
use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig, DecoderStats};
use polyweave_tool_adapter::Provider;
use serde_json::Value;

const STATE: &str = r#"{"type":"STATE","content":"#;

// ----- an independent reading of the recorded bodies ------------------------------------

/// The joined `data` of each SSE event (WHATWG EventSource: LF, CR or CRLF lines, `:`
/// comments, one optional space after the colon, an event left open at the end counts).
fn sse_data(body: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(body).expect("UTF-8 body");
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let (mut out, mut data, mut any) = (Vec::new(), String::new(), false);
    for line in text.split('\n') {
        if line.is_empty() {
            if any {
                out.push(std::mem::take(&mut data));
            }
            any = false;
            continue;
        }
        if let Some(value) = line.strip_prefix("data") {
            let value = value.strip_prefix(':').unwrap_or(value);
            let value = value.strip_prefix(' ').unwrap_or(value);
            if any {
                data.push('\n');
            }
            data.push_str(value);
            any = true;
        }
    }
    if any {
        out.push(data);
    }
    out
}

/// The end of the JSON value starting at `start` of `s` (strings and nesting followed).
fn value_end(s: &[u8], start: usize) -> usize {
    let (mut depth, mut i) = (0usize, start);
    loop {
        match s[i] {
            b'"' => {
                i += 1;
                while s[i] != b'"' {
                    i += if s[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                i += 1;
            }
            _ => {
                i += 1;
                if depth == 0 {
                    while i < s.len() && !b",}] \t\r\n".contains(&s[i]) {
                        i += 1;
                    }
                }
            }
        }
        if depth == 0 {
            return i;
        }
    }
}

/// `raw` without the white space between its tokens; strings exactly as written.
fn compact(raw: &str) -> String {
    let s = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'"' => {
                let end = value_end(s, i);
                out.extend_from_slice(&s[i..end]);
                i = end;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// The raw text of the top-level member `key` of the compact object `obj`.
fn member<'a>(obj: &'a str, key: &str) -> Option<&'a str> {
    let s = obj.as_bytes();
    let mut i = 1;
    while s[i] == b'"' {
        let key_end = value_end(s, i);
        let value_start = key_end + 1;
        let end = value_end(s, value_start);
        if &obj[i + 1..key_end - 1] == key {
            return Some(&obj[value_start..end]);
        }
        i = end + 1;
    }
    None
}

/// The `STATE` frames a recording must give, read from its events independently of the
/// decoder, each with what must come right after it (the signed call's name, for Gemini).
fn states_in(r: &Recording) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for data in sse_data(&r.body) {
        let Ok(v) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        match r.provider {
            Provider::Gemini => {
                let parts = &v["candidates"][0]["content"]["parts"];
                for part in parts.as_array().into_iter().flatten() {
                    if let Some(sig) = part["thoughtSignature"].as_str() {
                        let sig = serde_json::to_string(sig).unwrap();
                        let name = part["functionCall"]["name"].as_str().map(str::to_string);
                        assert!(name.is_some(), "{}: the recordings sign calls", r.name);
                        out.push((format!(r#"{STATE}{{"thoughtSignature":{sig}}}}}"#), name));
                    }
                }
            }
            Provider::OpenAiResponses
                if v["type"] == "response.output_item.done" && v["item"]["type"] == "reasoning" =>
            {
                let data = compact(&data);
                let item = member(&data, "item").expect("item");
                out.push((format!(r#"{STATE}{{"reasoning":{item}}}}}"#), None));
            }
            // The terminal response's reasoning items again, as its SDK keeps them, before END.
            Provider::OpenAiResponses
                if matches!(
                    v["type"].as_str(),
                    Some("response.completed" | "response.incomplete")
                ) =>
            {
                let data = compact(&data);
                let response = member(&data, "response").expect("response");
                let Some(output) = member(response, "output") else {
                    continue;
                };
                for item in elements(output) {
                    if serde_json::from_str::<Value>(item).unwrap()["type"] == "reasoning" {
                        out.push((
                            format!(r#"{STATE}{{"reasoning":{item}}}}}"#),
                            Some(TERMINAL.into()),
                        ));
                    }
                }
            }
            Provider::Anthropic => {
                let signature = (v["delta"]["type"] == "signature_delta")
                    .then(|| v["delta"]["signature"].as_str())
                    .flatten();
                if let Some(sig) = signature {
                    let sig = serde_json::to_string(sig).unwrap();
                    out.push((format!(r#"{STATE}{{"signature":{sig}}}}}"#), None));
                }
                let block = &v["content_block"];
                if block["type"] == "redacted_thinking" {
                    let data = serde_json::to_string(block["data"].as_str().unwrap()).unwrap();
                    out.push((format!(r#"{STATE}{{"redacted_thinking":{data}}}}}"#), None));
                }
            }
            _ => {}
        }
    }
    out
}

/// What follows a terminal event's reasoning items.
const TERMINAL: &str = "(the end)";

/// The elements of a compact JSON array's text, as written.
fn elements(array: &str) -> Vec<&str> {
    let b = array.as_bytes();
    let (mut out, mut depth, mut start, mut in_str, mut esc) =
        (Vec::new(), 0i32, 1usize, false, false);
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 && i > start {
                    out.push(&array[start..i]);
                }
            }
            b',' if depth == 1 => {
                out.push(&array[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

fn kind(frame: &str) -> &str {
    let rest = frame.strip_prefix(r#"{"type":""#).expect("type first");
    &rest[..rest.find('"').unwrap()]
}

/// Where the `STATE` frames are in each recording that has provider state, and how many
/// frames it gives in all.
const POSITIONS: [(&str, &[usize], usize); 16] = [
    ("gemini/variant-comments-id-retry", &[1], 7),
    ("gemini/variant-cut-before-terminator", &[0], 4),
    ("gemini/variant-lf-framing", &[0], 4),
    ("gemini/variant-multiline-data", &[0], 4),
    ("gemini/variant-split-escapes", &[0], 4),
    ("gemini/vercel-ai-google-stream-no-args-tool-call", &[1], 7),
    (
        "gemini/vercel-ai-google-stream-tool-call-arguments",
        &[0],
        4,
    ),
    (
        "gemini/vercel-ai-google-stream-tool-call-array-arguments-missing-terminal",
        &[0],
        3,
    ),
    ("gemini/vercel-ai-google-tool-call-gemini3", &[0], 3),
    ("gemini/vercel-ai-google-tool-call", &[0], 3),
    (
        "gemini/vercel-ai-google-vertex-stream-tool-call-arguments-nested",
        &[0],
        3,
    ),
    (
        "openai-responses/vercel-ai-azure-reasoning-encrypted-content-step1",
        &[89, 91],
        93,
    ),
    (
        "openai-responses/vercel-ai-lmstudio-tool-call-1",
        &[48, 63],
        65,
    ),
    (
        "openai-responses/vercel-ai-lmstudio-tool-call-2",
        &[47, 62],
        64,
    ),
    (
        "openai-responses/vercel-ai-openai-reasoning-encrypted-content-step1",
        &[32, 34],
        36,
    ),
    (
        "openai-responses/vercel-ai-programmatic-tool-calling-1",
        &[0, 2],
        4,
    ),
];

#[test]
fn every_recording_with_provider_state_gives_its_state_frames_in_place() {
    let mut with_state = 0;
    for r in recordings() {
        let want = states_in(&r);
        let frames = decode(r.provider, &r.body, || usize::MAX).frames;
        let at: Vec<usize> = (0..frames.len())
            .filter(|&i| kind(&frames[i]) == "STATE")
            .collect();
        let Some(&(_, positions, count)) = POSITIONS.iter().find(|p| p.0 == r.name) else {
            assert!(want.is_empty(), "{}: state not in the table", r.name);
            assert!(at.is_empty(), "{}: no STATE frame: {frames:#?}", r.name);
            continue;
        };
        with_state += 1;
        assert_eq!(at, positions, "{}", r.name);
        assert_eq!(frames.len(), count, "{}", r.name);
        assert_eq!(want.len(), at.len(), "{}", r.name);
        for ((frame, then), &i) in want.iter().zip(&at) {
            assert_eq!(&frames[i], frame, "{} frame {i}", r.name);
            let next: Value = serde_json::from_str(&frames[i + 1]).unwrap();
            match then {
                // The terminal event's items: only more of them, then END.
                Some(t) if t == TERMINAL => {
                    assert!(
                        matches!(next["type"].as_str(), Some("STATE" | "END")),
                        "{}",
                        r.name
                    );
                }
                // A signed call: its `TOOL_CALL` follows (the recordings' calls are whole, or
                // streamed with nothing else until they complete).
                Some(name) => {
                    assert_eq!(next["type"], "TOOL_CALL", "{}", r.name);
                    assert_eq!(next["content"]["name"], name.as_str(), "{}", r.name);
                }
                // A reasoning item: after its reasoning deltas, before what follows them.
                None => {
                    assert!(i == 0 || kind(&frames[i - 1]) == "REASONING", "{}", r.name);
                    assert_ne!(next["type"], "REASONING", "{}", r.name);
                }
            }
            // One line, canonical: the same bytes serde_json reads back and writes again.
            let v: Value = serde_json::from_str(frame).unwrap();
            assert_eq!(v["type"], "STATE");
            assert_eq!(v.as_object().unwrap().len(), 2);
            assert_eq!(v["content"].as_object().unwrap().len(), 1);
        }
    }
    assert_eq!(with_state, POSITIONS.len());
}

#[test]
fn state_frames_are_the_same_whole_byte_by_byte_and_in_random_pieces() {
    let mut rng = XorShift::new(0x5747_E001);
    let mut checked = 0;
    for r in recordings() {
        if !POSITIONS.iter().any(|p| p.0 == r.name) {
            continue;
        }
        let whole = decode(r.provider, &r.body, || usize::MAX);
        assert_eq!(decode(r.provider, &r.body, || 1), whole, "{} bytes", r.name);
        for _ in 0..10 {
            let pieces = decode(r.provider, &r.body, || rng.in_1_to(97));
            assert_eq!(pieces, whole, "{} pieces", r.name);
        }
        checked += 1;
    }
    assert_eq!(checked, 16);
}

// ----- a host buffer too small for a STATE frame ------------------------------------------

/// Decodes `body` polling every frame first into no buffer (every frame refused), then into
/// one byte too few, then into exactly its size ([`decode_polled`]).
fn decode_tight(provider: Provider, slots: usize, body: &[u8], piece: usize) -> Vec<String> {
    let (frames, refused) = decode_polled(provider, slots, body, piece, 0);
    assert_eq!(refused, frames.len(), "a frame in no buffer");
    frames
}

#[test]
fn a_state_frame_that_does_not_fit_is_written_whole_once_it_does() {
    for r in recordings() {
        if !POSITIONS.iter().any(|p| p.0 == r.name) {
            continue;
        }
        let want = decode(r.provider, &r.body, || usize::MAX).frames;
        for piece in [usize::MAX, 7] {
            assert_eq!(
                decode_tight(r.provider, 8, &r.body, piece),
                want,
                "{}",
                r.name
            );
        }
    }
    for (provider, body, slots, _) in hand_written() {
        let want = decode_with(
            provider,
            DecoderConfig::DEFAULT,
            slots,
            body.as_bytes(),
            || usize::MAX,
        )
        .frames;
        for piece in [usize::MAX, 1, 5] {
            assert_eq!(
                decode_tight(provider, slots, body.as_bytes(), piece),
                want,
                "{provider:?} {body}"
            );
        }
    }
}

// ----- hand-written cases -----------------------------------------------------------------

fn gemini(chunks: &[&str]) -> String {
    chunks
        .iter()
        .map(|parts| {
            format!("data: {{\"candidates\":[{{\"content\":{{\"role\":\"model\",\"parts\":[{parts}]}}}}]}}\n\n")
        })
        .collect()
}

fn anthropic(events: &[&str]) -> String {
    events
        .iter()
        .map(|data| {
            let v: Value = serde_json::from_str(data).unwrap();
            format!("event: {}\ndata: {data}\n\n", v["type"].as_str().unwrap())
        })
        .collect()
}

/// Events named by their `type`; data written with line breaks spans several `data:` lines.
fn responses(events: &[&str]) -> String {
    events
        .iter()
        .map(|data| {
            let v: Value = serde_json::from_str(data).unwrap();
            let lines = data.replace('\n', "\ndata: ");
            format!("event: {}\ndata: {lines}\n\n", v["type"].as_str().unwrap())
        })
        .collect()
}

const END_NULL: &str = r#"{"type":"END","content":{"reason":null}}"#;

/// Every hand-written case: provider, body, call slots, the exact frames.
fn hand_written() -> Vec<(Provider, String, usize, Vec<&'static str>)> {
    let g = Provider::Gemini;
    let a = Provider::Anthropic;
    let o = Provider::OpenAiResponses;
    vec![
        // The signature before the text, then after it: the STATE comes first either way.
        (
            g,
            gemini(&[
                r#"{"thoughtSignature":"c2lnMQ==","text":"Hi"}"#,
                r#"{"text":" there","thoughtSignature":"c2lnMg=="}"#,
            ]),
            2,
            vec![
                r#"{"type":"STATE","content":{"thoughtSignature":"c2lnMQ=="}}"#,
                r#"{"type":"TEXT","content":"Hi"}"#,
                r#"{"type":"STATE","content":{"thoughtSignature":"c2lnMg=="}}"#,
                r#"{"type":"TEXT","content":" there"}"#,
                END_NULL,
            ],
        ),
        // A part with no text to write is a whole empty part on its own; a thought part
        // says so; a part with the signature alone is an empty text part.
        (
            g,
            gemini(&[
                r#"{"text":"","thoughtSignature":"ZTE="}"#,
                r#"{"thought":true,"thoughtSignature":"ZTI=","text":""}"#,
                r#"{"thoughtSignature":"ZTM="}"#,
            ]),
            2,
            vec![
                r#"{"type":"STATE","content":{"thoughtSignature":"ZTE=","text":""}}"#,
                r#"{"type":"STATE","content":{"thoughtSignature":"ZTI=","text":"","thought":true}}"#,
                r#"{"type":"STATE","content":{"thoughtSignature":"ZTM=","text":""}}"#,
                END_NULL,
            ],
        ),
        // A thought part with its signature; a text part beside it in the same chunk; the
        // signature's escapes undone and written minimally.
        (
            g,
            gemini(&[
                r#"{"text":"think","thought":true,"thoughtSignature":"dA=="},{"text":"said","thoughtSignature":"a\/b\u002b"}"#,
            ]),
            2,
            vec![
                r#"{"type":"STATE","content":{"thoughtSignature":"dA=="}}"#,
                r#"{"type":"REASONING","content":"think"}"#,
                r#"{"type":"STATE","content":{"thoughtSignature":"a/b+"}}"#,
                r#"{"type":"TEXT","content":"said"}"#,
                END_NULL,
            ],
        ),
        // A streamed call signed on its opening part: the STATE when that part comes, the
        // TOOL_CALL when the call completes; a signature on a continuing part, or one that
        // is not a string, gives nothing.
        (
            g,
            gemini(&[
                r#"{"functionCall":{"name":"f","id":"g1","willContinue":true},"thoughtSignature":"czE="}"#,
                r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.a","numberValue":1}],"willContinue":true},"thoughtSignature":"bm8="}"#,
                r#"{"functionCall":{}}"#,
                r#"{"text":"done","thoughtSignature":7}"#,
            ]),
            2,
            vec![
                r#"{"type":"STATE","content":{"thoughtSignature":"czE="}}"#,
                r#"{"type":"TOOL_CALL","content":{"id":"g1","name":"f","args":{"a":1}}}"#,
                r#"{"type":"TEXT","content":"done"}"#,
                END_NULL,
            ],
        ),
        // A signed call that ends a streamed one (in the next chunk, then in the same one):
        // the streamed call's TOOL_CALL, then the new call's STATE and TOOL_CALL.
        (
            g,
            gemini(&[
                r#"{"functionCall":{"name":"f","willContinue":true},"thoughtSignature":"c0E="}"#,
                r#"{"thoughtSignature":"c0I=","functionCall":{"name":"g","args":{"b":2}}}"#,
                r#"{"functionCall":{"name":"h","willContinue":true},"thoughtSignature":"c0M="},{"functionCall":{"name":"k","args":{}},"thoughtSignature":"c0Q="}"#,
            ]),
            2,
            vec![
                r#"{"type":"STATE","content":{"thoughtSignature":"c0E="}}"#,
                r#"{"type":"TOOL_CALL","content":{"name":"f","args":{}}}"#,
                r#"{"type":"STATE","content":{"thoughtSignature":"c0I="}}"#,
                r#"{"type":"TOOL_CALL","content":{"name":"g","args":{"b":2}}}"#,
                r#"{"type":"STATE","content":{"thoughtSignature":"c0M="}}"#,
                r#"{"type":"TOOL_CALL","content":{"name":"h","args":{}}}"#,
                r#"{"type":"STATE","content":{"thoughtSignature":"c0Q="}}"#,
                r#"{"type":"TOOL_CALL","content":{"name":"k","args":{}}}"#,
                END_NULL,
            ],
        ),
        // A call refused for want of a slot still gets its STATE first.
        (
            g,
            gemini(&[
                r#"{"functionCall":{"name":"n","id":"t1","args":{}},"thoughtSignature":"cg=="}"#,
            ]),
            0,
            vec![
                r#"{"type":"STATE","content":{"thoughtSignature":"cg=="}}"#,
                r#"{"type":"TOOL_CALL","content":{"id":"t1","name":"n","args_error":"Too many parallel tool calls (max 0)"}}"#,
                END_NULL,
            ],
        ),
        // Two thinking blocks back to back, each closed by its signature; then text and a
        // call, which carry none.
        (
            a,
            anthropic(&[
                r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}"#,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"first"}}"#,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"U0lHMQ=="}}"#,
                r#"{"type":"content_block_stop","index":0}"#,
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"second"}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"U0lH\/Mg=="}}"#,
                r#"{"type":"content_block_stop","index":1}"#,
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"ok"}}"#,
                r#"{"type":"content_block_stop","index":2}"#,
                r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":{}}}"#,
                r#"{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"q\":1}"}}"#,
                r#"{"type":"content_block_stop","index":3}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
                r#"{"type":"message_stop"}"#,
            ]),
            2,
            vec![
                r#"{"type":"REASONING","content":"first"}"#,
                r#"{"type":"STATE","content":{"signature":"U0lHMQ=="}}"#,
                r#"{"type":"REASONING","content":"second"}"#,
                r#"{"type":"STATE","content":{"signature":"U0lH/Mg=="}}"#,
                r#"{"type":"TEXT","content":"ok"}"#,
                r#"{"type":"TOOL_CALL","content":{"id":"toolu_1","name":"get","args":{"q":1}}}"#,
                r#"{"type":"END","content":{"reason":"tool_use"}}"#,
            ],
        ),
        // A redacted thinking block: its data at its start; a thinking block after it.
        (
            a,
            anthropic(&[
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"RURBQ1RFRA=="}}"#,
                r#"{"type":"content_block_stop","index":0}"#,
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"t"}}"#,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"UzM="}}"#,
                r#"{"type":"content_block_stop","index":1}"#,
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"hi"}}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
                r#"{"type":"message_stop"}"#,
            ]),
            2,
            vec![
                r#"{"type":"STATE","content":{"redacted_thinking":"RURBQ1RFRA=="}}"#,
                r#"{"type":"REASONING","content":"t"}"#,
                r#"{"type":"STATE","content":{"signature":"UzM="}}"#,
                r#"{"type":"TEXT","content":"hi"}"#,
                r#"{"type":"END","content":{"reason":"end_turn"}}"#,
            ],
        ),
        // A reasoning item with encrypted_content, written with white space: compacted,
        // every member in its order, strings as written (escapes kept); the `.added` of it
        // gives nothing.
        (
            o,
            responses(&[
                r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}"#,
                r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Plan"}"#,
                r#"{"type":"response.output_item.done","output_index":0,"item":{ "id" : "rs_1", "type": "reasoning",
  "summary": [ {"type": "summary_text", "text": "Plan caf\u00e9 a\/b"} ],
  "encrypted_content": "gAAA+/=" }}"#,
                r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get","arguments":""}}"#,
                r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get","arguments":"{}"}}"#,
                r#"{"type":"response.completed","response":{"status":"completed"}}"#,
            ]),
            2,
            vec![
                r#"{"type":"REASONING","content":"Plan"}"#,
                r#"{"type":"STATE","content":{"reasoning":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan caf\u00e9 a\/b"}],"encrypted_content":"gAAA+/="}}}"#,
                r#"{"type":"TOOL_CALL","content":{"id":"call_1","name":"get","args":{}}}"#,
                r#"{"type":"END","content":{"reason":"completed"}}"#,
            ],
        ),
        // A reasoning item without encrypted_content: as it came (the conversation decides).
        (
            o,
            responses(&[
                r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_2","type":"reasoning","summary":[]}}"#,
                r#"{"type":"response.output_text.delta","output_index":1,"delta":"Hi"}"#,
                r#"{"type":"response.completed","response":{"status":"completed"}}"#,
            ]),
            2,
            vec![
                r#"{"type":"STATE","content":{"reasoning":{"id":"rs_2","type":"reasoning","summary":[]}}}"#,
                r#"{"type":"TEXT","content":"Hi"}"#,
                r#"{"type":"END","content":{"reason":"completed"}}"#,
            ],
        ),
    ]
}

#[test]
fn hand_written_cases_give_exactly_these_frames_at_any_split() {
    let mut rng = XorShift::new(0x5747_E002);
    for (provider, body, slots, want) in hand_written() {
        let run = |cut: &mut dyn FnMut() -> usize| {
            decode_with(
                provider,
                DecoderConfig::DEFAULT,
                slots,
                body.as_bytes(),
                cut,
            )
        };
        let whole = run(&mut || usize::MAX);
        assert_eq!(whole.frames, want, "{provider:?} {body}");
        assert_eq!(run(&mut || 1), whole, "{provider:?} byte by byte");
        for _ in 0..20 {
            assert_eq!(run(&mut || rng.in_1_to(40)), whole, "{provider:?} pieces");
        }
        // The state is nothing skipped: the counters see only the calls.
        let calls = want.iter().filter(|f| kind(f) == "TOOL_CALL").count() as u64;
        assert_eq!(
            whole.stats,
            DecoderStats {
                calls_started: calls,
                calls_written: calls,
                ..DecoderStats::default()
            },
            "{provider:?} {body}"
        );
    }
}

/// The STATE of a signed part comes as soon as that part is read: a streamed call's
/// TOOL_CALL is still to come.
#[test]
fn a_streamed_calls_state_comes_before_the_call_completes() {
    let first =
        gemini(&[r#"{"functionCall":{"name":"f","willContinue":true},"thoughtSignature":"czE="}"#]);
    let cfg = DecoderConfig::DEFAULT;
    let mut slots = [CallSlot::EMPTY; 2];
    let mut arena = vec![0u8; cfg.arena_len(2)];
    let mut d = Decoder::new(Provider::Gemini, cfg, &mut slots, &mut arena).unwrap();
    let mut out = vec![0u8; cfg.max_frame_len()];
    assert_eq!(d.feed(first.as_bytes()), first.len());
    let n = d.poll_frame(&mut out).unwrap().unwrap();
    assert_eq!(
        &out[..n],
        br#"{"type":"STATE","content":{"thoughtSignature":"czE="}}"#
    );
    assert_eq!(d.poll_frame(&mut out), Ok(None));
    let rest =
        gemini(&[r#"{"functionCall":{"partialArgs":[{"jsonPath":"$.x","stringValue":"y"}]}}"#]);
    assert_eq!(d.feed(rest.as_bytes()), rest.len());
    let n = d.poll_frame(&mut out).unwrap().unwrap();
    assert_eq!(
        &out[..n],
        br#"{"type":"TOOL_CALL","content":{"name":"f","args":{"x":"y"}}}"#
    );
}

/// The frames other than STATE are those of the same body without the provider's state.
#[test]
fn without_the_state_members_the_other_frames_are_the_same() {
    for (provider, body, slots, want) in hand_written() {
        let stripped = strip_state(provider, &body);
        let got = decode_with(
            provider,
            DecoderConfig::DEFAULT,
            slots,
            stripped.as_bytes(),
            || usize::MAX,
        )
        .frames;
        let rest: Vec<&str> = want
            .iter()
            .copied()
            .filter(|f| kind(f) != "STATE")
            .collect();
        assert_eq!(got, rest, "{provider:?} {stripped}");
    }
}

/// `body` without its provider state: Gemini signatures gone (a part left with no text at
/// all dropped), Anthropic signature deltas and redacted blocks' events gone, Responses
/// reasoning items' `.done` events gone.
fn strip_state(provider: Provider, body: &str) -> String {
    let mut out = String::new();
    for event in body.split("\n\n").filter(|e| !e.is_empty()) {
        let head: String = event
            .lines()
            .filter(|l| !l.starts_with("data: "))
            .map(|l| format!("{l}\n"))
            .collect();
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        let mut v: Value = serde_json::from_str(&data.join("\n")).unwrap();
        match provider {
            Provider::Gemini => {
                let parts = v["candidates"][0]["content"]["parts"]
                    .as_array_mut()
                    .unwrap();
                for p in parts.iter_mut() {
                    p.as_object_mut().unwrap().remove("thoughtSignature");
                }
                parts.retain(|p| p.get("functionCall").is_some() || p["text"] != "");
            }
            Provider::Anthropic => {
                if v["delta"]["type"] == "signature_delta"
                    || v["content_block"]["type"] == "redacted_thinking"
                {
                    continue;
                }
            }
            _ => {
                if v["type"] == "response.output_item.done" && v["item"]["type"] == "reasoning" {
                    continue;
                }
                if let Some(output) = v["response"]["output"].as_array_mut() {
                    output.retain(|i| i["type"] != "reasoning");
                }
            }
        }
        out += &format!("{head}data: {v}\n\n");
    }
    out
}

/// The wrapper passes STATE frames through untouched (its consumer forwards the very bytes),
/// like REASONING, whatever calls it intercepts around them.
#[test]
fn the_wrapper_passes_state_frames_through_untouched() {
    use polyweave_tests::drive::{at, drain};
    use polyweave_tool_adapter::{Disposition, NoHooks, Slot, Wrapper, WrapperConfig};
    let mut bodies: Vec<(Provider, Vec<u8>)> = recordings()
        .into_iter()
        .filter(|r| POSITIONS.iter().any(|p| p.0 == r.name))
        .map(|r| (r.provider, r.body))
        .collect();
    bodies.extend(
        hand_written()
            .into_iter()
            .filter(|c| c.2 > 0)
            .map(|c| (c.0, c.1.into_bytes())),
    );
    for (provider, body) in bodies {
        let frames = decode(provider, &body, || usize::MAX).frames;
        let cfg = WrapperConfig::DEFAULT;
        let mut slots = [Slot::EMPTY; 2];
        let mut arena = vec![0u8; cfg.arena_len(2)];
        let mut w = Wrapper::new(cfg, &[], NoHooks, &mut slots, &mut arena).unwrap();
        let mut forwarded = 0;
        for f in &frames {
            let how = w.handle_response(at(1), f.as_bytes()).unwrap();
            drain(&mut w);
            if kind(f) == "STATE" {
                assert_eq!(how, Disposition::Forward, "{provider:?} {f}");
                forwarded += 1;
            }
        }
        assert!(forwarded > 0, "{provider:?}");
    }
}
