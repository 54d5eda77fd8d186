//! The small pieces a test uses to drive a [`Wrapper`] by hand, without a
//! [`Host`](crate::Host): the instant of an input ([`at`]), the sync tool that returns its
//! args ([`echo`]), and every queued frame as text ([`drain`]).

use polyweave_tool_adapter::wrapper::Wrapper;
use polyweave_tool_adapter::Hooks;
use polyweave_tool_adapter::{Instant, Route};
use polyweave_tool_adapter::{ResultWriter, ToolFailed};

use crate::host::DEFAULT_BUFFER;

/// The instant `ms` milliseconds after zero.
pub fn at(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

/// A sync tool whose result is its args, as given (the core compacts them).
pub fn echo(args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(args);
    Ok(())
}

/// Every queued frame, oldest first, as (route, text); hook events and started calls stay
/// queued. Panics when a frame does not fit the buffer or is not UTF-8.
///
/// The buffer is [`DEFAULT_BUFFER`] (64 KiB), what `limits.rs`'s copy took; the copy in
/// `wrapper_bad_input.rs` (`frames_of`) took 4 KiB, but no frame those tests queue comes near
/// 4 KiB, so the larger buffer hands out exactly the same frames.
pub fn drain<H: Hooks>(w: &mut Wrapper<'_, H>) -> Vec<(Route, String)> {
    let mut buf = vec![0u8; DEFAULT_BUFFER];
    let mut out = Vec::new();
    while let Some(t) = w.poll_transmit(&mut buf).unwrap() {
        out.push((t.route, String::from_utf8(buf[..t.len].to_vec()).unwrap()));
    }
    out
}
