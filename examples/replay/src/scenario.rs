//! Reading a scenario file (SPEC §6) into steps, with errors that name the step.

use serde_json::Value;

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
    pub id: Option<String>,
    pub args: String,
    pub steps: Vec<Step>,
}

pub enum Scenario {
    Wrapper(WrapperScenario),
    Call(CallScenario),
}

/// A frame given as an object (serialised as written) or as a string (its raw text).
fn frame_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(raw) => raw.as_bytes().to_vec(),
        other => serde_json::to_vec(other).unwrap_or_default(),
    }
}

fn raw(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

fn u32_opt(obj: &Value, key: &str, default: u32) -> Result<u32, String> {
    match obj.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{key} must be a whole number of at most 4294967295")),
    }
}

fn bool_opt(obj: &Value, key: &str, default: bool) -> Result<bool, String> {
    match obj.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| format!("{key} must be true or false")),
    }
}

fn call_index(step: &Value, key: &str) -> Result<u64, String> {
    step[key]
        .as_u64()
        .ok_or_else(|| format!("{key} must be a call number (0 or more)"))
}

fn parse_step(step: &Value, call_mode: bool) -> Result<Step, String> {
    if !step.is_object() {
        return Err("a step must be an object".into());
    }
    let at = match step.get("at") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or("at must be a whole number of milliseconds")?,
        ),
    };
    let has = |k: &str| step.get(k).is_some();
    let kind = if call_mode {
        if has("frame") {
            StepKind::CallFrame(frame_bytes(&step["frame"]))
        } else if step.get("close") == Some(&Value::Bool(true)) {
            StepKind::CallClose
        } else if step.get("tick") == Some(&Value::Bool(true)) {
            StepKind::Tick
        } else {
            return Err("a call step needs frame, close: true or tick: true".into());
        }
    } else if has("response") {
        StepKind::Response(frame_bytes(&step["response"]))
    } else if has("request") {
        StepKind::Request(frame_bytes(&step["request"]))
    } else if has("complete") {
        let error = match step.get("error") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(raw(other)),
        };
        let result = step.get("result").map_or_else(|| "null".to_string(), raw);
        StepKind::Complete {
            call: call_index(step, "complete")?,
            result,
            error,
        }
    } else if has("adapter") {
        let call = call_index(step, "adapter")?;
        let frame = step.get("frame").map(frame_bytes);
        let close = step.get("close") == Some(&Value::Bool(true));
        if frame.is_none() && !close {
            return Err("an adapter step needs frame or close: true".into());
        }
        StepKind::Adapter { call, frame, close }
    } else if step.get("abort") == Some(&Value::Bool(true)) {
        StepKind::Abort
    } else if has("cancel") {
        StepKind::Cancel(
            step["cancel"]
                .as_str()
                .ok_or("cancel must be a string (the reason)")?
                .to_string(),
        )
    } else if step.get("clearTrace") == Some(&Value::Bool(true)) {
        StepKind::ClearTrace
    } else if step.get("tick") == Some(&Value::Bool(true)) {
        StepKind::Tick
    } else {
        return Err("unknown step: expected response, request, complete, adapter, abort, cancel, clearTrace or tick".into());
    };
    Ok(Step { at, kind })
}

fn parse_steps(doc: &Value, call_mode: bool) -> Result<Vec<Step>, String> {
    let steps = doc
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("steps must be an array")?;
    let mut out = Vec::with_capacity(steps.len());
    let mut clock = 0;
    for (i, s) in steps.iter().enumerate() {
        let step = parse_step(s, call_mode).map_err(|e| format!("step {i}: {e}"))?;
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

fn parse_tool(spec: &Value) -> Result<ToolSpec, String> {
    match spec.get("kind").and_then(Value::as_str) {
        Some("deferred") => Ok(ToolSpec::Deferred),
        Some("adapter") => Ok(ToolSpec::Adapter),
        Some("sync") => Ok(
            if let Some(e) = spec.get("error").filter(|e| !e.is_null()) {
                ToolSpec::SyncError(e.as_str().map_or_else(|| raw(e), str::to_owned))
            } else if spec.get("echo") == Some(&Value::Bool(true)) {
                ToolSpec::SyncEcho
            } else {
                ToolSpec::SyncResult(spec.get("result").map_or_else(|| "null".to_string(), raw))
            },
        ),
        _ => Err("kind must be sync, deferred or adapter".into()),
    }
}

/// Reads and checks a scenario file.
pub fn load(path: &str) -> Result<Scenario, String> {
    let text = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let doc: Value = serde_json::from_slice(&text).map_err(|e| format!("not JSON: {e}"))?;
    if !doc.is_object() {
        return Err("a scenario must be a JSON object".into());
    }
    // A missing mode means a wrapper; `aborted` is read from the options only (SPEC §6).
    match doc.get("mode").map(Value::as_str) {
        None | Some(Some("wrapper")) => {
            let empty = Value::Object(Default::default());
            let opts = doc.get("options").unwrap_or(&empty);
            if !opts.is_object() {
                return Err("options must be an object".into());
            }
            let mut tools = Vec::new();
            if let Some(map) = doc.get("tools") {
                let map = map.as_object().ok_or("tools must be an object")?;
                for (name, spec) in map {
                    tools.push((
                        name.clone(),
                        parse_tool(spec).map_err(|e| format!("tool {name:?}: {e}"))?,
                    ));
                }
            }
            Ok(Scenario::Wrapper(WrapperScenario {
                tools,
                mirror_continue: bool_opt(opts, "mirrorContinue", true)?,
                tool_timeout_ms: u32_opt(opts, "toolTimeoutMs", 30_000)?,
                max_pending: match u32_opt(opts, "maxPending", 8)? {
                    n if n > MAX_PENDING => {
                        return Err(format!(
                            "maxPending {n} exceeds the replay's {MAX_PENDING} slots"
                        ))
                    }
                    n => n as usize,
                },
                max_rounds: u32_opt(opts, "maxRounds", 0)?,
                aborted: bool_opt(opts, "aborted", false)?,
                full_validation: bool_opt(opts, "fullValidation", false)?,
                steps: parse_steps(&doc, false)?,
            }))
        }
        Some(Some("call")) => Ok(Scenario::Call(CallScenario {
            name: match doc.get("name") {
                None => "unknown".into(),
                Some(v) => v.as_str().ok_or("name must be a string")?.to_string(),
            },
            timeout_ms: u32_opt(&doc, "timeoutMs", 30_000)?,
            id: match doc.get("id") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_str().ok_or("id must be a string")?.to_string()),
            },
            args: doc.get("args").map_or_else(|| "{}".to_string(), raw),
            steps: parse_steps(&doc, true)?,
        })),
        _ => Err("mode must be \"wrapper\" or \"call\"".into()),
    }
}
