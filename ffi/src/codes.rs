//! `pw_result`: the status every fallible function returns, and its text.

use polyweave_tool_adapter::frame::FrameError;
use polyweave_tool_adapter::json::{JsonError, JsonErrorKind};

/// The status of a call: `PW_OK` (0) or why it did not succeed.
///
/// The numbers are stable ABI and never reused. They come in groups so that
/// later API slices can add codes without renumbering: 1-99 arguments and
/// memory, 100-199 JSON and frames, 200-299 the line framer, 900 and up
/// internal failures. Use `pw_result_text` for a message.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum pw_result {
    /// Success.
    PW_OK = 0,
    /// A pointer argument was NULL; nothing was written.
    PW_NULL_POINTER = 1,
    /// An output buffer is too small; the needed size was reported and nothing else written.
    PW_BUFFER_TOO_SMALL = 2,
    /// A memory block handed in for an object is smaller than its `_size()` query says.
    PW_MEMORY_TOO_SMALL = 3,
    /// A memory block or output pointer is not aligned as its type (or `_align()` query) needs.
    PW_MEMORY_MISALIGNED = 4,
    /// Two memory regions handed in overlap where they must not (for example input and output).
    PW_MEMORY_OVERLAP = 5,
    /// Malformed frame: the bytes are not a JSON object (white space around it is allowed).
    PW_FRAME_NOT_OBJECT = 100,
    /// Malformed frame: the object has no `type` member.
    PW_FRAME_MISSING_TYPE = 101,
    /// Malformed frame: the `type` member is not a JSON string.
    PW_FRAME_TYPE_NOT_STRING = 102,
    /// Invalid JSON (grammar, number, escape, control character, trailing data, not a string token...).
    PW_INVALID_JSON = 103,
    /// JSON nested deeper than the depth limit (the outermost value is level 1).
    PW_JSON_TOO_DEEP = 104,
    /// A JSON string holds bytes that are not UTF-8.
    PW_INVALID_UTF8 = 105,
    /// The frame is valid but is not of the kind the function needs (for example not a `TOOL_CALL`).
    PW_WRONG_FRAME_KIND = 106,
    /// Malformed frame: a validated frame has more than one `type` member.
    PW_FRAME_DUPLICATE_TYPE = 107,
    /// The line framer has no complete line yet: feed more bytes (or call `pw_framer_finish` at the end).
    PW_NO_LINE = 200,
    /// A line longer than the framer's line buffer was dropped whole; its length was reported.
    PW_LINE_TOO_LONG = 201,
    /// A Rust panic was caught at the C boundary (a bug: please report it); outputs are unspecified.
    PW_PANIC = 900,
}

/// Every code, in numeric order.
const ALL_RESULTS: [pw_result; 17] = [
    pw_result::PW_OK,
    pw_result::PW_NULL_POINTER,
    pw_result::PW_BUFFER_TOO_SMALL,
    pw_result::PW_MEMORY_TOO_SMALL,
    pw_result::PW_MEMORY_MISALIGNED,
    pw_result::PW_MEMORY_OVERLAP,
    pw_result::PW_FRAME_NOT_OBJECT,
    pw_result::PW_FRAME_MISSING_TYPE,
    pw_result::PW_FRAME_TYPE_NOT_STRING,
    pw_result::PW_INVALID_JSON,
    pw_result::PW_JSON_TOO_DEEP,
    pw_result::PW_INVALID_UTF8,
    pw_result::PW_WRONG_FRAME_KIND,
    pw_result::PW_FRAME_DUPLICATE_TYPE,
    pw_result::PW_NO_LINE,
    pw_result::PW_LINE_TOO_LONG,
    pw_result::PW_PANIC,
];

impl pw_result {
    /// The code for a number, if it is one.
    pub fn from_code(code: u32) -> Option<Self> {
        ALL_RESULTS.into_iter().find(|r| *r as u32 == code)
    }

    /// The fixed English message for this code (what `pw_result_text` writes).
    pub const fn message(self) -> &'static str {
        match self {
            pw_result::PW_OK => "ok",
            pw_result::PW_NULL_POINTER => "a pointer argument was NULL",
            pw_result::PW_BUFFER_TOO_SMALL => "output buffer too small",
            pw_result::PW_MEMORY_TOO_SMALL => "memory block too small",
            pw_result::PW_MEMORY_MISALIGNED => "memory block or pointer misaligned",
            pw_result::PW_MEMORY_OVERLAP => "memory regions overlap",
            pw_result::PW_FRAME_NOT_OBJECT => "malformed frame: not a JSON object",
            pw_result::PW_FRAME_MISSING_TYPE => "malformed frame: no type member",
            pw_result::PW_FRAME_TYPE_NOT_STRING => "malformed frame: type is not a string",
            pw_result::PW_INVALID_JSON => "invalid JSON",
            pw_result::PW_JSON_TOO_DEEP => "JSON nested too deep",
            pw_result::PW_INVALID_UTF8 => "invalid UTF-8 in a JSON string",
            pw_result::PW_WRONG_FRAME_KIND => "frame is not of the kind required",
            pw_result::PW_FRAME_DUPLICATE_TYPE => "malformed frame: more than one type member",
            pw_result::PW_NO_LINE => "no complete line yet",
            pw_result::PW_LINE_TOO_LONG => "line longer than the line buffer (dropped)",
            pw_result::PW_PANIC => "internal panic caught at the C boundary",
        }
    }

    /// `Ok(())` for `PW_OK`, the code itself otherwise.
    pub fn ok(self) -> Result<(), pw_result> {
        match self {
            pw_result::PW_OK => Ok(()),
            e => Err(e),
        }
    }
}

/// The message for codes `pw_result_text` does not know.
pub(crate) const UNKNOWN_MESSAGE: &str = "unknown pw_result code";

impl From<JsonError> for pw_result {
    fn from(e: JsonError) -> Self {
        match e.kind {
            JsonErrorKind::TooDeep => pw_result::PW_JSON_TOO_DEEP,
            JsonErrorKind::InvalidUtf8 => pw_result::PW_INVALID_UTF8,
            _ => pw_result::PW_INVALID_JSON,
        }
    }
}

impl From<FrameError> for pw_result {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::NotAnObject => pw_result::PW_FRAME_NOT_OBJECT,
            FrameError::MissingType => pw_result::PW_FRAME_MISSING_TYPE,
            FrameError::TypeNotString => pw_result::PW_FRAME_TYPE_NOT_STRING,
            FrameError::DuplicateType => pw_result::PW_FRAME_DUPLICATE_TYPE,
            FrameError::Json(j) => j.into(),
            // A kind of malformed frame newer than this table.
            _ => pw_result::PW_INVALID_JSON,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_round_trip() {
        for (i, a) in ALL_RESULTS.iter().enumerate() {
            assert_eq!(pw_result::from_code(*a as u32), Some(*a));
            for b in &ALL_RESULTS[i + 1..] {
                assert!((*a as u32) < (*b as u32));
                assert_ne!(a.message(), b.message());
            }
        }
        assert_eq!(pw_result::from_code(7), None);
    }
}
