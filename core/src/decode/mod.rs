//! Stream decoders: a model API's streamed HTTP response body in, the frames of SPEC §1
//! out (SPEC §8), for the wrapper's response path.
//!
//! A [`Decoder`] reads one provider's format ([`Provider`]) from bytes split anywhere and
//! writes canonical one-line frames into the host's buffer: `TEXT` and `REASONING` deltas
//! as they come, each tool call as one `TOOL_CALL` once it is complete (broken arguments
//! with `args_error`, so the wrapper answers them), provider errors as `ERROR`, and one
//! `END` with the provider's finish reason. All memory is the host's: a byte arena sized
//! by [`DecoderConfig::arena_len`] and one [`CallSlot`] per call the response may have open
//! at once.
//!
//! # Polling order
//!
//! 1. [`feed`](Decoder::feed) the next bytes of the body; it consumes up to the end of the
//!    first complete provider event and returns how many bytes it took (0 while frames
//!    are waiting).
//! 2. [`poll_frame`](Decoder::poll_frame) until it returns `Ok(None)`; feed the rest.
//! 3. When the body is over, [`finish`](Decoder::finish), then `poll_frame` until
//!    `Ok(None)`: calls still open come out (cut off), then `END`. The decoder is then
//!    ready for the next body.
//!
//! ```
//! use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig, Provider};
//!
//! const CFG: DecoderConfig = DecoderConfig::SMALL;
//! let mut slots = [CallSlot::EMPTY; 2];
//! let mut arena = [0u8; CFG.arena_len(2)];
//! let mut d = Decoder::new(Provider::OpenAiChat, CFG, &mut slots, &mut arena).unwrap();
//! let body = concat!(
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",",
//!     "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}}]},",
//!     "\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
//! );
//! let mut frames = heapless::Vec::<heapless::String<96>, 4>::new();
//! let mut out = [0u8; 256];
//! let mut input = body.as_bytes();
//! loop {
//!     let n = d.feed(input);
//!     input = &input[n..];
//!     while let Some(len) = d.poll_frame(&mut out).unwrap() {
//!         let text = core::str::from_utf8(&out[..len]).unwrap();
//!         frames.push(text.try_into().unwrap()).unwrap();
//!     }
//!     if input.is_empty() {
//!         break;
//!     }
//! }
//! d.finish();
//! assert_eq!(d.poll_frame(&mut out), Ok(None));
//! assert_eq!(frames[0], r#"{"type":"TEXT","content":"Hi"}"#);
//! assert_eq!(frames[1], r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{"a":1}}}"#);
//! assert_eq!(frames[2], r#"{"type":"END","content":{"reason":"tool_calls"}}"#);
//! ```

mod calls;
mod reader;

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(feature = "gemini")]
mod gemini;
#[cfg(feature = "ollama")]
mod ollama;
#[cfg(feature = "openai-chat")]
mod openai_chat;
#[cfg(feature = "openai-responses")]
mod openai_responses;

pub use calls::{CallCounts, CallSlot};
pub(crate) use calls::{Calls, Close};

use crate::json::{self, valid, JsonStr};
use crate::sink::{put_json_str, put_json_string, write_counted, Sink};
use reader::{Fed, Framing, Reader};

pub use crate::json::BufferTooSmall;

/// The formats a decoder reads (one cargo feature each).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions SSE, and every OpenAI-compatible server.
    #[cfg(feature = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses API SSE.
    #[cfg(feature = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages SSE.
    #[cfg(feature = "anthropic")]
    Anthropic,
    /// Gemini / Vertex `streamGenerateContent?alt=sse`.
    #[cfg(feature = "gemini")]
    Gemini,
    /// Ollama `/api/chat` NDJSON.
    #[cfg(feature = "ollama")]
    Ollama,
}

impl Provider {
    /// Every provider this build has.
    pub const ALL: &'static [Provider] = &[
        #[cfg(feature = "openai-chat")]
        Provider::OpenAiChat,
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses,
        #[cfg(feature = "anthropic")]
        Provider::Anthropic,
        #[cfg(feature = "gemini")]
        Provider::Gemini,
        #[cfg(feature = "ollama")]
        Provider::Ollama,
    ];

    /// The provider's name in SPEC §8 (`openai-chat`, `openai-responses`, …).
    pub const fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "openai-chat")]
            Provider::OpenAiChat => "openai-chat",
            #[cfg(feature = "openai-responses")]
            Provider::OpenAiResponses => "openai-responses",
            #[cfg(feature = "anthropic")]
            Provider::Anthropic => "anthropic",
            #[cfg(feature = "gemini")]
            Provider::Gemini => "gemini",
            #[cfg(feature = "ollama")]
            Provider::Ollama => "ollama",
        }
    }

    /// The provider with this name, when this build has it.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name().as_bytes() == name)
    }

    fn framing(self) -> Framing {
        match self {
            #[cfg(feature = "ollama")]
            Provider::Ollama => Framing::Ndjson,
            #[allow(unreachable_patterns)]
            _ => Framing::Sse,
        }
    }
}

/// The capacities of a decoder; the arena it needs is [`arena_len`](Self::arena_len).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DecoderConfig {
    /// The longest provider event kept (an SSE event's joined data, an NDJSON line); a
    /// longer one is skipped and counted.
    pub event_cap: usize,
    /// The most argument bytes one call may have.
    pub args_cap: usize,
    /// The longest tool name kept, in bytes (a longer one is cut and counted): keep it at
    /// most the wrapper's `name_cap`.
    pub name_cap: usize,
    /// The longest call id kept, in bytes (a longer one is cut and counted): keep it at
    /// most the wrapper's `id_cap`.
    pub id_cap: usize,
    /// Arguments nested deeper than this (the args value is level 1) are not valid JSON.
    pub max_depth: u8,
}

/// Bytes kept of a finish reason (the longest any provider writes is 26).
pub const REASON_CAP: usize = 64;
/// Bytes kept of the JSON path of a Gemini streamed argument.
pub const PATH_CAP: usize = 256;

impl DecoderConfig {
    /// Events up to 16 KiB, 4 KiB of arguments per call, names and ids up to 64 bytes.
    pub const DEFAULT: Self = Self {
        event_cap: 16 * 1024,
        args_cap: 4096,
        name_cap: 64,
        id_cap: 64,
        max_depth: json::DEFAULT_MAX_DEPTH,
    };

    /// For a few KiB of RAM: events up to 2 KiB, 512 B of arguments, names and ids 32 and 48 B.
    pub const SMALL: Self = Self {
        event_cap: 2048,
        args_cap: 512,
        name_cap: 32,
        id_cap: 48,
        max_depth: 16,
    };

    /// Arena bytes each call slot takes.
    pub const fn slot_len(&self) -> usize {
        self.id_cap
            .saturating_add(self.name_cap)
            .saturating_add(self.args_cap)
    }

    /// The arena a decoder with `calls` slots needs.
    pub const fn arena_len(&self, calls: usize) -> usize {
        self.event_cap
            .saturating_add(REASON_CAP)
            .saturating_add(PATH_CAP)
            .saturating_add(calls.saturating_mul(self.slot_len()))
    }

    /// The longest frame the decoder can write: size the buffer given to `poll_frame` so.
    pub const fn max_frame_len(&self) -> usize {
        // A delta or error re-escaped from an event: at most twice its bytes (a raw error
        // value quoted), plus the frame around it.
        let from_event = self.event_cap.saturating_mul(2).saturating_add(64);
        // A call: every decoded byte may escape to six (`\u00XX`), the name twice.
        let call = self
            .id_cap
            .saturating_add(self.name_cap.saturating_mul(2))
            .saturating_add(self.args_cap)
            .saturating_mul(6)
            .saturating_add(160);
        if from_event > call {
            from_event
        } else {
            call
        }
    }
}

/// Provider data the decoder skipped (SPEC §8 rule 5), by kind, since it was made.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Skipped {
    /// Events whose data is not JSON.
    pub not_json: u32,
    /// Events of a name the provider does not send (or, Anthropic, with no name).
    pub unknown_event: u32,
    /// Events of a known kind whose members have the wrong shape.
    pub bad_shape: u32,
    /// Events longer than `event_cap`.
    pub overlong: u32,
    /// Events after the response ended (its `END` was written), until the body ends.
    pub after_end: u32,
    /// Ids, names and finish reasons cut to their capacity.
    pub cut: u32,
}

/// Why a decoder could not be made.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DecoderStorageError {
    /// The arena is smaller than [`DecoderConfig::arena_len`].
    ArenaTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        given: usize,
    },
    /// Name or id capacity over 65535, args capacity over `u32::MAX`, an event capacity
    /// under 16 bytes, or a depth limit of 0.
    BadConfig,
}

impl core::fmt::Display for DecoderStorageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::ArenaTooSmall { needed, given } => {
                write!(f, "decoder arena of {given} bytes, {needed} needed")
            }
            Self::BadConfig => f.write_str("decoder capacities out of range"),
        }
    }
}

impl core::error::Error for DecoderStorageError {}

/// A byte range of the event: a string token (quotes included) or a raw value.
pub(crate) type Span = (u32, u32);

/// Where a provider reader is inside an event: a step number and its offsets, so that
/// every frame is written from the event in place and a frame that did not fit the
/// host's buffer is written again from the same point.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Cursor {
    pub(crate) step: u8,
    pub(crate) pos: u32,
    pub(crate) a: Span,
    pub(crate) b: Span,
}

impl Cursor {
    /// Step `step` with nothing remembered.
    pub(crate) const fn at(step: u8) -> Self {
        Self {
            step,
            pos: 0,
            a: (0, 0),
            b: (0, 0),
        }
    }

    /// The same cursor at another step.
    pub(crate) const fn then(self, step: u8, pos: u32) -> Self {
        Self { step, pos, ..self }
    }
}

/// A frame written from the event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Emit {
    /// A text delta (or a reasoning one): a string token.
    Text { reasoning: bool, at: Span },
    /// A provider error's message: a string token, or any raw value written as its text.
    Error { at: Span, string: bool },
    /// A call that found no free slot: its id and name tokens, when given.
    NoSlot {
        id: Option<Span>,
        name: Option<Span>,
    },
}

/// What a provider reader's step came to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Step {
    /// Write this frame, then go on at the cursor.
    Emit(Emit, Cursor),
    /// Nothing to write; go on at the cursor.
    Next(Cursor),
    /// The event is read.
    Done,
    /// Write this `ERROR`; the response ends there (SPEC §8 rule 2).
    Fail(Emit),
    /// The response ended: close open calls so, then `END` with the stored reason.
    End(Close),
}

/// One event, as the provider readers see it.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Event<'e> {
    /// The event's data, white space around it removed.
    pub(crate) data: &'e [u8],
    /// Its SSE `event` name, when it had one.
    pub(crate) name: Option<&'e [u8]>,
}

impl<'e> Event<'e> {
    /// The bytes of a span.
    pub(crate) fn at(&self, span: Span) -> &'e [u8] {
        self.data
            .get(span.0 as usize..span.1 as usize)
            .unwrap_or(&[])
    }

    /// The span of a slice of the event's data.
    pub(crate) fn span(&self, part: &[u8]) -> Span {
        let start = (part.as_ptr() as usize).wrapping_sub(self.data.as_ptr() as usize);
        let start = start.min(self.data.len());
        (
            start as u32,
            (start + part.len()).min(self.data.len()) as u32,
        )
    }

    /// The string token at `span`.
    pub(crate) fn str_at(&self, span: Span) -> JsonStr<'e> {
        JsonStr::from_scanned_lenient(self.at(span))
    }
}

/// The finish reason the provider gave, kept past its event.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Reason<'a> {
    buf: &'a mut [u8],
    len: Option<usize>,
}

impl Reason<'_> {
    /// Keeps `text` as the reason (cut to [`REASON_CAP`] on a character boundary).
    pub(crate) fn set(&mut self, text: JsonStr<'_>, skipped: &mut Skipped) {
        let (kept, cut) = text.decode_prefix_into(self.buf);
        self.len = Some(kept.len());
        skipped.cut += cut as u32;
    }
}

/// What the provider readers share: the calls, the reason, the counters, and the little
/// each provider keeps between events.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct State<'a> {
    pub(crate) calls: Calls<'a>,
    pub(crate) reason: Reason<'a>,
    pub(crate) skipped: Skipped,
    /// Keys below 64 of calls already written or refused in this response, whose later
    /// pieces are not new calls.
    pub(crate) gone: u64,
    #[cfg(feature = "gemini")]
    pub(crate) gemini: gemini::Assembler<'a>,
}

impl State<'_> {
    /// Remembers that the call with `key` is written (or was refused).
    pub(crate) fn mark_gone(&mut self, key: u32) {
        if key < 64 {
            self.gone |= 1 << key;
        }
    }

    /// Every open call is complete (or cut off), in key order; their keys are gone.
    pub(crate) fn close_all(&mut self, how: Close) {
        for key in self.calls.open_keys() {
            if key < 64 {
                self.gone |= 1 << key;
            }
        }
        self.calls.close_all(how);
    }

    /// The call in slot `i` is complete; its key is gone.
    pub(crate) fn ready(&mut self, i: usize, key: u32) {
        self.mark_gone(key);
        self.calls.ready(i, Close::Complete);
    }

    /// True when the call with `key` was written (or refused) already.
    pub(crate) fn is_gone(&self, key: u32) -> bool {
        key < 64 && self.gone & (1 << key) != 0
    }

    /// Opens a call, or says which frame reports that none could be (rule 4).
    pub(crate) fn open_or_refuse(
        &mut self,
        ev: &Event<'_>,
        key: u32,
        id: Option<&[u8]>,
        name: Option<&[u8]>,
    ) -> Result<usize, Emit> {
        let id_str = id.and_then(valid::string);
        let name_str = name.and_then(valid::string);
        match self.calls.open(key, id_str, name_str) {
            Ok(i) => Ok(i),
            Err(_) => {
                self.mark_gone(key);
                Err(Emit::NoSlot {
                    id: id.filter(|_| id_str.is_some()).map(|v| ev.span(v)),
                    name: name.filter(|_| name_str.is_some()).map(|v| ev.span(v)),
                })
            }
        }
    }
}

/// How far the response is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Phase {
    /// Reading events.
    Open,
    /// The response ended: `END` is owed.
    EndOwed,
    /// `END` is written; events until the body ends are counted, not read.
    Ended,
}

/// A stream decoder for one provider's response bodies, over the host's memory.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Decoder<'a> {
    provider: Provider,
    cfg: DecoderConfig,
    ev: &'a mut [u8],
    reader: Reader,
    st: State<'a>,
    /// The event being read, when there is one.
    cursor: Option<Cursor>,
    phase: Phase,
    /// The host said the body is over.
    body_over: bool,
    /// The event left without its blank line at the end of the body has been read.
    tail_read: bool,
}

impl<'a> Decoder<'a> {
    /// A decoder for `provider` over `slots` (the most calls open at once) and `arena`
    /// (at least [`DecoderConfig::arena_len`] bytes).
    pub fn new(
        provider: Provider,
        cfg: DecoderConfig,
        slots: &'a mut [CallSlot],
        arena: &'a mut [u8],
    ) -> Result<Self, DecoderStorageError> {
        if cfg.id_cap > u16::MAX as usize
            || cfg.name_cap > u16::MAX as usize
            || cfg.args_cap > u32::MAX as usize
            || cfg.event_cap < 16
            || cfg.event_cap > u32::MAX as usize
            || cfg.max_depth == 0
        {
            return Err(DecoderStorageError::BadConfig);
        }
        let needed = cfg.arena_len(slots.len());
        if needed == usize::MAX || arena.len() < needed {
            return Err(DecoderStorageError::ArenaTooSmall {
                needed,
                given: arena.len(),
            });
        }
        let (ev, rest) = arena.split_at_mut(cfg.event_cap);
        let (reason, rest) = rest.split_at_mut(REASON_CAP);
        #[allow(unused_variables)]
        let (path, store) = rest.split_at_mut(PATH_CAP);
        Ok(Self {
            provider,
            cfg,
            ev,
            reader: Reader::new(provider.framing()),
            st: State {
                calls: Calls::new(
                    slots,
                    store,
                    (cfg.id_cap, cfg.name_cap, cfg.args_cap),
                    cfg.max_depth,
                ),
                reason: Reason {
                    buf: reason,
                    len: None,
                },
                skipped: Skipped::default(),
                gone: 0,
                #[cfg(feature = "gemini")]
                gemini: gemini::Assembler::new(path),
            },
            cursor: None,
            phase: Phase::Open,
            body_over: false,
            tail_read: false,
        })
    }

    /// The provider it reads.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Its capacities.
    pub fn config(&self) -> DecoderConfig {
        self.cfg
    }

    /// What it skipped so far, by kind.
    pub fn skipped(&self) -> Skipped {
        Skipped {
            cut: self.st.skipped.cut + self.st.calls.cut,
            ..self.st.skipped
        }
    }

    /// Calls started and `TOOL_CALL`s written, since it was made.
    pub fn calls(&self) -> CallCounts {
        self.st.calls.counts
    }

    /// True when frames are waiting for [`poll_frame`](Self::poll_frame).
    pub fn has_frames(&self) -> bool {
        self.cursor.is_some()
            || self.phase == Phase::EndOwed
            || self.st.calls.next_ready().is_some()
            || self.body_over
    }

    /// Consumes body bytes up to the end of the first complete event; returns how many it
    /// took. It takes none while frames are waiting: poll them first.
    pub fn feed(&mut self, input: &[u8]) -> usize {
        if self.has_frames() {
            return 0;
        }
        let mut used = 0;
        while used < input.len() {
            let (n, fed) = self.reader.feed(self.ev, &input[used..]);
            used += n;
            if fed == Fed::Event {
                self.dispatch();
                if self.has_frames() {
                    break;
                }
            }
        }
        used
    }

    /// Says the body is over: an event left without its blank line is read, calls still
    /// open come out cut off, then `END`. Poll the frames; after them the decoder is ready
    /// for the next body.
    pub fn finish(&mut self) {
        self.body_over = true;
    }

    /// Writes the next frame into `out` and returns its length, or `Ok(None)` when there
    /// is none until more bytes come (or, after [`finish`](Self::finish), the body is done).
    /// A buffer too small for the frame gets the size needed and nothing changes.
    pub fn poll_frame(&mut self, out: &mut [u8]) -> Result<Option<usize>, BufferTooSmall> {
        loop {
            if let Some(i) = self.st.calls.next_ready() {
                let n = write_counted(out, |s| self.st.calls.write_frame(i, s))?;
                self.st.calls.free(i);
                self.st.calls.counts.written += 1;
                return Ok(Some(n));
            }
            if let Some(cur) = self.cursor {
                let ev = Event {
                    data: json::trim_ws(&self.ev[..self.reader.len.min(self.ev.len())]),
                    name: self.reader.event_name(),
                };
                match step(self.provider, &ev, cur, &mut self.st) {
                    Step::Emit(e, next) => {
                        let n = write_counted(out, |s| write_emit(&ev, e, &self.st, s))?;
                        if let Emit::NoSlot { .. } = e {
                            self.st.calls.counts.written += 1;
                        }
                        self.cursor = Some(next);
                        return Ok(Some(n));
                    }
                    Step::Fail(e) => {
                        let n = write_counted(out, |s| write_emit(&ev, e, &self.st, s))?;
                        self.st.reason.len = None;
                        self.end_response(Close::Incomplete);
                        return Ok(Some(n));
                    }
                    Step::Next(next) => self.cursor = Some(next),
                    Step::Done => self.end_event(),
                    Step::End(how) => self.end_response(how),
                }
                continue;
            }
            if self.phase == Phase::EndOwed {
                let n = write_counted(out, |s| self.write_end(s))?;
                self.phase = Phase::Ended;
                return Ok(Some(n));
            }
            if self.body_over {
                if !self.tail_read {
                    self.tail_read = true;
                    if self.reader.finish() {
                        self.dispatch();
                    }
                    continue;
                }
                if self.phase == Phase::Open {
                    let how = self.at_body_end();
                    self.end_response(how);
                    continue;
                }
                self.reset();
            }
            return Ok(None);
        }
    }

    /// How calls still open when the body ends come out.
    fn at_body_end(&self) -> Close {
        match self.provider {
            // Each streamed value arrives whole (SPEC §8 rule 3).
            #[cfg(feature = "gemini")]
            Provider::Gemini => Close::Complete,
            #[allow(unreachable_patterns)]
            _ => Close::Incomplete,
        }
    }

    /// The response ended: calls still open come out, then `END`.
    fn end_response(&mut self, how: Close) {
        #[cfg(feature = "gemini")]
        if self.provider == Provider::Gemini {
            gemini::close_streamed(&mut self.st);
        }
        self.st.close_all(how);
        self.phase = Phase::EndOwed;
        self.end_event();
    }

    /// The event is read: make room for the next.
    fn end_event(&mut self) {
        self.cursor = None;
        self.reader.clear_event();
    }

    /// Starts reading the event in the buffer.
    fn dispatch(&mut self) {
        if self.phase != Phase::Open {
            self.st.skipped.after_end += 1;
            return self.end_event();
        }
        let cap = self.ev.len();
        let overlong = self.reader.overlong(cap);
        let ev = Event {
            data: json::trim_ws(&self.ev[..self.reader.len.min(cap)]),
            name: self.reader.event_name(),
        };
        if overlong {
            self.st.skipped.overlong += 1;
            let step = overlong_event(self.provider, &ev, &mut self.st);
            if let Step::End(how) = step {
                return self.end_response(how);
            }
            return self.end_event();
        }
        if ev.data == b"[DONE]" && self.takes_done() {
            return self.end_response(Close::Complete);
        }
        // Room for the provider's own nesting around the arguments.
        let depth = self.cfg.max_depth.saturating_add(16);
        if json::validate(ev.data, depth).is_err() {
            self.st.skipped.not_json += 1;
            return self.end_event();
        }
        self.cursor = Some(Cursor::at(0));
    }

    fn takes_done(&self) -> bool {
        match self.provider {
            #[cfg(feature = "openai-chat")]
            Provider::OpenAiChat => true,
            #[cfg(feature = "openai-responses")]
            Provider::OpenAiResponses => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    fn write_end<S: Sink + ?Sized>(&self, s: &mut S) {
        s.put(b"{\"type\":\"END\",\"content\":{\"reason\":");
        match self.st.reason.len {
            Some(n) => put_json_string(s, &self.st.reason.buf[..n]),
            None => s.put(b"null"),
        }
        s.put(b"}}");
    }

    /// Ready for the next body: everything of this one forgotten but the counters.
    fn reset(&mut self) {
        self.reader = Reader::new(self.provider.framing());
        self.st.calls.reset();
        self.st.reason.len = None;
        self.st.gone = 0;
        #[cfg(feature = "gemini")]
        self.st.gemini.reset();
        self.cursor = None;
        self.phase = Phase::Open;
        self.body_over = false;
        self.tail_read = false;
    }
}

fn write_emit(ev: &Event<'_>, e: Emit, st: &State<'_>, s: &mut dyn Sink) {
    match e {
        Emit::Text { reasoning, at } => {
            s.put(match reasoning {
                false => b"{\"type\":\"TEXT\",\"content\":",
                true => b"{\"type\":\"REASONING\",\"content\":",
            });
            put_json_str(s, ev.str_at(at));
            s.put(b"}");
        }
        Emit::Error { at, string } => {
            s.put(b"{\"type\":\"ERROR\",\"content\":{\"message\":");
            match string {
                true => put_json_str(s, ev.str_at(at)),
                false => {
                    let raw = ev.at(at);
                    // The raw value as its compact text.
                    s.put(b"\"");
                    json::for_each_compact_run(raw, |run| crate::sink::put_escaped(s, run));
                    s.put(b"\"");
                }
            }
            s.put(b"}}");
        }
        Emit::NoSlot { id, name } => {
            st.calls
                .write_no_slot(id.map(|a| ev.str_at(a)), name.map(|a| ev.str_at(a)), s)
        }
    }
}

/// One step of the provider's reader.
fn step(provider: Provider, ev: &Event<'_>, cur: Cursor, st: &mut State<'_>) -> Step {
    match provider {
        #[cfg(feature = "openai-chat")]
        Provider::OpenAiChat => openai_chat::step(ev, cur, st),
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses => openai_responses::step(ev, cur, st),
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => anthropic::step(ev, cur, st),
        #[cfg(feature = "gemini")]
        Provider::Gemini => gemini::step(ev, cur, st),
        #[cfg(feature = "ollama")]
        Provider::Ollama => ollama::step(ev, cur, st),
    }
}

/// What can still be learnt from the kept start of an over-long event: which call it
/// carried arguments for (that call fails, rule 5), or that the response ended.
fn overlong_event(provider: Provider, ev: &Event<'_>, st: &mut State<'_>) -> Step {
    match provider {
        #[cfg(feature = "openai-chat")]
        Provider::OpenAiChat => openai_chat::overlong(ev, st),
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses => openai_responses::overlong(ev, st),
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => anthropic::overlong(ev, st),
        #[cfg(feature = "gemini")]
        Provider::Gemini => gemini::overlong(ev, st),
        #[cfg(feature = "ollama")]
        Provider::Ollama => ollama::overlong(ev, st),
    }
}

/// The error message of an error value: its `message` string, or the value itself.
pub(crate) fn error_emit(ev: &Event<'_>, error: &[u8]) -> Emit {
    if let Some(m) = valid::get(error, b"message").filter(|m| valid::string(m).is_some()) {
        return Emit::Error {
            at: ev.span(m),
            string: true,
        };
    }
    Emit::Error {
        at: ev.span(error),
        string: valid::string(error).is_some(),
    }
}

/// A non-negative integer value below 2^32.
pub(crate) fn as_u32(value: &[u8]) -> Option<u32> {
    let v = json::trim_ws(value);
    if v.is_empty() || v.len() > 10 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter()
        .try_fold(0u64, |n, &d| Some(n * 10 + (d - b'0') as u64))
        .filter(|&n| n <= u32::MAX as u64)
        .map(|n| n as u32)
}

/// A text delta's frame when `value` is a non-empty string (an empty delta gives nothing).
pub(crate) fn text_emit(ev: &Event<'_>, value: Option<&[u8]>, reasoning: bool) -> Option<Emit> {
    let v = value?;
    let s = valid::string(v)?;
    (!s.raw().is_empty()).then(|| Emit::Text {
        reasoning,
        at: ev.span(json::trim_ws(v)),
    })
}

#[cfg(test)]
mod tests;
