//! `AdapterCall`: one call through a tool adapter (SPEC §2), and the reading
//! rules it shares with the wrapper's adapter tools.
//!
//! The call writes one `TOOL_CALL` to the adapter, then reads the adapter's
//! frames: the first `TOOL_RESULT` is recorded (`content.result`, else
//! `content.content`, else the whole frame), the first `ERROR` ends with an
//! error, `END` or the adapter closing ends with the recorded result (or
//! `null`), and the deadline ends with a timeout after a `CANCEL` is sent.
//! Only the first end counts.
//!
//! ```
//! use polyweave_tool_adapter::call::{AdapterCall, CallOptions};
//! use polyweave_tool_adapter::{CallOutcome, Instant};
//!
//! let mut result = [0u8; 256];
//! let opts = CallOptions { name: "search", timeout_ms: 1000, ..CallOptions::DEFAULT };
//! let mut call = AdapterCall::start(Instant::ZERO, opts, Some("q1"), br#"{"q":"oslo"}"#, &mut result).unwrap();
//! let mut out = [0u8; 128];
//! let n = call.poll_transmit(&mut out).unwrap().unwrap();
//! assert_eq!(&out[..n], br#"{"type":"TOOL_CALL","content":{"id":"q1","name":"search","args":{"q":"oslo"}}}"#);
//! call.handle_frame(Instant::from_millis(5), br#"{"type":"TOOL_RESULT","content":{"result":21}}"#).unwrap();
//! call.handle_frame(Instant::from_millis(6), br#"{"type":"END"}"#).unwrap();
//! assert_eq!(call.outcome(), Some(CallOutcome::Result(b"21")));
//! ```

use crate::clock::{Clock, Instant};
use crate::error::{CallError, Error};
use crate::frame::write::{BufferTooSmall, OutFrame};
use crate::frame::{Frame, FrameError, FrameKind};
use crate::json::{self, JsonError, JsonStr, DEFAULT_MAX_DEPTH};
use crate::outcome::CallOutcome;
use crate::texts::Message;

/// What one adapter frame means for a call that is still waiting.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum AdapterStep<'f> {
    /// Nothing to do (a non-result frame, or a `TOOL_RESULT` after the first).
    Ignore,
    /// Record this raw value as the result.
    Record(&'f [u8]),
    /// End with an error: the message when `content.message` is a string.
    Fail(Option<JsonStr<'f>>),
    /// End with the recorded result.
    End,
    /// A `PROGRESS` frame: restart the timeout, where a cap is set (SPEC §5).
    Progress,
}

/// Applies the §2 reading rules to a validated frame.
pub(crate) fn read_adapter_frame<'f>(
    frame: &Frame<'f>,
    recorded: bool,
) -> Result<AdapterStep<'f>, FrameError> {
    Ok(match frame.kind() {
        FrameKind::ToolResult if recorded => AdapterStep::Ignore,
        FrameKind::ToolResult => {
            let r = frame.tool_result()?;
            AdapterStep::Record(r.result.or(r.content).unwrap_or_else(|| frame.trimmed()))
        }
        FrameKind::Error => AdapterStep::Fail(frame.error_message()?),
        FrameKind::End => AdapterStep::End,
        // Only the decoded type counts, so an escaped spelling is progress too.
        FrameKind::Other(ty) if ty.eq_text(b"PROGRESS") => AdapterStep::Progress,
        _ => AdapterStep::Ignore,
    })
}

/// Why [`AdapterCall::start`] refused to start a call.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum StartError {
    /// The args are not one JSON value (within the depth limit, the args being level 3).
    InvalidArgs(JsonError),
    /// The buffer cannot hold the call's own failure texts, so the call could never end.
    BufferTooSmall {
        /// Bytes the longest failure text needs.
        needed: usize,
        /// Bytes given.
        given: usize,
    },
}

impl core::fmt::Display for StartError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StartError::InvalidArgs(e) => write!(f, "args are not JSON: {e}"),
            StartError::BufferTooSmall { needed, given } => {
                write!(f, "buffer of {given} bytes, {needed} needed")
            }
        }
    }
}

impl core::error::Error for StartError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            StartError::InvalidArgs(e) => Some(e),
            StartError::BufferTooSmall { .. } => None,
        }
    }
}

/// Options of a standalone call (SPEC §2 defaults).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CallOptions<'a> {
    /// The tool name sent to the adapter and used in messages.
    pub name: &'a str,
    /// End with a timeout error this long after the start, or after the latest `PROGRESS`
    /// frame when `max_total_timeout_ms` is set.
    pub timeout_ms: u32,
    /// The cap on the call's life when `PROGRESS` frames restart its timeout (SPEC §5): the
    /// deadline never passes `start + max_total_timeout_ms`. 0: progress restarts nothing.
    pub max_total_timeout_ms: u32,
    /// JSON depth limit for the adapter's frames (the frame object is level 1).
    pub max_depth: u8,
}

impl CallOptions<'_> {
    /// `name: "unknown"`, `timeout_ms: 30000`, no progress cap, `max_depth: 32`.
    pub const DEFAULT: CallOptions<'static> = CallOptions {
        name: "unknown",
        timeout_ms: 30_000,
        max_total_timeout_ms: 0,
        max_depth: DEFAULT_MAX_DEPTH,
    };
}

impl Default for CallOptions<'_> {
    fn default() -> Self {
        CallOptions::DEFAULT
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum State {
    /// Waiting; what the first `TOOL_RESULT` left in `buf`, if one came.
    Waiting(Kept),
    Result(usize),
    Null,
    Error(usize),
}

/// What a waiting call kept of its adapter's first `TOOL_RESULT`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Kept {
    Nothing,
    /// A compact result of this many bytes.
    Result(usize),
    /// A result longer than `buf`: the call fails when it ends (SPEC §7.23).
    TooLarge,
}

/// One call through a tool adapter, ended by the first result, error, end or timeout.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AdapterCall<'a> {
    opts: CallOptions<'a>,
    id: Option<&'a str>,
    args: &'a [u8],
    buf: &'a mut [u8],
    state: State,
    deadline: Instant,
    /// `start + max_total_timeout_ms`; used only when that option is on.
    cap: Instant,
    clock: Clock,
    send_call: bool,
    send_cancel: bool,
    timed_out: bool,
}

impl<'a> AdapterCall<'a> {
    /// Starts the call at `now`; `buf` holds the recorded result, then the outcome.
    ///
    /// `args` must be valid JSON (depth counted from 1); the `TOOL_CALL` is queued at once.
    /// `buf` is the result capacity: a result longer than it (without white space) ends the
    /// call with `Tool <name> result exceeds <N> bytes`. It must at least hold the call's own
    /// failure texts ([`StartError::BufferTooSmall`]).
    pub fn start(
        now: Instant,
        opts: CallOptions<'a>,
        id: Option<&'a str>,
        args: &'a [u8],
        buf: &'a mut [u8],
    ) -> Result<Self, StartError> {
        // The wrapper's (noting) scanner, so that a firmware with both links one copy.
        json::validate_compact(args, opts.max_depth.saturating_sub(2))
            .map_err(StartError::InvalidArgs)?;
        // The buffer must hold the call's own failure texts, or a timeout could never end it.
        let name = opts.name.as_bytes();
        let span = opts.timeout_ms.max(opts.max_total_timeout_ms);
        let len = Message::TimedOut(name, span)
            .len()
            .max(Message::Failed(name).len())
            .max(Message::ResultTooLarge(name, buf.len()).len());
        if buf.len() < len {
            return Err(StartError::BufferTooSmall {
                needed: len,
                given: buf.len(),
            });
        }
        let mut clock = Clock::default();
        clock.advance(now);
        let timeout = now.saturating_add_millis(opts.timeout_ms as u64);
        let cap = now.saturating_add_millis(opts.max_total_timeout_ms as u64);
        let capped = opts.max_total_timeout_ms > 0;
        Ok(Self {
            opts,
            id,
            args,
            buf,
            state: State::Waiting(Kept::Nothing),
            deadline: match capped {
                true => timeout.min(cap),
                false => timeout,
            },
            cap,
            clock,
            send_call: true,
            send_cancel: false,
            timed_out: false,
        })
    }

    fn waiting(&self, now: Instant) -> Result<Kept, Error> {
        self.clock.check(now)?;
        match self.state {
            State::Waiting(_) if now >= self.deadline => Err(CallError::TimedOut.into()),
            State::Waiting(kept) => Ok(kept),
            _ if self.timed_out => Err(CallError::TimedOut.into()),
            _ => Err(CallError::Completed.into()),
        }
    }

    /// Reads one frame from the adapter (bytes of one frame, fully validated).
    pub fn handle_frame(&mut self, now: Instant, bytes: &[u8]) -> Result<(), Error> {
        let kept = self.waiting(now)?;
        let frame = Frame::parse_validated(bytes, self.opts.max_depth)?;
        match read_adapter_frame(&frame, kept != Kept::Nothing)? {
            AdapterStep::Ignore => {}
            AdapterStep::Record(raw) => {
                // Kept without white space (SPEC §7.22); too long, it fails the call when it ends.
                let fits = raw.len() <= self.buf.len() || json::compact_len(raw) <= self.buf.len();
                self.state = State::Waiting(match fits {
                    true => Kept::Result(json::compact_into(raw, self.buf)),
                    false => Kept::TooLarge,
                });
            }
            AdapterStep::Fail(Some(msg)) => {
                // Cut, never refused, so that the call ends.
                let (text, _) = msg.decode_prefix_into(self.buf);
                self.state = State::Error(text.len());
            }
            AdapterStep::Fail(None) => self.fail(Message::Failed(self.opts.name.as_bytes())),
            AdapterStep::End => self.end(kept),
            AdapterStep::Progress => {
                // Equivalent mutant: `>` -> `>=`: with no total cap, `cap` is the start, so a
                // restart clamped to it never moves the deadline.
                if self.opts.max_total_timeout_ms > 0 {
                    let restarted = now
                        .saturating_add_millis(self.opts.timeout_ms as u64)
                        .min(self.cap);
                    self.deadline = self.deadline.max(restarted);
                }
            }
        }
        self.clock.advance(now);
        Ok(())
    }

    /// The adapter closed its source: ends like `END`.
    pub fn handle_closed(&mut self, now: Instant) -> Result<(), Error> {
        let kept = self.waiting(now)?;
        self.end(kept);
        self.clock.advance(now);
        Ok(())
    }

    /// Gives the clock; at or past the deadline a waiting call sends `CANCEL` and ends with a timeout.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
        self.clock.check(now)?;
        if matches!(self.state, State::Waiting(_)) && now >= self.deadline {
            // The message names the span that ran out: the cap's, when the deadline is it.
            // Equivalent mutant: `>` -> `>=`: with no total cap, `cap` (the start) equals the
            // deadline only for a zero timeout, where both spans are 0.
            let span = match self.opts.max_total_timeout_ms > 0 && self.cap == self.deadline {
                true => self.opts.max_total_timeout_ms,
                false => self.opts.timeout_ms,
            };
            self.fail(Message::TimedOut(self.opts.name.as_bytes(), span));
            self.send_cancel = true;
            self.timed_out = true;
        }
        self.clock.advance(now);
        Ok(())
    }

    /// Ends the call with one of its own texts (`start` checked that `buf` holds them).
    fn fail(&mut self, msg: Message<'_>) {
        let text = msg.compose(self.buf);
        self.state = State::Error(text.len());
    }

    fn end(&mut self, kept: Kept) {
        match kept {
            Kept::Result(n) => self.state = State::Result(n),
            Kept::Nothing => self.state = State::Null,
            Kept::TooLarge => {
                let name = self.opts.name.as_bytes();
                self.fail(Message::ResultTooLarge(name, self.buf.len()));
            }
        }
    }

    /// The next frame for the adapter (`TOOL_CALL`, then `CANCEL` on timeout), written into `out`.
    #[must_use = "a frame taken from the call must be written to its adapter"]
    pub fn poll_transmit(&mut self, out: &mut [u8]) -> Result<Option<usize>, BufferTooSmall> {
        let id = self.id.map(str::as_bytes);
        let name = self.opts.name.as_bytes();
        if self.send_call {
            let n = OutFrame::ToolCall {
                id,
                name,
                args: self.args,
            }
            .encode(out)?;
            self.send_call = false;
            return Ok(Some(n));
        }
        if self.send_cancel {
            let n = OutFrame::Cancel {
                id,
                name,
                reason: b"timeout",
            }
            .encode(out)?;
            self.send_cancel = false;
            return Ok(Some(n));
        }
        Ok(None)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called, while waiting.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        matches!(self.state, State::Waiting(_)).then_some(self.deadline)
    }

    /// How the call ended, once it has.
    #[must_use]
    pub fn outcome(&self) -> Option<CallOutcome<'_>> {
        match self.state {
            State::Waiting(_) => None,
            State::Result(n) => Some(CallOutcome::Result(&self.buf[..n])),
            State::Null => Some(CallOutcome::Result(b"null")),
            State::Error(n) => Some(CallOutcome::Error(
                core::str::from_utf8(&self.buf[..n]).unwrap_or(""),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRESS: &[u8] = br#"{"type":"PROGRESS","content":{"p":1}}"#;

    fn opts(timeout_ms: u32, max_total_timeout_ms: u32) -> CallOptions<'static> {
        CallOptions {
            name: "t",
            timeout_ms,
            max_total_timeout_ms,
            ..CallOptions::DEFAULT
        }
    }

    fn error_of<'c>(call: &'c AdapterCall<'_>) -> &'c str {
        match call.outcome() {
            Some(CallOutcome::Error(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_cap_below_the_timeout_ends_the_call_at_the_cap_and_names_it() {
        let mut buf = [0u8; 128];
        let mut c =
            AdapterCall::start(Instant::ZERO, opts(100, 50), None, b"{}", &mut buf).unwrap();
        assert_eq!(c.poll_timeout(), Some(Instant::from_millis(50)));
        c.handle_timeout(Instant::from_millis(49)).unwrap();
        assert_eq!(c.outcome(), None);
        c.handle_timeout(Instant::from_millis(50)).unwrap();
        assert_eq!(error_of(&c), "Tool t timed out after 50ms");
    }

    #[test]
    fn without_progress_the_plain_timeout_runs_out_and_is_named() {
        let mut buf = [0u8; 128];
        let mut c =
            AdapterCall::start(Instant::ZERO, opts(100, 300), None, b"{}", &mut buf).unwrap();
        assert_eq!(c.poll_timeout(), Some(Instant::from_millis(100)));
        c.handle_timeout(Instant::from_millis(100)).unwrap();
        assert_eq!(error_of(&c), "Tool t timed out after 100ms");
    }

    #[test]
    fn progress_restarts_the_timeout_up_to_the_cap() {
        let mut buf = [0u8; 128];
        let mut c =
            AdapterCall::start(Instant::ZERO, opts(100, 300), None, b"{}", &mut buf).unwrap();
        c.handle_frame(Instant::from_millis(60), PROGRESS).unwrap();
        assert_eq!(c.poll_timeout(), Some(Instant::from_millis(160)));
        c.handle_frame(Instant::from_millis(150), PROGRESS).unwrap();
        assert_eq!(c.poll_timeout(), Some(Instant::from_millis(250)));
        // 240 + 100 is past the cap: the deadline is the cap, and the message names it.
        c.handle_frame(Instant::from_millis(240), PROGRESS).unwrap();
        assert_eq!(c.poll_timeout(), Some(Instant::from_millis(300)));
        c.handle_timeout(Instant::from_millis(300)).unwrap();
        assert_eq!(error_of(&c), "Tool t timed out after 300ms");
        // After the end, a progress frame is refused.
        assert_eq!(
            c.handle_frame(Instant::from_millis(301), PROGRESS),
            Err(CallError::TimedOut.into())
        );
    }

    #[test]
    fn without_a_cap_progress_restarts_nothing() {
        let mut buf = [0u8; 128];
        let mut c = AdapterCall::start(Instant::ZERO, opts(100, 0), None, b"{}", &mut buf).unwrap();
        c.handle_frame(Instant::from_millis(90), PROGRESS).unwrap();
        assert_eq!(c.poll_timeout(), Some(Instant::from_millis(100)));
        c.handle_timeout(Instant::from_millis(100)).unwrap();
        assert_eq!(error_of(&c), "Tool t timed out after 100ms");
    }
}
