//! SPEC §8 conformance: every recorded provider body, fed whole, split at every byte and
//! in random pieces, gives frames from which exactly what the provider's own SDK
//! reconstructs is read back (text, calls, finish reason, error).

use polyweave_tests::ndjson_compare::json_eq;
use polyweave_tests::streams::{decode, reconstruct, recordings, Recording};
use polyweave_tests::{assert_one_json_line, XorShift};
use polyweave_tool_adapter::Frame;
use serde_json::Value;

/// The expected file's fields that the frames decide.
fn wanted(r: &Recording) -> Value {
    let e = &r.expected;
    let calls: Vec<Value> = e["tool_calls"]
        .as_array()
        .expect("tool_calls")
        .iter()
        .map(|c| {
            let mut call = serde_json::Map::new();
            call.insert("id".into(), c["id"].clone());
            call.insert("name".into(), c["name"].clone());
            if c.get("invalid").and_then(Value::as_bool) == Some(true) {
                call.insert("arguments_text".into(), c["arguments_text"].clone());
                call.insert("invalid".into(), Value::Bool(true));
            } else {
                call.insert("arguments".into(), c["arguments"].clone());
            }
            Value::Object(call)
        })
        .collect();
    serde_json::json!({
        "text": e["text"], "tool_calls": calls, "finish": e["finish"], "error": e["error"],
    })
}

fn check(r: &Recording, frames: &[String], how: &str) {
    for f in frames {
        assert_one_json_line(f.as_bytes(), &r.name);
        let frame = Frame::parse_validated_default(f.as_bytes())
            .unwrap_or_else(|e| panic!("{} {how}: frame {f} not valid: {e:?}", r.name));
        if f.starts_with("{\"type\":\"TOOL_CALL\"") {
            frame.tool_call().expect("a TOOL_CALL the wrapper reads");
        }
    }
    let got = reconstruct(frames);
    let want = wanted(r);
    assert!(
        json_eq(&got, &want),
        "{} {how}:\n got  {got}\n want {want}\n frames {frames:#?}",
        r.name
    );
}

#[test]
fn there_are_71_recordings_with_87_calls() {
    let all = recordings();
    assert_eq!(all.len(), 71);
    let calls: usize = all
        .iter()
        .map(|r| r.expected["tool_calls"].as_array().unwrap().len())
        .sum();
    assert_eq!(calls, 87);
}

#[test]
fn every_recording_whole_gives_what_its_sdk_reconstructs() {
    for r in recordings() {
        let d = decode(r.provider, &r.body, || usize::MAX);
        check(&r, &d.frames, "whole");
    }
}

#[test]
fn every_recording_split_at_every_byte_gives_the_same_frames() {
    for r in recordings() {
        let whole = decode(r.provider, &r.body, || usize::MAX);
        for at in 1..r.body.len() {
            let mut first = true;
            let d = decode(r.provider, &r.body, || {
                if std::mem::take(&mut first) {
                    at
                } else {
                    usize::MAX
                }
            });
            assert_eq!(d, whole, "{} split at {at}", r.name);
        }
        let bytes = decode(r.provider, &r.body, || 1);
        assert_eq!(bytes, whole, "{} byte by byte", r.name);
    }
}

#[test]
fn every_recording_in_random_pieces_gives_the_same_frames() {
    let mut rng = XorShift::new(0x5EED_0020);
    for r in recordings() {
        let whole = decode(r.provider, &r.body, || usize::MAX);
        for _ in 0..20 {
            let d = decode(r.provider, &r.body, || rng.in_1_to(64));
            assert_eq!(d, whole, "{} random pieces", r.name);
        }
    }
}
