//! The MCP client over Streamable HTTP (SPEC §9.11) against scripted responses, byte for
//! byte: each POST's body and headers, JSON, SSE and `202` responses split anywhere, HTTP
//! errors, streams that break, cancel by closing, the 2025-11-25 session and its `404`, and
//! the refusals of a host that gets the order wrong.

use polyweave_tool_adapter::mcp::http::{McpPost, McpStream, McpStreamError};
use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpEvent, McpHandled, McpRevision, McpSlot, McpStartError,
    McpState,
};
use polyweave_tool_adapter::{CallHandle, Instant};

const INFO: McpClientInfo<'static> = McpClientInfo {
    name: "t",
    version: "1",
};
const ENVELOPE: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}"#;
const COMMON: &str =
    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

/// What the host saw: events, frames (with their call), and closes.
#[derive(Debug, PartialEq)]
enum Seen {
    Event(String),
    Frame(u32, String),
}

struct Host {
    c: McpClient<'static>,
    seen: Vec<Seen>,
}

/// A POST as the host makes it.
#[derive(Debug, PartialEq)]
struct Post {
    stream: u16,
    body: String,
    headers: String,
}

fn host(cfg: McpConfig, streams: usize) -> Host {
    let slots = Box::leak(vec![McpSlot::EMPTY; 4].into_boxed_slice());
    let st = Box::leak(vec![McpStream::EMPTY; streams].into_boxed_slice());
    let arena = Box::leak(vec![0u8; cfg.arena_len(4)].into_boxed_slice());
    let mut c = McpClient::new_http(cfg, INFO, slots, st, arena).unwrap();
    c.start(Instant::ZERO).unwrap();
    Host {
        c,
        seen: Vec::new(),
    }
}

impl Host {
    /// Drains events and frames into `seen`.
    fn drain(&mut self) {
        loop {
            let mut moved = false;
            while let Some(ev) = self.c.poll_event() {
                moved = true;
                let text = match ev {
                    McpEvent::Initialized {
                        protocol_version, ..
                    } => {
                        format!("initialized {protocol_version}")
                    }
                    McpEvent::Tool { name, .. } => format!("tool {name}"),
                    McpEvent::Ready { tools } => format!("ready {tools}"),
                    McpEvent::ToolsChanged { tools } => format!("changed {tools}"),
                    McpEvent::StartFailed(e) => format!("failed {e:?}"),
                    other => format!("{other:?}"),
                };
                self.seen.push(Seen::Event(text));
            }
            let mut buf = vec![0u8; 1 << 16];
            while let Some(f) = self.c.poll_frame(&mut buf).unwrap() {
                moved = true;
                let text = String::from_utf8(buf[..f.len].to_vec()).unwrap();
                self.seen.push(Seen::Frame(f.handle.index(), text));
            }
            if !moved {
                break;
            }
        }
    }

    fn take(&mut self) -> Vec<Seen> {
        self.drain();
        std::mem::take(&mut self.seen)
    }

    /// The next POST; panics on a close.
    fn post(&mut self) -> Option<Post> {
        self.drain();
        let (mut body, mut headers) = (vec![0u8; 1 << 16], vec![0u8; 1 << 14]);
        match self.c.poll_request(&mut body, &mut headers).unwrap()? {
            McpPost::Post {
                stream,
                body: b,
                headers: h,
            } => Some(Post {
                stream,
                body: String::from_utf8(body[..b].to_vec()).unwrap(),
                headers: String::from_utf8(headers[..h].to_vec()).unwrap(),
            }),
            McpPost::Close { stream } => panic!("close {stream}"),
        }
    }

    /// A whole response to `stream`, its body fed in pieces of `piece` bytes.
    fn respond(
        &mut self,
        stream: u16,
        status: u16,
        ct: &str,
        session: Option<&str>,
        body: &str,
        piece: usize,
    ) {
        self.drain();
        self.c
            .handle_response(stream, status, ct.as_bytes(), session.map(str::as_bytes))
            .unwrap();
        self.feed(stream, body.as_bytes(), piece);
        self.drain();
        self.c.handle_response_end(stream).unwrap();
        self.drain();
    }

    fn feed(&mut self, stream: u16, mut body: &[u8], piece: usize) {
        while !body.is_empty() {
            let n = piece.min(body.len());
            let took = self.c.feed_response(stream, &body[..n]).unwrap();
            assert!(took > 0, "stream {stream} took nothing");
            body = &body[took..];
            self.drain();
        }
    }
}

fn discover_result(list_changed: bool) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{"listChanged":{list_changed}}}}}}}}}"#
    )
}

fn list_result(id: u64, tools: &[&str]) -> String {
    let tools: Vec<String> = tools
        .iter()
        .map(|t| format!(r#"{{"name":"{t}"}}"#))
        .collect();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","tools":[{}]}}}}"#,
        tools.join(",")
    )
}

/// A 2026-07-28 client, ready with `echo`; the streams are free again.
fn modern(streams: usize) -> Host {
    let mut h = host(McpConfig::DEFAULT, streams);
    let p = h.post().unwrap();
    h.respond(
        p.stream,
        200,
        "application/json",
        None,
        &discover_result(false),
        1 << 16,
    );
    let p = h.post().unwrap();
    h.respond(
        p.stream,
        200,
        "application/json",
        None,
        &list_result(2, &["echo"]),
        1 << 16,
    );
    assert_eq!(
        h.take(),
        [
            Seen::Event("initialized 2026-07-28".into()),
            Seen::Event("tool echo".into()),
            Seen::Event("ready 1".into())
        ]
    );
    h
}

fn call(h: &mut Host, index: u32, name: &str) {
    let frame =
        format!(r#"{{"type":"TOOL_CALL","content":{{"name":"{name}","args":{{"m":"hi"}}}}}}"#);
    let r =
        h.c.handle_frame(CallHandle::from_parts(0, index), frame.as_bytes());
    assert!(matches!(r, Ok(McpHandled::Sent { .. })), "{r:?}");
}

const RESULT_3: &str =
    r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
const ECHO_FRAMES: [&str; 2] = [
    r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":[{"type":"text","text":"hi"}]}}"#,
    r#"{"type":"END"}"#,
];

fn frames(index: u32, texts: &[&str]) -> Vec<Seen> {
    texts
        .iter()
        .map(|t| Seen::Frame(index, (*t).into()))
        .collect()
}

#[test]
fn the_probe_and_a_2026_server_posts_and_headers_byte_for_byte() {
    let mut h = host(McpConfig::DEFAULT, 2);
    let p = h.post().unwrap();
    assert_eq!(p.stream, 0);
    assert_eq!(
        p.body,
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{{{ENVELOPE}}}}}}}"#
        )
    );
    assert_eq!(
        p.headers,
        format!("{COMMON}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n")
    );
    // One request at a time at start-up: nothing more until it is answered.
    assert_eq!(h.post(), None);
    h.respond(
        0,
        200,
        "application/json; charset=utf-8",
        None,
        &discover_result(false),
        7,
    );
    let p = h.post().unwrap();
    assert_eq!(
        p.body,
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{{{ENVELOPE}}}}}}}"#
        )
    );
    assert_eq!(
        p.headers,
        format!("{COMMON}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n")
    );
    h.respond(
        p.stream,
        200,
        "application/json",
        None,
        &list_result(2, &["echo"]),
        3,
    );
    assert_eq!(h.c.state(), McpState::Ready);
    assert_eq!(h.c.protocol_version(), Some("2026-07-28"));
    h.take();
    call(&mut h, 0, "echo");
    let p = h.post().unwrap();
    assert_eq!(
        p.body,
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"m":"hi"}},"_meta":{{"progressToken":3,{ENVELOPE}}}}}}}"#
        )
    );
    assert_eq!(
        p.headers,
        format!("{COMMON}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n")
    );
    h.respond(p.stream, 200, "application/json", None, RESULT_3, 5);
    assert_eq!(h.take(), frames(0, &ECHO_FRAMES));
}

#[test]
fn sse_responses_split_at_every_byte_give_the_same_frames() {
    let body = format!(
        "id: 0\ndata: \n\n: keep-alive\r\nevent: message\r\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":3,\"progress\":1}}}}\r\n\r\ndata: {RESULT_3}\n\n"
    );
    let mut want = vec![Seen::Frame(
        0,
        r#"{"type":"PROGRESS","content":{"progressToken":3,"progress":1}}"#.into(),
    )];
    want.extend(frames(0, &ECHO_FRAMES));
    for piece in 1..=body.len() {
        let mut h = modern(2);
        call(&mut h, 0, "echo");
        let p = h.post().unwrap();
        h.respond(p.stream, 200, "text/event-stream", None, &body, piece);
        assert_eq!(h.take(), want, "pieces of {piece}");
        assert_eq!(h.c.in_flight(), 0);
    }
}

#[test]
fn http_errors_with_and_without_the_answer_in_the_body() {
    // 2026-07-28 answers an unknown tool with 400 and the JSON-RPC error for the id.
    let mut h = modern(2);
    call(&mut h, 0, "nope");
    let p = h.post().unwrap();
    let err = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#;
    h.respond(p.stream, 400, "application/json", None, err, 9);
    assert_eq!(
        h.take(),
        frames(
            0,
            &[r#"{"type":"ERROR","content":{"message":"Unknown tool: nope"}}"#]
        )
    );
    // Any other HTTP error: HTTP <status>.
    call(&mut h, 1, "echo");
    let p = h.post().unwrap();
    h.respond(
        p.stream,
        502,
        "text/html",
        None,
        "<html>bad gateway</html>",
        4,
    );
    assert_eq!(
        h.take(),
        frames(
            1,
            &[r#"{"type":"ERROR","content":{"message":"Tool echo failed: HTTP 502"}}"#]
        )
    );
    // An error body for another id (or none) is no answer either.
    call(&mut h, 2, "echo");
    let p = h.post().unwrap();
    let other = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#;
    h.respond(p.stream, 400, "application/json", None, other, 64);
    assert_eq!(
        h.take(),
        frames(
            2,
            &[r#"{"type":"ERROR","content":{"message":"Tool echo failed: HTTP 400"}}"#]
        )
    );
    assert_eq!(h.c.in_flight(), 0);
}

#[test]
fn a_stream_that_breaks_fails_its_call_once_and_it_is_never_sent_again() {
    for (status, ct, body) in [
        (200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":3,\"progress\":1}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"res"),
        (200, "application/json", ""),
        (202, "", ""),
    ] {
        let mut h = modern(2);
        call(&mut h, 0, "echo");
        let p = h.post().unwrap();
        h.respond(p.stream, status, ct, None, body, 11);
        let seen = h.take();
        let last = seen.last().unwrap();
        assert_eq!(
            last,
            &Seen::Frame(
                0,
                r#"{"type":"ERROR","content":{"message":"Tool echo failed: the MCP server closed the connection"}}"#.into()
            ),
            "{status} {ct}"
        );
        assert_eq!(h.post(), None, "nothing is sent again");
        assert_eq!(h.c.in_flight(), 0);
    }
    // A POST that got no response at all.
    let mut h = modern(2);
    call(&mut h, 0, "echo");
    let p = h.post().unwrap();
    h.c.handle_response_end(p.stream).unwrap();
    assert_eq!(
        h.take(),
        frames(
            0,
            &[
                r#"{"type":"ERROR","content":{"message":"Tool echo failed: the MCP server closed the connection"}}"#
            ]
        )
    );
}

#[test]
fn streams_interleaved_wait_for_the_one_whose_message_is_unfinished() {
    let mut h = modern(3);
    call(&mut h, 0, "echo");
    call(&mut h, 1, "echo");
    let a = h.post().unwrap();
    let b = h.post().unwrap();
    assert_eq!((a.stream, b.stream), (0, 1));
    h.c.handle_response(0, 200, b"text/event-stream", None)
        .unwrap();
    h.c.handle_response(1, 200, b"text/event-stream", None)
        .unwrap();
    let ev_a = format!("data: {RESULT_3}\n\n");
    let ev_b = r#"data: {"jsonrpc":"2.0","id":4,"result":{"structuredContent":{"n":2}}}

"#;
    // A's message begins: B's bytes wait, whatever they are.
    assert_eq!(h.c.feed_response(0, &ev_a.as_bytes()[..20]).unwrap(), 20);
    assert_eq!(h.c.feed_response(1, ev_b.as_bytes()).unwrap(), 0);
    assert_eq!(
        h.c.feed_response(0, &ev_a.as_bytes()[20..]).unwrap(),
        ev_a.len() - 20
    );
    assert_eq!(h.take(), frames(0, &ECHO_FRAMES));
    h.feed(1, ev_b.as_bytes(), 1 << 10);
    assert_eq!(
        h.take(),
        frames(
            1,
            &[
                r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{"n":2}}}"#,
                r#"{"type":"END"}"#
            ]
        )
    );
    h.c.handle_response_end(0).unwrap();
    h.c.handle_response_end(1).unwrap();
    assert_eq!(h.take(), []);
    // An unfinished message owes nothing until it ends: another stream's end waits for nothing.
    assert_eq!(h.c.in_flight(), 0);
}

#[test]
fn a_cancelled_2026_call_closes_its_stream_and_nothing_after_applies() {
    let mut h = modern(2);
    call(&mut h, 0, "echo");
    let p = h.post().unwrap();
    h.c.handle_response(p.stream, 200, b"text/event-stream", None)
        .unwrap();
    let cancel = br#"{"type":"CANCEL","content":{"reason":"timeout"}}"#;
    assert_eq!(
        h.c.handle_frame(CallHandle::from_parts(0, 0), cancel),
        Ok(McpHandled::Cancelled { notified: true })
    );
    let (mut body, mut headers) = (vec![0u8; 4096], vec![0u8; 1 << 14]);
    assert_eq!(
        h.c.poll_request(&mut body, &mut headers),
        Ok(Some(McpPost::Close { stream: p.stream }))
    );
    // No notifications/cancelled is posted over HTTP in 2026-07-28.
    assert_eq!(h.c.poll_request(&mut body, &mut headers), Ok(None));
    assert_eq!(
        h.c.feed_response(p.stream, format!("data: {RESULT_3}\n\n").as_bytes()),
        Err(McpStreamError::UnknownStream)
    );
    assert_eq!(
        h.c.handle_response_end(p.stream),
        Err(McpStreamError::UnknownStream)
    );
    assert_eq!(h.take(), []);
    assert_eq!(h.c.in_flight(), 0);
}

#[test]
fn a_2025_server_over_http_session_initialized_and_a_new_session_after_404() {
    let mut h = host(McpConfig::DEFAULT, 2);
    let p = h.post().unwrap();
    // server-everything before `initialize`: 400 and an error with a null id.
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;
    h.respond(p.stream, 400, "application/json", None, refused, 1 << 10);
    let p = h.post().unwrap();
    assert_eq!(
        p.body,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
    );
    assert_eq!(p.headers, COMMON);
    let init = r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"0"}}}"#;
    let sse = format!("event: message\nid: 1\ndata: {init}\n\n");
    h.respond(p.stream, 200, "text/event-stream", Some("sess-1"), &sse, 13);
    let p = h.post().unwrap();
    assert_eq!(
        p.body,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let with_session =
        format!("{COMMON}MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: sess-1\r\n");
    assert_eq!(p.headers, with_session);
    // tools/list waits for the notification's response head: on two POSTs at once the server
    // may answer the listing before it handled the notification.
    assert!(
        h.post().is_none(),
        "tools/list posted before notifications/initialized was answered"
    );
    h.respond(p.stream, 202, "", None, "", 1);
    let p = h.post().unwrap();
    assert_eq!(p.body, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert_eq!(p.headers, with_session);
    h.respond(
        p.stream,
        200,
        "application/json",
        None,
        &list_result(3, &["echo"]),
        8,
    );
    assert_eq!(
        h.take(),
        [
            Seen::Event("initialized 2025-11-25".into()),
            Seen::Event("tool echo".into()),
            Seen::Event("ready 1".into())
        ]
    );
    // The session is gone on the server: the call fails, a new session starts, once.
    call(&mut h, 0, "echo");
    let p = h.post().unwrap();
    assert_eq!(p.headers, with_session);
    h.respond(p.stream, 404, "text/plain", None, "Session not found", 4);
    assert_eq!(
        h.take(),
        frames(
            0,
            &[r#"{"type":"ERROR","content":{"message":"Tool echo failed: HTTP 404"}}"#]
        )
    );
    let p = h.post().unwrap();
    assert!(p.body.contains(r#""method":"initialize""#), "{}", p.body);
    assert_eq!(
        p.headers,
        format!("{COMMON}MCP-Protocol-Version: 2025-11-25\r\n")
    );
    h.respond(
        p.stream,
        200,
        "application/json",
        Some("sess-2"),
        &init.replace("\"id\":2", "\"id\":5"),
        8,
    );
    let p = h.post().unwrap();
    assert_eq!(
        p.body,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    h.respond(p.stream, 202, "", None, "", 1);
    // No second listing: the tools are known. A call goes with the new session.
    assert_eq!(h.take(), [Seen::Event("initialized 2025-11-25".into())]);
    assert_eq!(h.c.state(), McpState::Ready);
    call(&mut h, 1, "echo");
    let p = h.post().unwrap();
    assert!(
        p.body.contains(r#""id":6,"method":"tools/call""#),
        "{}",
        p.body
    );
    assert_eq!(
        p.headers,
        format!("{COMMON}MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: sess-2\r\n")
    );
}

#[test]
fn the_probe_falls_back_on_any_4xx_and_a_fixed_2026_client_fails() {
    let mut h = host(McpConfig::DEFAULT, 1);
    let p = h.post().unwrap();
    h.respond(p.stream, 405, "text/html", None, "<p>no</p>", 3);
    assert!(h.post().unwrap().body.contains(r#""method":"initialize""#));
    let cfg = McpConfig {
        revision: McpRevision::V2026_07_28,
        ..McpConfig::DEFAULT
    };
    let mut h = host(cfg, 1);
    let p = h.post().unwrap();
    h.respond(p.stream, 404, "text/plain", None, "not here", 3);
    assert_eq!(
        h.take(),
        [Seen::Event(format!(
            "failed {:?}",
            McpStartError::NoResponse { status: 404 }
        ))]
    );
    assert_eq!(h.c.state(), McpState::Failed);
    assert_eq!(h.post(), None);
}

#[test]
fn a_name_that_is_no_plain_header_value_goes_as_base64() {
    let mut h = host(McpConfig::DEFAULT, 2);
    let p = h.post().unwrap();
    h.respond(
        p.stream,
        200,
        "application/json",
        None,
        &discover_result(false),
        64,
    );
    let p = h.post().unwrap();
    h.respond(
        p.stream,
        200,
        "application/json",
        None,
        &list_result(2, &["größe"]),
        64,
    );
    h.take();
    call(&mut h, 0, "größe");
    let p = h.post().unwrap();
    assert!(
        p.headers.ends_with("Mcp-Name: =?base64?Z3LDtsOfZQ==?=\r\n"),
        "{}",
        p.headers
    );
}

#[test]
fn refusals_change_nothing() {
    let mut h = host(McpConfig::DEFAULT, 2);
    // A header buffer shorter than the bound: told, and the discover is still the next POST.
    let (mut body, mut small) = (vec![0u8; 4096], vec![0u8; 16]);
    let needed = McpConfig::DEFAULT.max_headers_len();
    assert_eq!(
        h.c.poll_request(&mut body, &mut small).unwrap_err().needed,
        needed
    );
    let p = h.post().unwrap();
    assert!(p.body.contains("server/discover"));
    assert_eq!(
        h.c.feed_response(p.stream, b"{}"),
        Err(McpStreamError::NoHead)
    );
    assert_eq!(
        h.c.handle_response(1, 200, b"application/json", None),
        Err(McpStreamError::UnknownStream)
    );
    assert_eq!(
        h.c.handle_response(9, 200, b"application/json", None),
        Err(McpStreamError::UnknownStream)
    );
    h.c.handle_response(p.stream, 200, b"application/json", None)
        .unwrap();
    assert_eq!(
        h.c.handle_response(p.stream, 200, b"application/json", None),
        Err(McpStreamError::HeadTwice)
    );
    h.feed(p.stream, discover_result(false).as_bytes(), 1 << 10);
    h.c.handle_response_end(p.stream).unwrap();
    // The Initialized event is owed: a head waits for it to be polled.
    let p2 = {
        let (mut b, mut hd) = (vec![0u8; 4096], vec![0u8; 1 << 14]);
        match h.c.poll_request(&mut b, &mut hd).unwrap().unwrap() {
            McpPost::Post { stream, .. } => stream,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        h.c.handle_response(p2, 200, b"application/json", None),
        Err(McpStreamError::PollFirst)
    );
    assert_eq!(h.take(), [Seen::Event("initialized 2026-07-28".into())]);
    h.c.handle_response(p2, 200, b"application/json", None)
        .unwrap();
    // A line client is no HTTP one.
    let slots = Box::leak(vec![McpSlot::EMPTY; 1].into_boxed_slice());
    let arena = Box::leak(vec![0u8; McpConfig::DEFAULT.arena_len(1)].into_boxed_slice());
    let mut line = McpClient::new(McpConfig::DEFAULT, INFO, slots, arena).unwrap();
    assert_eq!(line.feed_response(0, b"x"), Err(McpStreamError::NotHttp));
    assert!(!line.is_http());
}

mod hostile {
    //! Any responses: any status, content type and bytes, split anywhere and interleaved
    //! across streams. No panic; every call gets exactly one result; nothing is left in
    //! flight once every stream ended.

    use super::*;
    use polyweave_tests::proptest_cases;
    use proptest::prelude::*;

    /// One response: status (0: none at all), content type, its body's pieces.
    #[derive(Clone, Debug)]
    struct Response {
        status: u16,
        ct: &'static str,
        pieces: Vec<Vec<u8>>,
    }

    fn body(id: u64) -> impl Strategy<Value = Vec<u8>> {
        let result = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
        );
        let error =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"no"}}}}"#);
        let input =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required"}}}}"#);
        let progress = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1}}}}"#
        );
        let wrong = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, id + 7);
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"x":"{}"}}}}"#,
            "y".repeat(9000)
        );
        let msgs = prop::sample::select(vec![
            result,
            error,
            input,
            progress,
            wrong,
            big,
            "{\"jsonrpc\":".into(),
            "\u{feff}[]".into(),
        ]);
        let sse = prop::collection::vec((msgs.clone(), any::<bool>()), 0..4).prop_map(|ms| {
            ms.into_iter()
                .flat_map(|(m, crlf)| {
                    let nl = if crlf { "\r\n" } else { "\n" };
                    format!(": c{nl}event: message{nl}data: {m}{nl}{nl}").into_bytes()
                })
                .collect::<Vec<u8>>()
        });
        prop_oneof![
            msgs.prop_map(String::into_bytes),
            sse,
            prop::collection::vec(any::<u8>(), 0..64),
        ]
    }

    fn response(id: u64) -> impl Strategy<Value = Response> {
        let status = prop::sample::select(vec![0u16, 200, 200, 200, 202, 400, 404, 500]);
        let ct = prop::sample::select(vec![
            "application/json",
            "text/event-stream",
            "text/html",
            "",
        ]);
        (
            status,
            ct,
            body(id),
            prop::collection::vec(1usize..40, 1..8),
        )
            .prop_map(|(status, ct, body, cuts)| {
                let mut pieces = Vec::new();
                let mut rest = &body[..];
                for c in cuts.iter().cycle() {
                    if rest.is_empty() {
                        break;
                    }
                    let n = (*c).min(rest.len());
                    pieces.push(rest[..n].to_vec());
                    rest = &rest[n..];
                }
                Response { status, ct, pieces }
            })
    }

    fn case() -> impl Strategy<Value = (Vec<Response>, Vec<usize>)> {
        (1u64..5).prop_flat_map(|calls| {
            let rs: Vec<_> = (0..calls).map(|i| response(3 + i)).collect();
            (rs, prop::collection::vec(0usize..16, 0..200))
        })
    }

    /// A stream being answered: its response and the bytes not yet taken.
    struct Open {
        stream: u16,
        status: u16,
        left: std::collections::VecDeque<Vec<u8>>,
    }

    fn run(responses: &[Response], order: &[usize]) {
        let mut h = modern(3);
        for i in 0..responses.len() {
            call(&mut h, i as u32, "echo");
        }
        let mut open: Vec<Open> = Vec::new();
        let mut posted = 0;
        // The order streams are served in: the case's, then round-robin.
        let mut pick = order.iter().copied().chain(0..);
        for round in 0.. {
            assert!(round < 100_000, "no progress");
            while let Some(p) = h.post() {
                let id = p
                    .body
                    .split("\"id\":")
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .next()
                    .unwrap();
                let resp = &responses[id.parse::<usize>().unwrap() - 3];
                posted += 1;
                if resp.status != 0 {
                    h.c.handle_response(p.stream, resp.status, resp.ct.as_bytes(), None)
                        .unwrap();
                }
                open.push(Open {
                    stream: p.stream,
                    status: resp.status,
                    left: resp.pieces.iter().cloned().collect(),
                });
            }
            if open.is_empty() {
                break;
            }
            let k = pick.next().unwrap() % open.len();
            h.drain();
            let o = &mut open[k];
            match o.left.pop_front() {
                Some(piece) if o.status != 0 => {
                    // Fewer bytes taken (none while another stream's message is unfinished):
                    // the rest waits for this stream's next turn.
                    let took = h.c.feed_response(o.stream, &piece).unwrap();
                    if took < piece.len() {
                        o.left.push_front(piece[took..].to_vec());
                    }
                }
                _ => {
                    h.c.handle_response_end(o.stream).unwrap();
                    open.remove(k);
                }
            }
        }
        assert_eq!(posted, responses.len(), "every call posted once");
        let seen = h.take();
        for i in 0..responses.len() as u32 {
            let ends = seen
                .iter()
                .filter(|s| match s {
                    Seen::Frame(c, f) => {
                        *c == i && (f == r#"{"type":"END"}"# || f.starts_with(r#"{"type":"ERROR""#))
                    }
                    Seen::Event(_) => false,
                })
                .count();
            assert_eq!(ends, 1, "call {i}: {seen:?}");
        }
        assert_eq!(h.c.in_flight(), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: proptest_cases(256),
            ..ProptestConfig::default()
        })]

        #[test]
        fn any_responses_answer_every_call_once((responses, order) in case()) {
            run(&responses, &order);
        }
    }
}

/// The fuzz target's run (`polyweave_tests::mcp_http_hostile`) on seeded random inputs.
#[test]
fn hostile_http_servers_from_random_bytes() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for case in 0..polyweave_tests::proptest_cases(3000) {
        let mut bytes = vec![0u8; (case as usize * 7) % 600];
        for b in &mut bytes {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        polyweave_tests::mcp_http_hostile::run(&bytes);
    }
}

/// A 2026-07-28 client listing `tools` (entries as JSON); the events of the listing.
fn listing(cfg: McpConfig, tools: &[&str]) -> (Host, Vec<Seen>) {
    // A stream for each call the tests leave unanswered.
    let mut h = host(cfg, 6);
    let p = h.post().unwrap();
    h.respond(
        p.stream,
        200,
        "application/json",
        None,
        &discover_result(false),
        1 << 16,
    );
    let p = h.post().unwrap();
    let list = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"complete","tools":[{}]}}}}"#,
        tools.join(",")
    );
    h.respond(p.stream, 200, "application/json", None, &list, 1 << 16);
    let seen = h.take();
    (h, seen)
}

fn skipped(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Event(e) if e.starts_with("ToolSkipped") => {
                Some(e.split(", tool").next().unwrap().to_string())
            }
            _ => None,
        })
        .collect()
}

const ANNOTATED: &str = r#"{"name":"sql","inputSchema":{"type":"object","properties":{
    "region":{"type":"string","x-mcp-header":"Region"},
    "n":{"type":"integer","x-mcp-header":"N"},
    "flag":{"type":"boolean","x-mcp-header":"Flag"},
    "nested":{"type":"object","properties":{"deep":{"type":"string","x-mcp-header":"Deep"}}},
    "query":{"type":"string","description":"not \"x-mcp-header\": mirrored"}}}}"#;

fn call_args(h: &mut Host, index: u32, name: &str, args: &str) -> Post {
    let frame = format!(r#"{{"type":"TOOL_CALL","content":{{"name":"{name}","args":{args}}}}}"#);
    let r =
        h.c.handle_frame(CallHandle::from_parts(0, index), frame.as_bytes());
    assert!(matches!(r, Ok(McpHandled::Sent { .. })), "{r:?}");
    h.post().unwrap()
}

#[test]
fn x_mcp_header_parameters_are_mirrored_along_their_properties_chain() {
    let (mut h, seen) = listing(McpConfig::DEFAULT, &[ANNOTATED]);
    assert_eq!(skipped(&seen), Vec::<String>::new());
    let head = format!(
        "{COMMON}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: sql\r\n"
    );
    let p = call_args(
        &mut h,
        0,
        "sql",
        r#"{"query":"q","flag":true,"n":42,"region":"us-west1","nested":{"deep":"Hello, \u4e16\u754c"}}"#,
    );
    assert_eq!(
        p.headers,
        format!("{head}Mcp-Param-Region: us-west1\r\nMcp-Param-N: 42\r\nMcp-Param-Flag: true\r\nMcp-Param-Deep: =?base64?SGVsbG8sIOS4lueVjA==?=\r\n")
    );
    // Absent values, and values that are no header's (a fraction, past 2^53 - 1, an object
    // where a string goes), leave their headers out; the body is the same either way.
    let p = call_args(
        &mut h,
        1,
        "sql",
        r#"{"n":1.5,"region":{"a":1},"flag":false}"#,
    );
    assert_eq!(p.headers, format!("{head}Mcp-Param-Flag: false\r\n"));
    let p = call_args(&mut h, 2, "sql", r#"{"n":9007199254740992,"nested":{}}"#);
    assert_eq!(p.headers, head);
    let p = call_args(
        &mut h,
        3,
        "sql",
        r#"{"n":-9007199254740991,"region":" padded "}"#,
    );
    assert_eq!(
        p.headers,
        format!(
            "{head}Mcp-Param-Region: =?base64?IHBhZGRlZCA=?=\r\nMcp-Param-N: -9007199254740991\r\n"
        )
    );
}

#[test]
fn tools_with_annotations_the_revision_forbids_are_not_offered() {
    let bad = [
        // Under `items`, under `anyOf`, at the root, on a number, twice the same header in
        // any case, empty, not a token, not a string.
        r#"{"name":"b1","inputSchema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}}"#,
        r#"{"name":"b2","inputSchema":{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}}"#,
        r#"{"name":"b3","inputSchema":{"type":"object","x-mcp-header":"Root"}}"#,
        r#"{"name":"b4","inputSchema":{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}}"#,
        r#"{"name":"b5","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Id"},"b":{"type":"string","x-mcp-header":"ID"}}}}"#,
        r#"{"name":"b6","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}}"#,
        r#"{"name":"b7","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a b"}}}}"#,
        r#"{"name":"b8","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}}"#,
        r#"{"name":"b9","inputSchema":{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}}"#,
    ];
    let mut tools: Vec<&str> = bad.to_vec();
    tools.push(ANNOTATED);
    tools.push(r#"{"name":"plain","inputSchema":{"type":"object"}}"#);
    let (mut h, seen) = listing(McpConfig::DEFAULT, &tools);
    assert_eq!(
        skipped(&seen),
        vec!["ToolSkipped { reason: BadHeaderAnnotation"; 9]
    );
    let listed: Vec<&Seen> = seen
        .iter()
        .filter(|s| matches!(s, Seen::Event(e) if e.starts_with("tool ")))
        .collect();
    assert_eq!(
        listed,
        [
            &Seen::Event("tool sql".into()),
            &Seen::Event("tool plain".into())
        ]
    );
    assert_eq!(seen.last(), Some(&Seen::Event("ready 2".into())));
    // What the refused tools left in the table is gone: the kept tool's headers are right.
    let p = call_args(&mut h, 0, "sql", r#"{"region":"r"}"#);
    assert!(
        p.headers
            .ends_with("Mcp-Name: sql\r\nMcp-Param-Region: r\r\n"),
        "{}",
        p.headers
    );
}

#[test]
fn a_table_too_small_skips_the_tool_and_says_so() {
    let cfg = McpConfig {
        header_table_cap: 16,
        ..McpConfig::DEFAULT
    };
    let (_, seen) = listing(cfg, &[ANNOTATED, r#"{"name":"plain"}"#]);
    assert_eq!(
        skipped(&seen),
        ["ToolSkipped { reason: HeaderTableFull { cap: 16 }"]
    );
    assert_eq!(seen.last(), Some(&Seen::Event("ready 1".into())));
}

#[test]
fn a_2025_session_and_a_line_client_mirror_no_parameters() {
    // Over stdio the annotations are not checked (the revision allows ignoring them).
    let slots = Box::leak(vec![McpSlot::EMPTY; 1].into_boxed_slice());
    let arena = Box::leak(vec![0u8; McpConfig::DEFAULT.arena_len(1)].into_boxed_slice());
    let mut line = McpClient::new(McpConfig::DEFAULT, INFO, slots, arena).unwrap();
    line.start(Instant::ZERO).unwrap();
    let mut out = vec![0u8; 1 << 14];
    line.poll_transmit(&mut out).unwrap().unwrap();
    line.feed(format!("{}\n", discover_result(false)).as_bytes());
    while line.poll_event().is_some() {}
    line.poll_transmit(&mut out).unwrap().unwrap();
    let list = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{}]}}}}"#,
        ANNOTATED.replace('\n', "")
    );
    line.feed(format!("{list}\n").as_bytes());
    let mut names = Vec::new();
    while let Some(ev) = line.poll_event() {
        names.push(format!("{ev:?}").split(',').next().unwrap().to_string());
    }
    assert_eq!(names, [r#"Tool { name: "sql""#, "Ready { tools: 1 }"]);
}
