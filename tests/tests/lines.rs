//! SPEC §7.22–7.25 as properties of the core `Wrapper`: every frame the library writes is one
//! NDJSON line, and every intercepted call gets exactly one `TOOL_RESULT`, whatever white
//! space, lone-surrogate escapes, duplicate `type` members and over-capacity values the model,
//! the host and the tool adapters send.
//!
//! The property test drives a wrapper with small capacities (names 16 bytes, ids 8, args and
//! results 64, messages 80, 0–3 slots, depth limit 5, 6 or 8, `full_validation` on or off)
//! and tools of every kind (sync result, echo, failure, too large, too deep; deferred;
//! adapter; a deferred tool whose name holds U+FFFD) with random sequences of model
//! `TOOL_CALL`s (raw args with spaces, tabs, CR and LF between tokens, args that compact under
//! or over the args capacity, lone surrogates in names, ids and strings, duplicate `type`
//! members, duplicate ids), completions (results with white space, over the result capacity,
//! deeper than the limit, invalid; error messages), adapter frames (`TOOL_RESULT` by `result`,
//! `content` or whole frame, over capacity; `ERROR` with a string, absent or long message;
//! `END`; duplicate `type`; too deep), adapter closes, clock ticks that fire timeouts,
//! `cancel`, `abort`, pass-through frames and `END`s on both paths. After every operation it
//! drains `poll_transmit` and `poll_event`, and checks:
//!
//! * (a) every frame written is one JSON line (`polyweave_tests::is_one_json_line`); the `END`s fed are
//!   one line themselves, so released `END`s are checked too;
//! * (b) every intercepted call gets exactly one `TOOL_RESULT` on `Route::Model`: at the end
//!   everything is cancelled and drained, and the `TOOL_RESULT` frames are counted against the
//!   intercepted calls, each call index completing exactly once (from `on_tool_result`);
//! * (c) every status (disposition, refusal, `Completed`) is the one SPEC §3, §4, §5 and §7
//!   predict, refusals are only §4 errors, and the wrapper still takes and answers a call at
//!   the end;
//! * (d) every `TOOL_RESULT` is exactly the bytes predicted by an independent reading of the
//!   SPEC, the §7.23 texts (`args exceed`, `result exceeds`, `result is nested deeper than`)
//!   included, with sizes from a compaction function written here; so are the adapter's
//!   `TOOL_CALL`s and `CANCEL`s and the started calls' args.
//!
//! Fixed sequences with exact bytes follow, and the line checker's own tests.
//!
//! `PROPTEST_CASES` overrides the number of cases (default 256).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use polyweave_tests::drive::{at, echo};
use polyweave_tests::host::{self, Call, Entry, Host, Recorder, Storage};
use polyweave_tests::{
    assert_one_json_line, is_one_json_line, is_spec_refusal, mask_surrogate_escapes, proptest_cases,
};
use polyweave_tool_adapter::frame::FrameError;
use polyweave_tool_adapter::wrapper::{
    Completed, Disposition, Event, PendingKind, Wrapper, WrapperConfig,
};
use polyweave_tool_adapter::CallError;
use polyweave_tool_adapter::CallOutcome;
use polyweave_tool_adapter::Hooks;
use polyweave_tool_adapter::{
    AdapterCall, CallHandle, CallOptions, Error, Instant, NoHooks, Route, Tool,
};
use polyweave_tool_adapter::{ResultWriter, ToolFailed};
use proptest::prelude::*;
use serde_json::Value;

// =====================================================================
// Capacities and tools
// =====================================================================

const NAME_CAP: usize = 16;
const ID_CAP: usize = 8;
const ARGS_CAP: usize = 64;
const RESULT_CAP: usize = 64;
const MESSAGE_CAP: usize = 80;
const HELD_BYTES: usize = 96;
/// Bytes each held `END` costs on top of its own (the core's `held::HELD_HEADER`).
const HELD_HEADER: usize = 4;

/// `res`'s output: white space between tokens, a lone surrogate kept as written.
const RES_OUT: &str = "{ \"ok\" : [1,\t2.50],\n\"s\" : \"a b\\ud800\" }";
/// `big`'s output: one string of 70 bytes, one more token than the cap allows.
fn big_out() -> String {
    format!("\"{}\"", "x".repeat(68))
}
/// `fail`'s message.
const FAIL_MSG: &str = "bad\nthing \"q\" \u{FFFD}";
/// The deferred tool whose registered name holds U+FFFD (7 bytes).
const WAIT: &str = "wait\u{FFFD}";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Res,
    Big,
    Echo,
    Fail,
    Deep,
    Deferred,
    Adapter,
}

/// Registration order: the index is `Event::CallStarted::tool`.
const TOOLS: [(&str, Kind); 8] = [
    ("res", Kind::Res),
    ("big", Kind::Big),
    ("echo", Kind::Echo),
    ("fail", Kind::Fail),
    ("deep", Kind::Deep),
    ("later", Kind::Deferred),
    ("files", Kind::Adapter),
    (WAIT, Kind::Deferred),
];

fn tool_index(name: &str) -> Option<usize> {
    TOOLS.iter().position(|(n, _)| *n == name)
}

/// `levels` nested arrays around `1`, with a space between every two tokens.
fn nested_spaced(levels: usize) -> String {
    format!("{}1{}", "[ ".repeat(levels), " ]".repeat(levels))
}

fn out_res(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(RES_OUT.as_bytes());
    Ok(())
}
fn out_big(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(big_out().as_bytes());
    Ok(())
}
fn out_fail(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(FAIL_MSG.as_bytes());
    Err(ToolFailed)
}

/// A sync tool returning a value one level deeper than `max_depth` (the result is level 1).
struct DeepTool(u8);
impl polyweave_tool_adapter::SyncTool for DeepTool {
    fn call(&self, _: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(nested_spaced(self.0 as usize + 1).as_bytes());
        Ok(())
    }
}

/// The registrations of `TOOLS`, with `deep` as the too-deep sync tool.
fn registered(deep: &DeepTool) -> [Tool<'_>; 8] {
    [
        Tool::sync(TOOLS[0].0, &out_res),
        Tool::sync(TOOLS[1].0, &out_big),
        Tool::sync(TOOLS[2].0, &echo),
        Tool::sync(TOOLS[3].0, &out_fail),
        Tool::sync(TOOLS[4].0, deep),
        Tool::deferred(TOOLS[5].0),
        Tool::adapter(TOOLS[6].0),
        Tool::deferred(TOOLS[7].0),
    ]
}

fn config(case: &CaseCfg) -> WrapperConfig {
    WrapperConfig {
        tool_timeout_ms: case.timeout_ms,
        max_total_timeout_ms: 0,
        mirror_continue: case.mirror,
        max_rounds: case.max_rounds,
        max_depth: case.max_depth,
        full_validation: case.full,
        name_cap: NAME_CAP,
        id_cap: ID_CAP,
        args_cap: ARGS_CAP,
        result_cap: RESULT_CAP,
        message_cap: MESSAGE_CAP,
        trace_entries: 4,
        trace_bytes: 256,
        held_bytes: HELD_BYTES,
    }
}

// =====================================================================
// Independent JSON helpers: compaction, string decoding, depth
// =====================================================================

/// SPEC §7.22: a raw value without the white space between its tokens (strings untouched).
fn compact(raw: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in raw.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

/// The text of a JSON string's inside (escapes as written), SPEC §7.24: an escaped surrogate
/// that is not a high one followed by an escaped low one becomes U+FFFD.
fn decode(inner: &str) -> String {
    let b = inner.as_bytes();
    let hex = |at: usize| u32::from_str_radix(&inner[at..at + 4], 16).expect("four hex digits");
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        if b[i] != b'\\' {
            let c = inner[i..].chars().next().expect("a character");
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let c = match b[i + 1] {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let mut cp = hex(i + 2);
                i += 4;
                if (0xD800..0xDC00).contains(&cp) && inner[i + 2..].starts_with("\\u") {
                    let low = hex(i + 4);
                    if (0xDC00..0xE000).contains(&low) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        i += 6;
                    }
                }
                char::from_u32(cp).unwrap_or('\u{FFFD}')
            }
            other => other as char,
        };
        out.push(c);
        i += 2;
    }
    out
}

/// The decoded string of a raw JSON value, when it is a string token.
fn decode_token(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    Some(decode(inner))
}

/// A JSON string token with SPEC §1 minimal escaping (serde_json escapes the same way).
fn jstr(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}

/// The longest prefix of `text`, on a character boundary, whose escaped form fits `cap` bytes.
fn escaped_prefix(text: &str, cap: usize) -> String {
    let mut total = 0;
    let mut out = String::new();
    for c in text.chars() {
        let n = match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            '\0'..='\u{1f}' => 6,
            c => c.len_utf8(),
        };
        if total + n > cap {
            break;
        }
        total += n;
        out.push(c);
    }
    out
}

/// A generated JSON value (strings as raw insides, escapes as written).
#[derive(Clone, Debug)]
enum J {
    Lit(&'static str),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(&'static str, J)>),
}

impl J {
    /// Container levels (a scalar is 0, `[1]` is 1).
    fn depth(&self) -> usize {
        match self {
            J::Lit(_) | J::Str(_) => 0,
            J::Arr(v) => 1 + v.iter().map(J::depth).max().unwrap_or(0),
            J::Obj(m) => 1 + m.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
        }
    }
}

/// White space put between tokens, picked by a generated list of selectors.
const WS: [&str; 9] = [
    "",
    "",
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    " \n\t ",
    "            ",
];

/// Hands out white space from the selectors, cyclically (none when there are none).
struct Ws<'a> {
    sel: &'a [u8],
    at: usize,
    heavy: bool,
}

impl<'a> Ws<'a> {
    fn new(sel: &'a [u8]) -> Self {
        Ws {
            sel,
            at: 0,
            heavy: false,
        }
    }
    /// Twelve spaces between every two tokens.
    fn heavy() -> Ws<'static> {
        Ws {
            sel: &[],
            at: 0,
            heavy: true,
        }
    }
    fn next(&mut self) -> &'static str {
        if self.heavy {
            return WS[8];
        }
        if self.sel.is_empty() {
            return "";
        }
        let s = WS[self.sel[self.at % self.sel.len()] as usize % WS.len()];
        self.at += 1;
        s
    }
}

fn render_into(j: &J, ws: &mut Ws<'_>, out: &mut String) {
    match j {
        J::Lit(s) => out.push_str(s),
        J::Str(s) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        J::Arr(items) => {
            out.push('[');
            for (k, x) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                out.push_str(ws.next());
                render_into(x, ws, out);
                out.push_str(ws.next());
            }
            out.push(']');
        }
        J::Obj(members) => {
            out.push('{');
            for (k, (key, v)) in members.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                out.push_str(ws.next());
                out.push('"');
                out.push_str(key);
                out.push('"');
                out.push_str(ws.next());
                out.push(':');
                out.push_str(ws.next());
                render_into(v, ws, out);
                out.push_str(ws.next());
            }
            out.push('}');
        }
    }
}

/// The value with white space from `ws` between its tokens (none around it).
fn render(j: &J, ws: &mut Ws<'_>) -> String {
    let mut out = String::new();
    render_into(j, ws, &mut out);
    out
}

/// `levels` nested arrays, spaced.
fn nested_j(levels: usize) -> J {
    (0..levels).fold(J::Lit("1"), |inner, _| J::Arr(vec![inner]))
}

// =====================================================================
// Generators
// =====================================================================

const LITS: [&str; 8] = [
    "null",
    "true",
    "false",
    "1",
    "-0",
    "2.50",
    "1e400",
    "12345678901234567890123",
];

/// String insides, escapes as written: lone and paired surrogates, an escaped backslash
/// before `ud800` (no escape), white space inside strings (kept), long runs.
const PIECES: [&str; 15] = [
    "a",
    "b c",
    "\\ud800",
    "\\udc00",
    "\\\\ud800",
    "\\n",
    "\\\"",
    "é",
    "\\u00e9",
    "\\t",
    "\\ud83d\\ude00",
    "0123456789abcdef",
    " ",
    "\\u0001",
    "\\/",
];

const KEYS: [&str; 6] = ["a", "k", "b c", "\\ud800", "error", "success"];

fn string_inside() -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..4)
        .prop_map(|p| p.into_iter().map(|i| PIECES[i]).collect())
}

fn json_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        (0..LITS.len()).prop_map(|i| J::Lit(LITS[i])),
        string_inside().prop_map(J::Str),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
            prop::collection::vec(((0..KEYS.len()).prop_map(|i| KEYS[i]), inner), 0..4)
                .prop_map(J::Obj),
        ]
    })
}

fn ws_sel() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..12)
}

/// A long value: one array holding `n` × 16 bytes of string (compact: `16 n + 4` bytes).
fn big_j(n: usize) -> J {
    J::Arr(vec![J::Str("0123456789abcdef".repeat(n))])
}

/// `content.name` as written (`None`: absent).
const NAMES: [Option<&str>; 19] = [
    Some(r#""res""#),
    Some(r#""big""#),
    Some(r#""echo""#),
    Some(r#""fail""#),
    Some(r#""deep""#),
    Some(r#""later""#),
    Some(r#""files""#),
    Some(r#""\u0066iles""#),
    Some(r#""wait\ud800""#),
    Some(r#""wait\uDFFF""#),
    Some("\"wait\u{FFFD}\""),
    Some(r#""nope""#),
    Some(r#""\ud800""#),
    // 17 bytes, and 6 × 3 = 18 bytes decoded: over the name capacity.
    Some(r#""abcdefghijklmnopq""#),
    Some(r#""\ud800\ud800\ud800\ud800\ud800\ud800""#),
    // Unknown, 16 control characters (the name capacity): its `not found` message, 114
    // bytes escaped, is kept whole in its TOOL_RESULT and cut in the prompt's last error.
    Some(
        r#""\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001""#,
    ),
    Some("null"),
    Some("7"),
    None,
];

/// `content.id` as written (`None`: absent).
const IDS: [Option<&str>; 10] = [
    None,
    Some(r#""a""#),
    Some(r#""b""#),
    // Both decode to U+FFFD: the same id (SPEC §7.19, §7.24).
    Some(r#""\ud800""#),
    Some(r#""\udbff""#),
    Some(r#""q\"t""#),
    Some(r#""""#),
    Some("7"),
    // 9 bytes: over the id capacity.
    Some(r#""123456789""#),
    // A pair: U+10000, 4 bytes.
    Some(r#""\ud800\udc00""#),
];

#[derive(Clone, Debug)]
enum ArgsSpec {
    Absent,
    /// A value; `heavy`: twelve spaces between tokens (raw often over the cap, compact under).
    Value(J, bool),
    Big(usize),
    /// `max_depth - 2 + delta` nested arrays: at the frame's limit, or one level past it.
    Deep(usize),
}

#[derive(Clone, Debug)]
enum ContentSpec {
    Absent,
    NotObject(usize),
    Object {
        id: usize,
        name: usize,
        args: ArgsSpec,
        order: usize,
    },
}

const NOT_OBJECT: [&str; 3] = [r#""res""#, "[1, 2]", "null"];

/// Where the frame's `type` members are.
#[derive(Copy, Clone, Debug)]
enum Types {
    First,
    Last,
    /// `"type":"TOOL_CALL","type":"TEXT"`: the O(1) read says `TOOL_CALL`, validation refuses it.
    CallThenText,
    /// `"type":"TEXT"` first, `"type":"TOOL_CALL"` last: `TEXT` unless fully validated.
    TextThenCall,
    /// `TOOL_CALL` twice.
    CallTwice,
}

#[derive(Clone, Debug)]
struct CallSpec {
    content: ContentSpec,
    types: Types,
    ws: Vec<u8>,
}

#[derive(Clone, Debug)]
enum CompleteSpec {
    /// A value with white space around and between tokens.
    Value(J, Vec<u8>, bool),
    Big(usize),
    /// `max_depth + delta` nested arrays: at the limit, or one past it.
    Deep(usize),
    Invalid(usize),
    Error(usize),
}

const INVALID_RESULTS: [&str; 5] = ["[1,", "{\"a\":1} x", "{\"a\" : }", "", "\"\\x\""];

/// Error messages for `complete`: the fourth fits the message capacity but not once escaped,
/// the last is over it (both are cut to fit once escaped, and reported).
fn complete_error(i: usize) -> String {
    match i {
        0 => "no disk".into(),
        1 => String::new(),
        2 => "line\nbreak \"q\" \u{FFFD}\t\u{1}".into(),
        3 => "\"\n".repeat(MESSAGE_CAP / 2),
        _ => "m".repeat(MESSAGE_CAP + 1),
    }
}
const COMPLETE_ERRORS: usize = 5;

#[derive(Clone, Debug)]
enum AdapterSpec {
    /// `content.result`; `heavy` spacing or the selectors'.
    Result(J, bool),
    /// `content.content` (and a `name`).
    Content(J),
    /// A `TOOL_RESULT` whose content is this value (no `result` / `content` in it): the whole frame.
    Whole(J),
    Big(usize),
    /// A result of `max_depth - 2 + delta` nested arrays: the frame at its limit, or past it.
    Deep(usize),
    DupType(usize),
    /// `ERROR` with a string message: pieces, repeated.
    ErrorMsg(String, usize),
    ErrorNoMsg(usize),
    End(usize),
    Text,
    Broken,
}

const DUP_TYPE_ADAPTER: [&str; 3] = [
    r#"{"type":"TOOL_RESULT","type":"END","content":{"result":1}}"#,
    r#"{"type":"END","content":null,"type":"TOOL_RESULT"}"#,
    r#"{"type":"ERROR","type":"ERROR"}"#,
];
const ERROR_NO_MSG: [&str; 3] = [
    r#"{"type":"ERROR"}"#,
    "{\"type\" : \"ERROR\",\n\"content\" : {\"message\" : 5}}",
    r#"{"type":"ERROR","content":"x"}"#,
];
const ADAPTER_ENDS: [&str; 2] = [
    r#"{"type":"END"}"#,
    "{ \"type\" : \"END\" ,\r\n \"content\" : [1, 2] }",
];

/// Pass-through frames (multi-line ones included: they are never queued) and whether they
/// are refused under full validation (two `type`s, broken after `type`, nine levels deep).
const PASS: [(&str, bool); 8] = [
    (r#"{"type":"TEXT","content":"a\ud800 b"}"#, false),
    (
        "{\"type\" : \"TEXT\" ,\n \"content\" : [1 ,\t2]\r\n}",
        false,
    ),
    (r#"{"type":"TEXT","type":"END"}"#, true),
    (r#"{"type":"CUSTOM","content":{"x" : "\udfff"}}"#, false),
    ("{\"type\":\"TEXT\",\"content\":[1,\n}", true),
    (r#"{"type":"\ud800","content":1}"#, false),
    (
        r#"{"type":"TEXT","type":"TOOL_CALL","content":{"name":"res"}}"#,
        true,
    ),
    (r#"{"type":"TEXT","content":[[[[[[[[1]]]]]]]]}"#, true),
];

/// `END`s fed on the response path (each one line), whether they read as `END` without full
/// validation, and whether full validation refuses them.
const ENDS: [(&str, bool, bool); 5] = [
    (r#"{"type":"END"}"#, true, false),
    (r#"{"type":"END","content":"\ud800 x"}"#, true, false),
    (r#"{ "type" : "END" , "content" : [ 1 , 2 ] }"#, true, false),
    (r#"{"type":"END","type":"TEXT"}"#, true, true),
    (r#"{"type":"TEXT","type":"END"}"#, false, true),
];

const REASONS: [&str; 4] = ["user", "", "stop\n\"now\"", "\u{FFFD} x"];

#[derive(Clone, Debug)]
enum Op {
    Call(CallSpec),
    /// The `n`-th pending call of its kind (see `Harness::nth_pending`).
    Complete(usize, CompleteSpec),
    Adapter(usize, AdapterSpec),
    Close(usize),
    /// A call that has ended (its handle is refused).
    Late(usize, u8),
    Tick(u64),
    Cancel(usize),
    Abort,
    Pass(usize),
    Request(usize),
    End(usize),
}

fn args_spec() -> impl Strategy<Value = ArgsSpec> {
    prop_oneof![
        1 => Just(ArgsSpec::Absent),
        6 => (json_value(), prop::bool::weighted(0.3)).prop_map(|(j, h)| ArgsSpec::Value(j, h)),
        2 => (3usize..6).prop_map(ArgsSpec::Big),
        1 => (0usize..2).prop_map(ArgsSpec::Deep),
    ]
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    // Deferred and adapter calls have a life after the call: weigh them up.
    let name = prop_oneof![
        4 => Just(5usize),
        4 => Just(6usize),
        2 => 7usize..11,
        6 => 0usize..5,
        2 => 11..NAMES.len(),
    ];
    let id = prop_oneof![4 => 0usize..5, 1 => 0..IDS.len()];
    let content = prop_oneof![
        1 => Just(ContentSpec::Absent),
        1 => (0..NOT_OBJECT.len()).prop_map(ContentSpec::NotObject),
        16 => (id, name, args_spec(), 0usize..6).prop_map(|(id, name, args, order)| ContentSpec::Object { id, name, args, order }),
    ];
    let types = prop_oneof![
        8 => Just(Types::First),
        2 => Just(Types::Last),
        1 => Just(Types::CallThenText),
        1 => Just(Types::TextThenCall),
        1 => Just(Types::CallTwice),
    ];
    (content, types, ws_sel()).prop_map(|(content, types, ws)| CallSpec { content, types, ws })
}

fn complete_spec() -> impl Strategy<Value = CompleteSpec> {
    prop_oneof![
        6 => (json_value(), ws_sel(), prop::bool::weighted(0.3)).prop_map(|(j, w, h)| CompleteSpec::Value(j, w, h)),
        2 => (4usize..7).prop_map(CompleteSpec::Big),
        2 => (0usize..2).prop_map(CompleteSpec::Deep),
        1 => (0..INVALID_RESULTS.len()).prop_map(CompleteSpec::Invalid),
        3 => (0..COMPLETE_ERRORS).prop_map(CompleteSpec::Error),
    ]
}

fn adapter_spec() -> impl Strategy<Value = AdapterSpec> {
    prop_oneof![
        4 => (json_value(), prop::bool::weighted(0.3)).prop_map(|(j, h)| AdapterSpec::Result(j, h)),
        1 => json_value().prop_map(AdapterSpec::Content),
        1 => json_value().prop_map(AdapterSpec::Whole),
        2 => (4usize..7).prop_map(AdapterSpec::Big),
        1 => (0usize..2).prop_map(AdapterSpec::Deep),
        1 => (0..DUP_TYPE_ADAPTER.len()).prop_map(AdapterSpec::DupType),
        2 => (string_inside(), prop_oneof![3 => Just(1usize), 1 => Just(12usize)]).prop_map(|(s, n)| AdapterSpec::ErrorMsg(s, n)),
        1 => (0..ERROR_NO_MSG.len()).prop_map(AdapterSpec::ErrorNoMsg),
        3 => (0..ADAPTER_ENDS.len()).prop_map(AdapterSpec::End),
        1 => Just(AdapterSpec::Text),
        1 => Just(AdapterSpec::Broken),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => call_spec().prop_map(Op::Call),
        5 => (0usize..4, complete_spec()).prop_map(|(k, c)| Op::Complete(k, c)),
        6 => (0usize..4, adapter_spec()).prop_map(|(k, a)| Op::Adapter(k, a)),
        1 => (0usize..4).prop_map(Op::Close),
        1 => (0usize..8, 0u8..3).prop_map(|(k, how)| Op::Late(k, how)),
        3 => prop_oneof![3 => 0u64..8, 1 => 0u64..40].prop_map(Op::Tick),
        1 => (0..REASONS.len()).prop_map(Op::Cancel),
        1 => Just(Op::Abort),
        2 => (0..PASS.len()).prop_map(Op::Pass),
        1 => (0..PASS.len()).prop_map(Op::Request),
        3 => (0..ENDS.len()).prop_map(Op::End),
    ]
}

#[derive(Clone, Debug)]
struct CaseCfg {
    slots: usize,
    timeout_ms: u32,
    max_depth: u8,
    full: bool,
    max_rounds: u32,
    mirror: bool,
}

fn case() -> impl Strategy<Value = (CaseCfg, Vec<Op>)> {
    let cfg = (
        prop_oneof![1 => Just(0usize), 4 => 1usize..=3],
        1u32..=30,
        prop_oneof![Just(5u8), Just(6u8), Just(8u8)],
        any::<bool>(),
        0u32..=2,
        any::<bool>(),
    )
        .prop_map(
            |(slots, timeout_ms, max_depth, full, max_rounds, mirror)| CaseCfg {
                slots,
                timeout_ms,
                max_depth,
                full,
                max_rounds,
                mirror,
            },
        );
    (cfg, prop::collection::vec(op(), 1..48))
}

// =====================================================================
// Frames as the generators write them
// =====================================================================

/// A `TOOL_CALL` frame and what it holds: (bytes, name token, id token, args as written).
fn call_frame(
    spec: &CallSpec,
    max_depth: u8,
) -> (String, Option<&'static str>, Option<&'static str>, String) {
    let mut ws = Ws::new(&spec.ws);
    let (content, name, id, args) = match &spec.content {
        ContentSpec::Absent => (None, None, None, "{}".to_string()),
        ContentSpec::NotObject(i) => (Some(NOT_OBJECT[*i].to_string()), None, None, "{}".into()),
        ContentSpec::Object {
            id,
            name,
            args,
            order,
        } => {
            let args_text = match args {
                ArgsSpec::Absent => None,
                ArgsSpec::Value(j, false) => Some(render(j, &mut ws)),
                ArgsSpec::Value(j, true) => Some(render(j, &mut Ws::heavy())),
                ArgsSpec::Big(n) => Some(render(&big_j(*n), &mut ws)),
                ArgsSpec::Deep(delta) => Some(render(
                    &nested_j(max_depth as usize - 2 + delta),
                    &mut Ws::heavy(),
                )),
            };
            let mut members: Vec<(&str, String)> = Vec::new();
            if let Some(raw) = IDS[*id] {
                members.push(("id", raw.to_string()));
            }
            if let Some(raw) = NAMES[*name] {
                members.push(("name", raw.to_string()));
            }
            if let Some(a) = &args_text {
                members.push(("args", a.clone()));
            }
            if !members.is_empty() {
                let n = members.len();
                members.rotate_left(order % n);
            }
            let body: Vec<String> = members
                .iter()
                .map(|(k, v)| {
                    let (a, b, c, d) = (ws.next(), ws.next(), ws.next(), ws.next());
                    format!("{a}\"{k}\"{b}:{c}{v}{d}")
                })
                .collect();
            (
                Some(format!("{{{}}}", body.join(","))),
                NAMES[*name],
                IDS[*id],
                args_text.unwrap_or_else(|| "{}".into()),
            )
        }
    };
    let mut members: Vec<String> = Vec::new();
    let ty = |t: &str| format!("\"type\":{}\"{t}\"", ws_static(&spec.ws));
    match spec.types {
        Types::First | Types::CallTwice => members.push(ty("TOOL_CALL")),
        Types::CallThenText => {
            members.push(ty("TOOL_CALL"));
            members.push(ty("TEXT"));
        }
        Types::TextThenCall => members.push(ty("TEXT")),
        Types::Last => {}
    }
    if let Some(c) = content {
        members.push(format!("\"content\":{c}"));
    }
    match spec.types {
        Types::Last | Types::TextThenCall | Types::CallTwice => members.push(ty("TOOL_CALL")),
        _ => {}
    }
    let sep = format!("{},", ws_static(&spec.ws));
    (format!("{{{}}}", members.join(&sep)), name, id, args)
}

/// The first selected white space, for the frame's own punctuation.
fn ws_static(sel: &[u8]) -> &'static str {
    Ws::new(sel).next()
}

/// An adapter frame for a call, and what it means (SPEC §2, §7.9, §7.10, §7.17).
fn adapter_frame(spec: &AdapterSpec, max_depth: u8) -> (String, AdMeaning) {
    let heavy = |j: &J| render(j, &mut Ws::heavy());
    let plain = |j: &J| render(j, &mut Ws::new(&[3, 5, 0, 4, 6]));
    match spec {
        AdapterSpec::Result(j, h) => {
            let r = if *h { heavy(j) } else { plain(j) };
            (
                format!("{{\"type\":\"TOOL_RESULT\",\n\"content\":{{ \"result\" : {r} }}}}"),
                record_at(compact(&r), 2 + j.depth(), max_depth),
            )
        }
        AdapterSpec::Content(j) => {
            let r = plain(j);
            (
                format!("{{\"type\":\"TOOL_RESULT\",\"content\":{{\"content\":\t{r},\"name\":\"files\"}}}}"),
                record_at(compact(&r), 2 + j.depth(), max_depth),
            )
        }
        AdapterSpec::Whole(j) => {
            let f = format!(
                " {{\"type\":\"TOOL_RESULT\" ,\r\n \"content\" : {} }}\n",
                plain(j)
            );
            let whole = compact(&f);
            (f, record_at(whole, 1 + j.depth(), max_depth))
        }
        AdapterSpec::Big(n) => {
            let r = plain(&big_j(*n));
            (
                format!("{{\"type\":\"TOOL_RESULT\",\"content\":{{\"result\":{r}}}}}"),
                AdMeaning::Record(compact(&r)),
            )
        }
        AdapterSpec::Deep(delta) => {
            let r = nested_spaced(max_depth as usize - 2 + delta);
            let meaning = if *delta == 0 {
                AdMeaning::Record(compact(&r))
            } else {
                AdMeaning::Malformed
            };
            (
                format!("{{\"type\":\"TOOL_RESULT\",\"content\":{{\"result\":{r}}}}}"),
                meaning,
            )
        }
        AdapterSpec::DupType(i) => (DUP_TYPE_ADAPTER[*i].to_string(), AdMeaning::Malformed),
        AdapterSpec::ErrorMsg(s, n) => {
            let inner = s.repeat(*n);
            (
                format!("{{\"type\" : \"ERROR\",\n\"content\":{{\"message\":\"{inner}\"}}}}"),
                AdMeaning::Fail(Some(decode(&inner))),
            )
        }
        AdapterSpec::ErrorNoMsg(i) => (ERROR_NO_MSG[*i].to_string(), AdMeaning::Fail(None)),
        AdapterSpec::End(i) => (ADAPTER_ENDS[*i].to_string(), AdMeaning::End),
        AdapterSpec::Text => (
            r#"{"type":"TEXT","content":"progress\ud800"}"#.to_string(),
            AdMeaning::Ignore,
        ),
        AdapterSpec::Broken => (
            r#"{"type":"TOOL_RESULT","content":{"result":}}"#.to_string(),
            AdMeaning::Malformed,
        ),
    }
}

/// Record `value`, unless the frame nests `levels` deep past the limit.
fn record_at(value: String, levels: usize, max_depth: u8) -> AdMeaning {
    match levels > max_depth as usize {
        true => AdMeaning::Malformed,
        false => AdMeaning::Record(value),
    }
}

#[derive(Clone, Debug)]
enum AdMeaning {
    Record(String),
    Fail(Option<String>),
    End,
    Ignore,
    Malformed,
}

// =====================================================================
// What the core reports
// =====================================================================

#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// Compact raw JSON.
    Result(String),
    Error(String),
}

#[derive(Clone, Debug)]
struct ResultHook {
    index: u32,
    name: Option<String>,
    id: Option<String>,
    outcome: Outcome,
    seq: u64,
}

impl ResultHook {
    fn new(c: Call, o: host::Outcome) -> Self {
        let outcome = match o {
            // Hooks see results as given (white space inside): compare them compact.
            host::Outcome::Result(r) => Outcome::Result(compact(std::str::from_utf8(&r).unwrap())),
            host::Outcome::Error(e) => Outcome::Error(e),
        };
        ResultHook {
            index: c.index,
            name: c.name,
            id: c.id,
            outcome,
            seq: c.seq,
        }
    }
}

/// The `TOOL_RESULT` the SPEC says a call gets.
fn tool_result_frame(name: Option<&str>, id: Option<&str>, outcome: &Outcome) -> String {
    let id = id.map_or(String::new(), |i| format!(r#""id":{},"#, jstr(i)));
    let name = name.map_or("null".to_string(), jstr);
    let tail = match outcome {
        Outcome::Result(r) => format!(r#""result":{r}"#),
        Outcome::Error(m) => format!(r#""error":{}"#, jstr(m)),
    };
    format!(r#"{{"type":"TOOL_RESULT","content":{{{id}"name":{name},{tail}}}}}"#)
}

fn id_member(id: Option<&str>) -> String {
    id.map_or(String::new(), |i| format!(r#""id":{},"#, jstr(i)))
}

/// The `type` of a frame the core wrote (already checked to be one JSON line).
fn type_of(frame: &[u8]) -> String {
    let v: Value = serde_json::from_slice(&mask_surrogate_escapes(frame)).expect("JSON");
    v["type"].as_str().unwrap_or_default().to_string()
}

/// (c) Passes `r` on, after checking that a refusal is one SPEC §4 names.
#[track_caller]
fn section4<T>(r: Result<T, Error>) -> Result<T, Error> {
    if let Err(e) = &r {
        assert!(is_spec_refusal(e), "a refusal SPEC §4 does not name: {e:?}");
    }
    r
}

// =====================================================================
// The expectations, kept by the harness
// =====================================================================

#[derive(Clone, Debug, PartialEq, Eq)]
enum Recorded {
    Nothing,
    Result(String),
    TooLarge,
}

#[derive(Clone, Debug)]
struct Pending {
    adapter: bool,
    name: String,
    id: Option<String>,
    deadline: u64,
    recorded: Recorded,
    handle: CallHandle,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Ended {
    Finished,
    TimedOut,
    Cancelled,
}

/// What one operation must produce.
#[derive(Default)]
struct Want {
    /// Call index → its decoded name and id and its outcome, for every call this operation completes.
    results: BTreeMap<u32, (Option<String>, Option<String>, Outcome)>,
    /// Frames to adapters, in order: (call index, bytes).
    adapter: Vec<(u32, String)>,
    /// Calls started: (call index, adapter?, tool, name, id, compact args).
    started: Vec<(u32, bool, usize, String, Option<String>, String)>,
}

struct Harness {
    cfg: CaseCfg,
    /// The wrapper's host: its clock, and what it drained (2 KiB frames at the most).
    host: Host,
    next_call: u32,
    pending: BTreeMap<u32, Pending>,
    /// Every handle the core gave, oldest first.
    handles: Vec<CallHandle>,
    ended: BTreeMap<u32, Ended>,
    held: VecDeque<Vec<u8>>,
    held_used: usize,
    intercepted: BTreeSet<u32>,
    /// Results per call index, from `on_tool_result`.
    answered: BTreeMap<u32, usize>,
    tool_results: usize,
    want: Want,
    /// Frames of the current operation: (number, route, bytes).
    frames: Vec<(u64, Route, Vec<u8>)>,
    /// Hook events of the current operation: calls intercepted, calls answered.
    calls: Vec<u32>,
    results: Vec<ResultHook>,
    tally: BTreeMap<String, usize>,
}

type W<'a> = Wrapper<'a, Recorder>;

impl Harness {
    fn new(cfg: CaseCfg) -> Self {
        Harness {
            cfg,
            host: Host::with_buffer(2048),
            next_call: 0,
            pending: BTreeMap::new(),
            handles: Vec::new(),
            ended: BTreeMap::new(),
            held: VecDeque::new(),
            held_used: 0,
            intercepted: BTreeSet::new(),
            answered: BTreeMap::new(),
            tool_results: 0,
            want: Want::default(),
            frames: Vec::new(),
            calls: Vec::new(),
            results: Vec::new(),
            tally: BTreeMap::new(),
        }
    }

    fn count(&mut self, what: impl Into<String>) {
        *self.tally.entry(what.into()).or_default() += 1;
    }

    fn t(&self) -> Instant {
        self.host.now()
    }

    fn now(&self) -> u64 {
        self.host.now().as_millis()
    }

    /// A call completes at once, as it is intercepted.
    fn expect_now(
        &mut self,
        index: u32,
        name: Option<String>,
        id: Option<String>,
        outcome: Outcome,
    ) {
        let old = self.want.results.insert(index, (name, id, outcome));
        assert!(
            old.is_none(),
            "the harness expects call {index} to end twice"
        );
    }

    /// A pending call completes with `outcome` (how it ended is `how`, `Finished` by default).
    fn expect_result(&mut self, index: u32, outcome: Outcome, how: Option<Ended>) {
        let p = self.pending.remove(&index).expect("a pending call");
        self.ended.insert(index, how.unwrap_or(Ended::Finished));
        self.expect_now(index, Some(p.name), p.id, outcome);
    }

    /// Ends `due` pending calls with a timeout (`None`) or cancel error, in that order.
    fn expect_ended(&mut self, due: Vec<u32>, reason: Option<&str>) {
        for k in due {
            let p = self.pending[&k].clone();
            if p.adapter {
                self.want.adapter.push((
                    k,
                    format!(
                        r#"{{"type":"CANCEL","content":{{{}"name":{},"reason":{}}}}}"#,
                        id_member(p.id.as_deref()),
                        jstr(&p.name),
                        jstr(reason.unwrap_or("timeout"))
                    ),
                ));
            }
            let (msg, how) = match reason {
                Some(r) => (format!("Tool {} cancelled: {r}", p.name), Ended::Cancelled),
                None => (
                    format!("Tool {} timed out after {}ms", p.name, self.cfg.timeout_ms),
                    Ended::TimedOut,
                ),
            };
            self.expect_result(k, Outcome::Error(msg), Some(how));
        }
    }

    /// Drains frames, hook events and started calls; checks every frame is one JSON line.
    fn drain(&mut self, w: &mut W<'_>, what: &str) {
        let log = self
            .host
            .try_drive(w)
            .unwrap_or_else(|e| panic!("{what}: a 2 KiB buffer is too small: {e:?}"));
        for entry in log {
            match entry {
                Entry::Frame { n, route, bytes } => {
                    // (a) One line, whatever it is: the ENDs this test feeds are one line too.
                    assert_one_json_line(&bytes, what);
                    self.frames.push((n, route, bytes));
                }
                Entry::ToolCall(c) => self.calls.push(c.index),
                Entry::ToolResult(c, o) => self.results.push(ResultHook::new(c, o)),
                Entry::Started(s) => {
                    let got = (
                        s.handle.index(),
                        s.kind == PendingKind::Adapter,
                        s.tool,
                        s.name,
                        s.id,
                        String::from_utf8(s.args).expect("UTF-8 args"),
                    );
                    let want = self.want.started.first().cloned();
                    assert_eq!(Some(&got), want.as_ref(), "{what}: started call");
                    self.want.started.remove(0);
                }
            }
        }
        assert_eq!(w.queued(), 0);
    }

    /// Checks what one operation produced against what it must, and the invariants.
    fn settle(&mut self, w: &mut W<'_>, what: &str) {
        self.drain(w, what);
        let hooks = std::mem::take(&mut self.results);
        for k in std::mem::take(&mut self.calls) {
            assert!(self.intercepted.contains(&k), "{what}: hook for call {k}");
        }
        let frames = std::mem::take(&mut self.frames);
        let mut got = BTreeMap::new();
        let mut result_frames = BTreeSet::new();
        for h in &hooks {
            *self.answered.entry(h.index).or_default() += 1;
            let answer = (h.name.clone(), h.id.clone(), h.outcome.clone());
            assert!(
                got.insert(h.index, answer).is_none(),
                "{what}: call {} answered twice in one operation",
                h.index
            );
            // (d) The hook fired right after its TOOL_RESULT was queued: that frame is it.
            let (_, route, frame) = frames
                .iter()
                .find(|(n, ..)| *n == h.seq)
                .unwrap_or_else(|| panic!("{what}: no frame {} for call {}", h.seq, h.index));
            assert_eq!(
                *route,
                Route::Model,
                "{what}: call {}'s TOOL_RESULT",
                h.index
            );
            let want = tool_result_frame(h.name.as_deref(), h.id.as_deref(), &h.outcome);
            assert_eq!(
                String::from_utf8_lossy(frame),
                want,
                "{what}: call {}'s TOOL_RESULT",
                h.index
            );
            result_frames.insert(h.seq);
            self.count(match &h.outcome {
                Outcome::Result(_) => "result".to_string(),
                Outcome::Error(e) => {
                    let kinds = [
                        "args exceed",
                        "result exceeds",
                        "nested deeper",
                        "timed out",
                        "cancelled",
                        "not found",
                        "Duplicate",
                        "Too many",
                        "Malformed",
                    ];
                    let k = kinds.iter().find(|k| e.contains(*k)).unwrap_or(&"other");
                    format!("error: {k}")
                }
            });
        }
        let want = std::mem::take(&mut self.want);
        assert_eq!(got, want.results, "{what}: calls completed and how");
        assert!(
            want.started.is_empty(),
            "{what}: calls not started: {:?}",
            want.started
        );
        let mut adapter = Vec::new();
        for (n, route, frame) in &frames {
            let ty = type_of(frame);
            match route {
                Route::Model if ty == "TOOL_RESULT" => {
                    assert!(
                        result_frames.contains(n),
                        "{what}: a TOOL_RESULT without its hook"
                    );
                    self.tool_results += 1;
                }
                Route::Model | Route::Consumer
                    if ty == "TEXT"
                        && frame
                            .starts_with(br#"{"type":"TEXT","content":"Tool results above."#) => {}
                Route::Consumer if self.held.front() == Some(frame) => {
                    self.held.pop_front();
                    self.count("released END");
                }
                Route::Consumer if ty == "ERROR" => {
                    let want = format!(
                        r#"{{"type":"ERROR","content":{{"message":"Tool round limit reached ({})"}}}}"#,
                        self.cfg.max_rounds
                    );
                    assert_eq!(String::from_utf8_lossy(frame), want, "{what}");
                }
                Route::Adapter(h) => {
                    adapter.push((h.index(), String::from_utf8_lossy(frame).into_owned()));
                    self.count(format!("adapter {ty}"));
                }
                _ => panic!(
                    "{what}: unexpected frame to {route:?}: {}",
                    String::from_utf8_lossy(frame)
                ),
            }
        }
        assert_eq!(adapter, want.adapter, "{what}: frames to adapters");
        assert_eq!(w.pending(), self.pending.len(), "{what}: pending");
        if self.pending.is_empty() {
            assert!(self.held.is_empty(), "{what}: ENDs still held at pending 0");
            self.held_used = 0;
        }
        // The trace carries args and results compact (SPEC §7.22).
        for e in w.trace().iter().filter(|e| !e.truncated) {
            let args = std::str::from_utf8(e.args).unwrap();
            assert_eq!(compact(args), args, "{what}: trace args");
            if let CallOutcome::Result(r) = e.outcome {
                let r = std::str::from_utf8(r).unwrap();
                assert_eq!(compact(r), r, "{what}: trace result");
            }
        }
    }

    /// The `n`-th pending call, by call number.
    /// The `n`-th pending call, by call number: of the kind the input is for (`adapter`),
    /// or of any kind when `n` is 3 mod 4, so that the other kind is refused now and then.
    fn nth_pending(&self, n: usize, adapter: bool) -> Option<(u32, Pending)> {
        let fits: Vec<(&u32, &Pending)> = self
            .pending
            .iter()
            .filter(|(_, p)| n % 4 == 3 || p.adapter == adapter)
            .collect();
        if fits.is_empty() {
            return None;
        }
        let (k, p) = fits[n % fits.len()];
        Some((*k, p.clone()))
    }

    /// What the core must say about a handle of a call that ended (SPEC §7.11).
    fn late_status(&self, h: CallHandle) -> Error {
        let reused = self
            .handles
            .iter()
            .any(|o| o.index() > h.index() && o.slot() == h.slot());
        match self.ended[&h.index()] {
            _ if reused => Error::Call(CallError::Stale),
            Ended::Finished => Error::Call(CallError::Completed),
            Ended::TimedOut => Error::Call(CallError::TimedOut),
            Ended::Cancelled => Error::Call(CallError::Cancelled),
        }
    }

    // ----- operations -------------------------------------------------

    fn call(&mut self, w: &mut W<'_>, spec: &CallSpec) -> Result<(), String> {
        let max_depth = self.cfg.max_depth;
        let (frame, name_tok, id_tok, args) = call_frame(spec, max_depth);
        let got = section4(w.handle_response(self.t(), frame.as_bytes()));
        // What SPEC §7.25, §7.17, §4 and then §7.4 say, in the core's order.
        let malformed = match spec.types {
            Types::CallThenText | Types::CallTwice => true,
            Types::TextThenCall => self.cfg.full,
            Types::First | Types::Last => false,
        };
        let forward = matches!(spec.types, Types::TextThenCall) && !self.cfg.full;
        // The frame is level 1 and its content level 2 (SPEC §7.17).
        let too_deep = match &spec.content {
            ContentSpec::Object {
                args: ArgsSpec::Deep(delta),
                ..
            } => *delta == 1,
            ContentSpec::Object {
                args: ArgsSpec::Value(j, _),
                ..
            } => 2 + j.depth() > max_depth as usize,
            _ => false,
        };
        let name = name_tok.and_then(decode_token);
        let id = id_tok.and_then(decode_token);
        let want_err = if forward {
            None
        } else if malformed || too_deep {
            Some("Malformed")
        } else if name.as_ref().is_some_and(|n| n.len() > NAME_CAP) {
            Some("NameTooLong")
        } else if id.as_ref().is_some_and(|i| i.len() > ID_CAP) {
            Some("IdTooLong")
        } else {
            None
        };
        if forward {
            self.count("call: forwarded (duplicate type)");
            return match got {
                Ok(Disposition::Forward) => Ok(()),
                other => Err(format!("want Forward, got {other:?}")),
            };
        }
        if let Some(kind) = want_err {
            self.count(format!("call refused: {kind}"));
            return match got {
                Err(e) if format!("{e:?}").starts_with(kind) => Ok(()),
                other => Err(format!("want {kind}, got {other:?}")),
            };
        }
        let index = self.next_call;
        self.next_call += 1;
        self.intercepted.insert(index);
        let compact_args = compact(&args);
        let tool = name.as_deref().and_then(tool_index);
        let duplicate = id
            .as_ref()
            .is_some_and(|i| self.pending.values().any(|p| p.id.as_ref() == Some(i)));
        let fail = |m: String| Some(Outcome::Error(m));
        let outcome = match (&name, tool) {
            (None, _) => fail(polyweave_tool_adapter::wrapper::MALFORMED_TOOL_CALL.into()),
            (Some(n), None) => fail(format!("Tool \"{n}\" not found")),
            (Some(_), Some(_)) if duplicate => fail(format!(
                "Duplicate tool call id \"{}\"",
                id.as_deref().unwrap_or_default()
            )),
            (Some(n), Some(t)) => match TOOLS[t].1 {
                Kind::Res => Some(Outcome::Result(compact(RES_OUT))),
                Kind::Big => fail(format!("Tool {n} result exceeds {RESULT_CAP} bytes")),
                Kind::Echo if compact_args.len() > RESULT_CAP => {
                    fail(format!("Tool {n} result exceeds {RESULT_CAP} bytes"))
                }
                Kind::Echo => {
                    if args.len() > RESULT_CAP.max(MESSAGE_CAP) {
                        // Over the sync buffer as written, under the cap compact: carried.
                        self.count("sync result compacted to fit its buffer");
                    }
                    Some(Outcome::Result(compact_args.clone()))
                }
                Kind::Fail => fail(FAIL_MSG.into()),
                Kind::Deep => fail(format!(
                    "Tool {n} result is nested deeper than {max_depth} levels"
                )),
                Kind::Deferred | Kind::Adapter if compact_args.len() > ARGS_CAP => {
                    fail(format!("Tool {n} args exceed {ARGS_CAP} bytes"))
                }
                Kind::Deferred | Kind::Adapter if self.pending.len() == self.cfg.slots => fail(
                    format!("Too many pending tool calls (max {})", self.cfg.slots),
                ),
                Kind::Deferred | Kind::Adapter => None,
            },
        };
        let handle = match got {
            Ok(Disposition::Intercepted {
                index: call,
                handle,
            }) if call == index => handle,
            other => return Err(format!("want call {index} intercepted, got {other:?}")),
        };
        match outcome {
            Some(o) => {
                if handle.is_some() {
                    return Err(format!("call {index} must not take a slot"));
                }
                self.expect_now(index, name, id, o);
            }
            None => {
                let Some(h) = handle else {
                    return Err(format!("call {index} must take a slot"));
                };
                let (n, t) = (name.unwrap(), tool.unwrap());
                let adapter = TOOLS[t].1 == Kind::Adapter;
                self.count(if adapter {
                    "adapter call"
                } else {
                    "deferred call"
                });
                if compact_args.len() < args.len() {
                    self.count("pending call with spaced args");
                }
                if args.len() > ARGS_CAP {
                    self.count("pending call with args over the cap as written, under it compact");
                }
                if adapter {
                    self.want.adapter.push((
                        index,
                        format!(
                            r#"{{"type":"TOOL_CALL","content":{{{}"name":{},"args":{compact_args}}}}}"#,
                            id_member(id.as_deref()),
                            jstr(&n)
                        ),
                    ));
                }
                self.want
                    .started
                    .push((index, adapter, t, n.clone(), id.clone(), compact_args));
                self.handles.push(h);
                self.pending.insert(
                    index,
                    Pending {
                        adapter,
                        name: n,
                        id,
                        deadline: self.now() + self.cfg.timeout_ms as u64,
                        recorded: Recorded::Nothing,
                        handle: h,
                    },
                );
            }
        }
        Ok(())
    }

    fn complete(&mut self, w: &mut W<'_>, n: usize, spec: &CompleteSpec) -> Result<(), String> {
        let Some((k, p)) = self.nth_pending(n, false) else {
            return Ok(());
        };
        let h = p.handle;
        let max_depth = self.cfg.max_depth as usize;
        let raw: Result<String, String> = match spec {
            CompleteSpec::Value(j, sel, heavy) => {
                let mut ws = if *heavy { Ws::heavy() } else { Ws::new(sel) };
                let (a, b) = (ws.next(), ws.next());
                Ok(format!("{a}{}{b}", render(j, &mut ws)))
            }
            CompleteSpec::Big(n) => Ok(render(&big_j(*n), &mut Ws::new(&[3, 5]))),
            CompleteSpec::Deep(delta) => Ok(nested_spaced(max_depth + delta)),
            CompleteSpec::Invalid(i) => Ok(INVALID_RESULTS[*i].to_string()),
            CompleteSpec::Error(i) => Err(complete_error(*i)),
        };
        let got = section4(w.complete(
            self.t(),
            h,
            raw.as_deref().map(str::as_bytes).map_err(String::as_str),
        ));
        if p.adapter {
            self.count("complete: wrong kind");
            return match got {
                Err(Error::Call(CallError::WrongKind)) => Ok(()),
                other => Err(format!("want WrongKind, got {other:?}")),
            };
        }
        let name = &p.name;
        let (want, outcome) = match (&raw, spec) {
            (Ok(_), CompleteSpec::Invalid(_)) => {
                self.count("complete: invalid result");
                return match got {
                    Err(Error::InvalidResult(_)) => Ok(()),
                    other => Err(format!("want InvalidResult, got {other:?}")),
                };
            }
            (Ok(_), CompleteSpec::Deep(1)) => (
                Completed::ResultTooDeep {
                    max_depth: max_depth as u8,
                },
                Outcome::Error(format!(
                    "Tool {name} result is nested deeper than {max_depth} levels"
                )),
            ),
            (Ok(_), CompleteSpec::Value(j, ..)) if j.depth() > max_depth => (
                Completed::ResultTooDeep {
                    max_depth: max_depth as u8,
                },
                Outcome::Error(format!(
                    "Tool {name} result is nested deeper than {max_depth} levels"
                )),
            ),
            (Ok(r), _) => {
                let c = compact(r);
                if c.len() > RESULT_CAP {
                    (
                        Completed::ResultTooLarge {
                            len: c.len(),
                            cap: RESULT_CAP,
                        },
                        Outcome::Error(format!("Tool {name} result exceeds {RESULT_CAP} bytes")),
                    )
                } else {
                    if r.len() > RESULT_CAP {
                        self.count("complete: result over the cap as written, under it compact");
                    }
                    (Completed::AsGiven, Outcome::Result(c))
                }
            }
            (Err(m), _) => match escaped_prefix(m, MESSAGE_CAP) {
                // Cut to fit message_cap once escaped, never refused (SPEC §4: flagged).
                cut if cut.len() < m.len() => {
                    self.count("complete: message cut");
                    (
                        Completed::MessageCut {
                            len: m.len(),
                            cap: MESSAGE_CAP,
                        },
                        Outcome::Error(cut),
                    )
                }
                _ => (Completed::AsGiven, Outcome::Error(m.clone())),
            },
        };
        if got != Ok(want) {
            return Err(format!("want Ok({want:?}), got {got:?}"));
        }
        let kind = format!("{want:?}");
        self.count(format!(
            "complete: {}",
            kind.split([' ', '{']).next().unwrap()
        ));
        self.expect_result(k, outcome, None);
        Ok(())
    }

    fn settle_adapter(&mut self, k: u32) {
        let p = self.pending[&k].clone();
        let outcome = match p.recorded {
            Recorded::Nothing => Outcome::Result("null".into()),
            Recorded::Result(r) => Outcome::Result(r),
            Recorded::TooLarge => {
                self.count("adapter: settled too large");
                Outcome::Error(format!("Tool {} result exceeds {RESULT_CAP} bytes", p.name))
            }
        };
        self.expect_result(k, outcome, None);
    }

    fn adapter(&mut self, w: &mut W<'_>, n: usize, spec: &AdapterSpec) -> Result<(), String> {
        let Some((k, p)) = self.nth_pending(n, true) else {
            return Ok(());
        };
        let h = p.handle;
        let (frame, meaning) = adapter_frame(spec, self.cfg.max_depth);
        let got = section4(w.handle_adapter_frame(self.t(), h, frame.as_bytes()));
        if !p.adapter {
            return match got {
                Err(Error::Call(CallError::WrongKind)) => Ok(()),
                other => Err(format!("want WrongKind, got {other:?}")),
            };
        }
        if let AdMeaning::Malformed = meaning {
            self.count("adapter: malformed");
            return match got {
                Err(Error::Malformed(_)) => Ok(()),
                other => Err(format!("want Malformed, got {other:?}")),
            };
        }
        if let Err(e) = got {
            return Err(format!("want Ok, got {e:?}"));
        }
        let kind = format!("{meaning:?}");
        self.count(format!("adapter: {}", kind.split('(').next().unwrap()));
        match meaning {
            AdMeaning::Record(r) => {
                let slot = self.pending.get_mut(&k).unwrap();
                if slot.recorded == Recorded::Nothing {
                    slot.recorded = if r.len() > RESULT_CAP {
                        Recorded::TooLarge
                    } else {
                        Recorded::Result(r)
                    };
                }
            }
            AdMeaning::Fail(msg) => {
                let msg = match msg {
                    Some(m) => escaped_prefix(&m, MESSAGE_CAP),
                    None => format!("Tool {} failed", p.name),
                };
                self.expect_result(k, Outcome::Error(msg), None);
            }
            AdMeaning::End => self.settle_adapter(k),
            AdMeaning::Ignore | AdMeaning::Malformed => {}
        }
        Ok(())
    }

    fn close(&mut self, w: &mut W<'_>, n: usize) -> Result<(), String> {
        let Some((k, p)) = self.nth_pending(n, true) else {
            return Ok(());
        };
        let got = section4(w.handle_adapter_closed(self.t(), p.handle));
        match (p.adapter, got) {
            (false, Err(Error::Call(CallError::WrongKind))) => Ok(()),
            (true, Ok(())) => {
                self.settle_adapter(k);
                Ok(())
            }
            (_, other) => Err(format!("want {}, got {other:?}", p.adapter)),
        }
    }

    fn late(&mut self, w: &mut W<'_>, n: usize, how: u8) -> Result<(), String> {
        let ended: Vec<CallHandle> = self
            .handles
            .iter()
            .copied()
            .filter(|h| self.ended.contains_key(&h.index()))
            .collect();
        if ended.is_empty() {
            return Ok(());
        }
        let h = ended[n % ended.len()];
        let want = self.late_status(h);
        let t = self.t();
        let got = section4(match how {
            0 => w.complete(t, h, Ok(b"1")).map(drop),
            1 => w.handle_adapter_frame(t, h, br#"{"type":"END"}"#),
            _ => w.handle_adapter_closed(t, h),
        });
        self.count(format!("late: {want:?}"));
        match got {
            Err(e) if e == want => Ok(()),
            other => Err(format!("want {want:?}, got {other:?}")),
        }
    }

    fn tick(&mut self, w: &mut W<'_>, dt: u64, what: &str) -> Result<(), String> {
        self.host.advance(dt);
        let now = self.now();
        let mut due: Vec<(u64, u32)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(k, p)| (p.deadline, *k))
            .collect();
        due.sort();
        self.expect_ended(due.into_iter().map(|(_, k)| k).collect(), None);
        // Calls left when the queue fills up stay due: drain and give the clock again.
        for _ in 0..8 {
            section4(w.handle_timeout(self.t())).map_err(|e| format!("handle_timeout: {e:?}"))?;
            if w.poll_timeout().is_none_or(|d| d > self.t()) {
                return Ok(());
            }
            self.drain(w, what);
        }
        Err("timeouts still due".into())
    }

    fn cancel(&mut self, w: &mut W<'_>, reason: &str, what: &str) -> Result<(), String> {
        let all: Vec<u32> = self.pending.keys().copied().collect();
        self.expect_ended(all, Some(reason));
        for _ in 0..8 {
            match section4(w.cancel(self.t(), reason)) {
                Ok(0) => return Ok(()),
                Ok(_) => self.drain(w, what),
                Err(e) => return Err(format!("cancel: {e:?}")),
            }
        }
        Err("cancel left calls pending".into())
    }

    fn pass(&mut self, w: &mut W<'_>, i: usize, request: bool) -> Result<(), String> {
        let (frame, refused_when_full) = PASS[i];
        let got = section4(if request {
            w.handle_request(self.t(), frame.as_bytes())
        } else {
            w.handle_response(self.t(), frame.as_bytes())
        });
        match got {
            Err(Error::Malformed(_)) if self.cfg.full && refused_when_full => Ok(()),
            Ok(Disposition::Forward) if !(self.cfg.full && refused_when_full) => Ok(()),
            other => Err(format!("want Forward or Malformed, got {other:?}")),
        }
    }

    fn end(&mut self, w: &mut W<'_>, i: usize) -> Result<(), String> {
        let (frame, is_end, refused_when_full) = ENDS[i];
        let got = section4(w.handle_response(self.t(), frame.as_bytes()));
        if self.cfg.full && refused_when_full {
            return match got {
                Err(Error::Malformed(FrameError::DuplicateType)) => Ok(()),
                other => Err(format!("want DuplicateType, got {other:?}")),
            };
        }
        if !is_end || self.pending.is_empty() {
            return match got {
                Ok(Disposition::Forward) => Ok(()),
                other => Err(format!("want Forward, got {other:?}")),
            };
        }
        let needed = HELD_HEADER + frame.len();
        if self.held_used + needed > HELD_BYTES {
            self.count("END: held full");
            return match got {
                Err(Error::HeldFull { .. }) => Ok(()),
                other => Err(format!("want HeldFull, got {other:?}")),
            };
        }
        self.held_used += needed;
        self.held.push_back(frame.as_bytes().to_vec());
        self.count("END: held");
        match got {
            Ok(Disposition::Held) => Ok(()),
            other => Err(format!("want Held, got {other:?}")),
        }
    }

    fn apply(&mut self, w: &mut W<'_>, op: &Op, what: &str) -> Result<(), String> {
        match op {
            Op::Call(spec) => self.call(w, spec),
            Op::Complete(n, spec) => self.complete(w, *n, spec),
            Op::Adapter(n, spec) => self.adapter(w, *n, spec),
            Op::Close(n) => self.close(w, *n),
            Op::Late(n, how) => self.late(w, *n, *how),
            Op::Tick(dt) => self.tick(w, *dt, what),
            Op::Cancel(r) => self.cancel(w, REASONS[*r], what),
            Op::Abort => {
                w.abort();
                Ok(())
            }
            Op::Pass(i) => self.pass(w, *i, false),
            Op::Request(i) => self.pass(w, *i, true),
            Op::End(i) => self.end(w, *i),
        }
    }
}

/// Runs one case; returns how often each kind of outcome happened.
fn run(cfg: &CaseCfg, ops: &[Op]) -> BTreeMap<String, usize> {
    let deep = DeepTool(cfg.max_depth);
    let tools = registered(&deep);
    let mut storage = Storage::new(config(cfg), cfg.slots);
    let mut w = storage.wrapper(&tools, Recorder::default());
    let mut h = Harness::new(cfg.clone());
    for (i, op) in ops.iter().enumerate() {
        let what = format!("op {i} {op:?} at {}ms", h.now());
        if let Err(e) = h.apply(&mut w, op, &what) {
            panic!("{what}: {e}");
        }
        h.settle(&mut w, &what);
    }
    let stats = w.stats();
    if stats.messages_truncated > 0 {
        h.count("messages truncated");
    }
    if stats.last_error_truncated > 0 {
        h.count("last tool errors truncated");
    }
    // (b) Cancel what is left; then the wrapper still takes and answers a call.
    h.cancel(&mut w, "end", "final cancel")
        .expect("final cancel");
    h.settle(&mut w, "final cancel");
    let probe = CallSpec {
        content: ContentSpec::Object {
            id: 1,
            name: 2,
            args: ArgsSpec::Value(J::Arr(vec![J::Lit("1"), J::Str("b c".into())]), true),
            order: 0,
        },
        types: Types::First,
        ws: vec![5, 6],
    };
    h.call(&mut w, &probe).expect("the wrapper is still usable");
    h.settle(&mut w, "probe");
    assert_eq!(w.pending(), 0);
    assert_eq!(
        h.tool_results,
        h.intercepted.len(),
        "one TOOL_RESULT per intercepted call"
    );
    let answered: BTreeSet<u32> = h.answered.keys().copied().collect();
    assert_eq!(answered, h.intercepted, "every intercepted call answered");
    assert!(
        h.answered.values().all(|&n| n == 1),
        "a call answered twice: {:?}",
        h.answered
    );
    h.tally
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: proptest_cases(256),
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_frame_is_one_line_and_every_call_is_answered_once((cfg, ops) in case()) {
        run(&cfg, &ops);
    }
}

/// The generator reaches what the properties are about (256 cases from a fixed seed).
#[test]
fn generator_reaches_every_case() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = case();
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..256 {
        let (cfg, ops) = strategy.new_tree(&mut runner).expect("a case").current();
        for (k, v) in run(&cfg, &ops) {
            *total.entry(k).or_default() += v;
        }
    }
    for (k, v) in &total {
        println!("{v:>6}  {k}");
    }
    let must = [
        "result",
        "error: args exceed",
        "error: result exceeds",
        "error: nested deeper",
        "error: timed out",
        "error: cancelled",
        "error: not found",
        "error: Duplicate",
        "error: Too many",
        "error: Malformed",
        "adapter TOOL_CALL",
        "adapter CANCEL",
        "adapter: settled too large",
        "adapter: malformed",
        "complete: AsGiven",
        "complete: ResultTooLarge",
        "complete: ResultTooDeep",
        "complete: invalid result",
        "complete: message cut",
        "complete: wrong kind",
        "complete: result over the cap as written, under it compact",
        "pending call with spaced args",
        "pending call with args over the cap as written, under it compact",
        "call refused: Malformed",
        "call refused: NameTooLong",
        "call refused: IdTooLong",
        "call: forwarded (duplicate type)",
        "END: held",
        "released END",
        "late: Call(Completed)",
        "late: Call(TimedOut)",
        "late: Call(Cancelled)",
        "messages truncated",
        "last tool errors truncated",
        "sync result compacted to fit its buffer",
    ];
    let missing: Vec<&str> = must
        .iter()
        .copied()
        .filter(|k| !total.contains_key(*k))
        .collect();
    assert!(missing.is_empty(), "never reached: {missing:?}");
}

// =====================================================================
// Fixed sequences, exact bytes
// =====================================================================

/// A wrapper with the property test's tools and capacities (depth limit 5, no mirror), and
/// its host (frames of 1 KiB at the most).
fn with_wrapper<R>(
    full: bool,
    slots: usize,
    f: impl FnOnce(&mut Host, &mut Wrapper<'_, NoHooks>) -> R,
) -> R {
    let deep = DeepTool(5);
    let tools = registered(&deep);
    let cfg = config(&CaseCfg {
        slots,
        timeout_ms: 100,
        max_depth: 5,
        full,
        max_rounds: 0,
        mirror: false,
    });
    let mut storage = Storage::new(cfg, slots);
    let mut w = storage.wrapper(&tools, NoHooks);
    f(&mut Host::with_buffer(1024), &mut w)
}

/// Every queued frame, each checked to be one JSON line: (route, text).
fn frames<H: Hooks>(host: &mut Host, w: &mut Wrapper<'_, H>) -> Vec<(Route, String)> {
    let frames = host.frames(w);
    for (_, frame) in &frames {
        assert_one_json_line(frame.as_bytes(), "fixed sequence");
    }
    frames
}

const PROMPT: &str = r#"{"type":"TEXT","content":"Tool results above."}"#;

fn prompt_with(error: &str) -> String {
    format!(
        r#"{{"type":"TEXT","content":"Tool results above. Last tool error: {}"}}"#,
        &jstr(error)[1..jstr(error).len() - 1]
    )
}

fn started(w: &mut Wrapper<'_, NoHooks>) -> (CallHandle, String, Option<String>, String) {
    match w.poll_event() {
        Some(Event::CallStarted {
            handle,
            name,
            id,
            args,
            ..
        }) => (
            handle,
            name.to_string(),
            id.map(str::to_string),
            String::from_utf8(args.to_vec()).unwrap(),
        ),
        None => panic!("no call started"),
    }
}

fn model(frame: &str) -> (Route, String) {
    (Route::Model, frame.to_string())
}

#[test]
fn echo_result_loses_the_white_space_of_the_args() {
    with_wrapper(false, 1, |host, w| {
        let call = "{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"echo\",\"args\":[\n1 ,\t{\"a\" : \"b c\"}]}}";
        assert!(matches!(
            w.handle_response(at(0), call.as_bytes()),
            Ok(Disposition::Intercepted {
                index: 0,
                handle: None
            })
        ));
        assert_eq!(
            frames(host, w),
            [
                model(
                    r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":[1,{"a":"b c"}]}}"#
                ),
                model(PROMPT),
            ]
        );
        // CR LF, and white space around the args.
        let call = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"e\",\"name\":\"echo\",\"args\": \r\n{ \"k\"\r\n:\t-0 , \"s\" : \"\\\\ud800 \\ud800\" } \n}}";
        w.handle_response(at(1), call.as_bytes()).unwrap();
        assert_eq!(
            frames(host, w),
            [
                model(
                    r#"{"type":"TOOL_RESULT","content":{"id":"e","name":"echo","result":{"k":-0,"s":"\\ud800 \ud800"}}}"#
                ),
                model(PROMPT),
            ]
        );
        // A sync result with white space of its own.
        w.handle_response(at(2), br#"{"type":"TOOL_CALL","content":{"name":"res"}}"#)
            .unwrap();
        assert_eq!(
            frames(host, w),
            [
                model(
                    r#"{"type":"TOOL_RESULT","content":{"name":"res","result":{"ok":[1,2.50],"s":"a b\ud800"}}}"#
                ),
                model(PROMPT),
            ]
        );
    });
}

#[test]
fn deferred_args_and_results_are_carried_compact() {
    with_wrapper(false, 2, |host, w| {
        let call = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"later\",\"args\":{ \"q\" :\r\n [ \"a b\" ,\t\"\\ud800\" ] }}}";
        w.handle_response(at(0), call.as_bytes()).unwrap();
        assert_eq!(frames(host, w), []);
        let (h, name, id, args) = started(w);
        assert_eq!(
            (name.as_str(), id.as_deref(), args.as_str()),
            ("later", Some("c1"), r#"{"q":["a b","\ud800"]}"#)
        );
        let result = "\n[ 1 ,\n{\"x\" : \"\\\\ud800 y\"} ]\t";
        assert_eq!(
            w.complete(at(1), h, Ok(result.as_bytes())),
            Ok(Completed::AsGiven)
        );
        assert_eq!(
            frames(host, w),
            [
                model(
                    r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"later","result":[1,{"x":"\\ud800 y"}]}}"#
                ),
                model(PROMPT),
            ]
        );
        // A non-string `error` in the result: the prompt's last tool error is its compact text.
        w.handle_response(at(2), br#"{"type":"TOOL_CALL","content":{"name":"later"}}"#)
            .unwrap();
        let (h, ..) = started(w);
        let result = "{\"error\" : [ 1,\n\"e f\" ] }";
        assert_eq!(
            w.complete(at(3), h, Ok(result.as_bytes())),
            Ok(Completed::AsGiven)
        );
        assert_eq!(
            frames(host, w),
            [
                model(
                    r#"{"type":"TOOL_RESULT","content":{"name":"later","result":{"error":[1,"e f"]}}}"#
                ),
                model(&prompt_with(r#"[1,"e f"]"#)),
            ]
        );
    });
}

#[test]
fn args_capacity_counts_compact_bytes() {
    // 64 bytes compact: the cap exactly, even with 40 spaces around and inside.
    let at_cap = format!("\"{}\"", "x".repeat(62));
    let padded = format!("[{}{at_cap}{}]", " ".repeat(20), "\n".repeat(20));
    assert_eq!(compact(&padded).len(), 66);
    let padded_at_cap = format!("{}{at_cap}{}", " ".repeat(20), "\t".repeat(20));
    let over = format!("\"{}\"", "x".repeat(63));
    with_wrapper(false, 2, |host, w| {
        let call = |name: &str, args: &str| {
            format!(r#"{{"type":"TOOL_CALL","content":{{"name":"{name}","args":{args}}}}}"#)
        };
        w.handle_response(at(0), call("later", &padded_at_cap).as_bytes())
            .unwrap();
        let (_, _, _, args) = started(w);
        assert_eq!(args, at_cap);
        assert_eq!(frames(host, w), []);
        for (name, args) in [("later", &over), ("files", &padded), ("wait\\ud800", &over)] {
            let disposition = w.handle_response(at(1), call(name, args).as_bytes());
            assert!(matches!(
                disposition,
                Ok(Disposition::Intercepted { handle: None, .. })
            ));
            let shown = decode(name);
            assert_eq!(
                frames(host, w),
                [model(&format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"name":{},"error":"Tool {shown} args exceed 64 bytes"}}}}"#,
                    jstr(&shown)
                ))]
            );
        }
        // The args check comes before the free slot: one slot left, still the args message.
        w.handle_response(at(2), call("files", "[1,\n2]").as_bytes())
            .unwrap();
        assert_eq!(
            frames(host, w),
            [(
                Route::Adapter(started(w).0),
                r#"{"type":"TOOL_CALL","content":{"name":"files","args":[1,2]}}"#.to_string()
            )]
        );
        w.handle_response(at(3), call("later", &over).as_bytes())
            .unwrap();
        assert_eq!(
            frames(host, w),
            [model(
                r#"{"type":"TOOL_RESULT","content":{"name":"later","error":"Tool later args exceed 64 bytes"}}"#
            )]
        );
        // Sync tools have no args capacity: echo's result is what is too large.
        w.handle_response(at(4), call("echo", &over).as_bytes())
            .unwrap();
        assert_eq!(
            frames(host, w),
            [model(
                r#"{"type":"TOOL_RESULT","content":{"name":"echo","error":"Tool echo result exceeds 64 bytes"}}"#
            )]
        );
    });
}

/// SPEC §7.23: "Sizes are of the value without insignificant white space". A sync tool writes
/// into a buffer of `max(result_cap, message_cap)` bytes; output that would overflow it is
/// compacted as it comes, so echo's result of 102 bytes as written, `{}` compact, is carried.
#[test]
fn echo_result_under_the_cap_compact_but_over_it_as_written() {
    with_wrapper(false, 0, |host, w| {
        let call = format!(
            r#"{{"type":"TOOL_CALL","content":{{"name":"echo","args":{{{}}}}}}}"#,
            " ".repeat(100)
        );
        w.handle_response(at(0), call.as_bytes()).unwrap();
        assert_eq!(
            frames(host, w),
            [
                model(r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{}}}"#),
                model(PROMPT),
            ]
        );
    });
}

/// Up to the sync buffer (80 bytes as written), white space in a sync result is dropped.
#[test]
fn echo_result_as_written_up_to_the_sync_buffer_is_carried() {
    with_wrapper(false, 0, |host, w| {
        let call = format!(
            r#"{{"type":"TOOL_CALL","content":{{"name":"echo","args":{{{}}}}}}}"#,
            " \n\t\r".repeat(19) + "  "
        );
        w.handle_response(at(0), call.as_bytes()).unwrap();
        assert_eq!(
            frames(host, w),
            [
                model(r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{}}}"#),
                model(PROMPT),
            ]
        );
    });
}

#[test]
fn completed_results_over_capacity_or_too_deep_fail_the_call() {
    with_wrapper(false, 1, |host, w| {
        let next = |w: &mut Wrapper<'_, NoHooks>, t: u64| {
            w.handle_response(
                at(t),
                br#"{"type":"TOOL_CALL","content":{"id":"d","name":"later"}}"#,
            )
            .unwrap();
            started(w).0
        };
        let fails = |m: &str| {
            vec![
                model(&format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"id":"d","name":"later","error":"{m}"}}}}"#
                )),
                model(&prompt_with(m)),
            ]
        };
        let h = next(w, 0);
        let over = format!("\"{}\"", "x".repeat(63));
        // 65 bytes compact, 66 as written.
        let spaced_over = format!("\n{over}");
        assert_eq!(
            w.complete(at(1), h, Ok(spaced_over.as_bytes())),
            Ok(Completed::ResultTooLarge { len: 65, cap: 64 })
        );
        assert_eq!(frames(host, w), fails("Tool later result exceeds 64 bytes"));
        // The cap exactly, with white space around it.
        let h = next(w, 1);
        let at_cap = format!("\"{}\"", "x".repeat(62));
        let spaced_at_cap = format!(" \t{at_cap}\r\n");
        assert_eq!(
            w.complete(at(1), h, Ok(spaced_at_cap.as_bytes())),
            Ok(Completed::AsGiven)
        );
        assert_eq!(
            frames(host, w),
            [
                model(&format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"id":"d","name":"later","result":{at_cap}}}}}"#
                )),
                model(PROMPT),
            ]
        );
        let h = next(w, 2);
        assert_eq!(
            w.complete(at(3), h, Ok(nested_spaced(6).as_bytes())),
            Ok(Completed::ResultTooDeep { max_depth: 5 })
        );
        assert_eq!(
            frames(host, w),
            fails("Tool later result is nested deeper than 5 levels")
        );
        // At the limit, and 100 bytes as written that compact under the cap: carried.
        let h = next(w, 4);
        assert_eq!(
            w.complete(at(5), h, Ok(nested_spaced(5).as_bytes())),
            Ok(Completed::AsGiven)
        );
        assert_eq!(
            frames(host, w),
            [
                model(
                    r#"{"type":"TOOL_RESULT","content":{"id":"d","name":"later","result":[[[[[1]]]]]}}"#
                ),
                model(PROMPT),
            ]
        );
        let h = next(w, 6);
        let padded = format!(
            "{{{}\"a\"{}:{}[1]}}",
            " ".repeat(40),
            "\t".repeat(30),
            "\n".repeat(21)
        );
        assert_eq!(padded.len(), 100);
        assert_eq!(
            w.complete(at(7), h, Ok(padded.as_bytes())),
            Ok(Completed::AsGiven)
        );
        assert_eq!(
            frames(host, w),
            [
                model(
                    r#"{"type":"TOOL_RESULT","content":{"id":"d","name":"later","result":{"a":[1]}}}"#
                ),
                model(PROMPT),
            ]
        );
    });
}

#[test]
fn sync_results_over_capacity_or_too_deep_fail_the_call() {
    with_wrapper(false, 0, |host, w| {
        for (name, msg) in [
            ("big", "Tool big result exceeds 64 bytes"),
            ("deep", "Tool deep result is nested deeper than 5 levels"),
        ] {
            let call = format!(r#"{{"type":"TOOL_CALL","content":{{"name":"{name}"}}}}"#);
            w.handle_response(at(0), call.as_bytes()).unwrap();
            assert_eq!(
                frames(host, w),
                [
                    model(&format!(
                        r#"{{"type":"TOOL_RESULT","content":{{"name":"{name}","error":"{msg}"}}}}"#
                    )),
                    model(&prompt_with(msg)),
                ]
            );
        }
    });
}

#[test]
fn adapter_results_are_recorded_compact_and_too_large_ones_fail_at_the_end() {
    with_wrapper(false, 2, |host, w| {
        w.handle_response(
            at(0),
            b"{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"f\",\"name\":\"files\",\"args\":{\"p\" :\n\"/tmp\"}}}",
        )
        .unwrap();
        let (h, ..) = started(w);
        assert_eq!(
            frames(host, w),
            [(
                Route::Adapter(h),
                r#"{"type":"TOOL_CALL","content":{"id":"f","name":"files","args":{"p":"/tmp"}}}"#
                    .to_string()
            )]
        );
        let big = format!(
            "{{\"type\":\"TOOL_RESULT\",\n\"content\":{{\"result\":\"{}\"}}}}",
            "y".repeat(63)
        );
        w.handle_adapter_frame(at(1), h, big.as_bytes()).unwrap();
        // The first TOOL_RESULT counts, even when it is too large.
        w.handle_adapter_frame(
            at(2),
            h,
            br#"{"type":"TOOL_RESULT","content":{"result":1}}"#,
        )
        .unwrap();
        assert_eq!(frames(host, w), []);
        w.handle_adapter_frame(at(3), h, br#"{"type":"END"}"#)
            .unwrap();
        let msg = "Tool files result exceeds 64 bytes";
        assert_eq!(
            frames(host, w),
            [
                model(&format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"id":"f","name":"files","error":"{msg}"}}}}"#
                )),
                model(&prompt_with(msg)),
            ]
        );
        // White space in the adapter's result, and in the whole frame when it is the result.
        for (frame, result) in [
            (
                "{\"type\":\"TOOL_RESULT\",\"content\":{\"result\":[ 1 ,\r\n 2 ]}}",
                "[1,2]",
            ),
            (
                "{\"type\":\"TOOL_RESULT\",\n\"content\" : \"x\\ud800\"}\n",
                r#"{"type":"TOOL_RESULT","content":"x\ud800"}"#,
            ),
        ] {
            w.handle_response(at(5), br#"{"type":"TOOL_CALL","content":{"name":"files"}}"#)
                .unwrap();
            let (h, ..) = started(w);
            assert_eq!(frames(host, w).len(), 1);
            w.handle_adapter_frame(at(5), h, frame.as_bytes()).unwrap();
            w.handle_adapter_closed(at(5), h).unwrap();
            assert_eq!(
                frames(host, w),
                [
                    model(&format!(
                        r#"{{"type":"TOOL_RESULT","content":{{"name":"files","result":{result}}}}}"#
                    )),
                    model(PROMPT),
                ]
            );
        }
    });
}

#[test]
fn lone_surrogates_decode_to_the_replacement_character() {
    with_wrapper(false, 2, |host, w| {
        // Name and id decode to U+FFFD; the args keep the escape as written.
        let call = br#"{"type":"TOOL_CALL","content":{"id":"\ud800","name":"wait\udfff","args":{"s":"\ud800"}}}"#;
        w.handle_response(at(0), call).unwrap();
        let (_, name, id, args) = started(w);
        assert_eq!(
            (name.as_str(), id.as_deref(), args.as_str()),
            (WAIT, Some("\u{FFFD}"), r#"{"s":"\ud800"}"#)
        );
        // Another lone surrogate is the same id.
        w.handle_response(
            at(1),
            br#"{"type":"TOOL_CALL","content":{"id":"\udbff","name":"res"}}"#,
        )
        .unwrap();
        assert_eq!(
            frames(host, w),
            [model(
                "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"\u{FFFD}\",\"name\":\"res\",\"error\":\"Duplicate tool call id \\\"\u{FFFD}\\\"\"}}"
            )]
        );
        w.handle_response(
            at(2),
            br#"{"type":"TOOL_CALL","content":{"name":"\ud800x"}}"#,
        )
        .unwrap();
        assert_eq!(
            frames(host, w),
            [model(
                "{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"\u{FFFD}x\",\"error\":\"Tool \\\"\u{FFFD}x\\\" not found\"}}"
            )]
        );
        // An adapter's ERROR message.
        w.handle_response(at(3), br#"{"type":"TOOL_CALL","content":{"name":"files"}}"#)
            .unwrap();
        let (h, ..) = started(w);
        frames(host, w);
        w.handle_adapter_frame(
            at(4),
            h,
            br#"{"type":"ERROR","content":{"message":"disk \udc00"}}"#,
        )
        .unwrap();
        assert_eq!(
            frames(host, w),
            [model(
                "{\"type\":\"TOOL_RESULT\",\"content\":{\"name\":\"files\",\"error\":\"disk \u{FFFD}\"}}"
            )]
        );
        // A cancel reason is text: the message embeds it as it is.
        assert_eq!(w.cancel(at(5), "stop\u{FFFD}"), Ok(0));
        assert_eq!(
            frames(host, w),
            [
                model(
                    "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"\u{FFFD}\",\"name\":\"wait\u{FFFD}\",\"error\":\"Tool wait\u{FFFD} cancelled: stop\u{FFFD}\"}}"
                ),
                model(&prompt_with("Tool wait\u{FFFD} cancelled: stop\u{FFFD}")),
            ]
        );
    });
}

#[test]
fn duplicate_type_members() {
    let dup = Err(Error::Malformed(FrameError::DuplicateType));
    for full in [false, true] {
        with_wrapper(full, 1, |host, w| {
            let call_then_text = br#"{"type":"TOOL_CALL","type":"TEXT","content":{"name":"res"}}"#;
            let text_then_call = br#"{"type":"TEXT","type":"TOOL_CALL","content":{"name":"res"}}"#;
            // A TOOL_CALL is always validated.
            assert_eq!(w.handle_response(at(0), call_then_text), dup);
            // The O(1) read stops at the first `type`; full validation reads them all.
            let first_wins = if full { dup } else { Ok(Disposition::Forward) };
            assert_eq!(w.handle_response(at(0), text_then_call), first_wins);
            assert_eq!(w.handle_request(at(0), text_then_call), first_wins);
            assert_eq!(
                w.handle_response(at(0), br#"{"type":"TEXT","type":"TEXT"}"#),
                first_wins
            );
            assert_eq!(frames(host, w), []);
            // Adapter frames are always validated; the call keeps waiting.
            w.handle_response(at(1), br#"{"type":"TOOL_CALL","content":{"name":"files"}}"#)
                .unwrap();
            let (h, ..) = started(w);
            frames(host, w);
            assert_eq!(
                w.handle_adapter_frame(at(2), h, br#"{"type":"END","type":"TOOL_RESULT"}"#),
                Err(Error::Malformed(FrameError::DuplicateType))
            );
            let end_then_text = br#"{"type":"END","type":"TEXT"}"#;
            let held = if full { dup } else { Ok(Disposition::Held) };
            assert_eq!(w.handle_response(at(2), end_then_text), held);
            w.handle_adapter_frame(at(3), h, br#"{"type":"END"}"#)
                .unwrap();
            let mut want = vec![
                model(r#"{"type":"TOOL_RESULT","content":{"name":"files","result":null}}"#),
                model(PROMPT),
            ];
            if !full {
                // Released byte for byte.
                want.push((
                    Route::Consumer,
                    String::from_utf8(end_then_text.to_vec()).unwrap(),
                ));
            }
            assert_eq!(frames(host, w), want);
        });
    }
}

#[test]
fn standalone_adapter_call_writes_one_line() {
    let mut result = [0u8; 64];
    let opts = CallOptions {
        name: "t",
        timeout_ms: 10,
        ..CallOptions::DEFAULT
    };
    let args = b"{ \"a\" :\n [1,\t2] }\r\n";
    let mut call = AdapterCall::start(at(0), opts, Some("q\u{FFFD}"), args, &mut result).unwrap();
    let mut buf = [0u8; 256];
    let n = call.poll_transmit(&mut buf).unwrap().unwrap();
    assert_one_json_line(&buf[..n], "AdapterCall TOOL_CALL");
    assert_eq!(
        std::str::from_utf8(&buf[..n]).unwrap(),
        "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"q\u{FFFD}\",\"name\":\"t\",\"args\":{\"a\":[1,2]}}}"
    );
    call.handle_timeout(at(10)).unwrap();
    let n = call.poll_transmit(&mut buf).unwrap().unwrap();
    assert_one_json_line(&buf[..n], "AdapterCall CANCEL");
    assert_eq!(call.poll_transmit(&mut buf), Ok(None));
    // A result over the buffer fails the call when it settles.
    let mut result = [0u8; 40];
    let mut call = AdapterCall::start(at(0), opts, None, b"{}", &mut result).unwrap();
    let big = format!(
        r#"{{"type":"TOOL_RESULT","content":{{"result":"{}"}}}}"#,
        "z".repeat(39)
    );
    call.handle_frame(at(1), big.as_bytes()).unwrap();
    call.handle_closed(at(2)).unwrap();
    assert_eq!(
        call.outcome(),
        Some(CallOutcome::Error("Tool t result exceeds 40 bytes"))
    );
}

// =====================================================================
// The line checker itself
// =====================================================================

#[test]
fn line_checker_rejects_what_is_not_one_json_line() {
    for bad in [
        &br#"{"a":1}
{}"#[..],
        b"{\"a\":[\n1]}",
        b"{\"a\":[\r1]}",
        b"{\"a\":1}\r",
        br#"{"a":"#,
        br#"{"a":1} {}"#,
        br#"{"a":1}}"#,
        b"",
        b"{\"a\":\"\xff\"}",
        br#"{"a":"\ud800"#,
        br#"{"a":"\ud8"}"#,
        br#"{"a":"\u+800"}"#,
        br#"{"a":"\x"}"#,
        br#"\ud800"#,
    ] {
        assert!(
            is_one_json_line(bad).is_err(),
            "accepted {:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn line_checker_accepts_lone_surrogate_escapes_and_escaped_backslashes() {
    for good in [
        &br#"{"a":"\ud800"}"#[..],
        br#"{"a":"\\ud800"}"#,
        br#"{"a":"\\\ud800"}"#,
        br#"{"a":"\uDFFF\ud800","\udc00":["\ud83d\ude00"]}"#,
        br#""\uDC00""#,
        br#" {"type":"TEXT"} "#,
        "{\"a\":\"\u{FFFD}\\t\"}".as_bytes(),
    ] {
        assert_eq!(
            is_one_json_line(good),
            Ok(()),
            "{:?}",
            String::from_utf8_lossy(good)
        );
    }
    // Only real escapes are rewritten, to the same length.
    assert_eq!(
        mask_surrogate_escapes(br#"{"\\ud800":"\ud800","b":"\\\udbff \u00e9"}"#),
        br#"{"\\ud800":"\uFFFD","b":"\\\uFFFD \u00e9"}"#
    );
}

#[test]
#[should_panic(expected = "not one JSON line")]
fn line_assertion_panics_with_its_context() {
    assert_one_json_line(b"{\"a\":[\n1]}", "context");
}
