//! The MCP host program (`examples/polyweave-mcp`, SPEC §9) against the two real servers the
//! tests install (`bash tests/mcp/install.sh`): `@modelcontextprotocol/server-everything`
//! and `mcp-server-time`, each run as the program's child over stdio.
//!
//! Each case is a function of the program it runs, so the C twin (`examples/c-host/build/pw-mcp`,
//! same flags and output) runs the same cases: `rust::*` always, `c::*` when that binary
//! exists — and they fail, not skip, without it when `PW_REQUIRE_C_MCP=1`.
//!
//! A case plays the model: it writes frames on the program's stdin and reads its SPEC §6 events
//! (`{"to":"model"|"consumer","frame":…}`) line by line, with the time each arrived. Values the
//! server makes deterministic are compared exactly, as lines; every case checks that each
//! model `TOOL_CALL` got exactly one `TOOL_RESULT`. What the program said to the server is
//! checked on the wire, through `tests/mcp/log_proxy.py`, not through its logs.
//!
//! Without the servers installed the cases fail with a message saying to run the install
//! script: they are never skipped silently.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::OnceLock;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use polyweave_tests::library::{cargo_build, profile, target_dir, workspace_root};
use serde_json::{json, Value};

// ------------------------------------------------------------ the programs

/// A host program under test.
struct Program {
    path: PathBuf,
    /// The Rust program, whose stderr lines this file knows (`polyweave-mcp: tool: NAME`).
    rust: bool,
}

impl Program {
    /// `polyweave-mcp`, built once per test process for this test's profile.
    fn rust() -> Program {
        static BIN: OnceLock<PathBuf> = OnceLock::new();
        let path = BIN.get_or_init(build_rust).clone();
        Program { path, rust: true }
    }

    /// `examples/c-host/build/pw-mcp` when it exists; without it, a failure when
    /// `PW_REQUIRE_C_MCP=1`, else `None` with a message.
    fn c() -> Option<Program> {
        let path = workspace_root().join("examples/c-host/build/pw-mcp");
        if path.is_file() {
            return Some(Program { path, rust: false });
        }
        let required = std::env::var("PW_REQUIRE_C_MCP").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "PW_REQUIRE_C_MCP=1 but the C MCP host {} does not exist (build it in examples/c-host)",
            path.display()
        );
        eprintln!(
            "skipping the C MCP host case: {} does not exist (PW_REQUIRE_C_MCP=1 makes this fail)",
            path.display()
        );
        None
    }
}

fn build_rust() -> PathBuf {
    let (profile, target) = (profile(), target_dir());
    let mut cmd = cargo_build("polyweave-mcp", &profile, &target);
    cmd.arg("-q");
    let out = cmd.output().expect("running cargo build -p polyweave-mcp");
    assert!(
        out.status.success(),
        "cargo build -p polyweave-mcp failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = target
        .join(&profile)
        .join(format!("polyweave-mcp{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "no polyweave-mcp at {}", bin.display());
    bin
}

// ------------------------------------------------------------ the servers

/// What `tests/mcp/install.sh` installed, from `target/mcp-servers/env.sh`.
struct Servers {
    /// server-everything's `dist/index.js` (run with `node … stdio`).
    everything: PathBuf,
    /// `mcp-server-time`, an executable.
    time: PathBuf,
}

const INSTALL_HINT: &str = "run `bash tests/mcp/install.sh` from the workspace root \
(it installs both pinned servers into target/mcp-servers and writes env.sh)";

fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(|| {
        let env = workspace_root().join("target/mcp-servers/env.sh");
        assert!(
            env.is_file(),
            "the MCP servers are not installed: {} is missing; {INSTALL_HINT}",
            env.display()
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(r#". "$1" && printf '%s\n%s\n' "$PW_MCP_EVERYTHING" "$PW_MCP_TIME""#)
            .arg("bash")
            .arg(&env)
            .output()
            .expect("running bash to read env.sh");
        assert!(out.status.success(), "reading {}: {out:?}", env.display());
        let text = String::from_utf8(out.stdout).expect("env.sh values are UTF-8");
        let mut values = text.lines().map(PathBuf::from);
        let (everything, time) = (values.next(), values.next());
        let (Some(everything), Some(time)) = (everything, time) else {
            panic!(
                "{} does not export PW_MCP_EVERYTHING and PW_MCP_TIME; {INSTALL_HINT}",
                env.display()
            )
        };
        for (var, path) in [("PW_MCP_EVERYTHING", &everything), ("PW_MCP_TIME", &time)] {
            assert!(
                path.is_file(),
                "{var}={} from {} does not exist; {INSTALL_HINT}",
                path.display(),
                env.display()
            );
        }
        assert!(
            Command::new("node")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success()),
            "node is not on PATH: server-everything runs under it; {INSTALL_HINT}"
        );
        Servers { everything, time }
    })
}

fn everything() -> Vec<OsString> {
    vec![
        "node".into(),
        servers().everything.clone().into(),
        "stdio".into(),
    ]
}

fn time_server() -> Vec<OsString> {
    vec![servers().time.clone().into()]
}

fn mcp_script(name: &str) -> OsString {
    workspace_root().join("tests/mcp").join(name).into()
}

/// `server` behind `tests/mcp/log_proxy.py`, and the file it logs the wire to.
fn logged(server: Vec<OsString>) -> (Vec<OsString>, PathBuf) {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-servers");
    std::fs::create_dir_all(&dir).expect("creating the wire log folder");
    let n = N.fetch_add(1, Ordering::Relaxed);
    let log = dir.join(format!("wire-{}-{n}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut cmd: Vec<OsString> = vec![
        "python3".into(),
        mcp_script("log_proxy.py"),
        log.clone().into(),
        "--".into(),
    ];
    cmd.extend(server);
    (cmd, log)
}

/// The JSON-RPC messages of a wire log: `(to_server, message)` in the order they passed.
fn wire(log: &Path) -> Vec<(bool, Value)> {
    let text =
        std::fs::read_to_string(log).unwrap_or_else(|e| panic!("reading {}: {e}", log.display()));
    text.lines()
        .filter_map(|l| {
            let (to_server, body) = match l.split_at_checked(2)? {
                ("> ", body) => (true, body),
                ("< ", body) => (false, body),
                _ => return None,
            };
            Some((to_server, serde_json::from_str(body).ok()?))
        })
        .collect()
}

/// The id of the `tools/call` request for `tool` the program sent (exactly one).
fn request_id(wire: &[(bool, Value)], tool: &str) -> Value {
    let ids: Vec<&Value> = wire
        .iter()
        .filter(|(to_server, m)| {
            *to_server && m["method"] == "tools/call" && m["params"]["name"] == tool
        })
        .map(|(_, m)| &m["id"])
        .collect();
    assert_eq!(
        ids.len(),
        1,
        "tools/call requests for {tool} on the wire: {ids:?}"
    );
    ids[0].clone()
}

// ------------------------------------------------------------ a session

/// A wait longer than any case needs: past it, the case fails.
const PATIENCE: Duration = Duration::from_secs(15);

/// One event line the program printed, and when it came (since the session started).
#[derive(Clone, Debug)]
struct Line {
    at: Duration,
    text: String,
    value: Value,
}

/// What the program printed and how it ended.
struct Finished {
    lines: Vec<Line>,
    stderr: String,
    status: ExitStatus,
    elapsed: Duration,
}

impl Finished {
    fn texts(&self) -> Vec<&str> {
        self.lines.iter().map(|l| l.text.as_str()).collect()
    }
}

/// The program running with a case as its model.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Result<String, String>>,
    stderr: Option<JoinHandle<String>>,
    t0: Instant,
    lines: Vec<Line>,
    /// Ids of the `TOOL_CALL`s sent, in order.
    calls: Vec<String>,
    what: String,
}

impl Session {
    fn start(program: &Program, flags: &[&str], server: &[OsString]) -> Session {
        let mut cmd = Command::new(&program.path);
        cmd.args(flags).arg("--").args(server);
        let what = format!("{cmd:?}");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {what}: {e}"));
        let t0 = Instant::now();
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().expect("stdout pipe");
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let line = line.map_err(|e| format!("stdout is not UTF-8 lines: {e}"));
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr pipe");
        let stderr = thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Session {
            stdin: child.stdin.take(),
            child,
            stdout: rx,
            stderr: Some(stderr),
            t0,
            lines: Vec::new(),
            calls: Vec::new(),
            what,
        }
    }

    /// Writes one model frame (its text, one line).
    fn send(&mut self, frame: &str) {
        self.send_all(&[frame]);
    }

    /// Writes several model frames at once (one write: one model turn), noting the ids of
    /// the `TOOL_CALL`s among them.
    fn send_all(&mut self, frames: &[&str]) {
        let mut text = String::new();
        for f in frames {
            let v: Value = serde_json::from_str(f).expect("a frame the case writes is JSON");
            if v["type"] == "TOOL_CALL" {
                if let Some(id) = v["content"]["id"].as_str() {
                    self.calls.push(id.to_string());
                }
            }
            text.push_str(f);
            text.push('\n');
        }
        let stdin = self.stdin.as_mut().expect("stdin still open");
        if let Err(e) = stdin
            .write_all(text.as_bytes())
            .and_then(|()| stdin.flush())
        {
            self.fail(&format!("writing its stdin: {e}"));
        }
    }

    /// Fails the case: stops the program and shows what it printed, its exit and its stderr.
    fn fail(&mut self, why: &str) -> ! {
        thread::sleep(Duration::from_millis(200));
        let status = match self.child.try_wait() {
            Ok(Some(status)) => format!("{status}"),
            _ => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                "still running: killed".to_string()
            }
        };
        let stderr = self.stderr.take().map(|h| h.join().unwrap_or_default());
        panic!(
            "{}: {why}\nprinted:\n{}\nexit: {status}\nstderr:\n{}",
            self.what,
            self.lines
                .iter()
                .map(|l| l.text.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            stderr.unwrap_or_default()
        );
    }

    /// Takes one line the program printed, waiting until `deadline`; `None` at its end.
    fn read(&mut self, deadline: Instant) -> Option<Line> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.stdout.recv_timeout(left) {
            Ok(Ok(text)) => {
                let at = self.t0.elapsed();
                let value = serde_json::from_str(&text).unwrap_or_else(|e| {
                    panic!("{}: stdout line is not JSON ({e}): {text}", self.what)
                });
                let line = Line { at, text, value };
                self.lines.push(line.clone());
                Some(line)
            }
            Ok(Err(e)) => panic!("{}: {e}", self.what),
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                self.fail(&format!("nothing more within {PATIENCE:?}"))
            }
        }
    }

    /// Reads until a line `pick` accepts, and returns it.
    fn until(&mut self, pick: impl Fn(&Value) -> bool) -> Line {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.read(deadline) {
                Some(line) if pick(&line.value) => return line,
                Some(_) => {}
                None => self.fail("stdout ended before the line waited for"),
            }
        }
    }

    /// Waits up to `max` for the program to exit by itself, stdin still open.
    fn wait_for_exit(&mut self, max: Duration) {
        let deadline = Instant::now() + max;
        while self
            .child
            .try_wait()
            .expect("waiting for the program")
            .is_none()
        {
            if Instant::now() > deadline {
                self.fail(&format!("still running after {max:?}"));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Reads until the round's end: the mirrored continue prompt on the consumer side.
    fn round(&mut self) -> Line {
        self.until(is_consumer_prompt)
    }

    /// Lines printed from index `from` on.
    fn since(&self, from: usize) -> Vec<&str> {
        self.lines[from..].iter().map(|l| l.text.as_str()).collect()
    }

    /// Closes stdin, reads everything left, waits for the exit, and checks what every case
    /// checks: every line is a `to` event, and every `TOOL_CALL` sent got exactly one
    /// `TOOL_RESULT` (by id), none other came.
    fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        while self.read(deadline).is_some() {}
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting for the program") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "{}: did not exit within {PATIENCE:?} of its stdin's end",
                    self.what
                );
            }
            thread::sleep(Duration::from_millis(10));
        };
        let elapsed = self.t0.elapsed();
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        let f = Finished {
            lines: std::mem::take(&mut self.lines),
            stderr,
            status,
            elapsed,
        };
        let context = || {
            format!(
                "{}\nstdout:\n{}\nstderr:\n{}",
                self.what,
                f.texts().join("\n"),
                f.stderr
            )
        };
        for l in &f.lines {
            let to = l.value["to"].as_str();
            assert!(
                matches!(to, Some("model" | "consumer")) && l.value["frame"].is_object(),
                "not a to-model or to-consumer event: {}\n{}",
                l.text,
                context()
            );
        }
        let mut results: HashMap<String, usize> = HashMap::new();
        for l in &f.lines {
            let frame = &l.value["frame"];
            if l.value["to"] == "model" && frame["type"] == "TOOL_RESULT" {
                let id = frame["content"]["id"]
                    .as_str()
                    .unwrap_or("<none>")
                    .to_string();
                *results.entry(id).or_default() += 1;
            }
            assert!(
                !(l.value["to"] == "consumer" && frame["type"] == "TOOL_RESULT"),
                "a TOOL_RESULT went to the consumer: {}\n{}",
                l.text,
                context()
            );
        }
        for id in &self.calls {
            assert_eq!(
                results.remove(id),
                Some(1),
                "TOOL_RESULTs for call {id:?}\n{}",
                context()
            );
        }
        assert!(
            results.is_empty(),
            "TOOL_RESULTs for calls never made: {results:?}\n{}",
            context()
        );
        f
    }
}

fn is_consumer_prompt(v: &Value) -> bool {
    v["to"] == "consumer"
        && v["frame"]["type"] == "TEXT"
        && v["frame"]["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("Tool results above."))
}

fn is_result(v: &Value, id: &str) -> bool {
    v["to"] == "model" && v["frame"]["type"] == "TOOL_RESULT" && v["frame"]["content"]["id"] == id
}

/// A model `TOOL_CALL`, canonical (serde_json writes object members sorted).
fn call(id: &str, name: &str, args: Value) -> String {
    format!(
        r#"{{"type":"TOOL_CALL","content":{{"id":{},"name":{},"args":{args}}}}}"#,
        json!(id),
        json!(name)
    )
}

/// The event line of a `TOOL_RESULT` with a result (`result` as its compact JSON text).
fn result_line(id: &str, name: &str, result: &str) -> String {
    format!(
        r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","result":{result}}}}}}}"#
    )
}

/// The event line of a `TOOL_RESULT` with an error (the message as a JSON string).
fn error_line(id: &str, name: &str, error: &str) -> String {
    format!(
        r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","error":{}}}}}}}"#,
        json!(error)
    )
}

/// The two event lines of a continue prompt (to the model, mirrored to the consumer).
fn prompt_lines(last_error: Option<&str>) -> [String; 2] {
    let text = match last_error {
        Some(e) => format!("Tool results above. Last tool error: {e}"),
        None => "Tool results above.".to_string(),
    };
    let frame = format!(r#"{{"type":"TEXT","content":{}}}"#, json!(text));
    [
        format!(r#"{{"to":"model","frame":{frame}}}"#),
        format!(r#"{{"to":"consumer","frame":{frame}}}"#),
    ]
}

fn assert_exit_ok(f: &Finished) {
    assert!(
        f.status.success(),
        "exit {:?}\nstderr:\n{}",
        f.status,
        f.stderr
    );
}

/// The `polyweave-mcp: tool: NAME` lines of the Rust program's stderr up to its ready line
/// (a tool-list change after it logs the new list too), and its ready count.
fn logged_tools(stderr: &str) -> (Vec<&str>, Option<&str>) {
    let tools = stderr
        .lines()
        .take_while(|l| !l.starts_with("polyweave-mcp: ready: "))
        .filter_map(|l| l.strip_prefix("polyweave-mcp: tool: "))
        .collect();
    let ready = stderr
        .lines()
        .find_map(|l| l.strip_prefix("polyweave-mcp: ready: "));
    (tools, ready)
}

/// Every name in `names` is registered as an adapter tool: a call with args that are not an
/// object fails at once, never reaching the server — where an unregistered name gets the
/// wrapper's `Tool "<name>" not found`. The Rust program checks the args against the tool's
/// `inputSchema` (every one these servers list says `"type":"object"`, SPEC §11); the C
/// twin leaves them to the MCP client's own check (SPEC §9.2).
fn assert_registered(s: &mut Session, names: &[&str], validated: bool) {
    let from = s.lines.len();
    for (i, name) in names.iter().enumerate() {
        s.send(&call(&format!("r{i}"), name, json!([])));
        s.until(|v| is_result(v, &format!("r{i}")));
        s.round();
    }
    s.send(&call("u", "not-a-listed-tool", json!({})));
    s.round();
    let results: Vec<&str> = s.lines[from..]
        .iter()
        .filter(|l| l.value["frame"]["type"] == "TOOL_RESULT")
        .map(|l| l.text.as_str())
        .collect();
    let mut want: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let e = match validated {
                true => format!("Tool {n} arguments are invalid: (args): expected object"),
                false => format!("Tool {n} arguments must be an object"),
            };
            error_line(&format!("r{i}"), n, &e)
        })
        .collect();
    want.push(error_line(
        "u",
        "not-a-listed-tool",
        r#"Tool "not-a-listed-tool" not found"#,
    ));
    assert_eq!(results, want);
}

// ------------------------------------------------------------ the cases

/// server-everything's tools after `notifications/initialized` (13: the 12 it always has and
/// `simulate-research-query`, which it registers for any client; the sampling, elicitation and
/// roots tools need client capabilities this client does not claim).
const EVERYTHING_TOOLS: [&str; 13] = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
];

const TIME_TOOLS: [&str; 2] = ["get_current_time", "convert_time"];

const LONG: &str = "trigger-long-running-operation";

/// Every tool server-everything lists is registered, and no other.
fn everything_registers_every_listed_tool(p: &Program) {
    let mut s = Session::start(p, &[], &everything());
    assert_registered(&mut s, &EVERYTHING_TOOLS, p.rust);
    let f = s.finish();
    assert_exit_ok(&f);
    // The C twin's logs are its own: there the behaviour above is the check.
    if p.rust {
        let (tools, ready) = logged_tools(&f.stderr);
        assert_eq!(tools, EVERYTHING_TOOLS, "stderr:\n{}", f.stderr);
        assert_eq!(ready, Some("13 tools"));
    }
}

/// `echo` and `get-sum` answered with the server's content, exactly; a model `TEXT` is
/// forwarded and its `END` held until the round ends.
fn everything_echo_and_get_sum(p: &Program) {
    let mut s = Session::start(p, &[], &everything());
    s.send_all(&[
        r#"{"type":"TEXT","content":"calling"}"#,
        &call("c1", "echo", json!({"message": "hi"})),
        r#"{"type":"END"}"#,
    ]);
    s.until(|v| v["frame"]["type"] == "END");
    let [to_model, to_consumer] = prompt_lines(None);
    assert_eq!(
        s.since(0),
        [
            r#"{"to":"consumer","frame":{"type":"TEXT","content":"calling"}}"#,
            r#"{"to":"model","frame":{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}}"#,
            &to_model,
            &to_consumer,
            r#"{"to":"consumer","frame":{"type":"END"}}"#,
        ]
    );
    let from = s.lines.len();
    s.send(&call("c2", "get-sum", json!({"a": 2, "b": 3})));
    s.round();
    assert_eq!(
        s.since(from),
        [
            result_line(
                "c2",
                "get-sum",
                r#"[{"type":"text","text":"The sum of 2 and 3 is 5."}]"#
            ),
            to_model,
            to_consumer,
        ]
    );
    assert_exit_ok(&s.finish());
}

/// `get-structured-content` gives its `structuredContent` as the result (fixed per city).
fn everything_structured_content(p: &Program) {
    let mut s = Session::start(p, &[], &everything());
    let cities = [
        (
            "Chicago",
            r#"{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}"#,
        ),
        (
            "Los Angeles",
            r#"{"temperature":73,"conditions":"Sunny / Clear","humidity":48}"#,
        ),
    ];
    for (i, (city, weather)) in cities.iter().enumerate() {
        let from = s.lines.len();
        let id = format!("w{i}");
        s.send(&call(
            &id,
            "get-structured-content",
            json!({"location": city}),
        ));
        s.round();
        let [to_model, to_consumer] = prompt_lines(None);
        assert_eq!(
            s.since(from),
            [
                result_line(&id, "get-structured-content", weather),
                to_model,
                to_consumer
            ]
        );
    }
    assert_exit_ok(&s.finish());
}

/// A tool server-everything does not know (registered with `--extra-tool`): its `isError`
/// result becomes the error; without the flag the wrapper answers for it.
fn everything_unknown_tool(p: &Program) {
    let mut s = Session::start(p, &["--extra-tool", "nope"], &everything());
    s.send(&call("n1", "nope", json!({})));
    s.round();
    let e = "MCP error -32602: Tool nope not found";
    let [to_model, to_consumer] = prompt_lines(Some(e));
    assert_eq!(
        s.since(0),
        [error_line("n1", "nope", e), to_model, to_consumer]
    );
    // Echo still works after the error.
    s.send(&call("n2", "echo", json!({"message": "still here"})));
    s.until(|v| is_result(v, "n2"));
    assert!(s
        .lines
        .last()
        .unwrap()
        .text
        .contains(r#""text":"Echo: still here""#));
    assert_exit_ok(&s.finish());
}

/// A long call whose progress (every 0.5 s) restarts its 1.5 s timeout completes after 3 s;
/// the server's progress notifications carry the call's token and nothing is cancelled.
fn long_call_kept_alive_by_progress(p: &Program) {
    let (server, log) = logged(everything());
    let mut s = Session::start(
        p,
        &["--timeout-ms", "1500", "--max-total-ms", "10000"],
        &server,
    );
    // Wait for the start-up, so the clock starts with the call.
    s.send(&call("e", "echo", json!({"message": "up"})));
    s.round();
    let from = s.lines.len();
    let sent = s.t0.elapsed();
    s.send(&call("L", LONG, json!({"duration": 3, "steps": 6})));
    let got = s.round();
    let took = got.at - sent;
    let [to_model, to_consumer] = prompt_lines(None);
    assert_eq!(
        s.since(from),
        [
            result_line(
                "L",
                LONG,
                r#"[{"type":"text","text":"Long running operation completed. Duration: 3 seconds, Steps: 6."}]"#
            ),
            to_model,
            to_consumer,
        ]
    );
    assert!(
        took >= Duration::from_millis(2900) && took < Duration::from_secs(8),
        "the 3 s call took {took:?}"
    );
    let f = s.finish();
    assert_exit_ok(&f);
    let wire = wire(&log);
    let id = request_id(&wire, LONG);
    let progress = wire
        .iter()
        .filter(|(to_server, m)| !*to_server && m["method"] == "notifications/progress")
        .filter(|(_, m)| m["params"]["progressToken"] == id)
        .count();
    assert_eq!(progress, 6, "progress notifications for request {id}");
    let cancelled = wire
        .iter()
        .filter(|(_, m)| m["method"] == "notifications/cancelled")
        .count();
    assert_eq!(cancelled, 0, "nothing is cancelled");
}

/// With the cap off (`--max-total-ms 0`), progress restarts nothing: the long call times out
/// at its 1.5 s and the server is told.
fn long_call_times_out_without_cap(p: &Program) {
    long_call_ends_by_timeout(p, &["--timeout-ms", "1500"], 1500, (1450, 2400));
}

/// A long call whose progress keeps it past its 1.5 s timeout still fails at its 2 s cap,
/// and the server gets `notifications/cancelled` for it with reason `timeout`.
fn long_call_fails_at_its_cap(p: &Program) {
    long_call_ends_by_timeout(
        p,
        &["--timeout-ms", "1500", "--max-total-ms", "2000"],
        2000,
        (1950, 2900),
    );
}

/// A 3 s long call that ends by a timeout of `ms` after between `window` ms.
fn long_call_ends_by_timeout(p: &Program, flags: &[&str], ms: u64, window: (u64, u64)) {
    let (server, log) = logged(everything());
    let mut s = Session::start(p, flags, &server);
    s.send(&call("e", "echo", json!({"message": "up"})));
    s.round();
    let from = s.lines.len();
    let sent = s.t0.elapsed();
    s.send(&call("L", LONG, json!({"duration": 3, "steps": 6})));
    let got = s.round();
    let took = got.at - sent;
    let e = format!("Tool {LONG} timed out after {ms}ms");
    let [to_model, to_consumer] = prompt_lines(Some(&e));
    assert_eq!(
        s.since(from),
        [error_line("L", LONG, &e), to_model, to_consumer]
    );
    assert!(
        took >= Duration::from_millis(window.0) && took < Duration::from_millis(window.1),
        "the call ended after {took:?}, not within {window:?} ms"
    );
    let f = s.finish();
    assert_exit_ok(&f);
    let wire = wire(&log);
    let id = request_id(&wire, LONG);
    let cancels: Vec<&Value> = wire
        .iter()
        .filter(|(to_server, m)| *to_server && m["method"] == "notifications/cancelled")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(
        cancels,
        [
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "timeout"}})
        ],
        "the cancellations sent"
    );
    // The cancellation came after the request, and no answer to it was ever passed on.
    let at = |pick: &dyn Fn(&Value) -> bool| wire.iter().position(|(_, m)| pick(m));
    let request = at(&|m| m["method"] == "tools/call" && m["id"] == id).unwrap();
    let cancel = at(&|m| m["method"] == "notifications/cancelled").unwrap();
    assert!(request < cancel);
    assert!(
        at(&|m| m.get("method").is_none() && m["id"] == id).is_none_or(|answer| answer > cancel)
    );
    if ms > 1500 {
        // Progress restarted the 1.5 s timeout before the cap ended the call.
        let progress = wire[..cancel]
            .iter()
            .filter(|(to_server, m)| !*to_server && m["method"] == "notifications/progress")
            .count();
        assert!(progress >= 2, "progress before the cap: {progress}");
    }
}

/// Two calls in one model turn, a long one then a quick `echo`: the echo's result comes first,
/// then the long one's, then one continue prompt for the round.
fn parallel_calls_answered_out_of_order(p: &Program) {
    let mut s = Session::start(p, &[], &everything());
    s.send_all(&[
        &call("slow", LONG, json!({"duration": 1, "steps": 2})),
        &call("fast", "echo", json!({"message": "first"})),
    ]);
    s.round();
    let [to_model, to_consumer] = prompt_lines(None);
    assert_eq!(
        s.since(0),
        [
            result_line("fast", "echo", r#"[{"type":"text","text":"Echo: first"}]"#),
            result_line(
                "slow",
                LONG,
                r#"[{"type":"text","text":"Long running operation completed. Duration: 1 seconds, Steps: 2."}]"#
            ),
            to_model,
            to_consumer,
        ]
    );
    assert!(
        s.lines[1].at - s.lines[0].at >= Duration::from_millis(500),
        "{:?}",
        s.lines
    );
    assert_exit_ok(&s.finish());
}

/// The server killed in the middle of an `echo` (`kill_proxy.py`): the call fails with the
/// client's closed-connection error, and so does a later call, at once.
fn server_killed_mid_call(p: &Program) {
    let mut server = vec![
        "python3".into(),
        mcp_script("kill_proxy.py"),
        "--kill-on-tool".into(),
        "echo".into(),
        "--".into(),
    ];
    server.extend(everything());
    let mut s = Session::start(p, &[], &server);
    let e = "Tool echo failed: the MCP server closed the connection";
    let [to_model, to_consumer] = prompt_lines(Some(e));
    s.send(&call("k1", "echo", json!({"message": "doomed"})));
    s.round();
    assert_eq!(
        s.since(0),
        [
            error_line("k1", "echo", e),
            to_model.clone(),
            to_consumer.clone()
        ]
    );
    let from = s.lines.len();
    s.send(&call("k2", "echo", json!({"message": "after"})));
    s.round();
    assert_eq!(
        s.since(from),
        [error_line("k2", "echo", e), to_model, to_consumer]
    );
    assert_exit_ok(&s.finish());
}

/// mcp-server-time: both tools registered, `get_current_time` gives its structuredContent,
/// `convert_time` between two zones without daylight saving gives fixed times, and an unknown
/// tool's JSON-RPC error becomes the call's error.
fn time_server_tools(p: &Program) {
    let mut s = Session::start(p, &["--extra-tool", "nope"], &time_server());
    assert_registered(&mut s, &TIME_TOOLS, p.rust);

    s.send(&call("t1", "get_current_time", json!({"timezone": "UTC"})));
    let line = s.until(|v| is_result(v, "t1"));
    s.round();
    let result = &line.value["frame"]["content"]["result"];
    let keys: BTreeSet<&str> = result
        .as_object()
        .expect("an object result")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from(["timezone", "datetime", "day_of_week", "is_dst"]),
        "{result}"
    );
    assert_eq!(result["timezone"], "UTC");
    assert_eq!(result["is_dst"], false);
    let days = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    assert!(
        days.contains(&result["day_of_week"].as_str().unwrap_or("")),
        "{result}"
    );
    let datetime = result["datetime"].as_str().expect("a datetime string");
    assert!(is_datetime(datetime, "+00:00"), "{datetime}");

    s.send(&call(
        "t2",
        "convert_time",
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
    ));
    let line = s.until(|v| is_result(v, "t2"));
    s.round();
    let r = &line.value["frame"]["content"]["result"];
    assert_eq!(r["time_difference"], "+9.0h", "{r}");
    assert_eq!(
        (&r["source"]["timezone"], &r["target"]["timezone"]),
        (&json!("UTC"), &json!("Asia/Tokyo"))
    );
    assert_eq!(
        (&r["source"]["is_dst"], &r["target"]["is_dst"]),
        (&json!(false), &json!(false))
    );
    let (from, to) = (
        r["source"]["datetime"].as_str().unwrap(),
        r["target"]["datetime"].as_str().unwrap(),
    );
    assert!(
        is_datetime(from, "+00:00") && from.ends_with("T12:00:00+00:00"),
        "{from}"
    );
    assert!(
        is_datetime(to, "+09:00") && to.ends_with("T21:00:00+09:00"),
        "{to}"
    );
    assert_eq!(
        from[..10],
        to[..10],
        "12:00 UTC is 21:00 the same day in Tokyo"
    );
    assert_eq!(r["source"]["day_of_week"], r["target"]["day_of_week"]);

    let from = s.lines.len();
    s.send(&call("t3", "nope", json!({})));
    s.round();
    let e = "Unknown tool: nope";
    let [to_model, to_consumer] = prompt_lines(Some(e));
    assert_eq!(
        s.since(from),
        [error_line("t3", "nope", e), to_model, to_consumer]
    );

    let f = s.finish();
    assert_exit_ok(&f);
    if p.rust {
        let (tools, ready) = logged_tools(&f.stderr);
        assert_eq!(tools, TIME_TOOLS, "stderr:\n{}", f.stderr);
        assert_eq!(ready, Some("2 tools"));
    }
}

/// `YYYY-MM-DDTHH:MM:SS` then `zone` (`+00:00`).
fn is_datetime(text: &str, zone: &str) -> bool {
    let Some(stamp) = text.strip_suffix(zone) else {
        return false;
    };
    stamp.len() == 19
        && stamp.char_indices().all(|(i, c)| match i {
            4 | 7 => c == '-',
            10 => c == 'T',
            13 | 16 => c == ':',
            _ => c.is_ascii_digit(),
        })
}

/// Runs the program against a server that does not start, with stdin open: exit 2, nothing on
/// stdout, a message on stderr, within `max`.
fn start_up_fails(p: &Program, server: &[OsString], max: Duration) -> Finished {
    let mut s = Session::start(p, &[], server);
    s.wait_for_exit(max);
    let f = s.finish();
    assert_eq!(
        f.status.code(),
        Some(2),
        "exit of a failed start-up\nstderr:\n{}",
        f.stderr
    );
    assert!(
        f.lines.is_empty(),
        "stdout of a failed start-up: {:?}",
        f.texts()
    );
    assert!(!f.stderr.trim().is_empty(), "no message on stderr");
    f
}

/// A server that exits before it is ready, and one that answers an unknown protocol version.
fn start_up_failures(p: &Program) {
    let exits = ["sh".into(), "-c".into(), "exit 3".into()];
    start_up_fails(p, &exits, Duration::from_secs(5));
    let old = [
        "python3".into(),
        mcp_script("fake_server.py"),
        "1999-01-01".into(),
    ];
    let f = start_up_fails(p, &old, Duration::from_secs(5));
    assert!(
        f.stderr.contains("1999-01-01"),
        "stderr names the version:\n{}",
        f.stderr
    );
}

/// A server that never answers: the start-up gives up (after 20 s, `pw-mcp` after 10 s) with
/// exit 2.
fn start_up_times_out(p: &Program) {
    let mute = ["sleep".into(), "60".into()];
    let f = start_up_fails(p, &mute, Duration::from_secs(25));
    assert!(
        f.elapsed >= Duration::from_secs(5),
        "gave up after {:?}",
        f.elapsed
    );
}

macro_rules! cases {
    ($($case:ident),* $(,)?) => {
        /// The Rust program, `polyweave-mcp`.
        mod rust {
            $(#[test] fn $case() { super::$case(&super::Program::rust()) })*
        }
        /// The C twin, `examples/c-host/build/pw-mcp`, when it exists.
        mod c {
            $(#[test] fn $case() { if let Some(p) = super::Program::c() { super::$case(&p) } })*
        }
    };
}

cases!(
    everything_registers_every_listed_tool,
    everything_echo_and_get_sum,
    everything_structured_content,
    everything_unknown_tool,
    long_call_kept_alive_by_progress,
    long_call_times_out_without_cap,
    long_call_fails_at_its_cap,
    parallel_calls_answered_out_of_order,
    server_killed_mid_call,
    time_server_tools,
    start_up_failures,
    start_up_times_out,
);

// ------------------------------------------------------------ their tools' schemas (SPEC §11)

/// The `tools/call` requests on the wire: each one's tool and arguments.
fn calls_on_the_wire(log: &Path) -> Vec<(String, Value)> {
    wire(log)
        .into_iter()
        .filter(|(to_server, m)| *to_server && m["method"] == "tools/call")
        .map(|(_, m)| {
            let name = m["params"]["name"].as_str().unwrap_or("?").to_string();
            (name, m["params"]["arguments"].clone())
        })
        .collect()
}

/// Each call alone in its round, behind the log proxy: the lines of every round, and the
/// `tools/call` requests the server got.
fn rounds(
    flags: &[&str],
    server: Vec<OsString>,
    calls: &[(&str, Value)],
) -> (Vec<String>, Vec<(String, Value)>) {
    let (server, log) = logged(server);
    let mut s = Session::start(&Program::rust(), flags, &server);
    for (i, (name, args)) in calls.iter().enumerate() {
        s.send(&call(&format!("v{i}"), name, args.clone()));
        s.round();
    }
    let lines = s.since(0).iter().map(|l| l.to_string()).collect();
    assert_exit_ok(&s.finish());
    (lines, calls_on_the_wire(&log))
}

/// One round's lines: a call's error and the continue prompt naming it.
fn error_round(id: &str, name: &str, e: &str) -> Vec<String> {
    let [to_model, to_consumer] = prompt_lines(Some(e));
    vec![error_line(id, name, e), to_model, to_consumer]
}

/// One round's lines: a call's result and the continue prompt.
fn result_round(id: &str, name: &str, result: &str) -> Vec<String> {
    let [to_model, to_consumer] = prompt_lines(None);
    vec![result_line(id, name, result), to_model, to_consumer]
}

/// server-everything: args that break a tool's `inputSchema` fail at once with SPEC §11's
/// text and never reach the server; the valid calls do, and `get-structured-content`'s
/// result satisfies the `outputSchema` it declares, so it passes.
// SPEC §11
#[test]
fn everything_args_that_break_the_input_schema_never_reach_the_server() {
    let calls = [
        ("get-sum", json!({"a": "x", "b": 1})),
        ("echo", json!({})),
        ("get-structured-content", json!({"location": "Paris"})),
        ("get-sum", json!({"a": 2, "b": 3})),
        ("get-structured-content", json!({"location": "New York"})),
    ];
    let (lines, wire) = rounds(&[], everything(), &calls);
    let invalid = |tool: &str, why: &str| format!("Tool {tool} arguments are invalid: {why}");
    let want = [
        error_round("v0", "get-sum", &invalid("get-sum", "/a: expected number")),
        error_round(
            "v1",
            "echo",
            &invalid("echo", r#"(args): missing required property "message""#),
        ),
        error_round(
            "v2",
            "get-structured-content",
            &invalid(
                "get-structured-content",
                "/location: not one of the allowed values",
            ),
        ),
        result_round(
            "v3",
            "get-sum",
            r#"[{"type":"text","text":"The sum of 2 and 3 is 5."}]"#,
        ),
        result_round(
            "v4",
            "get-structured-content",
            r#"{"temperature":33,"conditions":"Cloudy","humidity":82}"#,
        ),
    ]
    .concat();
    assert_eq!(lines, want);
    assert_eq!(
        wire,
        [
            ("get-sum".to_string(), json!({"a": 2, "b": 3})),
            (
                "get-structured-content".to_string(),
                json!({"location": "New York"})
            ),
        ]
    );
}

/// `--no-validate`: the same call reaches the server, which answers with its own error.
// SPEC §9.1, §11
#[test]
fn everything_without_validation_answers_for_itself() {
    let (lines, wire) = rounds(
        &["--no-validate"],
        everything(),
        &[("get-sum", json!({"a": "x", "b": 1}))],
    );
    let e = "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: \
             Invalid input: expected number, received string at a";
    assert_eq!(lines, error_round("v0", "get-sum", e));
    assert_eq!(wire, [("get-sum".to_string(), json!({"a": "x", "b": 1}))]);
}

/// mcp-server-time: `get_current_time` without its required `timezone` fails at once, and the
/// server never hears of it; with `--no-validate` it gets it and answers with its own error.
// SPEC §9.1, §11
#[test]
fn time_server_args_checked_unless_told_not_to() {
    let calls = [("get_current_time", json!({}))];
    let (lines, wire) = rounds(&[], time_server(), &calls);
    let e = r#"Tool get_current_time arguments are invalid: (args): missing required property "timezone""#;
    assert_eq!(lines, error_round("v0", "get_current_time", e));
    assert_eq!(wire, []);
    let (lines, wire) = rounds(&["--no-validate"], time_server(), &calls);
    let e = "Error executing tool get_current_time: 1 validation error for \
             get_current_timeArguments\ntimezone\n  Field required [type=missing, \
             input_value={}, input_type=dict]\n    For further information visit \
             https://errors.pydantic.dev/2.14/v/missing";
    assert_eq!(lines, error_round("v0", "get_current_time", e));
    assert_eq!(wire, [("get_current_time".to_string(), json!({}))]);
}

/// A tool whose `inputSchema` the validator refuses (a `$ref` to another document) is still
/// registered, unchecked, with one log line naming it and why; the others are checked.
/// `tests/mcp/weather_server.py --remote-ref` lists such a tool, `place.find`.
// SPEC §11
#[test]
fn a_schema_the_validator_refuses_leaves_its_tool_unchecked() {
    let (server, log) = logged(vec![
        "python3".into(),
        mcp_script("weather_server.py"),
        "--remote-ref".into(),
    ]);
    let mut s = Session::start(&Program::rust(), &[], &server);
    s.send(&call("p", "place.find", json!({"near": [1, 2]})));
    s.round();
    s.send(&call("w", "weather.now", json!({"location": 7})));
    s.round();
    let e = "Tool weather.now arguments are invalid: /location: expected string";
    assert_eq!(
        s.since(0),
        [
            result_round(
                "p",
                "place.find",
                r#"[{"type":"text","text":"found [1, 2]"}]"#
            ),
            error_round("w", "weather.now", e),
        ]
        .concat()
    );
    let f = s.finish();
    assert_exit_ok(&f);
    let refused: Vec<&str> = f
        .stderr
        .lines()
        .filter(|l| l.contains(" is not checked: "))
        .collect();
    assert_eq!(
        refused,
        [
            "polyweave-mcp: tool place.find: its inputSchema is not checked: schema at byte 51: \
          a $ref to another document (never fetched)"
        ],
        "{}",
        f.stderr
    );
    assert_eq!(
        calls_on_the_wire(&log),
        [("place.find".to_string(), json!({"near": [1, 2]}))]
    );
}

// ------------------------------------------------------------ their tools, declared (SPEC §10.1)

/// The server's `tools/list` entries as it sent them, after the 2025-11-25 handshake.
fn listed_tools(server: &[OsString]) -> Vec<String> {
    let mut child = Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the MCP server");
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"polyweave-tests","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let tools = loop {
        let line = lines
            .next()
            .expect("the server answers tools/list")
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["id"] == 2 {
            break v["result"]["tools"].as_array().expect("tools").clone();
        }
    };
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    tools.iter().map(Value::to_string).collect()
}

/// The tools of both real servers, declared for every provider from their `tools/list`
/// entries as sent, are accepted by each provider SDK's request types (tests/sdk/check_request.py).
#[test]
fn real_servers_tools_are_declared_for_every_provider() {
    use polyweave_tool_adapter::request::{Conversation, Declaration, Request, RequestOptions};
    use polyweave_tool_adapter::Provider;
    let mut entries = listed_tools(&everything());
    let n_everything = entries.len();
    entries.extend(listed_tools(&time_server()));
    assert!(
        n_everything >= 10 && entries.len() >= n_everything + 2,
        "{entries:?}"
    );
    let decls: Vec<Declaration<'_>> = entries
        .iter()
        .map(|e| Declaration::from_mcp(e.as_bytes()).expect("a tools/list entry"))
        .collect();
    let mut mem = [0u8; 256];
    let mut c = Conversation::new(&mut mem);
    c.push_user("hi").unwrap();
    let mut lines = String::new();
    for &p in Provider::ALL {
        let opts = RequestOptions::new("m");
        let mut req =
            Request::new(&c, p, &opts, &decls).unwrap_or_else(|e| panic!("{}: {e}", p.name()));
        let mut body = vec![0u8; req.len()];
        let mut n = 0;
        while n < body.len() {
            n += req.write(&mut body[n..]);
        }
        let body: Value = serde_json::from_slice(&body).unwrap();
        // `get-sum` and the others go to every provider under their own names (they match
        // every name rule); nothing but name, description and schema is sent.
        let text = body.to_string();
        assert!(
            text.contains("\"get-sum\"") && text.contains("\"get_current_time\""),
            "{text}"
        );
        assert!(
            !text.contains("\"annotations\"") && !text.contains("\"outputSchema\""),
            "{text}"
        );
        lines += &format!("{}\n", json!({"provider": p.name(), "body": body}));
    }
    let python = polyweave_tests::library::sdk_python()
        .filter(|p| p.is_file())
        .expect("the SDK environment (tests/run.sh makes target/sdk-venv)");
    let mut child = Command::new(python)
        .arg(workspace_root().join("tests/sdk/check_request.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("checked 5 bodies"),
        "{text}"
    );
}

// ------------------------------------------------------------ the revisions, in process

/// The crate's client itself (through `polyweave_tests::mcp_loop`, in real time) against
/// each real server under the default configuration: `mcp-server-time` lists 2026-07-28 in
/// its `server/discover` result and is spoken to in it, without a handshake;
/// server-everything refuses the probe and gets the 2025-11-25 handshake on the same
/// connection. Every line the client writes is recorded (and written to the server as is).
mod revisions {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, ChildStdin, Command, Stdio};
    use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
    use std::thread;
    use std::time::{Duration, Instant};

    use polyweave_tests::mcp_loop::{call, envelope, McpLoop};
    use polyweave_tool_adapter::mcp::{McpConfig, McpState};
    use polyweave_tool_adapter::wrapper::WrapperConfig;
    use serde_json::Value;

    /// A server run as a child, its stdout read line by line on a thread.
    struct Server {
        child: Child,
        stdin: ChildStdin,
        lines: Receiver<String>,
        t0: Instant,
        /// Every line the client wrote to it, in order (without the LF).
        written: Vec<String>,
        /// Every line it wrote, in order.
        read: Vec<String>,
        /// Both, in the order they passed (`> ` to the server, `< ` from it), as
        /// `tests/mcp/log_proxy.py` logs them; written to a file at the end.
        wire: Vec<String>,
    }

    impl Server {
        fn start(cmd: &[std::ffi::OsString]) -> Server {
            let mut child = Command::new(&cmd[0])
                .args(&cmd[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
            let stdin = child.stdin.take().unwrap();
            let stdout = child.stdout.take().unwrap();
            let (tx, lines) = mpsc::channel();
            thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            Server {
                child,
                stdin,
                lines,
                t0: Instant::now(),
                written: Vec::new(),
                read: Vec::new(),
                wire: Vec::new(),
            }
        }

        fn ms(&self) -> u64 {
            self.t0.elapsed().as_millis() as u64
        }

        /// Moves lines both ways, time going on, until `done` says so; fails after 20 s.
        fn drive(&mut self, l: &mut McpLoop<'_>, done: impl Fn(&McpLoop<'_>) -> bool) {
            let give_up = Instant::now() + Duration::from_secs(20);
            loop {
                for line in l.take_server() {
                    writeln!(self.stdin, "{line}").expect("writing to the server");
                    self.wire.push(format!("> {line}"));
                    self.written.push(line);
                }
                if done(l) {
                    return;
                }
                assert!(
                    Instant::now() < give_up,
                    "no end after 20 s; the client wrote:\n{}\nthe server wrote:\n{}\nseen: {:?}",
                    self.written.join("\n"),
                    self.read.join("\n"),
                    l.seen
                );
                match self.lines.recv_timeout(Duration::from_millis(50)) {
                    Ok(line) => {
                        l.now = self.ms();
                        l.server(&line);
                        self.wire.push(format!("< {line}"));
                        self.read.push(line);
                    }
                    Err(RecvTimeoutError::Timeout) => l.tick(self.ms()),
                    Err(RecvTimeoutError::Disconnected) => panic!(
                        "the server ended; the client wrote:\n{}\nthe server wrote:\n{}",
                        self.written.join("\n"),
                        self.read.join("\n")
                    ),
                }
            }
        }

        /// Ends the server and records the wire in `<CARGO_TARGET_TMPDIR>/mcp-servers/<name>.log`.
        fn stop(mut self, name: &str) {
            let _ = self.child.kill();
            let _ = self.child.wait();
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-servers");
            std::fs::create_dir_all(&dir).expect("creating the wire log folder");
            let log = dir.join(format!("{name}.log"));
            std::fs::write(&log, self.wire.join("\n") + "\n")
                .unwrap_or_else(|e| panic!("writing {}: {e}", log.display()));
        }
    }

    /// The wrapper and the client under their default configurations, long lines allowed
    /// (server-everything's `initialize` result carries its instructions).
    fn client(tools: &[&str]) -> McpLoop<'static> {
        let cfg = WrapperConfig::DEFAULT;
        let mcp = McpConfig {
            line_cap: 1 << 16,
            ..McpConfig::DEFAULT.fit(&cfg)
        };
        McpLoop::new(cfg, mcp, tools, 4, 4)
    }

    fn discover_line() -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{{{}}}}}}}"#,
            envelope()
        )
    }

    fn methods(written: &[String]) -> Vec<String> {
        written
            .iter()
            .map(|l| {
                let v: Value = serde_json::from_str(l).expect("a JSON line");
                v["method"].as_str().unwrap_or("<response>").to_string()
            })
            .collect()
    }

    /// SPEC §9.9, §9.3: `mcp-server-time` under the default configuration: `server/discover`,
    /// then `tools/list` and `tools/call` with the envelope, no `initialize` ever; its
    /// `get_current_time` answers its `structuredContent`, which is the call's result.
    #[test]
    fn time_server_is_spoken_to_in_2026_07_28() {
        let mut l = client(&["get_current_time", "convert_time"]);
        let mut s = Server::start(&super::time_server());
        l.now = s.ms();
        l.client.start(l.at()).unwrap();
        l.pump();
        s.drive(&mut l, |l| l.client.state() != McpState::Starting);
        assert_eq!(l.client.state(), McpState::Ready, "{:?}", l.seen);
        assert_eq!(l.client.protocol_version(), Some("2026-07-28"));
        let events = l.take_events();
        assert!(
            events[0].starts_with("Initialized 2026-07-28 {")
                && events[0].contains(r#""supportedVersions":["2026-07-28"]"#),
            "{events:?}"
        );
        assert_eq!(
            events[1..],
            [
                "Tool get_current_time",
                "Tool convert_time",
                "Ready { tools: 2 }"
            ]
        );
        l.model(
            s.ms(),
            &call("t1", "get_current_time", r#"{"timezone":"UTC"}"#),
        );
        s.drive(&mut l, |l| !l.results().is_empty());
        let results: Vec<String> = l.results().iter().map(|r| r.to_string()).collect();
        let written = std::mem::take(&mut s.written);
        s.stop("revisions-time");
        assert_eq!(written[0], discover_line());
        assert!(
            written.iter().all(|w| !w
                .starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"initialize""#)
                && !w.contains(r#""method":"initialize""#)),
            "{written:#?}"
        );
        assert_eq!(
            methods(&written),
            ["server/discover", "tools/list", "tools/call"]
        );
        assert_eq!(
            written[1],
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{{{}}}}}}}"#,
                envelope()
            )
        );
        assert_eq!(
            written[2],
            format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"get_current_time","arguments":{{"timezone":"UTC"}},"_meta":{{"progressToken":3,{}}}}}}}"#,
                envelope()
            )
        );
        assert_eq!(results.len(), 1);
        let v: Value = serde_json::from_str(&results[0]).unwrap();
        let content = &v["content"];
        assert_eq!(
            (&content["id"], &content["name"]),
            (&"t1".into(), &"get_current_time".into())
        );
        let result = &content["result"];
        let keys: Vec<&str> = result
            .as_object()
            .expect("the structuredContent object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 4, "{result}");
        for k in ["timezone", "datetime", "day_of_week", "is_dst"] {
            assert!(keys.contains(&k), "{result}");
        }
        assert_eq!(
            (&result["timezone"], &result["is_dst"]),
            (&"UTC".into(), &false.into())
        );
        let datetime = result["datetime"].as_str().expect("a datetime string");
        assert!(super::is_datetime(datetime, "+00:00"), "{datetime}");
        assert_eq!(l.client.stats().unknown_id, 0);
    }

    /// SPEC §9.9: server-everything (2025-11-25 only) under the default configuration
    /// refuses `server/discover` and gets `initialize` next on the same connection; `echo`
    /// then works.
    #[test]
    fn everything_falls_back_to_2025_11_25() {
        let mut l = client(&["echo"]);
        let mut s = Server::start(&super::everything());
        l.now = s.ms();
        l.client.start(l.at()).unwrap();
        l.pump();
        s.drive(&mut l, |l| l.client.state() != McpState::Starting);
        assert_eq!(l.client.state(), McpState::Ready, "{:?}", l.seen);
        assert_eq!(l.client.protocol_version(), Some("2025-11-25"));
        assert_eq!(
            s.read[0],
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#
        );
        l.model(s.ms(), &call("e1", "echo", r#"{"message":"hi"}"#));
        s.drive(&mut l, |l| !l.results().is_empty());
        assert_eq!(
            l.results(),
            [
                r#"{"type":"TOOL_RESULT","content":{"id":"e1","name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}"#
            ]
        );
        let written = std::mem::take(&mut s.written);
        s.stop("revisions-everything");
        assert_eq!(written[0], discover_line());
        assert_eq!(
            written[1],
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"polyweave-tool-adapter","version":"{}"}}}}}}"#,
                env!("CARGO_PKG_VERSION")
            )
        );
        assert_eq!(
            written[2],
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        assert_eq!(
            written[3],
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#
        );
        // No line after the fallback carries the 2026-07-28 envelope.
        assert!(
            written[1..]
                .iter()
                .all(|w| !w.contains("io.modelcontextprotocol/")),
            "{written:#?}"
        );
        // The call, with its id whatever re-listings went before it (the server tells of a
        // tool-list change as it starts), as 2025-11-25 writes it.
        let calls: Vec<&String> = written
            .iter()
            .filter(|w| w.contains(r#""method":"tools/call""#))
            .collect();
        assert_eq!(calls.len(), 1, "{written:#?}");
        let id = serde_json::from_str::<Value>(calls[0]).unwrap()["id"].clone();
        assert_eq!(
            *calls[0],
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}},"_meta":{{"progressToken":{id}}}}}}}"#
            )
        );
    }
}
