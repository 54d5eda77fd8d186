//! A hostile MCP server over Streamable HTTP, from bytes: each input byte picks the next
//! step — a call, a response head of any status and content type (or none at all), body
//! bytes of any kind split anywhere, a stream's end, a cancel, streams served in any
//! order. The client starts in 2026-07-28 or, after a refused probe, in 2025-11-25 with a
//! session. Then every stream ends; every call has had exactly one result, nothing is in
//! flight, every POST body is one compact JSON value and every header line `Name: value`
//! CRLF with no other control byte. The fuzz target `mcp_http` runs it on libFuzzer's
//! inputs, `tests/mcp_http_client.rs` on seeded random ones.

use std::collections::HashMap;

use polyweave_tool_adapter::mcp::http::{McpPost, McpStream, McpStreamError};
use polyweave_tool_adapter::mcp::{
    McpClient, McpClientInfo, McpConfig, McpEvent, McpHandled, McpSlot,
};
use polyweave_tool_adapter::{CallHandle, Instant};

use crate::mcp_hostile::Choices;

/// A message of some kind about request `id`.
fn message(c: &mut Choices<'_>, id: u64) -> String {
    match c.pick(10) {
        0 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#
        ),
        1 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"structuredContent":{{"a":1}},"resultType":"complete"}}}}"#
        ),
        2 => format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"no"}}}}"#),
        3 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"input_required"}}}}"#),
        4 => format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1}}}}"#
        ),
        5 => format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, id + 1),
        6 => {
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#.into()
        }
        7 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"x":"{}"}}}}"#,
            "y".repeat(2100)
        ),
        8 => r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into(),
        _ => String::from_utf8_lossy(&c.bytes(40)).into_owned(),
    }
}

/// A response body: JSON, events, or any bytes.
fn body(c: &mut Choices<'_>, id: u64) -> Vec<u8> {
    match c.pick(3) {
        0 => message(c, id).into_bytes(),
        1 => {
            let mut out = Vec::new();
            for _ in 0..c.pick(4) {
                let nl = if c.pick(2) == 0 { "\n" } else { "\r\n" };
                let m = message(c, id);
                out.extend(format!(": c{nl}id: 1{nl}data: {m}{nl}{nl}").into_bytes());
            }
            out
        }
        _ => c.bytes(120),
    }
}

/// Checks a POST: one compact JSON value as body; `Name: value` CRLF header lines.
fn check_post(body: &[u8], headers: &[u8]) {
    let v: serde_json::Value = serde_json::from_slice(body).expect("a POST body is JSON");
    assert_eq!(serde_json::to_vec(&v).unwrap().len(), body.len(), "compact");
    let text = std::str::from_utf8(headers).expect("headers are text");
    assert!(text.ends_with("\r\n"));
    for line in text.trim_end_matches("\r\n").split("\r\n") {
        let (name, value) = line.split_once(": ").expect("Name: value");
        assert!(
            name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'),
            "{name}"
        );
        assert!(
            value
                .bytes()
                .all(|b| b == b'\t' || (0x20..0x7f).contains(&b)),
            "{value:?}"
        );
    }
}

/// A stream being answered.
struct Open {
    stream: u16,
    rpc: u64,
    headed: bool,
    left: Vec<u8>,
}

/// Runs the input; panics when an invariant breaks.
pub fn run(data: &[u8]) {
    let mut c = Choices(data);
    let cfg = McpConfig {
        line_cap: 2048,
        ..McpConfig::DEFAULT
    };
    let mut slots = vec![McpSlot::EMPTY; 3];
    let mut streams = vec![McpStream::EMPTY; 1 + usize::from(c.pick(3))];
    let mut arena = vec![0u8; cfg.arena_len(slots.len())];
    let info = McpClientInfo::THIS_CRATE;
    let mut client = McpClient::new_http(cfg, info, &mut slots, &mut streams, &mut arena).unwrap();
    client.start(Instant::ZERO).unwrap();
    let (mut bbuf, mut hbuf, mut fbuf) = (
        vec![0u8; 1 << 14],
        vec![0u8; cfg.max_headers_len()],
        vec![0u8; 1 << 14],
    );
    let mut open: Vec<Open> = Vec::new();
    // Calls handed in, by handle index: results seen.
    let mut results: HashMap<u32, u32> = HashMap::new();
    let mut next_call = 0u32;
    let mut steps = 0;
    let mut draining = false;
    loop {
        steps += 1;
        assert!(steps < 20_000, "no progress");
        // Whatever the client owes, polled out.
        loop {
            let mut moved = false;
            while let Some(ev) = client.poll_event() {
                moved = true;
                let _ = matches!(ev, McpEvent::Ready { .. });
            }
            while let Some(f) = client.poll_frame(&mut fbuf).unwrap() {
                moved = true;
                let frame = &fbuf[..f.len];
                let end = frame == br#"{"type":"END"}"# || frame.starts_with(br#"{"type":"ERROR""#);
                if end {
                    *results.entry(f.handle.index()).or_default() += 1;
                }
            }
            match client.poll_request(&mut bbuf, &mut hbuf).unwrap() {
                Some(McpPost::Post {
                    stream,
                    body,
                    headers,
                }) => {
                    moved = true;
                    check_post(&bbuf[..body], &hbuf[..headers]);
                    let v: serde_json::Value = serde_json::from_slice(&bbuf[..body]).unwrap();
                    let rpc = v["id"].as_u64().unwrap_or(0);
                    open.push(Open {
                        stream,
                        rpc,
                        headed: false,
                        left: Vec::new(),
                    });
                }
                Some(McpPost::Close { stream }) => {
                    moved = true;
                    open.retain(|o| o.stream != stream);
                }
                None => {}
            }
            if !moved {
                break;
            }
        }
        let step = if c.0.is_empty() {
            draining = true;
            255
        } else {
            c.pick(8)
        };
        if draining && open.is_empty() {
            break;
        }
        match step {
            0 if next_call < 6 => {
                let frame = br#"{"type":"TOOL_CALL","content":{"name":"echo","args":{"m":1}}}"#;
                match client.handle_frame(CallHandle::from_parts(0, next_call), frame) {
                    Ok(McpHandled::Sent { .. } | McpHandled::Failed(_)) => {
                        results.insert(next_call, 0);
                    }
                    Ok(other) => panic!("{other:?}"),
                    Err(e) => panic!("{e:?}"),
                }
                next_call += 1;
            }
            1 if next_call > 0 => {
                let call = u32::from(c.pick(255)) % next_call;
                let cancel = br#"{"type":"CANCEL","content":{"reason":"t"}}"#;
                // A call already answered (or unknown) is refused and changes nothing.
                if client
                    .handle_frame(CallHandle::from_parts(0, call), cancel)
                    .is_ok()
                {
                    *results.entry(call).or_default() += 1;
                }
            }
            _ if open.is_empty() => {}
            _ => {
                let k = usize::from(c.pick(255)) % open.len();
                let o = &mut open[k];
                if !o.headed {
                    let status = [200u16, 200, 200, 202, 400, 404, 500, 0][usize::from(c.pick(8))];
                    let ct: &[u8] = [
                        &b"application/json"[..],
                        b"text/event-stream",
                        b"text/html",
                        b"",
                    ][usize::from(c.pick(4))];
                    o.headed = true;
                    if status == 0 {
                        // No response at all.
                        client.handle_response_end(o.stream).unwrap();
                        open.remove(k);
                        continue;
                    }
                    let session = (c.pick(4) == 0).then_some(&b"s-1"[..]);
                    match client.handle_response(o.stream, status, ct, session) {
                        Ok(()) => o.left = body(&mut c, o.rpc),
                        Err(McpStreamError::PollFirst) => o.headed = false,
                        Err(e) => panic!("{e:?}"),
                    }
                } else if o.left.is_empty() || (draining && c.pick(2) == 0) {
                    match client.handle_response_end(o.stream) {
                        Ok(()) => {
                            open.remove(k);
                        }
                        Err(McpStreamError::PollFirst) => {}
                        Err(e) => panic!("{e:?}"),
                    }
                } else {
                    let n = (1 + usize::from(c.pick(64))).min(o.left.len());
                    let took = client.feed_response(o.stream, &o.left[..n]).unwrap();
                    assert!(took <= n);
                    o.left.drain(..took);
                }
            }
        }
    }
    // Every stream ended: nothing waits, every call answered once.
    assert_eq!(client.in_flight(), 0, "{client:?}");
    for (call, n) in &results {
        assert_eq!(*n, 1, "call {call}: {n} results");
    }
}
