//! `polyweave-mcp`: an MCP server's tools behind a polyweave [`Wrapper`], over the server's
//! stdio — the core's sans-IO MCP client (SPEC §9) driven by a plain `std` host.
//!
//! ```text
//! polyweave-mcp [--timeout-ms T] [--max-total-ms M] [--extra-tool NAME]... -- SERVER [ARG]...
//! ```
//!
//! It starts `SERVER ARG…` as a child (stdin and stdout piped, stderr inherited), runs the MCP
//! start-up (`initialize`, `notifications/initialized`, `tools/list` with every page), and
//! registers every listed tool as an adapter tool of a [`Wrapper`]. Then it reads the model's
//! frames (SPEC §1, NDJSON: one frame a line, `\r\n` accepted, blank lines skipped) on stdin,
//! as the wrapper's response path, and writes what the wrapper sends on stdout as SPEC §6
//! events, one per line, in the order they happened:
//!
//! ```text
//! {"to":"model","frame":F}       a TOOL_RESULT, the continue prompt
//! {"to":"consumer","frame":F}    a frame the wrapper forwards (the model's own, as parsed),
//!                                the mirrored prompt, a released END
//! {"rejected":{"path":"response"}}  a malformed model frame
//! ```
//!
//! Frames are printed as the replay program prints them: a valid JSON value without its
//! insignificant white space, anything else as a JSON string of its text. A model
//! `TOOL_CALL` for a listed tool becomes a `tools/call` request; its answer, progress
//! (`notifications/progress`, which restarts the call's timeout when `--max-total-ms` is
//! set, SPEC §5) and the wrapper's timeouts and `CANCEL`s (`notifications/cancelled`) are
//! served as they come, every call in flight over the one connection. It runs until stdin
//! has ended and nothing is pending, then closes the server's stdin and waits for it to exit
//! (killing it after 5 s).
//!
//! # Options
//!
//! - `--timeout-ms T`: the wrapper's `tool_timeout_ms` (default 30000).
//! - `--max-total-ms M`: its `max_total_timeout_ms` (default 0: progress restarts nothing).
//! - `--extra-tool NAME`: also register `NAME` as an adapter tool although the server did not
//!   list it, so calls to it reach the server (which answers for a name it does not know).
//!   Without it, such a call gets the wrapper's own `Tool "NAME" not found`.
//!
//! # Exit status
//!
//! 0 when the session ran to its end (whatever the server did after the start-up: a server
//! that dies fails the calls in flight with `Tool <name> failed: the MCP server closed the
//! connection`, and later ones at once); 2 for bad arguments, a server that cannot be started,
//! or a start-up that fails (the server refuses, answers an unknown protocol version, exits
//! before it is ready, or is not ready within 10 s); 1 when stdout cannot be written.
//!
//! # Logs
//!
//! Everything besides the events goes to stderr, one short line each, prefixed
//! `polyweave-mcp: ` — `initialized: …`, `tool: NAME` for every listed tool, `ready: N tools`,
//! `notification: METHOD …`, and per call (by its wrapper index) `call N: …` for the request
//! it became, its progress, its answer, and `cancelled (server notified)` when
//! `notifications/cancelled` went out. The server's own stderr is inherited.
//!
//! # Design
//!
//! One thread per input pipe (our stdin, the server's stdout) only moves bytes: it reads
//! chunks and sends them over a channel. All protocol logic is in the single sans-IO loop
//! here, which owns the [`McpClient`] and the [`Wrapper`] and moves bytes and frames between
//! them: server bytes → `McpClient::feed` (one line at a time); `McpClient::poll_frame` →
//! `Wrapper::handle_adapter_frame`; `Wrapper::poll_transmit` → stdout, or, for
//! [`Route::Adapter`], `McpClient::handle_frame`; `McpClient::poll_transmit` → the server's stdin.
//! Time is `std::time::Instant` since start, in milliseconds, as the core's
//! [`Instant`]; the loop sleeps on the channel until the wrapper's `poll_timeout`, and gives
//! the clock to `handle_timeout` before it takes any input.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

mod lines;
mod pipes;

use lines::{log, short};
use pipes::{spawn_reader, Input};
use polyweave_tool_adapter::json::DEFAULT_MAX_DEPTH;
use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpError, McpEvent, McpHandled, McpSlot, McpStartError,
    McpToolSkip, CANCEL_LINE_BOUND, OUTBOX_HEADER,
};
use polyweave_tool_adapter::wrapper::{Disposition, Event, Slot, Wrapper, WrapperConfig};
use polyweave_tool_adapter::{CallHandle, Error, Instant, NoHooks, Route, Tool};

const USAGE: &str = "usage: polyweave-mcp [--timeout-ms T] [--max-total-ms M] \
[--extra-tool NAME]... -- SERVER [ARG]...";

/// Calls pending at once (wrapper slots, and as many MCP call slots).
const SLOTS: usize = 16;
/// Bytes of a tool name and of a call id.
const NAME_CAP: usize = 256;
/// Bytes of a call's args, compact.
const ARGS_CAP: usize = 64 * 1024;
/// Bytes of the longest line the server may send (a whole `tools/list` page, a result).
const LINE_CAP: usize = 1024 * 1024;
/// Bytes of a result: as long as a line can carry.
const RESULT_CAP: usize = LINE_CAP;
/// Bytes of an error message.
const MESSAGE_CAP: usize = 64 * 1024;

/// The wrapper's capacities (its timeouts come from the command line).
const WRAPPER: WrapperConfig = WrapperConfig {
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
const MCP: McpConfig = McpConfig {
    line_cap: LINE_CAP,
    // Every slot's `tools/call` (its args and around them), or its `notifications/cancelled`.
    outbox_cap: SLOTS * (ARGS_CAP + 6 * NAME_CAP + 256 + CANCEL_LINE_BOUND + 2 * OUTBOX_HEADER),
    name_cap: NAME_CAP,
    cursor_cap: 4096,
    max_depth: DEFAULT_MAX_DEPTH,
};

/// How long the start-up may take.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the server may take to exit once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// What the command line asks for.
struct Options {
    timeout_ms: u32,
    max_total_ms: u32,
    extra_tools: Vec<String>,
    command: Vec<OsString>,
}

enum Parsed {
    Run(Options),
    Help,
}

fn parse_args(mut args: impl Iterator<Item = OsString>) -> Result<Parsed, String> {
    let mut o = Options {
        timeout_ms: WRAPPER.tool_timeout_ms,
        max_total_ms: 0,
        extra_tools: Vec::new(),
        command: Vec::new(),
    };
    while let Some(arg) = args.next() {
        let Some(flag) = arg.to_str().filter(|a| a.starts_with('-')) else {
            // The server's command starts at the first argument that is no option.
            o.command.push(arg);
            break;
        };
        let mut value = |what: &str| {
            args.next()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| format!("{what} needs a value"))
        };
        let ms = |what: &str, v: String| {
            v.parse::<u32>()
                .map_err(|_| format!("{what} {v:?}: not a number of milliseconds"))
        };
        match flag {
            "--" => break,
            "-h" | "--help" => return Ok(Parsed::Help),
            "--timeout-ms" => o.timeout_ms = ms(flag, value(flag)?)?,
            "--max-total-ms" => o.max_total_ms = ms(flag, value(flag)?)?,
            "--extra-tool" => o.extra_tools.push(value(flag)?),
            _ => return Err(format!("unknown option {flag:?}")),
        }
    }
    o.command.extend(args);
    if o.command.is_empty() {
        return Err("no server command (put it after --)".into());
    }
    Ok(Parsed::Run(o))
}

/// Why the program stops early.
enum Fail {
    /// Bad arguments, or a server that could not be started: exit 2.
    Start(String),
    /// Stdout failed: exit 1.
    Io(String),
}

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args_os().skip(1)) {
        Ok(Parsed::Run(o)) => o,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            log!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::Start(e)) => {
            log!("{e}");
            ExitCode::from(2)
        }
        Err(Fail::Io(e)) => {
            log!("{e}");
            ExitCode::from(1)
        }
    }
}

fn run(opts: Options) -> Result<(), Fail> {
    let wcfg = WrapperConfig {
        tool_timeout_ms: opts.timeout_ms,
        max_total_timeout_ms: opts.max_total_ms,
        ..WRAPPER
    };
    let mcfg = MCP.fit(&wcfg);
    if let Some(long) = opts.extra_tools.iter().find(|n| n.len() > wcfg.name_cap) {
        return Err(Fail::Start(format!(
            "--extra-tool {long:?}: longer than {} bytes",
            wcfg.name_cap
        )));
    }

    let mut mcp_slots = vec![McpSlot::EMPTY; SLOTS];
    let mut mcp_arena = vec![0u8; mcfg.arena_len(SLOTS)];
    let info = McpClientInfo {
        name: "polyweave-mcp",
        version: env!("CARGO_PKG_VERSION"),
    };
    let mut client = McpClient::new(mcfg, info, &mut mcp_slots, &mut mcp_arena)
        .map_err(|e| Fail::Start(format!("MCP client: {e}")))?;

    let mut child = Command::new(&opts.command[0])
        .args(&opts.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Fail::Start(format!("cannot start {:?}: {e}", opts.command[0])))?;
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
        })
        .and_then(|()| {
            spawn_reader(
                io::stdin(),
                tx.clone(),
                Input::Model,
                Input::ModelEnd,
                "stdin",
            )
        });
    if let Err(e) = started {
        stop(&mut child);
        return Err(Fail::Start(format!("cannot start the pipe threads: {e}")));
    }
    let mut io = Io::new(rx, tx, child.stdin.take(), &wcfg, &mcfg);

    let mut names = match start_up(&mut io, &mut client) {
        Ok(names) => names,
        Err(e) => {
            let why = match e {
                StartFail::Closed => {
                    let status = exit_status(&mut child, Duration::from_secs(1));
                    format!("the server exited before it was ready ({status})")
                }
                StartFail::Other(why) => why,
            };
            stop(&mut child);
            return Err(Fail::Start(format!("start-up failed: {why}")));
        }
    };
    for extra in opts.extra_tools {
        if !names.contains(&extra) {
            log!("extra tool: {extra}");
            names.push(extra);
        }
    }
    let tools: Vec<Tool<'_>> = names.iter().map(|n| Tool::adapter(n)).collect();
    let mut slots = vec![Slot::EMPTY; SLOTS];
    let mut arena = vec![0u8; wcfg.arena_len(SLOTS)];
    let mut wrapper = match Wrapper::new(wcfg, &tools, NoHooks, &mut slots, &mut arena) {
        Ok(w) => w,
        Err(e) => {
            stop(&mut child);
            return Err(Fail::Start(format!("wrapper: {e}")));
        }
    };

    let served = io.serve(&mut client, &mut wrapper);
    log!("client stats: {:?}", client.stats());
    // Closing its stdin tells the server to go.
    drop(io.server_in.take());
    let status = exit_status(&mut child, EXIT_GRACE);
    log!("server {status}");
    served
}

/// Kills the server and reaps it.
fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// How the server ended, waiting up to `grace` for it (then killing it).
fn exit_status(child: &mut Child, grace: Duration) -> String {
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

fn describe_exit(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("ended: {status}"),
    }
}

/// Why the start-up did not reach `Ready`.
enum StartFail {
    /// The server's stdout ended.
    Closed,
    Other(String),
}

fn start_error(e: &McpStartError<'_>) -> String {
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
        other => format!("{other:?}"),
    }
}

/// Logs an event of the client's; `Ready` gives the tool count, `StartFailed` its reason.
fn log_event(ev: &McpEvent<'_>) -> Option<Result<u32, String>> {
    match ev {
        McpEvent::Initialized {
            protocol_version,
            result,
        } => {
            let server = polyweave_tool_adapter::json::find_member(result, b"serverInfo", 32)
                .ok()
                .flatten();
            let name = server.and_then(|s| lines::member_text(s, b"name"));
            let version = server.and_then(|s| lines::member_text(s, b"version"));
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
        },
        McpEvent::Ready { tools } => {
            log!("ready: {tools} tools");
            return Some(Ok(*tools));
        }
        McpEvent::StartFailed(e) => return Some(Err(start_error(e))),
        McpEvent::Notification { method, params } => {
            let method = lines::text(*method);
            match params {
                Some(p) => log!("notification: {method} {}", short(p)),
                None => log!("notification: {method}"),
            }
        }
    }
    None
}

/// Drives the client's start-up to `Ready`: the listed tools' names.
fn start_up(io: &mut Io, client: &mut McpClient<'_>) -> Result<Vec<String>, StartFail> {
    client
        .start()
        .map_err(|e| StartFail::Other(e.to_string()))?;
    let deadline = std::time::Instant::now() + STARTUP_TIMEOUT;
    let mut names = Vec::new();
    loop {
        // What the last line owes: events, then lines for the server.
        loop {
            let mut moved = false;
            while let Some(ev) = client.poll_event() {
                moved = true;
                if let McpEvent::Tool { name, .. } = ev {
                    names.push(name.to_string());
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
            if io.feed(client) == 0 {
                // Nothing is owed once drained; a line refused now would never be taken.
                return Err(StartFail::Other(
                    "the MCP client takes no more input".into(),
                ));
            }
            continue;
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
        io.wait(left);
    }
}

/// The loop's state besides the client and the wrapper: pipes, buffers, and the frames on
/// their way between the two machines.
struct Io {
    t0: std::time::Instant,
    rx: Receiver<Input>,
    /// Kept so the channel never disconnects (`recv_timeout` then only times out).
    _tx: Sender<Input>,
    server_in: Option<ChildStdin>,
    out: BufWriter<io::Stdout>,
    /// Model bytes, `model[model_at..]` not yet read as frames.
    model: Vec<u8>,
    model_at: usize,
    model_end: bool,
    /// Server bytes, `server[server_at..]` not yet fed.
    server: Vec<u8>,
    server_at: usize,
    server_end: bool,
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
fn frame_type(frame: &[u8]) -> &str {
    let rest = frame.strip_prefix(b"{\"type\":\"").unwrap_or(b"");
    let end = rest.iter().position(|&b| b == b'"').unwrap_or(0);
    std::str::from_utf8(&rest[..end]).unwrap_or("?")
}

/// The content of a canonical frame (`{"type":"…","content":C}`), for the logs.
fn frame_content(frame: &[u8]) -> &[u8] {
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
            out: BufWriter::new(io::stdout()),
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
    fn now(&self) -> Instant {
        Instant::from_millis(self.t0.elapsed().as_millis() as u64)
    }

    /// Takes what a pump sent.
    fn take(&mut self, input: Input) {
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
        }
    }

    /// Waits up to `timeout` for input, then takes everything that came.
    fn wait(&mut self, timeout: Duration) {
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

    fn server_waiting(&self) -> bool {
        self.server_at < self.server.len()
    }

    /// Feeds the client server bytes, up to the end of one line; returns how many it took.
    fn feed(&mut self, client: &mut McpClient<'_>) -> usize {
        let n = client.feed(&self.server[self.server_at..]);
        self.server_at += n;
        if self.server_at == self.server.len() {
            self.server.clear();
            self.server_at = 0;
        }
        n
    }

    /// Writes every line the client has for the server; true when there was one.
    fn write_lines(&mut self, client: &mut McpClient<'_>) -> bool {
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

    /// Writes one event line on stdout.
    fn emit(&mut self, line: &[u8]) -> Result<(), Fail> {
        self.out
            .write_all(line)
            .map_err(|e| Fail::Io(format!("writing stdout: {e}")))
    }

    fn name_of(&self, h: CallHandle) -> &str {
        self.names.get(&h.index()).map_or("?", String::as_str)
    }

    /// Moves everything the two machines owe until nothing moves: the wrapper's frames out
    /// (stdout, or the client), the client's lines to the server and its frames to the
    /// wrapper, the client's events to the log.
    fn pump(
        &mut self,
        client: &mut McpClient<'_>,
        wrapper: &mut Wrapper<'_>,
        now: Instant,
    ) -> Result<(), Fail> {
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
                    Route::Model => self.emit(&lines::event("model", frame))?,
                    Route::Consumer => self.emit(&lines::event("consumer", frame))?,
                    Route::Adapter(h) => self.to_client.push_back((h, frame.to_vec())),
                }
            }
            while let Some(Event::CallStarted { handle, name, .. }) = wrapper.poll_event() {
                moved = true;
                self.names.insert(handle.index(), name.to_string());
            }
            // Frames for the client.
            while let Some((h, frame)) = self.to_client.pop_front() {
                match client.handle_frame(h, &frame) {
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
    fn timeouts(
        &mut self,
        client: &mut McpClient<'_>,
        wrapper: &mut Wrapper<'_>,
        now: Instant,
    ) -> Result<(), Fail> {
        while wrapper.poll_timeout().is_some_and(|t| t <= now) {
            match wrapper.handle_timeout(now) {
                Ok(()) => {}
                Err(Error::QueueFull { .. }) if wrapper.queued() > 0 => {}
                Err(e) => {
                    log!("timeouts refused: {e}");
                    return Ok(());
                }
            }
            self.pump(client, wrapper, now)?;
        }
        Ok(())
    }

    /// The next model frame (a line, `\r` dropped, blank ones skipped); at the end of stdin
    /// a last line without its `\n` counts too.
    fn next_model_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let rest = &self.model[self.model_at..];
            let (len, taken) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (i, i + 1),
                None if self.model_end && !rest.is_empty() => (rest.len(), rest.len()),
                None => {
                    // What is left is the start of a line: keep only that.
                    self.model.drain(..self.model_at);
                    self.model_at = 0;
                    return None;
                }
            };
            let mut line = rest[..len].to_vec();
            self.model_at += taken;
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                return Some(line);
            }
        }
    }

    /// One model frame through the wrapper's response path.
    fn model_frame(
        &mut self,
        client: &mut McpClient<'_>,
        wrapper: &mut Wrapper<'_>,
        now: Instant,
        line: &[u8],
    ) -> Result<(), Fail> {
        loop {
            match wrapper.handle_response(now, line) {
                Ok(Disposition::Forward) => self.emit(&lines::event("consumer", line))?,
                Ok(Disposition::Held | Disposition::Intercepted { .. }) => {}
                Err(Error::QueueFull { .. }) if wrapper.queued() > 0 => {
                    self.pump(client, wrapper, now)?;
                    continue;
                }
                Err(Error::Malformed(e)) => {
                    log!("model frame rejected ({e}): {}", short(line));
                    self.emit(lines::REJECTED)?;
                }
                Err(e) => log!("model frame refused ({e}): {}", short(line)),
            }
            return self.pump(client, wrapper, now);
        }
    }

    /// Whether the session is over: stdin ended and nothing is pending or on its way.
    fn done(&self, wrapper: &Wrapper<'_>) -> bool {
        self.model_end
            && self.model_at == self.model.len()
            && wrapper.pending() == 0
            && wrapper.queued() == 0
            && self.to_client.is_empty()
            && self.to_wrapper.is_empty()
    }

    /// The serving loop: until stdin has ended and nothing is pending.
    fn serve(&mut self, client: &mut McpClient<'_>, wrapper: &mut Wrapper<'_>) -> Result<(), Fail> {
        loop {
            let now = self.now();
            // The clock first: a frame at a call's deadline comes too late (SPEC §7.5).
            self.timeouts(client, wrapper, now)?;
            self.pump(client, wrapper, now)?;
            // The server's lines, one at a time.
            while self.server_waiting() {
                let n = self.feed(client);
                self.pump(client, wrapper, now)?;
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
                self.pump(client, wrapper, now)?;
            }
            while let Some(line) = self.next_model_line() {
                self.model_frame(client, wrapper, now, &line)?;
            }
            self.out
                .flush()
                .map_err(|e| Fail::Io(format!("writing stdout: {e}")))?;
            if self.done(wrapper) {
                return Ok(());
            }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Parsed, String> {
        parse_args(args.iter().map(OsString::from))
    }

    #[test]
    fn arguments() {
        let Ok(Parsed::Run(o)) = parse(&[
            "--timeout-ms",
            "1500",
            "--max-total-ms",
            "9000",
            "--extra-tool",
            "nope",
            "--",
            "node",
            "--x",
            "stdio",
        ]) else {
            panic!()
        };
        assert_eq!((o.timeout_ms, o.max_total_ms), (1500, 9000));
        assert_eq!(o.extra_tools, ["nope"]);
        assert_eq!(o.command, ["node", "--x", "stdio"]);
        let Ok(Parsed::Run(o)) = parse(&["server"]) else {
            panic!()
        };
        assert_eq!((o.timeout_ms, o.max_total_ms), (30_000, 0));
        assert!(parse(&["--timeout-ms", "x", "--", "s"]).is_err());
        assert!(parse(&["--"]).is_err());
        assert!(parse(&["--what", "--", "s"]).is_err());
        assert!(matches!(parse(&["-h"]), Ok(Parsed::Help)));
    }

    #[test]
    fn the_two_configurations_fit_each_other() {
        let m = MCP.fit(&WRAPPER);
        assert_eq!(m, MCP);
        let mut slots = vec![McpSlot::EMPTY; SLOTS];
        let mut arena = vec![0u8; m.arena_len(SLOTS)];
        assert!(McpClient::new(m, McpClientInfo::THIS_CRATE, &mut slots, &mut arena).is_ok());
        let tools = [Tool::adapter("echo")];
        let mut ws = vec![Slot::EMPTY; SLOTS];
        let mut wa = vec![0u8; WRAPPER.arena_len(SLOTS)];
        assert!(Wrapper::new(WRAPPER, &tools, NoHooks, &mut ws, &mut wa).is_ok());
    }

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
