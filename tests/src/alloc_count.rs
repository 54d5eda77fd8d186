//! A counting global allocator for tests that prove the core never allocates.
//!
//! The counters are per thread and only count on a thread that switched measuring on, so
//! neither the test harness's other threads nor another measuring test running in parallel
//! can disturb them. Every entry point of the allocator counts (`alloc`, `alloc_zeroed`,
//! `realloc`, `dealloc`). A test binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::thread::LocalKey;

/// Forwards to `System`, counting this thread's calls while it measures.
pub struct Counting;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    /// Allocations (`alloc`, `alloc_zeroed`, `realloc`) made by this thread while measuring.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
    /// Frees made by this thread while measuring.
    static DEALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn measuring() -> bool {
    MEASURING.try_with(Cell::get).unwrap_or(false)
}

/// Counts one call on this thread's `counter`, when this thread is measuring. `const`
/// thread-locals never allocate, and `try_with` keeps a call during thread teardown safe.
fn count(counter: &'static LocalKey<Cell<usize>>) {
    if measuring() {
        let _ = counter.try_with(|c| c.set(c.get() + 1));
    }
}

fn counted(counter: &'static LocalKey<Cell<usize>>) -> usize {
    counter.with(Cell::get)
}

// SAFETY: every call is forwarded unchanged to `System`; the wrapper only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(&ALLOCS);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(&ALLOCS);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(&ALLOCS);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(&DEALLOCS);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `f` with counting on for this thread; returns its value and the (allocations, frees)
/// this thread made meanwhile (other threads' calls are never counted here).
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize, usize) {
    let (a0, d0) = (counted(&ALLOCS), counted(&DEALLOCS));
    MEASURING.with(|m| m.set(true));
    let r = f();
    MEASURING.with(|m| m.set(false));
    let (a1, d1) = (counted(&ALLOCS), counted(&DEALLOCS));
    (r, a1 - a0, d1 - d0)
}
