//! The MCP side of a `std` host: an MCP server run as a child over its stdio (or reached over
//! Streamable HTTP, [`crate::http`]), the core's [`McpClient`] fed its lines (or its
//! responses), and the frames that go between the client and a
//! [`Wrapper`] — the sans-IO loop's parts both programs share (`polyweave-mcp` reads the
//! model's frames on stdin; `polyweave-agent` gets them from a provider's decoded response).
//!
//! One thread per input (the server's stdout, the model's bytes) only moves bytes over a
//! channel ([`Input`]); everything else happens on the loop's thread: server bytes →
//! `McpClient::feed` (one line at a time); `McpClient::poll_frame` →
//! `Wrapper::handle_adapter_frame`; `Wrapper::poll_transmit` → the [`Host`] (to the model or
//! the consumer), or, for [`Route::Adapter`], `McpClient::handle_frame`;
//! `McpClient::poll_transmit` → the server's stdin (over HTTP: `McpClient::poll_request` → a
//! POST on its own thread, whose response comes back over the channel and goes to
//! `McpClient::handle_response`, `feed_response` and `handle_response_end`). Time is `std::time::Instant` since the
//! start, in milliseconds, as the core's [`Instant`].

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io;
use std::io::Write;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::http::Http;
use crate::lines::short;
use crate::log;
use crate::pipes::{spawn_reader, Input};
use polyweave_tool_adapter::json::DEFAULT_MAX_DEPTH;
use polyweave_tool_adapter::mcp::{
    McpClient, McpConfig, McpError, McpEvent, McpHandled, McpStartError, McpToolSkip,
    CANCEL_LINE_BOUND, OUTBOX_HEADER,
};
use polyweave_tool_adapter::wrapper::{Disposition, Event, Wrapper, WrapperConfig};
use polyweave_tool_adapter::{CallHandle, Error, Instant, Route};

/// Calls pending at once (wrapper slots, and as many MCP call slots).
pub const SLOTS: usize = 16;
/// Bytes of a tool name and of a call id.
pub const NAME_CAP: usize = 256;
/// Bytes of a call's args, compact.
pub const ARGS_CAP: usize = 64 * 1024;
/// Bytes of the longest line the server may send (a whole `tools/list` page, a result).
pub const LINE_CAP: usize = 1024 * 1024;
/// Bytes of a result: as long as a line can carry.
pub const RESULT_CAP: usize = LINE_CAP;
/// Bytes of an error message.
pub const MESSAGE_CAP: usize = 64 * 1024;

/// The wrapper's capacities (its timeouts come from the command line).
pub const WRAPPER: WrapperConfig = WrapperConfig {
    name_cap: NAME_CAP,
    id_cap: NAME_CAP,
    args_cap: ARGS_CAP,
    result_cap: RESULT_CAP,
    message_cap: MESSAGE_CAP,
    trace_entries: 4,
    trace_bytes: 16 * 1024,
    held_bytes: 64 * 1024,
    max_depth: DEFAULT_MAX_DEPTH,
    ..WrapperConfig::DEFAULT
};

/// The MCP client's capacities (`fitting` the wrapper: its name cap and depth limit).
pub const MCP: McpConfig = McpConfig {
    line_cap: LINE_CAP,
    // Every slot's `tools/call` (its args and around them), or its `notifications/cancelled`.
    outbox_cap: SLOTS * (ARGS_CAP + 6 * NAME_CAP + 256 + CANCEL_LINE_BOUND + 2 * OUTBOX_HEADER),
    name_cap: NAME_CAP,
    cursor_cap: 4096,
    max_depth: DEFAULT_MAX_DEPTH,
    // Half of the start-up, as pw-mcp gives it: a server that leaves `server/discover`
    // unanswered still gets `initialize` and `tools/list` in the other half.
    start_timeout_ms: 5_000,
    ..McpConfig::DEFAULT
};

/// How long the start-up may take (the `server/discover` probe's 5 s included).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the server may take to exit once its stdin is closed.
pub const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Where the wrapper's frames for the model and the consumer go, and which name the server
/// knows a tool by.
pub trait Host {
    /// Why the host cannot take a frame (the loop stops with it).
    type Error;

    /// A frame the wrapper sends on `to` ([`Route::Model`] or [`Route::Consumer`]), or a
    /// model frame it forwards to the consumer.
    fn emit(&mut self, to: Route, frame: &[u8]) -> Result<(), Self::Error>;

    /// A model frame the wrapper refused as malformed.
    fn rejected(&mut self, frame: &[u8]) -> Result<(), Self::Error> {
        let _ = frame;
        Ok(())
    }

    /// The name the MCP server knows the tool `tool` by, when it is not `tool` (a tool the
    /// model knows by a mapped name, SPEC §10.1).
    fn server_name(&self, tool: &str) -> Option<String> {
        let _ = tool;
        None
    }
}

/// A tool the server listed: its name, and its `tools/list` entry as the server sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The tool's name, decoded.
    pub name: String,
    /// Its raw JSON.
    pub entry: Vec<u8>,
}

/// Starts `command` as the server (stdin and stdout piped, stderr inherited) with a thread
/// that sends its stdout on the loop's channel: the child and the loop's state.
pub fn spawn(
    command: &[OsString],
    wcfg: &WrapperConfig,
    mcfg: &McpConfig,
) -> Result<(Child, Io), String> {
    let (program, args) = command.split_first().ok_or("no server command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))?;
    let (tx, rx) = mpsc::channel();
    let started = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout pipe"))
        .and_then(|out| {
            spawn_reader(
                out,
                tx.clone(),
                Input::Server,
                Input::ServerEnd,
                "the server",
            )
        });
    if let Err(e) = started {
        stop(&mut child);
        return Err(format!("cannot start the pipe thread: {e}"));
    }
    let server_in = child.stdin.take();
    Ok((child, Io::new(rx, tx, server_in, wcfg, mcfg)))
}

/// Kills the server and reaps it.
pub fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// How the server ended, waiting up to `grace` for it (then killing it).
pub fn exit_status(child: &mut Child, grace: Duration) -> String {
    let until = std::time::Instant::now() + grace;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return describe_exit(status),
            Ok(None) if std::time::Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Ok(None) => {
                stop(child);
                return format!("did not exit within {} ms: killed", grace.as_millis());
            }
            Err(e) => return format!("cannot be waited for: {e}"),
        }
    }
}

pub fn describe_exit(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("ended: {status}"),
    }
}

/// Why the start-up did not reach `Ready`.
pub enum StartFail {
    /// The server's stdout ended.
    Closed,
    Other(String),
}

pub fn start_error(e: &McpStartError<'_>) -> String {
    match e {
        McpStartError::UnsupportedVersion(v) => {
            format!(
                "the server chose protocol version {}, which the client does not speak",
                short(v)
            )
        }
        McpStartError::BadResult(r) => {
            format!("the server's start-up answer is unusable: {}", short(r))
        }
        McpStartError::Refused(e) => format!("the server refused: {}", short(e)),
        McpStartError::CursorTooLong(n) => format!("a tools/list cursor of {n} bytes"),
        McpStartError::TooManyPages => "tools/list never stops paging".into(),
        McpStartError::ResponseTooLarge => "an answer longer than the client's line buffer".into(),
        McpStartError::NoAnswer => "the server did not answer server/discover in time".into(),
        McpStartError::NoResponse { status: 0 } => "the server gave no response".into(),
        McpStartError::NoResponse { status } => {
            format!("the server's response (HTTP {status}) had no answer")
        }
        other => format!("{other:?}"),
    }
}

/// Logs an event of the client's; `Ready` gives the tool count, `StartFailed` its reason.
pub fn log_event(ev: &McpEvent<'_>) -> Option<Result<u32, String>> {
    match ev {
        McpEvent::Initialized {
            protocol_version,
            result,
        } => {
            use polyweave_tool_adapter::json::find_member;
            let member = |raw, key: &[u8]| find_member(raw, key, 32).ok().flatten();
            // `initialize` answers `serverInfo`; `server/discover` has it in its `_meta`.
            let server = member(result, b"serverInfo").or_else(|| {
                member(result, b"_meta")
                    .and_then(|m| member(m, b"io.modelcontextprotocol/serverInfo"))
            });
            let name = server.and_then(|s| crate::lines::member_text(s, b"name"));
            let version = server.and_then(|s| crate::lines::member_text(s, b"version"));
            log!(
                "initialized: protocol {protocol_version}, server {} {}",
                name.as_deref().unwrap_or("?"),
                version.as_deref().unwrap_or("?")
            );
        }
        McpEvent::Tool { name, .. } => log!("tool: {name}"),
        McpEvent::ToolSkipped { reason, tool } => match reason {
            McpToolSkip::NameTooLong { len, cap } => {
                log!(
                    "tool skipped: its name of {len} bytes exceeds {cap}: {}",
                    short(tool)
                )
            }
            McpToolSkip::NoName => log!("tool skipped: no name: {}", short(tool)),
            McpToolSkip::BadHeaderAnnotation => {
                log!(
                    "tool skipped: a bad x-mcp-header annotation: {}",
                    short(tool)
                )
            }
            McpToolSkip::HeaderTableFull { cap } => log!(
                "tool skipped: its x-mcp-header parameters exceed {cap} bytes: {}",
                short(tool)
            ),
        },
        McpEvent::Ready { tools } => {
            log!("ready: {tools} tools");
            return Some(Ok(*tools));
        }
        // The wrapper's tools were fixed at start: a tool new in the list is not served.
        McpEvent::ToolsChanged { tools } => log!("tools changed: {tools} tools"),
        McpEvent::StartFailed(e) => return Some(Err(start_error(e))),
        McpEvent::Notification { method, params } => {
            let method = crate::lines::text(*method);
            match params {
                Some(p) => log!("notification: {method} {}", short(p)),
                None => log!("notification: {method}"),
            }
        }
    }
    None
}

/// Drives the client's start-up to `Ready`: the listed tools, in the server's order.
pub fn start_up(io: &mut Io, client: &mut McpClient<'_>) -> Result<Vec<Listed>, StartFail> {
    client
        .start(io.now())
        .map_err(|e| StartFail::Other(e.to_string()))?;
    let deadline = std::time::Instant::now() + STARTUP_TIMEOUT;
    let mut names = Vec::new();
    loop {
        // What the last line owes: events, then lines for the server.
        loop {
            let mut moved = false;
            while let Some(ev) = client.poll_event() {
                moved = true;
                if let McpEvent::Tool { name, tool } = ev {
                    names.push(Listed {
                        name: name.to_string(),
                        entry: tool.to_vec(),
                    });
                }
                match log_event(&ev) {
                    Some(Ok(_)) => {
                        io.write_lines(client);
                        return Ok(names);
                    }
                    Some(Err(why)) => return Err(StartFail::Other(why)),
                    None => {}
                }
            }
            moved |= io.write_lines(client);
            if !moved {
                break;
            }
        }
        if io.server_waiting() {
            if io.feed(client) > 0 {
                continue;
            }
            // Nothing is owed once drained; a line refused now would never be taken. Over
            // HTTP a response waits while another one's message is unfinished.
            if !io.is_http() {
                return Err(StartFail::Other(
                    "the MCP client takes no more input".into(),
                ));
            }
        }
        if io.server_end {
            return Err(StartFail::Closed);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(StartFail::Other(format!(
                "the server was not ready within {} s",
                STARTUP_TIMEOUT.as_secs()
            )));
        }
        // The `server/discover` probe's deadline comes first when it is still awaited.
        let now = io.now();
        let probe = client
            .poll_timeout()
            .map(|t| Duration::from_millis(t.as_millis().saturating_sub(now.as_millis())));
        if probe.is_some_and(|p| p.is_zero()) {
            client.handle_timeout(now);
            continue;
        }
        io.wait(probe.map_or(left, |p| p.min(left)));
    }
}

/// The loop's state besides the client and the wrapper: pipes, buffers, and the frames on
/// their way between the two machines.
pub struct Io {
    t0: std::time::Instant,
    rx: Receiver<Input>,
    /// Kept so the channel never disconnects (`recv_timeout` then only times out).
    _tx: Sender<Input>,
    /// The server's stdin (`None` once closed, or once writing it failed).
    pub server_in: Option<ChildStdin>,
    /// The Streamable HTTP endpoint, instead of a server over stdio.
    http: Option<Http>,
    /// Model bytes, `model[model_at..]` not yet read.
    pub model: Vec<u8>,
    /// Where reading `model` is.
    pub model_at: usize,
    /// The model's bytes ended.
    pub model_end: bool,
    /// Server bytes, `server[server_at..]` not yet fed.
    server: Vec<u8>,
    server_at: usize,
    /// The server's stdout ended.
    pub server_end: bool,
    /// `handle_closed` was called.
    closed_told: bool,
    /// Frames the wrapper routed to an adapter call, for the client.
    to_client: VecDeque<(CallHandle, Vec<u8>)>,
    /// Frames the client wrote for an adapter call, for the wrapper.
    to_wrapper: VecDeque<(CallHandle, Vec<u8>)>,
    /// Tool names of the calls started, by wrapper index (for the logs).
    names: HashMap<u32, String>,
    wbuf: Vec<u8>,
    fbuf: Vec<u8>,
    lbuf: Vec<u8>,
}

/// A frame's type, for the logs (the core writes canonical frames: `{"type":"…"`).
pub fn frame_type(frame: &[u8]) -> &str {
    let rest = frame.strip_prefix(b"{\"type\":\"").unwrap_or(b"");
    let end = rest.iter().position(|&b| b == b'"').unwrap_or(0);
    std::str::from_utf8(&rest[..end]).unwrap_or("?")
}

/// The content of a canonical frame (`{"type":"…","content":C}`), for the logs.
pub fn frame_content(frame: &[u8]) -> &[u8] {
    let at = frame
        .windows(10)
        .position(|w| w == b"\"content\":")
        .map_or(frame.len(), |p| p + 10);
    let body = &frame[at.min(frame.len())..];
    body.strip_suffix(b"}").unwrap_or(body)
}

impl Io {
    fn new(
        rx: Receiver<Input>,
        tx: Sender<Input>,
        server_in: Option<ChildStdin>,
        wcfg: &WrapperConfig,
        mcfg: &McpConfig,
    ) -> Self {
        Io {
            t0: std::time::Instant::now(),
            rx,
            _tx: tx,
            server_in,
            http: None,
            model: Vec::new(),
            model_at: 0,
            model_end: false,
            server: Vec::new(),
            server_at: 0,
            server_end: false,
            closed_told: false,
            to_client: VecDeque::new(),
            to_wrapper: VecDeque::new(),
            names: HashMap::new(),
            wbuf: vec![0; wcfg.max_frame_len()],
            fbuf: vec![0; mcfg.max_frame_len()],
            lbuf: vec![0; mcfg.max_line_len()],
        }
    }

    /// Now, as the core's clock: milliseconds since the start.
    pub fn now(&self) -> Instant {
        Instant::from_millis(self.t0.elapsed().as_millis() as u64)
    }

    /// Takes what a pump sent.
    pub fn take(&mut self, input: Input) {
        match input {
            Input::Model(bytes) => self.model.extend_from_slice(&bytes),
            Input::ModelEnd => self.model_end = true,
            Input::Server(bytes) => {
                if self.server_at == self.server.len() {
                    self.server.clear();
                    self.server_at = 0;
                }
                self.server.extend_from_slice(&bytes)
            }
            Input::ServerEnd => self.server_end = true,
            Input::Http(piece) => {
                if let Some(http) = self.http.as_mut() {
                    http.take(piece);
                }
            }
        }
    }

    /// Waits up to `timeout` for input, then takes everything that came.
    pub fn wait(&mut self, timeout: Duration) {
        match self.rx.recv_timeout(timeout) {
            Ok(input) => self.take(input),
            Err(RecvTimeoutError::Timeout) => return,
            // Never: `_tx` keeps the channel open.
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(timeout),
        }
        while let Ok(input) = self.rx.try_recv() {
            self.take(input);
        }
    }

    /// Whether server input waits for the client.
    pub fn server_waiting(&self) -> bool {
        match &self.http {
            Some(http) => http.waiting(),
            None => self.server_at < self.server.len(),
        }
    }

    /// Whether the server is reached over Streamable HTTP.
    pub fn is_http(&self) -> bool {
        self.http.is_some()
    }

    /// Feeds the client server bytes, up to the end of one line (over HTTP, one piece of a
    /// response); returns how many it took.
    pub fn feed(&mut self, client: &mut McpClient<'_>) -> usize {
        if let Some(http) = self.http.as_mut() {
            return http.feed(client);
        }
        let n = client.feed(&self.server[self.server_at..]);
        self.server_at += n;
        if self.server_at == self.server.len() {
            self.server.clear();
            self.server_at = 0;
        }
        n
    }

    /// Writes every line the client has for the server (over HTTP: makes every POST it
    /// asks for); true when there was one.
    pub fn write_lines(&mut self, client: &mut McpClient<'_>) -> bool {
        if let Some(http) = self.http.as_mut() {
            return http.post(client);
        }
        let mut any = false;
        loop {
            let n = match client.poll_transmit(&mut self.lbuf) {
                Ok(Some(n)) => n,
                Ok(None) => return any,
                Err(e) => {
                    // Never: the buffer is `max_line_len` long.
                    log!("a line of {} bytes exceeds the line buffer", e.needed);
                    self.lbuf.resize(e.needed, 0);
                    continue;
                }
            };
            any = true;
            if let Some(stdin) = self.server_in.as_mut() {
                if let Err(e) = stdin
                    .write_all(&self.lbuf[..n])
                    .and_then(|()| stdin.flush())
                {
                    log!("writing to the server: {e}");
                    self.server_in = None;
                }
            }
        }
    }

    /// The tool name a call was started under (`?` for a call this host never saw).
    pub fn name_of(&self, h: CallHandle) -> &str {
        self.names.get(&h.index()).map_or("?", String::as_str)
    }

    /// Moves everything the two machines owe until nothing moves: the wrapper's frames out
    /// (stdout, or the client), the client's lines to the server and its frames to the
    /// wrapper, the client's events to the log.
    pub fn pump<H: Host>(
        &mut self,
        client: &mut McpClient<'_>,
        wrapper: &mut Wrapper<'_>,
        now: Instant,
        host: &mut H,
    ) -> Result<(), H::Error> {
        loop {
            let mut moved = false;
            // The wrapper's frames.
            loop {
                let t = match wrapper.poll_transmit(&mut self.wbuf) {
                    Ok(Some(t)) => t,
                    Ok(None) => break,
                    Err(e) => {
                        // Never: the buffer is `max_frame_len` long.
                        self.wbuf.resize(e.needed, 0);
                        continue;
                    }
                };
                moved = true;
                let frame = &self.wbuf[..t.len];
                match t.route {
                    Route::Model | Route::Consumer => host.emit(t.route, frame)?,
                    Route::Adapter(h) => self.to_client.push_back((h, frame.to_vec())),
                }
            }
            while let Some(Event::CallStarted { handle, name, .. }) = wrapper.poll_event() {
                moved = true;
                self.names.insert(handle.index(), name.to_string());
            }
            // Frames for the client.
            while let Some((h, frame)) = self.to_client.pop_front() {
                // A tool the model knows by a mapped name is called by its own (SPEC §10.1).
                let tool = self.names.get(&h.index()).and_then(|n| host.server_name(n));
                let handled = match &tool {
                    Some(tool) => client.handle_frame_as(h, &frame, tool),
                    None => client.handle_frame(h, &frame),
                };
                match handled {
                    Ok(handled) => {
                        moved = true;
                        self.log_handled(h, &frame, handled);
                        if let McpHandled::Cancelled { .. } = handled {
                            self.names.remove(&h.index());
                        }
                    }
                    Err(McpError::OutboxFull { .. }) if client.queued() > 0 => {
                        // Its room comes back once the lines waiting are written.
                        self.write_lines(client);
                        self.to_client.push_front((h, frame));
                        moved = true;
                    }
                    Err(McpError::FramePending) => {
                        // A call failed at once waits in `poll_frame`, below.
                        self.to_client.push_front((h, frame));
                        break;
                    }
                    Err(McpError::UnknownCall) => {
                        moved = true;
                        log!(
                            "call {}: {} after the client ended the call",
                            h.index(),
                            frame_type(&frame)
                        );
                    }
                    Err(e) => {
                        moved = true;
                        log!(
                            "call {}: the MCP client refused its {}: {e}",
                            h.index(),
                            frame_type(&frame)
                        );
                    }
                }
            }
            moved |= self.write_lines(client);
            // The client's frames, for the wrapper.
            loop {
                match client.poll_frame(&mut self.fbuf) {
                    Ok(Some(f)) => {
                        moved = true;
                        let frame = self.fbuf[..f.len].to_vec();
                        self.to_wrapper.push_back((f.handle, frame));
                    }
                    Ok(None) => break,
                    Err(e) => self.fbuf.resize(e.needed, 0),
                }
            }
            while let Some((h, frame)) = self.to_wrapper.pop_front() {
                if matches!(frame_type(&frame), "END" | "ERROR") {
                    // The call's last frame from the client.
                    self.names.remove(&h.index());
                }
                match wrapper.handle_adapter_frame(now, h, &frame) {
                    Ok(()) => {
                        moved = true;
                        self.log_frame(h, &frame);
                    }
                    Err(Error::QueueFull { .. }) if wrapper.queued() > 0 => {
                        // Drained at the top of the next round.
                        self.to_wrapper.push_front((h, frame));
                        moved = true;
                        break;
                    }
                    Err(e) => {
                        moved = true;
                        log!(
                            "call {}: its {} from the server came too late: {e}",
                            h.index(),
                            frame_type(&frame)
                        );
                    }
                }
            }
            while let Some(ev) = client.poll_event() {
                moved = true;
                // A re-listing's tools are not served (the wrapper's are fixed at start):
                // only its count is logged, with `ToolsChanged`.
                if matches!(ev, McpEvent::Tool { .. } | McpEvent::ToolSkipped { .. }) {
                    continue;
                }
                if let Some(Err(why)) = log_event(&ev) {
                    log!("{why}");
                }
            }
            if !moved {
                return Ok(());
            }
        }
    }

    fn log_handled(&self, h: CallHandle, frame: &[u8], handled: McpHandled) {
        let (i, name) = (h.index(), self.name_of(h));
        match handled {
            McpHandled::Sent { request } => log!("call {i}: {name} sent as request {request}"),
            McpHandled::Failed(why) => log!("call {i}: {name} failed at once: {why:?}"),
            McpHandled::Cancelled { notified: true } => log!(
                "call {i}: {name} cancelled ({}), server notified",
                short(frame_content(frame))
            ),
            McpHandled::Cancelled { notified: false } => {
                log!("call {i}: {name} cancelled before its request went out")
            }
        }
    }

    fn log_frame(&self, h: CallHandle, frame: &[u8]) {
        let i = h.index();
        match frame_type(frame) {
            "END" => {}
            "PROGRESS" => log!("call {i}: progress {}", short(frame_content(frame))),
            "ERROR" => log!("call {i}: error {}", short(frame_content(frame))),
            other => log!("call {i}: {other}"),
        }
    }

    /// Gives the wrapper the clock while a deadline is due, draining after each.
    pub fn timeouts<H: Host>(
        &mut self,
        client: &mut McpClient<'_>,
        wrapper: &mut Wrapper<'_>,
        now: Instant,
        host: &mut H,
    ) -> Result<(), H::Error> {
        while wrapper.poll_timeout().is_some_and(|t| t <= now) {
            match wrapper.handle_timeout(now) {
                Ok(()) => {}
                Err(Error::QueueFull { .. }) if wrapper.queued() > 0 => {}
                Err(e) => {
                    log!("timeouts refused: {e}");
                    return Ok(());
                }
            }
            self.pump(client, wrapper, now, host)?;
        }
        Ok(())
    }

    /// One model frame through the wrapper's response path.
    pub fn model_frame<H: Host>(
        &mut self,
        client: &mut McpClient<'_>,
        wrapper: &mut Wrapper<'_>,
        now: Instant,
        line: &[u8],
        host: &mut H,
    ) -> Result<(), H::Error> {
        loop {
            match wrapper.handle_response(now, line) {
                Ok(Disposition::Forward) => host.emit(Route::Consumer, line)?,
                Ok(Disposition::Held | Disposition::Intercepted { .. }) => {}
                Err(Error::QueueFull { .. }) if wrapper.queued() > 0 => {
                    self.pump(client, wrapper, now, host)?;
                    continue;
                }
                Err(Error::Malformed(e)) => {
                    log!("model frame rejected ({e}): {}", short(line));
                    host.rejected(line)?;
                }
                Err(e) => log!("model frame refused ({e}): {}", short(line)),
            }
            return self.pump(client, wrapper, now, host);
        }
    }

    /// The loop's state with no server (a host whose model has no MCP tools).
    pub fn without_server(wcfg: &WrapperConfig, mcfg: &McpConfig) -> Io {
        let (tx, rx) = mpsc::channel();
        Io::new(rx, tx, None, wcfg, mcfg)
    }

    /// The loop's state for a server at the Streamable HTTP endpoint `url`.
    pub fn over_http(url: &str, wcfg: &WrapperConfig, mcfg: &McpConfig) -> Io {
        let (tx, rx) = mpsc::channel();
        let http = Http::new(url, tx.clone(), mcfg.max_line_len(), mcfg.max_headers_len());
        Io {
            http: Some(http),
            ..Io::new(rx, tx, None, wcfg, mcfg)
        }
    }

    /// A sender on the loop's channel, for a thread that brings the model's bytes.
    pub fn sender(&self) -> Sender<Input> {
        self._tx.clone()
    }

    /// No frame is on its way between the client and the wrapper.
    pub fn idle(&self) -> bool {
        self.to_client.is_empty() && self.to_wrapper.is_empty()
    }

    /// Feeds the client every server line that came, moving what each owes; tells it once
    /// when the server's stdout has ended. Over HTTP: every piece of a response that came
    /// and that the client takes now.
    pub fn serve_server<H: Host>(
        &mut self,
        client: &mut McpClient<'_>,
        wrapper: &mut Wrapper<'_>,
        now: Instant,
        host: &mut H,
    ) -> Result<(), H::Error> {
        if self.is_http() {
            // A piece refused now is taken once what the client owes is moved, or once
            // another response's unfinished message is read.
            while self.server_waiting() {
                self.pump(client, wrapper, now, host)?;
                if self.feed(client) == 0 {
                    break;
                }
            }
            return self.pump(client, wrapper, now, host);
        }
        while self.server_waiting() {
            let n = self.feed(client);
            self.pump(client, wrapper, now, host)?;
            if n == 0 && self.feed(client) == 0 {
                log!("the MCP client takes no more input: dropping what the server sent");
                self.server.clear();
                self.server_at = 0;
            }
        }
        if self.server_end && !self.closed_told {
            self.closed_told = true;
            log!("the server closed its stdout");
            client.handle_closed();
            self.pump(client, wrapper, now, host)?;
        }
        Ok(())
    }

    /// Waits for input until the wrapper's next deadline (an hour when it has none).
    pub fn wait_for_input(&mut self, wrapper: &Wrapper<'_>) {
        let wait = match wrapper.poll_timeout() {
            Some(t) => {
                let at = self.t0 + Duration::from_millis(t.as_millis());
                at.saturating_duration_since(std::time::Instant::now())
            }
            None => Duration::from_secs(3600),
        };
        if !wait.is_zero() {
            self.wait(wait);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_parts_for_the_logs() {
        let f = br#"{"type":"CANCEL","content":{"id":"c1","name":"t","reason":"timeout"}}"#;
        assert_eq!(frame_type(f), "CANCEL");
        assert_eq!(
            frame_content(f),
            br#"{"id":"c1","name":"t","reason":"timeout"}"#
        );
        assert_eq!(frame_type(b"{}"), "");
    }
}
