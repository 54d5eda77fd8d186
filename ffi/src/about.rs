//! What the library says about itself: its version, and the text of each result code.

use core::ffi::{c_char, CStr};

use crate::boundary::{self, disjoint, ffi, out_bytes, out_slot, require_non_null, span};
use crate::codes::{pw_result, UNKNOWN_MESSAGE};

/// The library's major version (`Cargo.toml`'s; a test checks they agree).
pub const PW_VERSION_MAJOR: u32 = 0;
/// The library's minor version.
pub const PW_VERSION_MINOR: u32 = 1;
/// The library's patch version.
pub const PW_VERSION_PATCH: u32 = 0;

const VERSION: &CStr = match CStr::from_bytes_with_nul(
    concat!(
        "polyweave-tool-adapter-ffi/",
        env!("CARGO_PKG_VERSION"),
        "\0"
    )
    .as_bytes(),
) {
    Ok(s) => s,
    Err(_) => panic!("version string has an inner NUL"),
};

/// The library's name and version as a static NUL-terminated C string, e.g. `"polyweave-tool-adapter-ffi/0.1.0"`.
///
/// Never NULL; the host must not free or modify it.
#[unsafe(no_mangle)]
pub extern "C" fn pw_version() -> *const c_char {
    boundary::guard(c"".as_ptr(), || VERSION.as_ptr())
}

/// 1 when `code` says a frame was malformed (SPEC §1: not a JSON object with a string
/// `type`, invalid JSON or UTF-8, too deep, a doubled `type`): the input was refused and
/// nothing changed. 0 for every other code, `PW_WRONG_FRAME_KIND` included.
#[unsafe(no_mangle)]
pub extern "C" fn pw_result_is_malformed(code: u32) -> u8 {
    boundary::guard(0, || {
        pw_result::from_code(code).is_some_and(pw_result::is_malformed) as u8
    })
}

/// 1 when `code` says a completion or adapter input named a call that is not waiting for it
/// (unknown, completed, timed out, cancelled, stale, or of another kind): refused, nothing
/// changed. A handle from another wrapper (`PW_CALL_FOREIGN`) is a host bug, not this: 0.
#[unsafe(no_mangle)]
pub extern "C" fn pw_result_is_not_waiting(code: u32) -> u8 {
    boundary::guard(0, || {
        pw_result::from_code(code).is_some_and(pw_result::is_not_waiting) as u8
    })
}

/// Writes the message for `code` (any number; unknown ones get a generic message).
///
/// The text is ASCII and is *not* NUL-terminated: `*out_len` is its length.
/// When `len` is too small, returns `PW_BUFFER_TOO_SMALL`, sets `*out_len`
/// to the length needed and writes nothing into `buf`.
///
/// The caller must pass `buf` valid for writes of `len` bytes and `out_len` for one `size_t`;
/// they must not overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_result_text(
    code: u32,
    buf: *mut u8,
    len: usize,
    out_len: *mut usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(buf, out_len);
        disjoint(&[span(buf, len), span(out_len, 1)], &[])?;
        // SAFETY: the caller hands `buf` for `len` writable bytes.
        let buf = unsafe { out_bytes(buf, len) }?;
        // SAFETY: the caller hands `out_len` for one writable `size_t`.
        let out_len = unsafe { out_slot(out_len) }?;
        let text = pw_result::from_code(code).map_or(UNKNOWN_MESSAGE, pw_result::message);
        out_len.write(text.len());
        let dst = buf
            .get_mut(..text.len())
            .ok_or(pw_result::PW_BUFFER_TOO_SMALL)?;
        dst.copy_from_slice(text.as_bytes());
        Ok(())
    })
}
