//! `polyweave-mcp`: an MCP server's tools behind a polyweave [`Wrapper`], over the server's
//! stdio or Streamable HTTP — the core's sans-IO MCP client (SPEC §9) driven by a plain `std`
//! host.
//!
//! ```text
//! polyweave-mcp [--revision auto|2025-11-25|2026-07-28] [--timeout-ms T] [--max-total-ms M]
//!               [--extra-tool NAME]... [--no-validate] (-- SERVER [ARG]... | --http URL)
//! ```
//!
//! It starts `SERVER ARG…` as a child (stdin and stdout piped, stderr inherited) — or, with
//! `--http URL`, speaks Streamable HTTP to the endpoint URL (SPEC §9.1 rule 11) — runs the MCP
//! start-up (`server/discover`; then, for a server that does not list 2026-07-28, `initialize`
//! and `notifications/initialized`; `tools/list` with every page), and
//! registers every listed tool as an adapter tool of a [`Wrapper`], with its `inputSchema`
//! (a call whose args break it fails at once with `Tool <name> arguments are invalid: <where>:
//! <why>` and never reaches the server) and its `outputSchema` (a `structuredContent` that
//! breaks it fails the call), SPEC §11. Then it reads the model's
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
//! - `--http URL`: the server is the Streamable HTTP endpoint URL (`http://` or `https://`),
//!   not a child: every message is a POST on its own thread, each response (JSON, or SSE
//!   read as it streams) handed to the client as it arrives; a cancelled 2026-07-28 call's
//!   response is dropped. Give either `--http` or a server command, not both.
//! - `--revision R`: the MCP revision to speak: `auto` (default: what `server/discover`
//!   finds, SPEC §9.9), `2025-11-25` (the `initialize` handshake at once) or `2026-07-28`
//!   (a server that does not list it fails the start).
//! - `--timeout-ms T`: the wrapper's `tool_timeout_ms` (default 30000).
//! - `--max-total-ms M`: its `max_total_timeout_ms` (default 0: progress restarts nothing).
//! - `--extra-tool NAME`: also register `NAME` as an adapter tool although the server did not
//!   list it, so calls to it reach the server (which answers for a name it does not know).
//!   Without it, such a call gets the wrapper's own `Tool "NAME" not found`.
//! - `--no-validate`: check neither args nor results against the tools' schemas. Without
//!   it, a schema the validator refuses (a `$ref` to another document, say) leaves that side
//!   of its tool unchecked, with a log line `tool NAME: its inputSchema is not checked: WHY`.
//!
//! # Exit status
//!
//! 0 when the session ran to its end (whatever the server did after the start-up: a server
//! that dies fails the calls in flight with `Tool <name> failed: the MCP server closed the
//! connection`, and later ones at once — over HTTP, each later call fails by itself, with
//! that text or `Tool <name> failed: HTTP <status>`); 2 for bad arguments, a server that cannot be started,
//! or a start-up that fails (the server refuses, answers an unknown protocol version, exits
//! before it is ready, or is not ready within 20 s); 1 when stdout cannot be written.
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
//! One thread per input pipe (our stdin, the server's stdout; over HTTP, each POST's
//! response) only moves bytes: it reads
//! chunks and sends them over a channel. All protocol logic is in the single sans-IO loop
//! (here, and in the library's `host` module, which `polyweave-agent` shares), which owns
//! the [`McpClient`] and the [`Wrapper`] and moves bytes and frames between
//! them: server bytes → `McpClient::feed` (one line at a time); `McpClient::poll_frame` →
//! `Wrapper::handle_adapter_frame`; `Wrapper::poll_transmit` → stdout, or, for
//! [`Route::Adapter`], `McpClient::handle_frame`; `McpClient::poll_transmit` → the server's stdin.
//! Time is `std::time::Instant` since start, in milliseconds, as the core's
//! `Instant`; the loop sleeps on the channel until the wrapper's `poll_timeout`, and gives
//! the clock to `handle_timeout` before it takes any input.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use polyweave_mcp::host::{
    exit_status, spawn, start_up, stop, Host, Io, StartFail, EXIT_GRACE, MCP, SLOTS, WRAPPER,
};
use polyweave_mcp::http::STREAMS;
use polyweave_mcp::lines;
use polyweave_mcp::log;
use polyweave_mcp::pipes::{spawn_reader, Input};
use polyweave_mcp::schemas::{adapter_tool, index_words, indexed, output_schemas, ToolSchemas};
use polyweave_tool_adapter::mcp::http::McpStream;
use polyweave_tool_adapter::mcp::{McpClient, McpClientInfo, McpConfig, McpRevision, McpSlot};
use polyweave_tool_adapter::wrapper::{Slot, Wrapper, WrapperConfig};
use polyweave_tool_adapter::{NoHooks, Route, Tool};

const USAGE: &str = "usage: polyweave-mcp [--revision auto|2025-11-25|2026-07-28] \
[--timeout-ms T] [--max-total-ms M] [--extra-tool NAME]... [--no-validate] \
(-- SERVER [ARG]... | --http URL)";

/// What the command line asks for.
struct Options {
    timeout_ms: u32,
    max_total_ms: u32,
    extra_tools: Vec<String>,
    /// Check args and results against the tools' schemas (SPEC §11).
    validate: bool,
    revision: McpRevision,
    /// The Streamable HTTP endpoint, instead of a command.
    http: Option<String>,
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
        validate: true,
        revision: McpRevision::Auto,
        http: None,
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
            "--no-validate" => o.validate = false,
            "--http" => o.http = Some(value(flag)?),
            "--revision" => {
                o.revision = match value(flag)?.as_str() {
                    "auto" => McpRevision::Auto,
                    "2025-11-25" => McpRevision::V2025_11_25,
                    "2026-07-28" => McpRevision::V2026_07_28,
                    v => return Err(format!("--revision {v:?}: auto, 2025-11-25 or 2026-07-28")),
                }
            }
            _ => return Err(format!("unknown option {flag:?}")),
        }
    }
    o.command.extend(args);
    match (&o.http, o.command.is_empty()) {
        (None, true) => Err("no server: give a command after -- or --http URL".into()),
        (Some(_), false) => Err("both --http and a server command: give one".into()),
        _ => Ok(Parsed::Run(o)),
    }
}

/// Why the program stops early.
enum Fail {
    /// Bad arguments, or a server that could not be started: exit 2.
    Start(String),
    /// Stdout failed: exit 1.
    Io(String),
}

fn main() -> ExitCode {
    lines::set_program("polyweave-mcp");
    let opts = match parse_args(std::env::args_os().skip(1)) {
        Ok(Parsed::Run(o)) => o,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            log!("{e} (see --help)");
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
    let mcfg = McpConfig {
        revision: opts.revision,
        ..MCP.fit(&wcfg)
    };
    if let Some(long) = opts.extra_tools.iter().find(|n| n.len() > wcfg.name_cap) {
        return Err(Fail::Start(format!(
            "--extra-tool {long:?}: longer than {} bytes",
            wcfg.name_cap
        )));
    }

    let mut mcp_slots = vec![McpSlot::EMPTY; SLOTS];
    let mut mcp_arena = vec![0u8; mcfg.arena_len(SLOTS)];
    let mut streams = vec![McpStream::EMPTY; STREAMS];
    let info = McpClientInfo {
        name: "polyweave-mcp",
        version: env!("CARGO_PKG_VERSION"),
    };
    let client = match &opts.http {
        Some(_) => McpClient::new_http(mcfg, info, &mut mcp_slots, &mut streams, &mut mcp_arena),
        None => McpClient::new(mcfg, info, &mut mcp_slots, &mut mcp_arena),
    };
    let mut client = client.map_err(|e| Fail::Start(format!("MCP client: {e}")))?;

    let (mut child, mut io) = match &opts.http {
        Some(url) => (None, Io::over_http(url, &wcfg, &mcfg)),
        None => {
            let (child, io) = spawn(&opts.command, &wcfg, &mcfg).map_err(Fail::Start)?;
            (Some(child), io)
        }
    };
    if let Err(e) = spawn_reader(
        io::stdin(),
        io.sender(),
        Input::Model,
        Input::ModelEnd,
        "stdin",
    ) {
        child.as_mut().map(stop);
        return Err(Fail::Start(format!("cannot start the pipe threads: {e}")));
    }

    let listed = match start_up(&mut io, &mut client) {
        Ok(listed) => listed,
        Err(e) => {
            let why = match (e, child.as_mut()) {
                (StartFail::Closed, Some(child)) => {
                    let status = exit_status(child, Duration::from_secs(1));
                    format!("the server exited before it was ready ({status})")
                }
                (StartFail::Closed, None) => "the server closed the connection".into(),
                (StartFail::Other(why), _) => why,
            };
            child.as_mut().map(stop);
            return Err(Fail::Start(format!("start-up failed: {why}")));
        }
    };
    let mut names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
    for extra in &opts.extra_tools {
        if !names.contains(&extra.as_str()) {
            log!("extra tool: {extra}");
            names.push(extra);
        }
    }
    // The listed tools come first in `names`, in the order of their schemas.
    let read: Vec<ToolSchemas<'_>> = match opts.validate {
        true => listed.iter().map(ToolSchemas::read).collect(),
        false => Vec::new(),
    };
    // Each schema indexed, for as long as the wrapper and the client check with it.
    let mut index = vec![0u32; index_words(&read)];
    let schemas = indexed(read, &mut index);
    let tools: Vec<Tool<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, n)| adapter_tool(n, schemas.get(i).and_then(|s| s.input.as_ref())))
        .collect();
    let outputs = output_schemas(&names, &schemas);
    client.set_output_schemas(&outputs);
    let mut slots = vec![Slot::EMPTY; SLOTS];
    let mut arena = vec![0u8; wcfg.arena_len(SLOTS)];
    let mut wrapper = match Wrapper::new(wcfg, &tools, NoHooks, &mut slots, &mut arena) {
        Ok(w) => w,
        Err(e) => {
            child.as_mut().map(stop);
            return Err(Fail::Start(format!("wrapper: {e}")));
        }
    };

    let mut out = Stdout(BufWriter::new(io::stdout()));
    let served = serve(&mut io, &mut client, &mut wrapper, &mut out);
    log!("client stats: {:?}", client.stats());
    if let Some(child) = child.as_mut() {
        // Closing its stdin tells the server to go.
        drop(io.server_in.take());
        log!("server {}", exit_status(child, EXIT_GRACE));
    }
    served
}

/// Our stdout: SPEC §6 event lines.
struct Stdout(BufWriter<io::Stdout>);

impl Stdout {
    fn write(&mut self, line: &[u8]) -> Result<(), Fail> {
        self.0
            .write_all(line)
            .map_err(|e| Fail::Io(format!("writing stdout: {e}")))
    }
}

impl Host for Stdout {
    type Error = Fail;

    fn emit(&mut self, to: Route, frame: &[u8]) -> Result<(), Fail> {
        let to = if matches!(to, Route::Model) {
            "model"
        } else {
            "consumer"
        };
        self.write(&lines::event(to, frame))
    }

    fn rejected(&mut self, _frame: &[u8]) -> Result<(), Fail> {
        self.write(lines::REJECTED)
    }
}

fn next_model_line(io: &mut Io) -> Option<Vec<u8>> {
    loop {
        let rest = &io.model[io.model_at..];
        let (len, taken) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (i, i + 1),
            None if io.model_end && !rest.is_empty() => (rest.len(), rest.len()),
            None => {
                // What is left is the start of a line: keep only that.
                io.model.drain(..io.model_at);
                io.model_at = 0;
                return None;
            }
        };
        let mut line = rest[..len].to_vec();
        io.model_at += taken;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            return Some(line);
        }
    }
}

/// Whether the session is over: stdin ended and nothing is pending or on its way.
fn done(io: &Io, wrapper: &Wrapper<'_>) -> bool {
    io.model_end
        && io.model_at == io.model.len()
        && wrapper.pending() == 0
        && wrapper.queued() == 0
        && io.idle()
}

/// The serving loop: until stdin has ended and nothing is pending.
fn serve(
    io: &mut Io,
    client: &mut McpClient<'_>,
    wrapper: &mut Wrapper<'_>,
    out: &mut Stdout,
) -> Result<(), Fail> {
    loop {
        let now = io.now();
        // The clock first: a frame at a call's deadline comes too late (SPEC §7.5).
        io.timeouts(client, wrapper, now, out)?;
        io.pump(client, wrapper, now, out)?;
        io.serve_server(client, wrapper, now, out)?;
        while let Some(line) = next_model_line(io) {
            io.model_frame(client, wrapper, now, &line, out)?;
        }
        out.0
            .flush()
            .map_err(|e| Fail::Io(format!("writing stdout: {e}")))?;
        if done(io, wrapper) {
            return Ok(());
        }
        io.wait_for_input(wrapper);
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
            "--no-validate",
            "--",
            "node",
            "--x",
            "stdio",
        ]) else {
            panic!()
        };
        assert_eq!((o.timeout_ms, o.max_total_ms), (1500, 9000));
        assert_eq!(o.extra_tools, ["nope"]);
        assert!(!o.validate);
        assert_eq!(o.command, ["node", "--x", "stdio"]);
        let Ok(Parsed::Run(o)) = parse(&["server"]) else {
            panic!()
        };
        assert_eq!((o.timeout_ms, o.max_total_ms), (30_000, 0));
        assert!(o.validate);
        assert_eq!(o.revision, McpRevision::Auto);
        for (flag, revision) in [
            ("auto", McpRevision::Auto),
            ("2025-11-25", McpRevision::V2025_11_25),
            ("2026-07-28", McpRevision::V2026_07_28),
        ] {
            let Ok(Parsed::Run(o)) = parse(&["--revision", flag, "--", "s"]) else {
                panic!("{flag}")
            };
            assert_eq!(o.revision, revision);
        }
        assert_eq!(
            parse(&["--revision", "2024-11-05", "--", "s"])
                .err()
                .as_deref(),
            Some("--revision \"2024-11-05\": auto, 2025-11-25 or 2026-07-28")
        );
        assert!(parse(&["--timeout-ms", "x", "--", "s"]).is_err());
        assert_eq!(
            parse(&["--"]).err().as_deref(),
            Some("no server: give a command after -- or --http URL")
        );
        let Ok(Parsed::Run(o)) = parse(&["--http", "http://127.0.0.1:1/mcp", "--timeout-ms", "9"])
        else {
            panic!()
        };
        assert_eq!(o.http.as_deref(), Some("http://127.0.0.1:1/mcp"));
        assert!(o.command.is_empty());
        assert_eq!(
            parse(&["--http", "http://h/mcp", "--", "s"])
                .err()
                .as_deref(),
            Some("both --http and a server command: give one")
        );
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
}
