//! The typed value families of the C surface, one enum each, each with its own prefix.
//!
//! The library writes these into the structs it hands out. Where C hands a value *in*
//! (`pw_tool.kind`, a sync tool's return value) the Rust field is a plain `u32` ([`raw`]),
//! named like the enum in the header: any bits C puts there are then a value Rust may read,
//! and an unknown one is refused with a code rather than being undefined behaviour.

#![allow(non_camel_case_types)]

/// How a registered tool runs (`pw_tool.kind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_tool_kind {
    /// Runs at once, through `pw_tool.call`.
    PW_TOOL_KIND_SYNC = 0,
    /// The host is told (`pw_wrapper_poll_event`) and completes it later.
    PW_TOOL_KIND_DEFERRED = 1,
    /// A tool adapter the host connects; its frames go to `pw_wrapper_handle_adapter_frame`.
    PW_TOOL_KIND_ADAPTER = 2,
}

/// What a sync tool function returns (any value but `PW_TOOL_STATUS_OK` counts as a failure).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_tool_status {
    /// It wrote a JSON result.
    PW_TOOL_STATUS_OK = 0,
    /// It wrote an error message.
    PW_TOOL_STATUS_FAILED = 1,
}

/// What the host must do with a model frame it passed in (`pw_disposition.kind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_disposition_kind {
    /// Forward the very bytes you passed in, unchanged.
    PW_DISPOSITION_FORWARD = 0,
    /// A `TOOL_CALL` was intercepted.
    PW_DISPOSITION_INTERCEPTED = 1,
    /// An `END` was held (it comes back through `pw_wrapper_poll_transmit`).
    PW_DISPOSITION_HELD = 2,
}

/// How `pw_wrapper_complete` completed a call.
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_completed {
    /// With the outcome given.
    PW_COMPLETED_AS_GIVEN = 0,
    /// The result was longer than `result_cap` without white space: the call failed with
    /// `Tool <name> result exceeds <N> bytes` (SPEC §7.23).
    PW_COMPLETED_RESULT_TOO_LARGE = 1,
    /// The result nested deeper than `max_depth`: the call failed with
    /// `Tool <name> result is nested deeper than <N> levels` (SPEC §7.23).
    PW_COMPLETED_RESULT_TOO_DEEP = 2,
    /// The error message was longer than `message_cap` once escaped: the call failed with
    /// its longest prefix that fits, cut on a character boundary.
    PW_COMPLETED_MESSAGE_CUT = 3,
}

/// Where a frame from `pw_wrapper_poll_transmit` goes (`pw_transmit.route`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_route {
    /// The model's sink.
    PW_ROUTE_MODEL = 0,
    /// The consumer.
    PW_ROUTE_CONSUMER = 1,
    /// A pending call's tool adapter (`pw_transmit.handle` names the call).
    PW_ROUTE_ADAPTER = 2,
}

/// How a started call runs (`pw_event.kind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_pending_kind {
    /// A deferred call: run it, then `pw_wrapper_complete` it.
    PW_PENDING_DEFERRED = 0,
    /// An adapter call: connect its adapter (its `TOOL_CALL` is queued).
    PW_PENDING_ADAPTER = 1,
}

/// What `pw_wrapper_poll_output` handed out (`pw_output.kind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_output_kind {
    /// A frame, in the buffer given (`pw_output.frame`).
    PW_OUTPUT_FRAME = 0,
    /// An `on_tool_call` event (`pw_output.call`).
    PW_OUTPUT_TOOL_CALL = 1,
    /// An `on_tool_result` event (`pw_output.call`, `pw_output.outcome`).
    PW_OUTPUT_TOOL_RESULT = 2,
}

/// The response formats a stream decoder reads and the item encoders write (SPEC §8).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_provider {
    /// OpenAI Chat Completions SSE, and every OpenAI-compatible server.
    PW_PROVIDER_OPENAI_CHAT = 1,
    /// OpenAI Responses API SSE.
    PW_PROVIDER_OPENAI_RESPONSES = 2,
    /// Anthropic Messages SSE.
    PW_PROVIDER_ANTHROPIC = 3,
    /// Gemini / Vertex `streamGenerateContent?alt=sse`.
    PW_PROVIDER_GEMINI = 4,
    /// Ollama `/api/chat` NDJSON.
    PW_PROVIDER_OLLAMA = 5,
}

/// The fields C fills in: plain integers under the enums' names, checked when read.
pub mod raw {
    /// A [`pw_tool_kind`](super::pw_tool_kind) as C hands it in.
    pub type pw_tool_kind = u32;
    /// A [`pw_tool_status`](super::pw_tool_status) as a sync tool returns it.
    pub type pw_tool_status = u32;
    /// A [`pw_provider`](super::pw_provider) as C hands it in.
    pub type pw_provider = u32;
}
