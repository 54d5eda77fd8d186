//! MCP over Streamable HTTP (SPEC §9.1 rule 11) for the `std` host: the POSTs the core's
//! sans-IO client asks for, each made on its own thread with `ureq`, and their responses
//! brought back to the loop over its channel as they arrive — the head, the body in the
//! pieces the socket gives (an SSE response streams), then the end. No protocol logic lives
//! here: the loop hands every piece to the client as it is.
//!
//! Each piece carries its stream's index and the generation of the POST it belongs to. A
//! stream the client closed (a cancelled 2026-07-28 call) or reused has a new generation, so
//! what its old POST still sends is dropped, and that POST's thread drops the response at
//! its next read.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread;

use crate::log;
use crate::pipes::Input;
use polyweave_tool_adapter::mcp::http::{McpPost, McpStreamError};
use polyweave_tool_adapter::mcp::McpClient;

/// Bytes asked for in one read of a response: small, so an event is handed on as soon as
/// the socket has it.
const READ: usize = 16 * 1024;

/// Response streams read at once: every call slot's, and room for the start-up, a re-listing,
/// a subscription and notifications besides.
pub const STREAMS: usize = crate::host::SLOTS + 4;

/// One piece of a response, as a POST's thread sends it.
pub struct Piece {
    /// The stream it is read as.
    stream: u16,
    /// The POST it belongs to.
    generation: u64,
    part: Part,
}

/// What a piece is.
enum Part {
    /// The status and the headers the client reads.
    Head {
        status: u16,
        content_type: Vec<u8>,
        session: Option<Vec<u8>>,
    },
    /// Body bytes.
    Body(Vec<u8>),
    /// The response ended, whole or broken, or there was none.
    End,
}

/// A stream's side in the loop.
struct Stream {
    /// The generation of the POST it reads now (0: none).
    generation: u64,
    /// Shared with that POST's thread: when it differs from the thread's own, the thread
    /// stops reading.
    current: Arc<AtomicU64>,
    /// Pieces not yet taken by the client, and how much of the first one was.
    pieces: VecDeque<Part>,
    taken: usize,
}

/// The HTTP side of the loop: the endpoint, the HTTP client, and the streams.
pub struct Http {
    url: String,
    agent: ureq::Agent,
    tx: Sender<Input>,
    streams: Vec<Stream>,
    last_generation: u64,
    body: Vec<u8>,
    headers: Vec<u8>,
}

impl Http {
    /// POSTs to `url`, sending responses on `tx`; `body` and `headers` are the longest a
    /// request's body and header lines can be.
    pub fn new(url: &str, tx: Sender<Input>, body: usize, headers: usize) -> Http {
        let agent = ureq::Agent::config_builder()
            // Every status is a response the client reads (a 2026-07-28 error is a 4xx
            // whose body is the JSON-RPC error).
            .http_status_as_error(false)
            .build()
            .into();
        let streams = (0..STREAMS)
            .map(|_| Stream {
                generation: 0,
                current: Arc::new(AtomicU64::new(0)),
                pieces: VecDeque::new(),
                taken: 0,
            })
            .collect();
        Http {
            url: url.to_string(),
            agent,
            tx,
            streams,
            last_generation: 0,
            body: vec![0; body],
            headers: vec![0; headers],
        }
    }

    /// Keeps a piece a POST's thread sent, unless its stream has moved on.
    pub fn take(&mut self, piece: Piece) {
        if let Some(s) = self.streams.get_mut(usize::from(piece.stream)) {
            if s.generation == piece.generation && s.generation != 0 {
                s.pieces.push_back(piece.part);
            }
        }
    }

    /// Makes every POST the client asks for and closes the streams it closes; true when
    /// there was one.
    pub fn post(&mut self, client: &mut McpClient<'_>) -> bool {
        let mut any = false;
        loop {
            let post = match client.poll_request(&mut self.body, &mut self.headers) {
                Ok(Some(post)) => post,
                Ok(None) => return any,
                Err(e) => {
                    // Never: both buffers are as long as the configuration's bounds.
                    log!("a request of {} bytes exceeds its buffer", e.needed);
                    self.body.resize(e.needed.max(self.body.len()), 0);
                    self.headers.resize(e.needed.max(self.headers.len()), 0);
                    continue;
                }
            };
            any = true;
            match post {
                McpPost::Post {
                    stream,
                    body,
                    headers,
                } => self.start(stream, body, headers),
                McpPost::Close { stream } => {
                    if let Some(s) = self.streams.get_mut(usize::from(stream)) {
                        s.generation = 0;
                        s.current.store(0, Ordering::Relaxed);
                        s.pieces.clear();
                        s.taken = 0;
                    }
                }
            }
        }
    }

    /// Starts the thread that POSTs `body[..body]` for stream `stream`.
    fn start(&mut self, stream: u16, body: usize, headers: usize) {
        self.last_generation += 1;
        let generation = self.last_generation;
        let Some(s) = self.streams.get_mut(usize::from(stream)) else {
            log!("the MCP client asked for stream {stream}, beyond the {STREAMS} it was given");
            return;
        };
        s.generation = generation;
        s.current.store(generation, Ordering::Relaxed);
        s.pieces.clear();
        s.taken = 0;
        let request = Request {
            url: self.url.clone(),
            agent: self.agent.clone(),
            body: self.body[..body].to_vec(),
            headers: header_lines(&self.headers[..headers]),
            stream,
            generation,
            current: Arc::clone(&s.current),
            tx: self.tx.clone(),
        };
        let started = thread::Builder::new()
            .name(format!("POST stream {stream}"))
            .spawn(move || request.run());
        if let Err(e) = started {
            log!("cannot start the thread of a POST: {e}");
            s.pieces.push_back(Part::End);
        }
    }

    /// Whether a piece waits for the client.
    pub fn waiting(&self) -> bool {
        self.streams.iter().any(|s| !s.pieces.is_empty())
    }

    /// Gives the client one piece that waits (or what it takes of one): how many steps it
    /// took, 0 when it took none now (it owes output first, or another stream's message
    /// holds its buffer).
    pub fn feed(&mut self, client: &mut McpClient<'_>) -> usize {
        for (i, s) in self.streams.iter_mut().enumerate() {
            let Some(part) = s.pieces.front() else {
                continue;
            };
            let stream = i as u16;
            let given = match part {
                Part::Head {
                    status,
                    content_type,
                    session,
                } => client
                    .handle_response(stream, *status, content_type, session.as_deref())
                    .map(|()| 1),
                Part::Body(bytes) => match client.feed_response(stream, &bytes[s.taken..]) {
                    Ok(0) => continue,
                    Ok(n) => {
                        s.taken += n;
                        if s.taken < bytes.len() {
                            return n;
                        }
                        Ok(n)
                    }
                    Err(e) => Err(e),
                },
                Part::End => client.handle_response_end(stream).map(|()| 1),
            };
            match given {
                Ok(n) => {
                    s.pieces.pop_front();
                    s.taken = 0;
                    return n;
                }
                Err(McpStreamError::PollFirst) => return 0,
                Err(e) => {
                    // Never: the pieces come in the order the client reads them.
                    log!("stream {i}: the MCP client refused a piece of its response: {e}");
                    s.pieces.pop_front();
                    s.taken = 0;
                    return 1;
                }
            }
        }
        0
    }
}

/// `Name: value` CRLF lines as name and value pairs.
fn header_lines(lines: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(lines)
        .split("\r\n")
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// One POST, made on its own thread.
struct Request {
    url: String,
    agent: ureq::Agent,
    body: Vec<u8>,
    headers: Vec<(String, String)>,
    stream: u16,
    generation: u64,
    current: Arc<AtomicU64>,
    tx: Sender<Input>,
}

impl Request {
    /// Whether the loop still reads this POST's stream.
    fn live(&self) -> bool {
        self.current.load(Ordering::Relaxed) == self.generation
    }

    /// Sends one piece to the loop; false when the loop is gone.
    fn send(&self, part: Part) -> bool {
        let piece = Piece {
            stream: self.stream,
            generation: self.generation,
            part,
        };
        self.tx.send(Input::Http(piece)).is_ok()
    }

    fn run(self) {
        let mut post = self.agent.post(&self.url);
        for (name, value) in &self.headers {
            post = post.header(name, value);
        }
        let response = match post.send(&self.body[..]) {
            Ok(r) => r,
            Err(e) => {
                log!("POST {}: {e}", self.url);
                self.send(Part::End);
                return;
            }
        };
        let header = |name: &str| response.headers().get(name).map(|v| v.as_bytes().to_vec());
        let head = Part::Head {
            status: response.status().as_u16(),
            content_type: header("content-type").unwrap_or_default(),
            session: header("mcp-session-id"),
        };
        if !self.send(head) {
            return;
        }
        let mut reader = response.into_body().into_reader();
        let mut buf = vec![0u8; READ];
        loop {
            if !self.live() {
                // Closed or reused: dropping the reader drops the connection.
                return;
            }
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if !self.send(Part::Body(buf[..n].to_vec())) {
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    if self.live() {
                        log!("stream {}: reading the response: {e}", self.stream);
                    }
                    break;
                }
            }
        }
        self.send(Part::End);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_split_into_pairs() {
        let lines = b"Content-Type: application/json\r\nMcp-Name: =?base64?IHg=?=\r\n";
        assert_eq!(
            header_lines(lines),
            [
                ("Content-Type".to_string(), "application/json".to_string()),
                ("Mcp-Name".to_string(), "=?base64?IHg=?=".to_string()),
            ]
        );
        assert!(header_lines(b"").is_empty());
    }
}
