//! Allocation-free, sans-IO tool-call routing for LLM frame streams.
//!
//! This crate is the `no_std` core of a port of `@polyweave/tool-adapter`: it
//! reads JSON *frames* (`TEXT`, `TOOL_CALL`, `TOOL_RESULT`, `ERROR`, `END`, …)
//! from the caller's buffers, and writes the frames it owes into the caller's
//! buffers. It never allocates, never blocks and never reads a clock.
//!
//! Data flows one way: bytes in ([`framing`]) → frame view ([`frame`], over
//! [`json`]) → state machine ([`wrapper`], [`call`]) → queued output (the
//! private `queue` and `held` storage: frames [`encode`]d once, or records of a
//! pending call's slot) → bytes out (`poll_transmit` copies the oldest frame
//! into the host's buffer, or encodes it there from the slot). No module
//! imports one that imports it back: the shared vocabulary ([`route`]: which
//! call, where a frame goes) and every room and cost constant (`room`) are
//! leaves, and the output storage knows nothing of the state machines.
//!
//! # A wrapper in a host loop
//!
//! ```
//! use polyweave_tool_adapter::{
//!     CallOutcome, Config, Disposition, Event, Instant, NoHooks, ResultWriter, Route, Slot, Tool,
//!     ToolFailed, Wrapper,
//! };
//!
//! // A sync tool writes its JSON result (or, returning Err, its error message).
//! let add = |args: &[u8], out: &mut ResultWriter<'_>| -> Result<(), ToolFailed> {
//!     #[derive(serde::Deserialize)]
//!     struct Args { a: i32, b: i32 }
//!     let Ok(Args { a, b }) = polyweave_tool_adapter::typed::parse_args::<Args>(args) else {
//!         out.write(b"args must be {a, b}");
//!         return Err(ToolFailed);
//!     };
//!     out.write_typed(&(a + b));
//!     Ok(())
//! };
//! let tools = [Tool::sync("add", &add), Tool::deferred("lookup")];
//!
//! // All memory comes from the host: slots for pending calls and one byte arena.
//! const CFG: Config = Config::DEFAULT;
//! let mut slots = [Slot::EMPTY; 2];
//! let mut arena = [0u8; CFG.arena_len(2)];
//! let mut w = Wrapper::new(CFG, &tools, NoHooks, &mut slots, &mut arena).unwrap();
//!
//! let t = Instant::from_millis(10);
//! let call = br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{"a":2,"b":3}}}"#;
//! assert!(matches!(w.handle_response(t, call), Ok(Disposition::Intercepted { index: 0, handle: None })));
//! // Pass-through frames are not copied: forward your own bytes.
//! assert_eq!(w.handle_response(t, br#"{"type":"TEXT","content":"hi"}"#), Ok(Disposition::Forward));
//!
//! // Drain the frames the wrapper owes, then its events, then re-arm the timer.
//! let mut buf = [0u8; 256];
//! let t1 = w.poll_transmit(&mut buf).unwrap().unwrap();
//! assert_eq!(t1.route, Route::Model);
//! assert_eq!(&buf[..t1.len], br#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"add","result":5}}"#);
//! let t2 = w.poll_transmit(&mut buf).unwrap().unwrap();
//! assert_eq!(&buf[..t2.len], br#"{"type":"TEXT","content":"Tool results above."}"#);
//! assert_eq!(w.poll_transmit(&mut buf).unwrap().unwrap().route, Route::Consumer);
//! assert_eq!(w.poll_transmit(&mut buf), Ok(None));
//!
//! // A deferred call: the host is told, and completes it later by its handle.
//! let call = br#"{"type":"TOOL_CALL","content":{"name":"lookup","args":{"q":"rfc"}}}"#;
//! w.handle_response(t, call).unwrap();
//! let Some(Event::CallStarted { handle, args, .. }) = w.poll_event() else { panic!() };
//! assert_eq!(args, br#"{"q":"rfc"}"#);
//! assert_eq!(w.poll_timeout(), Some(Instant::from_millis(30_010)));
//! w.complete(Instant::from_millis(50), handle, Ok(br#""8259""#)).unwrap();
//! assert_eq!(w.trace().iter().last().unwrap().outcome, CallOutcome::Result(br#""8259""#));
//! ```
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
