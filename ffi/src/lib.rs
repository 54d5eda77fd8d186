//! C ABI for `polyweave-tool-adapter`: no malloc, the host hands memory in.
//!
//! This crate builds a static library (`libpolyweave_tool_adapter_ffi.a`)
//! and the header `include/polyweave_tool_adapter.h` describes it: JSON
//! validation, frame kinds, `TOOL_CALL` fields, JSON string decoding, the
//! NDJSON line splitter, the wrapper (`pw_wrapper_*`) with tools and hooks
//! as C function pointers, the stream decoders, the MCP client, and the
//! conversation and request bodies (`pw_conversation_*`, `pw_request_*`).
//!
//! # Conventions
//!
//! - **Names.** Everything C sees starts with `pw_` (functions, types) or
//!   `PW_` (constants). A function named `pw_<object>_<verb>` works on the
//!   object passed as its first argument (`pw_line_splitter_feed(f, …)`).
//! - **Results.** Every fallible function returns a [`pw_result`]: `PW_OK`
//!   (0) or a code saying why not. Codes are stable, numbered in groups
//!   (1–99 arguments and memory, 100–199 JSON and frames, 200–299 the line
//!   splitter, 300–399 the wrapper, 400–499 the stream decoders, 500–599 the MCP
//!   client, 600–699 the conversation and requests, 700–799 JSON Schema, 900+ internal) and never
//!   reused; [`pw_result_text`] writes a message for any code. Other outputs
//!   go through out-pointers.
//! - **Outputs.** Out-pointers are written only on `PW_OK`, except where a
//!   function documents more (the needed size with `PW_BUFFER_TOO_SMALL`, a
//!   line length with `PW_LINE_TOO_LONG`, an error offset, a refused
//!   declaration's index from `pw_request_init`, a refused schema's kind and offset from
//!   `pw_schema_check`, a verdict's text from `pw_schema_validate`). On every other
//!   error nothing at all is written. Text is UTF-8 with an explicit length,
//!   never NUL-terminated (except the static C strings of [`pw_version`] and
//!   [`pw_mcp_protocol_version`]).
//! - **NULL.** Every pointer argument is checked first: any NULL gives
//!   `PW_NULL_POINTER` and the call does nothing, even with a length of 0.
//!   There are no optional pointers.
//! - **No malloc, no global state.** The library never allocates and keeps
//!   nothing between calls. Objects live in memory the host hands in: ask
//!   `pw_<object>_size()` and `pw_<object>_align()`, pass a block at least
//!   that big and that aligned to `pw_<object>_init` (a smaller block gives
//!   `PW_STORAGE_TOO_SMALL`, a misaligned one `PW_STORAGE_MISALIGNED`), and get
//!   back an opaque `pw_<object> *` (the same address). `PW_<OBJECT>_SIZE_BOUND`
//!   (and `PW_<OBJECT>_DEFAULT_SIZE_BOUND`) and `PW_MAX_ALIGN` are upper bounds valid on
//!   every target, for static storage. There is nothing to free: to drop an object, stop using
//!   it; `_init` on the same memory starts afresh. Scratch buffers (a line
//!   buffer, an output buffer) are handed in the same way, with their length.
//! - **Ownership and spans.** The host owns all memory. Results that point
//!   at text (a line, an id, a `type`) are spans — pointer plus length — into
//!   memory the host handed in, valid as long as that memory is and, for a
//!   line splitter's line, until the next call that changes the splitter. Nothing is
//!   copied unless the host asks (`pw_json_string_decode`).
//! - **Buffers too small.** A too-small output buffer gives
//!   `PW_BUFFER_TOO_SMALL` with the needed size in the length out-pointer and
//!   nothing written to the buffer; call again with a big enough one.
//! - **Alignment and overlap.** Typed out-pointers must be aligned for their
//!   type and objects for their `_align()` (else `PW_STORAGE_MISALIGNED`). A
//!   region the library writes must not overlap any other argument's region
//!   (else `PW_STORAGE_OVERLAP`, checked before anything is touched).
//! - **Threads.** No locks and no global state: distinct objects may be used
//!   from distinct threads at once; one object must not be used by two calls
//!   at once (the host serialises them). Stateless functions are reentrant.
//! - **Panics.** With the default `std` feature every function body runs in
//!   `std::panic::catch_unwind`; a panic (a bug) returns `PW_PANIC` (or, for
//!   the functions that return a value, 0 / an empty string) instead of
//!   unwinding into C. Built with `--no-default-features` the crate is
//!   `#![no_std]` for bare-metal C firmware (Cortex-M and the like): it
//!   defines a `#[panic_handler]` that spins forever (`loop` with
//!   `core::hint::spin_loop`), so a watchdog can reset the device. Link such a
//!   build only into programs that have no other panic handler (C firmware;
//!   Rust firmware should use `polyweave-tool-adapter` directly), and only
//!   for targets whose panic strategy is `abort` (the bare-metal ones): on a
//!   hosted target such as `x86_64-unknown-linux-gnu` a `no_std` staticlib
//!   does not link, so keep `std` there.
//!
//! # API
//!
//! In the header's order: what every object shares, then each object with its types and
//! functions (sizes, configuration, placing, inputs, outputs, accessors).
//!
//! | function | what it does |
//! |---|---|
//! | [`pw_version`] | static C string `"polyweave-tool-adapter-ffi/<version>"` |
//! | [`pw_result_text`], [`pw_result_is_malformed`], [`pw_result_is_not_waiting`] | a code's message and class |
//! | [`pw_json_validate`] | one JSON value? (with depth limit, error offset) |
//! | [`pw_frame_peek_kind`] | a frame's kind (`pw_frame_kind`), reading only up to `type` |
//! | [`pw_frame_validate`] | validates a whole frame, gives its kind |
//! | [`pw_tool_call_fields`] | id / name / args spans of a validated `TOOL_CALL` |
//! | [`pw_json_string_decode`] | decodes a JSON string token into a buffer |
//! | [`pw_schema_check`], [`pw_schema_validate`], [`pw_schema_index_words`] | whether the validator reads a schema (why not, where); a value checked against it, `<where>: <why>` (SPEC §11); the size of a schema's index (`pw_tool.schema_index`) |
//! | [`pw_line_splitter_size`], [`pw_line_splitter_align`], [`pw_line_splitter_init`] | an NDJSON line splitter in host memory |
//! | [`pw_line_splitter_feed`], [`pw_line_splitter_next_line`], [`pw_line_splitter_finish`] | NDJSON lines from a byte stream |
//! | [`pw_decoder_size`], [`pw_decoder_align`], [`pw_decoder_max_frame_len`], [`pw_decoder_config_default`], [`pw_decoder_config_fit`], [`pw_decoder_init`] | a stream decoder for one provider (`pw_provider`), in host memory |
//! | [`pw_decoder_feed`], [`pw_decoder_finish`], [`pw_decoder_poll_frame`] | a response body in, frames out |
//! | [`pw_decoder_get_stats`], [`pw_provider_from_name`] | counters, a provider by name |
//! | [`pw_wrapper_size`], [`pw_wrapper_align`], [`pw_wrapper_max_frame_len`], [`pw_wrapper_config_default`], [`pw_wrapper_init`] | a wrapper, its tools and hooks, in one block of host memory |
//! | [`pw_wrapper_handle_response`], [`pw_wrapper_handle_request`] | the model's and the consumer's frames |
//! | [`pw_wrapper_complete`], [`pw_wrapper_complete_unwritable`], [`pw_wrapper_handle_adapter_frame`], [`pw_wrapper_handle_adapter_closed`] | pending calls completed by the host or a tool adapter |
//! | [`pw_wrapper_handle_timeout`], [`pw_wrapper_cancel`], [`pw_wrapper_abort`], [`pw_wrapper_clear_trace`] | the clock and the host's controls |
//! | [`pw_wrapper_poll_transmit`], [`pw_wrapper_poll_event`], [`pw_wrapper_poll_output`], [`pw_wrapper_poll_timeout`] | frames to write, calls to start, frames with kept hook events in SPEC order, the next deadline |
//! | [`pw_wrapper_pending`], [`pw_wrapper_trace_entry`], [`pw_wrapper_get_stats`] | state and counters |
//! | [`pw_writer_write`] | a sync tool writes its result or message |
//! | [`pw_adapter_call_size`], [`pw_adapter_call_align`], [`pw_adapter_call_options_default`], [`pw_adapter_call_init`] | one standalone call through a tool adapter, in host memory |
//! | [`pw_adapter_call_handle_frame`], [`pw_adapter_call_handle_closed`], [`pw_adapter_call_handle_timeout`] | the adapter's frames, its closing, the clock |
//! | [`pw_adapter_call_poll_transmit`], [`pw_adapter_call_poll_timeout`], [`pw_adapter_call_outcome`] | frames for the adapter, the deadline, how it ended |
//! | [`pw_mcp_size`], [`pw_mcp_align`], [`pw_mcp_max_frame_len`], [`pw_mcp_max_line_len`], [`pw_mcp_config_default`], [`pw_mcp_config_fit`], [`pw_mcp_init`] | an MCP client (SPEC §9) serving a wrapper's adapter tools, in host memory |
//! | [`pw_mcp_start`], [`pw_mcp_feed`], [`pw_mcp_handle_frame`], [`pw_mcp_handle_closed`], [`pw_mcp_handle_timeout`] | start-up, the server's bytes, the wrapper's adapter frames, the transport's end, the clock (the start-up's `server/discover` only) |
//! | [`pw_mcp_poll_transmit`], [`pw_mcp_poll_frame`], [`pw_mcp_poll_event`] | lines for the server, frames for the wrapper, tools and notifications |
//! | [`pw_mcp_output_schemas_size`], [`pw_mcp_set_output_schemas`] | tools' output schemas results are checked against (SPEC §11), in memory the host hands in |
//! | [`pw_mcp_state`], [`pw_mcp_protocol_version`], [`pw_mcp_poll_timeout`], [`pw_mcp_get_stats`], [`pw_mcp_in_flight`], [`pw_mcp_queued`] | state, the revision spoken, the start-up's deadline, counters |
//! | [`pw_mcp_http_size`], [`pw_mcp_http_init`], [`pw_mcp_max_headers_len`], [`pw_mcp_is_http`] | the MCP client over Streamable HTTP (SPEC §9.11), in host memory with its response streams |
//! | [`pw_mcp_poll_request`], [`pw_mcp_handle_response`], [`pw_mcp_feed_response`], [`pw_mcp_handle_response_end`] | POSTs to make or responses to close; each response's head, body pieces and end |
//! | [`pw_encode_item`] | a `TOOL_CALL` or `TOOL_RESULT` as a provider's request item |
//! | [`pw_conversation_size`], [`pw_conversation_align`], [`pw_conversation_init`] | a conversation (SPEC §10.2) in one block, its memory the rest of the block |
//! | [`pw_conversation_set_system`], [`pw_conversation_push_user`], [`pw_conversation_pin_first_user`] | system and user texts |
//! | [`pw_conversation_begin_response`], [`pw_conversation_push_frame`], [`pw_conversation_end_response`], [`pw_conversation_clear`] | the model's turns and the results of their calls, as frames |
//! | [`pw_conversation_get_stats`] | memory used, entries held and evicted |
//! | [`pw_request_size`], [`pw_request_align`], [`pw_request_options_default`], [`pw_request_init`] | a request body (SPEC §10.3) from a conversation, `pw_declaration`s and `pw_request_options` |
//! | [`pw_request_len`], [`pw_request_write`], [`pw_request_gemini_path`] | its length, its bytes into buffers of any size, Gemini's path |
//!
//! Sizes for static storage, as C constant expressions: `PW_<OBJECT>_DEFAULT_SIZE_BOUND`
//! (the default capacities, by slots) and `PW_<OBJECT>_SIZE_BOUND(P, …)` (capacities named
//! `P_NAME_CAP` and so on), described at the top of the header.
//!
//! # Building
//!
//! - Host: `cargo build -p polyweave-tool-adapter-ffi` gives
//!   `target/debug/libpolyweave_tool_adapter_ffi.a`; link it with
//!   `-lpthread -ldl -lm` (the `std` runtime's needs on Linux).
//! - Firmware: `cargo build -p polyweave-tool-adapter-ffi --release
//!   --target thumbv7em-none-eabihf --no-default-features` (or
//!   `thumbv6m-none-eabi`); nothing else to link.
//! - Header: generated by cbindgen from this crate (`ffi/cbindgen.toml`) and
//!   checked in; `cargo test -p polyweave-tool-adapter-ffi --test header`
//!   fails when it is stale, and `PW_BLESS=1` on that command rewrites it.
//! - Installing (cargo-c, pkg-config, CMake), the Cortex-M archives, a complete host loop
//!   in C and the C++ header: the crate's `README.md` ("Install", "A host loop in C",
//!   "C++").
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]
// The exported functions say what they need in the C idiom ("The caller must pass …"), which
// is what the header shows, rather than under Rust's `# Safety` heading.
#![allow(clippy::missing_safety_doc)]

// The order of these modules is the header's: cbindgen writes constants and functions in
// source order. Shared things first, then each object with its types and functions.
mod codes;
// Version and codes' texts.
mod about;
// pw_str, pw_outcome, PW_NO_TIMEOUT, PW_MAX_ALIGN, the block layout.
mod shared;
// Argument checks at the boundary (nothing exported).
mod boundary;
// The enums that cross the boundary.
mod enums;
// JSON and frames, stateless.
mod frame;
// JSON Schema validation, stateless.
mod schema;
// pw_line_splitter.
mod line_splitter;
// pw_decoder.
mod decoder;
// pw_wrapper.
mod wrapper;
// A wrapper's tools: pw_tool, pw_writer.
mod tool;
// pw_adapter_call.
mod call;
// pw_mcp.
mod mcp;
// pw_mcp over Streamable HTTP: its size, init, POSTs and responses.
mod mcp_http;
// pw_encode_item.
mod items;
// pw_conversation.
mod conversation;
// pw_request, pw_declaration.
mod request;

pub use about::{
    pw_result_is_malformed, pw_result_is_not_waiting, pw_result_text, pw_version, PW_VERSION_MAJOR,
    PW_VERSION_MINOR, PW_VERSION_PATCH,
};
pub use call::{
    pw_adapter_call, pw_adapter_call_align, pw_adapter_call_handle_closed,
    pw_adapter_call_handle_frame, pw_adapter_call_handle_timeout, pw_adapter_call_init,
    pw_adapter_call_options, pw_adapter_call_options_default, pw_adapter_call_outcome,
    pw_adapter_call_poll_timeout, pw_adapter_call_poll_transmit, pw_adapter_call_size,
    PW_ADAPTER_CALL_MAX_BASE_SIZE,
};
pub use codes::pw_result;
pub use conversation::{
    pw_conversation, pw_conversation_align, pw_conversation_begin_response, pw_conversation_clear,
    pw_conversation_end_response, pw_conversation_get_stats, pw_conversation_init,
    pw_conversation_pin_first_user, pw_conversation_push_frame, pw_conversation_push_user,
    pw_conversation_set_system, pw_conversation_size, pw_conversation_stats,
    PW_CONVERSATION_MAX_BASE_SIZE,
};
pub use decoder::{
    pw_decoder, pw_decoder_align, pw_decoder_config, pw_decoder_config_default,
    pw_decoder_config_fit, pw_decoder_feed, pw_decoder_finish, pw_decoder_get_stats,
    pw_decoder_init, pw_decoder_max_frame_len, pw_decoder_poll_frame, pw_decoder_size,
    pw_decoder_stats, pw_provider_from_name, PW_DECODER_DEFAULT_ARGS_CAP,
    PW_DECODER_DEFAULT_EVENT_CAP, PW_DECODER_DEFAULT_ID_CAP, PW_DECODER_DEFAULT_NAME_CAP,
    PW_DECODER_MAX_BASE_SIZE, PW_DECODER_MAX_SLOT_SIZE,
};
pub use enums::{
    pw_completed, pw_disposition_kind, pw_mcp_client_state, pw_mcp_event_kind, pw_mcp_failure,
    pw_mcp_handled_kind, pw_mcp_post_kind, pw_mcp_revision, pw_mcp_skip, pw_mcp_start_error,
    pw_output_kind, pw_pending_kind, pw_provider, pw_pushed, pw_route, pw_tool_choice,
    pw_tool_kind, pw_tool_status,
};
pub use frame::{
    pw_frame_kind, pw_frame_peek_kind, pw_frame_validate, pw_json_string_decode, pw_json_validate,
    pw_tool_call, pw_tool_call_fields, PW_DEFAULT_MAX_DEPTH, PW_TOOL_CALL_CONTENT_IS_OBJECT,
    PW_TOOL_CALL_HAS_ARGS, PW_TOOL_CALL_HAS_ID, PW_TOOL_CALL_HAS_NAME,
};
pub use items::pw_encode_item;
pub use line_splitter::{
    pw_line_splitter, pw_line_splitter_align, pw_line_splitter_feed, pw_line_splitter_finish,
    pw_line_splitter_init, pw_line_splitter_next_line, pw_line_splitter_size,
    PW_LINE_SPLITTER_SIZE_BOUND,
};
pub use mcp::{
    pw_mcp, pw_mcp_align, pw_mcp_config, pw_mcp_config_default, pw_mcp_config_fit, pw_mcp_event,
    pw_mcp_feed, pw_mcp_frame, pw_mcp_get_stats, pw_mcp_handle_closed, pw_mcp_handle_frame,
    pw_mcp_handle_timeout, pw_mcp_handled, pw_mcp_in_flight, pw_mcp_init, pw_mcp_max_frame_len,
    pw_mcp_max_line_len, pw_mcp_output_schema, pw_mcp_output_schemas_size, pw_mcp_poll_event,
    pw_mcp_poll_frame, pw_mcp_poll_timeout, pw_mcp_poll_transmit, pw_mcp_protocol_version,
    pw_mcp_queued, pw_mcp_set_output_schemas, pw_mcp_size, pw_mcp_start, pw_mcp_state,
    pw_mcp_stats, PW_MCP_CLIENT_TEXT_CAP, PW_MCP_DEFAULT_CURSOR_CAP, PW_MCP_DEFAULT_LINE_CAP,
    PW_MCP_DEFAULT_NAME_CAP, PW_MCP_DEFAULT_OUTBOX_CAP, PW_MCP_DEFAULT_START_TIMEOUT_MS,
    PW_MCP_MAX_BASE_SIZE, PW_MCP_MAX_OUTPUT_SCHEMA_SIZE, PW_MCP_MAX_SLOT_SIZE, PW_MCP_METHOD_CAP,
    PW_MCP_MIN_OUTBOX,
};
pub use mcp_http::{
    pw_mcp_feed_response, pw_mcp_handle_response, pw_mcp_handle_response_end, pw_mcp_http_init,
    pw_mcp_http_size, pw_mcp_is_http, pw_mcp_max_headers_len, pw_mcp_poll_request, pw_mcp_post,
    PW_MCP_MAX_STREAM_SIZE,
};
pub use request::{
    pw_declaration, pw_request, pw_request_align, pw_request_gemini_path, pw_request_init,
    pw_request_len, pw_request_options, pw_request_options_default, pw_request_size,
    pw_request_write, PW_REQUEST_MAX_BASE_SIZE, PW_REQUEST_MAX_DECLARATION_SIZE,
};
pub use schema::{
    pw_schema_check, pw_schema_error, pw_schema_error_kind, pw_schema_index_words,
    pw_schema_validate,
};
pub use shared::{pw_outcome, pw_str, PW_MAX_ALIGN, PW_NO_TIMEOUT};
pub use tool::{pw_sync_fn, pw_tool, pw_writer, pw_writer_write, PW_TOOL_DEFAULT_TIMEOUT};
pub use wrapper::{
    pw_call_handle, pw_call_info, pw_disposition, pw_event, pw_hooks, pw_output, pw_trace_entry,
    pw_transmit, pw_wrapper, pw_wrapper_abort, pw_wrapper_align, pw_wrapper_cancel,
    pw_wrapper_clear_trace, pw_wrapper_complete, pw_wrapper_complete_unwritable, pw_wrapper_config,
    pw_wrapper_config_default, pw_wrapper_get_stats, pw_wrapper_handle_adapter_closed,
    pw_wrapper_handle_adapter_frame, pw_wrapper_handle_request, pw_wrapper_handle_response,
    pw_wrapper_handle_timeout, pw_wrapper_init, pw_wrapper_max_frame_len, pw_wrapper_pending,
    pw_wrapper_poll_event, pw_wrapper_poll_output, pw_wrapper_poll_timeout,
    pw_wrapper_poll_transmit, pw_wrapper_size, pw_wrapper_stats, pw_wrapper_trace_entry,
    PW_WRAPPER_DEFAULT_ARGS_CAP, PW_WRAPPER_DEFAULT_HELD_BYTES, PW_WRAPPER_DEFAULT_HOOK_LOG_BYTES,
    PW_WRAPPER_DEFAULT_ID_CAP, PW_WRAPPER_DEFAULT_MESSAGE_CAP, PW_WRAPPER_DEFAULT_NAME_CAP,
    PW_WRAPPER_DEFAULT_RESULT_CAP, PW_WRAPPER_DEFAULT_TRACE_BYTES, PW_WRAPPER_MAX_BASE_SIZE,
    PW_WRAPPER_MAX_SLOT_SIZE, PW_WRAPPER_MAX_TOOL_SIZE,
};

/// Bare-metal panic handler (no `std`): spins forever so a watchdog can reset the device.
///
/// The library's functions are not meant to panic; this only decides what a
/// bug does on a target without unwinding.
#[cfg(all(not(feature = "std"), not(test)))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
