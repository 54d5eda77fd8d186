//! What the client counted: lines it read and could not use, and the calls it carried.

/// Counters of an MCP client (each saturates).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McpStats {
    /// Lines read from the server (blank ones not counted).
    pub lines: u64,
    /// Lines that are not JSON.
    pub not_json: u32,
    /// JSON lines that are not JSON-RPC 2.0 messages.
    pub not_jsonrpc: u32,
    /// Lines longer than `line_cap`.
    pub too_long: u32,
    /// Lines nested deeper than the depth limit.
    pub too_deep: u32,
    /// Responses whose id is none the client issued.
    pub unknown_id: u32,
    /// Responses and progress for calls already ended (answered, cancelled, timed out).
    pub late: u32,
    /// Progress notifications whose token is none the client issued.
    pub unknown_progress: u32,
    /// `ping` requests answered.
    pub pings: u32,
    /// Other requests from the server, answered `-32601`.
    pub refused_requests: u32,
    /// Notifications handed to the host as events.
    pub notifications: u32,
    /// `tools/call` requests queued.
    pub calls: u64,
    /// Calls answered by the server (result or error).
    pub answered: u64,
    /// Calls the client failed itself.
    pub failed: u64,
}

/// Adds one, saturating.
pub(crate) fn bump32(n: &mut u32) {
    *n = n.saturating_add(1);
}

/// Adds one, saturating.
pub(crate) fn bump64(n: &mut u64) {
    *n = n.saturating_add(1);
}
