//! `polyweave-agent`: a tool-calling agent over a model's HTTP API, with an MCP server's
//! tools — every layer of the core in one `std` host (SPEC §8, §9, §10).
//!
//! ```text
//! polyweave-agent --provider P --url URL --model M [--api-key-env VAR] [--max-turns N]
//!                 [--max-tokens N] [--system TEXT] [--prompt TEXT] [--json] [--no-validate]
//!                 [--mcp-http URL | --tool-from-mcp [--] SERVER [ARG]...]
//! ```
//!
//! It starts the MCP server (a child over its stdio; with `--mcp-http URL`, the server is the
//! Streamable HTTP endpoint URL instead, each message a POST), lists its tools and declares each one
//! as the server sent it (`Declaration::from_mcp`; a name the provider cannot take goes
//! under its mapped name, SPEC §10.1), its `inputSchema` checking the model's calls and its
//! `outputSchema` the results (SPEC §11; `--no-validate` turns both off, and a schema the
//! validator refuses leaves its tool unchecked, with a log line). The user's prompt (`--prompt`, else all of stdin) goes
//! into a `Conversation`; each request's body is written by the library's `Request` straight
//! into the HTTP client's buffer (`Content-Length` is `Request::len`, known before the first
//! byte) and POSTed to URL. The response is read as it arrives: its bytes go through the
//! provider's stream decoder, and each frame into the conversation and into a `Wrapper`
//! whose adapter tools are the server's — the calls go to the server, and the results come
//! back as `TOOL_RESULT` frames, which go into the conversation too. When the response has
//! ended and every call has its result, the next request goes out; a response with no tool
//! call (or `--max-turns` requests) ends the run.
//!
//! # Providers
//!
//! `--provider` is one of `openai-chat` (any OpenAI-compatible server), `openai-responses`,
//! `anthropic`, `gemini`, `ollama`. URL is the endpoint the body is POSTed to
//! (`…/v1/chat/completions`, `…/v1/responses`, `…/v1/messages`, `…/api/chat`), but for
//! `gemini` it is the API's base (`https://generativelanguage.googleapis.com/v1beta`) and the
//! library's `gemini_path` gives the rest. The key, when `--api-key-env VAR` names it, is the
//! value of that environment variable: `Authorization: Bearer` (OpenAI and Responses),
//! `x-api-key` with `anthropic-version: 2023-06-01` (Anthropic), `x-goog-api-key` (Gemini);
//! Ollama takes none.
//!
//! # Output
//!
//! On stdout, the turns as they go: the model's text as it streams, each call, its result,
//! and how each response ended. With `--json`, one JSON object per line instead:
//!
//! ```text
//! {"turn":1,"request":{"url":U,"bytes":N}}     a request went out
//! {"turn":1,"model":F}                         a frame decoded from the response (TEXT,
//!                                              REASONING, TOOL_CALL, END, ERROR, …)
//! {"turn":1,"tool":F}                          a call's TOOL_RESULT (a result or an error)
//! {"done":{"turns":N,"stop":S,"text":T}}       the end: S is "answer" (a response without
//!                                              calls), "max-turns", or "error" (the
//!                                              provider's error ended the response); T the
//!                                              last response's text
//! ```
//!
//! Logs go to stderr, prefixed `polyweave-agent: `.
//!
//! # Exit status
//!
//! 0 when the run ends (an answer, or `--max-turns`); 1 when a request fails (no
//! connection, an HTTP error status: its body is logged), a response ends in the provider's
//! error, or stdout cannot be written; 2 for
//! bad arguments, a server that cannot be started, or a start-up that fails.

use std::ffi::OsString;
use std::io::{self, BufWriter, Read, Write};
use std::process::{Child, ExitCode};
use std::time::Duration;

use polyweave_mcp::host::{
    exit_status, spawn, start_up, stop, Host, Io, Listed, StartFail, EXIT_GRACE, MCP, SLOTS,
    WRAPPER,
};
use polyweave_mcp::http::STREAMS;
use polyweave_mcp::lines::{self, push_string, push_value, short};
use polyweave_mcp::log;
use polyweave_mcp::pipes::{spawn_reader, Input};
use polyweave_mcp::schemas::{adapter_tool, index_words, indexed, output_schemas, ToolSchemas};
use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
use polyweave_tool_adapter::frame::{Frame, FrameKind};
use polyweave_tool_adapter::json::JsonStr;
use polyweave_tool_adapter::mcp::http::McpStream;
use polyweave_tool_adapter::mcp::{McpClient, McpClientInfo, McpSlot};
use polyweave_tool_adapter::request::{
    find_declaration, gemini_path, model_name_of, Conversation, Declaration, Request, RequestError,
    RequestOptions, MAX_NAME,
};
use polyweave_tool_adapter::wrapper::{Slot, Wrapper, WrapperConfig};
use polyweave_tool_adapter::{NoHooks, Provider, Route, Tool};

const USAGE: &str = "usage: polyweave-agent --provider P --url URL --model M \
[--api-key-env VAR] [--max-turns N] [--max-tokens N] [--system TEXT] [--prompt TEXT] [--json] \
[--no-validate] [--mcp-http URL | --tool-from-mcp [--] SERVER [ARG]...]";

/// Bytes of the conversation's memory.
const CONVERSATION: usize = 4 << 20;
/// Bytes of the longest provider event the decoder keeps.
const EVENT_CAP: usize = 1 << 20;

/// What the command line asks for.
#[derive(Debug)]
struct Options {
    provider: Provider,
    url: String,
    model: String,
    api_key_env: Option<String>,
    max_turns: u32,
    max_tokens: Option<u32>,
    system: Option<String>,
    prompt: Option<String>,
    json: bool,
    /// Check the MCP tools' args and results against their schemas (SPEC §11).
    validate: bool,
    server: Vec<OsString>,
    /// The MCP server's Streamable HTTP endpoint, instead of `server`.
    mcp_http: Option<String>,
}

enum Parsed {
    Run(Options),
    Help,
}

fn parse_args(mut args: impl Iterator<Item = OsString>) -> Result<Parsed, String> {
    let (mut provider, mut url, mut model) = (None, None, None);
    let mut o = Options {
        provider: Provider::OpenAiChat,
        url: String::new(),
        model: String::new(),
        api_key_env: None,
        max_turns: 8,
        max_tokens: None,
        system: None,
        prompt: None,
        json: false,
        validate: true,
        server: Vec::new(),
        mcp_http: None,
    };
    while let Some(arg) = args.next() {
        let flag = arg
            .to_str()
            .ok_or_else(|| format!("unknown argument {arg:?}"))?;
        let mut value = |what: &str| {
            args.next()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| format!("{what} needs a value"))
        };
        let number = |what: &str, v: String| {
            v.parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{what} {v:?}: not a positive number"))
        };
        match flag {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--provider" => {
                let p = value(flag)?;
                provider = Some(Provider::from_name(p.as_bytes()).ok_or_else(|| {
                    let names: Vec<_> = Provider::ALL.iter().map(|p| p.name()).collect();
                    format!("unknown provider {p:?} (one of {})", names.join(", "))
                })?);
            }
            "--url" => url = Some(value(flag)?),
            "--model" => model = Some(value(flag)?),
            "--api-key-env" => o.api_key_env = Some(value(flag)?),
            "--max-turns" => o.max_turns = number(flag, value(flag)?)?,
            "--max-tokens" => o.max_tokens = Some(number(flag, value(flag)?)?),
            "--system" => o.system = Some(value(flag)?),
            "--prompt" => o.prompt = Some(value(flag)?),
            "--json" => o.json = true,
            "--no-validate" => o.validate = false,
            "--mcp-http" => o.mcp_http = Some(value(flag)?),
            "--tool-from-mcp" => {
                // The server's command is the rest of the line.
                o.server = args.collect();
                if o.server.first().is_some_and(|a| a == "--") {
                    o.server.remove(0);
                }
                if o.server.is_empty() {
                    return Err("--tool-from-mcp needs the server's command".into());
                }
                break;
            }
            _ => return Err(format!("unknown option {flag:?}")),
        }
    }
    if o.mcp_http.is_some() && !o.server.is_empty() {
        return Err("both --mcp-http and --tool-from-mcp: give one".into());
    }
    o.provider = provider.ok_or("--provider is required")?;
    o.url = url.ok_or("--url is required")?;
    o.model = model.ok_or("--model is required")?;
    Ok(Parsed::Run(o))
}

/// Why the program stops early.
#[derive(Debug)]
enum Fail {
    /// Bad arguments, or a server that cannot be started: exit 2.
    Start(String),
    /// A request failed, or stdout did: exit 1.
    Run(String),
}

fn main() -> ExitCode {
    lines::set_program("polyweave-agent");
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
        Err(Fail::Run(e)) => {
            log!("{e}");
            ExitCode::from(1)
        }
    }
}

/// The user's prompt: `--prompt`, else all of stdin.
fn prompt(opts: &Options) -> Result<String, Fail> {
    if let Some(p) = &opts.prompt {
        return Ok(p.clone());
    }
    let mut text = String::new();
    io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Fail::Start(format!("reading the prompt on stdin: {e}")))?;
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err(Fail::Start("no prompt (give --prompt or stdin)".into()));
    }
    Ok(text)
}

/// The server, started and listed; `None` without `--tool-from-mcp`.
fn start_server(
    opts: &Options,
    client: &mut McpClient<'_>,
    wcfg: &WrapperConfig,
) -> Result<(Option<Child>, Io, Vec<Listed>), Fail> {
    let mcfg = client.config();
    if let Some(url) = &opts.mcp_http {
        let mut io = Io::over_http(url, wcfg, &mcfg);
        return match start_up(&mut io, client) {
            Ok(listed) => Ok((None, io, listed)),
            Err(StartFail::Other(why)) => Err(Fail::Start(format!("MCP start-up failed: {why}"))),
            Err(StartFail::Closed) => Err(Fail::Start(
                "MCP start-up failed: the server closed the connection".into(),
            )),
        };
    }
    if opts.server.is_empty() {
        return Ok((None, Io::without_server(wcfg, &mcfg), Vec::new()));
    }
    let (mut child, mut io) = spawn(&opts.server, wcfg, &mcfg).map_err(Fail::Start)?;
    match start_up(&mut io, client) {
        Ok(listed) => Ok((Some(child), io, listed)),
        Err(e) => {
            let why = match e {
                StartFail::Closed => {
                    let status = exit_status(&mut child, Duration::from_secs(1));
                    format!("the server exited before it was ready ({status})")
                }
                StartFail::Other(why) => why,
            };
            stop(&mut child);
            Err(Fail::Start(format!("MCP start-up failed: {why}")))
        }
    }
}

fn run(opts: Options) -> Result<(), Fail> {
    let text = prompt(&opts)?;
    let key =
        match &opts.api_key_env {
            Some(var) => Some(std::env::var(var).map_err(|_| {
                Fail::Start(format!("--api-key-env {var}: the variable is not set"))
            })?),
            None => None,
        };
    let wcfg = WRAPPER;
    let mcfg = MCP.fit(&wcfg);
    let mut mcp_slots = vec![McpSlot::EMPTY; SLOTS];
    let mut mcp_arena = vec![0u8; mcfg.arena_len(SLOTS)];
    let mut streams = vec![McpStream::EMPTY; STREAMS];
    let info = McpClientInfo {
        name: "polyweave-agent",
        version: env!("CARGO_PKG_VERSION"),
    };
    let client = match opts.mcp_http {
        Some(_) => McpClient::new_http(mcfg, info, &mut mcp_slots, &mut streams, &mut mcp_arena),
        None => McpClient::new(mcfg, info, &mut mcp_slots, &mut mcp_arena),
    };
    let mut client = client.map_err(|e| Fail::Start(format!("MCP client: {e}")))?;
    let (mut child, mut io, listed) = start_server(&opts, &mut client, &wcfg)?;

    let (decls, model_names, from) = declare(opts.provider, &listed);
    for (d, name) in decls.iter().zip(&model_names) {
        let mut buf = [0u8; 1024];
        let declared = d.declared_name(&mut buf).unwrap_or(b"?");
        if declared != name.as_bytes() {
            log!(
                "tool {} is declared as {name}",
                String::from_utf8_lossy(declared)
            );
        }
    }
    let read: Vec<ToolSchemas<'_>> = match opts.validate {
        true => from
            .iter()
            .map(|&i| ToolSchemas::read(&listed[i]))
            .collect(),
        false => Vec::new(),
    };
    // Each schema indexed, for as long as the wrapper and the client check with it.
    let mut index = vec![0u32; index_words(&read)];
    let schemas = indexed(read, &mut index);
    // The adapter tools go by the names the model calls them by; so do the client's calls.
    let tools: Vec<Tool<'_>> = model_names
        .iter()
        .enumerate()
        .map(|(i, n)| adapter_tool(n, schemas.get(i).and_then(|s| s.input.as_ref())))
        .collect();
    let outputs = output_schemas(&model_names, &schemas);
    client.set_output_schemas(&outputs);

    let ran = agent(
        &opts,
        &text,
        key.as_deref(),
        &decls,
        &tools,
        &mut io,
        &mut client,
    );
    log!("client stats: {:?}", client.stats());
    if let Some(child) = child.as_mut() {
        // Closing its stdin tells the server to go.
        drop(io.server_in.take());
        log!("server {}", exit_status(child, EXIT_GRACE));
    }
    ran
}

/// The declarations of the listed tools the provider takes, the names the model sees them
/// by, and where in `listed` each is. A tool the provider cannot take (its schema is no
/// object, say) is left out with a log line rather than failing every request.
fn declare(
    provider: Provider,
    listed: &[Listed],
) -> (Vec<Declaration<'_>>, Vec<String>, Vec<usize>) {
    let mut empty = [0u8; 0];
    let conv = Conversation::new(&mut empty);
    let opts = RequestOptions::new("");
    let (decls, from): (Vec<Declaration<'_>>, Vec<usize>) = listed
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let d = Declaration::from_mcp(&t.entry)
                .map_err(RequestError::from)
                .and_then(|d| Request::new(&conv, provider, &opts, &[d]).map(|_| d));
            match d {
                Ok(d) => Some((d, i)),
                Err(e) => {
                    log!("tool {} not declared: {e}", t.name);
                    None
                }
            }
        })
        .collect();
    let names = (0..decls.len())
        .map(|i| {
            let mut out = [0u8; MAX_NAME];
            String::from_utf8_lossy(model_name_of(provider, &decls, i, &mut out)).into_owned()
        })
        .collect();
    (decls, names, from)
}

/// The whole loop: requests and their responses until an answer or `--max-turns`.
fn agent(
    opts: &Options,
    prompt: &str,
    key: Option<&str>,
    decls: &[Declaration<'_>],
    tools: &[Tool<'_>],
    io: &mut Io,
    client: &mut McpClient<'_>,
) -> Result<(), Fail> {
    let provider = opts.provider;
    let wcfg = WRAPPER;
    let mut slots = vec![Slot::EMPTY; SLOTS];
    let mut arena = vec![0u8; wcfg.arena_len(SLOTS)];
    let mut wrapper = Wrapper::new(wcfg, tools, NoHooks, &mut slots, &mut arena)
        .map_err(|e| Fail::Start(format!("wrapper: {e}")))?;
    let dcfg = DecoderConfig {
        event_cap: EVENT_CAP,
        args_cap: wcfg.args_cap,
        ..DecoderConfig::DEFAULT
    }
    .fit(&wcfg);
    let mut dslots = vec![CallSlot::EMPTY; SLOTS];
    let mut darena = vec![0u8; dcfg.arena_len(SLOTS)];
    let mut decoder = Decoder::new(provider, dcfg, &mut dslots, &mut darena)
        .map_err(|e| Fail::Start(format!("decoder: {e}")))?;

    let mut memory = vec![0u8; CONVERSATION];
    let mut conv = Conversation::new(&mut memory);
    conv.pin_first_user(true);
    if let Some(system) = &opts.system {
        conv.set_system(system)
            .map_err(|e| Fail::Start(format!("system text: {e}")))?;
    }
    conv.push_user(prompt)
        .map_err(|e| Fail::Start(format!("prompt: {e}")))?;
    let mut req_opts = RequestOptions::new(&opts.model);
    req_opts.max_tokens = opts.max_tokens;

    let url = endpoint(provider, &opts.url, &opts.model);
    let http: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut out = Printer::new(opts.json);
    let mut fbuf = vec![0u8; dcfg.max_frame_len()];
    let mut turn = 0;
    let stop = loop {
        if turn == opts.max_turns {
            break "max-turns";
        }
        turn += 1;
        let req = Request::new(&conv, provider, &req_opts, decls)
            .map_err(|e| Fail::Run(format!("the request cannot be written: {e}")))?;
        out.request(turn, &url, req.len())?;
        let body = post(&http, &url, provider, key, req)?;
        conv.begin_response(provider)
            .map_err(|e| Fail::Run(format!("the conversation is full: {e}")))?;
        io.model.clear();
        io.model_at = 0;
        io.model_end = false;
        spawn_reader(
            body,
            io.sender(),
            Input::Model,
            Input::ModelEnd,
            "the response",
        )
        .map_err(|e| Fail::Run(format!("cannot start the response thread: {e}")))?;
        let mut host = Turn {
            turn,
            provider,
            decls,
            conv: &mut conv,
            out: &mut out,
            calls: 0,
            error: None,
        };
        respond(io, client, &mut wrapper, &mut decoder, &mut fbuf, &mut host)?;
        if let Some(message) = host.error.take() {
            out.done(turn, "error")?;
            return Err(Fail::Run(format!(
                "the provider reported an error: {message}"
            )));
        }
        if host.calls == 0 {
            break "answer";
        }
    };
    out.done(turn, stop)
}

/// Where the body goes: URL, or for Gemini URL and the library's path.
fn endpoint(provider: Provider, url: &str, model: &str) -> String {
    if provider.name() != "gemini" {
        return url.to_string();
    }
    let mut path = vec![0u8; model.len() + 64];
    let path = gemini_path(model, &mut path).unwrap_or("");
    format!("{}/{path}", url.trim_end_matches('/'))
}

/// The body as a reader: each read is the library writing the body's next bytes straight
/// into the HTTP client's buffer, so the body is never held whole.
struct BodyReader<'r>(Request<'r>);

impl Read for BodyReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(self.0.write(buf))
    }
}

/// POSTs the body; the response body's reader, once the status says it is the response.
fn post(
    http: &ureq::Agent,
    url: &str,
    provider: Provider,
    key: Option<&str>,
    req: Request<'_>,
) -> Result<ureq::BodyReader<'static>, Fail> {
    let len = req.len();
    let mut post = http
        .post(url)
        .header("content-type", "application/json")
        .header("content-length", len.to_string());
    match (provider.name(), key) {
        ("anthropic", key) => {
            post = post.header("anthropic-version", "2023-06-01");
            if let Some(k) = key {
                post = post.header("x-api-key", k);
            }
        }
        ("gemini", Some(k)) => post = post.header("x-goog-api-key", k),
        ("ollama", _) | (_, None) => {}
        (_, Some(k)) => post = post.header("authorization", format!("Bearer {k}")),
    }
    let mut body = BodyReader(req);
    let response = post
        .send(ureq::SendBody::from_reader(&mut body))
        .map_err(|e| Fail::Run(format!("POST {url}: {e}")))?;
    let status = response.status();
    let mut reader = response.into_body().into_reader();
    if !status.is_success() {
        let mut text = Vec::new();
        let _ = reader.by_ref().take(64 * 1024).read_to_end(&mut text);
        return Err(Fail::Run(format!(
            "POST {url}: HTTP {}: {}",
            status.as_u16(),
            String::from_utf8_lossy(&text).trim()
        )));
    }
    Ok(reader)
}

/// Reads one response as it arrives, through the decoder into the conversation and the
/// wrapper, until it has ended and every call has its result.
fn respond(
    io: &mut Io,
    client: &mut McpClient<'_>,
    wrapper: &mut Wrapper<'_>,
    decoder: &mut Decoder<'_>,
    fbuf: &mut [u8],
    host: &mut Turn<'_, '_>,
) -> Result<(), Fail> {
    let mut finished = false;
    loop {
        let now = io.now();
        // The clock first: a frame at a call's deadline comes too late (SPEC §7.5).
        io.timeouts(client, wrapper, now, host)?;
        io.pump(client, wrapper, now, host)?;
        io.serve_server(client, wrapper, now, host)?;
        loop {
            let taken = decoder.feed(&io.model[io.model_at..]);
            io.model_at += taken;
            let mut any = false;
            while let Some(len) = poll(decoder, fbuf)? {
                any = true;
                host.model(&fbuf[..len])?;
                io.model_frame(client, wrapper, now, &fbuf[..len], host)?;
            }
            if taken == 0 && !any {
                break;
            }
        }
        if io.model_at == io.model.len() {
            io.model.clear();
            io.model_at = 0;
            if io.model_end && !finished {
                finished = true;
                decoder.finish();
                while let Some(len) = poll(decoder, fbuf)? {
                    host.model(&fbuf[..len])?;
                    io.model_frame(client, wrapper, now, &fbuf[..len], host)?;
                }
                host.conv.end_response();
            }
        }
        host.out.flush()?;
        if finished && wrapper.pending() == 0 && wrapper.queued() == 0 && io.idle() {
            return Ok(());
        }
        io.wait_for_input(wrapper);
    }
}

/// The decoder's next frame (the buffer is `max_frame_len` long: it always fits).
fn poll(decoder: &mut Decoder<'_>, fbuf: &mut [u8]) -> Result<Option<usize>, Fail> {
    decoder
        .poll_frame(fbuf)
        .map_err(|e| Fail::Run(format!("a frame of {} bytes", e.needed)))
}

/// One turn's host: where frames go, and the names the server knows its tools by.
struct Turn<'t, 'c> {
    turn: u32,
    provider: Provider,
    decls: &'t [Declaration<'t>],
    conv: &'t mut Conversation<'c>,
    out: &'t mut Printer,
    /// The calls the response made.
    calls: usize,
    /// The message of the provider's error that ended the response.
    error: Option<String>,
}

impl Turn<'_, '_> {
    /// A frame the decoder wrote.
    fn model(&mut self, frame: &[u8]) -> Result<(), Fail> {
        if let Err(e) = self.conv.push_frame(frame) {
            log!("the conversation refused a frame ({e}): {}", short(frame));
        }
        let f = Frame::parse_validated_default(frame).ok();
        match f.as_ref().map(|f| f.kind()) {
            Some(FrameKind::ToolCall) => self.calls += 1,
            Some(FrameKind::Error) => {
                let message = f.as_ref().and_then(|f| f.error_message().ok().flatten());
                self.error = Some(message.map(lines::text).unwrap_or_default());
            }
            _ => {}
        }
        self.out.model(self.turn, frame, f.as_ref())
    }
}

impl Host for Turn<'_, '_> {
    type Error = Fail;

    fn emit(&mut self, to: Route, frame: &[u8]) -> Result<(), Fail> {
        let Ok(f) = Frame::parse_validated_default(frame) else {
            return Ok(());
        };
        // The model's side gets the results (and the continue prompt, which is no message
        // of any provider's: the next request is the cue).
        if to != Route::Model || f.kind() != FrameKind::ToolResult {
            return Ok(());
        }
        if let Err(e) = self.conv.push_frame(frame) {
            log!("the conversation refused a result ({e}): {}", short(frame));
        }
        self.out.tool(self.turn, frame, &f)
    }

    fn server_name(&self, tool: &str) -> Option<String> {
        let i = find_declaration(self.provider, self.decls, tool.as_bytes())?;
        let mut buf = [0u8; 1024];
        let declared = self.decls[i].declared_name(&mut buf)?;
        (declared != tool.as_bytes()).then(|| String::from_utf8_lossy(declared).into_owned())
    }
}

/// What stdout shows: readable lines, or NDJSON events (`--json`).
struct Printer {
    json: bool,
    out: BufWriter<io::Stdout>,
    /// A line of the model's text is open.
    in_text: bool,
    /// The text of the last response.
    text: String,
}

impl Printer {
    fn new(json: bool) -> Self {
        Self {
            json,
            out: BufWriter::new(io::stdout()),
            in_text: false,
            text: String::new(),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Fail> {
        self.out
            .write_all(bytes)
            .map_err(|e| Fail::Run(format!("writing stdout: {e}")))
    }

    fn flush(&mut self) -> Result<(), Fail> {
        self.out
            .flush()
            .map_err(|e| Fail::Run(format!("writing stdout: {e}")))
    }

    /// A readable line, ending the model's text line first.
    fn line(&mut self, text: &str) -> Result<(), Fail> {
        if self.in_text {
            self.in_text = false;
            self.write(b"\n")?;
        }
        self.write(text.as_bytes())?;
        self.write(b"\n")
    }

    fn request(&mut self, turn: u32, url: &str, bytes: usize) -> Result<(), Fail> {
        self.text.clear();
        if self.json {
            let mut l = format!("{{\"turn\":{turn},\"request\":{{\"url\":").into_bytes();
            push_string(&mut l, url);
            l.extend_from_slice(format!(",\"bytes\":{bytes}}}}}\n").as_bytes());
            return self.write(&l);
        }
        self.line(&format!("── request {turn}: POST {url} ({bytes} bytes)"))
    }

    fn model(&mut self, turn: u32, frame: &[u8], f: Option<&Frame<'_>>) -> Result<(), Fail> {
        let kind = f.map(|f| f.kind());
        let content = f.and_then(|f| f.content().ok().flatten());
        let text = content.and_then(as_string).map(lines::text);
        if kind == Some(FrameKind::Text) {
            self.text.push_str(text.as_deref().unwrap_or(""));
        }
        if self.json {
            let mut l = format!("{{\"turn\":{turn},\"model\":").into_bytes();
            push_value(&mut l, frame);
            l.extend_from_slice(b"}\n");
            return self.write(&l);
        }
        match kind {
            Some(FrameKind::Text) => {
                if !self.in_text {
                    self.write(b"assistant: ")?;
                    self.in_text = true;
                }
                self.write(text.unwrap_or_default().as_bytes())
            }
            Some(FrameKind::ToolCall) => {
                let call = f.and_then(|f| f.tool_call().ok());
                let name = call.and_then(|c| c.name).map(lines::text);
                let args = call.map_or(&b""[..], |c| c.args);
                let id = call.and_then(|c| c.id).map(lines::text);
                let id = id.map(|i| format!(" [{i}]")).unwrap_or_default();
                self.line(&format!(
                    "call {}{id} {}",
                    name.unwrap_or_default(),
                    compact(args)
                ))
            }
            Some(FrameKind::End) => {
                let reason = content.and_then(|c| lines::member_text(c, b"reason"));
                self.line(&format!("── end: {}", reason.as_deref().unwrap_or("null")))
            }
            Some(FrameKind::Error) => {
                let m = f.and_then(|f| f.error_message().ok().flatten());
                self.line(&format!(
                    "error: {}",
                    m.map(lines::text).unwrap_or_default()
                ))
            }
            _ => Ok(()),
        }
    }

    fn tool(&mut self, turn: u32, frame: &[u8], f: &Frame<'_>) -> Result<(), Fail> {
        if self.json {
            let mut l = format!("{{\"turn\":{turn},\"tool\":").into_bytes();
            push_value(&mut l, frame);
            l.extend_from_slice(b"}\n");
            return self.write(&l);
        }
        let Ok(r) = f.tool_result() else {
            return Ok(());
        };
        let name = r.name.map(lines::text).unwrap_or_default();
        match (r.result, r.error) {
            (Some(v), _) => self.line(&format!("result {name}: {}", compact(v))),
            (None, Some(e)) => {
                let message = as_string(e).map_or_else(|| compact(e), lines::text);
                self.line(&format!("result {name}: error: {message}"))
            }
            (None, None) => Ok(()),
        }
    }

    fn done(&mut self, turns: u32, stop: &str) -> Result<(), Fail> {
        if self.json {
            let mut l = format!("{{\"done\":{{\"turns\":{turns},\"stop\":\"{stop}\",\"text\":")
                .into_bytes();
            push_string(&mut l, &self.text);
            l.extend_from_slice(b"}}\n");
            self.write(&l)?;
        } else {
            let why = match stop {
                "answer" => "the model answered",
                "error" => "the provider reported an error",
                _ => "--max-turns reached",
            };
            self.line(&format!("── done after {turns} requests: {why}"))?;
        }
        self.flush()
    }
}

/// A JSON string token's text, or `None` for any other value.
fn as_string(raw: &[u8]) -> Option<JsonStr<'_>> {
    JsonStr::from_token(raw).ok()
}

/// A JSON value as one line, for the readable output.
fn compact(raw: &[u8]) -> String {
    let mut out = Vec::new();
    push_value(&mut out, raw);
    String::from_utf8_lossy(&out).into_owned()
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
            "--provider",
            "anthropic",
            "--url",
            "http://127.0.0.1:1/v1/messages",
            "--model",
            "m",
            "--api-key-env",
            "KEY",
            "--max-turns",
            "3",
            "--json",
            "--no-validate",
            "--tool-from-mcp",
            "--",
            "python3",
            "server.py",
            "--flag",
        ]) else {
            panic!()
        };
        assert_eq!(o.provider, Provider::Anthropic);
        assert_eq!(
            (o.url.as_str(), o.model.as_str(), o.max_turns, o.json),
            ("http://127.0.0.1:1/v1/messages", "m", 3, true)
        );
        assert_eq!(o.api_key_env.as_deref(), Some("KEY"));
        assert_eq!(o.server, ["python3", "server.py", "--flag"]);
        assert!(!o.validate);
        let Ok(Parsed::Run(o)) = parse(&["--provider", "gemini", "--url", "u", "--model", "m"])
        else {
            panic!()
        };
        assert_eq!(
            (o.max_turns, o.server.len(), o.json, o.validate),
            (8, 0, false, true)
        );
        assert_eq!(o.mcp_http, None);
        let Ok(Parsed::Run(o)) = parse(&[
            "--provider",
            "ollama",
            "--url",
            "u",
            "--model",
            "m",
            "--mcp-http",
            "http://127.0.0.1:1/mcp",
        ]) else {
            panic!()
        };
        assert_eq!(o.mcp_http.as_deref(), Some("http://127.0.0.1:1/mcp"));
        assert!(o.server.is_empty());
        assert_eq!(
            parse(&[
                "--provider",
                "ollama",
                "--url",
                "u",
                "--model",
                "m",
                "--mcp-http",
                "http://h/mcp",
                "--tool-from-mcp",
                "s"
            ])
            .err()
            .as_deref(),
            Some("both --mcp-http and --tool-from-mcp: give one")
        );
        assert!(parse(&["--provider", "nope", "--url", "u", "--model", "m"]).is_err());
        assert!(parse(&["--url", "u", "--model", "m"]).is_err());
        assert!(parse(&[
            "--provider",
            "ollama",
            "--url",
            "u",
            "--model",
            "m",
            "--max-turns",
            "0"
        ])
        .is_err());
        assert!(parse(&[
            "--provider",
            "ollama",
            "--url",
            "u",
            "--model",
            "m",
            "--tool-from-mcp"
        ])
        .is_err());
        assert!(matches!(parse(&["-h"]), Ok(Parsed::Help)));
    }

    #[test]
    fn tools_the_provider_cannot_take_are_left_out_and_dotted_names_mapped() {
        let listed = |name: &str, entry: &str| Listed {
            name: name.into(),
            entry: entry.as_bytes().to_vec(),
        };
        let tools = [
            listed(
                "fs.read",
                r#"{"name":"fs.read","inputSchema":{"type":"object"}}"#,
            ),
            listed("bad", r#"{"name":"bad","inputSchema":[1]}"#),
            listed("?", r#"{"title":"no name"}"#),
            listed("echo", r#"{"name":"echo"}"#),
        ];
        let (decls, names, from) = declare(Provider::OpenAiChat, &tools);
        assert_eq!(decls.len(), 2);
        assert_eq!(names, ["fs_read", "echo"]);
        assert_eq!(from, [0, 3]);
        let (_, names, _) = declare(Provider::Gemini, &tools);
        assert_eq!(names, ["fs.read", "echo"]);
    }

    #[test]
    fn gemini_posts_to_the_librarys_path_under_the_base() {
        assert_eq!(
            endpoint(Provider::Gemini, "http://h/v1beta/", "gemini-2.5-flash"),
            "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            endpoint(Provider::OpenAiChat, "http://h/v1/chat/completions", "m"),
            "http://h/v1/chat/completions"
        );
    }

    #[test]
    fn the_body_reader_gives_the_librarys_bytes_in_any_buffer() {
        let mut memory = vec![0u8; 1024];
        let mut conv = Conversation::new(&mut memory);
        conv.push_user("Hi").unwrap();
        let opts = RequestOptions::new("m");
        let whole = {
            let mut r = BodyReader(Request::new(&conv, Provider::Ollama, &opts, &[]).unwrap());
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            v
        };
        assert_eq!(
            whole,
            br#"{"model":"m","messages":[{"role":"user","content":"Hi"}],"stream":true}"#
        );
        let mut r = BodyReader(Request::new(&conv, Provider::Ollama, &opts, &[]).unwrap());
        let mut buf = [0u8; 5];
        let mut pieces = Vec::new();
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            pieces.extend_from_slice(&buf[..n]);
        }
        assert_eq!(pieces, whole);
    }
}
