//! `--request PROVIDER CONVERSATION.json` (SPEC §10.4): a conversation file through the
//! library's conversation and request writer, the body printed as one line.

use std::path::Path;

use polyweave_tool_adapter::request::{
    find_declaration, model_name_of, Conversation, Declaration, Request, RequestOptions,
    ToolChoice, MAX_NAME,
};
use polyweave_tool_adapter::Provider;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::streams::{decode_body, provider, DECODER};

/// Memory when the file gives no `capacity`: enough for any conversation a test writes.
const ENOUGH: usize = 16 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    model: String,
    system: Option<String>,
    max_tokens: Option<u32>,
    tool_choice: Option<Box<RawValue>>,
    extra: Option<Box<RawValue>>,
    capacity: Option<usize>,
    #[serde(default)]
    pin_first_user: bool,
    #[serde(default)]
    tools: Vec<Tool>,
    turns: Vec<Turn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    name: Option<String>,
    description: Option<String>,
    input_schema: Option<Box<RawValue>>,
    #[serde(default)]
    strict: bool,
    mcp: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    user: Option<String>,
    response: Option<String>,
    provider: Option<String>,
    results: Option<Vec<ResultEntry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultEntry {
    id: Option<String>,
    name: Option<String>,
    result: Option<Box<RawValue>>,
    error: Option<String>,
}

/// A call the conversation holds: its id, the name the model used, whether it has a result.
struct Held {
    id: Option<String>,
    name: String,
    answered: bool,
}

/// Prints the body, or says why it cannot be written.
pub fn run_request(target: Provider, file: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let conv: File = serde_json::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    let dir = Path::new(file).parent().unwrap_or(Path::new("."));
    let decls = declarations(&conv.tools)?;
    let mut memory = vec![0u8; conv.capacity.unwrap_or(ENOUGH)];
    let mut c = Conversation::new(&mut memory);
    c.pin_first_user(conv.pin_first_user);
    if let Some(s) = &conv.system {
        c.set_system(s).map_err(|e| format!("system: {e}"))?;
    }
    let mut held: Vec<Held> = Vec::new();
    for (i, turn) in conv.turns.iter().enumerate() {
        let at = |e: String| format!("turn {i}: {e}");
        match (&turn.user, &turn.response, &turn.results) {
            (Some(u), None, None) => c.push_user(u).map_err(|e| at(e.to_string()))?,
            (None, Some(body), None) => {
                let p = provider(
                    turn.provider
                        .as_deref()
                        .ok_or_else(|| at("a response needs its provider".into()))?,
                )
                .map_err(at)?;
                let bytes =
                    std::fs::read(dir.join(body)).map_err(|e| at(format!("{body}: {e}")))?;
                c.begin_response(p).map_err(|e| at(e.to_string()))?;
                let mut frames = Vec::new();
                decode_body(p, DECODER, &bytes, 0, |f| frames.push(f.to_vec())).map_err(at)?;
                for f in frames {
                    c.push_frame(&f).map_err(|e| at(e.to_string()))?;
                    let v: serde_json::Value =
                        serde_json::from_slice(&f).map_err(|e| at(e.to_string()))?;
                    if v["type"] == "TOOL_CALL" {
                        held.push(Held {
                            id: v["content"]["id"].as_str().map(str::to_owned),
                            name: v["content"]["name"].as_str().unwrap_or_default().to_owned(),
                            answered: false,
                        });
                    }
                }
                c.end_response();
            }
            (None, None, Some(results)) => {
                for (k, r) in results.iter().enumerate() {
                    let frame = result_frame(r, &mut held, &decls)
                        .map_err(|e| at(format!("result {k}: {e}")))?;
                    c.push_frame(frame.as_bytes())
                        .map_err(|e| at(format!("result {k}: {e}")))?;
                }
            }
            _ => {
                return Err(at(
                    "a turn is one of user, response (with provider) or results".into(),
                ))
            }
        }
    }
    let mut opts = RequestOptions::new(&conv.model);
    opts.max_tokens = conv.max_tokens;
    let choice_name;
    opts.tool_choice = match conv.tool_choice.as_deref().map(RawValue::get) {
        None => None,
        Some(r#""auto""#) => Some(ToolChoice::Auto),
        Some(r#""none""#) => Some(ToolChoice::None),
        Some(r#""required""#) => Some(ToolChoice::Required),
        Some(other) => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Named {
                name: String,
            }
            let n: Named = serde_json::from_str(other).map_err(|e| format!("tool_choice: {e}"))?;
            choice_name = n.name;
            Some(ToolChoice::Tool(&choice_name))
        }
    };
    opts.extra = conv.extra.as_deref().map(|e| e.get().as_bytes());
    let mut req = Request::new(&c, target, &opts, &decls).map_err(|e| e.to_string())?;
    let mut body = vec![0u8; req.len()];
    let mut n = 0;
    while n < body.len() {
        n += req.write(&mut body[n..]);
    }
    println!("{}", String::from_utf8_lossy(&body));
    Ok(())
}

fn declarations(tools: &[Tool]) -> Result<Vec<Declaration<'_>>, String> {
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| match (&t.mcp, &t.name) {
            (Some(entry), None) => Declaration::from_mcp(entry.get().as_bytes())
                .map_err(|e| format!("tools[{i}]: {e}")),
            (None, Some(name)) => {
                let mut d =
                    Declaration::new(name, t.input_schema.as_deref().map(|s| s.get().as_bytes()))
                        .strict(t.strict);
                if let Some(desc) = &t.description {
                    d = d.description(desc);
                }
                Ok(d)
            }
            _ => Err(format!("tools[{i}]: a tool has a name or an mcp entry")),
        })
        .collect()
}

/// The `TOOL_RESULT` frame of a results entry: its call found by id, or as the next call of
/// that name (declared or as the model sees it) without a result.
fn result_frame(
    r: &ResultEntry,
    held: &mut [Held],
    decls: &[Declaration<'_>],
) -> Result<String, String> {
    let names_match = |want: &str, have: &str| {
        want == have
            || Provider::ALL.iter().any(|&p| {
                let mut buf = [0u8; MAX_NAME];
                find_declaration(p, decls, want.as_bytes())
                    .is_some_and(|i| model_name_of(p, decls, i, &mut buf) == have.as_bytes())
            })
    };
    let call = match (&r.id, &r.name) {
        (Some(id), _) => held
            .iter_mut()
            .find(|h| h.id.as_deref() == Some(id.as_str())),
        (None, Some(name)) => held
            .iter_mut()
            .find(|h| !h.answered && names_match(name, &h.name)),
        (None, None) => return Err("names its call by id or by name".into()),
    }
    .ok_or("no such call")?;
    call.answered = true;
    let mut content = serde_json::Map::new();
    if let Some(id) = &call.id {
        content.insert("id".into(), id.clone().into());
    }
    content.insert("name".into(), call.name.clone().into());
    let mut frame =
        serde_json::to_string(&serde_json::json!({"type": "TOOL_RESULT", "content": content}))
            .map_err(|e| e.to_string())?;
    // The result goes in as written (numbers and escapes kept).
    frame.truncate(frame.len() - 2);
    match (&r.result, &r.error) {
        (Some(v), None) => {
            frame.push_str(",\"result\":");
            frame.push_str(v.get());
        }
        (None, Some(e)) => {
            frame.push_str(",\"error\":");
            frame.push_str(&serde_json::to_string(e).map_err(|e| e.to_string())?);
        }
        _ => return Err("has a result or an error".into()),
    }
    frame.push_str("}}");
    Ok(frame)
}
