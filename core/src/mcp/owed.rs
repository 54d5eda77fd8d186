//! What the line in the buffer still owes the host (the frames and events it carries), and
//! a call failed as it was handed in: the client's records between an input and the polls.

use crate::route::CallHandle;

use super::frames::McpFailure;

/// Bytes `[start, end)` of the line buffer.
pub(super) type Span = (usize, usize);

/// What went wrong in the start-up, by spans of the line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) enum StartFault {
    Version(Span),
    BadResult(Span),
    Refused(Span),
    CursorTooLong(usize),
    TooManyPages,
    TooLarge,
    NoAnswer,
    NoResponse(u16),
}

/// What the line in the buffer still owes the host.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) enum Owed {
    Nothing,
    Result {
        slot: usize,
        value: Span,
    },
    /// A `structuredContent` its tool's output schema (registered at `schema`) refuses.
    #[cfg(feature = "schema")]
    OutputInvalid {
        slot: usize,
        value: Span,
        schema: usize,
        invalid: crate::json::schema::Invalid,
    },
    End {
        slot: usize,
    },
    IsError {
        slot: usize,
        result: Span,
    },
    RpcError {
        slot: usize,
        error: Span,
    },
    Progress {
        slot: usize,
        params: Span,
    },
    Reply {
        id: Span,
        ping: bool,
    },
    Initialized {
        version: &'static str,
        result: Span,
    },
    Tools {
        list: Span,
        pos: usize,
        more: bool,
    },
    StartFailed(StartFault),
    Notification {
        method: Span,
        params: Option<Span>,
    },
}

impl Owed {
    /// The call slot whose answer this is, if any.
    pub(super) fn call_slot(&self) -> Option<usize> {
        match *self {
            Owed::Result { slot, .. }
            | Owed::End { slot }
            | Owed::IsError { slot, .. }
            | Owed::RpcError { slot, .. }
            | Owed::Progress { slot, .. } => Some(slot),
            #[cfg(feature = "schema")]
            Owed::OutputInvalid { slot, .. } => Some(slot),
            _ => None,
        }
    }
}

/// A call failed as it was handed in, when no slot may hold it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) struct Immediate {
    pub(super) handle: CallHandle,
    pub(super) why: McpFailure,
    pub(super) name_len: usize,
}
