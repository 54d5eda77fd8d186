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

use crate::decode::Provider;
use crate::frame::{Frame, FrameError, FrameKind};
use crate::json::{self, JsonStr};
use crate::sink::{put_escaped, put_json_str, write_counted, Sink};

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
            let call = Call {
                id: c.id.filter(|id| !id.raw().is_empty()),
                name,
                args: Args::of(c.args, c.args_error.is_some()),
            };
            needs_id(provider, call.id)?;
            written(write_counted(out, |s| write_call(provider, &call, s)))
        }
        FrameKind::ToolResult => {
            let r = f.tool_result()?;
            let name = r.name.ok_or(ItemError::NoName)?;
            let outcome = match (r.result, r.error) {
                (Some(v), _) => Outcome::Result(v),
                (None, Some(e)) => Outcome::Error(e),
                (None, None) => return Err(ItemError::NoOutcome),
            };
            let res = ResultItem {
                id: r.id.filter(|id| !id.raw().is_empty()),
                name,
                outcome,
            };
            needs_id(provider, res.id)?;
            written(write_counted(out, |s| write_result(provider, &res, s)))
        }
        _ => Err(ItemError::NotACallOrResult),
    }
}

fn written(r: Result<usize, json::BufferTooSmall>) -> Result<usize, ItemError> {
    r.map_err(|e| ItemError::BufferTooSmall { needed: e.needed })
}

/// Ids are how OpenAI and Anthropic match results to calls; Gemini and Ollama match by
/// name and order when there are none.
fn needs_id(provider: Provider, id: Option<JsonStr<'_>>) -> Result<(), ItemError> {
    let by_id = match provider {
        #[cfg(feature = "gemini")]
        Provider::Gemini => false,
        #[cfg(feature = "ollama")]
        Provider::Ollama => false,
        #[allow(unreachable_patterns)]
        _ => true,
    };
    match (by_id, id) {
        (true, None) => Err(ItemError::NoId),
        _ => Ok(()),
    }
}

/// A call's arguments: a JSON value, or (a call whose arguments were broken) the text the
/// model wrote.
#[derive(Copy, Clone)]
enum Args<'a> {
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

    /// As a JSON string (OpenAI's `arguments`): a value's compact JSON text (a string value
    /// quoted too: it is the JSON the model wrote), or the broken text as it is.
    fn put_as_string(self, s: &mut dyn Sink) {
        match self {
            Args::Value(v) => put_json_text(v, s),
            Args::Text(t) => put_json_str(s, t),
        }
    }

    /// As an object (Anthropic's `input`, Gemini's `args`, Ollama's `arguments`): text
    /// that is not JSON, or a value that is not an object, becomes `{}`.
    fn put_as_object(self, s: &mut dyn Sink) {
        match self {
            Args::Value(v) if json::is_object(v) => s.put_raw(v),
            _ => s.put(b"{}"),
        }
    }
}

struct Call<'a> {
    id: Option<JsonStr<'a>>,
    name: JsonStr<'a>,
    args: Args<'a>,
}

#[derive(Copy, Clone)]
enum Outcome<'a> {
    Result(&'a [u8]),
    Error(&'a [u8]),
}

impl Outcome<'_> {
    /// SPEC §8's `<text>`: a string result itself, any other result's JSON text, or the
    /// error message.
    fn put_text(self, s: &mut dyn Sink) {
        match self {
            Outcome::Result(v) | Outcome::Error(v) => put_value_as_text(v, s),
        }
    }
}

struct ResultItem<'a> {
    id: Option<JsonStr<'a>>,
    name: JsonStr<'a>,
    outcome: Outcome<'a>,
}

/// A string value as it is; any other value's compact JSON text as a string.
fn put_value_as_text(v: &[u8], s: &mut dyn Sink) {
    match crate::frame::as_string(v) {
        Some(text) => put_json_str(s, text),
        None => put_json_text(v, s),
    }
}

/// A value's compact JSON text, as a JSON string.
fn put_json_text(v: &[u8], s: &mut dyn Sink) {
    s.put(b"\"");
    json::for_each_compact_run(v, |run| put_escaped(s, run));
    s.put(b"\"");
}

fn put_member_str(s: &mut dyn Sink, key: &[u8], value: JsonStr<'_>) {
    s.put(key);
    put_json_str(s, value);
}

/// The id member, `null` where there is none (a provider that needs one never gets here).
fn put_id(s: &mut dyn Sink, key: &[u8], id: Option<JsonStr<'_>>) {
    match id {
        Some(id) => put_member_str(s, key, id),
        None => {
            s.put(key);
            s.put(b"null");
        }
    }
}

fn write_call(provider: Provider, c: &Call<'_>, s: &mut dyn Sink) {
    // Each arm writes its provider's row of the table; `needs_id` saw to the id.
    let id = |s: &mut dyn Sink, key: &[u8]| put_id(s, key, c.id);
    match provider {
        #[cfg(feature = "openai-chat")]
        Provider::OpenAiChat => {
            id(s, b"{\"id\":");
            put_member_str(s, b",\"type\":\"function\",\"function\":{\"name\":", c.name);
            s.put(b",\"arguments\":");
            c.args.put_as_string(s);
            s.put(b"}}");
        }
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses => {
            id(s, b"{\"type\":\"function_call\",\"call_id\":");
            put_member_str(s, b",\"name\":", c.name);
            s.put(b",\"arguments\":");
            c.args.put_as_string(s);
            s.put(b"}");
        }
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => {
            id(s, b"{\"type\":\"tool_use\",\"id\":");
            put_member_str(s, b",\"name\":", c.name);
            s.put(b",\"input\":");
            c.args.put_as_object(s);
            s.put(b"}");
        }
        #[cfg(feature = "gemini")]
        Provider::Gemini => {
            s.put(b"{\"functionCall\":{");
            if let Some(i) = c.id {
                put_member_str(s, b"\"id\":", i);
                s.put(b",");
            }
            put_member_str(s, b"\"name\":", c.name);
            s.put(b",\"args\":");
            c.args.put_as_object(s);
            s.put(b"}}");
        }
        #[cfg(feature = "ollama")]
        Provider::Ollama => {
            put_member_str(s, b"{\"function\":{\"name\":", c.name);
            s.put(b",\"arguments\":");
            c.args.put_as_object(s);
            s.put(b"}}");
        }
    }
}

fn write_result(provider: Provider, r: &ResultItem<'_>, s: &mut dyn Sink) {
    let id = |s: &mut dyn Sink, key: &[u8]| put_id(s, key, r.id);
    match provider {
        #[cfg(feature = "openai-chat")]
        Provider::OpenAiChat => {
            id(s, b"{\"role\":\"tool\",\"tool_call_id\":");
            s.put(b",\"content\":");
            r.outcome.put_text(s);
            s.put(b"}");
        }
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses => {
            id(s, b"{\"type\":\"function_call_output\",\"call_id\":");
            s.put(b",\"output\":");
            r.outcome.put_text(s);
            s.put(b"}");
        }
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => {
            id(s, b"{\"type\":\"tool_result\",\"tool_use_id\":");
            s.put(b",\"content\":");
            r.outcome.put_text(s);
            if let Outcome::Error(_) = r.outcome {
                s.put(b",\"is_error\":true");
            }
            s.put(b"}");
        }
        #[cfg(feature = "gemini")]
        Provider::Gemini => {
            s.put(b"{\"functionResponse\":{");
            if let Some(i) = r.id {
                put_member_str(s, b"\"id\":", i);
                s.put(b",");
            }
            put_member_str(s, b"\"name\":", r.name);
            match r.outcome {
                Outcome::Result(v) => {
                    s.put(b",\"response\":{\"result\":");
                    s.put_raw(v);
                }
                Outcome::Error(e) => {
                    s.put(b",\"response\":{\"error\":");
                    put_value_as_text(e, s);
                }
            }
            s.put(b"}}}");
        }
        #[cfg(feature = "ollama")]
        Provider::Ollama => {
            put_member_str(s, b"{\"role\":\"tool\",\"tool_name\":", r.name);
            s.put(b",\"content\":");
            r.outcome.put_text(s);
            if let Some(i) = r.id {
                put_member_str(s, b",\"tool_call_id\":", i);
            }
            s.put(b"}");
        }
    }
}
