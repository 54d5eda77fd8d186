//! Item encoders: the wrapper's `TOOL_CALL` and `TOOL_RESULT` frames in, the items a
//! provider expects in the host's next request out (SPEC §8, the encoding table), one
//! compact JSON item each, into the host's buffer.
//!
//! ```
//! use polyweave_tool_adapter::Provider;
//! use polyweave_tool_adapter::encode::encode_item;
//!
//! let result = br#"{"type":"TOOL_RESULT","content":{"id":"c1","name":"add","result":5}}"#;
//! let mut out = [0u8; 128];
//! let n = encode_item(Provider::OpenAiChat, result, &mut out).unwrap();
//! assert_eq!(&out[..n], br#"{"role":"tool","tool_call_id":"c1","content":"5"}"#);
//! let n = encode_item(Provider::Anthropic, result, &mut out).unwrap();
//! assert_eq!(&out[..n], br#"{"type":"tool_result","tool_use_id":"c1","content":"5"}"#);
//! ```

use crate::frame::{Frame, FrameError, FrameKind};
use crate::json::{self, JsonStr};
use crate::provider::Provider;
use crate::sink::{put_escaped, write_counted, Sink};

/// Why a frame could not be encoded as an item. Nothing was written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ItemError {
    /// The buffer is too small; the item needs this many bytes.
    BufferTooSmall {
        /// Bytes the item needs.
        needed: usize,
    },
    /// The bytes are not a valid frame.
    Malformed(FrameError),
    /// The frame is neither a `TOOL_CALL` nor a `TOOL_RESULT`.
    NotACallOrResult,
    /// The frame has no string `name`.
    NoName,
    /// The provider matches results to calls by id, and the frame has none.
    NoId,
    /// A `TOOL_RESULT` with neither `result` nor a string `error`.
    NoOutcome,
}

impl core::fmt::Display for ItemError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BufferTooSmall { needed } => write!(f, "item needs {needed} bytes"),
            Self::Malformed(e) => write!(f, "not a valid frame: {e}"),
            Self::NotACallOrResult => f.write_str("neither a TOOL_CALL nor a TOOL_RESULT"),
            Self::NoName => f.write_str("no string name"),
            Self::NoId => f.write_str("the provider needs the call's id, and it has none"),
            Self::NoOutcome => f.write_str("a TOOL_RESULT with neither result nor error"),
        }
    }
}

impl core::error::Error for ItemError {}

impl From<FrameError> for ItemError {
    fn from(e: FrameError) -> Self {
        Self::Malformed(e)
    }
}

/// Encodes a `TOOL_CALL` (for the assistant turn) or a `TOOL_RESULT` frame as the
/// provider's item, into `out`; returns its length.
pub fn encode_item(provider: Provider, frame: &[u8], out: &mut [u8]) -> Result<usize, ItemError> {
    let f = Frame::parse_validated(frame, json::DEFAULT_MAX_DEPTH)?;
    match f.kind() {
        FrameKind::ToolCall => {
            let c = f.tool_call()?;
            let name = c.name.ok_or(ItemError::NoName)?;
            let call = Item {
                id: c.id.filter(|id| !id.raw().is_empty()),
                name,
                body: Body::Call(Args::of(c.args, c.args_error.is_some())),
                stored: false,
                escaped: None,
            };
            call.write(templates(provider).0, out)
        }
        FrameKind::ToolResult => {
            let r = f.tool_result()?;
            let name = r.name.ok_or(ItemError::NoName)?;
            let outcome = match (r.result, r.error) {
                (Some(v), _) => Outcome::Result(v),
                (None, Some(e)) => Outcome::Error(e),
                (None, None) => return Err(ItemError::NoOutcome),
            };
            let result = Item {
                id: r.id.filter(|id| !id.raw().is_empty()),
                name,
                body: Body::Result(outcome),
                stored: false,
                escaped: None,
            };
            result.write(templates(provider).1, out)
        }
        _ => Err(ItemError::NotACallOrResult),
    }
}

/// Where a template puts an item's parts: a control byte (which no JSON text holds
/// unescaped), the variant's number.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Mark {
    /// The id, inside a JSON string's quotes (the template has them: fewer pieces).
    Id = 1,
    /// The name, inside quotes.
    Name,
    /// A call's args as a JSON string, inside quotes.
    ArgsText,
    /// A call's args as an object.
    Args,
    /// `"id":<id>,` when the frame has an id.
    OptId,
    /// A result's SPEC §8 `<text>`, inside quotes.
    Text,
    /// `,"is_error":true` for an error.
    IsError,
    /// `,"tool_call_id":<id>` when the frame has an id.
    OptCallId,
    /// `"output":<value>`, or `"error":<text>` for an error.
    Response,
}

impl Mark {
    /// In the order of their numbers.
    const ALL: [Mark; 9] = [
        Mark::Id,
        Mark::Name,
        Mark::ArgsText,
        Mark::Args,
        Mark::OptId,
        Mark::Text,
        Mark::IsError,
        Mark::OptCallId,
        Mark::Response,
    ];
}

/// The provider's row of SPEC §8's encoding table: its call item and its result item.
fn templates(provider: Provider) -> (&'static [u8], &'static [u8]) {
    match provider {
        #[cfg(feature = "openai-chat")]
        Provider::OpenAiChat => (
            b"{\"id\":\"\x01\",\"type\":\"function\",\"function\":{\"name\":\"\x02\",\"arguments\":\"\x03\"}}",
            b"{\"role\":\"tool\",\"tool_call_id\":\"\x01\",\"content\":\"\x06\"}",
        ),
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses => (
            b"{\"type\":\"function_call\",\"call_id\":\"\x01\",\"name\":\"\x02\",\"arguments\":\"\x03\"}",
            b"{\"type\":\"function_call_output\",\"call_id\":\"\x01\",\"output\":\"\x06\"}",
        ),
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => (
            b"{\"type\":\"tool_use\",\"id\":\"\x01\",\"name\":\"\x02\",\"input\":\x04}",
            b"{\"type\":\"tool_result\",\"tool_use_id\":\"\x01\",\"content\":\"\x06\"\x07}",
        ),
        #[cfg(feature = "gemini")]
        Provider::Gemini => (
            b"{\"functionCall\":{\x05\"name\":\"\x02\",\"args\":\x04}}",
            b"{\"functionResponse\":{\x05\"name\":\"\x02\",\"response\":{\x09}}}",
        ),
        #[cfg(feature = "ollama")]
        Provider::Ollama => (
            b"{\x05\"function\":{\"name\":\"\x02\",\"arguments\":\x04}}",
            b"{\"role\":\"tool\",\"tool_name\":\"\x02\",\"content\":\"\x06\"\x08}",
        ),
    }
}

/// A call's arguments: a JSON value, or (a call whose arguments were broken) the text the
/// model wrote.
#[derive(Copy, Clone)]
pub(crate) enum Args<'a> {
    Value(&'a [u8]),
    Text(JsonStr<'a>),
}

impl<'a> Args<'a> {
    fn of(args: &'a [u8], broken: bool) -> Self {
        match crate::frame::as_string(args) {
            Some(text) if broken => Args::Text(text),
            _ => Args::Value(args),
        }
    }

    /// As a JSON string's inside (OpenAI's `arguments`): a value's compact JSON text (a
    /// string value quoted too: it is the JSON the model wrote), or the broken text as it is.
    fn put_as_string(self, s: &mut dyn Sink, stored: bool, escaped: Option<usize>) {
        match self {
            Args::Value(v) => put_json_text(v, s, stored, escaped),
            Args::Text(t) => put_str(s, t, stored),
        }
    }

    /// As an object (Anthropic's `input`, Gemini's `args`, Ollama's `arguments`): text
    /// that is not JSON, or a value that is not an object, becomes `{}`.
    fn put_as_object(self, s: &mut dyn Sink, stored: bool) {
        match self {
            Args::Value(v) if json::is_object(v) => put_value(s, v, stored),
            _ => s.put(b"{}"),
        }
    }
}

/// What an item is made of.
pub(crate) struct Item<'a> {
    pub(crate) id: Option<JsonStr<'a>>,
    pub(crate) name: JsonStr<'a>,
    pub(crate) body: Body<'a>,
    /// Its parts are as a conversation keeps them (values compact, strings and a string
    /// result canonical), so they are copied as they are instead of written again.
    pub(crate) stored: bool,
    /// The length of the args' or the result's JSON text escaped, when it is written as a
    /// string: a conversation keeps it, so a body is measured without reading the text.
    pub(crate) escaped: Option<usize>,
}

#[derive(Copy, Clone)]
pub(crate) enum Body<'a> {
    Call(Args<'a>),
    Result(Outcome<'a>),
}

#[derive(Copy, Clone)]
pub(crate) enum Outcome<'a> {
    /// A result value.
    Result(&'a [u8]),
    /// An error: its message, a string or any value written as its JSON text.
    Error(&'a [u8]),
    /// An error message as text.
    Message(JsonStr<'a>),
    /// No result came (SPEC §10.2 rule 1): `Tool <name> got no result`.
    Missing(JsonStr<'a>),
}

impl Outcome<'_> {
    fn is_error(self) -> bool {
        !matches!(self, Outcome::Result(_))
    }

    /// SPEC §8's `<text>`, inside its quotes: a string result itself, any other value's
    /// JSON text, or the error message.
    fn put_text(self, s: &mut dyn Sink, stored: bool, escaped: Option<usize>) {
        match self {
            Outcome::Result(v) | Outcome::Error(v) => put_value_as_text(v, s, stored, escaped),
            Outcome::Message(m) => put_str(s, m, stored),
            Outcome::Missing(name) => {
                s.put(b"Tool ");
                name.for_each_decoded_run(|run| put_escaped(s, run));
                s.put(b" got no result");
            }
        }
    }
}

impl Item<'_> {
    /// The item `template` describes, into `out`. A template that places the id bare is a
    /// provider's that matches results to calls by id: a frame without one is refused.
    fn write(&self, template: &[u8], out: &mut [u8]) -> Result<usize, ItemError> {
        if self.id.is_none() && template.contains(&(Mark::Id as u8)) {
            return Err(ItemError::NoId);
        }
        write_counted(out, |s| self.put(template, s))
            .map_err(|e| ItemError::BufferTooSmall { needed: e.needed })
    }

    /// The item for `provider` (a call's or a result's, by its body) into `s`; a provider
    /// that needs an id gets the one the item carries (the request writer sees to it).
    pub(crate) fn put_for(&self, provider: Provider, s: &mut dyn Sink) {
        let (call, result) = templates(provider);
        self.put(
            if matches!(self.body, Body::Call(_)) {
                call
            } else {
                result
            },
            s,
        );
    }

    fn put(&self, mut template: &[u8], s: &mut dyn Sink) {
        loop {
            let at = crate::json::bytes::first_control(template);
            if at == template.len() {
                break;
            }
            s.put(&template[..at]);
            if let Some(&mark) = Mark::ALL.get(usize::from(template[at]).wrapping_sub(1)) {
                self.put_part(mark, s);
            }
            template = &template[at + 1..];
        }
        s.put(template);
    }

    fn put_part(&self, mark: Mark, s: &mut dyn Sink) {
        match (mark, self.body, self.id) {
            (Mark::Id, _, Some(id)) => put_str(s, id, self.stored),
            (Mark::Name, _, _) => put_str(s, self.name, self.stored),
            (Mark::ArgsText, Body::Call(args), _) => {
                args.put_as_string(s, self.stored, self.escaped)
            }
            (Mark::Args, Body::Call(args), _) => args.put_as_object(s, self.stored),
            (Mark::OptId, _, Some(id)) => {
                s.put(b"\"id\":\"");
                put_str(s, id, self.stored);
                s.put(b"\",");
            }
            (Mark::Text, Body::Result(outcome), _) => {
                outcome.put_text(s, self.stored, self.escaped)
            }
            (Mark::IsError, Body::Result(outcome), _) if outcome.is_error() => {
                s.put(b",\"is_error\":true")
            }
            (Mark::OptCallId, _, Some(id)) => {
                s.put(b",\"tool_call_id\":\"");
                put_str(s, id, self.stored);
                s.put(b"\"");
            }
            (Mark::Response, Body::Result(Outcome::Result(v)), _) => {
                s.put(b"\"output\":");
                put_value(s, v, self.stored);
            }
            (Mark::Response, Body::Result(outcome), _) => {
                s.put(b"\"error\":\"");
                outcome.put_text(s, self.stored, self.escaped);
                s.put(b"\"");
            }
            // A part this item has not (no id; a call's part in a result's template).
            _ => {}
        }
    }
}

/// Inside a JSON string's quotes: a string value's text; any other value's compact JSON text.
fn put_value_as_text(v: &[u8], s: &mut dyn Sink, stored: bool, escaped: Option<usize>) {
    match (stored, v) {
        // A stored string is canonical: its inside is its own text.
        (true, [b'"', inside @ .., b'"']) => s.put(inside),
        _ => match crate::frame::as_string(v) {
            Some(text) => put_str(s, text, false),
            None => put_json_text(v, s, stored, escaped),
        },
    }
}

/// A value's compact JSON text, escaped for the inside of a JSON string.
fn put_json_text(v: &[u8], s: &mut dyn Sink, stored: bool, escaped: Option<usize>) {
    match (stored, escaped) {
        (true, Some(n)) => s.put_escaped_sized(v, n),
        (true, None) => put_escaped(s, v),
        (false, _) => json::for_each_compact_run(v, |run| put_escaped(s, run)),
    }
}

/// A string's inside, canonically: a stored one is already.
fn put_str(s: &mut dyn Sink, t: JsonStr<'_>, stored: bool) {
    match stored {
        true => s.put(t.raw()),
        false => t.for_each_decoded_run(|run| put_escaped(s, run)),
    }
}

/// A value compactly: a stored one is already.
fn put_value(s: &mut dyn Sink, v: &[u8], stored: bool) {
    match stored {
        true => s.put(v),
        false => s.put_raw(v),
    }
}
