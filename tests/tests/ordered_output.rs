//! `Wrapper::poll_output` over a `HookLog` in host memory: hook events come out in the place
//! SPEC §6 prints them (right after the frame queued last when the hook fired), a short
//! buffer refuses a frame without losing the order, and a log too small says so.

use polyweave_tests::drive::at;
use polyweave_tests::host::{FILES, LATER, TOOLS};
use polyweave_tool_adapter::wrapper::{Output, Slot, Wrapper, WrapperConfig};
use polyweave_tool_adapter::CallOutcome;
use polyweave_tool_adapter::{HookEvent, HookLog};

const CFG: WrapperConfig = WrapperConfig::DEFAULT;

/// Every output, as text: `frame <route> <bytes>` or `call|result <name> <args> [outcome]`.
fn drain(w: &mut Wrapper<'_, HookLog<'_>>) -> Vec<String> {
    let mut buf = [0u8; 2048];
    let mut out = Vec::new();
    while let Some(o) = w.poll_output(&mut buf).unwrap() {
        out.push(match o {
            Output::Frame(t) => format!(
                "frame {:?} {}",
                t.route,
                String::from_utf8_lossy(&buf[..t.len])
            ),
            Output::Hook(l) => {
                let cut = if l.cut { " (cut)" } else { "" };
                match l.event {
                    HookEvent::ToolCall(c) => format!(
                        "call {} {}{cut}",
                        c.name.unwrap_or("null"),
                        String::from_utf8_lossy(c.args)
                    ),
                    HookEvent::ToolResult(c, o) => format!(
                        "result {} {} {}{cut}",
                        c.name.unwrap_or("null"),
                        String::from_utf8_lossy(c.args),
                        match o {
                            CallOutcome::Result(r) => String::from_utf8_lossy(r).into_owned(),
                            CallOutcome::Error(e) => format!("error {e}"),
                        }
                    ),
                }
            }
        });
    }
    out
}

#[test]
fn hooks_come_out_in_their_place_among_the_frames() {
    let mut log = [0u8; 4096];
    let mut slots = [Slot::EMPTY; 2];
    let mut arena = vec![0u8; CFG.arena_len(2)];
    let mut w = Wrapper::new(CFG, &TOOLS, HookLog::new(&mut log), &mut slots, &mut arena).unwrap();
    let echo = br#"{"type":"TOOL_CALL","content":{"id":"e","name":"echo","args":[1]}}"#;
    w.handle_response(at(1), echo).unwrap();
    // An adapter call and a deferred one: their hooks now, their results later.
    w.handle_response(at(2), FILES.as_bytes()).unwrap();
    w.handle_response(at(3), LATER.as_bytes()).unwrap();
    assert_eq!(
        drain(&mut w),
        [
            "call echo [1]",
            r#"frame Model {"type":"TOOL_RESULT","content":{"id":"e","name":"echo","result":[1]}}"#,
            "result echo [1] [1]",
            r#"frame Model {"type":"TEXT","content":"Tool results above."}"#,
            r#"frame Consumer {"type":"TEXT","content":"Tool results above."}"#,
            "call files [1,2]",
            &format!(
                "frame Adapter({:?}) {}",
                polyweave_tool_adapter::CallHandle::from_parts(0, 1),
                r#"{"type":"TOOL_CALL","content":{"id":"a1","name":"files","args":[1,2]}}"#
            ),
            r#"call later {"n":1}"#,
        ]
    );
    // Nothing is left, and a second drain hands out nothing twice.
    assert!(drain(&mut w).is_empty());
    assert_eq!(w.cancel(at(4), "stop"), Ok(0));
    let ended = drain(&mut w);
    assert_eq!(ended.len(), 1 + 2 * 2 + 2, "{ended:?}");
    assert!(
        ended[0].starts_with("frame Adapter"),
        "the CANCEL first: {ended:?}"
    );
    assert_eq!(
        ended[2],
        "result files [1,2] error Tool files cancelled: stop"
    );
    assert_eq!(
        ended[4],
        r#"result later {"n":1} error Tool later cancelled: stop"#
    );
}

#[test]
fn a_short_buffer_refuses_the_frame_and_keeps_the_order() {
    let mut log = [0u8; 1024];
    let mut slots = [Slot::EMPTY; 1];
    let mut arena = vec![0u8; CFG.arena_len(1)];
    let mut w = Wrapper::new(CFG, &TOOLS, HookLog::new(&mut log), &mut slots, &mut arena).unwrap();
    let calc = br#"{"type":"TOOL_CALL","content":{"name":"calc"}}"#;
    w.handle_response(at(1), calc).unwrap();
    let mut small = [0u8; 8];
    assert!(matches!(
        w.poll_output(&mut small),
        Ok(Some(Output::Hook(_)))
    ));
    let needed = br#"{"type":"TOOL_RESULT","content":{"name":"calc","result":{"sum":3}}}"#.len();
    let e = w.poll_output(&mut small).unwrap_err();
    assert_eq!(e.needed, needed);
    // Refused twice, still the same frame; then the rest in order.
    assert_eq!(w.poll_output(&mut small).unwrap_err().needed, needed);
    let rest = drain(&mut w);
    assert_eq!(rest[0].len(), "frame Model ".len() + needed);
    assert_eq!(rest[1], r#"result calc {} {"sum":3}"#);
    assert_eq!(rest.len(), 4);
    assert_eq!(w.queued(), 0);
}

#[test]
fn a_small_log_keeps_names_without_args_then_drops_and_counts() {
    // 28 + 4 + 17 bytes whole, 28 + 4 + 4 cut: a 40-byte log keeps the call's event cut,
    // and has no room left for its result's.
    let mut log = [0u8; 40];
    let mut slots = [Slot::EMPTY; 1];
    let mut arena = vec![0u8; CFG.arena_len(1)];
    let mut w = Wrapper::new(CFG, &TOOLS, HookLog::new(&mut log), &mut slots, &mut arena).unwrap();
    let echo = br#"{"type":"TOOL_CALL","content":{"name":"echo","args":[1,2,3,4,5,6,7,8]}}"#;
    w.handle_response(at(1), echo).unwrap();
    let out = drain(&mut w);
    assert_eq!(out[0], "call echo null (cut)");
    assert_eq!(out.len(), 1 + 3, "{out:?}");
    let log = w.hooks_mut();
    assert_eq!((log.cut(), log.dropped()), (1, 1));
}
