//! SPEC §4: every kind of bad input gets its own, exact error, and nothing is
//! written or lost when a call fails.

use polyweave_tool_adapter::frame::{Frame, FrameError, FrameKind, ToolCall};
use polyweave_tool_adapter::frame::{LineSplitter, LineTooLong};
use polyweave_tool_adapter::json::{self, JsonError, JsonErrorKind, JsonStr, DEFAULT_MAX_DEPTH};
use polyweave_tool_adapter::wrapper::typed::{self, TypedError};
use polyweave_tool_adapter::CallOutcome;
use polyweave_tool_adapter::{internals::OutFrame, BufferTooSmall};
use serde::{Deserialize, Serialize};

use JsonErrorKind::*;

fn json_err(kind: JsonErrorKind, at: usize) -> FrameError {
    FrameError::Json(JsonError { kind, at })
}

/// Both readers give `expected` (for input broken at or before `type`).
fn both(bytes: &[u8], expected: FrameError) {
    assert_eq!(
        Frame::parse(bytes),
        Err(expected),
        "parse {:?}",
        String::from_utf8_lossy(bytes)
    );
    assert_eq!(
        Frame::parse_validated(bytes, DEFAULT_MAX_DEPTH),
        Err(expected),
        "parse_validated {:?}",
        String::from_utf8_lossy(bytes)
    );
}

/// The lazy reader accepts (broken after `type`), the validating reader gives `expected`.
fn lazy_ok_validated_err(bytes: &[u8], kind: FrameKind<'_>, expected: FrameError) {
    assert_eq!(Frame::parse(bytes).map(|f| f.kind()), Ok(kind));
    assert_eq!(
        Frame::parse_validated(bytes, DEFAULT_MAX_DEPTH),
        Err(expected)
    );
}

// ---------------------------------------------------------------- frames

#[test]
fn not_an_object() {
    for bytes in [
        &b""[..],
        b"   \r\n\t",
        b"[1]",
        b"\"TEXT\"",
        b"null",
        b"7",
        b"type",
        b"}{\"type\":\"END\"}",
    ] {
        both(bytes, FrameError::NotAnObject);
    }
}

#[test]
fn byte_order_mark_is_malformed() {
    both(b"\xEF\xBB\xBF{\"type\":\"END\"}", FrameError::NotAnObject);
    both(b" \xEF\xBB\xBF{\"type\":\"END\"}", FrameError::NotAnObject);
    // White space around the object is fine (SPEC §7.17).
    let f = Frame::parse_validated(b" \t\r\n{\"type\":\"END\"} \t\r\n", DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(f.kind(), FrameKind::End);
    assert_eq!(f.trimmed(), b"{\"type\":\"END\"}");
}

#[test]
fn missing_type() {
    for bytes in [
        &b"{}"[..],
        b" { } ",
        b"{\"content\":\"x\"}",
        b"{\"Type\":\"TEXT\"}",
        b"{\"type \":\"TEXT\"}",
        b"{\"content\":{\"type\":\"TEXT\"}}",
    ] {
        both(bytes, FrameError::MissingType);
    }
}

#[test]
fn type_not_string() {
    for bytes in [
        &b"{\"type\":7}"[..],
        b"{\"type\":null}",
        b"{\"type\":true}",
        b"{\"type\":[\"TEXT\"]}",
        b"{\"type\":{\"TEXT\":1}}",
        b"{\"content\":\"x\", \"type\" : -0.5e3}",
    ] {
        both(bytes, FrameError::TypeNotString);
    }
}

#[test]
fn broken_at_or_before_type() {
    both(b"{", json_err(UnexpectedEnd, 1));
    both(b"{\"type\"", json_err(UnexpectedEnd, 7));
    both(b"{\"type\":", json_err(UnexpectedEnd, 8));
    both(b"{\"type\":\"TEXT", json_err(UnexpectedEnd, 13));
    both(b"{type:\"END\"}", json_err(UnexpectedByte, 1));
    both(b"{'type':'END'}", json_err(UnexpectedByte, 1));
    both(b"{\"type\" \"END\"}", json_err(UnexpectedByte, 8));
    both(b"{\"type\":END}", json_err(UnexpectedByte, 8));
    both(b"{,\"type\":\"END\"}", json_err(UnexpectedByte, 1));
    both(b"{\"a\":1 \"type\":\"END\"}", json_err(UnexpectedByte, 7));
    both(b"{\"n\":01,\"type\":\"END\"}", json_err(InvalidNumber, 6));
    both(b"{\"n\":-,\"type\":\"END\"}", json_err(InvalidNumber, 6));
    both(b"{\"n\":1.,\"type\":\"END\"}", json_err(InvalidNumber, 7));
    both(b"{\"n\":tru,\"type\":\"END\"}", json_err(UnexpectedByte, 8));
    both(b"{\"\\x\":1,\"type\":\"END\"}", json_err(InvalidEscape, 2));
    both(b"{\"type\":\"\\u12G4\"}", json_err(InvalidEscape, 13));
    both(b"{\"type\":\"TE\tXT\"}", json_err(ControlCharacter, 11));
    both(b"{\"type\":\"END\x00\"}", json_err(ControlCharacter, 12));
    both(
        b"{\"a\":[1,],\"type\":\"END\"}",
        json_err(UnexpectedByte, 8),
    );
    both(
        b"{\"a\":{\"b\":1,},\"type\":\"END\"}",
        json_err(UnexpectedByte, 12),
    );
}

#[test]
fn invalid_utf8() {
    // In `type` itself: both readers refuse it, at the first bad byte.
    both(b"{\"type\":\"\xff\"}", json_err(InvalidUtf8, 9));
    both(b"{\"type\":\"T\xc3\"}", json_err(InvalidUtf8, 10));
    // Overlong, surrogate, above U+10FFFF, lone continuation, truncated.
    for (bad, at) in [
        (&b"\xc0\x80"[..], 26),
        (b"\xed\xa0\x80", 26),
        (b"\xf4\x90\x80\x80", 26),
        (b"\x80", 26),
        (b"ab\xe2\x82", 28),
        (b"\xf8\x88\x80\x80\x80", 26),
    ] {
        let frame = [&b"{\"type\":\"TEXT\",\"content\":\""[..], bad, b"\"}"].concat();
        lazy_ok_validated_err(&frame, FrameKind::Text, json_err(InvalidUtf8, at));
    }
    // In a key.
    both(b"{\"\xfe\":1,\"type\":\"END\"}", json_err(InvalidUtf8, 2));
    // Valid multi-byte text is fine, raw or escaped.
    let f = Frame::parse_validated(
        "{\"type\":\"TEXT\",\"content\":\"天気 \\u5929\\u6c17 😀\"}".as_bytes(),
        32,
    );
    assert_eq!(f.map(|f| f.kind()), Ok(FrameKind::Text));
}

#[test]
fn trailing_garbage_on_a_validated_frame() {
    lazy_ok_validated_err(
        b"{\"type\":\"END\"} x",
        FrameKind::End,
        json_err(TrailingData, 15),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"END\"}{}",
        FrameKind::End,
        json_err(TrailingData, 14),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"END\"}\n{\"type\":\"END\"}",
        FrameKind::End,
        json_err(TrailingData, 15),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"END\"}}",
        FrameKind::End,
        json_err(TrailingData, 14),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"END\"} \x00",
        FrameKind::End,
        json_err(TrailingData, 15),
    );
}

#[test]
fn broken_after_type() {
    // Pass-through frames are read only as far as `type`; validated frames fail where the break is.
    lazy_ok_validated_err(
        b"{\"type\":\"TEXT\"",
        FrameKind::Text,
        json_err(UnexpectedEnd, 14),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"TEXT\",}",
        FrameKind::Text,
        json_err(UnexpectedByte, 15),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"TEXT\",\"content\":}",
        FrameKind::Text,
        json_err(UnexpectedByte, 25),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"END\",\"content\":[1,2}",
        FrameKind::End,
        json_err(UnexpectedByte, 28),
    );
    lazy_ok_validated_err(
        b"{\"type\":\"OTHER\"]",
        FrameKind::Other(JsonStr::from_token(b"\"OTHER\"").unwrap()),
        json_err(UnexpectedByte, 15),
    );
    // The accessors of a lazily read frame report the break when they reach it.
    let f = Frame::parse(b"{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"x\",\"args\":[1,}}")
        .unwrap();
    assert_eq!(f.kind(), FrameKind::ToolCall);
    assert_eq!(f.tool_call(), Err(json_err(UnexpectedByte, 52)));
    let f = Frame::parse(b"{\"type\":\"ERROR\",\"content\":{\"message\":\"m\"},").unwrap();
    assert_eq!(f.error_message(), Err(json_err(UnexpectedEnd, 42)));
}

/// SPEC §7.17: the frame object is level 1; with a limit of 32, 32 levels pass and 33 fail.
#[test]
fn depth_limit_counts_the_frame_as_level_one() {
    const PREFIX: &[u8] = b"{\"type\":\"TOOL_CALL\",\"content\":";
    let nested = |levels: usize| -> Vec<u8> {
        // `levels` containers in total, the frame object included: content is `levels - 1` arrays deep.
        let inner = levels - 1;
        [PREFIX, &b"[".repeat(inner), &b"]".repeat(inner), b"}"].concat()
    };
    let ok = nested(32);
    assert_eq!(
        Frame::parse_validated(&ok, 32).map(|f| f.kind()),
        Ok(FrameKind::ToolCall)
    );
    let deep = nested(33);
    // The 33rd level is the 32nd `[`, at PREFIX.len() + 31.
    assert_eq!(
        Frame::parse_validated(&deep, 32),
        Err(json_err(TooDeep, PREFIX.len() + 31))
    );
    assert_eq!(PREFIX.len() + 31, 61);
    // Objects count the same as arrays.
    let objects = |levels: usize| -> Vec<u8> {
        let inner = levels - 1;
        [
            PREFIX,
            &b"{\"a\":".repeat(inner - 1),
            b"{}",
            &b"}".repeat(inner - 1),
            b"}",
        ]
        .concat()
    };
    assert!(Frame::parse_validated(&objects(32), 32).is_ok());
    assert_eq!(
        Frame::parse_validated(&objects(33), 32),
        Err(json_err(TooDeep, PREFIX.len() + 31 * 5))
    );
    // The default is exactly 32.
    assert_eq!(DEFAULT_MAX_DEPTH, 32);
    assert!(Frame::parse_validated_default(&ok).is_ok());
    assert_eq!(
        Frame::parse_validated_default(&deep),
        Err(json_err(TooDeep, 61))
    );
    // The lazy reader stops at `type`, so depth after it does not matter.
    assert_eq!(
        Frame::parse(&deep).map(|f| f.kind()),
        Ok(FrameKind::ToolCall)
    );
    // Tiny limits.
    assert_eq!(
        Frame::parse_validated(b"{\"type\":\"END\"}", 0),
        Err(json_err(TooDeep, 0))
    );
    assert_eq!(
        Frame::parse_validated(b"{\"type\":\"END\",\"content\":1}", 1).map(|f| f.kind()),
        Ok(FrameKind::End)
    );
    assert_eq!(
        Frame::parse_validated(b"{\"type\":\"END\",\"content\":[]}", 1),
        Err(json_err(TooDeep, 24))
    );
}

#[test]
fn depth_before_type_in_a_lazy_frame() {
    // The lazy reader must scan members before `type`; it allows 255 levels, frame included.
    let frame = |levels: usize| -> Vec<u8> {
        let inner = levels - 1;
        [
            &b"{\"a\":"[..],
            &b"[".repeat(inner),
            &b"]".repeat(inner),
            b",\"type\":\"END\"}",
        ]
        .concat()
    };
    assert_eq!(
        Frame::parse(&frame(255)).map(|f| f.kind()),
        Ok(FrameKind::End)
    );
    assert_eq!(Frame::parse(&frame(256)), Err(json_err(TooDeep, 5 + 254)));
    // A hostile 100 000-level prefix costs no recursion.
    let hostile = [&b"{\"a\":"[..], &b"[".repeat(100_000)].concat();
    assert_eq!(Frame::parse(&hostile), Err(json_err(TooDeep, 259)));
    assert_eq!(
        json::validate(&hostile[5..], 32),
        Err(JsonError {
            kind: TooDeep,
            at: 32
        })
    );
}

#[test]
fn duplicate_type_first_counts_when_lazy_and_is_refused_when_validated() {
    let bytes = b"{\"type\":\"TEXT\",\"type\":\"END\"}";
    // Reading only as far as the first `type` cannot see the second.
    assert_eq!(Frame::parse(bytes).map(|f| f.kind()), Ok(FrameKind::Text));
    // A frame the adapter acts on is read whole: two types are malformed.
    assert_eq!(
        Frame::parse_validated(bytes, 32).map(|f| f.kind()),
        Err(FrameError::DuplicateType)
    );
}

/// SPEC §1: reading `type` when it comes first is O(1) in the frame's size.
#[test]
fn type_first_is_read_without_looking_further() {
    const MIB: usize = 1 << 20;
    // A TEXT frame whose content is 1 MiB of bytes that are not UTF-8, never closed.
    let frame = [&b"{\"type\":\"TEXT\",\"content\":\""[..], &vec![0xFF; MIB]].concat();
    let f = Frame::parse(&frame).expect("type is read before the content");
    assert_eq!(f.kind(), FrameKind::Text);
    assert!(!f.is_validated());
    assert_eq!(f.bytes().len(), 26 + MIB);
    assert_eq!(
        Frame::parse_validated(&frame, 32),
        Err(json_err(InvalidUtf8, 26))
    );
    // Not even JSON after the comma.
    let garbage = [&b"{\"type\":\"END\","[..], &vec![b'#'; MIB]].concat();
    assert_eq!(Frame::parse(&garbage).map(|f| f.kind()), Ok(FrameKind::End));
    assert_eq!(
        Frame::parse_validated(&garbage, 32),
        Err(json_err(UnexpectedByte, 14))
    );
    // The same garbage before `type` is refused: the members before it are scanned.
    let before = [&b"{\"a\":\""[..], &vec![0xFF; MIB], b"\",\"type\":\"END\"}"].concat();
    assert_eq!(Frame::parse(&before), Err(json_err(InvalidUtf8, 6)));
}

// ---------------------------------------------------------------- TOOL_CALL fields (SPEC §7.1–7.3)

fn call_of(bytes: &[u8]) -> ToolCall<'_> {
    Frame::parse_validated(bytes, 32)
        .unwrap()
        .tool_call()
        .unwrap()
}

#[test]
fn malformed_tool_call_fields() {
    let c = call_of(b"{\"type\":\"TOOL_CALL\"}");
    assert_eq!(
        (c.id, c.name, c.args, c.content_is_object),
        (None, None, &b"{}"[..], false)
    );
    let c = call_of(b"{\"type\":\"TOOL_CALL\",\"content\":\"calc\"}");
    assert_eq!(
        (c.id, c.name, c.args, c.content_is_object),
        (None, None, &b"{}"[..], false)
    );
    let c =
        call_of(b"{\"type\":\"TOOL_CALL\",\"content\":{\"id\":5,\"name\":[\"calc\"],\"args\":7}}");
    assert_eq!(
        (c.id, c.name, c.args, c.content_is_object),
        (None, None, &b"7"[..], true)
    );
    let c = call_of(b"{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"\",\"name\":\"\\u5929\\u6c17\",\"args\":null}}");
    assert_eq!(c.id.map(|s| s.raw()), Some(&b""[..]));
    assert!(c.name.unwrap().eq_text("天気".as_bytes()));
    assert_eq!(c.args, b"null");
    // Raw args keep their text.
    let c = call_of(b"{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"n\",\"args\":{\"x\":1e400, \"y\":-0,\"z\":1.50}}}");
    assert_eq!(c.args, b"{\"x\":1e400, \"y\":-0,\"z\":1.50}");
}

// ---------------------------------------------------------------- JsonStr::decode_into

#[test]
fn decode_into_short_buffer_writes_nothing() {
    let s = JsonStr::from_token(b"\"a\\u00e9b\\n\\ud83d\\ude00\"").unwrap();
    assert_eq!(s.decoded_len(), 1 + 2 + 1 + 1 + 4);
    for len in 0..9 {
        let mut buf = [0xAA; 9];
        assert_eq!(
            s.decode_into(&mut buf[..len]),
            Err(BufferTooSmall { needed: 9 }),
            "len {len}"
        );
        assert_eq!(buf, [0xAA; 9], "len {len}");
    }
    let mut buf = [0xAA; 9];
    assert_eq!(s.decode_into(&mut buf), Ok("aéb\n😀"));
    let mut big = [0xAA; 12];
    assert_eq!(s.decode_into(&mut big), Ok("aéb\n😀"));
    assert_eq!(big[9..], [0xAA; 3]);
    // A plain string.
    let plain = JsonStr::from_token(b"\"hello\"").unwrap();
    let mut four = [0u8; 4];
    assert_eq!(
        plain.decode_into(&mut four),
        Err(BufferTooSmall { needed: 5 })
    );
    assert_eq!(four, [0; 4]);
    assert_eq!(plain.as_plain_str(), Some("hello"));
    assert_eq!(s.as_plain_str(), None);
}

#[test]
fn json_str_views_refuse_bad_tokens() {
    assert_eq!(
        JsonStr::from_token(b""),
        Err(JsonError {
            kind: UnexpectedEnd,
            at: 0
        })
    );
    assert_eq!(
        JsonStr::from_token(b"x"),
        Err(JsonError {
            kind: UnexpectedByte,
            at: 0
        })
    );
    assert_eq!(
        JsonStr::from_token(b"\"a\"b"),
        Err(JsonError {
            kind: TrailingData,
            at: 3
        })
    );
    assert_eq!(
        JsonStr::from_token(b"\"a"),
        Err(JsonError {
            kind: UnexpectedEnd,
            at: 2
        })
    );
    assert_eq!(
        JsonStr::from_token(b"\"\\"),
        Err(JsonError {
            kind: UnexpectedEnd,
            at: 2
        })
    );
    assert_eq!(
        JsonStr::from_token(b"\"\\u00"),
        Err(JsonError {
            kind: UnexpectedEnd,
            at: 5
        })
    );
    assert_eq!(
        JsonStr::from_token(b"\"\\ud800\\u"),
        Err(JsonError {
            kind: UnexpectedEnd,
            at: 9
        })
    );
    // Unpaired surrogates are accepted and decode as U+FFFD (SPEC §7.24).
    let mut buf = [0u8; 16];
    let s = JsonStr::from_token(b"\"\\ud800\\n\"").unwrap();
    assert_eq!(s.decode_into(&mut buf), Ok("\u{FFFD}\n"));
    let s = JsonStr::from_token(b"\"\\ud800\\ud800\"").unwrap();
    assert_eq!(s.decode_into(&mut buf), Ok("\u{FFFD}\u{FFFD}"));
}

// ---------------------------------------------------------------- OutFrame::encode

/// `frame` encodes to exactly `expected`; one byte less is refused with the exact size, untouched.
fn encodes_exactly(frame: OutFrame<'_>, expected: &[u8]) {
    assert_eq!(frame.encoded_len(), expected.len());
    let mut exact = vec![0x5A; expected.len()];
    assert_eq!(frame.encode(&mut exact), Ok(expected.len()));
    assert_eq!(exact, expected, "{}", String::from_utf8_lossy(&exact));
    for short_len in [0, expected.len() / 2, expected.len() - 1] {
        let mut short = vec![0x5A; short_len];
        assert_eq!(
            frame.encode(&mut short),
            Err(BufferTooSmall {
                needed: expected.len()
            })
        );
        assert!(short.iter().all(|&b| b == 0x5A), "short buffer written to");
    }
    let mut roomy = vec![0x5A; expected.len() + 3];
    assert_eq!(frame.encode(&mut roomy), Ok(expected.len()));
    assert_eq!(&roomy[..expected.len()], expected);
    assert_eq!(roomy[expected.len()..], [0x5A; 3]);
    // Every frame the adapter writes is valid JSON.
    assert_eq!(json::validate(expected, 32), Ok(()));
}

#[test]
fn encode_every_frame_exactly() {
    encodes_exactly(
        OutFrame::ToolCall {
            id: Some(b"c1"),
            name: b"calc",
            args: b"{\"a\":1.50}",
        },
        br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"calc","args":{"a":1.50}}}"#,
    );
    encodes_exactly(
        OutFrame::ToolCall {
            id: None,
            name: "天気".as_bytes(),
            args: b"{}",
        },
        "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"天気\",\"args\":{}}}".as_bytes(),
    );
    encodes_exactly(
        OutFrame::ToolResult {
            id: Some(b""),
            name: Some(b"calc"),
            outcome: CallOutcome::Result(b"[1e400,-0]"),
        },
        br#"{"type":"TOOL_RESULT","content":{"id":"","name":"calc","result":[1e400,-0]}}"#,
    );
    encodes_exactly(
        OutFrame::ToolResult {
            id: None,
            name: None,
            outcome: CallOutcome::Error("Malformed TOOL_CALL: content.name must be a string"),
        },
        br#"{"type":"TOOL_RESULT","content":{"name":null,"error":"Malformed TOOL_CALL: content.name must be a string"}}"#,
    );
    // Minimal escapes: `\"`, `\\`, the five short forms, `\u00XX`, nothing else (not `/`, not DEL, not UTF-8).
    encodes_exactly(
        OutFrame::Text(b"q\" b\\ \x08\x0c\n\r\t \x00\x1f\x7f / \xc3\xa9"),
        b"{\"type\":\"TEXT\",\"content\":\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0000\\u001f\x7f / \xc3\xa9\"}",
    );
    encodes_exactly(
        OutFrame::Prompt { last_error: None },
        br#"{"type":"TEXT","content":"Tool results above."}"#,
    );
    encodes_exactly(
        OutFrame::Prompt {
            last_error: Some(b"\"success\": false"),
        },
        br#"{"type":"TEXT","content":"Tool results above. Last tool error: \"success\": false"}"#,
    );
    encodes_exactly(
        OutFrame::Error {
            message: b"Tool \"x\" not found",
        },
        br#"{"type":"ERROR","content":{"message":"Tool \"x\" not found"}}"#,
    );
    encodes_exactly(
        OutFrame::RoundLimit { max_rounds: 0 },
        br#"{"type":"ERROR","content":{"message":"Tool round limit reached (0)"}}"#,
    );
    encodes_exactly(
        OutFrame::RoundLimit {
            max_rounds: u32::MAX,
        },
        br#"{"type":"ERROR","content":{"message":"Tool round limit reached (4294967295)"}}"#,
    );
    encodes_exactly(
        OutFrame::Cancel {
            id: Some(b"c\n1"),
            name: b"files",
            reason: b"user stopped",
        },
        br#"{"type":"CANCEL","content":{"id":"c\n1","name":"files","reason":"user stopped"}}"#,
    );
    encodes_exactly(OutFrame::End { content: None }, br#"{"type":"END"}"#);
    encodes_exactly(
        OutFrame::End {
            content: Some(b"{\"b\":2,\"a\":1}"),
        },
        br#"{"type":"END","content":{"b":2,"a":1}}"#,
    );
}

// ---------------------------------------------------------------- LineSplitter

/// One framer output, owned.
type Item = Result<Vec<u8>, LineTooLong>;

/// Feeds `chunks` one at a time and collects what comes out, then what `finish()` gives.
fn frame_lines(capacity: usize, chunks: &[&[u8]]) -> (Vec<Item>, Option<Item>) {
    let mut storage = vec![0u8; capacity];
    let mut framer = LineSplitter::new(&mut storage);
    let mut out = Vec::new();
    for chunk in chunks {
        let mut rest = *chunk;
        while !rest.is_empty() {
            let used = framer.feed(rest);
            assert!(used > 0);
            rest = &rest[used..];
            while let Some(item) = framer.next_line() {
                out.push(item.map(<[u8]>::to_vec));
            }
        }
    }
    let last = framer.finish().map(|r| r.map(<[u8]>::to_vec));
    assert_eq!(framer.finish(), None, "finish gives the tail once");
    (out, last)
}

fn ok(line: &[u8]) -> Item {
    Ok(line.to_vec())
}

#[test]
fn over_long_line_is_reported_once_and_the_next_frame_is_intact() {
    let input: &[u8] =
        b"{\"type\":\"END\"}\n0123456789012345678901234567890123456789\n{\"type\":\"TEXT\"}\n";
    let want = vec![
        ok(b"{\"type\":\"END\"}"),
        Err(LineTooLong { len: 40 }),
        ok(b"{\"type\":\"TEXT\"}"),
    ];
    // Whole, byte by byte, and split inside the long line.
    assert_eq!(frame_lines(16, &[input]), (want.clone(), None));
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(frame_lines(16, &bytes), (want.clone(), None));
    assert_eq!(
        frame_lines(16, &[&input[..20], &input[20..50], &input[50..]]),
        (want, None)
    );
    // A line of exactly the capacity fits; one more byte does not.
    assert_eq!(
        frame_lines(4, &[b"abcd\nabcde\nab\n"]),
        (
            vec![ok(b"abcd"), Err(LineTooLong { len: 5 }), ok(b"ab")],
            None
        )
    );
    // An over-long unterminated tail is reported by finish().
    assert_eq!(
        frame_lines(4, &[b"ab\nabcdefgh"]),
        (vec![ok(b"ab")], Some(Err(LineTooLong { len: 8 })))
    );
    // Nothing is handed out before the line ends.
    let mut storage = [0u8; 8];
    let mut framer = LineSplitter::new(&mut storage);
    assert_eq!(framer.feed(b"0123456789"), 10);
    assert_eq!(framer.buffered(), 10);
    assert_eq!(framer.next_line(), None);
    assert_eq!(framer.feed(b"ab\nxy\n"), 3);
    assert_eq!(framer.next_line(), Some(Err(LineTooLong { len: 12 })));
    assert_eq!(framer.next_line(), None);
    assert_eq!(framer.feed(b"xy\n"), 3);
    assert_eq!(framer.next_line(), Some(Ok(&b"xy"[..])));
    assert_eq!(framer.next_line(), None);
}

#[test]
fn feed_stops_at_each_line_end() {
    let mut storage = [0u8; 8];
    let mut framer = LineSplitter::new(&mut storage);
    let input = b"a\nb\n";
    assert_eq!(framer.feed(input), 2);
    // While a line waits, nothing more is taken.
    assert_eq!(framer.feed(&input[2..]), 0);
    assert_eq!(framer.next_line(), Some(Ok(&b"a"[..])));
    assert_eq!(framer.feed(&input[2..]), 2);
    assert_eq!(framer.next_line(), Some(Ok(&b"b"[..])));
    assert_eq!(framer.next_line(), None);
    assert_eq!(framer.finish(), None);
}

#[test]
fn crlf_line_endings() {
    let (lines, last) = frame_lines(16, &[b"{\"a\":1}\r\n{\"b\":2}\n{\"c\":3}\r"]);
    assert_eq!(lines, vec![ok(b"{\"a\":1}"), ok(b"{\"b\":2}")]);
    assert_eq!(last, Some(ok(b"{\"c\":3}")));
    // `\r` and `\n` split across feeds.
    let (lines, last) = frame_lines(16, &[b"{\"a\":1}\r", b"\n{\"b\":2}", b"\r", b"\n"]);
    assert_eq!(
        (lines, last),
        (vec![ok(b"{\"a\":1}"), ok(b"{\"b\":2}")], None)
    );
    // A `\r` inside a line is kept.
    let (lines, _) = frame_lines(16, &[b"a\rb\n"]);
    assert_eq!(lines, vec![ok(b"a\rb")]);
    // The `\r` of `\r\n` counts against the capacity; the reported length leaves it out.
    assert_eq!(
        frame_lines(4, &[b"abcd\r\nabc\r\n"]),
        (vec![Err(LineTooLong { len: 4 }), ok(b"abc")], None)
    );
    assert_eq!(
        frame_lines(4, &[b"ab", b"cdef\r", b"\nabc\r\n"]),
        (vec![Err(LineTooLong { len: 6 }), ok(b"abc")], None)
    );
    // Also when the `\r` and the `\n` of an over-long line come in different feeds.
    assert_eq!(
        frame_lines(4, &[b"abcd\r", b"\nab\n"]),
        (vec![Err(LineTooLong { len: 4 }), ok(b"ab")], None)
    );
    assert_eq!(
        frame_lines(4, &[b"abcdef", b"\r", b"", b"\nab\n"]),
        (vec![Err(LineTooLong { len: 6 }), ok(b"ab")], None)
    );
    // And for an over-long last line without `\n`, as for a stored one.
    assert_eq!(
        frame_lines(4, &[b"ab\nabcdef\r"]),
        (vec![ok(b"ab")], Some(Err(LineTooLong { len: 6 })))
    );
    assert_eq!(
        frame_lines(4, &[b"ab\nabcdef"]),
        (vec![ok(b"ab")], Some(Err(LineTooLong { len: 6 })))
    );
}

#[test]
fn blank_lines_are_skipped() {
    let (lines, last) = frame_lines(8, &[b"\n\n \n\t\r\n\r\nx\n  \n\r\n"]);
    assert_eq!((lines, last), (vec![ok(b"x")], None));
    let (lines, last) = frame_lines(8, &[b"x\n \t "]);
    assert_eq!((lines, last), (vec![ok(b"x")], None));
    let (lines, last) = frame_lines(8, &[b"\r"]);
    assert_eq!((lines, last), (vec![], None));
    // At the end of the stream as in the middle of it.
    let (lines, last) = frame_lines(8, &[b"x\n\r \r"]);
    assert_eq!((lines, last), (vec![ok(b"x")], None));
    let (lines, last) = frame_lines(8, &[b"\r \r\n\r\r"]);
    assert_eq!((lines, last), (vec![], None));
}

#[test]
fn finish_returns_the_unterminated_last_line() {
    assert_eq!(
        frame_lines(8, &[b"a\nlast"]),
        (vec![ok(b"a")], Some(ok(b"last")))
    );
    assert_eq!(frame_lines(8, &[b"la", b"st"]), (vec![], Some(ok(b"last"))));
    assert_eq!(frame_lines(8, &[b"a\n"]), (vec![ok(b"a")], None));
    assert_eq!(frame_lines(8, &[]), (vec![], None));
    // finish() while a line is still waiting hands that line out first.
    let mut storage = [0u8; 8];
    let mut framer = LineSplitter::new(&mut storage);
    assert_eq!(framer.feed(b"a\nb"), 2);
    assert_eq!(framer.finish(), Some(Ok(&b"a"[..])));
    assert_eq!(framer.feed(b"b"), 1);
    assert_eq!(framer.finish(), Some(Ok(&b"b"[..])));
    assert_eq!(framer.finish(), None);
}

// ---------------------------------------------------------------- typed

#[derive(Debug, PartialEq, Deserialize)]
struct Args<'a> {
    city: &'a str,
    days: u8,
}

#[derive(Serialize)]
struct Forecast<'a> {
    city: &'a str,
    high: i16,
    low: i16,
}

#[test]
fn typed_args() {
    use serde_json_core::de::Error as De;
    assert_eq!(
        typed::parse_args::<Args>(br#"{"city":"Oslo","days":2}"#),
        Ok(Args {
            city: "Oslo",
            days: 2
        })
    );
    assert_eq!(
        typed::parse_args::<Args>(b" {\"days\" : 7 , \"city\":\"Bergen\", \"extra\":[1]} \n"),
        Ok(Args {
            city: "Bergen",
            days: 7
        })
    );
    assert_eq!(
        typed::parse_args::<Args>(br#"{"city":1,"days":2}"#),
        Err(TypedError::Args(De::InvalidType))
    );
    assert_eq!(
        typed::parse_args::<Args>(br#"{"city":"Oslo","days":300}"#),
        Err(TypedError::Args(De::InvalidNumber))
    );
    assert_eq!(
        typed::parse_args::<Args>(br#"{"city":"Oslo"}"#),
        Err(TypedError::Args(De::CustomError))
    );
    assert_eq!(
        typed::parse_args::<Args>(br#"{"city":"Oslo","days":2"#),
        Err(TypedError::Args(De::EofWhileParsingObject))
    );
    assert_eq!(
        typed::parse_args::<Args>(br#"{"city":"Oslo","days":2} x"#),
        Err(TypedError::Args(De::TrailingCharacters))
    );
    assert_eq!(
        typed::parse_args::<Args>(b""),
        Err(TypedError::Args(De::EofWhileParsingValue))
    );
}

#[test]
fn typed_result_too_large() {
    let value = Forecast {
        city: "Oslo",
        high: 9,
        low: -2,
    };
    let expected = br#"{"city":"Oslo","high":9,"low":-2}"#;
    let mut exact = [0u8; 33];
    assert_eq!(expected.len(), 33);
    assert_eq!(typed::write_result(&value, &mut exact), Ok(33));
    assert_eq!(&exact, expected);
    let mut short = [0u8; 32];
    assert_eq!(
        typed::write_result(&value, &mut short),
        Err(TypedError::ResultTooLarge)
    );
    let mut empty = [0u8; 0];
    assert_eq!(
        typed::write_result(&value, &mut empty),
        Err(TypedError::ResultTooLarge)
    );
}

#[test]
fn error_messages() {
    assert_eq!(
        FrameError::NotAnObject.to_string(),
        "frame is not a JSON object"
    );
    assert_eq!(
        FrameError::MissingType.to_string(),
        "frame has no type member"
    );
    assert_eq!(
        FrameError::TypeNotString.to_string(),
        "frame type is not a string"
    );
    assert_eq!(
        json_err(InvalidUtf8, 26).to_string(),
        "invalid JSON at byte 26: InvalidUtf8"
    );
    assert_eq!(
        TypedError::ResultTooLarge.to_string(),
        "result too large for its buffer"
    );
}

/// Found by the `json` fuzz target: serde_json (with `arbitrary_precision`) refuses this
/// object, taking its key for one of its own number tokens. It is plain JSON: the scanner
/// takes it, and its compact form is what the encoder copies.
#[test]
fn fuzz_finding_serde_number_token_as_a_key_is_plain_json() {
    let doc = b"{ \"$serde_json::private::Number\":\n\n\n\n\n\t9.0e+28 }";
    assert_eq!(json::validate(doc, DEFAULT_MAX_DEPTH), Ok(()));
    let mut out = [0u8; 64];
    let n = json::compact_into(doc, &mut out);
    assert_eq!(&out[..n], br#"{"$serde_json::private::Number":9.0e+28}"#);
    assert_eq!(json::compact_len(doc), n);
}
