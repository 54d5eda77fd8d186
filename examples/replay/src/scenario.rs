//! Reading a scenario file (SPEC §6) into steps, with errors that name the step.
//!
//! serde_json reads a copy of the file in which each escaped lone surrogate (`\ud800`, as
//! JavaScript's `JSON.stringify` writes one) reads `\uFFFD` ([`surrogates::masked`]: same
//! length, same offsets). So strings the replay decodes (tool names, ids, error messages,
//! cancel reasons) get U+FFFD, as the core's do (SPEC §7.24). Raw JSON (frames, results,
//! args) is never re-serialised: it is the original file's bytes under each value's span, with
//! number text, escapes, white space and repeated members as written (SPEC §1, §7.16).
//! Only what a step needs is decoded, so raw values may be nested to any depth.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::surrogates;

/// Most pending-call slots a replay gives a wrapper (each costs about 142 KiB of arena here).
pub const MAX_PENDING: u32 = 1024;

/// A sync, deferred or adapter tool of a scenario.
#[derive(Clone, Debug)]
pub enum ToolSpec {
    /// Returns this raw JSON.
    SyncResult(String),
    /// Returns its args.
    SyncEcho,
    /// Fails with this message.
    SyncError(String),
    /// Completed by `complete` steps.
    Deferred,
    /// Driven by `adapter` steps.
    Adapter,
}

/// What a step does.
#[derive(Clone, Debug)]
pub enum StepKind {
    Response(Vec<u8>),
    Request(Vec<u8>),
    Complete {
        call: u64,
        result: String,
        error: Option<String>,
    },
    /// A frame from call `call`'s tool adapter, then its close, or either alone.
    Adapter {
        call: u64,
        frame: Option<Vec<u8>>,
        close: bool,
    },
    Abort,
    Cancel(String),
    ClearTrace,
    Tick,
    CallFrame(Vec<u8>),
    CallClose,
}

/// One step and its clock.
#[derive(Clone, Debug)]
pub struct Step {
    pub at: Option<u64>,
    pub kind: StepKind,
}

pub struct WrapperScenario {
    pub tools: Vec<(String, ToolSpec)>,
    pub mirror_continue: bool,
    pub tool_timeout_ms: u32,
    /// `"maxTotalTimeoutMs"`: SPEC §5's cap on progress restarts (0: off).
    pub max_total_timeout_ms: u32,
    pub max_pending: usize,
    pub max_rounds: u32,
    pub aborted: bool,
    /// `"fullValidation"` (`Config::full_validation`, SPEC §7.25).
    pub full_validation: bool,
    pub steps: Vec<Step>,
}

pub struct CallScenario {
    pub name: String,
    pub timeout_ms: u32,
    /// Top-level `"maxTotalTimeoutMs"` (SPEC §5, §6).
    pub max_total_timeout_ms: u32,
    pub id: Option<String>,
    pub args: String,
    pub steps: Vec<Step>,
}

pub enum Scenario {
    Wrapper(WrapperScenario),
    Call(CallScenario),
}

/// The file as read, and the masked copy serde_json reads: the same length, the same offsets.
struct Source<'a> {
    file: &'a [u8],
    masked: &'a [u8],
}

impl<'a> Source<'a> {
    /// The file's own bytes under a value read from the masked copy.
    fn original(&self, value: &'a RawValue) -> &'a [u8] {
        let start = value.get().as_ptr() as usize - self.masked.as_ptr() as usize;
        &self.file[start..start + value.get().len()]
    }

    /// A raw JSON value (a result, args) as the file has it.
    fn raw(&self, value: &'a RawValue) -> String {
        // UTF-8: the masked copy is, and only ASCII hex digits differ from it.
        String::from_utf8_lossy(self.original(value)).into_owned()
    }

    /// A frame given as an object (or any non-string: its text as written) or as a string
    /// (its decoded text is the raw frame).
    fn frame(&self, value: &'a RawValue) -> Result<Vec<u8>, String> {
        Ok(match decoded_str(value)? {
            Some(text) => text.into_bytes(),
            None => self.original(value).to_vec(),
        })
    }

    /// An error message: a string decoded, any other value as written.
    fn message(&self, value: &'a RawValue) -> Result<String, String> {
        Ok(decoded_str(value)?.unwrap_or_else(|| self.raw(value)))
    }
}

/// A value decoded (from the masked copy).
fn decode(value: &RawValue) -> Result<Value, String> {
    serde_json::from_str(value.get()).map_err(|e| e.to_string())
}

/// A string value decoded, or `None` when the value is not a string.
fn decoded_str(value: &RawValue) -> Result<Option<String>, String> {
    if !value.get().starts_with('"') {
        return Ok(None);
    }
    serde_json::from_str(value.get()).map_err(|e| e.to_string())
}

/// An array's elements, or `None` when the value is not an array.
fn elements(value: &RawValue) -> Option<Vec<&RawValue>> {
    if !value.get().starts_with('[') {
        return None;
    }
    serde_json::from_str(value.get()).ok()
}

/// An object's members in file order, each a value of the masked copy. A repeated name keeps
/// its first place and its last value, as serde_json's `Value` has it.
#[derive(Default)]
struct Obj<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Obj<'a> {
    /// The value as an object, or `None` when it is not one.
    fn parse(value: &'a RawValue) -> Option<Self> {
        if !value.get().starts_with('{') {
            return None;
        }
        serde_json::from_str(value.get()).ok()
    }

    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The member decoded.
    fn value(&self, key: &str) -> Result<Option<Value>, String> {
        self.get(key).map(decode).transpose()
    }

    /// Whether the member is `true`.
    fn is_true(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| v.get() == "true")
    }
}

impl<'de> Deserialize<'de> for Obj<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Obj<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Obj<'de>, A::Error> {
                let mut members: Vec<(String, &'de RawValue)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    match members.iter_mut().find(|(k, _)| *k == key) {
                        Some(member) => member.1 = value,
                        None => members.push((key, value)),
                    }
                }
                Ok(Obj(members))
            }
        }
        d.deserialize_map(Members)
    }
}

fn u32_opt(obj: &Obj<'_>, key: &str, default: u32) -> Result<u32, String> {
    match obj.value(key)? {
        None => Ok(default),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{key} must be a whole number of at most 4294967295")),
    }
}

fn bool_opt(obj: &Obj<'_>, key: &str, default: bool) -> Result<bool, String> {
    match obj.value(key)? {
        None => Ok(default),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| format!("{key} must be true or false")),
    }
}

fn call_index(step: &Obj<'_>, key: &str) -> Result<u64, String> {
    step.value(key)?
        .and_then(|v| v.as_u64())
        .ok_or_else(|| format!("{key} must be a call number (0 or more)"))
}

fn parse_step<'a>(src: &Source<'a>, step: &'a RawValue, call_mode: bool) -> Result<Step, String> {
    let step = Obj::parse(step).ok_or("a step must be an object")?;
    let at = match step.value("at")? {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or("at must be a whole number of milliseconds")?,
        ),
    };
    let kind = if call_mode {
        if let Some(frame) = step.get("frame") {
            StepKind::CallFrame(src.frame(frame)?)
        } else if step.is_true("close") {
            StepKind::CallClose
        } else if step.is_true("tick") {
            StepKind::Tick
        } else {
            return Err("a call step needs frame, close: true or tick: true".into());
        }
    } else if let Some(frame) = step.get("response") {
        StepKind::Response(src.frame(frame)?)
    } else if let Some(frame) = step.get("request") {
        StepKind::Request(src.frame(frame)?)
    } else if step.has("complete") {
        let error = match step.get("error") {
            None => None,
            Some(e) if e.get() == "null" => None,
            Some(e) => Some(src.message(e)?),
        };
        let result = step
            .get("result")
            .map_or_else(|| "null".to_string(), |r| src.raw(r));
        StepKind::Complete {
            call: call_index(&step, "complete")?,
            result,
            error,
        }
    } else if step.has("adapter") {
        let call = call_index(&step, "adapter")?;
        let frame = step.get("frame").map(|f| src.frame(f)).transpose()?;
        let close = step.is_true("close");
        if frame.is_none() && !close {
            return Err("an adapter step needs frame or close: true".into());
        }
        StepKind::Adapter { call, frame, close }
    } else if step.is_true("abort") {
        StepKind::Abort
    } else if let Some(reason) = step.get("cancel") {
        StepKind::Cancel(decoded_str(reason)?.ok_or("cancel must be a string (the reason)")?)
    } else if step.is_true("clearTrace") {
        StepKind::ClearTrace
    } else if step.is_true("tick") {
        StepKind::Tick
    } else {
        return Err("unknown step: expected response, request, complete, adapter, abort, cancel, clearTrace or tick".into());
    };
    Ok(Step { at, kind })
}

fn parse_steps<'a>(src: &Source<'a>, doc: &Obj<'a>, call_mode: bool) -> Result<Vec<Step>, String> {
    let steps = doc
        .get("steps")
        .and_then(elements)
        .ok_or("steps must be an array")?;
    let mut out = Vec::with_capacity(steps.len());
    let mut clock = 0;
    for (i, s) in steps.into_iter().enumerate() {
        let step = parse_step(src, s, call_mode).map_err(|e| format!("step {i}: {e}"))?;
        if let Some(at) = step.at {
            if at < clock {
                return Err(format!(
                    "step {i}: at {at} is earlier than the previous step's {clock}"
                ));
            }
            clock = at;
        }
        out.push(step);
    }
    Ok(out)
}

fn parse_tool<'a>(src: &Source<'a>, spec: &'a RawValue) -> Result<ToolSpec, String> {
    // Not an object: no kind.
    let spec = Obj::parse(spec).unwrap_or_default();
    match spec.value("kind")?.as_ref().and_then(Value::as_str) {
        Some("deferred") => Ok(ToolSpec::Deferred),
        Some("adapter") => Ok(ToolSpec::Adapter),
        Some("sync") => Ok(
            if let Some(e) = spec.get("error").filter(|e| e.get() != "null") {
                ToolSpec::SyncError(src.message(e)?)
            } else if spec.is_true("echo") {
                ToolSpec::SyncEcho
            } else {
                ToolSpec::SyncResult(
                    spec.get("result")
                        .map_or_else(|| "null".to_string(), |r| src.raw(r)),
                )
            },
        ),
        _ => Err("kind must be sync, deferred or adapter".into()),
    }
}

/// Reads and checks a scenario file.
pub fn load(path: &str) -> Result<Scenario, String> {
    let file = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let masked = surrogates::masked(&file);
    let src = Source {
        file: &file,
        masked: &masked,
    };
    let doc: &RawValue = serde_json::from_slice(&masked).map_err(|e| format!("not JSON: {e}"))?;
    let doc = Obj::parse(doc).ok_or("a scenario must be a JSON object")?;
    // A missing mode means a wrapper; `aborted` is read from the options only (SPEC §6).
    match doc.value("mode")?.as_ref().map(Value::as_str) {
        None | Some(Some("wrapper")) => {
            let opts = match doc.get("options") {
                None => Obj::default(),
                Some(o) => Obj::parse(o).ok_or("options must be an object")?,
            };
            let mut tools = Vec::new();
            if let Some(map) = doc.get("tools") {
                // Names are the decoded keys: `"\ud800"` registers the tool "\u{FFFD}".
                let map = Obj::parse(map).ok_or("tools must be an object")?;
                for (name, spec) in &map.0 {
                    tools.push((
                        name.clone(),
                        parse_tool(&src, spec).map_err(|e| format!("tool {name:?}: {e}"))?,
                    ));
                }
            }
            Ok(Scenario::Wrapper(WrapperScenario {
                tools,
                mirror_continue: bool_opt(&opts, "mirrorContinue", true)?,
                tool_timeout_ms: u32_opt(&opts, "toolTimeoutMs", 30_000)?,
                max_total_timeout_ms: u32_opt(&opts, "maxTotalTimeoutMs", 0)?,
                max_pending: match u32_opt(&opts, "maxPending", 8)? {
                    n if n > MAX_PENDING => {
                        return Err(format!(
                            "maxPending {n} exceeds the replay's {MAX_PENDING} slots"
                        ))
                    }
                    n => n as usize,
                },
                max_rounds: u32_opt(&opts, "maxRounds", 0)?,
                aborted: bool_opt(&opts, "aborted", false)?,
                full_validation: bool_opt(&opts, "fullValidation", false)?,
                steps: parse_steps(&src, &doc, false)?,
            }))
        }
        Some(Some("call")) => Ok(Scenario::Call(CallScenario {
            name: match doc.get("name") {
                None => "unknown".into(),
                Some(v) => decoded_str(v)?.ok_or("name must be a string")?,
            },
            timeout_ms: u32_opt(&doc, "timeoutMs", 30_000)?,
            max_total_timeout_ms: u32_opt(&doc, "maxTotalTimeoutMs", 0)?,
            id: match doc.get("id") {
                None => None,
                Some(v) if v.get() == "null" => None,
                Some(v) => Some(decoded_str(v)?.ok_or("id must be a string")?),
            },
            args: doc
                .get("args")
                .map_or_else(|| "{}".to_string(), |a| src.raw(a)),
            steps: parse_steps(&src, &doc, true)?,
        })),
        _ => Err("mode must be \"wrapper\" or \"call\"".into()),
    }
}
