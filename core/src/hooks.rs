//! Hooks the host implements to watch calls (SPEC §3 `on_tool_call` / `on_tool_result`).

use crate::outcome::CallOutcome;

/// A call as hooks and the trace see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CallInfo<'a> {
    /// The call's number (every intercepted `TOOL_CALL` gets one, from 0).
    pub index: u32,
    /// The decoded tool name; `None` for a malformed call.
    pub name: Option<&'a str>,
    /// The decoded id, when the call had a string id.
    pub id: Option<&'a str>,
    /// Raw JSON args (`{}` when absent).
    pub args: &'a [u8],
    /// Frames the wrapper had queued (since its creation) when the hook fired: the hook
    /// comes after the `seq`-th frame `poll_transmit` hands out (counting from 1).
    pub seq: u64,
}

// Equivalent mutant: the default methods replaced by `()`: they do nothing already.
/// Watches calls; both methods default to doing nothing.
pub trait Hooks {
    /// A `TOOL_CALL` was intercepted (before it runs).
    fn on_tool_call(&mut self, call: &CallInfo<'_>) {
        let _ = call;
    }
    /// A call completed (after its `TOOL_RESULT` was queued).
    fn on_tool_result(&mut self, call: &CallInfo<'_>, outcome: CallOutcome<'_>) {
        let _ = (call, outcome);
    }
}

/// Hooks that do nothing.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NoHooks;

impl Hooks for NoHooks {}

impl<H: Hooks + ?Sized> Hooks for &mut H {
    fn on_tool_call(&mut self, call: &CallInfo<'_>) {
        (**self).on_tool_call(call)
    }
    fn on_tool_result(&mut self, call: &CallInfo<'_>, outcome: CallOutcome<'_>) {
        (**self).on_tool_result(call, outcome)
    }
}
