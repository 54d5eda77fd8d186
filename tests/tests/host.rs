//! The test host itself (`polyweave_tests::host`): every suite, bench and the replay program
//! trust its order of events, its scripts, its clock and its named states, so they are checked
//! here against bytes and orders worked out from the SPEC (§3.2, §5, §7.5).

use polyweave_tests::host::{
    busy, busy_without_end, idle, start, Call, Entry, Host, Outcome, Recorder, Script, Started,
    Storage, FILES,
};
use polyweave_tool_adapter::{Instant, NoHooks, PendingKind, Route, WrapperConfig};

const CFG: WrapperConfig = WrapperConfig {
    tool_timeout_ms: 100,
    ..WrapperConfig::DEFAULT
};

const PROMPT: &str = r#"{"type":"TEXT","content":"Tool results above."}"#;

fn frame(n: u64, route: Route, text: &str) -> Entry {
    Entry::Frame {
        n,
        route,
        bytes: text.as_bytes().to_vec(),
    }
}

fn call(index: u32, name: &str, id: Option<&str>, args: &str, seq: u64) -> Call {
    Call {
        index,
        name: Some(name.to_string()),
        id: id.map(str::to_string),
        args: args.as_bytes().to_vec(),
        seq,
    }
}

/// SPEC §3.2: `on_tool_call` before the call runs, `on_tool_result` right after its
/// `TOOL_RESULT`, then the prompt and its mirror; numbered from the wrapper's creation on.
#[test]
fn drive_places_each_hook_after_the_frames_its_seq_counts() {
    let mut s = Storage::new(CFG, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    for round in 0..2u64 {
        start(
            &mut w,
            0,
            r#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#,
        );
        let n = 3 * round;
        let calc = call(round as u32, "calc", None, "{}", n);
        let result = r#"{"type":"TOOL_RESULT","content":{"name":"calc","result":{"sum":3}}}"#;
        assert_eq!(
            host.drive(&mut w),
            [
                Entry::ToolCall(calc.clone()),
                frame(n + 1, Route::Model, result),
                Entry::ToolResult(
                    Call { seq: n + 1, ..calc },
                    Outcome::Result(br#"{"sum":3}"#.to_vec())
                ),
                frame(n + 2, Route::Model, PROMPT),
                frame(n + 3, Route::Consumer, PROMPT),
            ]
        );
    }
    assert!(host.drive(&mut w).is_empty());
}

/// Frames taken by the lean forms count too: a later hook still lands after its frame.
#[test]
fn lean_forms_keep_the_count() {
    let mut s = Storage::new(CFG, 2);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    let [_, adapter] = busy_without_end(&mut w);
    // The adapter's TOOL_CALL: frame 1, by the lean drain; the started calls stay.
    assert_eq!(
        host.pop_frames(&mut w, |route, _| assert_eq!(
            route,
            Route::Adapter(adapter)
        )),
        1
    );
    assert_eq!(host.frames(&mut w), []);
    assert_eq!(host.skip_events(&mut w), 2);
    assert_eq!(host.skip_events(&mut w), 0);
    w.handle_adapter_closed(Instant::from_millis(3), adapter)
        .unwrap();
    let log = host.drive(&mut w);
    let result = r#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","result":null}}"#;
    assert_eq!(log[2], frame(2, Route::Model, result));
    assert_eq!(log[3].hook().map(|c| c.seq), Some(2));
}

/// Scripted tools run when their calls start, until the wrapper is quiet (SPEC §3.2.6: the
/// held END goes out after the round's prompt).
#[test]
fn scripted_tools_run_until_quiet() {
    let mut s = Storage::new(CFG, 2);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    host.script("later", Script::Complete(Ok(b"[1]".to_vec())))
        .script(
            "files",
            Script::Adapter {
                frames: vec![br#"{"type":"TOOL_RESULT","content":{"result":"ok"}}"#.to_vec()],
                close: true,
            },
        );
    let [d, f] = busy_without_end(&mut w);
    w.handle_response(Instant::from_millis(2), br#"{"type":"END"}"#)
        .unwrap();
    host.set_now(3);
    let log = host.drive(&mut w);
    let frames: Vec<(Route, &[u8])> = log.iter().filter_map(Entry::frame).collect();
    assert_eq!(
        frames,
        [
            (
                Route::Adapter(f),
                &br#"{"type":"TOOL_CALL","content":{"id":"a1","name":"files","args":[1,2]}}"#[..]
            ),
            (
                Route::Model,
                br#"{"type":"TOOL_RESULT","content":{"id":"d1","name":"later","result":[1]}}"#
            ),
            (
                Route::Model,
                br#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","result":"ok"}}"#
            ),
            (Route::Model, PROMPT.as_bytes()),
            (Route::Consumer, PROMPT.as_bytes()),
            (Route::Consumer, br#"{"type":"END"}"#),
        ]
    );
    let started: Vec<&Started> = log.iter().filter_map(Entry::started).collect();
    assert_eq!(
        started,
        [
            &Started {
                handle: d,
                kind: PendingKind::Deferred,
                tool: 3,
                name: "later".into(),
                id: Some("d1".into()),
                args: br#"{"n":1}"#.to_vec(),
            },
            &Started {
                handle: f,
                kind: PendingKind::Adapter,
                tool: 4,
                name: "files".into(),
                id: Some("a1".into()),
                args: b"[1,2]".to_vec(),
            },
        ]
    );
    assert_eq!(w.pending(), 0);
    assert_eq!(w.now(), Instant::from_millis(3));
}

/// `script_all` covers the tools without a script of their own; `Echo` gives back the args.
#[test]
fn script_all_and_echo() {
    let mut s = Storage::new(CFG, 2);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    host.script_all(Script::Echo).script(
        "files",
        Script::Adapter {
            frames: vec![br#"{"type":"ERROR","content":{"message":"no"}}"#.to_vec()],
            close: false,
        },
    );
    busy_without_end(&mut w);
    // Scripts run at the host's clock, which must not be behind the wrapper's.
    host.set_now(2);
    let log = host.drive(&mut w);
    let to_model: Vec<&[u8]> = log
        .iter()
        .filter_map(Entry::frame)
        .filter(|(route, _)| *route == Route::Model)
        .map(|(_, bytes)| bytes)
        .collect();
    assert_eq!(
        to_model,
        [
            &br#"{"type":"TOOL_RESULT","content":{"id":"d1","name":"later","result":{"n":1}}}"#[..],
            br#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","error":"no"}}"#,
            br#"{"type":"TEXT","content":"Tool results above. Last tool error: no"}"#,
        ]
    );
}

#[test]
#[should_panic(expected = "scripted completion for call 0 refused")]
fn a_refused_script_fails_the_test() {
    let mut s = Storage::new(CFG, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    // `complete` is for deferred calls.
    host.script("files", Script::Echo);
    start(&mut w, 0, FILES);
    host.drive(&mut w);
}

/// SPEC §7.5: the call started at 1 ms with 100 ms is due at 101, the one at 2 ms at 102; the
/// clock never goes back.
#[test]
fn advance_to_next_timeout_fires_each_deadline() {
    let mut s = Storage::new(CFG, 2);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    let [_, f] = busy(&mut w);
    host.drive(&mut w);
    assert_eq!(
        host.advance_to_next_timeout(&mut w),
        Some(Instant::from_millis(101))
    );
    assert_eq!(w.pending(), 1);
    let frames = host.frames(&mut w);
    assert_eq!(
        frames,
        [(
            Route::Model,
            r#"{"type":"TOOL_RESULT","content":{"id":"d1","name":"later","error":"Tool later timed out after 100ms"}}"#.to_string()
        )]
    );
    assert_eq!(
        host.advance_to_next_timeout(&mut w),
        Some(Instant::from_millis(102))
    );
    let frames = host.frames(&mut w);
    assert_eq!(
        frames[0],
        (
            Route::Adapter(f),
            r#"{"type":"CANCEL","content":{"id":"a1","name":"files","reason":"timeout"}}"#
                .to_string()
        )
    );
    // The recorded result is not the outcome: the call timed out. Then the round ends with
    // the last error, and the held END is released.
    assert_eq!(
        frames.last(),
        Some(&(Route::Consumer, r#"{"type":"END","content":1}"#.to_string()))
    );
    assert_eq!(host.advance_to_next_timeout(&mut w), None);
    assert_eq!(host.now(), Instant::from_millis(102));
    host.set_now(500);
    assert_eq!(host.advance(5), Instant::from_millis(505));
}

/// `busy` is what its documentation says: two calls pending, a failed sync call in the trace,
/// an END held.
#[test]
fn busy_is_two_pending_calls_a_trace_entry_and_a_held_end() {
    let mut s = Storage::new(CFG, 2);
    let mut w = s.wrapper(&polyweave_tests::host::TOOLS, NoHooks);
    let [d, f] = busy(&mut w);
    assert_eq!((d.index(), f.index()), (0, 1));
    assert_eq!(w.pending(), 2);
    assert_eq!(w.now(), Instant::from_millis(5));
    let trace: Vec<_> = w.trace().iter().map(|e| e.name).collect();
    assert_eq!(trace, [Some("boom")]);
    let mut host = Host::new();
    assert_eq!(host.frames(&mut w).len(), 2); // the adapter's TOOL_CALL, boom's TOOL_RESULT
    w.complete(Instant::from_millis(6), d, Ok(b"1")).unwrap();
    w.handle_adapter_closed(Instant::from_millis(6), f).unwrap();
    let frames = host.frames(&mut w);
    assert_eq!(
        frames[1],
        (
            Route::Model,
            r#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","result":7}}"#.to_string()
        )
    );
    assert_eq!(
        frames.last(),
        Some(&(Route::Consumer, r#"{"type":"END","content":1}"#.to_string()))
    );
}

/// A frame larger than the host's buffer fails the test, or is reported by `try_drive`.
#[test]
fn a_frame_larger_than_the_buffer_is_reported() {
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&polyweave_tests::host::TOOLS, Recorder::default());
    start(&mut w, 0, FILES);
    let mut host = Host::with_buffer(FILES.len() - 1);
    assert_eq!(
        host.try_drive(&mut w).map(drop).map_err(|e| e.needed),
        Err(FILES.len())
    );
    let mut s = Storage::new(CFG, 1);
    let mut w = s.wrapper(&polyweave_tests::host::TOOLS, Recorder::default());
    start(&mut w, 0, FILES);
    let mut host = Host::with_buffer(FILES.len());
    // The hook, the adapter's TOOL_CALL (the same bytes as the model's), the started call.
    assert_eq!(host.try_drive(&mut w).map(|log| log.len()), Ok(3));
}
