#![doc = include_str!("../README.md")]
//!
//! # How the modules fit
//!
//! Eight public modules, in the order the data flows through them:
//!
//! 1. [`json`]: validating and reading JSON text in place (every layer's bytes), and checking
//!    a value against a JSON Schema ([`json::schema`], a tool's args before it runs).
//! 2. [`frame`]: a byte stream cut into lines ([`LineSplitter`]), and one line read as a
//!    [`Frame`].
//! 3. [`decode`]: a provider's streamed HTTP body in, frames out.
//! 4. [`wrapper`]: the [`Wrapper`], which intercepts `TOOL_CALL`s and owes frames back.
//! 5. [`call`]: one call through a tool adapter, without a wrapper ([`AdapterCall`]).
//! 6. [`mcp`]: an MCP server as the wrapper's adapter tools ([`mcp::McpClient`]).
//! 7. [`encode`]: the wrapper's `TOOL_CALL` and `TOOL_RESULT` frames as the items of the
//!    provider's next request.
//! 8. [`request`]: the conversation so far and the next request's whole body (declarations,
//!    history, options), the `encode` items inside.
//!
//! ```text
//! provider body ─► decode::Decoder ─────────┐ frames, one line each
//! (SSE / NDJSON, split anywhere)            ▼
//! NDJSON bytes ─► frame::LineSplitter ─► frame::Frame ─► wrapper::Wrapper ─► Disposition::Forward
//!                 (one line, in the      (a view over    (sync tools run     (pass-through: the host
//!                  host's buffer)         json)           in place)           forwards its own bytes)
//!                                                           │         ▲
//!                                            poll_transmit  │         │ handle_adapter_frame
//!                      ┌──── Route::Model, Route::Consumer ─┤         │
//!                      ▼                     Route::Adapter ▼         │
//!         encode::encode_item                          mcp::McpClient ┘ ◄─► an MCP server
//!         (a TOOL_CALL or TOOL_RESULT as an            (or call::AdapterCall: one adapter
//!          item of the provider's next request)         call without a wrapper)
//!                      │
//!                      ▼
//!  request::Conversation (the decoder's frames and the wrapper's TOOL_RESULTs, kept)
//!         ─► request::Request ─► the next request body, into buffers of any size
//! ```
//!
//! Inside, the data flows one way too: no module imports one that imports it back. The
//! shared vocabulary ([`Route`], [`CallHandle`], [`Provider`]) and every room and cost
//! constant are leaves, and the wrapper's output storage (the private `queue` and `held`)
//! knows nothing of the state machines. The root re-exports the types most hosts name.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// With some providers left out, parts every provider shares go unused (the build with all
// of them, the default, is the one linted).
#![cfg_attr(
    not(all(
        feature = "openai-chat",
        feature = "openai-responses",
        feature = "anthropic",
        feature = "gemini",
        feature = "ollama"
    )),
    allow(dead_code, unused_variables)
)]

#[macro_use]
mod fmt;
#[macro_use]
mod features;

// The public layers, in data-flow order. `_providers` is on whenever a provider is.
pub mod call;
#[cfg(feature = "_providers")]
pub mod decode;
#[cfg(feature = "_providers")]
pub mod encode;
pub mod frame;
pub mod json;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "_providers")]
pub mod request;
pub mod wrapper;

// Leaves every layer shares.
// The one SSE (and NDJSON) body reader: the decoders' and MCP over Streamable HTTP's.
#[cfg(any(feature = "_providers", feature = "mcp-http"))]
mod body_reader;
mod clock;
mod error;
#[cfg(feature = "_providers")]
mod provider;
mod room;
mod route;
mod sink;
mod texts;

// The wrapper's parts, public through `wrapper`.
mod held;
mod hook_log;
mod hooks;
mod outcome;
mod queue;
mod tool;
mod trace;

#[cfg(feature = "_internals")]
#[doc(hidden)]
pub mod internals;

pub use call::{AdapterCall, CallOptions};
pub use clock::{ClockWentBackwards, Instant};
pub use error::{CallError, Error, StorageError};
pub use frame::{Frame, FrameError, FrameKind, LineSplitter};
pub use json::BufferTooSmall;
#[cfg(feature = "_providers")]
pub use provider::Provider;
pub use route::{CallHandle, Route, Transmit};
pub use wrapper::{
    CallInfo, CallOutcome, Completed, Disposition, Event, HookEvent, HookLog, Hooks, Log, Logged,
    NoHooks, Output, PendingKind, ResultWriter, Slot, SyncTool, Tool, ToolFailed, ToolKind,
    Wrapper, WrapperConfig,
};
