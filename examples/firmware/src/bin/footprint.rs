//! Footprint probe: the least program that uses the core, for `footprint.sh` to measure.
//!
//! The same shell as the firmware (embassy executor, SysTick time driver, defmt over
//! semihosting) runs one short conversation: a `Wrapper` with the small configuration and
//! 4 slots takes `TEXT`, one `TOOL_CALL` for a sync tool and `END` through a `LineSplitter`,
//! and its frames are drained. Built with the feature `no-wrapper`, the same program never
//! constructs or calls the `Wrapper` or the `LineSplitter`: the difference in `text` between
//! the two builds is the core's own flash cost. Both builds paint the stack at start and print
//! its high-water mark at the end, and print the RAM figures of the configurations. With a
//! `decode-*` feature it also runs a stream decoder, with `mcp-client` the MCP client, each on
//! bytes in memory, for their flash (the build with the feature minus the one without), state
//! and stack. With a `request-*` feature it writes the next request after a recorded response
//! instead of the decoder's run (its own decoder replaces that one): the conversation and the
//! request writer's flash is that build minus the `decode-*` one, and its bodies must be the
//! host's. With `schema-check` a tool carries an input schema (SPEC §11): calls with valid and
//! invalid args, and the worst schema the default `Limits` let through, for the stack.

#![no_std]
#![no_main]

#[path = "../time_driver.rs"]
mod time_driver;

use core::sync::atomic::{AtomicUsize, Ordering};

use cortex_m_semihosting::debug;
use defmt::{error, info};
use defmt_semihosting as _;
use embassy_executor::Spawner;
use polyweave_tool_adapter::{Slot, Wrapper, WrapperConfig};

/// Pending calls the small configuration holds.
const SLOTS: usize = 4;
/// The small configuration of the RAM table in core/DESIGN.md ("Footprint on a Cortex-M4F").
const SMALL: WrapperConfig = WrapperConfig::SMALL;
const SMALL_ARENA: usize = SMALL.arena_len(SLOTS);
const DEFAULT_ARENA: usize = WrapperConfig::DEFAULT.arena_len(SLOTS);

/// Where a configuration's arena goes, region by region, in the order the core carves it:
/// slots, scratch, last tool error, trace, held frames, output queue.
const fn regions(c: &WrapperConfig, pending: usize) -> [usize; 6] {
    let slots = pending * (c.name_cap + c.id_cap + c.args_cap + c.result_cap);
    let sync_area = if c.result_cap > c.message_cap {
        c.result_cap
    } else {
        c.message_cap
    };
    let scratch = c.name_cap + c.id_cap + c.message_cap + sync_area;
    [
        slots,
        scratch,
        c.message_cap,
        c.trace_bytes,
        c.held_bytes,
        c.queue_len(pending),
    ]
}

/// What the model says: text, one call to the sync tool, the end of the round.
const STREAM: &[u8] = br#"{"type":"TEXT","content":"hi"}
{"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{"a":2,"b":40}}}
{"type":"END"}
"#;

/// The word painted over the free stack; the first one found changed marks the high water.
const PAINT: u32 = 0xDEAD_BEEF;
/// Bytes painted below the stack pointer at start (the 4 MiB of RAM leave plenty of room).
const PAINT_BYTES: usize = 64 * 1024;

/// The lowest painted word, set by `paint_stack`.
static PAINTED_BOTTOM: AtomicUsize = AtomicUsize::new(0);

extern "C" {
    /// The top of the stack (cortex-m-rt's link.x: the end of RAM).
    static _stack_start: u32;
}

defmt::timestamp!("{=u64:ms}", embassy_time::Instant::now().as_millis());

/// Paints `PAINT_BYTES` below the current stack pointer (less a margin for this function).
fn paint_stack() {
    let sp = cortex_m::register::msp::read() as usize;
    let top = (sp - 256) & !3;
    let mut p = top - PAINT_BYTES;
    // The measurement may run at another depth: it starts from where the paint starts.
    PAINTED_BOTTOM.store(p, Ordering::Relaxed);
    while p < top {
        // SAFETY: free RAM below the stack pointer, word-aligned, nothing else uses it yet.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// Bytes of stack ever used, from its top down to the lowest word no longer painted.
fn stack_high_water() -> usize {
    let start = core::ptr::addr_of!(_stack_start) as usize;
    let sp = cortex_m::register::msp::read() as usize;
    let mut p = PAINTED_BOTTOM.load(Ordering::Relaxed);
    // SAFETY: the painted region, word-aligned.
    while p < sp && unsafe { core::ptr::read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    start - p
}

/// Bytes of stack in use now, from its top down to the stack pointer.
#[cfg(probe_request)]
fn stack_depth() -> usize {
    core::ptr::addr_of!(_stack_start) as usize - cortex_m::register::msp::read() as usize
}

#[cfg(not(feature = "no-wrapper"))]
mod conversation {
    use defmt::info;
    use polyweave_tool_adapter::frame::LineSplitter;
    use polyweave_tool_adapter::{
        Disposition, Instant, NoHooks, ResultWriter, Slot, Tool, ToolFailed, Wrapper, WrapperConfig,
    };
    use static_cell::ConstStaticCell;

    const ARENA_LEN: usize = super::SMALL_ARENA;
    static SLOT_MEM: ConstStaticCell<[Slot; super::SLOTS]> =
        ConstStaticCell::new([Slot::EMPTY; super::SLOTS]);
    static ARENA: ConstStaticCell<[u8; ARENA_LEN]> = ConstStaticCell::new([0; ARENA_LEN]);
    static LINE: ConstStaticCell<[u8; 128]> = ConstStaticCell::new([0; 128]);
    static TX: ConstStaticCell<[u8; 256]> = ConstStaticCell::new([0; 256]);

    /// The sync tool: a fixed answer, so the probe measures the core, not a parser.
    fn add(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(b"42");
        Ok(())
    }

    /// The 3,302 BFCL calls (`tests/data/bfcl`), one `TOOL_CALL` per line.
    #[cfg(feature = "bfcl-stack")]
    const BFCL: &[u8] = include_bytes!("../../../../tests/data/bfcl/tool-calls.ndjson");
    #[cfg(feature = "bfcl-stack")]
    static BFCL_SLOTS: ConstStaticCell<[Slot; super::SLOTS]> =
        ConstStaticCell::new([Slot::EMPTY; super::SLOTS]);
    #[cfg(feature = "bfcl-stack")]
    static BFCL_ARENA: ConstStaticCell<[u8; super::DEFAULT_ARENA]> =
        ConstStaticCell::new([0; super::DEFAULT_ARENA]);
    #[cfg(feature = "bfcl-stack")]
    static BFCL_TX: ConstStaticCell<[u8; 2048]> = ConstStaticCell::new([0; 2048]);

    /// Every BFCL call through a wrapper with the default capacities and every frame validated:
    /// the calls name tools it does not have, so each one is answered with an error
    /// `TOOL_RESULT` on the spot (the unknown-tool path); returns the frames written.
    #[cfg(feature = "bfcl-stack")]
    pub fn bfcl() -> Option<usize> {
        let cfg = WrapperConfig {
            full_validation: true,
            ..WrapperConfig::DEFAULT
        };
        let tools = [Tool::sync("add", &add)];
        let mut w =
            Wrapper::new(cfg, &tools, NoHooks, BFCL_SLOTS.take(), BFCL_ARENA.take()).ok()?;
        let tx = BFCL_TX.take();
        let mut frames = 0;
        for line in BFCL.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let t: Instant = embassy_time::Instant::now().into();
            w.handle_response(t, line).ok()?;
            while let Some(_out) = w.poll_transmit(tx).ok()? {
                frames += 1;
            }
            while w.poll_event().is_some() {}
        }
        Some(frames)
    }

    /// The corpus again, for the round trip of the host benchmarks.
    #[cfg(feature = "bfcl-speed")]
    const BFCL_CALLS: &[u8] = include_bytes!("../../../../tests/data/bfcl/tool-calls.ndjson");

    /// The sync tool of the speed run: its args are its result.
    #[cfg(feature = "bfcl-speed")]
    fn echo(args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(args);
        Ok(())
    }

    // `TOOLS`: `echo` under each of the corpus's 1,147 tool names, sorted (from `build.rs`).
    #[cfg(feature = "bfcl-speed")]
    include!(concat!(env!("OUT_DIR"), "/bfcl_tools.rs"));

    /// The host benchmarks' capacities (`tests/benches/wrapper.rs`): args and results up to
    /// 2 KiB, eight trace entries in 8 KiB.
    #[cfg(feature = "bfcl-speed")]
    const SPEED: WrapperConfig = WrapperConfig {
        args_cap: 2048,
        result_cap: 2048,
        trace_entries: 8,
        trace_bytes: 8192,
        ..WrapperConfig::DEFAULT
    };
    #[cfg(feature = "bfcl-speed")]
    static SPEED_SLOTS: ConstStaticCell<[Slot; super::SLOTS]> =
        ConstStaticCell::new([Slot::EMPTY; super::SLOTS]);
    #[cfg(feature = "bfcl-speed")]
    static SPEED_ARENA: ConstStaticCell<[u8; SPEED.arena_len(super::SLOTS)]> =
        ConstStaticCell::new([0; SPEED.arena_len(super::SLOTS)]);
    #[cfg(feature = "bfcl-speed")]
    static SPEED_TX: ConstStaticCell<[u8; 4096]> = ConstStaticCell::new([0; 4096]);

    /// The sync round trip of `sync_echo`, `passes` times over the corpus: each call to the
    /// echo tool of its name, its `TOOL_RESULT` and prompts drained. Returns the calls, the
    /// frames and bytes written, and the emulated microseconds taken (with `-icount shift=0`,
    /// a microsecond is a thousand instructions).
    #[cfg(feature = "bfcl-speed")]
    pub fn bfcl_speed(passes: usize) -> Option<(usize, usize, usize, u64)> {
        let mut w = Wrapper::new(
            SPEED,
            &TOOLS,
            NoHooks,
            SPEED_SLOTS.take(),
            SPEED_ARENA.take(),
        )
        .ok()?;
        let tx = SPEED_TX.take();
        let (mut calls, mut frames, mut bytes) = (0, 0, 0);
        let start = embassy_time::Instant::now();
        for _ in 0..passes {
            for line in BFCL_CALLS.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                match w.handle_response(Instant::ZERO, line).ok()? {
                    Disposition::Intercepted { handle: None, .. } => calls += 1,
                    _ => return None,
                }
                while let Some(out) = w.poll_transmit(tx).ok()? {
                    frames += 1;
                    bytes += out.len;
                }
            }
        }
        let micros = start.elapsed().as_micros();
        Some((calls, frames, bytes, micros))
    }

    /// Runs the stream through the framer and the wrapper; returns the frames written.
    pub fn run(cfg: WrapperConfig, stream: &[u8]) -> Option<usize> {
        let tools = [Tool::sync("add", &add)];
        let mut w = Wrapper::new(cfg, &tools, NoHooks, SLOT_MEM.take(), ARENA.take()).ok()?;
        let tx = TX.take();
        let mut framer = LineSplitter::new(LINE.take());
        let mut frames = 0;
        let mut rest = stream;
        while !rest.is_empty() {
            rest = &rest[framer.feed(rest)..];
            while let Some(line) = framer.next_line() {
                let line = line.ok()?;
                let t: Instant = embassy_time::Instant::now().into();
                match w.handle_response(t, line).ok()? {
                    Disposition::Forward => frames += 1,
                    Disposition::Intercepted { .. } | Disposition::Held => {}
                }
                while let Some(out) = w.poll_transmit(tx).ok()? {
                    info!("frame: {=[u8]:a}", tx[..out.len]);
                    frames += 1;
                }
                while w.poll_event().is_some() {}
            }
        }
        Some(frames)
    }
}

#[cfg(feature = "no-wrapper")]
mod conversation {
    use polyweave_tool_adapter::WrapperConfig;

    /// The same shell without the core: counts the stream's lines instead.
    pub fn run(_cfg: WrapperConfig, stream: &[u8]) -> Option<usize> {
        let stream = core::hint::black_box(stream);
        Some(stream.iter().filter(|&&b| b == b'\n').count())
    }
}

/// JSON Schema validation (SPEC §11) at the small configuration: a sync tool registered with
/// its input schema takes one call with valid args and two without, each answer checked byte
/// for byte; then the deepest validation the default `Limits` allow, on its own painted stack.
#[cfg(all(feature = "schema-check", not(feature = "no-wrapper")))]
mod schema {
    use polyweave_tool_adapter::json::schema::{Limits, Schema, Why};
    use polyweave_tool_adapter::{
        Disposition, Instant, NoHooks, ResultWriter, Slot, Tool, ToolFailed, Wrapper,
    };
    use static_cell::ConstStaticCell;

    static SLOT_MEM: ConstStaticCell<[Slot; super::SLOTS]> =
        ConstStaticCell::new([Slot::EMPTY; super::SLOTS]);
    static ARENA: ConstStaticCell<[u8; super::SMALL_ARENA]> =
        ConstStaticCell::new([0; super::SMALL_ARENA]);
    static TX: ConstStaticCell<[u8; 256]> = ConstStaticCell::new([0; 256]);
    /// The worst schema's index (182 words).
    static INDEX: ConstStaticCell<[u32; 192]> = ConstStaticCell::new([0; 192]);

    /// The tool's input schema, as a declaration gives it.
    const ADD: &[u8] = br#"{"type":"object","required":["a","b"],"additionalProperties":false,
"properties":{"a":{"type":"integer"},"b":{"type":"integer","minimum":0}}}"#;

    /// Each call, with the `TOOL_RESULT` the wrapper must answer.
    const CALLS: [(&[u8], &[u8]); 3] = [
        (
            br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{"a":2,"b":40}}}"#,
            br#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"add","result":42}}"#,
        ),
        (
            br#"{"type":"TOOL_CALL","content":{"id":"c2","name":"add","args":{"a":"2","b":40}}}"#,
            br#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"add","error":"Tool add arguments are invalid: /a: expected integer"}}"#,
        ),
        (
            br#"{"type":"TOOL_CALL","content":{"id":"c3","name":"add","args":{"a":2}}}"#,
            br#"{"type":"TOOL_RESULT","content":{"id":"c3","name":"add","error":"Tool add arguments are invalid: (args): missing required property \"b\""}}"#,
        ),
    ];

    /// The worst schema the default `Limits` accept for the stack: every level of the value
    /// goes through `properties`, `anyOf` or `oneOf` and a `$ref`, with `patternProperties`
    /// beside them; the bottom holds `uniqueItems` over nested arrays and a `pattern`.
    /// `WORST_VALUE` takes all 32 levels: `worst` checks that 31 are too few.
    const WORST: &[u8] = br##"{"$defs":{
"n":{"type":"object","required":["n"],"properties":{"n":{"anyOf":[{"$ref":"#/$defs/m"},{"$ref":"#/$defs/leaf"}]}},
  "patternProperties":{"^n$":{"oneOf":[{"type":"object"},{"$ref":"#/$defs/leaf"}]}}},
"m":{"type":"object","required":["n"],"properties":{"n":{"oneOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/leaf"}]}},
  "patternProperties":{"^[mn]$":{"anyOf":[{"type":"object"},{"$ref":"#/$defs/leaf"}]}}},
"leaf":{"type":"array","uniqueItems":true,"items":{"type":"array","uniqueItems":true,
  "items":{"type":"array","items":{"type":"string","pattern":"^(a|b)+[0-9]{2}$"}}}}},
"$ref":"#/$defs/n"}"##;
    pub const WORST_VALUE: &[u8] = br#"{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":{"n":[[["ab12","ba34"],["ab12"]],[["aab56"]]]}}}}}}}}}"#;

    fn add(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(b"42");
        Ok(())
    }

    /// The three calls through a wrapper whose tool has a schema; the answers given as expected.
    pub fn calls() -> Option<usize> {
        let schema = Schema::new(core::hint::black_box(ADD)).ok()?;
        // The same answers straight from the validator, where in the args and why.
        let args = br#"{"a":"2","b":40}"#;
        let refused = schema.validate(args).err()?;
        if refused.at() != 5 || !matches!(refused.why(), Why::Type(_)) {
            return None;
        }
        schema.validate(br#"{"a":2,"b":40}"#).ok()?;
        let tools = [Tool::sync("add", &add).with_schema(&schema)];
        let mut w =
            Wrapper::new(super::SMALL, &tools, NoHooks, SLOT_MEM.take(), ARENA.take()).ok()?;
        let tx = TX.take();
        let mut answered = 0;
        for (call, want) in CALLS {
            let call = core::hint::black_box(call);
            let Disposition::Intercepted { handle: None, .. } =
                w.handle_response(Instant::ZERO, call).ok()?
            else {
                return None;
            };
            // The result first, then the continue prompt and its mirror.
            let out = w.poll_transmit(tx).ok()??;
            if &tx[..out.len] != want {
                defmt::error!("schema answer: {=[u8]:a}", tx[..out.len]);
                return None;
            }
            answered += 1;
            while w.poll_transmit(tx).ok()?.is_some() {}
        }
        Some(answered)
    }

    /// The worst schema read and the deepest value checked against it.
    pub fn worst() -> Option<()> {
        let schema = Schema::new(core::hint::black_box(WORST)).ok()?;
        schema.validate(core::hint::black_box(WORST_VALUE)).ok()?;
        let limits = Limits {
            max_depth: Limits::DEFAULT.max_depth - 1,
            ..Limits::DEFAULT
        };
        let shallower = Schema::with_limits(WORST, limits).ok()?;
        let refused = shallower.validate(WORST_VALUE).err()?;
        (refused.why() == Why::TooDeep).then_some(())
    }

    /// [`worst`] with the schema indexed first, as a host does at registration: the index's
    /// words.
    pub fn worst_indexed() -> Option<usize> {
        let schema = Schema::new(core::hint::black_box(WORST)).ok()?;
        let words = schema.index_words().ok()?;
        let indexed = schema.indexed(INDEX.take()).ok()?;
        indexed.validate(core::hint::black_box(WORST_VALUE)).ok()?;
        Some(words)
    }
}

/// A stream decoder (SPEC §8) at the small configuration over one recorded body per
/// provider feature, fed 64 bytes at a time.
#[cfg(probe_decode)]
mod decoding {
    use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
    use polyweave_tool_adapter::Provider;

    const CFG: DecoderConfig = DecoderConfig::SMALL;
    const CALLS: usize = 2;
    /// Bytes of the decoder's state: its arena, its slots and the `Decoder` itself.
    pub const STATE: usize = CFG.arena_len(CALLS)
        + CALLS * core::mem::size_of::<CallSlot>()
        + core::mem::size_of::<Decoder<'static>>();

    /// Each body, with the frames it gives: one call and its `END`, and for Gemini the call's
    /// `thoughtSignature` as a `STATE` frame before it.
    const BODIES: &[(Provider, &[u8], usize)] = &[
        #[cfg(feature = "decode-openai-chat")]
        (
            Provider::OpenAiChat,
            include_bytes!("../../../../tests/data/provider-streams/openai-chat/vercel-ai-groq-tool-call.body"),
            2,
        ),
        #[cfg(feature = "decode-openai-responses")]
        (
            Provider::OpenAiResponses,
            include_bytes!("../../../../tests/data/provider-streams/openai-responses/vercel-ai-azure-tool-call.body"),
            2,
        ),
        #[cfg(feature = "decode-anthropic")]
        (
            Provider::Anthropic,
            include_bytes!("../../../../tests/data/provider-streams/anthropic/vercel-ai-anthropic-json-tool-1.body"),
            2,
        ),
        #[cfg(feature = "decode-gemini")]
        (
            Provider::Gemini,
            include_bytes!("../../../../tests/data/provider-streams/gemini/vercel-ai-google-tool-call.body"),
            3,
        ),
        #[cfg(feature = "decode-ollama")]
        (
            Provider::Ollama,
            include_bytes!("../../../../tests/data/provider-streams/ollama/ollama-docs-chat-streaming-with-tools.body"),
            2,
        ),
    ];

    /// Frames written for every body (each gives the frames [`BODIES`] says).
    pub fn run() -> Option<usize> {
        let mut frames = 0;
        let mut expected = 0;
        for &(provider, body, gives) in BODIES {
            expected += gives;
            let mut slots = [CallSlot::EMPTY; CALLS];
            let mut arena = [0u8; CFG.arena_len(CALLS)];
            let mut d = Decoder::new(provider, CFG, &mut slots, &mut arena).ok()?;
            let mut out = [0u8; 1024];
            let body = core::hint::black_box(body);
            for piece in body.chunks(64) {
                let mut at = 0;
                while at < piece.len() {
                    at += d.feed(&piece[at..]);
                    while let Some(n) = d.poll_frame(&mut out).ok()? {
                        defmt::info!("decoded: {=[u8]:a}", out[..n]);
                        frames += 1;
                    }
                }
            }
            d.finish();
            while let Some(n) = d.poll_frame(&mut out).ok()? {
                defmt::info!("decoded: {=[u8]:a}", out[..n]);
                frames += 1;
            }
        }
        (frames == expected).then_some(frames)
    }
}

/// The next request on the device (SPEC §10): for each `request-*` feature, one recorded
/// response of that provider decoded 64 bytes a feed, its calls run by a wrapper with sync
/// tools, the decoder's frames and the wrapper's `TOOL_RESULT`s kept in a 4 KiB conversation,
/// and the next request's body written through a 64-byte buffer and logged piece by piece.
/// `footprint.sh` puts the pieces together and compares them with
/// `request-bodies/<provider>.json`, the bodies the host build writes for the same turns
/// (`tests/tests/request_device.rs` checks the host's side against the same files).
#[cfg(probe_request)]
mod requesting {
    use defmt::info;
    use polyweave_tool_adapter::decode::{CallSlot, Decoder, DecoderConfig};
    use polyweave_tool_adapter::request::{Conversation, Declaration, Request, RequestOptions};
    use polyweave_tool_adapter::{
        Instant, NoHooks, Provider, ResultWriter, Route, Slot, Tool, ToolFailed, Wrapper,
        WrapperConfig,
    };
    use static_cell::ConstStaticCell;

    /// The conversation's memory.
    pub const CONVERSATION: usize = 4096;
    /// The buffer each piece of the body is written into.
    const PIECE: usize = 64;
    const WRAPPER: WrapperConfig = WrapperConfig::SMALL;
    const DECODER: DecoderConfig = DecoderConfig::SMALL.fit(&WRAPPER);
    const SLOTS: usize = 4;
    const CALLS: usize = 2;

    static MEMORY: ConstStaticCell<[u8; CONVERSATION]> = ConstStaticCell::new([0; CONVERSATION]);
    static W_SLOTS: ConstStaticCell<[Slot; SLOTS]> = ConstStaticCell::new([Slot::EMPTY; SLOTS]);
    static W_ARENA: ConstStaticCell<[u8; WRAPPER.arena_len(SLOTS)]> =
        ConstStaticCell::new([0; WRAPPER.arena_len(SLOTS)]);
    static TX: ConstStaticCell<[u8; WRAPPER.max_frame_len()]> =
        ConstStaticCell::new([0; WRAPPER.max_frame_len()]);
    static D_SLOTS: ConstStaticCell<[CallSlot; CALLS]> =
        ConstStaticCell::new([CallSlot::EMPTY; CALLS]);
    static D_ARENA: ConstStaticCell<[u8; DECODER.arena_len(CALLS)]> =
        ConstStaticCell::new([0; DECODER.arena_len(CALLS)]);
    static FRAME: ConstStaticCell<[u8; DECODER.max_frame_len()]> =
        ConstStaticCell::new([0; DECODER.max_frame_len()]);

    /// The turns before the response.
    const SYSTEM: &str = "Answer with what the tools return.";
    const QUESTION: &str = "What is the weather in Edinburgh, and Apple's share price?";

    /// One recorded response per provider, not the one `decoding` has (identical bytes would
    /// be merged into one copy, and footprint.sh subtracts these from the flash).
    const BODIES: &[(Provider, &[u8])] = &[
        #[cfg(feature = "request-openai-chat")]
        (
            Provider::OpenAiChat,
            include_bytes!("../../../../tests/data/provider-streams/openai-chat/openai-python-parse-multiple-pydantic-tools.body"),
        ),
        #[cfg(feature = "request-openai-responses")]
        (
            Provider::OpenAiResponses,
            include_bytes!("../../../../tests/data/provider-streams/openai-responses/vercel-ai-openai-reasoning-encrypted-content-step1.body"),
        ),
        #[cfg(feature = "request-anthropic")]
        (
            Provider::Anthropic,
            include_bytes!("../../../../tests/data/provider-streams/anthropic/anthropic-sdk-tool-use-response.body"),
        ),
        #[cfg(feature = "request-gemini")]
        (
            Provider::Gemini,
            include_bytes!("../../../../tests/data/provider-streams/gemini/vercel-ai-google-stream-tool-call-arguments.body"),
        ),
        #[cfg(feature = "request-ollama")]
        (
            Provider::Ollama,
            include_bytes!("../../../../tests/data/provider-streams/ollama/variant-text-and-parallel-calls.body"),
        ),
    ];

    const CITY: &[u8] =
        br#"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"#;
    const LOCATION: &[u8] =
        br#"{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}"#;
    const CALC: &[u8] = br#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"op":{"type":"string"}}}"#;
    const TICKER: &[u8] =
        br#"{"type":"object","properties":{"ticker":{"type":"string"}},"required":["ticker"]}"#;
    /// The tools the model may call, as the request declares them.
    const DECLARATIONS: [Declaration<'static>; 8] = [
        Declaration::new("GetWeatherArgs", Some(CITY)).description("Weather in a city"),
        Declaration::new("calculator", Some(CALC)).description("Arithmetic"),
        Declaration::new("getWeather", Some(LOCATION)).description("Weather in a place"),
        Declaration::new("get_conditions", Some(CITY)).description("The sky in a city"),
        Declaration::new("get_stock_price", Some(TICKER)).description("A stock's price"),
        Declaration::new("get_temperature", Some(CITY)).description("The temperature in a city"),
        Declaration::new("get_weather", Some(CITY)).description("Weather in a city"),
        Declaration::new("weather", Some(LOCATION)).description("Weather in a place"),
    ];

    /// The weather tools: one fixed answer (the probe measures the core, not a parser).
    fn weather(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(br#"{"sky":"rain","temp_c":5.7}"#);
        Ok(())
    }

    /// The calculator: the one sum the recording asks for.
    fn calculator(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(b"19");
        Ok(())
    }

    /// The quote tool fails, so the body carries an error result too.
    fn stock_price(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(b"no market data offline");
        Err(ToolFailed)
    }

    /// What the runs came to.
    pub struct Figures {
        /// Bodies written.
        pub bodies: usize,
        /// The largest conversation, in bytes of its memory.
        pub used: usize,
        /// The stack's high water over the whole run (shell included).
        pub stack: usize,
        /// The stack's high water while a request measures and writes its body (the 64-byte
        /// buffer included, the log not), below the stack pointer of its caller.
        pub writer_stack: usize,
    }

    /// Bytes of RAM beside the conversation's memory: the `Request` itself.
    pub const REQUEST: usize = core::mem::size_of::<Request<'static>>();

    /// Every body's turns, then its next request; `None` on anything unexpected.
    pub fn run() -> Option<Figures> {
        let memory = MEMORY.take();
        let (w_slots, w_arena, tx) = (W_SLOTS.take(), W_ARENA.take(), TX.take());
        let (d_slots, d_arena, frame) = (D_SLOTS.take(), D_ARENA.take(), FRAME.take());
        // Byte order, as the wrapper's binary search wants.
        let tools = [
            Tool::sync("GetWeatherArgs", &weather),
            Tool::sync("calculator", &calculator),
            Tool::sync("getWeather", &weather),
            Tool::sync("get_conditions", &weather),
            Tool::sync("get_stock_price", &stock_price),
            Tool::sync("get_temperature", &weather),
            Tool::sync("get_weather", &weather),
            Tool::sync("weather", &weather),
        ];
        let opts = RequestOptions::new("some-model");
        let mut figures = Figures {
            bodies: 0,
            used: 0,
            stack: 0,
            writer_stack: 0,
        };
        for &(provider, body) in BODIES {
            let mut w = Wrapper::new(WRAPPER, &tools, NoHooks, w_slots, w_arena).ok()?;
            let mut d = Decoder::new(provider, DECODER, d_slots, d_arena).ok()?;
            let mut conv = Conversation::new(memory);
            conv.set_system(SYSTEM).ok()?;
            conv.push_user(QUESTION).ok()?;
            conv.begin_response(provider).ok()?;
            for piece in core::hint::black_box(body).chunks(64) {
                let mut at = 0;
                while at < piece.len() {
                    at += d.feed(&piece[at..]);
                    while let Some(n) = d.poll_frame(frame).ok()? {
                        take(&frame[..n], &mut conv, &mut w, tx)?;
                    }
                }
            }
            d.finish();
            while let Some(n) = d.poll_frame(frame).ok()? {
                take(&frame[..n], &mut conv, &mut w, tx)?;
            }
            figures.used = figures.used.max(conv.used());
            // Painted again for the writer alone: the run's figure so far is taken first.
            figures.stack = figures.stack.max(super::stack_high_water());
            super::paint_stack();
            let caller = super::stack_depth();
            // Once without logging for the writer's own stack, once to log the body.
            let measured = write(&conv, provider, &opts, false)?;
            let writer = super::stack_high_water();
            figures.writer_stack = figures.writer_stack.max(writer.saturating_sub(caller));
            let written = write(&conv, provider, &opts, true)?;
            figures.stack = figures.stack.max(super::stack_high_water());
            if written != measured {
                return None;
            }
            figures.bodies += 1;
            info!(
                "request {=str}: {=usize} bytes, conversation {=usize} of {=usize} ({=usize} entries)",
                provider.name(),
                written,
                conv.used(),
                conv.capacity(),
                conv.len()
            );
        }
        Some(figures)
    }

    /// One frame of the response: into the conversation and through the wrapper, whose
    /// results for the model go into the conversation beside their calls.
    fn take(
        f: &[u8],
        conv: &mut Conversation<'_>,
        w: &mut Wrapper<'_>,
        tx: &mut [u8],
    ) -> Option<()> {
        conv.push_frame(f).ok()?;
        w.handle_response(Instant::ZERO, f).ok()?;
        while let Some(out) = w.poll_transmit(tx).ok()? {
            let t = &tx[..out.len];
            if out.route == Route::Model && t.starts_with(br#"{"type":"TOOL_RESULT""#) {
                conv.push_frame(t).ok()?;
            }
        }
        while w.poll_event().is_some() {}
        Some(())
    }

    /// Writes the next request's body through a `PIECE`-byte buffer, each piece logged when
    /// `log` says; its length, checked against what the request measured.
    // Out of line: the stack figure is this function's and the request's.
    #[inline(never)]
    fn write(
        conv: &Conversation<'_>,
        provider: Provider,
        opts: &RequestOptions<'_>,
        log: bool,
    ) -> Option<usize> {
        let mut req = Request::new(conv, provider, opts, &DECLARATIONS).ok()?;
        let mut piece = [0u8; PIECE];
        let mut written = 0;
        loop {
            let n = req.write(&mut piece);
            if n == 0 {
                break;
            }
            if log {
                info!("body {=str}: {=[u8]:a}", provider.name(), piece[..n]);
            }
            written += n;
        }
        (written == req.len()).then_some(written)
    }
}

/// The core's MCP client (SPEC §9) at the small configuration with 2 call slots, on a scripted
/// exchange in memory (no UART): the server's lines (`mcp/footprint-server.ndjson`: the
/// start-up, `notifications/tools/list_changed`, a ping, the tools listed again, then a
/// progress and the answer of one call) fed 64 bytes at a time, the call handed in once the
/// tools are listed, every output drained.
#[cfg(feature = "mcp-client")]
mod mcp {
    use defmt::info;
    use polyweave_tool_adapter::mcp::{
        McpClient, McpClientInfo, McpConfig, McpEvent, McpHandled, McpRevision, McpSlot,
    };
    use polyweave_tool_adapter::{CallHandle, Instant};
    use static_cell::ConstStaticCell;

    /// The script is 2025-11-25's handshake (`initialize` first): the revision is fixed to it.
    const CFG: McpConfig = McpConfig {
        revision: McpRevision::V2025_11_25,
        ..McpConfig::SMALL
    };
    const CALLS: usize = 2;
    /// Bytes of the client's state: its arena, its slots and the `McpClient` itself.
    pub const STATE: usize = CFG.arena_len(CALLS)
        + CALLS * core::mem::size_of::<McpSlot>()
        + core::mem::size_of::<McpClient<'static>>();
    /// Where the client writes its lines and frames (never too small): the host's buffer.
    pub const OUT_LEN: usize = if CFG.max_line_len() > CFG.max_frame_len() {
        CFG.max_line_len()
    } else {
        CFG.max_frame_len()
    };

    static SLOTS: ConstStaticCell<[McpSlot; CALLS]> = ConstStaticCell::new([McpSlot::EMPTY; CALLS]);
    static ARENA: ConstStaticCell<[u8; CFG.arena_len(CALLS)]> =
        ConstStaticCell::new([0; CFG.arena_len(CALLS)]);
    static OUT: ConstStaticCell<[u8; OUT_LEN]> = ConstStaticCell::new([0; OUT_LEN]);

    /// What the server says (footprint.sh subtracts its bytes from the flash figure).
    const SERVER: &[u8] = include_bytes!("../../mcp/footprint-server.ndjson");
    /// The wrapper's adapter `TOOL_CALL` the client carries.
    const CALL: &[u8] =
        br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"echo","args":{"message":"hi"}}}"#;

    /// What came out of the client.
    #[derive(Default)]
    pub struct Counts {
        pub frames: usize,
        pub lines: usize,
        pub events: usize,
        ready: bool,
    }

    /// Drains the client's events, frames and lines; true when anything came out.
    fn drain(c: &mut McpClient<'_>, out: &mut [u8], n: &mut Counts) -> Option<bool> {
        let mut any = false;
        loop {
            let mut moved = false;
            while let Some(e) = c.poll_event() {
                moved = true;
                n.events += 1;
                n.ready |= matches!(e, McpEvent::Ready { .. });
            }
            while let Some(f) = c.poll_frame(out).ok()? {
                moved = true;
                n.frames += 1;
                info!("mcp frame: {=[u8]:a}", out[..f.len]);
            }
            while let Some(len) = c.poll_transmit(out).ok()? {
                moved = true;
                n.lines += 1;
                info!("mcp line: {=[u8]:a}", out[..len]);
            }
            if !moved {
                return Some(any);
            }
            any = true;
        }
    }

    /// Runs the exchange; what came out.
    pub fn run() -> Option<Counts> {
        let mut c =
            McpClient::new(CFG, McpClientInfo::THIS_CRATE, SLOTS.take(), ARENA.take()).ok()?;
        let out = OUT.take();
        let mut n = Counts::default();
        c.start(Instant::ZERO).ok()?;
        drain(&mut c, out, &mut n)?;
        let mut called = false;
        for piece in core::hint::black_box(SERVER).chunks(64) {
            let mut at = 0;
            while at < piece.len() {
                let taken = c.feed(&piece[at..]);
                at += taken;
                let moved = drain(&mut c, out, &mut n)?;
                if n.ready && !called {
                    called = true;
                    let call = core::hint::black_box(CALL);
                    let McpHandled::Sent { .. } =
                        c.handle_frame(CallHandle::from_parts(0, 0), call).ok()?
                    else {
                        return None;
                    };
                    drain(&mut c, out, &mut n)?;
                } else if taken == 0 && !moved {
                    return None;
                }
            }
        }
        (c.in_flight() == 0).then_some(n)
    }
}

/// The core's MCP client over Streamable HTTP (SPEC §9.11) at the small configuration with 2
/// call slots and 2 streams, on a scripted exchange in memory: a 2026-07-28 server's
/// `server/discover` and `tools/list` answers as JSON, then one call answered on an event
/// stream (a progress, then the result), fed 64 bytes at a time; every POST built, every
/// output drained.
#[cfg(feature = "mcp-http-client")]
mod mcp_http {
    use defmt::info;
    use polyweave_tool_adapter::mcp::http::{McpPost, McpStream};
    use polyweave_tool_adapter::mcp::{McpClient, McpClientInfo, McpConfig, McpHandled, McpSlot};
    use polyweave_tool_adapter::{CallHandle, Instant};
    use static_cell::ConstStaticCell;

    const CFG: McpConfig = McpConfig::SMALL;
    const CALLS: usize = 2;
    const STREAMS: usize = 2;
    /// Bytes of the client's state: its arena, slots, streams and the `McpClient` itself.
    pub const STATE: usize = CFG.arena_len(CALLS)
        + CALLS * core::mem::size_of::<McpSlot>()
        + STREAMS * core::mem::size_of::<McpStream>()
        + core::mem::size_of::<McpClient<'static>>();
    /// The host's buffers: a POST's body and its header lines.
    pub const OUT_LEN: usize = CFG.max_line_len() + CFG.max_headers_len();

    static SLOTS: ConstStaticCell<[McpSlot; CALLS]> = ConstStaticCell::new([McpSlot::EMPTY; CALLS]);
    static STREAM_STATE: ConstStaticCell<[McpStream; STREAMS]> =
        ConstStaticCell::new([McpStream::EMPTY; STREAMS]);
    static ARENA: ConstStaticCell<[u8; CFG.arena_len(CALLS)]> =
        ConstStaticCell::new([0; CFG.arena_len(CALLS)]);
    static BODY: ConstStaticCell<[u8; CFG.max_line_len()]> =
        ConstStaticCell::new([0; CFG.max_line_len()]);
    static HEADERS: ConstStaticCell<[u8; CFG.max_headers_len()]> =
        ConstStaticCell::new([0; CFG.max_headers_len()]);

    /// The server's answers, in the order of the POSTs (footprint.sh subtracts their bytes).
    pub const SCRIPT: [(&[u8], &[u8]); 3] = [
        (
            b"application/json",
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}"#,
        ),
        (
            b"application/json",
            br#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#,
        ),
        (
            b"text/event-stream",
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":3,\"progress\":1}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: hi\"}]}}\n\n",
        ),
    ];
    /// The wrapper's adapter `TOOL_CALL` the client carries.
    const CALL: &[u8] =
        br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"echo","args":{"message":"hi"}}}"#;

    /// What came out of the client.
    #[derive(Default)]
    pub struct Counts {
        pub posts: usize,
        pub frames: usize,
        pub events: usize,
    }

    /// Drains events and frames (into `out`).
    fn drain(c: &mut McpClient<'_>, out: &mut [u8], n: &mut Counts) -> Option<()> {
        while c.poll_event().is_some() {
            n.events += 1;
        }
        while let Some(f) = c.poll_frame(out).ok()? {
            n.frames += 1;
            info!("mcp http frame: {=[u8]:a}", out[..f.len]);
        }
        Some(())
    }

    /// Runs the exchange; what came out.
    pub fn run() -> Option<Counts> {
        let (slots, streams) = (SLOTS.take(), STREAM_STATE.take());
        let info = McpClientInfo::THIS_CRATE;
        let mut c = McpClient::new_http(CFG, info, slots, streams, ARENA.take()).ok()?;
        let (body, headers) = (BODY.take(), HEADERS.take());
        let mut n = Counts::default();
        c.start(Instant::ZERO).ok()?;
        for (ct, answer) in core::hint::black_box(SCRIPT) {
            drain(&mut c, body, &mut n)?;
            if n.posts == 2 {
                let call = core::hint::black_box(CALL);
                let McpHandled::Sent { .. } =
                    c.handle_frame(CallHandle::from_parts(0, 0), call).ok()?
                else {
                    return None;
                };
            }
            let McpPost::Post {
                stream, headers: h, ..
            } = c.poll_request(body, headers).ok()??
            else {
                return None;
            };
            n.posts += 1;
            info!("mcp http headers: {=[u8]:a}", headers[..h]);
            c.handle_response(stream, 200, ct, None).ok()?;
            for piece in answer.chunks(64) {
                let mut at = 0;
                while at < piece.len() {
                    at += c.feed_response(stream, &piece[at..]).ok()?;
                    drain(&mut c, body, &mut n)?;
                }
            }
            c.handle_response_end(stream).ok()?;
        }
        drain(&mut c, body, &mut n)?;
        (c.in_flight() == 0).then_some(n)
    }
}

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    paint_stack();
    let p = cortex_m::Peripherals::take().unwrap();
    time_driver::init(p.SYST);
    info!(
        "RAM: small_arena {=usize} default_arena {=usize} slots {=usize} wrapper {=usize} slot {=usize}",
        SMALL_ARENA,
        DEFAULT_ARENA,
        SLOTS,
        core::mem::size_of::<Wrapper<'static>>(),
        core::mem::size_of::<Slot>()
    );
    for (name, cfg, total) in [
        ("small", SMALL, SMALL_ARENA),
        ("default", WrapperConfig::DEFAULT, DEFAULT_ARENA),
    ] {
        let [slots, scratch, last_error, trace, held, queue] = regions(&cfg, SLOTS);
        info!(
            "REGIONS {=str}: total {=usize} slots {=usize} scratch {=usize} last_error {=usize} trace {=usize} held {=usize} queue {=usize} sum {=usize}",
            name,
            total,
            slots,
            scratch,
            last_error,
            trace,
            held,
            queue,
            slots + scratch + last_error + trace + held + queue
        );
    }
    let Some(frames) = conversation::run(SMALL, STREAM) else {
        error!("conversation failed");
        exit_failure()
    };
    info!("frames: {=usize}", frames);
    info!("STACK: {=usize} bytes high water", stack_high_water());
    #[cfg(all(feature = "schema-check", not(feature = "no-wrapper")))]
    {
        let Some(n) = schema::calls() else {
            error!("schema calls failed");
            exit_failure()
        };
        info!("SCHEMA: calls {=usize}", n);
        // Painted again: the figure is the worst validation's alone (the shell included).
        paint_stack();
        if schema::worst().is_none() {
            error!("worst schema failed");
            exit_failure()
        }
        info!(
            "SCHEMA STACK: {=usize} bytes high water, value of {=usize} bytes",
            stack_high_water(),
            schema::WORST_VALUE.len()
        );
        paint_stack();
        let Some(words) = schema::worst_indexed() else {
            error!("worst schema, indexed, failed");
            exit_failure()
        };
        info!(
            "SCHEMA INDEXED STACK: {=usize} bytes high water, index of {=usize} words",
            stack_high_water(),
            words
        );
    }
    #[cfg(probe_decode)]
    {
        let Some(frames) = decoding::run() else {
            error!("decoding failed");
            exit_failure()
        };
        info!(
            "DECODE: frames {=usize} state {=usize}",
            frames,
            decoding::STATE
        );
        info!(
            "DECODE STACK: {=usize} bytes high water",
            stack_high_water()
        );
    }
    #[cfg(probe_request)]
    {
        // Painted again: the figures are the request runs' alone (the shell included).
        paint_stack();
        let Some(f) = requesting::run() else {
            error!("request run failed");
            exit_failure()
        };
        info!(
            "REQUEST: bodies {=usize} conversation {=usize} used {=usize} request {=usize}",
            f.bodies,
            requesting::CONVERSATION,
            f.used,
            requesting::REQUEST
        );
        info!(
            "REQUEST STACK: {=usize} bytes high water, the writer {=usize} below its caller",
            f.stack, f.writer_stack
        );
    }
    #[cfg(feature = "mcp-client")]
    {
        // Painted again: the figure is the client's run alone (the shell included).
        paint_stack();
        let Some(n) = mcp::run() else {
            error!("MCP run failed");
            exit_failure()
        };
        info!(
            "MCP: frames {=usize} lines {=usize} events {=usize} state {=usize} out {=usize}",
            n.frames,
            n.lines,
            n.events,
            mcp::STATE,
            mcp::OUT_LEN
        );
        info!("MCP STACK: {=usize} bytes high water", stack_high_water());
    }
    #[cfg(feature = "mcp-http-client")]
    {
        paint_stack();
        let Some(n) = mcp_http::run() else {
            error!("MCP HTTP run failed");
            exit_failure()
        };
        let script: usize = mcp_http::SCRIPT
            .iter()
            .map(|(t, a)| t.len() + a.len())
            .sum();
        info!(
            "MCP HTTP: posts {=usize} frames {=usize} events {=usize} state {=usize} out {=usize} script {=usize}",
            n.posts,
            n.frames,
            n.events,
            mcp_http::STATE,
            mcp_http::OUT_LEN,
            script
        );
        info!(
            "MCP HTTP STACK: {=usize} bytes high water",
            stack_high_water()
        );
    }
    #[cfg(all(feature = "bfcl-stack", not(feature = "no-wrapper")))]
    {
        let Some(frames) = conversation::bfcl() else {
            error!("BFCL run failed");
            exit_failure()
        };
        info!("BFCL frames: {=usize}", frames);
        info!("BFCL STACK: {=usize} bytes high water", stack_high_water());
    }
    #[cfg(all(feature = "bfcl-speed", not(feature = "no-wrapper")))]
    {
        let Some((calls, frames, bytes, micros)) = conversation::bfcl_speed(4) else {
            error!("BFCL speed run failed");
            exit_failure()
        };
        info!(
            "BFCL SPEED: calls {=usize} frames {=usize} bytes {=usize} micros {=u64}",
            calls, frames, bytes, micros
        );
    }
    debug::exit(debug::EXIT_SUCCESS);
}

fn exit_failure() -> ! {
    debug::exit(debug::EXIT_FAILURE);
    cortex_m::asm::udf()
}

/// No formatting here: the probe must not pull `core::fmt` in by itself.
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    exit_failure()
}
