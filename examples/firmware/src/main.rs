//! The sans-IO wrapper on a microcontroller: an embassy task feeds a scripted model stream
//! through `LineFramer` into a `Wrapper` with static storage, runs a sync tool, completes a
//! deferred tool from another task, lets a third call time out on SysTick time, and checks
//! every frame it owes. It runs on QEMU's mps2-an386 (Cortex-M4F) and reports over semihosting:
//! the exit status is the verdict, so `cargo run --release` is the test.

#![no_std]
#![no_main]

mod time_driver;

use core::fmt;

use cortex_m_semihosting::{debug, hprintln};
use embassy_executor::Spawner;
use embassy_futures::select::{select, Either};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use embassy_time::Timer;
use polyweave_tool_adapter::framing::LineFramer;
use polyweave_tool_adapter::{
    typed, CallHandle, Config, Disposition, Event, Instant, NoHooks, ResultWriter, Route, Slot,
    Tool, ToolFailed, Wrapper,
};
use static_cell::ConstStaticCell;

/// Prints why and exits QEMU with a failure status.
macro_rules! fail {
    ($($arg:tt)*) => { crate::fail(format_args!($($arg)*)) };
}

/// Deferred and adapter calls that can be pending at once (the sync `add` needs no slot).
const SLOTS: usize = 2;
/// 100 ms for deferred calls unless a tool sets its own; capacities stay at the defaults.
const CFG: Config = Config {
    tool_timeout_ms: 100,
    ..Config::DEFAULT
};
const ARENA_LEN: usize = CFG.arena_len(SLOTS);

static SLOT_MEM: ConstStaticCell<[Slot; SLOTS]> = ConstStaticCell::new([Slot::EMPTY; SLOTS]);
static ARENA: ConstStaticCell<[u8; ARENA_LEN]> = ConstStaticCell::new([0; ARENA_LEN]);
/// The longest model line the framer holds.
static LINE: ConstStaticCell<[u8; 256]> = ConstStaticCell::new([0; 256]);
/// Where `poll_transmit` writes each frame.
static TX: ConstStaticCell<[u8; 512]> = ConstStaticCell::new([0; 512]);

/// `lookup` calls for the worker task, and the handles it finished.
static LOOKUPS: Channel<CriticalSectionRawMutex, CallHandle, SLOTS> = Channel::new();
static LOOKED_UP: Channel<CriticalSectionRawMutex, CallHandle, SLOTS> = Channel::new();
const LOOKUP_RESULT: &[u8] = br#"{"rfc":8259}"#;

/// What the model says, as NDJSON; it arrives in chunks of `CHUNK` bytes.
const MODEL: &[u8] = br#"{"type":"TEXT","content":"Let me check."}
{"type":"TOOL_CALL","content":{"id":"c1","name":"lookup","args":{"q":"json"}}}
{"type":"TOOL_CALL","content":{"id":"c2","name":"slow","args":{}}}
{"type":"TOOL_CALL","content":{"id":"c3","name":"add","args":{"a":2,"b":40}}}
{"type":"END"}
"#;
const CHUNK: usize = 7;

/// Every frame the host must write, in order (forwarded text included).
const EXPECTED: &[(Route, &[u8])] = &[
    (Route::Consumer, br#"{"type":"TEXT","content":"Let me check."}"#),
    (Route::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c3","name":"add","result":42}}"#),
    (Route::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"lookup","result":{"rfc":8259}}}"#),
    (Route::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"slow","error":"Tool slow timed out after 100ms"}}"#),
    (Route::Model, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool slow timed out after 100ms"}"#),
    (Route::Consumer, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool slow timed out after 100ms"}"#),
    (Route::Consumer, br#"{"type":"END"}"#),
];

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

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let p = cortex_m::Peripherals::take().unwrap();
    time_driver::init(p.SYST);
    spawner.spawn(lookup_worker().unwrap());

    let tools = [
        Tool::sync("add", &add),
        Tool::deferred("lookup").with_timeout_ms(1_000),
        Tool::deferred("slow"),
    ];
    let mut w = Wrapper::new(CFG, &tools, NoHooks, SLOT_MEM.take(), ARENA.take())
        .unwrap_or_else(|e| fail!("Wrapper::new: {:?}", e));
    hprintln!(
        "Wrapper: {} bytes, arena: {} bytes for {} slots",
        core::mem::size_of_val(&w),
        ARENA_LEN,
        SLOTS
    );
    let mut host = Host {
        tx: TX.take(),
        next: 0,
        started: [None; 2],
    };

    let mut framer = LineFramer::new(LINE.take());
    for chunk in MODEL.chunks(CHUNK) {
        let mut rest = chunk;
        while !rest.is_empty() {
            rest = &rest[framer.feed(rest)..];
            while let Some(line) = framer.next_line() {
                let line = line.unwrap_or_else(|e| fail!("framing: {:?}", e));
                let t = now();
                match w.handle_response(t, line) {
                    Ok(Disposition::Forward) => host.forward(line),
                    Ok(Disposition::Intercepted { .. } | Disposition::Held) => {}
                    Err(e) => fail!("handle_response: {:?}", e),
                }
                host.pump(&mut w, t);
            }
        }
        // Let the worker run between chunks, as if bytes came from a UART.
        embassy_futures::yield_now().await;
    }

    // Wait for the worker or for the earliest deadline, whichever comes first.
    while w.pending() > 0 {
        let Some(deadline) = w.poll_timeout() else {
            fail!("{} calls pending without a deadline", w.pending())
        };
        let woken = select(LOOKED_UP.receive(), Timer::at(deadline.into())).await;
        let t = now();
        match woken {
            Either::First(handle) => {
                hprintln!("lookup completed after {} ms", host.elapsed(LOOKUP, t));
                w.complete(t, handle, Ok(LOOKUP_RESULT))
                    .unwrap_or_else(|e| fail!("complete: {:?}", e));
            }
            Either::Second(()) => {
                let elapsed = host.elapsed(SLOW, t);
                hprintln!(
                    "timeout at {} ms (deadline {} ms): {} ms after the call",
                    t.as_millis(),
                    deadline.as_millis(),
                    elapsed
                );
                if elapsed != 100 {
                    fail!("slow timed out after {} ms, not 100 ms", elapsed);
                }
                w.handle_timeout(t)
                    .unwrap_or_else(|e| fail!("handle_timeout: {:?}", e));
            }
        }
        host.pump(&mut w, t);
    }

    if host.next != EXPECTED.len() {
        fail!("{} of {} frames seen", host.next, EXPECTED.len());
    }
    hprintln!("PASS ({} ms of emulated time)", now().as_millis());
    debug::exit(debug::EXIT_SUCCESS);
}

/// Indices into `Host::started`.
const LOOKUP: usize = 0;
const SLOW: usize = 1;

/// The host side of the loop: checks frames against `EXPECTED`, starts deferred calls.
struct Host {
    tx: &'static mut [u8; 512],
    next: usize,
    /// When `lookup` and `slow` started.
    started: [Option<Instant>; 2],
}

impl Host {
    /// Milliseconds from the start of call `which` to `t`.
    fn elapsed(&self, which: usize, t: Instant) -> u64 {
        let Some(start) = self.started[which] else {
            fail!("call {} never started", which)
        };
        t.as_millis() - start.as_millis()
    }

    /// A frame the host forwards unchanged.
    fn forward(&mut self, frame: &[u8]) {
        check(&mut self.next, Route::Consumer, frame);
    }

    /// After an input at `t`: drains the frames the wrapper owes, then its events
    /// (the polling order it asks for).
    fn pump(&mut self, w: &mut Wrapper<'_>, t: Instant) {
        loop {
            match w.poll_transmit(self.tx) {
                Ok(Some(t)) => check(&mut self.next, t.route, &self.tx[..t.len]),
                Ok(None) => break,
                Err(e) => fail!("poll_transmit: {:?}", e),
            }
        }
        while let Some(Event::CallStarted { handle, name, .. }) = w.poll_event() {
            hprintln!("{} started at {} ms", name, t.as_millis());
            match name {
                "lookup" => {
                    self.started[LOOKUP] = Some(t);
                    if LOOKUPS.try_send(handle).is_err() {
                        fail!("lookup queue full");
                    }
                }
                // Nobody completes `slow`: it must time out.
                _ => self.started[SLOW] = Some(t),
            }
        }
    }
}

/// Prints a frame and checks it is the next one expected.
fn check(next: &mut usize, route: Route, frame: &[u8]) {
    hprintln!("{:?}: {}", route, text(frame));
    match EXPECTED.get(*next) {
        Some(&(r, f)) if r == route && f == frame => *next += 1,
        Some(&(r, f)) => fail!("frame {}: expected {:?}: {}", next, r, text(f)),
        None => fail!("frame {} not expected", next),
    }
}

/// Emulated time as the core wants it.
fn now() -> Instant {
    embassy_time::Instant::now().into()
}

fn text(frame: &[u8]) -> &str {
    core::str::from_utf8(frame).unwrap_or("<not UTF-8>")
}

fn fail(why: fmt::Arguments<'_>) -> ! {
    hprintln!("FAIL: {}", why);
    debug::exit(debug::EXIT_FAILURE);
    // Only reached without a debugger: stop in HardFault.
    cortex_m::asm::udf()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    fail!("{}", info)
}
