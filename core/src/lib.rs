//! Allocation-free, sans-IO tool-call routing for LLM frame streams.
//!
//! This crate is the `no_std` core of a port of `@polyweave/tool-adapter`: it
//! reads JSON *frames* (`TEXT`, `TOOL_CALL`, `TOOL_RESULT`, `ERROR`, `END`, …)
//! from the caller's buffers, and writes the frames it owes into the caller's
//! buffers. It never allocates, never blocks and never reads a clock.
//!
//! Data flows one way: bytes in ([`framing`]) → frame view ([`frame`], over
//! [`json`]) → state machine → queued output → bytes out ([`encode`]).
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod call;
pub mod clock;
pub mod encode;
pub mod error;
pub mod frame;
pub mod framing;
mod held;
pub mod hooks;
pub mod json;
mod message;
pub mod queue;
pub mod tool;
pub mod trace;
pub mod typed;
pub mod wrapper;

pub use call::{AdapterCall, CallOptions};
pub use clock::Instant;
pub use error::Error;
pub use frame::{Frame, FrameError, Kind};
pub use hooks::{CallInfo, CallOutcome, Hooks, NoHooks};
pub use queue::{CallHandle, Route, Transmit};
pub use tool::{ResultWriter, SyncTool, Tool, ToolFailed, ToolKind};
pub use wrapper::{Config, Disposition, Event, Slot, Wrapper};
