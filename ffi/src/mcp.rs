//! The MCP client (SPEC §9) for C: one memory block holds it, its call slots, its
//! `clientInfo` texts, a notification's method and its arena.
//!
//! The host moves bytes between the client and the transport (`pw_mcp_feed`,
//! `pw_mcp_poll_transmit`) and frames between the client and a wrapper
//! (`pw_mcp_handle_frame` with each `PW_ROUTE_ADAPTER` frame, `pw_mcp_poll_frame` into
//! `pw_wrapper_handle_adapter_frame`). A call crosses as its wrapper handle's slot and
//! index. That traffic is in [`crate::mcp_frame`]; events (start-up, listed tools,
//! notifications) and counters in [`crate::mcp_event`].

#![allow(non_camel_case_types)]

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpSlot, McpState, CLIENT_TEXT_CAP,
};
use polyweave_tool_adapter::StorageError;

use crate::boundary::{
    disjoint, ffi, guard, in_bytes, out_bytes, out_slot, placed, read_in, require_non_null, span,
    Placed,
};
use crate::codes::pw_result;
use crate::enums::pw_mcp_client_state;

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
}

impl pw_mcp_config {
    fn of(c: &McpConfig) -> Self {
        Self {
            line_cap: c.line_cap,
            outbox_cap: c.outbox_cap,
            name_cap: c.name_cap,
            cursor_cap: c.cursor_cap,
            max_depth: c.max_depth,
        }
    }

    fn to_config(self) -> McpConfig {
        McpConfig {
            line_cap: self.line_cap,
            outbox_cap: self.outbox_cap,
            name_cap: self.name_cap,
            cursor_cap: self.cursor_cap,
            max_depth: self.max_depth,
        }
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
}

impl Placed for pw_mcp {
    unsafe fn block(this: *const Self) -> (usize, usize) {
        // SAFETY: `this` points at a client (trait contract); one field is copied, no
        // reference made.
        unsafe { (*this).block }
    }
}

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
const _: () = assert!(align_of::<pw_mcp>() <= 8 && align_of::<McpSlot>() <= 8);

/// Where each part of a client's block is.
struct Layout {
    slots: usize,
    info: usize,
    method: usize,
    arena: usize,
    arena_len: usize,
    total: usize,
}

fn align_up(n: usize, a: usize) -> Option<usize> {
    n.checked_add(a - 1).map(|n| n & !(a - 1))
}

impl Layout {
    fn of(cfg: &McpConfig, calls: usize) -> Option<Self> {
        let slots = align_up(size_of::<pw_mcp>(), align_of::<McpSlot>())?;
        let info = slots.checked_add(calls.checked_mul(size_of::<McpSlot>())?)?;
        let method = info.checked_add(INFO_LEN)?;
        let arena = method.checked_add(PW_MCP_METHOD_CAP)?;
        let arena_len = cfg.arena_len(calls);
        (arena_len != usize::MAX).then_some(())?;
        Some(Self {
            slots,
            info,
            method,
            arena,
            arena_len,
            total: arena.checked_add(arena_len)?,
        })
    }
}

/// Reads a configuration and checks that it can work (`PW_BAD_CONFIG` otherwise).
///
/// # Safety
///
/// A non-NULL `cfg` must be valid for one read.
unsafe fn read_config(cfg: *const pw_mcp_config) -> Result<McpConfig, pw_result> {
    // SAFETY: readable for one read when non-NULL (caller); integer fields only.
    let cfg = unsafe { read_in(cfg) }?.to_config();
    // The client's own check, run on no memory: a configuration that works gets as far as
    // the arena, which is too small.
    match McpClient::new(cfg, McpClientInfo::THIS_CRATE, &mut [], &mut []) {
        Err(StorageError::BadConfig) => Err(pw_result::PW_BAD_CONFIG),
        _ => Ok(cfg),
    }
}

/// Fills `*out` with the default capacities (results of a few KiB, names of 64 bytes).
///
/// The caller must pass `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_config_default(out: *mut pw_mcp_config) -> pw_result {
    ffi(|| {
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        out.write(pw_mcp_config::of(&McpConfig::DEFAULT));
        Ok(())
    })
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
    ffi(|| {
        require_non_null!(cfg, wrapper);
        disjoint(&[span(cfg.cast_const(), 1)], &[span(wrapper, 1)])?;
        // SAFETY: the caller hands `wrapper` for one read; a misaligned one is refused first.
        let (w, _) = unsafe { crate::wrapper::read_config(wrapper) }?;
        if !cfg.is_aligned() {
            return Err(pw_result::PW_MEMORY_MISALIGNED);
        }
        // SAFETY: non-NULL, aligned (checked) and readable (caller); any bits are valid. Only
        // the two fields the wrapper sets change, so a configuration out of range stays so.
        let fitted = unsafe { cfg.read() }.to_config().fit(&w);
        // SAFETY: the caller hands `cfg` for one write.
        unsafe { out_slot(cfg) }?.write(pw_mcp_config::of(&fitted));
        Ok(())
    })
}

/// The alignment in bytes a client's block needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_mcp_align() -> usize {
    guard(0, || align_of::<pw_mcp>().max(align_of::<McpSlot>()))
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
    ffi(|| {
        require_non_null!(cfg, out_size);
        disjoint(&[span(out_size, 1)], &[span(cfg, 1)])?;
        // SAFETY: the caller hands `cfg` for one read.
        let cfg = unsafe { read_config(cfg) }?;
        // SAFETY: the caller hands `out_size` for one write.
        let out = unsafe { out_slot(out_size) }?;
        if calls > usize::from(u16::MAX) {
            return Err(pw_result::PW_TOO_MANY);
        }
        let layout = Layout::of(&cfg, calls).ok_or(pw_result::PW_BAD_CONFIG)?;
        out.write(layout.total);
        Ok(())
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
    ffi(|| {
        require_non_null!(cfg, out_len);
        disjoint(&[span(out_len, 1)], &[span(cfg, 1)])?;
        // SAFETY: the caller hands `cfg` for one read.
        let cfg = unsafe { read_config(cfg) }?;
        // SAFETY: the caller hands `out_len` for one write.
        unsafe { out_slot(out_len) }?.write(cfg.max_frame_len());
        Ok(())
    })
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
    ffi(|| {
        require_non_null!(cfg, out_len);
        disjoint(&[span(out_len, 1)], &[span(cfg, 1)])?;
        // SAFETY: the caller hands `cfg` for one read.
        let cfg = unsafe { read_config(cfg) }?;
        // SAFETY: the caller hands `out_len` for one write.
        unsafe { out_slot(out_len) }?.write(cfg.max_line_len());
        Ok(())
    })
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
    ffi(|| {
        require_non_null!(mem, cfg, name, version, out);
        // SAFETY: the caller hands `cfg` for one read.
        let config = unsafe { read_config(cfg) }?;
        if calls > usize::from(u16::MAX) {
            return Err(pw_result::PW_TOO_MANY);
        }
        let layout = Layout::of(&config, calls).ok_or(pw_result::PW_BAD_CONFIG)?;
        if mem_len < layout.total {
            return Err(pw_result::PW_MEMORY_TOO_SMALL);
        }
        if !mem.addr().is_multiple_of(pw_mcp_align()) {
            return Err(pw_result::PW_MEMORY_MISALIGNED);
        }
        let block = span(mem.cast::<u8>().cast_const(), mem_len);
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
        // which the slots' offset respects; the parts do not overlap; the caller gives the
        // block to the client for as long as it is used ('static here).
        let (slot_mem, info, method, arena) = unsafe {
            let slot_ptr = base.add(layout.slots).cast::<McpSlot>();
            for i in 0..calls {
                slot_ptr.add(i).write(McpSlot::EMPTY);
            }
            (
                core::slice::from_raw_parts_mut(slot_ptr, calls),
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
        let client = McpClient::new(config, info, slot_mem, arena)?;
        let state = mem.cast::<pw_mcp>();
        // SAFETY: `state` is the block's start, aligned and with room for a `pw_mcp`
        // (checked); `pw_mcp` has no drop glue, so overwriting an old one leaks nothing.
        unsafe {
            state.write(pw_mcp {
                client,
                method,
                block,
            })
        };
        out.write(state);
        Ok(())
    })
}

/// Begins the start-up: `initialize` goes out at the next `pw_mcp_poll_transmit`.
/// `PW_MCP_ALREADY_STARTED` the second time.
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_start(c: *mut pw_mcp) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let c = unsafe { placed(c, &[]) }?;
        c.client.start()?;
        Ok(())
    })
}

/// Bytes from the server; `*consumed` tells how many it took: up to the end of one line,
/// and none while what the last line owes is not polled out (drain `pw_mcp_poll_event`,
/// `pw_mcp_poll_frame` and `pw_mcp_poll_transmit`, then feed the rest). Once the
/// transport is closed it takes everything and reads nothing.
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
        require_non_null!(c, bytes, consumed);
        let (consumed_span, bytes_span) = (span(consumed, 1), span(bytes, len));
        disjoint(&[consumed_span], &[bytes_span])?;
        // SAFETY: as the function's contract.
        let c = unsafe { placed(c, &[consumed_span, bytes_span]) }?;
        // SAFETY: the caller hands `bytes` for `len` reads and `consumed` for one write.
        let (input, consumed) = unsafe { (in_bytes(bytes, len)?, out_slot(consumed)?) };
        consumed.write(c.client.feed(input));
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
        require_non_null!(c, out);
        // SAFETY: as the function's contract; only read.
        let c = unsafe { placed(c.cast_mut(), &[span(out.cast_const(), 1)]) }?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
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

/// Calls in flight: waiting for the server, or with frames not yet polled (0 for a NULL or
/// misaligned client).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_in_flight(c: *const pw_mcp) -> usize {
    guard(0, || {
        // SAFETY: as the function's contract; only read.
        unsafe { placed(c.cast_mut(), &[]) }.map_or(0, |c| c.client.in_flight())
    })
}

/// Lines waiting in the outbox for `pw_mcp_poll_transmit` (0 for a NULL or misaligned
/// client).
///
/// The caller must pass `c` from `pw_mcp_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_mcp_queued(c: *const pw_mcp) -> usize {
    guard(0, || {
        // SAFETY: as the function's contract; only read.
        unsafe { placed(c.cast_mut(), &[]) }.map_or(0, |c| c.client.queued())
    })
}
