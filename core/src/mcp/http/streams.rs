//! The POSTs and their response streams: one stream per request, its body read into the
//! client's line buffer — which one stream holds from an event's first byte to its end, so
//! pieces of other streams wait (`feed_response` takes none of them) until it is read.

use crate::body_reader::{Fed, Framing, Reader};
use crate::json::valid::{get, string};
use crate::json::BufferTooSmall;
use crate::sink::write_counted;

use super::super::calls::CallState;
use super::super::config::{McpConfig, PROTOCOL_VERSION_2026};
use super::super::frames::McpFailure;
use super::super::jsonrpc::{self, Message};
use super::super::listing::{Listen, Relist};
use super::super::stats::{bump32, bump64};
use super::super::{McpClient, McpToolSkip, Owed, Phase, StartFault};
use super::headers::{put_common, put_header, put_value, value_bound, SESSION_CAP};
use super::params::{Params, Refusal};

/// Where a stream is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum State {
    Free,
    /// Its POST is the host's to make; no response head yet.
    Posted,
    /// Its head was read; its body is being read.
    Open(Body),
    /// The host is to close it (a cancelled 2026-07-28 call).
    Closing,
}

/// How a response's body is read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Body {
    /// One JSON-RPC message.
    Json,
    /// Events whose `data` is a JSON-RPC message each.
    Sse,
    /// Nothing to read (`202`, or a content type that carries no message).
    Ignored,
}

/// One response stream's state (host memory: one per response read at once).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McpStream {
    state: State,
    /// The request it answers (0: a notification or a reply).
    rpc: u64,
    status: u16,
    /// Bytes of a JSON body so far.
    len: usize,
    reader: Reader,
}

impl McpStream {
    /// A stream not in use.
    pub const EMPTY: McpStream = McpStream {
        state: State::Free,
        rpc: 0,
        status: 0,
        len: 0,
        reader: Reader::new(Framing::Sse),
    };
}

/// What the host is to do next over HTTP.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpPost {
    /// POST `body[..body]` with the header lines `headers[..headers]` to the MCP endpoint,
    /// and report its response as stream `stream`.
    Post {
        /// The stream its response is read as.
        stream: u16,
        /// Bytes of the body.
        body: usize,
        /// Bytes of the header lines (`Name: value` CRLF each).
        headers: usize,
    },
    /// Close stream `stream`'s response (a cancelled call, SPEC §9.10): read nothing more
    /// of it. The stream is free again.
    Close {
        /// The stream.
        stream: u16,
    },
}

/// A response input the client refused; nothing changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpStreamError {
    /// Not an HTTP client ([`McpClient::new_http`]).
    NotHttp,
    /// No request is being answered on this stream.
    UnknownStream,
    /// The stream's head was given already.
    HeadTwice,
    /// Body bytes or an end before the stream's head.
    NoHead,
    /// What the last message owes is not polled out yet: drain `poll_event`, `poll_frame`
    /// and `poll_request`, then give it again.
    PollFirst,
}

impl core::fmt::Display for McpStreamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::NotHttp => "not a Streamable HTTP client",
            Self::UnknownStream => "no request is answered on this stream",
            Self::HeadTwice => "the stream's status was given already",
            Self::NoHead => "the stream's status is not given yet",
            Self::PollFirst => "poll what the client owes first",
        })
    }
}

impl core::error::Error for McpStreamError {}

/// Streamable HTTP's part of a client.
pub(crate) struct Http<'a> {
    streams: &'a mut [McpStream],
    /// The listed tools' `x-mcp-header` parameters.
    params: Params<'a>,
    /// The stream whose message is in the line buffer, unfinished.
    owner: Option<usize>,
    session: [u8; SESSION_CAP],
    session_len: usize,
    /// A new session was started once after a `404`.
    restarted: bool,
}

impl Http<'_> {
    /// Checks a listed tool's `x-mcp-header` annotations and keeps them; why it is skipped.
    pub(crate) fn admit(&mut self, name: &str, tool: &[u8], cap: usize) -> Option<McpToolSkip> {
        match self.params.add(name, tool) {
            Ok(()) => None,
            Err(Refusal::Bad) => Some(McpToolSkip::BadHeaderAnnotation),
            Err(Refusal::Full) => Some(McpToolSkip::HeaderTableFull { cap }),
        }
    }

    /// Forgets the listed tools' annotations (the tools are listed again).
    pub(crate) fn clear_params(&mut self) {
        self.params.clear();
    }
}

impl McpConfig {
    /// The longest header lines [`McpClient::poll_request`] writes.
    pub const fn max_headers_len(&self) -> usize {
        // Content-Type, Accept, MCP-Protocol-Version, Mcp-Method (the longest method the
        // client sends is `subscriptions/listen`), then Mcp-Name or Mcp-Session-Id.
        let fixed = 160;
        let name = 12 + value_bound(self.name_cap);
        let session = 20 + SESSION_CAP;
        // `Mcp-Param-*` lines: per header at most 16 bytes around its name (each takes 4 or
        // more of the table), and values from the args, Base64 at worst.
        let params = self
            .header_table_cap
            .saturating_mul(8)
            .saturating_add(value_bound(self.outbox_cap));
        fixed + params + if name > session { name } else { session }
    }
}

impl<'a> McpClient<'a> {
    /// A client over Streamable HTTP (SPEC §9.11): as [`new`](Self::new), with one
    /// [`McpStream`] per response read at once
    /// (each request has its own; a 2026-07-28 subscription to tool-list changes keeps one
    /// open, and is made only with two or more).
    pub fn new_http(
        cfg: McpConfig,
        info: super::super::McpClientInfo<'a>,
        slots: &'a mut [super::super::McpSlot],
        streams: &'a mut [McpStream],
        arena: &'a mut [u8],
    ) -> Result<Self, crate::error::StorageError> {
        if streams.is_empty() || streams.len() > usize::from(u16::MAX) {
            return Err(crate::error::StorageError::TooManySlots);
        }
        let mut c = Self::new(cfg, info, slots, arena)?;
        let table = c.table.take().unwrap_or_default();
        c.http = Some(Http {
            streams,
            params: Params::new(table),
            owner: None,
            session: [0; SESSION_CAP],
            session_len: 0,
            restarted: false,
        });
        Ok(c)
    }

    /// Whether this client speaks Streamable HTTP.
    pub fn is_http(&self) -> bool {
        self.http.is_some()
    }

    /// Whether a 2026-07-28 subscription can be kept open (over HTTP it holds a stream).
    pub(crate) fn can_listen(&self) -> bool {
        self.http.as_ref().is_none_or(|h| h.streams.len() >= 2)
    }

    /// Over HTTP in 2026-07-28, a cancelled call's stream is closed instead of telling the
    /// server (SPEC §9.10): whether it was.
    pub(crate) fn close_stream_of(&mut self, rpc: u64) -> bool {
        let modern = self.modern();
        let Some(h) = self.http.as_mut().filter(|_| modern) else {
            return false;
        };
        let live = |s: &McpStream| matches!(s.state, State::Posted | State::Open(_));
        let Some(i) = h.streams.iter().position(|s| s.rpc == rpc && live(s)) else {
            return false;
        };
        h.streams[i].state = State::Closing;
        if h.owner == Some(i) {
            h.owner = None;
        }
        true
    }

    /// The next POST to make (its body into `body`, its header lines into `headers`, which
    /// must hold [`McpConfig::max_headers_len`]), or a stream to close. `None` when there is
    /// nothing to send, or no stream is free; at start-up `tools/list` waits for the head of
    /// `notifications/initialized`'s response (SPEC §9 rule 1's order across two POSTs).
    pub fn poll_request(
        &mut self,
        body: &mut [u8],
        headers: &mut [u8],
    ) -> Result<Option<McpPost>, BufferTooSmall> {
        // Held apart while the next message is taken from the line client's queue.
        let Some(mut h) = self.http.take() else {
            return Ok(None);
        };
        let out = self.next_post(&mut h, body, headers);
        self.http = Some(h);
        out
    }

    fn next_post(
        &mut self,
        h: &mut Http<'_>,
        body: &mut [u8],
        headers: &mut [u8],
    ) -> Result<Option<McpPost>, BufferTooSmall> {
        let needed = self.cfg.max_headers_len();
        if let Some(i) = h.streams.iter().position(|s| s.state == State::Closing) {
            h.streams[i] = McpStream::EMPTY;
            return Ok(Some(McpPost::Close { stream: i as u16 }));
        }
        if headers.len() < needed {
            return Err(BufferTooSmall { needed });
        }
        let Some(i) = h.streams.iter().position(|s| s.state == State::Free) else {
            return Ok(None);
        };
        // The start-up's order (SPEC §9 rule 1) holds across separate POSTs only if `tools/list`
        // waits for the head of `notifications/initialized`'s response: sent at once, a server
        // may list before it handled the notification (server-everything registers tools then).
        let notified = |s: &McpStream| s.state == State::Posted && s.rpc == 0;
        if self.phase == Phase::SendList && h.streams.iter().any(notified) {
            return Ok(None);
        }
        let Some(n) = self.poll_transmit(body)? else {
            return Ok(None);
        };
        let message = &body[..n.saturating_sub(1)];
        let (rpc, method) = match jsonrpc::read(message) {
            Some(Message::Request { id, method }) => {
                (jsonrpc::integer_id(id).unwrap_or(0), Some(method))
            }
            Some(Message::Notification { method, .. }) => (0, Some(method)),
            _ => (0, None),
        };
        let method = method.map_or(&b""[..], |m| m.raw());
        let discover = method == b"server/discover";
        let modern = self.modern() || discover;
        let version = if discover {
            Some(PROTOCOL_VERSION_2026)
        } else {
            self.version
        };
        let call = (method == b"tools/call")
            .then(|| get(message, b"params"))
            .flatten();
        let name = call
            .and_then(|p| get(p, b"name"))
            .and_then(string)
            .and_then(|n| n.decode_into(self.scratch).ok());
        let args = call.and_then(|p| get(p, b"arguments")).unwrap_or(b"{}");
        let session = (!modern && h.session_len > 0 && method != b"initialize")
            .then(|| &h.session[..h.session_len]);
        let len = write_counted(headers, |s| {
            put_common(s, version);
            if modern && !method.is_empty() {
                put_header(s, b"Mcp-Method", method);
            }
            if let (true, Some(name)) = (modern, name) {
                s.put(b"Mcp-Name: ");
                put_value(s, name.as_bytes());
                s.put(b"\r\n");
                h.params.write(s, name.as_bytes(), args);
            }
            if let Some(id) = session {
                put_header(s, b"Mcp-Session-Id", id);
            }
        })?;
        h.streams[i] = McpStream {
            state: State::Posted,
            rpc,
            ..McpStream::EMPTY
        };
        Ok(Some(McpPost::Post {
            stream: i as u16,
            body: message.len(),
            headers: len,
        }))
    }

    /// The head of stream `stream`'s response: its status, its `Content-Type` and, when it
    /// has one, its `Mcp-Session-Id`.
    pub fn handle_response(
        &mut self,
        stream: u16,
        status: u16,
        content_type: &[u8],
        session: Option<&[u8]>,
    ) -> Result<(), McpStreamError> {
        let owed = self.owed != Owed::Nothing;
        let (phase, modern) = (self.phase, self.modern());
        let known = self.version.is_some();
        let h = self.http.as_mut().ok_or(McpStreamError::NotHttp)?;
        let s = h
            .streams
            .get_mut(usize::from(stream))
            .ok_or(McpStreamError::UnknownStream)?;
        match s.state {
            State::Posted => {}
            State::Open(_) => return Err(McpStreamError::HeadTwice),
            _ => return Err(McpStreamError::UnknownStream),
        }
        if owed {
            return Err(McpStreamError::PollFirst);
        }
        let ty = |t: &[u8]| {
            content_type.len() >= t.len() && content_type[..t.len()].eq_ignore_ascii_case(t)
        };
        let body = match status {
            202 | 204 => Body::Ignored,
            _ if ty(b"application/json") => Body::Json,
            _ if ty(b"text/event-stream") => Body::Sse,
            _ => Body::Ignored,
        };
        let rpc = s.rpc;
        s.state = State::Open(body);
        s.status = status;
        let mut too_long = false;
        if let (Phase::AwaitInit(r), Some(id)) = (phase, session) {
            if r == rpc && (200..300).contains(&status) {
                too_long = id.len() > SESSION_CAP;
                let n = id.len().min(SESSION_CAP);
                h.session[..n].copy_from_slice(&id[..n]);
                h.session_len = if too_long { 0 } else { n };
            }
        }
        // A 2025-11-25 session the server no longer knows: a new one, once (SPEC §9.11).
        let gone = status == 404 && h.session_len > 0 && !h.restarted && !modern && known;
        if gone && !matches!(phase, Phase::AwaitDiscover(_)) {
            h.session_len = 0;
            h.restarted = true;
            self.skip_list = phase == Phase::Ready;
            self.phase = Phase::SendInit;
        }
        if too_long {
            self.start_failed(StartFault::TooLarge);
        }
        Ok(())
    }

    /// Bytes of stream `stream`'s body; returns how many it took: all of a JSON body,
    /// up to the end of one event of an SSE one, and none while another stream's message
    /// holds the line buffer or what the last one owes is not polled out.
    pub fn feed_response(&mut self, stream: u16, bytes: &[u8]) -> Result<usize, McpStreamError> {
        let owed = self.owed != Owed::Nothing;
        let h = self.http.as_mut().ok_or(McpStreamError::NotHttp)?;
        let i = usize::from(stream);
        let s = h.streams.get_mut(i).ok_or(McpStreamError::UnknownStream)?;
        let body = match s.state {
            State::Open(body) => body,
            State::Posted => return Err(McpStreamError::NoHead),
            _ => return Err(McpStreamError::UnknownStream),
        };
        if body == Body::Ignored {
            return Ok(bytes.len());
        }
        if owed || h.owner.is_some_and(|o| o != i) {
            return Ok(0);
        }
        if body == Body::Json {
            let end = s.len.saturating_add(bytes.len());
            if let Some(dst) = self.line.get_mut(s.len..end) {
                dst.copy_from_slice(bytes);
            }
            s.len = end;
            h.owner = Some(i);
            return Ok(bytes.len());
        }
        let (n, fed) = s.reader.feed(self.line, bytes);
        h.owner = s.reader.holds_event().then_some(i);
        if fed == Fed::Event {
            self.read_event(i);
        }
        Ok(n)
    }

    /// Stream `stream`'s response ended, whole or broken (or, with no head given, the
    /// request got no response at all). A request it did not answer fails: a call with
    /// `HTTP <status>` when the status was no success, else as the connection closed.
    pub fn handle_response_end(&mut self, stream: u16) -> Result<(), McpStreamError> {
        let owed = self.owed != Owed::Nothing;
        let h = self.http.as_mut().ok_or(McpStreamError::NotHttp)?;
        let i = usize::from(stream);
        let s = h.streams.get_mut(i).ok_or(McpStreamError::UnknownStream)?;
        let body = match s.state {
            State::Open(body) => Some(body),
            State::Posted => None,
            _ => return Err(McpStreamError::UnknownStream),
        };
        if owed {
            return Err(McpStreamError::PollFirst);
        }
        let (rpc, status) = (s.rpc, s.status);
        match body {
            Some(Body::Json) if s.len > 0 => {
                let len = s.len;
                h.owner = None;
                self.read_message(rpc, len);
            }
            Some(Body::Sse) if s.reader.finish() => self.read_event(i),
            _ => {}
        }
        if let Some(h) = self.http.as_mut() {
            h.streams[i] = McpStream::EMPTY;
            if h.owner == Some(i) {
                h.owner = None;
            }
        }
        self.unanswered(rpc, status);
        Ok(())
    }

    /// The event stream `i`'s reader holds, read as one message.
    fn read_event(&mut self, i: usize) {
        let Some(h) = self.http.as_mut() else {
            return;
        };
        let s = &mut h.streams[i];
        let (len, rpc) = (s.reader.len, s.rpc);
        s.reader.clear_event();
        h.owner = None;
        // A priming event (an `id` and empty data) carries no message.
        if len > 0 {
            self.read_message(rpc, len);
        }
    }

    /// The message of `len` bytes in the line buffer, from the response to request `rpc`.
    fn read_message(&mut self, rpc: u64, len: usize) {
        bump64(&mut self.stats.lines);
        if len > self.line.len() {
            // The stream says which call it answers: no scan needed.
            bump32(&mut self.stats.too_long);
            let why = McpFailure::ResponseTooLong {
                cap: self.cfg.line_cap,
            };
            return self.fail_request(rpc, why, StartFault::TooLarge);
        }
        self.read_stored(len);
    }

    /// Request `rpc`'s response ended without its answer.
    fn unanswered(&mut self, rpc: u64, status: u16) {
        let why = match status {
            200..=299 | 0 => McpFailure::Closed,
            _ => McpFailure::Http { status },
        };
        self.fail_request(rpc, why, StartFault::NoResponse(status));
    }

    /// Request `rpc` will get no answer: its call fails with `why`, a start-up request with
    /// `fault` (the probe falls back to `initialize`), a listing of its own ends.
    fn fail_request(&mut self, rpc: u64, why: McpFailure, fault: StartFault) {
        if rpc == 0 {
            return;
        }
        match self.phase {
            Phase::AwaitDiscover(r) if r == rpc => self.legacy(fault),
            Phase::AwaitInit(r) | Phase::AwaitList(r) if r == rpc => self.start_failed(fault),
            _ => {}
        }
        if self.relist == Relist::Await(rpc) {
            self.relist = Relist::Idle;
        }
        if self.listen == Listen::Open(rpc) {
            self.listen = Listen::No;
        }
        if let Some(slot) = self.calls.waiting_for(rpc) {
            self.calls.set_state(slot, CallState::Failing(why));
        }
    }
}
