//! Hostile input never panics the state machines (debug build: every `debug_assert!` on the
//! output-queue bounds is live), refusals are only the errors SPEC §4 names, and every frame
//! the machines hand out is one JSON line (SPEC §7.22).
//!
//! Random operations with near-frame bytes, escape-heavy names, ids, messages and reasons,
//! raw values with line breaks, tabs and lone surrogates between and inside their tokens,
//! and small random capacities are thrown at a `Wrapper` and an `AdapterCall`. The `END`s
//! fed are one line (their strings are escaped, and the random bytes cannot spell `END`), so
//! the line check applies to every frame, released `END`s included.

use polyweave_tests::host::{Host, Storage};
use polyweave_tests::{assert_one_json_line, is_spec_refusal, proptest_cases};
use polyweave_tool_adapter::call::StartError;
use polyweave_tool_adapter::{
    AdapterCall, CallHandle, CallOptions, Instant, NoHooks, ResultWriter, Tool, ToolFailed,
    WrapperConfig,
};
use proptest::prelude::*;

/// Text that needs escaping as often as not.
fn hostile_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('\u{1}'),
            Just('"'),
            Just('\\'),
            Just('\n'),
            Just('é'),
            Just('😀'),
            Just('a'),
            Just('f'),
        ],
        0..40,
    )
    .prop_map(|c| c.into_iter().collect())
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Raw JSON values with white space (line breaks included) between their tokens, lone
/// surrogates and white space inside strings: the library must write them without the former.
const SPACED_VALUES: [&str; 6] = [
    "[\n1 ,\t2\r\n]",
    "{ \"a\" :\t[1,\r\n\"\\ud800 b\"] }",
    " \"x\\ny\" ",
    "{\"error\":\n [1, \"e\"],\r\n\"n\" : -0}",
    "[ [ [ ] ] ,\n{ } ]",
    "\t12345678901234567890123\n",
];

/// Args: short numbers (`01` is not JSON: a malformed call), or a spaced value.
fn args() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{0,3}".prop_map(|a| if a.is_empty() { "{}".into() } else { a }),
        proptest::sample::select(&SPACED_VALUES[..]).prop_map(str::to_string),
    ]
}

/// A frame: well-formed kinds with hostile strings, or raw near-JSON bytes.
fn frame() -> impl Strategy<Value = Vec<u8>> {
    let name = prop_oneof![
        Just("calc".to_string()),
        Just("later".to_string()),
        Just("files".to_string()),
        hostile_text(),
    ];
    prop_oneof![
        (name.clone(), proptest::option::of(hostile_text()), args()).prop_map(|(n, id, args)| {
            let id = id.map_or(String::new(), |i| format!("\"id\":{},", json_str(&i)));
            format!(
                r#"{{"type":"TOOL_CALL","content":{{{id}"name":{},"args":{args}}}}}"#,
                json_str(&n)
            )
            .into_bytes()
        }),
        hostile_text().prop_map(|m| format!(
            r#"{{"type":"ERROR","content":{{"message":{}}}}}"#,
            json_str(&m)
        )
        .into_bytes()),
        hostile_text().prop_map(|r| format!(
            r#"{{"type":"TOOL_RESULT","content":{{"result":{}}}}}"#,
            json_str(&r)
        )
        .into_bytes()),
        // A spaced result by member, or as the whole frame.
        proptest::sample::select(&SPACED_VALUES[..]).prop_map(|r| format!(
            "{{\"type\":\"TOOL_RESULT\",\n\"content\":{{\"result\":{r}}}}}"
        )
        .into_bytes()),
        proptest::sample::select(&SPACED_VALUES[..])
            .prop_map(
                |r| format!("{{\"type\" : \"TOOL_RESULT\",\r\n\"content\" : {r}}}").into_bytes()
            ),
        hostile_text()
            .prop_map(|c| format!(r#"{{"type":"END","content":{}}}"#, json_str(&c)).into_bytes()),
        Just(br#"{"type":"END"}"#.to_vec()),
        Just(br#"{"type":"TEXT","content":"x"}"#.to_vec()),
        proptest::collection::vec(
            proptest::sample::select(b"{}[]:,\"\\type TOOL_CALLnamecontent0123 \xff".to_vec()),
            0..60
        ),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Response(Vec<u8>),
    Request(Vec<u8>),
    Adapter(usize, Vec<u8>),
    Close(usize),
    Complete(usize, bool, String),
    Tick(u64),
    Cancel(String),
    Abort,
    Drain(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => frame().prop_map(Op::Response),
        1 => frame().prop_map(Op::Request),
        3 => (0..8usize, frame()).prop_map(|(k, f)| Op::Adapter(k, f)),
        1 => (0..8usize).prop_map(Op::Close),
        3 => (0..8usize, any::<bool>(), hostile_text()).prop_map(|(k, ok, m)| Op::Complete(k, ok, m)),
        2 => (0..300u64).prop_map(Op::Tick),
        1 => hostile_text().prop_map(Op::Cancel),
        1 => Just(Op::Abort),
        // Sometimes the host does not drain: later inputs meet a fuller queue.
        3 => (0..4usize).prop_map(Op::Drain),
    ]
}

fn config() -> impl Strategy<Value = (WrapperConfig, usize)> {
    (
        5..24usize,
        1..16usize,
        8..64usize,
        0..3u32,
        0..5usize,
        0..64usize,
    )
        .prop_map(|(name_cap, id_cap, result_cap, max_rounds, slots, held)| {
            let cfg = WrapperConfig {
                tool_timeout_ms: 100,
                name_cap,
                id_cap,
                args_cap: 16,
                result_cap,
                // The least Wrapper::new accepts.
                message_cap: name_cap.max(id_cap) + 64,
                trace_entries: 3,
                trace_bytes: 96,
                held_bytes: held,
                max_rounds,
                ..WrapperConfig::DEFAULT
            };
            (cfg, slots)
        })
}

fn calc(_args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(br#"{"error":"\u0001\"","success":false}"#);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(512)))]

    #[test]
    fn wrapper_survives_hostile_hosts((cfg, nslots) in config(), ops in proptest::collection::vec(op(), 1..60)) {
        let tools = [Tool::sync("calc", &calc), Tool::deferred("later"), Tool::adapter("files")];
        let mut storage = Storage::new(cfg, nslots);
        let mut w = storage.wrapper(&tools, NoHooks);
        let mut handles: Vec<CallHandle> = Vec::new();
        let mut host = Host::with_buffer(4096);
        for op in ops {
            let t = host.now();
            let r = match &op {
                Op::Response(f) => w.handle_response(t, f).map(|_| ()),
                Op::Request(f) => w.handle_request(t, f).map(|_| ()),
                Op::Adapter(k, f) => match handles.get(*k) {
                    Some(h) => w.handle_adapter_frame(t, *h, f),
                    None => Ok(()),
                },
                Op::Close(k) => match handles.get(*k) {
                    Some(h) => w.handle_adapter_closed(t, *h),
                    None => Ok(()),
                },
                Op::Complete(k, ok, m) => match handles.get(*k) {
                    Some(h) if *ok => w.complete(t, *h, Ok(br#"{"ok":"\u0001"}"#)).map(drop),
                    Some(h) => w.complete(t, *h, Err(m)).map(drop),
                    None => Ok(()),
                },
                Op::Tick(dt) => w.handle_timeout(host.advance(*dt)),
                Op::Cancel(reason) => w.cancel(t, reason).map(|_| ()),
                Op::Abort => {
                    w.abort();
                    Ok(())
                }
                Op::Drain(n) => {
                    for _ in 0..*n {
                        if let Some((_, frame)) = host.pop_frame(&mut w) {
                            assert_one_json_line(frame, &format!("{op:?}"));
                        }
                    }
                    Ok(())
                }
            };
            if let Err(e) = &r {
                prop_assert!(is_spec_refusal(e), "unexpected refusal {e:?} for {op:?}");
            }
            handles.extend(host.started(&mut w).iter().map(|s| s.handle));
            // A drained queue must always accept the next frame in full.
            if let Some(next) = w.peek_transmit() {
                prop_assert!(next.len <= host.buffer_len());
            }
            // A deadline only while a call is pending.
            prop_assert!(w.poll_timeout().is_none() || w.pending() > 0);
        }
        // Draining everything always works and ends empty.
        host.pop_frames(&mut w, |_, frame| assert_one_json_line(frame, "final drain"));
        prop_assert_eq!(w.queued(), 0);
    }

    #[test]
    fn adapter_call_survives_hostile_adapters(
        frames in proptest::collection::vec(frame(), 0..20),
        name in hostile_text(),
        cap in 0..64usize,
        timeout in 0..50u32,
        args in prop_oneof![
            Just("{}".to_string()),
            proptest::sample::select(&SPACED_VALUES[..]).prop_map(str::to_string),
        ],
    ) {
        let mut result = vec![0u8; cap];
        let opts = CallOptions { name: &name, timeout_ms: timeout, ..CallOptions::DEFAULT };
        let mut call = match AdapterCall::start(Instant::ZERO, opts, Some("\u{1}\""), args.as_bytes(), &mut result) {
            Ok(call) => call,
            // Too small to hold its own timeout message: refused up front, never stuck later.
            Err(StartError::BufferTooSmall { needed, given }) => {
                prop_assert!(needed > given && given == cap);
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(format!("start refused with {e:?}"))),
        };
        let mut buf = [0u8; 512];
        for (i, f) in frames.iter().enumerate() {
            let t = Instant::from_millis(i as u64 * 7);
            let _ = call.handle_timeout(t);
            if let Err(e) = call.handle_frame(t, f) {
                prop_assert!(is_spec_refusal(&e), "unexpected refusal {e:?}");
            }
            while let Ok(Some(n)) = call.poll_transmit(&mut buf) {
                assert_one_json_line(&buf[..n], "AdapterCall");
            }
        }
        let _ = call.handle_closed(Instant::from_millis(1000));
        // Whatever happened, the deadline settles a call that is still waiting.
        prop_assert_eq!(call.handle_timeout(Instant::from_millis(1_000_000)), Ok(()));
        while let Ok(Some(n)) = call.poll_transmit(&mut buf) {
            assert_one_json_line(&buf[..n], "AdapterCall");
        }
        prop_assert!(call.outcome().is_some());
        prop_assert_eq!(call.poll_timeout(), None);
    }
}
