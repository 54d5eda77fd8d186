//! Item encoders (SPEC §8): a `TOOL_CALL` or `TOOL_RESULT` frame in, the provider's item
//! for the next request out.

use polyweave_tool_adapter::encode::{encode_item, ItemError};

use crate::boundary::{bytes_in_bytes_out, ffi, require_non_null};
use crate::codes::pw_result;
use crate::decoder::provider;
use crate::enums::raw;

/// Encodes the `TOOL_CALL` (for the assistant turn) or `TOOL_RESULT` frame `frame` (`len`
/// bytes) as `provider`'s item into `out` (`cap` bytes), its length in `*out_len`.
/// `PW_BUFFER_TOO_SMALL` puts the size needed in `*out_len` and writes nothing; a frame
/// that is not valid gives its `PW_FRAME_*` / `PW_INVALID_JSON` code; other refusals are
/// `PW_ITEM_NOT_CALL_OR_RESULT`, `PW_ITEM_NO_NAME`, `PW_ITEM_NO_ID` (OpenAI and Anthropic
/// match results by id) and `PW_ITEM_NO_OUTCOME`.
///
/// The caller must pass `frame` valid for reads of `len` bytes, `out` for writes of `cap`
/// bytes and `out_len` for one write, the outputs disjoint from each other and the frame.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_encode_item(
    provider: raw::pw_provider,
    frame: *const u8,
    len: usize,
    out: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> pw_result {
    ffi(|| {
        // NULL is refused before an unknown provider, as everywhere.
        require_non_null!(frame, out, out_len);
        let p = self::provider(provider)?;
        // SAFETY: as the function's contract.
        let (frame, buf, out_len) = unsafe { bytes_in_bytes_out(frame, len, out, cap, out_len) }?;
        match encode_item(p, frame, buf) {
            Ok(n) => {
                out_len.write(n);
                Ok(())
            }
            Err(ItemError::BufferTooSmall { needed }) => {
                out_len.write(needed);
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
            Err(ItemError::Malformed(e)) => Err(e.into()),
            Err(ItemError::NotACallOrResult) => Err(pw_result::PW_ITEM_NOT_CALL_OR_RESULT),
            Err(ItemError::NoName) => Err(pw_result::PW_ITEM_NO_NAME),
            Err(ItemError::NoId) => Err(pw_result::PW_ITEM_NO_ID),
            Err(ItemError::NoOutcome) => Err(pw_result::PW_ITEM_NO_OUTCOME),
        }
    })
}
