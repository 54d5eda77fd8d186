//! The documents a new user reads stay true: README.md is a front door (under 300 lines),
//! every relative link in it and in the documents beside the code names a file that exists
//! (and a heading there, for a `#anchor`), and the code they show is the code the tests run.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use polyweave_tests::library::workspace_root;

/// The documents checked, from the workspace root.
const DOCS: &[&str] = &[
    "README.md",
    "core/README.md",
    "core/DESIGN.md",
    "ffi/README.md",
    "tests/README.md",
    "tests/bench/RESULTS.md",
    "tests/SPEC-INDEX.md",
];

/// The documents crates.io and docs.rs show (each crate's README): no repository URL is
/// published, so a relative link there leads nowhere.
const PUBLISHED: &[&str] = &["core/README.md", "ffi/README.md"];

fn read(rel: &str) -> String {
    let path = workspace_root().join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of a Markdown text outside fenced code blocks, with their numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// A line with its inline code spans blanked out, so that `[x](y)` inside backticks is not
/// taken for a link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// Every `[text](target)` link target of a document, with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].trim();
            // `[text](target "title")`: the target is the first word.
            let target = target.split_whitespace().next().unwrap_or("");
            out.push((n, target.to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_` kept, spaces
/// become `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown document's headings (a repeated heading also gets `-1`, `-2`, …).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let trimmed = line.trim_start_matches('#');
        if trimmed.len() == line.len() || !trimmed.starts_with(' ') {
            continue;
        }
        let base = slug(trimmed);
        let mut name = base.clone();
        let mut k = 0;
        while !out.insert(name.clone()) {
            k += 1;
            name = format!("{base}-{k}");
        }
    }
    out
}

#[test]
fn the_readme_is_a_front_door() {
    let lines = read("README.md").lines().count();
    assert!(
        lines < 300,
        "README.md has {lines} lines: figures and details belong in the documents beside the code"
    );
}

#[test]
fn relative_links_name_files_and_headings_that_exist() {
    let root = workspace_root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in DOCS {
        let text = read(doc);
        let dir = Path::new(doc).parent().unwrap_or(Path::new(""));
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path: PathBuf = if file.is_empty() {
                root.join(doc)
            } else {
                root.join(dir).join(file)
            };
            if !path.exists() {
                broken.push(format!("{doc}:{line}: {target}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let is_md = path.extension().is_some_and(|e| e == "md");
                let heads = if is_md {
                    anchors(&fs::read_to_string(&path).unwrap())
                } else {
                    BTreeSet::new()
                };
                if !is_md || !heads.contains(anchor) {
                    broken.push(format!("{doc}:{line}: {target}: no heading #{anchor}"));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the link reader broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Every link target of a document that is not absolute: `[text](target)` links and
/// reference definitions (`[name]: target`), with their line numbers.
fn relative_links(text: &str) -> Vec<(usize, String)> {
    let mut out = links(text);
    for (n, line) in prose_lines(text) {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix('[') {
            if let Some((_, target)) = rest.split_once("]:") {
                let target = target.split_whitespace().next().unwrap_or("");
                out.push((n, target.to_string()));
            }
        }
    }
    out.retain(|(_, t)| !t.contains("://") && !t.starts_with("mailto:"));
    out.sort();
    out
}

#[test]
fn the_published_readmes_have_no_relative_links() {
    let mut found = Vec::new();
    for doc in PUBLISHED {
        for (line, target) in relative_links(&read(doc)) {
            found.push(format!("{doc}:{line}: {target}"));
        }
    }
    assert!(
        found.is_empty(),
        "relative links in a README crates.io and docs.rs show (write the file's name as \
         text, or link to docs.rs):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_relative_link_reader_finds_inline_and_reference_links() {
    let text = "[a](DESIGN.md) [b](https://docs.rs/x) [c](#here) `[d](e.md)`\n[ref]: ../x.md\n[abs]: https://crates.io/x\n";
    assert_eq!(
        relative_links(text),
        vec![
            (1, "#here".to_string()),
            (1, "DESIGN.md".to_string()),
            (2, "../x.md".to_string())
        ]
    );
}

#[test]
fn the_link_reader_finds_links_and_anchors() {
    // `\u{a7}` is `§`, written so that this text is not taken for a SPEC tag (spec_index.rs).
    let text = "# A title (SPEC \u{a7}9)\n\nSee [x](a.md#b) and `[not](c.md)`.\n```\n[no](d.md)\n```\n## A title (SPEC \u{a7}9)\n";
    assert_eq!(links(text), vec![(3, "a.md#b".to_string())]);
    let heads = anchors(text);
    assert!(heads.contains("a-title-spec-9") && heads.contains("a-title-spec-9-1"));
    assert_eq!(
        slug("Soak, miri, sanitizers, valgrind"),
        "soak-miri-sanitizers-valgrind"
    );
    assert_eq!(slug("C++"), "c");
}

/// The text of the first fenced block of `lang` after `after` in `text`.
fn block_after<'t>(text: &'t str, after: &str, lang: &str) -> &'t str {
    let from = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not found"));
    let open = format!("```{lang}\n");
    let start = text[from..].find(&open).expect("no such block") + from + open.len();
    let end = text[start..].find("```").expect("unclosed block") + start;
    &text[start..end]
}

// README.md's Rust example, the same bytes as `docs/readme_example.rs` (checked below), run.
mod readme_example {
    include!("docs/readme_example.rs");

    #[test]
    fn the_readme_rust_example_runs() {
        main();
    }
}

#[test]
fn the_readme_rust_example_is_the_one_that_runs() {
    let readme = read("README.md");
    assert_eq!(
        block_after(&readme, "### Rust\n", "rust"),
        read("tests/tests/docs/readme_example.rs"),
        "README.md's Rust example and tests/tests/docs/readme_example.rs differ"
    );
}

/// README's Python, JavaScript and C examples are files that run with exact output checked:
/// `examples/python/example.py` (its package test), `examples/node/example.mjs`
/// (tests/npm_package.sh, against the installed package), `examples/c-install/readme.c` and
/// `readme.cpp` (tests/install_c.sh, against the installed library).
#[test]
fn the_readme_examples_are_the_files_that_run() {
    let readme = read("README.md");
    for (heading, lang, file) in [
        ("### Python\n", "python", "examples/python/example.py"),
        ("### JavaScript (Node)\n", "js", "examples/node/example.mjs"),
        ("### C\n", "c", "examples/c-install/readme.c"),
        ("### C++\n", "cpp", "examples/c-install/readme.cpp"),
    ] {
        assert_eq!(
            block_after(&readme, heading, lang),
            read(file),
            "README.md's example under {heading:?} and {file} differ"
        );
    }
}

/// ffi/README.md's host loop is `ffi/tests/c/host_loop.c`, which `ffi/tests/c_api.rs` builds,
/// runs and checks line by line.
#[test]
fn the_c_host_loop_shown_is_the_one_that_runs() {
    let doc = read("ffi/README.md");
    assert_eq!(
        block_after(&doc, "## A host loop in C\n", "c"),
        read("ffi/tests/c/host_loop.c"),
        "ffi/README.md's host loop and ffi/tests/c/host_loop.c differ"
    );
}

/// ffi/README.md's request example is `ffi/tests/c/request_example.c`, which
/// `ffi/tests/c_api.rs` builds, runs and checks byte for byte.
#[test]
fn the_c_request_example_shown_is_the_one_that_runs() {
    let doc = read("ffi/README.md");
    assert_eq!(
        block_after(&doc, "## Requests\n", "c"),
        read("ffi/tests/c/request_example.c"),
        "ffi/README.md's request example and ffi/tests/c/request_example.c differ"
    );
}

/// The source files of a crate (paths from the crate's folder) that `doc` does not name in
/// backticks.
fn unnamed_sources(krate: &str, doc: &str) -> Vec<String> {
    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let dir = workspace_root().join(krate);
    let text = read(doc);
    let mut files = Vec::new();
    rust_files(&dir.join("src"), &mut files);
    files
        .iter()
        .map(|f| f.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
        .filter(|rel| !text.contains(&format!("`{rel}`")))
        .collect()
}

/// The modules of the core that `doc` does not name in backticks: every file and folder
/// of `core/src` but `lib.rs` (DESIGN.md's architecture walks them by layer; each file's own
/// documentation says what it holds, so no per-file table drifts).
fn unnamed_core_modules(doc: &str) -> Vec<String> {
    let text = read(doc);
    let mut modules: Vec<String> = fs::read_dir(workspace_root().join("core/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned()))
        .filter(|m| m != "lib")
        .collect();
    assert!(modules.len() > 10, "core/src read: {modules:?}");
    modules.retain(|m| !text.contains(&format!("`{m}`")));
    modules
}

/// core/DESIGN.md names every module of the core, and ffi/README.md's table of files names
/// every ffi source file.
#[test]
fn the_documents_name_every_module_and_source_file() {
    let core = unnamed_core_modules("core/DESIGN.md");
    assert!(core.is_empty(), "core/DESIGN.md does not name {core:?}");
    let ffi = unnamed_sources("ffi", "ffi/README.md");
    assert!(ffi.is_empty(), "ffi/README.md's file table lacks {ffi:?}");
}

/// `1234567` as the documents write it: `1,234,567`.
fn with_commas(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The arena sizes the documents quote are the ones `WrapperConfig::arena_len` gives.
#[test]
fn the_arena_figures_quoted_are_the_computed_ones() {
    use polyweave_tool_adapter::WrapperConfig;
    let d = WrapperConfig::DEFAULT;
    let readme = read("core/README.md");
    let design = read("core/DESIGN.md");
    let default_4 = format!(
        "arena for 4 pending calls\nis {} bytes",
        with_commas(d.arena_len(4))
    );
    let small_4 = format!(
        "at `WrapperConfig::SMALL`, {}.",
        with_commas(WrapperConfig::SMALL.arena_len(4))
    );
    assert!(
        readme.contains(&default_4),
        "core/README.md lacks {default_4:?}"
    );
    assert!(
        readme.contains(&small_4),
        "core/README.md lacks {small_4:?}"
    );
    let row = format!(
        "**{} / {} / {} / {}**",
        with_commas(d.arena_len(0)),
        with_commas(d.arena_len(2)),
        with_commas(d.arena_len(4)),
        with_commas(d.arena_len(8))
    );
    assert!(
        design.contains(&row),
        "core/DESIGN.md's memory table lacks {row:?}"
    );
    let small = format!("| **{}** |", with_commas(WrapperConfig::SMALL.arena_len(4)));
    assert!(
        design.contains(&small),
        "core/DESIGN.md's RAM table lacks {small:?}"
    );
    assert_eq!(with_commas(14469), "14,469");
    assert_eq!(with_commas(396), "396");
}
