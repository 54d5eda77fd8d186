//! The texts of the errors the adapter itself reports (SPEC §2, §3, §5).

use crate::sink::{put_u64, Prefix, Sink};

/// Where a cancel's reason starts in its message, past `Tool `, the name and ` cancelled: `.
pub(crate) const CANCELLED_AT: usize = "Tool ".len() + " cancelled: ".len();

/// `Malformed TOOL_CALL: content.name must be a string`
pub const MALFORMED_TOOL_CALL: &str = "Malformed TOOL_CALL: content.name must be a string";

/// An error message, by its parts (text parts are decoded UTF-8).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Message<'a> {
    /// `Tool <name> failed`
    Failed(&'a [u8]),
    /// `Tool <name> timed out after <ms>ms`
    TimedOut(&'a [u8], u32),
    /// `Tool <name> cancelled: <reason>`
    Cancelled(&'a [u8], &'a [u8]),
    /// `Tool "<name>" not found`
    NotFound(&'a [u8]),
    /// `Duplicate tool call id "<id>"`
    Duplicate(&'a [u8]),
    /// `Too many pending tool calls (max <N>)`
    TooMany(usize),
    /// The malformed-call message.
    Malformed,
    /// `Tool <name> returned invalid JSON` (a sync tool's output).
    InvalidJson(&'a [u8]),
    /// `Tool <name> result exceeds <N> bytes` (SPEC §7.23).
    ResultTooLarge(&'a [u8], usize),
    /// `Tool <name> args exceed <N> bytes` (SPEC §7.23).
    ArgsTooLarge(&'a [u8], usize),
    /// `Tool <name> result is nested deeper than <N> levels` (SPEC §7.23).
    ResultTooDeep(&'a [u8], u8),
}

impl Message<'_> {
    pub(crate) fn write_to<S: Sink + ?Sized>(&self, s: &mut S) {
        match *self {
            Message::Failed(name) => tool_text(s, name, b" failed", None, b""),
            Message::TimedOut(name, ms) => {
                tool_text(s, name, b" timed out after ", Some(ms as u64), b"ms")
            }
            Message::Cancelled(name, reason) => tool_text(s, name, b" cancelled: ", None, reason),
            Message::NotFound(name) => {
                s.put(b"Tool \"");
                s.put(name);
                s.put(b"\" not found");
            }
            Message::Duplicate(id) => {
                s.put(b"Duplicate tool call id \"");
                s.put(id);
                s.put(b"\"");
            }
            Message::TooMany(max) => {
                s.put(b"Too many pending tool calls (max ");
                put_u64(s, max as u64);
                s.put(b")");
            }
            Message::Malformed => s.put(MALFORMED_TOOL_CALL.as_bytes()),
            Message::InvalidJson(name) => tool_text(s, name, b" returned invalid JSON", None, b""),
            Message::ResultTooLarge(name, cap) => {
                tool_text(s, name, b" result exceeds ", Some(cap as u64), b" bytes")
            }
            Message::ArgsTooLarge(name, cap) => {
                tool_text(s, name, b" args exceed ", Some(cap as u64), b" bytes")
            }
            Message::ResultTooDeep(name, depth) => tool_text(
                s,
                name,
                b" result is nested deeper than ",
                Some(depth as u64),
                b" levels",
            ),
        }
    }

    /// Decoded length in bytes.
    pub(crate) fn len(&self) -> usize {
        let mut c = crate::sink::Counter(0);
        self.write_to(&mut c);
        c.0
    }

    /// Writes the text into `buf`, as much of it as fits (the wrapper's own texts fit:
    /// `WrapperConfig::check` sizes `message_cap` for them; a character cut in two at the end is
    /// dropped by the caller's UTF-8 check).
    pub(crate) fn compose<'b>(&self, buf: &'b mut [u8]) -> &'b [u8] {
        let mut w = Prefix { buf, pos: 0 };
        self.write_to(&mut w);
        let written = w.pos;
        &buf[..written]
    }
}

/// `Tool <name><middle>[<n>]<end>`: the shape of every message about one tool.
fn tool_text<S: Sink + ?Sized>(s: &mut S, name: &[u8], middle: &[u8], n: Option<u64>, end: &[u8]) {
    s.put(b"Tool ");
    s.put(name);
    s.put(middle);
    if let Some(n) = n {
        put_u64(s, n);
    }
    s.put(end);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_keeps_what_fits() {
        let msg = Message::TimedOut(b"fetch", 300);
        let mut big = [0u8; 64];
        assert_eq!(msg.compose(&mut big), b"Tool fetch timed out after 300ms");
        assert_eq!(msg.len(), 32);
        // A buffer too short keeps the first bytes, piece by piece.
        let mut small = [0u8; 8];
        assert_eq!(msg.compose(&mut small), b"Tool fet");
        let mut tiny = [0u8; 3];
        assert_eq!(msg.compose(&mut tiny), b"Too");
    }
}
