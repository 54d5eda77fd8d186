//! Scratch space: where a call's name and id are decoded, messages composed and a sync
//! tool writes. Nothing in it is state: it is reused by every input.

use super::config::{split_off, WrapperConfig};
use crate::texts::Message;

/// The scratch region, carved per use by the configuration's sizes.
pub(crate) struct Scratch<'a> {
    buf: &'a mut [u8],
}

/// The parts one interception uses at once.
pub(crate) struct Parts<'s> {
    pub(crate) name: &'s mut [u8],
    pub(crate) id: &'s mut [u8],
    pub(crate) message: &'s mut [u8],
    pub(crate) output: &'s mut [u8],
}

impl<'a> Scratch<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf }
    }

    pub(crate) fn parts(&mut self, cfg: &WrapperConfig) -> Parts<'_> {
        let mut rest = &mut self.buf[..];
        Parts {
            name: split_off(&mut rest, cfg.name_cap),
            id: split_off(&mut rest, cfg.id_cap),
            message: split_off(&mut rest, cfg.message_cap),
            output: rest,
        }
    }

    /// The message buffer alone.
    pub(crate) fn message(&mut self, cfg: &WrapperConfig) -> &mut [u8] {
        self.parts(cfg).message
    }
}

/// Composes `msg` into `buf`, keeping what fits.
pub(crate) fn compose_into<'b>(buf: &'b mut [u8], msg: &Message<'_>) -> &'b str {
    // The wrapper's own texts fit whole (`WrapperConfig::check` sizes `message_cap` for them).
    valid_utf8_prefix(msg.compose(buf))
}

/// The longest prefix of `bytes` that is UTF-8: text the wrapper stores is UTF-8 by
/// construction, but a sync tool's message may not be.
pub(crate) fn valid_utf8_prefix(bytes: &[u8]) -> &str {
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => core::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
    }
}
