//! Request bodies (SPEC §10.3), placed in one block the host hands in: a conversation, tool
//! declarations and options in, the provider's body out, into buffers of any size.

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::request::{
    gemini_path, Declaration, Request, RequestOptions, ToolChoice,
};

use crate::boundary::{
    bytes_in_bytes_out, disjoint, ffi, guard, out_slot, placed_poll, placed_ref, read_in,
    require_non_null, span, First, Placed,
};
use crate::codes::pw_result;
use crate::conversation::pw_conversation;
use crate::enums::{pw_tool_choice, raw};
use crate::shared::{block_at, pw_str, Block, PW_MAX_ALIGN};

/// A tool the model is told of (SPEC §10.1): an MCP server's `tools/list` entry as it sent
/// it (`mcp_entry`, raw JSON: its `name`, `description` and `inputSchema` are used, the
/// other fields are not read), or, when `mcp_entry` is empty, the host's own tool.
///
/// Every span is borrowed by the request made with it: its bytes must stay as they are
/// while the request is written.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_declaration {
    /// An MCP `tools/list` entry (raw JSON), or empty for the host's own tool below.
    pub mcp_entry: pw_str,
    /// The host's tool: its name (UTF-8), as the provider must take it.
    pub name: pw_str,
    /// Its description (UTF-8), or empty for none.
    pub description: pw_str,
    /// Its input schema (raw JSON text), or empty for none (`{"type":"object","properties":{}}`).
    pub schema: pw_str,
    /// 1 to ask for strict arguments (refused at `pw_request_init` when the schema does not
    /// meet the strict rules), 0 not to.
    pub strict: u8,
}

/// What a request body says beside the conversation and the tools
/// (`pw_request_options_default` fills in: no model, nothing else set).
///
/// Every span is borrowed by the request made with it: its bytes must stay as they are
/// while the request is written.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_request_options {
    /// The model (UTF-8; for Gemini it goes in the path, `pw_request_gemini_path`).
    pub model: pw_str,
    /// The most tokens to generate, or 0 for none given (Anthropic then writes 4096).
    pub max_tokens: u32,
    /// Which tool the model must call (`pw_tool_choice`); written only when set and a tool
    /// is declared.
    pub tool_choice: raw::pw_tool_choice,
    /// The tool's name (UTF-8) for `PW_TOOL_CHOICE_TOOL`: its declared name or the name the
    /// model sees; not read for other choices.
    pub tool: pw_str,
    /// Members added at the top level, as a JSON object's text (`{"temperature":0.2}`),
    /// written after the library's own; empty for none.
    pub extra: pw_str,
}

/// A request body being written (opaque): the conversation, the declarations and the options
/// in the provider's shape, its length known before the first byte.
///
/// It lives in a memory block the host provides (`pw_request_size(n)` bytes for `n`
/// declarations, aligned to `pw_request_align()`), with the declarations it reads from the
/// `pw_declaration` array. It borrows the conversation and every span of the declarations
/// and options. There is nothing to free.
#[allow(non_camel_case_types)]
pub struct pw_request {
    request: Request<'static>,
    conv: *const pw_conversation,
    /// The conversation's generation when the request was made.
    generation: u64,
    /// Address and length of the whole block (for overlap checks).
    block: (usize, usize),
}

/// An upper bound, on every target, of what a request's block holds besides its
/// declarations.
pub const PW_REQUEST_MAX_BASE_SIZE: usize = 256;
/// An upper bound, on every target, of a request's block bytes per declaration.
pub const PW_REQUEST_MAX_DECLARATION_SIZE: usize = 96;

const _: () = assert!(
    size_of::<pw_request>() + size_of::<RequestOptions<'static>>() + 2 * 7
        <= PW_REQUEST_MAX_BASE_SIZE
);
const _: () = assert!(size_of::<Declaration<'static>>() <= PW_REQUEST_MAX_DECLARATION_SIZE);
const _: () = assert!(
    align_of::<pw_request>() <= PW_MAX_ALIGN
        && align_of::<RequestOptions<'static>>() <= PW_MAX_ALIGN
        && align_of::<Declaration<'static>>() <= PW_MAX_ALIGN
);

// The conversation's block is lent: kept apart from what a call on the request writes.
impl Placed for pw_request {
    unsafe fn block(this: *const Self) -> (usize, usize) {
        // SAFETY: `this` points at a placed request (trait contract); one field is copied.
        unsafe { (*this).block }
    }

    unsafe fn lent(this: *const Self) -> Option<(usize, usize)> {
        // SAFETY: `this` points at a placed request (trait contract), whose conversation
        // outlives it (`pw_request_init`'s contract); one field of each is copied, through
        // raw pointers, so no reference into the conversation is made.
        Some(unsafe { (*(*this).conv).block })
    }
}

/// Where each part of a request's block is.
struct Layout {
    options: usize,
    decls: usize,
    total: usize,
}

impl Layout {
    fn of(declarations: usize) -> Option<Self> {
        let mut block = Block::starting_with::<pw_request>();
        Some(Self {
            options: block.array::<RequestOptions<'static>>(1)?,
            decls: block.array::<Declaration<'static>>(declarations)?,
            total: block.len(),
        })
    }
}

/// The size of the block `pw_request_init` needs for `declarations` declarations, in
/// `*out_size`; `PW_BAD_ARGUMENT` when that is past `SIZE_MAX`.
///
/// The caller must pass `out_size` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_request_size(declarations: usize, out_size: *mut usize) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `out_size` for one write.
        let out = unsafe { out_slot(out_size) }?;
        let layout = Layout::of(declarations).ok_or(pw_result::PW_BAD_ARGUMENT)?;
        out.write(layout.total);
        Ok(())
    })
}

/// The alignment in bytes a request's block needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_request_align() -> usize {
    guard(0, || {
        align_of::<pw_request>()
            .max(align_of::<RequestOptions<'static>>())
            .max(align_of::<Declaration<'static>>())
    })
}

/// Fills `*out` with the default options: no model, no `max_tokens`, `PW_TOOL_CHOICE_UNSET`,
/// no extra members.
///
/// The caller must pass `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_request_options_default(out: *mut pw_request_options) -> pw_result {
    let value = pw_request_options {
        model: pw_str::EMPTY,
        max_tokens: 0,
        tool_choice: pw_tool_choice::PW_TOOL_CHOICE_UNSET as u32,
        tool: pw_str::EMPTY,
        extra: pw_str::EMPTY,
    };
    // SAFETY: the caller hands `out` for one write.
    unsafe { crate::shared::write_out(out, value) }
}

/// The bytes of a span the host hands in, borrowed for as long as the request is used.
///
/// # Safety
///
/// A span with a non-NULL `ptr` must be valid for reads of `len` bytes for `'a`, and no one
/// may write them meanwhile.
unsafe fn borrowed<'a>(s: pw_str) -> Result<&'a [u8], pw_result> {
    if s.len == 0 {
        return Ok(&[]);
    }
    // SAFETY: as the function's contract.
    unsafe { crate::boundary::in_bytes(s.ptr, s.len) }
}

fn text(bytes: &[u8]) -> Result<&str, pw_result> {
    core::str::from_utf8(bytes).map_err(|_| pw_result::PW_TEXT_NOT_UTF8)
}

/// The core's options from C's.
///
/// # Safety
///
/// As [`borrowed`] for each span of `o`.
unsafe fn options(o: &pw_request_options) -> Result<RequestOptions<'static>, pw_result> {
    // SAFETY: as the function's contract.
    let (model, tool, extra) =
        unsafe { (borrowed(o.model)?, borrowed(o.tool)?, borrowed(o.extra)?) };
    let tool_choice = match o.tool_choice {
        x if x == pw_tool_choice::PW_TOOL_CHOICE_UNSET as u32 => None,
        x if x == pw_tool_choice::PW_TOOL_CHOICE_AUTO as u32 => Some(ToolChoice::Auto),
        x if x == pw_tool_choice::PW_TOOL_CHOICE_NONE as u32 => Some(ToolChoice::None),
        x if x == pw_tool_choice::PW_TOOL_CHOICE_REQUIRED as u32 => Some(ToolChoice::Required),
        x if x == pw_tool_choice::PW_TOOL_CHOICE_TOOL as u32 => Some(ToolChoice::Tool(text(tool)?)),
        _ => return Err(pw_result::PW_BAD_ARGUMENT),
    };
    Ok(RequestOptions {
        model: text(model)?,
        max_tokens: (o.max_tokens != 0).then_some(o.max_tokens),
        tool_choice,
        extra: (!extra.is_empty()).then_some(extra),
    })
}

/// The core's declaration from C's.
///
/// # Safety
///
/// As [`borrowed`] for each span of `d`.
unsafe fn declaration(d: &pw_declaration) -> Result<Declaration<'static>, pw_result> {
    // SAFETY: as the function's contract.
    let (entry, name, description, schema) = unsafe {
        (
            borrowed(d.mcp_entry)?,
            borrowed(d.name)?,
            borrowed(d.description)?,
            borrowed(d.schema)?,
        )
    };
    if d.strict > 1 {
        return Err(pw_result::PW_BAD_ARGUMENT);
    }
    if !entry.is_empty() {
        return Declaration::from_mcp(entry).map_err(|e| pw_result::of_declaration(e).0);
    }
    let mut decl =
        Declaration::new(text(name)?, (!schema.is_empty()).then_some(schema)).strict(d.strict == 1);
    if !description.is_empty() {
        decl = decl.description(text(description)?);
    }
    Ok(decl)
}

/// The spans of the options and of one declaration, for overlap checks.
fn spans_of(o: &pw_request_options, d: Option<&pw_declaration>) -> [(usize, usize); 4] {
    let s = |p: pw_str| span(p.ptr, p.len);
    match d {
        Some(d) => [s(d.mcp_entry), s(d.name), s(d.description), s(d.schema)],
        None => [s(o.model), s(o.tool), s(o.extra), (0, 0)],
    }
}

/// Places a request for `provider` in `block` (at least `pw_request_size(n)` bytes, aligned
/// to `pw_request_align()`) and sets `*out` to it: the body of the conversation `conv` with
/// the `n` declarations at `decls` and the options `*opts`, checked and measured
/// (`pw_request_len`), ready for `pw_request_write`.
///
/// A refusal of one declaration writes its index (from 0) to `*bad_index`: a
/// `PW_DECLARATION_*` code, or `PW_TEXT_NOT_UTF8`, `PW_BAD_ARGUMENT`, `PW_NULL_POINTER` or
/// `PW_STORAGE_OVERLAP` for its texts, its `strict` or its spans; no other refusal writes
/// there. Options refused give `PW_TEXT_NOT_UTF8`,
/// `PW_BAD_ARGUMENT` (an unknown tool choice) or a `PW_REQUEST_*` code. On any error nothing
/// is written to `*out`. Calling it again on the same memory starts afresh.
///
/// The request borrows the conversation and every byte the declarations' and options'
/// spans name (the `pw_declaration` array and `*opts` themselves are read here only): they
/// must stay as they are while the request is used. A call that may change the
/// conversation (any `pw_conversation_*` function given it as non-`const`, whatever it
/// returns, unless it refused its pointers: `PW_NULL_POINTER`, `PW_STORAGE_MISALIGNED`,
/// `PW_STORAGE_OVERLAP`) makes the request stale: `pw_request_len` and `pw_request_write`
/// then give `PW_REQUEST_STALE`. Placing the conversation again (`pw_conversation_init`) or
/// changing the borrowed bytes is not detected: the host must not.
///
/// The caller must pass `block` valid for writes of `block_len` bytes for as long as the
/// request is used, and touched by nothing else meanwhile; `conv` from
/// `pw_conversation_init`, outliving the request; `opts` valid for one read, `decls` for
/// reads of `n` values, the spans in them as above; `out` and `bad_index` for one write
/// each. None may overlap the request's block, nor the conversation's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_request_init(
    block: *mut c_void,
    block_len: usize,
    conv: *const pw_conversation,
    provider: raw::pw_provider,
    opts: *const pw_request_options,
    decls: *const pw_declaration,
    n: usize,
    out: *mut *mut pw_request,
    bad_index: *mut usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(block, conv, opts, decls, out, bad_index);
        let which = crate::decoder::provider(provider)?;
        let layout = Layout::of(n).ok_or(pw_result::PW_BAD_ARGUMENT)?;
        let whole = block_at(block, block_len, layout.total, pw_request_align())?;
        let outs = [whole, span(out, 1), span(bad_index, 1)];
        let reads = [span(opts, 1), span(decls, n)];
        disjoint(&outs, &reads)?;
        if !decls.is_aligned() {
            return Err(pw_result::PW_STORAGE_MISALIGNED);
        }
        // SAFETY: `conv` comes from `pw_conversation_init` and outlives the request (caller);
        // only read, and kept apart from what this call writes.
        let conversation: &'static pw_conversation = unsafe { placed_ref(conv, &outs) }?;
        let writes = [whole, span(out, 1), span(bad_index, 1), conversation.block];
        // SAFETY: the caller hands `opts` for one read; pointers and integers only.
        let o = unsafe { read_in(opts) }?;
        for s in spans_of(&o, None) {
            disjoint(&writes, &[s])?;
        }
        // SAFETY: the caller hands the options' spans for reads while the request is used.
        let options = unsafe { options(&o) }?;
        let base = block.cast::<u8>();
        // SAFETY: the block holds `layout.total` bytes (checked) aligned to
        // `pw_request_align()`, which every part's offset respects; the parts do not overlap.
        let (opts_at, decls_at) = unsafe {
            (
                base.add(layout.options).cast::<RequestOptions<'static>>(),
                base.add(layout.decls).cast::<Declaration<'static>>(),
            )
        };
        for i in 0..n {
            // SAFETY: the caller hands `decls` for reads of `n` values, aligned (checked);
            // pointers and integers only.
            let d = unsafe { read_in(decls.add(i)) };
            let placed = d.and_then(|d| {
                for s in spans_of(&o, Some(&d)) {
                    disjoint(&writes, &[s])?;
                }
                // SAFETY: the caller hands the declaration's spans for reads while the
                // request is used.
                unsafe { declaration(&d) }
            });
            match placed {
                // SAFETY: slot `i` of the block's declarations, in bounds and aligned.
                Ok(d) => unsafe { decls_at.add(i).write(d) },
                Err(code) => {
                    // SAFETY: the caller hands `bad_index` for one write.
                    unsafe { out_slot(bad_index) }?.write(i);
                    return Err(code);
                }
            }
        }
        // SAFETY: the options' place in the block, aligned; then only read for as long as the
        // request is used, as are the `n` declarations written above.
        let (options, declarations) = unsafe {
            opts_at.write(options);
            (&*opts_at, core::slice::from_raw_parts(decls_at, n))
        };
        let request =
            Request::new(&conversation.conv, which, options, declarations).map_err(|e| {
                let (code, index) = pw_result::of_request(e);
                if let Some(i) = index {
                    // SAFETY: the caller hands `bad_index` for one write.
                    if let Ok(slot) = unsafe { out_slot(bad_index) } {
                        slot.write(i);
                    }
                }
                code
            })?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let state = block.cast::<pw_request>();
        // SAFETY: `state` is the block's start, aligned and with room for a `pw_request`
        // (checked); it has no drop glue, so overwriting an old one leaks nothing.
        unsafe {
            state.write(pw_request {
                request,
                conv,
                generation: conversation.generation,
                block: whole,
            })
        };
        out.write(state);
        Ok(())
    })
}

/// `Err(PW_REQUEST_STALE)` when the conversation changed since the request was made.
///
/// # Safety
///
/// `r`'s conversation must be alive (`pw_request_init`'s contract).
unsafe fn fresh(r: &pw_request) -> Result<(), pw_result> {
    // SAFETY: the conversation outlives the request (caller); one field is read through the
    // raw pointer, so no reference into the conversation is made.
    let now = unsafe { (*r.conv).generation };
    if now != r.generation {
        return Err(pw_result::PW_REQUEST_STALE);
    }
    Ok(())
}

/// The body's length in bytes (for `Content-Length`), known before any is written, in
/// `*out`; `PW_REQUEST_STALE` when the conversation changed since.
///
/// The caller must pass `r` from `pw_request_init`, neither it nor its conversation used
/// concurrently, and `out` valid for one write outside the request's and the conversation's
/// blocks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_request_len(r: *const pw_request, out: *mut usize) -> pw_result {
    ffi(|| {
        require_non_null!(r, out);
        // SAFETY: as the function's contract; only read.
        let r = unsafe { placed_ref(r, &[span(out, 1)]) }?;
        // SAFETY: as the function's contract.
        unsafe { fresh(r) }?;
        // SAFETY: the caller hands `out` for one write.
        unsafe { out_slot(out) }?.write(r.request.len());
        Ok(())
    })
}

/// Writes the body's next bytes into `out` (`cap` bytes), their count in `*written`: `PW_OK`
/// with at least one byte; `PW_NOTHING` (`*written` 0) once the whole body is written;
/// `PW_BUFFER_TOO_SMALL` (`*written` 1) for a `cap` of 0 before that. The bytes are the same
/// whatever the buffers' sizes. `PW_REQUEST_STALE` when the conversation changed since the
/// request was made: nothing written.
///
/// The caller must pass `r` from `pw_request_init`, neither it nor its conversation used
/// concurrently; `out` valid for writes of `cap` bytes and `written` for one write, neither
/// overlapping the other, the request's block, the conversation's block or the bytes the
/// request borrows.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_request_write(
    r: *mut pw_request,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (r, buf, written) = unsafe { placed_poll(r, out, cap, written, First::Object) }?;
        // SAFETY: as the function's contract.
        unsafe { fresh(r) }?;
        let n = r.request.write(buf);
        if n > 0 {
            written.write(n);
            Ok(())
        } else if r.request.is_done() {
            written.write(0);
            Err(pw_result::PW_NOTHING)
        } else {
            written.write(1);
            Err(pw_result::PW_BUFFER_TOO_SMALL)
        }
    })
}

/// The path Gemini takes a body at, `models/<model>:streamGenerateContent?alt=sse`, for the
/// model named by `len` bytes of UTF-8 at `model`: written into `out` (`cap` bytes), its
/// length in `*out_len`; `PW_BUFFER_TOO_SMALL` with the length needed in `*out_len` and
/// nothing written to `out`; `PW_TEXT_NOT_UTF8` for a model that is not UTF-8.
///
/// The caller must pass `model` valid for reads of `len` bytes, `out` for writes of `cap`
/// bytes and `out_len` for one write, none overlapping another.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_request_gemini_path(
    model: *const u8,
    len: usize,
    out: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (model, out, out_len) = unsafe { bytes_in_bytes_out(model, len, out, cap, out_len) }?;
        match gemini_path(text(model)?, out) {
            Ok(path) => {
                out_len.write(path.len());
                Ok(())
            }
            Err(e) => {
                out_len.write(e.needed);
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}
