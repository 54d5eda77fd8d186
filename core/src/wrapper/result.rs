//! What a tool's result says beyond itself: whether it can be carried (SPEC §7.23), and the
//! last tool error it sets (SPEC §3.2.2, §7.7).

use crate::frame::scanned_string;
use crate::json::{self, JsonError, JsonErrorKind, JsonStr};

use super::config::WrapperConfig;

/// The last tool error a successful result sets.
pub(crate) enum LastError<'r> {
    /// A string `error` member: its decoded text.
    Text(JsonStr<'r>),
    /// Any other non-null `error` member: its compact JSON text.
    Raw(&'r [u8]),
    /// `"success": false` without an `error`.
    SuccessFalse,
}

/// The text the last tool error gets for `"success": false` (SPEC §7.7).
pub(crate) const SUCCESS_FALSE: &[u8] = b"\"success\": false";

/// The last tool error a valid result sets, if any.
pub(crate) fn result_error(result: &[u8], max_depth: u8) -> Option<LastError<'_>> {
    if !json::is_object(result) {
        return None;
    }
    let m = error_members(result, max_depth).ok()?;
    last_error_of(m.error, m.success)
}

/// What a result from the host (a sync tool's output, or `complete`) turned out to be.
pub(crate) enum ResultCheck<'r> {
    /// Valid and carried, with its last-error source; `compact` when it has no white space
    /// between its tokens (so it is copied as it is).
    Fits {
        last_error: Option<LastError<'r>>,
        compact: bool,
    },
    /// Valid, but its compact form is longer than `result_cap`.
    TooLarge(usize),
    /// Valid, but nested deeper than `max_depth`, the result being level 1.
    TooDeep,
    /// Not one JSON value.
    Invalid(JsonError),
}

/// Validates `result` (white space around it allowed), finds its `error` / `success` members
/// in the same pass, and measures it against the configured depth and size.
pub(crate) fn check_result<'r>(result: &'r [u8], cfg: &WrapperConfig) -> ResultCheck<'r> {
    let checked = if json::is_object(&result[json::skip_ws(result, 0)..]) {
        error_members(result, cfg.max_depth).and_then(|m| {
            let after = json::skip_ws(result, m.end);
            match after == result.len() {
                true => Ok((last_error_of(m.error, m.success), m.compact)),
                false => Err(JsonError {
                    kind: JsonErrorKind::TrailingData,
                    at: after,
                }),
            }
        })
    } else {
        json::validate_compact(result, cfg.max_depth).map(|compact| (None, compact))
    };
    match checked {
        Ok((last_error, compact)) => {
            // Only a value longer than the cap as written needs measuring without white space.
            // Equivalent mutant: `>` -> `>=`: at exactly the cap the compact length is no longer,
            // so the value fits either way.
            let bound = match result.len() > cfg.result_cap {
                true => json::compact_len(result),
                false => result.len(),
            };
            match bound > cfg.result_cap {
                true => ResultCheck::TooLarge(bound),
                false => ResultCheck::Fits {
                    last_error,
                    compact,
                },
            }
        }
        // Too deep for the limit: still refuse it as invalid when it is not JSON at all. (The
        // noting scanner, as above: a firmware links one copy of the scanner.)
        // Equivalent mutant: the `TooDeep` guard -> `true`: any other error, checked again without
        // a depth limit, is found again as the same error.
        Err(e) if e.kind == JsonErrorKind::TooDeep => match json::validate_compact(result, u8::MAX)
        {
            Err(e) if e.kind != JsonErrorKind::TooDeep => ResultCheck::Invalid(e),
            _ => ResultCheck::TooDeep,
        },
        Err(e) => ResultCheck::Invalid(e),
    }
}

/// The last `error` and `success` members of an object result, and where the object ends.
struct ErrorMembers<'r> {
    error: Option<&'r [u8]>,
    success: Option<&'r [u8]>,
    end: usize,
    /// No white space between the object's tokens.
    compact: bool,
}

fn error_members(result: &[u8], max_depth: u8) -> Result<ErrorMembers<'_>, JsonError> {
    let mut found = ErrorMembers {
        error: None,
        success: None,
        end: 0,
        compact: false,
    };
    let (start, mut spaced) = (json::skip_ws(result, 0), false);
    // A compact object in one straight loop; any other is read (again) with `Members`.
    let mut keep = |m| found.keep(m);
    if let Some(end) = json::compact_members(result, start, max_depth, &mut spaced, &mut keep) {
        found.end = end;
        found.compact = !spaced;
        return Ok(found);
    }
    (found.error, found.success) = (None, None);
    let mut members = json::Members::new(result, 0, max_depth)?;
    for m in members.by_ref() {
        found.keep(m?);
    }
    found.end = members.end().unwrap_or(result.len());
    found.compact = !members.spaced();
    Ok(found)
}

impl<'r> ErrorMembers<'r> {
    /// Notes `m` when it is `error` or `success` (later duplicates win).
    fn keep(&mut self, m: json::Member<'r>) {
        if m.key.eq_text(b"error") {
            self.error = Some(m.value);
        } else if m.key.eq_text(b"success") {
            self.success = Some(m.value);
        }
    }
}

fn last_error_of<'r>(error: Option<&'r [u8]>, success: Option<&'r [u8]>) -> Option<LastError<'r>> {
    match error {
        Some(b"null") | None => {}
        Some(raw) => return Some(scanned_string(raw).map_or(LastError::Raw(raw), LastError::Text)),
    }
    match success {
        Some(b"false") => Some(LastError::SuccessFalse),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;

    #[test]
    fn check_result_matches_validate_then_result_error() {
        let cases: &[&[u8]] = &[
            b"{}",
            b"{\"error\":null}",
            b"{\"error\":\"x\\n\"}",
            b"{\"error\":1,\"error\":null}",
            b"{\"success\":false}",
            b"{\"success\":false,\"error\":null}",
            b"{\"error\":[1],\"success\":false}",
            b"{\"a\":1,}",
            b"{\"a\":1} x",
            b"{\"a\":1}  ",
            b" {\"error\":2}",
            b"[1]",
            b"1",
            b"\"s\"",
            b"{\"a\":[[[[1]]]]}",
            b"{\"a\":{\"error\":\"deep\"}}",
            b"{\"e\\u0072ror\":\"esc\"}",
            b"{",
            b"{\"a\"}",
            b"{\"success\":true,\"success\":false}",
            b"{\"error\":\"\xff\"}",
        ];
        for depth in [3u8, 5, 30] {
            let cfg = WrapperConfig {
                max_depth: depth,
                ..WrapperConfig::DEFAULT
            };
            for &c in cases {
                let old = match json::validate(c, depth) {
                    Ok(()) => std::format!("{:?}", result_error(json::trim_ws(c), depth).map(show)),
                    Err(e) if e.kind == JsonErrorKind::TooDeep => "deep".into(),
                    Err(e) => std::format!("invalid {e:?}"),
                };
                let new = match check_result(c, &cfg) {
                    ResultCheck::Fits { last_error, .. } => {
                        std::format!("{:?}", last_error.map(show))
                    }
                    ResultCheck::TooDeep => "deep".into(),
                    ResultCheck::Invalid(e) => std::format!("invalid {e:?}"),
                    ResultCheck::TooLarge(n) => std::format!("large {n}"),
                };
                assert_eq!(old, new, "{:?} depth {depth}", core::str::from_utf8(c));
            }
        }
    }

    /// Deeper than any limit the configuration can name, yet valid JSON: too deep, not invalid.
    // kills: result.rs `e.kind != JsonErrorKind::TooDeep` guard → true
    #[test]
    fn a_result_deeper_than_255_levels_is_too_deep_not_invalid() {
        let cfg = WrapperConfig {
            max_depth: 32,
            ..WrapperConfig::DEFAULT
        };
        let mut deep = std::vec::Vec::new();
        deep.extend(core::iter::repeat_n(b'[', 300));
        deep.extend(core::iter::repeat_n(b']', 300));
        assert!(matches!(check_result(&deep, &cfg), ResultCheck::TooDeep));
        // Broken past level 255: the scan stops at the depth, so it is still too deep.
        deep.truncate(299);
        assert!(matches!(check_result(&deep, &cfg), ResultCheck::TooDeep));
        // Broken within 255 levels, and deeper than the limit: invalid, at the break.
        let broken = b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[}";
        match check_result(broken, &cfg) {
            ResultCheck::Invalid(e) => assert_eq!(e.at, 40),
            _ => panic!("expected invalid"),
        }
    }

    fn show(e: LastError<'_>) -> std::string::String {
        match e {
            LastError::Raw(r) => std::format!("raw {r:?}"),
            LastError::Text(t) => std::format!("text {:?}", t.raw()),
            LastError::SuccessFalse => "success false".into(),
        }
    }
}
