//! **Unstable, not part of the API.** The crate's private parts that this project's own
//! tests and fuzz targets drive directly, behind the `_internals` feature (never on by
//! default; it may change in any release). A host has no reason to turn it on.

pub use crate::frame::write::OutFrame;
use crate::json::JsonStr;
use crate::outcome::CallOutcome;
pub use crate::sink::{put_escaped, put_json_string, put_u64, Counter, Sink};
use crate::trace::Trace;

/// A trace over `buf` that keeps at most `max_entries` entries (the wrapper makes its own).
pub fn new_trace(buf: &mut [u8], max_entries: usize) -> Trace<'_> {
    Trace::new(buf, max_entries)
}

/// Records one ended call in `trace`, as the wrapper does when a call ends.
pub fn push_trace(
    trace: &mut Trace<'_>,
    name: Option<&[u8]>,
    args: &[u8],
    outcome: CallOutcome<'_>,
) {
    trace.push(name, args, outcome);
}

/// A raw value that is a string token, as a view (what the frame readers use).
pub fn as_string(value: &[u8]) -> Option<JsonStr<'_>> {
    crate::frame::as_string(value)
}

/// [`json::validate`](crate::json::validate) as a decoder validates an event, noting an
/// object's top level on the way: its answer, and `each` called with every member's name (as
/// written, quotes off) and value as a decoder's walk of the notes reads them; `false` when
/// nothing was noted (the decoder then walks the text itself).
#[cfg(feature = "_providers")]
pub fn validate_noted(
    bytes: &[u8],
    max_depth: u8,
    mut each: impl FnMut(&[u8], &[u8]),
) -> (Result<(), crate::json::JsonError>, bool) {
    let mut top = crate::json::TopMembers::NONE;
    let answer = crate::json::validate_noted(bytes, max_depth, &mut top);
    let Some(walk) = top.noted(bytes) else {
        return (answer, false);
    };
    for (name, value) in walk {
        each(name.raw(), value);
    }
    (answer, true)
}
