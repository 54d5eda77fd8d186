//! The MCP client's revisions over a line transport (SPEC §9.9, §9.10, §9.12), against a
//! scripted server through a wrapper: `server/discover` first and the 2026-07-28 `_meta`
//! envelope on every request when the server lists that revision; the `initialize`
//! handshake on the same connection when it refuses, answers without it, or does not
//! answer in time; the revision fixed by the host; `resultType`; no `ping` in 2026-07-28;
//! tool lists listed again on change, and the 2026-07-28 subscription that tells of it.
//! Lines are compared as bytes, events as the loop prints them, in order.

use polyweave_tests::mcp_loop::{
    call, discover_ok, envelope, tools_page, McpLoop, DISCOVER_2026, INIT_OK,
};
use polyweave_tool_adapter::mcp::{McpConfig, McpRevision, McpState, DEFAULT_START_TIMEOUT_MS};
use polyweave_tool_adapter::wrapper::WrapperConfig;
use polyweave_tool_adapter::Instant;

const PROMPT: &str = r#"{"type":"TEXT","content":"Tool results above."}"#;

fn cfg() -> WrapperConfig {
    WrapperConfig::DEFAULT
}

fn mcp(revision: McpRevision) -> McpConfig {
    McpConfig {
        revision,
        ..McpConfig::DEFAULT.fit(&cfg())
    }
}

/// A loop whose client is started at `now_ms`, its first line sent (and taken into `seen`).
fn started(revision: McpRevision, tools: &[&str], now_ms: u64) -> McpLoop<'static> {
    let mut l = McpLoop::new(cfg(), mcp(revision), tools, 4, 4);
    l.now = now_ms;
    l.client.start(l.at()).unwrap();
    l.pump();
    l
}

/// A loop whose server speaks 2026-07-28, ready with one page of `tools`; calls take ids
/// from 3.
fn ready_2026(tools: &[&str]) -> McpLoop<'static> {
    let l = McpLoop::ready(cfg(), mcp(McpRevision::Auto), tools, 4, 4);
    assert_eq!(l.client.protocol_version(), Some("2026-07-28"));
    l
}

/// `server/discover` as request `id`.
fn discover(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"server/discover","params":{{"_meta":{{{}}}}}}}"#,
        envelope()
    )
}

/// `initialize` as request `id`.
fn initialize(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"polyweave-tool-adapter","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    )
}

/// [`INIT_OK`] answering request `id`.
fn init_ok(id: u64) -> String {
    INIT_OK.replace(r#""id":1,"#, &format!(r#""id":{id},"#))
}

/// `tools/list` as request `id` in 2026-07-28 (its envelope), from page `cursor` as written.
fn list_2026(id: u64, cursor: Option<&str>) -> String {
    let cursor = cursor.map_or(String::new(), |c| format!(r#""cursor":"{c}","#));
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{cursor}"_meta":{{{}}}}}}}"#,
        envelope()
    )
}

/// `tools/list` as request `id` in 2025-11-25 (no params).
fn list_2025(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)
}

/// `tools/call` of request `id` in 2026-07-28: the envelope after the progress token.
fn call_2026(id: u64, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},"_meta":{{"progressToken":{id},{}}}}}}}"#,
        envelope()
    )
}

/// `tools/call` of request `id` in 2025-11-25.
fn call_2025(id: u64, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args},"_meta":{{"progressToken":{id}}}}}}}"#
    )
}

fn text_result(id: u64, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
    )
}

/// The `TOOL_RESULT` of call `id` of tool `name` with the text result `text`.
fn model_text(id: &str, name: &str, text: &str) -> String {
    format!(
        r#"{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","result":[{{"type":"text","text":"{text}"}}]}}}}"#
    )
}

/// The `TOOL_RESULT` of call `id` of tool `name` with the error `error`.
fn model_error(id: &str, name: &str, error: &str) -> String {
    format!(
        r#"{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","error":"{error}"}}}}"#
    )
}

fn prompt_after(error: &str) -> String {
    format!(r#"{{"type":"TEXT","content":"Tool results above. Last tool error: {error}"}}"#)
}

/// `notifications/tools/list_changed`, with `params` when given.
fn list_changed(params: Option<&str>) -> String {
    match params {
        Some(p) => format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{p}}}"#
        ),
        None => r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_string(),
    }
}

const CHANGED_EVENT: &str = "Notification notifications/tools/list_changed -";

// ------------------------------------------------------------ which revision (SPEC §9.9)

/// SPEC §9.9: by default the first line is `server/discover` in 2026-07-28's form, and the
/// start-up's deadline is the start plus `start_timeout_ms`.
#[test]
fn the_first_line_is_server_discover_with_the_envelope() {
    let mut l = started(McpRevision::Auto, &["echo"], 1500);
    assert_eq!(l.take_server(), [discover(1)]);
    assert_eq!(l.take_events(), Vec::<String>::new());
    assert_eq!(l.client.state(), McpState::Starting);
    assert_eq!(l.client.protocol_version(), None);
    assert_eq!(DEFAULT_START_TIMEOUT_MS, 10_000);
    assert_eq!(
        l.client.poll_timeout(),
        Some(Instant::from_millis(1500 + 10_000))
    );
    // Fixed to 2026-07-28, the probe is the same.
    let mut l = started(McpRevision::V2026_07_28, &["echo"], 0);
    assert_eq!(l.take_server(), [discover(1)]);
}

/// SPEC §9.9: a server listing 2026-07-28 gets no handshake: `Initialized` with its
/// discover result, then `tools/list` with the envelope, page after page (cursor, then
/// envelope); no subscription when it does not say it tells of changes.
#[test]
fn a_server_listing_2026_07_28_is_spoken_to_in_it() {
    let mut l = started(McpRevision::Auto, &["a", "b", "c"], 0);
    l.take_server();
    l.server(&discover_ok());
    assert_eq!(
        l.take_events(),
        [format!("Initialized 2026-07-28 {DISCOVER_2026}")]
    );
    assert_eq!(l.client.protocol_version(), Some("2026-07-28"));
    assert_eq!(l.client.poll_timeout(), None);
    assert_eq!(l.take_server(), [list_2026(2, None)]);
    l.server(&tools_page(2, &["a", "b"], Some("c\\u0031")));
    assert_eq!(l.take_server(), [list_2026(3, Some("c\\u0031"))]);
    assert_eq!(l.take_events(), ["Tool a", "Tool b"]);
    l.server(&tools_page(3, &["c"], None));
    assert_eq!(l.take_events(), ["Tool c", "Ready { tools: 3 }"]);
    assert_eq!(l.client.state(), McpState::Ready);
    assert_eq!(l.take_server(), Vec::<String>::new());
    // No `initialize`, no `notifications/initialized` ever.
    assert!(l.seen.is_empty(), "{:?}", l.seen);
}

/// SPEC §9.9: every `tools/call` in 2026-07-28 carries the envelope after its progress
/// token, a call queued before the revision was known too; its answer reads as in
/// 2025-11-25.
#[test]
fn calls_carry_the_envelope_queued_ones_too() {
    let mut l = started(McpRevision::Auto, &["echo"], 0);
    l.take_server();
    // Handed in before the server said anything: it waits, its id taken (2).
    l.model(1, &call("c1", "echo", r#"{"m": 1}"#));
    assert_eq!(l.client.queued(), 1);
    assert_eq!(l.take_server(), Vec::<String>::new());
    l.server(&discover_ok());
    assert_eq!(l.take_server(), [list_2026(3, None)]);
    l.server(&tools_page(3, &["echo"], None));
    assert_eq!(l.take_server(), [call_2026(2, "echo", r#"{"m":1}"#)]);
    l.model(2, &call("c2", "echo", "{}"));
    assert_eq!(l.take_server(), [call_2026(4, "echo", "{}")]);
    l.server(&text_result(4, "two"));
    l.server(&text_result(2, "one"));
    assert_eq!(
        l.take_model(),
        [
            model_text("c2", "echo", "two"),
            model_text("c1", "echo", "one"),
            PROMPT.to_string()
        ]
    );
    // The same queued call, the server refusing the probe: no envelope.
    let mut l = started(McpRevision::Auto, &["echo"], 0);
    l.take_server();
    l.model(1, &call("c1", "echo", "{}"));
    l.server(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#);
    assert_eq!(l.take_server(), [initialize(3)]);
    l.server(&init_ok(3));
    l.server(&tools_page(4, &["echo"], None));
    assert_eq!(
        l.take_server(),
        [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
            list_2025(4),
            call_2025(2, "echo", "{}")
        ]
    );
}

/// The rest of a start-up after `initialize` (request `init`) went out: answered, listed,
/// ready, in 2025-11-25; the events after the probe and the lines sent are checked.
fn finish_2025(l: &mut McpLoop<'_>, init: u64) {
    assert_eq!(l.take_server(), [initialize(init)]);
    assert_eq!(l.client.state(), McpState::Starting);
    assert_eq!(l.client.poll_timeout(), None);
    l.server(&init_ok(init));
    l.server(&tools_page(init + 1, &["echo"], None));
    assert_eq!(
        l.take_server(),
        [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
            list_2025(init + 1)
        ]
    );
    assert_eq!(
        l.take_events(),
        [
            r#"Initialized 2025-11-25 {"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#,
            "Tool echo",
            "Ready { tools: 1 }"
        ]
    );
    assert_eq!(l.client.protocol_version(), Some("2025-11-25"));
    l.model(l.now + 1, &call("c1", "echo", "{}"));
    assert_eq!(l.take_server(), [call_2025(init + 2, "echo", "{}")]);
}

/// SPEC §9.9: a server that answers the probe with an error (its id, or `"id":null`), with
/// a result not listing 2026-07-28 (or no list at all), gets `initialize` next on the same
/// client, and the start-up goes on in 2025-11-25.
#[test]
fn a_server_not_speaking_2026_07_28_gets_initialize_next() {
    for answer in [
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: no session"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2025-06-18"]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":"2026-07-28"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
    ] {
        let mut l = started(McpRevision::Auto, &["echo"], 0);
        l.take_server();
        l.server(answer);
        assert_eq!(l.take_events(), Vec::<String>::new(), "{answer}");
        finish_2025(&mut l, 2);
        let s = l.client.stats();
        assert_eq!((s.unknown_id, s.late), (0, 0), "{answer}");
    }
}

/// SPEC §9.9: a probe unanswered until `poll_timeout` gets `initialize`: not a millisecond
/// before (`handle_timeout` then changes nothing), at the deadline exactly.
#[test]
fn a_server_silent_until_the_deadline_gets_initialize() {
    let mcp = McpConfig {
        start_timeout_ms: 250,
        ..mcp(McpRevision::Auto)
    };
    let mut l = McpLoop::new(cfg(), mcp, &["echo"], 4, 4);
    l.now = 1000;
    l.client.start(l.at()).unwrap();
    // The deadline is known before the probe went out.
    assert_eq!(l.client.poll_timeout(), Some(Instant::from_millis(1250)));
    l.pump();
    assert_eq!(l.take_server(), [discover(1)]);
    assert_eq!(l.client.poll_timeout(), Some(Instant::from_millis(1250)));
    l.tick(1249);
    l.client.handle_timeout(Instant::from_millis(0));
    l.pump();
    assert_eq!(l.take_server(), Vec::<String>::new());
    assert_eq!(l.client.poll_timeout(), Some(Instant::from_millis(1250)));
    l.tick(1250);
    assert_eq!(l.take_events(), Vec::<String>::new());
    assert_eq!(l.client.protocol_version(), None);
    finish_2025(&mut l, 2);
}

/// SPEC §9.9: the probe's answer after the client gave up on it is counted as late and
/// changes nothing, whenever it comes in the handshake.
#[test]
fn a_late_discover_answer_is_counted_and_changes_nothing() {
    for when in ["before the initialize answer", "after the tools are listed"] {
        let mut l = started(McpRevision::Auto, &["echo"], 0);
        l.take_server();
        l.tick(10_000);
        assert_eq!(l.take_server(), [initialize(2)]);
        if when.starts_with("after") {
            l.server(&init_ok(2));
            l.server(&tools_page(3, &["echo"], None));
            l.take_events();
            l.take_server();
        }
        let before = (l.client.state(), l.client.queued(), l.client.in_flight());
        l.server(&discover_ok());
        assert_eq!(l.client.stats().late, 1, "{when}");
        assert_eq!(l.client.stats().unknown_id, 0, "{when}");
        assert!(l.seen.is_empty(), "{when}: {:?}", l.seen);
        assert_eq!(
            (l.client.state(), l.client.queued(), l.client.in_flight()),
            before
        );
        if when.starts_with("before") {
            l.server(&init_ok(2));
            l.server(&tools_page(3, &["echo"], None));
            l.take_server();
            l.take_events();
        }
        assert_eq!(l.client.protocol_version(), Some("2025-11-25"), "{when}");
        l.model(l.now + 1, &call("c1", "echo", "{}"));
        assert_eq!(l.take_server(), [call_2025(4, "echo", "{}")]);
    }
}

/// SPEC §9.9: a client fixed to 2026-07-28 fails the start-up where the default would
/// fall back: an error is `Refused`, a list without it `UnsupportedVersion`, silence
/// `NoAnswer`; calls waiting fail, no `initialize` goes out.
#[test]
fn fixed_to_2026_07_28_a_server_without_it_fails_the_start() {
    let cases: [(&str, &str); 4] = [
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
            r#"StartFailed Refused {"code":-32601,"message":"Method not found"}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"x"}}"#,
            r#"StartFailed Refused {"code":-32000,"message":"x"}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"]}}"#,
            r#"StartFailed UnsupportedVersion ["2025-11-25"]"#,
        ),
        ("", "StartFailed(NoAnswer)"),
    ];
    for (answer, event) in cases {
        let mut l = started(McpRevision::V2026_07_28, &["echo"], 0);
        assert_eq!(l.take_server(), [discover(1)]);
        l.model(5, &call("c1", "echo", "{}"));
        if answer.is_empty() {
            l.tick(9_999);
            assert_eq!(l.client.state(), McpState::Starting);
            l.tick(10_000);
        } else {
            l.server(answer);
        }
        assert_eq!(l.take_events(), [event]);
        assert_eq!(l.client.state(), McpState::Failed);
        assert_eq!(l.client.protocol_version(), None);
        assert_eq!(l.client.poll_timeout(), None);
        let e = "Tool echo failed: the MCP server did not start";
        assert_eq!(
            l.take_model(),
            [model_error("c1", "echo", e), prompt_after(e)]
        );
        assert_eq!(l.take_server(), Vec::<String>::new());
    }
}

/// SPEC §9.9: fixed to 2025-11-25, `initialize` is the first line and no deadline is set.
#[test]
fn fixed_to_2025_11_25_initialize_goes_first() {
    let mut l = started(McpRevision::V2025_11_25, &["echo"], 0);
    assert_eq!(l.client.poll_timeout(), None);
    assert_eq!(l.take_server(), [initialize(1)]);
    l.tick(100_000);
    assert_eq!(l.take_server(), Vec::<String>::new());
    assert_eq!(l.client.state(), McpState::Starting);
    l.server(INIT_OK);
    l.server(&tools_page(2, &["echo"], None));
    assert_eq!(l.client.protocol_version(), Some("2025-11-25"));
    assert_eq!(l.client.state(), McpState::Ready);
}

// ------------------------------------------------------------ results (SPEC §9.10)

/// SPEC §9.10: `input_required` fails the call with its own message, and frees it: one
/// result per call, a later call goes on, the server's second word on it is late.
#[test]
fn input_required_fails_the_call_and_frees_it() {
    let mut l = ready_2026(&["book"]);
    l.model(10, &call("c1", "book", "{}"));
    assert_eq!(l.take_server(), [call_2026(3, "book", "{}")]);
    l.server(r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"r1":{"method":"elicitation/create","params":{"message":"Which day?"}}},"requestState":"s1"}}"#);
    let e = "Tool book needs input this client cannot give";
    assert_eq!(
        l.take_model(),
        [model_error("c1", "book", e), prompt_after(e)]
    );
    assert_eq!((l.client.in_flight(), l.wrapper.pending()), (0, 0));
    assert_eq!(l.client.stats().failed, 1);
    l.server(&text_result(3, "too late"));
    assert_eq!(l.client.stats().late, 1);
    l.model(11, &call("c2", "book", "{}"));
    assert_eq!(l.take_server(), [call_2026(4, "book", "{}")]);
    l.server(&text_result(4, "booked"));
    assert_eq!(
        l.take_model(),
        [model_text("c2", "book", "booked"), PROMPT.to_string()]
    );
    assert!(l.refused.is_empty(), "{:?}", l.refused);
}

/// SPEC §9.10: `"complete"`, an absent `resultType` and one of no meaning here read as
/// rule 3 says (structuredContent, content, isError).
#[test]
fn complete_and_absent_result_types_read_as_before() {
    let cases = [
        (
            r#"{"resultType":"complete","content":[{"type":"text","text":"ok"}]}"#,
            r#""result":[{"type":"text","text":"ok"}]"#,
        ),
        (
            r#"{"content":[],"structuredContent":{"t":1},"resultType":"complete"}"#,
            r#""result":{"t":1}"#,
        ),
        (
            r#"{"content":[{"type":"text","text":"ok"}]}"#,
            r#""result":[{"type":"text","text":"ok"}]"#,
        ),
        (
            r#"{"resultType":"complete","isError":true,"content":[{"type":"text","text":"no"}]}"#,
            r#""error":"no""#,
        ),
        (r#"{"resultType":7,"content":[]}"#, r#""result":[]"#),
    ];
    for (result, frame) in cases {
        let mut l = ready_2026(&["t"]);
        l.model(10, &call("c1", "t", "{}"));
        l.take_server();
        l.server(&format!(r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#));
        let model = l.take_model();
        assert_eq!(
            model[0],
            format!(r#"{{"type":"TOOL_RESULT","content":{{"id":"c1","name":"t",{frame}}}}}"#),
            "{result}"
        );
        assert_eq!(model.len(), 2);
        assert_eq!(l.client.in_flight(), 0);
    }
}

/// SPEC §9.10: there is no `ping` in 2026-07-28 (refused like any request), while a
/// 2025-11-25 server's is answered.
#[test]
fn ping_is_refused_in_2026_07_28_answered_in_2025_11_25() {
    let ping = r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#;
    let mut l = ready_2026(&["echo"]);
    l.server(ping);
    assert_eq!(
        l.take_server(),
        [r#"{"jsonrpc":"2.0","id":"p1","error":{"code":-32601,"message":"Method not found"}}"#]
    );
    let s = l.client.stats();
    assert_eq!((s.pings, s.refused_requests), (0, 1));
    let old = McpConfig {
        revision: McpRevision::V2025_11_25,
        ..McpConfig::DEFAULT
    };
    let mut l = McpLoop::ready(cfg(), old, &["echo"], 4, 4);
    l.server(ping);
    assert_eq!(
        l.take_server(),
        [r#"{"jsonrpc":"2.0","id":"p1","result":{}}"#]
    );
    let s = l.client.stats();
    assert_eq!((s.pings, s.refused_requests), (1, 0));
}

// ------------------------------------------------------------ tool lists change (SPEC §9.12)

/// SPEC §9.12: `notifications/tools/list_changed` is handed on, then the tools are listed
/// again from the first page (with the envelope in 2026-07-28, paging as at start) and the
/// host gets the whole new list, then `ToolsChanged`.
#[test]
fn list_changed_lists_the_tools_again() {
    let mut l = ready_2026(&["a"]);
    l.server(&list_changed(None));
    assert_eq!(l.take_events(), [CHANGED_EVENT]);
    assert_eq!(l.take_server(), [list_2026(3, None)]);
    l.server(&tools_page(3, &["a", "b"], Some("n")));
    assert_eq!(l.take_events(), ["Tool a", "Tool b"]);
    assert_eq!(l.take_server(), [list_2026(4, Some("n"))]);
    l.server(&tools_page(4, &["c"], None));
    assert_eq!(l.take_events(), ["Tool c", "ToolsChanged { tools: 3 }"]);
    assert_eq!(l.take_server(), Vec::<String>::new());
    assert_eq!(l.client.state(), McpState::Ready);
    // A second change lists from the first page again (no cursor kept).
    l.server(&list_changed(None));
    assert_eq!(l.take_server(), [list_2026(5, None)]);
    l.server(&tools_page(5, &[], None));
    assert_eq!(
        l.take_events(),
        [CHANGED_EVENT, "ToolsChanged { tools: 0 }"]
    );
    let s = l.client.stats();
    assert_eq!((s.notifications, s.unknown_id, s.late), (2, 0, 0));
    // In 2025-11-25 the same, without the envelope.
    let old = McpConfig {
        revision: McpRevision::V2025_11_25,
        ..McpConfig::DEFAULT
    };
    let mut l = McpLoop::ready(cfg(), old, &["a"], 4, 4);
    l.server(&list_changed(None));
    assert_eq!(l.take_server(), [list_2025(3)]);
    l.server(&tools_page(3, &["b"], None));
    assert_eq!(
        l.take_events(),
        [CHANGED_EVENT, "Tool b", "ToolsChanged { tools: 1 }"]
    );
}

/// SPEC §9.12: changes told while the tools are being listed (again, or at start) make one
/// more listing after it, however many they were.
#[test]
fn changes_during_a_listing_list_once_more_after_it() {
    let mut l = ready_2026(&["a"]);
    l.server(&list_changed(None));
    assert_eq!(l.take_server(), [list_2026(3, None)]);
    for _ in 0..3 {
        l.server(&list_changed(None));
    }
    assert_eq!(l.take_server(), Vec::<String>::new());
    l.server(&tools_page(3, &["b"], None));
    assert_eq!(l.take_server(), [list_2026(4, None)]);
    l.server(&tools_page(4, &["c"], None));
    assert_eq!(l.take_server(), Vec::<String>::new());
    assert_eq!(
        l.take_events(),
        [
            CHANGED_EVENT,
            CHANGED_EVENT,
            CHANGED_EVENT,
            CHANGED_EVENT,
            "Tool b",
            "ToolsChanged { tools: 1 }",
            "Tool c",
            "ToolsChanged { tools: 1 }"
        ]
    );
    // A change during the start-up's own listing: listed again once ready.
    let mut l = started(McpRevision::Auto, &["a"], 0);
    l.server(&discover_ok());
    l.server(&list_changed(None));
    l.server(&tools_page(2, &["a"], None));
    assert_eq!(
        l.take_server(),
        [discover(1), list_2026(2, None), list_2026(3, None)]
    );
    l.server(&tools_page(3, &["a", "b"], None));
    let events = l.take_events();
    assert_eq!(
        events[1..],
        [
            CHANGED_EVENT,
            "Tool a",
            "Ready { tools: 1 }",
            "Tool a",
            "Tool b",
            "ToolsChanged { tools: 2 }"
        ]
    );
}

/// SPEC §9.12: a re-listing the server refuses (or answers with no list) leaves the host's
/// list as it was: no event, still ready, calls go on, and the next change lists again.
#[test]
fn a_refused_relisting_leaves_things_as_they_were() {
    for answer in [
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"busy"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"tools":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3}"#,
    ] {
        let mut l = ready_2026(&["a"]);
        l.server(&list_changed(None));
        l.take_events();
        assert_eq!(l.take_server(), [list_2026(3, None)]);
        l.server(answer);
        assert_eq!(l.take_events(), Vec::<String>::new(), "{answer}");
        assert_eq!(l.client.state(), McpState::Ready);
        let s = l.client.stats();
        assert_eq!((s.unknown_id, s.late, s.failed), (0, 0, 0), "{answer}");
        l.model(10, &call("c1", "a", "{}"));
        assert_eq!(l.take_server(), [call_2026(4, "a", "{}")]);
        l.server(&text_result(4, "fine"));
        assert_eq!(
            l.take_model(),
            [model_text("c1", "a", "fine"), PROMPT.to_string()]
        );
        l.server(&list_changed(None));
        assert_eq!(l.take_server(), [list_2026(5, None)]);
    }
}

/// SPEC §9.12: calls in flight while the tools are listed again are answered as ever, and
/// calls made meanwhile go out at once.
#[test]
fn calls_in_flight_during_a_relisting_are_answered() {
    let mut l = ready_2026(&["a"]);
    l.model(10, &call("c1", "a", "{}"));
    l.model(10, &call("c2", "a", r#"{"n":2}"#));
    assert_eq!(
        l.take_server(),
        [call_2026(3, "a", "{}"), call_2026(4, "a", r#"{"n":2}"#)]
    );
    l.server(&list_changed(None));
    assert_eq!(l.take_server(), [list_2026(5, None)]);
    l.server(&text_result(3, "one"));
    l.model(11, &call("c3", "a", "{}"));
    assert_eq!(l.take_server(), [call_2026(6, "a", "{}")]);
    l.server(&tools_page(5, &["a", "b"], None));
    l.server(&text_result(6, "three"));
    l.server(&text_result(4, "two"));
    assert_eq!(
        l.take_model(),
        [
            model_text("c1", "a", "one"),
            model_text("c3", "a", "three"),
            model_text("c2", "a", "two"),
            PROMPT.to_string()
        ]
    );
    assert_eq!(
        l.take_events(),
        [
            CHANGED_EVENT,
            "Tool a",
            "Tool b",
            "ToolsChanged { tools: 2 }"
        ]
    );
    assert_eq!(l.client.in_flight(), 0);
}

/// SPEC §9.12: a server whose discover result says `capabilities.tools.listChanged` gets
/// `subscriptions/listen` once ready; the subscription's notifications list the tools again,
/// and its response ends it without being an unknown id.
#[test]
fn a_server_that_tells_of_changes_is_subscribed_to() {
    let result =
        r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}"#;
    let mut l = started(McpRevision::Auto, &["a"], 0);
    l.take_server();
    l.model(1, &call("c1", "a", "{}"));
    l.server(&format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#));
    assert_eq!(
        l.take_events(),
        [format!("Initialized 2026-07-28 {result}")]
    );
    // Not before the tools are listed.
    assert_eq!(l.take_server(), [list_2026(3, None)]);
    l.server(&tools_page(3, &["a"], None));
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},"_meta":{{{}}}}}}}"#,
        envelope()
    );
    assert_eq!(l.take_server(), [listen, call_2026(2, "a", "{}")]);
    assert_eq!(l.take_events(), ["Tool a", "Ready { tools: 1 }"]);
    let told = r#"{"_meta":{"io.modelcontextprotocol/subscriptionId":4}}"#;
    l.server(&list_changed(Some(told)));
    assert_eq!(
        l.take_events(),
        [format!(
            "Notification notifications/tools/list_changed {told}"
        )]
    );
    assert_eq!(l.take_server(), [list_2026(5, None)]);
    l.server(&tools_page(5, &["b"], None));
    assert_eq!(l.take_events(), ["Tool b", "ToolsChanged { tools: 1 }"]);
    l.server(&text_result(2, "ok"));
    assert_eq!(
        l.take_model(),
        [model_text("c1", "a", "ok"), PROMPT.to_string()]
    );
    // The subscription ends: its response is no unknown id, and nothing is sent again.
    l.server(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    assert_eq!(l.take_server(), Vec::<String>::new());
    assert_eq!(l.take_events(), Vec::<String>::new());
    let s = l.client.stats();
    assert_eq!((s.unknown_id, s.late), (0, 0));
    // A second response to it is one to a request of the client's that is over: late.
    l.server(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    assert_eq!(l.client.stats().late, 1);
    // Without the capability, or `listChanged` not true, there is no subscription.
    for caps in [
        r#"{"tools":{"listChanged":false}}"#,
        r#"{"tools":{"listChanged":"true"}}"#,
        r#"{"listChanged":true}"#,
    ] {
        let mut l = started(McpRevision::Auto, &["a"], 0);
        l.take_server();
        l.server(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"supportedVersions":["2026-07-28"],"capabilities":{caps}}}}}"#
        ));
        l.server(&tools_page(2, &["a"], None));
        assert_eq!(l.take_server(), [list_2026(2, None)], "{caps}");
    }
}

/// SPEC §9.12, §9.7: the transport closing while the tools are listed again fails the calls
/// in flight, ends the listing without an event, and nothing is sent after.
#[test]
fn the_transport_closing_during_a_relisting() {
    let mut l = ready_2026(&["a"]);
    l.model(10, &call("c1", "a", "{}"));
    l.server(&list_changed(None));
    assert_eq!(
        l.take_server(),
        [call_2026(3, "a", "{}"), list_2026(4, None)]
    );
    l.take_events();
    l.close();
    let e = "Tool a failed: the MCP server closed the connection";
    assert_eq!(l.take_model(), [model_error("c1", "a", e), prompt_after(e)]);
    assert_eq!(l.client.state(), McpState::Closed);
    l.server(&tools_page(4, &["b"], None));
    l.server(&list_changed(None));
    assert_eq!(l.take_events(), Vec::<String>::new());
    assert_eq!(l.take_server(), Vec::<String>::new());
    assert_eq!(l.client.in_flight(), 0);
}

// ------------------------------------------------------------ bad input

/// Any sequence of server lines around the start-up and the listings (random discover and
/// initialize answers, errors, `"id":null`, lines longer than the buffer, storms of
/// `list_changed`, subscriptions, `input_required`) with calls, time, cancels and a close
/// never panics, and every call gets exactly one result (`mcp_revision_hostile`).
#[test]
fn any_server_lines_in_any_revision_never_lose_a_call() {
    let mut rng = polyweave_tests::XorShift::new(0x3230_3236_0728);
    for case in 0..10_000 {
        let len = rng.in_1_to(300);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let run = std::panic::catch_unwind(|| polyweave_tests::mcp_revision_hostile::run(&data));
        assert!(run.is_ok(), "case {case}: {data:?}");
    }
}

/// The hostile run reaches what it is for: over the seeded cases, each revision ends up
/// spoken, re-listings complete, subscriptions open, `input_required` fails calls.
#[test]
fn the_hostile_runs_reach_every_revision_and_listing() {
    let mut rng = polyweave_tests::XorShift::new(0x3230_3236_0728);
    let mut seen = polyweave_tests::mcp_revision_hostile::Reached::default();
    for _ in 0..2_000 {
        let len = rng.in_1_to(300);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        seen.add(&polyweave_tests::mcp_revision_hostile::run(&data));
    }
    // About half of what the seed reaches (359, 596, 890, 115, 51, 14, 243 of 2,000).
    assert!(seen.spoke_2026 > 150, "{seen:?}");
    assert!(seen.spoke_2025 > 250, "{seen:?}");
    assert!(seen.start_failed > 400, "{seen:?}");
    assert!(seen.tools_changed > 50, "{seen:?}");
    assert!(seen.listens > 25, "{seen:?}");
    assert!(seen.input_required > 5, "{seen:?}");
    assert!(seen.timeouts > 100, "{seen:?}");
}
