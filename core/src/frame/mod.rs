//! Zero-copy views of one frame: its kind and typed accessors per kind.
//!
//! A frame is a JSON object with a string member `type`. [`Frame::parse`]
//! reads only as far as `type` (O(1) in the frame's size when `type` comes
//! first, as it usually does); [`Frame::parse_validated`] checks the whole
//! frame first, for frames the adapter acts on. Accessors never copy: they hand
//! back [`JsonStr`] views and raw value spans of the caller's bytes.

use crate::json::{self, JsonError, JsonStr, Members, DEFAULT_MAX_DEPTH};

mod error;
mod fields;
pub(crate) mod splitter;
pub(crate) mod write;

pub use error::FrameError;
use fields::{Fields, Need, ARGS, CONTENT, ERROR, ID, NAME, RESULT, SHARED};
pub use splitter::{LineSplitter, LineTooLong};

/// The frame's `type`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FrameKind<'a> {
    /// `TEXT`
    Text,
    /// `TOOL_CALL`
    ToolCall,
    /// `TOOL_RESULT`
    ToolResult,
    /// `ERROR`
    Error,
    /// `END`
    End,
    /// Any other type string, passed through untouched.
    Other(JsonStr<'a>),
}

impl<'a> FrameKind<'a> {
    /// Maps a `type` string to its kind (names compare as decoded text).
    pub fn from_type(ty: JsonStr<'a>) -> Self {
        // Almost every type is written without escapes: its raw bytes are its name, and the
        // types a stream carries most (`TEXT` and `REASONING` deltas) then cost a length test
        // and a comparison. Only an escaped type is decoded (the longest name fits 11 bytes;
        // a longer text is none of them).
        if let Some(kind) = Self::known(ty.raw()) {
            return kind;
        }
        // Equivalent mutant: the plain test -> `true`: a plain type decodes to its raw bytes,
        // which were just looked up.
        if !ty.is_plain() {
            let mut buf = [0u8; 11];
            if let Some(kind) = ty
                .decode_into(&mut buf)
                .ok()
                .and_then(|t| Self::known(t.as_bytes()))
            {
                return kind;
            }
        }
        FrameKind::Other(ty)
    }

    /// The kind a known name stands for.
    #[inline]
    fn known(name: &[u8]) -> Option<FrameKind<'static>> {
        match name {
            b"TEXT" => Some(FrameKind::Text),
            b"TOOL_CALL" => Some(FrameKind::ToolCall),
            b"TOOL_RESULT" => Some(FrameKind::ToolResult),
            b"ERROR" => Some(FrameKind::Error),
            b"END" => Some(FrameKind::End),
            _ => None,
        }
    }
}

/// A view of one frame over the caller's bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Frame<'a> {
    bytes: &'a [u8],
    kind: FrameKind<'a>,
    validated: bool,
    max_depth: u8,
    /// The `content` member and, when it is an object, the members the accessors read,
    /// found while validating (unvalidated frames look them up on demand).
    content: Option<&'a [u8]>,
    /// `Some` once validated (an option keeps a lazily read frame cheap to build).
    fields: Option<Fields<'a>>,
    /// Validated with no white space between its tokens: every raw value in it is already
    /// in the compact form frames carry, so it is copied rather than compacted.
    compact: bool,
}

/// Depth allowed while skipping members before `type` in an unvalidated frame.
const LAZY_DEPTH: u8 = u8::MAX;

impl<'a> Frame<'a> {
    /// Reads the frame's kind, checking the bytes only as far as the `type` member.
    ///
    /// The first `type` counts: looking for a second would cost a scan of the whole frame.
    /// [`parse_validated`](Self::parse_validated) refuses a frame with two.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, FrameError> {
        // The canonical form starts `{"type":"`: the type string is read straight away. (Any
        // error is left to the general path below, which finds the same one.)
        const CANONICAL: &[u8] = br#"{"type":""#;
        if bytes.starts_with(CANONICAL) {
            if let Ok((ty, _)) = JsonStr::parse_at(bytes, CANONICAL.len() - 1) {
                return Ok(Self::lazy(bytes, FrameKind::from_type(ty)));
            }
        }
        let members = open_object(bytes, LAZY_DEPTH)?;
        for m in members {
            let m = m?;
            if m.key.eq_text(b"type") {
                return Ok(Self::lazy(bytes, kind_of(m.value)?));
            }
        }
        Err(FrameError::MissingType)
    }

    /// A frame read as far as its type.
    fn lazy(bytes: &'a [u8], kind: FrameKind<'a>) -> Self {
        Self {
            bytes,
            kind,
            validated: false,
            max_depth: LAZY_DEPTH,
            content: None,
            fields: None,
            compact: false,
        }
    }

    /// Validates the whole frame (JSON, UTF-8, depth ≤ `max_depth`, frame object = level 1), then reads its kind.
    pub fn parse_validated(bytes: &'a [u8], max_depth: u8) -> Result<Self, FrameError> {
        if let Some(frame) = Self::parse_canonical(bytes, max_depth) {
            return Ok(frame);
        }
        Self::parse_general(bytes, max_depth)
    }

    /// The canonical frame, `{"type":"…","content":{…}}` with no white space between the
    /// members of the frame and of its `content`, read in one straight pass.
    ///
    /// `None` for any other shape and for any error: the general path then reads the frame
    /// and reports the error, so both paths give the same answer for every input (the
    /// test `canonical_and_general_paths_agree` checks this on every mutation of its seeds).
    fn parse_canonical(bytes: &'a [u8], max_depth: u8) -> Option<Self> {
        const HEAD: &[u8] = br#"{"type":""#;
        const CONTENT: &[u8] = br#","content":"#;
        if !bytes.starts_with(HEAD) || max_depth < 2 {
            return None;
        }
        let (ty, ty_end) = JsonStr::parse_at(bytes, HEAD.len() - 1).ok()?;
        let start = ty_end + CONTENT.len();
        if bytes.get(ty_end..start)? != CONTENT {
            return None;
        }
        let kind = FrameKind::from_type(ty);
        let mut fields = Fields {
            is_object: true,
            for_call: matches!(kind, FrameKind::ToolCall),
            ..Fields::default()
        };
        let mut spaced = false;
        let end = json::compact_members(bytes, start, max_depth - 1, &mut spaced, &mut |m| {
            fields.record(m)
        })?;
        if bytes.get(end) != Some(&b'}') || json::skip_ws(bytes, end + 1) != bytes.len() {
            return None;
        }
        Some(Self {
            bytes,
            kind,
            validated: true,
            max_depth,
            content: Some(&bytes[start..end]),
            fields: Some(fields),
            compact: !spaced,
        })
    }

    /// Any frame: its members one by one, white space allowed, errors reported.
    ///
    /// An object `content` is read a second time for the accessors' fields: only frames
    /// off the canonical path pay for that, and this path stays small.
    fn parse_general(bytes: &'a [u8], max_depth: u8) -> Result<Self, FrameError> {
        let mut members = open_object(bytes, max_depth)?;
        let (mut ty, mut content) = (None, None);
        for m in members.by_ref() {
            let m = m?;
            if m.key.eq_text(b"type") {
                if ty.is_some() {
                    return Err(FrameError::DuplicateType);
                }
                ty = Some(m.value);
            } else if m.key.eq_text(b"content") {
                content = Some(m.value);
            }
        }
        let end = members.end().unwrap_or(bytes.len());
        let after = json::skip_ws(bytes, end);
        if after != bytes.len() {
            return Err(FrameError::Json(JsonError {
                kind: json::JsonErrorKind::TrailingData,
                at: after,
            }));
        }
        let kind = kind_of(ty.ok_or(FrameError::MissingType)?)?;
        Ok(Self {
            bytes,
            kind,
            validated: true,
            max_depth,
            content,
            fields: Some(Fields::read(
                content,
                max_depth,
                matches!(kind, FrameKind::ToolCall),
            )?),
            compact: !members.spaced(),
        })
    }

    /// Like [`Frame::parse_validated`] with the default depth limit of 32.
    pub fn parse_validated_default(bytes: &'a [u8]) -> Result<Self, FrameError> {
        Self::parse_validated(bytes, DEFAULT_MAX_DEPTH)
    }

    /// The frame's kind.
    pub fn kind(&self) -> FrameKind<'a> {
        self.kind
    }

    /// The bytes the frame was read from.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The frame's bytes without surrounding white space.
    pub fn trimmed(&self) -> &'a [u8] {
        json::trim_ws(self.bytes)
    }

    /// True when the whole frame was validated.
    pub fn is_validated(&self) -> bool {
        self.validated
    }

    /// True when the frame was validated and has no white space between its tokens, so
    /// its raw values need no compacting.
    pub(crate) fn is_compact(&self) -> bool {
        self.compact
    }

    /// The raw value of the last top-level member named `key`, if any.
    pub fn member(&self, key: &[u8]) -> Result<Option<&'a [u8]>, FrameError> {
        Ok(json::find_member(self.bytes, key, self.max_depth)?)
    }

    /// The raw `content` value, if any.
    pub fn content(&self) -> Result<Option<&'a [u8]>, FrameError> {
        if self.validated {
            return Ok(self.content);
        }
        self.member(b"content")
    }

    /// The members of an object `content` that the typed accessors read: a validated
    /// frame's own, or read now for a lazy frame or for another kind's shared member.
    #[inline]
    fn fields(&self, need: Need) -> Result<Fields<'a>, FrameError> {
        match self.fields {
            Some(fields) if need.met_by(&fields) => Ok(fields),
            _ => self.read_fields(need),
        }
    }

    /// The fields read now: a lazy frame's, or a validated frame's for another kind's shared
    /// member (rare, and kept out of line).
    #[cold]
    #[inline(never)]
    fn read_fields(&self, need: Need) -> Result<Fields<'a>, FrameError> {
        let for_call = match need {
            Need::Shared { for_call } => for_call,
            Need::Any => matches!(self.kind, FrameKind::ToolCall),
        };
        Fields::read(self.content()?, self.max_depth, for_call)
    }

    /// The `TOOL_CALL` fields (call it on any kind; fields follow SPEC §7.1–7.3).
    pub fn tool_call(&self) -> Result<ToolCall<'a>, FrameError> {
        let f = self.fields(Need::Shared { for_call: true })?;
        Ok(ToolCall {
            id: f.values[ID].and_then(scanned_string),
            name: f.values[NAME].and_then(scanned_string),
            args: f.values[ARGS].unwrap_or(b"{}"),
            args_error: f.values[SHARED].and_then(scanned_string),
            content_is_object: f.is_object,
        })
    }

    /// The `TOOL_RESULT` fields.
    pub fn tool_result(&self) -> Result<ToolResult<'a>, FrameError> {
        let f = self.fields(Need::Any)?;
        Ok(ToolResult {
            id: f.values[ID].and_then(scanned_string),
            name: f.values[NAME].and_then(scanned_string),
            result: f.values[RESULT],
            content: f.values[CONTENT],
            error: f.values[ERROR],
        })
    }

    /// The `ERROR` message, when `content.message` is a string.
    pub fn error_message(&self) -> Result<Option<JsonStr<'a>>, FrameError> {
        Ok(self.fields(Need::Shared { for_call: false })?.values[SHARED].and_then(scanned_string))
    }
}

fn open_object(bytes: &[u8], max_depth: u8) -> Result<Members<'_>, FrameError> {
    let start = json::skip_ws(bytes, 0);
    if bytes.get(start) != Some(&b'{') {
        return Err(FrameError::NotAnObject);
    }
    Ok(Members::new(bytes, start, max_depth)?)
}

fn kind_of(value: &[u8]) -> Result<FrameKind<'_>, FrameError> {
    if value.first() != Some(&b'"') {
        return Err(FrameError::TypeNotString);
    }
    // `value` is a member value, so the scanner has validated the whole token.
    Ok(FrameKind::from_type(JsonStr::from_scanned(value)))
}

/// [`as_string`] for a member value the scanner has validated: no second scan.
pub(crate) fn scanned_string(value: &[u8]) -> Option<JsonStr<'_>> {
    (value.first() == Some(&b'"')).then(|| JsonStr::from_scanned(value))
}

/// A raw value that is a (validated) string token, as a view.
pub(crate) fn as_string(value: &[u8]) -> Option<JsonStr<'_>> {
    if value.first() == Some(&b'"') {
        JsonStr::from_token(value).ok()
    } else {
        None
    }
}

/// The fields of a `TOOL_CALL` frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ToolCall<'a> {
    /// `content.id` when it is a string (any other value counts as no id).
    pub id: Option<JsonStr<'a>>,
    /// `content.name` when it is a string; `None` makes the call malformed.
    pub name: Option<JsonStr<'a>>,
    /// `content.args` as written, or `{}` when absent or when `content` is not an object.
    pub args: &'a [u8],
    /// `content.args_error` when it is a string: the call is answered with it, not run
    /// (SPEC §5, arguments the model got wrong).
    pub args_error: Option<JsonStr<'a>>,
    /// Whether `content` is a JSON object.
    pub content_is_object: bool,
}

/// The fields of a `TOOL_RESULT` frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ToolResult<'a> {
    /// `content.id` when it is a string.
    pub id: Option<JsonStr<'a>>,
    /// `content.name` when it is a string.
    pub name: Option<JsonStr<'a>>,
    /// `content.result` as written, when present.
    pub result: Option<&'a [u8]>,
    /// `content.content` as written, when present.
    pub content: Option<&'a [u8]>,
    /// `content.error` as written, when present.
    pub error: Option<&'a [u8]>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::edits::Edit;

    /// Wherever the canonical path answers, the general one answers the same, for frames
    /// it reads and for every one-byte change, insertion, deletion and cut of them, at
    /// depth limits around the frames' own depth.
    #[test]
    fn canonical_and_general_paths_agree() {
        let seeds: [&[u8]; 8] = [
            br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"get_weather","args":{"city":"Paris","days":[1,2.5e3,-0],"x":{"y":null}}}}"#,
            br#"{"type":"TOOL_CALL","content":{"name":"n\u00e9","id":"a\"b","args":{},"name":"second","args":[true,false]}}"#,
            br#"{"type":"TEXT","content":{"text":"hello \u2603 world"}}"#,
            br#"{"type":"END","content":{}}"#,
            br#"{"type":"ERROR","content":{"message":"bad","error":{"code":1}}}"#,
            br#"{"type":"TOOL_RESULT","content":{"id":"i","result":{"a":[1,{"b":"c"}]},"content":"x"}}"#,
            br#"{"type":"T\u0045XT","content":{"id":12,"name":null}}"#,
            "{\"type\":\"TOOL_CALL\",\"content\":{\"\\u0069d\":\"é\",\"args\":{\"k\":[[[]]]}}} \n".as_bytes(),
        ];
        let mut checked = 0usize;
        let mut agree = |bytes: &[u8], depths: &[u8]| {
            for &depth in depths {
                if let Some(fast) = Frame::parse_canonical(bytes, depth) {
                    assert_eq!(
                        Frame::parse_general(bytes, depth),
                        Ok(fast),
                        "{:?} at depth {depth}",
                        core::str::from_utf8(bytes)
                    );
                    checked += 1;
                }
            }
        };
        const BYTES: [u8; 16] = *b" \"\\{}[],:0e-tu\x01\xc3";
        // Depth 2 (the frame and its `content`) is enough for a flat content.
        let flat = br#"{"type":"TOOL_CALL","content":{"id":"c","name":"n","args":null}}"#;
        assert!(Frame::parse_canonical(flat, 2).is_some());
        assert!(Frame::parse_canonical(flat, 1).is_none());
        // Under miri, a thousand times slower, half the seeds.
        for &seed in &seeds[..if cfg!(miri) { 4 } else { seeds.len() }] {
            // Every seed is canonical: the fast path must be the one taken.
            assert!(Frame::parse_canonical(seed, 32).is_some(), "{seed:?}");
            agree(seed, &[0, 1, 2, 3, 4, 5, 32, 255]);
            json::edits::each(seed, &BYTES, |bytes, edit| match edit {
                Edit::Cut | Edit::Delete => agree(bytes, &[32]),
                Edit::Change | Edit::Insert => agree(bytes, &[3, 32]),
            });
        }
        // The mutations keep the fast path busy, not only the seeds.
        assert!(checked > if cfg!(miri) { 20 } else { 1000 }, "{checked}");
    }

    #[test]
    fn kinds_and_errors() {
        assert_eq!(
            Frame::parse(b"{\"type\":\"TEXT\",\"content\":\"x\"}")
                .unwrap()
                .kind(),
            FrameKind::Text
        );
        assert_eq!(
            Frame::parse(b" {\"a\":[1],\"type\":\"END\"}")
                .unwrap()
                .kind(),
            FrameKind::End
        );
        assert_eq!(
            Frame::parse(b"{\"type\":\"\\u0045ND\"}").unwrap().kind(),
            FrameKind::End
        );
        assert_eq!(Frame::parse(b"[1]"), Err(FrameError::NotAnObject));
        assert_eq!(Frame::parse(b""), Err(FrameError::NotAnObject));
        assert_eq!(
            Frame::parse(b"{\"content\":1}"),
            Err(FrameError::MissingType)
        );
        assert_eq!(
            Frame::parse(b"{\"type\":7}"),
            Err(FrameError::TypeNotString)
        );
        assert!(matches!(
            Frame::parse_validated(b"{\"type\":\"END\",}", 32),
            Err(FrameError::Json(_))
        ));
        assert!(matches!(
            Frame::parse(b"\xef\xbb\xbf{\"type\":\"END\"}"),
            Err(FrameError::NotAnObject)
        ));
    }

    /// A type names a kind as decoded text, plain or escaped; a name of a known length that
    /// differs, one past the longest, or one that decodes longer, is another kind with its
    /// text as written.
    #[test]
    fn types_name_kinds_as_decoded_text() {
        let kind = |raw: &'static str| FrameKind::from_type(JsonStr::from_inner(raw.as_bytes()));
        for (raw, want) in [
            ("TEXT", FrameKind::Text),
            ("TOOL_CALL", FrameKind::ToolCall),
            ("TOOL_RESULT", FrameKind::ToolResult),
            ("ERROR", FrameKind::Error),
            ("END", FrameKind::End),
            (r"T\u0045XT", FrameKind::Text),
            (r"\u0054OOL_CALL", FrameKind::ToolCall),
            (r"TOOL_RESUL\u0054", FrameKind::ToolResult),
            (r"\u0045\u0052\u0052\u004f\u0052", FrameKind::Error),
            (r"EN\u0044", FrameKind::End),
        ] {
            assert_eq!(kind(raw), want, "{raw}");
        }
        for raw in [
            "REASONING",
            "TOOL_CALLS",
            "TOOL_CALl",
            "TEXTS",
            "",
            "text",
            r"TEXT\n",
            r"TOOL_RESULT\u0020",
            r"\u0052EASONING",
            r"TOOL_\/CALL",
        ] {
            match kind(raw) {
                FrameKind::Other(t) => assert_eq!(t.raw(), raw.as_bytes()),
                other => panic!("{raw}: {other:?}"),
            }
        }
    }

    /// The canonical fast path reads the type from its opening quote: a one-byte or empty
    /// type followed by another member is that type, not the quote-comma-quote after it.
    // kills: frame.rs `Frame::parse`'s `CANONICAL.len() - 1` → `+ 1`, `/ 1`
    #[test]
    fn a_short_type_before_another_member_is_read_whole() {
        for (bytes, ty) in [
            (&b"{\"type\":\"X\",\"a\":1}"[..], &b"X"[..]),
            (b"{\"type\":\"\",\"a\":1}", b""),
            (b"{\"type\":\"END\",\"a\":1}", b"END"),
        ] {
            let kind = Frame::parse(bytes).unwrap().kind();
            match kind {
                FrameKind::Other(t) => assert_eq!(t.raw(), ty),
                FrameKind::End => assert_eq!(ty, b"END"),
                other => panic!("{other:?}"),
            }
        }
    }

    /// A frame is compact when no white space sits between its tokens, wherever it is (space
    /// inside strings and around the frame does not count); a lazily read frame never is.
    #[test]
    fn frames_know_when_they_are_compact() {
        let cases: [(&[u8], bool); 8] = [
            (
                b"{\"type\":\"TOOL_CALL\",\"content\":{\"name\":\"a b\",\"args\":{\"x\":[1,2]}}}",
                true,
            ),
            (b" {\"type\":\"END\"}\n", true),
            (b"{ \"type\":\"END\"}", false),
            (b"{\"type\" :\"END\"}", false),
            (
                b"{\"type\":\"TOOL_CALL\",\"content\":{\"args\":{\"x\":[1, 2]}}}",
                false,
            ),
            (
                b"{\"type\":\"TOOL_CALL\",\"content\":{\"args\":{\"x\":[1,2] }}}",
                false,
            ),
            (
                b"{\"type\":\"TOOL_CALL\",\"content\":{\"args\":{},\"name\":\"n\"} }",
                false,
            ),
            (b"{\"type\":\"TEXT\",\"content\":[1,\t2]}", false),
        ];
        for (bytes, compact) in cases {
            let f = Frame::parse_validated(bytes, 32).unwrap();
            assert_eq!(f.is_compact(), compact, "{:?}", core::str::from_utf8(bytes));
            assert!(!Frame::parse(bytes).unwrap().is_compact());
        }
    }

    #[test]
    fn tool_call_fields() {
        let f = Frame::parse_validated(b"{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"calc\",\"args\":{\"a\":1.50}}}", 32).unwrap();
        let c = f.tool_call().unwrap();
        assert_eq!(c.id.unwrap().raw(), b"c1");
        assert_eq!(c.name.unwrap().raw(), b"calc");
        assert_eq!(c.args, b"{\"a\":1.50}");
        let f = Frame::parse_validated(
            b"{\"type\":\"TOOL_CALL\",\"content\":{\"id\":5,\"name\":42}}",
            32,
        )
        .unwrap();
        let c = f.tool_call().unwrap();
        assert_eq!((c.id, c.name, c.args), (None, None, &b"{}"[..]));
    }
}
