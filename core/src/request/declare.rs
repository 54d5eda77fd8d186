//! Tool declarations (SPEC §10.1): a host's own (static text, flash-friendly) or an MCP
//! `tools/list` entry, written in each provider's shape under a name the provider takes.

use super::seen::Seen;
use crate::json::bytes::{fnv1a, FNV_START};
use crate::json::{self, valid, JsonStr};
use crate::provider::Provider;
use crate::sink::{put_escaped, put_json_str, Sink};

/// The longest name any provider takes.
pub const MAX_NAME: usize = 64;

/// A tool the model is told of.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Declaration<'a> {
    name: Text<'a>,
    description: Option<Text<'a>>,
    schema: Option<&'a [u8]>,
    strict: bool,
    mcp: bool,
}

/// A text as the host gave it, or a JSON string token as a server sent it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Text<'a> {
    Plain(&'a str),
    Json(JsonStr<'a>),
}

impl Text<'_> {
    fn put(self, s: &mut dyn Sink) {
        match self {
            Text::Plain(t) => {
                s.put(b"\"");
                put_escaped(s, t.as_bytes());
                s.put(b"\"");
            }
            Text::Json(t) => put_json_str(s, t),
        }
    }

    /// The decoded text, a run at a time.
    fn for_each_run(self, mut f: impl FnMut(&[u8])) {
        match self {
            Text::Plain(t) => f(t.as_bytes()),
            Text::Json(t) => t.for_each_decoded_run(f),
        }
    }
}

/// Why a declaration cannot be written. Nothing was written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DeclarationError {
    /// The host's name does not match the provider's name rule (SPEC §10.1); the
    /// declaration's index.
    BadName(usize),
    /// Strict was asked for and the schema does not meet the strict rules; the index.
    NotStrict(usize),
    /// The schema is not a JSON object; the index.
    BadSchema(usize),
    /// An MCP `tools/list` entry without a string `name`, or not an object.
    BadEntry,
    /// Two declarations give the model the same name; the second one's index.
    DuplicateName(usize),
}

impl core::fmt::Display for DeclarationError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadName(i) => write!(f, "tool {i}: the provider cannot take its name"),
            Self::NotStrict(i) => write!(
                f,
                "tool {i}: strict needs additionalProperties false and every property required in every object schema"
            ),
            Self::BadSchema(i) => write!(f, "tool {i}: the input schema is not a JSON object"),
            Self::BadEntry => f.write_str("a tools/list entry without a string name"),
            Self::DuplicateName(i) => write!(f, "tool {i}: another tool has the same name"),
        }
    }
}

impl core::error::Error for DeclarationError {}

impl<'a> Declaration<'a> {
    /// A host's tool: its name and its input schema (raw JSON; `None`: no arguments).
    pub const fn new(name: &'a str, schema: Option<&'a [u8]>) -> Self {
        Self {
            name: Text::Plain(name),
            description: None,
            schema,
            strict: false,
            mcp: false,
        }
    }

    /// With a description.
    pub const fn description(mut self, description: &'a str) -> Self {
        self.description = Some(Text::Plain(description));
        self
    }

    /// Asks the provider for strict arguments (OpenAI, Anthropic); refused at writing
    /// when the schema does not meet the strict rules.
    pub const fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// An MCP server's `tools/list` entry as it sent it: its `name`, `description` and
    /// `inputSchema` (nothing else goes to the model).
    pub fn from_mcp(entry: &'a [u8]) -> Result<Self, DeclarationError> {
        if json::validate(entry, json::DEFAULT_MAX_DEPTH).is_err() {
            return Err(DeclarationError::BadEntry);
        }
        let mut d = Self {
            name: Text::Plain(""),
            description: None,
            schema: None,
            strict: false,
            mcp: true,
        };
        let mut named = false;
        for (k, v) in valid::Obj::of(entry).ok_or(DeclarationError::BadEntry)? {
            match k.raw() {
                b"name" => {
                    let n = valid::string(v).ok_or(DeclarationError::BadEntry)?;
                    d.name = Text::Json(n);
                    named = true;
                }
                b"description" => d.description = valid::string(v).map(Text::Json),
                b"inputSchema" => d.schema = Some(v),
                _ => {}
            }
        }
        if !named {
            return Err(DeclarationError::BadEntry);
        }
        Ok(d)
    }

    /// Whether it came from an MCP server.
    pub fn is_mcp(&self) -> bool {
        self.mcp
    }

    /// The name as declared (decoded), into `out`; its length, or `None` when `out` is short.
    pub fn declared_name<'o>(&self, out: &'o mut [u8]) -> Option<&'o [u8]> {
        let mut n = 0;
        let mut fits = true;
        self.name
            .for_each_run(|run| match out.get_mut(n..n + run.len()) {
                Some(dst) => {
                    dst.copy_from_slice(run);
                    n += run.len();
                }
                None => fits = false,
            });
        fits.then_some(&out[..n])
    }
}

/// The name a provider takes for `declared` (SPEC §10.1): itself when it matches the
/// provider's rule; otherwise (an MCP name) characters outside the rule become `_` and a
/// name too long, or one that would clash, is cut and given a short hash of the original.
fn model_name(
    provider: Provider,
    d: &Declaration<'_>,
    clash: bool,
    out: &mut [u8; MAX_NAME],
) -> usize {
    let mut len = 0usize;
    let mut total = 0usize;
    let mut changed = false;
    let mut hash = FNV_START;
    d.name.for_each_run(|run| {
        hash = fnv1a(hash, run);
        for &b in run {
            let ok = allowed(provider, total, b);
            changed |= !ok;
            if len < MAX_NAME {
                out[len] = if ok { b } else { b'_' };
                len += 1;
            }
            total += 1;
        }
    });
    if total == 0 {
        out[0] = b'_';
        return 1;
    }
    if total > MAX_NAME || (clash && changed) {
        // Room for `_` and eight hex digits.
        len = len.min(MAX_NAME - 9);
        out[len] = b'_';
        for i in 0..8 {
            out[len + 1 + i] = b"0123456789abcdef"[(hash >> (28 - 4 * i)) as usize & 15];
        }
        len += 9;
    }
    len
}

/// Whether `b` may stand at `at` in a name the provider takes.
fn allowed(provider: Provider, at: usize, b: u8) -> bool {
    let word = b.is_ascii_alphanumeric() || b == b'_';
    match provider {
        #[cfg(feature = "gemini")]
        Provider::Gemini if at == 0 => b.is_ascii_alphabetic() || b == b'_',
        #[cfg(feature = "gemini")]
        Provider::Gemini => word || matches!(b, b'.' | b':' | b'-'),
        // Every other provider (none, in a Gemini-only build).
        #[allow(unreachable_patterns)]
        _ => word || b == b'-',
    }
}

/// Whether the host's name is one the provider takes as it is.
fn takes(provider: Provider, d: &Declaration<'_>) -> bool {
    let mut at = 0usize;
    let mut ok = true;
    d.name.for_each_run(|run| {
        for &b in run {
            ok &= allowed(provider, at, b);
            at += 1;
        }
    });
    ok && (1..=MAX_NAME).contains(&at)
}

/// The names the model sees for a list of declarations, one at a time.
pub(crate) fn name_for(
    provider: Provider,
    decls: &[Declaration<'_>],
    index: usize,
    out: &mut [u8; MAX_NAME],
) -> usize {
    let d = &decls[index];
    let plain = model_name(provider, d, false, out);
    // A mapped name that another declaration already takes is made unique by its hash.
    if d.mcp && !takes(provider, d) {
        let mut other = [0u8; MAX_NAME];
        let clash = decls.iter().enumerate().any(|(j, e)| {
            j != index && {
                let n = model_name(provider, e, false, &mut other);
                other[..n] == out[..plain]
            }
        });
        if clash {
            return model_name(provider, d, true, out);
        }
    }
    plain
}

/// The name the model sees for declaration `index`, into `out` (at most [`MAX_NAME`] bytes).
pub fn model_name_of<'o>(
    provider: Provider,
    decls: &[Declaration<'_>],
    index: usize,
    out: &'o mut [u8; MAX_NAME],
) -> &'o [u8] {
    let n = name_for(provider, decls, index, out);
    &out[..n]
}

/// The declaration the model means by `name` (the name it sees, or the one declared).
pub fn find_declaration(
    provider: Provider,
    decls: &[Declaration<'_>],
    name: &[u8],
) -> Option<usize> {
    let mut out = [0u8; MAX_NAME];
    (0..decls.len())
        .find(|&i| model_name_of(provider, decls, i, &mut out) == name)
        .or_else(|| {
            (0..decls.len()).find(|&i| {
                let mut buf = [0u8; 256];
                decls[i].declared_name(&mut buf) == Some(name)
            })
        })
}

/// Checks every declaration for `provider`: names, schemas, strictness, clashes. Answers
/// which of the first 64 schemas go out as they are (a bit each): already compact, nothing
/// to add or leave out, so a body copies them rather than walking them at every write.
pub(crate) fn check(
    provider: Provider,
    decls: &[Declaration<'_>],
) -> Result<u64, DeclarationError> {
    let mut plain = 0u64;
    let mut a = [0u8; MAX_NAME];
    let mut b = [0u8; MAX_NAME];
    let mut seen = Seen::default();
    for (i, d) in decls.iter().enumerate() {
        if !d.mcp && !takes(provider, d) {
            return Err(DeclarationError::BadName(i));
        }
        if let Some(schema) = d.schema {
            let compact = json::validate_compact(schema, json::DEFAULT_MAX_DEPTH)
                .map_err(|_| DeclarationError::BadSchema(i))?;
            if valid::Obj::of(schema).is_none() {
                return Err(DeclarationError::BadSchema(i));
            }
            // White space around the value is not part of it: such a schema is walked.
            let bare = schema.first() == Some(&b'{') && schema.last() == Some(&b'}');
            if i < 64 && compact && bare && !edits(provider, schema) {
                plain |= 1 << i;
            }
            if d.strict && strict_flag(provider) && !is_strict(schema, json::DEFAULT_MAX_DEPTH) {
                return Err(DeclarationError::NotStrict(i));
            }
        } else if d.strict && strict_flag(provider) {
            // `{"type":"object","properties":{}}` lacks `additionalProperties: false`.
            return Err(DeclarationError::NotStrict(i));
        }
        let n = name_for(provider, decls, i, &mut a);
        // Only a name that may have come before is compared with each earlier one (fifty
        // tools: about one exact scan, not 1,225 names made again).
        if seen.insert(&a[..n]) {
            for j in 0..i {
                let m = name_for(provider, decls, j, &mut b);
                if a[..n] == b[..m] {
                    return Err(DeclarationError::DuplicateName(i));
                }
            }
        }
    }
    Ok(plain)
}

/// Whether the provider has a strict flag.
fn strict_flag(provider: Provider) -> bool {
    match provider {
        #[cfg(feature = "gemini")]
        Provider::Gemini => false,
        #[cfg(feature = "ollama")]
        Provider::Ollama => false,
        #[allow(unreachable_patterns)]
        _ => true,
    }
}

/// The strict rules: every object schema in it has `additionalProperties: false` and
/// lists all its `properties` in `required`.
fn is_strict(schema: &[u8], depth: u8) -> bool {
    let Some(members) = valid::Obj::of(schema) else {
        // An array of schemas (`items` as a list, `anyOf`, …) or a value: look inside.
        return match valid::Arr::of(schema) {
            Some(items) => items.clone().all(|s| is_strict(s, depth.saturating_sub(1))),
            None => true,
        };
    };
    if depth == 0 {
        return false;
    }
    let (mut object, mut closed, mut props, mut required) = (false, false, None, None);
    for (k, v) in members.clone() {
        match k.raw() {
            b"type" => {
                object = valid::string(v).is_some_and(|t| t.eq_text(b"object"))
                    || valid::Arr::of(v).is_some_and(|mut a| {
                        a.any(|t| valid::string(t).is_some_and(|t| t.eq_text(b"object")))
                    })
            }
            b"additionalProperties" => closed = json::trim_ws(v) == b"false",
            b"properties" => props = Some(v),
            b"required" => required = Some(v),
            _ => {}
        }
    }
    if object || props.is_some() {
        if !closed {
            return false;
        }
        for (name, _) in props.and_then(valid::Obj::of).into_iter().flatten() {
            let listed = required.and_then(valid::Arr::of).is_some_and(|mut r| {
                r.any(|n| valid::string(n).is_some_and(|n| n.raw() == name.raw()))
            });
            if !listed {
                return false;
            }
        }
    }
    // Every subschema: values of schema-holding keywords (not `enum`, `const`, defaults
    // or examples, whose objects are data).
    members.into_iter().all(|(k, v)| match k.raw() {
        b"enum" | b"const" | b"default" | b"examples" | b"required" | b"type" => true,
        b"properties" | b"$defs" | b"definitions" | b"patternProperties" | b"dependentSchemas" => {
            valid::Obj::of(v)
                .into_iter()
                .flatten()
                .all(|(_, s)| is_strict(s, depth - 1))
        }
        _ => is_strict(v, depth - 1),
    })
}

/// Whether writing `schema` for `provider` changes more than its white space: a Gemini
/// `$schema` left out, or `"properties":{}` added (see [`put_schema`]).
fn edits(provider: Provider, schema: &[u8]) -> bool {
    let (mut object, mut props) = (false, false);
    for (k, v) in valid::Obj::of(schema).into_iter().flatten() {
        if is_gemini(provider) && k.raw() == b"$schema" {
            return true;
        }
        let (o, p) = object_marks(k, v);
        (object, props) = (object | o, props | p);
    }
    object && !props
}

/// Whether a schema member says `"type":"object"`, and whether it is `properties`: an object
/// schema without `properties` gets `"properties":{}` (SPEC §10.1).
fn object_marks(k: JsonStr<'_>, v: &[u8]) -> (bool, bool) {
    (
        k.raw() == b"type" && valid::string(v).is_some_and(|t| t.eq_text(b"object")),
        k.raw() == b"properties",
    )
}

/// Writes the schema as SPEC §10.1 says (a `plain` one, [`check`] found, as it is): compact, `"properties":{}` added to an object
/// schema without it, and for Gemini a top-level `$schema` left out.
pub(crate) fn put_schema(provider: Provider, schema: Option<&[u8]>, plain: bool, s: &mut dyn Sink) {
    let Some(schema) = schema else {
        s.put(br#"{"type":"object","properties":{}}"#);
        return;
    };
    if plain {
        s.put(schema);
        return;
    }
    let (mut object, mut props) = (false, false);
    s.put(b"{");
    let mut first = true;
    for (k, v) in valid::Obj::of(schema).into_iter().flatten() {
        let (o, p) = object_marks(k, v);
        (object, props) = (object | o, props | p);
        if is_gemini(provider) && k.raw() == b"$schema" {
            continue;
        }
        if !first {
            s.put(b",");
        }
        first = false;
        s.put(b"\"");
        s.put(k.raw());
        s.put(b"\"");
        s.put(b":");
        s.put_raw(v);
    }
    if object && !props {
        if !first {
            s.put(b",");
        }
        s.put(br#""properties":{}"#);
    }
    s.put(b"}");
}

fn is_gemini(provider: Provider) -> bool {
    #[cfg(feature = "gemini")]
    if provider == Provider::Gemini {
        return true;
    }
    let _ = provider;
    false
}

/// One declaration in the provider's shape (the `tools` array's element; Gemini's
/// `functionDeclarations` element).
pub(crate) fn put_declaration(
    provider: Provider,
    decls: &[Declaration<'_>],
    i: usize,
    plain: bool,
    s: &mut dyn Sink,
) {
    let d = &decls[i];
    let mut name = [0u8; MAX_NAME];
    let n = name_for(provider, decls, i, &mut name);
    let put_name = |s: &mut dyn Sink| {
        s.put(b"\"");
        s.put(&name[..n]);
        s.put(b"\"");
    };
    let put_desc = |s: &mut dyn Sink| {
        if let Some(t) = d.description {
            s.put(b",\"description\":");
            t.put(s);
        }
    };
    let strict = d.strict && strict_flag(provider);
    match provider {
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses => {
            s.put(b"{\"type\":\"function\",\"name\":");
            put_name(s);
            put_desc(s);
            s.put(b",\"parameters\":");
            put_schema(provider, d.schema, plain, s);
            s.put(if strict {
                b",\"strict\":true}"
            } else {
                b",\"strict\":false}"
            });
        }
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => {
            s.put(b"{\"name\":");
            put_name(s);
            put_desc(s);
            s.put(b",\"input_schema\":");
            put_schema(provider, d.schema, plain, s);
            if strict {
                s.put(b",\"strict\":true");
            }
            s.put(b"}");
        }
        #[cfg(feature = "gemini")]
        Provider::Gemini => {
            s.put(b"{\"name\":");
            put_name(s);
            put_desc(s);
            s.put(b",\"parametersJsonSchema\":");
            put_schema(provider, d.schema, plain, s);
            s.put(b"}");
        }
        // openai-chat and ollama.
        #[allow(unreachable_patterns)]
        _ => {
            s.put(b"{\"type\":\"function\",\"function\":{\"name\":");
            put_name(s);
            put_desc(s);
            s.put(b",\"parameters\":");
            put_schema(provider, d.schema, plain, s);
            if strict {
                s.put(b",\"strict\":true");
            }
            s.put(b"}}");
        }
    }
}
