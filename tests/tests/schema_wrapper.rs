//! SPEC §11 in the wrapper: a tool registered with its input schema never runs on args that
//! do not satisfy it; the call completes at once with the error the model can act on, at its
//! place in the check order (§3.2: … args capacity → schema → free slot → run).

use polyweave_tests::drive::{at, drain, echo};
use polyweave_tests::host::Storage;
use polyweave_tool_adapter::json::schema::Schema;
use polyweave_tool_adapter::wrapper::{Disposition, WrapperConfig};
use polyweave_tool_adapter::{NoHooks, Route, Tool};

const WEATHER: &[u8] = br#"{"type":"object","required":["city"],"additionalProperties":false,
 "properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","minimum":1,"maximum":14},
 "units":{"enum":["metric","imperial"]},"stops":{"type":"array","items":{"type":"string"}}}}"#;

fn call(id: &str, name: &str, args: &str) -> String {
    format!(r#"{{"type":"TOOL_CALL","content":{{"id":"{id}","name":"{name}","args":{args}}}}}"#)
}

fn result_error(id: &str, name: &str, error: &str) -> String {
    format!(
        r#"{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"{name}","error":"{error}"}}}}"#
    )
}

/// Each failing value, its exact text; each passing one runs the tool (the echo of its args).
// SPEC §11
#[test]
fn invalid_args_never_reach_the_tool() {
    let schema = Schema::new(WEATHER).unwrap();
    let tools = [Tool::sync("weather", &echo).with_schema(&schema)];
    let mut st = Storage::new(WrapperConfig::DEFAULT, 2);
    let mut w = st.wrapper(&tools, NoHooks);
    let cases: &[(&str, Option<&str>)] = &[
        (r#"{"city":"Paris"}"#, None),
        (r#"{"city":"Paris","days":2.0,"stops":["a","b"]}"#, None),
        (
            r#"{}"#,
            Some(r#"(args): missing required property \"city\""#),
        ),
        (r#"{"city":7}"#, Some("/city: expected string")),
        (
            r#"{"city":""}"#,
            Some("/city: must be at least 1 character long"),
        ),
        (r#"{"city":"P","days":0}"#, Some("/days: must be >= 1")),
        (
            r#"{"city":"P","days":1.5}"#,
            Some("/days: expected integer"),
        ),
        (r#"{"city":"P","days":15}"#, Some("/days: must be <= 14")),
        (
            r#"{"city":"P","units":"kelvin"}"#,
            Some("/units: not one of the allowed values"),
        ),
        (
            r#"{"city":"P","stops":["a",2]}"#,
            Some("/stops/1: expected string"),
        ),
        (
            r#"{"city":"P","wind":true}"#,
            Some("/wind: property not allowed"),
        ),
        (r#"[]"#, Some("(args): expected object")),
    ];
    for (i, (args, error)) in cases.iter().enumerate() {
        let id = format!("c{i}");
        let d = w
            .handle_response(at(i as u64), call(&id, "weather", args).as_bytes())
            .unwrap();
        assert!(
            matches!(d, Disposition::Intercepted { handle: None, .. }),
            "{args}"
        );
        let frames = drain(&mut w);
        let expected = match error {
            None => format!(
                r#"{{"type":"TOOL_RESULT","content":{{"id":"{id}","name":"weather","result":{}}}}}"#,
                args.replace(' ', "")
            ),
            Some(e) => result_error(
                &id,
                "weather",
                &format!("Tool weather arguments are invalid: {e}"),
            ),
        };
        let results: Vec<_> = frames
            .iter()
            .filter(|(_, f)| f.contains("TOOL_RESULT"))
            .collect();
        assert_eq!(results, [&(Route::Model, expected)], "{args}");
    }
}

/// The schema's place in the check order: after `args_error`, the unknown name, the duplicate
/// id and the args' size; before a free slot.
// SPEC §11
#[test]
fn schema_comes_after_the_size_and_before_a_free_slot() {
    let schema = Schema::new(WEATHER).unwrap();
    let tools = [
        Tool::deferred("later").with_schema(&schema),
        Tool::sync("weather", &echo).with_schema(&schema),
    ];
    let cfg = WrapperConfig {
        args_cap: 64,
        ..WrapperConfig::DEFAULT
    };
    let mut st = Storage::new(cfg, 1);
    let mut w = st.wrapper(&tools, NoHooks);
    let send = |w: &mut polyweave_tool_adapter::Wrapper<'_, NoHooks>, t: u64, frame: String| {
        w.handle_response(at(t), frame.as_bytes()).unwrap();
        drain(w)
            .into_iter()
            .filter(|(r, f)| *r == Route::Model && f.contains("TOOL_RESULT"))
            .map(|(_, f)| f)
            .collect::<Vec<_>>()
    };
    // The one slot taken by a valid call.
    assert_eq!(
        send(&mut w, 1, call("a", "later", r#"{"city":"x"}"#)),
        Vec::<String>::new()
    );
    let invalid = format!(r#"{{"city":1,"pad":"{}"}}"#, "p".repeat(70));
    let cases = [
        (
            r#"{"type":"TOOL_CALL","content":{"id":"b","name":"later","args":"{oops","args_error":"bad JSON"}}"#.to_string(),
            result_error("b", "later", "bad JSON"),
        ),
        (call("c", "nope", "{}"), result_error("c", "nope", r#"Tool \"nope\" not found"#)),
        (call("a", "later", "{}"), result_error("a", "later", r#"Duplicate tool call id \"a\""#)),
        (call("d", "later", &invalid), result_error("d", "later", "Tool later args exceed 64 bytes")),
        (
            call("e", "later", "{}"),
            result_error("e", "later", r#"Tool later arguments are invalid: (args): missing required property \"city\""#),
        ),
        (call("f", "later", r#"{"city":"y"}"#), result_error("f", "later", "Too many pending tool calls (max 1)")),
        // A sync tool has no args cap and needs no slot: only the schema stops it.
        (
            call("g", "weather", &invalid),
            result_error("g", "weather", "Tool weather arguments are invalid: /pad: property not allowed"),
        ),
    ];
    for (i, (frame, expected)) in cases.into_iter().enumerate() {
        assert_eq!(
            send(&mut w, 2 + i as u64, frame.clone()),
            [expected],
            "{frame}"
        );
    }
    assert_eq!(w.stats().messages_truncated, 0);
}

/// A text longer than `message_cap` (it quotes the args' own keys) is cut there and counted;
/// the call still gets its one result.
// SPEC §11
#[test]
fn a_long_text_is_cut_to_the_message_cap() {
    let schema = Schema::new(br#"{"additionalProperties":false}"#).unwrap();
    let tools = [Tool::sync("t", &echo).with_schema(&schema)];
    let cfg = WrapperConfig {
        message_cap: 128,
        ..WrapperConfig::DEFAULT
    };
    let mut st = Storage::new(cfg, 1);
    let mut w = st.wrapper(&tools, NoHooks);
    let key = "k".repeat(300);
    w.handle_response(
        at(1),
        call("x", "t", &format!(r#"{{"{key}":1}}"#)).as_bytes(),
    )
    .unwrap();
    let frames = drain(&mut w);
    let text = format!("Tool t arguments are invalid: /{key}");
    assert_eq!(
        frames[0],
        (Route::Model, result_error("x", "t", &text[..128]))
    );
    assert_eq!(w.stats().messages_truncated, 1);
}
