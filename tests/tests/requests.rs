//! Requests (SPEC §10): conversations built from every recorded response, written for
//! every provider, checked by the provider SDKs' own request types and ordering rules; what
//! an SDK keeps of a response given back; eviction that never orphans a call; the same
//! bytes whatever the buffer.

use std::io::Write;
use std::process::{Command, Stdio};

use polyweave_tests::request_hostile::{self, assert_paired};
use polyweave_tests::streams::{decode, recordings, Recording};
use polyweave_tests::XorShift as Rng;
use polyweave_tool_adapter::request::{
    Conversation, ConversationError, Declaration, Pushed, Request, RequestError, RequestOptions,
    ToolChoice,
};
use polyweave_tool_adapter::Provider;
use serde_json::{json, Value};

use polyweave_tests::library::{sdk_python, workspace_root};

/// The whole body, written through buffers of `chunk` bytes.
fn body_of(req: &mut Request<'_>, chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; chunk];
    loop {
        let n = req.write(&mut buf);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    assert_eq!(out.len(), req.len(), "len() is the body's length");
    out
}

/// A result for every call of `frames`, in order: the call's id and name and a result
/// (every third an error).
fn results_for(frames: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let v: Value = serde_json::from_str(f).unwrap();
        if v["type"] != "TOOL_CALL" {
            continue;
        }
        let c = &v["content"];
        let mut content = json!({"name": c["name"]});
        if let Some(id) = c.get("id") {
            content["id"] = id.clone();
        }
        if i % 3 == 2 {
            content["error"] = json!(format!("Tool {} failed", c["name"].as_str().unwrap()));
        } else {
            content["result"] = json!({"ok": true, "n": i});
        }
        out.push(json!({"type": "TOOL_RESULT", "content": content}).to_string());
    }
    out
}

const DECLS: [Declaration<'static>; 2] = [
    Declaration::new(
        "get_weather",
        Some(br#"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"#),
    )
    .description("Weather now"),
    Declaration::new("no_args", None),
];

/// A conversation from one recording: system, a question, the response, the results, a
/// thank-you.
fn conversation<'m>(mem: &'m mut [u8], r: &Recording, frames: &[String]) -> Conversation<'m> {
    let mut c = Conversation::new(mem);
    c.set_system("You are terse.").unwrap();
    c.push_user("What is the weather in Paris?").unwrap();
    c.begin_response(r.provider).unwrap();
    for f in frames {
        c.push_frame(f.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {f}: {e}", r.name));
    }
    for res in results_for(frames) {
        c.push_frame(res.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {res}: {e}", r.name));
    }
    c.push_user("Thanks.").unwrap();
    c
}

fn with_calls() -> Vec<(Recording, Vec<String>)> {
    recordings()
        .into_iter()
        .filter_map(|r| {
            let frames = decode(r.provider, &r.body, || usize::MAX).frames;
            frames
                .iter()
                .any(|f| f.starts_with(r#"{"type":"TOOL_CALL""#))
                .then_some((r, frames))
        })
        .collect()
}

fn check_with_sdks(lines: &[Value]) {
    let Some(python) = sdk_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the SDK environment (tests/run.sh makes target/sdk-venv)"
        );
        println!("skipped: no SDK environment (bash tests/run.sh makes target/sdk-venv)");
        return;
    };
    let mut child = Command::new(python)
        .arg(workspace_root().join("tests/sdk/check_request.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run check_request.py");
    {
        let mut stdin = child.stdin.take().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("checked {} bodies", lines.len())),
        "{text}"
    );
}

/// SPEC §10.3/§10.4: every recording with calls, as a conversation, written for every
/// provider, is accepted by that provider SDK's request types and obeys its rules.
#[test]
fn every_body_is_accepted_by_the_provider_sdks() {
    let mut lines = Vec::new();
    for (r, frames) in with_calls() {
        let mut mem = vec![0u8; 1 << 20];
        let c = conversation(&mut mem, &r, &frames);
        for &p in Provider::ALL {
            let mut opts = RequestOptions::new("some-model");
            opts.max_tokens = Some(1024);
            if p != Provider::Ollama {
                opts.tool_choice = Some(ToolChoice::Tool("get_weather"));
            }
            let mut req = Request::new(&c, p, &opts, &DECLS).unwrap();
            let body = body_of(&mut req, 4096);
            let v: Value = serde_json::from_slice(&body).unwrap_or_else(|e| {
                panic!(
                    "{} for {}: {e}: {}",
                    r.name,
                    p.name(),
                    String::from_utf8_lossy(&body)
                )
            });
            lines.push(json!({"provider": p.name(), "body": v}));
        }
    }
    assert!(lines.len() >= 5 * 30, "{} bodies", lines.len());
    check_with_sdks(&lines);
}

/// The same bytes whatever the buffer's size, one byte included.
#[test]
fn the_same_bytes_whatever_the_buffer() {
    for (r, frames) in with_calls().into_iter().take(12) {
        let mut mem = vec![0u8; 1 << 20];
        let c = conversation(&mut mem, &r, &frames);
        for &p in Provider::ALL {
            let opts = RequestOptions::new("m");
            let whole = body_of(&mut Request::new(&c, p, &opts, &DECLS).unwrap(), 1 << 20);
            for chunk in [1, 2, 3, 7, 64, 333] {
                let pieces = body_of(&mut Request::new(&c, p, &opts, &DECLS).unwrap(), chunk);
                assert_eq!(
                    pieces,
                    whole,
                    "{} for {} in {chunk}-byte buffers",
                    r.name,
                    p.name()
                );
            }
        }
    }
}

fn body(
    c: &Conversation<'_>,
    p: Provider,
    opts: &RequestOptions<'_>,
    decls: &[Declaration<'_>],
) -> String {
    let mut req = Request::new(c, p, opts, decls).unwrap();
    String::from_utf8(body_of(&mut req, 1 << 16)).unwrap()
}

/// Exact bodies for a small conversation, for every provider.
#[test]
fn exact_bodies() {
    let mut mem = [0u8; 2048];
    let mut c = Conversation::new(&mut mem);
    c.set_system("Be \"terse\".").unwrap();
    c.push_user("Add 2 and 3").unwrap();
    c.begin_response(Provider::OpenAiChat).unwrap();
    for f in [
        r#"{"type":"TEXT","content":"Let me "}"#,
        r#"{"type":"TEXT","content":"add."}"#,
        r#"{"type":"TOOL_CALL","content":{"id":"call_1","name":"add","args":{"a":2,"b":3}}}"#,
        r#"{"type":"END","content":{"reason":"tool_calls"}}"#,
        r#"{"type":"TOOL_RESULT","content":{"id":"call_1","name":"add","result":5}}"#,
    ] {
        c.push_frame(f.as_bytes()).unwrap();
    }
    let decls = [Declaration::new(
        "add",
        Some(br#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}"#),
    )];
    let opts = RequestOptions::new("m");
    assert_eq!(
        body(&c, Provider::OpenAiChat, &opts, &decls),
        r#"{"model":"m","messages":[{"role":"system","content":"Be \"terse\"."},{"role":"user","content":"Add 2 and 3"},{"role":"assistant","content":"Let me add.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]},{"role":"tool","tool_call_id":"call_1","content":"5"}],"tools":[{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}}],"stream":true,"stream_options":{"include_usage":true}}"#
    );
    assert_eq!(
        body(&c, Provider::OpenAiResponses, &opts, &decls),
        r#"{"model":"m","instructions":"Be \"terse\".","input":[{"role":"user","content":"Add 2 and 3"},{"role":"assistant","content":"Let me add."},{"type":"function_call","call_id":"call_1","name":"add","arguments":"{\"a\":2,\"b\":3}"},{"type":"function_call_output","call_id":"call_1","output":"5"}],"tools":[{"type":"function","name":"add","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}},"strict":false}],"stream":true,"store":false,"include":["reasoning.encrypted_content"]}"#
    );
    assert_eq!(
        body(&c, Provider::Anthropic, &opts, &decls),
        r#"{"model":"m","max_tokens":4096,"system":"Be \"terse\".","messages":[{"role":"user","content":"Add 2 and 3"},{"role":"assistant","content":[{"type":"text","text":"Let me add."},{"type":"tool_use","id":"call_1","name":"add","input":{"a":2,"b":3}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"5"}]}],"tools":[{"name":"add","input_schema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}],"stream":true}"#
    );
    assert_eq!(
        body(&c, Provider::Gemini, &opts, &decls),
        r#"{"systemInstruction":{"parts":[{"text":"Be \"terse\"."}]},"contents":[{"role":"user","parts":[{"text":"Add 2 and 3"}]},{"role":"model","parts":[{"text":"Let me add."},{"functionCall":{"id":"call_1","name":"add","args":{"a":2,"b":3}}}]},{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"add","response":{"output":5}}}]}],"tools":[{"functionDeclarations":[{"name":"add","parametersJsonSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}]}]}"#
    );
    assert_eq!(
        body(&c, Provider::Ollama, &opts, &decls),
        r#"{"model":"m","messages":[{"role":"system","content":"Be \"terse\"."},{"role":"user","content":"Add 2 and 3"},{"role":"assistant","content":"Let me add.","tool_calls":[{"id":"call_1","function":{"name":"add","arguments":{"a":2,"b":3}}}]},{"role":"tool","tool_name":"add","content":"5","tool_call_id":"call_1"}],"tools":[{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}}],"stream":true}"#
    );
}

/// SPEC §10.2 rule 1: a request written while a call lacks its result answers it with
/// `Tool <name> got no result`; a result for a call not held is refused and changes nothing.
#[test]
fn missing_and_unknown_results() {
    let mut mem = [0u8; 1024];
    let mut c = Conversation::new(&mut mem);
    c.push_user("go").unwrap();
    c.begin_response(Provider::Anthropic).unwrap();
    c.push_frame(br#"{"type":"TOOL_CALL","content":{"id":"toolu_1","name":"fetch","args":{}}}"#)
        .unwrap();
    let used = c.used();
    for (frame, err) in [
        (
            &br#"{"type":"TOOL_RESULT","content":{"id":"nope","name":"fetch","result":1}}"#[..],
            ConversationError::UnknownCall,
        ),
        (
            br#"{"type":"TOOL_RESULT","content":{"name":"other","result":1}}"#,
            ConversationError::UnknownCall,
        ),
        (
            br#"{"type":"TOOL_RESULT","content":{"id":"toolu_1","result":1}}"#,
            ConversationError::NoName,
        ),
        (
            br#"{"type":"TOOL_RESULT","content":{"id":"toolu_1","name":"fetch"}}"#,
            ConversationError::NoOutcome,
        ),
    ] {
        assert_eq!(c.push_frame(frame), Err(err));
        assert_eq!(c.used(), used, "nothing changed");
    }
    let opts = RequestOptions::new("m");
    assert_eq!(
        body(&c, Provider::Anthropic, &opts, &[]),
        r#"{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"fetch","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Tool fetch got no result","is_error":true}]}],"stream":true}"#
    );
    c.push_frame(
        br#"{"type":"TOOL_RESULT","content":{"id":"toolu_1","name":"fetch","result":"done"}}"#,
    )
    .unwrap();
    assert_eq!(
        c.push_frame(
            br#"{"type":"TOOL_RESULT","content":{"id":"toolu_1","name":"fetch","result":"again"}}"#
        ),
        Err(ConversationError::AlreadyAnswered)
    );
    assert!(body(&c, Provider::Anthropic, &opts, &[])
        .contains(r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}"#));
}

/// Options and refusals: Ollama has no tool choice; extra members after the library's own,
/// refused when they name one of its members or are not JSON.
#[test]
fn options_and_their_refusals() {
    let mut mem = [0u8; 512];
    let mut c = Conversation::new(&mut mem);
    c.push_user("hi").unwrap();
    let mut opts = RequestOptions::new("m");
    opts.tool_choice = Some(ToolChoice::Required);
    assert_eq!(
        Request::new(&c, Provider::Ollama, &opts, &DECLS).err(),
        Some(RequestError::ToolChoiceUnsupported)
    );
    opts.tool_choice = Some(ToolChoice::Tool("nothing"));
    assert_eq!(
        Request::new(&c, Provider::OpenAiChat, &opts, &DECLS).err(),
        Some(RequestError::UnknownTool)
    );
    opts.tool_choice = None;
    opts.extra = Some(br#"{"temperature":0.2, "top_p" : 1}"#);
    assert_eq!(
        body(&c, Provider::OpenAiChat, &opts, &[]),
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"temperature":0.2,"top_p":1}"#
    );
    opts.extra = Some(br#"{"messages":[]}"#);
    assert_eq!(
        Request::new(&c, Provider::OpenAiChat, &opts, &[]).err(),
        Some(RequestError::ExtraClash)
    );
    opts.extra = Some(br#"{"temperature":}"#);
    assert_eq!(
        Request::new(&c, Provider::OpenAiChat, &opts, &[]).err(),
        Some(RequestError::BadExtra)
    );
    opts.extra = Some(br#"[1]"#);
    assert_eq!(
        Request::new(&c, Provider::OpenAiChat, &opts, &[]).err(),
        Some(RequestError::BadExtra)
    );
    // Gemini keeps its options in generationConfig: free unless max_tokens writes it.
    opts.extra = Some(br#"{"generationConfig":{"temperature":0}}"#);
    assert!(Request::new(&c, Provider::Gemini, &opts, &[]).is_ok());
    opts.max_tokens = Some(10);
    assert_eq!(
        Request::new(&c, Provider::Gemini, &opts, &[]).err(),
        Some(RequestError::ExtraClash)
    );
}

/// The id a provider takes: Anthropic refuses `functions.add:0`, OpenAI needs one the
/// call lacks; the call and its result get the same one.
#[test]
fn ids_a_provider_takes() {
    let mut mem = [0u8; 1024];
    let mut c = Conversation::new(&mut mem);
    c.push_user("go").unwrap();
    c.begin_response(Provider::OpenAiChat).unwrap();
    c.push_frame(
        br#"{"type":"TOOL_CALL","content":{"id":"functions.add:0","name":"add","args":{}}}"#,
    )
    .unwrap();
    c.push_frame(br#"{"type":"TOOL_CALL","content":{"name":"sub","args":{}}}"#)
        .unwrap();
    c.push_frame(
        br#"{"type":"TOOL_RESULT","content":{"id":"functions.add:0","name":"add","result":1}}"#,
    )
    .unwrap();
    c.push_frame(br#"{"type":"TOOL_RESULT","content":{"name":"sub","result":2}}"#)
        .unwrap();
    let opts = RequestOptions::new("m");
    let a = body(&c, Provider::Anthropic, &opts, &[]);
    assert!(a.contains(r#"{"type":"tool_use","id":"pwcall_0","name":"add","input":{}},{"type":"tool_use","id":"pwcall_1","name":"sub","input":{}}"#), "{a}");
    assert!(a.contains(r#"{"type":"tool_result","tool_use_id":"pwcall_0","content":"1"},{"type":"tool_result","tool_use_id":"pwcall_1","content":"2"}"#), "{a}");
    let o = body(&c, Provider::OpenAiChat, &opts, &[]);
    assert!(
        o.contains(r#""id":"functions.add:0""#) && o.contains(r#""tool_call_id":"pwcall_1""#),
        "{o}"
    );
    let g = body(&c, Provider::Gemini, &opts, &[]);
    assert!(
        g.contains(r#"{"functionCall":{"name":"sub","args":{}}}"#),
        "{g}"
    );
    // Whether Anthropic takes an id is decided on its text, not on how the frame escaped it:
    // `toolu\u005f7-B` is `toolu_7-B`, which it takes; `toolu\u00e97` (é) it does not.
    c.push_user("more").unwrap();
    c.begin_response(Provider::Anthropic).unwrap();
    c.push_frame(
        br#"{"type":"TOOL_CALL","content":{"id":"toolu\u005f7-B","name":"add","args":{}}}"#,
    )
    .unwrap();
    c.push_frame(br#"{"type":"TOOL_CALL","content":{"id":"toolu\u00e97","name":"add","args":{}}}"#)
        .unwrap();
    c.end_response();
    let a = body(&c, Provider::Anthropic, &opts, &[]);
    assert!(
        a.contains(r#"{"type":"tool_use","id":"toolu_7-B","name":"add","input":{}},{"type":"tool_use","id":"pwcall_3","name":"add","input":{}}"#),
        "{a}"
    );
    assert!(
        a.contains(r#""tool_use_id":"toolu_7-B""#) && a.contains(r#""tool_use_id":"pwcall_3""#),
        "{a}"
    );
}

/// Random conversations in random capacities: never an orphan, the latest exchange
/// intact, memory never exceeded, the same bytes whatever the buffer, refusals change
/// nothing.
#[test]
fn bounded_conversations_never_orphan_a_call() {
    let recs = with_calls();
    let mut rng = Rng::new(0x5eed_0010);
    let mut lines = Vec::new();
    for round in 0..300 {
        let cap = 200 + rng.in_1_to(6000);
        let mut mem = vec![0u8; cap];
        let mut c = Conversation::new(&mut mem);
        c.pin_first_user(round % 2 == 0);
        let _ = c.set_system("sys");
        let mut latest_calls: Vec<String> = Vec::new();
        for turn in 0..1 + rng.in_1_to(6) {
            let _ = c.push_user(&format!("question {turn}"));
            let (r, frames) = &recs[rng.in_1_to(recs.len()) - 1];
            if c.begin_response(r.provider).is_err() {
                continue;
            }
            let mut calls = Vec::new();
            for f in frames {
                let before = c.used();
                match c.push_frame(f.as_bytes()) {
                    Ok(_) => {
                        if f.starts_with(r#"{"type":"TOOL_CALL""#) {
                            calls.push(f.clone());
                        }
                    }
                    Err(ConversationError::NoRoom { .. }) => assert_eq!(c.used(), before),
                    Err(e) => panic!("{e}"),
                }
                assert!(c.used() <= c.capacity());
            }
            for res in results_for(&calls) {
                let before = c.used();
                match c.push_frame(res.as_bytes()) {
                    Ok(Pushed::Kept) => {}
                    Err(ConversationError::NoRoom { .. }) => assert_eq!(c.used(), before),
                    other => panic!("{other:?}"),
                }
            }
            if !calls.is_empty() {
                latest_calls = calls;
            }
        }
        for &p in Provider::ALL {
            let opts = RequestOptions::new("m");
            let whole = body_of(&mut Request::new(&c, p, &opts, &[]).unwrap(), 1 << 20);
            let v: Value = serde_json::from_slice(&whole).unwrap();
            assert_paired(p, &v);
            if round % 10 == 0 {
                lines.push(json!({"provider": p.name(), "body": v}));
            }
            let chunk = rng.in_1_to(97);
            assert_eq!(
                body_of(&mut Request::new(&c, p, &opts, &[]).unwrap(), chunk),
                whole
            );
            // The latest exchange is there, every call of it.
            let s = String::from_utf8_lossy(&whole);
            for f in &latest_calls {
                let v: Value = serde_json::from_str(f).unwrap();
                let name = v["content"]["name"].as_str().unwrap();
                let name_json = serde_json::to_string(name).unwrap();
                assert!(
                    s.contains(&name_json),
                    "round {round}: {name} missing from {s}"
                );
            }
        }
    }
    check_with_sdks(&lines);
}

/// `polyweave-replay --request` (SPEC §10.4): the conversation file's body on one line for
/// every provider, accepted by the SDKs; a refusal exits 2 with one line naming it.
#[test]
fn replay_request_prints_the_body() {
    use polyweave_tests::library::replay_bin;
    let dir = std::env::temp_dir().join(format!("pw-request-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = workspace_root()
        .join("tests/data/provider-streams/anthropic/anthropic-sdk-tool-use-response.body");
    let conv = json!({
        "model": "m", "system": "You are terse.", "max_tokens": 1024,
        "tool_choice": {"name": "fs.read"}, "extra": {"temperature": 0.2},
        "capacity": 65536, "pin_first_user": true,
        "tools": [
            {"name": "get_weather", "description": "Weather now", "input_schema": {"type": "object"}},
            {"mcp": {"name": "fs.read", "title": "Read", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}}
        ],
        "turns": [
            {"user": "Weather in Paris?"},
            {"response": body, "provider": "anthropic"},
            {"results": [{"name": "get_weather", "result": {"temp_c": 21}}]},
            {"user": "Thanks."}
        ]
    });
    let file = dir.join("conv.json");
    std::fs::write(&file, conv.to_string()).unwrap();
    let mut lines = Vec::new();
    for &p in Provider::ALL {
        let mut conv = conv.clone();
        if p == Provider::Ollama {
            conv.as_object_mut().unwrap().remove("tool_choice");
        }
        // Extra members each provider's request type names.
        conv["extra"] = match p {
            Provider::Gemini => json!({"generationConfig": {"temperature": 0.2}}),
            Provider::Anthropic => json!({"metadata": {"user_id": "u1"}}),
            Provider::Ollama => json!({"keep_alive": "5m"}),
            _ => json!({"temperature": 0.2}),
        };
        if p == Provider::Gemini {
            conv.as_object_mut().unwrap().remove("max_tokens");
        }
        let file = dir.join(format!("{}.json", p.name()));
        std::fs::write(&file, conv.to_string()).unwrap();
        let out = Command::new(replay_bin())
            .args(["--request", p.name()])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 1);
        let v: Value = serde_json::from_str(&text).unwrap();
        // The MCP tool under the name the provider takes; the choice names it so.
        let want = if p == Provider::Gemini {
            "fs.read"
        } else {
            "fs_read"
        };
        assert!(text.contains(&format!(r#""name":"{want}""#)), "{text}");
        assert!(!text.contains("\"title\""), "{text}");
        lines.push(json!({"provider": p.name(), "body": v}));
    }
    check_with_sdks(&lines);
    // A refusal: Ollama has no tool choice.
    let out = Command::new(replay_bin())
        .args(["--request", "ollama"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the provider has no tool choice"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fuzz target's checks (tests/fuzz `request`) on 3,000 random inputs: a careless host and
/// model never make the conversation panic, exceed its memory or orphan a call.
#[test]
fn a_careless_host_never_orphans_a_call() {
    let mut rng = Rng::new(0x5eed_0011);
    for _ in 0..3000 {
        let n = rng.in_1_to(400);
        let data: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        request_hostile::run(&data);
    }
}

/// What each provider's SDK keeps from the same body (tests/sdk/next_turn.py), one object per
/// recording it reads.
fn sdk_next_turns() -> Option<Vec<Value>> {
    let python = sdk_python()?;
    let out = Command::new(python)
        .arg(workspace_root().join("tests/sdk/next_turn.py"))
        .arg("--all")
        .output()
        .expect("run next_turn.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

/// The assistant turn of a body written for the recording's own provider, in the SDK's terms:
/// its text, its calls (id, name, args as parsed JSON), and its provider state.
fn written_turn(p: Provider, body: &Value) -> (String, Vec<Value>, Vec<Value>) {
    let parse = |s: &Value| -> Value {
        s.as_str()
            .map(|t| serde_json::from_str(t).unwrap_or_else(|_| json!({"arguments_text": t})))
            .unwrap_or(Value::Null)
    };
    let (mut text, mut calls, mut state) = (String::new(), Vec::new(), Vec::new());
    match p {
        Provider::OpenAiChat | Provider::Ollama => {
            let m = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "assistant")
                .unwrap();
            text = m["content"].as_str().unwrap_or_default().to_owned();
            for c in m["tool_calls"].as_array().into_iter().flatten() {
                let args = match p {
                    Provider::Ollama => c["function"]["arguments"].clone(),
                    _ => parse(&c["function"]["arguments"]),
                };
                calls
                    .push(json!({"id": c["id"], "name": c["function"]["name"], "arguments": args}));
            }
        }
        Provider::OpenAiResponses => {
            for it in body["input"].as_array().unwrap() {
                match (it["type"].as_str(), it["role"].as_str()) {
                    (Some("reasoning"), _) => state.push(it.clone()),
                    (Some("function_call"), _) => calls.push(json!({"id": it["call_id"], "name": it["name"], "arguments": parse(&it["arguments"])})),
                    (_, Some("assistant")) => text.push_str(it["content"].as_str().unwrap()),
                    _ => {}
                }
            }
        }
        Provider::Anthropic => {
            let m = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "assistant")
                .unwrap();
            for b in m["content"].as_array().unwrap() {
                match b["type"].as_str().unwrap() {
                    "text" => text.push_str(b["text"].as_str().unwrap()),
                    "tool_use" => calls
                        .push(json!({"id": b["id"], "name": b["name"], "arguments": b["input"]})),
                    _ => state.push(b.clone()),
                }
            }
        }
        _ => {
            let m = body["contents"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "model")
                .unwrap();
            for part in m["parts"].as_array().unwrap() {
                if let Some(c) = part.get("functionCall") {
                    calls.push(json!({"id": c.get("id").cloned().unwrap_or(Value::Null), "name": c["name"], "arguments": c["args"]}));
                } else if part.get("thought") != Some(&json!(true)) {
                    text.push_str(part["text"].as_str().unwrap_or_default());
                }
                if let Some(sig) = part.get("thoughtSignature") {
                    state.push(json!({"thoughtSignature": sig, "part": part}));
                }
            }
        }
    }
    (text, calls, state)
}

/// SPEC §10.4: each assistant turn written back carries what the provider's SDK keeps from
/// the same body: the text, every call's id, name and args in order, and the provider's
/// state (Responses reasoning items as they are, Anthropic thinking with its signature and
/// redacted thinking with its data, every Gemini thoughtSignature on the part it came on).
#[test]
fn an_assistant_turn_carries_what_the_sdk_keeps() {
    let Some(turns) = sdk_next_turns() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the SDK environment"
        );
        println!("skipped: no SDK environment");
        return;
    };
    let recs = recordings();
    let mut compared = 0;
    for t in turns.iter().filter(|t| t.get("skipped").is_none()) {
        let name = format!(
            "{}/{}",
            t["provider"].as_str().unwrap(),
            t["name"].as_str().unwrap()
        );
        let r = recs
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        let frames = decode(r.provider, &r.body, || usize::MAX).frames;
        let mut mem = vec![0u8; 1 << 20];
        let c = conversation(&mut mem, r, &frames);
        let opts = RequestOptions::new("m");
        let body: Value = serde_json::from_slice(&body_of(
            &mut Request::new(&c, r.provider, &opts, &[]).unwrap(),
            4096,
        ))
        .unwrap();
        let (text, calls, state) = written_turn(r.provider, &body);
        assert_eq!(text, t["text"].as_str().unwrap(), "{name}: text");
        let want_calls: Vec<Value> = t["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let args = match (c.get("arguments"), r.provider) {
                    (Some(a), _) => a.clone(),
                    // Broken args go back as the text the model wrote where args are a
                    // string, and as `{}` where they are an object (SPEC §8).
                    (None, Provider::OpenAiChat | Provider::OpenAiResponses) => {
                        json!({"arguments_text": c["arguments_text"]})
                    }
                    (None, _) => json!({}),
                };
                json!({"id": c["id"], "name": c["name"], "arguments": args})
            })
            .collect();
        assert_eq!(calls, want_calls, "{name}: calls");
        let want_state: Vec<Value> = match r.provider {
            Provider::OpenAiResponses => t["reasoning"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i.get("encrypted_content").is_some_and(|e| !e.is_null()))
                .cloned()
                .collect(),
            Provider::Anthropic => t["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
                .cloned()
                .collect(),
            Provider::Gemini => t["signatures"].as_array().unwrap().clone(),
            _ => vec![],
        };
        assert_eq!(state.len(), want_state.len(), "{name}: state {state:?}");
        for (got, want) in state.iter().zip(&want_state) {
            if r.provider == Provider::Gemini {
                // google-genai holds a signature as bytes and writes it back in the URL-safe
                // base64 alphabet: the same bytes as the one given back as it came.
                let std_alphabet =
                    |v: &Value| v.as_str().unwrap().replace('-', "+").replace('_', "/");
                assert_eq!(
                    std_alphabet(&got["thoughtSignature"]),
                    std_alphabet(&want["thoughtSignature"]),
                    "{name}"
                );
                let (g, w) = (&got["part"], &want["part"]);
                match w.get("functionCall") {
                    Some(fc) => assert_eq!(g["functionCall"]["name"], fc["name"], "{name}"),
                    None => assert_eq!(g["text"], w["text"], "{name}"),
                }
            } else {
                assert_eq!(strip_nulls(got), strip_nulls(want), "{name}: state");
            }
        }
        compared += 1;
    }
    assert!(compared >= 60, "{compared} recordings compared");
}

/// Absent and `null` members alike (SPEC §10.4).
fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// SPEC §10.2 rule 2: each provider's state goes back byte for byte, on the part it came on,
/// and only to its own provider.
#[test]
fn state_goes_back_to_its_own_provider_only() {
    let opts = RequestOptions::new("m");
    let mut mem = [0u8; 4096];
    let mut c = Conversation::new(&mut mem);
    c.push_user("go").unwrap();
    c.begin_response(Provider::Anthropic).unwrap();
    for f in [
        r#"{"type":"REASONING","content":"Let me "}"#,
        r#"{"type":"REASONING","content":"think."}"#,
        r#"{"type":"STATE","content":{"signature":"SIG1"}}"#,
        r#"{"type":"STATE","content":{"redacted_thinking":"DATA"}}"#,
        r#"{"type":"TEXT","content":"ok"}"#,
        r#"{"type":"TOOL_CALL","content":{"id":"toolu_1","name":"get","args":{}}}"#,
        r#"{"type":"STATE","content":{"thoughtSignature":"NOT-MINE"}}"#,
        r#"{"type":"END","content":{"reason":"tool_use"}}"#,
        r#"{"type":"TOOL_RESULT","content":{"id":"toolu_1","name":"get","result":"x"}}"#,
    ] {
        c.push_frame(f.as_bytes()).unwrap();
    }
    assert_eq!(
        body(&c, Provider::Anthropic, &opts, &[]),
        r#"{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"thinking","thinking":"Let me think.","signature":"SIG1"},{"type":"redacted_thinking","data":"DATA"},{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"get","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}],"stream":true}"#
    );
    // The same turn to Gemini: text and call, no Anthropic state.
    assert_eq!(
        body(&c, Provider::Gemini, &opts, &[]),
        r#"{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"text":"ok"},{"functionCall":{"id":"toolu_1","name":"get","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"id":"toolu_1","name":"get","response":{"output":"x"}}}]}]}"#
    );

    let mut mem = [0u8; 4096];
    let mut c = Conversation::new(&mut mem);
    c.push_user("go").unwrap();
    c.begin_response(Provider::Gemini).unwrap();
    for f in [
        r#"{"type":"STATE","content":{"thoughtSignature":"S1"}}"#,
        r#"{"type":"TEXT","content":"a"}"#,
        r#"{"type":"TEXT","content":"b"}"#,
        r#"{"type":"TEXT","content":"c"}"#,
        r#"{"type":"STATE","content":{"thoughtSignature":"S2","text":""}}"#,
        r#"{"type":"STATE","content":{"thoughtSignature":"S3"}}"#,
        r#"{"type":"REASONING","content":"hm"}"#,
        r#"{"type":"REASONING","content":"unsigned thought"}"#,
        r#"{"type":"STATE","content":{"thoughtSignature":"S4"}}"#,
        r#"{"type":"TOOL_CALL","content":{"name":"get","args":{"q":1}}}"#,
        r#"{"type":"TOOL_RESULT","content":{"name":"get","result":{"v":2}}}"#,
    ] {
        c.push_frame(f.as_bytes()).unwrap();
    }
    assert_eq!(
        body(&c, Provider::Gemini, &opts, &[]),
        r#"{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"text":"a","thoughtSignature":"S1"},{"text":"bc"},{"text":"","thoughtSignature":"S2"},{"text":"hm","thought":true,"thoughtSignature":"S3"},{"functionCall":{"name":"get","args":{"q":1}},"thoughtSignature":"S4"}]},{"role":"user","parts":[{"functionResponse":{"name":"get","response":{"output":{"v":2}}}}]}]}"#
    );
    // To OpenAI: the texts and the call under an id it takes; no signatures.
    assert_eq!(
        body(&c, Provider::OpenAiChat, &opts, &[]),
        r#"{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"abc","tool_calls":[{"id":"pwcall_0","type":"function","function":{"name":"get","arguments":"{\"q\":1}"}}]},{"role":"tool","tool_call_id":"pwcall_0","content":"{\"v\":2}"}],"stream":true,"stream_options":{"include_usage":true}}"#
    );

    let mut mem = [0u8; 4096];
    let mut c = Conversation::new(&mut mem);
    c.push_user("go").unwrap();
    c.begin_response(Provider::OpenAiResponses).unwrap();
    for f in [
        r#"{"type":"STATE","content":{"reasoning":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"E1"}}}"#,
        r#"{"type":"STATE","content":{"reasoning":{"id":"rs_2","type":"reasoning","summary":[]}}}"#,
        r#"{"type":"TOOL_CALL","content":{"id":"call_1","name":"get","args":{}}}"#,
        // The terminal event's copy of rs_1 stands, where rs_1 was.
        r#"{"type":"STATE","content":{"reasoning":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"E1b"}}}"#,
        r#"{"type":"TOOL_RESULT","content":{"id":"call_1","name":"get","result":1}}"#,
    ] {
        c.push_frame(f.as_bytes()).unwrap();
    }
    assert_eq!(
        body(&c, Provider::OpenAiResponses, &opts, &[]),
        r#"{"model":"m","input":[{"role":"user","content":"go"},{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"E1b"},{"type":"function_call","call_id":"call_1","name":"get","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"1"}],"stream":true,"store":false,"include":["reasoning.encrypted_content"]}"#
    );
}

/// SPEC §10.2 rule 3: short of room, the state of older exchanges goes first, then whole
/// entries oldest first, until what is kept starts with a user text; the latest exchange
/// and a pinned first user text stay; an entry that cannot fit is refused, nothing changed.
#[test]
fn eviction_order() {
    let exchange = |c: &mut Conversation<'_>, k: usize| {
        c.push_user(&format!("q{k}")).unwrap();
        c.begin_response(Provider::Anthropic).unwrap();
        for f in [
            format!(
                r#"{{"type":"REASONING","content":"thinking {k} {}"}}"#,
                "x".repeat(40)
            ),
            format!(
                r#"{{"type":"STATE","content":{{"signature":"SIG{k}{}"}}}}"#,
                "s".repeat(40)
            ),
            format!(r#"{{"type":"TOOL_CALL","content":{{"id":"t{k}","name":"get","args":{{}}}}}}"#),
            format!(
                r#"{{"type":"TOOL_RESULT","content":{{"id":"t{k}","name":"get","result":{k}}}}}"#
            ),
        ] {
            c.push_frame(f.as_bytes()).unwrap();
        }
        c.end_response();
    };
    let opts = RequestOptions::new("m");
    // Room for four exchanges but 50 bytes: the fourth needs one exchange's state (a thought
    // part of over 100 bytes) to go.
    let cap = {
        let mut big = [0u8; 4096];
        let mut c = Conversation::new(&mut big);
        c.set_system("sys").unwrap();
        for k in 0..4 {
            exchange(&mut c, k);
        }
        c.used() - 50
    };
    let mut mem = vec![0u8; cap];
    let mut c = Conversation::new(&mut mem);
    c.pin_first_user(true);
    c.set_system("sys").unwrap();
    for k in 0..3 {
        exchange(&mut c, k);
    }
    let full = body(&c, Provider::Anthropic, &opts, &[]);
    assert!(
        full.contains("SIG0") && full.contains("SIG1") && full.contains("SIG2"),
        "{full}"
    );
    // A fourth exchange: the state of the oldest exchanges goes first.
    exchange(&mut c, 3);
    let b = body(&c, Provider::Anthropic, &opts, &[]);
    assert!(!b.contains("SIG0") && b.contains("SIG3"), "{b}");
    assert_eq!(c.evicted(), 0, "{b}");
    // More: whole exchanges go, oldest first; q0 stays pinned; every call keeps its result.
    for k in 4..9 {
        exchange(&mut c, k);
    }
    let b = body(&c, Provider::Anthropic, &opts, &[]);
    assert!(c.evicted() > 0);
    assert!(
        b.contains(r#""content":"q0""#) || b.contains(r#"{"type":"text","text":"q0"}"#),
        "{b}"
    );
    assert!(b.contains("SIG8") && b.contains(r#""id":"t8""#), "{b}");
    assert!(!b.contains(r#""id":"t1""#), "{b}");
    let v: Value = serde_json::from_str(&b).unwrap();
    assert_paired(Provider::Anthropic, &v);
    assert!(c.used() <= cap);
    // An entry larger than everything that could go: refused, nothing changed.
    let (used, len, evicted) = (c.used(), c.len(), c.evicted());
    assert_eq!(
        c.push_user(&"y".repeat(cap)),
        Err(ConversationError::NoRoom { needed: cap + 5 })
    );
    assert_eq!((c.used(), c.len(), c.evicted()), (used, len, evicted));
    assert_eq!(body(&c, Provider::Anthropic, &opts, &[]), b);
}

/// SPEC §10.1: the 2,452 BFCL function declarations (tests/data/bfcl/functions.ndjson, each as
/// the MCP `tools/list` entry it would be), declared for every provider in bodies of 100, are
/// accepted by each SDK's tool type; names a provider cannot take (`uber.ride`) are mapped,
/// unique, and map back.
#[test]
fn bfcl_declarations_are_accepted_by_every_provider() {
    use polyweave_tool_adapter::request::{find_declaration, model_name_of, MAX_NAME};
    let text =
        std::fs::read_to_string(workspace_root().join("tests/data/bfcl/functions.ndjson")).unwrap();
    // The k-th declaration of a name goes to the k-th set, so no body declares a name twice.
    let mut sets: Vec<Vec<String>> = Vec::new();
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for line in text.lines() {
        let f: Value = serde_json::from_str(line).unwrap();
        let k = seen
            .entry(f["name"].as_str().unwrap().to_owned())
            .or_insert(0);
        if sets.len() <= *k {
            sets.push(Vec::new());
        }
        sets[*k].push(
            json!({"name": f["name"], "description": f["description"], "inputSchema": f["input_schema"]})
                .to_string(),
        );
        *k += 1;
    }
    assert_eq!(sets.iter().map(Vec::len).sum::<usize>(), 2452);
    let mut mem = [0u8; 256];
    let mut c = Conversation::new(&mut mem);
    c.push_user("hi").unwrap();
    let mut lines = Vec::new();
    let mut mapped = 0;
    for group in sets.iter().flat_map(|set| set.chunks(100)) {
        let decls: Vec<Declaration<'_>> = group
            .iter()
            .map(|e| Declaration::from_mcp(e.as_bytes()).unwrap())
            .collect();
        for &p in Provider::ALL {
            let opts = RequestOptions::new("m");
            let mut req =
                Request::new(&c, p, &opts, &decls).unwrap_or_else(|e| panic!("{}: {e}", p.name()));
            let v: Value = serde_json::from_slice(&body_of(&mut req, 1 << 16)).unwrap();
            for (i, e) in group.iter().enumerate() {
                let mut buf = [0u8; MAX_NAME];
                let name = model_name_of(p, &decls, i, &mut buf).to_vec();
                let original: Value = serde_json::from_str(e).unwrap();
                if name != original["name"].as_str().unwrap().as_bytes() {
                    mapped += 1;
                }
                assert_eq!(find_declaration(p, &decls, &name), Some(i));
                assert_eq!(
                    find_declaration(p, &decls, original["name"].as_str().unwrap().as_bytes()),
                    Some(i)
                );
            }
            lines.push(json!({"provider": p.name(), "body": v}));
        }
    }
    assert!(mapped > 100, "{mapped} names mapped");
    check_with_sdks(&lines);
}

/// SPEC §10.1's rules, exactly: strict written only when the schema meets it and refused
/// otherwise; a host name a provider cannot take refused; MCP names mapped close to the
/// original, long ones cut with a hash, clashes made unique; `$schema` left out for Gemini
/// only; `"properties":{}` added to an object schema without it.
#[test]
fn declaration_rules() {
    use polyweave_tool_adapter::request::{model_name_of, DeclarationError, MAX_NAME};
    let mut mem = [0u8; 256];
    let mut c = Conversation::new(&mut mem);
    c.push_user("hi").unwrap();
    let opts = RequestOptions::new("m");
    let strict_ok: &[u8] = br#"{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"],"additionalProperties":false}},"required":["a"],"additionalProperties":false}"#;
    let not_closed: &[u8] = br#"{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}},"required":["a"],"additionalProperties":false}"#;
    let not_required: &[u8] = br#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}"#;
    let d = [Declaration::new("f", Some(strict_ok)).strict(true)];
    let b = body(&c, Provider::OpenAiChat, &opts, &d);
    assert!(
        b.contains(r#""additionalProperties":false},"strict":true}}]"#),
        "{b}"
    );
    let b = body(&c, Provider::Anthropic, &opts, &d);
    assert!(
        b.contains(r#""additionalProperties":false},"strict":true}]"#),
        "{b}"
    );
    let b = body(&c, Provider::OpenAiResponses, &opts, &d);
    assert!(b.contains(r#""strict":true}]"#), "{b}");
    // Gemini and Ollama have no strict flag: nothing written, nothing refused.
    assert!(!body(
        &c,
        Provider::Gemini,
        &opts,
        &[Declaration::new("f", Some(not_closed)).strict(true)]
    )
    .contains("strict"));
    for schema in [not_closed, not_required] {
        let d = [
            Declaration::new("ok", None),
            Declaration::new("f", Some(schema)).strict(true),
        ];
        for p in [
            Provider::OpenAiChat,
            Provider::OpenAiResponses,
            Provider::Anthropic,
        ] {
            assert_eq!(
                Request::new(&c, p, &opts, &d).err(),
                Some(RequestError::Declaration(DeclarationError::NotStrict(1)))
            );
        }
    }
    let bad = [Declaration::new("fs.read", None)];
    assert_eq!(
        Request::new(&c, Provider::OpenAiChat, &opts, &bad).err(),
        Some(RequestError::Declaration(DeclarationError::BadName(0)))
    );
    // Gemini takes dots: the same host name is fine there.
    assert!(Request::new(&c, Provider::Gemini, &opts, &bad).is_ok());
    let dup = [Declaration::new("a", None), Declaration::new("a", None)];
    assert_eq!(
        Request::new(&c, Provider::Anthropic, &opts, &dup).err(),
        Some(RequestError::Declaration(DeclarationError::DuplicateName(
            1
        )))
    );
    assert_eq!(
        Declaration::from_mcp(br#"{"description":"x"}"#).err(),
        Some(DeclarationError::BadEntry)
    );
    // MCP names.
    let long = format!(r#"{{"name":"{}"}}"#, "n.".repeat(50));
    let mcp = [
        Declaration::from_mcp(br#"{"name":"fs.read","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}}"#).unwrap(),
        Declaration::from_mcp(long.as_bytes()).unwrap(),
        Declaration::new("fs_write", None),
        Declaration::from_mcp(br#"{"name":"fs.write"}"#).unwrap(),
    ];
    let mut buf = [0u8; MAX_NAME];
    let name = |p, i, buf: &mut [u8; MAX_NAME]| {
        String::from_utf8(model_name_of(p, &mcp, i, buf).to_vec()).unwrap()
    };
    assert_eq!(name(Provider::OpenAiChat, 0, &mut buf), "fs_read");
    assert_eq!(name(Provider::Gemini, 0, &mut buf), "fs.read");
    let cut = name(Provider::OpenAiChat, 1, &mut buf);
    assert_eq!(cut.len(), 64);
    assert!(cut.starts_with(&"n_".repeat(27)), "{cut}");
    assert_eq!(
        name(Provider::OpenAiChat, 1, &mut buf),
        cut,
        "deterministic"
    );
    // `fs.write` would be `fs_write`, which the host's tool is: it gets the hash too.
    let w = name(Provider::OpenAiChat, 3, &mut buf);
    assert!(w.starts_with("fs_write_") && w.len() == 17, "{w}");
    let b = body(&c, Provider::OpenAiChat, &opts, &mcp);
    assert!(b.contains(r#"{"name":"fs_read","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{}}}"#), "{b}");
    let g = body(&c, Provider::Gemini, &opts, &mcp);
    assert!(
        g.contains(
            r#"{"name":"fs.read","parametersJsonSchema":{"type":"object","properties":{}}}"#
        ),
        "{g}"
    );
    assert!(
        g.contains(
            r#"{"name":"fs_write","parametersJsonSchema":{"type":"object","properties":{}}}"#
        ),
        "{g}"
    );
}

/// core/DESIGN.md's overheads, exactly: an entry 5 bytes beside its text, a turn 6, a text
/// part 13, a call 38 beside its id, name, args and result (as stored: compact, escaped), whatever those are.
#[test]
fn the_conversation_overhead_is_as_stated() {
    let mut mem = [0u8; 2048];
    let mut c = Conversation::new(&mut mem);
    c.push_user("go \"now\"").unwrap();
    assert_eq!(c.used(), 5 + r#"go \"now\""#.len());
    let before = c.used();
    c.begin_response(Provider::OpenAiChat).unwrap();
    c.push_frame(
        br#"{"type":"TOOL_CALL","content":{"id":"call_1","name":"add","args":{ "a" : 2, "b":[3] }}}"#,
    )
    .unwrap();
    c.push_frame(br#"{"type":"TOOL_CALL","content":{"name":"sub","args":{}}}"#)
        .unwrap();
    c.end_response();
    let calls = [("call_1", "add", r#"{"a":2,"b":[3]}"#), ("", "sub", "{}")];
    let own: usize = calls
        .iter()
        .map(|(i, n, a)| i.len() + n.len() + a.len())
        .sum();
    assert_eq!(c.used() - before, 6 + 2 * 38 + own);
    let before = c.used();
    c.push_frame(
        br#"{"type":"TOOL_RESULT","content":{"id":"call_1","name":"add","result":{"sum" : 5}}}"#,
    )
    .unwrap();
    assert_eq!(
        c.used() - before,
        r#"{"sum":5}"#.len(),
        "a result adds only its bytes"
    );
    let before = c.used();
    c.begin_response(Provider::OpenAiChat).unwrap();
    c.push_frame(br#"{"type":"TEXT","content":"a\tb"}"#)
        .unwrap();
    c.end_response();
    assert_eq!(
        c.used() - before,
        6 + 13 + r#"a\tb"#.len(),
        "a turn with one text part"
    );
}

/// A schema goes out compact whatever its spacing, with `"properties":{}` added where an
/// object schema lacks it and (Gemini) `$schema` left out: the same whether the writer copies
/// it (compact, nothing to change) or walks it, for the first 64 declarations and after.
#[test]
fn schemas_go_out_compact_whatever_their_spacing() {
    let mut mem = [0u8; 256];
    let mut c = Conversation::new(&mut mem);
    c.push_user("go").unwrap();
    let opts = RequestOptions::new("m");
    let cases: [(&[u8], &str, &str); 5] = [
        (
            br#"{"type":"object","properties":{"a":{"type":"string","description":"an a"}}}"#,
            r#"{"type":"object","properties":{"a":{"type":"string","description":"an a"}}}"#,
            r#"{"type":"object","properties":{"a":{"type":"string","description":"an a"}}}"#,
        ),
        (
            b" {\"type\" : \"object\",\n \"properties\": {\"a\": {\"type\": \"string\"}}}\t",
            r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
            r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
        ),
        (
            br#" {"type":"object","properties":{}}"#,
            r#"{"type":"object","properties":{}}"#,
            r#"{"type":"object","properties":{}}"#,
        ),
        (
            br#"{"type":"object"}"#,
            r#"{"type":"object","properties":{}}"#,
            r#"{"type":"object","properties":{}}"#,
        ),
        (
            br#"{"$schema":"x","type":"object","properties":{}}"#,
            r#"{"$schema":"x","type":"object","properties":{}}"#,
            r#"{"type":"object","properties":{}}"#,
        ),
    ];
    for first in [0usize, 64] {
        let names: Vec<String> = (0..first + cases.len()).map(|i| format!("f{i}")).collect();
        let decls: Vec<Declaration<'_>> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let schema = cases
                    .get(i.wrapping_sub(first))
                    .map_or(&br#"{"type":"object","properties":{}}"#[..], |c| c.0);
                Declaration::new(n, Some(schema))
            })
            .collect();
        for (p, pick) in [
            (Provider::OpenAiChat, 1),
            (Provider::Anthropic, 1),
            (Provider::Gemini, 2),
        ] {
            let b = body(&c, p, &opts, &decls);
            for (k, case) in cases.iter().enumerate() {
                let want = if pick == 1 { case.1 } else { case.2 };
                let key = match p {
                    Provider::OpenAiChat => "parameters",
                    Provider::Anthropic => "input_schema",
                    _ => "parametersJsonSchema",
                };
                let member = format!(r#""name":"f{}","{key}":{want}"#, first + k);
                assert!(
                    b.contains(&member),
                    "{p:?} case {k} after {first}: {member} in {b}"
                );
            }
        }
    }
}
