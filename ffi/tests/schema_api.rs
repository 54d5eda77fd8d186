//! The JSON Schema validator's C ABI (SPEC §11: `pw_schema_check`, `pw_schema_validate`),
//! called from Rust as C would call it: each refusal's kind and offset, each verdict's exact
//! text, the cut on a character boundary, and every bad argument with its code and nothing
//! written.

use std::ptr;

use polyweave_tool_adapter_ffi::pw_schema_error_kind::*;
use polyweave_tool_adapter_ffi::*;

const WEATHER: &str = r#"{"type":"object","required":["city"],"additionalProperties":false,
 "properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","minimum":1}}}"#;

/// `pw_schema_check`'s answer: `Ok` or the refusal's (kind, offset).
fn check(text: &str) -> Result<(), (pw_result, pw_schema_error_kind, usize)> {
    let mut e = pw_schema_error {
        kind: PW_SCHEMA_ERROR_NOT_JSON,
        at: usize::MAX,
    };
    // SAFETY: valid pointers, apart.
    match unsafe { pw_schema_check(text.as_ptr(), text.len(), &mut e) } {
        pw_result::PW_OK => {
            assert_eq!(e.at, usize::MAX, "nothing written on PW_OK");
            Ok(())
        }
        r => Err((r, e.kind, e.at)),
    }
}

/// `pw_schema_validate` with an error buffer of `cap` bytes: its code and what it wrote
/// (`None` when `*error_len` was not written).
fn validate(schema: &str, value: &str, cap: usize) -> (pw_result, Option<String>) {
    let mut buf = vec![0xAAu8; cap + 1];
    let mut len = usize::MAX;
    // SAFETY: valid pointers, apart; `buf` holds `cap` bytes and one more.
    let r = unsafe {
        pw_schema_validate(
            schema.as_ptr(),
            schema.len(),
            value.as_ptr(),
            value.len(),
            buf.as_mut_ptr(),
            cap,
            &mut len,
        )
    };
    assert_eq!(buf[cap], 0xAA, "nothing past error_cap");
    if len == usize::MAX {
        assert!(buf.iter().all(|b| *b == 0xAA), "nothing written");
        return (r, None);
    }
    (r, Some(String::from_utf8(buf[..len].to_vec()).unwrap()))
}

#[test]
fn a_schema_the_validator_refuses_says_why_and_where() {
    assert_eq!(check(WEATHER), Ok(()));
    assert_eq!(check("true"), Ok(()));
    let bad = pw_result::PW_BAD_SCHEMA;
    assert_eq!(
        check(r#"{"type":"#),
        Err((bad, PW_SCHEMA_ERROR_NOT_JSON, 8))
    );
    assert_eq!(check("1"), Err((bad, PW_SCHEMA_ERROR_NOT_A_SCHEMA, 0)));
    assert_eq!(
        check(r#"{"minimum":"1"}"#),
        Err((bad, PW_SCHEMA_ERROR_BAD_KEYWORD, 11))
    );
    assert_eq!(
        check(r#"{"$ref":"https://example.com/s.json"}"#),
        Err((bad, PW_SCHEMA_ERROR_REMOTE_REF, 8))
    );
    assert_eq!(
        check(r##"{"$ref":"#/$defs/nowhere"}"##),
        Err((bad, PW_SCHEMA_ERROR_UNRESOLVED_REF, 8))
    );
    assert_eq!(
        check(r#"{"pattern":"(?<=a)b"}"#),
        Err((bad, PW_SCHEMA_ERROR_UNSUPPORTED_PATTERN, 11))
    );
    assert_eq!(
        check(r#"{"pattern":"(a"}"#),
        Err((bad, PW_SCHEMA_ERROR_BAD_PATTERN, 11))
    );
    let deep = format!("{}true{}", r#"{"not":"#.repeat(40), "}".repeat(40));
    assert_eq!(check(&deep), Err((bad, PW_SCHEMA_ERROR_TOO_DEEP, 224)));
    assert_eq!(
        check(r#"{"type":"string","type":"integer"}"#),
        Err((bad, PW_SCHEMA_ERROR_REPEATED_NAME, 24))
    );
    // 100,000 pairs of names compared: minutes under miri, and no unsafe code of its own.
    if !cfg!(miri) {
        let many: Vec<String> = (0..1000).map(|i| format!(r#""p{i}":{{}}"#)).collect();
        assert_eq!(
            check(&format!(r#"{{"properties":{{{}}}}}"#, many.join(","))),
            Err((bad, PW_SCHEMA_ERROR_TOO_COSTLY, 4442))
        );
    }
}

#[test]
fn a_value_is_checked_with_the_exact_text() {
    let ok = pw_result::PW_OK;
    let invalid = pw_result::PW_SCHEMA_INVALID;
    assert_eq!(
        validate(WEATHER, r#" {"city":"Paris","days":2.0} "#, 64),
        (ok, None)
    );
    assert_eq!(
        validate(WEATHER, r#"{"city":7}"#, 64),
        (invalid, Some("/city: expected string".into()))
    );
    assert_eq!(
        validate(WEATHER, "{}", 64),
        (
            invalid,
            Some(r#"(args): missing required property "city""#.into())
        )
    );
    assert_eq!(
        validate(WEATHER, r#"{"city":"P","days":0}"#, 64),
        (invalid, Some("/days: must be >= 1".into()))
    );
    // "/café: property not allowed": `é` is two bytes, at 4 and 5.
    let cafe = r#"{"city":"P","café":1}"#;
    assert_eq!(
        validate(WEATHER, cafe, 64),
        (invalid, Some("/café: property not allowed".into()))
    );
    assert_eq!(validate(WEATHER, cafe, 6), (invalid, Some("/café".into())));
    assert_eq!(validate(WEATHER, cafe, 5), (invalid, Some("/caf".into())));
    assert_eq!(validate(WEATHER, cafe, 0), (invalid, Some(String::new())));
}

#[test]
fn a_refused_schema_a_value_not_json_and_a_limit_have_their_codes() {
    assert_eq!(
        validate(r#"{"minimum":"1"}"#, "1", 64),
        (pw_result::PW_BAD_SCHEMA, None)
    );
    assert_eq!(
        validate(WEATHER, r#"{"city":"#, 64),
        (pw_result::PW_INVALID_JSON, None)
    );
    assert_eq!(
        validate(WEATHER, "\"\u{0}\"", 64),
        (pw_result::PW_INVALID_JSON, None)
    );
    // A value nested past the validator's depth is neither valid nor invalid.
    let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
    assert_eq!(
        validate("true", &deep, 64),
        (
            pw_result::PW_SCHEMA_LIMIT,
            Some("(args): too deeply nested to check".into())
        )
    );
}

#[test]
fn bad_arguments_write_nothing() {
    let (s, v) = ("true", "1");
    let mut buf = [0u8; 16];
    let mut len = 99usize;
    let mut e = pw_schema_error {
        kind: PW_SCHEMA_ERROR_NOT_JSON,
        at: 99,
    };
    let mut words = [0usize; 2];
    // SAFETY: each call gets one NULL or overlapping argument; the others are valid.
    unsafe {
        assert_eq!(
            pw_schema_check(ptr::null(), 0, &mut e),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            pw_schema_check(s.as_ptr(), s.len(), ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
        let args = |schema: *const u8, value: *const u8, error: *mut u8, len: *mut usize| {
            pw_schema_validate(schema, 4, value, 1, error, 16, len)
        };
        let (bp, lp) = (buf.as_mut_ptr(), &raw mut len);
        assert_eq!(
            args(ptr::null(), v.as_ptr(), bp, lp),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            args(s.as_ptr(), ptr::null(), bp, lp),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            args(s.as_ptr(), v.as_ptr(), ptr::null_mut(), lp),
            pw_result::PW_NULL_POINTER
        );
        assert_eq!(
            args(s.as_ptr(), v.as_ptr(), bp, ptr::null_mut()),
            pw_result::PW_NULL_POINTER
        );
        // The error buffer over the value, and the length inside the error buffer.
        bp.write(b'1');
        assert_eq!(
            args(s.as_ptr(), bp.cast_const(), bp, lp),
            pw_result::PW_STORAGE_OVERLAP
        );
        assert_eq!(
            pw_schema_validate(s.as_ptr(), 4, v.as_ptr(), 1, bp, 16, bp.add(8).cast()),
            pw_result::PW_STORAGE_OVERLAP
        );
        // A misaligned length.
        let odd = words.as_mut_ptr().cast::<u8>().add(1).cast::<usize>();
        assert_eq!(
            args(s.as_ptr(), v.as_ptr(), bp, odd),
            pw_result::PW_STORAGE_MISALIGNED
        );
    }
    assert_eq!((len, e.at, words), (99, 99, [0, 0]));
}
