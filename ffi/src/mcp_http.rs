//! The MCP client over Streamable HTTP (SPEC §9.11) for C: the same `pw_mcp` in one memory
//! block, with one response stream per response the host reads at once.
//!
//! The client does no HTTP. `pw_mcp_poll_request` hands out each POST to make (its body and
//! its header lines) or a stream to close; the host makes the POST on a connection of its
//! own and reports the response as that stream: `pw_mcp_handle_response` with its status
//! and headers, `pw_mcp_feed_response` with its body in pieces of any size,
//! `pw_mcp_handle_response_end` when it ends, whole or broken. Every other `pw_mcp_*`
//! function works as on a line client, except `pw_mcp_feed` and `pw_mcp_poll_transmit`,
//! whose part `pw_mcp_poll_request` and `pw_mcp_feed_response` play.

#![allow(non_camel_case_types)]

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::mcp::http::{McpPost, McpStream};

use crate::boundary::{
    ffi, in_bytes, out_bytes, out_slot, placed, placed_bytes_in_one_out, query_placed,
    require_non_null, span, with_placed, First,
};
use crate::codes::pw_result;
use crate::enums::pw_mcp_post_kind;
use crate::mcp::{init, pw_mcp, pw_mcp_config, read_config, InfoArgs, Layout};
use crate::shared::{config_query, PW_MAX_ALIGN};

/// An upper bound, on every target, of the block's bytes per HTTP response stream.
pub const PW_MCP_MAX_STREAM_SIZE: usize = 160;

const _: () = assert!(size_of::<McpStream>() <= PW_MCP_MAX_STREAM_SIZE);
const _: () = assert!(align_of::<McpStream>() <= PW_MAX_ALIGN);

/// One thing `pw_mcp_poll_request` asks the host to do.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_post {
    /// A POST to make, or a response to close.
    pub kind: pw_mcp_post_kind,
    /// The stream its response is reported as (`pw_mcp_handle_response` and the rest).
    pub stream: u16,
    /// Always 0.
    pub reserved: u16,
    /// For `PW_MCP_POST`: bytes of the body (a JSON-RPC message, no line ending); with
    /// `PW_BUFFER_TOO_SMALL`, the body buffer's size needed (0 when it is not short).
    pub body_len: usize,
    /// For `PW_MCP_POST`: bytes of the header lines (`Name: value` CRLF each); with
    /// `PW_BUFFER_TOO_SMALL`, the header buffer's size needed (0 when it is not short).
    pub headers_len: usize,
}

impl pw_mcp_post {
    const fn post(stream: u16, body_len: usize, headers_len: usize) -> Self {
        Self {
            kind: pw_mcp_post_kind::PW_MCP_POST,
            stream,
            reserved: 0,
            body_len,
            headers_len,
        }
    }
}

/// The size of the block `pw_mcp_http_init` needs for `cfg`, `calls` call slots and
/// `streams` response streams (the most responses read at once: 1 to 65535, else
/// `PW_BAD_ARGUMENT` / `PW_TOO_MANY`; with 2 or more a 2026-07-28 client keeps one open for
/// tool-list changes when the server offers them). A configuration out of range gives
/// `PW_BAD_CONFIG`.
///
/// The caller must pass `cfg` valid for one read and `out_size` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_http_size(
    cfg: *const pw_mcp_config,
    calls: usize,
    streams: usize,
    out_size: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_size` for one write.
    unsafe {
        config_query(cfg, out_size, read_config, |c| {
            streams_in_range(streams)?;
            if calls > usize::from(u16::MAX) {
                return Err(pw_result::PW_TOO_MANY);
            }
            Layout::of(&c, calls, streams)
                .map(|l| l.total)
                .ok_or(pw_result::PW_BAD_CONFIG)
        })
    }
}

/// `PW_BAD_ARGUMENT` for no stream, `PW_TOO_MANY` for more than a `uint16_t` numbers.
fn streams_in_range(streams: usize) -> Result<(), pw_result> {
    match streams {
        0 => Err(pw_result::PW_BAD_ARGUMENT),
        n if n > usize::from(u16::MAX) => Err(pw_result::PW_TOO_MANY),
        _ => Ok(()),
    }
}

/// Places a client over Streamable HTTP in `mem` (at least `pw_mcp_http_size(cfg, calls,
/// streams)` bytes, aligned to `pw_mcp_align()`) and sets `*out` to it: as `pw_mcp_init`,
/// with `streams` response streams (1 to 65535).
///
/// The caller must pass `mem` valid for writes of `mem_len` bytes for as long as the client
/// is used and touched by nothing else meanwhile; `cfg` valid for one read; `name` and
/// `version` for `name_len` and `version_len` reads; `out` for one write; none of them
/// inside `mem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_http_init(
    mem: *mut c_void,
    mem_len: usize,
    cfg: *const pw_mcp_config,
    calls: usize,
    streams: usize,
    name: *const u8,
    name_len: usize,
    version: *const u8,
    version_len: usize,
    out: *mut *mut pw_mcp,
) -> pw_result {
    if let Err(e) = streams_in_range(streams) {
        return e;
    }
    let text: InfoArgs = (name, name_len, version, version_len);
    // SAFETY: as the function's contract, which is `init`'s.
    unsafe { init(mem, mem_len, cfg, calls, streams, text, out) }
}

/// 1 for a client of `pw_mcp_http_init`, 0 for one of `pw_mcp_init` (and for a NULL or
/// misaligned client).
///
/// The caller must pass `c` from `pw_mcp_init` or `pw_mcp_http_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_is_http(c: *const pw_mcp) -> u8 {
    // SAFETY: as the function's contract.
    unsafe { query_placed(c, 0, |c| c.client.is_http().into()) }
}

/// The longest header lines `pw_mcp_poll_request` writes for `cfg`, in `*out_len`: its
/// header buffer must hold this many bytes. (Its body buffer never gets
/// `PW_BUFFER_TOO_SMALL` with `pw_mcp_max_line_len` bytes.)
///
/// The caller must pass `cfg` valid for one read and `out_len` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_max_headers_len(
    cfg: *const pw_mcp_config,
    out_len: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_len` for one write.
    unsafe { config_query(cfg, out_len, read_config, |c| Ok(c.max_headers_len())) }
}

/// The next thing to do over HTTP, in `*out`: `PW_OK` with a POST (its body in `body`, its
/// header lines in `headers`) or a stream to close; `PW_NOTHING` (`*out` all 0) when nothing
/// is to be sent or no stream is free; `PW_BUFFER_TOO_SMALL` with the size needed in
/// `out->headers_len` (a header buffer under `pw_mcp_max_headers_len`) or `out->body_len`,
/// nothing written and the message kept; `PW_MCP_NOT_HTTP` for a line client. At start-up
/// `tools/list` waits for the head of `notifications/initialized`'s response.
///
/// The caller must pass `c` from `pw_mcp_http_init`, not used concurrently; `body` valid
/// for `body_cap` writes, `headers` for `headers_cap` and `out` for one, apart from each
/// other and from the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_request(
    c: *mut pw_mcp,
    body: *mut u8,
    body_cap: usize,
    headers: *mut u8,
    headers_cap: usize,
    out: *mut pw_mcp_post,
) -> pw_result {
    ffi(|| {
        require_non_null!(c, body, headers, out);
        let writes = [
            span(body, body_cap),
            span(headers, headers_cap),
            span(out, 1),
        ];
        crate::boundary::disjoint(&writes, &[])?;
        // SAFETY: as the function's contract.
        let c = unsafe { placed(c, &writes) }?;
        // SAFETY: the caller hands `body`, `headers` and `out` for their writes, apart
        // (checked).
        let (body, headers, out) = unsafe {
            (
                out_bytes(body, body_cap)?,
                out_bytes(headers, headers_cap)?,
                out_slot(out)?,
            )
        };
        if !c.client.is_http() {
            return Err(pw_result::PW_MCP_NOT_HTTP);
        }
        let short_headers = headers.len() < c.client.config().max_headers_len();
        match c.client.poll_request(body, headers) {
            Ok(Some(McpPost::Post {
                stream,
                body,
                headers,
            })) => {
                out.write(pw_mcp_post::post(stream, body, headers));
                Ok(())
            }
            Ok(Some(McpPost::Close { stream })) => {
                out.write(pw_mcp_post {
                    kind: pw_mcp_post_kind::PW_MCP_POST_CLOSE,
                    ..pw_mcp_post::post(stream, 0, 0)
                });
                Ok(())
            }
            Ok(None) => {
                out.write(pw_mcp_post::post(0, 0, 0));
                Err(pw_result::PW_NOTHING)
            }
            Err(e) if short_headers => {
                out.write(pw_mcp_post::post(0, 0, e.needed));
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
            Err(e) => {
                out.write(pw_mcp_post::post(0, e.needed, 0));
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}

/// The head of stream `stream`'s response: its HTTP `status`, its `Content-Type` value
/// (`content_type_len` bytes; empty when it has none) and its `Mcp-Session-Id` value
/// (`session` NULL when it has none). Refusals change nothing: `PW_MCP_NOT_HTTP`,
/// `PW_MCP_UNKNOWN_STREAM` (no POST of this stream awaits its response),
/// `PW_MCP_HEAD_TWICE`, `PW_MCP_POLL_FIRST` (drain `pw_mcp_poll_event`, `pw_mcp_poll_frame`
/// and `pw_mcp_poll_request`, then call again).
///
/// The caller must pass `c` from `pw_mcp_http_init`, not used concurrently; `content_type`
/// valid for `content_type_len` reads and a non-NULL `session` for `session_len`, outside
/// the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_handle_response(
    c: *mut pw_mcp,
    stream: u16,
    status: u16,
    content_type: *const u8,
    content_type_len: usize,
    session: *const u8,
    session_len: usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(c, content_type);
        let session_span = if session.is_null() {
            (0, 0)
        } else {
            span(session, session_len)
        };
        let reads = [span(content_type, content_type_len), session_span];
        // SAFETY: as the function's contract.
        let c = unsafe { placed(c, &reads) }?;
        // SAFETY: the caller hands `content_type` for its reads, and a non-NULL `session`
        // for its.
        let (content_type, session) = unsafe {
            let session = match session.is_null() {
                true => None,
                false => Some(in_bytes(session, session_len)?),
            };
            (in_bytes(content_type, content_type_len)?, session)
        };
        c.client
            .handle_response(stream, status, content_type, session)
            .map_err(Into::into)
    })
}

/// Bytes of stream `stream`'s body, split anywhere; `*consumed` tells how many it took:
/// all of a JSON body, up to the end of one event of an event stream, and none (`PW_OK`
/// with 0) while another stream's message is half read or what the last message owes is
/// not polled out: drain, feed the other streams, then feed the rest. Refusals change
/// nothing and write nothing: `PW_MCP_NOT_HTTP`, `PW_MCP_UNKNOWN_STREAM`, `PW_MCP_NO_HEAD`.
///
/// The caller must pass `c` from `pw_mcp_http_init`, not used concurrently; `bytes` valid
/// for reads of `len` bytes and `consumed` for one write, both outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_feed_response(
    c: *mut pw_mcp,
    stream: u16,
    bytes: *const u8,
    len: usize,
    consumed: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, input, consumed) =
            unsafe { placed_bytes_in_one_out(c, bytes, len, consumed, First::Arguments) }?;
        consumed.write(c.client.feed_response(stream, input)?);
        Ok(())
    })
}

/// Stream `stream`'s response ended, whole or broken (or, with no head given, the POST got
/// no response at all): the stream is free again, and a request it did not answer fails,
/// a call with `Tool <name> failed: HTTP <status>` when the status was no success.
/// Refusals change nothing: `PW_MCP_NOT_HTTP`, `PW_MCP_UNKNOWN_STREAM`, `PW_MCP_POLL_FIRST`.
///
/// The caller must pass `c` from `pw_mcp_http_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_handle_response_end(c: *mut pw_mcp, stream: u16) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { with_placed(c, |c| c.client.handle_response_end(stream)) }
}
