//! Pins: behaviours that mutation testing showed no other test catches.
//!
//! This file exists because mutants of the core survived the rest of the suite.
//! Each test here kills one named mutant (sometimes a small family of them): the
//! mutation is named in a `// kills:` comment above the test, and the test fails
//! when that mutation alone is applied to `core/src`. Expected values are exact
//! bytes and counts, computed from the SPEC by the independent helpers below
//! (`esc`, `longest_fit`), never taken from the core.
//!
//! Raw JSON values in the inputs (args, results) carry no insignificant white
//! space, so the expected bytes hold whether or not the core strips such white
//! space from the frames it writes (SPEC §7.22).

use polyweave_tests::drive::{at, echo};
use polyweave_tests::host::{Host, Storage};
use polyweave_tool_adapter::call::{AdapterCall, CallOptions};
use polyweave_tool_adapter::internals;
use polyweave_tool_adapter::wrapper::ENTRY_HEADER;
use polyweave_tool_adapter::{
    CallOutcome, Disposition, Event, Instant, NoHooks, PendingKind, ResultWriter, Route, SyncTool,
    Tool, ToolFailed, WrapperConfig,
};

// ----- helpers ---------------------------------------------------------------

/// SPEC §1 minimal escaping, for the inside of a JSON string (written here, not the core's).
fn esc(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\u{8}' => o.push_str("\\b"),
            '\u{c}' => o.push_str("\\f"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// Like [`esc`], but every non-ASCII character written as `\uXXXX` (surrogate pairs beyond
/// the BMP): another spelling of the same decoded text.
fn esc_ascii(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii() {
            o.push_str(&esc(c.encode_utf8(&mut [0; 4])));
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                o.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    o
}

/// The longest prefix of `s`, in whole characters, whose minimal escape fits `cap` bytes.
fn longest_fit(s: &str, cap: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += esc(c.encode_utf8(&mut [0; 4])).len();
        if used > cap {
            return &s[..i];
        }
    }
    s
}

/// The longest prefix of `s`, in whole characters, of at most `max` bytes.
fn char_prefix(s: &str, max: usize) -> &str {
    let mut end = 0;
    for (i, c) in s.char_indices() {
        if i + c.len_utf8() > max {
            break;
        }
        end = i + c.len_utf8();
    }
    &s[..end]
}

fn tool_call(content: &str) -> String {
    format!(r#"{{"type":"TOOL_CALL","content":{content}}}"#)
}

/// The exact continue prompt (SPEC §3.2.5), with the decoded last tool error, if any.
fn prompt(last_error: Option<&str>) -> String {
    match last_error {
        None => r#"{"type":"TEXT","content":"Tool results above."}"#.to_string(),
        Some(e) => format!(
            r#"{{"type":"TEXT","content":"Tool results above. Last tool error: {}"}}"#,
            esc(e)
        ),
    }
}

/// The frames of one round that ends with one call: its result, the prompt, the mirror.
fn round(result: String, last_error: Option<&str>) -> Vec<(Route, String)> {
    let p = prompt(last_error);
    vec![
        (Route::Model, result),
        (Route::Model, p.clone()),
        (Route::Consumer, p),
    ]
}

/// The decoded text of a prompt frame, parsed by serde_json (so it must be valid JSON).
fn prompt_text(frame: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(frame)
        .unwrap_or_else(|e| panic!("prompt is not valid JSON ({e}): {frame}"));
    v["content"].as_str().expect("string content").to_string()
}

/// Fails with the decoded text of its args, a JSON string.
fn fail_with_args(args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    let text: String = serde_json::from_slice(args).expect("args are a JSON string");
    out.write(text.as_bytes());
    Err(ToolFailed)
}

/// A sync tool that always writes the same result.
struct Fixed(&'static str);

impl SyncTool for Fixed {
    fn call(&self, _args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(self.0.as_bytes());
        Ok(())
    }
}

/// A sync tool that always fails with the same message.
struct FailsWith(&'static str);

impl SyncTool for FailsWith {
    fn call(&self, _args: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write(self.0.as_bytes());
        Err(ToolFailed)
    }
}

/// The message cap of the sweeps: the least `WrapperConfig::check` allows with 16-byte names and ids.
const CAP: usize = 80;

const SWEEP: WrapperConfig = WrapperConfig {
    name_cap: 16,
    id_cap: 16,
    message_cap: CAP,
    args_cap: 2048,
    result_cap: 2048,
    ..WrapperConfig::DEFAULT
};

/// Escape-heavy texts whose escaped lengths sweep across `CAP`, so that the cut falls at every
/// offset inside every kind of escape and UTF-8 sequence: one heavy character repeated after
/// 0–5 plain bytes, and a mix of them from each starting point.
fn sweep_texts() -> Vec<String> {
    const HEAVY: [&str; 9] = ["\u{1}", "\u{1f}", "\"", "\\", "\n", "é", "天", "😀", "a"];
    let limit = CAP + 8;
    let mut out = Vec::new();
    for h in HEAVY {
        for pad in 0..6 {
            let mut s = "a".repeat(pad);
            loop {
                out.push(s.clone());
                if esc(&s).len() > limit {
                    break;
                }
                s.push_str(h);
            }
        }
    }
    let mix: Vec<char> = "\u{1}é\"天\\😀a\n\u{1f}".chars().collect();
    for start in 0..mix.len() {
        let mut s = String::new();
        for c in mix.iter().cycle().skip(start) {
            out.push(s.clone());
            if esc(&s).len() > limit {
                break;
            }
            s.push(*c);
        }
    }
    out
}

// ----- 1. the last tool error is cut between escapes and characters ---------

// A host's error message is cut where it enters (`complete`), between escapes and characters,
// to the longest prefix that fits message_cap once escaped: the TOOL_RESULT and the prompt
// carry the same cut text, and the cut is reported (`Completed::MessageCut`, counted in
// `messages_truncated`; the prompt has nothing left to cut).
// kills: json/escape.rs `escaped_prefix` cutting inside an escape or a UTF-8 sequence.
#[test]
fn failure_message_is_cut_between_escapes_and_characters() {
    let tools = [Tool::deferred("later")];
    let mut s = Storage::new(SWEEP, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let call = tool_call(r#"{"name":"later"}"#);
    let (mut cut, mut rounds) = (0, 0);
    for text in sweep_texts().iter().filter(|t| t.len() <= CAP) {
        let Ok(Disposition::Intercepted {
            handle: Some(h), ..
        }) = w.handle_response(at(0), call.as_bytes())
        else {
            panic!("not intercepted");
        };
        host.skip_events(&mut w);
        let fit = longest_fit(text, CAP);
        let want = match fit.len() == text.len() {
            true => polyweave_tool_adapter::Completed::AsGiven,
            false => polyweave_tool_adapter::Completed::MessageCut {
                len: text.len(),
                cap: CAP,
            },
        };
        assert_eq!(w.complete(at(0), h, Err(text)), Ok(want), "{text:?}");
        let sent = host.frames(&mut w);
        let result = format!(
            r#"{{"type":"TOOL_RESULT","content":{{"name":"later","error":"{}"}}}}"#,
            esc(fit)
        );
        assert_eq!(sent, round(result, Some(fit)), "{text:?}");
        assert_eq!(
            prompt_text(&sent[1].1),
            format!("Tool results above. Last tool error: {fit}")
        );
        cut += usize::from(fit != text);
        rounds += 1;
        assert_eq!(w.stats().messages_truncated as usize, cut, "{text:?}");
        assert_eq!(w.stats().last_error_truncated, 0, "{text:?}");
    }
    assert_eq!(w.stats().rounds as usize, rounds);
    assert!(cut > 100, "the sweep must cut often ({cut})");
}

// kills: wrapper.rs `set_last_error_str` cutting inside a character (its width table
// `0xF0..=0xFF => 4` → `3`, or `0xE0..=0xEF => 3` → `2`), and `escape_into` cutting inside
// an escape, for a result whose `error` member is a string.
#[test]
fn result_error_string_last_error_is_cut_between_escapes_and_characters() {
    let tools = [Tool::sync("echo", &echo)];
    let mut s = Storage::new(SWEEP, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let mut cut = 0;
    for text in sweep_texts() {
        // The same decoded text, spelt minimally and with every non-ASCII character escaped.
        for spelt in [esc(&text), esc_ascii(&text)] {
            let args = format!(r#"{{"error":"{spelt}"}}"#);
            let call = tool_call(&format!(r#"{{"name":"echo","args":{args}}}"#));
            assert!(matches!(
                w.handle_response(at(0), call.as_bytes()),
                Ok(Disposition::Intercepted { handle: None, .. })
            ));
            let fit = longest_fit(&text, CAP);
            let sent = host.frames(&mut w);
            let result =
                format!(r#"{{"type":"TOOL_RESULT","content":{{"name":"echo","result":{args}}}}}"#);
            // An empty string error still sets the last tool error (it is not null).
            assert_eq!(sent, round(result, Some(fit)), "{text:?}");
            assert_eq!(
                prompt_text(&sent[1].1),
                format!("Tool results above. Last tool error: {fit}")
            );
            cut += usize::from(fit != text);
            assert_eq!(w.stats().last_error_truncated as usize, cut, "{text:?}");
        }
    }
    assert!(cut > 100, "the sweep must cut often ({cut})");
}

// kills: `escape_into` cutting inside an escape or a UTF-8 sequence, for a non-string
// `error` member (its raw JSON text, full of `\` and `"`, is the last tool error).
#[test]
fn result_error_raw_last_error_is_cut_between_escapes_and_characters() {
    let tools = [Tool::sync("echo", &echo)];
    let mut s = Storage::new(SWEEP, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let mut cut = 0;
    for text in sweep_texts() {
        for raw in [
            format!(r#"["{}"]"#, esc(&text)),
            format!(r#"{{"m":"{}"}}"#, esc_ascii(&text)),
        ] {
            let args = format!(r#"{{"error":{raw}}}"#);
            let call = tool_call(&format!(r#"{{"name":"echo","args":{args}}}"#));
            assert!(w.handle_response(at(0), call.as_bytes()).is_ok());
            let fit = longest_fit(&raw, CAP);
            let sent = host.frames(&mut w);
            let result =
                format!(r#"{{"type":"TOOL_RESULT","content":{{"name":"echo","result":{args}}}}}"#);
            assert_eq!(sent, round(result, Some(fit)), "{raw}");
            assert_eq!(
                prompt_text(&sent[1].1),
                format!("Tool results above. Last tool error: {fit}")
            );
            cut += usize::from(fit != raw);
            assert_eq!(w.stats().last_error_truncated as usize, cut, "{raw}");
        }
    }
    assert!(cut > 100, "the sweep must cut often ({cut})");
}

// kills: outputs.rs `set_last_error_from`'s raw cut flag (`n == len && compact_len(raw) > n`:
// `&&` → `||`, `==` → `!=`, `>` → `==`, `<`, `>=`). A raw error with nothing to escape is
// cut only by its length without white space, so only that flag counts it.
#[test]
fn a_raw_last_error_with_nothing_to_escape_is_counted_only_when_cut() {
    let tools = [Tool::sync("echo", &echo)];
    let mut s = Storage::new(SWEEP, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let mut cut = 0;
    for digits in [1, CAP - 3, CAP - 2, CAP - 1, CAP + 40] {
        let number = "7".repeat(digits);
        // Compact, and spaced out (the spaces go; the length without them decides).
        for raw in [format!("[{number}]"), format!("[ {number} ]")] {
            let args = format!(r#"{{"error":{raw}}}"#);
            let call = tool_call(&format!(r#"{{"name":"echo","args":{args}}}"#));
            assert!(w.handle_response(at(0), call.as_bytes()).is_ok());
            let compact = format!("[{number}]");
            let fit = &compact[..compact.len().min(CAP)];
            let sent = host.frames(&mut w);
            assert_eq!(
                prompt_text(&sent[1].1),
                format!("Tool results above. Last tool error: {fit}"),
                "{digits}"
            );
            cut += usize::from(fit.len() < compact.len());
            assert_eq!(w.stats().last_error_truncated as usize, cut, "{raw}");
        }
    }
    assert_eq!(cut, 4);
}

// kills: trace.rs `utf8_prefix` returning `max` unchanged (a name or an error cut inside a
// character, which the trace then reads back as "").
#[test]
fn trace_cuts_names_and_errors_on_character_boundaries() {
    let names = ["天気é😀", "é", "😀😀", "ab"];
    let errors = ["é天😀\u{1}a\"é", "😀", "天天天", ""];
    let args = r#"{"q":"é"}"#.as_bytes();
    for name in names {
        for error in errors {
            let whole = ENTRY_HEADER + name.len() + args.len() + error.len();
            for size in ENTRY_HEADER..=whole + 1 {
                let mut buf = vec![0u8; size];
                let mut t = internals::new_trace(&mut buf, 4);
                internals::push_trace(
                    &mut t,
                    Some(name.as_bytes()),
                    args,
                    CallOutcome::Error(error),
                );
                let room = size - ENTRY_HEADER;
                let n = char_prefix(name, room);
                let a = &args[..args.len().min(room - n.len())];
                let e = char_prefix(error, room - n.len() - a.len());
                let cut = n != name || a.len() < args.len() || e != error;
                let entries: Vec<_> = t.iter().collect();
                assert_eq!(entries.len(), 1);
                let got = entries[0];
                assert_eq!(got.name, Some(n), "{name:?} {error:?} in {size}");
                assert_eq!(got.args, a, "{name:?} {error:?} in {size}");
                assert_eq!(
                    got.outcome,
                    CallOutcome::Error(e),
                    "{name:?} {error:?} in {size}"
                );
                assert_eq!(got.truncated, cut, "{name:?} {error:?} in {size}");
                assert_eq!(t.truncated(), u32::from(cut));
                assert_eq!(t.dropped(), 0);
            }
        }
    }
}

// kills: trace.rs `utf8_prefix` returning `max` unchanged, seen through a wrapper whose trace
// ring is too small for a failed sync call (name and message cut on character boundaries).
#[test]
fn wrapper_trace_cuts_name_and_error_on_character_boundaries() {
    const NAME: &str = "天気😀";
    const MESSAGE: &str = "é\u{1}天😀\"x";
    const ARGS: &str = r#"["é"]"#;
    let fails = FailsWith(MESSAGE);
    let tools = [Tool::sync(NAME, &fails)];
    let call = tool_call(&format!(r#"{{"name":"{NAME}","args":{ARGS}}}"#));
    let whole = ENTRY_HEADER + NAME.len() + ARGS.len() + MESSAGE.len();
    for trace_bytes in ENTRY_HEADER..=whole + 1 {
        let cfg = WrapperConfig {
            trace_bytes,
            ..SWEEP
        };
        let mut s = Storage::new(cfg, 1);
        let mut w = s.wrapper(&tools, NoHooks);
        let mut host = Host::new();
        assert!(w.handle_response(at(0), call.as_bytes()).is_ok());
        let result = format!(
            r#"{{"type":"TOOL_RESULT","content":{{"name":"{NAME}","error":"{}"}}}}"#,
            esc(MESSAGE)
        );
        assert_eq!(host.frames(&mut w), round(result, Some(MESSAGE)));
        let room = trace_bytes - ENTRY_HEADER;
        let n = char_prefix(NAME, room);
        let a = &ARGS.as_bytes()[..ARGS.len().min(room - n.len())];
        let e = char_prefix(MESSAGE, room - n.len() - a.len());
        let entries: Vec<_> = w.trace().iter().collect();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].name, Some(n), "trace_bytes {trace_bytes}");
        assert_eq!(entries[0].args, a, "trace_bytes {trace_bytes}");
        assert_eq!(
            entries[0].outcome,
            CallOutcome::Error(e),
            "trace_bytes {trace_bytes}"
        );
        assert_eq!(entries[0].truncated, trace_bytes < whole);
    }
}

// ----- 2. sorted registrations with a duplicate name: the first wins --------

/// A tool name and the result its registration (or a call) gives.
type Named = (&'static str, &'static str);

/// Calls each name once through a wrapper over `tools`; returns the result each got.
fn results_by_name(tools: &[Tool<'_>], names: &[&str]) -> Vec<String> {
    let mut s = Storage::new(WrapperConfig::DEFAULT, 1);
    let mut w = s.wrapper(tools, NoHooks);
    let mut host = Host::new();
    names
        .iter()
        .map(|name| {
            let call = tool_call(&format!(r#"{{"name":"{name}"}}"#));
            assert!(w.handle_response(at(0), call.as_bytes()).is_ok());
            let sent = host.frames(&mut w);
            let head = format!(r#"{{"type":"TOOL_RESULT","content":{{"name":"{name}","result":"#);
            let body = sent[0].1.strip_prefix(&head).expect("a result");
            assert_eq!(sent, round(sent[0].1.clone(), None));
            body.strip_suffix("}}").expect("frame end").to_string()
        })
        .collect()
}

// kills: wrapper.rs `tools_sorted` computed with `<=` instead of `<` (sorted registrations
// with a duplicate name are then bisected, and the bisection finds a later duplicate), and
// `find_tool`'s scan keeping the last match (`rposition`).
#[test]
fn sorted_registrations_with_a_duplicate_name_use_the_first() {
    let cases: [(&[Named], &[Named]); 6] = [
        // Duplicate in the middle.
        (
            &[("a", "1"), ("b", "2"), ("b", "3"), ("c", "4")],
            &[("a", "1"), ("b", "2"), ("c", "4")],
        ),
        // At the start.
        (
            &[("a", "1"), ("a", "2"), ("b", "3"), ("c", "4"), ("d", "5")],
            &[("a", "1"), ("b", "3"), ("c", "4"), ("d", "5")],
        ),
        // At the end.
        (
            &[("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("d", "5")],
            &[("a", "1"), ("d", "4")],
        ),
        // Three of a name.
        (
            &[("a", "1"), ("b", "2"), ("b", "3"), ("b", "4"), ("c", "5")],
            &[("b", "2"), ("c", "5")],
        ),
        // One name only.
        (
            &[
                ("x", "1"),
                ("x", "2"),
                ("x", "3"),
                ("x", "4"),
                ("x", "5"),
                ("x", "6"),
                ("x", "7"),
            ],
            &[("x", "1")],
        ),
        // A longer list, two duplicated names.
        (
            &[
                ("t0", "0"),
                ("t1", "1"),
                ("t2", "2"),
                ("t3", "3"),
                ("t3", "33"),
                ("t3", "333"),
                ("t4", "4"),
                ("t5", "5"),
                ("t6", "6"),
                ("t7", "7"),
                ("t7", "77"),
                ("t8", "8"),
            ],
            &[
                ("t0", "0"),
                ("t3", "3"),
                ("t5", "5"),
                ("t7", "7"),
                ("t8", "8"),
            ],
        ),
    ];
    for (registered, want) in cases {
        let fixed: Vec<Fixed> = registered.iter().map(|&(_, r)| Fixed(r)).collect();
        let tools: Vec<Tool<'_>> = registered
            .iter()
            .zip(&fixed)
            .map(|(&(name, _), f)| Tool::sync(name, f))
            .collect();
        let names: Vec<&str> = want.iter().map(|&(n, _)| n).collect();
        let got = results_by_name(&tools, &names);
        let want: Vec<String> = want.iter().map(|&(_, r)| r.to_string()).collect();
        assert_eq!(got, want, "{registered:?}");
    }
}

// kills: the same `tools_sorted` `<=` mutant, seen in the tool index a deferred call reports.
#[test]
fn sorted_deferred_registrations_with_a_duplicate_name_report_the_first_index() {
    let tools = [
        Tool::deferred("a"),
        Tool::deferred("b"),
        Tool::adapter("b"),
        Tool::deferred("c"),
    ];
    let mut s = Storage::new(WrapperConfig::DEFAULT, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let call = tool_call(r#"{"id":"k","name":"b","args":[1]}"#);
    let Ok(Disposition::Intercepted {
        index: 0,
        handle: Some(handle),
    }) = w.handle_response(at(0), call.as_bytes())
    else {
        panic!("not intercepted");
    };
    // A deferred call sends nothing to an adapter.
    assert_eq!(host.frames(&mut w), vec![]);
    assert_eq!(
        w.poll_event(),
        Some(Event::CallStarted {
            handle,
            kind: PendingKind::Deferred,
            tool: 1,
            name: "b",
            id: Some("k"),
            args: b"[1]",
        })
    );
}

// ----- 3. member keys: escapes decoded, the last duplicate wins -------------

/// The frames one sync `TOOL_CALL` (given as its `content`) produces in a wrapper with `echo`.
fn echo_round(content: &str) -> Vec<(Route, String)> {
    let tools = [Tool::sync("echo", &echo)];
    let mut s = Storage::new(WrapperConfig::DEFAULT, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let call = tool_call(content);
    assert_eq!(
        w.handle_response(at(0), call.as_bytes()),
        Ok(Disposition::Intercepted {
            index: 0,
            handle: None
        }),
        "{content}"
    );
    host.frames(&mut w)
}

// kills: frame.rs `Fields::record` ignoring escaped keys (its decoded-key arm replaced by
// `return`), or mapping them to the wrong member (the `KEYS` positions permuted).
#[test]
fn escaped_member_keys_are_read_as_id_name_and_args() {
    let cases = [
        (
            r#"{"\u0069d":"c1","n\u0061me":"echo","\u0061rgs":{"a":1}}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":{"a":1}}}"#,
        ),
        (
            r#"{"\u0069\u0064":"c2","\u006e\u0061\u006d\u0065":"echo","\u0061\u0072\u0067\u0073":[true]}"#,
            r#"{"type":"TOOL_RESULT","content":{"id":"c2","name":"echo","result":[true]}}"#,
        ),
        (
            r#"{"\u0061rgs":"x","n\u0061me":"echo"}"#,
            r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":"x"}}"#,
        ),
    ];
    for (content, result) in cases {
        assert_eq!(
            echo_round(content),
            round(result.to_string(), None),
            "{content}"
        );
    }
}

// kills: frame.rs `Fields::record` keeping the first duplicate member (`*slot = Some(..)`
// made conditional on `slot.is_none()`): in a validated frame the last one wins.
#[test]
fn last_duplicate_member_wins_in_a_validated_tool_call() {
    let ok = |result: &str| round(result.to_string(), None);
    let not_found = |name: &str| {
        let msg = format!("Tool \"{name}\" not found");
        round(
            format!(
                r#"{{"type":"TOOL_RESULT","content":{{"name":"{name}","error":"{}"}}}}"#,
                esc(&msg)
            ),
            Some(&msg),
        )
    };
    assert_eq!(
        echo_round(r#"{"name":"x","name":"echo"}"#),
        ok(r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{}}}"#)
    );
    assert_eq!(echo_round(r#"{"name":"echo","name":"x"}"#), not_found("x"));
    assert_eq!(
        echo_round(r#"{"name":"x","n\u0061me":"echo"}"#),
        ok(r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{}}}"#)
    );
    assert_eq!(
        echo_round(r#"{"n\u0061me":"echo","name":"y"}"#),
        not_found("y")
    );
    assert_eq!(
        echo_round(r#"{"id":"a","name":"echo","id":"b"}"#),
        ok(r#"{"type":"TOOL_RESULT","content":{"id":"b","name":"echo","result":{}}}"#)
    );
    assert_eq!(
        echo_round(r#"{"\u0069d":"a","id":"b","name":"echo","args":1}"#),
        ok(r#"{"type":"TOOL_RESULT","content":{"id":"b","name":"echo","result":1}}"#)
    );
    assert_eq!(
        echo_round(r#"{"name":"echo","args":[1],"args":{"b":2}}"#),
        ok(r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{"b":2}}}"#)
    );
    assert_eq!(
        echo_round(r#"{"name":"echo","args":{"b":2},"\u0061rgs":null}"#),
        ok(r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":null}}"#)
    );
    // A later non-string duplicate wins too: no id, or a malformed call.
    assert_eq!(
        echo_round(r#"{"id":"a","name":"echo","id":5}"#),
        ok(r#"{"type":"TOOL_RESULT","content":{"name":"echo","result":{}}}"#)
    );
    let malformed = "Malformed TOOL_CALL: content.name must be a string";
    assert_eq!(
        echo_round(r#"{"name":"echo","name":5}"#),
        round(
            format!(r#"{{"type":"TOOL_RESULT","content":{{"name":null,"error":"{malformed}"}}}}"#),
            Some(malformed)
        )
    );
}

// ----- 4. adapter TOOL_RESULT: `result` before `content`, whole frames trimmed -

/// Runs one adapter call in a wrapper: the given adapter frames, then `END`. Returns the
/// frames the wrapper sent to the model and the consumer after the `END`.
fn adapter_round(frame: &[u8]) -> Vec<(Route, String)> {
    let tools = [Tool::adapter("files")];
    let mut s = Storage::new(WrapperConfig::DEFAULT, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let call = tool_call(r#"{"id":"c1","name":"files","args":{"p":1}}"#);
    let Ok(Disposition::Intercepted {
        handle: Some(h), ..
    }) = w.handle_response(at(0), call.as_bytes())
    else {
        panic!("not intercepted");
    };
    assert_eq!(
        host.frames(&mut w),
        vec![(
            Route::Adapter(h),
            r#"{"type":"TOOL_CALL","content":{"id":"c1","name":"files","args":{"p":1}}}"#
                .to_string()
        )]
    );
    assert_eq!(w.handle_adapter_frame(at(1), h, frame), Ok(()));
    assert_eq!(host.frames(&mut w), vec![]);
    assert_eq!(
        w.handle_adapter_frame(at(2), h, br#"{"type":"END"}"#),
        Ok(())
    );
    host.frames(&mut w)
}

/// Settles a standalone call with the given frame, then `END`.
fn adapter_call_settles(frame: &[u8], want: &[u8]) {
    let mut buf = [0u8; 256];
    let opts = CallOptions {
        name: "files",
        ..CallOptions::DEFAULT
    };
    let mut call = AdapterCall::start(at(0), opts, Some("c1"), b"{}", &mut buf).unwrap();
    let mut out = [0u8; 128];
    assert!(call.poll_transmit(&mut out).unwrap().is_some());
    assert_eq!(call.handle_frame(at(1), frame), Ok(()));
    assert_eq!(call.outcome(), None);
    assert_eq!(call.handle_frame(at(2), br#"{"type":"END"}"#), Ok(()));
    assert_eq!(
        call.outcome(),
        Some(CallOutcome::Result(want)),
        "{}",
        String::from_utf8_lossy(frame)
    );
}

fn files_result(result: &str) -> Vec<(Route, String)> {
    round(
        format!(
            r#"{{"type":"TOOL_RESULT","content":{{"id":"c1","name":"files","result":{result}}}}}"#
        ),
        None,
    )
}

// kills: call.rs `read_adapter_frame` preferring `content` (`r.result.or(r.content)` →
// `r.content.or(r.result)`), and frame.rs `Fields::record` mapping an escaped `result` or
// `content` key to the other member.
#[test]
fn adapter_result_member_wins_over_content() {
    let cases: [&[u8]; 4] = [
        br#"{"type":"TOOL_RESULT","content":{"result":1,"content":2}}"#,
        br#"{"type":"TOOL_RESULT","content":{"content":2,"result":1}}"#,
        br#"{"type":"TOOL_RESULT","content":{"c\u006fntent":2,"r\u0065sult":1}}"#,
        br#"{"type":"TOOL_RESULT","content":{"name":"files","content":{"a":2},"result":1}}"#,
    ];
    for frame in cases {
        assert_eq!(adapter_round(frame), files_result("1"));
        adapter_call_settles(frame, b"1");
    }
    // `content` alone is used, whatever its value (`null` included).
    let frame = br#"{"type":"TOOL_RESULT","content":{"c\u006fntent":null}}"#;
    assert_eq!(adapter_round(frame), files_result("null"));
    adapter_call_settles(frame, b"null");
}

// kills: call.rs using `frame.bytes()` instead of `frame.trimmed()` for a whole-frame result,
// and frame.rs `Frame::trimmed` trimming one side only or fewer white-space bytes.
#[test]
fn adapter_whole_frame_result_is_trimmed() {
    let cases: [(&[u8], &str); 4] = [
        (
            b"  {\"type\":\"TOOL_RESULT\",\"content\":5}\n ",
            r#"{"type":"TOOL_RESULT","content":5}"#,
        ),
        (
            b"\t\r\n {\"type\":\"TOOL_RESULT\",\"content\":{\"x\":1}} \t\r\n",
            r#"{"type":"TOOL_RESULT","content":{"x":1}}"#,
        ),
        (
            b"\n{\"type\":\"TOOL_RESULT\"}\r\n",
            r#"{"type":"TOOL_RESULT"}"#,
        ),
        (
            b" {\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c1\",\"error\":\"no\"}}\t",
            r#"{"type":"TOOL_RESULT","content":{"id":"c1","error":"no"}}"#,
        ),
    ];
    for (frame, whole) in cases {
        adapter_call_settles(frame, whole.as_bytes());
        // (The last case's `error` is not a top-level member of the result: no last error.)
        let sent = adapter_round(frame);
        assert_eq!(
            sent[0],
            (
                Route::Model,
                format!(
                    r#"{{"type":"TOOL_RESULT","content":{{"id":"c1","name":"files","result":{whole}}}}}"#
                )
            )
        );
        assert_eq!(sent, files_result(whole));
    }
}

// ----- 5. a sync tool's error message fits message_cap once escaped ----------

// kills: message.rs `escaped_prefix` off by one (`total > cap` → `total >= cap`), or
// under-counting an escape (control characters counted as 2 bytes instead of 6, or `"`/`\`
// as 1 instead of 2).
#[test]
fn sync_error_message_is_the_longest_prefix_that_fits_escaped() {
    let tools = [Tool::sync("fail", &fail_with_args)];
    let mut s = Storage::new(SWEEP, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let mut texts = sweep_texts();
    // Longer than the sync tool's whole buffer (`max(result_cap, message_cap)`).
    texts.push("a".repeat(3000));
    texts.push("😀".repeat(700));
    let mut truncated = 0;
    for text in &texts {
        let call = tool_call(&format!(r#"{{"name":"fail","args":"{}"}}"#, esc(text)));
        assert!(w.handle_response(at(0), call.as_bytes()).is_ok());
        let sent = host.frames(&mut w);
        // What the model got, decoded, then escaped again minimally.
        let v: serde_json::Value = serde_json::from_str(&sent[0].1).expect("valid JSON");
        let got = v["content"]["error"].as_str().expect("an error string");
        assert!(esc(got).len() <= CAP, "{} > {CAP}: {got:?}", esc(got).len());
        assert!(text.starts_with(got), "{got:?} is not a prefix of {text:?}");
        if let Some(next) = text[got.len()..].chars().next() {
            let longer = format!("{got}{next}");
            assert!(esc(&longer).len() > CAP, "{longer:?} would fit too");
        }
        // And exactly: the frames of the round.
        let fit = longest_fit(text, CAP);
        assert_eq!(got, fit);
        let result = format!(
            r#"{{"type":"TOOL_RESULT","content":{{"name":"fail","error":"{}"}}}}"#,
            esc(fit)
        );
        assert_eq!(sent, round(result, Some(fit)), "{text:?}");
        truncated += usize::from(fit != text);
        assert_eq!(w.stats().messages_truncated as usize, truncated, "{text:?}");
        // The prompt never needed a second cut.
        assert_eq!(w.stats().last_error_truncated, 0);
    }
    assert!(truncated > 100, "the sweep must cut often ({truncated})");
}

// ----- 6. the trace keeps an entry that fits the ring exactly ----------------

// kills: trace.rs `push` reserving one byte too many (`room` off by one, so an exact fit is
// cut and flagged), or flagging an uncut entry (`cut` computed with `<=`).
#[test]
fn trace_entry_of_exactly_the_ring_size_is_kept_whole() {
    let (name, args, result) = (&b"tool"[..], &br#"{"a":1}"#[..], &b"[1,2,3]"[..]);
    let size = ENTRY_HEADER + name.len() + args.len() + result.len();
    assert_eq!(size, 30);
    let mut buf = vec![0u8; size];
    let mut t = internals::new_trace(&mut buf, 4);
    internals::push_trace(&mut t, Some(name), args, CallOutcome::Result(result));
    let e: Vec<_> = t.iter().collect();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].name, Some("tool"));
    assert_eq!(e[0].args, args);
    assert_eq!(e[0].outcome, CallOutcome::Result(result));
    assert!(!e[0].truncated);
    assert_eq!((t.truncated(), t.dropped()), (0, 0));

    // One byte less: the result loses its last byte, and says so.
    let mut buf = vec![0u8; size - 1];
    let mut t = internals::new_trace(&mut buf, 4);
    internals::push_trace(&mut t, Some(name), args, CallOutcome::Result(result));
    let e: Vec<_> = t.iter().collect();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].args, args);
    assert_eq!(e[0].outcome, CallOutcome::Result(b"[1,2,3"));
    assert!(e[0].truncated);
    assert_eq!((t.truncated(), t.dropped()), (1, 0));

    // The same with an error and no name.
    let size = ENTRY_HEADER + 2 + 4;
    let mut buf = vec![0u8; size];
    let mut t = internals::new_trace(&mut buf, 4);
    internals::push_trace(&mut t, None, b"{}", CallOutcome::Error("boom"));
    let e: Vec<_> = t.iter().collect();
    assert_eq!(
        (e[0].name, e[0].args, e[0].outcome, e[0].truncated),
        (None, &b"{}"[..], CallOutcome::Error("boom"), false)
    );
    let mut buf = vec![0u8; size - 1];
    let mut t = internals::new_trace(&mut buf, 4);
    internals::push_trace(&mut t, None, b"{}", CallOutcome::Error("boom"));
    let e: Vec<_> = t.iter().collect();
    assert_eq!(
        (e[0].name, e[0].args, e[0].outcome, e[0].truncated),
        (None, &b"{}"[..], CallOutcome::Error("boo"), true)
    );
}

// kills: trace.rs `place` refusing an exact fit at the end of the ring (`>=` → `>` in its
// first arm): the older of two entries that exactly fill the ring would be dropped.
#[test]
fn two_trace_entries_that_exactly_fill_the_ring_both_stay() {
    let a = (&b"tool"[..], &br#"{"a":1}"#[..], &b"[1,2,3]"[..]); // 30 bytes
    let b = (&b"t"[..], &b"{}"[..], &b"null"[..]); // 19 bytes
    for (size, kept, dropped) in [(49, 2, 0), (48, 1, 1)] {
        let mut buf = vec![0u8; size];
        let mut t = internals::new_trace(&mut buf, 4);
        internals::push_trace(&mut t, Some(a.0), a.1, CallOutcome::Result(a.2));
        internals::push_trace(&mut t, Some(b.0), b.1, CallOutcome::Result(b.2));
        let e: Vec<_> = t.iter().collect();
        assert_eq!((e.len(), t.dropped(), t.truncated()), (kept, dropped, 0));
        let last = e.last().unwrap();
        assert_eq!((last.name, last.args), (Some("t"), &b"{}"[..]));
        assert_eq!(last.outcome, CallOutcome::Result(b"null"));
        if kept == 2 {
            assert_eq!(e[0].outcome, CallOutcome::Result(a.2));
            assert!(!e[0].truncated && !e[1].truncated);
        }
    }
}

// kills: trace.rs `place` refusing an exact fit once the ring has wrapped (`>=` → `>` in its
// second or third arm): each would drop one entry more than needed.
#[test]
fn wrapped_trace_entries_that_exactly_fit_stay() {
    // Three entries of 20 bytes fill a 60-byte ring; each later one wraps into exact room.
    let mut buf = vec![0u8; 60];
    let mut t = internals::new_trace(&mut buf, 8);
    let args: [&[u8]; 7] = [b"[0]", b"[1]", b"[2]", b"[3]", b"[4]", b"[5]", b"[6]"];
    let mut kept_after = Vec::new();
    for a in args {
        internals::push_trace(&mut t, Some(b"tool"), a, CallOutcome::Result(b"1"));
        assert_eq!(ENTRY_HEADER + 4 + a.len() + 1, 20);
        let firsts: Vec<u8> = t.iter().map(|e| e.args[1]).collect();
        kept_after.push(String::from_utf8(firsts).unwrap());
    }
    assert_eq!(kept_after, ["0", "01", "012", "123", "234", "345", "456"]);
    assert_eq!((t.dropped(), t.truncated()), (4, 0));
}

// kills: the trace exact-fit mutants above, seen through a wrapper whose `trace_bytes` is
// exactly one sync call's entry (and two).
#[test]
fn wrapper_trace_of_exactly_one_and_two_entries() {
    let tools = [Tool::sync("t", &echo)];
    let call = tool_call(r#"{"name":"t","args":{"a":1}}"#);
    let entry = ENTRY_HEADER + 1 + 7 + 7;
    assert_eq!(entry, 27);
    for (trace_bytes, calls, kept, result, truncated) in [
        (entry, 1, 1, &br#"{"a":1}"#[..], false),
        (entry - 1, 1, 1, &br#"{"a":1"#[..], true),
        (2 * entry, 2, 2, &br#"{"a":1}"#[..], false),
        (2 * entry - 1, 2, 1, &br#"{"a":1}"#[..], false),
    ] {
        let cfg = WrapperConfig {
            trace_bytes,
            ..WrapperConfig::DEFAULT
        };
        let mut s = Storage::new(cfg, 1);
        let mut w = s.wrapper(&tools, NoHooks);
        let mut host = Host::new();
        for _ in 0..calls {
            assert!(w.handle_response(at(0), call.as_bytes()).is_ok());
            assert_eq!(
                host.frames(&mut w),
                round(
                    r#"{"type":"TOOL_RESULT","content":{"name":"t","result":{"a":1}}}"#.into(),
                    None
                )
            );
        }
        let t = w.trace();
        let e: Vec<_> = t.iter().collect();
        assert_eq!(e.len(), kept, "trace_bytes {trace_bytes}");
        for entry in &e {
            assert_eq!(entry.name, Some("t"));
            assert_eq!(entry.args, br#"{"a":1}"#);
            assert_eq!(entry.outcome, CallOutcome::Result(result));
            assert_eq!(entry.truncated, truncated, "trace_bytes {trace_bytes}");
        }
        assert_eq!(t.truncated(), u32::from(truncated));
        assert_eq!(t.dropped() as usize, calls - kept);
    }
}

// ----- 7. a string `error` member is the last tool error, decoded -----------

// kills: wrapper.rs taking a string `error` member as raw JSON (`error_of` returning
// `ResultError::Raw` for strings, or `set_last_error_str` replaced by `set_last_error` of
// the raw token): its escapes would be escaped a second time.
#[test]
fn string_error_member_is_decoded_into_the_prompt() {
    let cases = [
        (r#"{"error":"a\"b"}"#, "a\"b", r#"a\"b"#),
        (r#"{"error":"\u00e9"}"#, "é", "é"),
        (r#"{"error":"\ud83d\ude00!"}"#, "😀!", "😀!"),
        (r#"{"error":"\/\t\u0001"}"#, "/\t\u{1}", r#"/\t\u0001"#),
        (r#"{"ok":1,"error":"x\\y"}"#, "x\\y", r#"x\\y"#),
    ];
    for (args, decoded, in_frame) in cases {
        let sent = echo_round(&format!(r#"{{"name":"echo","args":{args}}}"#));
        let want_prompt = format!(
            r#"{{"type":"TEXT","content":"Tool results above. Last tool error: {in_frame}"}}"#
        );
        assert_eq!(
            sent,
            vec![
                (
                    Route::Model,
                    format!(
                        r#"{{"type":"TOOL_RESULT","content":{{"name":"echo","result":{args}}}}}"#
                    )
                ),
                (Route::Model, want_prompt.clone()),
                (Route::Consumer, want_prompt),
            ]
        );
        assert_eq!(
            prompt_text(&sent[1].1),
            format!("Tool results above. Last tool error: {decoded}")
        );
    }
    // The frame holds the UTF-8 bytes of é, not its escape.
    let sent = echo_round(r#"{"name":"echo","args":{"error":"\u00e9"}}"#);
    assert!(sent[1].1.as_bytes().ends_with(b": \xc3\xa9\"}"));
}

// ----- second cargo-mutants pass (tests/README.md "Mutation testing") -------

// kills: every `Display::fmt` replaced by `Ok(Default::default())` (call.rs `StartError`,
// clock.rs `ClockWentBackwards`, and the other error types), and every `Error::source`
// replaced by `None`: a host logs these texts, and a chain of causes must reach the
// JSON error underneath.
#[test]
fn every_error_type_says_what_happened_and_why() {
    use polyweave_tool_adapter::call::StartError;
    use polyweave_tool_adapter::frame::LineTooLong;
    use polyweave_tool_adapter::json::{self, BufferTooSmall, JsonError, JsonErrorKind};
    use polyweave_tool_adapter::wrapper::typed::TypedError;
    use polyweave_tool_adapter::ClockWentBackwards;
    use polyweave_tool_adapter::StorageError;
    use polyweave_tool_adapter::{CallError, Error, FrameError};

    let json = JsonError {
        kind: JsonErrorKind::UnexpectedEnd,
        at: 3,
    };
    assert_eq!(json::validate(b"[1,", 32), Err(json));
    let back = ClockWentBackwards {
        last: at(20),
        given: at(7),
    };
    let texts: Vec<(String, &str)> = vec![
        (json.to_string(), "invalid JSON at byte 3: UnexpectedEnd"),
        (back.to_string(), "clock went backwards: 7 ms after 20 ms"),
        (
            StartError::InvalidArgs(json).to_string(),
            "args are not JSON: invalid JSON at byte 3: UnexpectedEnd",
        ),
        (
            StartError::BufferTooSmall {
                needed: 40,
                given: 8,
            }
            .to_string(),
            "buffer of 8 bytes, 40 needed",
        ),
        (
            FrameError::NotAnObject.to_string(),
            "frame is not a JSON object",
        ),
        (
            FrameError::MissingType.to_string(),
            "frame has no type member",
        ),
        (
            FrameError::TypeNotString.to_string(),
            "frame type is not a string",
        ),
        (
            FrameError::DuplicateType.to_string(),
            "frame has more than one type member",
        ),
        (
            FrameError::Json(json).to_string(),
            "invalid JSON at byte 3: UnexpectedEnd",
        ),
        (
            Error::Malformed(FrameError::MissingType).to_string(),
            "malformed frame: frame has no type member",
        ),
        (
            Error::ClockWentBackwards(back).to_string(),
            "clock went backwards: 7 ms after 20 ms",
        ),
        (
            Error::NameTooLong { len: 70, cap: 64 }.to_string(),
            "tool name of 70 bytes exceeds 64",
        ),
        (
            Error::IdTooLong { len: 9, cap: 8 }.to_string(),
            "call id of 9 bytes exceeds 8",
        ),
        (
            Error::InvalidResult(json).to_string(),
            "result is not JSON: invalid JSON at byte 3: UnexpectedEnd",
        ),
        (
            Error::HeldFull {
                needed: 30,
                free: 2,
            }
            .to_string(),
            "held END needs 30 bytes, 2 free",
        ),
        (
            Error::QueueFull {
                needed: 500,
                free: 12,
            }
            .to_string(),
            "output queue needs 500 bytes, 12 free",
        ),
        (Error::Call(CallError::Unknown).to_string(), "unknown call"),
        (CallError::Completed.to_string(), "call already completed"),
        (CallError::TimedOut.to_string(), "call timed out"),
        (CallError::Cancelled.to_string(), "call was cancelled"),
        (
            CallError::Stale.to_string(),
            "call ended and its slot was reused",
        ),
        (CallError::WrongKind.to_string(), "call is of another kind"),
        (
            LineTooLong { len: 5000 }.to_string(),
            "line of 5000 bytes is longer than the buffer",
        ),
        (ToolFailed.to_string(), "tool failed"),
        (
            TypedError::ResultTooLarge.to_string(),
            "result too large for its buffer",
        ),
        (
            BufferTooSmall { needed: 77 }.to_string(),
            "buffer too small: 77 bytes needed",
        ),
        (
            StorageError::ArenaTooSmall {
                needed: 5141,
                given: 4096,
            }
            .to_string(),
            "arena of 4096 bytes, 5141 needed",
        ),
        (
            StorageError::TooManySlots.to_string(),
            "more than 65535 slots",
        ),
        (
            StorageError::TooManyTools.to_string(),
            "more than 65535 tools",
        ),
        (
            StorageError::NameTooLong { index: 3 }.to_string(),
            "tool 3's name is longer than name_cap",
        ),
        (
            StorageError::BadConfig.to_string(),
            "configuration out of range",
        ),
    ];
    for (got, want) in &texts {
        assert_eq!(got, want);
    }

    // Causes: the wrapping error names its source, leaf errors have none.
    let source = |e: &dyn std::error::Error| e.source().map(|s| s.to_string());
    let json_text = Some(json.to_string());
    assert_eq!(source(&StartError::InvalidArgs(json)), json_text);
    assert_eq!(
        source(&StartError::BufferTooSmall {
            needed: 1,
            given: 0
        }),
        None
    );
    assert_eq!(source(&FrameError::Json(json)), json_text);
    assert_eq!(source(&FrameError::MissingType), None);
    assert_eq!(
        source(&Error::Malformed(FrameError::DuplicateType)),
        Some("frame has more than one type member".into())
    );
    assert_eq!(
        source(&Error::ClockWentBackwards(back)),
        Some(back.to_string())
    );
    assert_eq!(source(&Error::InvalidResult(json)), json_text);
    assert_eq!(
        source(&Error::Call(CallError::Stale)),
        Some("call ended and its slot was reused".into())
    );
    assert_eq!(source(&Error::IdTooLong { len: 9, cap: 8 }), None);
}

// kills: clock.rs `From<u64> for Instant` replaced by `Default` (the `embassy-time`
// conversions are tested in `core/src/clock.rs`, with that feature on).
#[test]
fn instants_convert_to_the_same_millisecond() {
    assert_eq!(Instant::from(1_234u64), at(1_234));
}

// kills: call.rs `AdapterCall::poll_timeout` replaced by `None`: the host would never call
// `handle_timeout`, and a silent adapter would hold the call for ever.
#[test]
fn adapter_call_reports_its_deadline_until_it_settles() {
    let mut buf = [0u8; 128];
    let opts = CallOptions {
        name: "files",
        timeout_ms: 250,
        ..CallOptions::DEFAULT
    };
    let mut call = AdapterCall::start(at(40), opts, None, b"{}", &mut buf).unwrap();
    assert_eq!(call.poll_timeout(), Some(at(290)));
    assert_eq!(call.handle_frame(at(100), br#"{"type":"TEXT"}"#), Ok(()));
    assert_eq!(call.poll_timeout(), Some(at(290)));
    assert_eq!(call.handle_frame(at(120), br#"{"type":"END"}"#), Ok(()));
    assert_eq!(call.poll_timeout(), None);
    assert_eq!(call.outcome(), Some(CallOutcome::Result(b"null")));
}

// kills: call.rs `handle_frame` checking `raw.len() <= buf.len() && compact_len(raw) <= …`
// (`||` → `&&`): a result whose white space makes it longer than the buffer, but whose
// compact form fits, must be kept compact, not failed as too large (SPEC §7.22).
#[test]
fn adapter_call_keeps_a_spaced_result_that_fits_once_compact() {
    let mut buf = [0u8; 64];
    let opts = CallOptions {
        name: "files",
        ..CallOptions::DEFAULT
    };
    let mut call = AdapterCall::start(at(0), opts, None, b"{}", &mut buf).unwrap();
    let spaced = format!(r#"[1,{}2]"#, " ".repeat(80));
    let frame = format!(r#"{{"type":"TOOL_RESULT","content":{{"result":{spaced}}}}}"#);
    assert!(spaced.len() > 64);
    assert_eq!(call.handle_frame(at(1), frame.as_bytes()), Ok(()));
    assert_eq!(call.handle_frame(at(2), br#"{"type":"END"}"#), Ok(()));
    assert_eq!(call.outcome(), Some(CallOutcome::Result(b"[1,2]")));
}

// kills: frame.rs `Frame::fields` with its `json::is_object(content)` guard replaced by
// `true`: on a frame read lazily (`Frame::parse`), a `content` that is not an object means
// no fields (SPEC §7.1), not a malformed frame.
#[test]
fn lazy_frame_with_a_content_that_is_not_an_object_has_no_fields() {
    use polyweave_tool_adapter::Frame;
    for content in ["5", r#""calc""#, "null", r#"[{"name":"calc"}]"#] {
        let bytes = format!(r#"{{"type":"TOOL_CALL","content":{content}}}"#);
        let frame = Frame::parse(bytes.as_bytes()).unwrap();
        let call = frame.tool_call().unwrap();
        assert_eq!(
            (call.id, call.name, call.args, call.content_is_object),
            (None, None, &b"{}"[..], false),
            "{content}"
        );
        let result = frame.tool_result().unwrap();
        assert_eq!(result.result, None, "{content}");
    }
}

// kills: frame.rs `Fields::record` without its `b"error"` arm, or without the decoded-key
// arms for `error` and `message` (`Some(5)`, `Some(6)`): the accessors of a lazily read
// `TOOL_RESULT` and `ERROR` find those members, spelled plainly or with escapes.
#[test]
fn error_and_message_members_are_found_plain_or_escaped() {
    use polyweave_tool_adapter::Frame;
    for key in ["error", r#"\u0065rror"#, r#"err\u006fr"#] {
        let bytes = format!(r#"{{"type":"TOOL_RESULT","content":{{"{key}":"disk full"}}}}"#);
        let frame = Frame::parse(bytes.as_bytes()).unwrap();
        assert_eq!(
            frame.tool_result().unwrap().error,
            Some(&br#""disk full""#[..]),
            "{key}"
        );
    }
    for key in ["message", r#"\u006dessage"#, r#"messag\u0065"#] {
        let bytes = format!(r#"{{"type":"ERROR","content":{{"{key}":"model err"}}}}"#);
        let frame = Frame::parse(bytes.as_bytes()).unwrap();
        let message = frame.error_message().unwrap().map(|m| m.raw());
        assert_eq!(message, Some(&b"model err"[..]), "{key}");
    }
}

// kills: frame.rs `as_string` replaced by `None`, or its quote check inverted (`==` → `!=`).
#[test]
fn as_string_views_a_string_token_and_nothing_else() {
    use polyweave_tool_adapter::internals::as_string;
    let s = as_string(br#""a\nb""#).expect("a string token");
    assert_eq!(s.raw(), br#"a\nb"#);
    assert!(s.eq_text(b"a\nb"));
    for not_a_string in [&b"5"[..], b"null", b"{}", b"", br#""open"#, br#"x"a""#] {
        assert_eq!(as_string(not_a_string), None, "{not_a_string:?}");
    }
}

// kills: hooks.rs `impl Hooks for &mut H` forwarding nothing (either method replaced by
// `()`): a host that lends its hooks (`&mut recorder`) must see every call and result.
#[test]
fn lent_hooks_see_every_call_and_result() {
    use polyweave_tests::host::{Entry, Recorder, Recording};
    let tools = [Tool::sync("echo", &echo)];
    let mut recorder = Recorder::default();
    {
        let mut s = Storage::new(WrapperConfig::DEFAULT, 1);
        let mut w = s.wrapper(&tools, &mut recorder);
        let call = tool_call(r#"{"id":"c1","name":"echo","args":{"a":1}}"#);
        w.handle_response(at(0), call.as_bytes()).unwrap();
    }
    let events = recorder.take_hooks();
    let seen: Vec<(&str, Option<String>, Vec<u8>)> = events
        .iter()
        .map(|e| match e {
            Entry::ToolCall(c) => ("call", c.id.clone(), c.args.clone()),
            Entry::ToolResult(c, _) => ("result", c.id.clone(), c.args.clone()),
            other => panic!("not a hook event: {other:?}"),
        })
        .collect();
    let c1 = || Some("c1".to_string());
    assert_eq!(
        seen,
        [
            ("call", c1(), br#"{"a":1}"#.to_vec()),
            ("result", c1(), br#"{"a":1}"#.to_vec())
        ]
    );
}

// kills: json/mod.rs `trim_ws` looping while `end >= start` (`>` → `>=`): all white space
// trims to nothing (the mutant reads before the start and panics).
#[test]
fn trim_ws_of_nothing_but_white_space_is_empty() {
    use polyweave_tool_adapter::json::trim_ws;
    for ws in [&b""[..], b" ", b" \t\r\n ", b"\n"] {
        assert_eq!(trim_ws(ws), b"", "{ws:?}");
    }
    assert_eq!(trim_ws(b" \t[1, 2]\r\n"), b"[1, 2]");
    assert_eq!(trim_ws(b"x"), b"x");
}

// kills: wrapper/mod.rs `poll_transmit` freeing a slot when any of its frames but the
// `TOOL_RESULT` is sent (`frame == ToolResult` → `!=`): a cancelled adapter call's slot is
// taken by a new call after its `CANCEL` went out, and its `TOOL_RESULT`, still queued,
// must still be its own.
#[test]
fn a_slot_is_free_only_once_its_tool_result_is_sent() {
    use polyweave_tests::host::{idle, start, FILES, LATER};
    let mut s = Storage::new(WrapperConfig::DEFAULT, 1);
    let mut w = idle(&mut s);
    let mut host = Host::new();
    start(&mut w, 1, FILES).expect("adapter");
    assert_eq!(w.cancel(at(2), "stop"), Ok(0));
    let first: Vec<String> = (0..2)
        .map(|_| {
            let (_, f) = host.pop_frame(&mut w).expect("a frame");
            String::from_utf8(f.to_vec()).unwrap()
        })
        .collect();
    assert_eq!(
        first,
        [
            r#"{"type":"TOOL_CALL","content":{"id":"a1","name":"files","args":[1,2]}}"#,
            r#"{"type":"CANCEL","content":{"id":"a1","name":"files","reason":"stop"}}"#
        ]
    );
    // The slot still holds the call whose TOOL_RESULT is queued: the new call reclaims it.
    start(&mut w, 3, LATER).expect("deferred");
    let rest: Vec<String> = host.frames(&mut w).into_iter().map(|(_, f)| f).collect();
    assert_eq!(
        rest[0],
        r#"{"type":"TOOL_RESULT","content":{"id":"a1","name":"files","error":"Tool files cancelled: stop"}}"#
    );
    assert_eq!(rest.len(), 3);
}

// kills: wrapper/mod.rs `Debug for Wrapper` replaced by `Ok(Default::default())`.
#[test]
fn a_wrapper_debug_prints_its_counts() {
    use polyweave_tests::host::{idle, start, LATER};
    let mut s = Storage::new(WrapperConfig::DEFAULT, 2);
    let mut w = idle(&mut s);
    assert_eq!(
        format!("{w:?}"),
        "Wrapper { pending: 0, queued: 0, next_index: 0 }"
    );
    start(&mut w, 1, LATER).expect("deferred");
    assert_eq!(
        format!("{w:?}"),
        "Wrapper { pending: 1, queued: 0, next_index: 1 }"
    );
}

// A message cut because its escapes do not fit `message_cap` is counted, though it fit the
// output buffer as written.
// kills: intercept.rs `message.len() < written || overflow` → `&&`
#[test]
fn a_sync_message_cut_by_its_escapes_is_counted() {
    fn quotes(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
        out.write("\"".repeat(60).as_bytes());
        Err(ToolFailed)
    }
    let tools = [Tool::sync("q", &quotes)];
    assert_eq!(WrapperConfig::SMALL.message_cap, 96);
    let mut s = Storage::new(WrapperConfig::SMALL, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    w.handle_response(at(0), tool_call(r#"{"name":"q"}"#).as_bytes())
        .unwrap();
    assert_eq!(w.stats().messages_truncated, 1);
    let mut host = Host::new();
    let frames = host.frames(&mut w);
    // 48 quotes escaped are 96 bytes: the longest prefix that fits.
    assert_eq!(
        frames[0].1,
        format!(
            r#"{{"type":"TOOL_RESULT","content":{{"name":"q","error":"{}"}}}}"#,
            "\\\"".repeat(48)
        )
    );
}

// A sync tool's message longer than its writer (when results are smaller than messages, the
// writer is `message_cap` long) is counted even though nothing more is cut once escaped.
#[test]
fn a_sync_message_longer_than_its_writer_is_counted() {
    let long = |_: &[u8], out: &mut ResultWriter<'_>| -> Result<(), ToolFailed> {
        out.write("m".repeat(100).as_bytes());
        Err(ToolFailed)
    };
    let (sent, truncated) = short_writer_failure("long", &long);
    let want = format!(
        r#"{{"type":"TOOL_RESULT","content":{{"name":"long","error":"{}"}}}}"#,
        "m".repeat(CAP)
    );
    assert_eq!(sent, want);
    assert_eq!(truncated, 1);
}

// Runs the sync tool `f` once, with results (64) smaller than messages (`CAP`), so that its
// writer is `message_cap` long; gives its `TOOL_RESULT` and the messages counted as cut.
fn short_writer_failure(name: &str, f: &dyn SyncTool) -> (String, u32) {
    let tools = [Tool::sync(name, f)];
    let cfg = WrapperConfig {
        result_cap: 64,
        ..SWEEP
    };
    let mut s = Storage::new(cfg, 1);
    let mut w = s.wrapper(&tools, NoHooks);
    let mut host = Host::new();
    let call = tool_call(&format!(r#"{{"name":"{name}"}}"#));
    w.handle_response(at(0), call.as_bytes()).unwrap();
    let sent = host.frames(&mut w);
    (sent[0].1.clone(), w.stats().messages_truncated)
}

// A sync tool's message whose typed write did not fit is counted: the writer overflowed
// without compacting, and what it kept fits `message_cap` whole.
// kills: intercept.rs `overflow || compacted` → `&&`
#[test]
fn a_sync_message_whose_typed_write_overflowed_is_counted() {
    let typed = |_: &[u8], out: &mut ResultWriter<'_>| -> Result<(), ToolFailed> {
        out.write(b"lost: ");
        out.write_typed("m".repeat(200).as_str());
        Err(ToolFailed)
    };
    let (sent, truncated) = short_writer_failure("typed", &typed);
    assert_eq!(
        sent,
        r#"{"type":"TOOL_RESULT","content":{"name":"typed","error":"lost: "}}"#
    );
    assert_eq!(truncated, 1);
}
