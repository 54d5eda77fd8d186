//! What every object of the C API shares: the span type, a call's outcome, the "no
//! deadline" value and how an object's memory block is laid out.

#![allow(non_camel_case_types)]

use core::ffi::c_void;
use core::mem::{align_of, size_of, MaybeUninit};

use polyweave_tool_adapter::wrapper::WrapperConfig as WrapperCoreConfig;
use polyweave_tool_adapter::{BufferTooSmall, CallOutcome, Instant};

use crate::boundary::{disjoint, ffi, out_slot, read_in, require_non_null, span};
use crate::codes::pw_result;

/// A span of bytes: `len` bytes at `ptr` (`ptr` may be anything when `len` is 0).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_str {
    /// The first byte.
    pub ptr: *const u8,
    /// How many bytes.
    pub len: usize,
}

impl pw_str {
    pub(crate) fn of(bytes: &[u8]) -> Self {
        Self {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        }
    }

    pub(crate) const EMPTY: pw_str = pw_str {
        ptr: core::ptr::null(),
        len: 0,
    };
}

/// How a call ended: `text` is the raw JSON result, or the error message when `is_error` is 1.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_outcome {
    /// 1 for an error message, 0 for a result.
    pub is_error: u8,
    /// The result or the message.
    pub text: pw_str,
}

impl pw_outcome {
    pub(crate) fn of(o: CallOutcome<'_>) -> Self {
        match o {
            CallOutcome::Result(r) => Self {
                is_error: 0,
                text: pw_str::of(r),
            },
            CallOutcome::Error(e) => Self {
                is_error: 1,
                text: pw_str::of(e.as_bytes()),
            },
        }
    }
}

/// What `pw_wrapper_poll_timeout` returns when no call is pending (and for a NULL or
/// misaligned wrapper).
pub const PW_NO_TIMEOUT: u64 = u64::MAX;

/// The block at `mem` an `_init` places its object in: at least `need` bytes (else
/// `PW_STORAGE_TOO_SMALL`, checked first) and aligned to `align` (else
/// `PW_STORAGE_MISALIGNED`).
pub(crate) fn block_at(
    mem: *mut c_void,
    mem_len: usize,
    need: usize,
    align: usize,
) -> Result<(usize, usize), pw_result> {
    if mem_len < need {
        return Err(pw_result::PW_STORAGE_TOO_SMALL);
    }
    if !mem.addr().is_multiple_of(align) {
        return Err(pw_result::PW_STORAGE_MISALIGNED);
    }
    Ok(span(mem.cast::<u8>().cast_const(), mem_len))
}

/// A deadline as C gets it: its milliseconds, or `PW_NO_TIMEOUT` for none.
pub(crate) fn deadline_ms(deadline: Option<Instant>) -> u64 {
    deadline.map_or(PW_NO_TIMEOUT, Instant::as_millis)
}

/// An upper bound, on every target, of the alignment any object's memory block needs
/// (`pw_<object>_align()`): a `uint64_t` array is aligned enough for every one.
pub const PW_MAX_ALIGN: usize = 8;

/// An object's memory block laid out part after part: the object first, then each part
/// aligned for what it holds. One builder for every object, so that what `pw_<object>_size`
/// reports and where `pw_<object>_init` places the parts cannot disagree.
pub(crate) struct Block {
    end: usize,
}

impl Block {
    /// A block that starts with a `T` (the object itself).
    pub(crate) const fn starting_with<T>() -> Self {
        Self {
            end: size_of::<T>(),
        }
    }

    /// Room for `n` values of `U` after what is there, aligned for `U`: their offset, or
    /// `None` past `usize`.
    pub(crate) fn array<U>(&mut self, n: usize) -> Option<usize> {
        let a = align_of::<U>();
        let at = self.end.checked_add(a - 1)? & !(a - 1);
        self.end = at.checked_add(n.checked_mul(size_of::<U>())?)?;
        Some(at)
    }

    /// Room for `n` bytes after what is there: their offset, or `None` past `usize`.
    pub(crate) fn bytes(&mut self, n: usize) -> Option<usize> {
        self.array::<u8>(n)
    }

    /// The bytes of the whole block so far.
    pub(crate) const fn len(&self) -> usize {
        self.end
    }
}

/// The body of every configuration query (`pw_<object>_size`, `_max_frame_len`,
/// `_max_line_len`): both pointers checked, `out` apart from `cfg`, the configuration read
/// and checked by `read`, and what `answer` makes of it written to `*out`.
///
/// # Safety
///
/// A non-NULL `cfg` must be valid as `read` needs, a non-NULL `out` for one write.
pub(crate) unsafe fn config_query<P, C>(
    cfg: *const P,
    out: *mut usize,
    read: unsafe fn(*const P) -> Result<C, pw_result>,
    answer: impl FnOnce(C) -> Result<usize, pw_result>,
) -> pw_result {
    ffi(|| {
        require_non_null!(cfg, out);
        disjoint(&[span(out, 1)], &[span(cfg, 1)])?;
        // SAFETY: the caller hands `cfg` as `read` needs.
        let c = unsafe { read(cfg) }?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        out.write(answer(c)?);
        Ok(())
    })
}

/// The body of `pw_decoder_config_fit` and `pw_mcp_config_fit`: `*cfg` made to fit the
/// wrapper configuration `*wrapper` by `fit`, or, for a wrapper configuration out of range,
/// `PW_BAD_CONFIG` and nothing changed.
///
/// # Safety
///
/// A non-NULL `cfg` must be valid for one read and write, a non-NULL `wrapper` for one read;
/// every bit pattern must be a valid `P` (the configuration structs: integers only).
pub(crate) unsafe fn config_fit<P: Copy>(
    cfg: *mut P,
    wrapper: *const crate::wrapper::pw_wrapper_config,
    fit: impl FnOnce(P, &WrapperCoreConfig) -> P,
) -> pw_result {
    ffi(|| {
        require_non_null!(cfg, wrapper);
        disjoint(&[span(cfg.cast_const(), 1)], &[span(wrapper, 1)])?;
        // SAFETY: the caller hands `wrapper` for one read; a misaligned one is refused first.
        let (w, _) = unsafe { crate::wrapper::read_config(wrapper) }?;
        // SAFETY: the caller hands `cfg` for one read; a misaligned one is refused first.
        let c = unsafe { read_in(cfg.cast_const()) }?;
        // SAFETY: the caller hands `cfg` for one write (aligned: checked by the read above).
        unsafe { out_slot(cfg) }?.write(fit(c, &w));
        Ok(())
    })
}

/// The body of a function that fills one struct (`pw_<object>_config_default`): `value`
/// written to `*out`.
///
/// # Safety
///
/// A non-NULL `out` must be valid for one write.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `out` for one write.
        unsafe { out_slot(out) }?.write(value);
        Ok(())
    })
}

/// What a poll that copies bytes out gives C (`pw_decoder_poll_frame`, `pw_mcp_poll_transmit`):
/// `PW_OK` with the length, `PW_NOTHING` with 0, or `PW_BUFFER_TOO_SMALL` with the length
/// needed, in `*len`.
pub(crate) fn hand_out(
    polled: Result<Option<usize>, BufferTooSmall>,
    len: &mut MaybeUninit<usize>,
) -> Result<(), pw_result> {
    match polled {
        Ok(Some(n)) => {
            len.write(n);
            Ok(())
        }
        Ok(None) => {
            len.write(0);
            Err(pw_result::PW_NOTHING)
        }
        Err(e) => {
            len.write(e.needed);
            Err(pw_result::PW_BUFFER_TOO_SMALL)
        }
    }
}
