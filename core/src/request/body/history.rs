//! The history as messages, oldest first: user texts next to each other as one, an
//! assistant turn, the results of its calls (with the user texts after them, where a
//! provider puts them in one message).

use crate::request::conversation::Conversation;
use crate::request::store::{Entries, Entry, Kind};

/// A message of the history.
#[derive(Copy, Clone, Debug)]
pub(super) enum Msg<'a> {
    /// User texts next to each other: entries between two offsets.
    Users { from: usize, to: usize },
    /// An assistant turn.
    Turn(Entry<'a>),
    /// The results of a turn's calls, and (Anthropic, Gemini) the user texts after them.
    Results {
        turn: Entry<'a>,
        users: Option<(usize, usize)>,
    },
}

/// Where the messages stand between two of them: a later walk starts there (a body written
/// in many calls goes on from the message it stopped in, not from the first).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct MsgAt {
    pos: usize,
    /// The start of the turn whose results come next.
    pending: Option<usize>,
}

impl MsgAt {
    /// Past every message.
    pub(super) fn end(conv: &Conversation<'_>) -> Self {
        Self {
            pos: conv.bytes().len(),
            pending: None,
        }
    }
}

/// The messages from `at` on.
pub(super) fn messages<'a, 'f>(
    conv: &'a Conversation<'_>,
    merge: bool,
    silent: &'f dyn Fn(&Entry<'_>) -> bool,
    at: MsgAt,
) -> Messages<'a, 'f> {
    let buf = conv.bytes();
    Messages {
        buf,
        pos: at.pos,
        merge,
        pending: at.pending.and_then(|pos| Entries { buf, pos }.next()),
        silent,
    }
}

pub(super) struct Messages<'a, 'f> {
    buf: &'a [u8],
    pos: usize,
    merge: bool,
    pending: Option<Entry<'a>>,
    /// A turn that writes nothing for this provider (only another provider's state, or
    /// only white space for Anthropic): the user texts around it make one message.
    silent: &'f dyn Fn(&Entry<'_>) -> bool,
}

impl<'a> Messages<'a, '_> {
    /// Where the walk stands.
    pub(super) fn at(&self) -> MsgAt {
        MsgAt {
            pos: self.pos,
            pending: self.pending.map(|e| e.start),
        }
    }

    pub(super) fn peek(&self) -> Option<Entry<'a>> {
        Entries {
            buf: self.buf,
            pos: self.pos,
        }
        .next()
    }

    pub(super) fn users(&mut self) -> Option<(usize, usize)> {
        let from = self.pos;
        let mut any = false;
        while let Some(e) = self.peek().filter(|e| {
            e.kind.is_user() || e.kind == Kind::System || (e.kind == Kind::Turn && (self.silent)(e))
        }) {
            any |= e.kind.is_user();
            self.pos = e.start + e.size();
        }
        any.then_some((from, self.pos))
    }
}

impl<'a> Iterator for Messages<'a, '_> {
    type Item = Msg<'a>;

    fn next(&mut self) -> Option<Msg<'a>> {
        if let Some(turn) = self.pending.take() {
            if turn.has_calls() {
                let users = if self.merge { self.users() } else { None };
                return Some(Msg::Results { turn, users });
            }
        }
        loop {
            let e = self.peek()?;
            match e.kind {
                Kind::System => self.pos = e.start + e.size(),
                Kind::Turn if (self.silent)(&e) => self.pos = e.start + e.size(),
                Kind::Turn => {
                    self.pos = e.start + e.size();
                    self.pending = Some(e);
                    return Some(Msg::Turn(e));
                }
                _ => {
                    let (from, to) = self.users()?;
                    return Some(Msg::Users { from, to });
                }
            }
        }
    }
}

impl Clone for Entries<'_> {
    fn clone(&self) -> Self {
        Entries {
            buf: self.buf,
            pos: self.pos,
        }
    }
}
