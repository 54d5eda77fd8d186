//! `polyweave-replay`: runs one replay scenario (SPEC §6) through the core on a
//! simulated clock and prints what happened, one NDJSON event per line, or with
//! `--pretty` as a readable timeline.
//!
//! With `--validate SCHEMA.json` it is the argument validator (SPEC §11) on NDJSON values
//! read from standard input, one answer line per value (`src/validate.rs`).
//!
//! Exit codes: 0 when the scenario ran (whatever it printed), 2 for a bad
//! scenario file, a schema the validator refuses, or bad arguments.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

mod request;
mod scenario;
mod streams;
mod surrogates;
mod validate;

use polyweave_tests::host::{Call, Entry, Host, Outcome, Recorder, Storage};
use polyweave_tool_adapter::wrapper::ENTRY_HEADER;
use polyweave_tool_adapter::wrapper::{Disposition, Wrapper, WrapperConfig};
use polyweave_tool_adapter::CallError;
use polyweave_tool_adapter::CallOutcome;
use polyweave_tool_adapter::{AdapterCall, CallHandle, CallOptions, Error, Instant, Route, Tool};
use polyweave_tool_adapter::{ResultWriter, ToolFailed};
use scenario::{CallScenario, Scenario, Step, StepKind, ToolSpec, WrapperScenario};

// Capacities of the replay program (SPEC §6: minimums met or exceeded, args, results and
// depth exact).
/// Bytes of a decoded tool name, and of a decoded call id.
const NAME_CAP: usize = 1024;
/// Bytes of a raw args value, and of a raw result: exactly 4096 (SPEC §7.23).
const ARGS_CAP: usize = 4096;
const RESULT_CAP: usize = 4096;
/// Bytes of an error message.
const MESSAGE_CAP: usize = 64 * 1024;
/// JSON depth limit: the default, exactly 32 (SPEC §7.17).
const MAX_DEPTH: u8 = 32;
/// Trace entries, each kept whole.
const TRACE_ENTRIES: usize = 32;
/// `END`s held while calls are pending, of up to `END_CAP` bytes each.
const HELD_ENDS: usize = 8;
const END_CAP: usize = 8 * 1024;

const REPLAY_CONFIG: WrapperConfig = WrapperConfig {
    tool_timeout_ms: 30_000,
    max_total_timeout_ms: 0,
    mirror_continue: true,
    max_rounds: 0,
    max_depth: MAX_DEPTH,
    full_validation: false,
    name_cap: NAME_CAP,
    id_cap: NAME_CAP,
    args_cap: ARGS_CAP,
    result_cap: RESULT_CAP,
    message_cap: MESSAGE_CAP,
    trace_entries: TRACE_ENTRIES,
    trace_bytes: TRACE_ENTRIES
        * (ENTRY_HEADER + NAME_CAP + ARGS_CAP + max(RESULT_CAP, MESSAGE_CAP)),
    // Each held END costs 4 bytes besides its own.
    held_bytes: HELD_ENDS * (END_CAP + 4),
};

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// One printed event, with the clock it happened at (for `--pretty`).
struct Printer {
    pretty: bool,
    color: bool,
    out: io::BufWriter<io::Stdout>,
}

impl Printer {
    /// In `--pretty` mode, an input the scenario fed in (not an event of SPEC §6).
    fn input(&mut self, at: u64, from: &str, what: &str) {
        if self.pretty {
            let arrow = if self.color {
                "\x1b[2m←".to_string()
            } else {
                "←".to_string()
            };
            let end = if self.color { "\x1b[0m" } else { "" };
            let _ = writeln!(self.out, "{at:>7}ms  {arrow} {from:<11} {what}{end}");
        }
    }

    fn line(&mut self, at: u64, event: &str) {
        if self.pretty {
            let text = pretty_line(at, event, self.color);
            let _ = writeln!(self.out, "{text}");
        } else {
            let _ = writeln!(self.out, "{event}");
        }
    }
}

/// JSON string token for `text`.
fn jstr(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// A raw JSON value (a frame, args, a result) as it goes into one output line (SPEC §6).
///
/// A value serde_json accepts is printed as its own text without insignificant white space
/// (space, tab, CR, LF outside strings, as in SPEC §7.22): number text, string escapes and
/// member order stay as written. An escaped lone surrogate counts as a character here, as in
/// the core's raw values (SPEC §7.24), and keeps its escape. Anything else (a pass-through
/// frame broken after `type`, a trace value cut mid-value) becomes a JSON string of its text.
fn json_value(raw: &[u8]) -> String {
    // serde_json refuses `\ud800` without its partner: check a copy with each as `\uFFFD`.
    let check = surrogates::masked(raw);
    // Read as a raw value: checked whole, at any depth (a `Value` stops at 128 levels).
    if serde_json::from_slice::<&serde_json::value::RawValue>(&check).is_err() {
        return jstr(&String::from_utf8_lossy(raw));
    }
    let mut out = Vec::with_capacity(raw.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in raw {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            continue;
        } else if b == b'"' {
            in_string = true;
        }
        out.push(b);
    }
    // Valid UTF-8: serde_json accepted the text, and only ASCII white space was dropped.
    String::from_utf8_lossy(&out).into_owned()
}

/// The SPEC §6 line of a hook event the host recorded.
fn hook_line(call: &Call, outcome: Option<&Outcome>) -> String {
    let name = call.name.as_deref().map_or("null".to_string(), jstr);
    let args = json_value(&call.args);
    match outcome {
        None => format!("{{\"hook\":\"toolCall\",\"name\":{name},\"args\":{args}}}"),
        Some(outcome) => {
            let (result, error) = match outcome {
                Outcome::Result(r) => (json_value(r), "null".to_string()),
                Outcome::Error(e) => ("null".to_string(), jstr(e)),
            };
            format!(
                "{{\"hook\":\"toolResult\",\"name\":{name},\"args\":{args},\"result\":{result},\"error\":{error}}}"
            )
        }
    }
}

/// A sync tool of a scenario: a fixed result, an echo, or a fixed error.
struct ScenarioTool {
    spec: ToolSpec,
}

impl ScenarioTool {
    fn run(&self, args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        match &self.spec {
            ToolSpec::SyncError(message) => {
                out.write(message.as_bytes());
                Err(ToolFailed)
            }
            ToolSpec::SyncEcho => {
                out.write(args);
                Ok(())
            }
            ToolSpec::SyncResult(raw) => {
                out.write(raw.as_bytes());
                Ok(())
            }
            ToolSpec::Deferred | ToolSpec::Adapter => Err(ToolFailed),
        }
    }
}

impl polyweave_tool_adapter::SyncTool for ScenarioTool {
    fn call(&self, args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        self.run(args, out)
    }
}

const USAGE: &str = "usage: polyweave-replay [--pretty] SCENARIO.json\n\
       polyweave-replay --decode PROVIDER [--chunk N] BODY\n\
       polyweave-replay --encode PROVIDER FRAMES.ndjson\n\
       polyweave-replay [--pretty] --stream PROVIDER BODY\n\
       polyweave-replay --request PROVIDER CONVERSATION.json\n\
       polyweave-replay --validate SCHEMA.json < VALUES.ndjson";

/// What the command line asks for.
enum Mode {
    Scenario,
    Decode(String),
    Encode(String),
    Stream(String),
    Request(String),
    Validate(String),
}

fn main() -> ExitCode {
    let mut pretty = false;
    let mut file = None;
    let mut mode = Mode::Scenario;
    let mut chunk = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or_else(|| format!("{what} needs a value"));
        let parsed: Result<(), String> = match arg.as_str() {
            "--pretty" => {
                pretty = true;
                Ok(())
            }
            "--decode" => value("--decode").map(|p| mode = Mode::Decode(p)),
            "--encode" => value("--encode").map(|p| mode = Mode::Encode(p)),
            "--stream" => value("--stream").map(|p| mode = Mode::Stream(p)),
            "--request" => value("--request").map(|p| mode = Mode::Request(p)),
            "--validate" => value("--validate").map(|p| mode = Mode::Validate(p)),
            "--chunk" => value("--chunk").and_then(|n| {
                n.parse()
                    .map(|n| chunk = n)
                    .map_err(|_| format!("--chunk {n:?}: not a byte count"))
            }),
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ if file.is_none() => {
                file = Some(arg);
                Ok(())
            }
            _ => Err(format!("unexpected argument {arg:?}")),
        };
        if let Err(e) = parsed {
            eprintln!("polyweave-replay: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    // `--validate` reads its values on standard input: it takes no file.
    let validating = matches!(mode, Mode::Validate(_));
    if let (true, Some(extra)) = (validating, &file) {
        eprintln!("polyweave-replay: unexpected argument {extra:?}\n{USAGE}");
        return ExitCode::from(2);
    }
    let Some(file) = file.or_else(|| validating.then(String::new)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let stream_run = match &mode {
        Mode::Scenario => None,
        Mode::Decode(p) => {
            Some(streams::provider(p).and_then(|p| streams::run_decode(p, chunk, &file)))
        }
        Mode::Encode(p) => Some(streams::provider(p).and_then(|p| streams::run_encode(p, &file))),
        Mode::Stream(p) => {
            Some(streams::provider(p).and_then(|p| streams::run_stream(p, &file, pretty)))
        }
        Mode::Request(p) => Some(streams::provider(p).and_then(|p| request::run_request(p, &file))),
        Mode::Validate(schema) => Some(validate::run_validate(schema)),
    };
    if let Some(run) = stream_run {
        return match run {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("polyweave-replay: {e}");
                ExitCode::from(2)
            }
        };
    }
    let scenario = match scenario::load(&file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("polyweave-replay: {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let color = pretty && io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut printer = Printer {
        pretty,
        color,
        out: io::BufWriter::new(io::stdout()),
    };
    let run = match scenario {
        Scenario::Wrapper(w) => run_wrapper(&w, &mut printer),
        Scenario::Call(c) => run_call(&c, &mut printer),
    };
    let _ = printer.out.flush();
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err((Some(step), e)) => {
            eprintln!("polyweave-replay: {file}: step {step}: {e}");
            ExitCode::from(2)
        }
        Err((None, e)) => {
            eprintln!("polyweave-replay: {file}: {e}");
            ExitCode::from(2)
        }
    }
}

/// What a wrapper step refers to by call number.
#[derive(Clone, Copy)]
enum Known {
    /// Completed at once (sync, or refused before taking a slot).
    Immediate,
    /// Took a slot.
    Pending(CallHandle),
}

fn run_wrapper(sc: &WrapperScenario, p: &mut Printer) -> Result<(), (Option<usize>, String)> {
    let sync_tools: Vec<ScenarioTool> = sc
        .tools
        .iter()
        .map(|(_, spec)| ScenarioTool { spec: spec.clone() })
        .collect();
    let tools: Vec<Tool<'_>> = sc
        .tools
        .iter()
        .zip(&sync_tools)
        .map(|((name, spec), sync)| match spec {
            ToolSpec::Deferred => Tool::deferred(name),
            ToolSpec::Adapter => Tool::adapter(name),
            _ => Tool::sync(name, sync),
        })
        .collect();
    let cfg = WrapperConfig {
        tool_timeout_ms: sc.tool_timeout_ms,
        max_total_timeout_ms: sc.max_total_timeout_ms,
        mirror_continue: sc.mirror_continue,
        max_rounds: sc.max_rounds,
        full_validation: sc.full_validation,
        ..REPLAY_CONFIG
    };
    let mut storage = Storage::new(cfg, sc.max_pending);
    let mut w = storage
        .try_wrapper(&tools, Recorder::default())
        .map_err(|e| (None, format!("cannot build the wrapper: {e:?}")))?;
    if sc.aborted {
        w.abort();
    }
    let mut known: Vec<Known> = Vec::new();
    // No queued frame is larger than the queue.
    let mut host = Host::with_buffer(w.queue_capacity());
    let mut now = 0u64;
    for (i, step) in sc.steps.iter().enumerate() {
        if let Some(at) = step.at {
            now = at;
        }
        let t = Instant::from_millis(now);
        w.handle_timeout(t)
            .map_err(|e| (Some(i), format!("clock: {e}")))?;
        flush_wrapper(&mut w, &mut host, now, p).map_err(|e| (Some(i), e))?;
        apply_wrapper_step(&mut w, step, t, &mut known, &mut host, p).map_err(|e| (Some(i), e))?;
        flush_wrapper(&mut w, &mut host, now, p).map_err(|e| (Some(i), e))?;
    }
    let entries: Vec<String> = w
        .trace()
        .iter()
        .map(|e| {
            let name = e.name.map_or("null".to_string(), jstr);
            let (result, error) = match e.outcome {
                CallOutcome::Result(r) => (json_value(r), "null".to_string()),
                CallOutcome::Error(m) => ("null".to_string(), jstr(m)),
            };
            // An entry the core cut to fit may hold args or a result cut mid-value: flagged.
            let cut = if e.truncated {
                ",\"truncated\":true"
            } else {
                ""
            };
            format!(
                "{{\"name\":{name},\"args\":{},\"result\":{result},\"error\":{error}{cut}}}",
                json_value(e.args)
            )
        })
        .collect();
    p.line(now, &format!("{{\"trace\":[{}]}}", entries.join(",")));
    Ok(())
}

/// Prints queued frames and hook events in the order they happened (started calls are the
/// steps' business: they print nothing).
fn flush_wrapper(
    w: &mut Wrapper<'_, Recorder>,
    host: &mut Host,
    now: u64,
    p: &mut Printer,
) -> Result<(), String> {
    let log = host
        .try_drive(w)
        .map_err(|e| format!("frame of {} bytes exceeds the output buffer", e.needed))?;
    for entry in log {
        let line = match entry {
            Entry::Frame { route, bytes, .. } => {
                let frame = json_value(&bytes);
                match route {
                    Route::Model => format!("{{\"to\":\"model\",\"frame\":{frame}}}"),
                    Route::Consumer => format!("{{\"to\":\"consumer\",\"frame\":{frame}}}"),
                    Route::Adapter(h) => format!(
                        "{{\"to\":\"adapter\",\"call\":{},\"frame\":{frame}}}",
                        h.index()
                    ),
                }
            }
            Entry::ToolCall(call) => hook_line(&call, None),
            Entry::ToolResult(call, outcome) => hook_line(&call, Some(&outcome)),
            Entry::Started(_) => continue,
        };
        p.line(now, &line);
    }
    Ok(())
}

fn is_waiting_error(e: &Error) -> bool {
    matches!(
        e,
        Error::Call(CallError::Unknown)
            | Error::Call(CallError::Completed)
            | Error::Call(CallError::TimedOut)
            | Error::Call(CallError::Cancelled)
            | Error::Call(CallError::Stale)
            | Error::Call(CallError::WrongKind)
    )
}

fn apply_wrapper_step(
    w: &mut Wrapper<'_, Recorder>,
    step: &Step,
    now: Instant,
    known: &mut Vec<Known>,
    host: &mut Host,
    p: &mut Printer,
) -> Result<(), String> {
    let at = now.as_millis();
    let short = |b: &[u8]| {
        let t = String::from_utf8_lossy(b);
        if t.chars().count() > 84 {
            format!("{}…", t.chars().take(83).collect::<String>())
        } else {
            t.into_owned()
        }
    };
    match &step.kind {
        StepKind::Response(b) => p.input(at, "model", &short(b)),
        StepKind::Request(b) => p.input(at, "consumer", &short(b)),
        StepKind::Adapter { call, frame, close } => {
            if let Some(frame) = frame {
                p.input(at, &format!("adapter#{call}"), &short(frame));
            }
            if *close {
                p.input(at, &format!("adapter#{call}"), "(closed)");
            }
        }
        StepKind::Complete {
            call,
            result,
            error,
        } => {
            let what = error.as_ref().map_or_else(
                || format!("complete call {call}: {result}"),
                |e| format!("complete call {call} with error {e:?}"),
            );
            p.input(at, "host", &what)
        }
        StepKind::Cancel(reason) => p.input(at, "host", &format!("cancel({reason:?})")),
        StepKind::Abort => p.input(at, "host", "abort()"),
        StepKind::ClearTrace => p.input(at, "host", "clear_trace()"),
        _ => {}
    }
    match &step.kind {
        StepKind::Response(bytes) => match w.handle_response(now, bytes) {
            Ok(Disposition::Forward) => p.line(
                at,
                &format!("{{\"to\":\"consumer\",\"frame\":{}}}", json_value(bytes)),
            ),
            Ok(Disposition::Held) => p.input(at, "wrapper", "END held while calls are pending"),
            Ok(Disposition::Intercepted {
                index: call,
                handle,
            }) => {
                let idx = call as usize;
                if known.len() <= idx {
                    known.resize(idx + 1, Known::Immediate);
                }
                known[idx] = handle.map_or(Known::Immediate, Known::Pending);
            }
            Err(Error::Malformed(_)) => p.line(at, "{\"rejected\":{\"path\":\"response\"}}"),
            Err(e) => return Err(format!("response refused: {e}")),
        },
        StepKind::Request(bytes) => match w.handle_request(now, bytes) {
            Ok(_) => p.line(
                at,
                &format!("{{\"to\":\"model\",\"frame\":{}}}", json_value(bytes)),
            ),
            Err(Error::Malformed(_)) => p.line(at, "{\"rejected\":{\"path\":\"request\"}}"),
            Err(e) => return Err(format!("request refused: {e}")),
        },
        StepKind::Complete {
            call,
            result,
            error,
        } => {
            let refused = format!("{{\"refused\":{{\"call\":{call}}}}}");
            let Some(Known::Pending(h)) = known.get(*call as usize).copied() else {
                p.line(at, &refused);
                return Ok(());
            };
            let outcome = match error {
                Some(e) => Err(e.as_str()),
                None => Ok(result.as_bytes()),
            };
            match w.complete(now, h, outcome) {
                Ok(_) => {}
                Err(e) if is_waiting_error(&e) => p.line(at, &refused),
                Err(e) => return Err(format!("completion refused: {e}")),
            }
        }
        StepKind::Adapter { call, frame, close } => {
            let refused = format!("{{\"refused\":{{\"call\":{call}}}}}");
            let Some(Known::Pending(h)) = known.get(*call as usize).copied() else {
                p.line(at, &refused);
                return Ok(());
            };
            // The frame, then the close; a refused frame (the call is not waiting) ends the
            // step, a rejected (malformed) one does not: the call still waits (SPEC §6, §7.10).
            if let Some(frame) = frame {
                match w.handle_adapter_frame(now, h, frame) {
                    Ok(()) => {}
                    Err(Error::Malformed(_)) => p.line(
                        at,
                        &format!("{{\"rejected\":{{\"path\":\"adapter\",\"call\":{call}}}}}"),
                    ),
                    Err(e) if is_waiting_error(&e) => {
                        p.line(at, &refused);
                        return Ok(());
                    }
                    Err(e) => return Err(format!("adapter frame refused: {e}")),
                }
            }
            if *close {
                // What the frame queued comes before what the close prints.
                flush_wrapper(w, host, at, p)?;
                match w.handle_adapter_closed(now, h) {
                    Ok(()) => {}
                    Err(e) if is_waiting_error(&e) => p.line(at, &refused),
                    Err(e) => return Err(format!("adapter close refused: {e}")),
                }
            }
        }
        StepKind::Abort => w.abort(),
        StepKind::Cancel(reason) => {
            // The replay's queue holds a whole cancel; a host with a smaller one drains and repeats.
            let left = w
                .cancel(now, reason)
                .map_err(|e| format!("cancel refused: {e}"))?;
            if left > 0 {
                return Err(format!(
                    "cancel left {left} calls pending: the output queue is full"
                ));
            }
        }
        StepKind::ClearTrace => w.clear_trace(),
        StepKind::Tick => {}
        StepKind::CallFrame(_) | StepKind::CallClose => {
            return Err("a call-mode step in a wrapper scenario".into())
        }
    }
    Ok(())
}

fn run_call(sc: &CallScenario, p: &mut Printer) -> Result<(), (Option<usize>, String)> {
    // SPEC §6: a call's result capacity is exactly the replay's 4096 bytes.
    let mut result = vec![0u8; RESULT_CAP];
    let opts = CallOptions {
        name: &sc.name,
        timeout_ms: sc.timeout_ms,
        max_total_timeout_ms: sc.max_total_timeout_ms,
        ..CallOptions::DEFAULT
    };
    let mut call = AdapterCall::start(
        Instant::ZERO,
        opts,
        sc.id.as_deref(),
        sc.args.as_bytes(),
        &mut result,
    )
    .map_err(|e| (None, format!("cannot start the call: {e}")))?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut now = 0u64;
    let mut printed_settlement = false;
    flush_call(&mut call, &mut buf, now, &mut printed_settlement, p).map_err(|e| (None, e))?;
    for (i, step) in sc.steps.iter().enumerate() {
        if let Some(at) = step.at {
            now = at;
        }
        let t = Instant::from_millis(now);
        call.handle_timeout(t)
            .map_err(|e| (Some(i), format!("clock: {e}")))?;
        flush_call(&mut call, &mut buf, now, &mut printed_settlement, p)
            .map_err(|e| (Some(i), e))?;
        let outcome = match &step.kind {
            StepKind::CallFrame(bytes) => call.handle_frame(t, bytes),
            StepKind::CallClose => call.handle_closed(t),
            StepKind::Tick => Ok(()),
            _ => return Err((Some(i), "a wrapper step in a call scenario".into())),
        };
        match outcome {
            Ok(())
            | Err(Error::Call(CallError::Completed))
            | Err(Error::Call(CallError::TimedOut)) => {}
            Err(Error::Malformed(_)) => {
                p.line(now, "{\"rejected\":{\"path\":\"adapter\",\"call\":0}}")
            }
            Err(e) => return Err((Some(i), format!("adapter input refused: {e}"))),
        }
        flush_call(&mut call, &mut buf, now, &mut printed_settlement, p)
            .map_err(|e| (Some(i), e))?;
    }
    Ok(())
}

fn flush_call(
    call: &mut AdapterCall<'_>,
    buf: &mut [u8],
    now: u64,
    printed: &mut bool,
    p: &mut Printer,
) -> Result<(), String> {
    while let Some(n) = call
        .poll_transmit(buf)
        .map_err(|e| format!("frame of {} bytes exceeds the output buffer", e.needed))?
    {
        p.line(
            now,
            &format!(
                "{{\"to\":\"adapter\",\"call\":0,\"frame\":{}}}",
                json_value(&buf[..n])
            ),
        );
    }
    if !*printed {
        if let Some(s) = call.outcome() {
            *printed = true;
            let line = match s {
                CallOutcome::Result(r) => {
                    format!("{{\"settled\":{{\"result\":{}}}}}", json_value(r))
                }
                CallOutcome::Error(e) => format!("{{\"settled\":{{\"error\":{}}}}}", jstr(e)),
            };
            p.line(now, &line);
        }
    }
    Ok(())
}

/// One event as a timeline row: clock, arrow, destination, frame type, short content.
fn pretty_line(at: u64, event: &str, color: bool) -> String {
    let paint = |code: &str, s: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let v: serde_json::Value = serde_json::from_str(event).unwrap_or(serde_json::Value::Null);
    let clock = format!("{at:>7}ms");
    let short = |v: &serde_json::Value| {
        let s = v.to_string();
        if s.chars().count() > 72 {
            format!("{}…", s.chars().take(71).collect::<String>())
        } else {
            s
        }
    };
    if let Some(to) = v.get("to").and_then(|t| t.as_str()) {
        let frame = &v["frame"];
        let ty = frame.get("type").and_then(|t| t.as_str()).unwrap_or("?");
        let dest = match to {
            "adapter" => format!("adapter#{}", v["call"]),
            other => other.to_string(),
        };
        let content = frame.get("content").map(short).unwrap_or_default();
        let colour = match ty {
            "TOOL_CALL" => "36",
            "TOOL_RESULT" => "32",
            "ERROR" | "CANCEL" => "31",
            "END" => "35",
            _ => "0",
        };
        return format!(
            "{clock}  → {:<11} {} {content}",
            dest,
            paint(colour, &format!("{ty:<12}"))
        );
    }
    if let Some(hook) = v.get("hook").and_then(|h| h.as_str()) {
        let name = short(&v["name"]);
        let detail = if hook == "toolCall" {
            format!("args {}", short(&v["args"]))
        } else if !v["error"].is_null() {
            format!("error {}", short(&v["error"]))
        } else {
            format!("result {}", short(&v["result"]))
        };
        return format!(
            "{clock}  ● {} {name} {detail}",
            paint("33", &format!("hook {hook:<10}"))
        );
    }
    if let Some(trace) = v.get("trace").and_then(|t| t.as_array()) {
        let mut s = format!("{clock}  ≡ {} {} entries", paint("1", "trace"), trace.len());
        for e in trace {
            let outcome = if e["error"].is_null() {
                format!("→ {}", short(&e["result"]))
            } else {
                format!("✗ {}", short(&e["error"]))
            };
            s.push_str(&format!(
                "\n             {} {} {outcome}",
                short(&e["name"]),
                short(&e["args"])
            ));
        }
        return s;
    }
    if let Some(s) = v.get("settled") {
        return format!("{clock}  ✓ {} {}", paint("1;32", "settled"), short(s));
    }
    if let Some(r) = v.get("rejected") {
        return format!("{clock}  ✗ {} {}", paint("31", "rejected"), short(r));
    }
    if let Some(r) = v.get("refused") {
        return format!("{clock}  ✗ {} {}", paint("31", "refused"), short(r));
    }
    format!("{clock}  {event}")
}
