//! Item encoders (SPEC §8's table) and the replay program's `--decode` and `--encode`:
//! exact items per provider, refusals that write nothing, and every item of every
//! recorded call (and of results and errors for it) accepted by the provider SDK's own
//! request type, in the virtual environment `tests/run.sh` installs.

use std::path::PathBuf;
use std::process::Command;

use polyweave_tests::library::{replay_bin, sdk_python, workspace_root};
use polyweave_tests::streams::{decode, recordings};
use polyweave_tool_adapter::encode::{encode_item, ItemError};
use polyweave_tool_adapter::frame::FrameError;
use polyweave_tool_adapter::Provider;
use serde_json::Value;

fn item(provider: Provider, frame: &str) -> Result<String, ItemError> {
    let mut out = [0u8; 1024];
    let n = encode_item(provider, frame.as_bytes(), &mut out)?;
    Ok(String::from_utf8(out[..n].to_vec()).unwrap())
}

const CALL: &str = r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"get","args":{"q":[1, 2]}}}"#;
const RESULT: &str =
    r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"get","result":{"t":"5\u00b0"}}}"#;
const TEXT_RESULT: &str =
    r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"get","result":"sunny \"out\""}}"#;
const ERROR: &str =
    r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"get","error":"Tool get failed"}}"#;
const BROKEN: &str = r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"get","args":"{\"q\":","args_error":"Tool get arguments are incomplete"}}"#;

#[test]
fn each_provider_writes_its_row_of_the_table() {
    let rows: [(Provider, [&str; 5]); 5] = [
        (
            Provider::OpenAiChat,
            [
                r#"{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"q\":[1,2]}"}}"#,
                r#"{"role":"tool","tool_call_id":"c1","content":"{\"t\":\"5\\u00b0\"}"}"#,
                r#"{"role":"tool","tool_call_id":"c1","content":"sunny \"out\""}"#,
                r#"{"role":"tool","tool_call_id":"c1","content":"Tool get failed"}"#,
                r#"{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"q\":"}}"#,
            ],
        ),
        (
            Provider::OpenAiResponses,
            [
                r#"{"type":"function_call","call_id":"c1","name":"get","arguments":"{\"q\":[1,2]}"}"#,
                r#"{"type":"function_call_output","call_id":"c1","output":"{\"t\":\"5\\u00b0\"}"}"#,
                r#"{"type":"function_call_output","call_id":"c1","output":"sunny \"out\""}"#,
                r#"{"type":"function_call_output","call_id":"c1","output":"Tool get failed"}"#,
                r#"{"type":"function_call","call_id":"c1","name":"get","arguments":"{\"q\":"}"#,
            ],
        ),
        (
            Provider::Anthropic,
            [
                r#"{"type":"tool_use","id":"c1","name":"get","input":{"q":[1,2]}}"#,
                r#"{"type":"tool_result","tool_use_id":"c1","content":"{\"t\":\"5\\u00b0\"}"}"#,
                r#"{"type":"tool_result","tool_use_id":"c1","content":"sunny \"out\""}"#,
                r#"{"type":"tool_result","tool_use_id":"c1","content":"Tool get failed","is_error":true}"#,
                r#"{"type":"tool_use","id":"c1","name":"get","input":{}}"#,
            ],
        ),
        (
            Provider::Gemini,
            [
                r#"{"functionCall":{"id":"c1","name":"get","args":{"q":[1,2]}}}"#,
                r#"{"functionResponse":{"id":"c1","name":"get","response":{"output":{"t":"5\u00b0"}}}}"#,
                r#"{"functionResponse":{"id":"c1","name":"get","response":{"output":"sunny \"out\""}}}"#,
                r#"{"functionResponse":{"id":"c1","name":"get","response":{"error":"Tool get failed"}}}"#,
                r#"{"functionCall":{"id":"c1","name":"get","args":{}}}"#,
            ],
        ),
        (
            Provider::Ollama,
            [
                r#"{"id":"c1","function":{"name":"get","arguments":{"q":[1,2]}}}"#,
                r#"{"role":"tool","tool_name":"get","content":"{\"t\":\"5\\u00b0\"}","tool_call_id":"c1"}"#,
                r#"{"role":"tool","tool_name":"get","content":"sunny \"out\"","tool_call_id":"c1"}"#,
                r#"{"role":"tool","tool_name":"get","content":"Tool get failed","tool_call_id":"c1"}"#,
                r#"{"id":"c1","function":{"name":"get","arguments":{}}}"#,
            ],
        ),
    ];
    for (provider, want) in rows {
        for (frame, want) in [CALL, RESULT, TEXT_RESULT, ERROR, BROKEN]
            .into_iter()
            .zip(want)
        {
            assert_eq!(
                item(provider, frame).as_deref(),
                Ok(want),
                "{provider:?} {frame}"
            );
        }
    }
}

/// Arguments the model wrote as some other JSON value than an object: OpenAI's `arguments`
/// carry that JSON (a string quoted, as written), the providers that take an object get `{}`;
/// only a call marked broken gives its text as it is.
#[test]
fn args_that_are_not_an_object_keep_their_json_or_become_an_empty_object() {
    for (args, openai, object) in [
        (r#""hi""#, r#""\"hi\"""#, "{}"),
        ("[1, 2]", r#""[1,2]""#, "{}"),
        ("7", r#""7""#, "{}"),
    ] {
        let call =
            format!(r#"{{"type":"TOOL_CALL","content":{{"id":"c1","name":"f","args":{args}}}}}"#);
        assert_eq!(
            item(Provider::OpenAiChat, &call).unwrap(),
            format!(
                r#"{{"id":"c1","type":"function","function":{{"name":"f","arguments":{openai}}}}}"#
            )
        );
        assert_eq!(
            item(Provider::Anthropic, &call).unwrap(),
            format!(r#"{{"type":"tool_use","id":"c1","name":"f","input":{object}}}"#)
        );
    }
    let broken = r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"f","args":"hi","args_error":"Tool f arguments are not valid JSON"}}"#;
    assert_eq!(
        item(Provider::OpenAiResponses, broken).unwrap(),
        r#"{"type":"function_call","call_id":"c1","name":"f","arguments":"hi"}"#
    );
}

#[test]
fn calls_without_an_id_are_matched_by_name_where_the_provider_does() {
    let call = r#"{"type":"TOOL_CALL","content":{"name":"get"}}"#;
    let result = r#"{"type":"TOOL_RESULT","content":{"name":"get","result":1}}"#;
    assert_eq!(
        item(Provider::Gemini, call).unwrap(),
        r#"{"functionCall":{"name":"get","args":{}}}"#
    );
    assert_eq!(
        item(Provider::Gemini, result).unwrap(),
        r#"{"functionResponse":{"name":"get","response":{"output":1}}}"#
    );
    assert_eq!(
        item(Provider::Ollama, result).unwrap(),
        r#"{"role":"tool","tool_name":"get","content":"1"}"#
    );
    for p in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
    ] {
        assert_eq!(item(p, call), Err(ItemError::NoId), "{p:?}");
        assert_eq!(item(p, result), Err(ItemError::NoId), "{p:?}");
    }
}

#[test]
fn refusals_are_distinct_and_write_nothing() {
    for (frame, want) in [
        (
            r#"{"type":"TEXT","content":"x"}"#,
            ItemError::NotACallOrResult,
        ),
        (
            r#"{"type":"TOOL_CALL","content":{"id":"c"}}"#,
            ItemError::NoName,
        ),
        (
            r#"{"type":"TOOL_RESULT","content":{"id":"c","name":"n"}}"#,
            ItemError::NoOutcome,
        ),
    ] {
        let mut out = [7u8; 64];
        assert_eq!(
            encode_item(Provider::OpenAiChat, frame.as_bytes(), &mut out),
            Err(want),
            "{frame}"
        );
        assert_eq!(out, [7; 64]);
    }
    let mut out = [7u8; 64];
    assert!(matches!(
        encode_item(Provider::OpenAiChat, br#"{"type":"TOOL_CALL""#, &mut out),
        Err(ItemError::Malformed(FrameError::Json(_)))
    ));
    assert_eq!(out, [7; 64]);
    let needed = item(Provider::OpenAiChat, CALL).unwrap().len();
    let mut short = vec![7u8; needed - 1];
    assert_eq!(
        encode_item(Provider::OpenAiChat, CALL.as_bytes(), &mut short),
        Err(ItemError::BufferTooSmall { needed })
    );
    assert!(short.iter().all(|&b| b == 7));
}

fn run(args: &[&str]) -> String {
    let out = Command::new(replay_bin())
        .args(args)
        .output()
        .expect("replay runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn body_path(name: &str) -> PathBuf {
    workspace_root().join(format!("tests/data/provider-streams/{name}.body"))
}

#[test]
fn replay_decode_prints_the_decoders_frames_at_any_chunk_size() {
    for r in recordings() {
        let want: String = decode(r.provider, &r.body, || usize::MAX)
            .frames
            .iter()
            .map(|f| format!("{f}\n"))
            .collect();
        let path = body_path(&r.name);
        let path = path.to_str().unwrap();
        for chunk in [None, Some("0"), Some("1"), Some("7")] {
            let mut args = vec!["--decode", r.provider.name()];
            if let Some(n) = chunk {
                args.extend(["--chunk", n]);
            }
            args.push(path);
            assert_eq!(run(&args), want, "{} chunk {chunk:?}", r.name);
        }
    }
}

/// Every item the encoders write for the recorded calls, and for a result, a text result
/// and an error answering each: (provider, kind, item).
fn all_items() -> Vec<(Provider, &'static str, Value)> {
    let scratch = std::env::temp_dir().join(format!("pw-encode-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut out = Vec::new();
    for r in recordings() {
        let calls: Vec<String> = decode(r.provider, &r.body, || usize::MAX)
            .frames
            .into_iter()
            .filter(|f| f.starts_with(r#"{"type":"TOOL_CALL""#))
            .collect();
        let mut lines = String::new();
        let mut kinds = Vec::new();
        for c in &calls {
            let v: Value = serde_json::from_str(c).unwrap();
            let content = &v["content"];
            let (id, name) = (content.get("id").cloned(), content["name"].clone());
            lines += &format!("{c}\n");
            kinds.push("call");
            for outcome in [
                serde_json::json!({"result": {"ok": true, "n": [1, 2.5]}}),
                serde_json::json!({"result": "plain text"}),
                serde_json::json!({"error": "Tool failed: \"quoted\""}),
            ] {
                let mut content = serde_json::json!({"name": name});
                if let Some(id) = &id {
                    content["id"] = id.clone();
                }
                content
                    .as_object_mut()
                    .unwrap()
                    .extend(outcome.as_object().unwrap().clone());
                lines += &format!(
                    "{}\n",
                    serde_json::json!({"type": "TOOL_RESULT", "content": content})
                );
                kinds.push("result");
            }
        }
        // Frames the encoders skip.
        lines += "{\"type\":\"TEXT\",\"content\":\"x\"}\n\n";
        let file = scratch.join(r.name.replace('/', "-") + ".ndjson");
        std::fs::write(&file, &lines).unwrap();
        let printed = run(&["--encode", r.provider.name(), file.to_str().unwrap()]);
        let items: Vec<Value> = printed
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(items.len(), kinds.len(), "{}", r.name);
        if r.provider == Provider::OpenAiChat && !calls.is_empty() {
            let tool_calls: Vec<Value> = items
                .iter()
                .zip(&kinds)
                .filter(|(_, k)| **k == "call")
                .map(|(i, _)| i.clone())
                .collect();
            out.push((
                r.provider,
                "assistant",
                serde_json::json!({"role": "assistant", "tool_calls": tool_calls}),
            ));
        }
        out.extend(
            items
                .into_iter()
                .zip(kinds)
                .map(|(i, k)| (r.provider, k, i)),
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    out
}

#[test]
fn every_item_is_accepted_by_the_providers_own_request_type() {
    let Some(python) = sdk_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the SDK environment (tests/run.sh makes target/sdk-venv)"
        );
        println!("skipped: no SDK environment (bash tests/run.sh makes target/sdk-venv)");
        return;
    };
    let mut cases: Vec<Value> = all_items()
        .into_iter()
        .map(
            |(p, kind, item)| serde_json::json!({"provider": p.name(), "kind": kind, "item": item}),
        )
        .collect();
    let good = cases.len();
    assert!(good > 87 * 4, "{good}");
    // One item per SDK type that its type must refuse: the checker can fail.
    for (p, kind, bad) in [
        (
            "openai-chat",
            "call",
            serde_json::json!({"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}),
        ),
        (
            "openai-chat",
            "result",
            serde_json::json!({"role": "tool", "content": "x"}),
        ),
        (
            "openai-responses",
            "call",
            serde_json::json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}", "input": 1}),
        ),
        (
            "anthropic",
            "result",
            serde_json::json!({"type": "tool_result", "content": "x"}),
        ),
        (
            "gemini",
            "result",
            serde_json::json!({"functionResponse": {"name": "f", "response": "x"}}),
        ),
        (
            "ollama",
            "call",
            serde_json::json!({"function": {"name": "f", "arguments": "x"}}),
        ),
    ] {
        cases.push(serde_json::json!({"provider": p, "kind": kind, "item": bad}));
    }
    let file = std::env::temp_dir().join(format!("pw-items-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let out = Command::new(&python)
        .arg(workspace_root().join("tests/sdk/check_items.py"))
        .arg(&file)
        .output()
        .expect("python runs");
    let _ = std::fs::remove_file(&file);
    let text = String::from_utf8_lossy(&out.stdout);
    let refused: Vec<&str> = text
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    let bad_indices: Vec<String> = (good..good + 6).map(|n| format!("{n}:")).collect();
    assert!(
        text.contains(&format!("checked {} items, 6 refused", good + 6)),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (line, want) in refused.iter().zip(&bad_indices) {
        assert!(
            line.starts_with(want.as_str()),
            "only the planted items are refused: {text}"
        );
    }
}

/// README.md's demo command ("Two commands") runs as written: the recorded OpenAI stream
/// through the decoder, a wrapper with the demo's tools, and the next request's messages, exactly as
/// `tests/data/demo-stream.out.ndjson` holds them (its `--pretty` form prints the same).
#[test]
fn the_readme_demo_runs_as_written() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let command = "cargo run --release -p polyweave-replay -- --pretty --stream openai-chat \\\n  tests/data/provider-streams/openai-chat/openai-python-parse-multiple-pydantic-tools.body";
    assert!(readme.contains(command), "README's demo command changed");
    let body =
        "tests/data/provider-streams/openai-chat/openai-python-parse-multiple-pydantic-tools.body";
    let path = workspace_root().join(body);
    let got = run(&["--stream", "openai-chat", path.to_str().unwrap()]);
    let want = std::fs::read_to_string(workspace_root().join("tests/data/demo-stream.out.ndjson"))
        .unwrap();
    assert_eq!(got, want);
    let pretty = run(&[
        "--pretty",
        "--stream",
        "openai-chat",
        path.to_str().unwrap(),
    ]);
    assert!(
        pretty.contains("from decoder   {\"type\":\"TOOL_CALL\""),
        "{pretty}"
    );
    assert!(pretty.contains("next request (openai-chat, "), "{pretty}");
    assert!(
        pretty.contains("\"tool_call_id\": \"call_DNYTawLBoN8fj3KN6qU9N1Ou\"")
            && pretty.contains(
                "\"content\": \"What is the weather in Edinburgh, and Apple's share price?\""
            ),
        "{pretty}"
    );
}
