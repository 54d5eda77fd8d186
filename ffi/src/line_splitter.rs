//! The NDJSON line splitter, placed in memory the host hands in.

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::frame::{LineSplitter, LineTooLong};

use crate::boundary::{
    disjoint, ffi, guard, out_bytes, out_slot, placed, placed_bytes_in_one_out, require_non_null,
    span, First, Placed,
};
use crate::codes::pw_result;
use crate::shared::block_at;
use crate::shared::PW_MAX_ALIGN;

/// Line splitter state: splits a byte stream into NDJSON lines (opaque).
///
/// It lives in a memory block the host provides (`pw_line_splitter_size()` bytes,
/// aligned to `pw_line_splitter_align()`) and stores at most one partial line in the
/// line buffer handed to `pw_line_splitter_init`. `\r\n` is accepted and blank lines
/// are skipped. There is nothing to free: stop using it and reuse the memory.
#[allow(non_camel_case_types)]
pub struct pw_line_splitter {
    splitter: LineSplitter<'static>,
    /// Address and length of the line buffer the splitter borrows (for overlap checks).
    line_buf: (usize, usize),
}

/// An upper bound of `pw_line_splitter_size()` on every target, for static storage.
///
/// Checked when the library is compiled for each target; the exact value for
/// the running target is `pw_line_splitter_size()`.
pub const PW_LINE_SPLITTER_SIZE_BOUND: usize = 128;

const _: () = assert!(size_of::<pw_line_splitter>() <= PW_LINE_SPLITTER_SIZE_BOUND);
const _: () = assert!(align_of::<pw_line_splitter>() <= PW_MAX_ALIGN);

/// The size in bytes of the memory block `pw_line_splitter_init` needs.
#[unsafe(no_mangle)]
pub extern "C" fn pw_line_splitter_size() -> usize {
    guard(0, size_of::<pw_line_splitter>)
}

/// The alignment in bytes the memory block for `pw_line_splitter_init` needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_line_splitter_align() -> usize {
    guard(0, align_of::<pw_line_splitter>)
}

/// Places a new, empty splitter in `mem` and sets `*out` to it.
///
/// `mem` must hold at least `pw_line_splitter_size()` bytes (else
/// `PW_STORAGE_TOO_SMALL`) and be aligned to `pw_line_splitter_align()` (else
/// `PW_STORAGE_MISALIGNED`); the size is checked first. The longest line the
/// splitter can hold is `line_cap` bytes (line ending excluded); longer lines
/// are dropped and reported with `PW_LINE_TOO_LONG`. The state and
/// `line_buf` must not overlap (`PW_STORAGE_OVERLAP`). Calling it again on the
/// same memory starts afresh. On any error nothing is written.
///
/// The caller must pass `mem` valid for writes of `mem_len` bytes and `line_buf` for reads and
/// writes of `line_cap` bytes, both for as long as the splitter is used, and accessed by nothing
/// else meanwhile except to read a line the splitter handed out; `out` valid for one write of a
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_line_splitter_init(
    mem: *mut c_void,
    mem_len: usize,
    line_buf: *mut u8,
    line_cap: usize,
    out: *mut *mut pw_line_splitter,
) -> pw_result {
    ffi(|| {
        require_non_null!(mem, line_buf, out);
        // Its block is the state alone (see its `Placed`), whatever `mem_len` says.
        block_at(
            mem,
            mem_len,
            size_of::<pw_line_splitter>(),
            pw_line_splitter_align(),
        )?;
        let state = mem.cast::<pw_line_splitter>();
        let buf_span = span(line_buf, line_cap);
        disjoint(&[span(state, 1), buf_span, span(out, 1)], &[])?;
        // SAFETY: the caller hands `out` for one writable pointer.
        let out = unsafe { out_slot(out) }?;
        // SAFETY: the caller hands `line_buf` for `line_cap` bytes for as long as the splitter is
        // used, which is what 'static stands for here; the splitter is its only user meanwhile.
        let line: &'static mut [u8] = unsafe { out_bytes(line_buf, line_cap) }?;
        let splitter = pw_line_splitter {
            splitter: LineSplitter::new(line),
            line_buf: buf_span,
        };
        // SAFETY: `state` is non-NULL, aligned and has room for a `pw_line_splitter` (all checked) in
        // memory the caller hands in for writes; `pw_line_splitter` has no drop glue, so overwriting an
        // old splitter there leaks nothing.
        unsafe { state.write(splitter) };
        out.write(state);
        Ok(())
    })
}

impl Placed for pw_line_splitter {
    unsafe fn block(this: *const Self) -> (usize, usize) {
        // Its block is the state alone: the line buffer is lent, wherever the host put it.
        span(this, 1)
    }

    unsafe fn lent(this: *const Self) -> Option<(usize, usize)> {
        // SAFETY: `this` points at a placed splitter (trait contract); one field is copied,
        // no reference made.
        Some(unsafe { (*this).line_buf })
    }
}

/// Feeds stream bytes; `*consumed` tells how many were taken.
///
/// The splitter takes bytes up to and including the first line end and stops
/// early once a line (or a dropped line's report) is ready: call
/// `pw_line_splitter_next_line` until it returns `PW_NOTHING`, then feed the rest
/// (`*consumed` is 0 while a line waits). Returns `PW_OK`. Feeding ends the
/// validity of the last line handed out.
///
/// The caller must pass `f` from `pw_line_splitter_init`, not used concurrently; `bytes` valid for
/// reads of `len` bytes (outside the splitter's memory and line buffer) and `consumed` for one
/// write of a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_line_splitter_feed(
    f: *mut pw_line_splitter,
    bytes: *const u8,
    len: usize,
    consumed: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (splitter, input, consumed) =
            unsafe { placed_bytes_in_one_out(f, bytes, len, consumed, First::Arguments) }?;
        consumed.write(splitter.splitter.feed(input));
        Ok(())
    })
}

/// `LineSplitter::next_line` or `LineSplitter::finish`: what hands out the next line.
type LineStep = for<'f> fn(&'f mut LineSplitter<'static>) -> Option<Result<&'f [u8], LineTooLong>>;

/// The shared body of `pw_line_splitter_next_line` and `pw_line_splitter_finish`.
///
/// # Safety
///
/// As `pw_line_splitter_next_line`.
unsafe fn take_line(
    f: *mut pw_line_splitter,
    line: *mut *const u8,
    len: *mut usize,
    step: LineStep,
) -> pw_result {
    ffi(|| {
        require_non_null!(f, line, len);
        let outs = [span(line, 1), span(len, 1)];
        disjoint(&outs, &[])?;
        // SAFETY: `f` comes from `pw_line_splitter_init`, exclusively ours for this call (caller).
        let splitter = unsafe { placed(f, &outs) }?;
        // SAFETY: the caller hands `line` for one writable pointer.
        let line = unsafe { out_slot(line) }?;
        // SAFETY: the caller hands `len` for one writable `size_t`.
        let len = unsafe { out_slot(len) }?;
        let (ptr, n, code) = match step(&mut splitter.splitter) {
            Some(Ok(l)) => (l.as_ptr(), l.len(), pw_result::PW_OK),
            Some(Err(e)) => (core::ptr::null(), e.len, pw_result::PW_LINE_TOO_LONG),
            None => (core::ptr::null(), 0, pw_result::PW_NOTHING),
        };
        line.write(ptr);
        len.write(n);
        code.ok()
    })
}

/// Takes the next complete line, without its line ending.
///
/// Returns `PW_OK` with `*line` / `*len` spanning the line in the line
/// buffer (valid until the next `pw_line_splitter_feed`, `pw_line_splitter_finish` or
/// `pw_line_splitter_init` on this splitter; never empty, never NUL-terminated);
/// `PW_LINE_TOO_LONG` with `*line` NULL and `*len` the dropped line's full
/// length (reported once; the line after it is intact); or `PW_NOTHING` with
/// `*line` NULL and `*len` 0.
///
/// The caller must pass `f` from `pw_line_splitter_init`, not used concurrently; `line` and `len`
/// valid for one write each, outside the splitter's memory and line buffer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_line_splitter_next_line(
    f: *mut pw_line_splitter,
    line: *mut *const u8,
    len: *mut usize,
) -> pw_result {
    // SAFETY: the caller keeps this function's contract, which is `take_line`'s.
    unsafe { take_line(f, line, len, LineSplitter::next_line) }
}

/// Ends the stream: takes a last line that had no line ending.
///
/// Results and outputs as `pw_line_splitter_next_line`: a waiting line or report
/// first, then the unterminated last line (or its `PW_LINE_TOO_LONG`
/// report), then `PW_NOTHING`. The splitter can take a new stream afterwards.
///
/// The caller must pass what `pw_line_splitter_next_line` needs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_line_splitter_finish(
    f: *mut pw_line_splitter,
    line: *mut *const u8,
    len: *mut usize,
) -> pw_result {
    // SAFETY: the caller keeps this function's contract, which is `take_line`'s.
    unsafe { take_line(f, line, len, LineSplitter::finish) }
}
