//! SPEC §7.22–7.25, byte for byte: what the library carries, and how.
//!
//! * §7.22 — raw values copied into frames the library composes (the
//!   `TOOL_RESULT`, the adapter's `TOOL_CALL`, the settlement, the last tool
//!   error) lose the white space between their tokens, so every frame written
//!   is one NDJSON line; strings, number text, escapes and member order stay.
//! * §7.23 — what cannot be carried fails the call with its exact message, and
//!   the model still gets its one `TOOL_RESULT`.
//! * §7.24 — escaped unpaired surrogates decode to U+FFFD; raw values keep them.
//! * §7.25 — the first `type` counts on the O(1) path; validated frames with two
//!   are malformed, and `full_validation` validates every frame.

use polyweave_tests::drive::{at, echo};
use polyweave_tests::host::{Host, Storage};
use polyweave_tool_adapter::call::{AdapterCall, CallOptions};
use polyweave_tool_adapter::json::{JsonError, JsonErrorKind};
use polyweave_tool_adapter::wrapper::{Completed, Disposition, Event, Wrapper, WrapperConfig};
use polyweave_tool_adapter::CallError;
use polyweave_tool_adapter::CallOutcome;
use polyweave_tool_adapter::{CallHandle, Error, FrameError, NoHooks, Route, Tool};
use polyweave_tool_adapter::{ResultWriter, ToolFailed};

const CFG: WrapperConfig = WrapperConfig {
    name_cap: 16,
    id_cap: 8,
    args_cap: 64,
    result_cap: 64,
    message_cap: 80,
    trace_entries: 8,
    trace_bytes: 1024,
    held_bytes: 64,
    ..WrapperConfig::DEFAULT
};

fn spaced(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    // 78 bytes as written, 40 without white space: carried (result_cap is 64).
    out.write(
        b"{ \"k\" :\n[ 1 ,\t2 , \"a b\" ],\r\n \"e\" : { \"f\" : [ 1e400 , -0 ] } , \"z\" : 1.50 }",
    );
    Ok(())
}
fn big(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(format!("\"{}\"", "r".repeat(63)).as_bytes()); // 65 bytes
    Ok(())
}
fn deep33(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(format!("{}0{}", "[".repeat(33), "]".repeat(33)).as_bytes());
    Ok(())
}

fn tools() -> Vec<Tool<'static>> {
    vec![
        Tool::sync("echo", &echo),
        Tool::sync("spaced", &spaced),
        Tool::sync("big", &big),
        Tool::sync("deep", &deep33),
        Tool::deferred("later"),
        Tool::adapter("files"),
    ]
}

/// The host's buffer: every frame here is smaller.
const BUF: usize = 4096;

/// Every queued frame, as (route, text), checked to be one line.
fn drain(host: &mut Host, w: &mut Wrapper<'_, NoHooks>) -> Vec<(Route, String)> {
    let frames = host.frames(w);
    for (_, text) in &frames {
        assert!(
            !text.contains(['\n', '\r']),
            "a frame with a line break: {text}"
        );
    }
    frames
}

/// The `TOOL_RESULT` frames sent to the model.
fn results(frames: &[(Route, String)]) -> Vec<&str> {
    frames
        .iter()
        .filter(|(r, f)| *r == Route::Model && f.contains("TOOL_RESULT"))
        .map(|(_, f)| f.as_str())
        .collect()
}

fn started(w: &mut Wrapper<'_, NoHooks>) -> (CallHandle, Vec<u8>) {
    match w.poll_event() {
        Some(Event::CallStarted { handle, args, .. }) => (handle, args.to_vec()),
        None => panic!("no call started"),
    }
}

// ------------------------------------------------------------ §7.22

#[test]
fn sync_results_and_echoed_args_lose_their_white_space() {
    let tools = tools();
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    let call = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":[\n1 ,\t{\"a\" : \"b  c\"}\r]}}";
    w.handle_response(at(0), call.as_bytes()).unwrap();
    let frames = drain(&mut host, &mut w);
    assert_eq!(
        results(&frames),
        [r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":[1,{"a":"b  c"}]}}"#]
    );
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"id":"s","name":"spaced"}}"#,
    )
    .unwrap();
    assert_eq!(
        results(&drain(&mut host, &mut w)),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"s","name":"spaced","result":{"k":[1,2,"a b"],"e":{"f":[1e400,-0]},"z":1.50}}}"#
        ]
    );
    // The trace keeps the values as the frames carry them.
    let trace: Vec<_> = w.trace().iter().collect();
    assert_eq!(trace[0].args, br#"[1,{"a":"b  c"}]"#);
    assert_eq!(
        trace[0].outcome,
        CallOutcome::Result(br#"[1,{"a":"b  c"}]"#)
    );
    assert_eq!(
        trace[1].outcome,
        CallOutcome::Result(br#"{"k":[1,2,"a b"],"e":{"f":[1e400,-0]},"z":1.50}"#)
    );
}

#[test]
fn pending_args_adapter_tool_call_and_completed_results_are_compact() {
    let tools = tools();
    let mut s = Storage::new(CFG, 2);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    let deferred = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"d\",\"name\":\"later\",\"args\":{ \"q\" :\n\"x y\" }}}";
    let adapter = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"f\",\"name\":\"files\",\"args\":[ 1 ,\t2 ]}}";
    w.handle_response(at(0), deferred.as_bytes()).unwrap();
    w.handle_response(at(0), adapter.as_bytes()).unwrap();
    let events: Vec<(CallHandle, Vec<u8>)> = host
        .started(&mut w)
        .into_iter()
        .map(|s| (s.handle, s.args))
        .collect();
    assert_eq!(events[0].1, br#"{"q":"x y"}"#);
    assert_eq!(events[1].1, b"[1,2]");
    assert_eq!(
        drain(&mut host, &mut w),
        [(
            Route::Adapter(events[1].0),
            r#"{"type":"TOOL_CALL","content":{"id":"f","name":"files","args":[1,2]}}"#.into()
        )]
    );
    let (d, f) = (events[0].0, events[1].0);
    assert_eq!(
        w.complete(at(1), d, Ok(b" { \"r\" : [ 1 ,\n 2 ] } ")),
        Ok(Completed::AsGiven)
    );
    w.handle_adapter_frame(
        at(2),
        f,
        b"{\"type\":\"TOOL_RESULT\",\"content\":{\"result\":{ \"n\" :\t[ -0 , 1.50 ] }}}",
    )
    .unwrap();
    w.handle_adapter_closed(at(3), f).unwrap();
    let frames = drain(&mut host, &mut w);
    assert_eq!(
        results(&frames),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"d","name":"later","result":{"r":[1,2]}}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"f","name":"files","result":{"n":[-0,1.50]}}}"#,
        ]
    );
}

#[test]
fn a_raw_error_member_is_the_last_tool_error_without_white_space() {
    let tools = tools();
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    let call = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":{\"error\" : [1, \"\\u00e9\" ,\n{\"a\" : null}]}}}";
    w.handle_response(at(0), call.as_bytes()).unwrap();
    let frames = drain(&mut host, &mut w);
    assert_eq!(
        frames[1],
        (
            Route::Model,
            r#"{"type":"TEXT","content":"Tool results above. Last tool error: [1,\"\\u00e9\",{\"a\":null}]"}"#
                .into()
        )
    );
}

#[test]
fn adapter_call_settles_and_sends_compact_values() {
    let mut buf = [0u8; 64];
    let opts = CallOptions {
        name: "t",
        ..CallOptions::DEFAULT
    };
    let mut c =
        AdapterCall::start(at(0), opts, Some("i"), b"{ \"a\" :\n[ 1 ] }", &mut buf).unwrap();
    let mut out = [0u8; 128];
    let n = c.poll_transmit(&mut out).unwrap().unwrap();
    assert_eq!(
        &out[..n],
        br#"{"type":"TOOL_CALL","content":{"id":"i","name":"t","args":{"a":[1]}}}"#
    );
    c.handle_frame(
        at(1),
        b"{\"type\":\"TOOL_RESULT\",\"content\":{\"result\":[\n1 , \"x  y\"]}}",
    )
    .unwrap();
    c.handle_frame(at(2), br#"{"type":"END"}"#).unwrap();
    assert_eq!(c.outcome(), Some(CallOutcome::Result(br#"[1,"x  y"]"#)));
}

// ------------------------------------------------------------ §7.23

#[test]
fn pending_args_over_the_cap_fail_the_call_in_spec_order() {
    let tools = tools();
    // 65 bytes without white space: one over.
    let over = format!(r#"{{"p":"{}"}}"#, "x".repeat(57));
    assert_eq!(over.len(), 65);
    // 100 bytes as written, 64 without white space: carried.
    let fits = format!("{{ \"p\" :{}\"{}\" }}", " ".repeat(33), "x".repeat(56));
    assert_eq!((fits.len(), fits.replace(' ', "").len()), (100, 64));
    let call = |name: &str, id: &str, args: &str| {
        format!(r#"{{"type":"TOOL_CALL","content":{{"id":"{id}","name":"{name}","args":{args}}}}}"#)
    };
    for name in ["later", "files"] {
        let mut s = Storage::new(CFG, 1);
        let mut w = s.wrapper(&tools, NoHooks);
        let mut host = Host::with_buffer(BUF);
        assert_eq!(
            w.handle_response(at(0), call(name, "a", &over).as_bytes()),
            Ok(Disposition::Intercepted {
                index: 0,
                handle: None
            })
        );
        assert!(w.poll_event().is_none());
        let frames = drain(&mut host, &mut w);
        assert_eq!(
            frames,
            [
                (
                    Route::Model,
                    format!(
                        r#"{{"type":"TOOL_RESULT","content":{{"id":"a","name":"{name}","error":"Tool {name} args exceed 64 bytes"}}}}"#
                    )
                ),
                (
                    Route::Model,
                    format!(
                        r#"{{"type":"TEXT","content":"Tool results above. Last tool error: Tool {name} args exceed 64 bytes"}}"#
                    )
                ),
                (
                    Route::Consumer,
                    format!(
                        r#"{{"type":"TEXT","content":"Tool results above. Last tool error: Tool {name} args exceed 64 bytes"}}"#
                    )
                ),
            ]
        );
        // Measured without white space: 100 bytes that hold 64 are taken.
        let Ok(Disposition::Intercepted {
            handle: Some(_), ..
        }) = w.handle_response(at(0), call(name, "b", &fits).as_bytes())
        else {
            panic!("{name}: the compact args fit");
        };
        assert_eq!(
            started(&mut w).1,
            format!(r#"{{"p":"{}"}}"#, "x".repeat(56)).as_bytes()
        );
        drain(&mut host, &mut w);
        // A duplicate id is checked first, the free slot after (the only slot is taken).
        w.handle_response(at(0), call(name, "b", &over).as_bytes())
            .unwrap();
        w.handle_response(at(0), call(name, "c", &over).as_bytes())
            .unwrap();
        let frames = drain(&mut host, &mut w);
        assert_eq!(
            results(&frames),
            [
                format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"id":"b","name":"{name}","error":"Duplicate tool call id \"b\""}}}}"#
                ),
                format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"id":"c","name":"{name}","error":"Tool {name} args exceed 64 bytes"}}}}"#
                ),
            ]
        );
    }
    // Sync tools run on the frame's own bytes: no args capacity.
    let mut s = Storage::new(CFG, 0);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    w.handle_response(at(0), call("spaced", "s", &over).as_bytes())
        .unwrap();
    assert!(results(&drain(&mut host, &mut w))[0].contains(r#""result":{"k""#));
}

#[test]
fn sync_results_over_the_cap_or_too_deep_fail_the_call() {
    let tools = tools();
    let mut s = Storage::new(CFG, 0);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"id":"b","name":"big"}}"#,
    )
    .unwrap();
    // A queue sized for no pending call holds one sync call's output: drain between.
    let mut frames = drain(&mut host, &mut w);
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"id":"d","name":"deep"}}"#,
    )
    .unwrap();
    frames.extend(drain(&mut host, &mut w));
    assert_eq!(
        results(&frames),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"b","name":"big","error":"Tool big result exceeds 64 bytes"}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"d","name":"deep","error":"Tool deep result is nested deeper than 32 levels"}}"#,
        ]
    );
}

#[test]
fn completions_that_cannot_be_carried_complete_the_call_and_say_so() {
    let tools = tools();
    let mut s = Storage::new(CFG, 2);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"id":"1","name":"later"}}"#,
    )
    .unwrap();
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"id":"2","name":"later"}}"#,
    )
    .unwrap();
    let (one, two) = (started(&mut w).0, started(&mut w).0);
    let large = format!(r#"["{}"]"#, "r".repeat(61)); // 65 bytes
    assert_eq!(
        w.complete(at(1), one, Ok(large.as_bytes())),
        Ok(Completed::ResultTooLarge { len: 65, cap: 64 })
    );
    let deep = format!("{}{}", "[".repeat(33), "]".repeat(33));
    assert_eq!(
        w.complete(at(1), two, Ok(deep.as_bytes())),
        Ok(Completed::ResultTooDeep { max_depth: 32 })
    );
    assert_eq!(w.pending(), 0);
    assert_eq!(
        results(&drain(&mut host, &mut w)),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"1","name":"later","error":"Tool later result exceeds 64 bytes"}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"2","name":"later","error":"Tool later result is nested deeper than 32 levels"}}"#,
        ]
    );
    // The calls are finished: a second completion is refused as for any finished call.
    assert_eq!(
        w.complete(at(2), one, Ok(b"1")),
        Err(Error::Call(CallError::Completed))
    );
    // Invalid JSON is still refused, and changes nothing.
    w.handle_response(at(3), br#"{"type":"TOOL_CALL","content":{"name":"later"}}"#)
        .unwrap();
    let three = started(&mut w).0;
    assert_eq!(
        w.complete(at(3), three, Ok(b"[1,]")),
        Err(Error::InvalidResult(JsonError {
            kind: JsonErrorKind::UnexpectedByte,
            at: 3
        }))
    );
    assert_eq!(w.pending(), 1);
}

#[test]
fn an_adapter_result_over_the_cap_fails_the_call_when_it_settles() {
    let tools = tools();
    let over = format!(
        r#"{{"type":"TOOL_RESULT","content":{{"result":"{}"}}}}"#,
        "r".repeat(63)
    );
    // END settles with the failure; a later, smaller TOOL_RESULT is not recorded (only the first is).
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"id":"a","name":"files"}}"#,
    )
    .unwrap();
    let f = started(&mut w).0;
    drain(&mut host, &mut w);
    assert_eq!(w.handle_adapter_frame(at(1), f, over.as_bytes()), Ok(()));
    assert_eq!(w.pending(), 1);
    w.handle_adapter_frame(
        at(1),
        f,
        br#"{"type":"TOOL_RESULT","content":{"result":1}}"#,
    )
    .unwrap();
    w.handle_adapter_frame(at(2), f, br#"{"type":"END"}"#)
        .unwrap();
    assert_eq!(
        results(&drain(&mut host, &mut w)),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"a","name":"files","error":"Tool files result exceeds 64 bytes"}}"#
        ]
    );
    // An ERROR still settles with its own message.
    w.handle_response(at(3), br#"{"type":"TOOL_CALL","content":{"name":"files"}}"#)
        .unwrap();
    let f = started(&mut w).0;
    w.handle_adapter_frame(at(4), f, over.as_bytes()).unwrap();
    w.handle_adapter_frame(
        at(4),
        f,
        br#"{"type":"ERROR","content":{"message":"disk"}}"#,
    )
    .unwrap();
    assert_eq!(
        results(&drain(&mut host, &mut w)),
        [r#"{"type":"TOOL_RESULT","content":{"name":"files","error":"disk"}}"#]
    );
    // A standalone call: its buffer is its result capacity.
    let mut buf = [0u8; 40];
    let opts = CallOptions {
        name: "t",
        ..CallOptions::DEFAULT
    };
    let mut c = AdapterCall::start(at(0), opts, None, b"{}", &mut buf).unwrap();
    let r41 = format!(
        r#"{{"type":"TOOL_RESULT","content":{{"result":"{}"}}}}"#,
        "x".repeat(39)
    );
    c.handle_frame(at(1), r41.as_bytes()).unwrap();
    c.handle_closed(at(2)).unwrap();
    assert_eq!(
        c.outcome(),
        Some(CallOutcome::Error("Tool t result exceeds 40 bytes"))
    );
}

#[test]
fn a_long_adapter_error_message_is_cut_not_refused() {
    let tools = tools();
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    w.handle_response(at(0), br#"{"type":"TOOL_CALL","content":{"name":"files"}}"#)
        .unwrap();
    let f = started(&mut w).0;
    drain(&mut host, &mut w);
    // 41 × "é" is 82 bytes decoded; the longest prefix that fits message_cap (80) is 40 of them.
    let frame = format!(
        r#"{{"type":"ERROR","content":{{"message":"{}"}}}}"#,
        "\\u00e9".repeat(41)
    );
    assert_eq!(w.handle_adapter_frame(at(1), f, frame.as_bytes()), Ok(()));
    assert_eq!(
        results(&drain(&mut host, &mut w)),
        [format!(
            r#"{{"type":"TOOL_RESULT","content":{{"name":"files","error":"{}"}}}}"#,
            "é".repeat(40)
        )]
    );
    assert_eq!(w.stats().messages_truncated, 1);
    // A standalone call cuts to its buffer, on a character boundary.
    let mut buf = [0u8; 35];
    let opts = CallOptions {
        name: "t",
        ..CallOptions::DEFAULT
    };
    let mut c = AdapterCall::start(at(0), opts, None, b"{}", &mut buf).unwrap();
    c.handle_frame(at(1), frame.as_bytes()).unwrap();
    assert_eq!(
        c.outcome(),
        Some(CallOutcome::Error("é".repeat(17).as_str()))
    );
}

#[test]
fn an_adapter_error_message_cut_by_its_escapes_is_counted() {
    // Each message decodes to at most message_cap (80) bytes, so only its escapes can make it
    // too long: 40 newlines escape to exactly 80 bytes and pass whole; 41 are cut to 40.
    // kills: complete.rs `n < decoded.len()` → `>` (the cut message not counted)
    let tools = tools();
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    let cases = [(40, 40, 0), (41, 40, 1), (80, 40, 2), (39, 39, 2)];
    for (t, (newlines, sent, truncated)) in (0..).step_by(2).zip(cases) {
        w.handle_response(at(t), br#"{"type":"TOOL_CALL","content":{"name":"files"}}"#)
            .unwrap();
        let f = started(&mut w).0;
        drain(&mut host, &mut w);
        let frame = format!(
            r#"{{"type":"ERROR","content":{{"message":"{}"}}}}"#,
            "\\n".repeat(newlines)
        );
        assert_eq!(
            w.handle_adapter_frame(at(t + 1), f, frame.as_bytes()),
            Ok(())
        );
        assert_eq!(
            results(&drain(&mut host, &mut w)),
            [format!(
                r#"{{"type":"TOOL_RESULT","content":{{"name":"files","error":"{}"}}}}"#,
                "\\n".repeat(sent)
            )],
            "{newlines}"
        );
        assert_eq!(w.stats().messages_truncated, truncated, "{newlines}");
    }
}

// ------------------------------------------------------------ §7.24

#[test]
fn unpaired_surrogates_decode_to_the_replacement_character() {
    let tools = tools();
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    // In a name: not found, with U+FFFD in the message.
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"name":"\ud800"}}"#,
    )
    .unwrap();
    // In an id (a low one, then a high one before a letter), echoed decoded; raw args keep theirs.
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"id":"\udc00\ud83dx","name":"echo","args":["\ud800","\ud83d\ude00"]}}"#,
    )
    .unwrap();
    let frames = drain(&mut host, &mut w);
    assert_eq!(
        results(&frames),
        [
            "{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"\u{FFFD}\",\"error\":\"Tool \\\"\u{FFFD}\\\" not found\"}}",
            "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"\u{FFFD}\u{FFFD}x\",\"name\":\"echo\",\"result\":[\"\\ud800\",\"\\ud83d\\ude00\"]}}",
        ]
    );
    // In a type: an unknown type, passed through.
    assert_eq!(
        w.handle_response(at(0), br#"{"type":"\ud800","content":1}"#),
        Ok(Disposition::Forward)
    );
    // In an adapter's ERROR message.
    w.handle_response(at(0), br#"{"type":"TOOL_CALL","content":{"name":"files"}}"#)
        .unwrap();
    let f = started(&mut w).0;
    w.handle_adapter_frame(
        at(1),
        f,
        br#"{"type":"ERROR","content":{"message":"\ud800\ud800!"}}"#,
    )
    .unwrap();
    assert_eq!(
        results(&drain(&mut host, &mut w)),
        ["{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"files\",\"error\":\"\u{FFFD}\u{FFFD}!\"}}"]
    );
}

// ------------------------------------------------------------ §7.25

#[test]
fn the_first_type_counts_unless_the_frame_is_validated() {
    let tools = tools();
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    let text_first = br#"{"type":"TEXT","type":"TOOL_CALL","content":{"name":"echo"}}"#;
    let call_first = br#"{"type":"TOOL_CALL","type":"TEXT","content":{"name":"echo"}}"#;
    let broken = br#"{"type":"TEXT","content":[1,}"#;
    assert_eq!(
        w.handle_response(at(0), text_first),
        Ok(Disposition::Forward)
    );
    assert_eq!(
        w.handle_request(at(0), text_first),
        Ok(Disposition::Forward)
    );
    assert_eq!(w.handle_response(at(0), broken), Ok(Disposition::Forward));
    // A TOOL_CALL is validated: two types are malformed.
    assert_eq!(
        w.handle_response(at(0), call_first),
        Err(Error::Malformed(FrameError::DuplicateType))
    );
    assert!(drain(&mut host, &mut w).is_empty());

    let full = WrapperConfig {
        full_validation: true,
        ..CFG
    };
    let mut s = Storage::new(full, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    for bad in [&text_first[..], call_first] {
        assert_eq!(
            w.handle_response(at(0), bad),
            Err(Error::Malformed(FrameError::DuplicateType))
        );
        assert_eq!(
            w.handle_request(at(0), bad),
            Err(Error::Malformed(FrameError::DuplicateType))
        );
    }
    let json = Err(Error::Malformed(FrameError::Json(JsonError {
        kind: JsonErrorKind::UnexpectedByte,
        at: 28,
    })));
    assert_eq!(w.handle_response(at(0), broken), json);
    assert_eq!(w.handle_request(at(0), broken), json);
    // Valid frames go on as before: forwarded, held, intercepted.
    assert_eq!(
        w.handle_response(at(0), br#"{"type":"TEXT","content":"x"}"#),
        Ok(Disposition::Forward)
    );
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"name":"echo","args":[1]}}"#,
    )
    .unwrap();
    assert_eq!(
        results(&drain(&mut host, &mut w)),
        [r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":[1]}}"#]
    );
    assert_eq!(w.pending(), 0);
}

/// §7.23: a deferred result the host cannot write as JSON fails the call with the library's
/// own text (what a sync tool's invalid output gets), so no binding composes it; once the
/// call is over, the same completion is refused and changes nothing.
#[test]
fn a_deferred_result_the_host_cannot_write_fails_with_the_librarys_text() {
    let tools = tools();
    let mut s = Storage::new(CFG, 2);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::with_buffer(BUF);
    let call = r#"{"type":"TOOL_CALL","content":{"id":"d","name":"later","args":{}}}"#;
    w.handle_response(at(0), call.as_bytes()).unwrap();
    let (d, _) = started(&mut w);
    assert_eq!(w.complete_unwritable(at(1), d), Ok(()));
    let frames = drain(&mut host, &mut w);
    assert_eq!(
        results(&frames),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"d","name":"later","error":"Tool later returned invalid JSON"}}"#
        ]
    );
    let stats = w.stats();
    let again = w.complete_unwritable(at(2), d);
    assert!(matches!(again, Err(Error::Call(_))), "{again:?}");
    assert_eq!(again, w.complete(at(2), d, Ok(b"1")).map(|_| ()));
    assert_eq!(w.stats(), stats);
    assert!(drain(&mut host, &mut w).is_empty());
}
