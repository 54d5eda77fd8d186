//! The calls in flight: one host-owned [`McpSlot`] per call, its name in the arena.

use crate::route::CallHandle;

use super::frames::McpFailure;

/// Where a call is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum CallState {
    /// No call.
    Free,
    /// Its request is queued or sent; no answer yet.
    Waiting,
    /// The answer in the line buffer is being given to the wrapper.
    Answering,
    /// The client failed it: its `ERROR` waits in `poll_frame`.
    Failing(McpFailure),
}

/// Storage for one call in flight; give the client `[McpSlot::EMPTY; N]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McpSlot {
    pub(crate) state: CallState,
    pub(crate) handle: CallHandle,
    pub(crate) rpc: u64,
    pub(crate) name_len: usize,
}

impl McpSlot {
    /// A free slot.
    pub const EMPTY: McpSlot = McpSlot {
        state: CallState::Free,
        handle: CallHandle::from_parts(0, 0),
        rpc: 0,
        name_len: 0,
    };
}

/// The slots and their names.
#[derive(Debug)]
pub(crate) struct Calls<'a> {
    slots: &'a mut [McpSlot],
    names: &'a mut [u8],
    name_cap: usize,
}

impl<'a> Calls<'a> {
    pub(crate) fn new(slots: &'a mut [McpSlot], names: &'a mut [u8], name_cap: usize) -> Self {
        slots.fill(McpSlot::EMPTY);
        Self {
            slots,
            names,
            name_cap,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn get(&self, i: usize) -> McpSlot {
        self.slots[i]
    }

    pub(crate) fn set_state(&mut self, i: usize, state: CallState) {
        self.slots[i].state = state;
        if state == CallState::Free {
            self.slots[i].name_len = 0;
        }
    }

    /// The decoded name of the call in slot `i`.
    pub(crate) fn name(&self, i: usize) -> &[u8] {
        let at = i * self.name_cap;
        &self.names[at..at + self.slots[i].name_len]
    }

    /// The name buffer of slot `i`.
    pub(crate) fn name_buf(&mut self, i: usize) -> &mut [u8] {
        let at = i * self.name_cap;
        &mut self.names[at..at + self.name_cap]
    }

    /// Calls not free.
    pub(crate) fn in_flight(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.state != CallState::Free)
            .count()
    }

    pub(crate) fn free_slot(&self) -> Option<usize> {
        self.slots.iter().position(|s| s.state == CallState::Free)
    }

    /// The slot of the call `handle` names, if it is in flight.
    pub(crate) fn by_handle(&self, handle: CallHandle) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.state != CallState::Free && s.handle == handle)
    }

    /// The slot of the call waiting for the answer to request `rpc`.
    pub(crate) fn waiting_for(&self, rpc: u64) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.state == CallState::Waiting && s.rpc == rpc)
    }

    /// The failed call of the oldest request.
    pub(crate) fn oldest_failing(&self) -> Option<(usize, McpFailure)> {
        let mut best: Option<(usize, McpFailure, u64)> = None;
        for (i, s) in self.slots.iter().enumerate() {
            if let CallState::Failing(f) = s.state {
                if best.is_none_or(|(_, _, rpc)| s.rpc < rpc) {
                    best = Some((i, f, s.rpc));
                }
            }
        }
        best.map(|(i, f, _)| (i, f))
    }

    /// Fails every waiting call.
    pub(crate) fn fail_waiting(&mut self, why: McpFailure) {
        for s in self.slots.iter_mut() {
            if s.state == CallState::Waiting {
                s.state = CallState::Failing(why);
            }
        }
    }

    /// Takes slot `i` for a call.
    pub(crate) fn take(&mut self, i: usize, handle: CallHandle, rpc: u64, name_len: usize) {
        self.slots[i] = McpSlot {
            state: CallState::Waiting,
            handle,
            rpc,
            name_len,
        };
    }
}
