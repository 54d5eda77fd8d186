//! Limits at their edges: escape-heavy ids that must not wedge the wrapper, configurations
//! whose sizes overflow, sync tools whose output or message is long or padded.

use polyweave_tests::drive::{at, drain, echo};
use polyweave_tool_adapter::StorageError;
use polyweave_tool_adapter::{
    Disposition, Error, NoHooks, ResultWriter, Route, Slot, Tool, ToolFailed, Wrapper,
    WrapperConfig,
};

#[test]
fn escape_heavy_ids_never_wedge_the_wrapper() {
    let cfg = WrapperConfig {
        message_cap: 128,
        result_cap: 128,
        args_cap: 128,
        ..WrapperConfig::DEFAULT
    };
    let tools = [Tool::adapter("t")];
    let mut slots = [Slot::EMPTY; 4];
    let mut arena = vec![0u8; cfg.arena_len(4)];
    let mut w = Wrapper::new(cfg, &tools, NoHooks, &mut slots, &mut arena).unwrap();
    // Ids of 64 decoded bytes (the cap) that escape to 6 times that.
    let mut accepted = 0;
    for i in 0..4 {
        let id = format!("{i}{}", "\\u0001".repeat(63));
        let call = format!(r#"{{"type":"TOOL_CALL","content":{{"id":"{id}","name":"t"}}}}"#);
        match w.handle_response(at(0), call.as_bytes()) {
            Ok(Disposition::Intercepted {
                handle: Some(_), ..
            }) => accepted += 1,
            other => panic!("call {i}: {other:?}"),
        }
        drain(&mut w);
    }
    assert_eq!(accepted, 4);
    assert_eq!(
        w.handle_response(at(1), br#"{"type":"END"}"#),
        Ok(Disposition::Held)
    );
    // The timeouts come due together. The queue holds a record per call, encoded from the
    // call's slot when transmitted, so all four end at once however their ids escape.
    assert_eq!(w.poll_timeout(), Some(at(30_000)));
    assert_eq!(w.handle_timeout(at(30_000)), Ok(()));
    assert_eq!(w.pending(), 0);
    let frames = drain(&mut w);
    assert_eq!(w.poll_timeout(), None);
    let results = frames
        .iter()
        .filter(|(r, f)| *r == Route::Model && f.contains("TOOL_RESULT"));
    assert_eq!(results.count(), 4);
    let cancels = frames
        .iter()
        .filter(|(r, _)| matches!(r, Route::Adapter(_)));
    assert_eq!(cancels.count(), 4);
    // The round ends once: prompt to the model and the consumer, then the held END.
    let tail: Vec<&(Route, String)> = frames.iter().rev().take(3).collect();
    assert_eq!(tail[0], &(Route::Consumer, r#"{"type":"END"}"#.to_string()));
    assert_eq!(tail[1].0, Route::Consumer);
    assert!(tail[1].1.starts_with(r#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool t timed out after 30000ms"#));
    assert_eq!(tail[2].0, Route::Model);
}

fn answer(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(&[b'7'; 100]);
    Ok(())
}

#[test]
fn cancel_reports_calls_left_when_the_queue_fills() {
    let cfg = WrapperConfig {
        message_cap: 128,
        result_cap: 128,
        args_cap: 128,
        ..WrapperConfig::DEFAULT
    };
    let tools = [Tool::adapter("t"), Tool::sync("n", &answer)];
    let mut slots = [Slot::EMPTY; 4];
    let mut arena = vec![0u8; cfg.arena_len(4)];
    let mut w = Wrapper::new(cfg, &tools, NoHooks, &mut slots, &mut arena).unwrap();
    for i in 0..4 {
        let call = format!(r#"{{"type":"TOOL_CALL","content":{{"id":"{i}","name":"t"}}}}"#);
        w.handle_response(at(0), call.as_bytes()).unwrap();
    }
    // A careless host: nothing drained, and sync results queued until the queue is full.
    let sync = br#"{"type":"TOOL_CALL","content":{"name":"n"}}"#;
    let mut queued = 0;
    while w.handle_response(at(0), sync).is_ok() {
        queued += 1;
    }
    assert!(queued >= 1);
    let mut left = w.cancel(at(1), "stop").unwrap();
    assert!((1..4).contains(&left), "left {left}");
    assert_eq!(w.pending(), left);
    let mut frames = drain(&mut w);
    while left > 0 {
        let again = w.cancel(at(2), "stop").unwrap();
        assert!(again < left);
        left = again;
        frames.extend(drain(&mut w));
    }
    assert_eq!(w.pending(), 0);
    // Four TOOL_CALLs, the sync results; then per call a CANCEL and a TOOL_RESULT, in call
    // order; then the prompt to the model and the consumer.
    let kinds: Vec<String> = frames
        .iter()
        .map(|(r, f)| {
            let v: serde_json::Value = serde_json::from_str(f).unwrap();
            format!("{r:?} {}", v["type"].as_str().unwrap())
        })
        .collect();
    let mut want: Vec<String> = (0..4)
        .map(|i| format!("Adapter(CallHandle {{ slot: {i}, index: {i} }}) TOOL_CALL"))
        .collect();
    want.extend((0..queued).map(|_| "Model TOOL_RESULT".to_string()));
    for i in 0..4 {
        want.push(format!(
            "Adapter(CallHandle {{ slot: {i}, index: {i} }}) CANCEL"
        ));
        want.push("Model TOOL_RESULT".into());
    }
    want.extend(["Model TEXT".to_string(), "Consumer TEXT".to_string()]);
    assert_eq!(kinds, want);
    assert!(frames[4 + queued + 1].1.contains("Tool t cancelled: stop"));
}

#[test]
fn configurations_that_overflow_are_refused() {
    let tools: [Tool<'_>; 0] = [];
    for cfg in [
        WrapperConfig {
            name_cap: usize::MAX,
            ..WrapperConfig::DEFAULT
        },
        WrapperConfig {
            args_cap: usize::MAX - 100,
            ..WrapperConfig::DEFAULT
        },
        WrapperConfig {
            trace_bytes: usize::MAX,
            ..WrapperConfig::DEFAULT
        },
    ] {
        let mut slots = [Slot::EMPTY; 2];
        let mut arena = vec![0u8; 1 << 20];
        let r = Wrapper::new(cfg, &tools, NoHooks, &mut slots, &mut arena);
        assert_eq!(r.err(), Some(StorageError::BadConfig), "{cfg:?}");
    }
    let big = WrapperConfig {
        args_cap: usize::MAX - 100,
        ..WrapperConfig::DEFAULT
    };
    assert_eq!(big.arena_len(2), usize::MAX);
}

fn not_json(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(b"not json");
    Ok(())
}

#[test]
fn sync_failure_text_with_an_escape_heavy_name_is_budgeted() {
    let cfg = WrapperConfig {
        message_cap: 128,
        result_cap: 64,
        args_cap: 64,
        ..WrapperConfig::DEFAULT
    };
    let bad_name = "\u{1}".repeat(64);
    let tools = [Tool::sync(&bad_name, &not_json), Tool::sync("e", &echo)];
    let mut slots = [Slot::EMPTY; 1];
    let mut arena = vec![0u8; cfg.arena_len(1)];
    let mut w = Wrapper::new(cfg, &tools, NoHooks, &mut slots, &mut arena).unwrap();
    // Fill the queue without draining.
    for args in ["a".repeat(60), "a".repeat(60), String::new()] {
        let call = format!(r#"{{"type":"TOOL_CALL","content":{{"name":"e","args":"{args}"}}}}"#);
        let _ = w.handle_response(at(0), call.as_bytes());
    }
    let bad = format!(
        r#"{{"type":"TOOL_CALL","content":{{"name":"{}"}}}}"#,
        "\\u0001".repeat(64)
    );
    match w.handle_response(at(0), bad.as_bytes()) {
        // Refused until drained, then accepted whole.
        Err(Error::QueueFull { .. }) => {
            drain(&mut w);
            w.handle_response(at(0), bad.as_bytes()).unwrap();
        }
        Ok(_) => {}
        other => panic!("{other:?}"),
    }
    let frames = drain(&mut w);
    let n = frames.len();
    assert!(frames[n - 3].1.contains("returned invalid JSON"));
    assert_eq!(frames[n - 2].0, Route::Model);
    assert_eq!(frames[n - 1].0, Route::Consumer);
}

fn long_error(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write("E".repeat(150).as_bytes());
    Err(ToolFailed)
}

fn longer_error(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write("F".repeat(500).as_bytes());
    Err(ToolFailed)
}

fn padded(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(b" \n{\"error\":\"disk full\"}\t");
    Ok(())
}

#[test]
fn sync_messages_keep_what_fits_and_padded_results_are_read() {
    let cfg = WrapperConfig {
        result_cap: 64,
        message_cap: 200,
        ..WrapperConfig::DEFAULT
    };
    let tools = [
        Tool::sync("long", &long_error),
        Tool::sync("longer", &longer_error),
        Tool::sync("padded", &padded),
    ];
    let mut slots = [Slot::EMPTY; 1];
    let mut arena = vec![0u8; cfg.arena_len(1)];
    let mut w = Wrapper::new(cfg, &tools, NoHooks, &mut slots, &mut arena).unwrap();

    // Longer than result_cap, within message_cap: whole.
    w.handle_response(at(0), br#"{"type":"TOOL_CALL","content":{"name":"long"}}"#)
        .unwrap();
    let frames = drain(&mut w);
    let expected = format!(
        r#"{{"type":"TOOL_RESULT","content":{{"name":"long","error":"{}"}}}}"#,
        "E".repeat(150)
    );
    assert_eq!(frames[0].1, expected);
    assert_eq!(w.stats().messages_truncated, 0);

    // Longer than message_cap: cut to it, and counted.
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"name":"longer"}}"#,
    )
    .unwrap();
    let frames = drain(&mut w);
    let expected = format!(
        r#"{{"type":"TOOL_RESULT","content":{{"name":"longer","error":"{}"}}}}"#,
        "F".repeat(200)
    );
    assert_eq!(frames[0].1, expected);
    assert_eq!(w.stats().messages_truncated, 1);

    // White space around a result: read as the object it is (§7.7), forwarded trimmed.
    w.handle_response(
        at(0),
        br#"{"type":"TOOL_CALL","content":{"name":"padded"}}"#,
    )
    .unwrap();
    let frames = drain(&mut w);
    assert_eq!(
        frames[0].1,
        r#"{"type":"TOOL_RESULT","content":{"name":"padded","result":{"error":"disk full"}}}"#
    );
    assert_eq!(
        frames[1].1,
        r#"{"type":"TEXT","content":"Tool results above. Last tool error: disk full"}"#
    );
}

#[test]
fn too_many_tools_are_refused() {
    let names: Vec<String> = (0..70_000).map(|i| format!("t{i:06}")).collect();
    let tools: Vec<Tool<'_>> = names.iter().map(|n| Tool::deferred(n)).collect();
    let mut slots = [Slot::EMPTY; 1];
    let mut arena = vec![0u8; WrapperConfig::DEFAULT.arena_len(1)];
    let r = Wrapper::new(
        WrapperConfig::DEFAULT,
        &tools,
        NoHooks,
        &mut slots,
        &mut arena,
    );
    assert_eq!(r.err(), Some(StorageError::TooManyTools));
}

#[test]
fn result_writer_never_overflows_its_counter() {
    let mut buf = [0u8; 8];
    let mut w = ResultWriter::new(&mut buf);
    w.write(b"abc");
    w.advance(usize::MAX);
    assert!(w.overflowed());
    assert_eq!(w.written(), b"abc");
    // A write that does not fit keeps the part that does.
    let mut buf = [0u8; 4];
    let mut w = ResultWriter::new(&mut buf);
    w.write(b"abcdef");
    assert_eq!((w.written(), w.overflowed()), (&b"abcd"[..], true));
}
