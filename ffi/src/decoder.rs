//! Stream decoders (SPEC §8), placed in memory the host hands in: a provider's response
//! body in, frames out.

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
use polyweave_tool_adapter::Provider;

use crate::boundary::{
    disjoint, ffi, guard, in_bytes, out_bytes, out_slot, placed, placed_by_block_field,
    placed_bytes_in_one_out, placed_one_out, placed_poll, read_in, require_non_null, span, First,
};
use crate::codes::pw_result;
use crate::enums::{pw_provider, raw};
use crate::shared::{block_at, config_fit, config_query, write_out, Block, PW_MAX_ALIGN};

// A mirror of core's `DecoderConfig`, field for field and doc for doc: C needs a `#[repr(C)]`
// struct of its own, which cbindgen can read (it reads this crate only, and the core type
// has no C layout); the conversion beside it copies each field.
/// The capacities of a stream decoder (`pw_decoder_config_default` fills in the defaults).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_decoder_config {
    /// The longest provider event kept, in bytes: an SSE event's joined data or an NDJSON
    /// line; a longer one is skipped and counted (default 16384, at least 16).
    pub event_cap: usize,
    /// The most argument bytes one call may have (default 4096).
    pub args_cap: usize,
    /// The longest tool name kept, in bytes (default 64; keep it at most the wrapper's).
    pub name_cap: usize,
    /// The longest call id kept, in bytes (default 64; keep it at most the wrapper's).
    pub id_cap: usize,
    /// Arguments nested deeper than this are not valid JSON (default 32, at least 1).
    pub max_depth: u8,
}

impl pw_decoder_config {
    fn of(c: &DecoderConfig) -> Self {
        Self {
            event_cap: c.event_cap,
            args_cap: c.args_cap,
            name_cap: c.name_cap,
            id_cap: c.id_cap,
            max_depth: c.max_depth,
        }
    }

    fn to_config(self) -> DecoderConfig {
        DecoderConfig {
            event_cap: self.event_cap,
            args_cap: self.args_cap,
            name_cap: self.name_cap,
            id_cap: self.id_cap,
            max_depth: self.max_depth,
        }
    }
}

/// What a decoder skipped, by kind, and the calls it saw (since `pw_decoder_init`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct pw_decoder_stats {
    /// Events whose data is not JSON.
    pub not_json: u32,
    /// Events of a name the provider does not send.
    pub unknown_event: u32,
    /// Events of a known kind with members of the wrong shape.
    pub bad_shape: u32,
    /// Events longer than `event_cap`.
    pub overlong: u32,
    /// Events after the response ended, until the body ended.
    pub after_end: u32,
    /// Ids, names and finish reasons cut to their capacity.
    pub cut: u32,
    /// Calls that started.
    pub calls_started: u64,
    /// `TOOL_CALL` frames written (equal to `calls_started` once a body is done).
    pub calls_written: u64,
}

/// A stream decoder (opaque): one provider's response bodies in, frames out.
///
/// It lives in a memory block the host provides (`pw_decoder_size` bytes, aligned to
/// `pw_decoder_align()`), with its call slots and event buffer. There is nothing to free.
#[allow(non_camel_case_types)]
pub struct pw_decoder {
    decoder: Decoder<'static>,
    /// Address and length of the whole block (for overlap checks).
    block: (usize, usize),
}

/// `pw_decoder_config_default`'s `event_cap`: with the other `PW_DECODER_DEFAULT_*`
/// capacities, the configuration `PW_DECODER_DEFAULT_SIZE_BOUND` sizes.
pub const PW_DECODER_DEFAULT_EVENT_CAP: usize = 16384;
/// `pw_decoder_config_default`'s `args_cap`.
pub const PW_DECODER_DEFAULT_ARGS_CAP: usize = 4096;
/// `pw_decoder_config_default`'s `name_cap`.
pub const PW_DECODER_DEFAULT_NAME_CAP: usize = 64;
/// `pw_decoder_config_default`'s `id_cap`.
pub const PW_DECODER_DEFAULT_ID_CAP: usize = 64;

const _: () = {
    let d = DecoderConfig::DEFAULT;
    assert!(
        d.event_cap == PW_DECODER_DEFAULT_EVENT_CAP && d.args_cap == PW_DECODER_DEFAULT_ARGS_CAP
    );
    assert!(d.name_cap == PW_DECODER_DEFAULT_NAME_CAP && d.id_cap == PW_DECODER_DEFAULT_ID_CAP);
};

/// An upper bound of what a decoder's block holds besides its arena and call slots.
pub const PW_DECODER_MAX_BASE_SIZE: usize = 640;
/// An upper bound of the block's bytes per call slot, besides its share of the arena.
pub const PW_DECODER_MAX_SLOT_SIZE: usize = 32;

const _: () = assert!(size_of::<pw_decoder>() + 2 * 7 <= PW_DECODER_MAX_BASE_SIZE);
const _: () = assert!(size_of::<CallSlot>() <= PW_DECODER_MAX_SLOT_SIZE);
const _: () =
    assert!(align_of::<pw_decoder>() <= PW_MAX_ALIGN && align_of::<CallSlot>() <= PW_MAX_ALIGN);

/// The provider a number names, in this build.
pub(crate) fn provider(p: raw::pw_provider) -> Result<Provider, pw_result> {
    let name: &[u8] = match p {
        x if x == pw_provider::PW_PROVIDER_OPENAI_CHAT as u32 => b"openai-chat",
        x if x == pw_provider::PW_PROVIDER_OPENAI_RESPONSES as u32 => b"openai-responses",
        x if x == pw_provider::PW_PROVIDER_ANTHROPIC as u32 => b"anthropic",
        x if x == pw_provider::PW_PROVIDER_GEMINI as u32 => b"gemini",
        x if x == pw_provider::PW_PROVIDER_OLLAMA as u32 => b"ollama",
        _ => return Err(pw_result::PW_UNKNOWN_PROVIDER),
    };
    Provider::from_name(name).ok_or(pw_result::PW_UNKNOWN_PROVIDER)
}

/// Where each part of a decoder's block is.
struct Layout {
    slots: usize,
    arena: usize,
    arena_len: usize,
    total: usize,
}

impl Layout {
    fn of(cfg: &DecoderConfig, calls: usize) -> Option<Self> {
        let arena_len = cfg.arena_len(calls);
        (arena_len != usize::MAX).then_some(())?;
        let mut block = Block::starting_with::<pw_decoder>();
        Some(Self {
            slots: block.array::<CallSlot>(calls)?,
            arena: block.bytes(arena_len)?,
            arena_len,
            total: block.len(),
        })
    }
}

/// Reads a configuration.
///
/// # Safety
///
/// A non-NULL `cfg` must be valid for one read.
unsafe fn read_config(cfg: *const pw_decoder_config) -> Result<DecoderConfig, pw_result> {
    // SAFETY: readable for one read when non-NULL (caller); integer fields only.
    Ok(unsafe { read_in(cfg) }?.to_config())
}

/// The size of the block `pw_decoder_init` needs for `cfg` and `calls` call slots (the most
/// calls one response may have open at once). A configuration out of range gives
/// `PW_BAD_CONFIG`.
///
/// The caller must pass `cfg` valid for one read and `out_size` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_size(
    cfg: *const pw_decoder_config,
    calls: usize,
    out_size: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_size` for one write.
    unsafe {
        config_query(cfg, out_size, read_config, |c| {
            Layout::of(&c, calls)
                .map(|l| l.total)
                .ok_or(pw_result::PW_BAD_CONFIG)
        })
    }
}

/// The alignment in bytes a decoder's block needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_decoder_align() -> usize {
    guard(0, || align_of::<pw_decoder>().max(align_of::<CallSlot>()))
}

/// The longest frame `pw_decoder_poll_frame` can write for `cfg`: an output buffer this
/// long is never refused with `PW_BUFFER_TOO_SMALL`, and each frame is written into it in one
/// pass (into a shorter one, each is measured first).
///
/// The caller must pass `cfg` valid for one read and `out_len` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_max_frame_len(
    cfg: *const pw_decoder_config,
    out_len: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_len` for one write.
    unsafe { config_query(cfg, out_len, read_config, |c| Ok(c.max_frame_len())) }
}

/// Fills `*out` with the default capacities.
///
/// The caller must pass `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_config_default(out: *mut pw_decoder_config) -> pw_result {
    // SAFETY: the caller hands `out` for one write.
    unsafe { write_out(out, pw_decoder_config::of(&DecoderConfig::DEFAULT)) }
}

/// Makes `*cfg` fit the wrapper configuration `wrapper`: its name and id capacities, and a
/// depth limit two below the wrapper's (a `TOOL_CALL` frame puts `args` two levels inside
/// it), so every call the decoder writes is one the wrapper reads and answers. A wrapper
/// configuration out of range gives `PW_BAD_CONFIG` and changes nothing.
///
/// The caller must pass `cfg` valid for one read and write, and `wrapper` for one read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_config_fit(
    cfg: *mut pw_decoder_config,
    wrapper: *const crate::wrapper::pw_wrapper_config,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and write and `wrapper` for one read.
    unsafe {
        config_fit(cfg, wrapper, |c, w| {
            pw_decoder_config::of(&c.to_config().fit(w))
        })
    }
}

/// Places a decoder for `provider` in `mem` (at least `pw_decoder_size(cfg, calls)` bytes,
/// aligned to `pw_decoder_align()`) and sets `*out` to it. Calling it again on the same
/// memory starts afresh. On any error nothing is written to `*out`.
///
/// The caller must pass `mem` valid for writes of `mem_len` bytes for as long as the decoder
/// is used and touched by nothing else meanwhile; `cfg` valid for one read; `out` for one
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_init(
    mem: *mut c_void,
    mem_len: usize,
    provider: raw::pw_provider,
    cfg: *const pw_decoder_config,
    calls: usize,
    out: *mut *mut pw_decoder,
) -> pw_result {
    ffi(|| {
        require_non_null!(mem, cfg, out);
        let which = self::provider(provider)?;
        // SAFETY: the caller hands `cfg` for one read.
        let config = unsafe { read_config(cfg) }?;
        let layout = Layout::of(&config, calls).ok_or(pw_result::PW_BAD_CONFIG)?;
        let block = block_at(mem, mem_len, layout.total, pw_decoder_align())?;
        disjoint(&[block, span(out, 1)], &[span(cfg, 1)])?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let base = mem.cast::<u8>();
        // SAFETY: `mem` holds `layout.total` bytes (checked) aligned to `pw_decoder_align()`,
        // which the slots' offset respects; the parts do not overlap; the caller gives the
        // block to the decoder for as long as it is used ('static here).
        let (slot_mem, arena) = unsafe {
            let slot_ptr = base.add(layout.slots).cast::<CallSlot>();
            for i in 0..calls {
                slot_ptr.add(i).write(CallSlot::EMPTY);
            }
            (
                core::slice::from_raw_parts_mut(slot_ptr, calls),
                out_bytes(base.add(layout.arena), layout.arena_len)?,
            )
        };
        let decoder =
            Decoder::new(which, config, slot_mem, arena).map_err(|_| pw_result::PW_BAD_CONFIG)?;
        let state = mem.cast::<pw_decoder>();
        // SAFETY: `state` is the block's start, aligned and with room for a `pw_decoder`
        // (checked); `pw_decoder` has no drop glue, so overwriting an old one leaks nothing.
        unsafe { state.write(pw_decoder { decoder, block }) };
        out.write(state);
        Ok(())
    })
}

placed_by_block_field!(pw_decoder);

/// Feeds body bytes; `*consumed` tells how many it took. It takes bytes up to the end of
/// the first complete provider event and none while frames wait: call
/// `pw_decoder_poll_frame` until `PW_NOTHING`, then feed the rest.
///
/// The caller must pass `d` from `pw_decoder_init`, not used concurrently; `bytes` valid for
/// reads of `len` bytes and `consumed` for one write, both outside the decoder's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_feed(
    d: *mut pw_decoder,
    bytes: *const u8,
    len: usize,
    consumed: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (d, input, consumed) =
            unsafe { placed_bytes_in_one_out(d, bytes, len, consumed, First::Arguments) }?;
        consumed.write(d.decoder.feed(input));
        Ok(())
    })
}

/// Says the body is over: poll the last frames (calls still open, then `END`); after them
/// the decoder takes the next body.
///
/// The caller must pass `d` from `pw_decoder_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_finish(d: *mut pw_decoder) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        unsafe { placed(d, &[]) }?.decoder.finish();
        Ok(())
    })
}

/// Writes the next frame into `out` (`cap` bytes) and its length into `*len`: `PW_OK`;
/// `PW_NOTHING` (`*len` 0) when there is none until more bytes come or, after
/// `pw_decoder_finish`, when the body is done; `PW_BUFFER_TOO_SMALL` with the size needed
/// in `*len`, nothing written and nothing changed.
///
/// The caller must pass `d` from `pw_decoder_init`, not used concurrently; `out` valid for
/// writes of `cap` bytes and `len` for one write, both outside the decoder's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_poll_frame(
    d: *mut pw_decoder,
    out: *mut u8,
    cap: usize,
    len: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (d, buf, len) = unsafe { placed_poll(d, out, cap, len, First::Arguments) }?;
        crate::shared::hand_out(d.decoder.poll_frame(buf), len)
    })
}

/// Copies what the decoder skipped and the calls it saw into `*out`.
///
/// The caller must pass `d` from `pw_decoder_init`, not used concurrently, and `out` valid
/// for one write outside the decoder's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_decoder_get_stats(
    d: *const pw_decoder,
    out: *mut pw_decoder_stats,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract; only read.
        let (d, out) = unsafe { placed_one_out(d.cast_mut(), out) }?;
        let s = d.decoder.stats();
        out.write(pw_decoder_stats {
            not_json: s.not_json,
            unknown_event: s.unknown_event,
            bad_shape: s.bad_shape,
            overlong: s.overlong,
            after_end: s.after_end,
            cut: s.cut,
            calls_started: s.calls_started,
            calls_written: s.calls_written,
        });
        Ok(())
    })
}

/// The provider named `name` (`openai-chat`, `openai-responses`, `anthropic`, `gemini`,
/// `ollama`; `len` bytes), in `*out`; `PW_UNKNOWN_PROVIDER` when this build has none so named.
///
/// The caller must pass `name` valid for reads of `len` bytes and `out` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_provider_from_name(
    name: *const u8,
    len: usize,
    out: *mut raw::pw_provider,
) -> pw_result {
    ffi(|| {
        require_non_null!(name, out);
        disjoint(&[span(out.cast_const(), 1)], &[span(name, len)])?;
        // SAFETY: the caller hands `name` for `len` readable bytes.
        let name = unsafe { in_bytes(name, len) }?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        let p = Provider::from_name(name).ok_or(pw_result::PW_UNKNOWN_PROVIDER)?;
        let n = [
            pw_provider::PW_PROVIDER_OPENAI_CHAT,
            pw_provider::PW_PROVIDER_OPENAI_RESPONSES,
            pw_provider::PW_PROVIDER_ANTHROPIC,
            pw_provider::PW_PROVIDER_GEMINI,
            pw_provider::PW_PROVIDER_OLLAMA,
        ]
        .into_iter()
        .find(|&c| provider(c as u32) == Ok(p))
        .ok_or(pw_result::PW_UNKNOWN_PROVIDER)?;
        out.write(n as u32);
        Ok(())
    })
}
