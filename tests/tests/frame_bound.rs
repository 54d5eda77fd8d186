//! `WrapperConfig::max_frame_len`: the longest frame `poll_transmit` can hand out, so a host sizes
//! its buffer once. Every frame any test drains is checked against it (`Host`); here the
//! worst cases are built on purpose, and the bound must hold them and stay close to them.

use polyweave_tests::host::{idle, start, Host, Storage, FILES, LATER};
use polyweave_tool_adapter::wrapper::WrapperConfig;
use polyweave_tool_adapter::{Instant, Route};

/// Capacities small enough to fill: names and ids 16 bytes, values 64, messages 80.
const CFG: WrapperConfig = WrapperConfig {
    name_cap: 16,
    id_cap: 16,
    args_cap: 64,
    result_cap: 64,
    message_cap: 80,
    trace_entries: 4,
    trace_bytes: 1024,
    held_bytes: 128,
    ..WrapperConfig::DEFAULT
};

/// `n` control characters as a JSON string's inside (each 6 bytes escaped, 1 decoded).
fn controls(n: usize) -> String {
    "\\u0001".repeat(n)
}

/// Every frame the wrapper hands out after `frames`, drained.
fn longest_after(frames: &[String]) -> usize {
    let mut storage = Storage::new(CFG, 2);
    let mut w = idle(&mut storage);
    let mut host = Host::new();
    let mut longest = 0;
    for (i, f) in frames.iter().enumerate() {
        // Unknown names and refused frames are fine: only what is sent counts.
        let _ = w.handle_response(Instant::from_millis(i as u64), f.as_bytes());
        host.pop_frames(&mut w, |_, bytes: &[u8]| longest = longest.max(bytes.len()));
    }
    longest
}

#[test]
fn the_bound_of_the_presets_is_pinned() {
    // DEFAULT: 64 + 6 × (64 + 64) + 512 (a result, or args); SMALL: 64 + 6 × 64 + 256.
    assert_eq!(WrapperConfig::DEFAULT.max_frame_len(), 1344);
    assert_eq!(WrapperConfig::SMALL.max_frame_len(), 704);
    // With a large held buffer, a held END (the host's own bytes) is the longest frame.
    let held = WrapperConfig {
        held_bytes: 4096,
        ..WrapperConfig::DEFAULT
    };
    assert_eq!(held.max_frame_len(), 4092);
}

#[test]
fn an_escape_heavy_not_found_result_fits_the_bound_closely() {
    // An unknown name of 16 control characters and an id of 16: the TOOL_RESULT quotes the
    // name twice (as its name, and in its message), every byte escaped six-fold.
    let call = format!(
        r#"{{"type":"TOOL_CALL","content":{{"id":"{}","name":"{}"}}}}"#,
        controls(16),
        controls(16)
    );
    let longest = longest_after(&[call]);
    let bound = CFG.max_frame_len();
    assert_eq!(bound, 64 + 6 * 32 + (6 * 16 + 64));
    assert!(longest <= bound, "{longest} > {bound}");
    // 370 of 416: the bound counts 64 bytes around each composed part.
    assert!(
        longest * 100 >= bound * 85,
        "{longest} is far under {bound}"
    );
}

#[test]
fn results_args_and_cancels_at_their_capacities_fit_the_bound() {
    let mut storage = Storage::new(CFG, 2);
    let mut w = idle(&mut storage);
    let mut host = Host::new();
    let bound = CFG.max_frame_len();
    let mut lengths = Vec::new();
    // An adapter call with 64-byte args (its TOOL_CALL to the adapter), a deferred call
    // completed with a 64-byte result, and a cancel whose reason is cut to the cap.
    let args = format!(r#""{}""#, "a".repeat(62));
    let files = FILES.replace("[1,2]", &args);
    start(&mut w, 1, &files).expect("adapter");
    let h = start(&mut w, 1, LATER).expect("deferred");
    let result = format!(r#""{}""#, "r".repeat(62));
    w.complete(Instant::from_millis(2), h, Ok(result.as_bytes()))
        .unwrap();
    w.cancel(Instant::from_millis(3), &"\u{1}".repeat(200))
        .unwrap();
    host.pop_frames(&mut w, |route: Route, bytes: &[u8]| {
        lengths.push((route, bytes.len()))
    });
    assert!(lengths.len() >= 6, "{lengths:?}");
    assert!(
        lengths.iter().all(|&(_, n)| n <= bound),
        "{lengths:?} over {bound}"
    );
}
