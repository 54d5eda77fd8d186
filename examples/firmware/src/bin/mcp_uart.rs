//! Proof of the MCP transport: the firmware talks JSON-RPC 2.0 (one message per LF-terminated
//! line) over UART0 to a real MCP server, which `mcp/bridge.py` runs on the host and connects
//! to QEMU's UART0 chardev.
//!
//! It sends `initialize`, reads the response line, sends `notifications/initialized` and a
//! `tools/call` of the server's `echo` tool, and passes iff the response has `"id":2` and the
//! echoed text. Notifications from the server (lines without an `id`) are logged and skipped.
//! The verdict is the semihosting exit status; the whole session has 10 s of embassy time.
//!
//! With the feature `mcp-big-echo`, the echoed message is 3 900 bytes long (a line of about
//! 4 KB each way); with `mcp-slow-rx` as well, the firmware reads each byte of the response
//! 1 ms after the previous one, checking that the UART never overran and every byte came back
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
use embassy_time::{with_timeout, Duration, Instant};
use static_cell::ConstStaticCell;
use uart::Uart0;

/// Logs why and exits QEMU with a failure status.
macro_rules! fail {
    ($($arg:tt)*) => {{
        error!($($arg)*);
        crate::exit_failure()
    }};
}

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"polyweave-firmware","version":"0.1.0"}}}
"#;
const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;
/// The `tools/call` request around the echoed message.
const CALL_HEAD: &[u8] =
    br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":""#;
const CALL_TAIL: &[u8] = b"\"}}}\n";
/// The message: `hi`, or with `mcp-big-echo` `hi` and 3 898 `x`s.
const MESSAGE_LEN: usize = if cfg!(feature = "mcp-big-echo") {
    3_900
} else {
    2
};
/// The padding of the big message, a piece at a time.
const XS: [u8; 64] = [b'x'; 64];

/// The whole session must end within this much embassy time.
const SESSION: Duration = Duration::from_secs(10);
/// The longest line the firmware takes from the server.
const LINE_CAP: usize = 4096;
/// How much of a line the log shows.
const SHOWN: usize = 80;

static LINE: ConstStaticCell<[u8; LINE_CAP]> = ConstStaticCell::new([0; LINE_CAP]);

defmt::timestamp!("{=u64:ms}", Instant::now().as_millis());

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    let p = cortex_m::Peripherals::take().unwrap();
    time_driver::init(p.SYST);
    let mut link = Link {
        uart: Uart0::take().unwrap(),
        buf: LINE.take(),
        len: 0,
        consumed: 0,
        first_byte: Instant::now(),
    };
    match with_timeout(SESSION, session(&mut link)).await {
        Ok(()) => {
            info!(
                "PASS: initialize and tools/call echo over UART0 ({=u64} ms)",
                Instant::now().as_millis()
            );
            debug::exit(debug::EXIT_SUCCESS);
        }
        Err(_) => fail!("no answer within {=u64} ms", SESSION.as_millis()),
    }
}

async fn session(link: &mut Link) {
    let t0 = Instant::now();
    link.uart.write_all(INITIALIZE);
    let len = link.response().await;
    let line = &link.buf[..len];
    info!(
        "initialize response: {=usize} bytes after {=u64} ms ({=u64} ms from its first byte): {=str}",
        len,
        t0.elapsed().as_millis(),
        link.first_byte.elapsed().as_millis(),
        shown(line)
    );
    if !contains(line, br#""id":1"#) || !contains(line, br#""result""#) {
        fail!("initialize failed");
    }

    link.uart.write_all(INITIALIZED);
    let t1 = Instant::now();
    link.uart.write_all(CALL_HEAD);
    link.uart.write_all(b"hi");
    let mut padding = MESSAGE_LEN - 2;
    while padding > 0 {
        let n = padding.min(XS.len());
        link.uart.write_all(&XS[..n]);
        padding -= n;
    }
    link.uart.write_all(CALL_TAIL);
    let len = link.response().await;
    let line = &link.buf[..len];
    info!(
        "tools/call response: {=usize} bytes after {=u64} ms ({=u64} ms from its first byte): {=str}",
        len,
        t1.elapsed().as_millis(),
        link.first_byte.elapsed().as_millis(),
        shown(line)
    );
    if !contains(line, br#""id":2"#) || !contains(line, b"hi") {
        fail!("echo failed");
    }
    if cfg!(feature = "mcp-big-echo") {
        // The echoed text, whole: `Echo: hi` and every `x`, then the closing quote.
        const ECHO: &[u8] = b"Echo: hi";
        let Some(at) = line.windows(ECHO.len()).position(|w| w == ECHO) else {
            fail!("no {=[u8]:a} in the response", ECHO)
        };
        let rest = &line[at + ECHO.len()..];
        let xs = rest.iter().take_while(|&&b| b == b'x').count();
        if xs != MESSAGE_LEN - 2 || rest.get(xs) != Some(&b'"') {
            fail!("{=usize} of {=usize} x came back", xs, MESSAGE_LEN - 2);
        }
        info!("all {=usize} x came back", xs);
    }
    if link.uart.take_overrun() {
        fail!("UART0 RX overrun: bytes were lost");
    }
}

/// UART0 and the line being assembled: `buf[..len]` was received, `buf[..consumed]` is the
/// line already returned (and its LF).
struct Link {
    uart: Uart0,
    buf: &'static mut [u8; LINE_CAP],
    len: usize,
    consumed: usize,
    /// When the first byte of the last line was there.
    first_byte: Instant,
}

impl Link {
    /// The next line (without its LF) that is a JSON-RPC response, as `buf[..n]`: lines of
    /// notifications (no `"id"`) are logged and skipped.
    async fn response(&mut self) -> usize {
        loop {
            let n = self.line().await;
            if contains(&self.buf[..n], br#""id""#) {
                return n;
            }
            warn!("skipped a notification: {=str}", shown(&self.buf[..n]));
        }
    }

    /// The next line, without its LF, as `buf[..n]`.
    async fn line(&mut self) -> usize {
        // Drop the previous line; keep what came after it.
        self.buf.copy_within(self.consumed..self.len, 0);
        self.len -= self.consumed;
        self.consumed = 0;
        let mut scanned = 0;
        self.first_byte = Instant::now();
        loop {
            if let Some(at) = self.buf[scanned..self.len].iter().position(|&b| b == b'\n') {
                let end = scanned + at;
                self.consumed = end + 1;
                return end;
            }
            scanned = self.len;
            if self.len == LINE_CAP {
                fail!("a line longer than {=usize} bytes", LINE_CAP);
            }
            let n = self.read().await;
            if self.len == 0 {
                self.first_byte = Instant::now();
            }
            self.len += n;
        }
    }

    /// Reads what the UART has into `buf[len..]` (at least one byte).
    async fn read(&mut self) -> usize {
        if cfg!(feature = "mcp-slow-rx") {
            embassy_time::Timer::after_millis(1).await;
            let n = self.uart.read(&mut self.buf[self.len..self.len + 1]).await;
            if self.uart.take_overrun() {
                fail!("UART0 RX overrun after {=usize} bytes", self.len);
            }
            n
        } else {
            self.uart.read(&mut self.buf[self.len..]).await
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The first `SHOWN` bytes of a line, cut back to whole UTF-8 characters.
fn shown(line: &[u8]) -> &str {
    let head = &line[..line.len().min(SHOWN)];
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
