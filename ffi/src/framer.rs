//! The NDJSON line framer, placed in memory the host hands in.

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::frame::{LineSplitter, LineTooLong};

use crate::boundary::{
    disjoint, ffi, guard, in_bytes, out_bytes, out_slot, require_non_null, span,
};
use crate::codes::pw_result;

/// Line framer state: splits a byte stream into NDJSON lines (opaque).
///
/// It lives in a memory block the host provides (`pw_framer_size()` bytes,
/// aligned to `pw_framer_align()`) and stores at most one partial line in the
/// line buffer handed to `pw_framer_init`. `\r\n` is accepted and blank lines
/// are skipped. There is nothing to free: stop using it and reuse the memory.
#[allow(non_camel_case_types)]
pub struct pw_framer {
    framer: LineSplitter<'static>,
    /// Address and length of the line buffer the framer borrows (for overlap checks).
    line_buf: (usize, usize),
}

/// An upper bound of `pw_framer_size()` on every target, for static storage.
///
/// Checked when the library is compiled for each target; the exact value for
/// the running target is `pw_framer_size()`.
pub const PW_FRAMER_MAX_SIZE: usize = 128;
/// An upper bound of `pw_framer_align()` on every target, for static storage.
pub const PW_FRAMER_MAX_ALIGN: usize = 8;

const _: () = assert!(size_of::<pw_framer>() <= PW_FRAMER_MAX_SIZE);
const _: () = assert!(align_of::<pw_framer>() <= PW_FRAMER_MAX_ALIGN);

/// The size in bytes of the memory block `pw_framer_init` needs.
#[unsafe(no_mangle)]
pub extern "C" fn pw_framer_size() -> usize {
    guard(0, size_of::<pw_framer>)
}

/// The alignment in bytes the memory block for `pw_framer_init` needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_framer_align() -> usize {
    guard(0, align_of::<pw_framer>)
}

/// Places a new, empty framer in `mem` and sets `*out` to it.
///
/// `mem` must hold at least `pw_framer_size()` bytes (else
/// `PW_MEMORY_TOO_SMALL`) and be aligned to `pw_framer_align()` (else
/// `PW_MEMORY_MISALIGNED`); the size is checked first. The longest line the
/// framer can hold is `line_cap` bytes (line ending excluded); longer lines
/// are dropped and reported with `PW_LINE_TOO_LONG`. The state and
/// `line_buf` must not overlap (`PW_MEMORY_OVERLAP`). Calling it again on the
/// same memory starts afresh. On any error nothing is written.
///
/// The caller must pass `mem` valid for writes of `mem_len` bytes and `line_buf` for reads and
/// writes of `line_cap` bytes, both for as long as the framer is used, and accessed by nothing
/// else meanwhile except to read a line the framer handed out; `out` valid for one write of a
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_framer_init(
    mem: *mut c_void,
    mem_len: usize,
    line_buf: *mut u8,
    line_cap: usize,
    out: *mut *mut pw_framer,
) -> pw_result {
    ffi(|| {
        require_non_null!(mem, line_buf, out);
        let state = mem.cast::<pw_framer>();
        if mem_len < size_of::<pw_framer>() {
            return Err(pw_result::PW_MEMORY_TOO_SMALL);
        }
        if !state.is_aligned() {
            return Err(pw_result::PW_MEMORY_MISALIGNED);
        }
        let buf_span = span(line_buf, line_cap);
        disjoint(&[span(state, 1), buf_span, span(out, 1)], &[])?;
        // SAFETY: the caller hands `out` for one writable pointer.
        let out = unsafe { out_slot(out) }?;
        // SAFETY: the caller hands `line_buf` for `line_cap` bytes for as long as the framer is
        // used, which is what 'static stands for here; the framer is its only user meanwhile.
        let line: &'static mut [u8] = unsafe { out_bytes(line_buf, line_cap) }?;
        let framer = pw_framer {
            framer: LineSplitter::new(line),
            line_buf: buf_span,
        };
        // SAFETY: `state` is non-NULL, aligned and has room for a `pw_framer` (all checked) in
        // memory the caller hands in for writes; `pw_framer` has no drop glue, so overwriting an
        // old framer there leaks nothing.
        unsafe { state.write(framer) };
        out.write(state);
        Ok(())
    })
}

/// Checks `f` and returns the framer behind it, once its state and line buffer are disjoint from `others`.
///
/// # Safety
///
/// A non-NULL `f` must come from `pw_framer_init` and be used by nothing else for `'a`.
unsafe fn framer<'a>(
    f: *mut pw_framer,
    others: &[(usize, usize)],
) -> Result<&'a mut pw_framer, pw_result> {
    require_non_null!(f);
    if !f.is_aligned() {
        return Err(pw_result::PW_MEMORY_MISALIGNED);
    }
    // SAFETY: `f` is non-NULL and aligned (checked) and points at a framer placed by
    // `pw_framer_init` (caller); this copies one field without making a reference.
    let line_buf = unsafe { (*f).line_buf };
    disjoint(&[span(f.cast_const(), 1), line_buf], others)?;
    // SAFETY: as above, and nothing else uses the framer during 'a (caller); the other
    // arguments do not overlap it (checked).
    Ok(unsafe { &mut *f })
}

/// Feeds stream bytes; `*consumed` tells how many were taken.
///
/// The framer takes bytes up to and including the first line end and stops
/// early once a line (or a dropped line's report) is ready: call
/// `pw_framer_next_line` until it returns `PW_NO_LINE`, then feed the rest
/// (`*consumed` is 0 while a line waits). Returns `PW_OK`. Feeding ends the
/// validity of the last line handed out.
///
/// The caller must pass `f` from `pw_framer_init`, not used concurrently; `bytes` valid for
/// reads of `len` bytes (outside the framer's memory and line buffer) and `consumed` for one
/// write of a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_framer_feed(
    f: *mut pw_framer,
    bytes: *const u8,
    len: usize,
    consumed: *mut usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(f, bytes, consumed);
        let (consumed_span, bytes_span) = (span(consumed, 1), span(bytes, len));
        disjoint(&[consumed_span], &[bytes_span])?;
        // SAFETY: `f` comes from `pw_framer_init`, exclusively ours for this call (caller).
        let framer = unsafe { framer(f, &[consumed_span, bytes_span]) }?;
        // SAFETY: the caller hands `bytes` for `len` readable bytes.
        let input = unsafe { in_bytes(bytes, len) }?;
        // SAFETY: the caller hands `consumed` for one writable `size_t`.
        let consumed = unsafe { out_slot(consumed) }?;
        consumed.write(framer.framer.feed(input));
        Ok(())
    })
}

/// `LineSplitter::next_line` or `LineSplitter::finish`: what hands out the next line.
type LineStep = for<'f> fn(&'f mut LineSplitter<'static>) -> Option<Result<&'f [u8], LineTooLong>>;

/// The shared body of `pw_framer_next_line` and `pw_framer_finish`.
///
/// # Safety
///
/// As `pw_framer_next_line`.
unsafe fn take_line(
    f: *mut pw_framer,
    line: *mut *const u8,
    len: *mut usize,
    step: LineStep,
) -> pw_result {
    ffi(|| {
        require_non_null!(f, line, len);
        let outs = [span(line, 1), span(len, 1)];
        disjoint(&outs, &[])?;
        // SAFETY: `f` comes from `pw_framer_init`, exclusively ours for this call (caller).
        let framer = unsafe { framer(f, &outs) }?;
        // SAFETY: the caller hands `line` for one writable pointer.
        let line = unsafe { out_slot(line) }?;
        // SAFETY: the caller hands `len` for one writable `size_t`.
        let len = unsafe { out_slot(len) }?;
        let (ptr, n, code) = match step(&mut framer.framer) {
            Some(Ok(l)) => (l.as_ptr(), l.len(), pw_result::PW_OK),
            Some(Err(e)) => (core::ptr::null(), e.len, pw_result::PW_LINE_TOO_LONG),
            None => (core::ptr::null(), 0, pw_result::PW_NO_LINE),
        };
        line.write(ptr);
        len.write(n);
        code.ok()
    })
}

/// Takes the next complete line, without its line ending.
///
/// Returns `PW_OK` with `*line` / `*len` spanning the line in the line
/// buffer (valid until the next `pw_framer_feed`, `pw_framer_finish` or
/// `pw_framer_init` on this framer; never empty, never NUL-terminated);
/// `PW_LINE_TOO_LONG` with `*line` NULL and `*len` the dropped line's full
/// length (reported once; the line after it is intact); or `PW_NO_LINE` with
/// `*line` NULL and `*len` 0.
///
/// The caller must pass `f` from `pw_framer_init`, not used concurrently; `line` and `len`
/// valid for one write each, outside the framer's memory and line buffer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_framer_next_line(
    f: *mut pw_framer,
    line: *mut *const u8,
    len: *mut usize,
) -> pw_result {
    // SAFETY: the caller keeps this function's contract, which is `take_line`'s.
    unsafe { take_line(f, line, len, LineSplitter::next_line) }
}

/// Ends the stream: takes a last line that had no line ending.
///
/// Results and outputs as `pw_framer_next_line`: a waiting line or report
/// first, then the unterminated last line (or its `PW_LINE_TOO_LONG`
/// report), then `PW_NO_LINE`. The framer can take a new stream afterwards.
///
/// The caller must pass what `pw_framer_next_line` needs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_framer_finish(
    f: *mut pw_framer,
    line: *mut *const u8,
    len: *mut usize,
) -> pw_result {
    // SAFETY: the caller keeps this function's contract, which is `take_line`'s.
    unsafe { take_line(f, line, len, LineSplitter::finish) }
}
