//! `Wrapper`: tool interception on a model's duplex (SPEC §3 and §5), sans-IO.
//!
//! # Methods by role
//!
//! * **Inputs** — each takes the current time and refuses a clock that goes
//!   backwards: [`handle_response`](Wrapper::handle_response) (model → consumer),
//!   [`handle_request`](Wrapper::handle_request) (consumer → model),
//!   [`handle_adapter_frame`](Wrapper::handle_adapter_frame),
//!   [`handle_adapter_closed`](Wrapper::handle_adapter_closed),
//!   [`complete`](Wrapper::complete), [`handle_timeout`](Wrapper::handle_timeout),
//!   [`cancel`](Wrapper::cancel); and, without time, [`abort`](Wrapper::abort)
//!   and [`clear_trace`](Wrapper::clear_trace).
//! * **Outputs** — [`poll_transmit`](Wrapper::poll_transmit) (frames to write,
//!   and where), [`poll_event`](Wrapper::poll_event) (calls the host must run),
//!   [`poll_timeout`](Wrapper::poll_timeout) (when to call `handle_timeout`).
//! * **State** — [`trace`](Wrapper::trace), [`pending`](Wrapper::pending),
//!   [`stats`](Wrapper::stats), [`hooks_mut`](Wrapper::hooks_mut).
//!
//! # Polling order
//!
//! After every input: drain `poll_transmit` until it returns `Ok(None)`, then
//! `poll_event` until `None`, then re-arm your timer from `poll_timeout`. An
//! input that could produce frames is refused with [`Error::QueueFull`] while
//! the queue lacks room for the most it could produce, so draining first
//! keeps the machine moving. A `TOOL_CALL` is taken only if ending it (by a
//! result, an error or its timeout) fits an empty queue, so no pending call
//! can wedge the wrapper; `handle_timeout` and `cancel` end calls one at a
//! time as room allows (timeouts stay due, `cancel` returns how many are
//! left). Pass-through frames never enter the queue: the host forwards its
//! own bytes when told [`Disposition::Forward`].
//!
//! # Memory
//!
//! The wrapper owns nothing: the host hands in the pending-call [`Slot`]s and
//! one byte arena of [`Config::arena_len`] bytes, carved into per-slot
//! buffers (name, id, args, recorded result), scratch buffers, the trace
//! ring, the held-`END` buffer and the output queue.

use crate::clock::{Clock, Instant};
use crate::encode::{BufferTooSmall, OutFrame, Outcome, CONTINUE_PROMPT, LAST_ERROR_PREFIX};
use crate::error::Error;
use crate::frame::{scanned_string, Frame, FrameError, Kind};
use crate::held::{Held, HELD_HEADER};
use crate::hooks::{CallInfo, CallOutcome, Hooks};
use crate::json::{self, JsonStr, DEFAULT_MAX_DEPTH};
use crate::message::{escape_into, escape_raw_into, escaped_len, escaped_prefix, Message};
use crate::queue::{CallHandle, Queue, Route, Transmit, RECORD_HEADER};
use crate::tool::{ResultWriter, Tool, ToolKind};
use crate::trace::{Trace, ENTRY_HEADER};

pub use crate::message::MALFORMED_TOOL_CALL;

/// Capacities and options of a wrapper (SPEC §3, §5 options; §4 limits).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    /// Timeout of deferred and adapter calls, unless a tool sets its own.
    pub tool_timeout_ms: u32,
    /// Also send the continue prompt to the consumer.
    pub mirror_continue: bool,
    /// Continue prompts allowed (0: no limit).
    pub max_rounds: u32,
    /// JSON depth limit of validated frames (the frame object is level 1) and of results
    /// from the host (the result is level 1).
    pub max_depth: u8,
    /// Validate every frame on both paths, not only the ones the wrapper acts on (SPEC §7.25):
    /// a frame broken after its `type`, or with two `type` members, is then malformed
    /// everywhere. Costs a scan of every pass-through frame.
    pub full_validation: bool,
    /// Bytes of a decoded tool name.
    pub name_cap: usize,
    /// Bytes of a decoded call id.
    pub id_cap: usize,
    /// Bytes of a pending call's args, without white space between tokens (SPEC §7.23).
    pub args_cap: usize,
    /// Bytes of a result (adapter-recorded, completed, or written by a sync tool), without
    /// white space between tokens.
    pub result_cap: usize,
    /// Bytes of an error message; also of the escaped last tool error in the prompt.
    pub message_cap: usize,
    /// Trace entries kept.
    pub trace_entries: usize,
    /// Bytes of the trace ring.
    pub trace_bytes: usize,
    /// Bytes for `END`s held while calls are pending (each costs 4 more).
    pub held_bytes: usize,
}

impl Config {
    /// SPEC defaults, with capacities for a small microcontroller.
    pub const DEFAULT: Config = Config {
        tool_timeout_ms: 30_000,
        mirror_continue: true,
        max_rounds: 0,
        max_depth: DEFAULT_MAX_DEPTH,
        full_validation: false,
        name_cap: 64,
        id_cap: 64,
        args_cap: 512,
        result_cap: 512,
        message_cap: 192,
        trace_entries: 8,
        trace_bytes: 2048,
        held_bytes: 256,
    };

    // Sizes use saturating arithmetic: a configuration whose arena does not fit in `usize`
    // comes out as `usize::MAX`, which `Wrapper::new` refuses as `BadConfig`.

    const fn per_slot(&self) -> usize {
        add(
            add(self.name_cap, self.id_cap),
            add(self.args_cap, self.result_cap),
        )
    }

    /// Where a sync tool writes: its result, or its error message.
    const fn sync_area(&self) -> usize {
        max(self.result_cap, self.message_cap)
    }

    const fn scratch_len(&self) -> usize {
        add(
            add(self.name_cap, self.id_cap),
            add(mul(2, self.message_cap), self.sync_area()),
        )
    }

    /// Bytes of the output queue: room for ending `pending` calls (more may need more
    /// rounds of draining when names and ids need heavy escaping) and ending the round.
    pub const fn queue_len(&self, pending: usize) -> usize {
        let ids = add(self.name_cap, self.id_cap);
        let per_call = add(
            add(2 * RECORD_HEADER + 2 * 64, mul(2, ids)),
            add(self.outcome_bound(), self.message_cap),
        );
        let tool_call = add(RECORD_HEADER + 64, add(ids, self.args_cap));
        let calls = if pending > 0 { pending } else { 1 };
        add(
            add(mul(calls, per_call), tool_call),
            add(self.round_end_len(), ENTRY_HEADER),
        )
    }

    /// Bytes of a call's outcome in its `TOOL_RESULT`: a result, or an error message cut so
    /// that, escaped and quoted, it fits `message_cap + 2`.
    const fn outcome_bound(&self) -> usize {
        max(self.result_cap, add(self.message_cap, 2))
    }

    /// Most bytes the end of a round can queue: two prompts, the round-limit `ERROR`, the held `END`s.
    const fn round_end_len(&self) -> usize {
        let prompt = add(RECORD_HEADER + PROMPT_OVERHEAD, self.message_cap);
        let held = add(
            self.held_bytes,
            mul(
                self.held_bytes / (HELD_HEADER + MIN_END_LEN),
                RECORD_HEADER - HELD_HEADER,
            ),
        );
        add(add(mul(2, prompt), RECORD_HEADER + ROUND_LIMIT_LEN), held)
    }

    /// Bytes of the arena [`Wrapper::new`] needs with `pending` slots.
    pub const fn arena_len(&self, pending: usize) -> usize {
        add(
            add(mul(pending, self.per_slot()), self.scratch_len()),
            add(
                add(self.trace_bytes, self.held_bytes),
                self.queue_len(pending),
            ),
        )
    }

    fn check(&self, pending: usize) -> Result<(), StorageError> {
        let ids_fit = self.name_cap <= u16::MAX as usize && self.id_cap <= u16::MAX as usize;
        if !ids_fit
            || self.message_cap < self.name_cap.max(self.id_cap) + 64
            || self.max_depth < 3
            || self.arena_len(pending) == usize::MAX
        {
            return Err(StorageError::BadConfig);
        }
        Ok(())
    }
}

const fn add(a: usize, b: usize) -> usize {
    a.saturating_add(b)
}

const fn mul(a: usize, b: usize) -> usize {
    a.saturating_mul(b)
}

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

/// Length bound of an error message as a JSON string in a `TOOL_RESULT`.
fn message_len(msg: &Message<'_>) -> usize {
    struct Esc(usize);
    impl crate::encode::Sink for Esc {
        fn put(&mut self, bytes: &[u8]) {
            self.0 += escaped_len(bytes);
        }
    }
    let mut c = Esc(0);
    msg.write_to(&mut c);
    // The quotes; `completion_need` counts `"result"`, one byte more than `"error"`, so this is a bound.
    c.0 + 2
}

/// Bounds, quotes included, the escaped length of a message the wrapper composes around a
/// tool name (`Tool <name> timed out after <ms>ms`, `… returned invalid JSON`, `… result
/// exceeds <N> bytes`): at most 49 bytes besides the escaped name.
fn own_message_bound(name: Option<&[u8]>) -> usize {
    name.map_or(0, escaped_len) + 64
}

/// Length of the prompt frame without its last tool error.
const PROMPT_OVERHEAD: usize = 26 + CONTINUE_PROMPT.len() + LAST_ERROR_PREFIX.len() + 2;
/// The shortest `END` frame: `{"type":"END"}`.
const MIN_END_LEN: usize = 14;
/// Length bound of the round-limit `ERROR` frame.
const ROUND_LIMIT_LEN: usize = 80;

/// The storage handed to [`Wrapper::new`] does not fit its [`Config`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum StorageError {
    /// The arena is smaller than [`Config::arena_len`].
    ArenaTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        given: usize,
    },
    /// Too many slots for a `u16` index.
    TooManySlots,
    /// More than 65535 registered tools.
    TooManyTools,
    /// A registered tool's name is longer than `name_cap`, so no call could ever reach it.
    ToolNameTooLong {
        /// Its index in the registration slice.
        index: usize,
    },
    /// `message_cap` must be at least `max(name_cap, id_cap) + 64`, name and id caps at most
    /// 65535, depth at least 3, and the arena's size must fit in `usize`.
    BadConfig,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum SlotState {
    #[default]
    Free,
    Deferred,
    Adapter,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Ended {
    #[default]
    Never,
    Finished,
    TimedOut,
    Cancelled,
}

/// What an adapter call kept of its adapter's first `TOOL_RESULT`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Recorded {
    /// No `TOOL_RESULT` yet.
    #[default]
    Nothing,
    /// A result of this many bytes, compact, in the slot's result buffer.
    Result(u32),
    /// A result over `result_cap`: the call fails when it settles (SPEC §7.23).
    TooLarge,
}

/// One pending-call slot. Opaque: hand the wrapper an array of [`Slot::EMPTY`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Slot {
    state: SlotState,
    call: u32,
    tool: u16,
    name_len: u16,
    id_len: Option<u16>,
    args_len: u32,
    recorded: Recorded,
    timeout_ms: u32,
    deadline: Instant,
    announced: bool,
    ended: Ended,
}

impl Slot {
    /// A free slot.
    pub const EMPTY: Slot = Slot {
        state: SlotState::Free,
        call: 0,
        tool: 0,
        name_len: 0,
        id_len: None,
        args_len: 0,
        recorded: Recorded::Nothing,
        timeout_ms: 0,
        deadline: Instant::ZERO,
        announced: false,
        ended: Ended::Never,
    };
}

/// What the host must do with a frame it passed in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Disposition {
    /// Forward the very bytes you passed in, unchanged.
    Forward,
    /// A `TOOL_CALL` was intercepted; `handle` is set while it is pending.
    Intercepted {
        /// The call's number.
        call: u32,
        /// Its handle, for deferred and adapter calls that took a slot.
        handle: Option<CallHandle>,
    },
    /// An `END` was held (a copy is kept; it is released through `poll_transmit`).
    Held,
}

/// How [`Wrapper::complete`] completed a call (it always did; see SPEC §7.23).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Completed {
    /// With the result or error given.
    AsGiven,
    /// The result was longer than `result_cap` without its white space: the call failed with
    /// `Tool <name> result exceeds <cap> bytes`.
    ResultTooLarge {
        /// The result's compact length.
        len: usize,
        /// `result_cap`.
        cap: usize,
    },
    /// The result nested deeper than `max_depth` (the result is level 1): the call failed with
    /// `Tool <name> result is nested deeper than <max_depth> levels`.
    ResultTooDeep {
        /// `max_depth`.
        max_depth: u8,
    },
}

/// How a pending call runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PendingKind {
    /// The host completes it with [`Wrapper::complete`].
    Deferred,
    /// The host connects a tool adapter; its frames go to [`Wrapper::handle_adapter_frame`].
    Adapter,
}

/// Something the host must act on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Event<'w> {
    /// A deferred or adapter call started.
    CallStarted {
        /// Its handle.
        handle: CallHandle,
        /// How it runs.
        kind: PendingKind,
        /// Index of its tool in the registration slice.
        tool: usize,
        /// The tool name.
        name: &'w str,
        /// The call id, when it had one.
        id: Option<&'w str>,
        /// Raw JSON args.
        args: &'w [u8],
    },
}

/// Counters for what was cut or refused rather than lost silently.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Stats {
    /// Continue prompts written.
    pub rounds: u32,
    /// Error messages from sync tools and tool adapters cut to fit `message_cap` once escaped.
    pub messages_truncated: u32,
    /// Last tool errors cut to `message_cap` in the prompt.
    pub last_error_truncated: u32,
}

/// Where a call's name, id and args live while it completes.
#[derive(Copy, Clone)]
struct CallRef<'c> {
    index: u32,
    /// Kept as text so the hooks' `CallInfo` needs no UTF-8 check per hook.
    name_str: Option<&'c str>,
    id_str: Option<&'c str>,
    args: &'c [u8],
}

impl<'c> CallRef<'c> {
    fn info(&self, seq: u64) -> CallInfo<'c> {
        CallInfo {
            seq,
            index: self.index,
            name: self.name_str,
            id: self.id_str,
            args: self.args,
        }
    }

    fn name(&self) -> Option<&'c [u8]> {
        self.name_str.map(str::as_bytes)
    }

    fn id(&self) -> Option<&'c [u8]> {
        self.id_str.map(str::as_bytes)
    }
}

/// Text stored by the wrapper is UTF-8 by construction; a sync tool's message may not be,
/// so keep its longest valid prefix.
fn text(b: &[u8]) -> &str {
    match core::str::from_utf8(b) {
        Ok(s) => s,
        Err(e) => core::str::from_utf8(&b[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// The scratch buffer for a message, after the decoded name and id.
fn message_buf<'s>(cfg: &Config, scratch: &'s mut [u8]) -> &'s mut [u8] {
    &mut scratch[cfg.name_cap + cfg.id_cap..][..cfg.message_cap]
}

/// Composes one of the wrapper's own messages in scratch (they fit: `Config::check` sizes
/// `message_cap` for them, and `own_message_bound` keeps the queue's room for them).
fn compose<'s>(cfg: &Config, scratch: &'s mut [u8], msg: &Message<'_>) -> &'s str {
    let buf = message_buf(cfg, scratch);
    let n = msg.compose(buf).map_or(0, |m| m.len());
    text(&buf[..n])
}

/// The parts that record and send a completion, apart from call storage.
struct Out<'a, H> {
    hooks: H,
    queue: Queue<'a>,
    trace: Trace<'a>,
    held: Held<'a>,
    last_error: &'a mut [u8],
    last_error_len: Option<usize>,
    pending: usize,
    aborted: bool,
    stats: Stats,
}

impl<H: Hooks> Out<'_, H> {
    /// Queue bytes a completion of a call with these parts may need, round end included.
    fn completion_need(
        &self,
        cfg: &Config,
        id: Option<&[u8]>,
        name: Option<&[u8]>,
        outcome_len: usize,
    ) -> usize {
        let frame = OutFrame::ToolResult {
            id,
            name,
            outcome: Outcome::Result(b""),
        }
        .encoded_len();
        RECORD_HEADER + frame + outcome_len + self.round_end_need(cfg)
    }

    fn round_end_need(&self, cfg: &Config) -> usize {
        let held = self.held.used() + self.held.count() * (RECORD_HEADER - HELD_HEADER);
        2 * (RECORD_HEADER + PROMPT_OVERHEAD + cfg.message_cap)
            + RECORD_HEADER
            + ROUND_LIMIT_LEN
            + held
    }

    fn ensure_room(&self, needed: usize) -> Result<(), Error> {
        let (free, cap) = (self.queue.free(), self.queue.capacity());
        if needed > cap {
            return Err(Error::OutputTooLarge { needed, cap });
        }
        if needed > free {
            return Err(Error::QueueFull { needed, free });
        }
        Ok(())
    }

    /// SPEC §3.2: trace, last error, TOOL_RESULT, hook, pending, prompt, released ENDs.
    fn complete(&mut self, cfg: &Config, call: CallRef<'_>, outcome: CallOutcome<'_>) {
        let result_err = match outcome {
            CallOutcome::Error(_) => None,
            CallOutcome::Result(r) => result_error(r, cfg.max_depth),
        };
        self.complete_checked(cfg, call, outcome, result_err);
    }

    /// [`complete`](Self::complete) with `result_error` of a `Result` outcome already known.
    fn complete_checked(
        &mut self,
        cfg: &Config,
        call: CallRef<'_>,
        outcome: CallOutcome<'_>,
        result_err: Option<ResultError<'_>>,
    ) {
        self.trace.push(call.name(), call.args, outcome);
        match outcome {
            CallOutcome::Error(e) => self.set_last_error(e.as_bytes()),
            CallOutcome::Result(_) => match result_err {
                Some(ResultError::Text(s)) => self.set_last_error_str(s),
                Some(ResultError::Raw(raw)) => {
                    let (n, cut) = escape_raw_into(raw, self.last_error);
                    self.note_last_error(n, cut);
                }
                Some(ResultError::SuccessFalse) => self.set_last_error(SUCCESS_FALSE),
                None => {}
            },
        }
        let frame = OutFrame::ToolResult {
            id: call.id(),
            name: call.name(),
            outcome: match outcome {
                CallOutcome::Result(r) => Outcome::Result(r),
                CallOutcome::Error(e) => Outcome::Error(e.as_bytes()),
            },
        };
        let pushed = self.queue.push(Route::Model, &frame);
        debug_assert!(pushed.is_ok(), "queue bound too small for a TOOL_RESULT");
        self.hooks
            .on_tool_result(&call.info(self.queue.pushed()), outcome);
        self.pending = self.pending.saturating_sub(1);
        if self.pending == 0 {
            self.end_round(cfg);
        }
    }

    fn end_round(&mut self, cfg: &Config) {
        if !self.aborted {
            if cfg.max_rounds > 0 && self.stats.rounds >= cfg.max_rounds {
                let frame = OutFrame::RoundLimit {
                    max_rounds: cfg.max_rounds,
                };
                let pushed = self.queue.push(Route::Consumer, &frame);
                debug_assert!(pushed.is_ok());
                self.aborted = true;
            } else {
                self.stats.rounds = self.stats.rounds.saturating_add(1);
                let escaped = self.last_error_len.map(|n| &self.last_error[..n]);
                let mut prompt = [
                    &b"{\"type\":\"TEXT\",\"content\":\""[..],
                    CONTINUE_PROMPT,
                    b"",
                    b"",
                    b"\"}",
                ];
                if let Some(e) = escaped {
                    prompt[2] = LAST_ERROR_PREFIX;
                    prompt[3] = e;
                }
                let pushed = self.queue.push_parts(Route::Model, &prompt);
                debug_assert!(pushed.is_ok());
                if cfg.mirror_continue {
                    let pushed = self.queue.push_parts(Route::Consumer, &prompt);
                    debug_assert!(pushed.is_ok());
                }
            }
        }
        trace!(
            "round ended: {} prompts, {} ENDs released",
            self.stats.rounds,
            self.held.count()
        );
        self.last_error_len = None;
        for end in self.held.iter() {
            let pushed = self.queue.push_raw(Route::Consumer, end);
            debug_assert!(pushed.is_ok());
        }
        self.held.clear();
    }

    fn set_last_error(&mut self, text: &[u8]) {
        let (n, cut) = escape_into(text, self.last_error);
        self.note_last_error(n, cut);
    }

    fn note_last_error(&mut self, len: usize, cut: bool) {
        self.last_error_len = Some(len);
        if cut {
            self.stats.last_error_truncated = self.stats.last_error_truncated.saturating_add(1);
        }
    }

    fn set_last_error_str(&mut self, s: JsonStr<'_>) {
        // Escape one whole character at a time so a cut never splits one.
        let mut decoded = s.decoded();
        let (mut len, mut cut) = (0, false);
        while let Some(lead) = decoded.next() {
            let mut ch = [lead, 0, 0, 0];
            let n = match lead {
                0xF0..=0xFF => 4,
                0xE0..=0xEF => 3,
                0xC0..=0xDF => 2,
                _ => 1,
            };
            for b in ch.iter_mut().take(n).skip(1) {
                *b = decoded.next().unwrap_or(0);
            }
            let (w, c) = escape_into(&ch[..n], &mut self.last_error[len..]);
            len += w;
            if c {
                cut = true;
                break;
            }
        }
        self.note_last_error(len, cut);
    }
}

/// The last-tool-error source in a successful result (SPEC §3.2.2, §7.7).
enum ResultError<'r> {
    /// A string `error` member: its decoded text.
    Text(JsonStr<'r>),
    /// Any other non-null `error` member: its compact JSON text.
    Raw(&'r [u8]),
    /// `"success": false` without an `error`.
    SuccessFalse,
}

/// The text the last tool error gets for `"success": false` (SPEC §7.7).
const SUCCESS_FALSE: &[u8] = b"\"success\": false";

fn result_error(result: &[u8], max_depth: u8) -> Option<ResultError<'_>> {
    if !json::is_object(result) {
        return None;
    }
    let m = error_members(result, max_depth).ok()?;
    error_of(m.error, m.success)
}

/// What a result from the host (a sync tool's output, or `complete`) turned out to be.
enum ResultCheck<'r> {
    /// Valid and carried: a bound on its compact length, and its last-error source.
    Fits {
        bound: usize,
        error: Option<ResultError<'r>>,
    },
    /// Valid, but its compact form is longer than `result_cap` (SPEC §7.23).
    TooLarge(usize),
    /// Valid, but nested deeper than `max_depth`, the result being level 1 (SPEC §7.23).
    TooDeep,
    /// Not one JSON value.
    Invalid(json::JsonError),
}

/// Validates `result` (white space around it allowed), finds its `error` / `success` members
/// in the same pass, and measures it against the configured depth and size.
fn check_result<'r>(result: &'r [u8], cfg: &Config) -> ResultCheck<'r> {
    let checked = if json::is_object(&result[json::skip_ws(result, 0)..]) {
        error_members(result, cfg.max_depth).and_then(|m| {
            let after = json::skip_ws(result, m.end);
            match after == result.len() {
                true => Ok(error_of(m.error, m.success)),
                false => Err(json::JsonError {
                    kind: json::JsonErrorKind::TrailingData,
                    at: after,
                }),
            }
        })
    } else {
        json::validate(result, cfg.max_depth).map(|()| None)
    };
    match checked {
        Ok(error) => {
            // Only a value longer than the cap as written needs measuring without white space.
            let bound = match result.len() > cfg.result_cap {
                true => json::compact_len(result),
                false => result.len(),
            };
            match bound > cfg.result_cap {
                true => ResultCheck::TooLarge(bound),
                false => ResultCheck::Fits { bound, error },
            }
        }
        // Too deep for the limit: still refuse it as invalid when it is not JSON at all.
        Err(e) if e.kind == json::JsonErrorKind::TooDeep => match json::validate(result, u8::MAX) {
            Err(e) if e.kind != json::JsonErrorKind::TooDeep => ResultCheck::Invalid(e),
            _ => ResultCheck::TooDeep,
        },
        Err(e) => ResultCheck::Invalid(e),
    }
}

/// The last `error` and `success` members of an object result, and where the object ends.
struct ErrorMembers<'r> {
    error: Option<&'r [u8]>,
    success: Option<&'r [u8]>,
    end: usize,
}

fn error_members(result: &[u8], max_depth: u8) -> Result<ErrorMembers<'_>, json::JsonError> {
    let (mut error, mut success) = (None, None);
    let mut members = json::Members::new(result, 0, max_depth)?;
    for m in members.by_ref() {
        let m = m?;
        if m.key.eq_text(b"error") {
            error = Some(m.value);
        } else if m.key.eq_text(b"success") {
            success = Some(m.value);
        }
    }
    let end = members.end().unwrap_or(result.len());
    Ok(ErrorMembers {
        error,
        success,
        end,
    })
}

fn error_of<'r>(error: Option<&'r [u8]>, success: Option<&'r [u8]>) -> Option<ResultError<'r>> {
    match error {
        Some(b"null") | None => {}
        Some(raw) => {
            return Some(scanned_string(raw).map_or(ResultError::Raw(raw), ResultError::Text))
        }
    }
    match success {
        Some(b"false") => Some(ResultError::SuccessFalse),
        _ => None,
    }
}

/// The tool-call router between a model and its consumer.
pub struct Wrapper<'a, H: Hooks = crate::hooks::NoHooks> {
    cfg: Config,
    tools: &'a [Tool<'a>],
    /// The registrations are strictly sorted by name, so lookups can bisect.
    tools_sorted: bool,
    slots: &'a mut [Slot],
    slot_bytes: &'a mut [u8],
    scratch: &'a mut [u8],
    out: Out<'a, H>,
    clock: Clock,
    next_call: u32,
}

impl<H: Hooks> core::fmt::Debug for Wrapper<'_, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Wrapper")
            .field("pending", &self.out.pending)
            .field("queued", &self.out.queue.len())
            .field("next_call", &self.next_call)
            .finish()
    }
}

#[cfg(feature = "defmt")]
impl<H: Hooks> defmt::Format for Wrapper<'_, H> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Wrapper {{ pending: {}, queued: {}, next_call: {}, now: {} }}",
            self.out.pending,
            self.out.queue.len(),
            self.next_call,
            self.clock.now()
        )
    }
}

/// Offsets of one slot's buffers inside the slot arena.
#[derive(Copy, Clone)]
struct SlotLayout {
    name: usize,
    id: usize,
    args: usize,
    result: usize,
}

impl Config {
    fn layout(&self, slot: usize) -> SlotLayout {
        let name = slot * self.per_slot();
        let id = name + self.name_cap;
        let args = id + self.id_cap;
        SlotLayout {
            name,
            id,
            args,
            result: args + self.args_cap,
        }
    }
}

/// The name, id and args of the call in `slot`.
fn slot_call<'c>(cfg: &Config, slots: &[Slot], slot_bytes: &'c [u8], slot: usize) -> CallRef<'c> {
    let s = &slots[slot];
    let l = cfg.layout(slot);
    CallRef {
        index: s.call,
        name_str: Some(text(&slot_bytes[l.name..l.name + s.name_len as usize])),
        id_str: s.id_len.map(|n| text(&slot_bytes[l.id..l.id + n as usize])),
        args: &slot_bytes[l.args..l.args + s.args_len as usize],
    }
}

/// [`finish_slot`] once the queue has room for it (`outcome_len`: the outcome's bytes in the
/// `TOOL_RESULT`); otherwise nothing changes.
fn finish_slot_checked<H: Hooks>(
    cfg: &Config,
    slots: &mut [Slot],
    slot_bytes: &[u8],
    out: &mut Out<'_, H>,
    slot: usize,
    outcome: CallOutcome<'_>,
    outcome_len: usize,
) -> Result<(), Error> {
    let c = slot_call(cfg, slots, slot_bytes, slot);
    out.ensure_room(out.completion_need(cfg, c.id(), c.name(), outcome_len))?;
    finish_slot(cfg, slots, slot_bytes, out, slot, outcome, Ended::Finished);
    Ok(())
}

/// The registration for a decoded tool name: a binary search when `tools` is sorted by name
/// (no duplicates), else a scan in which the first registration of a name wins.
fn find_tool(tools: &[Tool<'_>], sorted: bool, name: &[u8]) -> Option<usize> {
    if sorted {
        tools.binary_search_by(|t| t.name.as_bytes().cmp(name)).ok()
    } else {
        tools.iter().position(|t| t.name.as_bytes() == name)
    }
}

/// Frees `slot` and runs the completion steps with the call's stored name, id and args.
fn finish_slot<H: Hooks>(
    cfg: &Config,
    slots: &mut [Slot],
    slot_bytes: &[u8],
    out: &mut Out<'_, H>,
    slot: usize,
    outcome: CallOutcome<'_>,
    ended: Ended,
) {
    slots[slot].state = SlotState::Free;
    slots[slot].ended = ended;
    out.complete(cfg, slot_call(cfg, slots, slot_bytes, slot), outcome);
}

impl<'a, H: Hooks> Wrapper<'a, H> {
    /// A wrapper over `tools`, with `slots.len()` pending-call slots and an arena of [`Config::arena_len`] bytes.
    ///
    /// Tools sorted by name (byte order, no duplicate names) are found by binary search;
    /// any other order works too, with a linear scan in which the first registration wins.
    pub fn new(
        cfg: Config,
        tools: &'a [Tool<'a>],
        hooks: H,
        slots: &'a mut [Slot],
        arena: &'a mut [u8],
    ) -> Result<Self, StorageError> {
        if slots.len() > u16::MAX as usize {
            return Err(StorageError::TooManySlots);
        }
        if tools.len() > u16::MAX as usize {
            return Err(StorageError::TooManyTools);
        }
        cfg.check(slots.len())?;
        if let Some(index) = tools.iter().position(|t| t.name.len() > cfg.name_cap) {
            return Err(StorageError::ToolNameTooLong { index });
        }
        let needed = cfg.arena_len(slots.len());
        if arena.len() < needed {
            return Err(StorageError::ArenaTooSmall {
                needed,
                given: arena.len(),
            });
        }
        for s in slots.iter_mut() {
            *s = Slot::EMPTY;
        }
        let (slot_bytes, rest) = arena.split_at_mut(slots.len() * cfg.per_slot());
        let (scratch, rest) =
            rest.split_at_mut(cfg.name_cap + cfg.id_cap + cfg.message_cap + cfg.sync_area());
        let (last_error, rest) = rest.split_at_mut(cfg.message_cap);
        let (trace, rest) = rest.split_at_mut(cfg.trace_bytes);
        let (held, queue) = rest.split_at_mut(cfg.held_bytes);
        Ok(Self {
            cfg,
            tools,
            tools_sorted: tools.windows(2).all(|w| w[0].name < w[1].name),
            slots,
            slot_bytes,
            scratch,
            out: Out {
                hooks,
                queue: Queue::new(queue),
                trace: Trace::new(trace, cfg.trace_entries),
                held: Held::new(held),
                last_error,
                last_error_len: None,
                pending: 0,
                aborted: false,
                stats: Stats::default(),
            },
            clock: Clock::default(),
            next_call: 0,
        })
    }

    // ----- inputs -------------------------------------------------------

    /// A frame from the model (response path): intercepts `TOOL_CALL`, holds `END` while calls are pending.
    pub fn handle_response(&mut self, now: Instant, bytes: &[u8]) -> Result<Disposition, Error> {
        self.clock.check(now)?;
        let frame = self.parse(bytes)?;
        let disposition = match frame.kind() {
            Kind::ToolCall => self.intercept(now, frame)?,
            Kind::End if self.out.pending > 0 => {
                let needed = Held::needed(bytes.len());
                let free = self.out.held.free();
                if !self.out.held.push(bytes) {
                    return Err(Error::HeldFull { needed, free });
                }
                Disposition::Held
            }
            _ => Disposition::Forward,
        };
        self.clock.advance(now);
        Ok(disposition)
    }

    /// A frame from the consumer (request path): always forwarded unless malformed.
    pub fn handle_request(&mut self, now: Instant, bytes: &[u8]) -> Result<Disposition, Error> {
        self.clock.check(now)?;
        self.parse(bytes)?;
        self.clock.advance(now);
        Ok(Disposition::Forward)
    }

    /// Reads a frame from either path: as far as its `type`, or whole with `full_validation`.
    fn parse<'f>(&self, bytes: &'f [u8]) -> Result<Frame<'f>, FrameError> {
        match self.cfg.full_validation {
            true => Frame::parse_validated(bytes, self.cfg.max_depth),
            false => Frame::parse(bytes),
        }
    }

    fn intercept(&mut self, now: Instant, frame: Frame<'_>) -> Result<Disposition, Error> {
        let frame = match frame.is_validated() {
            true => frame,
            false => Frame::parse_validated(frame.bytes(), self.cfg.max_depth)?,
        };
        let call = frame.tool_call()?;
        // Decode name and id into scratch (they are short; escapes are rare but legal).
        // The buffers are exactly the caps, so a decode fails iff the text is too long,
        // and the failure carries the decoded length for the error.
        let (names, rest) = self
            .scratch
            .split_at_mut(self.cfg.name_cap + self.cfg.id_cap);
        let (name_buf, id_buf) = names.split_at_mut(self.cfg.name_cap);
        let name_str: Option<&str> = match call.name {
            Some(n) => Some(n.decode_into(name_buf).map_err(|e| Error::NameTooLong {
                len: e.needed,
                cap: self.cfg.name_cap,
            })?),
            None => None,
        };
        let id_str: Option<&str> = match call.id {
            Some(i) => Some(i.decode_into(id_buf).map_err(|e| Error::IdTooLong {
                len: e.needed,
                cap: self.cfg.id_cap,
            })?),
            None => None,
        };
        let (name, id) = (name_str.map(str::as_bytes), id_str.map(str::as_bytes));
        let (msg_buf, result_buf) = rest.split_at_mut(self.cfg.message_cap);

        // SPEC §7.4 and §7.23: malformed → unknown name → duplicate id → args too large for a
        // pending call → free slot → run.
        enum Plan {
            Fail(usize),
            Sync(usize),
            Occupy(usize, usize),
        }
        // Compare the decoded name once per tool (a length check first), not `eq_text`,
        // which re-scans the call's name for escapes for every registered tool.
        let tool = name.and_then(|n| find_tool(self.tools, self.tools_sorted, n));
        let free_slot = self.slots.iter().position(|s| s.state == SlotState::Free);
        let duplicate = call.id.is_some_and(|i| {
            self.slots.iter().enumerate().any(|(k, s)| {
                s.state != SlotState::Free
                    && s.id_len.is_some_and(|n| {
                        let at = self.cfg.layout(k).id;
                        i.eq_text(&self.slot_bytes[at..at + n as usize])
                    })
            })
        });
        // Args are held without white space; only args longer than the cap as written need measuring.
        let args_fit = call.args.len() <= self.cfg.args_cap
            || json::compact_len(call.args) <= self.cfg.args_cap;
        let failure = match (name, tool) {
            (None, _) => Some(Message::Malformed),
            (Some(n), None) => Some(Message::NotFound(n)),
            (Some(_), Some(_)) if duplicate => Some(Message::Duplicate(id.unwrap_or(b""))),
            (Some(n), Some(t)) => match self.tools[t].kind {
                ToolKind::Sync(_) => None,
                _ if !args_fit => Some(Message::ArgsTooLarge(n, self.cfg.args_cap)),
                _ if free_slot.is_none() => Some(Message::TooMany(self.slots.len())),
                _ => None,
            },
        };
        let plan = if let Some(msg) = failure {
            let need = self
                .out
                .completion_need(&self.cfg, id, name, message_len(&msg));
            self.out.ensure_room(need)?;
            let len = msg.len();
            let composed = msg.compose(msg_buf).ok_or(Error::MessageTooLong {
                len,
                cap: self.cfg.message_cap,
            })?;
            Plan::Fail(composed.len())
        } else {
            let t = tool.unwrap_or(0);
            match self.tools[t].kind {
                ToolKind::Sync(_) => {
                    // A result, a cut error message, or one of the adapter's own failure texts.
                    let bound = self.cfg.outcome_bound().max(own_message_bound(name));
                    self.out
                        .ensure_room(self.out.completion_need(&self.cfg, id, name, bound))?;
                    Plan::Sync(t)
                }
                ToolKind::Deferred | ToolKind::Adapter => {
                    let n = name.unwrap_or(b"");
                    let adapter = matches!(self.tools[t].kind, ToolKind::Adapter);
                    // The call must be able to end in a drained queue, whatever ends it: a result,
                    // an error, or its timeout (with a `CANCEL` first for an adapter), so a
                    // pending call can never wedge the wrapper.
                    let outcome = self.cfg.outcome_bound().max(own_message_bound(name));
                    let mut worst = self.out.completion_need(&self.cfg, id, name, outcome)
                        - self.out.round_end_need(&self.cfg)
                        + self.cfg.round_end_len();
                    if adapter {
                        let cancel = OutFrame::Cancel {
                            id,
                            name: n,
                            reason: b"timeout",
                        };
                        worst += RECORD_HEADER + cancel.encoded_len();
                    }
                    let cap = self.out.queue.capacity();
                    if worst > cap {
                        return Err(Error::OutputTooLarge { needed: worst, cap });
                    }
                    if adapter {
                        let frame = OutFrame::ToolCall {
                            id,
                            name: n,
                            args: call.args,
                        };
                        self.out.ensure_room(RECORD_HEADER + frame.encoded_len())?;
                    }
                    Plan::Occupy(t, free_slot.unwrap_or(0))
                }
            }
        };

        // From here on nothing can fail: the state changes.
        let index = self.next_call;
        self.next_call = self.next_call.wrapping_add(1);
        let cref = CallRef {
            index,
            name_str,
            id_str,
            args: call.args,
        };
        self.out
            .hooks
            .on_tool_call(&cref.info(self.out.queue.pushed()));
        self.out.pending += 1;
        let handle = match plan {
            Plan::Fail(n) => {
                let msg = text(&msg_buf[..n]);
                self.out.complete(&self.cfg, cref, CallOutcome::Error(msg));
                None
            }
            Plan::Sync(t) => {
                let mut w = ResultWriter::new(&mut result_buf[..self.cfg.sync_area()]);
                let ran = match self.tools[t].kind {
                    ToolKind::Sync(f) => f.call(call.args, &mut w),
                    _ => Ok(()),
                };
                let overflow = w.overflowed();
                let compacted = w.was_compacted();
                let written = w.written().len();
                let name = name.unwrap_or(b"");
                // Output that cannot be carried fails the call rather than corrupt the model's stream.
                let failure = match ran {
                    Ok(()) if overflow => Message::ResultTooLarge(name, self.cfg.result_cap),
                    Ok(()) => match check_result(&result_buf[..written], &self.cfg) {
                        ResultCheck::Fits { error, .. } => {
                            let outcome = CallOutcome::Result(skip_ws_trim(&result_buf[..written]));
                            self.out.complete_checked(&self.cfg, cref, outcome, error);
                            return Ok(Disposition::Intercepted {
                                call: index,
                                handle: None,
                            });
                        }
                        ResultCheck::TooLarge(_) => {
                            Message::ResultTooLarge(name, self.cfg.result_cap)
                        }
                        ResultCheck::TooDeep => Message::ResultTooDeep(name, self.cfg.max_depth),
                        ResultCheck::Invalid(_) => Message::InvalidJson(name),
                    },
                    Err(_) => {
                        let n = escaped_prefix(&result_buf[..written], self.cfg.message_cap);
                        // Cut to fit, or at the first byte that is not UTF-8: flagged either way.
                        let message = text(&result_buf[..n]);
                        if message.len() < written || overflow || compacted {
                            self.out.stats.messages_truncated =
                                self.out.stats.messages_truncated.saturating_add(1);
                        }
                        let outcome = CallOutcome::Error(message);
                        self.out.complete(&self.cfg, cref, outcome);
                        return Ok(Disposition::Intercepted {
                            call: index,
                            handle: None,
                        });
                    }
                };
                let n = failure.compose(msg_buf).map_or(0, |m| m.len());
                let outcome = CallOutcome::Error(text(&msg_buf[..n]));
                self.out.complete(&self.cfg, cref, outcome);
                None
            }
            Plan::Occupy(t, slot) => {
                let tool = &self.tools[t];
                let kind = if matches!(tool.kind, ToolKind::Adapter) {
                    SlotState::Adapter
                } else {
                    SlotState::Deferred
                };
                let timeout_ms = tool.timeout_ms.unwrap_or(self.cfg.tool_timeout_ms);
                let l = self.cfg.layout(slot);
                let name = name.unwrap_or(b"");
                self.slot_bytes[l.name..l.name + name.len()].copy_from_slice(name);
                if let Some(id) = id {
                    self.slot_bytes[l.id..l.id + id.len()].copy_from_slice(id);
                }
                let args_len =
                    json::compact_into(call.args, &mut self.slot_bytes[l.args..l.result]);
                self.slots[slot] = Slot {
                    state: kind,
                    call: index,
                    tool: t as u16,
                    name_len: name.len() as u16,
                    id_len: id.map(|i| i.len() as u16),
                    args_len: args_len as u32,
                    recorded: Recorded::Nothing,
                    timeout_ms,
                    deadline: now.saturating_add_millis(timeout_ms as u64),
                    announced: false,
                    ended: Ended::Never,
                };
                let handle = CallHandle {
                    slot: slot as u16,
                    call: index,
                };
                if kind == SlotState::Adapter {
                    let frame = OutFrame::ToolCall {
                        id,
                        name,
                        args: &self.slot_bytes[l.args..l.args + args_len],
                    };
                    let pushed = self.out.queue.push(Route::Adapter(handle), &frame);
                    debug_assert!(pushed.is_ok());
                }
                Some(handle)
            }
        };
        Ok(Disposition::Intercepted {
            call: index,
            handle,
        })
    }

    /// Finds the slot of a call that is waiting, or says why it is not.
    fn waiting_slot(&self, now: Instant, handle: CallHandle) -> Result<usize, Error> {
        let slot = handle.slot as usize;
        let Some(s) = self.slots.get(slot) else {
            return Err(Error::UnknownCall);
        };
        if s.call == handle.call {
            return match (s.state, s.ended) {
                (SlotState::Free, Ended::TimedOut) => Err(Error::CallTimedOut),
                (SlotState::Free, Ended::Cancelled) => Err(Error::CallCancelled),
                (SlotState::Free, Ended::Finished) => Err(Error::CallFinished),
                (SlotState::Free, Ended::Never) => Err(Error::UnknownCall),
                _ if now >= s.deadline => Err(Error::CallTimedOut),
                _ => Ok(slot),
            };
        }
        if handle.call < self.next_call {
            Err(Error::StaleCall)
        } else {
            Err(Error::UnknownCall)
        }
    }

    /// Completes a deferred call with a raw JSON result or an error message.
    ///
    /// A result that is not JSON is refused ([`Error::InvalidResult`]), changing nothing. A
    /// valid result the wrapper cannot carry — longer than `result_cap` once its white space
    /// is dropped, or nested deeper than `max_depth` — completes the call with the error the
    /// model is told (SPEC §7.23), and the return value says so.
    pub fn complete(
        &mut self,
        now: Instant,
        handle: CallHandle,
        outcome: Result<&[u8], &str>,
    ) -> Result<Completed, Error> {
        self.clock.check(now)?;
        let slot = self.waiting_slot(now, handle)?;
        if self.slots[slot].state != SlotState::Deferred {
            return Err(Error::WrongKind);
        }
        let c = slot_call(&self.cfg, self.slots, self.slot_bytes, slot);
        let name = c.name().unwrap_or(b"");
        let (failure, completed) = match outcome {
            Ok(raw) => match check_result(raw, &self.cfg) {
                ResultCheck::Invalid(e) => return Err(Error::InvalidResult(e)),
                ResultCheck::Fits { bound, error } => {
                    let need = self.out.completion_need(&self.cfg, c.id(), c.name(), bound);
                    self.out.ensure_room(need)?;
                    let outcome = CallOutcome::Result(skip_ws_trim(raw));
                    self.finish_completed(slot, outcome, error);
                    self.clock.advance(now);
                    return Ok(Completed::AsGiven);
                }
                ResultCheck::TooLarge(len) => (
                    Message::ResultTooLarge(name, self.cfg.result_cap),
                    Completed::ResultTooLarge {
                        len,
                        cap: self.cfg.result_cap,
                    },
                ),
                ResultCheck::TooDeep => (
                    Message::ResultTooDeep(name, self.cfg.max_depth),
                    Completed::ResultTooDeep {
                        max_depth: self.cfg.max_depth,
                    },
                ),
            },
            Err(msg) => {
                if msg.len() > self.cfg.message_cap {
                    return Err(Error::MessageTooLong {
                        len: msg.len(),
                        cap: self.cfg.message_cap,
                    });
                }
                let need = self.out.completion_need(
                    &self.cfg,
                    c.id(),
                    c.name(),
                    escaped_len(msg.as_bytes()) + 2,
                );
                self.out.ensure_room(need)?;
                self.finish_completed(slot, CallOutcome::Error(msg), None);
                self.clock.advance(now);
                return Ok(Completed::AsGiven);
            }
        };
        let need = self
            .out
            .completion_need(&self.cfg, c.id(), c.name(), message_len(&failure));
        self.out.ensure_room(need)?;
        let message = compose(&self.cfg, self.scratch, &failure);
        finish_slot(
            &self.cfg,
            self.slots,
            self.slot_bytes,
            &mut self.out,
            slot,
            CallOutcome::Error(message),
            Ended::Finished,
        );
        self.clock.advance(now);
        Ok(completed)
    }

    /// Frees `slot` and completes its call with an outcome whose last-error source is known.
    fn finish_completed(
        &mut self,
        slot: usize,
        outcome: CallOutcome<'_>,
        error: Option<ResultError<'_>>,
    ) {
        self.slots[slot].state = SlotState::Free;
        self.slots[slot].ended = Ended::Finished;
        let call = slot_call(&self.cfg, self.slots, self.slot_bytes, slot);
        self.out.complete_checked(&self.cfg, call, outcome, error);
    }

    /// A frame from a pending adapter call's tool adapter (fully validated; SPEC §2 rules).
    pub fn handle_adapter_frame(
        &mut self,
        now: Instant,
        handle: CallHandle,
        bytes: &[u8],
    ) -> Result<(), Error> {
        self.clock.check(now)?;
        let slot = self.waiting_slot(now, handle)?;
        if self.slots[slot].state != SlotState::Adapter {
            return Err(Error::WrongKind);
        }
        let frame = Frame::parse_validated(bytes, self.cfg.max_depth)?;
        let recorded = self.slots[slot].recorded != Recorded::Nothing;
        let l = self.cfg.layout(slot);
        match crate::call::read_adapter_frame(&frame, recorded)? {
            crate::call::AdapterStep::Ignore => {}
            crate::call::AdapterStep::Record(raw) => {
                // Kept without white space; one that does not fit fails the call when it settles.
                let fits = raw.len() <= self.cfg.result_cap
                    || json::compact_len(raw) <= self.cfg.result_cap;
                self.slots[slot].recorded = match fits {
                    true => Recorded::Result(json::compact_into(
                        raw,
                        &mut self.slot_bytes[l.result..][..self.cfg.result_cap],
                    ) as u32),
                    false => Recorded::TooLarge,
                };
            }
            crate::call::AdapterStep::Fail(msg) => {
                let c = slot_call(&self.cfg, self.slots, self.slot_bytes, slot);
                let fallback = Message::Failed(c.name().unwrap_or(b""));
                // Scratch is not observable state: composing before the room check is fine.
                let cap = self.cfg.message_cap;
                let msg_buf = message_buf(&self.cfg, self.scratch);
                // The adapter's message is cut, never refused, so the call still settles: to its
                // longest prefix that fits `message_cap` once escaped.
                let (message, cut) = match msg {
                    Some(m) => {
                        let (decoded, cut) = m.decode_prefix_into(msg_buf);
                        let n = escaped_prefix(decoded.as_bytes(), cap);
                        (text(&decoded.as_bytes()[..n]), cut || n < decoded.len())
                    }
                    None => {
                        let n = fallback.compose(msg_buf).map_or(0, |m| m.len());
                        (text(&msg_buf[..n]), false)
                    }
                };
                let esc = escaped_len(message.as_bytes()) + 2;
                finish_slot_checked(
                    &self.cfg,
                    self.slots,
                    self.slot_bytes,
                    &mut self.out,
                    slot,
                    CallOutcome::Error(message),
                    esc,
                )?;
                if cut {
                    self.out.stats.messages_truncated =
                        self.out.stats.messages_truncated.saturating_add(1);
                }
            }
            crate::call::AdapterStep::End => self.adapter_end(slot)?,
        }
        self.clock.advance(now);
        Ok(())
    }

    /// The adapter of a pending call closed its source: settles like `END`.
    pub fn handle_adapter_closed(&mut self, now: Instant, handle: CallHandle) -> Result<(), Error> {
        self.clock.check(now)?;
        let slot = self.waiting_slot(now, handle)?;
        if self.slots[slot].state != SlotState::Adapter {
            return Err(Error::WrongKind);
        }
        self.adapter_end(slot)?;
        self.clock.advance(now);
        Ok(())
    }

    /// Settles an adapter call with what it recorded (SPEC §2.2), or fails it when that was too large.
    fn adapter_end(&mut self, slot: usize) -> Result<(), Error> {
        let l = self.cfg.layout(slot);
        let result: &[u8] = match self.slots[slot].recorded {
            Recorded::Result(n) => &self.slot_bytes[l.result..l.result + n as usize],
            Recorded::Nothing => b"null",
            Recorded::TooLarge => {
                let c = slot_call(&self.cfg, self.slots, self.slot_bytes, slot);
                let msg = Message::ResultTooLarge(c.name().unwrap_or(b""), self.cfg.result_cap);
                let len = message_len(&msg);
                return finish_slot_checked(
                    &self.cfg,
                    self.slots,
                    self.slot_bytes,
                    &mut self.out,
                    slot,
                    CallOutcome::Error(compose(&self.cfg, self.scratch, &msg)),
                    len,
                );
            }
        };
        finish_slot_checked(
            &self.cfg,
            self.slots,
            self.slot_bytes,
            &mut self.out,
            slot,
            CallOutcome::Result(result),
            result.len(),
        )
    }

    /// Ends the pending calls `pick` selects with a timeout (no `reason`) or cancel error,
    /// in (deadline, call) order for timeouts and call order for cancel, one at a time while
    /// the queue has room. Returns how many selected calls are left; refuses (changing
    /// nothing) only when not even the first fits.
    fn end_slots_with<F>(&mut self, pick: F, reason: Option<&[u8]>) -> Result<usize, Error>
    where
        F: Fn(&Slot) -> bool,
    {
        let message = |name, s: &Slot| match reason {
            Some(r) => Message::Cancelled(name, r),
            None => Message::TimedOut(name, s.timeout_ms),
        };
        let cancel_reason = reason.unwrap_or(b"timeout");
        // Every message is checked before anything changes.
        for (i, s) in self.slots.iter().enumerate() {
            if s.state != SlotState::Free && pick(s) {
                let c = slot_call(&self.cfg, self.slots, self.slot_bytes, i);
                let len = message(c.name().unwrap_or(b""), s).len();
                if len > self.cfg.message_cap {
                    return Err(Error::MessageTooLong {
                        len,
                        cap: self.cfg.message_cap,
                    });
                }
            }
        }
        let next = self.next_call;
        let order = |s: &Slot| {
            let deadline = if reason.is_some() {
                Instant::ZERO
            } else {
                s.deadline
            };
            (deadline, s.call.wrapping_sub(next))
        };
        let mut ended = 0;
        while let Some(slot) = (0..self.slots.len())
            .filter(|&i| self.slots[i].state != SlotState::Free && pick(&self.slots[i]))
            .min_by_key(|&i| order(&self.slots[i]))
        {
            let s = self.slots[slot];
            let c = slot_call(&self.cfg, self.slots, self.slot_bytes, slot);
            let name = c.name().unwrap_or(b"");
            let msg = message(name, &s);
            let cancel = OutFrame::Cancel {
                id: c.id(),
                name,
                reason: cancel_reason,
            };
            let mut need = self
                .out
                .completion_need(&self.cfg, c.id(), c.name(), message_len(&msg));
            if s.state == SlotState::Adapter {
                need += RECORD_HEADER + cancel.encoded_len();
            }
            if let Err(e) = self.out.ensure_room(need) {
                if ended == 0 {
                    return Err(e);
                }
                let left = self
                    .slots
                    .iter()
                    .filter(|s| s.state != SlotState::Free && pick(s));
                return Ok(left.count());
            }
            if s.state == SlotState::Adapter {
                let handle = CallHandle {
                    slot: slot as u16,
                    call: s.call,
                };
                let pushed = self.out.queue.push(Route::Adapter(handle), &cancel);
                debug_assert!(pushed.is_ok());
            }
            let outcome = CallOutcome::Error(compose(&self.cfg, self.scratch, &msg));
            let how = if reason.is_some() {
                Ended::Cancelled
            } else {
                Ended::TimedOut
            };
            finish_slot(
                &self.cfg,
                self.slots,
                self.slot_bytes,
                &mut self.out,
                slot,
                outcome,
                how,
            );
            ended += 1;
        }
        Ok(0)
    }

    /// Gives the clock: every call at or past its deadline fails with a timeout (adapters get
    /// `CANCEL` first), in deadline order. When the queue fills up first, the rest stay due:
    /// [`poll_timeout`](Self::poll_timeout) keeps reporting them, so drain and call again.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
        self.clock.check(now)?;
        self.end_slots_with(|s| now >= s.deadline, None)?;
        self.clock.advance(now);
        Ok(())
    }

    /// Completes every pending call, oldest first, with `Tool <name> cancelled: <reason>`
    /// (adapters get `CANCEL` first). Returns how many are still pending because the queue
    /// filled up first: drain `poll_transmit` and call again until it returns `Ok(0)`.
    pub fn cancel(&mut self, now: Instant, reason: &str) -> Result<usize, Error> {
        self.clock.check(now)?;
        let left = self.end_slots_with(|_| true, Some(reason.as_bytes()))?;
        self.clock.advance(now);
        Ok(left)
    }

    /// Stops every later continue prompt (held `END`s are still released).
    pub fn abort(&mut self) {
        self.out.aborted = true;
    }

    /// Forgets the trace.
    pub fn clear_trace(&mut self) {
        self.out.trace.clear();
    }

    // ----- outputs ------------------------------------------------------

    /// Writes the oldest queued frame into `buf` and says where it goes; a short buffer keeps it queued.
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Result<Option<Transmit>, BufferTooSmall> {
        self.out.queue.pop_into(buf)
    }

    /// The route and length of the next frame `poll_transmit` would write.
    pub fn peek_transmit(&self) -> Option<Transmit> {
        self.out.queue.peek()
    }

    /// The next call the host must start (deferred: run it; adapter: connect it), oldest first.
    pub fn poll_event(&mut self) -> Option<Event<'_>> {
        let next = self.next_call;
        let slot = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state != SlotState::Free && !s.announced)
            .min_by_key(|(_, s)| s.call.wrapping_sub(next))
            .map(|(i, _)| i)?;
        self.slots[slot].announced = true;
        let s = self.slots[slot];
        let c = slot_call(&self.cfg, self.slots, self.slot_bytes, slot);
        Some(Event::CallStarted {
            handle: CallHandle {
                slot: slot as u16,
                call: s.call,
            },
            kind: if s.state == SlotState::Adapter {
                PendingKind::Adapter
            } else {
                PendingKind::Deferred
            },
            tool: s.tool as usize,
            name: c.name_str.unwrap_or(""),
            id: c.id_str,
            args: c.args,
        })
    }

    /// The earliest deadline of a pending call: call `handle_timeout` then.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.slots
            .iter()
            .filter(|s| s.state != SlotState::Free)
            .map(|s| s.deadline)
            .min()
    }

    // ----- state --------------------------------------------------------

    /// Calls intercepted and not yet completed.
    pub fn pending(&self) -> usize {
        self.out.pending
    }

    /// Frames waiting in the output queue.
    pub fn queued(&self) -> usize {
        self.out.queue.len()
    }

    /// The trace.
    pub fn trace(&self) -> &Trace<'a> {
        &self.out.trace
    }

    /// True once `abort` was called or the round limit was reached.
    pub fn is_aborted(&self) -> bool {
        self.out.aborted
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.out.stats
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The latest instant seen.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The hooks.
    pub fn hooks_mut(&mut self) -> &mut H {
        &mut self.out.hooks
    }

    /// The output queue's capacity in bytes.
    pub fn queue_capacity(&self) -> usize {
        self.out.queue.capacity()
    }
}

fn skip_ws_trim(raw: &[u8]) -> &[u8] {
    let start = json::skip_ws(raw, 0);
    let mut end = raw.len();
    while end > start && matches!(raw[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    &raw[start..end]
}

#[cfg(test)]
mod opt_equivalence {
    use super::*;
    extern crate std;

    #[test]
    fn check_result_matches_validate_then_result_error() {
        let cases: &[&[u8]] = &[
            b"{}",
            b"{\"error\":null}",
            b"{\"error\":\"x\\n\"}",
            b"{\"error\":1,\"error\":null}",
            b"{\"success\":false}",
            b"{\"success\":false,\"error\":null}",
            b"{\"error\":[1],\"success\":false}",
            b"{\"a\":1,}",
            b"{\"a\":1} x",
            b"{\"a\":1}  ",
            b" {\"error\":2}",
            b"[1]",
            b"1",
            b"\"s\"",
            b"{\"a\":[[[[1]]]]}",
            b"{\"a\":{\"error\":\"deep\"}}",
            b"{\"e\\u0072ror\":\"esc\"}",
            b"{",
            b"{\"a\"}",
            b"{\"success\":true,\"success\":false}",
            b"{\"error\":\"\xff\"}",
        ];
        for depth in [3u8, 5, 30] {
            let cfg = Config {
                max_depth: depth,
                ..Config::DEFAULT
            };
            for &c in cases {
                let old = match json::validate(c, depth) {
                    Ok(()) => std::format!("{:?}", result_error(skip_ws_trim(c), depth).map(show)),
                    Err(e) if e.kind == json::JsonErrorKind::TooDeep => "deep".into(),
                    Err(e) => std::format!("invalid {e:?}"),
                };
                let new = match check_result(c, &cfg) {
                    ResultCheck::Fits { error, .. } => std::format!("{:?}", error.map(show)),
                    ResultCheck::TooDeep => "deep".into(),
                    ResultCheck::Invalid(e) => std::format!("invalid {e:?}"),
                    ResultCheck::TooLarge(n) => std::format!("large {n}"),
                };
                assert_eq!(old, new, "{:?} depth {depth}", core::str::from_utf8(c));
            }
        }
    }

    fn show(e: ResultError<'_>) -> std::string::String {
        match e {
            ResultError::Raw(r) => std::format!("raw {r:?}"),
            ResultError::Text(t) => std::format!("text {:?}", t.raw()),
            ResultError::SuccessFalse => "success false".into(),
        }
    }
}
