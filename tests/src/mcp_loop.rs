//! A deterministic host for the MCP client: a [`Wrapper`] whose adapter tools an MCP
//! [`McpClient`] serves, and a scripted server the test speaks for, line by line, in virtual
//! time. Everything either side sends is recorded, and the loop checks as it goes that
//! every line the client writes is one compact JSON value ending in LF and that the
//! wrapper takes every frame the client gives it.

use std::collections::VecDeque;

use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpError, McpEvent, McpHandled, McpRevision, McpSlot,
    McpStartError, McpState,
};
use polyweave_tool_adapter::wrapper::{Slot, Wrapper, WrapperConfig};
use polyweave_tool_adapter::{json, CallHandle, Instant, NoHooks, Route, Tool};

/// What the host saw, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// A frame the wrapper wrote to the model.
    Model(String),
    /// A frame the wrapper wrote to the consumer.
    Consumer(String),
    /// A line the client wrote to the server (without its LF).
    Server(String),
    /// An event of the client, as `Debug` text.
    Event(String),
}

/// The memory of a wrapper and a client, owned (the fuzz target must not leak it).
pub struct McpStorage {
    tools: Vec<Tool<'static>>,
    slots: Vec<Slot>,
    arena: Vec<u8>,
    mslots: Vec<McpSlot>,
    marena: Vec<u8>,
}

impl McpStorage {
    /// Room for `tools` as adapter tools, `wrapper_slots` pending calls in the wrapper and
    /// `client_slots` in the client.
    pub fn new(
        cfg: WrapperConfig,
        mcp: McpConfig,
        tools: &[&'static str],
        wrapper_slots: usize,
        client_slots: usize,
    ) -> Self {
        Self {
            tools: tools.iter().map(|n| Tool::adapter(n)).collect(),
            slots: vec![Slot::EMPTY; wrapper_slots],
            arena: vec![0u8; cfg.arena_len(wrapper_slots)],
            mslots: vec![McpSlot::EMPTY; client_slots],
            marena: vec![0u8; mcp.arena_len(client_slots)],
        }
    }
}

/// The wrapper, the client, and what they sent.
pub struct McpLoop<'s> {
    pub wrapper: Wrapper<'s, NoHooks>,
    pub client: McpClient<'s>,
    pub seen: Vec<Seen>,
    /// Frames the wrapper refused from the client (none, unless a test means it).
    pub refused: Vec<String>,
    /// Model `TOOL_CALL`s handed in.
    pub calls: usize,
    pub now: u64,
    /// Adapter frames the client could not take yet (see `deliver`).
    held: VecDeque<(CallHandle, Vec<u8>)>,
    buf: Vec<u8>,
}

/// `{"type":"TOOL_CALL",…}` of tool `name` with id `id` and raw `args`.
pub fn call(id: &str, name: &str, args: &str) -> String {
    format!(r#"{{"type":"TOOL_CALL","content":{{"id":"{id}","name":"{name}","args":{args}}}}}"#)
}

/// A `tools/list` result line for request `id` naming `tools`.
pub fn tools_page(id: u64, tools: &[&str], cursor: Option<&str>) -> String {
    let list: Vec<String> = tools
        .iter()
        .map(|t| {
            let name = serde_json::to_string(t).unwrap();
            format!(r#"{{"name":{name},"inputSchema":{{"type":"object"}}}}"#)
        })
        .collect();
    let next = cursor.map_or(String::new(), |c| format!(r#","nextCursor":"{c}""#));
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]{next}}}}}"#,
        list.join(",")
    )
}

/// The `initialize` answer for request 1.
pub const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;

/// The `server/discover` result of a server that speaks 2026-07-28 and does not tell of
/// tool-list changes.
pub const DISCOVER_2026: &str = r#"{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#;

/// The answer to `server/discover` (request 1) listing 2026-07-28.
pub fn discover_ok() -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"result":{DISCOVER_2026}}}"#)
}

/// The `_meta` members of 2026-07-28 (SPEC §9.9) this crate's client writes, written out
/// here rather than taken from the client, so that a test compares against the text.
pub fn envelope() -> String {
    format!(
        r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"polyweave-tool-adapter","version":"{}"}}"#,
        env!("CARGO_PKG_VERSION")
    )
}

impl McpLoop<'static> {
    /// A wrapper with `tools` as adapter tools and `wrapper_slots` slots, served by a
    /// client of `client_slots` slots; not started. Its memory is leaked (for tests).
    pub fn new(
        cfg: WrapperConfig,
        mcp: McpConfig,
        tools: &[&str],
        wrapper_slots: usize,
        client_slots: usize,
    ) -> Self {
        let names: Vec<&'static str> = tools
            .iter()
            .map(|t| &*Box::leak(t.to_string().into_boxed_str()))
            .collect();
        let storage = McpStorage::new(cfg, mcp, &names, wrapper_slots, client_slots);
        McpLoop::over(Box::leak(Box::new(storage)), cfg, mcp)
    }

    /// [`new`](Self::new), started as [`start`](McpLoop::start) says; what it saw is cleared.
    pub fn ready(
        cfg: WrapperConfig,
        mcp: McpConfig,
        tools: &[&str],
        wrapper_slots: usize,
        client_slots: usize,
    ) -> Self {
        let mut l = Self::new(cfg, mcp, tools, wrapper_slots, client_slots);
        l.start(tools);
        l
    }
}

impl<'s> McpLoop<'s> {
    /// A loop over `storage`; not started.
    pub fn over(storage: &'s mut McpStorage, cfg: WrapperConfig, mcp: McpConfig) -> Self {
        let McpStorage {
            tools,
            slots,
            arena,
            mslots,
            marena,
        } = storage;
        let wrapper = Wrapper::new(cfg, tools, NoHooks, slots, arena).expect("wrapper");
        let client =
            McpClient::new(mcp, McpClientInfo::THIS_CRATE, mslots, marena).expect("client");
        Self {
            wrapper,
            client,
            seen: Vec::new(),
            refused: Vec::new(),
            calls: 0,
            now: 0,
            held: VecDeque::new(),
            buf: vec![0u8; 1 << 20],
        }
    }

    /// Starts the client and answers its first request: `initialize` with [`INIT_OK`] when
    /// the client is fixed to 2025-11-25, else `server/discover` with [`discover_ok`] (the
    /// server speaks 2026-07-28); then one `tools/list` page of `tools` (request 2, so calls
    /// take ids from 3 either way). What it saw is cleared.
    pub fn start(&mut self, tools: &[&str]) {
        self.client.start(self.at()).unwrap();
        self.pump();
        match self.client.config().revision {
            McpRevision::V2025_11_25 => self.server(INIT_OK),
            McpRevision::Auto | McpRevision::V2026_07_28 => self.server(&discover_ok()),
        }
        self.server(&tools_page(2, tools, None));
        assert_eq!(self.client.state(), McpState::Ready, "{:?}", self.seen);
        self.seen.clear();
    }

    pub fn at(&self) -> Instant {
        Instant::from_millis(self.now)
    }

    /// A model frame on the wrapper's response path at time `ms`.
    pub fn model(&mut self, ms: u64, frame: &str) {
        self.now = ms;
        if frame.contains(r#""type":"TOOL_CALL""#) {
            self.calls += 1;
        }
        let d = self
            .wrapper
            .handle_response(self.at(), frame.as_bytes())
            .expect("handle_response");
        if d == polyweave_tool_adapter::Disposition::Forward {
            self.seen.push(Seen::Consumer(frame.to_string()));
        }
        self.pump();
    }

    /// A line from the server (LF added), fed whole, at the current time.
    pub fn server(&mut self, line: &str) {
        self.server_bytes(format!("{line}\n").as_bytes());
    }

    /// Bytes from the server, fed in pieces of `chunk` bytes (0: whole).
    pub fn server_chunked(&mut self, bytes: &[u8], chunk: usize) {
        let step = if chunk == 0 {
            bytes.len().max(1)
        } else {
            chunk
        };
        for piece in bytes.chunks(step) {
            self.server_bytes(piece);
        }
    }

    /// Bytes from the server, pumping between lines.
    pub fn server_bytes(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let n = self.client.feed(bytes);
            bytes = &bytes[n..];
            self.pump();
            if n == 0 {
                assert!(!bytes.is_empty());
                let again = self.client.feed(bytes);
                assert!(
                    again > 0,
                    "the client takes nothing after its outputs were drained"
                );
                bytes = &bytes[again..];
                self.pump();
            }
        }
    }

    /// Time passes to `ms`: timeouts fire (the wrapper's calls, the client's start-up).
    pub fn tick(&mut self, ms: u64) {
        self.now = ms;
        self.wrapper
            .handle_timeout(self.at())
            .expect("handle_timeout");
        self.client.handle_timeout(self.at());
        self.pump();
    }

    /// The transport closed.
    pub fn close(&mut self) {
        self.client.handle_closed();
        self.pump();
    }

    /// Moves everything between the two machines until neither has anything to give.
    pub fn pump(&mut self) {
        loop {
            let mut moved = false;
            while self.wrapper.poll_event().is_some() {}
            while let Some(t) = self.wrapper.poll_transmit(&mut self.buf).unwrap() {
                moved = true;
                let frame = self.buf[..t.len].to_vec();
                let text = String::from_utf8(frame.clone()).unwrap();
                match t.route {
                    Route::Model => self.seen.push(Seen::Model(text)),
                    Route::Consumer => self.seen.push(Seen::Consumer(text)),
                    Route::Adapter(h) if frame.starts_with(br#"{"type":"CANCEL""#) => {
                        match self.held.iter().position(|(k, _)| *k == h) {
                            // The client never saw the call: it is withdrawn with its cancel.
                            Some(i) => drop(self.held.remove(i)),
                            None => self.hand(h, &frame),
                        }
                    }
                    Route::Adapter(h) => {
                        self.held.push_back((h, frame));
                        self.deliver();
                    }
                }
            }
            moved |= self.deliver();
            moved |= self.frames();
            moved |= self.events();
            moved |= self.transmit();
            if !moved {
                return;
            }
        }
    }

    /// Hands the client an adapter frame it must take now.
    fn hand(&mut self, h: CallHandle, frame: &[u8]) {
        loop {
            match self.client.handle_frame(h, frame) {
                Ok(_) => return,
                Err(McpError::OutboxFull { .. }) => {
                    assert!(self.transmit(), "outbox full with nothing to send")
                }
                Err(McpError::FramePending) => {
                    assert!(self.frames(), "frame pending with no frame")
                }
                Err(e) => panic!(
                    "client refused the wrapper's {}: {e:?}",
                    String::from_utf8_lossy(frame)
                ),
            }
        }
    }

    /// Hands the client the `TOOL_CALL`s held, in order. One whose line does not fit the
    /// outbox while the client writes nothing (its calls wait for the start-up) stays held,
    /// with every one after it, until the outbox drains.
    fn deliver(&mut self) -> bool {
        let mut moved = false;
        while let Some((h, frame)) = self.held.front() {
            let (h, frame) = (*h, frame.clone());
            match self.client.handle_frame(h, &frame) {
                Ok(
                    McpHandled::Sent { .. } | McpHandled::Failed(_) | McpHandled::Cancelled { .. },
                ) => {
                    self.held.pop_front();
                    moved = true;
                }
                Err(McpError::OutboxFull { .. }) => {
                    if !self.transmit() {
                        assert!(
                            matches!(self.client.state(), McpState::Idle | McpState::Starting),
                            "outbox full with nothing to send, {:?}",
                            self.client
                        );
                        return moved;
                    }
                    moved = true;
                }
                Err(McpError::FramePending) => {
                    assert!(self.frames(), "frame pending with no frame");
                    moved = true;
                }
                Err(e) => panic!(
                    "client refused the wrapper's {}: {e:?}",
                    String::from_utf8_lossy(&frame)
                ),
            }
        }
        moved
    }

    fn frames(&mut self) -> bool {
        let mut moved = false;
        let mut out = vec![0u8; self.client.config().max_frame_len()];
        while let Some(f) = self.client.poll_frame(&mut out).unwrap() {
            moved = true;
            let frame = &out[..f.len];
            json::validate(frame, 64).expect("the client's frame is JSON");
            if let Err(e) = self
                .wrapper
                .handle_adapter_frame(self.at(), f.handle, frame)
            {
                self.refused
                    .push(format!("{e:?}: {}", String::from_utf8_lossy(frame)));
            }
        }
        moved
    }

    fn events(&mut self) -> bool {
        let mut moved = false;
        while let Some(e) = self.client.poll_event() {
            moved = true;
            let text = match e {
                McpEvent::Initialized {
                    protocol_version,
                    result,
                } => format!(
                    "Initialized {protocol_version} {}",
                    String::from_utf8_lossy(result)
                ),
                McpEvent::Tool { name, .. } => format!("Tool {name}"),
                McpEvent::StartFailed(McpStartError::UnsupportedVersion(v)) => {
                    format!(
                        "StartFailed UnsupportedVersion {}",
                        String::from_utf8_lossy(v)
                    )
                }
                McpEvent::StartFailed(McpStartError::Refused(e)) => {
                    format!("StartFailed Refused {}", String::from_utf8_lossy(e))
                }
                McpEvent::StartFailed(McpStartError::BadResult(r)) => {
                    format!("StartFailed BadResult {}", String::from_utf8_lossy(r))
                }
                McpEvent::Notification { method, params } => format!(
                    "Notification {} {}",
                    String::from_utf8_lossy(method.raw()),
                    String::from_utf8_lossy(params.unwrap_or(b"-"))
                ),
                other => format!("{other:?}"),
            };
            self.seen.push(Seen::Event(text));
        }
        moved
    }

    fn transmit(&mut self) -> bool {
        let mut moved = false;
        let mut out = vec![0u8; self.client.config().max_line_len()];
        while let Some(n) = self.client.poll_transmit(&mut out).unwrap() {
            moved = true;
            let line = &out[..n];
            assert_eq!(line.last(), Some(&b'\n'), "a line ends in LF");
            let body = &line[..n - 1];
            assert!(!body.contains(&b'\n'), "one line");
            json::validate(body, 64).expect("the client's line is JSON");
            assert_eq!(
                json::compact_len(body),
                body.len(),
                "compact: {}",
                String::from_utf8_lossy(body)
            );
            self.seen
                .push(Seen::Server(String::from_utf8(body.to_vec()).unwrap()));
        }
        moved
    }

    /// The lines sent to the server since the last call, taken out of `seen`.
    pub fn take_server(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        self.seen.retain(|s| match s {
            Seen::Server(l) => {
                out.push(l.clone());
                false
            }
            _ => true,
        });
        out
    }

    /// The frames sent to the model since the last call, taken out of `seen`.
    pub fn take_model(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        self.seen.retain(|s| match s {
            Seen::Model(l) => {
                out.push(l.clone());
                false
            }
            _ => true,
        });
        out
    }

    /// The client's events since the last call, taken out of `seen`.
    pub fn take_events(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        self.seen.retain(|s| match s {
            Seen::Event(e) => {
                out.push(e.clone());
                false
            }
            _ => true,
        });
        out
    }

    /// Every `TOOL_RESULT` written to the model so far (in `seen`).
    pub fn results(&self) -> Vec<&str> {
        self.seen
            .iter()
            .filter_map(|s| match s {
                Seen::Model(f) if f.starts_with(r#"{"type":"TOOL_RESULT""#) => Some(f.as_str()),
                _ => None,
            })
            .collect()
    }
}
