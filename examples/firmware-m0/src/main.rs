//! The core on a Cortex-M0 (QEMU `microbit`, nRF51822: 16 KiB of RAM, no FPU, no 64-bit atomics).
//!
//! No executor: a plain poll loop, which is what the sans-IO core asks of a host. Time comes from
//! the nRF51's TIMER0 (1 MHz, 32-bit), captured on each pass; the wrapper runs the small
//! configuration (4 slots, the arena in a `static`). One round: text, a deferred call the host
//! completes 30 ms later, a deferred call nobody completes (it times out at 50 ms), a sync call,
//! and an `END` the wrapper holds until the prompt. Every frame written is checked, byte for
//! byte and in order; the verdict is the semihosting exit status (QEMU exits 0 or 1).

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use polyweave_tool_adapter::frame::LineSplitter;
use polyweave_tool_adapter::{
    Disposition, Event, Instant, NoHooks, ResultWriter, Route, Slot, Tool, ToolFailed, Wrapper,
    WrapperConfig,
};

/// Pending calls at once.
const SLOTS: usize = 4;
/// The small configuration of core/DESIGN.md's RAM table ("Footprint on a Cortex-M4F"), with a
/// 50 ms timeout for deferred calls.
const SMALL: WrapperConfig = WrapperConfig {
    tool_timeout_ms: 50,
    ..WrapperConfig::SMALL
};
const ARENA_LEN: usize = SMALL.arena_len(SLOTS);

/// The model's round, as NDJSON; it arrives in chunks of `CHUNK` bytes, as from a UART.
const ROUND: &[u8] = br#"{"type":"TEXT","content":"Let me check."}
{"type":"TOOL_CALL","content":{"id":"c1","name":"lookup","args":{"q":"json"}}}
{"type":"TOOL_CALL","content":{"id":"c2","name":"slow","args":{}}}
{"type":"TOOL_CALL","content":{"id":"c3","name":"add","args":{"a":2,"b":40}}}
{"type":"END"}
"#;
const CHUNK: usize = 5;
/// The host finishes `lookup` this long after it started.
const LOOKUP_MS: u64 = 30;
const LOOKUP_RESULT: &[u8] = br#"{"rfc":8259}"#;

/// Where a frame goes, as `EXPECTED` names it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum To {
    Model,
    Consumer,
}

/// Every frame the host must write, in order (forwarded text included).
const EXPECTED: &[(To, &[u8])] = &[
    (To::Consumer, br#"{"type":"TEXT","content":"Let me check."}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c3","name":"add","result":42}}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"lookup","result":{"rfc":8259}}}"#),
    (To::Model, br#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"slow","error":"Tool slow timed out after 50ms"}}"#),
    (To::Model, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool slow timed out after 50ms"}"#),
    (To::Consumer, br#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool slow timed out after 50ms"}"#),
    (To::Consumer, br#"{"type":"END"}"#),
];

/// The nRF51's TIMER0 (reference manual, TIMER chapter): base and register offsets.
mod timer0 {
    const BASE: usize = 0x4000_8000;
    const TASKS_START: usize = BASE;
    const TASKS_CAPTURE0: usize = BASE + 0x040;
    const MODE: usize = BASE + 0x504;
    const BITMODE: usize = BASE + 0x508;
    const PRESCALER: usize = BASE + 0x510;
    const CC0: usize = BASE + 0x540;

    fn write(addr: usize, value: u32) {
        // SAFETY: a TIMER0 register of the nRF51's memory map; this firmware is its only user.
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
    }

    /// Timer mode, 32 bits, 16 MHz / 2^4 = 1 MHz, started.
    pub fn start() {
        write(MODE, 0);
        write(BITMODE, 3);
        write(PRESCALER, 4);
        write(TASKS_START, 1);
    }

    /// Microseconds since `start` (wraps after 71 minutes; this run lasts well under one second).
    pub fn micros() -> u32 {
        write(TASKS_CAPTURE0, 1);
        // SAFETY: as in `write`; CC[0] holds the count the capture task just copied.
        unsafe { core::ptr::read_volatile(CC0 as *const u32) }
    }
}

fn now() -> Instant {
    Instant::from_millis(u64::from(timer0::micros() / 1000))
}

/// The sync tool: `{"a":2,"b":40}` gives 42 (a fixed answer: the firmware checks the core, not a parser).
fn add(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(b"42");
    Ok(())
}

/// Frames written so far, checked against `EXPECTED`.
struct Host<'b> {
    tx: &'b mut [u8],
    next: usize,
    /// `lookup`'s handle and when it started.
    lookup: Option<(polyweave_tool_adapter::CallHandle, Instant)>,
    /// `slow`'s start.
    slow_started: Option<Instant>,
}

impl Host<'_> {
    /// Drains the frames the wrapper owes, then its events (the polling order it asks for).
    fn pump(&mut self, w: &mut Wrapper<'_>, t: Instant) {
        while let Some(out) = w
            .poll_transmit(self.tx)
            .unwrap_or_else(|_| fail("poll_transmit"))
        {
            let to = match out.route {
                Route::Model => To::Model,
                Route::Consumer => To::Consumer,
                Route::Adapter(_) => fail("no adapter here"),
            };
            check(&mut self.next, to, &self.tx[..out.len]);
        }
        while let Some(event) = w.poll_event() {
            let Event::CallStarted { handle, name, .. } = event;
            hprintln!("{} started at {} ms", name, t.as_millis());
            match name {
                "lookup" => self.lookup = Some((handle, t)),
                _ => self.slow_started = Some(t),
            }
        }
    }
}

fn check(next: &mut usize, to: To, frame: &[u8]) {
    let text = core::str::from_utf8(frame).unwrap_or("<not UTF-8>");
    hprintln!("{:?} <- {}", to, text);
    match EXPECTED.get(*next) {
        Some(&(r, f)) if r == to && f == frame => *next += 1,
        _ => fail("unexpected frame"),
    }
}

#[entry]
fn main() -> ! {
    timer0::start();
    let slots = cortex_m::singleton!(: [Slot; SLOTS] = [Slot::EMPTY; SLOTS]).unwrap();
    let arena = cortex_m::singleton!(: [u8; ARENA_LEN] = [0; ARENA_LEN]).unwrap();
    let line = cortex_m::singleton!(: [u8; 128] = [0; 128]).unwrap();
    let tx = cortex_m::singleton!(: [u8; 256] = [0; 256]).unwrap();
    hprintln!(
        "Cortex-M0: arena {} bytes for {} slots, Wrapper {} bytes",
        ARENA_LEN,
        SLOTS,
        core::mem::size_of::<Wrapper<'static>>()
    );

    let tools = [
        Tool::sync("add", &add),
        Tool::deferred("lookup"),
        Tool::deferred("slow"),
    ];
    let mut w =
        Wrapper::new(SMALL, &tools, NoHooks, slots, arena).unwrap_or_else(|_| fail("Wrapper::new"));
    let mut host = Host {
        tx,
        next: 0,
        lookup: None,
        slow_started: None,
    };
    let mut framer = LineSplitter::new(line);
    let mut held = 0;
    for chunk in ROUND.chunks(CHUNK) {
        let mut rest = chunk;
        while !rest.is_empty() {
            rest = &rest[framer.feed(rest)..];
            while let Some(frame) = framer.next_line() {
                let frame = frame.unwrap_or_else(|_| fail("line too long"));
                let t = now();
                match w.handle_response(t, frame) {
                    Ok(Disposition::Forward) => check(&mut host.next, To::Consumer, frame),
                    Ok(Disposition::Held) => held += 1,
                    Ok(Disposition::Intercepted { .. }) => {}
                    Err(_) => fail("handle_response"),
                }
                host.pump(&mut w, t);
            }
        }
    }
    if held != 1 {
        fail("END not held");
    }

    // Until every call is answered: complete `lookup` when due, expire what is overdue.
    while w.pending() > 0 {
        let t = now();
        if t.as_millis() > 1_000 {
            fail("still pending after 1 s");
        }
        if let Some((handle, started)) = host.lookup {
            if t.as_millis() - started.as_millis() >= LOOKUP_MS {
                w.complete(t, handle, Ok(LOOKUP_RESULT))
                    .unwrap_or_else(|_| fail("complete"));
                hprintln!("lookup completed at {} ms", t.as_millis());
                host.lookup = None;
            }
        }
        if w.poll_timeout().is_some_and(|deadline| t >= deadline) {
            let started = host.slow_started.map_or(0, |s| s.as_millis());
            hprintln!(
                "timeout at {} ms, {} ms after the call",
                t.as_millis(),
                t.as_millis() - started
            );
            w.handle_timeout(t)
                .unwrap_or_else(|_| fail("handle_timeout"));
        }
        host.pump(&mut w, t);
    }
    if host.next != EXPECTED.len() {
        fail("frames missing");
    }
    hprintln!(
        "PASS: {} frames, TIMER0 at {} us",
        host.next,
        timer0::micros()
    );
    debug::exit(debug::EXIT_SUCCESS);
    // Only reached without a debugger attached: stop in HardFault.
    cortex_m::asm::udf()
}

fn fail(why: &str) -> ! {
    hprintln!("FAIL: {}", why);
    debug::exit(debug::EXIT_FAILURE);
    cortex_m::asm::udf()
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    fail("panic")
}
