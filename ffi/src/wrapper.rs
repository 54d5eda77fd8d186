//! The wrapper for C: one memory block holds it, its slots, its tool table and its arena.
//!
//! Tools, hooks and every input and output of the Rust `Wrapper` have a C twin
//! here. Values C hands in (kinds, flags, callback results) arrive as plain
//! integers and are checked, so garbage gives a code instead of undefined
//! behaviour; values the library hands out are `#[repr(C)]` structs of spans
//! into memory the host owns.

#![allow(non_camel_case_types)]

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use polyweave_tool_adapter::json::schema::Schema;
use polyweave_tool_adapter::wrapper::{CallInfo, HookEvent, HookLog, Hooks, Log, Logged, Tool};
use polyweave_tool_adapter::wrapper::{
    Completed, Disposition, Event, PendingKind, Slot, Wrapper, WrapperConfig as Config,
};
use polyweave_tool_adapter::{CallHandle, CallOutcome, Error, Instant, Output, Route, Transmit};

use crate::boundary::{
    disjoint, ffi, guard, in_bytes, out_bytes, out_slot, placed, placed_by_block_field,
    placed_bytes_in_one_out, placed_one_out, placed_poll, placed_reading, query_placed, read_in,
    require_non_null, span, with_placed, First,
};
use crate::codes::pw_result;
use crate::enums::{
    pw_completed, pw_disposition_kind, pw_output_kind, pw_pending_kind, pw_route, pw_tool_kind,
};
use crate::shared::{
    block_at, config_query, deadline_ms, pw_outcome, pw_str, write_out, Block, PW_MAX_ALIGN,
    PW_NO_TIMEOUT,
};
use crate::tool::{pw_tool, CSync, PW_TOOL_DEFAULT_TIMEOUT};

// A mirror of core's `WrapperConfig`, field for field and doc for doc: C needs a `#[repr(C)]`
// struct of its own, which cbindgen can read (it reads this crate only, and the core type
// has no C layout); the conversion beside it copies each field.
/// A wrapper's capacities and options (the Rust `Config`; `pw_wrapper_config_default` fills
/// in the defaults). Flags are 0 or 1; any other value gives `PW_BAD_CONFIG`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_wrapper_config {
    /// Timeout of deferred and adapter calls unless a tool sets its own (default 30000).
    pub tool_timeout_ms: u32,
    /// The cap on an adapter call's life when its `PROGRESS` frames restart its timeout:
    /// its deadline never passes start + this; 0, the default, turns progress restarts off.
    pub max_total_timeout_ms: u32,
    /// Continue prompts allowed, 0 for no limit (default 0).
    pub max_rounds: u32,
    /// 1: the continue prompt also goes to the consumer (default 1).
    pub mirror_continue: u8,
    /// 1: validate every frame on both paths, not only the ones the wrapper acts on (default 0).
    pub full_validation: u8,
    /// JSON depth limit of validated frames and of results from the host, at least 3 (default 32).
    pub max_depth: u8,
    /// Bytes of a decoded tool name (default 64).
    pub name_cap: usize,
    /// Bytes of a decoded call id (default 64).
    pub id_cap: usize,
    /// Bytes of a pending call's args, without white space (default 512).
    pub args_cap: usize,
    /// Bytes of a result, without white space (default 512).
    pub result_cap: usize,
    /// Bytes of an error message, at least `max(name_cap, id_cap) + 64` (default 192).
    pub message_cap: usize,
    /// Trace entries kept (default 8).
    pub trace_entries: usize,
    /// Bytes of the trace ring (default 2048).
    pub trace_bytes: usize,
    /// Bytes for `END`s held while calls are pending (default 256).
    pub held_bytes: usize,
    /// Bytes of the hook log `pw_wrapper_poll_output` hands hook events out of, in their
    /// place among the frames (default 0: no log; the hooks' functions are called either way).
    /// An event takes 28 bytes plus its name, id, args and outcome.
    pub hook_log_bytes: usize,
}

impl pw_wrapper_config {
    fn from_config(c: &Config) -> Self {
        Self {
            tool_timeout_ms: c.tool_timeout_ms,
            max_total_timeout_ms: c.max_total_timeout_ms,
            max_rounds: c.max_rounds,
            mirror_continue: c.mirror_continue.into(),
            full_validation: c.full_validation.into(),
            max_depth: c.max_depth,
            name_cap: c.name_cap,
            id_cap: c.id_cap,
            args_cap: c.args_cap,
            result_cap: c.result_cap,
            message_cap: c.message_cap,
            trace_entries: c.trace_entries,
            trace_bytes: c.trace_bytes,
            held_bytes: c.held_bytes,
            hook_log_bytes: PW_WRAPPER_DEFAULT_HOOK_LOG_BYTES,
        }
    }

    fn to_config(self) -> Result<Config, pw_result> {
        let flag = |v: u8| match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(pw_result::PW_BAD_CONFIG),
        };
        Ok(Config {
            tool_timeout_ms: self.tool_timeout_ms,
            max_total_timeout_ms: self.max_total_timeout_ms,
            mirror_continue: flag(self.mirror_continue)?,
            max_rounds: self.max_rounds,
            max_depth: self.max_depth,
            full_validation: flag(self.full_validation)?,
            name_cap: self.name_cap,
            id_cap: self.id_cap,
            args_cap: self.args_cap,
            result_cap: self.result_cap,
            message_cap: self.message_cap,
            trace_entries: self.trace_entries,
            trace_bytes: self.trace_bytes,
            held_bytes: self.held_bytes,
        })
    }
}

/// A call as the hooks see it. Spans are valid during the hook only.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_call_info {
    /// The call's index (0-based, every intercepted `TOOL_CALL` counts).
    pub index: u32,
    /// 1 when the call has a name (a malformed call has none).
    pub has_name: u8,
    /// 1 when the call has an id.
    pub has_id: u8,
    /// Frames queued (since the wrapper was made) when the hook fired: the hook comes after
    /// the `seq`-th frame `pw_wrapper_poll_transmit` hands out.
    pub seq: u64,
    /// The decoded tool name.
    pub name: pw_str,
    /// The decoded id.
    pub id: pw_str,
    /// The raw JSON args.
    pub args: pw_str,
}

/// Hooks: each function may be NULL (no hook). They must not call any function on the wrapper.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_hooks {
    /// Passed to both functions as is.
    pub userdata: *mut c_void,
    /// A `TOOL_CALL` was intercepted (before it runs).
    pub on_tool_call:
        Option<unsafe extern "C" fn(userdata: *mut c_void, call: *const pw_call_info)>,
    /// A call completed (after its `TOOL_RESULT` was queued).
    pub on_tool_result: Option<
        unsafe extern "C" fn(
            userdata: *mut c_void,
            call: *const pw_call_info,
            outcome: *const pw_outcome,
        ),
    >,
}

impl pw_call_info {
    pub(crate) fn of(c: &CallInfo<'_>) -> Self {
        Self {
            index: c.index,
            has_name: c.name.is_some().into(),
            has_id: c.id.is_some().into(),
            seq: c.seq,
            name: c.name.map_or(pw_str::EMPTY, |n| pw_str::of(n.as_bytes())),
            id: c.id.map_or(pw_str::EMPTY, |i| pw_str::of(i.as_bytes())),
            args: pw_str::of(c.args),
        }
    }
}

/// The host's hook functions, and the log that keeps their events for
/// `pw_wrapper_poll_output` (empty when `hook_log_bytes` is 0).
pub(crate) struct CHooks {
    c: pw_hooks,
    log: HookLog<'static>,
}

impl Hooks for CHooks {
    fn on_tool_call(&mut self, call: &CallInfo<'_>) {
        self.c.on_tool_call(call);
        if self.log.capacity() > 0 {
            self.log.on_tool_call(call);
        }
    }

    fn on_tool_result(&mut self, call: &CallInfo<'_>, outcome: CallOutcome<'_>) {
        self.c.on_tool_result(call, outcome);
        if self.log.capacity() > 0 {
            self.log.on_tool_result(call, outcome);
        }
    }
}

impl Log for CHooks {
    fn oldest(&self) -> Option<Logged<'_>> {
        self.log.oldest()
    }
    fn drop_oldest(&mut self) {
        self.log.drop_oldest()
    }
}

impl Hooks for pw_hooks {
    fn on_tool_call(&mut self, call: &CallInfo<'_>) {
        if let Some(f) = self.on_tool_call {
            let info = pw_call_info::of(call);
            // SAFETY: the host gave this function and userdata for this use (pw_wrapper_init);
            // `info` lives across the call.
            unsafe { f(self.userdata, &info) }
        }
    }

    fn on_tool_result(&mut self, call: &CallInfo<'_>, outcome: CallOutcome<'_>) {
        if let Some(f) = self.on_tool_result {
            let (info, outcome) = (pw_call_info::of(call), pw_outcome::of(outcome));
            // SAFETY: as in `on_tool_call`; both structs live across the call.
            unsafe { f(self.userdata, &info, &outcome) }
        }
    }
}

/// A wrapper in host memory (opaque).
pub struct pw_wrapper {
    pub(crate) wrapper: Wrapper<'static, CHooks>,
    /// Address and length of the whole block (inputs must not overlap it).
    block: (usize, usize),
}

/// A call handle: names a pending deferred or adapter call of one wrapper. Pass it by value.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct pw_call_handle {
    /// The call's index.
    pub index: u32,
    /// Its slot.
    pub slot: u16,
    /// Always 0.
    pub reserved: u16,
    /// The wrapper that issued it (its address, as a number).
    pub owner: usize,
}

impl pw_call_handle {
    fn new(w: *const pw_wrapper, h: CallHandle) -> Self {
        Self {
            index: h.index(),
            slot: h.slot(),
            reserved: 0,
            owner: w.addr(),
        }
    }
}

/// Where the pieces of a wrapper's memory block start, for a configuration.
struct Layout {
    slots: usize,
    tools: usize,
    syncs: usize,
    schemas: usize,
    arena: usize,
    arena_len: usize,
    log: usize,
    log_len: usize,
    total: usize,
}

/// `pw_wrapper_config_default`'s `name_cap`: with the other `PW_WRAPPER_DEFAULT_*`
/// capacities, the configuration `PW_WRAPPER_DEFAULT_SIZE_BOUND` sizes.
pub const PW_WRAPPER_DEFAULT_NAME_CAP: usize = 64;
/// `pw_wrapper_config_default`'s `id_cap`.
pub const PW_WRAPPER_DEFAULT_ID_CAP: usize = 64;
/// `pw_wrapper_config_default`'s `args_cap`.
pub const PW_WRAPPER_DEFAULT_ARGS_CAP: usize = 512;
/// `pw_wrapper_config_default`'s `result_cap`.
pub const PW_WRAPPER_DEFAULT_RESULT_CAP: usize = 512;
/// `pw_wrapper_config_default`'s `message_cap`.
pub const PW_WRAPPER_DEFAULT_MESSAGE_CAP: usize = 192;
/// `pw_wrapper_config_default`'s `trace_bytes`.
pub const PW_WRAPPER_DEFAULT_TRACE_BYTES: usize = 2048;
/// `pw_wrapper_config_default`'s `held_bytes`.
pub const PW_WRAPPER_DEFAULT_HELD_BYTES: usize = 256;
/// `pw_wrapper_config_default`'s `hook_log_bytes`.
pub const PW_WRAPPER_DEFAULT_HOOK_LOG_BYTES: usize = 0;

const _: () = {
    let d = Config::DEFAULT;
    assert!(d.name_cap == PW_WRAPPER_DEFAULT_NAME_CAP && d.id_cap == PW_WRAPPER_DEFAULT_ID_CAP);
    assert!(d.args_cap == PW_WRAPPER_DEFAULT_ARGS_CAP);
    assert!(d.result_cap == PW_WRAPPER_DEFAULT_RESULT_CAP);
    assert!(d.message_cap == PW_WRAPPER_DEFAULT_MESSAGE_CAP);
    assert!(d.trace_bytes == PW_WRAPPER_DEFAULT_TRACE_BYTES);
    assert!(d.held_bytes == PW_WRAPPER_DEFAULT_HELD_BYTES);
};

/// An upper bound, on every target, of what a wrapper's block holds besides its slots, tools
/// and arena (the wrapper itself and the alignment between the parts): for static storage,
/// with `PW_WRAPPER_SIZE_BOUND` (checked when the library is compiled for each target).
pub const PW_WRAPPER_MAX_BASE_SIZE: usize = 640;
/// An upper bound, on every target, of the block's bytes per pending-call slot (besides its
/// share of the arena).
pub const PW_WRAPPER_MAX_SLOT_SIZE: usize = 64;
/// An upper bound, on every target, of the block's bytes per registered tool.
pub const PW_WRAPPER_MAX_TOOL_SIZE: usize = 128;

// The padding before each of the four typed arrays (slots, tools, syncs, schemas): under 8.
const _: () = assert!(size_of::<pw_wrapper>() + 4 * 7 <= PW_WRAPPER_MAX_BASE_SIZE);
const _: () = assert!(size_of::<Slot>() <= PW_WRAPPER_MAX_SLOT_SIZE);
const _: () = assert!(
    size_of::<Tool<'static>>() + size_of::<CSync>() + size_of::<Schema<'static>>()
        <= PW_WRAPPER_MAX_TOOL_SIZE
);
const _: () =
    assert!(align_of::<pw_wrapper>() <= PW_MAX_ALIGN && align_of::<Slot>() <= PW_MAX_ALIGN);
const _: () = assert!(align_of::<Schema<'static>>() <= PW_MAX_ALIGN);

impl Layout {
    fn of(cfg: &Config, log_len: usize, slots: usize, tools: usize) -> Option<Self> {
        let arena_len = cfg.arena_len(slots);
        let mut block = Block::starting_with::<pw_wrapper>();
        Some(Self {
            slots: block.array::<Slot>(slots)?,
            tools: block.array::<Tool<'static>>(tools)?,
            syncs: block.array::<CSync>(tools)?,
            schemas: block.array::<Schema<'static>>(tools)?,
            arena: block.bytes(arena_len)?,
            arena_len,
            log: block.bytes(log_len)?,
            log_len,
            total: block.len(),
        })
    }
}

/// The size of the memory block `pw_wrapper_init` needs for `cfg`, `slots` pending calls and
/// `n_tools` tools (everything the wrapper uses lives in it). A configuration out of range
/// gives `PW_BAD_CONFIG`.
///
/// The caller must pass `cfg` valid for one read and `out_size` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_size(
    cfg: *const pw_wrapper_config,
    slots: usize,
    n_tools: usize,
    out_size: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_size` for one write.
    unsafe {
        config_query(cfg, out_size, read_config, |(c, log_len)| match Layout::of(
            &c, log_len, slots, n_tools,
        ) {
            Some(l) if l.arena_len != usize::MAX => Ok(l.total),
            _ => Err(pw_result::PW_BAD_CONFIG),
        })
    }
}

/// The alignment the memory block for `pw_wrapper_init` needs (a power of two).
#[unsafe(no_mangle)]
pub extern "C" fn pw_wrapper_align() -> usize {
    guard(0, || {
        align_of::<pw_wrapper>()
            .max(align_of::<Slot>())
            .max(align_of::<Tool<'static>>())
            .max(align_of::<CSync>())
            .max(align_of::<Schema<'static>>())
    })
}

/// The longest frame `pw_wrapper_poll_transmit` can hand out for `cfg`, in `*out_len`: an
/// output buffer this long is never refused with `PW_BUFFER_TOO_SMALL`. A configuration out
/// of range gives `PW_BAD_CONFIG`.
///
/// The caller must hand `cfg` for one read and `out_len` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_max_frame_len(
    cfg: *const pw_wrapper_config,
    out_len: *mut usize,
) -> pw_result {
    // SAFETY: the caller hands `cfg` for one read and `out_len` for one write.
    unsafe {
        config_query(cfg, out_len, read_config, |(c, _)| {
            match c.max_frame_len() {
                usize::MAX => Err(pw_result::PW_BAD_CONFIG),
                n => Ok(n),
            }
        })
    }
}

/// Fills `*out` with the defaults (SPEC §3, §5; capacities for a small microcontroller).
///
/// The caller must pass `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_config_default(out: *mut pw_wrapper_config) -> pw_result {
    // SAFETY: the caller hands `out` for one write.
    unsafe { write_out(out, pw_wrapper_config::from_config(&Config::DEFAULT)) }
}

/// Reads and checks a configuration.
///
/// # Safety
///
/// A non-NULL `cfg` must be valid for one read.
pub(crate) unsafe fn read_config(
    cfg: *const pw_wrapper_config,
) -> Result<(Config, usize), pw_result> {
    // SAFETY: readable for one read when non-NULL (caller); integer fields only.
    let c = unsafe { read_in(cfg) }?;
    Ok((c.to_config()?, c.hook_log_bytes))
}

/// Places a wrapper in `mem` (at least `pw_wrapper_size(cfg, slots, n_tools)` bytes, aligned to
/// `pw_wrapper_align()`) and sets `*out` to it. The tools are copied into the block but their
/// names and schemas are borrowed; `hooks` is copied. A schema the validator refuses gives
/// `PW_BAD_SCHEMA` before anything is written (`pw_schema_check` says why); so is an index
/// (`pw_tool.schema_index`) too small (`PW_STORAGE_TOO_SMALL`), misaligned
/// (`PW_STORAGE_MISALIGNED`) or over other memory (`PW_STORAGE_OVERLAP`). On any error
/// nothing is written to `*out`.
///
/// The caller must pass `mem` valid for writes of `mem_len` bytes for as long as the wrapper is
/// used and touched by nothing else meanwhile; `cfg` and `hooks` valid for one read; `tools`
/// for `n_tools` reads, each name for `name.len` reads and each schema for `schema.len` reads
/// for as long as the wrapper is used, and each non-NULL `schema_index` for
/// `schema_index_words` reads and writes, touched by nothing else, for as long; `out` for one
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_init(
    mem: *mut c_void,
    mem_len: usize,
    cfg: *const pw_wrapper_config,
    slots: usize,
    tools: *const pw_tool,
    n_tools: usize,
    hooks: *const pw_hooks,
    out: *mut *mut pw_wrapper,
) -> pw_result {
    ffi(|| {
        require_non_null!(mem, cfg, tools, hooks, out);
        // SAFETY: the caller hands `cfg` for one read.
        let (config, log_len) = unsafe { read_config(cfg) }?;
        let layout =
            Layout::of(&config, log_len, slots, n_tools).ok_or(pw_result::PW_BAD_CONFIG)?;
        let block = block_at(mem, mem_len, layout.total, pw_wrapper_align())?;
        if !tools.is_aligned() || !hooks.is_aligned() {
            return Err(pw_result::PW_STORAGE_MISALIGNED);
        }
        disjoint(
            &[block, span(out, 1)],
            &[span(tools, n_tools), span(hooks, 1), span(cfg, 1)],
        )?;
        // SAFETY: the caller hands `out` for one write.
        let out = unsafe { out_slot(out) }?;
        // SAFETY: the caller hands `tools` for `n_tools` reads, aligned (checked).
        let regs = unsafe { core::slice::from_raw_parts(tools, n_tools) };
        // Every schema and index first, so that one refused leaves the block as it was.
        for (i, t) in regs.iter().enumerate() {
            let index = span(t.schema_index, t.schema_index_words);
            if !t.schema_index.is_null() {
                if !t.schema_index.is_aligned() {
                    return Err(pw_result::PW_STORAGE_MISALIGNED);
                }
                // An index is written: it shares no byte with anything the wrapper reads or
                // writes: any tool's name or schema, or another tool's index.
                for (j, o) in regs.iter().enumerate() {
                    let other = match j < i {
                        true => span(o.schema_index, o.schema_index_words),
                        false => (0, 0),
                    };
                    disjoint(
                        &[index, other],
                        &[
                            span(o.schema.ptr, o.schema.len),
                            span(o.name.ptr, o.name.len),
                        ],
                    )?;
                }
                disjoint(
                    &[index, block, span(out, 1)],
                    &[span(tools, n_tools), span(hooks, 1), span(cfg, 1)],
                )?;
            }
            // SAFETY: the caller keeps each schema readable for as long as the wrapper is used.
            if let Some(schema) = unsafe { tool_schema(t) }? {
                if !t.schema_index.is_null() {
                    let needed = schema
                        .index_words()
                        .map_err(|_| pw_result::PW_BAD_ARGUMENT)?;
                    if t.schema_index_words < needed {
                        return Err(pw_result::PW_STORAGE_TOO_SMALL);
                    }
                }
            }
        }
        // SAFETY: the caller hands `hooks` for one read, aligned (checked); any bits are valid.
        let hooks = unsafe { hooks.read() };
        let base = mem.cast::<u8>();
        // SAFETY: `mem` holds `layout.total` bytes (checked) aligned to `pw_wrapper_align()`,
        // which every part's offset respects; the parts do not overlap; the caller gives the
        // block to the wrapper for as long as it is used ('static here).
        let (slot_mem, tool_mem, sync_mem, schema_mem, arena, log) = unsafe {
            (
                core::slice::from_raw_parts_mut(base.add(layout.slots).cast::<Slot>(), slots),
                base.add(layout.tools).cast::<Tool<'static>>(),
                base.add(layout.syncs).cast::<CSync>(),
                base.add(layout.schemas).cast::<Schema<'static>>(),
                out_bytes(base.add(layout.arena), layout.arena_len)?,
                out_bytes(base.add(layout.log), layout.log_len)?,
            )
        };
        slot_mem.fill(Slot::EMPTY);
        for (i, t) in regs.iter().enumerate() {
            // SAFETY: the caller keeps each name readable for as long as the wrapper is used.
            let name = unsafe { in_bytes(t.name.ptr, t.name.len) }?;
            let name = core::str::from_utf8(name).map_err(|_| pw_result::PW_BAD_TOOL)?;
            const SYNC: u32 = pw_tool_kind::PW_TOOL_KIND_SYNC as u32;
            const DEFERRED: u32 = pw_tool_kind::PW_TOOL_KIND_DEFERRED as u32;
            const ADAPTER: u32 = pw_tool_kind::PW_TOOL_KIND_ADAPTER as u32;
            let tool = match (t.kind, t.call) {
                (SYNC, Some(call)) => {
                    // SAFETY: slot `i` of the sync table is in the block (layout) and written once.
                    let sync: &'static CSync = unsafe {
                        let at = sync_mem.add(i);
                        at.write(CSync {
                            call,
                            userdata: t.userdata,
                        });
                        &*at
                    };
                    Tool::sync(name, sync)
                }
                (DEFERRED, _) => Tool::deferred(name),
                (ADAPTER, _) => Tool::adapter(name),
                _ => return Err(pw_result::PW_BAD_TOOL),
            };
            let tool = match t.timeout_ms {
                PW_TOOL_DEFAULT_TIMEOUT => tool,
                ms => tool.with_timeout_ms(ms),
            };
            // SAFETY: as in the first pass over the schemas.
            let tool = match unsafe { tool_schema(t) }? {
                Some(schema) => {
                    let schema = match t.schema_index.is_null() {
                        true => schema,
                        false => {
                            // SAFETY: the caller hands `schema_index` for `schema_index_words`
                            // writes for the wrapper's life, aligned and apart from everything
                            // else (checked in the first pass, as is its size).
                            let words = unsafe {
                                core::slice::from_raw_parts_mut(
                                    t.schema_index,
                                    t.schema_index_words,
                                )
                            };
                            schema
                                .indexed(words)
                                .map_err(|_| pw_result::PW_STORAGE_TOO_SMALL)?
                        }
                    };
                    // SAFETY: slot `i` of the schema table is in the block (layout) and written
                    // once.
                    let schema: &'static Schema<'static> = unsafe {
                        let at = schema_mem.add(i);
                        at.write(schema);
                        &*at
                    };
                    tool.with_schema(schema)
                }
                None => tool,
            };
            // SAFETY: entry `i` of the tool table is in the block (layout).
            unsafe { tool_mem.add(i).write(tool) };
        }
        // SAFETY: the first `n_tools` entries were written just above.
        let table: &'static [Tool<'static>] =
            unsafe { core::slice::from_raw_parts(tool_mem, n_tools) };
        let hooks = CHooks {
            c: hooks,
            log: HookLog::new(log),
        };
        let wrapper = Wrapper::new(config, table, hooks, slot_mem, arena)?;
        let state = mem.cast::<pw_wrapper>();
        // SAFETY: `state` is at the block's start, aligned and in bounds (checked); the old
        // contents, if any, need no drop.
        unsafe { state.write(pw_wrapper { wrapper, block }) };
        out.write(state);
        Ok(())
    })
}

/// A registration's schema read by the validator: `None` for length 0, `PW_BAD_SCHEMA` for
/// one it refuses.
///
/// # Safety
///
/// A non-empty `t.schema` must be readable for its length for `'static` (the wrapper's life).
unsafe fn tool_schema(t: &pw_tool) -> Result<Option<Schema<'static>>, pw_result> {
    if t.schema.len == 0 {
        return Ok(None);
    }
    // SAFETY: as the function's contract.
    let text = unsafe { in_bytes(t.schema.ptr, t.schema.len) }?;
    Schema::new(text)
        .map(Some)
        .map_err(|_| pw_result::PW_BAD_SCHEMA)
}

impl pw_wrapper {
    /// The hook log's counters: events kept cut, events dropped.
    pub(crate) fn hook_log_counts(&mut self) -> (u32, u32) {
        let log = &self.wrapper.hooks_mut().log;
        (log.cut(), log.dropped())
    }
}

placed_by_block_field!(pw_wrapper);

/// The Rust handle for a C one, if this wrapper issued it.
fn handle_of(w: &pw_wrapper, h: pw_call_handle) -> Result<CallHandle, pw_result> {
    if h.owner != core::ptr::from_ref(w).addr() {
        return Err(pw_result::PW_CALL_FOREIGN);
    }
    Ok(CallHandle::from_parts(h.slot, h.index))
}

/// The body of the entries that act on one pending call at `now_ms`: `w` placed, `handle`
/// one of its own, then `act`.
///
/// # Safety
///
/// As `pw_wrapper_handle_adapter_closed`'s contract.
unsafe fn on_call(
    w: *mut pw_wrapper,
    now_ms: u64,
    handle: pw_call_handle,
    act: fn(&mut Wrapper<'static, CHooks>, Instant, CallHandle) -> Result<(), Error>,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let w = unsafe { placed(w, &[]) }?;
        let h = handle_of(w, handle)?;
        act(&mut w.wrapper, Instant::from_millis(now_ms), h)?;
        Ok(())
    })
}

/// What the host must do with a model frame it passed in.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_disposition {
    /// What to do with the frame.
    pub kind: pw_disposition_kind,
    /// For `PW_DISPOSITION_INTERCEPTED`: the call's index.
    pub index: u32,
    /// For `PW_DISPOSITION_INTERCEPTED`: 1 when the call is pending (deferred or adapter) and `handle` names it.
    pub has_handle: u8,
    /// The pending call's handle.
    pub handle: pw_call_handle,
}

/// A frame from the model (response path): intercepts `TOOL_CALL`, holds `END` while calls are
/// pending, and says what to do with the bytes in `*out`. `now_ms` starts a `TOOL_CALL`'s
/// deadline; for any other frame it only moves the wrapper's clock, so the last time given
/// serves as well as a new reading.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently; `bytes` valid for
/// `len` reads, outside the wrapper's block; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_handle_response(
    w: *mut pw_wrapper,
    now_ms: u64,
    bytes: *const u8,
    len: usize,
    out: *mut pw_disposition,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (w, input, out) =
            unsafe { placed_bytes_in_one_out(w, bytes, len, out, First::Object) }?;
        let me = core::ptr::from_ref(w);
        let d = w
            .wrapper
            .handle_response(Instant::from_millis(now_ms), input)?;
        let none = pw_call_handle::new(me, CallHandle::from_parts(0, 0));
        out.write(match d {
            Disposition::Forward => pw_disposition {
                kind: pw_disposition_kind::PW_DISPOSITION_FORWARD,
                index: 0,
                has_handle: 0,
                handle: none,
            },
            Disposition::Held => pw_disposition {
                kind: pw_disposition_kind::PW_DISPOSITION_HELD,
                index: 0,
                has_handle: 0,
                handle: none,
            },
            Disposition::Intercepted { index, handle } => pw_disposition {
                kind: pw_disposition_kind::PW_DISPOSITION_INTERCEPTED,
                index,
                has_handle: handle.is_some().into(),
                handle: pw_call_handle::new(me, handle.unwrap_or(CallHandle::from_parts(0, 0))),
            },
        });
        Ok(())
    })
}

/// A frame from the consumer (request path): `PW_OK` means forward it; malformed frames are
/// refused with their code.
///
/// The caller must pass what `pw_wrapper_handle_response` needs, without `out`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_handle_request(
    w: *mut pw_wrapper,
    now_ms: u64,
    bytes: *const u8,
    len: usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (w, input) = unsafe { placed_reading(w, bytes, len) }?;
        w.wrapper
            .handle_request(Instant::from_millis(now_ms), input)?;
        Ok(())
    })
}

/// Completes a deferred call: with a raw JSON result (`outcome->is_error` 0) or an error
/// message (1). `*completed` says whether the call completed as given or failed because the
/// result could not be carried. A result that is not JSON is refused (`PW_INVALID_RESULT`).
///
/// The caller must pass `w` as for `pw_wrapper_handle_response`; `outcome` valid for one read
/// and its text for `text.len` reads, outside the wrapper's block; `completed` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_complete(
    w: *mut pw_wrapper,
    now_ms: u64,
    handle: pw_call_handle,
    outcome: *const pw_outcome,
    completed: *mut pw_completed,
) -> pw_result {
    ffi(|| {
        require_non_null!(w, outcome, completed);
        if !outcome.is_aligned() {
            return Err(pw_result::PW_STORAGE_MISALIGNED);
        }
        // SAFETY: non-NULL, aligned (checked), readable (caller); any bits are valid.
        let o = unsafe { outcome.read() };
        let reads = [span(outcome, 1), span(o.text.ptr, o.text.len)];
        // SAFETY: as the function's contract.
        let w = unsafe { placed(w, &[reads[0], reads[1], span(completed, 1)]) }?;
        disjoint(&[span(completed, 1)], &reads)?;
        // SAFETY: the caller hands the text for `len` reads and `completed` for one write.
        let (text, completed) =
            unsafe { (in_bytes(o.text.ptr, o.text.len)?, out_slot(completed)?) };
        let h = handle_of(w, handle)?;
        let given = match o.is_error {
            0 => Ok(text),
            1 => Err(core::str::from_utf8(text).map_err(|_| pw_result::PW_INVALID_UTF8)?),
            _ => return Err(pw_result::PW_BAD_ARGUMENT),
        };
        let how = w.wrapper.complete(Instant::from_millis(now_ms), h, given)?;
        completed.write(match how {
            Completed::ResultTooLarge { .. } => pw_completed::PW_COMPLETED_RESULT_TOO_LARGE,
            Completed::ResultTooDeep { .. } => pw_completed::PW_COMPLETED_RESULT_TOO_DEEP,
            Completed::MessageCut { .. } => pw_completed::PW_COMPLETED_MESSAGE_CUT,
            _ => pw_completed::PW_COMPLETED_AS_GIVEN,
        });
        Ok(())
    })
}

/// Fails a deferred call whose result the host could not write as JSON, with the library's
/// own text for it, `Tool <name> returned invalid JSON` (what a sync tool's invalid output
/// gets), so a host or binding never composes it. Refused as `pw_wrapper_complete` is when
/// the call is not waiting.
///
/// The caller must pass `w` as for `pw_wrapper_handle_request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_complete_unwritable(
    w: *mut pw_wrapper,
    now_ms: u64,
    handle: pw_call_handle,
) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { on_call(w, now_ms, handle, Wrapper::complete_unwritable) }
}

/// A frame from a pending adapter call's tool adapter (validated whole; SPEC §2 rules).
///
/// The caller must pass what `pw_wrapper_handle_request` needs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_handle_adapter_frame(
    w: *mut pw_wrapper,
    now_ms: u64,
    handle: pw_call_handle,
    bytes: *const u8,
    len: usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (w, input) = unsafe { placed_reading(w, bytes, len) }?;
        let h = handle_of(w, handle)?;
        w.wrapper
            .handle_adapter_frame(Instant::from_millis(now_ms), h, input)?;
        Ok(())
    })
}

/// The tool adapter of a pending call closed its source: the call ends as at an `END`.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_handle_adapter_closed(
    w: *mut pw_wrapper,
    now_ms: u64,
    handle: pw_call_handle,
) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe { on_call(w, now_ms, handle, Wrapper::handle_adapter_closed) }
}

/// Gives the clock: calls at or past their deadline fail with a timeout (adapters get
/// `CANCEL` first). With a full queue some stay due: drain and call again.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_handle_timeout(w: *mut pw_wrapper, now_ms: u64) -> pw_result {
    // SAFETY: as the function's contract.
    unsafe {
        with_placed(w, |w| {
            w.wrapper.handle_timeout(Instant::from_millis(now_ms))
        })
    }
}

/// Completes every pending call, oldest first, with `Tool <name> cancelled: <reason>`
/// (adapters get `CANCEL` first). `*left` is how many are still pending because the queue
/// filled up first: drain and call again until it is 0.
///
/// The caller must pass `w` as for `pw_wrapper_handle_response`; `reason` valid for `len` reads
/// (UTF-8), outside the wrapper's block; `left` for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_cancel(
    w: *mut pw_wrapper,
    now_ms: u64,
    reason: *const u8,
    len: usize,
    left: *mut usize,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (w, reason, left) =
            unsafe { placed_bytes_in_one_out(w, reason, len, left, First::Object) }?;
        let reason = core::str::from_utf8(reason).map_err(|_| pw_result::PW_INVALID_UTF8)?;
        left.write(w.wrapper.cancel(Instant::from_millis(now_ms), reason)?);
        Ok(())
    })
}

/// Stops every later continue prompt (held `END`s are still released).
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_abort(w: *mut pw_wrapper) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        unsafe { placed(w, &[]) }?.wrapper.abort();
        Ok(())
    })
}

/// Forgets the trace.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_clear_trace(w: *mut pw_wrapper) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        unsafe { placed(w, &[]) }?.wrapper.clear_trace();
        Ok(())
    })
}

/// A frame to write, and where.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_transmit {
    /// `PW_ROUTE_MODEL`, `PW_ROUTE_CONSUMER` or `PW_ROUTE_ADAPTER`.
    pub route: pw_route,
    /// For `PW_ROUTE_ADAPTER`: the call whose adapter gets the frame.
    pub handle: pw_call_handle,
    /// The frame's length in the buffer (or, with `PW_BUFFER_TOO_SMALL`, the length needed).
    pub len: usize,
}

/// Writes the oldest queued frame into `buf` and fills `*out`: `PW_OK`, or `PW_NOTHING` when
/// the queue is empty. A buffer too small gives `PW_BUFFER_TOO_SMALL` with the needed length in
/// `out->len`; the frame stays queued.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently; `buf` valid for
/// `cap` writes and `out` for one, apart from each other and from the wrapper's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_poll_transmit(
    w: *mut pw_wrapper,
    buf: *mut u8,
    cap: usize,
    out: *mut pw_transmit,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (w, buf, out) = unsafe { placed_poll(w, buf, cap, out, First::Object) }?;
        let me = core::ptr::from_ref(w);
        match w.wrapper.poll_transmit(buf) {
            Ok(Some(t)) => {
                out.write(pw_transmit::of(me, t));
                Ok(())
            }
            Ok(None) => Err(pw_result::PW_NOTHING),
            Err(e) => {
                out.write(pw_transmit::too_small(me, e.needed));
                Err(pw_result::PW_BUFFER_TOO_SMALL)
            }
        }
    })
}

impl pw_transmit {
    /// The C form of a frame `w` handed out.
    #[inline(always)]
    pub(crate) fn of(w: *const pw_wrapper, t: Transmit) -> Self {
        let none = pw_call_handle::new(w, CallHandle::from_parts(0, 0));
        let (route, handle) = match t.route {
            Route::Model => (pw_route::PW_ROUTE_MODEL, none),
            Route::Consumer => (pw_route::PW_ROUTE_CONSUMER, none),
            Route::Adapter(h) => (pw_route::PW_ROUTE_ADAPTER, pw_call_handle::new(w, h)),
        };
        Self {
            route,
            handle,
            len: t.len,
        }
    }

    /// What a refusal for a short buffer reports: the length needed.
    pub(crate) fn too_small(w: *const pw_wrapper, needed: usize) -> Self {
        Self {
            route: pw_route::PW_ROUTE_MODEL,
            handle: pw_call_handle::new(w, CallHandle::from_parts(0, 0)),
            len: needed,
        }
    }
}

/// A call the host must start. Spans point into the wrapper's block and are valid until the
/// next call that changes the wrapper.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_event {
    /// Its handle.
    pub handle: pw_call_handle,
    /// How the call runs.
    pub kind: pw_pending_kind,
    /// 1 when the call has an id.
    pub has_id: u8,
    /// Index of its tool in the registration array.
    pub tool: usize,
    /// The tool name.
    pub name: pw_str,
    /// The call id.
    pub id: pw_str,
    /// Raw JSON args, without white space between tokens.
    pub args: pw_str,
}

/// The next call the host must start, oldest first: `PW_OK` with `*out`, or `PW_NOTHING`.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently; `out` valid for one
/// write, outside the wrapper's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_poll_event(
    w: *mut pw_wrapper,
    out: *mut pw_event,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract.
        let (w, out) = unsafe { placed_one_out(w, out) }?;
        let me = core::ptr::from_ref(w);
        let Some(Event::CallStarted {
            handle,
            kind,
            tool,
            name,
            id,
            args,
        }) = w.wrapper.poll_event()
        else {
            return Err(pw_result::PW_NOTHING);
        };
        out.write(pw_event {
            handle: pw_call_handle::new(me, handle),
            kind: match kind {
                PendingKind::Adapter => pw_pending_kind::PW_PENDING_ADAPTER,
                PendingKind::Deferred => pw_pending_kind::PW_PENDING_DEFERRED,
            },
            has_id: id.is_some().into(),
            tool,
            name: pw_str::of(name.as_bytes()),
            id: id.map_or(pw_str::EMPTY, |i| pw_str::of(i.as_bytes())),
            args: pw_str::of(args),
        });
        Ok(())
    })
}

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
        let (w, buf, out) = unsafe { placed_poll(w, buf, cap, out, First::Object) }?;
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

/// The earliest deadline (ms) of a pending call: call `pw_wrapper_handle_timeout` then.
/// `PW_NO_TIMEOUT` when nothing is pending.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_poll_timeout(w: *const pw_wrapper) -> u64 {
    // SAFETY: as the function's contract.
    unsafe { query_placed(w, PW_NO_TIMEOUT, |w| deadline_ms(w.wrapper.poll_timeout())) }
}

/// Calls intercepted and not yet completed (0 for a NULL or misaligned wrapper).
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_pending(w: *const pw_wrapper) -> usize {
    // SAFETY: as the function's contract.
    unsafe { query_placed(w, 0, |w| w.wrapper.pending()) }
}

/// One trace entry. Spans point into the wrapper's block and are valid until the next call
/// that changes the wrapper.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct pw_trace_entry {
    /// 1 when the call had a name.
    pub has_name: u8,
    /// 1 when some part was cut to fit the trace (args or result are then not whole JSON).
    pub truncated: u8,
    /// The tool name.
    pub name: pw_str,
    /// Raw JSON args.
    pub args: pw_str,
    /// The result or error.
    pub outcome: pw_outcome,
}

/// Trace entry `index` (0 = oldest): `PW_OK` with `*out`, or `PW_NOTHING` past the last.
///
/// The caller must pass `w` from `pw_wrapper_init`, not used concurrently; `out` valid for one
/// write, outside the wrapper's block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pw_wrapper_trace_entry(
    w: *const pw_wrapper,
    index: usize,
    out: *mut pw_trace_entry,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract; only read.
        let (w, out) = unsafe { placed_one_out(w.cast_mut(), out) }?;
        let e = w
            .wrapper
            .trace()
            .iter()
            .nth(index)
            .ok_or(pw_result::PW_NOTHING)?;
        out.write(pw_trace_entry {
            has_name: e.name.is_some().into(),
            truncated: e.truncated.into(),
            name: e.name.map_or(pw_str::EMPTY, |n| pw_str::of(n.as_bytes())),
            args: pw_str::of(e.args),
            outcome: pw_outcome::of(e.outcome),
        });
        Ok(())
    })
}

/// Counters of what a wrapper cut or could not keep, rather than lose silently.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct pw_wrapper_stats {
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
pub unsafe extern "C" fn pw_wrapper_get_stats(
    w: *const pw_wrapper,
    out: *mut pw_wrapper_stats,
) -> pw_result {
    ffi(|| {
        // SAFETY: as the function's contract; only read.
        let (w, out) = unsafe { placed_one_out(w.cast_mut(), out) }?;
        let s = w.wrapper.stats();
        let (cut, dropped) = w.hook_log_counts();
        out.write(pw_wrapper_stats {
            rounds: s.rounds,
            messages_truncated: s.messages_truncated,
            last_error_truncated: s.last_error_truncated,
            hook_events_cut: cut,
            hook_events_dropped: dropped,
        });
        Ok(())
    })
}
