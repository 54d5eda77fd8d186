//! A hostile MCP server around the revisions (SPEC §9.9, §9.10, §9.12), and a careless model
//! and host, from bytes: each input byte picks the next step. Unlike [`mcp_hostile`]
//! (which starts the client first), the start-up is part of the exchange: the client's
//! revision (the default, or fixed to either), its start-up timeout, and answers of every
//! kind to the requests it wrote — `server/discover` listing 2026-07-28 or not (with or
//! without `listChanged`), refused with its id or `"id":null`, `initialize` answered or
//! refused, `tools/list` pages, cursors and errors at start and when listing again,
//! `subscriptions/listen` answered, `tools/call` results with `resultType`, lines longer
//! than the buffer — with storms of `list_changed`, time passing, cancels, a close.
//!
//! The server answers what the client asked: it reads the requests off the lines the
//! client wrote, so that the answers reach the states they are for. After the last step
//! the transport closes and time runs out; then every model call has had exactly one
//! `TOOL_RESULT`, both machines are idle, and the wrapper refused no frame of the client's.
//! [`McpLoop`] checks every line the client wrote as it went.
//!
//! [`mcp_hostile`]: crate::mcp_hostile

use std::collections::HashMap;

use polyweave_tool_adapter::mcp::{McpConfig, McpRevision};
use polyweave_tool_adapter::wrapper::WrapperConfig;

use crate::mcp_hostile::Choices;
use crate::mcp_loop::{call, McpLoop, McpStorage, Seen};

const TOOLS: [&str; 3] = ["echo", "slow", "t\u{e9}"];

/// What one run (or many, added up) reached: the tests check that the runs do what they
/// are for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// Runs whose client spoke 2026-07-28.
    pub spoke_2026: u32,
    /// Runs whose client spoke a 2025 revision.
    pub spoke_2025: u32,
    /// Runs whose start-up failed.
    pub start_failed: u32,
    /// Re-listings completed (`ToolsChanged`).
    pub tools_changed: u32,
    /// `subscriptions/listen` requests written.
    pub listens: u32,
    /// Calls failed for `input_required`.
    pub input_required: u32,
    /// Runs whose `server/discover` went unanswered past its deadline.
    pub timeouts: u32,
    /// Model calls made.
    pub calls: u32,
}

impl Reached {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Reached) {
        self.spoke_2026 += other.spoke_2026;
        self.spoke_2025 += other.spoke_2025;
        self.start_failed += other.start_failed;
        self.tools_changed += other.tools_changed;
        self.listens += other.listens;
        self.input_required += other.input_required;
        self.timeouts += other.timeouts;
        self.calls += other.calls;
    }
}

fn text(s: String) -> Vec<u8> {
    s.into_bytes()
}

/// A response line for request `id` carrying `body` (`"result":…` or `"error":…`); `id`
/// `None` writes `"id":null`.
fn response(id: Option<u64>, body: &str) -> Vec<u8> {
    let id = id.map_or("null".to_string(), |i| i.to_string());
    text(format!(r#"{{"jsonrpc":"2.0","id":{id},{body}}}"#))
}

/// A `tools/list` result of some of [`TOOLS`] (and one the wrapper does not serve).
fn tools_result(c: &mut Choices<'_>, cursor: bool) -> String {
    let mut names = Vec::new();
    for _ in 0..c.pick(4) {
        let n = c.pick(4) as usize;
        names.push(TOOLS.get(n).copied().unwrap_or("other"));
    }
    let list: Vec<String> = names
        .iter()
        .map(|n| format!(r#"{{"name":{}}}"#, serde_json::to_string(n).unwrap()))
        .collect();
    let next = if cursor {
        format!(r#","nextCursor":"p{}""#, c.pick(100))
    } else {
        String::new()
    };
    format!(r#""result":{{"tools":[{}]{next}}}"#, list.join(","))
}

/// An answer to request `id`, which asked `method`.
fn answer(c: &mut Choices<'_>, id: u64, method: &str, line_cap: usize) -> Vec<u8> {
    let pad = || "p".repeat(line_cap + 1);
    let (n, id) = (id, Some(id));
    match method {
        "server/discover" => match c.pick(9) {
            0 | 1 => response(
                id,
                r#""result":{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{"tools":{}}}"#,
            ),
            2 => response(
                id,
                r#""result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}"#,
            ),
            3 => response(id, r#""result":{"supportedVersions":["2025-11-25"]}"#),
            4 => response(
                id,
                r#""error":{"code":-32601,"message":"Method not found"}"#,
            ),
            5 => response(None, r#""error":{"code":-32000,"message":"Bad Request"}"#),
            6 => response(id, r#""result":{"supportedVersions":{}}"#),
            7 => response(id, &format!(r#""result":{{"pad":"{}"}}"#, pad())),
            _ => response(id, r#""result":7"#),
        },
        "initialize" => match c.pick(6) {
            0..=2 => response(
                id,
                r#""result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}}}"#,
            ),
            3 => response(id, r#""result":{"protocolVersion":"2025-06-18"}"#),
            4 => response(id, r#""result":{"protocolVersion":"2026-07-28"}"#),
            _ => response(id, r#""error":{"code":-32602,"message":"no"}"#),
        },
        "tools/list" => match c.pick(8) {
            0..=3 => response(id, &tools_result(c, false)),
            4 | 5 => response(id, &tools_result(c, true)),
            6 => response(id, r#""error":{"code":-32603,"message":"busy"}"#),
            _ => response(id, r#""result":{"tools":"none"}"#),
        },
        "subscriptions/listen" => match c.pick(2) {
            0 => response(id, r#""result":{}"#),
            _ => response(
                id,
                r#""error":{"code":-32601,"message":"Method not found"}"#,
            ),
        },
        _ => match c.pick(11) {
            0 | 1 => response(id, r#""result":{"content":[{"type":"text","text":"ok"}]}"#),
            2 => response(
                id,
                r#""result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}"#,
            ),
            3 => response(
                id,
                r#""result":{"resultType":"complete","structuredContent":{"a":1},"content":[]}"#,
            ),
            4 => response(
                id,
                r#""result":{"isError":true,"content":[{"type":"text","text":"bad"}]}"#,
            ),
            5 => response(id, r#""error":{"code":-32602,"message":"Unknown tool"}"#),
            6 => text(format!(r#"{{"jsonrpc":"2.0","id":{n}}}"#)),
            7 => response(id, &format!(r#""result":{{"content":"{}"}}"#, pad())),
            8 => response(
                id,
                &format!(r#""result":{}{}"#, "[".repeat(40), "]".repeat(40)),
            ),
            9 => text(format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{},"progress":1}}}}"#,
                n
            )),
            _ => response(id, r#""result":{"resultType":"complete"}"#),
        },
    }
}

/// A line the server sends of its own accord.
fn unasked(c: &mut Choices<'_>, line_cap: usize) -> Vec<u8> {
    match c.pick(8) {
        0 => text(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#.to_string()),
        1 => text(
            r#"{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}"#.to_string(),
        ),
        2 => text(
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#
                .to_string(),
        ),
        3 => response(None, r#""error":{"code":-32700,"message":"Parse error"}"#),
        4 => response(Some(u64::from(c.pick(20))), r#""result":{}"#),
        5 => text(format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":"{}"}}"#,
            "p".repeat(line_cap + 1)
        )),
        // Any bytes (the caller adds the line end).
        _ => c.bytes(64).into_iter().filter(|&b| b != b'\n').collect(),
    }
}

/// Takes the lines the client wrote out of `l`, noting each request's id and method.
fn read_requests(l: &mut McpLoop<'_>, requests: &mut Vec<(u64, String)>, reached: &mut Reached) {
    for line in l.take_server() {
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        let (Some(id), Some(method)) = (v["id"].as_u64(), v["method"].as_str()) else {
            continue;
        };
        if method == "subscriptions/listen" {
            reached.listens += 1;
        }
        requests.push((id, method.to_string()));
    }
}

/// Runs the exchange `data` describes; panics when a rule breaks, else says what it reached.
pub fn run(data: &[u8]) -> Reached {
    let mut c = Choices(data);
    let revision = [
        McpRevision::Auto,
        McpRevision::Auto,
        McpRevision::V2025_11_25,
        McpRevision::V2026_07_28,
    ][c.pick(4) as usize];
    let start_timeout_ms = 50 + u32::from(c.pick(100)) * 10;
    let timeout = 100 + u32::from(c.pick(200)) * 10;
    let cfg = WrapperConfig {
        tool_timeout_ms: timeout,
        max_total_timeout_ms: [0, timeout * 3][c.pick(2) as usize],
        ..WrapperConfig::SMALL
    };
    let line_cap = [256usize, 1024][c.pick(2) as usize];
    let mcp = McpConfig {
        line_cap,
        outbox_cap: 1024,
        revision,
        start_timeout_ms,
        ..McpConfig::SMALL
    }
    .fit(&cfg);
    let wrapper_slots = 1 + c.pick(4) as usize;
    let client_slots = 1 + c.pick(4) as usize;
    let mut storage = McpStorage::new(cfg, mcp, &TOOLS, wrapper_slots, client_slots);
    let mut l = McpLoop::over(&mut storage, cfg, mcp);
    let mut reached = Reached::default();
    // Every request the client wrote: its id and method.
    let mut requests: Vec<(u64, String)> = Vec::new();
    l.client.start(l.at()).unwrap();
    l.pump();
    let mut n = 0usize;
    let mut now = 0u64;
    while let Some(op) = c.byte() {
        read_requests(&mut l, &mut requests, &mut reached);
        match op % 10 {
            0 | 1 => {
                let name = TOOLS[c.pick(3) as usize];
                let args = match c.pick(8) {
                    6 => "[1]".to_string(),
                    7 => format!(r#"{{"s":"{}"}}"#, "a".repeat(c.pick(255) as usize * 4)),
                    _ => r#"{"a":1}"#.to_string(),
                };
                l.model(now, &call(&format!("c{n}"), name, &args));
                n += 1;
            }
            2..=4 if !requests.is_empty() => {
                // Mostly one of the latest requests.
                let back = match c.pick(4) {
                    0 => c.pick(255) as usize,
                    k => k as usize - 1,
                };
                let (id, method) =
                    requests[requests.len() - 1 - back.min(requests.len() - 1)].clone();
                let mut line = answer(&mut c, id, &method, line_cap);
                line.push(b'\n');
                l.server_chunked(&line, c.pick(4) as usize * 7);
            }
            5 => {
                // A storm of changes, some told by a subscription.
                for _ in 0..1 + c.pick(6) {
                    let line = match c.pick(3) {
                        0 => {
                            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}"#
                        }
                        _ => r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
                    };
                    l.server(line);
                }
            }
            6 => {
                now += u64::from(c.pick(255)) * 8;
                if l.client
                    .poll_timeout()
                    .is_some_and(|t| t <= polyweave_tool_adapter::Instant::from_millis(now))
                {
                    reached.timeouts = 1;
                }
                l.tick(now);
            }
            7 => {
                l.wrapper.cancel(l.at(), "fuzz").expect("cancel");
                l.pump();
            }
            8 if c.pick(10) == 0 => l.close(),
            _ => {
                let mut line = unasked(&mut c, line_cap);
                line.push(b'\n');
                l.server_chunked(&line, c.pick(4) as usize * 5);
            }
        }
    }
    read_requests(&mut l, &mut requests, &mut reached);
    match l.client.protocol_version() {
        Some("2026-07-28") => reached.spoke_2026 = 1,
        Some(_) => reached.spoke_2025 = 1,
        None => {}
    }
    l.close();
    l.tick(now + 1_000_000);
    for s in &l.seen {
        match s {
            Seen::Event(e) if e.starts_with("StartFailed") => reached.start_failed = 1,
            Seen::Event(e) if e.starts_with("ToolsChanged") => reached.tools_changed += 1,
            _ => {}
        }
    }
    let mut results: HashMap<String, usize> = HashMap::new();
    for r in l.results() {
        let v: serde_json::Value = serde_json::from_str(r).expect("TOOL_RESULT is JSON");
        let id = v["content"]["id"].as_str().expect("id echoed").to_string();
        *results.entry(id).or_default() += 1;
        if r.contains("needs input this client cannot give") {
            reached.input_required += 1;
        }
    }
    assert_eq!(results.len(), n, "every call answered: {results:?}");
    assert!(
        results.values().all(|&k| k == 1),
        "one TOOL_RESULT per call: {results:?}"
    );
    assert_eq!(l.wrapper.pending(), 0);
    assert_eq!(l.client.in_flight(), 0);
    assert!(l.refused.is_empty(), "the wrapper refused: {:?}", l.refused);
    reached.calls = n as u32;
    reached
}
