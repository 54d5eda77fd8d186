//! An MCP server's tools as the wrapper's adapter tools, over UART0: the core's MCP client
//! (SPEC §9) talks JSON-RPC 2.0, one message per LF-terminated line, to a real MCP server,
//! which `mcp/bridge.py` runs on the host and wires to QEMU's UART0 chardev
//! (`@modelcontextprotocol/server-everything`; see `mcp/README.md`).
//!
//! No heap: the `McpClient` and the `Wrapper` live in the main task with `static` storage. The
//! client starts the server (`server/discover`, then `initialize` when the server is of an
//! earlier revision, `tools/list`); the firmware checks that the tools
//! it wants (`echo`, `get-sum`) were listed and registers them as adapter tools of a wrapper
//! (`McpConfig::fitting` its configuration). A scripted model turn then calls both, and one
//! loop moves everything: UART bytes into `McpClient::feed`; the client's events, its frames into
//! `Wrapper::handle_adapter_frame`, its lines out of the UART; the wrapper's frames for an
//! adapter into `McpClient::handle_frame`, the others checked; and the wrapper's deadlines on
//! embassy time.
//!
//! It passes (semihosting exit 0) when the model got exactly the two `TOOL_RESULT`s (either
//! order), then the continue prompt, and the consumer the mirrored prompt, then the held
//! `END`; anything else, or no verdict within 20 s, fails it (exit 1).
//!
//! With the feature `mcp-big-echo`, the turn has a third call, `echo` of a 3,900-byte message
//! (a line of about 4 KB each way, through the client's outbox and line buffer and the
//! wrapper's result capacity); with `mcp-slow-rx` as well, once the start-up is done the
//! firmware reads each byte 1 ms after the previous one and checks the UART never overran
//! (QEMU's receive side waits for the guest instead of dropping bytes).

#![no_std]
#![no_main]

#[path = "../time_driver.rs"]
mod time_driver;
#[path = "../uart.rs"]
mod uart;

use cortex_m_semihosting::debug;
use defmt::{error, info, warn};
use defmt_semihosting as _;
use embassy_executor::Spawner;
use embassy_futures::select::{select, Either};
use embassy_time::{with_timeout, Duration, Timer};
use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpError, McpEvent, McpHandled, McpSlot, McpStartError,
};
use polyweave_tool_adapter::{
    CallHandle, Disposition, Event, Instant, NoHooks, Route, Slot, Tool, Wrapper, WrapperConfig,
};
use static_cell::ConstStaticCell;
use uart::Uart0;

/// Logs why and exits QEMU with a failure status.
macro_rules! fail {
    ($($arg:tt)*) => {{
        error!($($arg)*);
        crate::exit_failure()
    }};
}

/// The server's tools the firmware serves, sorted (the wrapper finds them by binary search).
const WANTED: [&str; 2] = ["echo", "get-sum"];

/// Whether the script has the big echo.
const BIG: bool = cfg!(feature = "mcp-big-echo");

/// `big` with the big echo, else `small`.
const fn pick(big: usize, small: usize) -> usize {
    if BIG {
        big
    } else {
        small
    }
}

/// Calls in flight at once: the script's.
const CALLS: usize = pick(3, 2);

/// The wrapper: the small capacities (with `mcp-big-echo`, args and results of 4 KiB), and
/// 5 s for each call.
const W_CFG: WrapperConfig = WrapperConfig {
    tool_timeout_ms: 5_000,
    args_cap: pick(4096, WrapperConfig::SMALL.args_cap),
    result_cap: pick(4096, WrapperConfig::SMALL.result_cap),
    ..WrapperConfig::SMALL
};

/// The client: lines of 8 KiB (server-everything answers `initialize` in 2,018 bytes and
/// `tools/list` in 7,697), an outbox for the script's `tools/call` lines (with `mcp-big-echo`,
/// one of 4 KB), the wrapper's names and depth limit.
const MCP_CFG: McpConfig = McpConfig {
    line_cap: 8192,
    outbox_cap: pick(4608, 512),
    ..McpConfig::SMALL
}
.fit(&W_CFG);

/// What the client writes into, one thing at a time: every line it sends (a reply can echo
/// an id as long as a line) and every frame of a call's answer (a result is a part of a line),
/// so a result too large for the wrapper still reaches it and the model is told.
const OUT_LEN: usize = max(MCP_CFG.max_line_len(), MCP_CFG.max_frame_len());

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

static MCP_SLOTS: ConstStaticCell<[McpSlot; CALLS]> = ConstStaticCell::new([McpSlot::EMPTY; CALLS]);
static MCP_ARENA: ConstStaticCell<[u8; MCP_CFG.arena_len(CALLS)]> =
    ConstStaticCell::new([0; MCP_CFG.arena_len(CALLS)]);
static OUT: ConstStaticCell<[u8; OUT_LEN]> = ConstStaticCell::new([0; OUT_LEN]);
static W_SLOTS: ConstStaticCell<[Slot; CALLS]> = ConstStaticCell::new([Slot::EMPTY; CALLS]);
static W_ARENA: ConstStaticCell<[u8; W_CFG.arena_len(CALLS)]> =
    ConstStaticCell::new([0; W_CFG.arena_len(CALLS)]);
/// Where the wrapper writes each frame.
static W_TX: ConstStaticCell<[u8; W_CFG.max_frame_len()]> =
    ConstStaticCell::new([0; W_CFG.max_frame_len()]);

const INFO: McpClientInfo<'static> = McpClientInfo {
    name: "polyweave-firmware",
    version: env!("CARGO_PKG_VERSION"),
};

/// The model's turn: two calls, then the end of the round (held while they are pending).
const C1: &[u8] =
    br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"echo","args":{"message":"hi from the M4"}}}"#;
const C2: &[u8] =
    br#"{"type":"TOOL_CALL","content":{"id":"c2","name":"get-sum","args":{"a":2,"b":40}}}"#;
const END: &[u8] = br#"{"type":"END"}"#;

/// What the model must get for them, in either order.
const R1: &[u8] = br#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: hi from the M4"}]}}"#;
const R2: &[u8] = br#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"get-sum","result":[{"type":"text","text":"The sum of 2 and 40 is 42."}]}}"#;
/// Then the continue prompt (no call failed), to the model and mirrored to the consumer.
const PROMPT: &[u8] = br#"{"type":"TEXT","content":"Tool results above."}"#;

/// `mcp-big-echo`'s call: `echo` of `hi` and `BIG_XS` `x`s.
const BIG_HEAD: &[u8] =
    br#"{"type":"TOOL_CALL","content":{"id":"c3","name":"echo","args":{"message":"hi"#;
const BIG_TAIL: &[u8] = br#""}}}"#;
const BIG_XS: usize = 3_898;
const BIG_LEN: usize = BIG_HEAD.len() + BIG_XS + BIG_TAIL.len();
/// Its result: `Echo: hi` and every `x`.
const BIG_RESULT_HEAD: &[u8] = br#"{"type":"TOOL_RESULT","content":{"id":"c3","name":"echo","result":[{"type":"text","text":"Echo: hi"#;
const BIG_RESULT_TAIL: &[u8] = br#""}]}}"#;
static BIG_CALL: ConstStaticCell<[u8; BIG_LEN]> = ConstStaticCell::new([b'x'; BIG_LEN]);

/// The results the model must get, by their call.
const RESULTS: usize = CALLS;

/// No verdict within this much embassy time fails the run.
const SESSION: Duration = Duration::from_secs(20);
/// Bytes taken from the UART at a time (QEMU's UART holds one; more may be waiting by then).
const RX_CHUNK: usize = 64;
/// How much of a frame or line the log shows.
const SHOWN: usize = 160;

defmt::timestamp!("{=u64:ms}", embassy_time::Instant::now().as_millis());

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    let p = cortex_m::Peripherals::take().unwrap();
    time_driver::init(p.SYST);
    let client = McpClient::new(MCP_CFG, INFO, MCP_SLOTS.take(), MCP_ARENA.take())
        .unwrap_or_else(|e| fail!("McpClient::new: {}", e));
    info!(
        "MCP client: {=usize} bytes, arena {=usize} bytes for {=usize} calls (line_cap {=usize}, outbox {=usize}), output buffer {=usize}; wrapper: arena {=usize}, frame buffer {=usize}",
        core::mem::size_of_val(&client),
        MCP_CFG.arena_len(CALLS),
        CALLS,
        MCP_CFG.line_cap,
        MCP_CFG.outbox_cap,
        OUT_LEN,
        W_CFG.arena_len(CALLS),
        W_CFG.max_frame_len()
    );
    let mut host = Host {
        link: Link {
            uart: Uart0::take().unwrap(),
            out: OUT.take(),
            slow: false,
        },
        w_tx: W_TX.take(),
        verdict: Verdict::default(),
        startup: Startup::default(),
    };
    match with_timeout(SESSION, session(&mut host, client)).await {
        Ok(ms) => {
            info!(
                "PASS: {=usize} MCP tool results, the prompt and END over UART0 ({=u64} ms, calls {=u64} ms)",
                RESULTS,
                now().as_millis(),
                ms
            );
            debug::exit(debug::EXIT_SUCCESS);
        }
        Err(_) => fail!(
            "no verdict within {=u64} ms: {}",
            SESSION.as_millis(),
            host.verdict
        ),
    }
}

/// The whole run; returns the milliseconds from the first call to the `END`.
async fn session(h: &mut Host, mut client: McpClient<'static>) -> u64 {
    let mut rx = [0u8; RX_CHUNK];

    // Start-up: `server/discover` (server-everything refuses it: `initialize` follows), the
    // tools listed, before any wrapper exists; the client's deadline for the discovery on
    // embassy time.
    client
        .start(now())
        .unwrap_or_else(|e| fail!("McpClient::start: {}", e));
    loop {
        h.pump(&mut client, None);
        if h.startup.ready {
            break;
        }
        let deadline = client.poll_timeout();
        let timer = async {
            match deadline {
                Some(d) => Timer::at(d.into()).await,
                None => core::future::pending().await,
            }
        };
        match select(h.link.receive(&mut rx), timer).await {
            Either::First(n) => h.feed(&mut client, None, &rx[..n]),
            Either::Second(()) => {
                warn!("server/discover unanswered: initialize next");
                client.handle_timeout(now());
            }
        }
    }
    info!(
        "start-up done: {=usize} tools listed, {=u64} ms",
        h.startup.listed,
        now().as_millis()
    );

    // The wrapper, over the wanted tools that were listed.
    for (name, listed) in WANTED.iter().zip(h.startup.wanted) {
        if !listed {
            fail!("the server did not list {=str}", name);
        }
    }
    let tools = WANTED.map(Tool::adapter);
    let mut w = Wrapper::new(W_CFG, &tools, NoHooks, W_SLOTS.take(), W_ARENA.take())
        .unwrap_or_else(|e| fail!("Wrapper::new: {}", e));

    // The model's turn.
    let big: &[u8] = if BIG {
        let call = BIG_CALL.take();
        call[..BIG_HEAD.len()].copy_from_slice(BIG_HEAD);
        call[BIG_LEN - BIG_TAIL.len()..].copy_from_slice(BIG_TAIL);
        &call[..]
    } else {
        &[]
    };
    let script: [&[u8]; 4] = [C1, C2, big, END];
    let t0 = now();
    for frame in script.into_iter().filter(|f| !f.is_empty()) {
        info!("model -> {=str}", shown(frame));
        match w.handle_response(now(), frame) {
            Ok(Disposition::Intercepted { .. }) => {}
            Ok(Disposition::Held) => {
                info!("END held while {=usize} calls are pending", w.pending())
            }
            Ok(Disposition::Forward) => h.verdict.consumer(frame),
            Err(e) => fail!("handle_response: {}", e),
        }
        h.pump(&mut client, Some(&mut w));
    }

    // Until the consumer has its END: bytes from the server, or the wrapper's next deadline.
    h.link.slow = cfg!(feature = "mcp-slow-rx");
    while !h.verdict.end {
        let deadline = w.poll_timeout();
        let timer = async {
            match deadline {
                Some(d) => Timer::at(d.into()).await,
                None => core::future::pending().await,
            }
        };
        match select(h.link.receive(&mut rx), timer).await {
            Either::First(n) => h.feed(&mut client, Some(&mut w), &rx[..n]),
            Either::Second(()) => {
                warn!("a call timed out ({=usize} pending)", w.pending());
                w.handle_timeout(now())
                    .unwrap_or_else(|e| fail!("handle_timeout: {}", e));
                h.pump(&mut client, Some(&mut w));
            }
        }
    }
    let ms = now().as_millis() - t0.as_millis();
    if w.pending() != 0 || client.in_flight() != 0 {
        fail!(
            "after END: {=usize} calls pending, {=usize} in flight",
            w.pending(),
            client.in_flight()
        );
    }
    if h.link.uart.take_overrun() {
        fail!("UART0 RX overrun: bytes were lost");
    }
    info!("client stats: {}", client.stats());
    info!("wrapper stats: {}", w.stats());
    ms
}

/// UART0 and the client's output buffer.
struct Link {
    uart: Uart0,
    out: &'static mut [u8; OUT_LEN],
    /// One byte per millisecond (`mcp-slow-rx`, once the calls are out).
    slow: bool,
}

impl Link {
    /// Waits for bytes from the server and reads them into `rx` (at least one).
    async fn receive(&mut self, rx: &mut [u8; RX_CHUNK]) -> usize {
        if !self.slow {
            return self.uart.read(rx).await;
        }
        Timer::after_millis(1).await;
        let n = self.uart.read(&mut rx[..1]).await;
        if self.uart.take_overrun() {
            fail!("UART0 RX overrun");
        }
        n
    }

    /// The client's lines, out of the UART; true when any went.
    fn lines(&mut self, c: &mut McpClient<'_>) -> bool {
        let mut moved = false;
        loop {
            match c.poll_transmit(&mut self.out[..]) {
                Ok(Some(n)) => {
                    moved = true;
                    let line = &self.out[..n];
                    info!("server <- {=usize} bytes: {=str}", n, shown(&line[..n - 1]));
                    self.uart.write_all(line);
                }
                Ok(None) => return moved,
                Err(e) => fail!("client poll_transmit: {}", e),
            }
        }
    }

    /// The client's frames for its calls, into the wrapper; true when any went.
    fn frames(&mut self, c: &mut McpClient<'_>, w: Option<&mut Wrapper<'_>>) -> bool {
        let Some(w) = w else {
            if let Ok(Some(f)) = c.poll_frame(&mut self.out[..]) {
                fail!("a frame before any call: {=str}", shown(&self.out[..f.len]));
            }
            return false;
        };
        let mut moved = false;
        loop {
            match c.poll_frame(&mut self.out[..]) {
                Ok(Some(f)) => {
                    moved = true;
                    let frame = &self.out[..f.len];
                    info!(
                        "wrapper <- {} {=usize} bytes: {=str}",
                        f.handle,
                        f.len,
                        shown(frame)
                    );
                    w.handle_adapter_frame(now(), f.handle, frame)
                        .unwrap_or_else(|e| fail!("handle_adapter_frame: {}", e));
                }
                Ok(None) => return moved,
                Err(e) => fail!("client poll_frame: {}", e),
            }
        }
    }
}

/// What the start-up told.
#[derive(Default)]
struct Startup {
    /// Tools listed.
    listed: usize,
    /// Which of `WANTED` were.
    wanted: [bool; WANTED.len()],
    ready: bool,
}

/// The model's and the consumer's frames, checked as they come.
#[derive(Default, defmt::Format)]
struct Verdict {
    /// Which of the expected results the model got.
    results: [bool; RESULTS],
    /// The prompt, to the model and to the consumer.
    model_prompt: bool,
    consumer_prompt: bool,
    /// The `END` the consumer got after its prompt.
    end: bool,
}

impl Verdict {
    fn model(&mut self, frame: &[u8]) {
        info!("model <- {=str}", shown(frame));
        if self.model_prompt {
            fail!("a frame for the model after the prompt");
        }
        if frame == PROMPT {
            if self.results.contains(&false) {
                fail!("the prompt before every result: {}", self.results);
            }
            self.model_prompt = true;
            return;
        }
        match (0..RESULTS).find(|&i| expected_result(i, frame)) {
            Some(i) if !self.results[i] => self.results[i] = true,
            Some(i) => fail!("result {=usize} twice", i),
            None => fail!("not an expected result"),
        }
    }

    fn consumer(&mut self, frame: &[u8]) {
        info!("consumer <- {=str}", shown(frame));
        match (self.consumer_prompt, self.end) {
            (false, _) if frame == PROMPT && self.model_prompt => self.consumer_prompt = true,
            (true, false) if frame == END => self.end = true,
            _ => fail!("not the frame the consumer expects: {}", self),
        }
    }
}

/// Whether `frame` is the `i`-th expected `TOOL_RESULT`.
fn expected_result(i: usize, frame: &[u8]) -> bool {
    match i {
        0 => frame == R1,
        1 => frame == R2,
        _ => {
            let Some(rest) = frame.strip_prefix(BIG_RESULT_HEAD) else {
                return false;
            };
            let xs = rest.iter().take_while(|&&b| b == b'x').count();
            if xs != BIG_XS {
                warn!("{=usize} of {=usize} x came back", xs, BIG_XS);
                return false;
            }
            info!("all {=usize} x came back", xs);
            &rest[xs..] == BIG_RESULT_TAIL
        }
    }
}

/// Both machines and what they owe each other.
struct Host {
    link: Link,
    w_tx: &'static mut [u8; W_CFG.max_frame_len()],
    verdict: Verdict,
    startup: Startup,
}

impl Host {
    /// Bytes from the server, a line at a time, everything owed drained after each piece.
    fn feed(&mut self, c: &mut McpClient<'_>, mut w: Option<&mut Wrapper<'_>>, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let n = c.feed(bytes);
            bytes = &bytes[n..];
            let moved = self.pump(c, w.as_deref_mut());
            if n == 0 && !moved {
                fail!("the client takes no bytes and owes nothing");
            }
        }
    }

    /// Drains the wrapper's events and frames, then the client's events, frames and lines,
    /// until neither has anything to give; true when anything moved.
    fn pump(&mut self, c: &mut McpClient<'_>, mut w: Option<&mut Wrapper<'_>>) -> bool {
        let mut any = false;
        loop {
            let mut moved = false;
            if let Some(w) = w.as_deref_mut() {
                moved |= self.wrapper_out(c, w);
            }
            moved |= self.events(c);
            moved |= self.link.frames(c, w.as_deref_mut());
            moved |= self.link.lines(c);
            if !moved {
                return any;
            }
            any = true;
        }
    }

    /// The wrapper's events and frames: adapter frames to the client, the others checked.
    fn wrapper_out(&mut self, c: &mut McpClient<'_>, w: &mut Wrapper<'_>) -> bool {
        let mut moved = false;
        loop {
            let t = match w.poll_transmit(&mut self.w_tx[..]) {
                Ok(Some(t)) => t,
                Ok(None) => break,
                Err(e) => fail!("wrapper poll_transmit: {}", e),
            };
            moved = true;
            let frame = &self.w_tx[..t.len];
            match t.route {
                Route::Model => self.verdict.model(frame),
                Route::Consumer => self.verdict.consumer(frame),
                Route::Adapter(handle) => to_client(&mut self.link, c, w, handle, frame),
            }
        }
        while let Some(Event::CallStarted {
            handle, name, id, ..
        }) = w.poll_event()
        {
            moved = true;
            info!("{=str} {=str} started: {}", id.unwrap_or("-"), name, handle);
        }
        moved
    }

    /// The client's events: the start-up, the listed tools, the server's notifications.
    fn events(&mut self, c: &mut McpClient<'_>) -> bool {
        let mut moved = false;
        while let Some(e) = c.poll_event() {
            moved = true;
            match e {
                McpEvent::Initialized {
                    protocol_version,
                    result,
                } => info!(
                    "initialized ({=str}): {=str}",
                    protocol_version,
                    shown(result)
                ),
                McpEvent::Tool { name, .. } => {
                    self.startup.listed += 1;
                    let wanted = WANTED.iter().position(|&t| t == name);
                    if let Some(i) = wanted {
                        self.startup.wanted[i] = true;
                    }
                    info!(
                        "tool {=str}{=str}",
                        name,
                        if wanted.is_some() { " (wanted)" } else { "" }
                    );
                }
                McpEvent::ToolSkipped { reason, tool } => {
                    warn!("tool skipped ({}): {=str}", reason, shown(tool))
                }
                McpEvent::Ready { tools } => {
                    info!("ready: {=u32} tools", tools);
                    self.startup.ready = true;
                }
                // The wrapper's tools are fixed once it is built: the ones listed at start-up
                // are served.
                McpEvent::ToolsChanged { tools } => info!("tools changed: {=u32} tools", tools),
                McpEvent::StartFailed(why) => match why {
                    McpStartError::UnsupportedVersion(v) => {
                        fail!("the start-up failed: version {=str}", shown(v))
                    }
                    McpStartError::BadResult(r) => fail!("the start-up failed: {=str}", shown(r)),
                    McpStartError::Refused(e) => {
                        fail!("the start-up was refused: {=str}", shown(e))
                    }
                    other => fail!("the start-up failed: {}", other),
                },
                McpEvent::Notification { method, params } => info!(
                    "notification {=str}: {=str}",
                    text(method.raw()),
                    shown(params.unwrap_or(b"-"))
                ),
            }
        }
        moved
    }
}

/// An adapter frame (`TOOL_CALL` or `CANCEL`) from the wrapper, into the client; a full
/// outbox is written out first, a frame the client owes is given to the wrapper first.
fn to_client(
    link: &mut Link,
    c: &mut McpClient<'_>,
    w: &mut Wrapper<'_>,
    handle: CallHandle,
    frame: &[u8],
) {
    info!("client <- {} {=str}", handle, shown(frame));
    loop {
        match c.handle_frame(handle, frame) {
            Ok(McpHandled::Sent { request }) => info!("request {=u64} queued", request),
            Ok(McpHandled::Cancelled { notified }) => {
                warn!("cancelled (server told: {=bool})", notified)
            }
            Ok(McpHandled::Failed(why)) => warn!("the client failed the call: {}", why),
            // Retried once what blocks it has moved.
            Err(McpError::OutboxFull { .. }) if link.lines(c) => continue,
            Err(McpError::FramePending) if link.frames(c, Some(w)) => continue,
            Err(e) => fail!("client handle_frame: {}", e),
        }
        return;
    }
}

/// Embassy time as the core wants it.
fn now() -> Instant {
    embassy_time::Instant::now().into()
}

fn text(bytes: &[u8]) -> &str {
    core::str::from_utf8(bytes).unwrap_or("<not UTF-8>")
}

/// The first `SHOWN` bytes, cut back to whole UTF-8 characters.
fn shown(bytes: &[u8]) -> &str {
    let head = &bytes[..bytes.len().min(SHOWN)];
    match core::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => core::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// Interrupts: IRQ 0 is UART0's receive line; anything else is a bug.
#[cortex_m_rt::exception]
unsafe fn DefaultHandler(irqn: i16) {
    if irqn == 0 {
        uart::on_interrupt();
    } else {
        fail!("unexpected exception or interrupt {=i16}", irqn);
    }
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
