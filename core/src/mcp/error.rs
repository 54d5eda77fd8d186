//! What a frame from the wrapper did, and why one was refused.

use crate::frame::FrameError;

/// What [`McpClient::handle_frame`](super::McpClient::handle_frame) did with a frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpHandled {
    /// A `TOOL_CALL` became request `request` (queued for the server).
    Sent {
        /// Its JSON-RPC id, also its progress token.
        request: u64,
    },
    /// A `TOOL_CALL` failed at once: its `ERROR` waits in `poll_frame`.
    Failed(super::frames::McpFailure),
    /// A `CANCEL` ended its call; `notified` when `notifications/cancelled` was queued (not
    /// when the call's request had not gone out yet: it was withdrawn).
    Cancelled {
        /// Whether the server is told.
        notified: bool,
    },
}

/// A frame from the wrapper the client refused; nothing changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum McpError {
    /// Not a valid frame.
    Malformed(FrameError),
    /// Neither `TOOL_CALL` nor `CANCEL`.
    NotAdapterFrame,
    /// A `TOOL_CALL` without a string `content.name`.
    NoName,
    /// A `TOOL_CALL` whose decoded name is longer than `name_cap`
    /// ([`McpConfig::fit`](super::McpConfig::fit) avoids it).
    NameTooLong {
        /// The decoded length.
        len: usize,
        /// `name_cap`.
        cap: usize,
    },
    /// A `TOOL_CALL` for a handle already in flight.
    DuplicateCall,
    /// A `CANCEL` for a handle not in flight.
    UnknownCall,
    /// The outbox has no room for the line now: write what `poll_transmit` gives, then
    /// hand the frame in again.
    OutboxFull {
        /// Bytes the line takes.
        needed: usize,
        /// Bytes free.
        free: usize,
    },
    /// The `ERROR` of a call failed at once is not polled yet: `poll_frame` first.
    FramePending,
    /// `start` was called twice.
    AlreadyStarted,
}

impl core::fmt::Display for McpError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Malformed(e) => write!(f, "malformed frame: {e}"),
            Self::NotAdapterFrame => f.write_str("not a TOOL_CALL or CANCEL frame"),
            Self::NoName => f.write_str("TOOL_CALL without a string content.name"),
            Self::NameTooLong { len, cap } => write!(f, "tool name of {len} bytes, cap {cap}"),
            Self::DuplicateCall => f.write_str("a call with this handle is in flight"),
            Self::UnknownCall => f.write_str("no call with this handle is in flight"),
            Self::OutboxFull { needed, free } => {
                write!(f, "outbox full: {needed} bytes needed, {free} free")
            }
            Self::FramePending => f.write_str("poll_frame first: a frame is waiting"),
            Self::AlreadyStarted => f.write_str("the client was started already"),
        }
    }
}

impl core::error::Error for McpError {}
