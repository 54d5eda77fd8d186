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
//!   and where; [`peek_transmit`](Wrapper::peek_transmit) looks without taking), or
//!   [`poll_output`](Wrapper::poll_output) (the same frames with the hook events a
//!   [`Log`] kept, in SPEC order),
//!   [`poll_event`](Wrapper::poll_event) (calls the host must run),
//!   [`poll_timeout`](Wrapper::poll_timeout) (when to call `handle_timeout`).
//! * **State** — [`pending`](Wrapper::pending), [`queued`](Wrapper::queued),
//!   [`trace`](Wrapper::trace), [`is_aborted`](Wrapper::is_aborted),
//!   [`stats`](Wrapper::stats), [`config`](Wrapper::config), [`now`](Wrapper::now),
//!   [`queue_capacity`](Wrapper::queue_capacity), [`hooks_mut`](Wrapper::hooks_mut).
//!
//! # Polling order
//!
//! After every input: drain `poll_transmit` until it returns `Ok(None)`, then
//! `poll_event` until `None`, then re-arm your timer from `poll_timeout`. An
//! input that could produce frames is refused with [`Error::QueueFull`] while
//! the queue lacks room for the most it could produce, so draining first
//! keeps the machine moving: a drained queue takes any input. A pending call's
//! frames (`TOOL_CALL`, `CANCEL`, `TOOL_RESULT`) queue as records encoded from
//! its slot when transmitted, so `handle_timeout` and `cancel` end every
//! pending call at once after a drain; undrained, they end calls one at a time
//! as room allows (timeouts stay due, `cancel` returns how many are left).
//! Pass-through frames never enter the queue: the host forwards its own bytes
//! when told [`Disposition::Forward`].
//!
//! # Memory
//!
//! The wrapper owns nothing: the host hands in the pending-call [`Slot`]s and
//! one byte arena of [`WrapperConfig::arena_len`] bytes, carved into per-slot
//! buffers (name, id, args, outcome), scratch, the trace ring, the
//! held-`END` buffer and the output queue. A slot stays taken after its call
//! ended until its `TOOL_RESULT` is transmitted.
//!
//! # Where things are
//!
//! `config` sizes the arena; `slots` holds pending calls and their handles;
//! `intercept` takes the model's `TOOL_CALL`s; `complete` completes calls from the
//! host and from tool adapters; `expiry` ends them by timeout or cancel;
//! `result` reads what a result says; `pipeline` holds what completions write (queue,
//! held `END`s, trace, last tool error, hooks) and closes rounds; `scratch` is the
//! per-input work space; `output` is `poll_output`; `typed` reads and writes typed tool data.
//!
//! # One vocabulary
//!
//! A call *starts*, is *pending* while it waits, and *ends* once: it is *completed* (with
//! a result or an error: by a sync tool, the host's [`complete`](Wrapper::complete), its
//! tool adapter, or a check that failed it at once), *timed out*, or *cancelled*. What it
//! ended with is its *outcome* ([`CallOutcome`]).

mod complete;
mod config;
mod expiry;
mod intercept;
mod output;
mod pipeline;
mod result;
mod scratch;
mod slots;
pub mod typed;

pub use crate::hook_log::{HookEvent, HookLog, Log, Logged, Output};
pub use crate::hooks::{CallInfo, Hooks, NoHooks};
pub use crate::outcome::CallOutcome;
pub use crate::tool::{PendingKind, ResultWriter, SyncTool, Tool, ToolFailed, ToolKind};
pub use crate::trace::{Trace, TraceEntry, TraceIter, ENTRY_HEADER};
pub use config::WrapperConfig;
pub use pipeline::WrapperStats;
pub use slots::Slot;

pub use crate::texts::MALFORMED_TOOL_CALL;

use crate::clock::{Clock, Instant};
use crate::error::{Error, StorageError};
use crate::frame::write::{BufferTooSmall, Known};
use crate::frame::{Frame, FrameError, FrameKind};
use crate::held::Held;

use crate::queue::{Body, Queue, SlotFrame};
use crate::route::{CallHandle, Transmit};
use crate::tool::Registry;

use pipeline::Pipeline;
use scratch::Scratch;
use slots::Slots;

/// What the host must do with a frame it passed in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Disposition {
    /// Forward the very bytes you passed in, unchanged.
    Forward,
    /// A `TOOL_CALL` was intercepted; `handle` is set while it is pending.
    Intercepted {
        /// The call's index.
        index: u32,
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
    /// The error message was longer than `message_cap` once escaped: the call failed with its
    /// longest prefix that fits, cut on a character boundary (and counted in
    /// [`WrapperStats::messages_truncated`]).
    MessageCut {
        /// The message's length as given.
        len: usize,
        /// `message_cap`.
        cap: usize,
    },
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
        /// Raw JSON args, without white space between tokens.
        args: &'w [u8],
    },
}

/// The tool-call router between a model and its consumer.
pub struct Wrapper<'a, H: Hooks = NoHooks> {
    cfg: WrapperConfig,
    tools: Registry<'a>,
    slots: Slots<'a>,
    scratch: Scratch<'a>,
    out: Pipeline<'a, H>,
    clock: Clock,
    /// The index the next intercepted `TOOL_CALL` gets.
    next_index: u32,
    /// Frames `poll_transmit` handed out, for placing hook events (`poll_output`).
    transmitted: u64,
    /// `poll_output` handed out the oldest hook event: it goes at the next call.
    hook_out: bool,
}

impl<H: Hooks> core::fmt::Debug for Wrapper<'_, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Wrapper")
            .field("pending", &self.out.pending)
            .field("queued", &self.out.queue.len())
            .field("next_index", &self.next_index)
            .finish()
    }
}

// Equivalent mutant (unkillable on the host): compiled only with the `defmt` feature, which the
// host tests leave off (the firmware build turns it on).
#[cfg(feature = "defmt")]
impl<H: Hooks> defmt::Format for Wrapper<'_, H> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Wrapper {{ pending: {}, queued: {}, next_index: {}, now: {} }}",
            self.out.pending,
            self.out.queue.len(),
            self.next_index,
            self.clock.now()
        )
    }
}

impl<'a, H: Hooks> Wrapper<'a, H> {
    /// A wrapper over `tools`, with `slots.len()` pending-call slots and an arena of [`WrapperConfig::arena_len`] bytes.
    ///
    /// Tools sorted by name (byte order, no duplicate names) are found by binary search;
    /// any other order works too, with a linear scan in which the first registration wins.
    pub fn new(
        cfg: WrapperConfig,
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
            return Err(StorageError::NameTooLong { index });
        }
        let needed = cfg.arena_len(slots.len());
        if arena.len() < needed {
            return Err(StorageError::ArenaTooSmall {
                needed,
                given: arena.len(),
            });
        }
        let r = cfg.carve(slots.len(), arena);
        Ok(Self {
            cfg,
            tools: Registry::new(tools),
            slots: Slots::new(slots, r.slots, &cfg),
            scratch: Scratch::new(r.scratch),
            out: Pipeline::new(
                hooks,
                Queue::new(r.queue),
                Trace::new(r.trace, cfg.trace_entries),
                Held::new(r.held),
                r.last_error,
            ),
            clock: Clock::default(),
            next_index: 0,
            transmitted: 0,
            hook_out: false,
        })
    }

    // ----- inputs -------------------------------------------------------

    /// A frame from the model (response path): intercepts `TOOL_CALL`, holds `END` while calls are pending.
    ///
    /// `now` starts a `TOOL_CALL`'s deadline; for any other frame it only moves the wrapper's
    /// clock, so a host may give such a frame the last time it gave instead of reading its
    /// clock again (the npm package does so for text deltas).
    pub fn handle_response(&mut self, now: Instant, bytes: &[u8]) -> Result<Disposition, Error> {
        self.clock.check(now)?;
        // A `TOOL_CALL` is validated whole before it is acted on: one that says so in its
        // first bytes (the canonical form) is read that way at once, not twice.
        let frame = match bytes.starts_with(br#"{"type":"TOOL_CALL","#) {
            true => Frame::parse_validated(bytes, self.cfg.max_depth)?,
            false => self.parse(bytes)?,
        };
        let disposition = match frame.kind() {
            FrameKind::ToolCall => self.intercept(now, frame)?,
            FrameKind::End if self.out.pending > 0 => {
                let needed = Held::needed(bytes.len());
                let free = self.out.held.free();
                if !self.out.held.push(bytes) {
                    return Err(Error::HeldFull { needed, free });
                }
                debug!("END held while {} calls are pending", self.out.pending);
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
    #[must_use = "a frame taken from the queue must be written where its route says"]
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Result<Option<Transmit>, BufferTooSmall> {
        let Some(record) = self.out.queue.front() else {
            return Ok(None);
        };
        // Write the frame (a short buffer refuses before a byte is written), then move on.
        let len = match record.body {
            Body::Inline(_) | Body::Mirrored(_) => copy_out(buf, self.out.queue.front_frame())?,
            Body::Held { offset, .. } => copy_out(buf, self.out.held.frame_at(offset))?,
            // A slot's raw values are stored compacted.
            Body::Slot(frame, slot) => self
                .slots
                .frame(slot as usize, frame)
                .encode_as(buf, Known::RAW_COMPACT)?,
        };
        match record.body {
            Body::Held { .. } => {
                if self.out.queue.held_sent(len) {
                    self.out.held.release_done();
                }
            }
            Body::Slot(frame, slot) => {
                self.out.queue.drop_front();
                if frame == SlotFrame::ToolResult {
                    self.slots.free(slot as usize);
                }
            }
            Body::Inline(_) | Body::Mirrored(_) => self.out.queue.drop_front(),
        }
        self.transmitted += 1;
        Ok(Some(Transmit {
            route: record.route,
            len,
        }))
    }

    /// The route and length of the next frame `poll_transmit` would write.
    #[must_use]
    pub fn peek_transmit(&self) -> Option<Transmit> {
        let record = self.out.queue.front()?;
        let len = match record.body {
            Body::Inline(len) | Body::Mirrored(len) => len,
            Body::Held { offset, .. } => self.out.held.frame_at(offset).len(),
            Body::Slot(frame, slot) => self
                .slots
                .frame(slot as usize, frame)
                .len_as(Known::RAW_COMPACT),
        };
        Some(Transmit {
            route: record.route,
            len,
        })
    }

    /// The next call the host must start (deferred: run it; adapter: connect it), oldest first.
    #[must_use = "a started call must be run (deferred) or connected (adapter)"]
    pub fn poll_event(&mut self) -> Option<Event<'_>> {
        let slot = self.slots.take_unannounced(self.next_index)?;
        let s = *self.slots.get(slot);
        let c = self.slots.call(slot);
        Some(Event::CallStarted {
            handle: CallHandle::new(slot as u16, s.index()),
            kind: s.pending_kind().unwrap_or(PendingKind::Deferred),
            tool: s.tool(),
            name: c.name.unwrap_or(""),
            id: c.id,
            args: c.args,
        })
    }

    /// The earliest deadline of a pending call: call `handle_timeout` then.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.slots.earliest_deadline()
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
    pub fn stats(&self) -> WrapperStats {
        self.out.stats
    }

    /// The configuration.
    pub fn config(&self) -> &WrapperConfig {
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

/// Copies `frame` into the start of `buf`; a short `buf` is refused and left untouched.
fn copy_out(buf: &mut [u8], frame: &[u8]) -> Result<usize, BufferTooSmall> {
    let dst = buf.get_mut(..frame.len()).ok_or(BufferTooSmall {
        needed: frame.len(),
    })?;
    dst.copy_from_slice(frame);
    Ok(frame.len())
}
