//! The polyweave C ABI (`include/polyweave_tool_adapter.h`) as a `wasm32-unknown-unknown`
//! module for the npm package `polyweave-tool-adapter` (`examples/node/`).
//!
//! The module exports every `pw_*` function of `polyweave-tool-adapter-ffi` as is, plus:
//! - `pwjs_sync_fn`, `pwjs_on_tool_call`, `pwjs_on_tool_result`: the function-table indices of
//!   three trampolines, for `pw_tool.call` and `pw_hooks`. A C function pointer in wasm is an
//!   index into the module's table, and JS functions cannot be put there without
//!   `WebAssembly.Function` (not in every engine), so the trampolines call the functions the
//!   loader hands in as the import module `pw_js`, with the same arguments (a `pw_str` as its
//!   two fields: the import boundary only takes scalars).
//! - `pwjs_wrapper_complete`, `pwjs_wrapper_complete_unwritable`,
//!   `pwjs_wrapper_handle_adapter_frame`, `pwjs_wrapper_handle_adapter_closed`: the four
//!   calls that take a `pw_call_handle` by
//!   value, taking a pointer to it instead, so JS never depends on how the wasm C ABI passes
//!   a struct by value.
//!
//! On any other target the crate is empty (a cdylib exporting nothing), so `cargo test
//! --workspace` and clippy build it on the host.

#[cfg(target_arch = "wasm32")]
mod wasm {
    use core::ffi::c_void;
    use core::mem::{align_of, size_of};
    use polyweave_tool_adapter_ffi::{
        pw_adapter_call_options, pw_call_handle, pw_call_info, pw_completed, pw_conversation_stats,
        pw_declaration, pw_decoder_config, pw_decoder_stats, pw_disposition, pw_event, pw_hooks,
        pw_mcp_config, pw_mcp_event, pw_mcp_frame, pw_mcp_handled, pw_mcp_post, pw_mcp_stats,
        pw_outcome, pw_output, pw_request_options, pw_result, pw_schema_error, pw_str, pw_tool,
        pw_tool_status, pw_trace_entry, pw_transmit, pw_wrapper, pw_wrapper_complete,
        pw_wrapper_complete_unwritable, pw_wrapper_config, pw_wrapper_handle_adapter_closed,
        pw_wrapper_handle_adapter_frame, pw_wrapper_stats, pw_writer,
    };

    /// A struct's name, size and alignment as this build lays it out (for the JS layout test).
    #[repr(C)]
    pub struct Layout {
        name: *const u8,
        name_len: usize,
        size: usize,
        align: usize,
    }

    /// The table of `Layout`s (only read: the raw pointer names a `'static` string).
    struct Layouts([Layout; 26]);
    // SAFETY: the table is immutable and its pointers point to 'static strings.
    unsafe impl Sync for Layouts {}

    macro_rules! layouts {
        ($($t:ident),* $(,)?) => {
            Layouts([$(Layout {
                name: stringify!($t).as_ptr(),
                name_len: stringify!($t).len(),
                size: size_of::<$t>(),
                align: align_of::<$t>(),
            }),*])
        };
    }

    static LAYOUTS: Layouts = layouts!(
        pw_str,
        pw_adapter_call_options,
        pw_outcome,
        pw_wrapper_config,
        pw_tool,
        pw_call_info,
        pw_hooks,
        pw_call_handle,
        pw_disposition,
        pw_transmit,
        pw_output,
        pw_wrapper_stats,
        pw_event,
        pw_trace_entry,
        pw_decoder_config,
        pw_decoder_stats,
        pw_mcp_config,
        pw_mcp_event,
        pw_mcp_stats,
        pw_mcp_handled,
        pw_mcp_frame,
        pw_mcp_post,
        pw_conversation_stats,
        pw_request_options,
        pw_declaration,
        pw_schema_error,
    );

    /// How many entries `pwjs_layout` has.
    #[no_mangle]
    pub extern "C" fn pwjs_layout_count() -> usize {
        LAYOUTS.0.len()
    }

    /// Entry `i` of the layout table (every struct the JS binding declares), NULL past the end.
    #[no_mangle]
    pub extern "C" fn pwjs_layout(i: usize) -> *const Layout {
        LAYOUTS
            .0
            .get(i)
            .map_or(core::ptr::null(), |l| l as *const Layout)
    }

    #[link(wasm_import_module = "pw_js")]
    extern "C" {
        /// Runs sync tool `userdata` on `len` bytes of arguments at `args`; writes with `out`.
        fn sync_call(
            userdata: *mut c_void,
            args: *const u8,
            len: usize,
            out: *mut c_void,
        ) -> pw_tool_status;
        /// A wrapper's `on_tool_call` hook (`userdata`: the wrapper's number).
        fn on_tool_call(userdata: *mut c_void, call: *const pw_call_info);
        /// A wrapper's `on_tool_result` hook.
        fn on_tool_result(
            userdata: *mut c_void,
            call: *const pw_call_info,
            outcome: *const pw_outcome,
        );
    }

    unsafe extern "C" fn sync_trampoline(
        userdata: *mut c_void,
        args: pw_str,
        out: *mut pw_writer,
    ) -> pw_tool_status {
        // SAFETY: the import only reads `args` during the call, as pw_sync_fn's contract says.
        unsafe { sync_call(userdata, args.ptr, args.len, out.cast()) }
    }

    unsafe extern "C" fn call_trampoline(userdata: *mut c_void, call: *const pw_call_info) {
        // SAFETY: forwarded as the library hands it (valid during the hook).
        unsafe { on_tool_call(userdata, call) }
    }

    unsafe extern "C" fn result_trampoline(
        userdata: *mut c_void,
        call: *const pw_call_info,
        outcome: *const pw_outcome,
    ) {
        // SAFETY: forwarded as the library hands it (valid during the hook).
        unsafe { on_tool_result(userdata, call, outcome) }
    }

    /// The table index of the `pw_sync_fn` trampoline (for `pw_tool.call`).
    #[no_mangle]
    pub extern "C" fn pwjs_sync_fn() -> usize {
        sync_trampoline as *const () as usize
    }

    /// The table index of the `on_tool_call` trampoline (for `pw_hooks.on_tool_call`).
    #[no_mangle]
    pub extern "C" fn pwjs_on_tool_call() -> usize {
        call_trampoline as *const () as usize
    }

    /// The table index of the `on_tool_result` trampoline (for `pw_hooks.on_tool_result`).
    #[no_mangle]
    pub extern "C" fn pwjs_on_tool_result() -> usize {
        result_trampoline as *const () as usize
    }

    /// `pw_wrapper_complete` with the handle behind a pointer (`PW_NULL_POINTER` when NULL).
    ///
    /// # Safety
    /// As `pw_wrapper_complete`; `handle` points to a `pw_call_handle` or is NULL.
    #[no_mangle]
    pub unsafe extern "C" fn pwjs_wrapper_complete(
        w: *mut pw_wrapper,
        now_ms: u64,
        handle: *const pw_call_handle,
        outcome: *const pw_outcome,
        completed: *mut pw_completed,
    ) -> pw_result {
        if handle.is_null() {
            return pw_result::PW_NULL_POINTER;
        }
        // SAFETY: non-NULL and, by the contract, a pw_call_handle.
        unsafe { pw_wrapper_complete(w, now_ms, handle.read_unaligned(), outcome, completed) }
    }

    /// `pw_wrapper_complete_unwritable` with the handle behind a pointer (`PW_NULL_POINTER`
    /// when NULL).
    ///
    /// # Safety
    /// As `pw_wrapper_complete_unwritable`; `handle` points to a `pw_call_handle` or is NULL.
    #[no_mangle]
    pub unsafe extern "C" fn pwjs_wrapper_complete_unwritable(
        w: *mut pw_wrapper,
        now_ms: u64,
        handle: *const pw_call_handle,
    ) -> pw_result {
        if handle.is_null() {
            return pw_result::PW_NULL_POINTER;
        }
        // SAFETY: non-NULL and, by the contract, a pw_call_handle.
        unsafe { pw_wrapper_complete_unwritable(w, now_ms, handle.read_unaligned()) }
    }

    /// `pw_wrapper_handle_adapter_frame` with the handle behind a pointer.
    ///
    /// # Safety
    /// As `pw_wrapper_handle_adapter_frame`; `handle` points to a `pw_call_handle` or is NULL.
    #[no_mangle]
    pub unsafe extern "C" fn pwjs_wrapper_handle_adapter_frame(
        w: *mut pw_wrapper,
        now_ms: u64,
        handle: *const pw_call_handle,
        bytes: *const u8,
        len: usize,
    ) -> pw_result {
        if handle.is_null() {
            return pw_result::PW_NULL_POINTER;
        }
        // SAFETY: non-NULL and, by the contract, a pw_call_handle.
        unsafe { pw_wrapper_handle_adapter_frame(w, now_ms, handle.read_unaligned(), bytes, len) }
    }

    /// `pw_wrapper_handle_adapter_closed` with the handle behind a pointer.
    ///
    /// # Safety
    /// As `pw_wrapper_handle_adapter_closed`; `handle` points to a `pw_call_handle` or is NULL.
    #[no_mangle]
    pub unsafe extern "C" fn pwjs_wrapper_handle_adapter_closed(
        w: *mut pw_wrapper,
        now_ms: u64,
        handle: *const pw_call_handle,
    ) -> pw_result {
        if handle.is_null() {
            return pw_result::PW_NULL_POINTER;
        }
        // SAFETY: non-NULL and, by the contract, a pw_call_handle.
        unsafe { pw_wrapper_handle_adapter_closed(w, now_ms, handle.read_unaligned()) }
    }
}
