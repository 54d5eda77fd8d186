//! The headers of a POST (SPEC §9.11): `Content-Type`, `Accept`, `MCP-Protocol-Version`;
//! in 2026-07-28 `Mcp-Method` and `Mcp-Name`; in 2025-11-25 the session's id. Written as
//! HTTP/1.1 header lines (`Name: value` CRLF), which a host splits or sends as they are.

use crate::sink::Sink;

/// Bytes of a 2025-11-25 `Mcp-Session-Id` kept; a longer one fails the start-up.
pub const SESSION_CAP: usize = 128;

/// Whether a header value can be written as it is: visible ASCII, inner spaces and tabs,
/// and not looking like the Base64 sentinel.
fn plain(value: &[u8]) -> bool {
    let visible = |b: &u8| matches!(b, 0x21..=0x7e);
    let inner = |b: &u8| matches!(b, 0x20..=0x7e | b'\t');
    let sentinel = value.starts_with(b"=?base64?") && value.ends_with(b"?=");
    !value.is_empty()
        && value.first().is_some_and(visible)
        && value.last().is_some_and(visible)
        && value.iter().all(inner)
        && !sentinel
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `value` as it may go in a header: as it is, or `=?base64?…?=`.
pub(super) fn put_value(s: &mut dyn Sink, value: &[u8]) {
    if plain(value) {
        return s.put(value);
    }
    s.put(b"=?base64?");
    for chunk in value.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let mut out = [b'='; 4];
        for (i, o) in out.iter_mut().enumerate().take(chunk.len() + 1) {
            *o = B64[((n >> (18 - 6 * i)) & 63) as usize];
        }
        s.put(&out);
    }
    s.put(b"?=");
}

/// Bytes [`put_value`] writes at most for a value of `len` bytes.
pub(super) const fn value_bound(len: usize) -> usize {
    11 + len.div_ceil(3) * 4
}

/// One header line.
pub(super) fn put_header(s: &mut dyn Sink, name: &[u8], value: &[u8]) {
    s.put(name);
    s.put(b": ");
    s.put(value);
    s.put(b"\r\n");
}

/// The headers every POST carries.
pub(super) fn put_common(s: &mut dyn Sink, version: Option<&str>) {
    put_header(s, b"Content-Type", b"application/json");
    put_header(s, b"Accept", b"application/json, text/event-stream");
    if let Some(v) = version {
        put_header(s, b"MCP-Protocol-Version", v.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(v: &[u8]) -> heapless::String<128> {
        let mut out = [0u8; 128];
        let n = crate::sink::write_counted(&mut out, |s| put_value(s, v)).unwrap();
        let mut text = heapless::String::new();
        text.push_str(core::str::from_utf8(&out[..n]).unwrap())
            .unwrap();
        text
    }

    #[test]
    fn values_plain_or_base64_as_the_revision_shows() {
        // The examples of 2026-07-28's "Value Encoding" table.
        assert_eq!(value(b"us-west1"), "us-west1");
        assert_eq!(
            value("Hello, 世界".as_bytes()),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(value(b" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(value(b"line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            value(b"=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(value(b"a b\tc"), "a b\tc");
        assert_eq!(value(b""), "=?base64??=");
        for len in 0..40 {
            let v = [0xffu8; 40];
            assert!(value(&v[..len]).len() <= value_bound(len));
        }
    }
}
