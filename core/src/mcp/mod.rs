//! An MCP client (SPEC §9): any MCP server, over any newline-delimited byte transport,
//! serves a wrapper's adapter tools, every pending call carried over the one connection.
//!
//! The [`McpClient`] is sans-IO and allocation-free like the rest of the crate: the host
//! moves bytes between it and the transport, and frames between it and the
//! [`Wrapper`](crate::Wrapper). It keeps no clock: the wrapper times calls out (restarted
//! by the server's progress, SPEC §5) and sends the `CANCEL` that tells the server.
//!
//! # Methods by role
//!
//! - Set-up: [`new`](McpClient::new) (memory from [`McpConfig::arena_len`] and one
//!   [`McpSlot`] per call in flight), then [`start`](McpClient::start).
//! - Time: [`poll_timeout`](McpClient::poll_timeout) and
//!   [`handle_timeout`](McpClient::handle_timeout), for the start-up's `server/discover`
//!   only (the wrapper times calls).
//! - Inputs: [`feed`](McpClient::feed) bytes from the server; [`handle_frame`](McpClient::handle_frame)
//!   with each frame the wrapper routes to an adapter ([`Route::Adapter`](crate::Route));
//!   [`handle_closed`](McpClient::handle_closed) when the transport is gone.
//! - Effects: [`poll_transmit`](McpClient::poll_transmit) (lines for the server),
//!   [`poll_frame`](McpClient::poll_frame) (frames for
//!   [`Wrapper::handle_adapter_frame`](crate::Wrapper::handle_adapter_frame)),
//!   [`poll_event`](McpClient::poll_event) (start-up, listed tools, notifications).
//!
//! # Polling order
//!
//! After every input, drain [`poll_event`](McpClient::poll_event), [`poll_frame`](McpClient::poll_frame)
//! and [`poll_transmit`](McpClient::poll_transmit) until each gives nothing. `feed` takes
//! up to the end of one line, and nothing while what that line owes is not polled out.
//! Listed tools come as [`McpEvent::Tool`] before [`McpEvent::Ready`]; calls handed in
//! earlier wait in the outbox until then.
//!
//! # Revisions
//!
//! By default the client probes with `server/discover` (SPEC §9.9): a server that lists
//! 2026-07-28 is spoken to in it (no handshake; every request carries the `_meta`
//! envelope; `resultType` read; tool-list changes subscribed to), any other gets the
//! `initialize` handshake of 2025-11-25 on the same connection. [`McpConfig::revision`]
//! fixes one; the example below fixes 2025-11-25.
//!
//! ```
//! use polyweave_tool_adapter::mcp::{
//!     McpClient, McpClientInfo, McpConfig, McpEvent, McpRevision, McpSlot,
//! };
//! use polyweave_tool_adapter::{CallHandle, Instant};
//!
//! const CFG: McpConfig = McpConfig { revision: McpRevision::V2025_11_25, ..McpConfig::SMALL };
//! let mut slots = [McpSlot::EMPTY; 2];
//! let mut arena = [0u8; CFG.arena_len(2)];
//! let mut c = McpClient::new(CFG, McpClientInfo::THIS_CRATE, &mut slots, &mut arena).unwrap();
//! c.start(Instant::ZERO).unwrap();
//! let mut line = [0u8; 512];
//! let n = c.poll_transmit(&mut line).unwrap().unwrap();
//! assert!(line[..n].starts_with(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","#));
//!
//! c.feed(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n");
//! assert!(matches!(c.poll_event(), Some(McpEvent::Initialized { protocol_version: "2025-11-25", .. })));
//! let n = c.poll_transmit(&mut line).unwrap().unwrap();
//! assert_eq!(&line[..n], b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
//! let n = c.poll_transmit(&mut line).unwrap().unwrap();
//! assert_eq!(&line[..n], b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
//!
//! c.feed(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\"}]}}\n");
//! assert!(matches!(c.poll_event(), Some(McpEvent::Tool { name: "echo", .. })));
//! assert_eq!(c.poll_event(), Some(McpEvent::Ready { tools: 1 }));
//!
//! // The wrapper's TOOL_CALL for an adapter call becomes a `tools/call` request.
//! let h = CallHandle::from_parts(0, 0);
//! c.handle_frame(h, br#"{"type":"TOOL_CALL","content":{"name":"echo","args":{"message":"hi"}}}"#).unwrap();
//! let n = c.poll_transmit(&mut line).unwrap().unwrap();
//! assert_eq!(&line[..n], &b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\
//!     \"arguments\":{\"message\":\"hi\"},\"_meta\":{\"progressToken\":3}}}\n"[..]);
//!
//! // Its answer becomes the frames the wrapper's adapter call settles on.
//! c.feed(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n");
//! let mut frame = [0u8; 256];
//! let f = c.poll_frame(&mut frame).unwrap().unwrap();
//! assert_eq!(f.handle, h);
//! assert_eq!(&frame[..f.len], br#"{"type":"TOOL_RESULT","content":{"name":"echo","result":[{"type":"text","text":"hi"}]}}"#);
//! let f = c.poll_frame(&mut frame).unwrap().unwrap();
//! assert_eq!(&frame[..f.len], br#"{"type":"END"}"#);
//! assert_eq!(c.poll_frame(&mut frame), Ok(None));
//! ```

mod adapter;
mod answers;
mod calls;
mod config;
mod error;
mod event;
mod frames;
#[cfg(feature = "mcp-http")]
pub mod http;
mod incoming;
mod jsonrpc;
mod listing;
mod outbox;
mod outgoing;
#[cfg(feature = "schema")]
mod output;
mod owed;
mod revision;
mod salvage;
mod stats;

pub use calls::McpSlot;
#[cfg(feature = "schema")]
pub use config::McpOutputSchema;
pub use config::{
    McpClientInfo, McpConfig, McpRevision, CANCEL_LINE_BOUND, CLIENT_TEXT_CAP,
    DEFAULT_START_TIMEOUT_MS, OUTBOX_HEADER, PROTOCOL_VERSION, PROTOCOL_VERSION_2026, REASON_CAP,
    SUPPORTED_VERSIONS,
};
pub use error::{McpError, McpHandled};
pub use event::{McpEvent, McpStartError, McpToolSkip};
pub use frames::McpFailure;
pub use stats::McpStats;

use crate::clock::Instant;
use crate::error::StorageError;
use crate::frame::splitter::{Cut, Lines};
use crate::frame::{Frame, FrameKind};
use crate::json::valid::string;
use crate::json::BufferTooSmall;
use crate::route::CallHandle;
use crate::sink::write_counted;

use calls::Calls;
use outbox::Outbox;
use owed::{Immediate, Owed, Span, StartFault};
use salvage::Salvage;
use stats::{bump32, bump64};

/// `tools/list` pages the client follows before it calls the start-up failed.
pub const MAX_PAGES: u32 = 1024;

/// A frame [`McpClient::poll_frame`] wrote, for the adapter call `handle` names.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McpAdapterFrame {
    /// The call, as the wrapper named it in [`Route::Adapter`](crate::Route::Adapter).
    pub handle: CallHandle,
    /// The frame's length in the host's buffer.
    pub len: usize,
}

/// Where the client is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpState {
    /// Not started.
    Idle,
    /// Initializing and listing tools.
    Starting,
    /// Serving calls.
    Ready,
    /// The start-up failed; calls fail at once.
    Failed,
    /// The transport closed; calls fail at once.
    Closed,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Phase {
    Idle,
    SendDiscover,
    AwaitDiscover(u64),
    SendInit,
    AwaitInit(u64),
    SendInitialized,
    SendList,
    AwaitList(u64),
    /// A page's tools are being handed out.
    Listed,
    Ready,
    Failed,
    Closed,
}

/// The MCP client.
pub struct McpClient<'a> {
    cfg: McpConfig,
    info: McpClientInfo<'a>,
    calls: Calls<'a>,
    line: &'a mut [u8],
    cursor: &'a mut [u8],
    /// The cursor of the next page to ask for.
    cursor_len: Option<usize>,
    /// The name of a call failed at once.
    imm_name: &'a mut [u8],
    /// Where a listed tool's name is decoded.
    scratch: &'a mut [u8],
    outbox: Outbox<'a>,
    /// Bytes of the unfinished line, stored or not.
    line_len: usize,
    lines: Lines,
    /// The scan of a line that outgrew `line`, while it streams past.
    scan: Option<Salvage>,
    owed: Owed,
    immediate: Option<Immediate>,
    /// The output schemas the host registered.
    #[cfg(feature = "schema")]
    outputs: &'a [McpOutputSchema<'a>],
    phase: Phase,
    /// The revision spoken, once the server said.
    version: Option<&'static str>,
    /// When `server/discover` counts as unanswered.
    deadline: Instant,
    relist: listing::Relist,
    /// A tool-list change came while the tools were being listed: list them once more.
    relist_again: bool,
    listen: listing::Listen,
    /// A start-up failure decided while the line's output was not yet polled.
    deferred: Option<StartFault>,
    /// A new 2025-11-25 session (its `404`): the tools are listed already.
    skip_list: bool,
    /// Streamable HTTP's state; `None` over a line transport.
    #[cfg(feature = "mcp-http")]
    http: Option<http::Http<'a>>,
    /// The `x-mcp-header` table's memory, until an HTTP client takes it.
    #[cfg(feature = "mcp-http")]
    table: Option<&'a mut [u8]>,
    next_rpc: u64,
    pages: u32,
    tools: u32,
    stats: McpStats,
}

impl core::fmt::Debug for McpClient<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("McpClient")
            .field("phase", &self.phase)
            .field("in_flight", &self.calls.in_flight())
            .field("outbox", &self.outbox.len())
            .field("owed", &self.owed)
            .finish()
    }
}

/// The span of `part` within `whole` (`part` is a subslice of it).
fn span(whole: &[u8], part: &[u8]) -> Span {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    debug_assert!(start + part.len() <= whole.len(), "not a subslice");
    (start, start + part.len())
}

impl<'a> McpClient<'a> {
    /// A client with `slots.len()` calls in flight at most and an arena of
    /// [`McpConfig::arena_len`] bytes.
    pub fn new(
        cfg: McpConfig,
        info: McpClientInfo<'a>,
        slots: &'a mut [McpSlot],
        arena: &'a mut [u8],
    ) -> Result<Self, StorageError> {
        cfg.check()?;
        if slots.len() > u16::MAX as usize {
            return Err(StorageError::TooManySlots);
        }
        if info.name.len() > CLIENT_TEXT_CAP || info.version.len() > CLIENT_TEXT_CAP {
            return Err(StorageError::ClientInfoTooLong);
        }
        let needed = cfg.arena_len(slots.len());
        if arena.len() < needed {
            return Err(StorageError::ArenaTooSmall {
                needed,
                given: arena.len(),
            });
        }
        let (line, rest) = arena.split_at_mut(cfg.line_cap);
        let (outbox, rest) = rest.split_at_mut(cfg.outbox_cap);
        let (cursor, rest) = rest.split_at_mut(cfg.cursor_cap);
        let (names, rest) = rest.split_at_mut(cfg.name_cap * slots.len());
        let (imm_name, rest) = rest.split_at_mut(cfg.name_cap);
        let (scratch, rest) = rest.split_at_mut(cfg.name_cap);
        // Streamable HTTP's `x-mcp-header` table (a line client leaves it unused).
        #[cfg(feature = "mcp-http")]
        let table = Some(&mut rest[..cfg.header_table_cap]);
        #[cfg(not(feature = "mcp-http"))]
        let _ = rest;
        Ok(Self {
            cfg,
            info,
            calls: Calls::new(slots, names, cfg.name_cap),
            line,
            cursor,
            cursor_len: None,
            imm_name,
            scratch,
            outbox: Outbox::new(outbox),
            line_len: 0,
            lines: Lines::new(),
            scan: None,
            owed: Owed::Nothing,
            immediate: None,
            #[cfg(feature = "schema")]
            outputs: &[],
            phase: Phase::Idle,
            version: None,
            deadline: Instant::ZERO,
            relist: listing::Relist::Idle,
            relist_again: false,
            listen: listing::Listen::No,
            deferred: None,
            skip_list: false,
            #[cfg(feature = "mcp-http")]
            http: None,
            #[cfg(feature = "mcp-http")]
            table,
            next_rpc: 1,
            pages: 0,
            tools: 0,
            stats: McpStats::default(),
        })
    }

    /// Its configuration.
    pub fn config(&self) -> McpConfig {
        self.cfg
    }

    /// Where it is in its life.
    pub fn state(&self) -> McpState {
        match self.phase {
            Phase::Idle => McpState::Idle,
            Phase::Ready => McpState::Ready,
            Phase::Failed => McpState::Failed,
            Phase::Closed => McpState::Closed,
            _ => McpState::Starting,
        }
    }

    /// The revision spoken, once the server said (`initialize`'s answer, or `2026-07-28`).
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.version
    }

    /// Whether the server is spoken to in 2026-07-28.
    fn modern(&self) -> bool {
        self.version == Some(PROTOCOL_VERSION_2026)
    }

    /// What it counted.
    pub fn stats(&self) -> McpStats {
        self.stats
    }

    /// Calls in flight (waiting for the server, or with frames not yet polled).
    pub fn in_flight(&self) -> usize {
        self.calls.in_flight() + usize::from(self.immediate.is_some())
    }

    /// Lines waiting in the outbox.
    pub fn queued(&self) -> usize {
        self.outbox.len()
    }

    /// Bytes of a line from the server read so far and not yet complete.
    pub fn buffered(&self) -> usize {
        self.line_len
    }

    // ----- inputs -------------------------------------------------------

    /// Begins the start-up at `now`: `server/discover` goes out at the next `poll_transmit`
    /// (`initialize` when the revision is fixed to 2025-11-25), and
    /// [`poll_timeout`](Self::poll_timeout) says until when it may go unanswered.
    pub fn start(&mut self, now: Instant) -> Result<(), McpError> {
        if self.phase != Phase::Idle {
            return Err(McpError::AlreadyStarted);
        }
        self.phase = match self.cfg.revision {
            McpRevision::V2025_11_25 => Phase::SendInit,
            McpRevision::Auto | McpRevision::V2026_07_28 => Phase::SendDiscover,
        };
        self.deadline = now.saturating_add_millis(u64::from(self.cfg.start_timeout_ms));
        Ok(())
    }

    /// Bytes from the server; takes up to the end of one line and returns how many (0
    /// while what the last line owes is not polled out). Once the transport is closed it
    /// takes everything and reads nothing.
    pub fn feed(&mut self, input: &[u8]) -> usize {
        if self.phase == Phase::Closed {
            return input.len();
        }
        if self.owed != Owed::Nothing {
            return 0;
        }
        let (taken, spill, cut) = self.lines.feed(&mut self.line_len, self.line, input);
        if !spill.is_empty() {
            // The line outgrew its buffer: scan it (the stored start first) as it streams past.
            let line = &*self.line;
            self.scan
                .get_or_insert_with(|| {
                    let mut scan = Salvage::new();
                    scan.feed(line);
                    scan
                })
                .feed(spill);
        }
        match cut {
            Cut::Partial => {
                if self.line_len == 0 {
                    // A blank line ended (or nothing came): nothing to scan.
                    self.scan = None;
                }
            }
            Cut::Line(len) => {
                bump64(&mut self.stats.lines);
                self.read_stored(len);
            }
            Cut::TooLong(_) => {
                bump64(&mut self.stats.lines);
                bump32(&mut self.stats.too_long);
                let why = McpFailure::ResponseTooLong {
                    cap: self.cfg.line_cap,
                };
                let scan = self.scan.take().unwrap_or_else(Salvage::new);
                self.unreadable(scan, why);
            }
        }
        taken
    }

    /// A frame the wrapper routed to an adapter call (`TOOL_CALL` or `CANCEL`).
    ///
    /// The client keeps `handle` only as the call's key and hands it back with the call's
    /// frames: any handle unique among the calls in flight works (a host driving
    /// standalone [`AdapterCall`](crate::AdapterCall)s makes its own with
    /// [`CallHandle::from_parts`]).
    pub fn handle_frame(
        &mut self,
        handle: CallHandle,
        frame: &[u8],
    ) -> Result<McpHandled, McpError> {
        let f = Frame::parse_validated(frame, self.cfg.max_depth).map_err(McpError::Malformed)?;
        match f.kind() {
            FrameKind::ToolCall => self.call(handle, &f, None),
            FrameKind::Other(t) if t.eq_text(b"CANCEL") => self.cancel(handle, &f),
            _ => Err(McpError::NotAdapterFrame),
        }
    }

    /// As [`handle_frame`](Self::handle_frame), but a `TOOL_CALL` goes to the server as a
    /// call of its tool `tool`: for an MCP tool the model knows by a mapped name (SPEC
    /// §10.1, `request::model_name_of`). The call's frames back
    /// (its `TOOL_RESULT`, its errors) name the tool as the frame did: the name the model used.
    pub fn handle_frame_as(
        &mut self,
        handle: CallHandle,
        frame: &[u8],
        tool: &str,
    ) -> Result<McpHandled, McpError> {
        let f = Frame::parse_validated(frame, self.cfg.max_depth).map_err(McpError::Malformed)?;
        match f.kind() {
            FrameKind::ToolCall => self.call(handle, &f, Some(tool.as_bytes())),
            FrameKind::Other(t) if t.eq_text(b"CANCEL") => self.cancel(handle, &f),
            _ => Err(McpError::NotAdapterFrame),
        }
    }

    /// The transport closed: every call in flight fails (SPEC §9.7), later ones at once.
    pub fn handle_closed(&mut self) {
        if self.phase == Phase::Closed {
            return;
        }
        self.phase = Phase::Closed;
        self.outbox.clear();
        self.line_len = 0;
        self.lines = Lines::new();
        self.scan = None;
        if let Owed::Reply { .. } = self.owed {
            self.owed = Owed::Nothing;
        }
        self.relist = listing::Relist::Idle;
        self.listen = listing::Listen::No;
        self.calls.fail_waiting(McpFailure::Closed);
    }

    // ----- outputs ------------------------------------------------------

    /// The next line for the server, LF included, written into `out`.
    pub fn poll_transmit(&mut self, out: &mut [u8]) -> Result<Option<usize>, BufferTooSmall> {
        if let Owed::Reply { id, ping } = self.owed {
            let id = &self.line[id.0..id.1];
            let n = write_counted(out, |s| outgoing::reply(s, id, ping))?;
            self.owed = Owed::Nothing;
            return Ok(Some(n));
        }
        let rpc = self.next_rpc;
        let n = match self.phase {
            Phase::SendDiscover => {
                let info = self.info;
                let n = write_counted(out, |s| outgoing::discover(s, rpc, &info))?;
                self.next_rpc += 1;
                self.phase = Phase::AwaitDiscover(rpc);
                n
            }
            Phase::SendInit => {
                let info = self.info;
                let n = write_counted(out, |s| outgoing::initialize(s, rpc, &info))?;
                self.next_rpc += 1;
                self.phase = Phase::AwaitInit(rpc);
                n
            }
            Phase::SendInitialized => {
                let n = write_counted(out, outgoing::initialized)?;
                self.phase = match core::mem::take(&mut self.skip_list) {
                    true => Phase::Ready,
                    false => Phase::SendList,
                };
                n
            }
            Phase::SendList => {
                let n = self.write_list(out, rpc)?;
                self.phase = Phase::AwaitList(rpc);
                n
            }
            Phase::Ready => match self.poll_listing(out, rpc)? {
                Some(n) => n,
                None => {
                    let modern = self.modern().then_some(self.info);
                    let Some((line, call)) = self.outbox.front() else {
                        return Ok(None);
                    };
                    let n = match modern {
                        // A queued call (not a cancel) takes 2026-07-28's envelope.
                        Some(info) if call != 0 => {
                            write_counted(out, |s| outgoing::with_envelope(s, line, &info))?
                        }
                        _ => {
                            let Some(dst) = out.get_mut(..line.len()) else {
                                return Err(BufferTooSmall { needed: line.len() });
                            };
                            dst.copy_from_slice(line);
                            line.len()
                        }
                    };
                    self.outbox.pop();
                    n
                }
            },
            _ => return Ok(None),
        };
        Ok(Some(n))
    }

    /// The next thing the host learns from the server.
    pub fn poll_event(&mut self) -> Option<McpEvent<'_>> {
        if self.owed == Owed::Nothing {
            if let Some(fault) = self.deferred.take() {
                self.owed = Owed::StartFailed(fault);
            }
        }
        match self.owed {
            Owed::Initialized { version, result } => {
                self.owed = Owed::Nothing;
                Some(McpEvent::Initialized {
                    protocol_version: version,
                    result: &self.line[result.0..result.1],
                })
            }
            Owed::Notification { method, params } => {
                self.owed = Owed::Nothing;
                let line = &self.line[..];
                Some(McpEvent::Notification {
                    method: string(&line[method.0..method.1])?,
                    params: params.map(|p| &line[p.0..p.1]),
                })
            }
            Owed::StartFailed(fault) => {
                self.owed = Owed::Nothing;
                let line = &self.line[..];
                Some(McpEvent::StartFailed(match fault {
                    StartFault::Version(v) => McpStartError::UnsupportedVersion(&line[v.0..v.1]),
                    StartFault::BadResult(r) => McpStartError::BadResult(&line[r.0..r.1]),
                    StartFault::Refused(e) => McpStartError::Refused(&line[e.0..e.1]),
                    StartFault::CursorTooLong(n) => McpStartError::CursorTooLong(n),
                    StartFault::TooManyPages => McpStartError::TooManyPages,
                    StartFault::TooLarge => McpStartError::ResponseTooLarge,
                    StartFault::NoAnswer => McpStartError::NoAnswer,
                    StartFault::NoResponse(status) => McpStartError::NoResponse { status },
                }))
            }
            Owed::Tools { list, pos, more } => self.next_tool(list, pos, more),
            _ => None,
        }
    }
}

// Over a line transport only: a subscription costs no stream, and cancelling always tells.
#[cfg(not(feature = "mcp-http"))]
impl McpClient<'_> {
    fn can_listen(&self) -> bool {
        true
    }

    fn close_stream_of(&mut self, _rpc: u64) -> bool {
        false
    }
}
