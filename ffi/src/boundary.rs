//! The C boundary: the panic guard and the checked conversions of raw pointers.
//!
//! Every `extern "C"` function runs its body through [`ffi`] (or [`guard`]) and
//! turns its pointer arguments into references only through the helpers here,
//! after [`require_non_null!`] and [`disjoint`] have checked them, so a NULL,
//! misaligned or aliasing argument becomes a `pw_result` instead of undefined
//! behaviour.

use core::mem::{size_of, MaybeUninit};

use crate::codes::pw_result;

/// Runs `body`; with the `std` feature a panic inside it returns `on_panic` instead of unwinding into C.
///
/// Without `std` there is no unwinding to catch: a panic ends in the crate's
/// `#[panic_handler]` (see the crate documentation).
#[cfg(feature = "std")]
pub(crate) fn guard<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(on_panic)
}

/// Runs `body` (no `std`: nothing to catch, see the `std` variant).
#[cfg(not(feature = "std"))]
pub(crate) fn guard<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    let _ = on_panic;
    body()
}

/// The body of a function returning `pw_result`: `Ok(())` is `PW_OK`, `Err(code)` is `code`, a panic is `PW_PANIC`.
pub(crate) fn ffi(body: impl FnOnce() -> Result<(), pw_result>) -> pw_result {
    guard(pw_result::PW_PANIC, || match body() {
        Ok(()) => pw_result::PW_OK,
        Err(code) => code,
    })
}

/// Returns `Err(PW_NULL_POINTER)` from the enclosing closure when any argument is NULL.
macro_rules! require_non_null {
    ($($ptr:expr),+ $(,)?) => {
        if false $(|| $ptr.is_null())+ {
            return Err($crate::codes::pw_result::PW_NULL_POINTER);
        }
    };
}
pub(crate) use require_non_null;

/// The address range `[start, start + len)` of `count` values of `T` at `ptr`.
pub(crate) fn span<T>(ptr: *const T, count: usize) -> (usize, usize) {
    (ptr.addr(), count.saturating_mul(size_of::<T>()))
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.1 != 0 && b.1 != 0 && a.0 < b.0.saturating_add(b.1) && b.0 < a.0.saturating_add(a.1)
}

/// `Err(PW_STORAGE_OVERLAP)` when a written region overlaps another written or a read region.
pub(crate) fn disjoint(
    writes: &[(usize, usize)],
    reads: &[(usize, usize)],
) -> Result<(), pw_result> {
    for (i, w) in writes.iter().enumerate() {
        let clash = writes[i + 1..].iter().chain(reads).any(|o| overlap(*w, *o));
        if clash {
            return Err(pw_result::PW_STORAGE_OVERLAP);
        }
    }
    Ok(())
}

/// Views `len` bytes at `ptr` as input.
///
/// # Safety
///
/// A non-NULL `ptr` must be valid for reads of `len` bytes for `'a`, and no
/// one may write them during `'a`.
pub(crate) unsafe fn in_bytes<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], pw_result> {
    require_non_null!(ptr);
    // SAFETY: non-NULL (checked), valid for `len` reads during 'a (caller); u8 needs no alignment.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// Views `len` bytes at `ptr` as an output buffer.
///
/// # Safety
///
/// A non-NULL `ptr` must be valid for reads and writes of `len` bytes for
/// `'a`, and nothing else may access them during `'a`.
pub(crate) unsafe fn out_bytes<'a>(ptr: *mut u8, len: usize) -> Result<&'a mut [u8], pw_result> {
    require_non_null!(ptr);
    // SAFETY: non-NULL (checked), valid and exclusive for `len` bytes during 'a (caller).
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// Views `ptr` as a slot for one output value (it may be uninitialised).
///
/// # Safety
///
/// A non-NULL, aligned `ptr` must be valid for writes of one `T` for `'a`,
/// and nothing else may access it during `'a`.
pub(crate) unsafe fn out_slot<'a, T>(ptr: *mut T) -> Result<&'a mut MaybeUninit<T>, pw_result> {
    require_non_null!(ptr);
    if !ptr.is_aligned() {
        return Err(pw_result::PW_STORAGE_MISALIGNED);
    }
    // SAFETY: non-NULL and aligned (checked), valid and exclusive for one `T` during 'a (caller);
    // `MaybeUninit<T>` has the layout of `T` and accepts any contents.
    Ok(unsafe { &mut *ptr.cast::<MaybeUninit<T>>() })
}

/// One `T` copied in from the host: `ptr` non-NULL and aligned, else nothing is read.
///
/// # Safety
///
/// A non-NULL, aligned `ptr` must be valid for one read of `T`, and every bit pattern must be
/// a valid `T` (the configuration structs: integers only).
pub(crate) unsafe fn read_in<T: Copy>(ptr: *const T) -> Result<T, pw_result> {
    require_non_null!(ptr);
    if !ptr.is_aligned() {
        return Err(pw_result::PW_STORAGE_MISALIGNED);
    }
    // SAFETY: non-NULL and aligned (checked), readable for one `T` whose every bit pattern is
    // valid (caller).
    Ok(unsafe { ptr.read() })
}

/// The input and the one output of a function that reads `len` bytes and writes one `T`:
/// both non-NULL, the output aligned and outside the input.
///
/// # Safety
///
/// As [`in_bytes`] for `bytes` and [`out_slot`] for `out`.
pub(crate) unsafe fn bytes_in_one_out<'a, T>(
    bytes: *const u8,
    len: usize,
    out: *mut T,
) -> Result<(&'a [u8], &'a mut MaybeUninit<T>), pw_result> {
    require_non_null!(bytes, out);
    disjoint(&[span(out, 1)], &[span(bytes, len)])?;
    // SAFETY: the caller hands `bytes` for `len` readable bytes.
    let input = unsafe { in_bytes(bytes, len) }?;
    // SAFETY: the caller hands `out` for one writable `T`, outside `bytes` (checked).
    let out = unsafe { out_slot(out) }?;
    Ok((input, out))
}

/// An object `_init` placed in host memory, which knows the block it occupies.
pub(crate) trait Placed {
    /// Address and length of the object's whole block.
    ///
    /// # Safety
    ///
    /// `this` must be non-NULL, aligned, and point at an object its `_init` placed.
    unsafe fn block(this: *const Self) -> (usize, usize);

    /// Address and length of memory outside the block the object uses while it lives (the
    /// line splitter's line buffer); none by default.
    ///
    /// # Safety
    ///
    /// As [`block`](Placed::block).
    unsafe fn lent(this: *const Self) -> Option<(usize, usize)> {
        let _ = this;
        None
    }
}

/// `impl Placed` for an object whose `block` field holds the block its `_init` placed it in.
macro_rules! placed_by_block_field {
    ($t:ty) => {
        impl $crate::boundary::Placed for $t {
            unsafe fn block(this: *const Self) -> (usize, usize) {
                // SAFETY: `this` points at a placed object (trait contract); one field is
                // copied, no reference made.
                unsafe { (*this).block }
            }
        }
    };
}
pub(crate) use placed_by_block_field;

/// `Err(PW_STORAGE_OVERLAP)` unless `p`'s block and the memory lent to it are disjoint from
/// each other and from `others`.
///
/// # Safety
///
/// As [`Placed::block`].
unsafe fn regions_apart<T: Placed>(
    p: *const T,
    others: &[(usize, usize)],
) -> Result<(), pw_result> {
    // SAFETY: as the function's contract.
    let block = unsafe { T::block(p) };
    // SAFETY: as above.
    match unsafe { T::lent(p) } {
        // Known per type once inlined: an object with nothing lent checks one region, not an
        // empty second one too (every entry of every object runs this check, so an empty
        // region's test was paid on every call of the host loop).
        None => disjoint(&[block], others),
        Some(lent) => disjoint(&[block, lent], others),
    }
}

/// Checks `p` and returns the object behind it, once its block and the memory lent to it are
/// disjoint from each other and from `others` (the regions the call reads or writes).
///
/// # Safety
///
/// A non-NULL `p` must come from the object's `_init` and be used by nothing else for `'a`.
pub(crate) unsafe fn placed<'a, T: Placed>(
    p: *mut T,
    others: &[(usize, usize)],
) -> Result<&'a mut T, pw_result> {
    require_non_null!(p);
    if !p.is_aligned() {
        return Err(pw_result::PW_STORAGE_MISALIGNED);
    }
    // SAFETY: non-NULL and aligned (checked), placed by `_init` (caller).
    unsafe { regions_apart(p, others) }?;
    // SAFETY: as above, and nothing else uses the object during 'a (caller).
    Ok(unsafe { &mut *p })
}

/// As [`placed`], for an entry that only reads the object: a shared reference, so that
/// references into the object handed out earlier (a request's view of its conversation)
/// stay valid.
///
/// # Safety
///
/// A non-NULL `p` must come from the object's `_init`, and nothing may change it during `'a`.
pub(crate) unsafe fn placed_ref<'a, T: Placed>(
    p: *const T,
    others: &[(usize, usize)],
) -> Result<&'a T, pw_result> {
    require_non_null!(p);
    if !p.is_aligned() {
        return Err(pw_result::PW_STORAGE_MISALIGNED);
    }
    // SAFETY: non-NULL and aligned (checked), placed by `_init` (caller).
    unsafe { regions_apart(p, others) }?;
    // SAFETY: as above, and nothing changes the object during 'a (caller).
    Ok(unsafe { &*p })
}

/// The body of an entry that takes its object and plain values only (no other memory): `p`
/// placed, then `body` on it, as [`ffi`] runs it.
///
/// # Safety
///
/// As [`placed`].
pub(crate) unsafe fn with_placed<T: Placed, E: Into<pw_result>>(
    p: *mut T,
    body: impl FnOnce(&mut T) -> Result<(), E>,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        body(unsafe { placed(p, &[]) }?).map_err(Into::into)
    })
}

/// The answer of a query that cannot fail: `f` on the object behind `p`, or `none` for a NULL
/// or misaligned `p` (and on a panic).
///
/// # Safety
///
/// As [`placed`]; the object is only read.
pub(crate) unsafe fn query_placed<T: Placed, R: Copy>(
    p: *const T,
    none: R,
    f: impl FnOnce(&T) -> R,
) -> R {
    guard(none, || {
        // SAFETY: as the function's contract; only read.
        unsafe { placed(p.cast_mut(), &[]) }.map_or(none, |p| f(p))
    })
}

/// The object and the bytes of an entry that reads `len` bytes: both non-NULL, the object
/// placed apart from them.
///
/// # Safety
///
/// As [`placed`] for `p` and [`in_bytes`] for `bytes`.
pub(crate) unsafe fn placed_reading<'a, T: Placed>(
    p: *mut T,
    bytes: *const u8,
    len: usize,
) -> Result<(&'a mut T, &'a [u8]), pw_result> {
    require_non_null!(p, bytes);
    // SAFETY: as the function's contract.
    let p = unsafe { placed(p, &[span(bytes, len)]) }?;
    // SAFETY: the caller hands `bytes` for `len` reads.
    let input = unsafe { in_bytes(bytes, len) }?;
    Ok((p, input))
}

/// The object and the one output of an entry that writes one `U` (a state, counters, an
/// event): both non-NULL, the object placed apart from the output.
///
/// # Safety
///
/// As [`placed`] for `p` and [`out_slot`] for `out`.
pub(crate) unsafe fn placed_one_out<'a, T: Placed, U>(
    p: *mut T,
    out: *mut U,
) -> Result<(&'a mut T, &'a mut MaybeUninit<U>), pw_result> {
    require_non_null!(p, out);
    // SAFETY: as the function's contract.
    let p = unsafe { placed(p, &[span(out, 1)]) }?;
    // SAFETY: the caller hands `out` for one write.
    let out = unsafe { out_slot(out) }?;
    Ok((p, out))
}

/// Which check an entry runs first: its object's, or whether its outputs overlap each other
/// and its inputs. Either order refuses the same calls; it decides only which code a call
/// with both faults gets (`PW_STORAGE_MISALIGNED` or `PW_STORAGE_OVERLAP`), so each entry
/// keeps the order it has always had.
#[derive(Copy, Clone)]
pub(crate) enum First {
    /// The object (the wrapper's and the adapter call's entries).
    Object,
    /// The other arguments (the decoder's and the MCP client's entries).
    Arguments,
}

/// `p` placed apart from `others` (every region the entry touches), and `writes` apart from
/// each other and from `reads`, checked in the order `first` says.
///
/// # Safety
///
/// As [`placed`].
unsafe fn placed_apart<'a, T: Placed>(
    p: *mut T,
    others: &[(usize, usize)],
    writes: &[(usize, usize)],
    reads: &[(usize, usize)],
    first: First,
) -> Result<&'a mut T, pw_result> {
    if let First::Arguments = first {
        disjoint(writes, reads)?;
    }
    // SAFETY: as the function's contract.
    let p = unsafe { placed(p, others) }?;
    if let First::Object = first {
        disjoint(writes, reads)?;
    }
    Ok(p)
}

/// The object, the bytes and the one output of an entry that reads `len` bytes and writes one
/// `U` (a feed's count taken, a frame's disposition): all non-NULL, the output apart from
/// the bytes, the object placed apart from both.
///
/// # Safety
///
/// As [`placed`] for `p`, [`in_bytes`] for `bytes` and [`out_slot`] for `out`.
pub(crate) unsafe fn placed_bytes_in_one_out<'a, T: Placed, U>(
    p: *mut T,
    bytes: *const u8,
    len: usize,
    out: *mut U,
    first: First,
) -> Result<(&'a mut T, &'a [u8], &'a mut MaybeUninit<U>), pw_result> {
    require_non_null!(p, bytes, out);
    let (out_span, bytes_span) = (span(out, 1), span(bytes, len));
    // SAFETY: as the function's contract.
    let p = unsafe {
        placed_apart(
            p,
            &[out_span, bytes_span],
            &[out_span],
            &[bytes_span],
            first,
        )
    }?;
    // SAFETY: the caller hands `bytes` for `len` reads and `out` for one write.
    let (input, out) = unsafe { (in_bytes(bytes, len)?, out_slot(out)?) };
    Ok((p, input, out))
}

/// What [`placed_poll`] hands back: the object, the output buffer, the out slot.
pub(crate) type PollArgs<'a, T, U> = (&'a mut T, &'a mut [u8], &'a mut MaybeUninit<U>);

/// The object, the output buffer and the out slot of a poll that writes up to `cap` bytes
/// and one `U` (their length, or a struct that holds it): all non-NULL, the buffer and the
/// slot apart from each other, the object placed apart from both.
///
/// # Safety
///
/// As [`placed`] for `p`, [`out_bytes`] for `buf` and [`out_slot`] for `out`.
pub(crate) unsafe fn placed_poll<'a, T: Placed, U>(
    p: *mut T,
    buf: *mut u8,
    cap: usize,
    out: *mut U,
    first: First,
) -> Result<PollArgs<'a, T, U>, pw_result> {
    require_non_null!(p, buf, out);
    let writes = [span(buf, cap), span(out, 1)];
    // SAFETY: as the function's contract.
    let p = unsafe { placed_apart(p, &writes, &writes, &[], first) }?;
    // SAFETY: the caller hands `buf` for `cap` writes and `out` for one.
    let (buf, out) = unsafe { (out_bytes(buf, cap)?, out_slot(out)?) };
    Ok((p, buf, out))
}

/// What [`bytes_in_bytes_out`] hands back: the input, the output buffer, the length slot.
pub(crate) type CopyArgs<'a> = (&'a [u8], &'a mut [u8], &'a mut MaybeUninit<usize>);

/// The input, the output buffer and the length slot of a function that reads `len` bytes
/// and writes up to `cap` bytes and their count: all non-NULL, the outputs apart from each
/// other and from the input.
///
/// # Safety
///
/// As [`in_bytes`] for `input`, [`out_bytes`] for `out` and [`out_slot`] for `out_len`.
pub(crate) unsafe fn bytes_in_bytes_out<'a>(
    input: *const u8,
    len: usize,
    out: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> Result<CopyArgs<'a>, pw_result> {
    require_non_null!(input, out, out_len);
    disjoint(&[span(out, cap), span(out_len, 1)], &[span(input, len)])?;
    // SAFETY: the caller hands `input` for `len` readable bytes, `out` for `cap` writable
    // bytes and `out_len` for one writable `size_t`.
    unsafe {
        Ok((
            in_bytes(input, len)?,
            out_bytes(out, cap)?,
            out_slot(out_len)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_rules() {
        assert!(disjoint(&[(10, 5)], &[(15, 5), (0, 10)]).is_ok());
        assert_eq!(
            disjoint(&[(10, 5)], &[(14, 1)]),
            Err(pw_result::PW_STORAGE_OVERLAP)
        );
        assert_eq!(
            disjoint(&[(10, 5), (12, 8)], &[]),
            Err(pw_result::PW_STORAGE_OVERLAP)
        );
        // Empty regions never overlap; reads may overlap reads.
        assert!(disjoint(&[(10, 0)], &[(10, 5)]).is_ok());
        assert!(disjoint(&[], &[(10, 5), (10, 5)]).is_ok());
    }

    #[cfg(feature = "std")]
    #[test]
    fn panics_become_pw_panic() {
        let code = ffi(|| panic!("boom"));
        assert_eq!(code, pw_result::PW_PANIC);
        assert_eq!(guard(7u8, || panic!("boom")), 7);
        assert_eq!(ffi(|| Err(pw_result::PW_NOTHING)), pw_result::PW_NOTHING);
        assert_eq!(ffi(|| Ok(())), pw_result::PW_OK);
    }
}
