//! Every room and cost constant, in one place: what a queue record, a held `END` and the
//! frames the library composes take at most. The sizes in `WrapperConfig` (`queue_len`,
//! `arena_len`) and every reservation before a state change are built from these, so a
//! change here moves all of them together. A leaf: it imports nothing of the crate.

/// Bytes of a queue record's header: route tag, body kind, slot, call index, frame length.
pub(crate) const RECORD_HEADER: usize = 12;

/// Bytes a queued frame of `len` bytes takes in the output queue.
pub(crate) const fn record_cost(len: usize) -> usize {
    len.saturating_add(RECORD_HEADER)
}

/// Bytes each held `END` costs on top of its own length (its length, as a `u32`).
pub(crate) const HELD_HEADER: usize = 4;

/// The most queue bytes releasing the held `END`s can take: one record, whatever they are.
pub(crate) const RELEASE_COST_BOUND: usize = record_cost(0);

/// Bytes of the continue prompt frame besides its (escaped) last tool error:
/// `{"type":"TEXT","content":"`, `Tool results above.`, ` Last tool error: ` and `"}`
/// (checked against the texts where they are written).
pub(crate) const PROMPT_BASE_LEN: usize = 26 + 19 + 18 + 2;

/// A bound on the round-limit `ERROR` frame (75 bytes with the longest `u32`).
pub(crate) const ROUND_LIMIT_LEN_BOUND: usize = 80;

/// A bound on what a `TOOL_RESULT`, adapter `TOOL_CALL` or `CANCEL` frame holds besides its
/// id, name and value or reason (62 bytes for a `TOOL_RESULT`).
pub(crate) const FRAME_AROUND_BOUND: usize = 64;

/// Room, quotes included, for the text of a message the wrapper composes around a tool name
/// or id: at most 47 bytes (`Tool `, ` result exceeds `, 20 digits, ` bytes`) and 2 quotes.
pub(crate) const AROUND_NAME_BOUND: usize = 64;
