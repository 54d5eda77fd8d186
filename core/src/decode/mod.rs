//! Stream decoders: a model API's streamed HTTP response body in, the frames of SPEC §1
//! out (SPEC §8), for the wrapper's response path.
//!
//! A [`Decoder`] reads one provider's format ([`Provider`]) from bytes split anywhere and
//! writes canonical one-line frames into the host's buffer: `TEXT` and `REASONING` deltas
//! as they come, the provider's state for what it said as `STATE` (for a conversation to
//! give back: a Gemini `thoughtSignature` right before its part's frames, an Anthropic
//! thinking `signature` or `redacted_thinking` data, a Responses `reasoning` item), each
//! tool call as one `TOOL_CALL` once it is complete (broken arguments with `args_error`,
//! so the wrapper answers them), provider errors as `ERROR`, and one `END` with the
//! provider's finish reason. All memory is the host's: a byte arena sized
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
//! use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
//! use polyweave_tool_adapter::Provider;
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
mod config;
#[cfg(feature = "gemini")]
mod json_path;
mod step;

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

pub use calls::CallSlot;
pub(crate) use calls::{Calls, Close};

pub(crate) use crate::provider::Provider;
pub use config::{DecoderConfig, DecoderStats, PATH_CAP, REASON_CAP};
pub(crate) use step::{Cursor, Emit, Event, State, Step};

use crate::body_reader::{Fed, Framing, Reader};
use crate::error::StorageError;
use crate::json;
use crate::sink::{put_json_str, put_json_string, write_within, Sink};
use step::Reason;

use crate::json::BufferTooSmall;

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
    /// The top level of the event being read, noted as it was validated.
    top: json::TopMembers,
    st: State<'a>,
    /// The event being read, when there is one.
    cursor: Option<Cursor>,
    /// A frame the reader asked for that did not fit the host's buffer, and where to go on
    /// after it (`None`: it is an `ERROR` that ends the response).
    owed: Option<(Emit, Option<Cursor>)>,
    phase: Phase,
    /// The host said the body is over.
    body_over: bool,
    /// The event left without its blank line at the end of the body has been read.
    tail_read: bool,
}

impl<'a> Decoder<'a> {
    /// A decoder for `provider` over `slots` (the most calls open at once) and `arena`
    /// (at least [`DecoderConfig::arena_len`] bytes).
    // Out of line: inlined into the host's code (LTO at opt-level "z"), its set-up took about
    // 0.4 KiB more of the footprint probe's flash than the call does.
    #[inline(never)]
    pub fn new(
        provider: Provider,
        cfg: DecoderConfig,
        slots: &'a mut [CallSlot],
        arena: &'a mut [u8],
    ) -> Result<Self, StorageError> {
        if cfg.id_cap > u16::MAX as usize
            || cfg.name_cap > u16::MAX as usize
            || cfg.args_cap > u32::MAX as usize
            || cfg.event_cap < 16
            || cfg.event_cap > u32::MAX as usize
            || cfg.max_depth == 0
        {
            return Err(StorageError::BadConfig);
        }
        let needed = cfg.arena_len(slots.len());
        if needed == usize::MAX || arena.len() < needed {
            return Err(StorageError::ArenaTooSmall {
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
            reader: Reader::new(Framing::of(provider)),
            top: json::TopMembers::NONE,
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
                skipped: DecoderStats::default(),
                gone: 0,
                #[cfg(feature = "gemini")]
                gemini: json_path::Assembler::new(path),
            },
            cursor: None,
            owed: None,
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

    /// What it skipped so far, by kind, and the calls it saw.
    pub fn stats(&self) -> DecoderStats {
        DecoderStats {
            cut: self.st.skipped.cut + self.st.calls.cut,
            ..self.st.skipped
        }
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
        // A buffer of `max_frame_len` takes any frame: each is then written once, not
        // measured first.
        let whole = out.len() >= self.cfg.max_frame_len();
        loop {
            if let Some(i) = self.st.calls.next_ready() {
                let n = write_within(out, whole, |s| self.st.calls.write_frame(i, s))?;
                self.st.calls.free(i);
                self.st.skipped.calls_written += 1;
                return Ok(Some(n));
            }
            if let Some(cur) = self.cursor {
                let ev = Event::in_buffer(self.ev, &self.reader, &self.top);
                // A frame asked for earlier that did not fit is written first: the step that
                // asked for it has already changed the state (a refused call is counted and
                // its key is gone), so it must not run twice.
                let (e, then) = match self.owed.take() {
                    Some(owed) => owed,
                    None => match step(self.provider, &ev, cur, &mut self.st) {
                        Step::Emit(e, next) => (e, Some(next)),
                        Step::Fail(e) => (e, None),
                        Step::Next(next) => {
                            self.cursor = Some(next);
                            continue;
                        }
                        Step::Done => {
                            self.end_event();
                            continue;
                        }
                        Step::End(how) => {
                            self.end_response(how);
                            continue;
                        }
                    },
                };
                // A call the same step completed (a new Gemini call ends a streamed one)
                // came first: it is written first.
                if self.st.calls.next_ready().is_some() {
                    self.owed = Some((e, then));
                    continue;
                }
                let n = match write_within(out, whole, |s| write_emit(&ev, e, &self.st, s)) {
                    Ok(n) => n,
                    Err(short) => {
                        self.owed = Some((e, then));
                        return Err(short);
                    }
                };
                if let Emit::NoSlot { .. } = e {
                    self.st.skipped.calls_written += 1;
                }
                match then {
                    Some(next) => self.cursor = Some(next),
                    // An error ends the response: calls still open are cut off, and `END`
                    // keeps the finish reason given before the error (the SDKs keep it too).
                    None => self.end_response(Close::Incomplete),
                }
                return Ok(Some(n));
            }
            if self.phase == Phase::EndOwed {
                let n = write_within(out, whole, |s| self.write_end(s))?;
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
                    // Calls still open are cut off (a Gemini call streaming its arguments
                    // is not: each value arrives whole, and `end_response` closes it).
                    self.end_response(Close::Incomplete);
                    continue;
                }
                self.reset();
            }
            return Ok(None);
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
        let overlong = self.reader.overlong(self.ev.len());
        // Nothing noted until it is validated (an overlong event never is).
        let ev = Event::in_buffer(self.ev, &self.reader, &json::TopMembers::NONE);
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
        if json::validate_noted(ev.data, depth, &mut self.top).is_err() {
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
        self.reader = Reader::new(Framing::of(self.provider));
        self.st.calls.reset();
        self.st.reason.len = None;
        self.st.gone = 0;
        #[cfg(feature = "gemini")]
        self.st.gemini.reset();
        self.cursor = None;
        self.owed = None;
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
        #[cfg(any(
            feature = "gemini",
            feature = "anthropic",
            feature = "openai-responses"
        ))]
        Emit::State { kind, at } => {
            s.put(b"{\"type\":\"STATE\",\"content\":{");
            s.put(kind.key());
            match kind.is_raw() {
                // An item goes back as it came: only the white space between tokens goes.
                true => s.put_raw(ev.at(at)),
                false => put_json_str(s, ev.str_at(at)),
            }
            s.put(kind.tail());
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
