//! One call through a tool adapter for C (`AdapterCall`, SPEC §2): its state and its result
//! buffer in one block of host memory.

#![allow(non_camel_case_types)]

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::call::{AdapterCall, CallOptions, StartError};
use polyweave_tool_adapter::json::DEFAULT_MAX_DEPTH;
use polyweave_tool_adapter::Instant;

use crate::boundary::{
    disjoint, ffi, guard, in_bytes, out_bytes, out_slot, placed_by_block_field, placed_one_out,
    placed_poll, placed_reading, query_placed, require_non_null, span, with_placed, First,
};
use crate::codes::pw_result;
use crate::shared::{block_at, deadline_ms, pw_outcome, pw_str, PW_MAX_ALIGN, PW_NO_TIMEOUT};

/// How a standalone call starts. Its name, id and args are borrowed: they must stay valid
/// and unchanged while the call is used.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_adapter_call_options {
    /// The tool name sent to the adapter and used in messages (UTF-8; default `unknown`).
    pub name: pw_str,
    /// The call id, when `has_id` is 1 (UTF-8).
    pub id: pw_str,
    /// Raw JSON args (default `{}`).
    pub args: pw_str,
    /// Settle with a timeout error this long after the start, or after the latest `PROGRESS`
    /// when `max_total_timeout_ms` is set (default 30000).
    pub timeout_ms: u32,
    /// The cap on the call's life when `PROGRESS` frames restart its timeout: the deadline
    /// never passes start + this; 0, the default, turns progress restarts off.
    pub max_total_timeout_ms: u32,
    /// 1 when the call has an id.
    pub has_id: u8,
    /// JSON depth limit of the adapter's frames (default 32).
    pub max_depth: u8,
}

/// A call in host memory (opaque).
pub struct pw_adapter_call {
    call: AdapterCall<'static>,
    /// Address and length of the whole block (inputs must not overlap it).
    block: (usize, usize),
}

/// An upper bound, on every target, of what a call's block holds besides its `result_cap`
/// bytes: for static storage, with `PW_ADAPTER_CALL_SIZE_BOUND`.
pub const PW_ADAPTER_CALL_MAX_BASE_SIZE: usize = 512;

const _: () = assert!(size_of::<pw_adapter_call>() <= PW_ADAPTER_CALL_MAX_BASE_SIZE);
const _: () = assert!(align_of::<pw_adapter_call>() <= PW_MAX_ALIGN);

/// The size of the memory block `pw_adapter_call_init` needs for a result capacity of `result_cap`
/// bytes (the adapter's result, without white space, or the message it ended with).
///
/// The caller must pass `out_size` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_size(
    result_cap: usize,
    out_size: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `out_size` for one write.
        let out = unsafe { out_slot(out_size) }?;
        out.write(
            size_of::<pw_adapter_call>()
                .checked_add(result_cap)
                .ok_or(pw_result::PW_BAD_CONFIG)?,
        );
        Ok(())
    })
}

/// The alignment the memory block for `pw_adapter_call_init` needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_adapter_call_align() -> usize {
    guard(0, align_of::<pw_adapter_call>)
}

/// Fills `*out` with the defaults: name `unknown`, no id, args `{}`, 30000 ms, depth 32.
///
/// The caller must pass `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_options_default(
    out: *mut pw_adapter_call_options,
) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let d = CallOptions::DEFAULT;
        out.write(pw_adapter_call_options {
            name: pw_str::of(d.name.as_bytes()),
            id: pw_str::of(b""),
            args: pw_str::of(b"{}"),
            timeout_ms: d.timeout_ms,
            max_total_timeout_ms: d.max_total_timeout_ms,
            has_id: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        });
        Ok(())
    })
}

/// Starts a call at `now_ms` in `mem` (at least `pw_adapter_call_size(result_cap)` bytes, aligned to
/// `pw_adapter_call_align()`) and sets `*out` to it; its `TOOL_CALL` waits in `pw_adapter_call_poll_transmit`.
/// Args that are not JSON give their JSON code; a `result_cap` too small for the call's own
/// failure texts gives `PW_BAD_CONFIG`. On any error nothing is written to `*out`.
///
/// The caller must pass `mem` valid for writes of `mem_len` bytes for as long as the call is
/// used and touched by nothing else meanwhile; `opts` valid for one read and its spans for
/// their lengths for as long as the call is used; `out` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_init(
    mem: *mut c_void,
    mem_len: usize,
    result_cap: usize,
    now_ms: u64,
    opts: *const pw_adapter_call_options,
    out: *mut *mut pw_adapter_call,
) -> pw_result {
    ffi(|| {
        require_non_null!(mem, opts, out);
        let need = size_of::<pw_adapter_call>()
            .checked_add(result_cap)
            .ok_or(pw_result::PW_BAD_CONFIG)?;
        let block = block_at(mem, mem_len, need, align_of::<pw_adapter_call>())?;
        if !opts.is_aligned() {
            return Err(pw_result::PW_STORAGE_MISALIGNED);
        }
        let state = mem.cast::<pw_adapter_call>();
        // SAFETY: non-NULL, aligned (checked), readable (caller); any bits are valid.
        let o = unsafe { opts.read() };
        let reads = [
            span(opts, 1),
            span(o.name.ptr, o.name.len),
            span(o.args.ptr, o.args.len),
            span(o.id.ptr, if o.has_id == 1 { o.id.len } else { 0 }),
        ];
        disjoint(&[block, span(out, 1)], &reads)?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        // SAFETY: the caller keeps the spans readable for as long as the call is used.
        let (name, args) = unsafe {
            (
                in_bytes(o.name.ptr, o.name.len)?,
                in_bytes(o.args.ptr, o.args.len)?,
            )
        };
        let utf8 =
            |b: &'static [u8]| core::str::from_utf8(b).map_err(|_| pw_result::PW_INVALID_UTF8);
        let id = match o.has_id {
            0 => None,
            // SAFETY: as above.
            1 => Some(utf8(unsafe { in_bytes(o.id.ptr, o.id.len) }?)?),
            _ => return Err(pw_result::PW_BAD_ARGUMENT),
        };
        let opts = CallOptions {
            name: utf8(name)?,
            timeout_ms: o.timeout_ms,
            max_total_timeout_ms: o.max_total_timeout_ms,
            max_depth: o.max_depth,
        };
        // SAFETY: the result buffer follows the state inside the block (size checked); the
        // block is the call's for as long as it is used ('static here).
        let buf = unsafe {
            out_bytes(
                mem.cast::<u8>().add(size_of::<pw_adapter_call>()),
                result_cap,
            )
        }?;
        let call =
            AdapterCall::start(Instant::from_millis(now_ms), opts, id, args, buf).map_err(|e| {
                match e {
                    StartError::InvalidArgs(j) => pw_result::from(j),
                    _ => pw_result::PW_BAD_CONFIG,
                }
            })?;
        // SAFETY: `state` is the block's start, aligned and in bounds (checked); old contents
        // need no drop.
        unsafe { state.write(pw_adapter_call { call, block }) };
        out.write(state);
        Ok(())
    })
}

placed_by_block_field!(pw_adapter_call);

/// One frame from the adapter (validated whole). After it ended, `PW_CALL_COMPLETED`
/// or `PW_CALL_TIMED_OUT`.
///
/// The caller must pass `c` from `pw_adapter_call_init`, not used concurrently; `bytes` valid
/// for `len` reads, outside the call's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_handle_frame(
    c: *mut pw_adapter_call,
    now_ms: u64,
    bytes: *const u8,
    len: usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, input) = unsafe { placed_reading(c, bytes, len) }?;
        c.call.handle_frame(Instant::from_millis(now_ms), input)?;
        Ok(())
    })
}

/// The adapter closed its source: ends like `END`.
///
/// The caller must pass `c` from `pw_adapter_call_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_handle_closed(
    c: *mut pw_adapter_call,
    now_ms: u64,
) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { with_placed(c, |c| c.call.handle_closed(Instant::from_millis(now_ms))) }
}

/// Gives the clock: at or past the deadline a waiting call queues `CANCEL` and ends with
/// `Tool <name> timed out after <ms>ms`.
///
/// The caller must pass `c` from `pw_adapter_call_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_handle_timeout(
    c: *mut pw_adapter_call,
    now_ms: u64,
) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { with_placed(c, |c| c.call.handle_timeout(Instant::from_millis(now_ms))) }
}

/// The next frame for the adapter (`TOOL_CALL`, then `CANCEL` on timeout) into `buf`, its
/// length in `*out_len`: `PW_OK`, `PW_NOTHING`, or `PW_BUFFER_TOO_SMALL` with the length
/// needed (the frame stays).
///
/// The caller must pass `c` from `pw_adapter_call_init`, not used concurrently; `buf` valid for
/// `cap` writes and `out_len` for one, apart from each other and from the call's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_poll_transmit(
    c: *mut pw_adapter_call,
    buf: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, buf, out_len) = unsafe { placed_poll(c, buf, cap, out_len, First::Object) }?;
        match c.call.poll_transmit(buf) {
            Ok(Some(n)) => {
                out_len.write(n);
                Ok(())
            }
            Ok(None) => Err(pw_result::PW_NOTHING),
            Err(e) => {
                out_len.write(e.needed);
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}

/// When `pw_adapter_call_handle_timeout` must next be called, while waiting; `PW_NO_TIMEOUT` after
/// its end (and for a NULL or misaligned call).
///
/// The caller must pass `c` from `pw_adapter_call_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_poll_timeout(c: *const pw_adapter_call) -> u64 {
    // SAFETY: as the function's contract.
    unsafe { query_placed(c, PW_NO_TIMEOUT, |c| deadline_ms(c.call.poll_timeout())) }
}

/// How the call ended: `PW_OK` with `*out` (its text points into the call's block), or
/// `PW_NOTHING` while it waits.
///
/// The caller must pass `c` from `pw_adapter_call_init`, not used concurrently; `out` valid for
/// one write, outside the call's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_adapter_call_outcome(
    c: *const pw_adapter_call,
    out: *mut pw_outcome,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract; only read.
        let (c, out) = unsafe { placed_one_out(c.cast_mut(), out) }?;
        let s = c.call.outcome().ok_or(pw_result::PW_NOTHING)?;
        out.write(pw_outcome::of(s));
        Ok(())
    })
}
