//! The Python binding (`examples/python/polyweave_tool_adapter/_ffi.py`) copies the header's
//! constants and struct layouts: checked here against `include/polyweave_tool_adapter.h`, so a
//! header change that the binding misses fails. (The npm package copies nothing: its build
//! generates `abi.mjs` from the header, and `test/package.test.mjs` checks those layouts
//! against the wasm module's own.)
//!
//! - Every constant the binding defines (`PW_X = n`) is the header's `PW_X`, with the header's
//!   value.
//! - Every value of a header enum family (tool kinds, statuses, dispositions, completions,
//!   routes, pending kinds, frame kinds, providers, what a pushed frame came to, tool choices)
//!   that a binding copies at all, it copies whole.
//! - Every struct a binding declares has the header's fields, in order, with types of the
//!   same size and kind (integers by width, pointers, nested structs by name).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A field type, reduced to what the layout depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ty {
    U8,
    U16,
    U32,
    U64,
    Usize,
    Ptr,
    Struct(String),
}

/// Names the header declares as `uint32_t`-sized enums.
const ENUMS: [&str; 21] = [
    "pw_result",
    "pw_frame_kind",
    "pw_tool_kind",
    "pw_tool_status",
    "pw_disposition_kind",
    "pw_completed",
    "pw_route",
    "pw_pending_kind",
    "pw_output_kind",
    "pw_provider",
    "pw_mcp_client_state",
    "pw_mcp_handled_kind",
    "pw_mcp_failure",
    "pw_mcp_event_kind",
    "pw_mcp_skip",
    "pw_mcp_start_error",
    "pw_mcp_revision",
    "pw_mcp_post_kind",
    "pw_pushed",
    "pw_tool_choice",
    "pw_schema_error_kind",
];

/// A C type as written in the header or in a Python field declaration.
fn c_type(t: &str) -> Option<Ty> {
    let t = t.trim().trim_start_matches("const ").trim();
    if t.ends_with('*') || t == "pw_sync_fn" || t.starts_with("pw_on_") {
        return Some(Ty::Ptr);
    }
    Some(match t {
        "uint8_t" => Ty::U8,
        "uint16_t" => Ty::U16,
        "uint32_t" => Ty::U32,
        "uint64_t" => Ty::U64,
        "size_t" => Ty::Usize,
        _ if ENUMS.contains(&t) => Ty::U32,
        _ => Ty::Struct(t.trim_start_matches("struct ").trim().to_string()),
    })
}

/// Strips `/* … */` comments.
fn no_block_comments(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    out.push_str(rest);
    out
}

struct Header {
    constants: BTreeMap<String, u128>,
    /// Each enum's members, by enum name.
    enums: BTreeMap<String, Vec<String>>,
    structs: BTreeMap<String, Vec<(String, Ty)>>,
}

fn number(v: &str) -> Option<u128> {
    let v = v.trim().trim_start_matches('(').trim_end_matches(')');
    match v {
        "UINT32_MAX" => Some(u32::MAX as u128),
        "UINT64_MAX" => Some(u64::MAX as u128),
        _ if v.starts_with("0x") || v.starts_with("0X") => u128::from_str_radix(&v[2..], 16).ok(),
        _ => v.parse().ok(),
    }
}

fn header() -> Header {
    let text = no_block_comments(&read("include/polyweave_tool_adapter.h"));
    let mut constants = BTreeMap::new();
    let mut enums = BTreeMap::new();
    let mut structs = BTreeMap::new();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        if let (Some("#define"), Some(name), Some(value), None) =
            (w.next(), w.next(), w.next(), w.next())
        {
            if let Some(n) = name.starts_with("PW_").then(|| number(value)).flatten() {
                constants.insert(name.to_string(), n);
            }
        }
    }
    // `enum pw_x … { A = 0, B = 1, };`
    let mut rest = text.as_str();
    while let Some(i) = rest.find("\nenum pw_") {
        let body = &rest[i + 6..];
        let name: String = body
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let open = body.find('{').expect("enum body");
        let close = body.find("};").expect("enum end");
        let mut members = Vec::new();
        for m in body[open + 1..close].split(',') {
            if let Some((k, v)) = m.split_once('=') {
                let k = k.trim().to_string();
                constants.insert(k.clone(), number(v).expect("enum value"));
                members.push(k);
            }
        }
        enums.insert(name, members);
        rest = &body[close..];
    }
    // `typedef struct pw_x { … } pw_x;`
    let mut rest = text.as_str();
    while let Some(i) = rest.find("typedef struct pw_") {
        let body = &rest[i + "typedef struct ".len()..];
        let name: String = body
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = &body[name.len()..];
        if !after.trim_start().starts_with('{') {
            rest = after;
            continue;
        }
        let open = after.find('{').unwrap();
        let close = after.find('}').expect("struct end");
        let fields = after[open + 1..close]
            .split(';')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(|f| {
                // A function pointer: `void (*name)(…)`.
                if let Some(at) = f.find("(*") {
                    let name = &f[at + 2..at + f[at..].find(')').expect("name end")];
                    return (name.to_string(), Ty::Ptr);
                }
                let split = f.rfind([' ', '*']).expect("type and name");
                let (ty, field) = f.split_at(split + 1);
                (field.trim().to_string(), c_type(ty).expect("type"))
            })
            .collect();
        structs.insert(name, fields);
        rest = &after[close..];
    }
    assert!(constants.len() > 60 && enums.len() == ENUMS.len() && structs.len() > 10);
    Header {
        constants,
        enums,
        structs,
    }
}

/// What a binding copied.
struct Copy {
    constants: BTreeMap<String, u128>,
    structs: BTreeMap<String, Vec<(String, Ty)>>,
}

fn python() -> Copy {
    let text = read("examples/python/polyweave_tool_adapter/_ffi.py");
    let mut constants = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(" = ") {
            if k.starts_with("PW_") && !k.contains(' ') {
                if let Some(n) = number(v) {
                    constants.insert(k.to_string(), n);
                }
            }
        }
    }
    let py_type = |t: &str| -> Ty {
        match t {
            "c_uint8" => Ty::U8,
            "c_uint16" => Ty::U16,
            "c_uint32" | "pw_result" | "pw_frame_kind" => Ty::U32,
            "c_uint64" => Ty::U64,
            "c_size_t" => Ty::Usize,
            _ if t == "c_void_p"
                || t == "c_char_p"
                || t.starts_with("POINTER(")
                || t.ends_with("_fn") =>
            {
                Ty::Ptr
            }
            _ => Ty::Struct(t.to_string()),
        }
    };
    let mut structs = BTreeMap::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("\nclass pw_") {
        let body = &rest[i + 7..];
        let name: String = body
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let next = body[1..].find("\nclass ").map_or(body.len(), |j| j + 1);
        let class = &body[..next];
        if let Some(f) = class.find("_fields_ = [") {
            let list = &class[f + 12..class[f..].find(']').map_or(class.len(), |j| f + j)];
            // `("name", type)` entries; a type may be `POINTER(x)`.
            let fields = list
                .split("(\"")
                .skip(1)
                .map(|e| {
                    let (field, rest) = e.split_once("\",").expect("field");
                    let ty = rest.trim();
                    let ty = match ty.find("),") {
                        Some(j) => &ty[..j + 1],
                        None => ty.trim_end_matches(',').trim_end_matches(')'),
                    };
                    let ty = ty.trim().trim_end_matches(')');
                    let ty = if ty.starts_with("POINTER(") {
                        "POINTER(x)"
                    } else {
                        ty
                    };
                    (field.to_string(), py_type(ty))
                })
                .collect();
            structs.insert(name, fields);
        }
        rest = &body[next..];
    }
    Copy { constants, structs }
}

fn check(binding: &str, copy: &Copy, h: &Header) -> Vec<String> {
    let mut problems = Vec::new();
    for (k, v) in &copy.constants {
        match h.constants.get(k) {
            None => problems.push(format!("{binding}: {k} is not in the header")),
            Some(hv) if hv != v => {
                problems.push(format!("{binding}: {k} = {v}, the header says {hv}"))
            }
            _ => {}
        }
    }
    for (name, members) in &h.enums {
        if name == "pw_result" {
            continue;
        }
        let copied = members
            .iter()
            .filter(|m| copy.constants.contains_key(*m))
            .count();
        if copied > 0 && copied < members.len() {
            let missing: Vec<_> = members
                .iter()
                .filter(|m| !copy.constants.contains_key(*m))
                .collect();
            problems.push(format!("{binding}: {name} lacks {missing:?}"));
        }
    }
    for (name, fields) in &copy.structs {
        match h.structs.get(name) {
            None => problems.push(format!("{binding}: struct {name} is not in the header")),
            Some(want) if want != fields => problems.push(format!(
                "{binding}: struct {name} is {fields:?}, the header says {want:?}"
            )),
            _ => {}
        }
    }
    problems
}

#[test]
fn python_copies_match_the_header() {
    let h = header();
    let py = python();
    assert!(
        py.structs.len() >= 10 && py.constants.len() >= 50,
        "python read"
    );
    let problems = check("python", &py, &h);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_sees_a_wrong_copy() {
    let h = header();
    let mut py = python();
    py.constants.insert("PW_ROUTE_MODEL".into(), 7);
    py.constants.remove("PW_COMPLETED_AS_GIVEN");
    if let Some(f) = py.structs.get_mut("pw_transmit") {
        f.swap(0, 1);
    }
    let problems = check("python", &py, &h);
    assert!(
        problems.iter().any(|p| p.contains("PW_ROUTE_MODEL = 7")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("pw_completed lacks")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("struct pw_transmit")),
        "{problems:?}"
    );
}
