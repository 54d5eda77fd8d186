//! `pw_wrapper_poll_output`: the frames a wrapper owes and the hook events its log kept, in
//! the order SPEC §6 states, so that no C host (nor a binding) merges them itself.

#![allow(non_camel_case_types)]

use polyweave_tool_adapter::HookEvent;
use polyweave_tool_adapter::Output;

use crate::boundary::{ffi, out_slot, placed, require_non_null, span};
use crate::codes::pw_result;
use crate::enums::pw_output_kind;
use crate::wrapper::{poll_args, pw_call_info, pw_outcome, pw_str, pw_transmit, pw_wrapper};

/// One thing `pw_wrapper_poll_output` hands out: a frame, or a hook event at its place.
/// Spans point into the wrapper's block (the frame: into the buffer given) and are valid
/// until the next call on the wrapper.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_output {
    /// What it is.
    pub kind: pw_output_kind,
    /// 1 when the hook log lacked room for the event's args and outcome: they read `null`.
    pub cut: u8,
    /// For `PW_OUTPUT_FRAME` (and with `PW_BUFFER_TOO_SMALL`, the length needed).
    pub frame: pw_transmit,
    /// For a hook event: the call.
    pub call: pw_call_info,
    /// For `PW_OUTPUT_TOOL_RESULT`: how it ended.
    pub outcome: pw_outcome,
}

/// The next frame or hook event, in SPEC order, in `*out`: `PW_OK`, or `PW_NOTHING` when
/// there is none. A hook event comes right after the frame that was queued last when it
/// fired; events are kept when `hook_log_bytes` is set (the hook functions are called
/// either way). A frame is written into `buf`; a buffer too small gives
/// `PW_BUFFER_TOO_SMALL` with the length needed in `out->frame.len`, and the frame stays.
/// Drain it as `pw_wrapper_poll_transmit`, until `PW_NOTHING`.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently; `buf` valid for
/// `cap` writes and `out` for one, apart from each other and from the wrapper's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_poll_output(
    w: *mut pw_wrapper,
    buf: *mut u8,
    cap: usize,
    out: *mut pw_output,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (w, buf, out) = unsafe { poll_args(w, buf, cap, out) }?;
        let me = core::ptr::from_ref(w);
        let empty = pw_output {
            kind: pw_output_kind::PW_OUTPUT_FRAME,
            cut: 0,
            frame: pw_transmit::too_small(me, 0),
            call: pw_call_info::of(&polyweave_tool_adapter::CallInfo {
                index: 0,
                name: None,
                id: None,
                args: b"",
                seq: 0,
            }),
            outcome: pw_outcome {
                is_error: 0,
                text: pw_str::of(b""),
            },
        };
        match w.wrapper.poll_output(buf) {
            Ok(Some(Output::Frame(t))) => {
                out.write(pw_output {
                    frame: pw_transmit::of(me, t),
                    ..empty
                });
                Ok(())
            }
            Ok(Some(Output::Hook(l))) => {
                let cut = l.cut.into();
                out.write(match l.event {
                    HookEvent::ToolCall(c) => pw_output {
                        kind: pw_output_kind::PW_OUTPUT_TOOL_CALL,
                        cut,
                        call: pw_call_info::of(&c),
                        ..empty
                    },
                    HookEvent::ToolResult(c, o) => pw_output {
                        kind: pw_output_kind::PW_OUTPUT_TOOL_RESULT,
                        cut,
                        call: pw_call_info::of(&c),
                        outcome: pw_outcome::of(o),
                        ..empty
                    },
                });
                Ok(())
            }
            Ok(None) => Err(pw_result::PW_NOTHING),
            Err(e) => {
                out.write(pw_output {
                    frame: pw_transmit::too_small(me, e.needed),
                    ..empty
                });
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}

/// Counters of what a wrapper cut or could not keep, rather than lose silently.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct pw_stats {
    /// Continue prompts written.
    pub rounds: u32,
    /// Error messages (a sync tool's, an adapter's, the host's, a model's `args_error`, a
    /// cancel reason) cut to fit `message_cap` once escaped.
    pub messages_truncated: u32,
    /// Last tool errors cut to `message_cap` in the prompt.
    pub last_error_truncated: u32,
    /// Hook events the log kept without their args and outcome, for want of room.
    pub hook_events_cut: u32,
    /// Hook events the log could not keep at all: `pw_wrapper_poll_output` never hands
    /// them out (the hook functions were still called).
    pub hook_events_dropped: u32,
}

/// The wrapper's counters, in `*out`.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently; `out` valid for one
/// write, outside the wrapper's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_stats(w: *const pw_wrapper, out: *mut pw_stats) -> pw_result {
    ffi(|| {
        require_non_null!(w, out);
        // SAFETY: as the function's contract; only read.
        let w = unsafe { placed(w.cast_mut(), &[span(out, 1)]) }?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let s = w.wrapper.stats();
        let (cut, dropped) = w.hook_log_counts();
        out.write(pw_stats {
            rounds: s.rounds,
            messages_truncated: s.messages_truncated,
            last_error_truncated: s.last_error_truncated,
            hook_events_cut: cut,
            hook_events_dropped: dropped,
        });
        Ok(())
    })
}
