//! The MCP client (SPEC §9) against a scripted server, through a wrapper: start-up,
//! calls, results, progress and timeouts (SPEC §5), cancel, the server's own requests
//! and notifications, a server that breaks the protocol, and a host that gets it wrong.
//! Every line the client writes is checked compact JSON by the loop.

use polyweave_tests::mcp_loop::{call, tools_page, McpLoop, Seen, INIT_OK};
use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpError, McpFailure, McpHandled, McpRevision, McpSlot,
    McpState,
};
use polyweave_tool_adapter::wrapper::WrapperConfig;
use polyweave_tool_adapter::StorageError;
use polyweave_tool_adapter::{CallHandle, FrameError, Instant};

const PROMPT: &str = r#"{"type":"TEXT","content":"Tool results above."}"#;

/// The client fixed to 2025-11-25 (the `initialize` handshake first): the tests here are
/// about calls, results and the server's lines, the same in either revision; the revision's
/// own rules are tested in `mcp_revisions.rs`.
const V2025: McpConfig = McpConfig {
    revision: McpRevision::V2025_11_25,
    ..McpConfig::DEFAULT
};

/// [`V2025`] at [`McpConfig::SMALL`]'s sizes.
const V2025_SMALL: McpConfig = McpConfig {
    revision: McpRevision::V2025_11_25,
    ..McpConfig::SMALL
};

fn cfg() -> WrapperConfig {
    WrapperConfig::DEFAULT
}

fn ready(tools: &[&str]) -> McpLoop<'static> {
    McpLoop::ready(cfg(), V2025.fit(&cfg()), tools, 4, 4)
}

fn tools_call(id: u64, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},"_meta":{{"progressToken":{id}}}}}}}"#
    )
}

fn text_result(id: u64, text: &str) -> String {
    format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{text}"}}]}},"jsonrpc":"2.0","id":{id}}}"#
    )
}

#[test]
fn start_up_lines_pagination_and_the_listed_tools() {
    let mut l = McpLoop::new(cfg(), V2025, &["a", "b", "c"], 2, 2);
    assert_eq!(l.client.state(), McpState::Idle);
    l.client.start(Instant::ZERO).unwrap();
    assert_eq!(l.client.start(Instant::ZERO), Err(McpError::AlreadyStarted));
    l.pump();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        l.take_server(),
        [format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"polyweave-tool-adapter","version":"{version}"}}}}}}"#
        )]
    );
    assert_eq!(l.client.state(), McpState::Starting);
    l.server(INIT_OK);
    assert_eq!(
        l.take_server(),
        [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
        ]
    );
    l.server(&tools_page(2, &["a", "b"], Some("p\\u0032")));
    assert_eq!(
        l.take_server(),
        [r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p\u0032"}}"#]
    );
    assert_eq!(l.client.state(), McpState::Starting);
    l.server(&tools_page(3, &["c"], None));
    assert_eq!(l.client.state(), McpState::Ready);
    let events: Vec<_> = l
        .seen
        .iter()
        .filter_map(|s| match s {
            Seen::Event(e) => Some(e.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        events[0],
        r#"Initialized 2025-11-25 {"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#
    );
    assert_eq!(
        &events[1..],
        ["Tool a", "Tool b", "Tool c", "Ready { tools: 3 }"]
    );
}

#[test]
fn every_supported_revision_goes_on_any_other_fails_the_start_and_its_calls() {
    for v in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let mut l = McpLoop::new(cfg(), V2025, &["a"], 2, 2);
        l.client.start(Instant::ZERO).unwrap();
        l.pump();
        l.take_server();
        let result = format!(r#"{{"protocolVersion":"{v}"}}"#);
        l.server(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#));
        assert_eq!(l.seen[0], Seen::Event(format!("Initialized {v} {result}")));
        assert_eq!(
            l.take_server()[1],
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
        );
    }
    let mut l = McpLoop::new(cfg(), V2025, &["a"], 2, 2);
    l.client.start(Instant::ZERO).unwrap();
    l.pump();
    // A call handed in before the server is ready waits in the outbox...
    l.model(5, &call("c1", "a", "{}"));
    assert_eq!(l.client.queued(), 1);
    l.server(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"1999-01-01"}}"#);
    assert_eq!(l.client.state(), McpState::Failed);
    assert!(l.seen.contains(&Seen::Event(
        r#"StartFailed UnsupportedVersion "1999-01-01""#.into()
    )));
    // ...and fails with the start; a later one fails at once; only `initialize` went out.
    l.model(6, &call("c2", "a", "{}"));
    assert_eq!(
        l.results(),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"a","error":"Tool a failed: the MCP server did not start"}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"a","error":"Tool a failed: the MCP server did not start"}}"#
        ]
    );
    assert_eq!(l.take_server().len(), 1);
    assert_eq!(l.client.queued(), 0);
}

#[test]
fn start_up_errors_each_have_their_event() {
    let cases: [(&str, &str); 5] = [
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}"#,
            r#"StartFailed Refused {"code":-32600,"message":"no"}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "StartFailed BadResult {}",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":20251125}}"#,
            "StartFailed UnsupportedVersion 20251125",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"StartFailed BadResult {"jsonrpc":"2.0","id":1}"#,
        ),
        ("", ""),
    ];
    for (line, event) in cases.iter().filter(|c| !c.0.is_empty()) {
        let mut l = McpLoop::new(cfg(), V2025, &["a"], 2, 2);
        l.client.start(Instant::ZERO).unwrap();
        l.pump();
        l.server(line);
        assert_eq!(l.client.state(), McpState::Failed, "{line}");
        assert!(
            l.seen.contains(&Seen::Event(event.to_string())),
            "{line}: {:?}",
            l.seen
        );
    }
    // tools/list: an error, a result without tools, a cursor over the cap.
    let small = McpConfig {
        cursor_cap: 4,
        ..V2025
    };
    for (page, event) in [
        (
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":{}}}"#,
            r#"StartFailed BadResult {"tools":{}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"12345"}}"#,
            "StartFailed(CursorTooLong(5))",
        ),
    ] {
        let mut l = McpLoop::new(cfg(), small, &["a"], 2, 2);
        l.client.start(Instant::ZERO).unwrap();
        l.pump();
        l.server(INIT_OK);
        l.server(page);
        assert_eq!(l.client.state(), McpState::Failed, "{page}");
        assert!(
            l.seen.contains(&Seen::Event(event.to_string())),
            "{page}: {:?}",
            l.seen
        );
    }
}

#[test]
fn a_server_that_pages_forever_is_stopped() {
    let mut l = McpLoop::new(cfg(), V2025, &["a"], 2, 2);
    l.client.start(Instant::ZERO).unwrap();
    l.pump();
    l.server(INIT_OK);
    let mut id = 2;
    while l.client.state() == McpState::Starting {
        l.server(&tools_page(id, &[], Some("again")));
        id += 1;
        assert!(id < 2000);
    }
    assert_eq!(l.client.state(), McpState::Failed);
    assert_eq!(id - 2, polyweave_tool_adapter::mcp::MAX_PAGES as u64);
    assert!(l
        .seen
        .contains(&Seen::Event("StartFailed(TooManyPages)".into())));
}

#[test]
fn listed_tools_it_cannot_serve_are_reported_and_skipped() {
    let mcp = McpConfig {
        name_cap: 4,
        ..V2025
    };
    let mut l = McpLoop::new(
        WrapperConfig {
            name_cap: 4,
            ..cfg()
        },
        mcp,
        &["ok"],
        2,
        2,
    );
    l.client.start(Instant::ZERO).unwrap();
    l.pump();
    l.server(INIT_OK);
    l.server(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"ok"},{"name":"toolong"},{"title":"x"},7,{"name":"\u00e9\u00e9"}]}}"#);
    let events: Vec<_> = l
        .seen
        .iter()
        .filter_map(|s| match s {
            Seen::Event(e) => Some(e.clone()),
            _ => None,
        })
        .skip(1)
        .collect();
    assert_eq!(
        events,
        [
            "Tool ok",
            "ToolSkipped { reason: NameTooLong { len: 7, cap: 4 }, tool: [123, 34, 110, 97, 109, 101, 34, 58, 34, 116, 111, 111, 108, 111, 110, 103, 34, 125] }",
            "ToolSkipped { reason: NoName, tool: [123, 34, 116, 105, 116, 108, 101, 34, 58, 34, 120, 34, 125] }",
            "ToolSkipped { reason: NoName, tool: [55] }",
            "Tool éé",
            "Ready { tools: 2 }",
        ]
    );
}

#[test]
fn a_call_becomes_tools_call_and_its_answers_become_frames() {
    let answers = [
        (text_result(3, "Echo: hi"), r#""result":[{"type":"text","text":"Echo: hi"}]"#),
        (
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"t": 36, "c":"rain"}}}"#.to_string(),
            r#""result":{"t":36,"c":"rain"}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"bad"},{"type":"image","data":"x"},{"type":"text","text":"\"worse\"\n"}],"isError":true}}"#.to_string(),
            r#""error":"bad\n\"worse\"\n""#,
        ),
        (r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}"#.to_string(), r#""error":"Tool echo failed""#),
        (r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"fine"}],"isError":false}}"#.to_string(), r#""result":[{"type":"text","text":"fine"}]"#),
        (r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: \u0065cho"}}"#.to_string(), r#""error":"Unknown tool: echo""#),
        (r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1}}"#.to_string(), r#""error":"Tool echo failed""#),
        (r#"{"jsonrpc":"2.0","id":3}"#.to_string(), r#""error":"Tool echo failed: the MCP server's response has no result or error""#),
        (r#"{"jsonrpc":"2.0","id":3,"result":{"meta":1}}"#.to_string(), r#""result":{"meta":1}"#),
        (r#"{"jsonrpc":"2.0","id":3,"result":[1, 2]}"#.to_string(), r#""result":[1,2]"#),
    ];
    for (answer, result) in answers {
        let mut l = ready(&["echo"]);
        l.model(10, &call("c1", "echo", r#"{ "message" : "hi" }"#));
        assert_eq!(
            l.take_server(),
            [tools_call(3, "echo", r#"{"message":"hi"}"#)]
        );
        l.server(&answer);
        let model = l.take_model();
        assert_eq!(
            model[0],
            format!(r#"{{"type":"TOOL_RESULT","content":{{"id":"c1","name":"echo",{result}}}}}"#),
            "{answer}"
        );
        assert_eq!(model.len(), 2);
        assert!(model[1].starts_with(r#"{"type":"TEXT","content":"Tool results above."#));
        assert_eq!(l.client.in_flight(), 0);
        assert_eq!(l.wrapper.pending(), 0);
        assert!(l.refused.is_empty(), "{:?}", l.refused);
    }
}

#[test]
fn answers_split_at_every_byte_give_the_same_frames() {
    let answer = format!(
        "{}\r\n",
        r#"{"result":{"content":[{"type":"text","text":"Echo: \u00e9"}]},"jsonrpc":"2.0","id":3}"#
    );
    for chunk in 1..answer.len() {
        let mut l = ready(&["echo"]);
        l.model(10, &call("c1", "echo", "{}"));
        l.take_server();
        l.server_chunked(answer.as_bytes(), chunk);
        assert_eq!(
            l.take_model()[0],
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: \u00e9"}]}}"#
        );
    }
}

#[test]
fn args_that_are_not_an_object_fail_at_once_and_nothing_is_sent() {
    for args in ["[1]", "\"x\"", "3", "null"] {
        let mut l = ready(&["echo"]);
        l.model(10, &call("c1", "echo", args));
        assert_eq!(l.take_server(), Vec::<String>::new());
        assert_eq!(
            l.results(),
            [
                r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","error":"Tool echo arguments must be an object"}}"#
            ]
        );
    }
}

#[test]
fn parallel_calls_answered_out_of_order() {
    let mut l = ready(&["slow", "echo"]);
    l.model(10, &call("c1", "slow", "{}"));
    l.model(10, &call("c2", "echo", r#"{"m":2}"#));
    assert_eq!(
        l.take_server(),
        [
            tools_call(3, "slow", "{}"),
            tools_call(4, "echo", r#"{"m":2}"#)
        ]
    );
    l.server(&text_result(4, "two"));
    l.server(&text_result(3, "one"));
    assert_eq!(
        l.take_model(),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"echo","result":[{"type":"text","text":"two"}]}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"slow","result":[{"type":"text","text":"one"}]}}"#,
            PROMPT
        ]
    );
}

#[test]
fn progress_restarts_the_timeout_until_the_cap() {
    let cfg = WrapperConfig {
        tool_timeout_ms: 1000,
        max_total_timeout_ms: 5000,
        ..WrapperConfig::DEFAULT
    };
    let mut l = McpLoop::ready(cfg, V2025.fit(&cfg), &["long"], 2, 2);
    l.model(0, &call("c1", "long", "{}"));
    l.take_server();
    let progress = |n: u32| {
        format!(
            r#"{{"method":"notifications/progress","params":{{"progress":{n},"total":9,"progressToken":3}},"jsonrpc":"2.0"}}"#
        )
    };
    // Kept alive past its plain timeout by progress every 900 ms...
    for (i, t) in [900u64, 1800, 2700, 3600, 4500].into_iter().enumerate() {
        l.tick(t);
        l.server(&progress(i as u32 + 1));
        assert_eq!(l.wrapper.pending(), 1, "at {t}");
    }
    l.tick(4999);
    assert_eq!(l.wrapper.pending(), 1);
    // ...and failed at its cap, the server told.
    l.tick(5000);
    assert_eq!(
        l.take_model(),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"long","error":"Tool long timed out after 5000ms"}}"#,
            r#"{"type":"TEXT","content":"Tool results above. Last tool error: Tool long timed out after 5000ms"}"#
        ]
    );
    assert_eq!(
        l.take_server(),
        [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"timeout"}}"#
        ]
    );
    // Progress and the answer after the cancel change nothing.
    l.server(&progress(7));
    l.server(&text_result(3, "late"));
    assert_eq!(l.take_model(), Vec::<String>::new());
    assert_eq!(l.client.stats().late, 2);
    assert!(l.refused.is_empty());
}

#[test]
fn without_progress_the_plain_timeout_fires() {
    let cfg = WrapperConfig {
        tool_timeout_ms: 1000,
        max_total_timeout_ms: 5000,
        ..WrapperConfig::DEFAULT
    };
    let mut l = McpLoop::ready(cfg, V2025.fit(&cfg), &["long"], 2, 2);
    l.model(0, &call("c1", "long", "{}"));
    l.tick(600);
    l.server(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#);
    l.tick(1599);
    assert_eq!(l.wrapper.pending(), 1);
    l.tick(1600);
    assert_eq!(
        l.results(),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"long","error":"Tool long timed out after 1000ms"}}"#
        ]
    );
    // A progress token none was given counts apart from a late one.
    l.server(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":99,"progress":1}}"#);
    l.server(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"3","progress":1}}"#);
    assert_eq!(l.client.stats().unknown_progress, 2);
}

#[test]
fn cancel_tells_the_server_and_a_late_answer_is_ignored() {
    let mut l = ready(&["echo"]);
    l.model(10, &call("c1", "echo", "{}"));
    l.model(10, &call("c2", "echo", "{}"));
    l.take_server();
    assert_eq!(
        l.wrapper.cancel(l.at(), "user \"stop\"").unwrap(),
        0,
        "none left"
    );
    l.pump();
    assert_eq!(
        l.take_server(),
        [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user \"stop\""}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"user \"stop\""}}"#
        ]
    );
    l.server(&text_result(3, "late"));
    l.server(&text_result(4, "late"));
    let results = l.results();
    assert_eq!(results.len(), 2);
    assert!(
        results[0].ends_with(r#""error":"Tool echo cancelled: user \"stop\""}}"#),
        "{results:?}"
    );
    assert_eq!(
        l.client.stats().late,
        2,
        "{:?} {:?}",
        l.client.stats(),
        l.seen
    );
    assert_eq!(l.client.in_flight(), 0);
}

#[test]
fn a_call_cancelled_before_it_went_out_is_withdrawn() {
    let mut l = McpLoop::new(cfg(), V2025, &["echo"], 2, 2);
    l.client.start(Instant::ZERO).unwrap();
    l.pump();
    l.model(1, &call("c1", "echo", "{}"));
    l.wrapper.cancel(l.at(), "never mind").unwrap();
    l.pump();
    l.server(INIT_OK);
    l.server(&tools_page(2, &["echo"], None));
    let sent = l.take_server();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent
        .iter()
        .all(|s| !s.contains("tools/call") && !s.contains("cancelled")));
    assert_eq!(l.results().len(), 1);
}

#[test]
fn ping_is_answered_other_requests_refused_notifications_handed_on() {
    let mut l = ready(&["echo"]);
    l.server(r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#);
    l.server(r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}"#);
    l.server(r#"{"jsonrpc":"2.0","id":-2.5e3,"method":"roots/list"}"#);
    l.server(r#"{"method":"notifications/tools/list_changed","jsonrpc":"2.0"}"#);
    l.server(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#);
    assert_eq!(
        l.take_server(),
        [
            r#"{"jsonrpc":"2.0","id":"p1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}"#,
            r#"{"jsonrpc":"2.0","id":-2.5e3,"error":{"code":-32601,"message":"Method not found"}}"#,
            // The tools changed: listed again (SPEC §9.12, `mcp_revisions.rs`).
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        ]
    );
    assert_eq!(
        l.seen,
        [
            Seen::Event(r#"Notification notifications/tools/list_changed -"#.into()),
            Seen::Event(r#"Notification notifications/message {"level":"info","data":"x"}"#.into()),
        ]
    );
    let s = l.client.stats();
    assert_eq!((s.pings, s.refused_requests, s.notifications), (1, 2, 2));
}

#[test]
fn lines_that_are_not_json_rpc_are_counted_and_the_call_still_answered() {
    let mut l = ready(&["echo"]);
    l.model(10, &call("c1", "echo", "{}"));
    for junk in [
        "{not json",
        "\u{feff}{}",
        r#"{"id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":3.0,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"3","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        r#"[{"jsonrpc":"2.0","id":3,"result":{}}]"#,
        "\u{0}\u{1}",
        "   ",
    ] {
        l.server(junk);
    }
    let s = l.client.stats();
    assert_eq!(
        (s.not_json, s.not_jsonrpc, s.unknown_id),
        (3, 2, 3),
        "{s:?}"
    );
    assert_eq!(l.results(), Vec::<&str>::new());
    l.server(&text_result(3, "ok"));
    assert_eq!(l.results().len(), 1);
}

#[test]
fn the_transport_closing_fails_every_call_in_flight_and_every_later_one() {
    let mut l = ready(&["echo", "slow"]);
    l.model(10, &call("c1", "echo", "{}"));
    l.model(10, &call("c2", "slow", "{}"));
    // Half a line of the answer to c1 came before the end.
    l.server_bytes(br#"{"jsonrpc":"2.0","id":3,"res"#);
    l.close();
    l.model(11, &call("c3", "echo", "{}"));
    assert_eq!(l.client.state(), McpState::Closed);
    // Each message names its own call's tool (each slot keeps its name).
    let closed = |id: &str, name: &str| {
        format!(
            r#"{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","error":"Tool {name} failed: the MCP server closed the connection"}}}}"#
        )
    };
    assert_eq!(
        l.results(),
        [
            closed("c1", "echo"),
            closed("c2", "slow"),
            closed("c3", "echo")
        ]
    );
    assert_eq!(
        l.client.feed(b"{}\n"),
        3,
        "bytes after the end are taken and dropped"
    );
    assert_eq!(l.client.in_flight(), 0);
}

#[test]
fn a_response_too_long_or_too_deep_still_fails_its_call() {
    let mcp = McpConfig {
        line_cap: 256,
        ..V2025
    };
    let mut l = McpLoop::ready(cfg(), mcp, &["echo"], 4, 4);
    l.model(10, &call("c1", "echo", "{}"));
    l.model(10, &call("c2", "echo", "{}"));
    l.model(10, &call("c3", "echo", "{}"));
    let long = "x".repeat(300);
    // A long request and a long notification are only counted.
    l.server(&format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":"{long}"}}"#
    ));
    l.server(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":"{long}"}}"#
    ));
    assert_eq!(l.results(), Vec::<&str>::new());
    l.server(&format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{long}"}}]}},"jsonrpc":"2.0","id":3}}"#
    ));
    let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
    l.server(&format!(r#"{{"jsonrpc":"2.0","id":4,"result":{deep}}}"#));
    l.server(&text_result(5, "fine"));
    assert_eq!(
        l.results(),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","error":"Tool echo failed: the MCP server's response exceeds 256 bytes"}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"echo","error":"Tool echo failed: the MCP server's response is nested deeper than 32 levels"}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"c3","name":"echo","result":[{"type":"text","text":"fine"}]}}"#,
        ]
    );
    let s = l.client.stats();
    assert_eq!((s.too_long, s.too_deep), (3, 1));
}

#[test]
fn more_calls_than_slots_or_a_request_too_long_fail_at_once() {
    let mcp = McpConfig {
        outbox_cap: 2048,
        ..V2025
    };
    let mut l = McpLoop::ready(cfg(), mcp, &["echo"], 4, 2);
    l.model(10, &call("c0", "echo", "{}"));
    l.model(10, &call("c1", "echo", "{}"));
    l.model(10, &call("c2", "echo", "{}"));
    let big = format!(r#"{{"s":"{}"}}"#, "y".repeat(2100));
    let mut l2 = McpLoop::ready(
        WrapperConfig {
            args_cap: 4096,
            ..cfg()
        },
        mcp,
        &["echo"],
        3,
        2,
    );
    l2.model(10, &call("c3", "echo", &big));
    assert_eq!(
        l.results(),
        [
            r#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"echo","error":"Tool echo failed: too many MCP calls in flight (max 2)"}}"#
        ]
    );
    assert_eq!(
        l2.results(),
        [format!(
            r#"{{"type":"TOOL_RESULT","content":{{"id":"c3","name":"echo","error":"Tool echo failed: its request of {} bytes exceeds the MCP client's outbox of 2036 bytes"}}}}"#,
            tools_call(3, "echo", &big).len() + 1
        )]
    );
    assert_eq!(l2.take_server(), Vec::<String>::new());
}

/// The client's observable state, to show a refusal changed nothing.
/// The start-up exchange of a raw client that was started: its `initialize` (request
/// `init_id`) answered, `notifications/initialized` and `tools/list` (`init_id + 1`) sent, the
/// list answered with `tools`, every event drained.
fn answer_start_up(c: &mut McpClient<'_>, line: &mut [u8], init_id: u64, tools: &[&str]) {
    let mut sent = |c: &mut McpClient<'_>, method: &str| {
        let n = c.poll_transmit(line).unwrap().unwrap();
        let text = core::str::from_utf8(&line[..n]).unwrap();
        assert!(text.contains(&format!(r#""method":"{method}""#)), "{text}");
    };
    sent(c, "initialize");
    let init = INIT_OK.replace(r#""id":1"#, &format!(r#""id":{init_id}"#));
    c.feed(format!("{init}\n").as_bytes());
    while c.poll_event().is_some() {}
    sent(c, "notifications/initialized");
    sent(c, "tools/list");
    c.feed(format!("{}\n", tools_page(init_id + 1, tools, None)).as_bytes());
    while c.poll_event().is_some() {}
}

fn snapshot(c: &McpClient<'_>) -> String {
    format!(
        "{c:?} {:?} {} {} {:?}",
        c.stats(),
        c.in_flight(),
        c.queued(),
        c.state()
    )
}

#[test]
fn refusals_are_distinct_and_change_nothing() {
    let mut slots = [McpSlot::EMPTY; 1];
    const CFG: McpConfig = McpConfig {
        outbox_cap: 1600,
        ..McpConfig::SMALL
    };
    let mut arena = [0u8; CFG.arena_len(1)];
    let mut c = McpClient::new(CFG, McpClientInfo::THIS_CRATE, &mut slots, &mut arena).unwrap();
    let h = CallHandle::from_parts(0, 0);
    let h2 = CallHandle::from_parts(1, 1);
    let before = snapshot(&c);
    let cases: [(&[u8], McpError); 6] = [
        (
            b"{",
            McpError::Malformed(FrameError::Json(polyweave_tool_adapter::json::JsonError {
                kind: polyweave_tool_adapter::json::JsonErrorKind::UnexpectedEnd,
                at: 1,
            })),
        ),
        (
            br#"{"type":"TEXT","content":"x"}"#,
            McpError::NotAdapterFrame,
        ),
        (
            br#"{"type":"TOOL_CALL","content":{"args":{}}}"#,
            McpError::NoName,
        ),
        (
            br#"{"type":"TOOL_CALL","content":{"name":"0123456789012345678901234567890123"}}"#,
            McpError::NameTooLong { len: 34, cap: 32 },
        ),
        (
            br#"{"type":"CANCEL","content":{"name":"a","reason":"r"}}"#,
            McpError::UnknownCall,
        ),
        (br#"{"type":"END"}"#, McpError::NotAdapterFrame),
    ];
    for (frame, err) in cases {
        assert_eq!(
            c.handle_frame(h, frame),
            Err(err),
            "{}",
            String::from_utf8_lossy(frame)
        );
        assert_eq!(snapshot(&c), before);
    }
    let args = format!(
        r#"{{"type":"TOOL_CALL","content":{{"name":"a","args":{{"s":"{}"}}}}}}"#,
        "z".repeat(900)
    );
    assert_eq!(
        c.handle_frame(h, args.as_bytes()),
        Ok(McpHandled::Sent { request: 1 })
    );
    let one = snapshot(&c);
    assert_eq!(
        c.handle_frame(h, args.as_bytes()),
        Err(McpError::DuplicateCall)
    );
    assert_eq!(snapshot(&c), one);
    // The slot is taken: the second call fails at once, and its frame must be polled first.
    assert_eq!(
        c.handle_frame(h2, args.as_bytes()),
        Ok(McpHandled::Failed(McpFailure::TooMany { max: 1 }))
    );
    let pending = snapshot(&c);
    let h3 = CallHandle::from_parts(2, 2);
    assert_eq!(
        c.handle_frame(h3, args.as_bytes()),
        Err(McpError::FramePending)
    );
    assert_eq!(snapshot(&c), pending);
    // A short buffer is told the size and changes nothing.
    let mut tiny = [0u8; 8];
    let needed = match c.poll_frame(&mut tiny) {
        Err(e) => e.needed,
        other => panic!("{other:?}"),
    };
    assert_eq!(snapshot(&c), pending);
    let mut out = [0u8; 256];
    let f = c.poll_frame(&mut out).unwrap().unwrap();
    assert_eq!((f.handle, f.len), (h2, needed));
    assert_eq!(
        &out[..f.len],
        br#"{"type":"ERROR","content":{"message":"Tool a failed: too many MCP calls in flight (max 1)"}}"#
    );
    // Storage refusals.
    let mut s0 = [McpSlot::EMPTY; 1];
    let mut small = [0u8; 16];
    assert_eq!(
        McpClient::new(CFG, McpClientInfo::THIS_CRATE, &mut s0, &mut small).err(),
        Some(StorageError::ArenaTooSmall {
            needed: CFG.arena_len(1),
            given: 16
        })
    );
    let mut big = vec![0u8; CFG.arena_len(1)];
    assert_eq!(
        McpClient::new(
            McpConfig { line_cap: 0, ..CFG },
            McpClientInfo::THIS_CRATE,
            &mut s0,
            &mut big
        )
        .err(),
        Some(StorageError::BadConfig)
    );
    let long = "v".repeat(65);
    assert_eq!(
        McpClient::new(
            CFG,
            McpClientInfo {
                name: "x",
                version: &long
            },
            &mut s0,
            &mut big
        )
        .err(),
        Some(StorageError::ClientInfoTooLong)
    );
}

#[test]
fn a_full_outbox_refuses_until_the_host_writes_what_waits() {
    const CFG: McpConfig = McpConfig {
        outbox_cap: 1600,
        ..V2025_SMALL
    };
    let mut slots = [McpSlot::EMPTY; 4];
    let mut arena = vec![0u8; CFG.arena_len(4)];
    let mut c = McpClient::new(CFG, McpClientInfo::THIS_CRATE, &mut slots, &mut arena).unwrap();
    let frame = format!(
        r#"{{"type":"TOOL_CALL","content":{{"name":"a","args":{{"s":"{}"}}}}}}"#,
        "z".repeat(600)
    );
    assert!(matches!(
        c.handle_frame(CallHandle::from_parts(0, 0), frame.as_bytes()),
        Ok(McpHandled::Sent { request: 1 })
    ));
    assert!(matches!(
        c.handle_frame(CallHandle::from_parts(1, 1), frame.as_bytes()),
        Ok(McpHandled::Sent { request: 2 })
    ));
    let before = snapshot(&c);
    let err = c.handle_frame(CallHandle::from_parts(2, 2), frame.as_bytes());
    let args = format!(r#"{{"s":"{}"}}"#, "z".repeat(600));
    let line_len = |rpc: u64| tools_call(rpc, "a", &args).len() + 1;
    let cost = |rpc: u64| line_len(rpc) + polyweave_tool_adapter::mcp::OUTBOX_HEADER;
    assert_eq!(
        err,
        Err(McpError::OutboxFull {
            needed: cost(3),
            free: 1600 - cost(1) - cost(2)
        })
    );
    assert_eq!(snapshot(&c), before);
    // Calls wait in the outbox until the server is ready; once it is, they go and room frees.
    c.start(Instant::ZERO).unwrap();
    let mut line = vec![0u8; CFG.max_line_len()];
    // The calls took ids 1 and 2: `initialize` is 3, `tools/list` 4.
    answer_start_up(&mut c, &mut line, 3, &["a"]);
    let mut short = [0u8; 16];
    assert_eq!(c.poll_transmit(&mut short).unwrap_err().needed, line_len(1));
    let n = c.poll_transmit(&mut line).unwrap().unwrap();
    assert!(line[..n].starts_with(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call""#));
    assert!(matches!(
        c.handle_frame(CallHandle::from_parts(2, 2), frame.as_bytes()),
        Ok(McpHandled::Sent { request: 5 })
    ));
}

#[test]
fn a_hostile_server_careless_host_and_model_never_lose_a_call() {
    let mut rng = polyweave_tests::XorShift::new(0x6d63_7021);
    for case in 0..20_000 {
        let len = rng.in_1_to(400);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let run = std::panic::catch_unwind(|| polyweave_tests::mcp_hostile::run(&data));
        assert!(run.is_ok(), "case {case}: {data:?}");
    }
}

#[test]
fn the_longest_frames_fit_max_frame_len() {
    let mcp = McpConfig {
        line_cap: 256,
        name_cap: 8,
        ..V2025
    };
    let name = "\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}";
    let wcfg = WrapperConfig {
        name_cap: 8,
        ..cfg()
    };
    // Texts of escapes only, and a name of control characters: a line of exactly 256 bytes.
    let head =
        r#"{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":""#;
    let tail = r#""}]}}"#;
    let n = (256 - head.len() - tail.len()) / 6;
    let pad = 256 - head.len() - tail.len() - 6 * n;
    let line = format!("{head}{}{}{tail}", "\\u0001".repeat(n), "a".repeat(pad));
    assert_eq!(line.len(), 256);
    let mut l = McpLoop::ready(wcfg, mcp, &[name], 2, 2);
    l.model(
        1,
        &call(
            "c1",
            "\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001",
            "{}",
        ),
    );
    l.server(&line);
    let results = l.results();
    assert_eq!(results.len(), 1);
    assert!(results[0].contains(&"\\u0001".repeat(n)), "{results:?}");
    // A failure's message around the longest escaped name.
    let mut l = McpLoop::ready(wcfg, mcp, &[name], 2, 2);
    l.model(
        1,
        &call(
            "c1",
            "\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001",
            "{}",
        ),
    );
    l.close();
    assert!(l.results()[0].ends_with(&format!(
        r#""error":"Tool {} failed: the MCP server closed the connection"}}}}"#,
        "\\u0001".repeat(8)
    )));
}

#[test]
fn what_the_client_tells_of_itself() {
    const CFG: McpConfig = McpConfig::SMALL;
    let mut slots = [McpSlot::EMPTY; 1];
    let mut arena = [0u8; CFG.arena_len(1)];
    let mut c = McpClient::new(CFG, McpClientInfo::THIS_CRATE, &mut slots, &mut arena).unwrap();
    assert_eq!(c.config(), CFG);
    let frame = br#"{"type":"TOOL_CALL","content":{"name":"a","args":{}}}"#;
    c.handle_frame(CallHandle::from_parts(0, 0), frame).unwrap();
    // One call waiting, one failed at once and not yet polled.
    c.handle_frame(CallHandle::from_parts(1, 1), frame).unwrap();
    assert_eq!((c.in_flight(), c.queued()), (2, 1));
    assert_eq!(
        format!("{c:?}"),
        "McpClient { phase: Idle, in_flight: 1, outbox: 1, owed: Nothing }"
    );
    // A frame of a type the client does not take, not even one it does not know.
    assert_eq!(
        c.handle_frame(
            CallHandle::from_parts(0, 0),
            br#"{"type":"PING","content":{}}"#
        ),
        Err(McpError::NotAdapterFrame)
    );
    assert_eq!(c.buffered(), 0);
    assert_eq!(c.feed(br#"{"jsonrpc":"2.0","#), 17);
    assert_eq!(c.buffered(), 17);
    c.feed(b"\"method\":\"x\"}\n");
    assert_eq!(c.buffered(), 0);
}

#[test]
fn a_cancel_ends_only_its_own_call_and_tells_the_server_only_of_one_waiting() {
    const CFG: McpConfig = V2025_SMALL;
    let mut slots = [McpSlot::EMPTY; 1];
    let mut arena = [0u8; CFG.arena_len(1)];
    let mut c = McpClient::new(CFG, McpClientInfo::THIS_CRATE, &mut slots, &mut arena).unwrap();
    let mut line = vec![0u8; CFG.max_line_len()];
    let mut frame = vec![0u8; CFG.max_frame_len()];
    c.start(Instant::ZERO).unwrap();
    answer_start_up(&mut c, &mut line, 1, &["a"]);
    let (h1, h2) = (CallHandle::from_parts(0, 0), CallHandle::from_parts(1, 1));
    let call = br#"{"type":"TOOL_CALL","content":{"name":"a","args":{}}}"#;
    let cancel = br#"{"type":"CANCEL","content":{"name":"a","reason":"r"}}"#;
    assert_eq!(
        c.handle_frame(h1, call),
        Ok(McpHandled::Sent { request: 3 })
    );
    c.poll_transmit(&mut line).unwrap().unwrap();
    // h2 fails at once (one slot); cancelling h1 leaves h2's ERROR waiting.
    assert!(matches!(
        c.handle_frame(h2, call),
        Ok(McpHandled::Failed(_))
    ));
    assert_eq!(
        c.handle_frame(h1, cancel),
        Ok(McpHandled::Cancelled { notified: true })
    );
    let n = c.poll_transmit(&mut line).unwrap().unwrap();
    assert_eq!(
        &line[..n],
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3,\"reason\":\"r\"}}\n"
    );
    assert_eq!(c.in_flight(), 1);
    // Cancelling h2 drops its waiting ERROR: nothing is polled, nothing is sent.
    assert_eq!(
        c.handle_frame(h2, cancel),
        Ok(McpHandled::Cancelled { notified: false })
    );
    assert_eq!(c.poll_frame(&mut frame), Ok(None));
    assert_eq!(c.in_flight(), 0);
    // A call being answered, cancelled between its TOOL_RESULT and its END: the server has
    // answered, so it is not told, and the END is dropped.
    assert_eq!(
        c.handle_frame(h1, call),
        Ok(McpHandled::Sent { request: 4 })
    );
    c.poll_transmit(&mut line).unwrap().unwrap();
    c.feed(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[]}}\n");
    let f = c.poll_frame(&mut frame).unwrap().unwrap();
    assert!(frame[..f.len].starts_with(br#"{"type":"TOOL_RESULT""#));
    assert_eq!(
        c.handle_frame(h1, cancel),
        Ok(McpHandled::Cancelled { notified: false })
    );
    assert_eq!(c.poll_frame(&mut frame), Ok(None));
    assert_eq!(c.poll_transmit(&mut line), Ok(None));
    // A call the closed transport failed, cancelled before its ERROR is polled: not told.
    assert_eq!(
        c.handle_frame(h2, call),
        Ok(McpHandled::Sent { request: 5 })
    );
    c.handle_closed();
    assert_eq!(
        c.handle_frame(h2, cancel),
        Ok(McpHandled::Cancelled { notified: false })
    );
    assert_eq!(c.poll_frame(&mut frame), Ok(None));
    assert_eq!(c.poll_transmit(&mut line), Ok(None));
    assert_eq!(c.handle_frame(h2, cancel), Err(McpError::UnknownCall));
}

#[test]
fn fitting_takes_the_wrappers_name_cap_and_depth_limit_only() {
    let wrapper = WrapperConfig {
        name_cap: 17,
        max_depth: 9,
        ..WrapperConfig::DEFAULT
    };
    assert_eq!(
        McpConfig::DEFAULT.fit(&wrapper),
        McpConfig {
            name_cap: 17,
            max_depth: 9,
            ..McpConfig::DEFAULT
        }
    );
}

/// SPEC §10.1: a call the model makes under a mapped name goes to the server under the
/// tool's own name (escaped as a JSON string), and its frames back carry the model's name.
#[test]
fn a_call_under_a_mapped_name_reaches_the_server_under_the_tools_own() {
    let cfg = V2025;
    let mut slots = [McpSlot::EMPTY; 2];
    let mut arena = vec![0u8; cfg.arena_len(2)];
    let mut c = McpClient::new(cfg, McpClientInfo::THIS_CRATE, &mut slots, &mut arena).unwrap();
    c.start(Instant::ZERO).unwrap();
    let mut line = [0u8; 1024];
    let mut frame = [0u8; 1024];
    let mut lines = |c: &mut McpClient<'_>| {
        let mut out = Vec::new();
        while let Some(n) = c.poll_transmit(&mut line).unwrap() {
            out.push(String::from_utf8(line[..n].to_vec()).unwrap());
        }
        out
    };
    lines(&mut c);
    c.feed(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n");
    while c.poll_event().is_some() {}
    lines(&mut c);
    c.feed(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"fs.read\"}]}}\n");
    while c.poll_event().is_some() {}
    assert_eq!(c.state(), McpState::Ready);

    let (h1, h2, h3) = (
        CallHandle::from_parts(0, 1),
        CallHandle::from_parts(1, 1),
        CallHandle::from_parts(2, 1),
    );
    let call =
        br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"fs_read","args":{"path":"/a"}}}"#;
    assert_eq!(
        c.handle_frame_as(h1, call, "fs.read"),
        Ok(McpHandled::Sent { request: 3 })
    );
    let other = br#"{"type":"TOOL_CALL","content":{"name":"q_x","args":{}}}"#;
    assert_eq!(
        c.handle_frame_as(h2, other, "q\"x\\"),
        Ok(McpHandled::Sent { request: 4 })
    );
    assert_eq!(
        lines(&mut c),
        [
            tools_call(3, "fs.read", r#"{"path":"/a"}"#) + "\n",
            tools_call(4, r#"q\"x\\"#, "{}") + "\n"
        ]
    );
    // Not a call: refused as `handle_frame` refuses it; a CANCEL ends the call as there.
    assert_eq!(
        c.handle_frame_as(h3, br#"{"type":"TEXT","content":"x"}"#, "fs.read"),
        Err(McpError::NotAdapterFrame)
    );
    assert_eq!(
        c.handle_frame_as(
            h2,
            br#"{"type":"CANCEL","content":{"reason":"timeout"}}"#,
            "q"
        ),
        Ok(McpHandled::Cancelled { notified: true })
    );
    assert_eq!(
        lines(&mut c),
        [r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"timeout"}}"#.to_string() + "\n"]
    );

    c.feed((text_result(3, "hello") + "\n").as_bytes());
    let f = c.poll_frame(&mut frame).unwrap().unwrap();
    assert_eq!(f.handle, h1);
    assert_eq!(
        std::str::from_utf8(&frame[..f.len]).unwrap(),
        r#"{"type":"TOOL_RESULT","content":{"name":"fs_read","result":[{"type":"text","text":"hello"}]}}"#
    );
    let f = c.poll_frame(&mut frame).unwrap().unwrap();
    assert_eq!(&frame[..f.len], br#"{"type":"END"}"#);

    // A failure names the tool as the model did.
    assert_eq!(
        c.handle_frame_as(
            h3,
            br#"{"type":"TOOL_CALL","content":{"name":"fs_read","args":[]}}"#,
            "fs.read"
        ),
        Ok(McpHandled::Failed(McpFailure::ArgsNotObject))
    );
    let f = c.poll_frame(&mut frame).unwrap().unwrap();
    assert_eq!(
        std::str::from_utf8(&frame[..f.len]).unwrap(),
        r#"{"type":"ERROR","content":{"message":"Tool fs_read arguments must be an object"}}"#
    );
}
