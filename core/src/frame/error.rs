//! Why bytes are not a frame (a leaf of `frame`: the accessors' fields report it too).

use crate::json::JsonError;

/// Why bytes are not a frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FrameError {
    /// The bytes do not start with a JSON object (after optional white space).
    NotAnObject,
    /// The object has no `type` member.
    MissingType,
    /// The `type` member is not a string.
    TypeNotString,
    /// A validated frame has two `type` members (readers disagree on which counts).
    DuplicateType,
    /// Invalid JSON where the frame was read (or anywhere, for validated frames).
    Json(JsonError),
}

impl From<JsonError> for FrameError {
    fn from(e: JsonError) -> Self {
        FrameError::Json(e)
    }
}

impl core::error::Error for FrameError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            FrameError::Json(e) => Some(e),
            _ => None,
        }
    }
}

impl core::fmt::Display for FrameError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FrameError::NotAnObject => f.write_str("frame is not a JSON object"),
            FrameError::MissingType => f.write_str("frame has no type member"),
            FrameError::TypeNotString => f.write_str("frame type is not a string"),
            FrameError::DuplicateType => f.write_str("frame has more than one type member"),
            FrameError::Json(e) => e.fmt(f),
        }
    }
}
