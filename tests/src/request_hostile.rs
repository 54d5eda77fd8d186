//! A careless host and model for the conversation and the request writer, from bytes: any
//! texts, calls with missing, repeated or odd ids, results for calls that are not there,
//! state frames of every provider for any turn, raw bytes as frames, any capacity, providers
//! changing between turns. Checked: no panic; memory never exceeded; a refusal changes
//! nothing; every body is valid JSON with every call beside its result, and the same bytes
//! whatever the buffer size. The `request` fuzz target runs it, and so does a test.

use polyweave_tool_adapter::json;
use polyweave_tool_adapter::request::{Conversation, Request, RequestOptions};
use polyweave_tool_adapter::Provider;
use serde_json::Value;

struct Choices<'a> {
    data: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn done(&self) -> bool {
        self.at >= self.data.len()
    }

    fn text(&mut self) -> String {
        let n = usize::from(self.byte() % 24);
        let end = (self.at + n).min(self.data.len());
        let t = String::from_utf8_lossy(&self.data[self.at.min(end)..end]).into_owned();
        self.at = end;
        t
    }
}

const NAMES: [&str; 4] = ["get_weather", "fs.read", "a\"b", "add"];
const IDS: [&str; 5] = ["call_1", "call_2", "functions.add:0", "", "toolu_01"];

/// Runs the operations the bytes choose, then writes a body for every provider.
pub fn run(data: &[u8]) {
    let mut ch = Choices { data, at: 0 };
    let cap = 32 + usize::from(ch.byte()) * usize::from(ch.byte()) / 4;
    let mut mem = vec![0u8; cap];
    let mut c = Conversation::new(&mut mem);
    c.pin_first_user(ch.byte() & 1 == 1);
    let mut calls: Vec<(Option<&str>, &str)> = Vec::new();
    while !ch.done() {
        let op = ch.byte() % 9;
        let frame: Option<String> = match op {
            0 => {
                let t = ch.text();
                check_refusal(&mut c, |c| c.push_user(&t).map(|_| ()));
                None
            }
            1 => {
                let p = Provider::ALL[usize::from(ch.byte()) % Provider::ALL.len()];
                check_refusal(&mut c, |c| c.begin_response(p));
                None
            }
            2 => {
                let kind = if ch.byte() & 1 == 0 {
                    "TEXT"
                } else {
                    "REASONING"
                };
                Some(serde_json::json!({"type": kind, "content": ch.text()}).to_string())
            }
            3 => {
                let name = NAMES[usize::from(ch.byte()) % NAMES.len()];
                let id = IDS[usize::from(ch.byte()) % IDS.len()];
                let mut content = serde_json::json!({"name": name});
                if !id.is_empty() {
                    content["id"] = id.into();
                }
                match ch.byte() % 3 {
                    0 => content["args"] = serde_json::json!({"x": ch.text()}),
                    1 => {
                        content["args"] = ch.text().into();
                        content["args_error"] =
                            format!("Tool {name} arguments are not valid JSON").into();
                    }
                    _ => {}
                }
                calls.push(((!id.is_empty()).then_some(id), name));
                Some(serde_json::json!({"type": "TOOL_CALL", "content": content}).to_string())
            }
            4 => {
                let (id, name) = match calls.get(usize::from(ch.byte()) % (calls.len() + 1)) {
                    Some(&c) => c,
                    None => (Some("nobody"), "nothing"),
                };
                let mut content = serde_json::json!({"name": name});
                if let Some(id) = id.filter(|_| ch.byte() & 3 != 0) {
                    content["id"] = id.into();
                }
                if ch.byte() & 1 == 0 {
                    content["result"] = serde_json::json!({"t": ch.text()});
                } else {
                    content["error"] = ch.text().into();
                }
                Some(serde_json::json!({"type": "TOOL_RESULT", "content": content}).to_string())
            }
            5 => {
                let t = ch.text();
                let content = match ch.byte() % 6 {
                    0 => serde_json::json!({"thoughtSignature": t}),
                    1 => serde_json::json!({"thoughtSignature": t, "text": "", "thought": true}),
                    2 => serde_json::json!({"signature": t}),
                    3 => serde_json::json!({"redacted_thinking": t}),
                    4 => {
                        serde_json::json!({"reasoning": {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": t}})
                    }
                    _ => {
                        serde_json::json!({"reasoning": {"id": "rs_2", "type": "reasoning", "summary": []}})
                    }
                };
                Some(serde_json::json!({"type": "STATE", "content": content}).to_string())
            }
            6 => Some(r#"{"type":"END","content":{"reason":"stop"}}"#.to_owned()),
            7 => Some(ch.text()),
            _ => {
                let t = ch.text();
                check_refusal(&mut c, |c| c.set_system(&t));
                None
            }
        };
        if let Some(f) = frame {
            check_refusal(&mut c, |c| c.push_frame(f.as_bytes()).map(|_| ()));
        }
        assert!(c.used() <= c.capacity());
    }
    let chunk = 1 + usize::from(ch.byte() % 13);
    for &p in Provider::ALL {
        let opts = RequestOptions::new("m");
        let whole = body(&c, p, &opts, usize::MAX);
        assert!(
            json::validate(&whole, 64).is_ok(),
            "{}",
            String::from_utf8_lossy(&whole)
        );
        assert_eq!(
            body(&c, p, &opts, chunk),
            whole,
            "{} in {chunk}-byte buffers",
            p.name()
        );
        let v: Value = serde_json::from_slice(&whole).expect("JSON");
        assert_paired(p, &v);
    }
}

fn body(c: &Conversation<'_>, p: Provider, opts: &RequestOptions<'_>, chunk: usize) -> Vec<u8> {
    let mut req = Request::new(c, p, opts, &[]).expect("no declarations, no options to refuse");
    let mut out = Vec::new();
    let mut buf = vec![0u8; chunk.min(req.len().max(1))];
    loop {
        let n = req.write(&mut buf);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    assert_eq!(out.len(), req.len());
    out
}

/// A refused operation changes nothing: the same memory in use, the same body.
fn check_refusal<E>(
    c: &mut Conversation<'_>,
    op: impl FnOnce(&mut Conversation<'_>) -> Result<(), E>,
) {
    let opts = RequestOptions::new("m");
    let (used, len, evicted) = (c.used(), c.len(), c.evicted());
    let before = body(c, Provider::Anthropic, &opts, usize::MAX);
    if op(c).is_err() {
        assert_eq!(
            (c.used(), c.len(), c.evicted()),
            (used, len, evicted),
            "a refusal changed nothing"
        );
        assert_eq!(body(c, Provider::Anthropic, &opts, usize::MAX), before);
    }
}

/// Every call a body holds has its result beside it (SPEC §10.2 rule 1): the ids (or, for
/// providers without ids, the counts) of calls and results agree.
pub fn assert_paired(p: Provider, body: &Value) {
    let arr = |k: &str| body[k].as_array().cloned().unwrap_or_default();
    let id = |v: &Value| v.as_str().map(str::to_owned).unwrap_or_default();
    let (mut calls, mut results): (Vec<String>, Vec<String>) = (vec![], vec![]);
    match p.name() {
        "openai-chat" | "ollama" => {
            for m in arr("messages") {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    calls.push(id(&c["id"]));
                }
                if m["role"] == "tool" {
                    results.push(id(&m["tool_call_id"]));
                }
            }
        }
        "openai-responses" => {
            for it in arr("input") {
                match it["type"].as_str() {
                    Some("function_call") => calls.push(id(&it["call_id"])),
                    Some("function_call_output") => results.push(id(&it["call_id"])),
                    _ => {}
                }
            }
        }
        "anthropic" => {
            for m in arr("messages") {
                for b in m["content"].as_array().into_iter().flatten() {
                    match b["type"].as_str() {
                        Some("tool_use") => calls.push(id(&b["id"])),
                        Some("tool_result") => results.push(id(&b["tool_use_id"])),
                        _ => {}
                    }
                }
            }
        }
        _ => {
            for m in arr("contents") {
                for part in m["parts"].as_array().into_iter().flatten() {
                    if part.get("functionCall").is_some() {
                        calls.push(id(&part["functionCall"]["id"]));
                    }
                    if part.get("functionResponse").is_some() {
                        results.push(id(&part["functionResponse"]["id"]));
                    }
                }
            }
        }
    }
    calls.sort();
    results.sort();
    assert_eq!(calls, results, "{body}");
}
