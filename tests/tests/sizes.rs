//! Sizes of the core's types and of the storage a wrapper needs, pinned so
//! that a change is noticed. Run with `--nocapture` to see them:
//!
//! ```sh
//! cargo test -p polyweave-tests --test sizes -- --nocapture
//! ```
//!
//! To update after an intended change: run the command above, check that the
//! new numbers are what you meant, and copy them into the constants below.
//! The sizes are those of a 64-bit host (the assertions are skipped elsewhere).

use core::mem::size_of;

use polyweave_tool_adapter::frame::LineSplitter;
use polyweave_tool_adapter::wrapper::{Slot, Wrapper, WrapperConfig};
use polyweave_tool_adapter::NoHooks;
use polyweave_tool_adapter::{AdapterCall, Frame};

/// `(what, measured, pinned)`.
fn measured() -> Vec<(String, usize, usize)> {
    let d = WrapperConfig::DEFAULT;
    vec![
        (
            "size_of Wrapper<'static, NoHooks>".into(),
            size_of::<Wrapper<'static, NoHooks>>(),
            416,
        ),
        (
            "size_of AdapterCall<'static>".into(),
            size_of::<AdapterCall<'static>>(),
            128,
        ),
        ("size_of Slot".into(), size_of::<Slot>(), 56),
        (
            "size_of WrapperConfig".into(),
            size_of::<WrapperConfig>(),
            80,
        ),
        (
            "size_of Frame<'static>".into(),
            size_of::<Frame<'static>>(),
            184,
        ),
        (
            "size_of LineSplitter<'static>".into(),
            size_of::<LineSplitter<'static>>(),
            48,
        ),
        (
            "WrapperConfig::DEFAULT.arena_len(0)".into(),
            d.arena_len(0),
            4965,
        ),
        (
            "WrapperConfig::DEFAULT.arena_len(4)".into(),
            d.arena_len(4),
            9717,
        ),
        (
            "WrapperConfig::DEFAULT.arena_len(8)".into(),
            d.arena_len(8),
            14469,
        ),
        (
            "WrapperConfig::DEFAULT.queue_len(0)".into(),
            d.queue_len(0),
            1637,
        ),
        (
            "WrapperConfig::DEFAULT.queue_len(4)".into(),
            d.queue_len(4),
            1781,
        ),
        (
            "WrapperConfig::DEFAULT.queue_len(8)".into(),
            d.queue_len(8),
            1925,
        ),
        (
            "WrapperConfig::SMALL.arena_len(4)".into(),
            WrapperConfig::SMALL.arena_len(4),
            5141,
        ),
        (
            "WrapperConfig::SMALL.queue_len(4)".into(),
            WrapperConfig::SMALL.queue_len(4),
            1045,
        ),
    ]
}

#[test]
fn sizes_are_pinned() {
    let rows = measured();
    for (what, got, _) in &rows {
        println!("{what:<36} {got:>6}");
    }
    if cfg!(target_pointer_width = "64") {
        let changed: Vec<String> = rows
            .iter()
            .filter(|(_, got, want)| got != want)
            .map(|(what, got, want)| format!("{what}: pinned {want}, measured {got}"))
            .collect();
        assert!(
            changed.is_empty(),
            "sizes changed (update the pins if intended):\n{}",
            changed.join("\n")
        );
    }
}
