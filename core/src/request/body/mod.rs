//! The request body (SPEC §10.3): the conversation, the declarations and the options in
//! the provider's shape, written into a buffer of any size, resuming where it stopped.

mod history;
mod history_items;
mod ids;
mod sinks;

use history::{messages, Msg, MsgAt};
use ids::shared_ids;
use sinks::{BodySink, HoldLast, Window};

use super::conversation::Conversation;
use super::declare::{self, Declaration, DeclarationError};
use super::store::{Entries, Entry, Kind, Part, StoredCall, Tag};
use crate::encode::{Args, Body, Item, Outcome};
use crate::json::{self, valid, JsonStr};
use crate::provider::Provider;
use crate::sink::{put_escaped, put_u64, Counter, Sink};

/// `max_tokens` for Anthropic when the host gives none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Which tool the model must call (SPEC §10.3), as each provider spells it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ToolChoice<'a> {
    /// The model decides.
    Auto,
    /// No tool.
    None,
    /// Some tool.
    Required,
    /// This tool: its declared name or the name the model sees.
    Tool(&'a str),
}

/// What a body says beside the conversation and the tools.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RequestOptions<'a> {
    /// The model (for Gemini it is in the path, [`gemini_path`]).
    pub model: &'a str,
    /// The most tokens to generate (Anthropic: [`DEFAULT_MAX_TOKENS`] when `None`).
    pub max_tokens: Option<u32>,
    /// Written only when set and a tool is declared.
    pub tool_choice: Option<ToolChoice<'a>>,
    /// Members the host adds at the top level, as a JSON object's text
    /// (`{"temperature":0.2}`), written after the library's own.
    pub extra: Option<&'a [u8]>,
}

impl<'a> RequestOptions<'a> {
    /// Options naming only the model.
    pub const fn new(model: &'a str) -> Self {
        Self {
            model,
            max_tokens: None,
            tool_choice: None,
            extra: None,
        }
    }
}

/// Why a body cannot be written. Nothing was written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum RequestError {
    /// A declaration the provider cannot take.
    Declaration(DeclarationError),
    /// Ollama has no tool choice: any but `auto` is refused.
    ToolChoiceUnsupported,
    /// The tool choice names no declared tool.
    UnknownTool,
    /// The extra members are not a JSON object.
    BadExtra,
    /// An extra member names a member the library writes.
    ExtraClash,
}

impl core::fmt::Display for RequestError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Declaration(e) => e.fmt(f),
            Self::ToolChoiceUnsupported => f.write_str("the provider has no tool choice"),
            Self::UnknownTool => f.write_str("the tool choice names no declared tool"),
            Self::BadExtra => f.write_str("the extra members are not a JSON object"),
            Self::ExtraClash => f.write_str("an extra member names a member the library writes"),
        }
    }
}

impl core::error::Error for RequestError {}

impl From<DeclarationError> for RequestError {
    fn from(e: DeclarationError) -> Self {
        Self::Declaration(e)
    }
}

/// Where a piece of the body starts: its number, its offset, and where the messages and the
/// declarations stand there.
#[derive(Copy, Clone, Debug, Default)]
struct Resume {
    piece: usize,
    start: usize,
    msgs: MsgAt,
    decl: usize,
}

/// The path Gemini takes the body at: `models/<model>:streamGenerateContent?alt=sse`.
pub fn gemini_path<'o>(model: &str, out: &'o mut [u8]) -> Result<&'o str, json::BufferTooSmall> {
    let parts: [&str; 3] = ["models/", model, ":streamGenerateContent?alt=sse"];
    let needed = parts.iter().map(|p| p.len()).sum();
    let dst = out
        .get_mut(..needed)
        .ok_or(json::BufferTooSmall { needed })?;
    let mut at = 0;
    for p in parts {
        dst[at..at + p.len()].copy_from_slice(p.as_bytes());
        at += p.len();
    }
    core::str::from_utf8(dst).map_err(|_| json::BufferTooSmall { needed })
}

/// One request body, written piece by piece into buffers of any size.
///
/// ```
/// use polyweave_tool_adapter::Provider;
/// use polyweave_tool_adapter::request::{Conversation, Request, RequestOptions};
///
/// let mut memory = [0u8; 512];
/// let mut conv = Conversation::new(&mut memory);
/// conv.push_user("Hi").unwrap();
/// let opts = RequestOptions::new("gpt-5");
/// let mut req = Request::new(&conv, Provider::OpenAiChat, &opts, &[]).unwrap();
/// let mut body = [0u8; 200];
/// let mut n = 0;
/// let mut chunk = [0u8; 7];
/// loop {
///     let k = req.write(&mut chunk);
///     if k == 0 { break; }
///     body[n..n + k].copy_from_slice(&chunk[..k]);
///     n += k;
/// }
/// assert_eq!(n, req.len());
/// assert_eq!(&body[..n], br#"{"model":"gpt-5","messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}"#);
/// ```
#[derive(Debug)]
pub struct Request<'r> {
    conv: &'r Conversation<'r>,
    provider: Provider,
    opts: &'r RequestOptions<'r>,
    decls: &'r [Declaration<'r>],
    len: usize,
    /// Bytes handed out so far.
    offset: usize,
    /// The last piece that starts at or before `offset`: writing resumes there instead of
    /// from the body's start.
    resume: Resume,
    /// Hashes of the call ids more than one call has (a bit each; a collision only costs
    /// the exact scan of `earlier_call_has`, which would otherwise run for every call).
    shared_ids: [u64; 4],
    /// Which of the first 64 declarations' schemas are written as they are (a bit each).
    plain: u64,
}

impl<'r> Request<'r> {
    /// Checks the options and declarations for `provider` and measures the body.
    pub fn new(
        conv: &'r Conversation<'r>,
        provider: Provider,
        opts: &'r RequestOptions<'r>,
        decls: &'r [Declaration<'r>],
    ) -> Result<Self, RequestError> {
        let plain = declare::check(provider, decls)?;
        if let Some(choice) = opts.tool_choice.filter(|_| !decls.is_empty()) {
            if is_ollama(provider) && choice != ToolChoice::Auto {
                return Err(RequestError::ToolChoiceUnsupported);
            }
            if let ToolChoice::Tool(name) = choice {
                declare::find_declaration(provider, decls, name.as_bytes())
                    .ok_or(RequestError::UnknownTool)?;
            }
        }
        if let Some(extra) = opts.extra {
            if json::validate(extra, json::DEFAULT_MAX_DEPTH).is_err() {
                return Err(RequestError::BadExtra);
            }
            let members = valid::Obj::of(extra).ok_or(RequestError::BadExtra)?;
            for (k, _) in members {
                if writes(provider, opts, !decls.is_empty(), k) {
                    return Err(RequestError::ExtraClash);
                }
            }
        }
        let mut req = Self {
            conv,
            provider,
            opts,
            decls,
            len: 0,
            offset: 0,
            resume: Resume::default(),
            shared_ids: shared_ids(conv),
            plain,
        };
        let mut count = Counter(0);
        req.pieces(&mut count, Resume::default(), |_| {});
        req.len = count.0;
        Ok(req)
    }

    /// The body's length in bytes (for `Content-Length`), known before any is written.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes written so far.
    pub fn written(&self) -> usize {
        self.offset
    }

    /// Whether the whole body has been written.
    pub fn is_done(&self) -> bool {
        self.offset >= self.len
    }

    /// Writes the body's next bytes into `out`; how many (0 once it is all written). The
    /// bytes are the same whatever the sizes of the buffers.
    pub fn write(&mut self, out: &mut [u8]) -> usize {
        if out.is_empty() || self.is_done() {
            return 0;
        }
        let mut w = Window {
            out,
            skip: self.offset,
            pos: self.resume.start,
            written: 0,
        };
        let mut last = self.resume;
        self.pieces(&mut w, self.resume, |at| last = at);
        self.offset += w.written;
        // The next write goes on in the piece this one stopped in: the last one begun (it
        // starts at or before the new offset, since none is begun once the buffer is full).
        if last.start <= self.offset {
            self.resume = last;
        }
        w.written
    }

    /// Writes every piece from `from` on into `s` (the ones before it are skipped without
    /// writing: `s` is already past them); `at` hears where each piece starts. Stops after a
    /// piece once `s` is full.
    fn pieces(&self, s: &mut dyn BodySink, from: Resume, mut at: impl FnMut(Resume)) {
        let p = self.provider;
        let mut piece = from.piece;
        let mut go = |s: &mut dyn BodySink,
                      (msgs, decl): (MsgAt, usize),
                      write: &mut dyn FnMut(&mut dyn Sink)|
         -> bool {
            at(Resume {
                piece,
                start: s.pos(),
                msgs,
                decl,
            });
            piece += 1;
            write(s.sink());
            !s.full()
        };
        let end = MsgAt::end(self.conv);
        if from.piece == 0 && !go(s, (from.msgs, 0), &mut |s| self.head(s)) {
            return;
        }
        let first = !has_system_message(p) || self.system().is_none();
        let silent = |t: &Entry<'_>| !self.writes_turn(t);
        // The messages are pieces 1 to n; a declaration or the tail starts past them all.
        if from.msgs != end {
            // The next message written is piece 1, the body's first message.
            let mut at_first = from.piece <= 1;
            let mut it = messages(self.conv, merges_results(p), &silent, from.msgs);
            loop {
                let msgs = it.at();
                // Every message the walk gives writes something: it passes over a turn that
                // would not (`silent`) and gives a turn's results only when it has calls.
                let Some(m) = it.next() else { break };
                let comma = !(first && at_first);
                at_first = false;
                if !go(s, (msgs, 0), &mut |s| {
                    if comma {
                        s.put(b",");
                    }
                    self.message(&m, s);
                }) {
                    return;
                }
            }
        }
        for i in from.decl.min(self.decls.len())..self.decls.len() {
            if !go(s, (end, i), &mut |s| {
                if i == 0 {
                    s.put(b"]");
                    s.put(tools_open(p));
                } else {
                    s.put(b",");
                }
                declare::put_declaration(p, self.decls, i, i < 64 && self.plain >> i & 1 != 0, s);
            }) {
                return;
            }
        }
        go(s, (end, self.decls.len()), &mut |s| self.tail(s));
    }

    fn system(&self) -> Option<&'r [u8]> {
        let e = Entries {
            buf: self.conv.bytes(),
            pos: 0,
        }
        .find(|e| e.kind == Kind::System)?;
        Some(e.payload)
    }

    fn head(&self, s: &mut dyn Sink) {
        let p = self.provider;
        let sys = self.system();
        if is_gemini(p) {
            s.put(b"{");
            if let Some(t) = sys {
                s.put(b"\"systemInstruction\":{\"parts\":[{\"text\":\"");
                s.put(t);
                s.put(b"\"}]},");
            }
            s.put(b"\"contents\":[");
            return;
        }
        s.put(b"{\"model\":\"");
        put_escaped(s, self.opts.model.as_bytes());
        s.put(b"\"");
        if is_anthropic(p) {
            s.put(b",\"max_tokens\":");
            put_u64(
                s,
                u64::from(self.opts.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
            );
            if let Some(t) = sys {
                put_member_text(s, b",\"system\":", t);
            }
            s.put(b",\"messages\":[");
        } else if is_responses(p) {
            if let Some(t) = sys {
                put_member_text(s, b",\"instructions\":", t);
            }
            s.put(b",\"input\":[");
        } else {
            s.put(b",\"messages\":[");
            if let Some(t) = sys {
                put_member_text(s, b"{\"role\":\"system\",\"content\":", t);
                s.put(b"}");
            }
        }
    }

    fn tail(&self, s: &mut dyn Sink) {
        let p = self.provider;
        if self.decls.is_empty() {
            s.put(b"]");
        } else {
            s.put(tools_close(p));
            if let Some(choice) = self.opts.tool_choice {
                self.put_choice(choice, s);
            }
        }
        if let Some(n) = self.opts.max_tokens.filter(|_| !is_anthropic(p)) {
            let (open, close): (&[u8], &[u8]) = match () {
                _ if is_responses(p) => (b",\"max_output_tokens\":", b""),
                _ if is_gemini(p) => (b",\"generationConfig\":{\"maxOutputTokens\":", b"}"),
                _ if is_ollama(p) => (b",\"options\":{\"num_predict\":", b"}"),
                _ => (b",\"max_completion_tokens\":", b""),
            };
            s.put(open);
            put_u64(s, u64::from(n));
            s.put(close);
        }
        s.put(match () {
            _ if is_gemini(p) => b"",
            _ if is_responses(p) => {
                b",\"stream\":true,\"store\":false,\"include\":[\"reasoning.encrypted_content\"]"
            }
            _ if is_chat(p) => b",\"stream\":true,\"stream_options\":{\"include_usage\":true}",
            _ => b",\"stream\":true",
        });
        for (k, v) in self
            .opts
            .extra
            .and_then(valid::Obj::of)
            .into_iter()
            .flatten()
        {
            s.put(b",\"");
            s.put(k.raw());
            s.put(b"\":");
            s.put_raw(v);
        }
        s.put(b"}");
    }

    fn put_choice(&self, choice: ToolChoice<'_>, s: &mut dyn Sink) {
        let p = self.provider;
        let mut name = [0u8; declare::MAX_NAME];
        let name: &[u8] = match choice {
            ToolChoice::Tool(n) => match declare::find_declaration(p, self.decls, n.as_bytes()) {
                Some(i) => declare::model_name_of(p, self.decls, i, &mut name),
                None => return,
            },
            _ => &[],
        };
        let word = |c: ToolChoice<'_>,
                    auto: &'static [u8],
                    none: &'static [u8],
                    any: &'static [u8]| match c {
            ToolChoice::Auto => auto,
            ToolChoice::None => none,
            _ => any,
        };
        let put_name = |s: &mut dyn Sink| {
            s.put(b"\"");
            s.put(name);
            s.put(b"\"");
        };
        let tool = matches!(choice, ToolChoice::Tool(_));
        if is_anthropic(p) {
            s.put(b",\"tool_choice\":{\"type\":");
            if tool {
                s.put(b"\"tool\",\"name\":");
                put_name(s);
            } else {
                s.put(word(choice, b"\"auto\"", b"\"none\"", b"\"any\""));
            }
            s.put(b"}");
        } else if is_gemini(p) {
            s.put(b",\"toolConfig\":{\"functionCallingConfig\":{\"mode\":");
            s.put(word(choice, b"\"AUTO\"", b"\"NONE\"", b"\"ANY\""));
            if tool {
                s.put(b",\"allowedFunctionNames\":[");
                put_name(s);
                s.put(b"]");
            }
            s.put(b"}}");
        } else if is_ollama(p) {
            // Only `auto`, which is what Ollama does without saying.
        } else if tool {
            s.put(if is_responses(p) {
                b",\"tool_choice\":{\"type\":\"function\",\"name\":" as &[u8]
            } else {
                b",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":"
            });
            put_name(s);
            s.put(if is_responses(p) {
                b"}" as &[u8]
            } else {
                b"}}"
            });
        } else {
            s.put(b",\"tool_choice\":");
            s.put(word(choice, b"\"auto\"", b"\"none\"", b"\"required\""));
        }
    }

    /// Whether an assistant turn has anything to write (no message is written empty).
    fn writes_turn(&self, turn: &Entry<'_>) -> bool {
        let same = self.same_provider(turn);
        turn.parts().any(|part| match part.tag {
            Tag::Call => true,
            Tag::Text if is_anthropic(self.provider) => !is_blank(part.text()),
            Tag::Text => !part.text().is_empty() || (same && !part.sig().is_empty()),
            _ => same && self.writes_state(&part),
        })
    }

    fn same_provider(&self, turn: &Entry<'_>) -> bool {
        usize::from(turn.provider_index())
            == Provider::ALL
                .iter()
                .position(|&q| q == self.provider)
                .unwrap_or(usize::MAX)
    }

    /// Whether a state part of a turn from this provider goes back.
    fn writes_state(&self, part: &Part<'_>) -> bool {
        match part.tag {
            Tag::Thought => {
                !part.sig().is_empty() && (is_anthropic(self.provider) || is_gemini(self.provider))
            }
            Tag::Redacted => is_anthropic(self.provider),
            // With `store:false` the API cannot find a reasoning item by id: only one with
            // its encrypted content goes back.
            Tag::Item => is_responses(self.provider),
            _ => false,
        }
    }

    fn message(&self, m: &Msg<'_>, s: &mut dyn Sink) {
        match *m {
            Msg::Users { from, to } => self.users(from, to, s),
            Msg::Turn(turn) => self.turn(&turn, s),
            Msg::Results { turn, users } => self.results(&turn, users, s),
        }
    }
}

fn text_block(p: Provider) -> &'static [u8] {
    if is_responses(p) {
        b"{\"type\":\"input_text\",\"text\":\""
    } else {
        b"{\"type\":\"text\",\"text\":\""
    }
}

fn put_member_text(s: &mut dyn Sink, key: &[u8], text: &[u8]) {
    s.put(key);
    s.put(b"\"");
    s.put(text);
    s.put(b"\"");
}

fn tools_open(p: Provider) -> &'static [u8] {
    if is_gemini(p) {
        b",\"tools\":[{\"functionDeclarations\":["
    } else {
        b",\"tools\":["
    }
}

fn tools_close(p: Provider) -> &'static [u8] {
    if is_gemini(p) {
        b"]}]"
    } else {
        b"]"
    }
}

/// Whether the body's top-level member `key` is one the library writes.
fn writes(p: Provider, opts: &RequestOptions<'_>, tools: bool, key: JsonStr<'_>) -> bool {
    let always: &[&[u8]] = match () {
        _ if is_gemini(p) => &[b"systemInstruction", b"contents"],
        _ if is_responses(p) => &[
            b"model",
            b"instructions",
            b"input",
            b"stream",
            b"store",
            b"include",
        ],
        _ if is_anthropic(p) => &[b"model", b"max_tokens", b"system", b"messages", b"stream"],
        _ if is_chat(p) => &[b"model", b"messages", b"stream", b"stream_options"],
        _ => &[b"model", b"messages", b"stream"],
    };
    let tool_members: &[&[u8]] = if is_gemini(p) {
        &[b"tools", b"toolConfig"]
    } else {
        &[b"tools", b"tool_choice"]
    };
    let max: &[u8] = match () {
        _ if is_gemini(p) => b"generationConfig",
        _ if is_responses(p) => b"max_output_tokens",
        _ if is_ollama(p) => b"options",
        _ => b"max_completion_tokens",
    };
    always.iter().any(|k| key.eq_text(k))
        || (tools && tool_members.iter().any(|k| key.eq_text(k)))
        || (opts.max_tokens.is_some() && key.eq_text(max))
}

fn has_system_message(p: Provider) -> bool {
    is_chat(p) || is_ollama(p)
}

fn merges_results(p: Provider) -> bool {
    is_anthropic(p) || is_gemini(p)
}

macro_rules! provider_test {
    ($name:ident, $feature:literal, $variant:ident) => {
        #[inline]
        fn $name(p: Provider) -> bool {
            #[cfg(feature = $feature)]
            if p == Provider::$variant {
                return true;
            }
            let _ = p;
            false
        }
    };
}

provider_test!(is_chat, "openai-chat", OpenAiChat);
provider_test!(is_responses, "openai-responses", OpenAiResponses);
provider_test!(is_anthropic, "anthropic", Anthropic);
provider_test!(is_gemini, "gemini", Gemini);
provider_test!(is_ollama, "ollama", Ollama);

fn is_blank(text: &[u8]) -> bool {
    // Escaped white space (`\n`, `\t`, `\r`) counts as white space too.
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        match b {
            b' ' => i += 1,
            b'\\' if matches!(text.get(i + 1), Some(b'n' | b't' | b'r')) => i += 2,
            _ => return false,
        }
    }
    true
}
