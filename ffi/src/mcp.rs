//! The MCP client (SPEC §9) for C: one memory block holds it, its call slots, its
//! `clientInfo` texts, a notification's method and its arena.
//!
//! The host moves bytes between the client and the transport (`pw_mcp_feed`,
//! `pw_mcp_poll_transmit`) and frames between the client and a wrapper
//! (`pw_mcp_handle_frame` with each `PW_ROUTE_ADAPTER` frame, `pw_mcp_poll_frame` into
//! `pw_wrapper_handle_adapter_frame`). A call crosses as its wrapper handle's slot and
//! index.

#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_void, CStr};
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::json::schema::Schema;
use polyweave_tool_adapter::mcp::http::McpStream;
use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpEvent, McpFailure, McpHandled, McpOutputSchema,
    McpRevision, McpSlot, McpStartError, McpState, McpStats, McpToolSkip, CLIENT_TEXT_CAP,
    PROTOCOL_VERSION_2026, SUPPORTED_VERSIONS,
};
use polyweave_tool_adapter::{CallHandle, Instant, StorageError};

use crate::boundary::{
    disjoint, ffi, guard, in_bytes, out_bytes, out_slot, placed, placed_bytes_in_one_out,
    placed_one_out, placed_poll, query_placed, read_in, require_non_null, span, with_placed, First,
    Placed,
};
use crate::codes::pw_result;
use crate::enums::{
    pw_mcp_client_state, pw_mcp_event_kind, pw_mcp_failure, pw_mcp_handled_kind, pw_mcp_revision,
    pw_mcp_skip, pw_mcp_start_error, raw,
};
use crate::shared::{
    block_at, config_fit, config_query, deadline_ms, pw_str, write_out, Block, PW_MAX_ALIGN,
    PW_NO_TIMEOUT,
};

/// An MCP client's capacities (`pw_mcp_config_default` fills in the defaults; all memory is
/// the host's, in the block `pw_mcp_init` takes).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_config {
    /// Bytes of the longest line the server may send, line ending excluded (default 8192).
    /// A longer response fails its call; a longer request or notification is counted and
    /// dropped.
    pub line_cap: usize,
    /// Bytes of lines waiting to go to the server (`tools/call`, `notifications/cancelled`;
    /// default 4096, at least `PW_MCP_MIN_OUTBOX`). A call whose request can never fit fails
    /// at once; one that does not fit now is refused with `PW_MCP_OUTBOX_FULL`.
    pub outbox_cap: usize,
    /// Bytes of a decoded tool name, a call's and a listed tool's (default 64; give it the
    /// wrapper's with `pw_mcp_config_fit`).
    pub name_cap: usize,
    /// Bytes of a `tools/list` page cursor as the server wrote it (default 256).
    pub cursor_cap: usize,
    /// JSON depth limit of the server's lines, the message object level 1 (default 32, at
    /// least 3).
    pub max_depth: u8,
    /// The revision to speak (`pw_mcp_revision`; default `PW_MCP_REVISION_AUTO`: find it out
    /// with `server/discover`). Any other value is `PW_BAD_CONFIG`.
    pub revision: raw::pw_mcp_revision,
    /// Milliseconds `server/discover` may go unanswered before the client sends `initialize`
    /// (or, fixed to 2026-07-28, fails the start-up); default `PW_MCP_DEFAULT_START_TIMEOUT_MS`.
    pub start_timeout_ms: u32,
    /// Streamable HTTP only: bytes of the table of listed tools' `x-mcp-header` parameters
    /// (default 512); a tool whose annotations do not fit is skipped
    /// (`PW_MCP_SKIP_HEADER_TABLE_FULL`).
    pub header_table_cap: usize,
}

impl pw_mcp_config {
    fn of(c: &McpConfig) -> Self {
        let revision = match c.revision {
            McpRevision::Auto => pw_mcp_revision::PW_MCP_REVISION_AUTO,
            McpRevision::V2025_11_25 => pw_mcp_revision::PW_MCP_REVISION_2025_11_25,
            McpRevision::V2026_07_28 => pw_mcp_revision::PW_MCP_REVISION_2026_07_28,
        };
        Self {
            line_cap: c.line_cap,
            outbox_cap: c.outbox_cap,
            name_cap: c.name_cap,
            cursor_cap: c.cursor_cap,
            max_depth: c.max_depth,
            revision: revision as u32,
            start_timeout_ms: c.start_timeout_ms,
            header_table_cap: c.header_table_cap,
        }
    }

    /// The core's configuration, or `PW_BAD_CONFIG` for a revision no `pw_mcp_revision` names.
    fn to_config(self) -> Result<McpConfig, pw_result> {
        let revision = match self.revision {
            x if x == pw_mcp_revision::PW_MCP_REVISION_AUTO as u32 => McpRevision::Auto,
            x if x == pw_mcp_revision::PW_MCP_REVISION_2025_11_25 as u32 => {
                McpRevision::V2025_11_25
            }
            x if x == pw_mcp_revision::PW_MCP_REVISION_2026_07_28 as u32 => {
                McpRevision::V2026_07_28
            }
            _ => return Err(pw_result::PW_BAD_CONFIG),
        };
        Ok(McpConfig {
            line_cap: self.line_cap,
            outbox_cap: self.outbox_cap,
            name_cap: self.name_cap,
            cursor_cap: self.cursor_cap,
            max_depth: self.max_depth,
            revision,
            start_timeout_ms: self.start_timeout_ms,
            header_table_cap: self.header_table_cap,
        })
    }
}

/// The least `outbox_cap`: room for the longest `notifications/cancelled` line.
pub const PW_MCP_MIN_OUTBOX: usize = 396;
/// Bytes of the client's name and of its version (`pw_mcp_init`), each at most.
pub const PW_MCP_CLIENT_TEXT_CAP: usize = 64;
/// Bytes of a notification's decoded method `pw_mcp_poll_event` hands out; a longer one is
/// cut on a character boundary and flagged (`method_cut`).
pub const PW_MCP_METHOD_CAP: usize = 256;

const _: () = assert!(PW_MCP_CLIENT_TEXT_CAP == CLIENT_TEXT_CAP);
const _: () = assert!(
    PW_MCP_MIN_OUTBOX
        == polyweave_tool_adapter::mcp::CANCEL_LINE_BOUND
            + polyweave_tool_adapter::mcp::OUTBOX_HEADER
);

/// An MCP client in host memory (opaque). There is nothing to free.
pub struct pw_mcp {
    pub(crate) client: McpClient<'static>,
    /// Where a notification's method is decoded when it has escapes.
    pub(crate) method: &'static mut [u8],
    /// Address and length of the whole block (inputs and outputs must not overlap it).
    block: (usize, usize),
    /// Address and length of the memory `pw_mcp_set_output_schemas` last placed the output
    /// schemas in (lent: inputs and outputs must not overlap it either).
    outputs: (usize, usize),
}

impl Placed for pw_mcp {
    unsafe fn block(this: *const Self) -> (usize, usize) {
        // SAFETY: `this` points at a placed client (trait contract); one field is copied, no
        // reference made.
        unsafe { (*this).block }
    }

    unsafe fn lent(this: *const Self) -> Option<(usize, usize)> {
        // SAFETY: as in `block`.
        Some(unsafe { (*this).outputs })
    }
}

/// `pw_mcp_config_default`'s `line_cap`: with the other `PW_MCP_DEFAULT_*` capacities,
/// the configuration `PW_MCP_DEFAULT_SIZE_BOUND` sizes.
pub const PW_MCP_DEFAULT_LINE_CAP: usize = 8192;
/// `pw_mcp_config_default`'s `outbox_cap`.
pub const PW_MCP_DEFAULT_OUTBOX_CAP: usize = 4096;
/// `pw_mcp_config_default`'s `name_cap`.
pub const PW_MCP_DEFAULT_NAME_CAP: usize = 64;
/// `pw_mcp_config_default`'s `cursor_cap`.
pub const PW_MCP_DEFAULT_CURSOR_CAP: usize = 256;
/// `pw_mcp_config_default`'s `header_table_cap`.
pub const PW_MCP_DEFAULT_HEADER_TABLE_CAP: usize = 512;
/// `pw_mcp_config_default`'s `start_timeout_ms`.
pub const PW_MCP_DEFAULT_START_TIMEOUT_MS: u32 = 10_000;

const _: () = {
    let d = McpConfig::DEFAULT;
    assert!(d.line_cap == PW_MCP_DEFAULT_LINE_CAP && d.outbox_cap == PW_MCP_DEFAULT_OUTBOX_CAP);
    assert!(d.name_cap == PW_MCP_DEFAULT_NAME_CAP && d.cursor_cap == PW_MCP_DEFAULT_CURSOR_CAP);
    assert!(d.start_timeout_ms == PW_MCP_DEFAULT_START_TIMEOUT_MS);
    assert!(d.header_table_cap == PW_MCP_DEFAULT_HEADER_TABLE_CAP);
    assert!(
        PW_MCP_DEFAULT_START_TIMEOUT_MS == polyweave_tool_adapter::mcp::DEFAULT_START_TIMEOUT_MS
    );
};

/// An upper bound, on every target, of what a client's block holds besides its call slots
/// and arena (the client itself, its `clientInfo` texts, the method buffer, alignment).
pub const PW_MCP_MAX_BASE_SIZE: usize = 1536;
/// An upper bound, on every target, of the block's bytes per call slot, besides the slot's
/// `name_cap` bytes of arena.
pub const PW_MCP_MAX_SLOT_SIZE: usize = 64;

const INFO_LEN: usize = 2 * CLIENT_TEXT_CAP;
const _: () =
    assert!(size_of::<pw_mcp>() + 7 + INFO_LEN + PW_MCP_METHOD_CAP <= PW_MCP_MAX_BASE_SIZE);
const _: () = assert!(size_of::<McpSlot>() <= PW_MCP_MAX_SLOT_SIZE);
const _: () =
    assert!(align_of::<pw_mcp>() <= PW_MAX_ALIGN && align_of::<McpSlot>() <= PW_MAX_ALIGN);

/// Where each part of a client's block is.
pub(crate) struct Layout {
    slots: usize,
    /// Where the HTTP response streams are (none for a line client).
    streams: usize,
    info: usize,
    method: usize,
    arena: usize,
    arena_len: usize,
    pub(crate) total: usize,
}

impl Layout {
    /// The block of a client with `calls` call slots and `streams` HTTP response streams.
    pub(crate) fn of(cfg: &McpConfig, calls: usize, streams: usize) -> Option<Self> {
        let arena_len = cfg.arena_len(calls);
        (arena_len != usize::MAX).then_some(())?;
        let mut block = Block::starting_with::<pw_mcp>();
        Some(Self {
            slots: block.array::<McpSlot>(calls)?,
            streams: block.array::<McpStream>(streams)?,
            info: block.bytes(INFO_LEN)?,
            method: block.bytes(PW_MCP_METHOD_CAP)?,
            arena: block.bytes(arena_len)?,
            arena_len,
            total: block.len(),
        })
    }
}

/// Reads a configuration and checks that it can work (`PW_BAD_CONFIG` otherwise).
///
/// # Safety
///
/// A non-NULL `cfg` must be valid for one read.
pub(crate) unsafe fn read_config(cfg: *const pw_mcp_config) -> Result<McpConfig, pw_result> {
    // SAFETY: readable for one read when non-NULL (caller); integer fields only.
    let cfg = unsafe { read_in(cfg) }?.to_config()?;
    // The client's own check, run on no memory: a configuration that works gets as far as
    // the arena, which is too small.
    match McpClient::new(cfg, McpClientInfo::THIS_CRATE, &mut [], &mut []) {
        Err(StorageError::BadConfig) => Err(pw_result::PW_BAD_CONFIG),
        _ => Ok(cfg),
    }
}

/// The size of the block `pw_mcp_init` needs for `cfg` and `calls` call slots (the most
/// calls in flight at once: give it the wrapper's slots). A configuration out of range
/// gives `PW_BAD_CONFIG`.
///
/// The caller must pass `cfg` valid for one read and `out_size` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_size(
    cfg: *const pw_mcp_config,
    calls: usize,
    out_size: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_size` for one write.
    unsafe {
        config_query(cfg, out_size, read_config, |c| {
            if calls > usize::from(u16::MAX) {
                return Err(pw_result::PW_TOO_MANY);
            }
            Layout::of(&c, calls, 0)
                .map(|l| l.total)
                .ok_or(pw_result::PW_BAD_CONFIG)
        })
    }
}

/// The alignment in bytes a client's block needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_mcp_align() -> usize {
    guard(0, || {
        align_of::<pw_mcp>()
            .max(align_of::<McpSlot>())
            .max(align_of::<McpStream>())
    })
}

/// The longest frame `pw_mcp_poll_frame` can write for `cfg`, in `*out_len`: a buffer this
/// long is never refused with `PW_BUFFER_TOO_SMALL`.
///
/// The caller must pass `cfg` valid for one read and `out_len` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_max_frame_len(
    cfg: *const pw_mcp_config,
    out_len: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_len` for one write.
    unsafe { config_query(cfg, out_len, read_config, |c| Ok(c.max_frame_len())) }
}

/// The longest line `pw_mcp_poll_transmit` can write for `cfg` (LF included), in
/// `*out_len`: a buffer this long is never refused with `PW_BUFFER_TOO_SMALL`.
///
/// The caller must pass `cfg` valid for one read and `out_len` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_max_line_len(
    cfg: *const pw_mcp_config,
    out_len: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_len` for one write.
    unsafe { config_query(cfg, out_len, read_config, |c| Ok(c.max_line_len())) }
}

/// Fills `*out` with the default capacities (results of a few KiB, names of 64 bytes).
///
/// The caller must pass `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_config_default(out: *mut pw_mcp_config) -> pw_result {
    // SAFETY: the caller hands `out` for one write.
    unsafe { write_out(out, pw_mcp_config::of(&McpConfig::DEFAULT)) }
}

/// Makes `*cfg` fit the wrapper configuration `wrapper` whose adapter tools the client
/// serves: the wrapper's `name_cap` and `max_depth`, so every name the wrapper sends fits
/// and every valid line of the server gives a frame the wrapper does not refuse as too
/// deep. A wrapper configuration out of range gives `PW_BAD_CONFIG` and changes nothing.
///
/// The caller must pass `cfg` valid for one read and write, and `wrapper` for one read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_config_fit(
    cfg: *mut pw_mcp_config,
    wrapper: *const crate::wrapper::pw_wrapper_config,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and write and `wrapper` for one read. Only
    // the two fields the wrapper sets change, so a configuration out of range stays so.
    unsafe {
        config_fit(cfg, wrapper, |c, w| {
            // The core's fit on the capacities; the revision is copied back as the host gave it.
            let auto = pw_mcp_revision::PW_MCP_REVISION_AUTO as u32;
            let capacities = pw_mcp_config {
                revision: auto,
                ..c
            }
            .to_config();
            capacities.map_or(c, |k| pw_mcp_config {
                revision: c.revision,
                ..pw_mcp_config::of(&k.fit(w))
            })
        })
    }
}

/// UTF-8 text of at most `PW_MCP_CLIENT_TEXT_CAP` bytes.
fn client_text(bytes: &[u8]) -> Result<&str, pw_result> {
    if bytes.len() > CLIENT_TEXT_CAP {
        return Err(pw_result::PW_MCP_CLIENT_INFO_TOO_LONG);
    }
    core::str::from_utf8(bytes).map_err(|_| pw_result::PW_INVALID_UTF8)
}

/// Places a client in `mem` (at least `pw_mcp_size(cfg, calls)` bytes, aligned to
/// `pw_mcp_align()`) and sets `*out` to it. `name` and `version` (`clientInfo` in
/// `initialize`: UTF-8, at most `PW_MCP_CLIENT_TEXT_CAP` bytes each, else
/// `PW_MCP_CLIENT_INFO_TOO_LONG` / `PW_INVALID_UTF8`) are copied into the block. The client
/// is idle: call `pw_mcp_start`. Calling it again on the same memory starts afresh. On any
/// error nothing is written to `*out`.
///
/// The caller must pass `mem` valid for writes of `mem_len` bytes for as long as the client
/// is used and touched by nothing else meanwhile; `cfg` valid for one read; `name` and
/// `version` for `name_len` and `version_len` reads; `out` for one write; none of them
/// inside `mem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_init(
    mem: *mut c_void,
    mem_len: usize,
    cfg: *const pw_mcp_config,
    calls: usize,
    name: *const u8,
    name_len: usize,
    version: *const u8,
    version_len: usize,
    out: *mut *mut pw_mcp,
) -> pw_result {
    let text = (name, name_len, version, version_len);
    // SAFETY: as the function's contract.
    unsafe { init(mem, mem_len, cfg, calls, 0, text, out) }
}

/// A client's `clientInfo` as C hands it: name, its length, version, its length.
pub(crate) type InfoArgs = (*const u8, usize, *const u8, usize);

/// `pw_mcp_init`, and with `streams` above 0 `pw_mcp_http_init`: a client over Streamable
/// HTTP with that many response streams.
///
/// # Safety
///
/// As `pw_mcp_init`.
pub(crate) unsafe fn init(
    mem: *mut c_void,
    mem_len: usize,
    cfg: *const pw_mcp_config,
    calls: usize,
    streams: usize,
    (name, name_len, version, version_len): InfoArgs,
    out: *mut *mut pw_mcp,
) -> pw_result {
    ffi(|| {
        require_non_null!(mem, cfg, name, version, out);
        // SAFETY: the caller hands `cfg` for one read.
        let config = unsafe { read_config(cfg) }?;
        if calls > usize::from(u16::MAX) || streams > usize::from(u16::MAX) {
            return Err(pw_result::PW_TOO_MANY);
        }
        let layout = Layout::of(&config, calls, streams).ok_or(pw_result::PW_BAD_CONFIG)?;
        let block = block_at(mem, mem_len, layout.total, pw_mcp_align())?;
        let reads = [
            span(cfg, 1),
            span(name, name_len),
            span(version, version_len),
        ];
        disjoint(&[block, span(out, 1)], &reads)?;
        // SAFETY: the caller hands `name` and `version` for their lengths of reads.
        let (name, version) =
            unsafe { (in_bytes(name, name_len)?, in_bytes(version, version_len)?) };
        let (name, version) = (client_text(name)?, client_text(version)?);
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let base = mem.cast::<u8>();
        // SAFETY: `mem` holds `layout.total` bytes (checked) aligned to `pw_mcp_align()`,
        // which the slots' and the streams' offsets respect; the parts do not overlap; the
        // caller gives the block to the client for as long as it is used ('static here).
        let (slot_mem, stream_mem, info, method, arena) = unsafe {
            let slot_ptr = base.add(layout.slots).cast::<McpSlot>();
            for i in 0..calls {
                slot_ptr.add(i).write(McpSlot::EMPTY);
            }
            let stream_ptr = base.add(layout.streams).cast::<McpStream>();
            for i in 0..streams {
                stream_ptr.add(i).write(McpStream::EMPTY);
            }
            (
                core::slice::from_raw_parts_mut(slot_ptr, calls),
                core::slice::from_raw_parts_mut(stream_ptr, streams),
                out_bytes(base.add(layout.info), INFO_LEN)?,
                out_bytes(base.add(layout.method), PW_MCP_METHOD_CAP)?,
                out_bytes(base.add(layout.arena), layout.arena_len)?,
            )
        };
        // The texts live in the block, so the host's copies may go.
        let (name_buf, version_buf) = info.split_at_mut(CLIENT_TEXT_CAP);
        name_buf[..name.len()].copy_from_slice(name.as_bytes());
        version_buf[..version.len()].copy_from_slice(version.as_bytes());
        let info = McpClientInfo {
            name: core::str::from_utf8(&name_buf[..name.len()])
                .map_err(|_| pw_result::PW_INVALID_UTF8)?,
            version: core::str::from_utf8(&version_buf[..version.len()])
                .map_err(|_| pw_result::PW_INVALID_UTF8)?,
        };
        let client = if streams == 0 {
            McpClient::new(config, info, slot_mem, arena)?
        } else {
            McpClient::new_http(config, info, slot_mem, stream_mem, arena)?
        };
        let state = mem.cast::<pw_mcp>();
        // SAFETY: `state` is the block's start, aligned and with room for a `pw_mcp`
        // (checked); `pw_mcp` has no drop glue, so overwriting an old one leaks nothing.
        unsafe {
            state.write(pw_mcp {
                client,
                method,
                block,
                outputs: (0, 0),
            })
        };
        out.write(state);
        Ok(())
    })
}

/// Begins the start-up at `now_ms`: `server/discover` goes out at the next
/// `pw_mcp_poll_transmit` (`initialize` with `PW_MCP_REVISION_2025_11_25`), and
/// `pw_mcp_poll_timeout` says until when it may go unanswered. `PW_MCP_ALREADY_STARTED` the
/// second time.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_start(c: *mut pw_mcp, now_ms: u64) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { with_placed(c, |c| c.client.start(Instant::from_millis(now_ms))) }
}

/// When the start-up's `server/discover` counts as unanswered (ms, the clock of
/// `pw_mcp_start`): call `pw_mcp_handle_timeout` then. `PW_NO_TIMEOUT` when it is not
/// awaited (and for a NULL or misaligned client); calls are timed by the wrapper.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_timeout(c: *const pw_mcp) -> u64 {
    // SAFETY: as the function's contract.
    unsafe { query_placed(c, PW_NO_TIMEOUT, |c| deadline_ms(c.client.poll_timeout())) }
}

/// Gives the clock: a `server/discover` unanswered past its deadline makes the client send
/// `initialize` (or, fixed to 2026-07-28, fails the start-up with `PW_MCP_START_NO_ANSWER`);
/// its late answer is counted and ignored. Nothing is decided while what the last line owes
/// is not polled out: drain, then call again.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_handle_timeout(c: *mut pw_mcp, now_ms: u64) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe {
        with_placed(c, |c| {
            c.client.handle_timeout(Instant::from_millis(now_ms));
            Ok::<(), pw_result>(())
        })
    }
}

/// The revisions the client can speak, NUL-terminated for `pw_mcp_protocol_version`.
const VERSIONS: [&CStr; 4] = [c"2026-07-28", c"2025-11-25", c"2025-06-18", c"2025-03-26"];

const _: () = {
    // Each of the core's revisions has its C string here, in the same order.
    const fn same(a: &CStr, b: &str) -> bool {
        let (a, b) = (a.to_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    assert!(SUPPORTED_VERSIONS.len() + 1 == VERSIONS.len());
    assert!(same(VERSIONS[0], PROTOCOL_VERSION_2026));
    let mut i = 0;
    while i < SUPPORTED_VERSIONS.len() {
        assert!(same(VERSIONS[i + 1], SUPPORTED_VERSIONS[i]));
        i += 1;
    }
};

/// The revision the client speaks, once the server said (`initialize`'s answer, or
/// `"2026-07-28"`), as a static NUL-terminated C string; NULL before then (and for a NULL
/// or misaligned client). The host must not free or modify it.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_protocol_version(c: *const pw_mcp) -> *const c_char {
    // SAFETY: as the function's contract.
    unsafe {
        query_placed(c, core::ptr::null(), |c| {
            let Some(spoken) = c.client.protocol_version() else {
                return core::ptr::null();
            };
            VERSIONS
                .iter()
                .find(|v| v.to_bytes() == spoken.as_bytes())
                .map_or(core::ptr::null(), |v| v.as_ptr())
        })
    }
}

/// Bytes from the server; `*consumed` tells how many it took: up to the end of one line,
/// and none while what the last line owes is not polled out (drain `pw_mcp_poll_event`,
/// `pw_mcp_poll_frame` and `pw_mcp_poll_transmit`, then feed the rest). Once the
/// transport is closed it takes everything and reads nothing. (A client of
/// `pw_mcp_http_init` reads its responses with `pw_mcp_feed_response` instead.)
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `bytes` valid for
/// reads of `len` bytes and `consumed` for one write, both outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_feed(
    c: *mut pw_mcp,
    bytes: *const u8,
    len: usize,
    consumed: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, input, consumed) =
            unsafe { placed_bytes_in_one_out(c, bytes, len, consumed, First::Arguments) }?;
        consumed.write(c.client.feed(input));
        Ok(())
    })
}

/// What `pw_mcp_handle_frame` did with a frame.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_handled {
    /// Sent, failed at once, or cancelled.
    pub kind: pw_mcp_handled_kind,
    /// For `PW_MCP_HANDLED_CANCELLED`: 1 when `notifications/cancelled` was queued (0 when
    /// the call's request had not gone out yet: it was withdrawn).
    pub notified: u8,
    /// For `PW_MCP_HANDLED_SENT`: the request's JSON-RPC id, also its progress token.
    pub request: u64,
    /// For `PW_MCP_HANDLED_FAILED`: why (`PW_MCP_FAILURE_NONE` otherwise).
    pub failure: pw_mcp_failure,
    /// The failure's limit: the slots (`TOO_MANY`), the outbox's room for a line
    /// (`REQUEST_TOO_LONG`), `line_cap`, `max_depth`; 0 otherwise.
    pub limit: usize,
    /// For `PW_MCP_FAILURE_REQUEST_TOO_LONG`: the line's length; 0 otherwise.
    pub len: usize,
}

/// The C form of a failure: its kind, limit and length.
pub(crate) fn failure(f: McpFailure) -> (pw_mcp_failure, usize, usize) {
    match f {
        McpFailure::Closed => (pw_mcp_failure::PW_MCP_FAILURE_CLOSED, 0, 0),
        McpFailure::NotStarted => (pw_mcp_failure::PW_MCP_FAILURE_NOT_STARTED, 0, 0),
        McpFailure::ArgsNotObject => (pw_mcp_failure::PW_MCP_FAILURE_ARGS_NOT_OBJECT, 0, 0),
        McpFailure::TooMany { max } => (pw_mcp_failure::PW_MCP_FAILURE_TOO_MANY, max, 0),
        McpFailure::RequestTooLong { len, cap } => {
            (pw_mcp_failure::PW_MCP_FAILURE_REQUEST_TOO_LONG, cap, len)
        }
        McpFailure::ResponseTooLong { cap } => {
            (pw_mcp_failure::PW_MCP_FAILURE_RESPONSE_TOO_LONG, cap, 0)
        }
        McpFailure::ResponseTooDeep { max_depth } => (
            pw_mcp_failure::PW_MCP_FAILURE_RESPONSE_TOO_DEEP,
            usize::from(max_depth),
            0,
        ),
        McpFailure::NoOutcome => (pw_mcp_failure::PW_MCP_FAILURE_NO_OUTCOME, 0, 0),
        McpFailure::InputRequired => (pw_mcp_failure::PW_MCP_FAILURE_INPUT_REQUIRED, 0, 0),
        McpFailure::Http { status } => {
            (pw_mcp_failure::PW_MCP_FAILURE_HTTP, usize::from(status), 0)
        }
    }
}

impl pw_mcp_handled {
    fn of(h: McpHandled) -> Self {
        let none = Self {
            kind: pw_mcp_handled_kind::PW_MCP_HANDLED_SENT,
            notified: 0,
            request: 0,
            failure: pw_mcp_failure::PW_MCP_FAILURE_NONE,
            limit: 0,
            len: 0,
        };
        match h {
            McpHandled::Sent { request } => Self { request, ..none },
            McpHandled::Failed(f) => {
                let (failure, limit, len) = failure(f);
                Self {
                    kind: pw_mcp_handled_kind::PW_MCP_HANDLED_FAILED,
                    failure,
                    limit,
                    len,
                    ..none
                }
            }
            McpHandled::Cancelled { notified } => Self {
                kind: pw_mcp_handled_kind::PW_MCP_HANDLED_CANCELLED,
                notified: notified.into(),
                ..none
            },
        }
    }
}

/// A frame the wrapper routed to an adapter call (`PW_ROUTE_ADAPTER`: a `TOOL_CALL` or a
/// `CANCEL`), the call named by its handle's `slot` and `index` (the client keeps the pair
/// only as the call's key: any pair unique among the calls in flight works); `*out` says
/// what became of it. Refusals change nothing: a malformed frame gives its frame code,
/// `PW_MCP_OUTBOX_FULL` and `PW_MCP_FRAME_PENDING` ask the host to poll first and hand the
/// frame in again, and the other `PW_MCP_*` codes name a frame the wrapper never sends.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `bytes` valid for
/// `len` reads and `out` for one write, both outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_handle_frame(
    c: *mut pw_mcp,
    slot: u16,
    index: u32,
    bytes: *const u8,
    len: usize,
    out: *mut pw_mcp_handled,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, input, out) =
            unsafe { placed_bytes_in_one_out(c, bytes, len, out, First::Arguments) }?;
        let handled = c
            .client
            .handle_frame(CallHandle::from_parts(slot, index), input)?;
        out.write(pw_mcp_handled::of(handled));
        Ok(())
    })
}

/// The transport closed (the server's output ended, or it died): every call in flight
/// fails with `Tool <name> failed: the MCP server closed the connection` (SPEC §9.7), later
/// ones at once. Poll their frames out.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_handle_closed(c: *mut pw_mcp) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        unsafe { placed(c, &[]) }?.client.handle_closed();
        Ok(())
    })
}

/// Writes the next line for the server (LF included) into `buf` (`cap` bytes) and its
/// length into `*len`: `PW_OK`; `PW_NOTHING` (`*len` 0) when none waits;
/// `PW_BUFFER_TOO_SMALL` with the size needed in `*len`, nothing written and the line kept
/// (`pw_mcp_max_line_len` gives a buffer that always fits). A client of `pw_mcp_http_init`
/// hands its messages out with `pw_mcp_poll_request` instead.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `buf` valid for
/// `cap` writes and `len` for one, apart from each other and from the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_transmit(
    c: *mut pw_mcp,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, buf, len) = unsafe { placed_poll(c, buf, cap, len, First::Arguments) }?;
        crate::shared::hand_out(c.client.poll_transmit(buf), len)
    })
}

/// A frame `pw_mcp_poll_frame` wrote, for the adapter call its wrapper handle names: hand
/// it to `pw_wrapper_handle_adapter_frame` with the handle of that slot and index.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_frame {
    /// The call's index (`pw_call_handle.index`).
    pub index: u32,
    /// Its slot (`pw_call_handle.slot`).
    pub slot: u16,
    /// Always 0.
    pub reserved: u16,
    /// The frame's length in the buffer (with `PW_BUFFER_TOO_SMALL`, the length needed).
    pub len: usize,
}

/// Writes the next frame for a call's adapter into `buf` (`cap` bytes) and fills `*out`:
/// `PW_OK`; `PW_NOTHING` (`out->len` 0) when none waits; `PW_BUFFER_TOO_SMALL` with the size
/// needed in `out->len`, nothing written and the frame kept (`pw_mcp_max_frame_len` gives a
/// buffer that always fits).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `buf` valid for
/// `cap` writes and `out` for one, apart from each other and from the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_frame(
    c: *mut pw_mcp,
    buf: *mut u8,
    cap: usize,
    out: *mut pw_mcp_frame,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, buf, out) = unsafe { placed_poll(c, buf, cap, out, First::Arguments) }?;
        let frame = |index: u32, slot: u16, len: usize| pw_mcp_frame {
            index,
            slot,
            reserved: 0,
            len,
        };
        match c.client.poll_frame(buf) {
            Ok(Some(f)) => {
                out.write(frame(f.handle.index(), f.handle.slot(), f.len));
                Ok(())
            }
            Ok(None) => {
                out.write(frame(0, 0, 0));
                Err(pw_result::PW_NOTHING)
            }
            Err(e) => {
                out.write(frame(0, 0, e.needed));
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}

/// Something the host learns from the server. Spans point into the client's block and are
/// valid until the next call on the client; a span a kind does not use is empty.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_event {
    /// What happened; it says which fields count.
    pub kind: pw_mcp_event_kind,
    /// For `PW_MCP_EVENT_NOTIFICATION`: 1 when it has `params`.
    pub has_params: u8,
    /// For `PW_MCP_EVENT_NOTIFICATION`: 1 when `method` was cut to `PW_MCP_METHOD_CAP` bytes.
    pub method_cut: u8,
    /// For `PW_MCP_EVENT_READY` and `PW_MCP_EVENT_TOOLS_CHANGED`: the tools handed out as
    /// `PW_MCP_EVENT_TOOL` (in the new list, for `TOOLS_CHANGED`).
    pub tools: u32,
    /// For `PW_MCP_EVENT_TOOL_SKIPPED`: why (`PW_MCP_SKIP_NONE` otherwise).
    pub skip: pw_mcp_skip,
    /// For `PW_MCP_EVENT_START_FAILED`: why (`PW_MCP_START_NONE` otherwise).
    pub start_error: pw_mcp_start_error,
    /// `PW_MCP_SKIP_NAME_TOO_LONG`: the name's decoded length; `PW_MCP_START_CURSOR_TOO_LONG`:
    /// the cursor's length; `PW_MCP_START_NO_RESPONSE`: the HTTP status; 0 otherwise.
    pub len: usize,
    /// `PW_MCP_SKIP_NAME_TOO_LONG`: `name_cap`; 0 otherwise.
    pub cap: usize,
    /// For `PW_MCP_EVENT_INITIALIZED`: the protocol revision spoken from now on.
    pub version: pw_str,
    /// For `PW_MCP_EVENT_TOOL`: the tool's decoded name (register it under this name).
    pub name: pw_str,
    /// Raw JSON as the server sent it: the `initialize` or `server/discover` result
    /// (`INITIALIZED`), the tool's
    /// entry with its `description` and `inputSchema` (`TOOL`, `TOOL_SKIPPED`), the value
    /// the start-up failed on (`START_FAILED` with `UNSUPPORTED_VERSION`, `BAD_RESULT`,
    /// `REFUSED`).
    pub raw: pw_str,
    /// For `PW_MCP_EVENT_NOTIFICATION`: the decoded method.
    pub method: pw_str,
    /// For `PW_MCP_EVENT_NOTIFICATION` with `has_params`: its params as sent.
    pub params: pw_str,
}

impl pw_mcp_event {
    const fn of_kind(kind: pw_mcp_event_kind) -> Self {
        let empty = pw_str {
            ptr: core::ptr::null(),
            len: 0,
        };
        Self {
            kind,
            has_params: 0,
            method_cut: 0,
            tools: 0,
            skip: pw_mcp_skip::PW_MCP_SKIP_NONE,
            start_error: pw_mcp_start_error::PW_MCP_START_NONE,
            len: 0,
            cap: 0,
            version: empty,
            name: empty,
            raw: empty,
            method: empty,
            params: empty,
        }
    }
}

/// The C form of a failed start-up: its kind, the value as sent, a length.
fn start_error(e: McpStartError<'_>) -> (pw_mcp_start_error, &[u8], usize) {
    match e {
        McpStartError::UnsupportedVersion(v) => {
            (pw_mcp_start_error::PW_MCP_START_UNSUPPORTED_VERSION, v, 0)
        }
        McpStartError::BadResult(r) => (pw_mcp_start_error::PW_MCP_START_BAD_RESULT, r, 0),
        McpStartError::Refused(e) => (pw_mcp_start_error::PW_MCP_START_REFUSED, e, 0),
        McpStartError::CursorTooLong(n) => {
            (pw_mcp_start_error::PW_MCP_START_CURSOR_TOO_LONG, &[], n)
        }
        McpStartError::TooManyPages => (pw_mcp_start_error::PW_MCP_START_TOO_MANY_PAGES, &[], 0),
        McpStartError::ResponseTooLarge => {
            (pw_mcp_start_error::PW_MCP_START_RESPONSE_TOO_LARGE, &[], 0)
        }
        McpStartError::NoAnswer => (pw_mcp_start_error::PW_MCP_START_NO_ANSWER, &[], 0),
        McpStartError::NoResponse { status } => (
            pw_mcp_start_error::PW_MCP_START_NO_RESPONSE,
            &[],
            usize::from(status),
        ),
        // A start-up failure newer than this table: the result was not one to go on with.
        _ => (pw_mcp_start_error::PW_MCP_START_BAD_RESULT, &[], 0),
    }
}

/// The next thing the host learns from the server, in `*out`: `PW_OK`, or `PW_NOTHING`.
/// Listed tools come as `PW_MCP_EVENT_TOOL` before `PW_MCP_EVENT_READY`; a host registers
/// the ones it wants as adapter tools of its wrapper (copying the names: the spans end at
/// the next call on the client).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently, and `out` valid for
/// one write outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_poll_event(c: *mut pw_mcp, out: *mut pw_mcp_event) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (c, out) = unsafe { placed_one_out(c, out) }?;
        let method_buf = &mut *c.method;
        let ev = c.client.poll_event().ok_or(pw_result::PW_NOTHING)?;
        out.write(match ev {
            McpEvent::Initialized {
                protocol_version,
                result,
            } => pw_mcp_event {
                version: pw_str::of(protocol_version.as_bytes()),
                raw: pw_str::of(result),
                ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_INITIALIZED)
            },
            McpEvent::Tool { name, tool } => pw_mcp_event {
                name: pw_str::of(name.as_bytes()),
                raw: pw_str::of(tool),
                ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_TOOL)
            },
            McpEvent::ToolSkipped { reason, tool } => {
                let (skip, len, cap) = match reason {
                    McpToolSkip::NameTooLong { len, cap } => {
                        (pw_mcp_skip::PW_MCP_SKIP_NAME_TOO_LONG, len, cap)
                    }
                    McpToolSkip::NoName => (pw_mcp_skip::PW_MCP_SKIP_NO_NAME, 0, 0),
                    McpToolSkip::BadHeaderAnnotation => {
                        (pw_mcp_skip::PW_MCP_SKIP_BAD_HEADER_ANNOTATION, 0, 0)
                    }
                    McpToolSkip::HeaderTableFull { cap } => {
                        (pw_mcp_skip::PW_MCP_SKIP_HEADER_TABLE_FULL, 0, cap)
                    }
                };
                pw_mcp_event {
                    skip,
                    len,
                    cap,
                    raw: pw_str::of(tool),
                    ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_TOOL_SKIPPED)
                }
            }
            McpEvent::Ready { tools } => pw_mcp_event {
                tools,
                ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_READY)
            },
            McpEvent::ToolsChanged { tools } => pw_mcp_event {
                tools,
                ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_TOOLS_CHANGED)
            },
            McpEvent::StartFailed(e) => {
                let (start_error, raw, len) = start_error(e);
                pw_mcp_event {
                    start_error,
                    len,
                    raw: pw_str::of(raw),
                    ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_START_FAILED)
                }
            }
            McpEvent::Notification { method, params } => {
                // Zero-copy when the method has no escapes; decoded into the block otherwise.
                let (text, cut) = match method.as_plain_str() {
                    Some(m) if m.len() <= method_buf.len() => (m, false),
                    _ => method.decode_prefix_into(method_buf),
                };
                pw_mcp_event {
                    has_params: params.is_some().into(),
                    method_cut: cut.into(),
                    method: pw_str::of(text.as_bytes()),
                    params: pw_str::of(params.unwrap_or(&[])),
                    ..pw_mcp_event::of_kind(pw_mcp_event_kind::PW_MCP_EVENT_NOTIFICATION)
                }
            }
        });
        Ok(())
    })
}

/// Where the client is in its life, in `*out`.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently, and `out` valid for
/// one write outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_state(
    c: *const pw_mcp,
    out: *mut pw_mcp_client_state,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract; only read.
        let (c, out) = unsafe { placed_one_out(c.cast_mut(), out) }?;
        out.write(match c.client.state() {
            McpState::Idle => pw_mcp_client_state::PW_MCP_STATE_IDLE,
            McpState::Starting => pw_mcp_client_state::PW_MCP_STATE_STARTING,
            McpState::Ready => pw_mcp_client_state::PW_MCP_STATE_READY,
            McpState::Failed => pw_mcp_client_state::PW_MCP_STATE_FAILED,
            McpState::Closed => pw_mcp_client_state::PW_MCP_STATE_CLOSED,
        });
        Ok(())
    })
}

// A mirror of core's `McpStats`, field for field and doc for doc: C needs a `#[repr(C)]`
// struct of its own, which cbindgen can read (it reads this crate only, and the core type
// has no C layout); the conversion beside it copies each field.
/// Counters of an MCP client (`pw_mcp_get_stats`; each saturates).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct pw_mcp_stats {
    /// Lines read from the server (blank ones not counted).
    pub lines: u64,
    /// Lines that are not JSON.
    pub not_json: u32,
    /// JSON lines that are not JSON-RPC 2.0 messages.
    pub not_jsonrpc: u32,
    /// Lines longer than `line_cap`.
    pub too_long: u32,
    /// Lines nested deeper than the depth limit.
    pub too_deep: u32,
    /// Responses whose id is none the client issued.
    pub unknown_id: u32,
    /// Responses and progress for calls already ended (answered, cancelled, timed out).
    pub late: u32,
    /// Progress notifications whose token is none the client issued.
    pub unknown_progress: u32,
    /// `ping` requests answered.
    pub pings: u32,
    /// Other requests from the server, answered `-32601`.
    pub refused_requests: u32,
    /// Notifications handed to the host as events.
    pub notifications: u32,
    /// `tools/call` requests queued.
    pub calls: u64,
    /// Calls answered by the server (result or error).
    pub answered: u64,
    /// Calls the client failed itself.
    pub failed: u64,
}

impl pw_mcp_stats {
    fn of(s: McpStats) -> Self {
        Self {
            lines: s.lines,
            not_json: s.not_json,
            not_jsonrpc: s.not_jsonrpc,
            too_long: s.too_long,
            too_deep: s.too_deep,
            unknown_id: s.unknown_id,
            late: s.late,
            unknown_progress: s.unknown_progress,
            pings: s.pings,
            refused_requests: s.refused_requests,
            notifications: s.notifications,
            calls: s.calls,
            answered: s.answered,
            failed: s.failed,
        }
    }
}

/// Copies what the client counted into `*out`.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently, and `out` valid for
/// one write outside the client's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_get_stats(c: *const pw_mcp, out: *mut pw_mcp_stats) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract; only read.
        let (c, out) = unsafe { placed_one_out(c.cast_mut(), out) }?;
        out.write(pw_mcp_stats::of(c.client.stats()));
        Ok(())
    })
}

/// Calls in flight: waiting for the server, or with frames not yet polled (0 for a NULL or
/// misaligned client).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_in_flight(c: *const pw_mcp) -> usize {
    // SAFETY: as the function's contract.
    unsafe { query_placed(c, 0, |c| c.client.in_flight()) }
}

/// Lines waiting in the outbox for `pw_mcp_poll_transmit` (0 for a NULL or misaligned
/// client).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_queued(c: *const pw_mcp) -> usize {
    // SAFETY: as the function's contract.
    unsafe { query_placed(c, 0, |c| c.client.queued()) }
}

/// One MCP tool's output schema for `pw_mcp_set_output_schemas`: the tool's name as the
/// server lists it and its `outputSchema`'s JSON text, both borrowed.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_mcp_output_schema {
    /// The tool's name (UTF-8).
    pub tool: pw_str,
    /// Its output schema's JSON text.
    pub schema: pw_str,
}

/// An upper bound, on every target, of the bytes per schema `pw_mcp_set_output_schemas` places
/// in the memory it is given (`n * PW_MCP_MAX_OUTPUT_SCHEMA_SIZE` bytes, `PW_MAX_ALIGN`
/// aligned, always do).
pub const PW_MCP_MAX_OUTPUT_SCHEMA_SIZE: usize = 96;

// The two arrays, and the padding between them (under 8), for one schema and more.
const _: () = assert!(
    size_of::<McpOutputSchema<'static>>() + size_of::<Schema<'static>>() + 7
        <= PW_MCP_MAX_OUTPUT_SCHEMA_SIZE
);
const _: () = assert!(
    align_of::<McpOutputSchema<'static>>() <= PW_MAX_ALIGN
        && align_of::<Schema<'static>>() <= PW_MAX_ALIGN
);

/// Where the two arrays of `n` output schemas lie in their memory, and its length.
fn output_layout(n: usize) -> Option<(usize, usize, usize)> {
    let mut block = Block::starting_with::<()>();
    let entries = block.array::<McpOutputSchema<'static>>(n)?;
    let schemas = block.array::<Schema<'static>>(n)?;
    Some((entries, schemas, block.len()))
}

/// The bytes of memory `pw_mcp_set_output_schemas` needs for `n` schemas, in `*out_size`.
///
/// The caller must pass `out_size` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_output_schemas_size(n: usize, out_size: *mut usize) -> pw_result {
    ffi(|| {
        require_non_null!(out_size);
        let (_, _, len) = output_layout(n).ok_or(pw_result::PW_TOO_MANY)?;
        // SAFETY: the caller hands `out_size` for one write.
        unsafe { write_out(out_size, len) }.ok()
    })
}

/// Registers the output schemas results are checked against (SPEC §11), replacing any
/// earlier ones (`n` 0 removes them): a result whose `structuredContent` does not satisfy its
/// tool's schema fails the call with `Tool <name> returned a result that does not match its
/// output schema: <where>: <why>`. The schemas are read into `mem` (at least
/// `pw_mcp_output_schemas_size(n)` bytes, aligned to `PW_MAX_ALIGN`), which the client then
/// uses. A schema the validator refuses gives `PW_BAD_SCHEMA` (`pw_schema_check` says why), a
/// name that is not UTF-8 `PW_TEXT_NOT_UTF8`: nothing changed.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently; `mem` valid for writes
/// of `mem_len` bytes, outside the client's block, and each name and schema readable, all
/// unchanged and touched by nothing else until the client is no longer used or this function
/// is called again; `schemas` valid for `n` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_set_output_schemas(
    c: *mut pw_mcp,
    mem: *mut c_void,
    mem_len: usize,
    schemas: *const pw_mcp_output_schema,
    n: usize,
) -> pw_result {
    ffi(|| {
        require_non_null!(c, mem, schemas);
        let (entries_at, schemas_at, need) = output_layout(n).ok_or(pw_result::PW_TOO_MANY)?;
        let region = block_at(mem, mem_len, need, PW_MAX_ALIGN)?;
        if !schemas.is_aligned() {
            return Err(pw_result::PW_STORAGE_MISALIGNED);
        }
        disjoint(&[region], &[span(schemas, n)])?;
        // The memory the client holds now may be given again: it is checked against the
        // block alone, and let go before it is written.
        // SAFETY: the caller hands `c` from `pw_mcp_init`, used by nothing else.
        let m = unsafe { placed(c, &[span(schemas, n)]) }?;
        disjoint(&[m.block], &[region])?;
        // SAFETY: the caller hands `schemas` for `n` reads, aligned (checked).
        let given = unsafe { core::slice::from_raw_parts(schemas, n) };
        // Every entry read first, so that a refused one changes nothing.
        for e in given {
            // SAFETY: the caller keeps each text readable while the client is used.
            unsafe { read_output_schema(e) }?;
        }
        m.client.set_output_schemas(&[]);
        let base = mem.cast::<u8>();
        // SAFETY: `mem` holds `need` bytes (checked), aligned to `PW_MAX_ALIGN`, which both
        // arrays' offsets respect; the client no longer refers to it (just above).
        let (entry_mem, schema_mem) = unsafe {
            (
                base.add(entries_at).cast::<McpOutputSchema<'static>>(),
                base.add(schemas_at).cast::<Schema<'static>>(),
            )
        };
        for (i, e) in given.iter().enumerate() {
            // SAFETY: as in the first pass.
            let (tool, schema) = unsafe { read_output_schema(e) }?;
            // SAFETY: slot `i` of each array is in `mem` (layout) and written once; the caller
            // keeps `mem` for the client.
            unsafe {
                schema_mem.add(i).write(schema);
                entry_mem.add(i).write(McpOutputSchema {
                    tool,
                    schema: &*schema_mem.add(i),
                });
            }
        }
        // SAFETY: the first `n` entries were written just above.
        let table: &'static [McpOutputSchema<'static>] =
            unsafe { core::slice::from_raw_parts(entry_mem, n) };
        m.client.set_output_schemas(table);
        m.outputs = region;
        Ok(())
    })
}

/// An output schema's name and schema, read.
///
/// # Safety
///
/// Both texts must be readable for their lengths for `'static` (the client's life).
unsafe fn read_output_schema(
    e: &pw_mcp_output_schema,
) -> Result<(&'static str, Schema<'static>), pw_result> {
    // SAFETY: as the function's contract.
    let (tool, text) = unsafe {
        (
            in_bytes(e.tool.ptr, e.tool.len)?,
            in_bytes(e.schema.ptr, e.schema.len)?,
        )
    };
    let tool = core::str::from_utf8(tool).map_err(|_| pw_result::PW_TEXT_NOT_UTF8)?;
    let schema = Schema::new(text).map_err(|_| pw_result::PW_BAD_SCHEMA)?;
    Ok((tool, schema))
}
