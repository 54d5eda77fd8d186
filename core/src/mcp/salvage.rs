//! What can be read of a line the client cannot hold or validate: whether it is a response
//! and, when it is, the integer id that says which call it answers.
//!
//! A response longer than the line buffer, or nested past the depth limit, still answers
//! a call: that call must fail now, not wait for its timeout. The scan runs over the
//! bytes as they stream past, one at a time, keeping a few bytes of state, and looks only
//! at the members of the top-level object.

/// Where the scan is within the top-level object.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum At {
    /// Before the object.
    Start,
    /// Where a member name may start.
    Key,
    /// Inside a member name.
    InKey,
    /// After a member name, before its colon.
    Colon,
    /// Inside a member's value.
    Value,
    /// After the object.
    Done,
}

/// The streaming scan of one line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Salvage {
    at: At,
    /// Nesting inside the current member's value (0: at its top).
    depth: u32,
    in_str: bool,
    escaped: bool,
    /// The member name so far (long names only need to be told apart from these two).
    key: [u8; 6],
    key_len: u8,
    /// The value being read is the `id`'s.
    in_id: bool,
    /// Digits of that value so far; `None` once it is anything but a non-negative integer.
    digits: Option<u64>,
    /// At least one digit was read.
    any_digit: bool,
    /// The id, once its value ended.
    id: Option<u64>,
    /// The line has a top-level `method` (a request or notification, not a response).
    method: bool,
}

impl Salvage {
    /// A scan before the line's first byte.
    pub(crate) const fn new() -> Self {
        Self {
            at: At::Start,
            depth: 0,
            in_str: false,
            escaped: false,
            key: [0; 6],
            key_len: 0,
            in_id: false,
            digits: Some(0),
            any_digit: false,
            id: None,
            method: false,
        }
    }

    /// Reads the next bytes of the line.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    /// The id of the call this line answers, when it looks like a response with one.
    pub(crate) fn response_id(&self) -> Option<u64> {
        if self.method {
            return None;
        }
        self.id
    }

    fn byte(&mut self, b: u8) {
        if self.in_str {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => {
                    self.in_str = false;
                    if self.at == At::InKey {
                        self.at = At::Colon;
                    }
                    return;
                }
                _ => {}
            }
            match self.at {
                At::InKey if (self.key_len as usize) < self.key.len() => {
                    self.key[self.key_len as usize] = b;
                    self.key_len += 1;
                }
                // A name longer than any we look for, or with an escape, is neither.
                At::InKey => self.key_len = u8::MAX,
                // A string id is not one of ours.
                At::Value if self.depth == 0 && self.in_id => self.digits = None,
                _ => {}
            }
            return;
        }
        match (self.at, b) {
            (_, b' ' | b'\t' | b'\r' | b'\n') => {}
            (At::Start, b'{') => self.at = At::Key,
            (At::Key, b'"') => {
                self.in_str = true;
                self.at = At::InKey;
                self.key_len = 0;
            }
            (At::Colon, b':') => {
                let key = self.key.get(..self.key_len as usize).unwrap_or(b"-");
                self.in_id = key == b"id";
                if key == b"method" {
                    self.method = true;
                }
                self.digits = Some(0);
                self.any_digit = false;
                self.depth = 0;
                self.at = At::Value;
            }
            (At::Value, b'"') => self.in_str = true,
            (At::Value, b'{' | b'[') => {
                self.depth = self.depth.saturating_add(1);
                if self.in_id {
                    self.digits = None;
                }
            }
            (At::Value, b'}' | b']') if self.depth > 0 => self.depth -= 1,
            (At::Value, b',') if self.depth == 0 => {
                self.end_value();
                self.at = At::Key;
            }
            (At::Value, b'}') => {
                self.end_value();
                self.at = At::Done;
            }
            (At::Value, d @ b'0'..=b'9') if self.depth == 0 && self.in_id => {
                self.any_digit = true;
                self.digits = self
                    .digits
                    .and_then(|n| n.checked_mul(10))
                    .and_then(|n| n.checked_add(u64::from(d - b'0')));
            }
            (At::Value, _) if self.depth == 0 && self.in_id => self.digits = None,
            (At::Value, _) => {}
            // Anything else is not the JSON object this scan reads: it stops looking.
            _ => self.at = At::Done,
        }
    }

    /// A top-level value ended: an `id` that was a plain integer is the id (the last wins,
    /// as in the parsers the servers are written with).
    fn end_value(&mut self) {
        if self.in_id {
            self.id = self.digits.filter(|_| self.any_digit);
            self.in_id = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(line: &[u8]) -> Option<u64> {
        let mut s = Salvage::new();
        s.feed(line);
        s.response_id()
    }

    #[test]
    fn finds_the_id_of_a_response_wherever_it_is() {
        assert_eq!(
            scan(br#"{"jsonrpc":"2.0","id":7,"result":{"a":[1,{"id":9}]}}"#),
            Some(7)
        );
        assert_eq!(
            scan(br#"{"result":{"id":9,"x":"\"id\":3"},"id":12,"jsonrpc":"2.0"}"#),
            Some(12)
        );
        assert_eq!(scan(b" { \"id\" : 42 , \"error\": {} } "), Some(42));
        // Cut off after the id: still found.
        assert_eq!(
            scan(br#"{"id":5,"result":{"content":[{"type":"text","text":"aaaa"#),
            Some(5)
        );
        // The last id wins.
        assert_eq!(scan(br#"{"id":1,"id":2,"result":{}}"#), Some(2));
    }

    #[test]
    fn requests_strings_and_odd_ids_are_not_ours() {
        assert_eq!(scan(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#), None);
        assert_eq!(scan(br#"{"method":"x","id":3}"#), None);
        assert_eq!(scan(br#"{"id":"3","result":{}}"#), None);
        assert_eq!(scan(br#"{"id":-3,"result":{}}"#), None);
        assert_eq!(scan(br#"{"id":3.0,"result":{}}"#), None);
        assert_eq!(scan(br#"{"id":[3],"result":{}}"#), None);
        assert_eq!(scan(br#"{"id":99999999999999999999,"result":{}}"#), None);
        assert_eq!(scan(br#"{"id":,"result":{}}"#), None);
        assert_eq!(scan(br#"{"ids":3,"result":{}}"#), None);
        assert_eq!(scan(br#"{"i\u0064":3}"#), None);
        assert_eq!(scan(b"[1,2]"), None);
        assert_eq!(scan(b""), None);
        // Still reading the id's value when the bytes stop: not an id yet.
        assert_eq!(scan(br#"{"id":12"#), None);
    }

    #[test]
    fn any_bytes_end_without_panic() {
        let mut s = Salvage::new();
        for b in 0..=255u8 {
            s.feed(&[b, b'{', b'"', b'\\', b'}', b':']);
        }
        let _ = s.response_id();
    }
}
