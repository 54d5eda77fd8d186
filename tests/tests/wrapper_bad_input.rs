//! SPEC §4 for the state machines: each kind of bad input gets its own, exact
//! error, and the machine's state is exactly as before the call that failed.
//!
//! "Exactly as before" is checked with twins: two wrappers built alike get the
//! same history; one also gets the bad input. Then both are drained and
//! compared (pending count, queued frames and their bytes and routes, hook
//! events, started calls, `poll_timeout`, stats, `now`, the trace), and both
//! get the same follow-up (every pending call completed or ended, which shows
//! their stored names, ids, args and recorded results, the last tool error and
//! any held `END`s; then one more call) and are compared again.

use polyweave_tests::drive::{at, drain, echo};
use polyweave_tests::host::{
    busy, busy_without_end, idle, start, Entry, Host, Recorder, Storage, FILES, LATER, TOOLS,
};
use polyweave_tool_adapter::call::{AdapterCall, CallOptions, StartError};
use polyweave_tool_adapter::json::{JsonError, JsonErrorKind};
use polyweave_tool_adapter::wrapper::{
    Completed, Disposition, Slot, Wrapper, WrapperConfig, WrapperStats,
};
use polyweave_tool_adapter::BufferTooSmall;
use polyweave_tool_adapter::CallError;
use polyweave_tool_adapter::CallOutcome;
use polyweave_tool_adapter::ClockWentBackwards;
use polyweave_tool_adapter::StorageError;
use polyweave_tool_adapter::{CallHandle, Error, FrameError, Instant, Route, Tool, Transmit};

// ------------------------------------------------------------ fixture

/// Small capacities, so limits are easy to reach.
const SMALL: WrapperConfig = WrapperConfig {
    tool_timeout_ms: 100,
    name_cap: 16,
    id_cap: 8,
    args_cap: 64,
    result_cap: 64,
    // The least allowed: max(name_cap, id_cap) + 64.
    message_cap: 80,
    trace_entries: 4,
    trace_bytes: 512,
    held_bytes: 64,
    ..WrapperConfig::DEFAULT
};

/// Length of the continue prompt frame without a last error, plus `" Last tool error: "`
/// and the closing quote and brace (the core's bound for one prompt, `PROMPT_OVERHEAD`).
const PROMPT_OVERHEAD: usize =
    r#"{"type":"TEXT","content":"Tool results above. Last tool error: "}"#.len();
/// Bytes each queued frame costs on top of its own length.
const RECORD: usize = 12;
/// The core's bound for the round-limit `ERROR` frame.
const ROUND_LIMIT: usize = 80;

// The wrappers here run the host's tools (`polyweave_tests::host::TOOLS`: calc, echo, boom,
// later, files), record their hooks, and start from its named states (`busy`: a deferred and
// an adapter call pending, one adapter frame recorded, an END held, a trace entry).

type W<'a> = Wrapper<'a, Recorder>;

/// Everything observable, taken by draining (so take it on both twins).
#[derive(Debug, PartialEq)]
struct Snapshot {
    pending: usize,
    queued: usize,
    now: Instant,
    timeout: Option<Instant>,
    stats: WrapperStats,
    aborted: bool,
    peek: Option<Transmit>,
    trace: Vec<String>,
    trace_dropped: u32,
    trace_truncated: u32,
    /// Frames, hook events and started calls, in the order they happened.
    log: Vec<Entry>,
}

impl Snapshot {
    /// The frames of the log, as (route, text).
    fn frames(&self) -> Vec<(Route, String)> {
        self.log
            .iter()
            .filter_map(Entry::frame)
            .map(|(route, bytes)| (route, String::from_utf8_lossy(bytes).into_owned()))
            .collect()
    }
}

fn snapshot(host: &mut Host, w: &mut W<'_>) -> Snapshot {
    let (pending, queued, now, timeout, stats, aborted, peek) = (
        w.pending(),
        w.queued(),
        w.now(),
        w.poll_timeout(),
        w.stats(),
        w.is_aborted(),
        w.peek_transmit(),
    );
    let trace = w.trace().iter().map(|e| format!("{e:?}")).collect();
    let (trace_dropped, trace_truncated) = (w.trace().dropped(), w.trace().truncated());
    Snapshot {
        pending,
        queued,
        now,
        timeout,
        stats,
        aborted,
        peek,
        trace,
        trace_dropped,
        trace_truncated,
        log: host.drive(w),
    }
}

/// The same follow-up on both twins: ends every call, then one more round.
fn follow_up(w: &mut W<'_>, handles: &[CallHandle]) -> Vec<String> {
    let t = w.now();
    let mut results = Vec::new();
    for &h in handles {
        // An adapter call settles with what it recorded; a deferred call completes.
        results.push(format!(
            "{:?}",
            w.handle_adapter_frame(t, h, br#"{"type":"END"}"#)
        ));
        results.push(format!("{:?}", w.complete(t, h, Ok(b"\"done\""))));
    }
    results.push(format!("{:?}", w.cancel(t, "follow-up")));
    results.push(format!(
        "{:?}",
        w.handle_response(
            t,
            br#"{"type":"TOOL_CALL","content":{"id":"z","name":"calc"}}"#
        )
    ));
    let far = Instant::from_millis(t.as_millis() + 1_000_000);
    results.push(format!("{:?}", w.handle_timeout(far)));
    results
}

/// Twins with `history`; the bad input on one must give `expected` and change nothing.
fn refused<T: std::fmt::Debug, E: std::fmt::Debug + PartialEq, R: AsRef<[CallHandle]>>(
    cfg: WrapperConfig,
    slots: usize,
    history: impl Fn(&mut W<'_>) -> R,
    bad: impl FnOnce(&mut W<'_>, &[CallHandle]) -> Result<T, E>,
    expected: E,
) {
    refused_with_host(cfg, slots, |w, _| history(w), bad, expected)
}

/// [`refused`], with a history that may drain through each twin's host.
fn refused_with_host<T: std::fmt::Debug, E: std::fmt::Debug + PartialEq, R: AsRef<[CallHandle]>>(
    cfg: WrapperConfig,
    slots: usize,
    history: impl Fn(&mut W<'_>, &mut Host) -> R,
    bad: impl FnOnce(&mut W<'_>, &[CallHandle]) -> Result<T, E>,
    expected: E,
) {
    let (mut sa, mut sb) = (Storage::new(cfg, slots), Storage::new(cfg, slots));
    let (mut a, mut b) = (idle(&mut sa), idle(&mut sb));
    let (mut host_a, mut host_b) = (Host::new(), Host::new());
    let ha = history(&mut a, &mut host_a);
    let hb = history(&mut b, &mut host_b);
    let (ha, hb) = (ha.as_ref(), hb.as_ref());
    assert_eq!(ha, hb);
    match bad(&mut a, ha) {
        Ok(v) => panic!("accepted ({v:?}); expected {expected:?}"),
        Err(e) => assert_eq!(e, expected),
    }
    let (sa1, sb1) = (snapshot(&mut host_a, &mut a), snapshot(&mut host_b, &mut b));
    assert_eq!(sa1, sb1, "state changed by a refused input");
    let (fa, fb) = (follow_up(&mut a, ha), follow_up(&mut b, hb));
    assert_eq!(fa, fb, "follow-up differs");
    assert_eq!(
        snapshot(&mut host_a, &mut a),
        snapshot(&mut host_b, &mut b),
        "state after the follow-up differs"
    );
}

fn malformed(e: FrameError) -> Error {
    Error::Malformed(e)
}

fn json(kind: JsonErrorKind, at: usize) -> FrameError {
    FrameError::Json(JsonError { kind, at })
}

// ------------------------------------------------------------ malformed frames

#[test]
fn malformed_on_the_response_path() {
    let cases: Vec<(&[u8], FrameError)> = vec![
        (b"[1]", FrameError::NotAnObject),
        (b"", FrameError::NotAnObject),
        (b"\xef\xbb\xbf{\"type\":\"TEXT\"}", FrameError::NotAnObject),
        (br#"{"content":1}"#, FrameError::MissingType),
        (br#"{"type":7}"#, FrameError::TypeNotString),
        (
            b"{\"type\":\"TE\xffXT\"}",
            json(JsonErrorKind::InvalidUtf8, 11),
        ),
        // A TOOL_CALL is validated whole: invalid UTF-8 past `type` counts too.
        (
            b"{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"ca\xfflc\"}}",
            json(JsonErrorKind::InvalidUtf8, 41),
        ),
        (
            br#"{"type":"TOOL_CALL","content":{"name":"calc",}}"#,
            json(JsonErrorKind::UnexpectedByte, 45),
        ),
        (
            br#"{"type":"TOOL_CALL","content":{"name":"calc"}} x"#,
            json(JsonErrorKind::TrailingData, 47),
        ),
    ];
    for (bytes, e) in cases {
        refused(
            SMALL,
            2,
            busy,
            |w, _| w.handle_response(at(6), bytes),
            malformed(e),
        );
    }
}

/// `[` × `levels` around `1`.
fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn tool_call_depth_33_is_refused_32_is_not() {
    // The frame is level 1, content level 2, args level 3: 30 arrays reach 32.
    let ok = format!(
        r#"{{"type":"TOOL_CALL","content":{{"name":"echo","args":{}}}}}"#,
        nested(30)
    );
    let deep = format!(
        r#"{{"type":"TOOL_CALL","content":{{"name":"echo","args":{}}}}}"#,
        nested(31)
    );
    // The 31st `[` opens level 33.
    let at33 = deep.find('[').expect("args") + 30;
    refused(
        SMALL,
        2,
        busy,
        |w, _| w.handle_response(at(6), deep.as_bytes()),
        malformed(json(JsonErrorKind::TooDeep, at33)),
    );
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    assert_eq!(
        w.handle_response(at(0), ok.as_bytes()),
        Ok(Disposition::Intercepted {
            index: 0,
            handle: None
        })
    );
    let snap = snapshot(&mut host, &mut w);
    // Echoed at once: the result keeps all 30 levels.
    assert_eq!(
        snap.frames()[0].1,
        format!(
            r#"{{"type":"TOOL_RESULT","content":{{"name":"echo","result":{}}}}}"#,
            nested(30)
        )
    );
}

#[test]
fn malformed_on_the_request_path() {
    let cases: Vec<(&[u8], FrameError)> = vec![
        (b"not json", FrameError::NotAnObject),
        (b"\xef\xbb\xbf{\"type\":\"END\"}", FrameError::NotAnObject),
        (br#"{"content":"x"}"#, FrameError::MissingType),
        (br#"{"type":null}"#, FrameError::TypeNotString),
        (b"{\"type\":\"\xc3\"}", json(JsonErrorKind::InvalidUtf8, 9)),
    ];
    for (bytes, e) in cases {
        refused(
            SMALL,
            2,
            busy,
            |w, _| w.handle_request(at(6), bytes),
            malformed(e),
        );
    }
}

#[test]
fn malformed_on_the_adapter_path_keeps_the_call_waiting() {
    let deep = format!(r#"{{"type":"TEXT","content":{}}}"#, nested(32));
    let deep_at = deep.find('[').expect("content") + 31;
    let cases: Vec<(Vec<u8>, FrameError)> = vec![
        (b"[]".to_vec(), FrameError::NotAnObject),
        (
            b"\xef\xbb\xbf{\"type\":\"END\"}".to_vec(),
            FrameError::NotAnObject,
        ),
        (br#"{"content":{}}"#.to_vec(), FrameError::MissingType),
        (br#"{"type":["END"]}"#.to_vec(), FrameError::TypeNotString),
        (
            b"{\"type\":\"TOOL_RESULT\",\"content\":{\"result\":\"\xff\"}}".to_vec(),
            json(JsonErrorKind::InvalidUtf8, 43),
        ),
        (
            br#"{"type":"END","content":[1,]}"#.to_vec(),
            json(JsonErrorKind::UnexpectedByte, 27),
        ),
        (deep.into_bytes(), json(JsonErrorKind::TooDeep, deep_at)),
    ];
    for (bytes, e) in cases {
        refused(
            SMALL,
            2,
            busy,
            |w, h| w.handle_adapter_frame(at(6), h[1], &bytes),
            malformed(e),
        );
    }
}

// ------------------------------------------------------------ buffers

#[test]
fn end_larger_than_the_held_buffer() {
    // 64 held bytes; each END costs its length + 4.
    let end_of = |len: usize| {
        let pad = len - r#"{"type":"END","content":""}"#.len();
        format!(r#"{{"type":"END","content":"{}"}}"#, "x".repeat(pad))
    };
    let (fits, too_big) = (end_of(60), end_of(61));
    refused(
        SMALL,
        2,
        busy_without_end,
        |w, _| w.handle_response(at(6), too_big.as_bytes()),
        Error::HeldFull {
            needed: 65,
            free: 64,
        },
    );
    // After one END of 28 bytes (32 held), 32 are free.
    let first = end_of(28);
    let second = end_of(29);
    refused(
        SMALL,
        2,
        |w| {
            let h = busy_without_end(w);
            assert_eq!(
                w.handle_response(at(5), first.as_bytes()),
                Ok(Disposition::Held)
            );
            h
        },
        |w, _| w.handle_response(at(6), second.as_bytes()),
        Error::HeldFull {
            needed: 33,
            free: 32,
        },
    );
    // Exactly the free space is enough.
    let mut s = Storage::new(SMALL, 2);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    let h = busy_without_end(&mut w);
    assert_eq!(
        w.handle_response(at(6), fits.as_bytes()),
        Ok(Disposition::Held)
    );
    snapshot(&mut host, &mut w);
    w.complete(at(7), h[0], Ok(b"1")).unwrap();
    w.handle_adapter_closed(at(7), h[1]).unwrap();
    let snap = snapshot(&mut host, &mut w);
    assert_eq!(snap.frames().last(), Some(&(Route::Consumer, fits.clone())));
}

#[test]
fn output_buffer_too_small_keeps_the_frame_queued() {
    let (mut sa, mut sb) = (Storage::new(SMALL, 2), Storage::new(SMALL, 2));
    let (mut a, mut b) = (idle(&mut sa), idle(&mut sb));
    let (mut host_a, mut host_b) = (Host::new(), Host::new());
    for w in [&mut a, &mut b] {
        start(w, 1, FILES);
    }
    let frame = r#"{"type":"TOOL_CALL","content":{"id":"a1","name":"files","args":[1,2]}}"#;
    let mut short = vec![0xAAu8; frame.len() - 1];
    assert_eq!(
        a.poll_transmit(&mut short),
        Err(BufferTooSmall {
            needed: frame.len()
        })
    );
    assert_eq!(short, vec![0xAAu8; frame.len() - 1], "nothing written");
    assert_eq!(
        a.poll_transmit(&mut []),
        Err(BufferTooSmall {
            needed: frame.len()
        })
    );
    let sa1 = snapshot(&mut host_a, &mut a);
    assert_eq!(sa1, snapshot(&mut host_b, &mut b));
    assert_eq!(sa1.queued, 1);
    assert_eq!(
        sa1.frames(),
        vec![(
            Route::Adapter(sa1.peek.unwrap().route_handle()),
            frame.to_string()
        )]
    );
    // Exactly the frame's length is enough.
    for w in [&mut a, &mut b] {
        start(w, 2, LATER);
        w.cancel(at(3), "x").unwrap();
    }
    let len = a.peek_transmit().expect("queued").len;
    let mut exact = vec![0u8; len];
    assert_eq!(
        a.poll_transmit(&mut exact).map(|t| t.map(|t| t.len)),
        Ok(Some(len))
    );
    assert_eq!(
        String::from_utf8(exact).unwrap(),
        r#"{"type":"CANCEL","content":{"id":"a1","name":"files","reason":"x"}}"#
    );
}

trait RouteHandle {
    fn route_handle(&self) -> CallHandle;
}

impl RouteHandle for Transmit {
    fn route_handle(&self) -> CallHandle {
        match self.route {
            Route::Adapter(h) => h,
            other => panic!("not an adapter route: {other:?}"),
        }
    }
}

/// The core's bound for the end of a round (the prompt, one record even when mirrored, or
/// else the round-limit ERROR), without the held ENDs' release (one record, when any).
fn round_end_need(cfg: &WrapperConfig) -> usize {
    (RECORD + PROMPT_OVERHEAD + cfg.message_cap).max(RECORD + ROUND_LIMIT)
}

#[test]
fn queue_full_when_the_host_did_not_drain() {
    const CALC: &str = r#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#;
    const RESULT: &str = r#"{"type":"TOOL_RESULT","content":{"name":"calc","result":{"sum":3}}}"#;
    let cap = SMALL.queue_len(1);
    // Per pending call, three record headers (its TOOL_CALL, CANCEL and TOOL_RESULT are
    // encoded from its slot when transmitted); one TOOL_RESULT encoded at once, name and id
    // escaped six-fold, with the longest outcome (an own message around a six-fold name); a
    // round end, and a record releasing the held ENDs (read from the held buffer).
    let at_once = RECORD + 64 + 6 * (16 + 8) + (6 * 16 + 64);
    assert_eq!(cap, 3 * RECORD + at_once + round_end_need(&SMALL) + RECORD);
    assert_eq!(cap, 585);
    // A sync call may need: its TOOL_RESULT with the largest result, or an error message cut to
    // fit message_cap once escaped (plus its quotes), and a round end.
    let bound = SMALL.result_cap.max(SMALL.message_cap + 2);
    let needed = RECORD
        + r#"{"type":"TOOL_RESULT","content":{"name":"calc","result":}}"#.len()
        + bound
        + round_end_need(&SMALL);
    assert_eq!(needed, 309);
    // With a deferred call pending, each sync call queues one TOOL_RESULT and no prompt.
    let history = |w: &mut W<'_>| {
        let h = start(w, 1, LATER).expect("deferred");
        for _ in 0..3 {
            start(w, 2, CALC);
        }
        vec![h]
    };
    let free = cap - 3 * (RECORD + RESULT.len());
    assert_eq!(free, 348);
    // Three results leave room for a fourth call …
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    history(&mut w);
    start(&mut w, 2, CALC);
    assert_eq!(w.queued(), 4);
    drop(w);
    // … four do not leave room for a fifth.
    let free = free - (RECORD + RESULT.len());
    assert_eq!(free, 269);
    let full = |w: &mut W<'_>| {
        let h = history(w);
        start(w, 2, CALC);
        h
    };
    refused(
        SMALL,
        1,
        full,
        |w, _| w.handle_response(at(3), CALC.as_bytes()),
        Error::QueueFull { needed, free },
    );
    // A completion queues a header (its TOOL_RESULT is encoded from the slot when it is
    // transmitted), so an escape-heavy error message (13 bytes, 78 escaped: it fits
    // message_cap whole) is taken even by that full queue, and comes out whole after the
    // results queued before it.
    let message = "\u{1}".repeat(13);
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    let h = full(&mut w);
    assert_eq!(
        w.complete(at(3), h[0], Err(&message)),
        Ok(Completed::AsGiven)
    );
    let frames = snapshot(&mut host, &mut w).frames();
    assert_eq!(frames.len(), 4 + 1 + 2);
    assert!(frames[..4].iter().all(|(_, f)| f == RESULT));
    assert_eq!(
        frames[4].1,
        format!(
            r#"{{"type":"TOOL_RESULT","content":{{"id":"d1","name":"later","error":"{}"}}}}"#,
            "\\u0001".repeat(13)
        )
    );
}

/// An `echo` call whose args (`{"s":"xx…"}`) carry `pad` bytes of padding, and the
/// `TOOL_RESULT` it gets: frames of a chosen size for filling the queue exactly.
fn echo_padded(pad: usize) -> (String, String) {
    let args = format!(r#"{{"s":"{}"}}"#, "x".repeat(pad));
    (
        format!(r#"{{"type":"TOOL_CALL","content":{{"name":"echo","args":{args}}}}}"#),
        format!(r#"{{"type":"TOOL_RESULT","content":{{"name":"echo","result":{args}}}}}"#),
    )
}

#[test]
fn a_call_that_needs_exactly_the_free_room_is_taken() {
    // The queue's room check is `needed > free`: a call needing every free byte fits.
    const CALC: &str = r#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#;
    let result = echo_padded;
    // A calc call needs 309 bytes (see above); three echo results leave exactly that.
    let cap = SMALL.queue_len(1);
    let pads: Vec<usize> = (0..64)
        .flat_map(|a| (0..64).map(move |b| (a, b)))
        .find(|&(a, b)| {
            let used: usize = [a, b, b].iter().map(|&p| RECORD + result(p).1.len()).sum();
            cap - used == 309
        })
        .map(|(a, b)| vec![a, b, b])
        .expect("pads that leave 309 bytes");
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    start(&mut w, 1, LATER).expect("deferred");
    for &p in &pads {
        start(&mut w, 2, &result(p).0);
    }
    assert_eq!(w.queued(), 3);
    start(&mut w, 3, CALC);
    assert_eq!(w.queued(), 4);
    let mut host = Host::new();
    let frames = host.frames(&mut w);
    assert_eq!(frames[2].1, result(pads[2]).1);
    assert_eq!(
        frames[3].1,
        r#"{"type":"TOOL_RESULT","content":{"name":"calc","result":{"sum":3}}}"#
    );
}

/// Echo calls (at `now` ms) queueing `k` results whose padding totals `t` bytes, at most 56 in
/// each and the last ones first (a sync call needs room for the largest result, so only a
/// long last one leaves less than that); false when the queue refused one of them.
fn fill(w: &mut W<'_>, now: u64, k: usize, t: usize) -> bool {
    (0..k).all(|i| {
        let pad = t.saturating_sub(56 * (k - 1 - i)).min(56);
        w.handle_response(at(now), echo_padded(pad).0.as_bytes())
            .is_ok()
    })
}

/// The queue filled a byte at a time after `history` until `attempt` is refused for want of
/// room: the fill `(k, t)` of that first refusal, and the refusal's `(needed, free)`.
fn first_refusal(
    slots: usize,
    history: &dyn Fn(&mut W<'_>),
    attempt: &dyn Fn(&mut W<'_>) -> Result<(), Error>,
) -> ((usize, usize), (usize, usize)) {
    for k in 1..12 {
        for t in 0..=56 * k {
            let mut s = Storage::new(SMALL, slots);
            let mut w = idle(&mut s);
            history(&mut w);
            if !fill(&mut w, 5, k, t) {
                break;
            }
            match attempt(&mut w) {
                Ok(()) => {}
                Err(Error::QueueFull { needed, free }) if t > 0 => return ((k, t), (needed, free)),
                Err(Error::QueueFull { .. }) => break,
                Err(e) => panic!("{e:?}"),
            }
        }
    }
    panic!("never refused");
}

/// Checks that `attempt` needs exactly `needed` bytes: refused, changing nothing, with one
/// byte less free, and taken when exactly that many are free.
fn needs_exactly(
    slots: usize,
    needed: usize,
    history: &dyn Fn(&mut W<'_>),
    attempt: &dyn Fn(&mut W<'_>) -> Result<(), Error>,
) {
    let ((k, t), refusal) = first_refusal(slots, history, attempt);
    assert_eq!(refusal, (needed, needed - 1));
    refused(
        SMALL,
        slots,
        |w| {
            history(w);
            assert!(fill(w, 5, k, t));
            vec![]
        },
        |w, _| attempt(w),
        Error::QueueFull {
            needed,
            free: needed - 1,
        },
    );
    let mut s = Storage::new(SMALL, slots);
    let mut w = idle(&mut s);
    history(&mut w);
    assert!(fill(&mut w, 5, k, t - 1));
    assert_eq!(attempt(&mut w), Ok(()));
}

#[test]
fn an_args_error_call_reserves_exactly_its_message() {
    // The model's own text, escaped and quoted (bounded as a `"result"` member, one byte
    // longer than `"error"`), in the call's TOOL_RESULT, and a round end.
    // kills: intercept.rs `escaped_len(&msg_buf[..len]) + 2` → `* 2`, `- 2`
    let needed = RECORD
        + r#"{"type":"TOOL_RESULT","content":{"name":"nope","error":""}}"#.len()
        + r#"bad \"x\""#.len()
        + 1
        + round_end_need(&SMALL);
    assert_eq!(needed, 238);
    needs_exactly(
        1,
        needed,
        &|w| assert!(start(w, 1, LATER).is_some()),
        &|w| {
            w.handle_response(
                at(6),
                br#"{"type":"TOOL_CALL","content":{"name":"nope","args_error":"bad \"x\""}}"#,
            )
            .map(drop)
        },
    );
}

#[test]
fn a_failed_call_reserves_exactly_its_message() {
    // An unknown tool's TOOL_RESULT (its message escaped, bounded as a `"result"` member,
    // one byte longer than `"error"`) and a round end.
    // kills: intercept.rs `message_len`'s `+ 2` → `- 2`, `* 2`
    let message = r#"Tool \"nope\" not found"#;
    let needed = RECORD
        + r#"{"type":"TOOL_RESULT","content":{"name":"nope","error":""}}"#.len()
        + message.len()
        + 1
        + round_end_need(&SMALL);
    assert_eq!(needed, 252);
    needs_exactly(
        1,
        needed,
        &|w| assert!(start(w, 1, LATER).is_some()),
        &|w| {
            w.handle_response(at(6), br#"{"type":"TOOL_CALL","content":{"name":"nope"}}"#)
                .map(drop)
        },
    );
}

#[test]
fn cancelling_an_adapter_call_reserves_its_cancel_record() {
    // A CANCEL record and a TOOL_RESULT record (both encoded from the slot), and a round end.
    // kills: expiry.rs `need += queue::cost(0)` → `-=`
    let needed = RECORD + RECORD + round_end_need(&SMALL);
    needs_exactly(
        1,
        needed,
        &|w| assert!(start(w, 1, FILES).is_some()),
        &|w| w.cancel(at(6), "stop").map(|left| assert_eq!(left, 0)),
    );
}

#[test]
fn a_reclaim_needing_exactly_the_free_room_is_taken() {
    // The cancelled adapter call's three frames, encoded into the queue to free its slot for
    // a deferred call (the other slot holds a pending one).
    // kills: intercept.rs `reclaim && need > free` → `>=`
    let needed = [
        r#"{"type":"TOOL_CALL","content":{"id":"a1","name":"files","args":[1,2]}}"#,
        r#"{"type":"CANCEL","content":{"id":"a1","name":"files","reason":"stop"}}"#,
        r#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","error":"Tool files cancelled: stop"}}"#,
    ]
    .iter()
    .map(|f| f.len())
    .sum::<usize>();
    let history = |w: &mut W<'_>| {
        start(w, 1, FILES).expect("adapter");
        assert_eq!(w.cancel(at(2), "stop"), Ok(0));
        start(w, 3, LATER).expect("deferred");
    };
    needs_exactly(2, needed, &history, &|w| {
        w.handle_response(at(6), br#"{"type":"TOOL_CALL","content":{"name":"later"}}"#)
            .map(|d| match d {
                Disposition::Intercepted {
                    handle: Some(h), ..
                } => assert_eq!(h.slot(), 0),
                other => panic!("{other:?}"),
            })
    });
}

#[test]
fn a_round_end_that_fills_the_queue_exactly_after_a_partial_drain_is_whole() {
    use polyweave_tool_adapter::{ResultWriter, Tool, ToolFailed};
    // The last record of a completion takes every free byte, and the free bytes are split
    // between the end and the start of the queue's buffer (a frame was taken from the
    // front): the queue compacts and writes the record whole.
    fn fail(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write("f".repeat(SMALL.message_cap).as_bytes());
        Err(ToolFailed)
    }
    let echo_call = echo_padded;
    const FAIL: &str = r#"{"type":"TOOL_CALL","content":{"name":"fail"}}"#;
    let fail_result = format!(
        r#"{{"type":"TOOL_RESULT","content":{{"name":"fail","error":"{}"}}}}"#,
        "f".repeat(SMALL.message_cap)
    );
    let message = "e".repeat(SMALL.message_cap);
    let prompt =
        format!(r#"{{"type":"TEXT","content":"Tool results above. Last tool error: {message}"}}"#);
    assert_eq!(prompt.len(), PROMPT_OVERHEAD + SMALL.message_cap);
    // The deferred call's completion needs its slot record and the prompt's record; a sync
    // call, 309 bytes (as above). Results B and C leave, after the failing call, exactly the
    // completion's room.
    let cap = SMALL.queue_len(1);
    let room = RECORD + RECORD + prompt.len();
    let z = RECORD + fail_result.len();
    let len = |pad: usize| RECORD + echo_call(pad).1.len();
    let (b, c) = (0..57)
        .flat_map(|b| (0..57).map(move |c| (b, c)))
        .find(|&(b, c)| cap - len(b) - len(c) == room + z)
        .expect("pads that leave the room");
    assert!(cap - len(b) - len(c) >= 309);
    let tools = [
        Tool::sync("echo", &echo),
        Tool::sync("fail", &fail),
        Tool::deferred("later"),
    ];
    let mut s = Storage::new(SMALL, 1);
    let mut w = s.wrapper(&tools, Recorder::default());
    let mut host = Host::new();
    let h = start(&mut w, 1, LATER).expect("deferred");
    start(&mut w, 2, &echo_call(0).0);
    start(&mut w, 2, &echo_call(b).0);
    assert_eq!(
        host.pop_frame(&mut w).map(|(_, f)| f.to_vec()),
        Some(echo_call(0).1.into_bytes())
    );
    start(&mut w, 2, &echo_call(c).0);
    start(&mut w, 2, FAIL);
    assert_eq!(w.complete(at(3), h, Err(&message)), Ok(Completed::AsGiven));
    let frames = host.frames(&mut w);
    let texts: Vec<&str> = frames.iter().map(|(_, f)| f.as_str()).collect();
    assert_eq!(texts.len(), 6);
    assert_eq!(
        texts[..3],
        [echo_call(b).1, echo_call(c).1, fail_result.clone()]
    );
    assert!(texts[3].starts_with(r#"{"type":"TOOL_RESULT","content":{"id":"d1","name":"later","#));
    assert_eq!(texts[4..], [prompt.clone(), prompt]);
}

#[test]
fn queue_full_counts_the_release_of_held_ends() {
    // As above, with an END held by the deferred call: a call that may end the round must
    // also find room for the record that releases it (12 bytes more than without).
    const CALC: &str = r#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#;
    const RESULT: &str = r#"{"type":"TOOL_RESULT","content":{"name":"calc","result":{"sum":3}}}"#;
    let full = |w: &mut W<'_>| {
        let h = start(w, 1, LATER).expect("deferred");
        w.handle_response(at(1), end_n(0).as_bytes()).unwrap();
        for _ in 0..4 {
            start(w, 2, CALC);
        }
        vec![h]
    };
    let free = SMALL.queue_len(1) - 4 * (RECORD + RESULT.len());
    refused(
        SMALL,
        1,
        full,
        |w, _| w.handle_response(at(3), CALC.as_bytes()),
        Error::QueueFull {
            needed: 309 + RECORD,
            free,
        },
    );
}

#[test]
fn escape_heavy_cancel_fits_a_drained_queue() {
    // An escape-heavy cancel reason: its CANCEL and TOOL_RESULT (six-fold escaped) are
    // encoded from the call's slot when transmitted, so the queue needs headers only. (Nine
    // control characters: the message, 22 + 54 bytes escaped, fits message_cap whole.)
    let reason = "\u{1}".repeat(9);
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    let h = start(&mut w, 1, FILES).expect("adapter");
    host.drive(&mut w);
    assert_eq!(w.cancel(at(2), &reason), Ok(0));
    assert_eq!(
        w.peek_transmit(),
        Some(Transmit {
            route: Route::Adapter(h),
            len: r#"{"type":"CANCEL","content":{"id":"a1","name":"files","reason":""}}"#.len()
                + 6 * reason.len()
        })
    );
    let frames = snapshot(&mut host, &mut w).frames();
    let esc = "\\u0001".repeat(reason.len());
    assert_eq!(
        frames[..2],
        [
            (
                Route::Adapter(h),
                format!(
                    r#"{{"type":"CANCEL","content":{{"id":"a1","name":"files","reason":"{esc}"}}}}"#
                )
            ),
            (
                Route::Model,
                format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"id":"a1","name":"files","error":"Tool files cancelled: {esc}"}}}}"#
                )
            ),
        ]
    );
}

// ------------------------------------------------------------ capacities

#[test]
fn name_longer_than_name_cap() {
    // 17 decoded bytes; the raw text is longer still.
    let frame = r#"{"type":"TOOL_CALL","content":{"name":"\u0061bcdefghijklmnopq"}}"#;
    refused(
        SMALL,
        2,
        busy,
        |w, _| w.handle_response(at(6), frame.as_bytes()),
        Error::NameTooLong { len: 17, cap: 16 },
    );
    // 16 bytes is fine (an unknown tool, answered at once).
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    assert_eq!(
        w.handle_response(
            at(0),
            br#"{"type":"TOOL_CALL","content":{"name":"abcdefghijklmnop"}}"#
        ),
        Ok(Disposition::Intercepted {
            index: 0,
            handle: None
        })
    );
}

#[test]
fn id_longer_than_id_cap() {
    let frame = r#"{"type":"TOOL_CALL","content":{"id":"123456789","name":"calc"}}"#;
    refused(
        SMALL,
        2,
        busy,
        |w, _| w.handle_response(at(6), frame.as_bytes()),
        Error::IdTooLong { len: 9, cap: 8 },
    );
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    assert!(w
        .handle_response(
            at(0),
            br#"{"type":"TOOL_CALL","content":{"id":"12345678","name":"later"}}"#
        )
        .is_ok());
}

// Args and results over their capacity are not refused: they fail the call (SPEC §7.23),
// which `tests/tests/carry.rs` checks byte for byte.

/// The model's `TOOL_RESULT` errors of a wrapper at `SMALL` after `op` on `busy`.
fn errors_after(op: impl FnOnce(&mut W<'_>, &[CallHandle])) -> (Vec<String>, WrapperStats) {
    let mut storage = Storage::new(SMALL, 2);
    let mut w = idle(&mut storage);
    let mut host = Host::new();
    let handles = busy(&mut w);
    host.drive(&mut w);
    op(&mut w, &handles);
    let errors = host
        .drive(&mut w)
        .iter()
        .filter_map(Entry::frame)
        .filter(|(route, _)| *route == Route::Model)
        .filter_map(|(_, bytes)| {
            let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
            v["content"]["error"].as_str().map(str::to_owned)
        })
        .collect();
    (errors, w.stats())
}

#[test]
fn completion_message_longer_than_message_cap_is_cut_and_reported() {
    // SMALL's message_cap is 80. 81 bytes are cut to 80; 79 `m`s and a quote (2 bytes
    // escaped) to 79 + 0: the quote would make 81 escaped.
    for (msg, want) in [
        ("m".repeat(81), "m".repeat(80)),
        (format!("{}\"", "m".repeat(79)), "m".repeat(79)),
        // A two-byte character across the cut is dropped whole.
        (format!("{}é", "m".repeat(79)), "m".repeat(79)),
    ] {
        let (errors, stats) = errors_after(|w, h| {
            let how = w.complete(at(6), h[0], Err(&msg)).unwrap();
            assert_eq!(
                how,
                Completed::MessageCut {
                    len: msg.len(),
                    cap: 80
                }
            );
        });
        assert_eq!(errors, [want], "{msg:?}");
        assert_eq!(stats.messages_truncated, 1);
    }
    // At the cap exactly, nothing is cut or counted.
    let (errors, stats) = errors_after(|w, h| {
        let how = w.complete(at(6), h[0], Err(&"m".repeat(80))).unwrap();
        assert_eq!(how, Completed::AsGiven);
    });
    assert_eq!(errors, ["m".repeat(80)]);
    assert_eq!(stats.messages_truncated, 0);
}

#[test]
fn cancel_reason_that_makes_the_message_too_long_is_cut_for_each_call() {
    // "Tool later cancelled: " is 22 bytes and "Tool files cancelled: " too: a 59-byte reason
    // makes 81, cut to 80 in each of the two calls' messages (and their CANCEL's reason).
    let reason = "r".repeat(59);
    let (errors, stats) = errors_after(|w, _| assert_eq!(w.cancel(at(6), &reason), Ok(0)));
    assert_eq!(
        errors,
        [
            format!("Tool later cancelled: {}", "r".repeat(58)),
            format!("Tool files cancelled: {}", "r".repeat(58)),
        ]
    );
    assert_eq!(stats.messages_truncated, 2);
}

#[test]
fn trace_truncation_and_drops_are_flagged() {
    // A trace region of 100 bytes: an entry of 12 + 4 + 60 + 60 bytes is cut to fit.
    let cfg = WrapperConfig {
        trace_bytes: 100,
        trace_entries: 2,
        ..SMALL
    };
    let mut s = Storage::new(cfg, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    let args = format!(r#"["{}"]"#, "a".repeat(56)); // 60 bytes
    let frame = format!(r#"{{"type":"TOOL_CALL","content":{{"name":"echo","args":{args}}}}}"#);
    w.handle_response(at(0), frame.as_bytes()).unwrap();
    {
        let entries: Vec<_> = w.trace().iter().collect();
        assert_eq!(entries.len(), 1);
        let e = entries[0];
        assert!(e.truncated);
        assert_eq!(e.name, Some("echo"));
        assert_eq!(e.args, args.as_bytes());
        assert_eq!(e.outcome, CallOutcome::Result(&args.as_bytes()[..24]));
    }
    assert_eq!(w.trace().truncated(), 1);
    assert_eq!(w.trace().dropped(), 0);
    // The model still got the whole result.
    let snap = snapshot(&mut host, &mut w);
    assert_eq!(
        snap.frames()[0].1,
        format!(r#"{{"type":"TOOL_RESULT","content":{{"name":"echo","result":{args}}}}}"#)
    );
    // Three small entries in a 2-entry trace: the oldest two are dropped and counted.
    for i in 0..3 {
        let f = format!(r#"{{"type":"TOOL_CALL","content":{{"name":"echo","args":{i}}}}}"#);
        w.handle_response(at(1), f.as_bytes()).unwrap();
        snapshot(&mut host, &mut w);
    }
    let kept: Vec<(bool, Vec<u8>)> = w
        .trace()
        .iter()
        .map(|e| (e.truncated, e.args.to_vec()))
        .collect();
    assert_eq!(kept, vec![(false, b"1".to_vec()), (false, b"2".to_vec())]);
    assert_eq!(w.trace().dropped(), 2);
    assert_eq!(w.trace().truncated(), 1);
    // Clearing keeps the counts.
    w.clear_trace();
    assert_eq!(
        (w.trace().len(), w.trace().dropped(), w.trace().truncated()),
        (0, 2, 1)
    );
}

// ------------------------------------------------------------ completions

#[test]
fn completion_for_an_unknown_call() {
    // A handle from another wrapper, for a call this one never started.
    let mut s = Storage::new(SMALL, 3);
    let mut other = idle(&mut s);
    let plain = r#"{"type":"TOOL_CALL","content":{"name":"later"}}"#;
    start(&mut other, 0, plain);
    start(&mut other, 0, plain);
    let foreign = start(&mut other, 0, plain).expect("handle of call 2, slot 2");
    assert_eq!((foreign.index(), foreign.slot()), (2, 2));
    for slots in [0, 1, 3] {
        refused(
            SMALL,
            slots,
            |_| vec![],
            |w, _| w.complete(at(0), foreign, Ok(b"1")),
            Error::Call(CallError::Unknown),
        );
    }
    // A made-up handle whose parts match a fresh slot (index 0, never used): unknown, not
    // timed out, though the fresh slot's deadline (zero) has passed.
    // kills: slots.rs `Slots::waiting` arm `(false, HowEnded::NotYet)` deleted
    let made_up = CallHandle::from_parts(0, 0);
    for slots in [1, 3] {
        refused(
            SMALL,
            slots,
            |_| vec![],
            |w, _| w.complete(at(5), made_up, Ok(b"1")),
            Error::Call(CallError::Unknown),
        );
        refused(
            SMALL,
            slots,
            |_| vec![],
            |w, _| w.handle_adapter_closed(at(5), CallHandle::from_parts(slots as u16 - 1, 0)),
            Error::Call(CallError::Unknown),
        );
    }
    // A handle for a call number not reached yet, on a slot that is busy.
    refused(
        SMALL,
        3,
        |w| {
            start(w, 0, LATER);
            start(w, 0, FILES);
            vec![]
        },
        |w, _| w.complete(at(0), foreign, Ok(b"1")),
        Error::Call(CallError::Unknown),
    );
}

#[test]
fn completion_for_a_finished_call() {
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.complete(at(6), h[0], Ok(b"1")).unwrap();
            h
        },
        |w, h| w.complete(at(7), h[0], Ok(b"2")),
        Error::Call(CallError::Completed),
    );
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.handle_adapter_closed(at(6), h[1]).unwrap();
            h
        },
        |w, h| w.handle_adapter_frame(at(7), h[1], br#"{"type":"END"}"#),
        Error::Call(CallError::Completed),
    );
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.handle_adapter_frame(at(6), h[1], br#"{"type":"ERROR"}"#)
                .unwrap();
            h
        },
        |w, h| w.handle_adapter_closed(at(7), h[1]),
        Error::Call(CallError::Completed),
    );
    // Finished beats malformed: the frame is not even read.
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.handle_adapter_closed(at(6), h[1]).unwrap();
            h
        },
        |w, h| w.handle_adapter_frame(at(7), h[1], b"not json"),
        Error::Call(CallError::Completed),
    );
}

#[test]
fn completion_for_a_timed_out_call() {
    // Started at 1 with 100 ms: due at 101.
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.handle_timeout(at(101)).unwrap();
            h
        },
        |w, h| w.complete(at(102), h[0], Ok(b"1")),
        Error::Call(CallError::TimedOut),
    );
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.handle_timeout(at(500)).unwrap();
            h
        },
        |w, h| w.handle_adapter_frame(at(500), h[1], br#"{"type":"END"}"#),
        Error::Call(CallError::TimedOut),
    );
}

#[test]
fn completion_at_the_deadline_before_handle_timeout_ran() {
    // Exactly t + T: refused (SPEC §7.5), and the call is left for handle_timeout.
    refused(
        SMALL,
        2,
        busy,
        |w, h| w.complete(at(101), h[0], Ok(b"1")),
        Error::Call(CallError::TimedOut),
    );
    // The adapter call started at 2.
    refused(
        SMALL,
        2,
        busy,
        |w, h| w.handle_adapter_closed(at(102), h[1]),
        Error::Call(CallError::TimedOut),
    );
    refused(
        SMALL,
        2,
        busy,
        |w, h| w.handle_adapter_frame(at(102), h[1], br#"{"type":"END"}"#),
        Error::Call(CallError::TimedOut),
    );
    // t + T - 1 applies.
    let mut s = Storage::new(SMALL, 2);
    let mut w = idle(&mut s);
    let h = busy(&mut w);
    assert_eq!(w.complete(at(100), h[0], Ok(b"1")), Ok(Completed::AsGiven));
    assert_eq!(w.handle_adapter_closed(at(101), h[1]), Ok(()));
}

#[test]
fn completion_for_a_cancelled_call() {
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.cancel(at(6), "stop").unwrap();
            h
        },
        |w, h| w.complete(at(6), h[0], Err("late")),
        Error::Call(CallError::Cancelled),
    );
    refused(
        SMALL,
        2,
        |w| {
            let h = busy(w);
            w.cancel(at(6), "stop").unwrap();
            h
        },
        |w, h| w.handle_adapter_closed(at(6), h[1]),
        Error::Call(CallError::Cancelled),
    );
}

#[test]
fn completion_of_the_wrong_kind() {
    // `complete` on an adapter call.
    refused(
        SMALL,
        2,
        busy,
        |w, h| w.complete(at(6), h[1], Ok(b"1")),
        Error::Call(CallError::WrongKind),
    );
    // Adapter input on a deferred call.
    refused(
        SMALL,
        2,
        busy,
        |w, h| w.handle_adapter_frame(at(6), h[0], br#"{"type":"END"}"#),
        Error::Call(CallError::WrongKind),
    );
    refused(
        SMALL,
        2,
        busy,
        |w, h| w.handle_adapter_closed(at(6), h[0]),
        Error::Call(CallError::WrongKind),
    );
}

#[test]
fn stale_handle_does_not_complete_the_newer_call_in_its_slot() {
    let history = |w: &mut W<'_>| {
        let old = start(w, 1, LATER).expect("old");
        w.complete(at(2), old, Ok(b"1")).unwrap();
        let new = start(w, 3, LATER).expect("new");
        assert_eq!((old.slot(), new.slot()), (0, 0));
        assert_ne!(old, new);
        vec![old, new]
    };
    refused(
        SMALL,
        1,
        history,
        |w, h| w.complete(at(4), h[0], Ok(b"2")),
        Error::Call(CallError::Stale),
    );
    // The same for a call that timed out, or was cancelled, before its slot was reused:
    // the slot now belongs to the newer call, so the core reports the old call as stale.
    for end in ["timeout", "cancel"] {
        refused(
            SMALL,
            1,
            |w| {
                let old = start(w, 1, LATER).expect("old");
                match end {
                    "timeout" => w.handle_timeout(at(101)).unwrap(),
                    _ => assert_eq!(w.cancel(at(101), "x"), Ok(0)),
                }
                let new = start(w, 102, LATER).expect("new");
                vec![old, new]
            },
            |w, h| w.complete(at(103), h[0], Ok(b"2")),
            Error::Call(CallError::Stale),
        );
    }
}

#[test]
fn invalid_json_result() {
    let cases: [(&[u8], JsonError); 4] = [
        (
            br#"{"a":"#,
            JsonError {
                kind: JsonErrorKind::UnexpectedEnd,
                at: 5,
            },
        ),
        (
            b"",
            JsonError {
                kind: JsonErrorKind::UnexpectedEnd,
                at: 0,
            },
        ),
        (
            b"1 2",
            JsonError {
                kind: JsonErrorKind::TrailingData,
                at: 2,
            },
        ),
        (
            b"\"\xff\"",
            JsonError {
                kind: JsonErrorKind::InvalidUtf8,
                at: 1,
            },
        ),
    ];
    for (raw, e) in cases {
        refused(
            SMALL,
            2,
            busy,
            |w, h| w.complete(at(6), h[0], Ok(raw)),
            Error::InvalidResult(e),
        );
    }
    // A result deeper than the limit (the result is level 1) is not refused: it fails the
    // call (SPEC §7.23), with a return value that says so …
    const ROOMY: WrapperConfig = WrapperConfig {
        result_cap: 96,
        ..SMALL
    };
    let mut s = Storage::new(ROOMY, 2);
    let mut w = idle(&mut s);
    let h = busy(&mut w);
    assert_eq!(
        w.complete(at(6), h[0], Ok(nested(33).as_bytes())),
        Ok(Completed::ResultTooDeep { max_depth: 32 })
    );
    // … and 32 levels are carried.
    let mut s = Storage::new(ROOMY, 2);
    let mut w = idle(&mut s);
    let h = busy(&mut w);
    assert_eq!(
        w.complete(at(6), h[0], Ok(nested(32).as_bytes())),
        Ok(Completed::AsGiven)
    );
    // Too deep and not JSON further on: refused as invalid.
    let broken = format!("{}1,]", "[".repeat(40));
    refused(
        SMALL,
        2,
        busy,
        |w, h| w.complete(at(6), h[0], Ok(broken.as_bytes())),
        Error::InvalidResult(JsonError {
            kind: JsonErrorKind::UnexpectedByte,
            at: 42,
        }),
    );
}

// ------------------------------------------------------------ the clock

/// SPEC §7.5: a call is due its `TOOL_CALL`'s time plus its timeout; any other frame's time
/// only moves the clock, so a host may give such a frame the last time it gave (the npm
/// package gives text deltas its last reading): not before it, and no deadline moves.
#[test]
fn a_frame_other_than_a_call_only_moves_the_clock() {
    let mut s = Storage::new(SMALL, 3);
    let mut w = idle(&mut s);
    // Calls started at 1 and 2 (due at 101 and 102); 5 the last time given.
    busy(&mut w);
    drain(&mut w);
    let text = br#"{"type":"TEXT","content":"x"}"#;
    let reasoning = br#"{"type":"REASONING","content":"y"}"#;
    for (now, frame) in [
        (5, &text[..]),
        (5, reasoning),
        (90, text),
        (90, reasoning),
        (90, text),
    ] {
        assert_eq!(w.handle_response(at(now), frame), Ok(Disposition::Forward));
        assert_eq!(w.poll_timeout(), Some(at(101)));
    }
    assert_eq!(
        w.handle_response(at(89), text),
        Err(Error::ClockWentBackwards(ClockWentBackwards {
            last: at(90),
            given: at(89),
        }))
    );
    assert_eq!(w.now(), at(90));
    // A call given that same time is due 100 later; the two earlier ones keep their times.
    start(
        &mut w,
        90,
        r#"{"type":"TOOL_CALL","content":{"id":"d2","name":"later","args":{}}}"#,
    );
    assert_eq!(w.poll_timeout(), Some(at(101)));
    w.handle_timeout(at(102)).unwrap();
    assert_eq!(w.pending(), 1);
    drain(&mut w);
    assert_eq!(w.poll_timeout(), Some(at(190)));
}

#[test]
fn clock_going_backwards_on_every_input() {
    let back = Error::ClockWentBackwards(ClockWentBackwards {
        last: at(5),
        given: at(4),
    });
    type Bad = fn(&mut W<'_>, &[CallHandle]) -> Result<(), Error>;
    let inputs: [(&str, Bad); 7] = [
        ("handle_response", |w, _| {
            w.handle_response(at(4), br#"{"type":"TEXT","content":"x"}"#)
                .map(drop)
        }),
        ("handle_request", |w, _| {
            w.handle_request(at(4), br#"{"type":"TEXT","content":"x"}"#)
                .map(drop)
        }),
        ("handle_adapter_frame", |w, h| {
            w.handle_adapter_frame(at(4), h[1], br#"{"type":"END"}"#)
        }),
        ("handle_adapter_closed", |w, h| {
            w.handle_adapter_closed(at(4), h[1])
        }),
        ("complete", |w, h| {
            w.complete(at(4), h[0], Ok(b"1")).map(drop)
        }),
        ("handle_timeout", |w, _| w.handle_timeout(at(4))),
        ("cancel", |w, _| w.cancel(at(4), "x").map(|_| ())),
    ];
    for (name, bad) in inputs {
        eprintln!("{name}");
        refused(SMALL, 2, busy, bad, back);
    }
    // Checked before anything else: a malformed frame at an earlier clock is a clock error.
    refused(
        SMALL,
        2,
        busy,
        |w, _| w.handle_response(at(0), b"not json"),
        Error::ClockWentBackwards(ClockWentBackwards {
            last: at(5),
            given: at(0),
        }),
    );
    // The same clock again is fine.
    let mut s = Storage::new(SMALL, 2);
    let mut w = idle(&mut s);
    busy(&mut w);
    assert_eq!(w.handle_timeout(at(5)), Ok(()));
    assert_eq!(w.now(), at(5));
}

// ------------------------------------------------------------ construction

#[test]
fn arena_too_small() {
    for n in [0, 1, 4] {
        let needed = SMALL.arena_len(n);
        let mut slots = vec![Slot::EMPTY; n];
        let mut arena = vec![0u8; needed - 1];
        assert_eq!(
            Wrapper::new(SMALL, &TOOLS, Recorder::default(), &mut slots, &mut arena).map(drop),
            Err(StorageError::ArenaTooSmall {
                needed,
                given: needed - 1
            })
        );
        let mut arena = vec![0u8; needed];
        assert!(Wrapper::new(SMALL, &TOOLS, Recorder::default(), &mut slots, &mut arena).is_ok());
    }
}

#[test]
fn bad_config() {
    let bad = [
        WrapperConfig {
            message_cap: 79,
            ..SMALL
        },
        WrapperConfig {
            name_cap: 17,
            ..SMALL
        },
        WrapperConfig {
            id_cap: 17,
            ..SMALL
        },
        WrapperConfig {
            max_depth: 2,
            ..SMALL
        },
        WrapperConfig {
            name_cap: 65_536,
            message_cap: 65_600,
            ..SMALL
        },
    ];
    for cfg in bad {
        let mut slots = vec![Slot::EMPTY; 1];
        let mut arena = vec![0u8; SMALL.arena_len(1)];
        assert_eq!(
            Wrapper::new(cfg, &TOOLS, Recorder::default(), &mut slots, &mut arena).map(drop),
            Err(StorageError::BadConfig),
            "{cfg:?}"
        );
    }
    // Too many slots for a u16 slot number.
    let mut slots = vec![Slot::EMPTY; 65_536];
    assert_eq!(
        Wrapper::new(SMALL, &TOOLS, Recorder::default(), &mut slots, &mut []).map(drop),
        Err(StorageError::TooManySlots)
    );
    // A registered name no call could reach.
    let long = [Tool::deferred("ok"), Tool::deferred("abcdefghijklmnopq")];
    let mut slots = vec![Slot::EMPTY; 1];
    let mut arena = vec![0u8; SMALL.arena_len(1)];
    assert_eq!(
        Wrapper::new(SMALL, &long, Recorder::default(), &mut slots, &mut arena).map(drop),
        Err(StorageError::NameTooLong { index: 1 })
    );
}

// ------------------------------------------------------------ AdapterCall

/// Everything observable of a call, taken by draining.
fn call_snapshot(c: &mut AdapterCall<'_>) -> (Option<String>, Option<Instant>, Vec<String>) {
    let settled = c.outcome().map(|s| format!("{s:?}"));
    let timeout = c.poll_timeout();
    let mut frames = Vec::new();
    let mut buf = [0u8; 512];
    while let Some(n) = c.poll_transmit(&mut buf).expect("512 bytes are enough") {
        frames.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    (settled, timeout, frames)
}

const OPTS: CallOptions<'static> = CallOptions {
    name: "files",
    timeout_ms: 100,
    max_total_timeout_ms: 0,
    max_depth: 32,
};

/// Twin calls with `history`; `bad` on one must give `expected` and change nothing.
fn call_refused(
    buf_len: usize,
    history: impl Fn(&mut AdapterCall<'_>),
    bad: impl FnOnce(&mut AdapterCall<'_>) -> Result<(), Error>,
    expected: Error,
) {
    let (mut ba, mut bb) = (vec![0u8; buf_len], vec![0u8; buf_len]);
    let mut a = AdapterCall::start(at(10), OPTS, Some("q1"), b"{\"p\":1}", &mut ba).unwrap();
    let mut b = AdapterCall::start(at(10), OPTS, Some("q1"), b"{\"p\":1}", &mut bb).unwrap();
    history(&mut a);
    history(&mut b);
    assert_eq!(bad(&mut a), Err(expected));
    assert_eq!(call_snapshot(&mut a), call_snapshot(&mut b));
    // The same follow-up gives the same settlement.
    for c in [&mut a, &mut b] {
        let _ = c.handle_frame(at(50), br#"{"type":"TOOL_RESULT","content":{"result":2}}"#);
        let _ = c.handle_closed(at(50));
        let _ = c.handle_timeout(at(1000));
    }
    assert_eq!(call_snapshot(&mut a), call_snapshot(&mut b));
}

#[test]
fn adapter_call_clock_backwards() {
    let back = Error::ClockWentBackwards(ClockWentBackwards {
        last: at(20),
        given: at(19),
    });
    let history = |c: &mut AdapterCall<'_>| c.handle_timeout(at(20)).unwrap();
    call_refused(
        64,
        history,
        |c| c.handle_frame(at(19), br#"{"type":"END"}"#),
        back,
    );
    call_refused(64, history, |c| c.handle_closed(at(19)), back);
    call_refused(64, history, |c| c.handle_timeout(at(19)), back);
    // Before the start, too.
    call_refused(
        64,
        |_| {},
        |c| c.handle_closed(at(9)),
        Error::ClockWentBackwards(ClockWentBackwards {
            last: at(10),
            given: at(9),
        }),
    );
}

#[test]
fn adapter_call_malformed_frames_keep_it_waiting() {
    let history = |c: &mut AdapterCall<'_>| {
        c.handle_frame(at(11), br#"{"type":"TOOL_RESULT","content":{"result":1}}"#)
            .unwrap()
    };
    let deep = format!(r#"{{"type":"END","content":{}}}"#, nested(32));
    let deep_at = deep.find('[').unwrap() + 31;
    let cases: Vec<(Vec<u8>, FrameError)> = vec![
        (b"not json".to_vec(), FrameError::NotAnObject),
        (
            b"\xef\xbb\xbf{\"type\":\"END\"}".to_vec(),
            FrameError::NotAnObject,
        ),
        (br#"{"content":1}"#.to_vec(), FrameError::MissingType),
        (br#"{"type":1}"#.to_vec(), FrameError::TypeNotString),
        (
            b"{\"type\":\"END\",\"content\":\"\xfe\"}".to_vec(),
            json(JsonErrorKind::InvalidUtf8, 25),
        ),
        (deep.into_bytes(), json(JsonErrorKind::TooDeep, deep_at)),
    ];
    for (bytes, e) in cases {
        call_refused(
            64,
            history,
            |c| c.handle_frame(at(12), &bytes),
            malformed(e),
        );
    }
    // Still waiting: the recorded result settles on END.
    let mut buf = [0u8; 64];
    let mut c = AdapterCall::start(at(10), OPTS, None, b"{}", &mut buf).unwrap();
    history(&mut c);
    assert!(c.handle_frame(at(12), b"not json").is_err());
    assert_eq!(c.outcome(), None);
    c.handle_frame(at(13), br#"{"type":"END"}"#).unwrap();
    assert_eq!(c.outcome(), Some(CallOutcome::Result(b"1")));
}

#[test]
fn adapter_call_buffer_too_small_for_its_own_failure_texts() {
    // A call that could not compose its own failure texts would never settle: refused at
    // start. The longest here is `Tool files result exceeds 34 bytes` (34 bytes).
    let mut buf = [0u8; 33];
    assert_eq!(
        AdapterCall::start(at(10), OPTS, None, b"{}", &mut buf).map(|_| ()),
        Err(StartError::BufferTooSmall {
            needed: 34,
            given: 33
        })
    );
    let mut buf = [0u8; 34];
    assert!(AdapterCall::start(at(10), OPTS, None, b"{}", &mut buf).is_ok());
}

#[test]
fn adapter_call_frames_after_settlement() {
    let settled = |c: &mut AdapterCall<'_>| {
        c.handle_frame(at(11), br#"{"type":"END"}"#).unwrap();
        assert_eq!(c.outcome(), Some(CallOutcome::Result(b"null")));
    };
    call_refused(
        64,
        settled,
        |c| c.handle_frame(at(12), br#"{"type":"ERROR"}"#),
        Error::Call(CallError::Completed),
    );
    call_refused(
        64,
        settled,
        |c| c.handle_closed(at(12)),
        Error::Call(CallError::Completed),
    );
    // Even a malformed frame: the call is not waiting, so it is not read.
    call_refused(
        64,
        settled,
        |c| c.handle_frame(at(12), b"not json"),
        Error::Call(CallError::Completed),
    );
    // After a timeout settlement.
    let timed_out = |c: &mut AdapterCall<'_>| {
        c.handle_timeout(at(110)).unwrap();
        assert_eq!(
            c.outcome(),
            Some(CallOutcome::Error("Tool files timed out after 100ms"))
        );
    };
    call_refused(
        64,
        timed_out,
        |c| c.handle_frame(at(111), br#"{"type":"END"}"#),
        Error::Call(CallError::TimedOut),
    );
    // At the deadline, before handle_timeout ran: timed out, and left for handle_timeout.
    call_refused(
        64,
        |_| {},
        |c| c.handle_frame(at(110), br#"{"type":"END"}"#),
        Error::Call(CallError::TimedOut),
    );
}

#[test]
fn adapter_call_invalid_args() {
    let mut buf = [0u8; 16];
    assert_eq!(
        AdapterCall::start(at(0), OPTS, None, b"{\"a\":", &mut buf).map(drop),
        Err(StartError::InvalidArgs(JsonError {
            kind: JsonErrorKind::UnexpectedEnd,
            at: 5
        }))
    );
}

/// SPEC §4: only input larger than a buffer is refused. A sync tool's result is bounded by
/// `result_cap`, its message by `message_cap`; neither is large here, and the queue is empty.
#[test]

fn sync_call_with_a_large_message_cap_is_not_refused() {
    let cfg = WrapperConfig {
        message_cap: 600,
        ..WrapperConfig::DEFAULT
    };
    for slots in [0, 1] {
        let mut s = Storage::new(cfg, slots);
        let mut w = idle(&mut s);
        let mut host = Host::new();
        assert_eq!(
            w.handle_response(at(0), br#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#),
            Ok(Disposition::Intercepted {
                index: 0,
                handle: None
            }),
            "{slots} slots, queue of {} bytes",
            w.queue_capacity()
        );
        let snap = snapshot(&mut host, &mut w);
        assert_eq!(
            snap.frames()[0].1,
            r#"{"type":"TOOL_RESULT","content":{"name":"calc","result":{"sum":3}}}"#
        );
    }
}

// ------------------------------------------------------------ the twin check itself

/// The twin check notices a change that shows at once …
#[test]
#[should_panic(expected = "state changed by a refused input")]
fn twin_check_sees_a_visible_change() {
    refused(
        SMALL,
        2,
        busy,
        |w, _| {
            let _ = w.handle_response(at(6), br#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#);
            Err::<(), _>(Error::Call(CallError::Unknown))
        },
        Error::Call(CallError::Unknown),
    );
}

/// … and one that shows only later (a result recorded by an adapter call).
#[test]
#[should_panic(expected = "differs")]
fn twin_check_sees_a_hidden_change() {
    refused(
        SMALL,
        2,
        busy_without_end,
        |w, h| {
            // At the clock already seen, so only the recorded result differs.
            w.handle_adapter_frame(
                at(2),
                h[1],
                br#"{"type":"TOOL_RESULT","content":{"result":9}}"#,
            )
            .unwrap();
            Err::<(), _>(Error::Call(CallError::Unknown))
        },
        Error::Call(CallError::Unknown),
    );
}

// ------------------------------------------------------------ slots whose frames wait

/// One slot, used by four calls in turn: an adapter call cancelled, a deferred call
/// completed, an adapter call settled by its adapter. `drain` runs after every input.
fn one_slot_history(w: &mut W<'_>, drain: &mut dyn FnMut(&mut W<'_>)) -> Vec<CallHandle> {
    let a = start(w, 1, FILES).expect("adapter");
    drain(w);
    assert_eq!(w.cancel(at(2), "stop"), Ok(0));
    drain(w);
    let d = start(w, 3, LATER).expect("deferred");
    drain(w);
    assert_eq!(
        w.complete(at(4), d, Ok(b"{ \"x\" : 1 }")),
        Ok(Completed::AsGiven)
    );
    drain(w);
    let b = start(w, 5, FILES).expect("adapter");
    drain(w);
    let result = br#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","result":[3]}}"#;
    w.handle_adapter_frame(at(6), b, result).unwrap();
    w.handle_adapter_frame(at(6), b, br#"{"type":"END"}"#)
        .unwrap();
    drain(w);
    vec![a, d, b]
}

#[test]
fn a_slot_whose_frames_wait_is_reclaimed_by_the_next_call() {
    // A host that drains after every input, and one that drains only at the end: the same
    // handles, and the same frames in the same order, byte for byte.
    // (The default capacities: a queue with room for three rounds' prompts undrained.)
    let mut sa = Storage::new(WrapperConfig::DEFAULT, 1);
    let mut a = idle(&mut sa);
    let mut drained = Vec::new();
    let ha = one_slot_history(&mut a, &mut |w| drained.extend(drain(w)));
    let mut sb = Storage::new(WrapperConfig::DEFAULT, 1);
    let mut b = idle(&mut sb);
    let hb = one_slot_history(&mut b, &mut |_| {});
    assert!(b.queued() > 0);
    assert_eq!(ha, hb);
    assert_eq!(
        ha.iter().map(|h| (h.slot(), h.index())).collect::<Vec<_>>(),
        [(0, 0), (0, 1), (0, 2)]
    );
    let late = drain(&mut b);
    assert_eq!(late, drained);
    let h = |i: u32| Route::Adapter(CallHandle::from_parts(0, i));
    let kinds: Vec<(Route, &str)> = late
        .iter()
        .map(|(r, f)| (*r, &f[9..f[9..].find('"').unwrap() + 9]))
        .collect();
    assert_eq!(
        kinds,
        [
            (h(0), "TOOL_CALL"),
            (h(0), "CANCEL"),
            (Route::Model, "TOOL_RESULT"),
            (Route::Model, "TEXT"),
            (Route::Consumer, "TEXT"),
            (Route::Model, "TOOL_RESULT"),
            (Route::Model, "TEXT"),
            (Route::Consumer, "TEXT"),
            (h(2), "TOOL_CALL"),
            (Route::Model, "TOOL_RESULT"),
            (Route::Model, "TEXT"),
            (Route::Consumer, "TEXT"),
        ]
    );
    assert_eq!(
        late[5].1,
        r#"{"type":"TOOL_RESULT","content":{"id":"d1","name":"later","result":{"x":1}}}"#
    );
    assert_eq!(
        late[9].1,
        r#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","result":[3]}}"#
    );
    // Late inputs for the ended calls are refused as before.
    assert_eq!(
        b.complete(at(7), hb[1], Ok(b"1")),
        Err(Error::Call(CallError::Stale))
    );
}

#[test]
fn a_slot_is_free_again_once_its_tool_result_is_sent() {
    // Two slots; each call ends and its frames are drained before the next one starts. The
    // first free slot is taken, so every call lands in slot 0 (a slot still marked answered
    // would push the next call to slot 1, and reclaim later).
    // kills: slots.rs `Slots::free` → `()`, and its `==` → `!=`
    let mut s = Storage::new(SMALL, 2);
    let mut w = idle(&mut s);
    let mut handles = Vec::new();
    for i in 0..3u64 {
        let h = start(&mut w, 10 * i, LATER).expect("deferred");
        handles.push((h.slot(), h.index()));
        assert_eq!(
            w.complete(at(10 * i + 1), h, Ok(b"1")),
            Ok(Completed::AsGiven)
        );
        let frames = drain(&mut w);
        assert_eq!(frames[0].0, Route::Model);
        assert!(frames[0].1.starts_with(r#"{"type":"TOOL_RESULT""#));
    }
    let a = start(&mut w, 40, FILES).expect("adapter");
    handles.push((a.slot(), a.index()));
    w.handle_adapter_frame(at(41), a, br#"{"type":"END"}"#)
        .unwrap();
    drain(&mut w);
    let d = start(&mut w, 50, LATER).expect("deferred");
    handles.push((d.slot(), d.index()));
    assert_eq!(handles, [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]);
}

#[test]
fn reclaiming_a_slot_encodes_only_that_slots_frames() {
    // Two cancelled adapter calls, their frames still queued: a new call reclaims the older
    // one's slot, which costs that slot's three frames only (the other slot's would not fit).
    const FILES2: &str =
        r#"{"type":"TOOL_CALL","content":{"id":"a2","name":"files","args":[1,2]}}"#;
    let reason = "r".repeat(58);
    let frames_of_slot = |id: &str| {
        [
            format!(
                r#"{{"type":"TOOL_CALL","content":{{"id":"{id}","name":"files","args":[1,2]}}}}"#
            ),
            format!(
                r#"{{"type":"CANCEL","content":{{"id":"{id}","name":"files","reason":"{reason}"}}}}"#
            ),
            format!(
                r#"{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"files","error":"Tool files cancelled: {reason}"}}}}"#
            ),
        ]
    };
    let one: usize = frames_of_slot("a1").iter().map(String::len).sum();
    let mut s = Storage::new(SMALL, 2);
    let mut w = idle(&mut s);
    start(&mut w, 1, FILES).expect("adapter a1");
    start(&mut w, 1, FILES2).expect("adapter a2");
    assert_eq!(w.cancel(at(2), &reason), Ok(0));
    let free = SMALL.queue_len(2) - w.queued() * RECORD - {
        // The round's prompt, the one frame queued encoded.
        r#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool files cancelled: "}"#
            .len()
            + reason.len()
    };
    assert!(one < free && 2 * one > free, "{one} of {free}");
    assert_eq!(start(&mut w, 3, LATER), Some(CallHandle::from_parts(0, 2)));
    let mut host = Host::new();
    let texts: Vec<String> = host.frames(&mut w).into_iter().map(|(_, f)| f).collect();
    let (a1, a2) = (frames_of_slot("a1"), frames_of_slot("a2"));
    assert_eq!(texts.len(), 3 + 3 + 2);
    // Queue order: both TOOL_CALLs, then each call's CANCEL and TOOL_RESULT, then the prompt.
    assert_eq!(
        texts[..6],
        [
            a1[0].clone(),
            a2[0].clone(),
            a1[1].clone(),
            a1[2].clone(),
            a2[1].clone(),
            a2[2].clone()
        ]
    );
    // An adapter call reclaims the slot the same way (its own TOOL_CALL record on top).
    const FILES3: &str =
        r#"{"type":"TOOL_CALL","content":{"id":"a3","name":"files","args":[1,2]}}"#;
    let mut s = Storage::new(SMALL, 2);
    let mut w = idle(&mut s);
    start(&mut w, 1, FILES).expect("adapter a1");
    start(&mut w, 1, FILES2).expect("adapter a2");
    assert_eq!(w.cancel(at(2), &reason), Ok(0));
    assert_eq!(start(&mut w, 3, FILES3), Some(CallHandle::from_parts(0, 2)));
    let texts: Vec<String> = host.frames(&mut w).into_iter().map(|(_, f)| f).collect();
    assert_eq!(texts.len(), 3 + 3 + 2 + 1);
    assert_eq!(
        texts[..4],
        [a1[0].clone(), a2[0].clone(), a1[1].clone(), a1[2].clone()]
    );
}

#[test]
fn reclaiming_a_slot_waits_for_the_host_when_its_frames_do_not_fit() {
    const CALC: &str = r#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#;
    let reason = "\u{1}".repeat(9);
    let esc = "\\u0001".repeat(9);
    // The cancelled adapter call's three frames, encoded into the queue to free its slot.
    let needed = [
        r#"{"type":"TOOL_CALL","content":{"id":"a1","name":"files","args":[1,2]}}"#.to_string(),
        format!(r#"{{"type":"CANCEL","content":{{"id":"a1","name":"files","reason":"{esc}"}}}}"#),
        format!(
            r#"{{"type":"TOOL_RESULT","content":{{"id":"a1","name":"files","error":"Tool files cancelled: {esc}"}}}}"#
        ),
    ]
    .iter()
    .map(String::len)
    .sum::<usize>();
    assert_eq!(needed, 336);
    let history = |w: &mut W<'_>| {
        let h = start(w, 1, FILES).expect("adapter");
        assert_eq!(w.cancel(at(2), &reason), Ok(0));
        // A sync call (its result and a round end), never drained.
        start(w, 2, CALC);
        vec![h]
    };
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    history(&mut w);
    let free = match w.handle_response(at(3), LATER.as_bytes()) {
        Err(Error::QueueFull { needed: n, free }) if n == needed && free < needed => free,
        other => panic!("{other:?}"),
    };
    drop(w);
    // Refused, changing nothing; drained, the slot is free and the call takes it.
    refused(
        SMALL,
        1,
        history,
        |w, _| w.handle_response(at(3), LATER.as_bytes()),
        Error::QueueFull { needed, free },
    );
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    history(&mut w);
    assert_eq!(drain(&mut w).len(), 1 + 2 + 2 + 1 + 2);
    assert_eq!(start(&mut w, 3, LATER), Some(CallHandle::from_parts(0, 2)));
}

#[test]
fn a_mirrored_prompt_is_two_frames_and_a_short_buffer_keeps_either() {
    const PROMPT: &str = r#"{"type":"TEXT","content":"Tool results above."}"#;
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    start(
        &mut w,
        1,
        r#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#,
    );
    let mut buf = [0u8; 256];
    assert_eq!(
        w.poll_transmit(&mut buf).unwrap().unwrap().route,
        Route::Model
    );
    // The prompt, queued once for the model and the consumer: two frames.
    assert_eq!(w.queued(), 2);
    for route in [Route::Model, Route::Consumer] {
        let want = Transmit {
            route,
            len: PROMPT.len(),
        };
        assert_eq!(w.peek_transmit(), Some(want));
        assert_eq!(
            w.poll_transmit(&mut buf[..PROMPT.len() - 1]),
            Err(BufferTooSmall {
                needed: PROMPT.len()
            })
        );
        assert_eq!(w.peek_transmit(), Some(want));
        assert_eq!(w.poll_transmit(&mut buf), Ok(Some(want)));
        assert_eq!(&buf[..PROMPT.len()], PROMPT.as_bytes());
    }
    assert_eq!((w.queued(), w.peek_transmit()), (0, None));
}

/// An `END` of 20 bytes (24 in the held buffer).
fn end_n(i: usize) -> String {
    format!(r#"{{"type":"END","n":{i}}}"#)
}

/// Two `END`s held by a deferred call, released by completing it (nothing drained), and
/// a second deferred call pending.
fn released_not_drained(w: &mut W<'_>) -> Vec<CallHandle> {
    let h = start(w, 1, LATER).expect("deferred");
    for i in 0..2 {
        assert_eq!(
            w.handle_response(at(1), end_n(i).as_bytes()),
            Ok(Disposition::Held)
        );
    }
    assert_eq!(w.complete(at(2), h, Ok(b"1")), Ok(Completed::AsGiven));
    vec![h, start(w, 3, LATER).expect("deferred")]
}

#[test]
fn released_ends_keep_their_held_bytes_until_transmitted() {
    // SMALL holds 64 bytes: two 20-byte ENDs take 48. Released but not transmitted, they
    // still do, so a third does not fit until the host drains.
    refused(
        SMALL,
        1,
        released_not_drained,
        |w, _| w.handle_response(at(4), end_n(2).as_bytes()),
        Error::HeldFull {
            needed: 24,
            free: 16,
        },
    );
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    let h = released_not_drained(&mut w);
    // The release is one record, two frames, read from the held buffer; a short buffer keeps
    // the END queued.
    assert_eq!(w.queued(), 1 + 2 + 2);
    let mut buf = [0u8; 256];
    for _ in 0..3 {
        w.poll_transmit(&mut buf).unwrap();
    }
    for i in 0..2 {
        let want = Transmit {
            route: Route::Consumer,
            len: 20,
        };
        assert_eq!(w.peek_transmit(), Some(want));
        assert_eq!(
            w.poll_transmit(&mut buf[..19]),
            Err(BufferTooSmall { needed: 20 })
        );
        assert_eq!(w.poll_transmit(&mut buf), Ok(Some(want)));
        assert_eq!(&buf[..20], end_n(i).as_bytes());
    }
    assert_eq!(w.queued(), 0);
    // Transmitted, their bytes are free: an END of the whole 64 bytes (60 + 4) is held.
    let big = format!(r#"{{"type":"END","pad":"{}"}}"#, "x".repeat(60 - 23));
    assert_eq!(big.len(), 60);
    assert_eq!(
        w.handle_response(at(4), big.as_bytes()),
        Ok(Disposition::Held)
    );
    w.complete(at(5), h[1], Ok(b"2")).unwrap();
    let frames = snapshot(&mut host, &mut w).frames();
    assert_eq!(frames.last(), Some(&(Route::Consumer, big)));
}

/// Two rounds, each a deferred call that holds one END (`end_n(0)`, `end_n(1)`) and then
/// completes, releasing it; nothing drained.
fn two_rounds_each_releasing_an_end(w: &mut W<'_>) {
    for (k, t) in [(0, 1), (1, 3)] {
        let h = start(w, t, LATER).unwrap();
        w.handle_response(at(t), end_n(k).as_bytes()).unwrap();
        w.complete(at(t + 1), h, Ok(if k == 0 { b"1" } else { b"2" }))
            .unwrap();
    }
}

#[test]
fn two_releases_queued_come_out_in_order() {
    // Rounds that end without a drain in between: each release reads its own ENDs, and
    // ENDs held after a release go after the released ones in the buffer.
    let mut s = Storage::new(SMALL, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    two_rounds_each_releasing_an_end(&mut w);
    let frames = snapshot(&mut host, &mut w).frames();
    let consumer_ends: Vec<&str> = frames
        .iter()
        .filter(|(r, f)| *r == Route::Consumer && f.contains("END"))
        .map(|(_, f)| f.as_str())
        .collect();
    assert_eq!(consumer_ends, [end_n(0), end_n(1)]);
    // Each END right after its round's prompt.
    let at_of = |s: &str| frames.iter().position(|(_, f)| f == s).unwrap();
    assert_eq!(frames[at_of(&end_n(0)) - 1].0, Route::Consumer);
    assert!(at_of(&end_n(0)) < at_of(&end_n(1)));
    assert_eq!(frames.len(), 2 * (1 + 2 + 1));
}

#[test]
fn held_ends_move_only_once_every_queued_release_is_sent() {
    // Two releases queued, then a longer END held by a third call: sending the first
    // release must not yet move the held END to the front, where it would overwrite the
    // second release's END before that is sent.
    let cfg = WrapperConfig {
        held_bytes: 256,
        ..SMALL
    };
    let mut s = Storage::new(cfg, 2);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    two_rounds_each_releasing_an_end(&mut w);
    let h = start(&mut w, 5, LATER).unwrap();
    let long_end = format!(r#"{{"type":"END","pad":"{}"}}"#, "x".repeat(100));
    w.handle_response(at(5), long_end.as_bytes()).unwrap();
    let ends = |frames: &[(Route, String)]| -> Vec<String> {
        frames
            .iter()
            .filter(|(r, f)| *r == Route::Consumer && f.contains("END"))
            .map(|(_, f)| f.clone())
            .collect()
    };
    assert_eq!(ends(&host.frames(&mut w)), [end_n(0), end_n(1)]);
    w.complete(at(6), h, Ok(b"3")).unwrap();
    assert_eq!(ends(&host.frames(&mut w)), [long_end]);
}
