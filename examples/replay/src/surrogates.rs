//! Escaped lone surrogates (`"\ud800"`): JavaScript's `JSON.stringify` writes one for an
//! unpaired UTF-16 surrogate, the core accepts it (SPEC §7.24), serde_json refuses it.

/// A copy of `json` that serde_json reads: every escaped surrogate that is not half of an
/// escaped pair (a high `\uD800`–`\uDBFF` right before a low `\uDC00`–`\uDFFF`) reads `\uFFFD`,
/// which is what the core decodes it as (SPEC §7.24). Only those four hex digits change, so
/// the copy has the length of `json` and every value lies at the same offset in both.
///
/// An escape is read whole, so in `\\ud800` (an escaped backslash, then text) nothing changes.
pub fn masked(json: &[u8]) -> Vec<u8> {
    let mut out = json.to_vec();
    let mut i = 0;
    while i + 1 < out.len() {
        if out[i] != b'\\' {
            i += 1;
            continue;
        }
        match surrogate_at(&out, i) {
            Some(0xD800..=0xDBFF) if matches!(surrogate_at(&out, i + 6), Some(0xDC00..=0xDFFF)) => {
                i += 12
            }
            Some(_) => {
                out[i + 2..i + 6].copy_from_slice(b"FFFD");
                i += 6;
            }
            None => i += 2,
        }
    }
    out
}

/// The surrogate escaped at `at` (`\uXXXX`, XXXX from D800 to DFFF), if one is there.
fn surrogate_at(json: &[u8], at: usize) -> Option<u16> {
    let escape = json.get(at..at + 6)?;
    let hex = escape.strip_prefix(b"\\u")?;
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let unit = u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
    (0xD800..=0xDFFF).contains(&unit).then_some(unit)
}

#[cfg(test)]
mod tests {
    use super::masked;

    fn m(s: &str) -> String {
        String::from_utf8(masked(s.as_bytes())).expect("UTF-8")
    }

    #[test]
    fn lone_surrogates_are_masked_pairs_are_kept() {
        assert_eq!(m(r#""\ud800""#), r#""\uFFFD""#);
        assert_eq!(m(r#""\uDC00x""#), r#""\uFFFDx""#);
        assert_eq!(m(r#""\ud83d\ude00""#), r#""\ud83d\ude00""#);
        // A high one before a high one, a low one alone after a pair, a pair after a lone one.
        assert_eq!(m(r#""\ud800\ud83d\ude00""#), r#""\uFFFD\ud83d\ude00""#);
        assert_eq!(m(r#""\ud83d\ude00\ude00""#), r#""\ud83d\ude00\uFFFD""#);
        assert_eq!(m(r#""\ud800\u0041""#), r#""\uFFFD\u0041""#);
        // Escaped backslashes are no escapes; short or broken escapes are left to the parser.
        assert_eq!(m(r#""\\ud800 \\\ud800""#), r#""\\ud800 \\\uFFFD""#);
        assert_eq!(m(r#""\ud80"#), r#""\ud80"#);
        assert_eq!(m(r#""\u+d80""#), r#""\u+d80""#);
        assert_eq!(m("\"é\\ud800\""), "\"é\\uFFFD\"");
    }
}
