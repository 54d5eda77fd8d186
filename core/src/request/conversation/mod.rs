//! The conversation (SPEC §10.2): system text, user texts, the model's turns as the
//! decoder gave them and the results of their calls, in the host's memory, kept whole
//! exchange by exchange when room runs short.

mod escaping;
mod place;
mod room;

use escaping::{
    canonical_eq, canonical_len, escaped_compact_len, escaped_len, put_canonical, put_field,
};

use super::store::{
    read_u32, write_u32, Entries, Entry, Kind, Part, Tag, BROKEN_ARGS, CALL_FIXED, FIELD, HAS_ID,
    HAS_RESULT, HEAD, IS_ERROR, RESULT_ESCAPED, WORD_ID,
};
use crate::frame::{Frame, FrameError, FrameKind};
use crate::json::{self, valid, JsonStr};
use crate::provider::Provider;
use crate::sink::{put_escaped, Exact, Sink};

/// Why an entry or a frame was refused. Nothing changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ConversationError {
    /// The entry does not fit even with every other entry evicted that may be; it needs
    /// this many bytes of the conversation's memory.
    NoRoom {
        /// Bytes the entry needs.
        needed: usize,
    },
    /// The bytes are not a valid frame.
    Malformed(FrameError),
    /// A `TEXT` or `REASONING` frame whose content is not a string, or a `STATE` frame
    /// whose content is not one of the shapes the decoders write.
    BadContent,
    /// A frame of the model's response came with no response begun.
    NoResponse,
    /// A `TOOL_CALL` or `TOOL_RESULT` without a string `name`.
    NoName,
    /// A `TOOL_RESULT` for a call the conversation does not hold.
    UnknownCall,
    /// A second `TOOL_RESULT` for a call.
    AlreadyAnswered,
    /// A `TOOL_RESULT` with neither `result` nor `error`.
    NoOutcome,
    /// An empty system or user text (no provider takes an empty message).
    EmptyText,
}

impl core::fmt::Display for ConversationError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoRoom { needed } => {
                write!(f, "the entry needs {needed} bytes and cannot get them")
            }
            Self::Malformed(e) => write!(f, "not a valid frame: {e}"),
            Self::BadContent => f.write_str("a frame content of the wrong shape"),
            Self::NoResponse => f.write_str("a response frame with no response begun"),
            Self::NoName => f.write_str("no string name"),
            Self::UnknownCall => f.write_str("a result for a call the conversation does not hold"),
            Self::AlreadyAnswered => f.write_str("the call already has its result"),
            Self::NoOutcome => f.write_str("a TOOL_RESULT with neither result nor error"),
            Self::EmptyText => f.write_str("an empty text"),
        }
    }
}

impl core::error::Error for ConversationError {}

impl From<FrameError> for ConversationError {
    fn from(e: FrameError) -> Self {
        Self::Malformed(e)
    }
}

/// What a frame came to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Pushed {
    /// Kept in the conversation.
    Kept,
    /// Not part of what goes back to a provider (a type the conversation does not keep, or
    /// reasoning and state the turn's provider does not take back); nothing changed.
    Ignored,
    /// `END` or `ERROR`: the response is over.
    Ended,
}

/// The conversation: entries in memory the host hands in, oldest first (SPEC §10.2).
///
/// Memory: each entry takes 5 bytes beside its text; an assistant turn takes 6 bytes,
/// each of its parts 5, and each field of a part 4 (a text part 13 beside its text, a call
/// 34 beside its id, name, args and result). Texts are kept escaped as JSON writes them, so
/// a body is written by copying.
#[derive(Debug)]
pub struct Conversation<'b> {
    buf: &'b mut [u8],
    len: usize,
    /// A response is being read into the last entry.
    open: bool,
    /// The last part of the open turn takes more text of its kind.
    merge: Option<Tag>,
    pin_first_user: bool,
    evicted: u32,
    next_seq: u32,
}

/// Where a signature goes in a part: the start of its sig field.
const SIG_FIELD: usize = HEAD;

impl<'b> Conversation<'b> {
    /// An empty conversation in `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Self {
            buf,
            len: 0,
            open: false,
            merge: None,
            pin_first_user: false,
            evicted: 0,
            next_seq: 0,
        }
    }

    /// Keeps the first user text whatever else is evicted (SPEC §10.2 rule 3).
    pub fn pin_first_user(&mut self, pin: bool) {
        self.pin_first_user = pin;
        let first_user = self.entries().find(|e| e.kind.is_user()).map(|e| e.start);
        if let Some(at) = first_user {
            self.buf[at] = if pin { Kind::PinnedUser } else { Kind::User } as u8;
        }
    }

    /// Bytes of memory in use.
    pub fn used(&self) -> usize {
        self.len
    }

    /// Bytes of memory the host gave.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Entries evicted so far (a user text, or an exchange with its results, counts one).
    pub fn evicted(&self) -> u32 {
        self.evicted
    }

    /// Entries held, the system text included.
    pub fn len(&self) -> usize {
        self.entries().count()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every entry (the memory is kept; the eviction count restarts).
    pub fn clear(&mut self) {
        self.len = 0;
        self.open = false;
        self.merge = None;
        self.evicted = 0;
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub(crate) fn entries(&self) -> Entries<'_> {
        Entries {
            buf: &self.buf[..self.len],
            pos: 0,
        }
    }

    /// The system text, written first and never evicted; replaces the one held.
    pub fn set_system(&mut self, text: &str) -> Result<(), ConversationError> {
        if text.is_empty() {
            return Err(ConversationError::EmptyText);
        }
        let n = escaped_len(text.as_bytes());
        let old = self
            .entries()
            .find(|e| e.kind == Kind::System)
            .map_or(0, |e| e.size());
        let needed = (HEAD + n).saturating_sub(old);
        self.make_room(needed, None)?;
        if old > 0 {
            self.remove(0, old);
        }
        self.insert(0, HEAD + n);
        self.buf[0] = Kind::System as u8;
        write_u32(self.buf, 1, n);
        put_escaped(&mut Exact::at(self.buf, HEAD), text.as_bytes());
        Ok(())
    }

    /// A user text. It ends a response still open.
    pub fn push_user(&mut self, text: &str) -> Result<(), ConversationError> {
        if text.is_empty() {
            return Err(ConversationError::EmptyText);
        }
        let n = escaped_len(text.as_bytes());
        self.make_room(HEAD + n, None)?;
        self.close();
        let pinned = self.pin_first_user && !self.entries().any(|e| e.kind.is_user());
        let at = self.len;
        self.insert(at, HEAD + n);
        self.buf[at] = if pinned { Kind::PinnedUser } else { Kind::User } as u8;
        write_u32(self.buf, at + 1, n);
        put_escaped(&mut Exact::at(self.buf, at + HEAD), text.as_bytes());
        Ok(())
    }

    /// Begins the assistant turn of one response from `provider`; the decoder's frames of
    /// that response follow through [`push_frame`](Self::push_frame). Ends one still open.
    pub fn begin_response(&mut self, provider: Provider) -> Result<(), ConversationError> {
        self.make_room(HEAD + 1, None)?;
        self.close();
        let at = self.len;
        self.insert(at, HEAD + 1);
        self.buf[at] = Kind::Turn as u8;
        write_u32(self.buf, at + 1, 1);
        self.buf[at + HEAD] = provider_index(provider);
        self.open = true;
        Ok(())
    }

    /// Ends the response being read (the decoder's `END` does it too).
    pub fn end_response(&mut self) {
        self.close();
    }

    fn close(&mut self) {
        self.open = false;
        self.merge = None;
    }

    /// A frame: the decoder's `TEXT`, `REASONING`, `STATE`, `TOOL_CALL`, `END` and `ERROR`
    /// go into the response begun; the wrapper's `TOOL_RESULT`s go beside their calls;
    /// other types are ignored.
    pub fn push_frame(&mut self, frame: &[u8]) -> Result<Pushed, ConversationError> {
        let f = Frame::parse_validated(frame, json::DEFAULT_MAX_DEPTH)?;
        match f.kind() {
            FrameKind::ToolResult => self.push_result(&f),
            FrameKind::End | FrameKind::Error => {
                let was = self.open;
                self.close();
                Ok(if was { Pushed::Ended } else { Pushed::Ignored })
            }
            FrameKind::Text => self.push_text(&f, Tag::Text),
            FrameKind::ToolCall => self.push_call(&f),
            FrameKind::Other(ty) if ty.eq_text(b"REASONING") => self.push_text(&f, Tag::Thought),
            FrameKind::Other(ty) if ty.eq_text(b"STATE") => self.push_state(&f),
            FrameKind::Other(_) => Ok(Pushed::Ignored),
        }
    }

    /// The open turn: its start and its provider.
    fn open_turn(&self) -> Result<(usize, Option<Provider>), ConversationError> {
        if !self.open {
            return Err(ConversationError::NoResponse);
        }
        let e = self.entries().last().ok_or(ConversationError::NoResponse)?;
        let p = Provider::ALL.get(usize::from(e.provider_index())).copied();
        Ok((e.start, p))
    }

    fn last_part(&self) -> Option<Part<'_>> {
        let e = self.entries().last()?;
        e.parts().last()
    }

    fn push_text(&mut self, f: &Frame<'_>, tag: Tag) -> Result<Pushed, ConversationError> {
        let text = f
            .content()?
            .and_then(crate::frame::as_string)
            .ok_or(ConversationError::BadContent)?;
        let (_, provider) = self.open_turn()?;
        let pending_sig = self.last_part().is_some_and(|p| p.tag == Tag::Sig);
        if tag == Tag::Thought && !keeps_thoughts(provider, pending_sig) {
            return Ok(Pushed::Ignored);
        }
        let n = canonical_len(text);
        if self.merge == Some(tag) {
            self.make_room(n, None)?;
            self.append_to_last_part(|s| put_canonical(s, text), n);
            return Ok(Pushed::Kept);
        }
        if pending_sig {
            self.make_room(FIELD + n, None)?;
            self.retag_last_part(tag);
            self.append_to_last_part(|s| put_field(s, n, |s| put_canonical(s, text)), FIELD + n);
            self.merge = None;
        } else {
            self.make_room(HEAD + 2 * FIELD + n, None)?;
            self.append_part(tag, 2 * FIELD + n, |s| {
                put_field(s, 0, |_| {});
                put_field(s, n, |s| put_canonical(s, text));
            });
            self.merge = Some(tag);
        }
        Ok(Pushed::Kept)
    }

    fn push_state(&mut self, f: &Frame<'_>) -> Result<Pushed, ConversationError> {
        let content = f.content()?.ok_or(ConversationError::BadContent)?;
        let (_, provider) = self.open_turn()?;
        let mut fields = valid::Obj::of(content).ok_or(ConversationError::BadContent)?;
        let (key, value) = fields.next().ok_or(ConversationError::BadContent)?;
        match key.raw() {
            #[cfg(feature = "gemini")]
            b"thoughtSignature" => {
                let sig = string(value)?;
                let (mut text, mut thought) = (None, false);
                for (k, v) in fields {
                    match k.raw() {
                        b"text" => text = Some(string(v)?),
                        b"thought" => thought = valid::is_true(v),
                        _ => {}
                    }
                }
                if provider != Some(Provider::Gemini) {
                    return Ok(Pushed::Ignored);
                }
                let s = canonical_len(sig);
                let tag = if thought { Tag::Thought } else { Tag::Text };
                match text {
                    // A whole part that had no text: it stands alone.
                    Some(t) => {
                        let n = canonical_len(t);
                        self.make_room(HEAD + 2 * FIELD + s + n, None)?;
                        self.append_part(tag, 2 * FIELD + s + n, |o| {
                            put_field(o, s, |o| put_canonical(o, sig));
                            put_field(o, n, |o| put_canonical(o, t));
                        });
                    }
                    // The part it came on follows.
                    None => {
                        self.make_room(HEAD + FIELD + s, None)?;
                        self.append_part(Tag::Sig, FIELD + s, |o| {
                            put_field(o, s, |o| put_canonical(o, sig))
                        });
                    }
                }
                self.merge = None;
                Ok(Pushed::Kept)
            }
            #[cfg(feature = "anthropic")]
            b"signature" => {
                let sig = string(value)?;
                if provider != Some(Provider::Anthropic) {
                    return Ok(Pushed::Ignored);
                }
                let s = canonical_len(sig);
                let last = self
                    .last_part()
                    .map(|p| (p.tag, p.start, p.sig().is_empty()));
                match last {
                    // It closes the thinking block whose text came before it.
                    Some((Tag::Thought, _, true)) if self.merge == Some(Tag::Thought) => {
                        self.make_room(s, None)?;
                        // Room may have moved the turn: find the part again.
                        if let Some(start) = self.last_part().map(|p| p.start) {
                            self.insert_in_part(start, SIG_FIELD, s, |o| put_canonical(o, sig));
                        }
                    }
                    _ => {
                        self.make_room(HEAD + 2 * FIELD + s, None)?;
                        self.append_part(Tag::Thought, 2 * FIELD + s, |o| {
                            put_field(o, s, |o| put_canonical(o, sig));
                            put_field(o, 0, |_| {});
                        });
                    }
                }
                self.merge = None;
                Ok(Pushed::Kept)
            }
            #[cfg(feature = "anthropic")]
            b"redacted_thinking" => {
                let data = string(value)?;
                if provider != Some(Provider::Anthropic) {
                    return Ok(Pushed::Ignored);
                }
                let n = canonical_len(data);
                self.make_room(HEAD + FIELD + n, None)?;
                self.append_part(Tag::Redacted, FIELD + n, |o| {
                    put_field(o, n, |o| put_canonical(o, data))
                });
                self.merge = None;
                Ok(Pushed::Kept)
            }
            #[cfg(feature = "openai-responses")]
            b"reasoning" => {
                if valid::Obj::of(value).is_none() {
                    return Err(ConversationError::BadContent);
                }
                if provider != Some(Provider::OpenAiResponses) {
                    return Ok(Pushed::Ignored);
                }
                let n = json::compact_len(value);
                let id = valid::get(value, b"id");
                // Known once here, so writing a body never reads the item again.
                let tag = match valid::get(value, b"encrypted_content") {
                    Some(v) if json::trim_ws(v) != b"null" => Tag::Item,
                    _ => Tag::ItemBare,
                };
                let held = |c: &Self| {
                    let e = c.entries().last()?;
                    let p = e.parts().find(|p| {
                        matches!(p.tag, Tag::Item | Tag::ItemBare)
                            && id.is_some()
                            && valid::get(p.sig(), b"id") == id
                    })?;
                    Some((e.start, p.start, p.size()))
                };
                // The same item again (the terminal event repeats the response's items):
                // the last one stands, where the first one was.
                if let Some((_, _, old)) = held(self) {
                    self.make_room((HEAD + FIELD + n).saturating_sub(old), None)?;
                    let Some((turn, at, old)) = held(self) else {
                        return Ok(Pushed::Ignored);
                    };
                    let total = read_u32(self.buf, turn + 1);
                    self.remove(at, old);
                    self.insert(at, HEAD + FIELD + n);
                    self.buf[at] = tag as u8;
                    write_u32(self.buf, at + 1, FIELD + n);
                    put_field(&mut Exact::at(self.buf, at + HEAD), n, |o| o.put_raw(value));
                    write_u32(self.buf, turn + 1, total + HEAD + FIELD + n - old);
                    return Ok(Pushed::Kept);
                }
                self.make_room(HEAD + FIELD + n, None)?;
                self.append_part(tag, FIELD + n, |o| put_field(o, n, |o| o.put_raw(value)));
                self.merge = None;
                Ok(Pushed::Kept)
            }
            _ => Err(ConversationError::BadContent),
        }
    }

    fn push_call(&mut self, f: &Frame<'_>) -> Result<Pushed, ConversationError> {
        let c = f.tool_call()?;
        let name = c.name.ok_or(ConversationError::NoName)?;
        self.open_turn()?;
        let id = c.id.filter(|id| !id.raw().is_empty());
        let broken = c.args_error.is_some() && crate::frame::as_string(c.args).is_some();
        let args_text = crate::frame::as_string(c.args).filter(|_| broken);
        let (i, nm) = (id.map_or(0, canonical_len), canonical_len(name));
        let (a, a_escaped) = match args_text {
            Some(t) => (canonical_len(t), 0),
            None => (json::compact_len(c.args), escaped_compact_len(c.args)),
        };
        let body = CALL_FIXED + 4 * FIELD + i + nm + a;
        let pending_sig = self.last_part().is_some_and(|p| p.tag == Tag::Sig);
        let seq = self.next_seq;
        let mut flags = if broken { BROKEN_ARGS } else { 0 };
        if let Some(id) = id {
            flags |= HAS_ID;
            // Decoded, as it is stored (a word needs no escape: the stored text is the same).
            let mut word = true;
            id.for_each_decoded_run(|run| {
                word &= run
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            });
            if word {
                flags |= WORD_ID;
            }
        }
        let write = |o: &mut dyn Sink| {
            o.put(&[flags]);
            o.put(&seq.to_le_bytes());
            o.put(&(a_escaped as u32).to_le_bytes());
            o.put(&0u32.to_le_bytes());
            put_field(o, i, |o| {
                if let Some(id) = id {
                    put_canonical(o, id)
                }
            });
            put_field(o, nm, |o| put_canonical(o, name));
            put_field(o, a, |o| match args_text {
                Some(t) => put_canonical(o, t),
                None => o.put_raw(c.args),
            });
            put_field(o, 0, |_| {});
        };
        if pending_sig {
            self.make_room(body, None)?;
            self.retag_last_part(Tag::Call);
            self.append_to_last_part(write, body);
        } else {
            self.make_room(HEAD + FIELD + body, None)?;
            self.append_part(Tag::Call, FIELD + body, |o| {
                put_field(o, 0, |_| {});
                write(o);
            });
        }
        self.next_seq += 1;
        self.merge = None;
        Ok(Pushed::Kept)
    }

    fn push_result(&mut self, f: &Frame<'_>) -> Result<Pushed, ConversationError> {
        let r = f.tool_result()?;
        let name = r.name.ok_or(ConversationError::NoName)?;
        let id = r.id.filter(|id| !id.raw().is_empty());
        let (value, is_error) = match (r.result, r.error) {
            (Some(v), _) => (v, false),
            (None, Some(e)) => (e, true),
            (None, None) => return Err(ConversationError::NoOutcome),
        };
        let seq = self.find_call(id, name)?;
        let text = crate::frame::as_string(value);
        let error_text = text.filter(|_| is_error);
        let n = match (is_error, text) {
            (true, Some(t)) => canonical_len(t),
            // An error that is not a string: its JSON text is the message.
            (true, None) => escaped_compact_len(value),
            // A string result is kept canonical, so it is written back by copying.
            (false, Some(t)) => canonical_len(t) + 2,
            (false, None) => json::compact_len(value),
        };
        self.make_room(n, Some(seq))?;
        let (part, fixed, part_end, entry) = self
            .call_by_seq(seq)
            .map(|(p, e)| {
                (
                    p.start,
                    p.start + HEAD + FIELD + p.sig().len(),
                    p.start + p.size(),
                    e,
                )
            })
            .ok_or(ConversationError::UnknownCall)?;
        self.insert(part_end, n);
        {
            let mut o = Exact::at(self.buf, part_end);
            match (is_error, error_text, text) {
                (true, Some(t), _) => put_canonical(&mut o, t),
                (true, None, _) => {
                    json::for_each_compact_run(value, |run| put_escaped(&mut o, run))
                }
                (false, _, Some(t)) => {
                    o.put(b"\"");
                    put_canonical(&mut o, t);
                    o.put(b"\"");
                }
                (false, _, None) => o.put_raw(value),
            }
        }
        self.grow(part_end - FIELD, n);
        self.grow(part + 1, n);
        self.grow(entry + 1, n);
        self.buf[fixed] |= HAS_RESULT | if is_error { IS_ERROR } else { 0 };
        if !is_error && text.is_none() {
            write_u32(self.buf, fixed + RESULT_ESCAPED, escaped_compact_len(value));
        }
        Ok(Pushed::Kept)
    }

    /// The call a result answers: by id, or (no id) the oldest call of that name without
    /// a result and without an id.
    fn find_call(
        &self,
        id: Option<JsonStr<'_>>,
        name: JsonStr<'_>,
    ) -> Result<u32, ConversationError> {
        let mut answered = false;
        for e in self.entries().filter(|e| e.kind == Kind::Turn) {
            for p in e.parts().filter(|p| p.tag == Tag::Call) {
                let c = p.call();
                let matches = match (id, c.id) {
                    (Some(want), Some(have)) => canonical_eq(want, have),
                    (None, None) => canonical_eq(name, c.name),
                    _ => false,
                };
                if matches && c.result.is_none() {
                    return Ok(c.seq);
                }
                answered |= matches;
            }
        }
        Err(if answered {
            ConversationError::AlreadyAnswered
        } else {
            ConversationError::UnknownCall
        })
    }

    /// The call numbered `seq` and the start of its turn.
    fn call_by_seq(&self, seq: u32) -> Option<(Part<'_>, usize)> {
        self.entries()
            .filter(|e| e.kind == Kind::Turn)
            .find_map(|e| {
                e.parts()
                    .find(|p| p.tag == Tag::Call && p.call().seq == seq)
                    .map(|p| (p, e.start))
            })
    }
}

/// Whether a turn of `provider` keeps reasoning text: Anthropic's thinking goes back
/// with its signature; a Gemini thought part only when it carried one.
fn keeps_thoughts(provider: Option<Provider>, pending_sig: bool) -> bool {
    match provider {
        #[cfg(feature = "anthropic")]
        Some(Provider::Anthropic) => true,
        #[cfg(feature = "gemini")]
        Some(Provider::Gemini) => pending_sig,
        _ => false,
    }
}

pub(crate) fn provider_index(p: Provider) -> u8 {
    Provider::ALL.iter().position(|&q| q == p).unwrap_or(0) as u8
}

fn string(v: &[u8]) -> Result<JsonStr<'_>, ConversationError> {
    crate::frame::as_string(v).ok_or(ConversationError::BadContent)
}
