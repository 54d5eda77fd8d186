//! A wrapper's tools for C: the registration, the sync tool's function and the writer it
//! writes its result or message to.

#![allow(non_camel_case_types)]

use core::ffi::c_void;

use polyweave_tool_adapter::wrapper::{ResultWriter, SyncTool, ToolFailed};

use crate::boundary::{ffi, in_bytes, require_non_null};
use crate::codes::pw_result;
use crate::enums::{pw_tool_status, raw};
use crate::shared::pw_str;

/// `pw_tool.timeout_ms`: use the wrapper's `tool_timeout_ms`.
pub const PW_TOOL_DEFAULT_TIMEOUT: u32 = u32::MAX;

/// Where a sync tool writes its result or message (opaque; only for `pw_writer_write`).
pub struct pw_writer {
    _opaque: [u8; 0],
}

/// A sync tool: gets the call's raw JSON args, writes its JSON result (or, returning anything
/// but `PW_TOOL_STATUS_OK`, its error message) with `pw_writer_write`. It must not call any other
/// function on its wrapper.
pub type pw_sync_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        args: pw_str,
        out: *mut pw_writer,
    ) -> raw::pw_tool_status,
>;

/// One registered tool. The name's and the schema's bytes are borrowed: they must stay valid
/// and unchanged while the wrapper is used.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_tool {
    /// The name a `TOOL_CALL` uses (UTF-8, compared exactly).
    pub name: pw_str,
    /// `PW_TOOL_KIND_SYNC`, `PW_TOOL_KIND_DEFERRED` or `PW_TOOL_KIND_ADAPTER`.
    pub kind: raw::pw_tool_kind,
    /// Its own timeout in ms, or `PW_TOOL_DEFAULT_TIMEOUT`.
    pub timeout_ms: u32,
    /// For a sync tool, the function; ignored otherwise.
    pub call: pw_sync_fn,
    /// Passed to `call` as is.
    pub userdata: *mut c_void,
    /// Its input schema's JSON text (SPEC §11), or length 0 for none: a call whose args do
    /// not satisfy it completes at once with `Tool <name> arguments are invalid: <where>:
    /// <why>`, unrun. `pw_wrapper_init` refuses one the validator refuses (`PW_BAD_SCHEMA`;
    /// `pw_schema_check` says why).
    pub schema: pw_str,
    /// Memory for the schema's index, or NULL for none: `pw_wrapper_init` writes it and every
    /// validation reads it, with the same answers and less work (SPEC §11).
    /// `pw_schema_index_words` says how many words; fewer gives `PW_STORAGE_TOO_SMALL`. It
    /// must stay valid, and touched by nothing else, while the wrapper is used.
    pub schema_index: *mut u32,
    /// The words at `schema_index`.
    pub schema_index_words: usize,
}

/// A sync tool registered from C.
pub(crate) struct CSync {
    pub(crate) call:
        unsafe extern "C" fn(*mut c_void, pw_str, *mut pw_writer) -> raw::pw_tool_status,
    pub(crate) userdata: *mut c_void,
}

impl SyncTool for CSync {
    fn call(&self, args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        let writer = core::ptr::from_mut(out).cast::<pw_writer>();
        // SAFETY: the host registered this function and userdata (pw_wrapper_init); `writer`
        // points at a live `ResultWriter` for the call, which `pw_writer_write` casts back.
        match unsafe { (self.call)(self.userdata, pw_str::of(args), writer) } {
            s if s == pw_tool_status::PW_TOOL_STATUS_OK as u32 => Ok(()),
            _ => Err(ToolFailed),
        }
    }
}

/// Appends bytes to a sync tool's output; what does not fit is dropped and fails the call as
/// too large (a result) or is cut (a message). Returns `PW_OK`.
///
/// The caller must pass `out` as the writer passed to the running sync tool; `bytes` valid for
/// `len` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_writer_write(
    out: *mut pw_writer,
    bytes: *const u8,
    len: usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(out, bytes);
        // SAFETY: the caller hands `bytes` for `len` readable bytes.
        let input = unsafe { in_bytes(bytes, len) }?;
        // SAFETY: `out` is the `ResultWriter` `CSync::call` handed the tool, alive and ours
        // for the duration of the tool's run (caller).
        let w = unsafe { &mut *out.cast::<ResultWriter<'static>>() };
        w.write(input);
        Ok(())
    })
}
