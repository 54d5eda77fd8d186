//! A validating JSON scanner over `&[u8]`: no recursion, no allocation.
//!
//! The scanner never builds a tree. It answers three questions about bytes the
//! caller owns: *is this one valid JSON value* ([`validate`]), *where does the
//! value starting here end* ([`skip_value`]), and *what are this object's
//! members* ([`Members`]). Strings are handed out as [`JsonStr`] views that can
//! be compared with or decoded into caller buffers without copying first.
//!
//! Nesting is tracked with an explicit depth counter and a 256-bit stack of
//! container kinds, so hostile input (`[[[[…`) costs a bounded amount of stack
//! and is refused with [`JsonErrorKind::TooDeep`] past the caller's limit.

/// The depth limit used where the caller gives none (the frame object is level 1).
pub const DEFAULT_MAX_DEPTH: u8 = 32;

/// Checks that `bytes` is exactly one JSON value, with optional white space around it.
pub fn validate(bytes: &[u8], max_depth: u8) -> Result<(), JsonError> {
    validate_with(bytes, |start, spaced| {
        scan::scan_value::<false, ()>(bytes, start, max_depth, spaced, &mut ())
    })
    .map(drop)
}

/// [`validate`], also telling whether the value (white space around it aside) is already
/// compact: no white space between its tokens, so [`compact_into`] would only copy it.
pub(crate) fn validate_compact(bytes: &[u8], max_depth: u8) -> Result<bool, JsonError> {
    validate_with(bytes, |start, spaced| {
        skip_value_noted(bytes, start, max_depth, spaced)
    })
}

/// True when the raw value is a JSON object (first byte `{`).
pub fn is_object(value: &[u8]) -> bool {
    value.first() == Some(&b'{')
}

pub(crate) mod bytes;
mod compact;
mod error;
pub(crate) mod escape;
mod members;
mod scan;
#[cfg(feature = "schema")]
pub mod schema;
mod string;
// A stream decoder's look at an event's top level.
#[cfg(feature = "_providers")]
mod top;
pub(crate) mod valid;

pub use bytes::{skip_ws, trim_ws};
pub use error::{JsonError, JsonErrorKind};

pub use compact::{compact_into, compact_len, for_each_compact_run};
pub(crate) use members::compact_members;
pub use members::{find_member, Member, Members};
pub use scan::skip_value;
pub(crate) use scan::skip_value_noted;
use scan::validate_with;
pub use string::{BufferTooSmall, Decoded, JsonStr};
#[cfg(feature = "_providers")]
pub(crate) use top::{validate_noted, TopMembers, TopWalk};

/// Every one-byte edit of a test document, for tests that hold a fast path to a general one.
#[cfg(test)]
pub(crate) mod edits {
    /// How a seed was edited.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub(crate) enum Edit {
        /// Cut after this many bytes.
        Cut,
        /// One byte replaced.
        Change,
        /// One byte inserted.
        Insert,
        /// One byte deleted.
        Delete,
    }

    /// Calls `f` with every cut of `seed`, and every change to, insertion of and deletion
    /// of one byte, the new bytes taken from `bytes`. `seed` is at most 255 bytes. (Under
    /// miri, which runs a thousand times slower, at every 61st position only.)
    pub(crate) fn each(seed: &[u8], bytes: &[u8], mut f: impl FnMut(&[u8], Edit)) {
        let mut buf = [0u8; 256];
        let n = seed.len();
        for i in (0..=n).step_by(if cfg!(miri) { 61 } else { 1 }) {
            f(&seed[..i], Edit::Cut);
            for &b in bytes {
                if i < n {
                    buf[..n].copy_from_slice(seed);
                    buf[i] = b;
                    f(&buf[..n], Edit::Change);
                }
                buf[..i].copy_from_slice(&seed[..i]);
                buf[i] = b;
                buf[i + 1..=n].copy_from_slice(&seed[i..]);
                f(&buf[..=n], Edit::Insert);
            }
            if i < n {
                buf[..i].copy_from_slice(&seed[..i]);
                buf[i..n - 1].copy_from_slice(&seed[i + 1..]);
                f(&buf[..n - 1], Edit::Delete);
            }
        }
    }
}
