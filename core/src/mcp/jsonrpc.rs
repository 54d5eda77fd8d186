//! One JSON-RPC 2.0 message, read from a line the client has validated: a response, a
//! request or a notification, with its parts as spans of the line.

use crate::json::valid::{get, pick, string};
use crate::json::JsonStr;

/// What a response carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome<'l> {
    /// `result`.
    Result(&'l [u8]),
    /// `error`.
    Error(&'l [u8]),
    /// Neither (not a response the JSON-RPC specification allows, but it names a call).
    Neither,
}

/// A JSON-RPC message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Message<'l> {
    /// A response; `id` is `None` unless it is an integer the client could have issued.
    Response {
        id: Option<u64>,
        outcome: Outcome<'l>,
    },
    /// A request from the server, its id as written (a string or a number).
    Request { id: &'l [u8], method: JsonStr<'l> },
    /// A notification.
    Notification {
        method: JsonStr<'l>,
        params: Option<&'l [u8]>,
    },
}

/// Reads a validated line; `None` when it is not a JSON-RPC 2.0 message.
pub(crate) fn read(line: &[u8]) -> Option<Message<'_>> {
    let [version, id, method, params, result, error] = pick(
        line,
        [b"jsonrpc", b"id", b"method", b"params", b"result", b"error"],
    );
    if !string(version?)?.eq_text(b"2.0") {
        return None;
    }
    match (method, id) {
        (Some(m), id) => {
            let method = string(m)?;
            match id {
                None => Some(Message::Notification { method, params }),
                Some(id) if matches!(id.first(), Some(b'"' | b'-' | b'0'..=b'9')) => {
                    Some(Message::Request { id, method })
                }
                // A null, boolean or structured id is no request id.
                Some(_) => None,
            }
        }
        (None, Some(id)) => Some(Message::Response {
            id: integer_id(id),
            outcome: match (error, result) {
                (Some(e), _) => Outcome::Error(e),
                (None, Some(r)) => Outcome::Result(r),
                (None, None) => Outcome::Neither,
            },
        }),
        (None, None) => None,
    }
}

/// A non-negative integer written without fraction or exponent, as the client writes ids.
pub(crate) fn integer_id(raw: &[u8]) -> Option<u64> {
    if raw.is_empty() || raw.len() > 20 || (raw.len() > 1 && raw[0] == b'0') {
        return None;
    }
    raw.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit()
            .then_some(())
            .and(n.checked_mul(10))
            .and_then(|n| n.checked_add(u64::from(d - b'0')))
    })
}

/// The integer `progressToken` of a progress notification's params.
pub(crate) fn progress_token(params: &[u8]) -> Option<u64> {
    integer_id(get(params, b"progressToken")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_responses_requests_and_notifications() {
        let r = read(br#"{"result":{"a":1},"id":3,"jsonrpc":"2.0"}"#).unwrap();
        assert_eq!(
            r,
            Message::Response {
                id: Some(3),
                outcome: Outcome::Result(br#"{"a":1}"#)
            }
        );
        let e = read(br#"{"jsonrpc":"2.0","id":4,"error":{"code":-1},"result":{}}"#).unwrap();
        assert_eq!(
            e,
            Message::Response {
                id: Some(4),
                outcome: Outcome::Error(br#"{"code":-1}"#)
            }
        );
        let n = read(br#"{"jsonrpc":"2.0","id":"x"}"#).unwrap();
        assert_eq!(
            n,
            Message::Response {
                id: None,
                outcome: Outcome::Neither
            }
        );
        let Some(Message::Request { id, method }) =
            read(br#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#)
        else {
            panic!()
        };
        assert_eq!((id, method.raw()), (&br#""s1""#[..], &b"ping"[..]));
        let Some(Message::Notification { method, params }) = read(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7}}"#,
        ) else {
            panic!()
        };
        assert!(method.eq_text(b"notifications/progress"));
        assert_eq!(progress_token(params.unwrap()), Some(7));
    }

    #[test]
    fn what_is_not_json_rpc_2() {
        for line in [
            &br#"{"id":1,"result":{}}"#[..],
            br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0"}"#,
            br#"{"jsonrpc":"2.0","method":5}"#,
            br#"{"jsonrpc":"2.0","method":"ping","id":null}"#,
            br#"{"jsonrpc":"2.0","method":"ping","id":{}}"#,
            b"[1]",
            b"\"2.0\"",
        ] {
            assert_eq!(read(line), None, "{}", core::str::from_utf8(line).unwrap());
        }
    }

    #[test]
    fn integer_ids_only() {
        assert_eq!(integer_id(b"0"), Some(0));
        assert_eq!(integer_id(b"18446744073709551615"), Some(u64::MAX));
        for raw in [
            &b"18446744073709551616"[..],
            b"01",
            b"-1",
            b"1.0",
            b"1e2",
            b"\"1\"",
            b"",
        ] {
            assert_eq!(integer_id(raw), None);
        }
    }
}
