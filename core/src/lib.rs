#![doc = include_str!("../README.md")]
//!
//! # How the modules fit
//!
//! Data flows one way: bytes in ([`framing`]) → frame view ([`frame`], over
//! [`json`]) → state machine ([`wrapper`], [`call`]) → queued output (the
//! private `queue` and `held` storage: frames [`encode`]d once, or records of a
//! pending call's slot) → bytes out (`poll_transmit` copies the oldest frame
//! into the host's buffer, or encodes it there from the slot). No module
//! imports one that imports it back: the shared vocabulary ([`route`]: which
//! call, where a frame goes) and every room and cost constant (`room`) are
//! leaves, and the output storage knows nothing of the state machines.
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

pub mod call;
pub mod clock;
pub mod encode;
pub mod error;
pub mod frame;
pub mod framing;
mod held;
pub mod hook_log;
pub mod hooks;
pub mod json;
mod message;
pub mod outcome;
mod queue;
mod room;
pub mod route;
pub mod sink;
pub mod tool;
pub mod trace;
pub mod typed;
pub mod wrapper;
// Spelled out rather than through a macro, so that tools reading the module tree
// (cargo-mutants, the module-graph test) see these two.
#[cfg(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini",
    feature = "ollama"
))]
pub mod decode;
#[cfg(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini",
    feature = "ollama"
))]
pub mod items;
#[cfg(feature = "mcp")]
pub mod mcp;

pub use call::{AdapterCall, CallOptions};
pub use clock::Instant;
pub use error::{CallError, Error};
pub use frame::{Frame, FrameError, FrameKind};
pub use hook_log::{HookEvent, HookLog, Log, Logged};
pub use hooks::{CallInfo, Hooks, NoHooks};
pub use outcome::CallOutcome;
pub use route::{CallHandle, Route, Transmit};
pub use tool::{ResultWriter, SyncTool, Tool, ToolFailed, ToolKind};
pub use wrapper::{
    Completed, Config, Disposition, Event, Output, PendingKind, Slot, StorageError, Wrapper,
};
