//! The sans-IO wrapper on a microcontroller, with every kind of tool: an embassy task feeds a
//! scripted model stream through `LineSplitter` into a `Wrapper` with static storage; a sync
//! tool runs at once, a deferred one is completed by a worker task, a third call times out on
//! SysTick time, and an adapter tool is served by another task that speaks frames over a
//! channel, in chunks the firmware reassembles. A second round cancels a pending adapter call
//! (the adapter is sent `CANCEL`). Each round's `END` is held and released after its prompt.
//!
//! Logs go out through `defmt` over semihosting (the core's own `debug!` lines included):
//! decode QEMU's stdout with `defmt-print -e <the ELF>`. It runs on QEMU's mps2-an386
//! (Cortex-M4F); the exit status is the verdict, so `cargo run --release` is the test.

#![no_std]
#![no_main]

mod time_driver;

use cortex_m_semihosting::debug;
use defmt::{error, info};
use defmt_semihosting as _;
use embassy_executor::Spawner;
use embassy_futures::select::{select, select4, Either, Either4};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use embassy_time::{with_timeout, Duration, Timer};
use polyweave_tool_adapter::frame::LineSplitter;
use polyweave_tool_adapter::wrapper::typed;
use polyweave_tool_adapter::{
    CallHandle, Disposition, Event, Instant, NoHooks, PendingKind, ResultWriter, Route, Slot, Tool,
    ToolFailed, Wrapper, WrapperConfig,
};
use static_cell::ConstStaticCell;

/// Logs why and exits QEMU with a failure status.
macro_rules! fail {
    ($($arg:tt)*) => {{
        error!($($arg)*);
        crate::exit_failure()
    }};
}

/// Deferred and adapter calls that can be pending at once (the sync `add` needs no slot).
const SLOTS: usize = 3;
/// 100 ms for deferred calls unless a tool sets its own; capacities stay at the defaults.
const CFG: WrapperConfig = WrapperConfig {
    tool_timeout_ms: 100,
    ..WrapperConfig::DEFAULT
};
const ARENA_LEN: usize = CFG.arena_len(SLOTS);

static SLOT_MEM: ConstStaticCell<[Slot; SLOTS]> = ConstStaticCell::new([Slot::EMPTY; SLOTS]);
static ARENA: ConstStaticCell<[u8; ARENA_LEN]> = ConstStaticCell::new([0; ARENA_LEN]);
/// The longest model line the framer holds.
static LINE: ConstStaticCell<[u8; 256]> = ConstStaticCell::new([0; 256]);
/// The longest adapter line the adapter's framer holds.
static ADAPTER_LINE: ConstStaticCell<[u8; 128]> = ConstStaticCell::new([0; 128]);
/// Where `poll_transmit` writes each frame.
static TX: ConstStaticCell<[u8; 512]> = ConstStaticCell::new([0; 512]);

/// `lookup` calls for the worker task, and the handles it finished.
static LOOKUPS: Channel<CriticalSectionRawMutex, CallHandle, SLOTS> = Channel::new();
static LOOKED_UP: Channel<CriticalSectionRawMutex, CallHandle, SLOTS> = Channel::new();
const LOOKUP_RESULT: &[u8] = br#"{"rfc":8259}"#;

/// Frames for the `search` adapter (`TOOL_CALL`, `CANCEL`), and its bytes back, in chunks.
static TO_ADAPTER: Channel<CriticalSectionRawMutex, AdapterFrame, 2> = Channel::new();
static FROM_ADAPTER: Channel<CriticalSectionRawMutex, Chunk, 4> = Channel::new();
/// What the adapter writes for a call it finishes, as NDJSON (its `TEXT` is ignored).
const ADAPTER_REPLY: &[u8] = br#"{"type":"TEXT","content":"searching"}
{"type":"TOOL_RESULT","content":{"result":{"hits":3}}}
{"type":"END"}
"#;
/// The adapter works this long on a call.
const ADAPTER_MS: u64 = 20;
/// Bytes per chunk from the adapter, as if from a UART FIFO.
const ADAPTER_CHUNK: usize = 9;

/// What the model says in each round, as NDJSON; it arrives in chunks of `CHUNK` bytes.
const ROUND_1: &[u8] = br#"{"type":"TEXT","content":"Let me check."}
{"type":"TOOL_CALL","content":{"id":"c1","name":"lookup","args":{"q":"json"}}}
{"type":"TOOL_CALL","content":{"id":"c2","name":"slow","args":{}}}
{"type":"TOOL_CALL","content":{"id":"c3","name":"add","args":{"a":2,"b":40}}}
{"type":"TOOL_CALL","content":{"id":"c4","name":"search","args":{"q":"json"}}}
{"type":"END"}
"#;
/// After the prompt: one more search, which the host gives up on.
const ROUND_2: &[u8] =
    br#"{"type":"TOOL_CALL","content":{"id":"c5","name":"search","args":{"q":"defmt"}}}
{"type":"END"}
"#;
const CHUNK: usize = 7;
/// Each round's stream, and when (ms after the stream ended) the host cancels what is still pending.
const ROUNDS: &[(&[u8], Option<u64>)] = &[(ROUND_1, None), (ROUND_2, Some(10))];

/// Where a frame goes, as `EXPECTED` names it (an adapter frame must go to the running adapter call).
#[derive(Copy, Clone, PartialEq, Eq, defmt::Format)]
enum To {
    Model,
    Consumer,
    Adapter,
}

/// Every frame the host must write, in order (forwarded text included).
const EXPECTED: &[(To, &[u8])] = &[
    // Round 1.
    (To::Consumer, br#"{"type":"TEXT","content":"Let me check."}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c3","name":"add","result":42}}"#),
    (To::Adapter, br#"{"type":"TOOL_CALL","content":{"id":"c4","name":"search","args":{"q":"json"}}}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c4","name":"search","result":{"hits":3}}}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"lookup","result":{"rfc":8259}}}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"slow","error":"Tool slow timed out after 100ms"}}"#),
    (To::Model, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool slow timed out after 100ms"}"#),
    (To::Consumer, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool slow timed out after 100ms"}"#),
    // The held END, released after the prompt.
    (To::Consumer, br#"{"type":"END"}"#),
    // Round 2.
    (To::Adapter, br#"{"type":"TOOL_CALL","content":{"id":"c5","name":"search","args":{"q":"defmt"}}}"#),
    (To::Adapter, br#"{"type":"CANCEL","content":{"id":"c5","name":"search","reason":"user stop"}}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c5","name":"search","error":"Tool search cancelled: user stop"}}"#),
    (To::Model, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool search cancelled: user stop"}"#),
    (To::Consumer, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool search cancelled: user stop"}"#),
    (To::Consumer, br#"{"type":"END"}"#),
];

defmt::timestamp!("{=u64:ms}", embassy_time::Instant::now().as_millis());

/// The sync tool: typed args in, typed result out.
fn add(args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    #[derive(serde::Deserialize)]
    struct Args {
        a: i32,
        b: i32,
    }
    let Ok(Args { a, b }) = typed::parse_args::<Args>(args) else {
        out.write(b"args must be {a, b}");
        return Err(ToolFailed);
    };
    out.write_typed(&a.saturating_add(b));
    Ok(())
}

/// The deferred `lookup` tool's backend: answers each call after 50 ms.
#[embassy_executor::task]
async fn lookup_worker() {
    loop {
        let handle = LOOKUPS.receive().await;
        Timer::after_millis(50).await;
        LOOKED_UP.send(handle).await;
    }
}

/// A frame for the adapter: a copy, as a link to another device would carry it.
struct AdapterFrame {
    handle: CallHandle,
    bytes: [u8; 128],
    len: usize,
}

impl AdapterFrame {
    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Some bytes from the adapter serving call `handle`.
struct Chunk {
    handle: CallHandle,
    bytes: [u8; ADAPTER_CHUNK],
    len: usize,
}

/// The `search` tool adapter: reads a `TOOL_CALL`, works `ADAPTER_MS` on it, then writes its
/// frames back in `ADAPTER_CHUNK`-byte pieces; a `CANCEL` while it works stops the call.
#[embassy_executor::task]
async fn search_adapter() {
    loop {
        let call = TO_ADAPTER.receive().await;
        if !call.bytes().starts_with(br#"{"type":"TOOL_CALL""#) {
            fail!("adapter: no call running for {=str}", text(call.bytes()));
        }
        info!("adapter: got {=str}", text(call.bytes()));
        match select(Timer::after_millis(ADAPTER_MS), TO_ADAPTER.receive()).await {
            Either::First(()) => {
                for piece in ADAPTER_REPLY.chunks(ADAPTER_CHUNK) {
                    let mut chunk = Chunk {
                        handle: call.handle,
                        bytes: [0; ADAPTER_CHUNK],
                        len: piece.len(),
                    };
                    chunk.bytes[..piece.len()].copy_from_slice(piece);
                    FROM_ADAPTER.send(chunk).await;
                }
                info!(
                    "adapter: reply sent in {=usize} chunks",
                    ADAPTER_REPLY.len().div_ceil(ADAPTER_CHUNK)
                );
            }
            Either::Second(next) if next.bytes().starts_with(br#"{"type":"CANCEL""#) => {
                if next.handle != call.handle {
                    fail!("adapter: CANCEL for another call");
                }
                info!("adapter: cancelled, writes nothing more");
            }
            Either::Second(next) => fail!("adapter: busy, got {=str}", text(next.bytes())),
        }
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let p = cortex_m::Peripherals::take().unwrap();
    time_driver::init(p.SYST);
    spawner.spawn(lookup_worker().unwrap());
    spawner.spawn(search_adapter().unwrap());

    let tools = [
        Tool::sync("add", &add),
        Tool::deferred("lookup").with_timeout_ms(1_000),
        Tool::deferred("slow"),
        Tool::adapter("search").with_timeout_ms(500),
    ];
    let mut w = Wrapper::new(CFG, &tools, NoHooks, SLOT_MEM.take(), ARENA.take())
        .unwrap_or_else(|e| fail!("Wrapper::new: {}", e));
    info!(
        "Wrapper: {=usize} bytes, arena: {=usize} bytes for {=usize} slots",
        core::mem::size_of_val(&w),
        ARENA_LEN,
        SLOTS
    );
    let mut host = Host {
        tx: TX.take(),
        next: 0,
        started: [None; 3],
        adapter_call: None,
        held: 0,
    };

    let mut framer = LineSplitter::new(LINE.take());
    let mut adapter_lines = LineSplitter::new(ADAPTER_LINE.take());
    for (round, &(stream, cancel_after)) in ROUNDS.iter().enumerate() {
        info!(
            "round {=usize}: {=usize} bytes from the model",
            round + 1,
            stream.len()
        );
        for chunk in stream.chunks(CHUNK) {
            let mut rest = chunk;
            while !rest.is_empty() {
                rest = &rest[framer.feed(rest)..];
                while let Some(line) = framer.next_line() {
                    let line = line.unwrap_or_else(|e| fail!("framing: {}", e));
                    let t = now();
                    match w.handle_response(t, line) {
                        Ok(Disposition::Forward) => host.forward(line),
                        Ok(Disposition::Intercepted { .. }) => {}
                        Ok(Disposition::Held) => host.held += 1,
                        Err(e) => fail!("handle_response: {}", e),
                    }
                    host.pump(&mut w, t);
                }
            }
            // Let the other tasks run between chunks, as if bytes came from a UART.
            embassy_futures::yield_now().await;
        }
        let cancel_at = cancel_after.map(|ms| now().saturating_add_millis(ms));

        // Wait for the worker, the adapter, the earliest deadline or the host's own cancel.
        while w.pending() > 0 {
            let Some(deadline) = w.poll_timeout() else {
                fail!("{=usize} calls pending without a deadline", w.pending())
            };
            let cancel = cancel_at.unwrap_or(deadline);
            let woken = select4(
                LOOKED_UP.receive(),
                FROM_ADAPTER.receive(),
                Timer::at(deadline.into()),
                Timer::at(cancel.into()),
            )
            .await;
            let t = now();
            match woken {
                Either4::First(handle) => {
                    info!("lookup completed after {=u64} ms", host.elapsed(LOOKUP, t));
                    w.complete(t, handle, Ok(LOOKUP_RESULT))
                        .unwrap_or_else(|e| fail!("complete: {}", e));
                }
                Either4::Second(chunk) => {
                    if host.adapter_call != Some(chunk.handle) {
                        fail!("bytes from an adapter with no call running");
                    }
                    let mut rest = &chunk.bytes[..chunk.len];
                    while !rest.is_empty() {
                        rest = &rest[adapter_lines.feed(rest)..];
                        while let Some(line) = adapter_lines.next_line() {
                            let line = line.unwrap_or_else(|e| fail!("adapter framing: {}", e));
                            info!("adapter frame: {=str}", text(line));
                            w.handle_adapter_frame(t, chunk.handle, line)
                                .unwrap_or_else(|e| fail!("handle_adapter_frame: {}", e));
                        }
                    }
                }
                Either4::Third(()) if t >= deadline => {
                    let elapsed = host.elapsed(SLOW, t);
                    info!(
                        "timeout at {=u64} ms (deadline {=u64} ms): {=u64} ms after the call",
                        t.as_millis(),
                        deadline.as_millis(),
                        elapsed
                    );
                    if elapsed != 100 {
                        fail!("slow timed out after {=u64} ms, not 100 ms", elapsed);
                    }
                    w.handle_timeout(t)
                        .unwrap_or_else(|e| fail!("handle_timeout: {}", e));
                }
                Either4::Third(()) => {}
                Either4::Fourth(()) => {
                    info!(
                        "cancelling {=usize} calls, {=u64} ms after the search started",
                        w.pending(),
                        host.elapsed(SEARCH, t)
                    );
                    let left = w
                        .cancel(t, "user stop")
                        .unwrap_or_else(|e| fail!("cancel: {}", e));
                    if left != 0 {
                        fail!("{=usize} calls left after cancel", left);
                    }
                }
            }
            host.pump(&mut w, t);
        }
        // A line the adapter left without its end would come out of `finish`.
        if let Some(rest) = adapter_lines.finish() {
            fail!(
                "the adapter left a line without its end: {}",
                rest.map(text)
            );
        }
    }

    // A cancelled adapter writes nothing more: listen past the time it would have answered.
    if let Ok(chunk) = with_timeout(
        Duration::from_millis(2 * ADAPTER_MS),
        FROM_ADAPTER.receive(),
    )
    .await
    {
        fail!(
            "the adapter wrote after CANCEL: {=[u8]:a}",
            chunk.bytes[..chunk.len]
        );
    }
    if host.next != EXPECTED.len() {
        fail!(
            "{=usize} of {=usize} frames seen",
            host.next,
            EXPECTED.len()
        );
    }
    if host.held != ROUNDS.len() {
        fail!("{=usize} ENDs held, not {=usize}", host.held, ROUNDS.len());
    }
    info!(
        "PASS: {=usize} frames, {=u32} rounds ({=u64} ms of emulated time)",
        host.next,
        w.stats().rounds,
        now().as_millis()
    );
    debug::exit(debug::EXIT_SUCCESS);
}

/// Indices into `Host::started`.
const LOOKUP: usize = 0;
const SLOW: usize = 1;
const SEARCH: usize = 2;

/// The host side of the loop: checks frames against `EXPECTED`, starts deferred calls and
/// carries adapter frames.
struct Host {
    tx: &'static mut [u8; 512],
    next: usize,
    /// When `lookup`, `slow` and the latest `search` started.
    started: [Option<Instant>; 3],
    /// The adapter call running, if any.
    adapter_call: Option<CallHandle>,
    /// ENDs the wrapper held.
    held: usize,
}

impl Host {
    /// Milliseconds from the start of call `which` to `t`.
    fn elapsed(&self, which: usize, t: Instant) -> u64 {
        let Some(start) = self.started[which] else {
            fail!("call {=usize} never started", which)
        };
        t.as_millis() - start.as_millis()
    }

    /// A frame the host forwards unchanged.
    fn forward(&mut self, frame: &[u8]) {
        check(&mut self.next, To::Consumer, frame);
    }

    /// After an input at `t`: drains the frames the wrapper owes, then its events
    /// (the polling order it asks for).
    fn pump(&mut self, w: &mut Wrapper<'_>, t: Instant) {
        loop {
            match w.poll_transmit(self.tx) {
                Ok(Some(out)) => {
                    let frame = &self.tx[..out.len];
                    match out.route {
                        Route::Model => check(&mut self.next, To::Model, frame),
                        Route::Consumer => check(&mut self.next, To::Consumer, frame),
                        Route::Adapter(handle) => {
                            check(&mut self.next, To::Adapter, frame);
                            self.send_to_adapter(handle, out.len);
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => fail!("poll_transmit: {}", e),
            }
        }
        while let Some(Event::CallStarted {
            handle, name, kind, ..
        }) = w.poll_event()
        {
            info!(
                "{=str} started ({}) at {=u64} ms",
                name,
                kind,
                t.as_millis()
            );
            match (name, kind) {
                ("lookup", _) => {
                    self.started[LOOKUP] = Some(t);
                    if LOOKUPS.try_send(handle).is_err() {
                        fail!("lookup queue full");
                    }
                }
                // Its TOOL_CALL already went to the adapter, on the route that names it.
                (_, PendingKind::Adapter) => {
                    if self.adapter_call != Some(handle) {
                        fail!("adapter call started without its TOOL_CALL");
                    }
                    self.started[SEARCH] = Some(t);
                }
                // Nobody completes `slow`: it must time out.
                _ => self.started[SLOW] = Some(t),
            }
        }
    }

    /// Sends the first `len` bytes of `tx` to the adapter serving `handle`.
    fn send_to_adapter(&mut self, handle: CallHandle, len: usize) {
        let mut frame = AdapterFrame {
            handle,
            bytes: [0; 128],
            len,
        };
        let Some(dst) = frame.bytes.get_mut(..len) else {
            fail!("adapter frame of {=usize} bytes", len)
        };
        dst.copy_from_slice(&self.tx[..len]);
        self.adapter_call = Some(handle);
        if TO_ADAPTER.try_send(frame).is_err() {
            fail!("adapter link full");
        }
    }
}

/// Logs a frame and checks it is the next one expected.
fn check(next: &mut usize, to: To, frame: &[u8]) {
    info!("{} <- {=str}", to, text(frame));
    match EXPECTED.get(*next) {
        Some(&(r, f)) if r == to && f == frame => *next += 1,
        Some(&(r, f)) => fail!("frame {=usize}: expected {}: {=str}", *next, r, text(f)),
        None => fail!("frame {=usize} not expected", *next),
    }
}

/// Emulated time as the core wants it.
fn now() -> Instant {
    embassy_time::Instant::now().into()
}

fn text(frame: &[u8]) -> &str {
    core::str::from_utf8(frame).unwrap_or("<not UTF-8>")
}

fn exit_failure() -> ! {
    debug::exit(debug::EXIT_FAILURE);
    // Only reached without a debugger: stop in HardFault.
    cortex_m::asm::udf()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    fail!("panic: {}", defmt::Display2Format(info))
}
