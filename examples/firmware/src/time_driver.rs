//! embassy-time's driver on SysTick: the board has no other timer the core can rely on,
//! so a 1 kHz interrupt counts ticks into a 64-bit counter (thumbv7em has no `AtomicU64`:
//! it lives under a critical section) and wakes expired timers from the queue.

use core::cell::{Cell, RefCell};
use core::task::Waker;

use cortex_m::peripheral::{syst::SystClkSource, SYST};
use cortex_m_rt::exception;
use critical_section::Mutex;
use embassy_time_driver::{Driver, TICK_HZ};
use embassy_time_queue_utils::Queue;

/// SysTick's clock on mps2-an386: the 25 MHz core clock.
const CORE_HZ: u64 = 25_000_000;
const RELOAD: u32 = (CORE_HZ / TICK_HZ - 1) as u32;
const _: () = assert!(CORE_HZ.is_multiple_of(TICK_HZ) && RELOAD < 1 << 24);

struct SysTickDriver {
    ticks: Mutex<Cell<u64>>,
    /// The tick at which the queue's earliest timer expires (`u64::MAX`: none).
    alarm: Mutex<Cell<u64>>,
    queue: Mutex<RefCell<Queue>>,
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    ticks: Mutex::new(Cell::new(0)),
    alarm: Mutex::new(Cell::new(u64::MAX)),
    queue: Mutex::new(RefCell::new(Queue::new())),
});

/// Starts the tick; until then time stands at 0.
pub fn init(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.ticks.borrow(cs).get())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut queue = self.queue.borrow_ref_mut(cs);
            if queue.schedule_wake(at, waker) {
                // Wakes what already expired and returns the next expiry.
                let now = self.ticks.borrow(cs).get();
                self.alarm.borrow(cs).set(queue.next_expiration(now));
            }
        });
    }
}

#[exception]
fn SysTick() {
    critical_section::with(|cs| {
        let ticks = DRIVER.ticks.borrow(cs);
        let now = ticks.get() + 1;
        ticks.set(now);
        let alarm = DRIVER.alarm.borrow(cs);
        if now >= alarm.get() {
            alarm.set(DRIVER.queue.borrow_ref_mut(cs).next_expiration(now));
        }
    });
}
