//! The members of a frame's object `content` that the typed accessors read, found in one
//! pass: `id`, `name`, `args`, `result`, `content`, `error`, and `message` or `args_error`
//! (they share a slot by the frame's kind).

use super::error::FrameError;
use crate::json::{self, Member, Members};

/// The `content` members the accessors read, in the order of [`Fields::values`].
const KEYS: [&[u8]; 8] = [
    b"id",
    b"name",
    b"args",
    b"result",
    b"content",
    b"error",
    b"message",
    b"args_error",
];
pub(super) const ID: usize = 0;
pub(super) const NAME: usize = 1;
pub(super) const ARGS: usize = 2;
pub(super) const RESULT: usize = 3;
pub(super) const CONTENT: usize = 4;
pub(super) const ERROR: usize = 5;
const MESSAGE: usize = 6;
const ARGS_ERROR: usize = 7;

/// The value slot `message` (an `ERROR`'s) and `args_error` (a `TOOL_CALL`'s) share: a frame
/// has one kind, so its fields keep the one its kind reads (`Fields::for_call`), which keeps
/// `Frame` small enough to move without a call to `memcpy`.
pub(super) const SHARED: usize = 6;

/// What an accessor reads of the fields.
#[derive(Copy, Clone)]
pub(super) enum Need {
    /// Members every kind keeps.
    Any,
    /// The shared slot, as a `TOOL_CALL`'s `args_error` or as an `ERROR`'s `message`.
    Shared {
        /// For a `TOOL_CALL`'s `args_error`, not an `ERROR`'s `message`.
        for_call: bool,
    },
}

impl Need {
    // Equivalent mutant: -> `false`: the fields are then read again from the same content, with the
    // same keys, to the same values.
    /// Whether `fields` hold what is needed.
    pub(super) fn met_by(self, fields: &Fields<'_>) -> bool {
        match self {
            Need::Any => true,
            Need::Shared { for_call } => fields.for_call == for_call,
        }
    }
}

/// The members of an object `content` the accessors use (later duplicates win, as in `JSON.parse`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) struct Fields<'a> {
    pub(super) is_object: bool,
    /// The shared slot holds `args_error` (read for a `TOOL_CALL`), not `message`.
    pub(super) for_call: bool,
    /// The raw value of each of [`KEYS`] but the last (`message` and `args_error` share
    /// [`SHARED`]), when present.
    pub(super) values: [Option<&'a [u8]>; 7],
}

impl<'a> Fields<'a> {
    /// The fields of `content` (read with `max_depth` levels), empty unless it is an object.
    pub(super) fn read(
        content: Option<&'a [u8]>,
        max_depth: u8,
        for_call: bool,
    ) -> Result<Self, FrameError> {
        let mut fields = Self {
            for_call,
            ..Self::default()
        };
        if let Some(content) = content.filter(|c| json::is_object(c)) {
            fields.is_object = true;
            for m in Members::new(content, 0, max_depth)? {
                fields.record(m?);
            }
        }
        Ok(fields)
    }

    /// Keeps `m` when its key (decoded, for an escaped one) is one of [`KEYS`].
    pub(super) fn record(&mut self, m: Member<'a>) {
        // A `TOOL_CALL`'s three keys as written settle at once; any other key, or one
        // written with escapes, is compared with each of the keys in turn.
        let i = match m.key.raw() {
            // Equivalent mutant: these three arms deleted: `KEYS` puts the same keys at the same
            // places.
            b"id" => ID,
            b"name" => NAME,
            b"args" => ARGS,
            _ => match KEYS.iter().position(|k| m.key.eq_text(k)) {
                Some(MESSAGE) if !self.for_call => SHARED,
                Some(ARGS_ERROR) if self.for_call => SHARED,
                Some(MESSAGE | ARGS_ERROR) | None => return,
                Some(i) => i,
            },
        };
        self.values[i] = Some(m.value);
    }
}

#[cfg(test)]
mod tests {
    use crate::frame::Frame;
    use crate::json::JsonStr;

    fn text(s: Option<JsonStr<'_>>) -> Option<&[u8]> {
        s.map(|s| s.raw())
    }

    #[test]
    fn message_and_args_error_share_a_slot_by_kind_and_read_right_across_kinds() {
        // A TOOL_CALL holding both: `args_error` is its own, `message` another kind's.
        for call in [
            &br#"{"type":"TOOL_CALL","content":{"name":"x","args_error":"a","message":"m"}}"#[..],
            br#"{"type":"TOOL_CALL","content":{"name":"x","message":"m","args_error":"a"}}"#,
        ] {
            for f in [
                Frame::parse_validated_default(call).unwrap(),
                Frame::parse(call).unwrap(),
            ] {
                assert_eq!(text(f.tool_call().unwrap().args_error), Some(&b"a"[..]));
                assert_eq!(text(f.error_message().unwrap()), Some(&b"m"[..]));
            }
        }
        // An ERROR holding both: `message` is its own.
        for error in [
            &br#"{"type":"ERROR","content":{"message":"m","args_error":"a"}}"#[..],
            br#"{"type":"ERROR","content":{"args_error":"a","message":"m"}}"#,
        ] {
            for f in [
                Frame::parse_validated_default(error).unwrap(),
                Frame::parse(error).unwrap(),
            ] {
                assert_eq!(text(f.error_message().unwrap()), Some(&b"m"[..]));
                assert_eq!(text(f.tool_call().unwrap().args_error), Some(&b"a"[..]));
            }
        }
    }
}
