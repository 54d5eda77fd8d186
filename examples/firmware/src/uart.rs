//! UART0 of mps2-an386: a CMSDK APB UART at `0x4000_4000` (RX interrupt 0, TX interrupt 1),
//! 8N1, a one-byte holding register each way.
//!
//! Writes block on the TX-full bit. Reads are either polled (`read_byte`) or awaited
//! (`read`): the RX interrupt wakes the task (no polling timer), so the executor can sleep
//! between bytes. The board has no device crate here, so the firmware's `DefaultHandler` calls
//! `on_interrupt` for IRQ 0.
//!
//! Under QEMU (7.2) the receive side applies backpressure: the emulated UART takes a byte from
//! its chardev only while RX is enabled and the holding register is empty, so a slow reader
//! makes the sender wait instead of losing bytes (no overrun); TX never reads as full while
//! the chardev's peer keeps reading.

use core::future::poll_fn;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::Poll;

use cortex_m::interrupt::InterruptNumber;
use cortex_m::peripheral::NVIC;
use embassy_sync::waitqueue::AtomicWaker;

const BASE: usize = 0x4000_4000;
const DATA: usize = 0x00;
const STATE: usize = 0x04;
const CTRL: usize = 0x08;
/// Reads give the interrupt status, writes clear its bits (W1C).
const INTSTATUS: usize = 0x0C;
const BAUDDIV: usize = 0x10;

const STATE_TX_FULL: u32 = 1 << 0;
const STATE_RX_FULL: u32 = 1 << 1;
/// Sticky overrun bits in STATE (write 1 to clear).
const STATE_TX_OVERRUN: u32 = 1 << 2;
const STATE_RX_OVERRUN: u32 = 1 << 3;
const CTRL_TX_EN: u32 = 1 << 0;
const CTRL_RX_EN: u32 = 1 << 1;
const CTRL_RX_INT_EN: u32 = 1 << 3;
const INT_RX: u32 = 1 << 1;

/// 25 MHz APB clock / 115 200 baud (the UART needs at least 16; QEMU does not pace by it).
const BAUD_DIVISOR: u32 = 25_000_000 / 115_200;

/// The task waiting in `read`, woken by the RX interrupt.
static RX_WAKER: AtomicWaker = AtomicWaker::new();

/// UART0's receive interrupt (the device's IRQ 0).
#[derive(Clone, Copy)]
struct Uart0Rx;

// SAFETY: 0 is UART0's RX line on the AN385/AN386 interrupt map, a valid IRQ number for the
// NVIC of this board (32 external lines).
unsafe impl InterruptNumber for Uart0Rx {
    fn number(self) -> u16 {
        0
    }
}

fn read_reg(offset: usize) -> u32 {
    // SAFETY: `BASE + offset` is one of UART0's word-aligned registers (offsets above), always
    // mapped on this board; reading it has no effect beyond the device's own (DATA pops RX).
    unsafe { core::ptr::read_volatile((BASE + offset) as *const u32) }
}

fn write_reg(offset: usize, value: u32) {
    // SAFETY: as in `read_reg`; only `Uart0` (one instance: `take`) and `on_interrupt`
    // (INTSTATUS, W1C, so it cannot undo another write) write these registers.
    unsafe { core::ptr::write_volatile((BASE + offset) as *mut u32, value) }
}

/// Whether `Uart0::take` has run.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// UART0, enabled both ways. There is one.
pub struct Uart0 {
    _owned: (),
}

impl Uart0 {
    /// The UART, the first time (`None` after): sets the baud divisor, enables TX, RX and the
    /// RX interrupt, and unmasks it in the NVIC. The firmware must route IRQ 0 to `on_interrupt`.
    pub fn take() -> Option<Self> {
        if TAKEN.swap(true, Ordering::Relaxed) {
            return None;
        }
        write_reg(BAUDDIV, BAUD_DIVISOR);
        write_reg(INTSTATUS, !0);
        write_reg(STATE, STATE_TX_OVERRUN | STATE_RX_OVERRUN);
        write_reg(CTRL, CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_INT_EN);
        // SAFETY: unmasking can break critical sections built on NVIC masks; this firmware's
        // are PRIMASK-based (`critical-section-single-core`), which hold off this IRQ too.
        unsafe { NVIC::unmask(Uart0Rx) };
        Some(Uart0 { _owned: () })
    }

    /// Writes every byte, waiting while the transmit register is full.
    pub fn write_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            while read_reg(STATE) & STATE_TX_FULL != 0 {}
            write_reg(DATA, u32::from(b));
        }
    }

    /// The received byte, if one is waiting.
    pub fn read_byte(&mut self) -> Option<u8> {
        (read_reg(STATE) & STATE_RX_FULL != 0).then(|| read_reg(DATA) as u8)
    }

    /// Waits for at least one byte, then copies what is waiting into `buf` (never more than
    /// `buf.len()`; 0 only for an empty `buf`).
    pub async fn read(&mut self, buf: &mut [u8]) -> usize {
        if buf.is_empty() {
            return 0;
        }
        let first = poll_fn(|cx| {
            // Register before checking, so a byte arriving in between still wakes us.
            RX_WAKER.register(cx.waker());
            match self.read_byte() {
                Some(b) => Poll::Ready(b),
                None => Poll::Pending,
            }
        })
        .await;
        buf[0] = first;
        let mut n = 1;
        while n < buf.len() {
            let Some(b) = self.read_byte() else { break };
            buf[n] = b;
            n += 1;
        }
        n
    }

    /// Whether a byte was lost because the holding register was full (then clears the flag).
    pub fn take_overrun(&mut self) -> bool {
        let lost = read_reg(STATE) & STATE_RX_OVERRUN != 0;
        if lost {
            write_reg(STATE, STATE_RX_OVERRUN);
        }
        lost
    }
}

/// UART0's RX interrupt handler: acknowledges it and wakes the reader (the byte stays in the
/// holding register for `read`).
pub fn on_interrupt() {
    write_reg(INTSTATUS, INT_RX);
    RX_WAKER.wake();
}
