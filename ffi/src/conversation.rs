//! The conversation (SPEC §10.2), placed in one block the host hands in: the object first,
//! the conversation's memory in the rest.

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::request::{Conversation, Pushed};

use crate::boundary::{
    disjoint, ffi, guard, out_bytes, out_slot, placed, placed_by_block_field, placed_reading,
    placed_ref, require_non_null, span,
};
use crate::codes::pw_result;
use crate::enums::{pw_pushed, raw};
use crate::shared::{block_at, PW_MAX_ALIGN};

/// A conversation (opaque): system text, user texts, the model's turns as a decoder gave
/// them and the results of their calls, kept whole exchange by exchange when its memory runs
/// short (SPEC §10.2).
///
/// It lives in one memory block the host provides, aligned to `pw_conversation_align()`:
/// the object first, then the conversation's memory, every byte left
/// (`PW_CONVERSATION_SIZE_BOUND(capacity)` or `pw_conversation_size` for a capacity).
/// There is nothing to free.
#[allow(non_camel_case_types)]
pub struct pw_conversation {
    pub(crate) conv: Conversation<'static>,
    /// Bumped by every call that may change the conversation, so a request made from it
    /// knows it no longer holds what the request measured.
    pub(crate) generation: u64,
    /// Address and length of the whole block (for overlap checks).
    pub(crate) block: (usize, usize),
}

placed_by_block_field!(pw_conversation);

/// An upper bound, on every target, of the bytes a conversation's block holds besides its
/// memory: `PW_CONVERSATION_SIZE_BOUND(capacity)` is this plus the capacity.
pub const PW_CONVERSATION_MAX_BASE_SIZE: usize = 64;

const _: () = assert!(size_of::<pw_conversation>() <= PW_CONVERSATION_MAX_BASE_SIZE);
const _: () = assert!(align_of::<pw_conversation>() <= PW_MAX_ALIGN);

/// The most memory a conversation uses: it counts lengths in 32 bits.
const MAX_CAPACITY: usize = u32::MAX as usize;

/// The size of the block `pw_conversation_init` needs for `capacity` bytes of memory, in
/// `*out_size`; `PW_BAD_ARGUMENT` when that is past `SIZE_MAX`.
///
/// The caller must pass `out_size` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_size(capacity: usize, out_size: *mut usize) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `out_size` for one write.
        let out = unsafe { out_slot(out_size) }?;
        let n = size_of::<pw_conversation>()
            .checked_add(capacity)
            .ok_or(pw_result::PW_BAD_ARGUMENT)?;
        out.write(n);
        Ok(())
    })
}

/// The alignment in bytes a conversation's block needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_conversation_align() -> usize {
    guard(0, align_of::<pw_conversation>)
}

/// Places an empty conversation in `block` (`block_len` bytes, aligned to
/// `pw_conversation_align()`) and sets `*out` to it: its memory is every byte after the
/// object (at most 4 GiB − 1 of them are used). A block smaller than the object alone gives
/// `PW_STORAGE_TOO_SMALL`. Calling it again on the same memory starts afresh (a request made
/// from the conversation before must not be used after that). On any error nothing is
/// written.
///
/// The caller must pass `block` valid for writes of `block_len` bytes for as long as the
/// conversation is used, and touched by nothing else meanwhile; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_init(
    block: *mut c_void,
    block_len: usize,
    out: *mut *mut pw_conversation,
) -> pw_result {
    ffi(|| {
        require_non_null!(block, out);
        let whole = block_at(
            block,
            block_len,
            size_of::<pw_conversation>(),
            pw_conversation_align(),
        )?;
        disjoint(&[whole, span(out, 1)], &[])?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let base = block.cast::<u8>();
        // A no-op where `usize` is 32 bits (wasm32, Cortex-M): the cap is for 64-bit hosts.
        #[allow(clippy::unnecessary_min_or_max)]
        let capacity = (block_len - size_of::<pw_conversation>()).min(MAX_CAPACITY);
        // SAFETY: the block holds `block_len` bytes (caller), past the object (checked); the
        // caller gives them to the conversation for as long as it is used ('static here).
        let memory = unsafe { out_bytes(base.add(size_of::<pw_conversation>()), capacity) }?;
        let state = block.cast::<pw_conversation>();
        // SAFETY: `state` is the block's start, aligned and with room for a `pw_conversation`
        // (checked); it has no drop glue, so overwriting an old one leaks nothing.
        unsafe {
            state.write(pw_conversation {
                conv: Conversation::new(memory),
                generation: 0,
                block: whole,
            })
        };
        out.write(state);
        Ok(())
    })
}

/// The conversation behind `c`, for a call that may change it, apart from `others`; every
/// request made from it is then stale, whatever the call goes on to do: its view of the
/// conversation ends here.
///
/// # Safety
///
/// As [`placed`].
unsafe fn changing<'a>(
    c: *mut pw_conversation,
    others: &[(usize, usize)],
) -> Result<&'a mut Conversation<'static>, pw_result> {
    // SAFETY: as the function's contract.
    let c = unsafe { placed(c, others) }?;
    c.generation = c.generation.wrapping_add(1);
    Ok(&mut c.conv)
}

/// The text of `len` bytes at `text`, for an entry that may change `c`.
///
/// # Safety
///
/// As [`placed_reading`].
unsafe fn with_text(
    c: *mut pw_conversation,
    text: *const u8,
    len: usize,
    body: impl FnOnce(&mut Conversation<'static>, &str) -> Result<(), pw_result>,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, bytes) = unsafe { placed_reading(c, text, len) }?;
        c.generation = c.generation.wrapping_add(1);
        let text = core::str::from_utf8(bytes).map_err(|_| pw_result::PW_TEXT_NOT_UTF8)?;
        body(&mut c.conv, text)
    })
}

/// Sets the system text (`len` bytes of UTF-8), written first and never evicted; it replaces
/// the one held. `PW_TEXT_NOT_UTF8`, `PW_CONVERSATION_EMPTY_TEXT` and
/// `PW_CONVERSATION_NO_ROOM` change nothing.
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently, and `text`
/// valid for reads of `len` bytes outside the conversation's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_set_system(
    c: *mut pw_conversation,
    text: *const u8,
    len: usize,
) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { with_text(c, text, len, |c, t| Ok(c.set_system(t)?)) }
}

/// Adds a user text (`len` bytes of UTF-8); it ends a response still open.
/// `PW_TEXT_NOT_UTF8`, `PW_CONVERSATION_EMPTY_TEXT` and `PW_CONVERSATION_NO_ROOM` change
/// nothing.
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently, and `text`
/// valid for reads of `len` bytes outside the conversation's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_push_user(
    c: *mut pw_conversation,
    text: *const u8,
    len: usize,
) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { with_text(c, text, len, |c, t| Ok(c.push_user(t)?)) }
}

/// Keeps the first user text whatever else is evicted (`pin` 1) or not (0; anything else
/// gives `PW_BAD_ARGUMENT`).
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_pin_first_user(
    c: *mut pw_conversation,
    pin: u8,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let conv = unsafe { changing(c, &[]) }?;
        if pin > 1 {
            return Err(pw_result::PW_BAD_ARGUMENT);
        }
        conv.pin_first_user(pin == 1);
        Ok(())
    })
}

/// Begins the assistant turn of one response from `provider`; the decoder's frames of that
/// response follow through `pw_conversation_push_frame`. It ends a response still open.
/// `PW_UNKNOWN_PROVIDER` and `PW_CONVERSATION_NO_ROOM` change nothing.
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_begin_response(
    c: *mut pw_conversation,
    provider: raw::pw_provider,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let conv = unsafe { changing(c, &[]) }?;
        Ok(conv.begin_response(crate::decoder::provider(provider)?)?)
    })
}

/// Hands in one frame (`len` bytes): a decoder's `TEXT`, `REASONING`, `STATE`, `TOOL_CALL`,
/// `END` and `ERROR` go into the response begun, a wrapper's `TOOL_RESULT` beside its call,
/// other types are ignored; `*out` says which (`pw_pushed`). A malformed frame gives its
/// frame code (`pw_result_is_malformed`), a refused one a `PW_CONVERSATION_*` code; either
/// changes nothing and writes nothing to `*out`.
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently; `frame`
/// valid for reads of `len` bytes and `out` for one write, both outside the conversation's
/// block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_push_frame(
    c: *mut pw_conversation,
    frame: *const u8,
    len: usize,
    out: *mut pw_pushed,
) -> pw_result {
    ffi(|| {
        require_non_null!(c, frame, out);
        let (out_span, frame_span) = (span(out, 1), span(frame, len));
        disjoint(&[out_span], &[frame_span])?;
        // SAFETY: as the function's contract.
        let conv = unsafe { changing(c, &[out_span, frame_span]) }?;
        // SAFETY: the caller hands `frame` for `len` reads and `out` for one write.
        let (bytes, out) = unsafe { (crate::boundary::in_bytes(frame, len)?, out_slot(out)?) };
        let pushed = match conv.push_frame(bytes)? {
            Pushed::Kept => pw_pushed::PW_PUSHED_KEPT,
            Pushed::Ignored => pw_pushed::PW_PUSHED_IGNORED,
            Pushed::Ended => pw_pushed::PW_PUSHED_ENDED,
        };
        out.write(pushed);
        Ok(())
    })
}

/// Ends the response being read (a decoder's `END` does it too).
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_end_response(c: *mut pw_conversation) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        unsafe { changing(c, &[]) }?.end_response();
        Ok(())
    })
}

/// Forgets every entry (the memory is kept; the eviction count restarts).
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_clear(c: *mut pw_conversation) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        unsafe { changing(c, &[]) }?.clear();
        Ok(())
    })
}

/// What a conversation holds (`pw_conversation_get_stats`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct pw_conversation_stats {
    /// Bytes of its memory in use.
    pub used: usize,
    /// Bytes of memory it has (what its block has after the object).
    pub capacity: usize,
    /// Entries held, the system text included.
    pub entries: usize,
    /// Entries evicted since `pw_conversation_init` or `pw_conversation_clear` (a user text,
    /// or an exchange with its results, counts one).
    pub evicted: u32,
}

/// Copies what the conversation holds into `*out`. It only reads: a request made from the
/// conversation stays good.
///
/// The caller must pass `c` from `pw_conversation_init`, not used concurrently, and `out`
/// valid for one write outside the conversation's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_conversation_get_stats(
    c: *const pw_conversation,
    out: *mut pw_conversation_stats,
) -> pw_result {
    ffi(|| {
        require_non_null!(c, out);
        // SAFETY: as the function's contract; only read.
        let c = unsafe { placed_ref(c, &[span(out, 1)]) }?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        out.write(pw_conversation_stats {
            used: c.conv.used(),
            capacity: c.conv.capacity(),
            entries: c.conv.len(),
            evicted: c.conv.evicted(),
        });
        Ok(())
    })
}
