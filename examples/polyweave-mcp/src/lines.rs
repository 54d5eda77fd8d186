//! What the program writes: SPEC §6 event lines on stdout, short log lines on stderr.

use polyweave_tool_adapter::json::{self, JsonStr};

/// Depth limit when checking a frame before printing it as a JSON value (the most the core's
/// scanner tracks): a frame passed through is printed as parsed whatever its depth.
const PRINT_DEPTH: u8 = u8::MAX;

/// Appends `raw` as it goes into one output line, as the replay program prints frames
/// (SPEC §6): a valid JSON value without its insignificant white space (number text, string
/// escapes, escaped lone surrogates and member order as written); anything else — a frame
/// passed through that is broken after its `type` — as a JSON string of its text.
pub fn push_value(out: &mut Vec<u8>, raw: &[u8]) {
    if json::validate(raw, PRINT_DEPTH).is_ok() {
        json::for_each_compact_run(raw, |run| out.extend_from_slice(run));
    } else {
        push_string(out, &String::from_utf8_lossy(raw));
    }
}

/// Appends `text` as a JSON string token, escaped minimally (SPEC §1).
pub fn push_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    for &b in text.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// `{"to":"<to>","frame":<frame>}` and its line feed.
pub fn event(to: &str, frame: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(frame.len() + 32);
    line.extend_from_slice(b"{\"to\":\"");
    line.extend_from_slice(to.as_bytes());
    line.extend_from_slice(b"\",\"frame\":");
    push_value(&mut line, frame);
    line.extend_from_slice(b"}\n");
    line
}

/// `{"rejected":{"path":"response"}}`: a model frame the wrapper refused as malformed.
pub const REJECTED: &[u8] = b"{\"rejected\":{\"path\":\"response\"}}\n";

/// The program's name, the prefix of its log lines (`polyweave-mcp` until set).
static PROGRAM: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Names the program for the log lines; the first call counts.
pub fn set_program(name: &'static str) {
    let _ = PROGRAM.set(name);
}

/// Writes one log line on stderr, prefixed with the program's name.
pub fn log_line(args: std::fmt::Arguments<'_>) {
    let program = PROGRAM.get().copied().unwrap_or("polyweave-mcp");
    eprintln!("{program}: {args}");
}

/// One line on stderr, prefixed with the program's name ([`set_program`]).
#[macro_export]
macro_rules! log {
    ($($arg:tt)*) => {
        $crate::lines::log_line(format_args!($($arg)*))
    };
}

/// Bytes shown of a value in a log line.
const SHOWN: usize = 120;

/// `raw` as text for a log line: lossy UTF-8, line breaks escaped, cut to `SHOWN`
/// characters with an ellipsis.
pub fn short(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut s: String = text
        .chars()
        .take(SHOWN)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(SHOWN).is_some() {
        s.push('…');
    }
    s
}

/// A JSON string's text (decoded when it holds escapes), for a log line.
pub fn text(s: JsonStr<'_>) -> String {
    if let Some(plain) = s.as_plain_str() {
        return plain.to_string();
    }
    let mut buf = vec![0u8; s.decoded_len()];
    match s.decode_into(&mut buf) {
        Ok(t) => t.to_string(),
        Err(_) => String::from_utf8_lossy(s.raw()).into_owned(),
    }
}

/// The string member `key` of the object `raw`, decoded, if it has one.
pub fn member_text(raw: &[u8], key: &[u8]) -> Option<String> {
    let value = json::find_member(raw, key, json::DEFAULT_MAX_DEPTH).ok()??;
    JsonStr::from_token(value).ok().map(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(raw: &[u8]) -> String {
        let mut out = Vec::new();
        push_value(&mut out, raw);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn values_are_compacted_and_broken_ones_become_strings() {
        assert_eq!(
            value(b" {\"type\" : \"TEXT\", \"content\":\"a b\\u00e9\"} "),
            r#"{"type":"TEXT","content":"a b\u00e9"}"#
        );
        assert_eq!(
            value(br#"{"x":"\ud800","n":1.50}"#),
            r#"{"x":"\ud800","n":1.50}"#
        );
        assert_eq!(
            value(b"{\"type\":\"TEXT\",\"content\":\"\x01\"\n"),
            r#""{\"type\":\"TEXT\",\"content\":\"\u0001\"\n""#
        );
        assert_eq!(
            event("model", br#"{"type":"END"}"#),
            b"{\"to\":\"model\",\"frame\":{\"type\":\"END\"}}\n"
        );
    }

    #[test]
    fn members_and_short_texts() {
        let info = br#"{"serverInfo":{"name":"t\u00e9","version":"2"}}"#;
        let server = json::find_member(info, b"serverInfo", 32).unwrap().unwrap();
        assert_eq!(member_text(server, b"name").as_deref(), Some("té"));
        assert_eq!(member_text(server, b"title"), None);
        assert_eq!(short(b"a\nb"), "a b");
        assert_eq!(short(&[b'x'; 200]).chars().count(), SHOWN + 1);
    }
}
