//! What the provider readers work with: the event in the buffer, their place in it, the
//! frames they ask for, and the state they share between events.

use super::calls::{Calls, Close};
use super::config::DecoderStats;
use crate::json::{self, valid, JsonStr};

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
    /// The members a reader found in one pass over the event, for its later steps (a
    /// value never has length 0, so `(0, 0)` is a member that was not there).
    pub(crate) spans: [Span; 4],
    /// A flag a reader keeps for a later step.
    pub(crate) flag: bool,
}

impl Cursor {
    /// Step `step` with nothing remembered.
    pub(crate) const fn at(step: u8) -> Self {
        Self {
            step,
            pos: 0,
            spans: [(0, 0); 4],
            flag: false,
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
    /// The provider's state for what it said (SPEC §8 rule 2), given back by a conversation
    /// (§10.2 rule 2): a `STATE` frame whose one member is the value at `at`.
    #[cfg(any(
        feature = "gemini",
        feature = "anthropic",
        feature = "openai-responses"
    ))]
    State { kind: StateKind, at: Span },
}

/// What a `STATE` frame carries: its member's key, and how its value is written.
#[cfg(any(
    feature = "gemini",
    feature = "anthropic",
    feature = "openai-responses"
))]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum StateKind {
    /// Gemini's `thoughtSignature` of the part whose frames follow.
    #[cfg(feature = "gemini")]
    ThoughtSignature,
    /// Gemini's `thoughtSignature` of a text part with no text: the whole part.
    #[cfg(feature = "gemini")]
    EmptyText,
    /// [`EmptyText`](Self::EmptyText) for a `thought` part.
    #[cfg(feature = "gemini")]
    EmptyThought,
    /// Anthropic's `signature` closing a thinking block.
    #[cfg(feature = "anthropic")]
    Signature,
    /// Anthropic's `redacted_thinking` block's `data`.
    #[cfg(feature = "anthropic")]
    RedactedThinking,
    /// A Responses `reasoning` item, its raw value compacted.
    #[cfg(feature = "openai-responses")]
    Reasoning,
}

#[cfg(any(
    feature = "gemini",
    feature = "anthropic",
    feature = "openai-responses"
))]
impl StateKind {
    /// The member's key, quoted, and its colon.
    pub(crate) fn key(self) -> &'static [u8] {
        match self {
            #[cfg(feature = "gemini")]
            Self::ThoughtSignature | Self::EmptyText | Self::EmptyThought => {
                b"\"thoughtSignature\":"
            }
            #[cfg(feature = "anthropic")]
            Self::Signature => b"\"signature\":",
            #[cfg(feature = "anthropic")]
            Self::RedactedThinking => b"\"redacted_thinking\":",
            #[cfg(feature = "openai-responses")]
            Self::Reasoning => b"\"reasoning\":",
        }
    }

    /// True when the value is a raw JSON value (written compacted), not a string token.
    pub(crate) fn is_raw(self) -> bool {
        #[cfg(feature = "openai-responses")]
        if self == Self::Reasoning {
            return true;
        }
        false
    }

    /// What follows the value: the rest of an empty part, then the closing braces.
    pub(crate) fn tail(self) -> &'static [u8] {
        match self {
            #[cfg(feature = "gemini")]
            Self::EmptyText => b",\"text\":\"\"}}",
            #[cfg(feature = "gemini")]
            Self::EmptyThought => b",\"text\":\"\",\"thought\":true}}",
            _ => b"}}",
        }
    }
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
    /// Its top level as validation noted it (nothing noted: walked).
    top: &'e json::TopMembers,
}

impl<'e> Event<'e> {
    /// The event the reader has in `buf` (as much of it as the buffer kept), with what its
    /// validation noted of its top level.
    pub(crate) fn in_buffer(
        buf: &'e [u8],
        reader: &'e crate::body_reader::Reader,
        top: &'e json::TopMembers,
    ) -> Self {
        Self {
            data: json::trim_ws(&buf[..reader.len.min(buf.len())]),
            name: reader.event_name(),
            top,
        }
    }

    /// The members of the event's data when it is an object, in order: from the notes its
    /// validation took, so each decoder's first look does not walk the event again.
    pub(crate) fn members(&self) -> Option<json::TopWalk<'e>> {
        self.top.walk(self.data)
    }

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

    /// The span of a member found, `(0, 0)` for one that was not.
    pub(crate) fn span_of(&self, part: Option<&[u8]>) -> Span {
        part.map_or((0, 0), |p| self.span(p))
    }

    /// The member at `span`, when it was found.
    pub(crate) fn member(&self, span: Span) -> Option<&'e [u8]> {
        (span.1 > span.0).then(|| self.at(span))
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
    pub(crate) buf: &'a mut [u8],
    pub(crate) len: Option<usize>,
}

impl Reason<'_> {
    /// Keeps `text` as the reason (cut to [`REASON_CAP`] on a character boundary).
    pub(crate) fn set(&mut self, text: JsonStr<'_>, skipped: &mut DecoderStats) {
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
    pub(crate) skipped: DecoderStats,
    /// Keys below 64 of calls already written or refused in this response, whose later
    /// pieces are not new calls.
    pub(crate) gone: u64,
    #[cfg(feature = "gemini")]
    pub(crate) gemini: super::json_path::Assembler<'a>,
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
        self.skipped.calls_started += 1;
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

/// The text (or reasoning) delta kept at `cur.spans[at]`, when there is one; then step `next`.
pub(crate) fn text_step(ev: &Event<'_>, cur: Cursor, at: usize, reasoning: bool, next: u8) -> Step {
    match text_emit(ev, ev.member(cur.spans[at]), reasoning) {
        Some(e) => Step::Emit(e, cur.then(next, 0)),
        None => Step::Next(cur.then(next, 0)),
    }
}

/// Reads the array member kept at `cur.spans[list]`, one element a step: the step stays
/// the same and remembers where the next element is; `each` reads one (and may ask for a
/// frame); after the last the reader goes on at step `after`. A member that is neither an
/// array nor `null` has the wrong shape.
pub(crate) fn element_step(
    ev: &Event<'_>,
    cur: Cursor,
    list: usize,
    after: u8,
    st: &mut State<'_>,
    each: impl FnOnce(&Event<'_>, &[u8], &mut State<'_>) -> Option<Emit>,
) -> Step {
    let mut next = cur;
    let Some(element) = next_element(ev, &mut next, list, after, st) else {
        return Step::Next(next);
    };
    match each(ev, element, st) {
        Some(e) => Step::Emit(e, next),
        None => Step::Next(next),
    }
}

/// The element of [`element_step`]'s array the cursor is at, the cursor moved past it; or,
/// past the last, `None` and the cursor at step `after`.
pub(crate) fn next_element<'e>(
    ev: &Event<'e>,
    cur: &mut Cursor,
    list: usize,
    after: u8,
    st: &mut State<'_>,
) -> Option<&'e [u8]> {
    let pos = match cur.pos {
        // Element offsets are never 0: the event's data starts with its own bracket.
        0 => match ev.member(cur.spans[list]) {
            Some(v) if valid::Arr::of(v).is_some() => ev.span(v).0 + 1,
            Some(v) => {
                if json::trim_ws(v) != b"null" {
                    st.skipped.bad_shape += 1;
                }
                *cur = cur.then(after, 0);
                return None;
            }
            None => {
                *cur = cur.then(after, 0);
                return None;
            }
        },
        pos => pos,
    };
    // Read over the whole data, so that the elements' offsets are the event's own.
    let mut elements = valid::Arr::resume(ev.data, pos as usize);
    let element = elements.next();
    *cur = match element {
        Some(_) => cur.then(cur.step, elements.pos() as u32),
        None => cur.then(after, 0),
    };
    element
}

/// The `STATE` frame of a string member, when it is one.
#[cfg(any(feature = "gemini", feature = "anthropic"))]
pub(crate) fn state_emit(ev: &Event<'_>, value: Option<&[u8]>, kind: StateKind) -> Option<Emit> {
    let v = json::trim_ws(value?);
    valid::string(v).map(|_| Emit::State {
        kind,
        at: ev.span(v),
    })
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
