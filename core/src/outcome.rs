//! How a call ended: the one value hooks, the trace, the encoder and `AdapterCall` share.

/// How a call ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CallOutcome<'a> {
    /// The raw JSON result.
    Result(&'a [u8]),
    /// The error message.
    Error(&'a str),
}
