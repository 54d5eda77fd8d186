//! What a decoder is made with: the provider it reads, its capacities, what it counts and
//! why it could not be made.

use crate::json;

/// The capacities of a decoder; the arena it needs is [`arena_len`](Self::arena_len).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DecoderConfig {
    /// The longest provider event kept (an SSE event's joined data, an NDJSON line); a
    /// longer one is skipped and counted.
    pub event_cap: usize,
    /// The most argument bytes one call may have.
    pub args_cap: usize,
    /// The longest tool name kept, in bytes (a longer one is cut and counted): keep it at
    /// most the wrapper's `name_cap`.
    pub name_cap: usize,
    /// The longest call id kept, in bytes (a longer one is cut and counted): keep it at
    /// most the wrapper's `id_cap`.
    pub id_cap: usize,
    /// Arguments nested deeper than this (the args value is level 1) are not valid JSON. A
    /// `TOOL_CALL` frame is two levels deeper than its args, so a wrapper reading the frames
    /// needs a `max_depth` at least this + 2 ([`fit`](Self::fit) sees to it).
    pub max_depth: u8,
}

/// Bytes kept of a finish reason (the longest any provider writes is 26).
pub const REASON_CAP: usize = 64;
/// Bytes kept of the JSON path of a Gemini streamed argument.
pub const PATH_CAP: usize = 256;

impl DecoderConfig {
    /// Events up to 16 KiB, 4 KiB of arguments per call, names and ids up to 64 bytes.
    pub const DEFAULT: Self = Self {
        event_cap: 16 * 1024,
        args_cap: 4096,
        name_cap: 64,
        id_cap: 64,
        max_depth: json::DEFAULT_MAX_DEPTH,
    };

    /// For a few KiB of RAM: events up to 2 KiB, 512 B of arguments, names and ids 32 and 48 B.
    pub const SMALL: Self = Self {
        event_cap: 2048,
        args_cap: 512,
        name_cap: 32,
        id_cap: 48,
        max_depth: 16,
    };

    /// These capacities made to fit a wrapper's: its name and id capacities, and a depth limit
    /// two below its own (a `TOOL_CALL` frame puts `args` two levels inside it), so that every
    /// call the decoder writes is one the wrapper reads and answers; deeper args come out
    /// with `args_error` instead of as a frame the wrapper would refuse as malformed.
    pub const fn fit(self, wrapper: &crate::wrapper::WrapperConfig) -> Self {
        Self {
            name_cap: wrapper.name_cap,
            id_cap: wrapper.id_cap,
            max_depth: if wrapper.max_depth > 3 {
                wrapper.max_depth - 2
            } else {
                1
            },
            ..self
        }
    }

    /// Arena bytes each call slot takes.
    pub const fn slot_len(&self) -> usize {
        self.id_cap
            .saturating_add(self.name_cap)
            .saturating_add(self.args_cap)
    }

    /// The arena a decoder with `calls` slots needs.
    pub const fn arena_len(&self, calls: usize) -> usize {
        self.event_cap
            .saturating_add(REASON_CAP)
            .saturating_add(PATH_CAP)
            .saturating_add(calls.saturating_mul(self.slot_len()))
    }

    /// The longest frame the decoder can write: size the buffer given to `poll_frame` so (each
    /// frame is then written in one pass; into a shorter buffer it is measured first).
    pub const fn max_frame_len(&self) -> usize {
        // A delta, a provider state or an error re-escaped from an event: at most twice its
        // bytes (a raw error value quoted), plus the frame around it.
        let from_event = self.event_cap.saturating_mul(2).saturating_add(64);
        // A call: every decoded byte may escape to six (`\u00XX`), the name twice.
        let call = self
            .id_cap
            .saturating_add(self.name_cap.saturating_mul(2))
            .saturating_add(self.args_cap)
            .saturating_mul(6)
            .saturating_add(160);
        if from_event > call {
            from_event
        } else {
            call
        }
    }
}

/// What a decoder counted since it was made: the provider data it skipped (SPEC §8 rule
/// 5), by kind, and the calls it saw.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DecoderStats {
    /// Events whose data is not JSON.
    pub not_json: u32,
    /// Events of a name the provider does not send (or, Anthropic, with no name).
    pub unknown_event: u32,
    /// Events of a known kind whose members have the wrong shape.
    pub bad_shape: u32,
    /// Events longer than `event_cap`.
    pub overlong: u32,
    /// Events after the response ended (its `END` was written), until the body ends.
    pub after_end: u32,
    /// Ids, names and finish reasons cut to their capacity.
    pub cut: u32,
    /// Calls that started (opened, or refused for want of a slot).
    pub calls_started: u64,
    /// `TOOL_CALL` frames written: once a body is finished and its frames polled, equal to
    /// `calls_started`.
    pub calls_written: u64,
}
