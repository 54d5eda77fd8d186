//! tests/SPEC-INDEX.md, the index from each section of the specification to the tests that
//! name it, is generated here from the tests' own `SPEC §N[.M]` tags and checked to be the
//! file in the repository: a reader looking for the test of a rule finds it there, and the
//! index cannot go stale. `PW_BLESS=1 cargo test -p polyweave-tests --test spec_index`
//! rewrites it.
//!
//! The test sources are found by walking the repository (files move; no list to keep):
//! every Rust file under `tests/` (not the benches) or under a crate's `tests/` folder, the
//! `#[cfg(test)]` modules of every other Rust file, and the JavaScript, Python and C files
//! under a folder named `test` or `tests`. A tag belongs to the function (or other item) it
//! is in, or that the comment holding it stands right above; a tag in a file's header (or in
//! a comment a blank line separates from the next item) belongs to the whole file.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use polyweave_tests::library::workspace_root;

/// The index, from the workspace root.
const INDEX: &str = "tests/SPEC-INDEX.md";
/// The repository's copy of the specification, from the workspace root.
const SPEC: &str = "tests/data/SPEC.md";
/// The tag, `SPEC §` (written with an escape so that this file's own text holds no tag).
const TAG: &str = "SPEC \u{a7}";
/// What a tag that is on no one item (in a file's header, or a section comment) is listed as.
const WHOLE_FILE: &str = "(file)";

/// A section number: `[7, 22]` is §7.22. Ordered numerically.
type Section = Vec<u32>;

fn show(s: &[u32]) -> String {
    s.iter().map(u32::to_string).collect::<Vec<_>>().join(".")
}

// ------------------------------------------------------------------------ the specification

/// The numbered sections of the specification with a short title: `## N.` and `### N.M`
/// headings, and the numbered rules inside them (a rule at the left margin of `## 7.` is
/// §7.M; one nested under rule 2 of `## 3.` is §3.2.K; one under `### 10.2` is §10.2.K).
/// A `###` section whose rules go on with its parent's numbering (`### 9.1` holds rules 9 to
/// 12 of `## 9.`) gives them the parent's number (§9.9), and a heading's number wins over a
/// rule's (§9.1 is `### 9.1`, not rule 1 of `## 9.`).
fn spec_sections(spec: &str) -> BTreeMap<Section, String> {
    let mut out = BTreeMap::new();
    let mut headings = BTreeMap::new();
    // The heading's number, and the rule numbers of the open list levels.
    let mut head: Section = Vec::new();
    // Where the current `###` section's first rule showed whose numbering its rules follow.
    let mut sub_checked = false;
    let mut rules: Vec<(usize, u32)> = Vec::new();
    let mut fenced = false;
    for line in spec.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("## ")
            .or_else(|| line.strip_prefix("### "))
        {
            let (num, title) = rest.split_once(' ').unwrap_or((rest, ""));
            let num: Option<Section> = num
                .trim_end_matches('.')
                .split('.')
                .map(|p| p.parse().ok())
                .collect();
            rules.clear();
            sub_checked = false;
            match num {
                Some(n) => {
                    headings.insert(n.clone(), short(title));
                    head = n;
                }
                None => head.clear(),
            }
            continue;
        }
        if head.is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let text = line.trim_start();
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 || !text[digits..].starts_with(". ") {
            continue;
        }
        let n: u32 = text[..digits].parse().unwrap();
        if !sub_checked && indent == 0 {
            sub_checked = true;
            if head.len() > 1 && n > 1 {
                head.truncate(1);
            }
        }
        while rules.last().is_some_and(|&(i, _)| i >= indent) {
            rules.pop();
        }
        rules.push((indent, n));
        let mut section = head.clone();
        section.extend(rules.iter().map(|&(_, n)| n));
        out.entry(section)
            .or_insert_with(|| short(&text[digits + 2..]));
    }
    out.extend(headings);
    out
}

/// A title of at most about 70 characters, without Markdown emphasis and the spec's
/// `[seed]`-style markers.
fn short(text: &str) -> String {
    let plain = text
        .replace("**[beyond]**", "")
        .replace("**[seed]**", "")
        .replace("**[settled]**", "")
        .replace("**", "");
    let plain = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    let plain = plain.replace(" .", ".").replace(" ,", ",");
    let plain = plain.trim_end_matches([':', '/', ' ']);
    if plain.chars().count() <= 70 {
        return plain.to_string();
    }
    let mut cut = String::new();
    for word in plain.split(' ') {
        if cut.chars().count() + word.chars().count() > 66 {
            break;
        }
        if !cut.is_empty() {
            cut.push(' ');
        }
        cut.push_str(word);
    }
    // An inline code span cut in half would swallow the rest of the line.
    if cut.matches('`').count() % 2 == 1 {
        cut.push('`');
    }
    cut.push_str(" …");
    cut
}

// ---------------------------------------------------------------------------------- the tags

/// A number `7`, `7.22` or `3.2.5` at the start of `s`, and what follows it (a `.` that
/// ends a sentence is left).
fn number(s: &str) -> Option<(Section, &str)> {
    let mut parts = Vec::new();
    let mut rest = s;
    loop {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        parts.push(rest[..digits].parse().ok()?);
        rest = &rest[digits..];
        match rest.strip_prefix('.') {
            Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => rest = r,
            _ => break,
        }
    }
    (!parts.is_empty()).then_some((parts, rest))
}

/// The sections named by the tag at the start of `s` (just after `SPEC §`): one number, a
/// range (`7.22–7.25`, `7.1-3`), and the numbers joined to it (`§3, §5 and §7`, `§1/§7`).
fn tag_sections(s: &str) -> Vec<Section> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some((first, after)) = number(rest) {
        rest = after;
        let range_end = ['\u{2013}', '-']
            .iter()
            .find_map(|d| rest.strip_prefix(*d))
            .map(|r| r.strip_prefix('\u{a7}').unwrap_or(r))
            .and_then(number);
        match range_end {
            Some((mut last, after)) => {
                rest = after;
                if last.len() == 1 && first.len() > 1 {
                    let mut full = first[..first.len() - 1].to_vec();
                    full.push(last[0]);
                    last = full;
                }
                let (head, a) = first.split_at(first.len() - 1);
                if last.len() == first.len() && last.starts_with(head) && a[0] <= last[head.len()] {
                    for k in a[0]..=last[head.len()] {
                        let mut s = head.to_vec();
                        s.push(k);
                        out.push(s);
                    }
                } else {
                    out.push(first);
                    out.push(last);
                }
            }
            None => out.push(first),
        }
        // Joined numbers: separators, then another `§`.
        let mut r = rest;
        loop {
            let t = r.trim_start_matches([',', ' ', '/']);
            match ["and ", "then ", "or "]
                .iter()
                .find_map(|w| t.strip_prefix(w))
            {
                Some(after) => r = after,
                None => {
                    r = t;
                    break;
                }
            }
        }
        match r.strip_prefix('\u{a7}') {
            Some(next) => rest = next,
            None => break,
        }
    }
    out
}

/// Every tag in `text`, with the byte offset where it starts.
fn tags_in(text: &str) -> Vec<(usize, Vec<Section>)> {
    text.match_indices(TAG)
        .map(|(at, _)| (at, tag_sections(&text[at + TAG.len()..])))
        .filter(|(_, s)| !s.is_empty())
        .collect()
}

// ------------------------------------------------------------- who a tag belongs to: sources

/// Whom a tag belongs to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Owner {
    /// The file as a whole (its header, or a section comment).
    File,
    /// A function, a test or another item, by its name.
    Item(String),
}

/// A tag found in a file: whom it belongs to and what it names.
#[derive(Debug)]
struct Found {
    owner: Owner,
    sections: Vec<Section>,
}

/// Collects tags: each is owned at once, or waits for the next item (a comment right above
/// it) until a blank line gives it to the file; a doc comment's waits past blank lines.
#[derive(Default)]
struct Collector {
    found: Vec<Found>,
    /// Tags waiting for their item, each with whether it is in a doc comment.
    pending: Vec<(Vec<Section>, bool)>,
}

impl Collector {
    fn add(&mut self, owner: Option<Owner>, sections: Vec<Section>) {
        self.add_doc(owner, sections, false);
    }

    fn add_doc(&mut self, owner: Option<Owner>, sections: Vec<Section>, doc: bool) {
        match owner {
            Some(owner) => self.found.push(Found { owner, sections }),
            None => self.pending.push((sections, doc)),
        }
    }

    /// A blank line: the waiting tags of plain comments go to the file.
    fn blank(&mut self) {
        let (docs, plain): (Vec<_>, Vec<_>) = self.pending.drain(..).partition(|(_, d)| *d);
        self.pending = docs;
        for (sections, _) in plain {
            self.found.push(Found {
                owner: Owner::File,
                sections,
            });
        }
    }

    fn give(&mut self, owner: Owner) {
        for (sections, _) in self.pending.drain(..) {
            self.found.push(Found {
                owner: owner.clone(),
                sections,
            });
        }
    }
}

/// The byte offsets where the tags of `text` start, each with its sections.
fn tag_starts(text: &str) -> BTreeMap<usize, Vec<Section>> {
    tags_in(text).into_iter().collect()
}

/// What a brace opened.
#[derive(Clone, Debug)]
struct Frame {
    /// The item that owns tags inside (a function, struct, enum or a JS test); `None` for a
    /// block, an `impl`, a module or a trait, whose tags wait for the item they stand above.
    owner: Option<String>,
    /// Inside `#[cfg(test)]`.
    test: bool,
    /// The nesting depth the frame's brace or parenthesis was opened at.
    depth: usize,
}

/// The tags of a Rust source, with their owners. With `whole` false only those inside
/// `#[cfg(test)]` items count.
fn rust_tags(text: &str, whole: bool) -> Vec<Found> {
    let tags = tag_starts(text);
    let b = text.as_bytes();
    let mut c = Collector::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut depth = 0usize;
    // The item whose brace comes next: its owner name (None: not an owner) and cfg(test).
    let mut item: Option<(Option<String>, bool)> = None;
    let mut expect_name: Option<bool> = None; // Some(owns)
    let mut cfg_test = false;
    let mut line_blank = true;
    let mut i = 0;
    // Where we are: 0 code, 1 line comment, 2 inner doc line comment, 3 string, 4 block
    // comment (with its nesting), 5 raw string (with its hashes), 6 doc line comment.
    let mut state = 0u8;
    let mut nest = 0usize;
    let mut hashes = 0usize;
    let mut block_inner = false;
    let counts = |frames: &[Frame]| whole || frames.iter().any(|f| f.test);
    while i < b.len() {
        if let Some(sections) = tags.get(&i) {
            if counts(&frames) {
                let owner = frames.iter().rev().find_map(|f| f.owner.clone());
                let owner = match (owner, state) {
                    (Some(name), _) => Some(Owner::Item(name)),
                    (None, 2) => Some(Owner::File),
                    (None, 4) if block_inner => Some(Owner::File),
                    (None, _) => None,
                };
                c.add_doc(owner, sections.clone(), state == 6);
            }
        }
        let ch = b[i];
        if ch == b'\n' {
            if line_blank && state != 3 && state != 5 && state != 4 {
                c.blank();
            }
            line_blank = true;
            if matches!(state, 1 | 2 | 6) {
                state = 0;
            }
            i += 1;
            continue;
        }
        if !ch.is_ascii_whitespace() {
            line_blank = false;
        }
        match state {
            1 | 2 | 6 => i += 1,
            3 => {
                i += if ch == b'\\' { 2 } else { 1 };
                if ch == b'"' {
                    state = 0;
                }
            }
            4 => {
                if b[i..].starts_with(b"*/") {
                    nest -= 1;
                    i += 2;
                    if nest == 0 {
                        state = 0;
                    }
                } else if b[i..].starts_with(b"/*") {
                    nest += 1;
                    i += 2;
                } else {
                    i += 1;
                }
            }
            5 => {
                if ch == b'"'
                    && b[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == b'#')
                        .count()
                        == hashes
                {
                    state = 0;
                    i += 1 + hashes;
                } else {
                    i += 1;
                }
            }
            _ => {
                if b[i..].starts_with(b"//!") {
                    state = 2;
                    i += 3;
                } else if b[i..].starts_with(b"///") && !b[i..].starts_with(b"////") {
                    state = 6;
                    i += 3;
                } else if b[i..].starts_with(b"//") {
                    state = 1;
                    i += 2;
                } else if b[i..].starts_with(b"/*") {
                    state = 4;
                    nest = 1;
                    block_inner = b[i..].starts_with(b"/*!");
                    i += 2;
                } else if ch == b'"' {
                    state = 3;
                    i += 1;
                } else if ch == b'\'' {
                    // A char literal ('a', '\n', '{', '§') or a lifetime ('a).
                    if b.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        while i < b.len() && b[i] != b'\'' {
                            i += 1;
                        }
                        i += 1;
                    } else {
                        let next = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                        if b.get(i + 1 + next) == Some(&b'\'') {
                            i += 2 + next;
                        } else {
                            i += 1;
                        }
                    }
                } else if b[i..].starts_with(b"#[cfg(test") {
                    cfg_test = true;
                    i += 10;
                } else if ch == b'{' {
                    let (owner, test) = item.take().unwrap_or((None, false));
                    frames.push(Frame { owner, test, depth });
                    depth += 1;
                    i += 1;
                } else if ch == b'}' {
                    depth = depth.saturating_sub(1);
                    if frames.last().is_some_and(|f| f.depth == depth) {
                        frames.pop();
                    }
                    i += 1;
                } else if ch == b';' {
                    item = None;
                    cfg_test = false;
                    i += 1;
                } else if ch.is_ascii_alphabetic() || ch == b'_' {
                    let start = i;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                    let word = &text[start..i];
                    // Raw strings: r"…", r#"…"#, br#"…"#.
                    if (word == "r" || word == "br") && matches!(b.get(i), Some(b'"' | b'#')) {
                        let h = b[i..].iter().take_while(|&&x| x == b'#').count();
                        if b.get(i + h) == Some(&b'"') {
                            hashes = h;
                            state = 5;
                            i += h + 1;
                            continue;
                        }
                    }
                    if let Some(owns) = expect_name.take() {
                        if word == "fn" || word == "mut" {
                            expect_name = Some(word == "fn" || owns);
                            continue;
                        }
                        let test = cfg_test || frames.iter().any(|f| f.test);
                        cfg_test = false;
                        if owns {
                            c.give(Owner::Item(word.to_string()));
                        }
                        item = Some((owns.then(|| word.to_string()), test));
                        continue;
                    }
                    // Items only outside an owner (a test's own helpers belong to the test);
                    // `fn(` is a type, `*const`, `&'static` and `<const N` are not items.
                    let in_owner = frames.iter().any(|f| f.owner.is_some());
                    let before = text[..start].trim_end().chars().last();
                    let in_type =
                        matches!(before, Some('*' | '\'' | '&' | '<' | ',' | ':' | '(' | '='));
                    match word {
                        _ if in_owner => {}
                        "fn" if !text[i..].trim_start().starts_with('(') => {
                            expect_name = Some(true)
                        }
                        "struct" | "enum" | "union" | "const" | "static" if !in_type => {
                            expect_name = Some(true)
                        }
                        "mod" | "trait" => expect_name = Some(false),
                        "impl" if item.is_none() => {
                            item = Some((None, cfg_test || frames.iter().any(|f| f.test)));
                            cfg_test = false;
                        }
                        _ => {}
                    }
                } else {
                    i += 1;
                }
            }
        }
    }
    c.give(Owner::File);
    c.found
}

/// The tags of a JavaScript or C source: a tag belongs to the `test('name', …)` (or `it`,
/// `describe`) call it is in, or to the top-level function whose body holds it; comments
/// right above one belong to it.
fn c_like_tags(text: &str) -> Vec<Found> {
    let tags = tag_starts(text);
    let b = text.as_bytes();
    let mut c = Collector::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut depth = 0usize;
    let mut last_call: Option<String> = None; // identifier before the last `(` at depth 0
    let mut pending_fn: Option<String> = None; // a top-level `name(…)` waiting for its `{`
    let mut line_blank = true;
    let mut quote = 0u8; // the open string's quote, 0 in code
    let mut comment = 0u8; // 1 line, 2 block
    let mut i = 0;
    while i < b.len() {
        if let Some(sections) = tags.get(&i) {
            let owner = frames.iter().rev().find_map(|f| f.owner.clone());
            c.add(owner.map(Owner::Item), sections.clone());
        }
        let ch = b[i];
        if ch == b'\n' {
            if line_blank && quote == 0 && comment != 2 {
                c.blank();
            }
            line_blank = true;
            if comment == 1 {
                comment = 0;
            }
            i += 1;
            continue;
        }
        if !ch.is_ascii_whitespace() {
            line_blank = false;
        }
        if comment == 1 {
            i += 1;
            continue;
        }
        if comment == 2 {
            if b[i..].starts_with(b"*/") {
                comment = 0;
                i += 1;
            }
            i += 1;
            continue;
        }
        if quote != 0 {
            if ch == b'\\' {
                i += 1;
            } else if ch == quote {
                quote = 0;
            }
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"//") {
            comment = 1;
            i += 2;
            continue;
        }
        if b[i..].starts_with(b"/*") {
            comment = 2;
            i += 2;
            continue;
        }
        match ch {
            b'"' | b'\'' | b'`' => quote = ch,
            b'(' => {
                // `test('name'` / `it("name"` / `describe(`name``: a test frame.
                let word = last_call.take();
                let is_test = matches!(word.as_deref(), Some("test" | "it" | "describe"));
                let arg = text[i + 1..].trim_start();
                let name = arg
                    .chars()
                    .next()
                    .filter(|q| is_test && matches!(q, '\'' | '"' | '`'))
                    .and_then(|q| arg[1..].split(q).next())
                    .map(str::to_string);
                if let Some(name) = name {
                    c.give(Owner::Item(name.clone()));
                    frames.push(Frame {
                        owner: Some(name),
                        test: true,
                        depth,
                    });
                } else if frames.is_empty() && depth == 0 {
                    pending_fn = word.filter(|w| {
                        !matches!(
                            w.as_str(),
                            "if" | "for" | "while" | "switch" | "catch" | "return" | "sizeof"
                        )
                    });
                }
                depth += 1;
            }
            b'{' => {
                let owner = if frames.is_empty() && depth == 0 {
                    pending_fn.take()
                } else {
                    None
                };
                if let Some(name) = &owner {
                    c.give(Owner::Item(name.clone()));
                }
                frames.push(Frame {
                    owner,
                    test: false,
                    depth,
                });
                depth += 1;
            }
            b')' | b'}' => {
                depth = depth.saturating_sub(1);
                if frames.last().is_some_and(|f| f.depth == depth) {
                    frames.pop();
                }
            }
            b';' if depth == 0 => pending_fn = None,
            _ => {}
        }
        if ch.is_ascii_alphabetic() || ch == b'_' || ch == b'$' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            let word = &text[start..i];
            if text[i..].trim_start().starts_with('(') {
                last_call = Some(word.to_string());
            } else if word != "function" && word != "async" {
                last_call = None;
            }
            continue;
        }
        i += 1;
    }
    c.give(Owner::File);
    c.found
}

/// The tags of a Python source: a tag belongs to the `def` (or `class`) whose body holds it,
/// the innermost; a comment right above one belongs to it; the module docstring and
/// anything else to the file.
fn python_tags(text: &str) -> Vec<Found> {
    let mut c = Collector::default();
    let mut defs: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if body.is_empty() {
            c.blank();
            continue;
        }
        if !body.starts_with('#') {
            while defs.last().is_some_and(|&(i, _)| i >= indent) {
                defs.pop();
            }
        }
        let def = ["def ", "async def ", "class "]
            .iter()
            .find_map(|k| body.strip_prefix(k))
            .map(|r| r.split(['(', ':']).next().unwrap_or("").trim().to_string());
        if let Some(name) = def {
            c.give(Owner::Item(name.clone()));
            defs.push((indent, name));
        }
        for (_, sections) in tags_in(line) {
            let owner = defs.last().map(|(_, n)| Owner::Item(n.clone()));
            let owner = match owner {
                Some(o) => Some(o),
                None if body.starts_with('#') => None,
                None => Some(Owner::File),
            };
            c.add(owner, sections);
        }
    }
    c.give(Owner::File);
    c.found
}

// --------------------------------------------------------------------------- finding sources

/// Every file under `dir`, sorted, leaving out build output, installed packages, hidden
/// folders and the data sets.
fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            let rel = path.strip_prefix(root).unwrap();
            let skip = name.starts_with('.')
                || matches!(
                    &*name,
                    "target" | "node_modules" | "__pycache__" | "corpus" | "artifacts"
                )
                || rel == Path::new("tests/data");
            if !skip {
                walk(root, &path, out);
            }
        } else {
            out.push(path);
        }
    }
}

/// How a file's tags are read, if it is a test source: `Some(true)` a whole test file,
/// `Some(false)` a Rust file whose `#[cfg(test)]` modules only count.
fn test_source(rel: &Path) -> Option<(&'static str, bool)> {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let ext = rel.extension()?.to_str()?;
    let benches = parts.first().is_some_and(|p| p == "tests")
        && parts.get(1).is_some_and(|p| p == "bench" || p == "benches");
    let in_tests = !benches
        && parts[..parts.len() - 1]
            .iter()
            .any(|p| p == "tests" || p == "test");
    match ext {
        "rs" => Some(("rs", in_tests)),
        "mjs" | "js" | "c" | "cpp" | "h" if in_tests => Some(("c", true)),
        "py" if in_tests => Some(("py", true)),
        _ => None,
    }
}

/// Every tag of every test source, by file (paths from the workspace root, with `/`).
fn all_tags(root: &Path) -> BTreeMap<String, Vec<Found>> {
    let mut files = Vec::new();
    walk(root, root, &mut files);
    let mut out = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(root).unwrap();
        let Some((kind, whole)) = test_source(rel) else {
            continue;
        };
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        if !text.contains(TAG) {
            continue;
        }
        let found = match kind {
            "rs" => rust_tags(&text, whole),
            "py" => python_tags(&text),
            _ => c_like_tags(&text),
        };
        if !found.is_empty() {
            let key = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            out.insert(key, found);
        }
    }
    out
}

// ---------------------------------------------------------------------------------- the index

/// The index's text, and the tags naming sections the specification does not have.
fn index(
    spec: &BTreeMap<Section, String>,
    tags: &BTreeMap<String, Vec<Found>>,
) -> (String, Vec<String>) {
    // Section → file → owners, in the order they first appear in the file.
    let mut by_section: BTreeMap<Section, BTreeMap<&str, Vec<&Owner>>> = BTreeMap::new();
    let mut unknown = Vec::new();
    for (file, found) in tags {
        for f in found {
            for s in &f.sections {
                if !spec.contains_key(s) {
                    let who = match &f.owner {
                        Owner::File => WHOLE_FILE.to_string(),
                        Owner::Item(n) => n.clone(),
                    };
                    unknown.push(format!("{file}: {who}: \u{a7}{}", show(s)));
                    continue;
                }
                let owners = by_section
                    .entry(s.clone())
                    .or_default()
                    .entry(file)
                    .or_default();
                if !owners.contains(&&f.owner) {
                    owners.push(&f.owner);
                }
            }
        }
    }
    let listed: Vec<&Section> = spec
        .keys()
        .filter(|s| s.len() <= 2 || by_section.contains_key(*s))
        .collect();
    let covered = |s: &Section| by_section.keys().any(|t| t.starts_with(s));
    let uncovered: Vec<&&Section> = listed
        .iter()
        .filter(|s| s.len() <= 2 && !covered(s))
        .collect();

    let mut md = String::new();
    md.push_str("# SPEC index\n\n");
    md.push_str(
        "For each section of the specification ([tests/data/SPEC.md](data/SPEC.md)), the tests \
         whose `SPEC §` tags name it: the file, then the test, helper or item the tag is on \
         (*(file)*: on no one item, in the file's header or a comment heading a part of it). \
         Sections are \
         the spec's numbered headings and the numbered rules inside them (§7.22 is rule 22 of \
         section 7).\n\n",
    );
    md.push_str(
        "Generated from the tags by `tests/tests/spec_index.rs`, which fails when this file is \
         out of date; `PW_BLESS=1 cargo test -p polyweave-tests --test spec_index` rewrites \
         it.\n\n",
    );
    md.push_str("## Sections no test names\n\n");
    if uncovered.is_empty() {
        md.push_str("None: every section and rule has at least one test.\n");
    } else {
        for s in &uncovered {
            md.push_str(&format!("- \u{a7}{} {}\n", show(s), spec[**s]));
        }
    }
    for s in listed {
        let hashes = if s.len() == 1 { "##" } else { "###" };
        md.push_str(&format!("\n{hashes} \u{a7}{} {}\n\n", show(s), spec[s]));
        match by_section.get(s) {
            None if covered(s) => md.push_str("See its rules below.\n"),
            None => md.push_str("No test names this section.\n"),
            Some(files) => {
                for (file, owners) in files {
                    let names: Vec<String> = owners
                        .iter()
                        .map(|o| match o {
                            Owner::File => format!("*{WHOLE_FILE}*"),
                            Owner::Item(n) => format!("`{n}`"),
                        })
                        .collect();
                    let link = match file.strip_prefix("tests/") {
                        Some(inside) => inside.to_string(),
                        None => format!("../{file}"),
                    };
                    md.push_str(&format!("- [{file}]({link}): {}\n", names.join(", ")));
                }
            }
        }
    }
    (md, unknown)
}

#[test]
fn the_spec_index_is_the_one_the_tags_give() {
    let root = workspace_root();
    let spec_text = fs::read_to_string(root.join(SPEC)).unwrap();
    let spec = spec_sections(&spec_text);
    let tags = all_tags(&root);
    let (md, unknown) = index(&spec, &tags);
    assert!(
        unknown.is_empty(),
        "tags naming sections {SPEC} does not have:\n{}",
        unknown.join("\n")
    );
    assert!(
        tags.len() > 20,
        "only {} files with tags: is the walk broken?",
        tags.len()
    );
    let path = root.join(INDEX);
    if std::env::var_os("PW_BLESS").is_some_and(|v| v == "1") {
        fs::write(&path, &md).unwrap();
        return;
    }
    let old = fs::read_to_string(&path).unwrap_or_default();
    if old != md {
        let line = old
            .lines()
            .zip(md.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(old.lines().count().min(md.lines().count()));
        panic!(
            "{INDEX} is out of date (first difference at line {}: {:?}); rewrite it with\n  \
             PW_BLESS=1 cargo test -p polyweave-tests --test spec_index\nand commit it",
            line + 1,
            md.lines().nth(line).unwrap_or("(end of file)")
        );
    }
}

// ------------------------------------------------------------------- the readers, on samples

#[test]
fn tags_name_single_sections_ranges_and_lists() {
    let t = |s: &str| tag_sections(s);
    assert_eq!(t("7.22)."), vec![vec![7, 22]]);
    assert_eq!(t("5's cap"), vec![vec![5]]);
    assert_eq!(t("7.24."), vec![vec![7, 24]]);
    assert_eq!(
        t("7.22\u{2013}7.25, byte"),
        vec![vec![7, 22], vec![7, 23], vec![7, 24], vec![7, 25]]
    );
    assert_eq!(t("7.1-3"), vec![vec![7, 1], vec![7, 2], vec![7, 3]]);
    assert_eq!(
        t("3, \u{a7}5 and \u{a7}7)"),
        vec![vec![3], vec![5], vec![7]]
    );
    assert_eq!(t("1/\u{a7}7 gives"), vec![vec![1], vec![7]]);
    assert_eq!(
        t("7.25, \u{a7}7.17, \u{a7}4 and then \u{a7}7.4 say"),
        vec![vec![7, 25], vec![7, 17], vec![4], vec![7, 4]]
    );
    assert_eq!(t("3.2, steps 1\u{2013}6"), vec![vec![3, 2]]);
    assert_eq!(t("3.2.5"), vec![vec![3, 2, 5]]);
    assert!(t("x").is_empty());
}

#[test]
fn spec_sections_are_headings_and_numbered_rules() {
    let spec = "# Title\n\n## 1. Frames\n\nText.\n1. first rule\n   1. nested one\n   2. nested **two**\n2. second\n```\n3. not a rule\n```\n\n### 1.5 A sub\n\n1. under the sub\n\n## 2. `Other` **[beyond]**\n";
    let s = spec_sections(spec);
    let keys: Vec<String> = s.keys().map(|k| show(k)).collect();
    assert_eq!(
        keys,
        ["1", "1.1", "1.1.1", "1.1.2", "1.2", "1.5", "1.5.1", "2"]
    );
    assert_eq!(s[&vec![1]], "Frames");
    assert_eq!(s[&vec![1, 1, 2]], "nested two");
    assert_eq!(s[&vec![2]], "`Other`");
    // A sub-section whose rules go on with its parent's numbering, and whose number is also
    // a rule's: the rules are the parent's, the number is the heading's.
    let spec = "## 9. MCP\n\n1. Start\n2. Call\n\n### 9.1 Newer\n\n3. Which revision\n4. Results\n";
    let s = spec_sections(spec);
    let keys: Vec<String> = s.keys().map(|k| show(k)).collect();
    assert_eq!(keys, ["9", "9.1", "9.2", "9.3", "9.4"]);
    assert_eq!(s[&vec![9, 1]], "Newer");
    assert_eq!(s[&vec![9, 3]], "Which revision");
}

#[test]
fn rust_tags_belong_to_their_function_or_the_file() {
    let src = format!(
        "//! Header {TAG}1.\n\n/// Doc {TAG}2.\n#[test]\nfn first() {{\n    let c = '{{';\n    // in {TAG}3\n}}\n\n// A section {TAG}4\n\nfn second() {{ let s = r#\"{{\"#; let _ = \"{TAG}5\"; }}\nstruct S {{\n    /// {TAG}6\n    a: u8,\n}}\n/// {TAG}7\n#[test]\n\nfn third() {{}}\nfn fourth(p: *const u8, s: &'static str) -> impl Iterator<Item = u8> {{\n    /* {TAG}8 */\n}}\n"
    );
    let found: Vec<(Owner, Vec<Section>)> = rust_tags(&src, true)
        .into_iter()
        .map(|f| (f.owner, f.sections))
        .collect();
    let item = |n: &str| Owner::Item(n.to_string());
    assert_eq!(
        found,
        vec![
            (Owner::File, vec![vec![1]]),
            (item("first"), vec![vec![2]]),
            (item("first"), vec![vec![3]]),
            (Owner::File, vec![vec![4]]),
            (item("second"), vec![vec![5]]),
            (item("S"), vec![vec![6]]),
            (item("third"), vec![vec![7]]),
            (item("fourth"), vec![vec![8]]),
        ]
    );
}

#[test]
fn only_cfg_test_modules_count_in_library_sources() {
    let src = format!(
        "/// {TAG}1\nfn lib() {{}}\n\n#[cfg(test)]\nmod tests {{\n    // {TAG}2\n    #[test]\n    fn t() {{ let _ = 1; }}\n}}\n"
    );
    let found: Vec<(Owner, Vec<Section>)> = rust_tags(&src, false)
        .into_iter()
        .map(|f| (f.owner, f.sections))
        .collect();
    assert_eq!(found, vec![(Owner::Item("t".to_string()), vec![vec![2]])]);
}

#[test]
fn js_c_and_python_tags_belong_to_their_test() {
    let js = format!(
        "// {TAG}1 header\n\nimport x from 'y';\n\n// {TAG}2 above\ntest('a name', () => {{\n  const s = '}})';\n  // {TAG}3\n}});\ntest('{TAG}4: named', () => {{}});\n"
    );
    let found: Vec<(Owner, Vec<Section>)> = c_like_tags(&js)
        .into_iter()
        .map(|f| (f.owner, f.sections))
        .collect();
    let item = |n: &str| Owner::Item(n.to_string());
    assert_eq!(
        found,
        vec![
            (Owner::File, vec![vec![1]]),
            (item("a name"), vec![vec![2]]),
            (item("a name"), vec![vec![3]]),
            (item(&format!("{TAG}4: named")), vec![vec![4]]),
        ]
    );
    let c = format!("/* {TAG}1 */\nstatic int helper(void) {{ return 0; }}\nint main(void) {{\n  if (1) {{ /* {TAG}2 */ }}\n}}\n");
    let found: Vec<(Owner, Vec<Section>)> = c_like_tags(&c)
        .into_iter()
        .map(|f| (f.owner, f.sections))
        .collect();
    assert_eq!(
        found,
        vec![
            (item("helper"), vec![vec![1]]),
            (item("main"), vec![vec![2]])
        ]
    );
    let py = format!(
        "\"\"\"The module ({TAG}9).\"\"\"\n\n# {TAG}1 above\ndef test_a():\n    x = 1  # {TAG}2\n\nclass TestB:\n    def test_c(self):\n        pass\n    # {TAG}3 inside the class\n"
    );
    let found: Vec<(Owner, Vec<Section>)> = python_tags(&py)
        .into_iter()
        .map(|f| (f.owner, f.sections))
        .collect();
    assert_eq!(
        found,
        vec![
            (Owner::File, vec![vec![9]]),
            (item("test_a"), vec![vec![1]]),
            (item("test_a"), vec![vec![2]]),
            (item("test_c"), vec![vec![3]]),
        ]
    );
}
