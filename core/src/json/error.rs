//! Why bytes are not the JSON the caller asked for, and where.

/// Why a byte string is not the JSON the caller asked for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A byte that cannot start or continue the value here.
    UnexpectedByte,
    /// A number that breaks the RFC 8259 grammar (leading zero, bare `-`, `1.`…).
    InvalidNumber,
    /// A backslash escape that RFC 8259 does not define, or a bad `\u` escape.
    InvalidEscape,
    /// A raw control character (below U+0020) inside a string.
    ControlCharacter,
    /// Bytes inside a string that are not UTF-8.
    InvalidUtf8,
    /// Containers nested deeper than the configured limit.
    TooDeep,
    /// Non-white-space bytes after a complete value.
    TrailingData,
}

/// A JSON error and the byte offset where it was found.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct JsonError {
    /// What is wrong.
    pub kind: JsonErrorKind,
    /// Offset into the scanned bytes.
    pub at: usize,
}

impl JsonError {
    pub(crate) const fn new(kind: JsonErrorKind, at: usize) -> Self {
        Self { kind, at }
    }
}

impl core::error::Error for JsonError {}

impl core::fmt::Display for JsonError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "invalid JSON at byte {}: {:?}", self.at, self.kind)
    }
}
