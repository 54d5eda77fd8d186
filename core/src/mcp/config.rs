//! An MCP client's capacities, the arena they size, and who it says it is.
//!
//! Every size is a `const fn` with saturating arithmetic, as the wrapper's are, so a host
//! sizes a `static` arena at compile time.

use crate::error::StorageError;
use crate::json::DEFAULT_MAX_DEPTH;

/// The protocol revision the client asks for in `initialize` (SPEC §9.1).
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The stateless revision, spoken to a server whose `server/discover` lists it (SPEC §9.9).
pub const PROTOCOL_VERSION_2026: &str = "2026-07-28";

/// Milliseconds a server has to answer `server/discover` before the client takes it for
/// one of an earlier revision and sends `initialize` (SPEC §9.9).
pub const DEFAULT_START_TIMEOUT_MS: u32 = 10_000;

/// Which revision the client speaks (SPEC §9.9).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum McpRevision {
    /// `server/discover` first: 2026-07-28 when the server lists it, else the
    /// `initialize` handshake on the same connection.
    #[default]
    Auto,
    /// The `initialize` handshake only (2025-11-25 and the revisions before it).
    V2025_11_25,
    /// 2026-07-28 only: a server that does not list it in `server/discover` fails the start.
    V2026_07_28,
}

/// Revisions the client goes on with when the server answers one of them.
pub const SUPPORTED_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// Bytes of a cancel reason, escaped, carried into `notifications/cancelled`; a longer one
/// is cut on a character boundary (the server only logs it).
pub const REASON_CAP: usize = 256;

/// The longest `notifications/cancelled` line: the escaped reason around the fixed text and
/// a 20-digit request id.
pub const CANCEL_LINE_BOUND: usize = 128 + REASON_CAP;

/// Capacities of an MCP client (SPEC §9). All memory is the host's.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McpConfig {
    /// Bytes of the longest line the server may send (line ending excluded). A longer
    /// response fails its call; a longer request or notification is counted and dropped.
    pub line_cap: usize,
    /// Bytes of lines waiting to go to the server (`tools/call`, `notifications/cancelled`).
    /// A call whose request can never fit fails at once; one that does not fit now is
    /// refused until the host has written what waits.
    pub outbox_cap: usize,
    /// Bytes of a decoded tool name (a call's, and a listed tool's).
    pub name_cap: usize,
    /// Bytes of a `tools/list` page cursor as the server wrote it.
    pub cursor_cap: usize,
    /// JSON depth limit of the server's lines (the message object is level 1).
    pub max_depth: u8,
    /// The revision to speak, or [`McpRevision::Auto`] to find it out.
    pub revision: McpRevision,
    /// Milliseconds `server/discover` may go unanswered (see [`DEFAULT_START_TIMEOUT_MS`]).
    pub start_timeout_ms: u32,
    /// Streamable HTTP only (a line client may set 0): bytes of the table of listed tools'
    /// `x-mcp-header` parameters (names and property chains); a tool whose annotations do
    /// not fit is skipped.
    pub header_table_cap: usize,
}

impl McpConfig {
    /// Room for results of a few KiB, names of 64 bytes, the default depth limit.
    pub const DEFAULT: McpConfig = McpConfig {
        line_cap: 8192,
        outbox_cap: 4096,
        name_cap: 64,
        cursor_cap: 256,
        max_depth: DEFAULT_MAX_DEPTH,
        revision: McpRevision::Auto,
        start_timeout_ms: DEFAULT_START_TIMEOUT_MS,
        header_table_cap: 512,
    };

    /// For a few KiB of RAM: 2 KiB lines, the least outbox allowed, 32-byte names.
    pub const SMALL: McpConfig = McpConfig {
        line_cap: 2048,
        outbox_cap: CANCEL_LINE_BOUND + OUTBOX_HEADER,
        name_cap: 32,
        cursor_cap: 128,
        max_depth: DEFAULT_MAX_DEPTH,
        revision: McpRevision::Auto,
        start_timeout_ms: DEFAULT_START_TIMEOUT_MS,
        header_table_cap: 0,
    };

    /// `self` with the name capacity and depth limit of the wrapper whose adapter tools it
    /// serves: every name the wrapper sends then fits, and every valid line of the server
    /// gives a frame the wrapper does not refuse as too deep (a result sits at the same
    /// level in the line and in the frame).
    pub const fn fit(self, wrapper: &crate::wrapper::WrapperConfig) -> Self {
        McpConfig {
            name_cap: wrapper.name_cap,
            max_depth: wrapper.max_depth,
            ..self
        }
    }

    /// Bytes of arena a client with `calls` call slots needs.
    pub const fn arena_len(&self, calls: usize) -> usize {
        self.line_cap
            .saturating_add(self.outbox_cap)
            .saturating_add(self.cursor_cap)
            // One name per slot, one for a call failed at once, one to decode a listed
            // tool's name into.
            .saturating_add(self.name_cap.saturating_mul(calls.saturating_add(2)))
            .saturating_add(self.header_table_cap)
    }

    /// The longest frame [`poll_frame`](super::McpClient::poll_frame) writes: a result or an
    /// error message no longer than the line it came from, around an escaped name.
    pub const fn max_frame_len(&self) -> usize {
        // Text decoded from the line and escaped again is never longer than it was there
        // (an escape decodes to at most as many bytes as it took, and escapes back to the
        // same or fewer); a decoded name may hold control characters, 6 bytes each.
        self.line_cap
            .saturating_add(self.name_cap.saturating_mul(6))
            .saturating_add(160)
    }

    /// The longest line [`poll_transmit`](super::McpClient::poll_transmit) writes.
    pub const fn max_line_len(&self) -> usize {
        // A queued call goes out with 2026-07-28's envelope added.
        let outbox = self
            .outbox_cap
            .saturating_sub(OUTBOX_HEADER)
            .saturating_add(INITIALIZE_BOUND);
        // A reply echoes a request id from a line; `initialize` names the client.
        let reply = self.line_cap.saturating_add(96);
        // In 2026-07-28 a `tools/list` carries the `_meta` envelope naming the client.
        let list = self.cursor_cap.saturating_add(INITIALIZE_BOUND);
        max(max(outbox, reply), list)
    }

    /// Why this configuration cannot work, if it cannot.
    pub(crate) const fn check(&self) -> Result<(), StorageError> {
        if self.line_cap == 0
            || self.name_cap == 0
            || self.max_depth < 3
            || self.outbox_cap < CANCEL_LINE_BOUND + OUTBOX_HEADER
            || self.arena_len(0) == usize::MAX
        {
            return Err(StorageError::BadConfig);
        }
        Ok(())
    }
}

impl Default for McpConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Bytes each queued line costs in the outbox besides itself.
pub const OUTBOX_HEADER: usize = 12;

/// The longest `initialize`, `server/discover` or `subscriptions/listen` line, and the most a
/// `_meta` envelope adds to a line, with the longest client name and version allowed.
const INITIALIZE_BOUND: usize = 320 + 6 * 2 * CLIENT_TEXT_CAP;

/// Bytes of the client's name and of its version in `clientInfo`.
pub const CLIENT_TEXT_CAP: usize = 64;

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// Who the client says it is in `initialize` (`clientInfo`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McpClientInfo<'a> {
    /// `clientInfo.name` (at most [`CLIENT_TEXT_CAP`] bytes).
    pub name: &'a str,
    /// `clientInfo.version` (at most [`CLIENT_TEXT_CAP`] bytes).
    pub version: &'a str,
}

impl McpClientInfo<'static> {
    /// This crate, by its package name and version.
    pub const THIS_CRATE: McpClientInfo<'static> = McpClientInfo {
        name: env!("CARGO_PKG_NAME"),
        version: env!("CARGO_PKG_VERSION"),
    };
}

#[cfg(feature = "schema")]
/// A tool's output schema, kept by the host for as long as the client is used.
#[derive(Copy, Clone, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McpOutputSchema<'a> {
    /// The tool's name as its calls carry it: the server's own, or the name a call was
    /// handed in under (`handle_frame_as`, a name mapped for a provider).
    pub tool: &'a str,
    /// Its `outputSchema`, read.
    pub schema: &'a crate::json::schema::Schema<'a>,
}
