//! The conversation's bytes in the host's buffer: entries one after another, each a kind
//! byte and a length, an assistant turn holding its parts the same way.
//!
//! ```text
//! entry:  [kind u8][len u32 LE][payload: len bytes]
//! turn:   [provider u8] part*
//! part:   [tag u8][len u32 LE][data: len bytes]
//! field:  [len u32 LE][bytes]
//! ```
//!
//! Texts are kept as the inside of a canonical JSON string (escaped, without quotes) and
//! values as compact JSON, so a body is written by copying: the cost of escaping is paid
//! once, when an entry comes in. Every part that can carry a signature starts with it, so a
//! signature that comes before its part (Gemini) becomes that part by appending to it.

/// Bytes of an entry's or a part's head: its kind and its length.
pub(crate) const HEAD: usize = 5;
/// Bytes of a field's length.
pub(crate) const FIELD: usize = 4;

/// What an entry is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    System = 1,
    User = 2,
    /// The first user text, kept whatever else is evicted.
    PinnedUser = 3,
    Turn = 4,
}

impl Kind {
    pub(crate) fn of(b: u8) -> Option<Self> {
        Some(match b {
            1 => Kind::System,
            2 => Kind::User,
            3 => Kind::PinnedUser,
            4 => Kind::Turn,
            _ => return None,
        })
    }

    pub(crate) fn is_user(self) -> bool {
        matches!(self, Kind::User | Kind::PinnedUser)
    }
}

/// What a part of an assistant turn is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tag {
    /// `sig, text`: assistant text (Gemini: one part, with its `thoughtSignature`).
    Text = 1,
    /// `sig, text`: reasoning text (Anthropic `thinking` with its `signature`, a Gemini
    /// thought part with its `thoughtSignature`).
    Thought = 2,
    /// `data`: an Anthropic `redacted_thinking` block's data.
    Redacted = 3,
    /// `item`: a Responses `reasoning` item as received, compact JSON.
    Item = 4,
    /// `sig, [flags u8][seq u32][args_escaped u32][result_escaped u32], id, name, args,
    /// result`: a tool call and, once it came, its result, with the lengths the args' and the
    /// result's JSON texts take escaped (written as a string, they are counted, not read).
    Call = 5,
    /// `sig`: a Gemini signature waiting for the part it came on.
    Sig = 6,
    /// `item`: a Responses `reasoning` item without `encrypted_content`, which is never
    /// written (with `store:false` the API cannot find it), kept to be replaced by the
    /// terminal event's copy.
    ItemBare = 7,
}

impl Tag {
    pub(crate) fn of(b: u8) -> Option<Self> {
        Some(match b {
            1 => Tag::Text,
            2 => Tag::Thought,
            3 => Tag::Redacted,
            4 => Tag::Item,
            5 => Tag::Call,
            6 => Tag::Sig,
            7 => Tag::ItemBare,
            _ => return None,
        })
    }

    /// Provider state or reasoning: what is dropped first when room is short.
    pub(crate) fn is_state(self) -> bool {
        matches!(
            self,
            Tag::Thought | Tag::Redacted | Tag::Item | Tag::ItemBare | Tag::Sig
        )
    }
}

/// Call flags.
pub(crate) const BROKEN_ARGS: u8 = 1;
pub(crate) const HAS_RESULT: u8 = 2;
pub(crate) const IS_ERROR: u8 = 4;
pub(crate) const HAS_ID: u8 = 8;
/// The id is all ASCII letters, digits, `_` and `-` (Anthropic takes no other), found once
/// when the call comes rather than at every body.
pub(crate) const WORD_ID: u8 = 16;
/// A call's fixed bytes after its signature: flags, its number in the conversation and the
/// two escaped lengths.
pub(crate) const CALL_FIXED: usize = 13;
/// Where a call's result's escaped length is, from its flags.
pub(crate) const RESULT_ESCAPED: usize = 9;

pub(crate) fn read_u32(b: &[u8], at: usize) -> usize {
    match b.get(at..at + 4) {
        Some(&[a, b1, c, d]) => u32::from_le_bytes([a, b1, c, d]) as usize,
        _ => 0,
    }
}

pub(crate) fn write_u32(b: &mut [u8], at: usize, v: usize) {
    if let Some(dst) = b.get_mut(at..at + 4) {
        dst.copy_from_slice(&(v as u32).to_le_bytes());
    }
}

/// One entry, as read.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Entry<'a> {
    pub(crate) kind: Kind,
    /// Where the entry's head starts in the buffer.
    pub(crate) start: usize,
    pub(crate) payload: &'a [u8],
}

impl<'a> Entry<'a> {
    /// Bytes the entry takes, head included.
    pub(crate) fn size(&self) -> usize {
        HEAD + self.payload.len()
    }

    /// A turn's provider index (in `Provider::ALL`).
    pub(crate) fn provider_index(&self) -> u8 {
        self.payload.first().copied().unwrap_or(u8::MAX)
    }

    /// A turn's parts.
    pub(crate) fn parts(&self) -> Parts<'a> {
        Parts {
            data: self.payload,
            pos: 1.min(self.payload.len()),
            base: self.start + HEAD,
        }
    }

    /// Whether a turn holds a call.
    pub(crate) fn has_calls(&self) -> bool {
        self.kind == Kind::Turn && self.parts().any(|p| p.tag == Tag::Call)
    }
}

/// The entries of a buffer, oldest first.
pub(crate) struct Entries<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        let start = self.pos;
        let kind = Kind::of(*self.buf.get(start)?)?;
        let len = read_u32(self.buf, start + 1);
        let payload = self.buf.get(start + HEAD..start + HEAD + len)?;
        self.pos = start + HEAD + len;
        Some(Entry {
            kind,
            start,
            payload,
        })
    }
}

/// One part of a turn, as read.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Part<'a> {
    pub(crate) tag: Tag,
    /// Where the part's head starts in the buffer.
    pub(crate) start: usize,
    pub(crate) data: &'a [u8],
}

impl<'a> Part<'a> {
    pub(crate) fn size(&self) -> usize {
        HEAD + self.data.len()
    }

    /// The fields after the fixed bytes of the part (a call's flags and number).
    pub(crate) fn fields(&self) -> Fields<'a> {
        Fields {
            data: self.data,
            pos: 0,
        }
    }

    /// The signature every signable part starts with (empty: none).
    pub(crate) fn sig(&self) -> &'a [u8] {
        self.fields().next().unwrap_or(&[])
    }

    /// A text or thought part's text.
    pub(crate) fn text(&self) -> &'a [u8] {
        self.fields().nth(1).unwrap_or(&[])
    }

    /// A call, read.
    pub(crate) fn call(&self) -> StoredCall<'a> {
        let sig = self.sig();
        let fixed = FIELD + sig.len();
        let flags = self.data.get(fixed).copied().unwrap_or(0);
        let seq = read_u32(self.data, fixed + 1) as u32;
        let args_escaped = read_u32(self.data, fixed + 5);
        let result_escaped = read_u32(self.data, fixed + RESULT_ESCAPED);
        let mut rest = Fields {
            data: self.data,
            pos: fixed + CALL_FIXED,
        };
        let id = rest.next().unwrap_or(&[]);
        let name = rest.next().unwrap_or(&[]);
        let args = rest.next().unwrap_or(b"{}");
        let result = rest.next().unwrap_or(&[]);
        StoredCall {
            flags,
            seq,
            args_escaped,
            result_escaped,
            id: (flags & HAS_ID != 0).then_some(id),
            name,
            args,
            result: (flags & HAS_RESULT != 0).then_some(result),
        }
    }
}

/// A stored call.
#[derive(Copy, Clone, Debug)]
pub(crate) struct StoredCall<'a> {
    pub(crate) flags: u8,
    /// Its number in the conversation, for an id the provider written to takes.
    pub(crate) seq: u32,
    /// The args' compact JSON text's length escaped (not kept for broken args).
    pub(crate) args_escaped: usize,
    /// A result value's JSON text's length escaped (kept for a result that is not a string
    /// and not an error: the only one written escaped).
    pub(crate) result_escaped: usize,
    /// Escaped id text, when the call had one.
    pub(crate) id: Option<&'a [u8]>,
    /// Escaped name text.
    pub(crate) name: &'a [u8],
    /// Compact JSON args, or (broken args) the escaped text the model wrote.
    pub(crate) args: &'a [u8],
    /// The result: compact JSON, or (an error) the escaped message.
    pub(crate) result: Option<&'a [u8]>,
}

impl StoredCall<'_> {
    pub(crate) fn broken(&self) -> bool {
        self.flags & BROKEN_ARGS != 0
    }

    pub(crate) fn is_error(&self) -> bool {
        self.flags & IS_ERROR != 0
    }

    /// Whether its id is all ASCII letters, digits, `_` and `-`.
    pub(crate) fn word_id(&self) -> bool {
        self.flags & WORD_ID != 0
    }
}

/// The parts of a turn, in the order they came.
pub(crate) struct Parts<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Iterator for Parts<'a> {
    type Item = Part<'a>;

    fn next(&mut self) -> Option<Part<'a>> {
        let at = self.pos;
        let tag = Tag::of(*self.data.get(at)?)?;
        let len = read_u32(self.data, at + 1);
        let data = self.data.get(at + HEAD..at + HEAD + len)?;
        self.pos = at + HEAD + len;
        Some(Part {
            tag,
            start: self.base + at,
            data,
        })
    }
}

/// Length-prefixed fields.
pub(crate) struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let len = read_u32(self.data, self.pos);
        let field = self.data.get(self.pos + FIELD..self.pos + FIELD + len)?;
        self.pos += FIELD + len;
        Some(field)
    }
}
