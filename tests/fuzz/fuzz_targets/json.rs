//! The scanner against serde_json on arbitrary bytes: they accept and reject the same
//! documents (within the scanner's depth limit; serde_json gets escaped lone surrogates, which
//! SPEC §7.24 accepts, as `\uFFFD`), the compact form the encoder copies parses to the same
//! value and is its own compact form, and a string decodes to the same text. The validation a
//! decoder runs, which notes an object's top level, answers the same and notes its members.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polyweave_tool_adapter::internals;
use polyweave_tool_adapter::json::{self, JsonErrorKind, JsonStr};
use serde_json::Value;

/// Below serde_json's own recursion limit (128), so its limit never decides.
const DEPTH: u8 = 100;

/// `bytes` with every escaped lone surrogate written `\uFFFD`, which is what the scanner
/// decodes it to (SPEC §7.24) and serde_json, which refuses lone surrogates, then accepts.
fn mask_lone_surrogates(bytes: &[u8]) -> Vec<u8> {
    let hex = |at: usize| -> Option<u32> {
        let h = bytes.get(at..at + 4)?;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u32> {
        (bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u'))
            .then(|| hex(at + 2))
            .flatten()
    };
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match escape_at(i) {
            Some(0xD800..=0xDBFF) if matches!(escape_at(i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
            Some(0xD800..=0xDFFF) => {
                out[i + 2..i + 6].copy_from_slice(b"FFFD");
                i += 6;
            }
            // Any other escape: skip the backslash and the byte it escapes.
            _ => i += 2,
        }
    }
    out
}

fn serde(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(&mask_lone_surrogates(bytes))
}

/// With `arbitrary_precision`, serde_json reads an object whose key is this token as one of
/// its own number values, and refuses it unless the value is a string: a quirk of the
/// reference, not of JSON (found by this target; `bad_input.rs` pins the scanner's answer).
const SERDE_NUMBER_TOKEN: &[u8] = b"$serde_json::private::Number";

fuzz_target!(|data: &[u8]| {
    if data
        .windows(SERDE_NUMBER_TOKEN.len())
        .any(|w| w == SERDE_NUMBER_TOKEN)
    {
        return;
    }
    let ours = json::validate(data, DEPTH);
    // As a decoder validates an event: the same answer, and where it notes an object's top
    // level, the members a walk of the object finds.
    let mut noted = Vec::new();
    let (answer, was_noted) = internals::validate_noted(data, DEPTH, |name, value| {
        noted.push((name.to_vec(), value.to_vec()))
    });
    assert_eq!(answer, ours, "validate_noted answers as validate");
    if was_noted {
        let walked: Vec<_> = json::Members::new(data, 0, DEPTH)
            .expect("noted: an object")
            .map(|m| m.map(|m| (m.key.raw().to_vec(), m.value.to_vec())))
            .collect::<Result<_, _>>()
            .expect("noted: valid");
        assert_eq!(noted, walked, "the notes are the members");
    }
    let theirs = serde(data);
    match (ours, &theirs) {
        (Ok(()), Ok(value)) => {
            let len = json::compact_len(data);
            let mut compact = vec![0u8; len];
            assert_eq!(json::compact_into(data, &mut compact), len);
            assert_eq!(json::compact_len(&compact), len, "compact form is compact");
            let again = serde(&compact).expect("the compact form parses");
            assert_eq!(&again, value, "the compact form is the same value");
            if let Value::String(text) = value {
                let start = data.iter().position(|&b| b == b'"').expect("a string");
                let (s, _) = JsonStr::parse_at(data, start).expect("the scanner took it");
                let mut out = vec![0u8; s.decoded_len()];
                assert_eq!(s.decode_into(&mut out).expect("room"), text.as_str());
            }
        }
        (Err(e), _) if e.kind == JsonErrorKind::TooDeep => {}
        (Err(_), Err(_)) => {}
        (ours, theirs) => panic!("scanner {ours:?}, serde_json {theirs:?}"),
    }
});
