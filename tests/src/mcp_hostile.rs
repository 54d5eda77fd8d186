//! A hostile MCP server, and a careless model and host around it, from bytes: each input
//! byte picks the next step (a model call, a server line of any kind or any bytes, time
//! passing, a cancel, the transport closing, bytes split anywhere). After the last step
//! the transport closes and time runs out; then every model call has had exactly one
//! `TOOL_RESULT`, both machines are idle, and the wrapper refused no frame of the
//! client's. [`McpLoop`] checks every line the client wrote as it went. The fuzz target
//! `mcp` runs it on libFuzzer's inputs, `tests/mcp_client.rs` on seeded random ones.

use std::collections::HashMap;

use polyweave_tool_adapter::mcp::McpConfig;
use polyweave_tool_adapter::wrapper::WrapperConfig;

use crate::mcp_loop::{call, McpLoop, McpStorage};

/// The input as a stream of choices (the MCP hostile runs over lines and over HTTP read
/// their inputs through it too).
pub(crate) struct Choices<'d>(pub(crate) &'d [u8]);

impl Choices<'_> {
    pub(crate) fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    pub(crate) fn pick(&mut self, n: u8) -> u8 {
        self.byte().map_or(0, |b| b % n)
    }

    pub(crate) fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = (self.pick(255) as usize).min(max).min(self.0.len());
        let (take, rest) = self.0.split_at(n);
        self.0 = rest;
        take.to_vec()
    }
}

const TOOLS: [&str; 3] = ["echo", "slow", "t\u{e9}"];

/// A server line of some kind, about request `id`.
fn server_line(c: &mut Choices<'_>, id: u64, line_cap: usize) -> Vec<u8> {
    let text = |s: &str| s.as_bytes().to_vec();
    match c.pick(16) {
        0 => text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#
        )),
        1 => text(&format!(
            r#"{{"result":{{"structuredContent":{{"a":[1,{{"b":null}}]}},"content":[]}},"id":{id},"jsonrpc":"2.0"}}"#
        )),
        2 => text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"isError":true,"content":[{{"type":"text","text":"x\u0000\"y"}}]}}}}"#
        )),
        3 => text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Unknown \ud800 tool"}}}}"#
        )),
        4 => text(&format!(r#"{{"jsonrpc":"2.0","id":{id}}}"#)),
        5 => text(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1}}}}"#
        )),
        6 => text(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)),
        7 => text(&format!(
            r#"{{"jsonrpc":"2.0","id":"s{id}","method":"elicitation/create","params":{{}}}}"#
        )),
        8 => text(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#),
        9 => {
            // Longer than the line buffer, a response or not.
            let pad = "p".repeat(line_cap + 1);
            match c.pick(2) {
                0 => text(&format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":"{pad}"}}}}"#
                )),
                _ => text(&format!(
                    r#"{{"jsonrpc":"2.0","method":"m","params":"{pad}","id":{id}}}"#
                )),
            }
        }
        10 => text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{}{}}}"#,
            "[".repeat(40),
            "]".repeat(40)
        )),
        11 => text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok""#
        )),
        12 => text(&format!(r#"{{"jsonrpc":"1.0","id":{id},"result":{{}}}}"#)),
        13 => text(&format!(r#"{{"jsonrpc":"2.0","id":{id}.0,"result":{{}}}}"#)),
        // Any bytes (the loop adds the line end).
        _ => c.bytes(64).into_iter().filter(|&b| b != b'\n').collect(),
    }
}

/// Runs the exchange `data` describes; panics when a rule breaks.
pub fn run(data: &[u8]) {
    let mut c = Choices(data);
    let timeout = 100 + u32::from(c.pick(200)) * 10;
    let cap = [0, 0, timeout * 3][c.pick(3) as usize];
    let cfg = WrapperConfig {
        tool_timeout_ms: timeout,
        max_total_timeout_ms: cap,
        ..WrapperConfig::SMALL
    };
    let line_cap = [256usize, 1024][c.pick(2) as usize];
    let mcp = McpConfig {
        line_cap,
        outbox_cap: 1024,
        ..McpConfig::SMALL
    }
    .fit(&cfg);
    let wrapper_slots = 1 + c.pick(4) as usize;
    let client_slots = 1 + c.pick(4) as usize;
    let mut storage = McpStorage::new(cfg, mcp, &TOOLS, wrapper_slots, client_slots);
    let mut l = McpLoop::over(&mut storage, cfg, mcp);
    l.start(&TOOLS);
    let mut n = 0usize;
    let mut now = 0u64;
    while let Some(op) = c.byte() {
        match op % 8 {
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
            2 | 3 => {
                // Mostly the ids of the latest requests (answered or late), else any small one.
                let last = 2 + l.client.stats().calls;
                let id = match c.pick(4) {
                    0 => u64::from(c.pick(12)),
                    _ => last.saturating_sub(u64::from(c.pick(3))),
                };
                let mut line = server_line(&mut c, id, line_cap);
                line.push(b'\n');
                let chunk = c.pick(4) as usize * 7;
                l.server_chunked(&line, chunk);
            }
            4 => {
                now += u64::from(c.pick(255)) * 8;
                l.tick(now);
            }
            5 => {
                l.wrapper.cancel(l.at(), "fuzz").expect("cancel");
                l.pump();
            }
            6 if c.pick(8) == 0 => l.close(),
            _ => {
                let mut bytes = c.bytes(40);
                bytes.push(b'\n');
                l.server_bytes(&bytes);
            }
        }
    }
    l.close();
    l.tick(now + 1_000_000);
    let mut results: HashMap<String, usize> = HashMap::new();
    for r in l.results() {
        let v: serde_json::Value = serde_json::from_str(r).expect("TOOL_RESULT is JSON");
        let id = v["content"]["id"].as_str().expect("id echoed").to_string();
        *results.entry(id).or_default() += 1;
    }
    assert_eq!(results.len(), n, "every call answered: {results:?}");
    assert!(
        results.values().all(|&k| k == 1),
        "one TOOL_RESULT per call: {results:?}"
    );
    assert_eq!(l.wrapper.pending(), 0);
    assert_eq!(l.client.in_flight(), 0);
    assert!(l.refused.is_empty(), "the wrapper refused: {:?}", l.refused);
    if std::env::var_os("PW_MCP_HOSTILE_STATS").is_some() {
        let kinds: Vec<String> = l
            .results()
            .iter()
            .map(|r| match r.find("\"error\":") {
                Some(i) => r[i..].chars().take(40).collect(),
                None => "r".into(),
            })
            .collect();
        eprintln!("calls {n} results {kinds:?} stats {:?}", l.client.stats());
    }
}
