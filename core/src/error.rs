//! The errors of the state machines' inputs (one per case of SPEC §4), and the one error
//! every machine's constructor gives when the memory or configuration handed in cannot work.

use crate::clock::ClockWentBackwards;
use crate::frame::FrameError;
use crate::json::JsonError;

/// Why an input was refused. The machine's state is exactly as before the call.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a frame, or not valid JSON where the frame is validated
    /// (too deep and invalid UTF-8 included: see the inner error).
    Malformed(FrameError),
    /// The clock given is earlier than one already seen.
    ClockWentBackwards(ClockWentBackwards),
    /// A decoded tool name is longer than the name capacity.
    NameTooLong {
        /// Its decoded length.
        len: usize,
        /// The capacity.
        cap: usize,
    },
    /// A decoded call id is longer than the id capacity.
    IdTooLong {
        /// Its decoded length.
        len: usize,
        /// The capacity.
        cap: usize,
    },
    /// A result given to `complete` is not one JSON value.
    InvalidResult(JsonError),
    /// An `END` to hold does not fit what is left of the held-`END` buffer.
    HeldFull {
        /// Bytes it needs.
        needed: usize,
        /// Bytes free.
        free: usize,
    },
    /// The output queue lacks room for what the input could produce: drain `poll_transmit` first.
    QueueFull {
        /// Bytes the input may need.
        needed: usize,
        /// Bytes free.
        free: usize,
    },
    /// The call the input names is not waiting for it.
    Call(CallError),
}

/// Why a call named by its handle is not waiting for an input.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CallError {
    /// No call with this handle was ever started.
    Unknown,
    /// The call already ended with a result or an error.
    Completed,
    /// The call timed out (or is past its deadline and about to).
    TimedOut,
    /// The call was cancelled.
    Cancelled,
    /// The call ended long ago (how is no longer known: a newer call has used its slot since).
    Stale,
    /// The call is of another kind (`complete` on an adapter call, adapter input on a deferred one).
    WrongKind,
}

impl From<FrameError> for Error {
    fn from(e: FrameError) -> Self {
        Error::Malformed(e)
    }
}

impl From<ClockWentBackwards> for Error {
    fn from(e: ClockWentBackwards) -> Self {
        Error::ClockWentBackwards(e)
    }
}

impl From<CallError> for Error {
    fn from(e: CallError) -> Self {
        Error::Call(e)
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Malformed(e) => write!(f, "malformed frame: {e}"),
            Error::ClockWentBackwards(c) => c.fmt(f),
            Error::NameTooLong { len, cap } => write!(f, "tool name of {len} bytes exceeds {cap}"),
            Error::IdTooLong { len, cap } => write!(f, "call id of {len} bytes exceeds {cap}"),
            Error::InvalidResult(e) => write!(f, "result is not JSON: {e}"),
            Error::HeldFull { needed, free } => {
                write!(f, "held END needs {needed} bytes, {free} free")
            }
            Error::QueueFull { needed, free } => {
                write!(f, "output queue needs {needed} bytes, {free} free")
            }
            Error::Call(e) => e.fmt(f),
        }
    }
}

impl core::fmt::Display for CallError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            CallError::Unknown => "unknown call",
            CallError::Completed => "call already completed",
            CallError::TimedOut => "call timed out",
            CallError::Cancelled => "call was cancelled",
            CallError::Stale => "call ended and its slot was reused",
            CallError::WrongKind => "call is of another kind",
        })
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Malformed(e) => Some(e),
            Error::ClockWentBackwards(e) => Some(e),
            Error::InvalidResult(e) => Some(e),
            Error::Call(e) => Some(e),
            _ => None,
        }
    }
}

impl core::error::Error for CallError {}

/// The memory or configuration handed to a constructor ([`Wrapper::new`](crate::Wrapper::new),
/// the decoder's, the MCP client's) cannot work; nothing was set up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum StorageError {
    /// The arena is smaller than its configuration's `arena_len`.
    ArenaTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        given: usize,
    },
    /// More slots than a `u16` counts.
    TooManySlots,
    /// More than 65535 registered tools.
    TooManyTools,
    /// A registered tool's name is longer than `name_cap`, so no call could ever reach it.
    NameTooLong {
        /// Its index in the registration slice.
        index: usize,
    },
    /// The MCP client's `clientInfo` name or version is longer than `mcp::CLIENT_TEXT_CAP`.
    ClientInfoTooLong,
    /// A capacity out of the range the configuration's documentation states.
    BadConfig,
}

impl core::fmt::Display for StorageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StorageError::ArenaTooSmall { needed, given } => {
                write!(f, "arena of {given} bytes, {needed} needed")
            }
            StorageError::TooManySlots => f.write_str("more than 65535 slots"),
            StorageError::TooManyTools => f.write_str("more than 65535 tools"),
            StorageError::NameTooLong { index } => {
                write!(f, "tool {index}'s name is longer than name_cap")
            }
            StorageError::ClientInfoTooLong => {
                f.write_str("clientInfo name or version is longer than its capacity")
            }
            StorageError::BadConfig => f.write_str("configuration out of range"),
        }
    }
}

impl core::error::Error for StorageError {}
