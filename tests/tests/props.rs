//! Property tests: the scanner agrees with serde_json, strings round-trip
//! through the encoder and decoder, and the framer does not depend on chunking.

use polyweave_tool_adapter::frame::{Frame, FrameKind};
use polyweave_tool_adapter::frame::{LineSplitter, LineTooLong};
use polyweave_tool_adapter::internals::OutFrame;
use polyweave_tool_adapter::json::{self, JsonStr};
use proptest::prelude::*;

/// Bytes that make JSON (and near-JSON) likely.
fn json_ish_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        8 => proptest::sample::select(
            b"{}[],:\"\\u0123456789abcdefABCDEF+-.eEtrufalsn \n\t\rx/bD8".to_vec()
        ),
        1 => any::<u8>(),
    ]
}

/// A JSON text built from a random value, with random white space between tokens.
fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        "-?(0|[1-9][0-9]{0,29})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,4})?",
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
        "\\PC{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
    ];
    let ws = "[ \t\n\r]{0,2}";
    leaf.prop_recursive(6, 48, 6, move |inner| {
        prop_oneof![
            (proptest::collection::vec((inner.clone(), ws), 0..6)).prop_map(|items| {
                let body: Vec<String> = items
                    .into_iter()
                    .map(|(v, w)| format!("{w}{v}{w}"))
                    .collect();
                format!("[{}]", body.join(","))
            }),
            (proptest::collection::vec((any::<String>(), inner, ws), 0..6)).prop_map(|members| {
                let body: Vec<String> = members
                    .into_iter()
                    .map(|(k, v, w)| format!("{w}{}{w}:{w}{v}", serde_json::to_string(&k).unwrap()))
                    .collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

fn serde_accepts(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn validate_agrees_with_serde_json_on_json_ish_bytes(bytes in proptest::collection::vec(json_ish_byte(), 0..40)) {
        prop_assert_eq!(json::validate(&bytes, 64).is_ok(), serde_accepts(&bytes));
    }

    #[test]
    fn validate_agrees_with_serde_json_on_json_and_its_mutations(
        text in json_text(),
        at in any::<prop::sample::Index>(),
        byte in json_ish_byte(),
        action in 0u8..4,
    ) {
        let mut bytes = text.into_bytes();
        prop_assert_eq!(json::validate(&bytes, 64), Ok(()));
        prop_assert!(serde_accepts(&bytes));
        if !bytes.is_empty() {
            let i = at.index(bytes.len());
            match action {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                2 => { bytes.remove(i); }
                _ => bytes.truncate(i),
            }
        }
        prop_assert_eq!(json::validate(&bytes, 64).is_ok(), serde_accepts(&bytes));
    }

    #[test]
    fn any_string_round_trips_through_encoder_and_decoder(text in any::<String>(), padding in 0usize..9) {
        // The padding shifts the string against the scanner's 8-byte words.
        let text = format!("{}{text}", "p".repeat(padding));
        let frame = OutFrame::Text(text.as_bytes());
        let mut out = vec![0u8; frame.encoded_len()];
        prop_assert_eq!(frame.encode(&mut out), Ok(out.len()));
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        prop_assert_eq!(value["content"].as_str(), Some(text.as_str()));
        let parsed = Frame::parse_validated(&out, 32).unwrap();
        prop_assert_eq!(parsed.kind(), FrameKind::Text);
        let content = parsed.content().unwrap().unwrap();
        let s = JsonStr::from_token(content).unwrap();
        let mut buf = vec![0u8; s.decoded_len()];
        prop_assert_eq!(s.decode_into(&mut buf), Ok(text.as_str()));
        prop_assert!(s.eq_text(text.as_bytes()));
    }

    #[test]
    fn decoder_matches_serde_json_on_escaped_strings(text in any::<String>(), escape_all in any::<bool>()) {
        // serde_json escapes differently from the encoder; `\uXXXX` everywhere tests the pair logic.
        let token = if escape_all {
            let mut t = String::from("\"");
            for unit in text.encode_utf16() {
                t.push_str(&format!("\\u{unit:04X}"));
            }
            t.push('"');
            t
        } else {
            serde_json::to_string(&text).unwrap()
        };
        let s = JsonStr::from_token(token.as_bytes()).unwrap();
        prop_assert_eq!(s.decoded_len(), text.len());
        let mut buf = vec![0u8; text.len()];
        prop_assert_eq!(s.decode_into(&mut buf), Ok(text.as_str()));
    }

    #[test]
    fn framer_output_does_not_depend_on_chunking(
        lines in proptest::collection::vec("[ a-z{}\"\r\t]{0,12}", 0..12),
        cuts in proptest::collection::vec(1usize..7, 1..40),
        capacity in 1usize..10,
        crlf in any::<bool>(),
        tail in "[a-z\r ]{0,12}",
    ) {
        let ending = if crlf { "\r\n" } else { "\n" };
        let mut input = String::new();
        for l in &lines {
            input.push_str(l);
            input.push_str(ending);
        }
        input.push_str(&tail);
        let input = input.into_bytes();

        // Reference: split on `\n`, drop one `\r` at the end, skip blank lines whatever their
        // length (SPEC §1), size the others against capacity.
        let is_blank = |l: &[u8]| l.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'));
        let mut want = Vec::new();
        let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        let last = pieces.pop().unwrap_or(&[]);
        for raw in pieces {
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            if is_blank(raw) {
                continue;
            } else if raw.len() > capacity {
                want.push(Err(line.len()));
            } else {
                want.push(Ok(line.to_vec()));
            }
        }
        let last_line = last.strip_suffix(b"\r").unwrap_or(last);
        if is_blank(last) {
        } else if last.len() > capacity {
            want.push(Err(last_line.len()));
        } else {
            want.push(Ok(last_line.to_vec()));
        }

        let mut storage = vec![0u8; capacity];
        let mut framer = LineSplitter::new(&mut storage);
        let mut got = Vec::new();
        let mut pos = 0;
        let mut cut = cuts.iter().cycle();
        while pos < input.len() {
            let size = (*cut.next().unwrap()).min(input.len() - pos);
            let mut chunk = &input[pos..pos + size];
            pos += size;
            while !chunk.is_empty() {
                let used = framer.feed(chunk);
                prop_assert!(used > 0);
                chunk = &chunk[used..];
                while let Some(item) = framer.next_line() {
                    got.push(item.map(<[u8]>::to_vec).map_err(|LineTooLong { len }| len));
                }
            }
        }
        if let Some(item) = framer.finish() {
            got.push(item.map(<[u8]>::to_vec).map_err(|LineTooLong { len }| len));
        }
        prop_assert_eq!(framer.finish(), None);
        prop_assert_eq!(got, want);
    }
}
