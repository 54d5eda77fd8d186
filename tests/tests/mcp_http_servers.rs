//! The MCP host program (`examples/polyweave-mcp`) over Streamable HTTP (SPEC §9.1 rule 11),
//! `polyweave-mcp --http URL`, against real servers on the loopback interface:
//! `@modelcontextprotocol/server-everything streamableHttp` (2025-11-25, a session, every
//! response SSE) and `tests/mcp/http_server.py`, written with the Python `mcp` package (both
//! revisions; JSON responses, or SSE ones where a call sends progress), each in both its
//! answer modes and in both revisions (`auto`, which finds 2026-07-28, and `--revision
//! 2025-11-25`). `bash tests/mcp/install.sh` installs both.
//!
//! A case plays the model as `mcp_servers.rs` does: it writes frames on the program's stdin
//! and reads its SPEC §6 events line by line, with the time each came, and compares them
//! exactly; every model `TOOL_CALL` must get exactly one `TOOL_RESULT`. Each server is started
//! on a port the test found free, waited for until it accepts connections, and killed when
//! the case ends; every wait has a deadline, past which the case fails and its children are
//! killed.
//!
//! Without the servers installed the cases fail with a message saying to run the install
//! script: they are never skipped silently.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::OnceLock;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use polyweave_tests::library::{cargo_build, profile, target_dir, workspace_root};
use serde_json::{json, Value};

// ------------------------------------------------------------ the program

/// `polyweave-mcp`, built once per test process for this test's profile.
fn program() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
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
    })
    .clone()
}

// ------------------------------------------------------------ the servers

/// What `tests/mcp/install.sh` installed, from `target/mcp-servers/env.sh`.
struct Installed {
    /// server-everything's `dist/index.js`.
    everything: PathBuf,
    /// The venv's Python, which has the `mcp` package (beside `mcp-server-time`).
    python: PathBuf,
}

const INSTALL_HINT: &str = "run `bash tests/mcp/install.sh` from the workspace root \
(it installs the pinned servers and the Python mcp package into target/mcp-servers)";

fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(|| {
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
        let (Some(everything), Some(time)) = (values.next(), values.next()) else {
            panic!("{} exports too little; {INSTALL_HINT}", env.display())
        };
        let python = time.with_file_name("python");
        for path in [&everything, &python] {
            assert!(
                path.is_file(),
                "{} does not exist; {INSTALL_HINT}",
                path.display()
            );
        }
        Installed { everything, python }
    })
}

/// A wait longer than any step of a case needs: past it, the case fails.
const PATIENCE: Duration = Duration::from_secs(20);

/// A server listening on the loopback interface, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    /// Starts `cmd` (which takes the port `make` gives it) on a free port, and waits until it
    /// accepts connections.
    fn start(make: impl FnOnce(u16) -> Command) -> Server {
        // A port free now: the server binds it once this listener is dropped.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("binding a free loopback port")
            .port();
        Server::start_on(port, make)
    }

    /// Starts `cmd` on `port` (a server's again, once it is killed), and waits until it
    /// accepts connections.
    fn start_on(port: u16, make: impl FnOnce(u16) -> Command) -> Server {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-http-servers");
        std::fs::create_dir_all(&dir).expect("creating the server log folder");
        let n = N.fetch_add(1, Ordering::Relaxed);
        let log = dir.join(format!("server-{}-{n}.log", std::process::id()));
        let file = File::create(&log).expect("creating the server log");
        let mut cmd = make(port);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("the log file"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        let mut server = Server { child, port, log };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + PATIENCE;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "{cmd:?} exited ({status}) before it listened:\n{}",
                    server.output()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{cmd:?} does not listen on port {port} after {PATIENCE:?}:\n{}",
                server.output()
            );
            thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// What the server printed so far.
    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills the server (a crash: no goodbye on any connection) and reaps it.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `PORT=N node …/dist/index.js streamableHttp`.
fn everything_command(port: u16) -> Command {
    let mut cmd = Command::new("node");
    cmd.arg(&installed().everything)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    cmd
}

fn everything() -> Server {
    Server::start(everything_command)
}

/// `tests/mcp/http_server.py`, answering in JSON when `json`, else in SSE where it can.
fn python_command(json: bool) -> impl FnOnce(u16) -> Command {
    move |port| {
        let mut cmd = Command::new(&installed().python);
        cmd.arg(workspace_root().join("tests/mcp/http_server.py"))
            .arg("--port")
            .arg(port.to_string());
        if json {
            cmd.arg("--json-response");
        }
        cmd
    }
}

fn python(json: bool) -> Server {
    Server::start(python_command(json))
}

// ------------------------------------------------------------ a session

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
}

/// `polyweave-mcp --http URL` with a case as its model.
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
    fn start(flags: &[&str], server: &Server) -> Session {
        let mut cmd = Command::new(program());
        cmd.args(flags).arg("--http").arg(server.url());
        let what = format!("{cmd:?}");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {what}: {e}"));
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
            t0: Instant::now(),
            lines: Vec::new(),
            calls: Vec::new(),
            what,
        }
    }

    /// Writes one model frame (its text, one line), noting a `TOOL_CALL`'s id.
    fn send(&mut self, frame: &str) {
        let v: Value = serde_json::from_str(frame).expect("a frame the case writes is JSON");
        if v["type"] == "TOOL_CALL" {
            if let Some(id) = v["content"]["id"].as_str() {
                self.calls.push(id.to_string());
            }
        }
        let stdin = self.stdin.as_mut().expect("stdin still open");
        if let Err(e) = writeln!(stdin, "{frame}").and_then(|()| stdin.flush()) {
            self.fail(&format!("writing its stdin: {e}"));
        }
    }

    /// Fails the case: stops the program and shows what it printed, its exit and its stderr.
    fn fail(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
        let stderr = self.stderr.take().map(|h| h.join().unwrap_or_default());
        let printed: Vec<&str> = self.lines.iter().map(|l| l.text.as_str()).collect();
        panic!(
            "{}: {why}\nprinted:\n{}\nexit: {status}\nstderr:\n{}",
            self.what,
            printed.join("\n"),
            stderr.unwrap_or_default()
        );
    }

    /// Takes one line the program printed, waiting until `deadline`; `None` at its end.
    fn read(&mut self, deadline: Instant) -> Option<Line> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.stdout.recv_timeout(left) {
            Ok(Ok(text)) => {
                let Ok(value) = serde_json::from_str(&text) else {
                    self.fail(&format!("stdout line is not JSON: {text}"))
                };
                let at = self.t0.elapsed();
                let line = Line { at, text, value };
                self.lines.push(line.clone());
                Some(line)
            }
            Ok(Err(e)) => self.fail(&e),
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                self.fail(&format!("nothing more within {PATIENCE:?}"))
            }
        }
    }

    /// Reads until the round's end, the continue prompt mirrored to the consumer: the lines
    /// of the round, from index `from` on.
    fn round(&mut self, from: usize) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.read(deadline) {
                Some(line) if is_consumer_prompt(&line.value) => break,
                Some(_) => {}
                None => self.fail("stdout ended before the round did"),
            }
        }
        self.lines[from..].iter().map(|l| l.text.clone()).collect()
    }

    /// Closes stdin, reads everything left, waits for the exit, and checks what every case
    /// checks: every `TOOL_CALL` sent got exactly one `TOOL_RESULT` (by id), none other came.
    fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        while self.read(deadline).is_some() {}
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting for the program") {
                break status;
            }
            if Instant::now() > deadline {
                self.fail(&format!(
                    "did not exit within {PATIENCE:?} of its stdin's end"
                ));
            }
            thread::sleep(Duration::from_millis(10));
        };
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        let texts: Vec<&str> = self.lines.iter().map(|l| l.text.as_str()).collect();
        let context = format!(
            "{}\nstdout:\n{}\nstderr:\n{stderr}",
            self.what,
            texts.join("\n")
        );
        let mut results: HashMap<String, usize> = HashMap::new();
        for l in &self.lines {
            let frame = &l.value["frame"];
            if frame["type"] == "TOOL_RESULT" {
                assert_eq!(l.value["to"], "model", "{context}");
                let id = frame["content"]["id"].as_str().unwrap_or("<none>");
                *results.entry(id.to_string()).or_default() += 1;
            }
        }
        for id in &self.calls {
            assert_eq!(
                results.remove(id),
                Some(1),
                "TOOL_RESULTs for {id:?}\n{context}"
            );
        }
        assert!(
            results.is_empty(),
            "results for calls never made: {results:?}\n{context}"
        );
        assert!(status.success(), "exit {status:?}\n{context}");
        Finished {
            lines: std::mem::take(&mut self.lines),
            stderr,
            status,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A case that failed leaves no program behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_consumer_prompt(v: &Value) -> bool {
    v["to"] == "consumer"
        && v["frame"]["type"] == "TEXT"
        && v["frame"]["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("Tool results above."))
}

/// A model `TOOL_CALL`.
fn call(id: &str, name: &str, args: Value) -> String {
    json!({"type": "TOOL_CALL", "content": {"id": id, "name": name, "args": args}}).to_string()
}

/// The event line of a `TOOL_RESULT` with a result (`result` as its compact JSON text).
fn result_line(id: &str, name: &str, result: &str) -> String {
    format!(
        r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","result":{result}}}}}}}"#
    )
}

/// The event line of a `TOOL_RESULT` with an error.
fn error_line(id: &str, name: &str, error: &str) -> String {
    format!(
        r#"{{"to":"model","frame":{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","error":{}}}}}}}"#,
        json!(error)
    )
}

/// A round's lines: its `TOOL_RESULT` lines, then the continue prompt (to the model,
/// mirrored to the consumer), which names the last error when `last_error` is one.
fn round_lines(results: &[String], last_error: Option<&str>) -> Vec<String> {
    let text = match last_error {
        Some(e) => format!("Tool results above. Last tool error: {e}"),
        None => "Tool results above.".to_string(),
    };
    let frame = format!(r#"{{"type":"TEXT","content":{}}}"#, json!(text));
    let mut lines = results.to_vec();
    lines.push(format!(r#"{{"to":"model","frame":{frame}}}"#));
    lines.push(format!(r#"{{"to":"consumer","frame":{frame}}}"#));
    lines
}

/// One call alone in its round: the round's lines, and how long the call took.
fn one_call(s: &mut Session, id: &str, name: &str, args: Value) -> (Vec<String>, Duration) {
    let from = s.lines.len();
    let sent = s.t0.elapsed();
    s.send(&call(id, name, args));
    let lines = s.round(from);
    let took = s.lines[from].at.saturating_sub(sent);
    (lines, took)
}

/// The protocol the program's log says it initialized with.
fn initialized(stderr: &str) -> Option<&str> {
    stderr.lines().find_map(|l| {
        l.strip_prefix("polyweave-mcp: initialized: protocol ")?
            .split(',')
            .next()
    })
}

// ------------------------------------------------------------ the command line

/// Runs the program with `args` and stdin at its end, for at most `PATIENCE`: its exit
/// code, stdout and stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = Command::new(program())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting polyweave-mcp");
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().expect("waiting for it").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("polyweave-mcp {args:?} still runs after {PATIENCE:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("its output");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (out.status.code(), text(out.stdout), text(out.stderr))
}

/// `--http` and a server command together, or neither: exit 2 with one line. An endpoint
/// where nothing listens: the start-up fails, exit 2, nothing on stdout.
#[test]
fn both_or_neither_refused_and_no_endpoint() {
    let both = run(&["--http", "http://127.0.0.1:9/mcp", "--", "node", "x.js"]);
    let line = "polyweave-mcp: both --http and a server command: give one (see --help)\n";
    assert_eq!(both, (Some(2), String::new(), line.to_string()));
    let neither = run(&["--timeout-ms", "5"]);
    let line = "polyweave-mcp: no server: give a command after -- or --http URL (see --help)\n";
    assert_eq!(neither, (Some(2), String::new(), line.to_string()));
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, stdout, stderr) = run(&["--http", &url]);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert!(
        stderr.ends_with("polyweave-mcp: start-up failed: the server gave no response\n"),
        "{stderr}"
    );
}

// ------------------------------------------------------------ server-everything

const LONG: &str = "trigger-long-running-operation";

/// `echo`, `get-sum` and an unknown tool answered exactly, and a 3 s call kept alive past its
/// 1.5 s timeout by its progress (SSE events streamed as they come) — over a 2025-11-25
/// session whose every response is SSE.
#[test]
fn everything_calls_answered_exactly() {
    let server = everything();
    let flags = [
        "--extra-tool",
        "nope",
        "--timeout-ms",
        "1500",
        "--max-total-ms",
        "10000",
    ];
    let mut s = Session::start(&flags, &server);
    let (lines, _) = one_call(&mut s, "e", "echo", json!({"message": "hi"}));
    let echo = result_line("e", "echo", r#"[{"type":"text","text":"Echo: hi"}]"#);
    assert_eq!(lines, round_lines(&[echo], None));
    let (lines, _) = one_call(&mut s, "g", "get-sum", json!({"a": 2, "b": 3}));
    let sum = r#"[{"type":"text","text":"The sum of 2 and 3 is 5."}]"#;
    assert_eq!(
        lines,
        round_lines(&[result_line("g", "get-sum", sum)], None)
    );
    let (lines, _) = one_call(&mut s, "n", "nope", json!({}));
    let e = "MCP error -32602: Tool nope not found";
    assert_eq!(lines, round_lines(&[error_line("n", "nope", e)], Some(e)));
    let (lines, took) = one_call(&mut s, "L", LONG, json!({"duration": 3, "steps": 6}));
    let done = r#"[{"type":"text","text":"Long running operation completed. Duration: 3 seconds, Steps: 6."}]"#;
    assert_eq!(lines, round_lines(&[result_line("L", LONG, done)], None));
    assert!(
        took >= Duration::from_millis(2900) && took < Duration::from_secs(8),
        "the 3 s call took {took:?}"
    );
    let f = s.finish();
    assert_eq!(initialized(&f.stderr), Some("2025-11-25"), "{}", f.stderr);
    let server = "server mcp-servers/everything ";
    assert!(f.stderr.contains(server), "{}", f.stderr);
    assert!(
        f.stderr.contains("polyweave-mcp: ready: 13 tools\n"),
        "{}",
        f.stderr
    );
    let progress = f.stderr.matches("polyweave-mcp: call 3: progress ").count();
    assert_eq!(progress, 6, "{}", f.stderr);
}

/// A call whose timeout is shorter than the operation fails with the wrapper's timeout text,
/// and nothing of it comes after: a call made once the operation is over gets only its own
/// result.
#[test]
fn everything_call_times_out() {
    let server = everything();
    let mut s = Session::start(&["--timeout-ms", "1000"], &server);
    one_call(&mut s, "e", "echo", json!({"message": "up"}));
    let (lines, took) = one_call(&mut s, "L", LONG, json!({"duration": 2, "steps": 4}));
    let e = format!("Tool {LONG} timed out after 1000ms");
    assert_eq!(lines, round_lines(&[error_line("L", LONG, &e)], Some(&e)));
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_millis(2500),
        "timed out after {took:?}"
    );
    thread::sleep(Duration::from_millis(1500));
    let (lines, _) = one_call(&mut s, "a", "echo", json!({"message": "after"}));
    let echo = result_line("a", "echo", r#"[{"type":"text","text":"Echo: after"}]"#);
    assert_eq!(lines, round_lines(&[echo], None));
    let f = s.finish();
    assert_eq!(f.lines.len(), 3 * 3, "three rounds and nothing else");
    assert_eq!(f.status.code(), Some(0));
}

/// Progress keeps a long call alive past its timeout, but not past its cap (SPEC §5): the
/// 3 s operation's progress every 0.5 s restarts the 1.5 s timeout, and the call fails at
/// the 2 s cap with the wrapper's text; its stream is closed, and nothing of it comes after.
#[test]
fn everything_call_fails_at_its_cap() {
    let server = everything();
    let mut s = Session::start(&["--timeout-ms", "1500", "--max-total-ms", "2000"], &server);
    one_call(&mut s, "e", "echo", json!({"message": "up"}));
    let (lines, took) = one_call(&mut s, "L", LONG, json!({"duration": 3, "steps": 6}));
    let e = format!("Tool {LONG} timed out after 2000ms");
    assert_eq!(lines, round_lines(&[error_line("L", LONG, &e)], Some(&e)));
    assert!(
        took >= Duration::from_millis(1950) && took < Duration::from_millis(2900),
        "the call ended after {took:?}, not at its 2 s cap"
    );
    thread::sleep(Duration::from_millis(1500));
    let (lines, _) = one_call(&mut s, "a", "echo", json!({"message": "after"}));
    let echo = result_line("a", "echo", r#"[{"type":"text","text":"Echo: after"}]"#);
    assert_eq!(lines, round_lines(&[echo], None));
    let f = s.finish();
    assert_eq!(f.lines.len(), 3 * 3, "three rounds and nothing else");
    assert!(
        f.stderr.matches("polyweave-mcp: call 1: progress ").count() >= 3,
        "{}",
        f.stderr
    );
}

/// The server killed in the middle of a call: the call fails as the connection closed, and
/// so does a call made after it (nothing listens any more).
#[test]
fn everything_killed_mid_call() {
    let mut server = everything();
    let mut s = Session::start(&[], &server);
    one_call(&mut s, "e", "echo", json!({"message": "up"}));
    let from = s.lines.len();
    s.send(&call("L", LONG, json!({"duration": 10, "steps": 10})));
    thread::sleep(Duration::from_millis(1500));
    server.kill();
    let lines = s.round(from);
    let e = format!("Tool {LONG} failed: the MCP server closed the connection");
    assert_eq!(lines, round_lines(&[error_line("L", LONG, &e)], Some(&e)));
    let (lines, _) = one_call(&mut s, "a", "echo", json!({"message": "after"}));
    let e = "Tool echo failed: the MCP server closed the connection";
    assert_eq!(lines, round_lines(&[error_line("a", "echo", e)], Some(e)));
    s.finish();
}

/// The server restarted on its port: it no longer knows the session, and answers `400`
/// (not `404`, which would start a new session) with an error for no request; the call
/// fails with its status.
#[test]
fn everything_restarted_forgets_the_session() {
    let mut server = everything();
    let mut s = Session::start(&[], &server);
    one_call(&mut s, "e", "echo", json!({"message": "up"}));
    server.kill();
    let port = server.port;
    let _again = Server::start_on(port, everything_command);
    let (lines, _) = one_call(&mut s, "a", "echo", json!({"message": "after"}));
    let e = "Tool echo failed: HTTP 400";
    assert_eq!(lines, round_lines(&[error_line("a", "echo", e)], Some(e)));
    s.finish();
}

// ------------------------------------------------------------ the Python server

/// The revision flags of a mode, and the protocol it ends up in.
fn revision(legacy: bool) -> (&'static [&'static str], &'static str) {
    if legacy {
        (&["--revision", "2025-11-25"], "2025-11-25")
    } else {
        (&[], "2026-07-28")
    }
}

/// Every tool of `tests/mcp/http_server.py` answered exactly; `slow` with progress (SSE
/// only: a JSON answer carries no notification) kept alive past its timeout.
fn python_calls_answered_exactly(json_mode: bool, legacy: bool) {
    let server = python(json_mode);
    let (rev, protocol) = revision(legacy);
    let mut flags = vec![
        "--extra-tool",
        "nope",
        "--timeout-ms",
        "1000",
        "--max-total-ms",
        "10000",
    ];
    flags.extend_from_slice(rev);
    let mut s = Session::start(&flags, &server);
    let (lines, _) = one_call(&mut s, "e", "echo", json!({"message": "hi"}));
    let echo = result_line("e", "echo", r#"{"result":"Echo: hi"}"#);
    assert_eq!(lines, round_lines(&[echo], None));
    let (lines, _) = one_call(&mut s, "a", "add", json!({"a": 2, "b": 3}));
    assert_eq!(
        lines,
        round_lines(&[result_line("a", "add", r#"{"sum":5}"#)], None)
    );
    let (lines, _) = one_call(&mut s, "f", "fail", json!({}));
    let e = "Error executing tool fail: fail was asked to fail";
    assert_eq!(lines, round_lines(&[error_line("f", "fail", e)], Some(e)));
    let (lines, _) = one_call(&mut s, "n", "nope", json!({}));
    let e = "Unknown tool: nope";
    assert_eq!(lines, round_lines(&[error_line("n", "nope", e)], Some(e)));
    let seconds = if json_mode { 0.5 } else { 2.0 };
    let (lines, took) = one_call(&mut s, "s", "slow", json!({"seconds": seconds}));
    let slept = format!(r#"{{"result":"slept {seconds}"}}"#);
    assert_eq!(
        lines,
        round_lines(&[result_line("s", "slow", &slept)], None)
    );
    let least = Duration::from_secs_f64(seconds) - Duration::from_millis(50);
    assert!(
        took >= least && took < Duration::from_secs(8),
        "took {took:?}"
    );
    let f = s.finish();
    assert_eq!(initialized(&f.stderr), Some(protocol), "{}", f.stderr);
    let line = format!(
        "polyweave-mcp: initialized: protocol {protocol}, server polyweave-http-test 1.0.0\n"
    );
    assert!(f.stderr.contains(&line), "{}", f.stderr);
    assert!(
        f.stderr.contains("polyweave-mcp: ready: 5 tools\n"),
        "{}",
        f.stderr
    );
    let progress = f.stderr.matches("polyweave-mcp: call 4: progress ").count();
    assert_eq!(progress, if json_mode { 0 } else { 8 }, "{}", f.stderr);
}

/// A call timed out (nothing of it after its error), then the server killed in the middle
/// of another: it fails as the connection closed, and so does the next.
fn python_timeout_and_kill(json_mode: bool, legacy: bool) {
    let mut server = python(json_mode);
    let (rev, protocol) = revision(legacy);
    let mut flags = vec!["--timeout-ms", "500"];
    flags.extend_from_slice(rev);
    let mut s = Session::start(&flags, &server);
    one_call(&mut s, "e", "echo", json!({"message": "up"}));
    let (lines, took) = one_call(&mut s, "t", "slow", json!({"seconds": 1.5}));
    let e = "Tool slow timed out after 500ms";
    assert_eq!(lines, round_lines(&[error_line("t", "slow", e)], Some(e)));
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_millis(2000),
        "timed out after {took:?}"
    );
    thread::sleep(Duration::from_millis(1500));
    let (lines, _) = one_call(&mut s, "a", "add", json!({"a": 1, "b": 1}));
    assert_eq!(
        lines,
        round_lines(&[result_line("a", "add", r#"{"sum":2}"#)], None)
    );
    let f = s.finish();
    assert_eq!(f.lines.len(), 3 * 3, "three rounds and nothing else");
    assert_eq!(initialized(&f.stderr), Some(protocol), "{}", f.stderr);

    // A new session with the default timeout, to the same server.
    let mut s = Session::start(rev, &server);
    one_call(&mut s, "e", "echo", json!({"message": "up"}));
    let from = s.lines.len();
    s.send(&call("k", "slow", json!({"seconds": 3})));
    // The call is on its way, its answer seconds off: the server dies under it.
    thread::sleep(Duration::from_millis(800));
    server.kill();
    let lines = s.round(from);
    let e = "Tool slow failed: the MCP server closed the connection";
    assert_eq!(lines, round_lines(&[error_line("k", "slow", e)], Some(e)));
    let (lines, _) = one_call(&mut s, "z", "echo", json!({"message": "after"}));
    let e = "Tool echo failed: the MCP server closed the connection";
    assert_eq!(lines, round_lines(&[error_line("z", "echo", e)], Some(e)));
    let f = s.finish();
    assert_eq!(f.lines.len(), 3 * 3, "three rounds and nothing else");
}

/// 2025-11-25: the server restarted on its port answers `404` for the session it no
/// longer knows; the call fails with that status, and a new session is started (once) for
/// the calls after it, which are answered.
fn python_restarted_starts_a_new_session(json_mode: bool) {
    let mut server = python(json_mode);
    let mut s = Session::start(&["--revision", "2025-11-25"], &server);
    one_call(&mut s, "e", "echo", json!({"message": "up"}));
    server.kill();
    let port = server.port;
    let _again = Server::start_on(port, python_command(json_mode));
    let (lines, _) = one_call(&mut s, "a", "echo", json!({"message": "lost"}));
    let e = "Tool echo failed: HTTP 404";
    assert_eq!(lines, round_lines(&[error_line("a", "echo", e)], Some(e)));
    let (lines, _) = one_call(&mut s, "b", "add", json!({"a": 4, "b": 5}));
    assert_eq!(
        lines,
        round_lines(&[result_line("b", "add", r#"{"sum":9}"#)], None)
    );
    let f = s.finish();
    let inits = f
        .stderr
        .matches("polyweave-mcp: initialized: protocol 2025-11-25")
        .count();
    assert_eq!(inits, 2, "{}", f.stderr);
}

/// `weather.report`'s `structuredContent` checked against the `outputSchema` its listing
/// declares: Paris's passes; another city's breaks it (`temp_c` is no number) and fails the
/// call with SPEC §11's text. Args that break its `inputSchema` fail at once and no request
/// goes out. With `--no-validate` both reach the model as the server sent them.
// SPEC §9.1, §11
#[test]
fn python_results_checked_against_the_output_schema() {
    let server = python(false);
    let tool = "weather.report";
    let mut s = Session::start(&[], &server);
    let (lines, _) = one_call(&mut s, "p", tool, json!({"city": "Paris"}));
    let paris = result_line("p", tool, r#"{"city":"Paris","temp_c":21}"#);
    assert_eq!(lines, round_lines(&[paris], None));
    let (lines, _) = one_call(&mut s, "a", tool, json!({"city": "Atlantis"}));
    let e = "Tool weather.report returned a result that does not match its output schema: \
             /temp_c: expected number";
    assert_eq!(lines, round_lines(&[error_line("a", tool, e)], Some(e)));
    let (lines, _) = one_call(&mut s, "t", tool, json!({"town": "Atlantis"}));
    let e =
        r#"Tool weather.report arguments are invalid: (args): missing required property "city""#;
    assert_eq!(lines, round_lines(&[error_line("t", tool, e)], Some(e)));
    let f = s.finish();
    // Two of the three calls went out: requests 4 and 5, after `server/discover`, `tools/list`
    // and the subscription to changes (1 to 3).
    let sent: Vec<&str> = f
        .stderr
        .lines()
        .filter(|l| l.contains(" sent as request "))
        .collect();
    assert_eq!(
        sent,
        [
            "polyweave-mcp: call 0: weather.report sent as request 4",
            "polyweave-mcp: call 1: weather.report sent as request 5",
        ],
        "{}",
        f.stderr
    );

    let mut s = Session::start(&["--no-validate"], &server);
    let (lines, _) = one_call(&mut s, "a", tool, json!({"city": "Atlantis"}));
    let atlantis = result_line("a", tool, r#"{"city":"Atlantis","temp_c":"unknown"}"#);
    assert_eq!(lines, round_lines(&[atlantis], None));
    let (lines, _) = one_call(&mut s, "t", tool, json!({"town": "Atlantis"}));
    let e = "Error executing tool weather.report: 1 validation error for \
             weather_reportArguments\ncity\n  Field required [type=missing, \
             input_value={'town': 'Atlantis'}, input_type=dict]\n    For further information \
             visit https://errors.pydantic.dev/2.14/v/missing";
    assert_eq!(lines, round_lines(&[error_line("t", tool, e)], Some(e)));
    s.finish();
}

#[test]
fn python_restarted_starts_a_new_session_json() {
    python_restarted_starts_a_new_session(true)
}

#[test]
fn python_restarted_starts_a_new_session_sse() {
    python_restarted_starts_a_new_session(false)
}

macro_rules! python_cases {
    ($($name:ident: $json:expr, $legacy:expr;)*) => {
        /// Each mode of the Python server: JSON or SSE answers, 2026-07-28 or 2025-11-25.
        mod python {
            $(
                mod $name {
                    #[test]
                    fn calls_answered_exactly() {
                        super::super::python_calls_answered_exactly($json, $legacy)
                    }
                    #[test]
                    fn timeout_and_kill() {
                        super::super::python_timeout_and_kill($json, $legacy)
                    }
                }
            )*
        }
    };
}

python_cases! {
    sse_2026: false, false;
    json_2026: true, false;
    sse_2025: false, true;
    json_2025: true, true;
}

// ------------------------------------------------------------ the agent

/// What a run of `polyweave-agent --mcp-http` gave: its `--json` events, its stderr, and the
/// requests the fake provider got.
struct AgentRun {
    events: Vec<Value>,
    stderr: String,
    requests: Vec<Value>,
}

/// An openai-chat stream whose one call (`call_1`) is `name` with `arguments` (JSON text,
/// sent in the pieces given).
fn openai_call(name: &str, arguments: &[&str]) -> String {
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                       "model": "test-model",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let first = json!({"index": 0, "id": "call_1", "type": "function",
                       "function": {"name": name, "arguments": arguments[0]}});
    let mut body = vec![chunk(
        json!({"role": "assistant", "content": null, "tool_calls": [first]}),
        Value::Null,
    )];
    for piece in &arguments[1..] {
        let more = json!({"index": 0, "function": {"arguments": piece}});
        body.push(chunk(json!({"tool_calls": [more]}), Value::Null));
    }
    body.push(chunk(json!({}), json!("tool_calls")));
    body.push("data: [DONE]\n\n".to_string());
    body.concat()
}

/// `polyweave-agent --mcp-http` on `server` with `flags`, a fake provider (in the SDK
/// environment) answering `body` then the text "It is 5."; `None` (after saying so) without
/// the SDK environment outside CI.
fn run_agent(server: &Server, name: &str, body: &str, flags: &[&str]) -> Option<AgentRun> {
    let Some(sdk) = polyweave_tests::library::sdk_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the SDK environment (tests/run.sh makes target/sdk-venv)"
        );
        println!("skipped: no SDK environment (bash tests/run.sh makes target/sdk-venv)");
        return None;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("mcp-http-agent")
        .join(format!("{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the case's folder");
    let recording = dir.join("call.body");
    std::fs::write(&recording, body).expect("writing the recording");
    let log = dir.join("requests.ndjson");
    let _ = std::fs::remove_file(&log);
    let config = json!({"provider": "openai-chat", "model": "test-model",
                        "path": "/v1/chat/completions", "key": null, "log": log,
                        "turns": [{"body": recording}, {"text": ["It is ", "5."]}]});
    let config_path = dir.join("fake.json");
    std::fs::write(&config_path, config.to_string()).expect("writing the fake's config");
    let mut fake = Command::new(&sdk)
        .arg(workspace_root().join("tests/sdk/fake_provider.py"))
        .arg(&config_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("running fake_provider.py");
    let mut line = String::new();
    let _ = BufReader::new(fake.stdout.take().expect("its stdout")).read_line(&mut line);
    let Some(port) = line.trim().strip_prefix("listening ").map(str::to_string) else {
        let _ = fake.kill();
        let _ = fake.wait();
        panic!("the fake provider did not start: {line:?}");
    };
    let agent = {
        let (profile, target) = (profile(), target_dir());
        let out = cargo_build("polyweave-agent", &profile, &target)
            .arg("-q")
            .output()
            .expect("running cargo build -p polyweave-agent");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        target.join(&profile).join("polyweave-agent")
    };
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let mut child = Command::new(agent)
        .args([
            "--provider",
            "openai-chat",
            "--url",
            &url,
            "--model",
            "test-model",
        ])
        .args(["--json", "--prompt", "Add 2 and 3"])
        .args(flags)
        .args(["--mcp-http", &server.url()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running polyweave-agent");
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().expect("waiting for the agent").is_none() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("the agent's output");
    let _ = fake.kill();
    let _ = fake.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        events.last(),
        Some(&json!({"done": {"turns": 2, "stop": "answer", "text": "It is 5."}})),
        "{stdout}"
    );
    let requests: Vec<Value> = std::fs::read_to_string(&log)
        .expect("the fake's log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    for r in &requests {
        assert_eq!(
            (&r["status"], &r["errors"]),
            (&json!(200), &json!([])),
            "{r}"
        );
    }
    Some(AgentRun {
        events,
        stderr,
        requests,
    })
}

impl AgentRun {
    /// The `tool` events: each call's `TOOL_RESULT`.
    fn tools(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e.get("tool").is_some())
            .collect()
    }

    /// The last message of the second request: the call's result as the model got it.
    fn last_message(&self) -> &Value {
        let messages = self.requests[1]["body"]["messages"]
            .as_array()
            .expect("messages");
        messages.last().expect("a message")
    }
}

/// `polyweave-agent --mcp-http URL`: a fake provider (`tests/sdk/fake_provider.py`, in the
/// SDK environment) calls `add`, the agent runs it on the Python server over Streamable
/// HTTP (2026-07-28), and the result goes into the next request; without the SDK
/// environment the case fails in CI and is skipped with a printed line elsewhere.
#[test]
fn agent_runs_the_tools_of_an_http_server() {
    let server = python(false);
    // Its arguments in two pieces.
    let body = openai_call("add", &["{\"a\":2,", "\"b\":3}"]);
    let Some(run) = run_agent(&server, "add", &body, &[]) else {
        return;
    };
    assert_eq!(
        run.tools(),
        [&json!({"turn": 1, "tool": {"type": "TOOL_RESULT",
                 "content": {"id": "call_1", "name": "add", "result": {"sum": 5}}}})],
        "{:?}\n{}",
        run.events,
        run.stderr
    );
    assert_eq!(
        run.last_message(),
        &json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"sum\":5}"}),
    );
    assert!(
        run.stderr
            .contains("polyweave-agent: initialized: protocol 2026-07-28"),
        "{}",
        run.stderr
    );
}

/// The agent checks a result against its tool's `outputSchema` under the name the model
/// calls the tool by (`weather.report` is `weather_report` to openai-chat, SPEC §10.1): a
/// result that breaks it reaches the model as the call's error; with `--no-validate` as the
/// server sent it.
// SPEC §10.1, §11
#[test]
fn agent_checks_results_under_the_mapped_name() {
    let server = python(false);
    let body = openai_call("weather_report", &[r#"{"city":"Atlantis"}"#]);
    let Some(run) = run_agent(&server, "checked", &body, &[]) else {
        return;
    };
    let e = "Tool weather_report returned a result that does not match its output schema: \
             /temp_c: expected number";
    assert_eq!(
        run.tools(),
        [&json!({"turn": 1, "tool": {"type": "TOOL_RESULT",
                 "content": {"id": "call_1", "name": "weather_report", "error": e}}})],
        "{}",
        run.stderr
    );
    assert_eq!(
        run.last_message(),
        &json!({"role": "tool", "tool_call_id": "call_1", "content": e})
    );
    let Some(run) = run_agent(&server, "unchecked", &body, &["--no-validate"]) else {
        return;
    };
    let result = json!({"city": "Atlantis", "temp_c": "unknown"});
    assert_eq!(
        run.tools(),
        [&json!({"turn": 1, "tool": {"type": "TOOL_RESULT",
                 "content": {"id": "call_1", "name": "weather_report", "result": result}}})],
        "{}",
        run.stderr
    );
}
