//! The typed value families of the C surface, one enum each, each with its own prefix.
//!
//! The library writes these into the structs it hands out. Where C hands a value *in*
//! (`pw_tool.kind`, a sync tool's return value) the Rust field is a plain `u32` ([`raw`]),
//! named like the enum in the header: any bits C puts there are then a value Rust may read,
//! and an unknown one is refused with a code rather than being undefined behaviour.

#![allow(non_camel_case_types)]

// Each enum is written out in full, not made by a macro: cbindgen reads the source without
// expanding macros, so a macro-made enum would drop out of the header. Their alike shape
// (doc, `repr`, `derive`, variants) is the header's. The conversions from core types are
// `match`es where they are used, one per core type, with nothing in common to share.

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

/// Where an MCP client is in its life (`pw_mcp_state`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_client_state {
    /// Not started: call `pw_mcp_start`.
    PW_MCP_STATE_IDLE = 0,
    /// Initializing and listing tools.
    PW_MCP_STATE_STARTING = 1,
    /// Serving calls.
    PW_MCP_STATE_READY = 2,
    /// The start-up failed; calls fail at once.
    PW_MCP_STATE_FAILED = 3,
    /// The transport closed; calls fail at once.
    PW_MCP_STATE_CLOSED = 4,
}

/// What `pw_mcp_handle_frame` did with a frame (`pw_mcp_handled.kind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_handled_kind {
    /// A `TOOL_CALL` became request `pw_mcp_handled.request`, queued for the server.
    PW_MCP_HANDLED_SENT = 0,
    /// A `TOOL_CALL` failed at once (`pw_mcp_handled.failure`): its `ERROR` waits in
    /// `pw_mcp_poll_frame`.
    PW_MCP_HANDLED_FAILED = 1,
    /// A `CANCEL` ended its call (`pw_mcp_handled.notified`: the server is told).
    PW_MCP_HANDLED_CANCELLED = 2,
}

/// What `pw_mcp_poll_request` hands out (`pw_mcp_post.kind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_post_kind {
    /// POST the body with the header lines to the MCP endpoint, and report its response as
    /// `pw_mcp_post.stream`.
    PW_MCP_POST = 0,
    /// Close the response of `pw_mcp_post.stream` (a cancelled call) and report nothing
    /// more of it: the stream is free again.
    PW_MCP_POST_CLOSE = 1,
}

/// Why the MCP client failed a call itself (`pw_mcp_handled.failure`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_failure {
    /// No failure (the call was not failed).
    PW_MCP_FAILURE_NONE = 0,
    /// The transport closed (SPEC §9.7).
    PW_MCP_FAILURE_CLOSED = 1,
    /// The server's start-up failed, so the call was never sent.
    PW_MCP_FAILURE_NOT_STARTED = 2,
    /// The call's args are not a JSON object (SPEC §9.2).
    PW_MCP_FAILURE_ARGS_NOT_OBJECT = 3,
    /// Every call slot is taken (`limit`: the slots).
    PW_MCP_FAILURE_TOO_MANY = 4,
    /// The `tools/call` line can never fit the outbox (`len`: the line, `limit`: what the
    /// outbox takes).
    PW_MCP_FAILURE_REQUEST_TOO_LONG = 5,
    /// The response was longer than `line_cap` (`limit`).
    PW_MCP_FAILURE_RESPONSE_TOO_LONG = 6,
    /// The response nested deeper than `max_depth` (`limit`).
    PW_MCP_FAILURE_RESPONSE_TOO_DEEP = 7,
    /// The response had neither `result` nor `error`.
    PW_MCP_FAILURE_NO_OUTCOME = 8,
    /// The result's `resultType` is `input_required` (SPEC §9.10): the server asks for input
    /// this client cannot give.
    PW_MCP_FAILURE_INPUT_REQUIRED = 9,
    /// Over Streamable HTTP, the response ended without the answer and its status (`limit`)
    /// was no success (SPEC §9.11).
    PW_MCP_FAILURE_HTTP = 10,
}

/// What `pw_mcp_poll_event` handed out (`pw_mcp_event.kind`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_event_kind {
    /// The server answered `initialize` with a revision the client speaks, or listed
    /// 2026-07-28 in its `server/discover` result (`version`, and the result in `raw`).
    PW_MCP_EVENT_INITIALIZED = 0,
    /// A listed tool (`name`, its entry in `raw`): register it as an adapter tool to serve it.
    PW_MCP_EVENT_TOOL = 1,
    /// A listed tool the client cannot serve (`skip`, its entry in `raw`).
    PW_MCP_EVENT_TOOL_SKIPPED = 2,
    /// Every page is listed (`tools` handed out): calls go to the server from now on.
    PW_MCP_EVENT_READY = 3,
    /// The start-up failed (`start_error`): calls waiting fail, later ones fail at once.
    PW_MCP_EVENT_START_FAILED = 4,
    /// A notification other than progress (`method`, `params`); it changes nothing else.
    PW_MCP_EVENT_NOTIFICATION = 5,
    /// The server's tools changed and were listed again (SPEC §9.12): the `PW_MCP_EVENT_TOOL`s
    /// since its `notifications/tools/list_changed` are its whole list now (`tools` of them).
    PW_MCP_EVENT_TOOLS_CHANGED = 6,
}

/// Why a listed tool was skipped (`pw_mcp_event.skip`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_skip {
    /// Not a skipped tool.
    PW_MCP_SKIP_NONE = 0,
    /// Its decoded name (`len` bytes) is longer than `name_cap` (`cap`).
    PW_MCP_SKIP_NAME_TOO_LONG = 1,
    /// The entry is not an object with a string `name`.
    PW_MCP_SKIP_NO_NAME = 2,
    /// Over Streamable HTTP, its `inputSchema` has an `x-mcp-header` annotation the revision
    /// does not allow: such a tool is not offered.
    PW_MCP_SKIP_BAD_HEADER_ANNOTATION = 3,
    /// Over Streamable HTTP, its `x-mcp-header` parameters do not fit `header_table_cap`
    /// (`cap`).
    PW_MCP_SKIP_HEADER_TABLE_FULL = 4,
}

/// Why an MCP client's start-up failed (`pw_mcp_event.start_error`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_start_error {
    /// Not a failed start-up.
    PW_MCP_START_NONE = 0,
    /// `initialize` chose a revision the client does not speak, or a client fixed to
    /// 2026-07-28 found it missing from `server/discover`'s list (the value in `raw`).
    PW_MCP_START_UNSUPPORTED_VERSION = 1,
    /// The `initialize` result has no string `protocolVersion`, or the `tools/list` result no
    /// `tools` array (the result in `raw`).
    PW_MCP_START_BAD_RESULT = 2,
    /// `initialize` or `tools/list` was answered with a JSON-RPC error (in `raw`).
    PW_MCP_START_REFUSED = 3,
    /// A `tools/list` cursor (`len` bytes) longer than `cursor_cap`.
    PW_MCP_START_CURSOR_TOO_LONG = 4,
    /// More `tools/list` pages than the client follows: a server that never stops paging.
    PW_MCP_START_TOO_MANY_PAGES = 5,
    /// The answer to `initialize` or `tools/list` was longer than `line_cap` or nested
    /// deeper than the depth limit.
    PW_MCP_START_RESPONSE_TOO_LARGE = 6,
    /// The client was fixed to 2026-07-28 and the server did not answer `server/discover`
    /// within `start_timeout_ms`.
    PW_MCP_START_NO_ANSWER = 7,
    /// Over Streamable HTTP, the response to `initialize` or `tools/list` ended without the
    /// answer; its status (0: no response at all) is the event's `len`.
    PW_MCP_START_NO_RESPONSE = 8,
}

/// Which MCP revision a client speaks (`pw_mcp_config.revision`, SPEC §9.9).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_mcp_revision {
    /// `server/discover` first: 2026-07-28 when the server lists it, else the `initialize`
    /// handshake on the same connection.
    PW_MCP_REVISION_AUTO = 0,
    /// The `initialize` handshake only (2025-11-25 and the revisions before it).
    PW_MCP_REVISION_2025_11_25 = 1,
    /// 2026-07-28 only: a server that does not list it in `server/discover` fails the start.
    PW_MCP_REVISION_2026_07_28 = 2,
}

/// What a frame came to in a conversation (`pw_conversation_push_frame`).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_pushed {
    /// Kept in the conversation.
    PW_PUSHED_KEPT = 0,
    /// Not part of what goes back to a provider (a type the conversation does not keep, or
    /// reasoning and state the turn's provider does not take back); nothing changed.
    PW_PUSHED_IGNORED = 1,
    /// `END` or `ERROR`: the response is over.
    PW_PUSHED_ENDED = 2,
}

/// Which tool the model must call (`pw_request_options.tool_choice`, SPEC §10.3).
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum pw_tool_choice {
    /// Not written: the provider's default.
    PW_TOOL_CHOICE_UNSET = 0,
    /// The model decides.
    PW_TOOL_CHOICE_AUTO = 1,
    /// No tool.
    PW_TOOL_CHOICE_NONE = 2,
    /// Some tool.
    PW_TOOL_CHOICE_REQUIRED = 3,
    /// The tool `pw_request_options.tool` names (its declared name or the name the model sees).
    PW_TOOL_CHOICE_TOOL = 4,
}

/// The fields C fills in: plain integers under the enums' names, checked when read.
pub mod raw {
    /// A [`pw_tool_kind`](super::pw_tool_kind) as C hands it in.
    pub type pw_tool_kind = u32;
    /// A [`pw_tool_status`](super::pw_tool_status) as a sync tool returns it.
    pub type pw_tool_status = u32;
    /// A [`pw_provider`](super::pw_provider) as C hands it in.
    pub type pw_provider = u32;
    /// A [`pw_tool_choice`](super::pw_tool_choice) as C hands it in.
    pub type pw_tool_choice = u32;
    /// A [`pw_mcp_revision`](super::pw_mcp_revision) as C hands it in.
    pub type pw_mcp_revision = u32;
}
