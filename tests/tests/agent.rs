//! The agent program (`examples/agent`, SPEC §8, §9, §10 together) against a fake provider
//! of the tests' own (`tests/sdk/fake_provider.py`, on 127.0.0.1) and a tiny MCP server
//! (`tests/mcp/weather_server.py`, whose tools are named with a dot, so the mapped names of
//! SPEC §10.1 are exercised).
//!
//! For each provider, the fake serves a recorded response with tool calls (its tool names
//! rewritten to the name the model sees `weather.now` by), then a final text response; it
//! refuses (HTTP 400) any request whose body the provider SDK's request types or ordering
//! rules refuse (`tests/sdk/check_request.py`), whose path or key header is wrong, or that
//! has no `Content-Length`. Checked: the program's `--json` events (every call answered once
//! with the MCP server's result, the final text), the calls the MCP server got (under its
//! own names), the requests the fake got (two, each accepted), and that the second request
//! carries the first response's calls and their results.
//!
//! The fake runs in the SDK environment (`target/sdk-venv`, made by `tests/run.sh`): without
//! it the cases fail in CI and are skipped with a printed line elsewhere.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use polyweave_tests::library::{cargo_build, profile, sdk_python, target_dir, workspace_root};
use serde_json::{json, Value};

/// The SDK environment's Python, or `None` (after saying so) outside CI.
fn python_or_skip() -> Option<PathBuf> {
    let p = sdk_python();
    if p.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the SDK environment (tests/run.sh makes target/sdk-venv)"
        );
        println!("skipped: no SDK environment (bash tests/run.sh makes target/sdk-venv)");
    }
    p
}

/// `polyweave-agent`, built once per test process for this test's profile.
fn agent_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let (profile, target) = (profile(), target_dir());
        let mut cmd = cargo_build("polyweave-agent", &profile, &target);
        let out = cmd.arg("-q").output().expect("running cargo build");
        assert!(
            out.status.success(),
            "cargo build -p polyweave-agent failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bin = target
            .join(&profile)
            .join(format!("polyweave-agent{}", std::env::consts::EXE_SUFFIX));
        assert!(bin.is_file(), "no polyweave-agent at {}", bin.display());
        bin
    })
}

/// A fresh folder for one case's files.
fn scratch(name: &str) -> PathBuf {
    let dir = target_dir().join("agent-test").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The fake provider, listening; killed when dropped.
struct Fake {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Fake {
    fn start(python: &Path, dir: &Path, config: Value) -> Fake {
        let log = dir.join("requests.ndjson");
        let mut config = config;
        config["log"] = json!(log.to_str().unwrap());
        let path = dir.join("fake.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let mut child = Command::new(python)
            .arg(workspace_root().join("tests/sdk/fake_provider.py"))
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run fake_provider.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = match line.trim().strip_prefix("listening ") {
            Some(p) => p.parse().unwrap(),
            None => {
                let _ = child.kill();
                panic!("the fake provider did not start: {line:?}");
            }
        };
        Fake { child, port, log }
    }

    /// The requests it got: `{path, headers, body, status, errors}`.
    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the agent with `--json` and the weather server (its calls logged in `dir`).
fn run_agent(python: &Path, dir: &Path, provider: &str, url: &str, extra: &[&str]) -> Output {
    Command::new(agent_bin())
        .args([
            "--provider",
            provider,
            "--url",
            url,
            "--model",
            "test-model",
        ])
        .args(["--json", "--prompt", "What is the weather?"])
        .args(extra)
        .env("PW_TEST_KEY", "secret-key")
        .arg("--tool-from-mcp")
        .arg("--")
        .arg(python)
        .arg(workspace_root().join("tests/mcp/weather_server.py"))
        .arg(dir.join("calls.ndjson"))
        .stdin(Stdio::null())
        .output()
        .expect("run polyweave-agent")
}

/// One provider's case.
struct Case {
    provider: &'static str,
    /// The recording served first, under `tests/data/provider-streams/`.
    recording: &'static str,
    /// The recording's tool name, and the name the model sees `weather.now` by.
    rename: (&'static str, &'static str),
    /// Where the agent POSTs (for gemini the base, the fake checks the library's path).
    path: &'static str,
}

const CASES: [Case; 5] = [
    Case {
        provider: "openai-chat",
        recording: "openai-chat/vercel-ai-mistral-tool-call",
        rename: ("weather", "weather_now"),
        path: "/v1/chat/completions",
    },
    Case {
        provider: "anthropic",
        recording: "anthropic/anthropic-sdk-tool-use-response",
        rename: ("get_weather", "weather_now"),
        path: "/v1/messages",
    },
    Case {
        provider: "gemini",
        // Two calls without ids, their arguments streamed (`partialArgs`); gemini takes a
        // dot in a name, so the model sees `weather.now` as it is.
        recording: "gemini/vercel-ai-google-stream-tool-call-arguments",
        rename: ("getWeather", "weather.now"),
        path: "/v1beta",
    },
    Case {
        provider: "openai-responses",
        recording: "openai-responses/vercel-ai-azure-tool-call",
        rename: ("weather", "weather_now"),
        path: "/v1/responses",
    },
    Case {
        provider: "ollama",
        recording: "ollama/ollama-docs-chat-streaming-with-tools",
        rename: ("get_weather", "weather_now"),
        path: "/api/chat",
    },
];

const FINAL: [&str; 2] = ["Sunny, ", "21 °C \"everywhere\"."];

/// A call: its id (when the provider gave one), name and arguments.
#[derive(Clone, Debug, PartialEq)]
struct Call {
    id: Option<String>,
    name: String,
    args: Value,
}

/// What the weather server answers for `args` (its `structuredContent`).
fn weather(args: &Value) -> Value {
    let place = args
        .get("location")
        .or_else(|| args.get("city"))
        .and_then(Value::as_str)
        .unwrap_or("nowhere");
    json!({"place": place, "sky": "sunny", "temp_c": 21})
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The calls of the first response, as the recording's SDK reconstructs them, renamed.
fn expected_calls(case: &Case) -> Vec<Call> {
    let path = workspace_root()
        .join("tests/data/provider-streams")
        .join(format!("{}.expected.json", case.recording));
    let expected = parse(&std::fs::read_to_string(path).unwrap());
    expected["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["name"], case.rename.0);
            Call {
                id: c["id"].as_str().map(str::to_string),
                name: case.rename.1.to_string(),
                args: c["arguments"].clone(),
            }
        })
        .collect()
}

/// The calls and the results (id or name, result value) an assistant turn and its results
/// take in a request body of `provider`.
fn exchange_in(provider: &str, body: &Value) -> (Vec<Call>, Vec<(Option<String>, Value)>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    let s = |v: &Value| v.as_str().map(str::to_string);
    let text_json = |v: &Value| parse(v.as_str().unwrap());
    match provider {
        "openai-chat" | "ollama" => {
            for m in body["messages"].as_array().unwrap() {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    let f = &c["function"];
                    let args = match &f["arguments"] {
                        Value::String(t) => parse(t),
                        v => v.clone(),
                    };
                    let name = s(&f["name"]).unwrap();
                    calls.push(Call {
                        id: s(&c["id"]),
                        name,
                        args,
                    });
                }
                if m["role"] == "tool" {
                    results.push((s(&m["tool_call_id"]), text_json(&m["content"])));
                }
            }
        }
        "anthropic" => {
            for m in body["messages"].as_array().unwrap() {
                for b in m["content"].as_array().into_iter().flatten() {
                    match b["type"].as_str() {
                        Some("tool_use") => calls.push(Call {
                            id: s(&b["id"]),
                            name: s(&b["name"]).unwrap(),
                            args: b["input"].clone(),
                        }),
                        Some("tool_result") => {
                            results.push((s(&b["tool_use_id"]), text_json(&b["content"])))
                        }
                        _ => {}
                    }
                }
            }
        }
        "gemini" => {
            for m in body["contents"].as_array().unwrap() {
                for p in m["parts"].as_array().unwrap() {
                    if let Some(f) = p.get("functionCall") {
                        calls.push(Call {
                            id: s(&f["id"]),
                            name: s(&f["name"]).unwrap(),
                            args: f["args"].clone(),
                        });
                    }
                    if let Some(f) = p.get("functionResponse") {
                        assert_eq!(f["name"], "weather.now", "{f}");
                        results.push((s(&f["id"]), f["response"]["output"].clone()));
                    }
                }
            }
        }
        "openai-responses" => {
            for item in body["input"].as_array().unwrap() {
                match item["type"].as_str() {
                    Some("function_call") => calls.push(Call {
                        id: s(&item["call_id"]),
                        name: s(&item["name"]).unwrap(),
                        args: text_json(&item["arguments"]),
                    }),
                    Some("function_call_output") => {
                        results.push((s(&item["call_id"]), text_json(&item["output"])))
                    }
                    _ => {}
                }
            }
        }
        other => panic!("unknown provider {other}"),
    }
    (calls, results)
}

/// The key header each provider's request must carry.
fn key_header(provider: &str) -> Option<(&'static str, &'static str)> {
    match provider {
        "openai-chat" | "openai-responses" => Some(("authorization", "Bearer secret-key")),
        "anthropic" => Some(("x-api-key", "secret-key")),
        "gemini" => Some(("x-goog-api-key", "secret-key")),
        _ => None,
    }
}

fn run_case(python: &Path, case: &Case) {
    let p = case.provider;
    let dir = scratch(p);
    let recording = workspace_root()
        .join("tests/data/provider-streams")
        .join(format!("{}.body", case.recording));
    let key = (p != "ollama").then_some("secret-key");
    let fake = Fake::start(
        python,
        &dir,
        json!({"provider": p, "model": "test-model", "path": case.path, "key": key,
               "turns": [{"body": recording, "rename": {case.rename.0: case.rename.1}},
                         {"text": FINAL}]}),
    );
    let url = format!("http://127.0.0.1:{}{}", fake.port, case.path);
    let key_args: &[&str] = if p == "ollama" {
        &[]
    } else {
        &["--api-key-env", "PW_TEST_KEY"]
    };
    let out = run_agent(python, &dir, p, &url, key_args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let requests = fake.requests();
    assert!(
        out.status.success(),
        "{p}: {}\n{stdout}\n{stderr}\nrequests: {requests:#?}",
        out.status
    );

    // Every request accepted; two of them.
    for r in &requests {
        assert_eq!(r["status"], 200, "{p}: refused: {}", r["errors"]);
        assert_eq!(r["errors"], json!([]), "{p}");
        if let Some((name, value)) = key_header(p) {
            assert_eq!(r["headers"][name], value, "{p}");
        }
        // The fake read exactly Content-Length bytes and parsed them: the length was right.
        assert!(r["headers"]["content-length"].is_string(), "{p}");
        assert!(r["headers"].get("transfer-encoding").is_none(), "{p}");
    }
    assert_eq!(requests.len(), 2, "{p}: {requests:#?}");

    // The events.
    let events: Vec<Value> = stdout.lines().map(parse).collect();
    let calls = expected_calls(case);
    assert!(!calls.is_empty());
    let mut seen_calls = Vec::new();
    let mut seen_results = Vec::new();
    let mut request_turns = Vec::new();
    for e in &events {
        if let Some(r) = e.get("request") {
            request_turns.push(e["turn"].as_u64().unwrap());
            assert!(r["bytes"].as_u64().unwrap() > 0, "{e}");
        }
        if let Some(f) = e.get("model") {
            if f["type"] == "TOOL_CALL" {
                assert_eq!(e["turn"], 1, "{p}: {e}");
                let c = &f["content"];
                seen_calls.push(Call {
                    id: c["id"].as_str().map(str::to_string),
                    name: c["name"].as_str().unwrap().to_string(),
                    args: c["args"].clone(),
                });
            }
        }
        if let Some(f) = e.get("tool") {
            assert_eq!(e["turn"], 1, "{p}: {e}");
            assert_eq!(f["type"], "TOOL_RESULT", "{p}: {e}");
            seen_results.push(f["content"].clone());
        }
    }
    assert_eq!(request_turns, [1, 2], "{p}");
    assert_eq!(seen_calls, calls, "{p}");
    // Each call answered once, with the server's result, under the model's name and id.
    assert_eq!(seen_results.len(), calls.len(), "{p}: {seen_results:?}");
    for c in &calls {
        let mine: Vec<_> = seen_results
            .iter()
            .filter(|r| match &c.id {
                Some(id) => r["id"] == json!(id),
                None => r.get("id").is_none() && r["result"] == weather(&c.args),
            })
            .collect();
        assert_eq!(mine.len(), 1, "{p}: {c:?} in {seen_results:?}");
        assert_eq!(mine[0]["name"], json!(c.name), "{p}");
        assert_eq!(mine[0]["result"], weather(&c.args), "{p}");
    }
    let done = events.last().unwrap();
    assert_eq!(
        done,
        &json!({"done": {"turns": 2, "stop": "answer", "text": FINAL.concat()}}),
        "{p}"
    );

    // The server was called by its own names.
    let served: Vec<Value> = std::fs::read_to_string(dir.join("calls.ndjson"))
        .unwrap()
        .lines()
        .map(parse)
        .collect();
    let want: Vec<Value> = calls
        .iter()
        .map(|c| json!({"name": "weather.now", "arguments": c.args}))
        .collect();
    assert_eq!(served, want, "{p}");

    // The first request declares the tools under the names the model sees; the second
    // carries the first response's calls and their results, in call order.
    let first = requests[0]["body"].to_string();
    assert!(
        first.contains(&format!("\"{}\"", case.rename.1)),
        "{p}: {first}"
    );
    assert_eq!(
        exchange_in(p, &requests[0]["body"]),
        (vec![], vec![]),
        "{p}"
    );
    let (calls2, results2) = exchange_in(p, &requests[1]["body"]);
    let want_results: Vec<_> = calls
        .iter()
        .map(|c| (c.id.clone(), weather(&c.args)))
        .collect();
    assert_eq!(calls2, calls, "{p}");
    assert_eq!(results2, want_results, "{p}");
}

#[test]
fn every_provider_round_trips_a_tool_call_through_the_mcp_server() {
    let Some(python) = python_or_skip() else {
        return;
    };
    agent_bin();
    // The cases run at once: each waits mostly for its fake's SDK imports.
    let failed: Vec<&str> = std::thread::scope(|s| {
        let runs: Vec<_> = CASES
            .iter()
            .map(|case| (case.provider, s.spawn(|| run_case(&python, case))))
            .collect();
        runs.into_iter()
            .filter_map(|(p, run)| run.join().is_err().then_some(p))
            .collect()
    });
    assert!(failed.is_empty(), "failed (see above): {failed:?}");
}

/// A request the fake refuses ends the run: exit 1, the reason logged. The checks can fail:
/// an OpenAI body sent to an Anthropic endpoint breaks its request type, and a wrong key
/// header is refused before the body is read.
#[test]
fn a_refused_request_ends_the_run_with_the_reason() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = scratch("refused");
    let fake = Fake::start(
        &python,
        &dir,
        json!({"provider": "anthropic", "model": "test-model", "path": "/v1/messages",
               "key": "other-key", "turns": [{"text": FINAL}]}),
    );
    let url = format!("http://127.0.0.1:{}/v1/messages", fake.port);
    let out = run_agent(
        &python,
        &dir,
        "openai-chat",
        &url,
        &["--api-key-env", "PW_TEST_KEY"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("HTTP 400: header x-api-key: None"),
        "{stderr}"
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["status"], 400);
    let errors: Vec<&str> = requests[0]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("type MessageCreateParamsStreaming")),
        "{errors:?}"
    );
    assert!(errors.contains(&"header x-api-key: None"), "{errors:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        1,
        "only the request event"
    );
}

/// Without an MCP server the model's text still comes through: one request, its answer.
#[test]
fn without_a_server_the_answer_comes_through() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = scratch("no-server");
    let fake = Fake::start(
        &python,
        &dir,
        json!({"provider": "ollama", "model": "test-model", "path": "/api/chat",
               "key": null, "turns": [{"text": FINAL}]}),
    );
    let url = format!("http://127.0.0.1:{}/api/chat", fake.port);
    let out = Command::new(agent_bin())
        .args([
            "--provider",
            "ollama",
            "--url",
            &url,
            "--model",
            "test-model",
        ])
        .args(["--json", "--system", "Be brief."])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"Hello?\n")?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(parse)
        .collect();
    assert_eq!(
        events.last().unwrap(),
        &json!({"done": {"turns": 1, "stop": "answer", "text": FINAL.concat()}})
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0]["body"],
        json!({"model": "test-model", "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hello?"}], "stream": true})
    );
}

/// The readable output: the turns as they go, exact lines.
#[test]
fn the_readable_output_shows_text_calls_and_results() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = scratch("readable");
    let case = &CASES[0];
    let recording = workspace_root()
        .join("tests/data/provider-streams")
        .join(format!("{}.body", case.recording));
    let fake = Fake::start(
        &python,
        &dir,
        json!({"provider": "openai-chat", "model": "test-model", "path": case.path,
               "key": null, "turns": [{"body": recording, "rename": {"weather": "weather_now"}},
                                      {"text": FINAL}]}),
    );
    let url = format!("http://127.0.0.1:{}{}", fake.port, case.path);
    let out = Command::new(agent_bin())
        .args([
            "--provider",
            "openai-chat",
            "--url",
            &url,
            "--model",
            "test-model",
        ])
        .args(["--prompt", "What is the weather?", "--tool-from-mcp"])
        .arg(&python)
        .arg(workspace_root().join("tests/mcp/weather_server.py"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let len = |i: usize| {
        requests[i]["headers"]["content-length"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("polyweave-agent: tool weather.now is declared as weather_now\n"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "── request 1: POST {url} ({} bytes)\n\
             call weather_now [gSIMJiOkT] {{\"location\":\"San Francisco\"}}\n\
             ── end: tool_calls\n\
             result weather_now: {{\"place\":\"San Francisco\",\"sky\":\"sunny\",\"temp_c\":21}}\n\
             ── request 2: POST {url} ({} bytes)\n\
             assistant: Sunny, 21 °C \"everywhere\".\n\
             ── end: stop\n\
             ── done after 2 requests: the model answered\n",
            len(0),
            len(1)
        )
    );
}

/// `--max-turns` ends the run after that many requests, the last one's calls answered.
#[test]
fn max_turns_ends_the_run() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = scratch("max-turns");
    let case = &CASES[4];
    let recording = workspace_root()
        .join("tests/data/provider-streams")
        .join(format!("{}.body", case.recording));
    let fake = Fake::start(
        &python,
        &dir,
        json!({"provider": "ollama", "model": "test-model", "path": case.path, "key": null,
               "turns": [{"body": recording, "rename": {"get_weather": "weather_now"}},
                         {"text": FINAL}]}),
    );
    let url = format!("http://127.0.0.1:{}{}", fake.port, case.path);
    let out = run_agent(&python, &dir, "ollama", &url, &["--max-turns", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(parse)
        .collect();
    let results: Vec<&Value> = events.iter().filter_map(|e| e.get("tool")).collect();
    assert_eq!(
        results,
        [
            &json!({"type": "TOOL_RESULT", "content": {"name": "weather_now",
                 "result": {"place": "Tokyo", "sky": "sunny", "temp_c": 21}}})
        ]
    );
    assert_eq!(
        events.last().unwrap(),
        &json!({"done": {"turns": 1, "stop": "max-turns", "text": ""}})
    );
    assert_eq!(fake.requests().len(), 1);
}

/// A response that ends in the provider's error ends the run: exit 1, the message logged.
#[test]
fn a_provider_error_in_the_stream_ends_the_run() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = scratch("stream-error");
    let recording = workspace_root()
        .join("tests/data/provider-streams/openai-responses/vercel-ai-openai-error.body");
    let fake = Fake::start(
        &python,
        &dir,
        json!({"provider": "openai-responses", "model": "test-model", "path": "/v1/responses",
               "key": null, "turns": [{"body": recording}, {"text": FINAL}]}),
    );
    let url = format!("http://127.0.0.1:{}/v1/responses", fake.port);
    let out = run_agent(&python, &dir, "openai-responses", &url, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "polyweave-agent: the provider reported an error: You exceeded your current quota"
        ),
        "{stderr}"
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(parse)
        .collect();
    assert_eq!(
        events.last().unwrap(),
        &json!({"done": {"turns": 1, "stop": "error", "text": ""}})
    );
    assert_eq!(fake.requests().len(), 1);
}

/// The agent checks the model's args against the MCP tool's `inputSchema` (`weather.now`'s
/// `location` is a string): a call that breaks it is answered at once with SPEC §11's text,
/// under the name the model used, and the server never gets it; with `--no-validate` the
/// server gets it and answers.
// SPEC §11
#[test]
fn args_that_break_the_input_schema_never_reach_the_server() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                       "model": "test-model",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let call = json!({"index": 0, "id": "call_1", "type": "function",
                      "function": {"name": "weather_now", "arguments": "{\"location\":7}"}});
    let body = [
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [call]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    for (flags, content) in [
        (
            &[][..],
            json!({"id": "call_1", "name": "weather_now",
                   "error": "Tool weather_now arguments are invalid: /location: expected string"}),
        ),
        (
            &["--no-validate"][..],
            json!({"id": "call_1", "name": "weather_now",
                   "result": {"place": 7, "sky": "sunny", "temp_c": 21}}),
        ),
    ] {
        let dir = scratch(if flags.is_empty() {
            "args-checked"
        } else {
            "args-unchecked"
        });
        let recording = dir.join("call.body");
        std::fs::write(&recording, &body).unwrap();
        let fake = Fake::start(
            &python,
            &dir,
            json!({"provider": "openai-chat", "model": "test-model",
                   "path": "/v1/chat/completions", "key": null,
                   "turns": [{"body": recording}, {"text": FINAL}]}),
        );
        let url = format!("http://127.0.0.1:{}/v1/chat/completions", fake.port);
        let out = run_agent(&python, &dir, "openai-chat", &url, flags);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{flags:?}: {stderr}");
        let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(parse)
            .collect();
        let results: Vec<&Value> = events.iter().filter_map(|e| e.get("tool")).collect();
        assert_eq!(
            results,
            [&json!({"type": "TOOL_RESULT", "content": content})],
            "{flags:?}: {stderr}"
        );
        assert_eq!(
            events.last().unwrap(),
            &json!({"done": {"turns": 2, "stop": "answer", "text": FINAL.concat()}})
        );
        let requests = fake.requests();
        assert_eq!(requests.len(), 2);
        assert!(requests.iter().all(|r| r["status"] == 200), "{requests:#?}");
        let served = std::fs::read_to_string(dir.join("calls.ndjson")).unwrap_or_default();
        let want = match flags.is_empty() {
            true => String::new(),
            false => "{\"name\": \"weather.now\", \"arguments\": {\"location\": 7}}\n".to_string(),
        };
        assert_eq!(served, want, "{flags:?}");
    }
}
