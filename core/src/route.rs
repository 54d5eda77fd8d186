//! The vocabulary every part shares: which call ([`CallHandle`]) and where a frame goes
//! ([`Route`], [`Transmit`]). A leaf: it imports nothing of the crate, so the output
//! storage and the state machines both use it without depending on each other.

/// A pending call, as the host names it. The call index doubles as the slot's generation.
///
/// A handle belongs to the wrapper that issued it; given to another wrapper it names
/// whatever that wrapper has in the same slot under the same index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CallHandle {
    slot: u16,
    index: u32,
}

impl CallHandle {
    pub(crate) const fn new(slot: u16, index: u32) -> Self {
        Self { slot, index }
    }

    /// A handle from its parts, for bindings that carry handles across a boundary. A handle
    /// the wrapper did not issue names no waiting call: it is refused as unknown or stale.
    pub const fn from_parts(slot: u16, index: u32) -> Self {
        Self::new(slot, index)
    }

    /// The call's index (0-based, counting every intercepted `TOOL_CALL`).
    pub const fn index(&self) -> u32 {
        self.index
    }

    /// The slot the call occupies.
    pub const fn slot(&self) -> u16 {
        self.slot
    }
}

/// Where a queued frame must be written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Route {
    /// The model's sink (`TOOL_RESULT`s, the continue prompt).
    Model,
    /// The consumer (mirrored prompt, released `END`s, the round-limit `ERROR`).
    Consumer,
    /// A pending call's tool adapter (`TOOL_CALL`, `CANCEL`).
    Adapter(CallHandle),
}

/// One frame handed to the host by `poll_transmit`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Transmit {
    /// Where to write it.
    pub route: Route,
    /// Its length in the host's buffer.
    pub len: usize,
}
