//! The core's data flows one way: no module of `core/src` imports, directly or through
//! others, a module that imports it back (core/DESIGN.md "Architecture").
//!
//! The graph is read from the source: every `use` item and every inline `crate::…` /
//! `super::…` path outside `#[cfg(test)]` modules is an edge to the module it names (the
//! longest prefix that is a module file). Declaring a child (`mod x;`) is not an import, and
//! the crate root's `pub use` facade is left out: no module reaches another through it
//! (checked too). A cycle fails the test with its path.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Module path (`crate::wrapper::slots`) of a file under `src`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    std::iter::once("crate".to_string())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read core/src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without comments, string literals and `#[cfg(test)]` items.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i32> = None;
    let mut depth = 0i32;
    let mut pending_test = false;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim();
        if skip_depth.is_none() && trimmed.starts_with("#[cfg(test)]") {
            pending_test = true;
            continue;
        }
        let opens = code.matches('{').count() as i32;
        let closes = code.matches('}').count() as i32;
        if pending_test && skip_depth.is_none() {
            if trimmed.ends_with(';') && opens == 0 {
                // A `#[cfg(test)] mod x;` or a one-line item.
                pending_test = false;
                continue;
            }
            if opens > 0 {
                skip_depth = Some(depth);
                pending_test = false;
            }
        }
        depth += opens - closes;
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        // String literals can hold `crate::` in messages: drop them.
        let mut in_str = false;
        let mut prev = ' ';
        for c in code.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                out.push(c);
            }
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// Every path a `use` item or an inline path names, as written (`super::x::Y`, `crate::a`).
fn paths_in(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    // `use` items, braces expanded one level at a time.
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let item = &rest[at + 4..];
        let end = item.find(';').unwrap_or(item.len());
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            expand(item[..end].trim(), &mut paths);
        }
        rest = &item[end.min(item.len())..];
    }
    // Inline paths.
    for prefix in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(prefix) {
            let start = from + i;
            let before = code[..start].chars().last();
            let tail: String = code[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if before.is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != ':') {
                paths.push(tail.trim_end_matches(':').to_string());
            }
            from = start + prefix.len();
        }
    }
    paths
}

/// `a::{b, c::{d}}` → `a::b`, `a::c::d`.
fn expand(item: &str, out: &mut Vec<String>) {
    let item: String = item.split_whitespace().collect::<Vec<_>>().join("");
    fn go(prefix: &str, s: &str, out: &mut Vec<String>) {
        match s.find('{') {
            None => {
                let s = s.split("as").next().unwrap_or(s);
                out.push(format!("{prefix}{s}").trim_end_matches("::").to_string());
            }
            Some(open) => {
                let head = format!("{prefix}{}", &s[..open]);
                let inner = &s[open + 1..s.rfind('}').unwrap_or(s.len())];
                let mut depth = 0;
                let mut part = String::new();
                for c in inner.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            go(&head, part.trim(), out);
                            part.clear();
                            continue;
                        }
                        _ => {}
                    }
                    part.push(c);
                }
                if !part.trim().is_empty() {
                    go(&head, part.trim(), out);
                }
            }
        }
    }
    go("", &item, out);
}

/// The module a path names from `from`: its longest prefix that is a module.
fn resolve(from: &str, path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = match segs.first() {
        Some(&"crate") => {
            segs.remove(0);
            vec!["crate".into()]
        }
        Some(&"super") => {
            let mut b: Vec<String> = from.split("::").map(String::from).collect();
            while segs.first() == Some(&"super") {
                segs.remove(0);
                b.pop();
            }
            b
        }
        Some(&"self") => {
            segs.remove(0);
            from.split("::").map(String::from).collect()
        }
        // A child module (`use round::Round;` inside `wrapper`), or an outside crate.
        Some(first) if modules.contains(&format!("{from}::{first}")) => {
            from.split("::").map(String::from).collect()
        }
        _ => return None,
    };
    let mut best = base.join("::");
    for s in segs {
        base.push(s.to_string());
        let candidate = base.join("::");
        if modules.contains(&candidate) {
            best = candidate;
        } else {
            break;
        }
    }
    Some(best)
}

fn core_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let from = module_of(&src, file);
        let code = code_of(&fs::read_to_string(file).expect("read"));
        let mut to = BTreeSet::new();
        for path in paths_in(&code) {
            if let Some(m) = resolve(&from, &path, &modules) {
                // The root is a facade of re-exports; a module's own items are no edge.
                if m != "crate" && m != from && from != "crate" {
                    to.insert(m);
                }
            }
        }
        graph.insert(from, to);
    }
    graph
}

/// A cycle, as the modules along it, if the graph has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for next in graph.get(m).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let at = stack.iter().position(|s| s == next).unwrap_or(0);
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        if !state.contains_key(m) {
            let mut stack = Vec::new();
            if let Some(c) = visit(m, graph, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_core_module_graph_has_no_cycle() {
    let graph = core_graph();
    assert!(graph.len() > 20, "read {} modules", graph.len());
    if let Some(cycle) = find_cycle(&graph) {
        panic!("module cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_output_storage_imports_nothing_of_the_state_machines() {
    let graph = core_graph();
    for leaf in ["crate::queue", "crate::held", "crate::route", "crate::room"] {
        let deps = &graph[leaf];
        for dep in deps {
            assert!(
                !dep.starts_with("crate::wrapper") && dep != "crate::call",
                "{leaf} imports {dep}"
            );
        }
    }
    assert!(
        graph["crate::route"].is_empty(),
        "route: {:?}",
        graph["crate::route"]
    );
    assert!(
        graph["crate::room"].is_empty(),
        "room: {:?}",
        graph["crate::room"]
    );
}

#[test]
fn no_module_reaches_another_through_the_root() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files.iter().filter(|f| !f.ends_with("lib.rs")) {
        let code = code_of(&fs::read_to_string(file).expect("read"));
        for path in paths_in(&code) {
            let segs: Vec<&str> = path.split("::").collect();
            if segs.first() == Some(&"crate") {
                let next = segs.get(1).copied().unwrap_or("");
                assert!(
                    next.chars().next().is_none_or(char::is_lowercase),
                    "{} uses the root re-export {path}",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn the_graph_reader_finds_a_planted_cycle() {
    // The reader itself, on a known graph: a → b → c → a.
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    g.insert("c".to_string(), BTreeSet::new());
    assert_eq!(find_cycle(&g), None);
    // And the parser on the shapes the core writes.
    let mut out = Vec::new();
    expand("super::{round::{CallRef, Delivery}, Wrapper}", &mut out);
    assert_eq!(
        out,
        [
            "super::round::CallRef",
            "super::round::Delivery",
            "super::Wrapper"
        ]
    );
    let modules = BTreeSet::from([
        "crate".to_string(),
        "crate::wrapper".to_string(),
        "crate::wrapper::round".to_string(),
    ]);
    assert_eq!(
        resolve("crate::wrapper::slots", "super::round::CallRef", &modules),
        Some("crate::wrapper::round".into())
    );
    assert_eq!(
        resolve("crate::wrapper", "round::Round", &modules),
        Some("crate::wrapper::round".into())
    );
    assert_eq!(resolve("crate::wrapper", "heapless::Vec", &modules), None);
    let code = code_of("use crate::a;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n");
    assert_eq!(paths_in(&code), ["crate::a", "crate::a"]);
}

#[test]
fn no_core_file_is_over_650_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in &files {
        let lines = fs::read_to_string(file).expect("read").lines().count();
        assert!(lines <= 650, "{} has {lines} lines", file.display());
    }
}
