//! Frames and JSON: validation, kind lookup, `TOOL_CALL` fields, string decoding.

use polyweave_tool_adapter::frame::{Frame, FrameKind};
use polyweave_tool_adapter::json::{self, JsonStr};

use crate::boundary::{
    bytes_in_bytes_out, bytes_in_one_out, disjoint, ffi, in_bytes, out_slot, require_non_null, span,
};
use crate::codes::pw_result;

/// The depth limit the Rust API uses by default (the frame object is level 1).
pub const PW_DEFAULT_MAX_DEPTH: u8 = 32;

const _: () = assert!(PW_DEFAULT_MAX_DEPTH == json::DEFAULT_MAX_DEPTH);

/// A frame's `type`.
///
/// Only ever written by the library; `PW_FRAME_KIND_OTHER` covers every `type`
/// string that is not one of the five known ones (such frames pass through
/// untouched).
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum pw_frame_kind {
    /// `"TEXT"`
    PW_FRAME_KIND_TEXT = 0,
    /// `"TOOL_CALL"`
    PW_FRAME_KIND_TOOL_CALL = 1,
    /// `"TOOL_RESULT"`
    PW_FRAME_KIND_TOOL_RESULT = 2,
    /// `"ERROR"`
    PW_FRAME_KIND_ERROR = 3,
    /// `"END"`
    PW_FRAME_KIND_END = 4,
    /// Any other `type` string.
    PW_FRAME_KIND_OTHER = 5,
}

impl From<FrameKind<'_>> for pw_frame_kind {
    fn from(kind: FrameKind<'_>) -> Self {
        match kind {
            FrameKind::Text => pw_frame_kind::PW_FRAME_KIND_TEXT,
            FrameKind::ToolCall => pw_frame_kind::PW_FRAME_KIND_TOOL_CALL,
            FrameKind::ToolResult => pw_frame_kind::PW_FRAME_KIND_TOOL_RESULT,
            FrameKind::Error => pw_frame_kind::PW_FRAME_KIND_ERROR,
            FrameKind::End => pw_frame_kind::PW_FRAME_KIND_END,
            FrameKind::Other(_) => pw_frame_kind::PW_FRAME_KIND_OTHER,
        }
    }
}

/// `pw_tool_call.flags`: `content.id` is a JSON string (`id` / `id_len` are set).
pub const PW_TOOL_CALL_HAS_ID: u32 = 1;
/// `pw_tool_call.flags`: `content.name` is a JSON string (`name` / `name_len` are set).
/// Without it the call is malformed (its result names the tool `null`).
pub const PW_TOOL_CALL_HAS_NAME: u32 = 2;
/// `pw_tool_call.flags`: `content.args` is present (`args` points into the frame);
/// without it `args` points at a static `{}`.
pub const PW_TOOL_CALL_HAS_ARGS: u32 = 4;
/// `pw_tool_call.flags`: `content` is a JSON object.
pub const PW_TOOL_CALL_CONTENT_IS_OBJECT: u32 = 8;

/// The fields of a `TOOL_CALL` frame, as spans of the caller's bytes (nothing is copied).
///
/// `id` and `name` are whole JSON string tokens, quotes included and escapes
/// undecoded: pass them to `pw_json_string_decode` for the text. They are
/// NULL with length 0 when the member is absent or not a string (its flag is
/// then clear). `args` is the raw JSON value exactly as written, whatever its
/// type; when absent (or when `content` is not an object) it is the 2-byte
/// static text `{}`, which is not in the frame. The spans live as long as the
/// frame's bytes.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_tool_call {
    /// `content.id` as a JSON string token, or NULL.
    pub id: *const u8,
    /// Length of `id` in bytes (0 when NULL).
    pub id_len: usize,
    /// `content.name` as a JSON string token, or NULL.
    pub name: *const u8,
    /// Length of `name` in bytes (0 when NULL).
    pub name_len: usize,
    /// `content.args` as written, or the static `{}`.
    pub args: *const u8,
    /// Length of `args` in bytes.
    pub args_len: usize,
    /// `PW_TOOL_CALL_*` bits.
    pub flags: u32,
}

/// The token (quotes included) of a string view taken from `input`.
fn token_in<'a>(input: &'a [u8], s: JsonStr<'a>) -> Result<&'a [u8], pw_result> {
    let start = s.raw().as_ptr().addr().wrapping_sub(input.as_ptr().addr());
    let quote = start.checked_sub(1).ok_or(pw_result::PW_PANIC)?;
    input
        .get(quote..start + s.raw().len() + 1)
        .ok_or(pw_result::PW_PANIC)
}

/// True when `inner` lies inside `outer`.
fn within(outer: &[u8], inner: &[u8]) -> bool {
    let (o, i) = (outer.as_ptr_range(), inner.as_ptr_range());
    o.start.addr() <= i.start.addr() && i.end.addr() <= o.end.addr()
}

/// Checks that `bytes` is exactly one JSON value (any type), white space around it allowed.
///
/// `max_depth` bounds nesting (the outermost value is level 1; 0 refuses every
/// array and object); `PW_DEFAULT_MAX_DEPTH` is the usual choice. Returns
/// `PW_OK`, `PW_INVALID_JSON`, `PW_JSON_TOO_DEEP` or `PW_INVALID_UTF8`.
/// `*error_offset` is written on each of these: the byte offset of the error,
/// or 0 on success.
///
/// The caller must pass `bytes` valid for reads of `len` bytes and `error_offset` for a write
/// of one `size_t`, outside `bytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_json_validate(
    bytes: *const u8,
    len: usize,
    max_depth: u8,
    error_offset: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `bytes` for `len` reads and `error_offset` for one write.
        let (input, error_offset) = unsafe { bytes_in_one_out(bytes, len, error_offset) }?;
        match json::validate(input, max_depth) {
            Ok(()) => {
                error_offset.write(0);
                Ok(())
            }
            Err(e) => {
                error_offset.write(e.at);
                Err(e.into())
            }
        }
    })
}

/// Reads a frame's kind, checking the bytes only as far as its `type` member (lazy).
///
/// Cost is O(1) in the frame's size when `type` comes first; members before
/// it are checked as they are skipped, members after it are not looked at, so
/// `PW_OK` does not mean the whole frame is valid (use `pw_frame_validate`).
/// On `PW_OK`, `*out_kind` is set; for `PW_FRAME_KIND_OTHER`, `*other_type` /
/// `*other_type_len` span the `type` string token in `bytes` (quotes
/// included, escapes undecoded), otherwise they are NULL / 0.
///
/// Errors (nothing written): `PW_FRAME_NOT_OBJECT`, `PW_FRAME_MISSING_TYPE`,
/// `PW_FRAME_TYPE_NOT_STRING`, `PW_INVALID_JSON`, `PW_INVALID_UTF8`,
/// `PW_JSON_TOO_DEEP` (past 255 levels before `type`).
///
/// The caller must pass `bytes` valid for reads of `len` bytes; `out_kind`, `other_type` and
/// `other_type_len` for one write each, outside `bytes` and each other.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_frame_peek_kind(
    bytes: *const u8,
    len: usize,
    out_kind: *mut pw_frame_kind,
    other_type: *mut *const u8,
    other_type_len: *mut usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(bytes, out_kind, other_type, other_type_len);
        disjoint(
            &[
                span(out_kind, 1),
                span(other_type, 1),
                span(other_type_len, 1),
            ],
            &[span(bytes, len)],
        )?;
        // SAFETY: the caller hands `bytes` for `len` readable bytes.
        let input = unsafe { in_bytes(bytes, len) }?;
        // SAFETY: the caller hands `out_kind` for one writable `pw_frame_kind`.
        let out_kind = unsafe { out_slot(out_kind) }?;
        // SAFETY: the caller hands `other_type` for one writable pointer.
        let other_type = unsafe { out_slot(other_type) }?;
        // SAFETY: the caller hands `other_type_len` for one writable `size_t`.
        let other_type_len = unsafe { out_slot(other_type_len) }?;
        let kind = Frame::parse(input)?.kind();
        let other = match kind {
            FrameKind::Other(ty) => Some(token_in(input, ty)?),
            _ => None,
        };
        out_kind.write(kind.into());
        other_type.write(other.map_or(core::ptr::null(), <[u8]>::as_ptr));
        other_type_len.write(other.map_or(0, <[u8]>::len));
        Ok(())
    })
}

/// Validates a whole frame (JSON, UTF-8, depth <= `max_depth` with the frame object at level 1), then reads its kind.
///
/// This is the check for frames the adapter acts on. On `PW_OK`,
/// `*out_kind` is set. Errors (nothing written): `PW_FRAME_NOT_OBJECT`,
/// `PW_FRAME_MISSING_TYPE`, `PW_FRAME_TYPE_NOT_STRING`, `PW_INVALID_JSON`,
/// `PW_JSON_TOO_DEEP`, `PW_INVALID_UTF8`. For the byte offset of a JSON
/// error, call `pw_json_validate`; for an other type's name, `pw_frame_peek_kind`.
///
/// The caller must pass `bytes` valid for reads of `len` bytes and `out_kind` for one write,
/// outside `bytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_frame_validate(
    bytes: *const u8,
    len: usize,
    max_depth: u8,
    out_kind: *mut pw_frame_kind,
) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `bytes` for `len` reads and `out_kind` for one write.
        let (input, out_kind) = unsafe { bytes_in_one_out(bytes, len, out_kind) }?;
        let frame = Frame::parse_validated(input, max_depth)?;
        out_kind.write(frame.kind().into());
        Ok(())
    })
}

/// Validates a `TOOL_CALL` frame (as `pw_frame_validate`) and reports its id, name and args.
///
/// A frame of another kind gives `PW_WRONG_FRAME_KIND`. A `TOOL_CALL`
/// whose `content` is not an object or whose `content.name` is not a string
/// still gives `PW_OK`: such a call is malformed, which a clear
/// `PW_TOOL_CALL_HAS_NAME` tells. On any error nothing is
/// written.
///
/// The caller must pass `bytes` valid for reads of `len` bytes, outliving every use of the
/// spans written to `*out`; `out` valid for one write of a `pw_tool_call`, outside `bytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_tool_call_fields(
    bytes: *const u8,
    len: usize,
    max_depth: u8,
    out: *mut pw_tool_call,
) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `bytes` for `len` reads and `out` for one write.
        let (input, out) = unsafe { bytes_in_one_out(bytes, len, out) }?;
        let frame = Frame::parse_validated(input, max_depth)?;
        if frame.kind() != FrameKind::ToolCall {
            return Err(pw_result::PW_WRONG_FRAME_KIND);
        }
        let call = frame.tool_call()?;
        let mut fields = pw_tool_call {
            id: core::ptr::null(),
            id_len: 0,
            name: core::ptr::null(),
            name_len: 0,
            args: call.args.as_ptr(),
            args_len: call.args.len(),
            flags: 0,
        };
        if let Some(id) = call.id {
            let token = token_in(input, id)?;
            (fields.id, fields.id_len) = (token.as_ptr(), token.len());
            fields.flags |= PW_TOOL_CALL_HAS_ID;
        }
        if let Some(name) = call.name {
            let token = token_in(input, name)?;
            (fields.name, fields.name_len) = (token.as_ptr(), token.len());
            fields.flags |= PW_TOOL_CALL_HAS_NAME;
        }
        if within(input, call.args) {
            fields.flags |= PW_TOOL_CALL_HAS_ARGS;
        }
        if call.content_is_object {
            fields.flags |= PW_TOOL_CALL_CONTENT_IS_OBJECT;
        }
        out.write(fields);
        Ok(())
    })
}

/// Decodes one JSON string token (quotes included, as `pw_frame_peek_kind` and `pw_tool_call_fields` give) into UTF-8.
///
/// On `PW_OK`, `out[0..*out_len]` holds the text (not NUL-terminated; it may
/// contain NUL bytes from `\u0000`). When `cap` is too small, returns
/// `PW_BUFFER_TOO_SMALL`, sets `*out_len` to the bytes needed and writes
/// nothing into `out` (so `cap` 0, with any non-NULL `out`, asks for the
/// size). A `token` that is not exactly one valid string token gives
/// `PW_INVALID_JSON` or `PW_INVALID_UTF8` and writes nothing.
///
/// The caller must pass `token` valid for reads of `len` bytes, `out` for writes of `cap` bytes
/// and `out_len` for one write of a `size_t`; `out` and `out_len` must not overlap each other
/// or `token`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_json_string_decode(
    token: *const u8,
    len: usize,
    out: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (token, out, out_len) = unsafe { bytes_in_bytes_out(token, len, out, cap, out_len) }?;
        let s = JsonStr::from_token(token)?;
        match s.decode_into(out) {
            Ok(text) => {
                out_len.write(text.len());
                Ok(())
            }
            Err(small) => {
                out_len.write(small.needed);
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}
