//! The MCP client over Streamable HTTP through its C ABI, called from Rust as C would call
//! it: recorded exchanges byte for byte (each POST's body and header lines, responses split
//! in small pieces), a 2026-07-28 server with JSON and event-stream responses, a 2025-11-25
//! server with its session id, an HTTP 500, a cancel closing its stream; every refusal its
//! own code, with nothing changed.

use core::ffi::c_void;
use std::mem::MaybeUninit;
use std::ptr;

use polyweave_tool_adapter_ffi::*;

mod support;

use support::{out_or_code, text, written};

const NAME: &[u8] = b"t";
const VERSION: &[u8] = b"1";
const ENVELOPE: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}"#;
const COMMON: &str =
    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
const RESULT_3: &str =
    r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
const ECHO_FRAMES: [&str; 2] = [
    r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":[{"type":"text","text":"hi"}]}}"#,
    r#"{"type":"END"}"#,
];

fn config() -> pw_mcp_config {
    // SAFETY: one write.
    written(|c| unsafe { pw_mcp_config_default(c) })
}

/// A client over HTTP with `streams` streams and 4 call slots, in its own block.
struct Client {
    c: *mut pw_mcp,
    _block: Vec<u64>,
}

fn http_size(cfg: &pw_mcp_config, calls: usize, streams: usize) -> Result<usize, pw_result> {
    // SAFETY: valid pointers.
    out_or_code(|n| unsafe { pw_mcp_http_size(cfg, calls, streams, n) })
}

fn client(cfg: &pw_mcp_config, streams: usize) -> Client {
    let size = http_size(cfg, 4, streams).unwrap();
    let mut block = vec![0u64; size.div_ceil(8)];
    let mut c = ptr::null_mut();
    // SAFETY: the block outlives the client (both in `Client`); the texts are copied.
    let r = unsafe {
        pw_mcp_http_init(
            block.as_mut_ptr().cast::<c_void>(),
            size,
            cfg,
            4,
            streams,
            NAME.as_ptr(),
            NAME.len(),
            VERSION.as_ptr(),
            VERSION.len(),
            &mut c,
        )
    };
    assert_eq!(r, pw_result::PW_OK);
    // SAFETY: a client from pw_mcp_http_init.
    assert_eq!(unsafe { pw_mcp_start(c, 0) }, pw_result::PW_OK);
    Client { c, _block: block }
}

/// What the host saw: events and frames (with their call's index).
#[derive(Debug, PartialEq)]
enum Seen {
    Event(String),
    Frame(u32, String),
}

impl Client {
    /// The next request, its code and `pw_mcp_post` (body and headers as text).
    fn poll(
        &self,
        body_cap: usize,
        headers_cap: usize,
    ) -> (pw_result, pw_mcp_post, String, String) {
        let (mut body, mut headers) = (vec![0u8; body_cap], vec![0u8; headers_cap]);
        // Zeroed: a refusal writes nothing, and kind 0 is a valid `pw_mcp_post_kind`.
        let mut out = MaybeUninit::<pw_mcp_post>::zeroed();
        // SAFETY: valid, disjoint buffers outside the client's block.
        let r = unsafe {
            pw_mcp_poll_request(
                self.c,
                body.as_mut_ptr(),
                body_cap,
                headers.as_mut_ptr(),
                headers_cap,
                out.as_mut_ptr(),
            )
        };
        // SAFETY: zeroed, or written by the call.
        let out = unsafe { out.assume_init() };
        let b = String::from_utf8(body[..out.body_len.min(body_cap)].to_vec()).unwrap();
        let h = String::from_utf8(headers[..out.headers_len.min(headers_cap)].to_vec()).unwrap();
        (r, out, b, h)
    }

    /// The next POST as (stream, body, headers), or `None`; panics on a close.
    fn post(&mut self) -> Option<(u16, String, String)> {
        let (r, out, body, headers) = self.poll(1 << 14, 1 << 14);
        match r {
            pw_result::PW_NOTHING => {
                assert_eq!((out.stream, out.body_len, out.headers_len), (0, 0, 0));
                None
            }
            pw_result::PW_OK => {
                assert_eq!(out.kind, pw_mcp_post_kind::PW_MCP_POST);
                assert_eq!(out.reserved, 0);
                Some((out.stream, body, headers))
            }
            e => panic!("{e:?}"),
        }
    }

    fn take(&mut self) -> Vec<Seen> {
        let mut seen = Vec::new();
        loop {
            let before = seen.len();
            let mut ev = MaybeUninit::<pw_mcp_event>::uninit();
            // SAFETY: valid pointers.
            while unsafe { pw_mcp_poll_event(self.c, ev.as_mut_ptr()) } == pw_result::PW_OK {
                // SAFETY: written on PW_OK.
                let ev = unsafe { ev.assume_init() };
                seen.push(Seen::Event(match ev.kind {
                    pw_mcp_event_kind::PW_MCP_EVENT_INITIALIZED => {
                        format!("initialized {}", text(&ev.version))
                    }
                    pw_mcp_event_kind::PW_MCP_EVENT_TOOL => format!("tool {}", text(&ev.name)),
                    pw_mcp_event_kind::PW_MCP_EVENT_READY => format!("ready {}", ev.tools),
                    k => format!("{k:?}"),
                }));
            }
            let mut buf = [0u8; 1024];
            let mut f = MaybeUninit::<pw_mcp_frame>::uninit();
            // SAFETY: valid pointers, outside the client's block.
            while unsafe { pw_mcp_poll_frame(self.c, buf.as_mut_ptr(), buf.len(), f.as_mut_ptr()) }
                == pw_result::PW_OK
            {
                // SAFETY: written on PW_OK.
                let f = unsafe { f.assume_init() };
                let t = String::from_utf8(buf[..f.len].to_vec()).unwrap();
                seen.push(Seen::Frame(f.index, t));
            }
            if seen.len() == before {
                return seen;
            }
        }
    }

    fn head(&self, stream: u16, status: u16, ct: &str, session: Option<&str>) -> pw_result {
        let (sp, sl) = session.map_or((ptr::null(), 0), |s| (s.as_ptr(), s.len()));
        // SAFETY: valid pointers outside the client's block; a NULL session is none.
        unsafe { pw_mcp_handle_response(self.c, stream, status, ct.as_ptr(), ct.len(), sp, sl) }
    }

    fn feed(&self, stream: u16, bytes: &[u8]) -> Result<usize, pw_result> {
        // SAFETY: valid pointers outside the client's block.
        out_or_code(|n| unsafe {
            pw_mcp_feed_response(self.c, stream, bytes.as_ptr(), bytes.len(), n)
        })
    }

    fn end(&self, stream: u16) -> pw_result {
        // SAFETY: a client from pw_mcp_http_init.
        unsafe { pw_mcp_handle_response_end(self.c, stream) }
    }

    /// A whole response, its body fed in pieces of `piece` bytes, draining in between;
    /// what the host saw.
    fn respond(
        &mut self,
        stream: u16,
        status: u16,
        ct: &str,
        session: Option<&str>,
        body: &str,
        piece: usize,
    ) -> Vec<Seen> {
        assert_eq!(self.head(stream, status, ct, session), pw_result::PW_OK);
        let mut seen = Vec::new();
        let mut rest = body.as_bytes();
        while !rest.is_empty() {
            let took = self.feed(stream, &rest[..piece.min(rest.len())]).unwrap();
            assert!(took > 0, "stream {stream} took nothing");
            rest = &rest[took..];
            seen.extend(self.take());
        }
        assert_eq!(self.end(stream), pw_result::PW_OK);
        seen.extend(self.take());
        seen
    }

    fn call(&mut self, index: u32, name: &str) {
        let f =
            format!(r#"{{"type":"TOOL_CALL","content":{{"name":"{name}","args":{{"m":"hi"}}}}}}"#);
        // SAFETY: valid pointers.
        let h = out_or_code(|out| unsafe {
            pw_mcp_handle_frame(self.c, 0, index, f.as_ptr(), f.len(), out)
        })
        .unwrap();
        assert_eq!(h.kind, pw_mcp_handled_kind::PW_MCP_HANDLED_SENT);
    }
}

fn frames(index: u32, texts: &[&str]) -> Vec<Seen> {
    texts
        .iter()
        .map(|t| Seen::Frame(index, (*t).into()))
        .collect()
}

fn discover_result() -> String {
    r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}}}}"#.into()
}

fn list_result(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","tools":[{{"name":"echo"}}]}}}}"#
    )
}

/// A 2026-07-28 client through the probe and the listing, each POST byte for byte.
fn modern(streams: usize) -> Client {
    let mut c = client(&config(), streams);
    let (stream, body, headers) = c.post().unwrap();
    assert_eq!(stream, 0);
    assert_eq!(
        body,
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{{{ENVELOPE}}}}}}}"#
        )
    );
    assert_eq!(
        headers,
        format!("{COMMON}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n")
    );
    assert_eq!(c.post(), None, "one request at a time at start-up");
    let seen = c.respond(
        0,
        200,
        "application/json; charset=utf-8",
        None,
        &discover_result(),
        7,
    );
    assert_eq!(seen, [Seen::Event("initialized 2026-07-28".into())]);
    let (stream, body, headers) = c.post().unwrap();
    assert_eq!(
        body,
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{{{ENVELOPE}}}}}}}"#
        )
    );
    assert_eq!(
        headers,
        format!("{COMMON}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n")
    );
    let seen = c.respond(stream, 200, "application/json", None, &list_result(2), 3);
    assert_eq!(
        seen,
        [
            Seen::Event("tool echo".into()),
            Seen::Event("ready 1".into())
        ]
    );
    c
}

#[test]
fn sizes_init_and_the_header_bound() {
    let cfg = config();
    let line = {
        let mut n = 0;
        // SAFETY: valid pointers.
        assert_eq!(unsafe { pw_mcp_size(&cfg, 4, &mut n) }, pw_result::PW_OK);
        n
    };
    let one = http_size(&cfg, 4, 1).unwrap();
    let three = http_size(&cfg, 4, 3).unwrap();
    assert!(one > line && one - line <= PW_MCP_MAX_STREAM_SIZE + PW_MAX_ALIGN);
    // Each stream costs the same: the block grows by one stream's bytes per stream.
    assert_eq!(three - one, 2 * (one - line));
    assert_eq!(http_size(&cfg, 4, 0), Err(pw_result::PW_BAD_ARGUMENT));
    assert_eq!(http_size(&cfg, 4, 65_536), Err(pw_result::PW_TOO_MANY));
    assert_eq!(http_size(&cfg, 65_536, 2), Err(pw_result::PW_TOO_MANY));
    let mut bad = cfg;
    bad.max_depth = 1;
    assert_eq!(http_size(&bad, 4, 2), Err(pw_result::PW_BAD_CONFIG));
    // Content-Type, Accept, MCP-Protocol-Version, Mcp-Method (160), then the longer of a
    // Base64 name of name_cap (64) bytes (12 + 11 + 88) and a session (20 + 128); then the
    // Mcp-Param-* lines: 8 bytes per byte of the 512-byte table, and the Base64 of an
    // outbox's worth (4,096) of values (11 + 4 * 1,366).
    // SAFETY: valid pointers.
    let headers = out_or_code(|n| unsafe { pw_mcp_max_headers_len(&cfg, n) });
    assert_eq!(headers, Ok(308 + 8 * 512 + 11 + 4 * 1366));

    // Too small a block, and no streams, place nothing.
    let mut block = vec![0u64; one.div_ceil(8)];
    let mut c = ptr::null_mut();
    for (len, streams, want) in [
        (one - 1, 1, pw_result::PW_STORAGE_TOO_SMALL),
        (one, 0, pw_result::PW_BAD_ARGUMENT),
        (one, 70_000, pw_result::PW_TOO_MANY),
    ] {
        // SAFETY: valid pointers; the block outlives every use.
        let r = unsafe {
            pw_mcp_http_init(
                block.as_mut_ptr().cast(),
                len,
                &cfg,
                4,
                streams,
                NAME.as_ptr(),
                NAME.len(),
                VERSION.as_ptr(),
                VERSION.len(),
                &mut c,
            )
        };
        assert_eq!((r, c.is_null()), (want, true));
    }
    let h = client(&cfg, 1);
    // SAFETY: clients from their inits; NULL is answered 0.
    unsafe {
        assert_eq!(pw_mcp_is_http(h.c), 1);
        assert_eq!(pw_mcp_is_http(ptr::null()), 0);
    }
}

#[test]
fn a_line_client_refuses_every_http_entry() {
    let cfg = config();
    let mut n = 0;
    // SAFETY: valid pointers.
    assert_eq!(unsafe { pw_mcp_size(&cfg, 4, &mut n) }, pw_result::PW_OK);
    let mut block = vec![0u64; n.div_ceil(8)];
    let mut c = ptr::null_mut();
    // SAFETY: the block outlives the client.
    let r = unsafe {
        pw_mcp_init(
            block.as_mut_ptr().cast(),
            n,
            &cfg,
            4,
            NAME.as_ptr(),
            NAME.len(),
            VERSION.as_ptr(),
            VERSION.len(),
            &mut c,
        )
    };
    assert_eq!(r, pw_result::PW_OK);
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_start(c, 0) }, pw_result::PW_OK);
    let line = Client { c, _block: block };
    // SAFETY: a client from pw_mcp_init.
    assert_eq!(unsafe { pw_mcp_is_http(c) }, 0);
    let (r, _, _, _) = line.poll(1024, 1 << 14);
    assert_eq!(r, pw_result::PW_MCP_NOT_HTTP);
    assert_eq!(
        line.head(0, 200, "application/json", None),
        pw_result::PW_MCP_NOT_HTTP
    );
    assert_eq!(line.feed(0, b"{}"), Err(pw_result::PW_MCP_NOT_HTTP));
    assert_eq!(line.end(0), pw_result::PW_MCP_NOT_HTTP);
    // Its line is still there for pw_mcp_poll_transmit.
    let mut buf = [0u8; 1024];
    let mut len = 0;
    // SAFETY: valid pointers.
    let r = unsafe { pw_mcp_poll_transmit(c, buf.as_mut_ptr(), buf.len(), &mut len) };
    assert_eq!(r, pw_result::PW_OK);
    assert!(buf[..len].starts_with(br#"{"jsonrpc":"2.0","id":1,"method":"server/discover""#));
}

#[test]
fn a_2026_server_json_and_event_stream_responses_in_small_pieces() {
    let mut c = modern(2);
    c.call(0, "echo");
    let (stream, body, headers) = c.post().unwrap();
    assert_eq!(
        body,
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"m":"hi"}},"_meta":{{"progressToken":3,{ENVELOPE}}}}}}}"#
        )
    );
    assert_eq!(
        headers,
        format!("{COMMON}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n")
    );
    assert_eq!(
        c.respond(stream, 200, "application/json", None, RESULT_3, 5),
        frames(0, &ECHO_FRAMES)
    );
    // An event stream: a priming event, a comment, progress, then the result, in 3s.
    c.call(1, "echo");
    let (stream, body, _) = c.post().unwrap();
    assert!(
        body.starts_with(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call""#),
        "{body}"
    );
    let result_4 = RESULT_3.replace(r#""id":3"#, r#""id":4"#);
    let sse = format!(
        "id: 0\ndata: \n\n: keep-alive\r\nevent: message\r\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":4,\"progress\":1}}}}\r\n\r\ndata: {result_4}\n\n"
    );
    let mut want = vec![Seen::Frame(
        1,
        r#"{"type":"PROGRESS","content":{"progressToken":4,"progress":1}}"#.into(),
    )];
    want.extend(frames(1, &ECHO_FRAMES));
    assert_eq!(
        c.respond(stream, 200, "text/event-stream", None, &sse, 3),
        want
    );
    // SAFETY: a client from pw_mcp_http_init.
    assert_eq!(unsafe { pw_mcp_in_flight(c.c) }, 0);
    assert_eq!(c.post(), None);
}

#[test]
fn an_http_500_fails_the_call_with_its_status() {
    let mut c = modern(2);
    c.call(0, "echo");
    let (stream, _, _) = c.post().unwrap();
    assert_eq!(
        c.respond(stream, 500, "text/plain", None, "Internal Server Error", 4),
        frames(
            0,
            &[r#"{"type":"ERROR","content":{"message":"Tool echo failed: HTTP 500"}}"#]
        )
    );
    assert_eq!(c.post(), None, "never sent again");
    // SAFETY: a client from pw_mcp_http_init.
    assert_eq!(unsafe { pw_mcp_in_flight(c.c) }, 0);
}

#[test]
fn a_cancel_closes_the_calls_stream() {
    let mut c = modern(2);
    c.call(0, "echo");
    let (stream, _, _) = c.post().unwrap();
    assert_eq!(
        c.head(stream, 200, "text/event-stream", None),
        pw_result::PW_OK
    );
    let cancel = r#"{"type":"CANCEL","content":{"reason":"timeout"}}"#;
    // SAFETY: valid pointers.
    let h = out_or_code(|out| unsafe {
        pw_mcp_handle_frame(c.c, 0, 0, cancel.as_ptr(), cancel.len(), out)
    })
    .unwrap();
    assert_eq!(
        (h.kind, h.notified),
        (pw_mcp_handled_kind::PW_MCP_HANDLED_CANCELLED, 1)
    );
    let (r, out, _, _) = c.poll(1024, 1 << 14);
    assert_eq!(r, pw_result::PW_OK);
    assert_eq!(
        (out.kind, out.stream, out.body_len, out.headers_len),
        (pw_mcp_post_kind::PW_MCP_POST_CLOSE, stream, 0, 0)
    );
    // No notifications/cancelled is posted in 2026-07-28: closing said it.
    assert_eq!(c.post(), None);
    let late = format!("data: {RESULT_3}\n\n");
    assert_eq!(
        c.feed(stream, late.as_bytes()),
        Err(pw_result::PW_MCP_UNKNOWN_STREAM)
    );
    assert_eq!(c.end(stream), pw_result::PW_MCP_UNKNOWN_STREAM);
    assert_eq!(c.take(), []);
    // SAFETY: a client from pw_mcp_http_init.
    assert_eq!(unsafe { pw_mcp_in_flight(c.c) }, 0);
}

#[test]
fn a_2025_server_with_its_session_id() {
    let mut c = client(&config(), 2);
    let (stream, _, _) = c.post().unwrap();
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;
    assert_eq!(
        c.respond(stream, 400, "application/json", None, refused, 16),
        []
    );
    let (stream, body, headers) = c.post().unwrap();
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
    );
    assert_eq!(headers, COMMON);
    let init = r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"0"}}}"#;
    let sse = format!("event: message\nid: 1\ndata: {init}\n\n");
    assert_eq!(
        c.respond(stream, 200, "text/event-stream", Some("sess-1"), &sse, 13),
        [Seen::Event("initialized 2025-11-25".into())]
    );
    let with_session =
        format!("{COMMON}MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: sess-1\r\n");
    let (stream, body, headers) = c.post().unwrap();
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    assert_eq!(headers, with_session);
    assert_eq!(c.respond(stream, 202, "", None, "", 1), []);
    let (stream, body, headers) = c.post().unwrap();
    assert_eq!(body, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    assert_eq!(headers, with_session);
    assert_eq!(
        c.respond(stream, 200, "application/json", None, &list_result(3), 8),
        [
            Seen::Event("tool echo".into()),
            Seen::Event("ready 1".into())
        ]
    );
    c.call(0, "echo");
    let (stream, body, headers) = c.post().unwrap();
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},"_meta":{"progressToken":4}}}"#
    );
    assert_eq!(headers, with_session);
    let result_4 = RESULT_3.replace(r#""id":3"#, r#""id":4"#);
    assert_eq!(
        c.respond(stream, 200, "application/json", None, &result_4, 6),
        frames(0, &ECHO_FRAMES)
    );
}

#[test]
fn each_refusal_has_its_code_and_changes_nothing() {
    let mut c = modern(3);
    c.call(0, "echo");
    c.call(1, "echo");
    // Buffers too small: the size needed in the short one's length, the request kept.
    const MAX_HEADERS: usize = 308 + 8 * 512 + 11 + 4 * 1366;
    let (r, out, _, _) = c.poll(1 << 14, MAX_HEADERS - 1);
    assert_eq!(r, pw_result::PW_BUFFER_TOO_SMALL);
    assert_eq!((out.body_len, out.headers_len), (0, MAX_HEADERS));
    let (r, out, _, _) = c.poll(10, 1 << 14);
    assert_eq!(r, pw_result::PW_BUFFER_TOO_SMALL);
    assert_eq!(out.headers_len, 0);
    assert!(out.body_len > 200, "{}", out.body_len);
    let (a, body_a, _) = c.post().unwrap();
    assert!(
        body_a.starts_with(r#"{"jsonrpc":"2.0","id":3,"#),
        "{body_a}"
    );
    let (b, body_b, _) = c.post().unwrap();
    assert!(
        body_b.starts_with(r#"{"jsonrpc":"2.0","id":4,"#),
        "{body_b}"
    );
    assert_eq!((a, b), (0, 1));
    // Streams no POST awaits: one past the end, one free.
    assert_eq!(
        c.head(3, 200, "application/json", None),
        pw_result::PW_MCP_UNKNOWN_STREAM
    );
    assert_eq!(
        c.head(2, 200, "application/json", None),
        pw_result::PW_MCP_UNKNOWN_STREAM
    );
    assert_eq!(c.feed(2, b"x"), Err(pw_result::PW_MCP_UNKNOWN_STREAM));
    assert_eq!(c.end(2), pw_result::PW_MCP_UNKNOWN_STREAM);
    // Body before the head.
    assert_eq!(
        c.feed(a, RESULT_3.as_bytes()),
        Err(pw_result::PW_MCP_NO_HEAD)
    );
    // The head twice.
    assert_eq!(c.head(a, 200, "application/json", None), pw_result::PW_OK);
    assert_eq!(
        c.head(a, 500, "text/plain", None),
        pw_result::PW_MCP_HEAD_TWICE
    );
    // A's answer read but not polled: B's head and end wait, its bytes are not taken.
    assert_eq!(c.feed(a, RESULT_3.as_bytes()), Ok(RESULT_3.len()));
    assert_eq!(c.end(a), pw_result::PW_OK);
    assert_eq!(
        c.head(b, 200, "application/json", None),
        pw_result::PW_MCP_POLL_FIRST
    );
    assert_eq!(c.end(b), pw_result::PW_MCP_POLL_FIRST);
    // Argument checks: NULLs, and an output inside the input.
    let mut n = 0;
    // SAFETY: NULLs are refused before any use; the other pointers are valid.
    unsafe {
        assert_eq!(
            pw_mcp_handle_response(c.c, b, 200, ptr::null(), 0, ptr::null(), 0),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_mcp_feed_response(c.c, b, ptr::null(), 0, &mut n),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_mcp_handle_response_end(ptr::null_mut(), b),
            pw_result::PW_NULL_POINTER
        );
        let mut both = [0u8; 64];
        let p = both.as_mut_ptr();
        assert_eq!(
            pw_mcp_poll_request(c.c, p, 64, p.add(32), 32, ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
        let mut out = MaybeUninit::<pw_mcp_post>::uninit();
        assert_eq!(
            pw_mcp_poll_request(c.c, p, 64, p.add(32), 32, out.as_mut_ptr()),
            pw_result::PW_STORAGE_OVERLAP
        );
    }
    // Nothing changed: A's frames, then B answered as if no refusal had come.
    assert_eq!(c.take(), frames(0, &ECHO_FRAMES));
    let result_4 = RESULT_3.replace(r#""id":3"#, r#""id":4"#);
    assert_eq!(
        c.respond(b, 200, "application/json", None, &result_4, 9),
        frames(1, &ECHO_FRAMES)
    );
    assert_eq!(c.post(), None);
    // SAFETY: a client from pw_mcp_http_init.
    assert_eq!(unsafe { pw_mcp_in_flight(c.c) }, 0);
}
