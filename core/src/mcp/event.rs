//! What the client tells the host besides frames and lines: start-up, the listed tools,
//! the server's other notifications.

use crate::json::JsonStr;

/// Something the host learns from the server.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpEvent<'c> {
    /// The server answered `initialize` with a revision the client speaks, or listed
    /// 2026-07-28 in its `server/discover` result (SPEC §9.9).
    Initialized {
        /// The revision spoken from now on.
        protocol_version: &'static str,
        /// Its `initialize` or `server/discover` result as sent (`serverInfo`,
        /// `capabilities`, `instructions`).
        result: &'c [u8],
    },
    /// A listed tool: register it as an adapter tool to serve it.
    Tool {
        /// Its name, decoded.
        name: &'c str,
        /// Its entry as sent (`description`, `inputSchema`, …).
        tool: &'c [u8],
    },
    /// A listed tool the client cannot serve.
    ToolSkipped {
        /// Why.
        reason: McpToolSkip,
        /// Its entry as sent.
        tool: &'c [u8],
    },
    /// Every page is listed: calls go to the server from now on.
    Ready {
        /// Tools handed out as [`McpEvent::Tool`].
        tools: u32,
    },
    /// The server's tools changed and were listed again (SPEC §9.12): the
    /// [`McpEvent::Tool`]s since its `notifications/tools/list_changed` are its whole list
    /// now. Calls in flight are unaffected.
    ToolsChanged {
        /// Tools handed out as [`McpEvent::Tool`] in the new list.
        tools: u32,
    },
    /// The start-up failed: calls waiting fail, later ones fail at once.
    StartFailed(McpStartError<'c>),
    /// A notification other than progress (`notifications/tools/list_changed`,
    /// `notifications/message`, …); it changes nothing else.
    Notification {
        /// Its method.
        method: JsonStr<'c>,
        /// Its params as sent.
        params: Option<&'c [u8]>,
    },
}

/// Why a listed tool was skipped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpToolSkip {
    /// Its decoded name is longer than `name_cap`.
    NameTooLong {
        /// The name's decoded length.
        len: usize,
        /// `name_cap`.
        cap: usize,
    },
    /// The entry is not an object with a string `name`.
    NoName,
    /// Over Streamable HTTP, its `inputSchema` has an `x-mcp-header` annotation the
    /// revision does not allow (a misplaced one, a bad name, a non-primitive type, twice
    /// the same header): the revision says such a tool is not offered.
    BadHeaderAnnotation,
    /// Over Streamable HTTP, its `x-mcp-header` parameters do not fit `header_table_cap`.
    HeaderTableFull {
        /// `header_table_cap`.
        cap: usize,
    },
}

/// Why the start-up failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum McpStartError<'c> {
    /// `initialize` chose a revision the client does not speak, or a client fixed to
    /// 2026-07-28 found it missing from `server/discover`'s list (the value as sent).
    UnsupportedVersion(&'c [u8]),
    /// The `initialize` result has no string `protocolVersion`, or the `tools/list` result
    /// no `tools` array (the result as sent).
    BadResult(&'c [u8]),
    /// `initialize` or `tools/list` was answered with a JSON-RPC error (as sent).
    Refused(&'c [u8]),
    /// A `tools/list` cursor longer than `cursor_cap` (its length as sent).
    CursorTooLong(usize),
    /// More `tools/list` pages than [`MAX_PAGES`](super::MAX_PAGES): a server that never
    /// stops paging.
    TooManyPages,
    /// The answer to `initialize` or `tools/list` was longer than `line_cap` or nested
    /// deeper than the depth limit.
    ResponseTooLarge,
    /// The client was fixed to 2026-07-28 and the server did not answer `server/discover`
    /// within the start-up timeout.
    NoAnswer,
    /// Over Streamable HTTP, the response to `initialize` or `tools/list` ended without the
    /// answer (`status` 0 when there was no response at all).
    NoResponse {
        /// The HTTP status.
        status: u16,
    },
}
