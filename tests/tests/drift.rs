//! The copies in `tests/data/` must not drift from the shared originals.
//!
//! When `../shared/` exists next to the workspace, every shared data file,
//! scenario and the specification must be present byte for byte under
//! `tests/data/`, and the copied JSONTestSuite and scenario folders must hold
//! nothing else. A user's clone has no `../shared/`: the check is skipped.

use std::fs;
use std::path::{Path, PathBuf};

const REFRESH: &str = "rm -rf tests/data/json-test-suite tests/data/scenarios \
tests/data/provider-streams && \
mkdir -p tests/data/json-test-suite tests/data/scenarios tests/data/bfcl && \
cp -rf ../shared/data/provider-streams tests/data/ && \
cp -f ../shared/data/json-test-suite/* tests/data/json-test-suite/ && \
cp -f ../shared/scenarios/* tests/data/scenarios/ && \
cp -f ../shared/data/bfcl/tool-calls.ndjson ../shared/data/bfcl/functions.ndjson tests/data/bfcl/ && \
cp -f ../shared/SPEC.md tests/data/SPEC.md";

/// Files under `dir`, recursively, as paths relative to `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).expect("under root").to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// Compares `copy` with the original `shared` folder; `exact` forbids extra files in `copy`.
fn compare_dirs(shared: &Path, copy: &Path, exact: bool, problems: &mut Vec<String>) -> usize {
    let originals = files_under(shared);
    if originals.is_empty() {
        problems.push(format!("no files in {}", shared.display()));
    }
    for rel in &originals {
        compare_file(&shared.join(rel), &copy.join(rel), problems);
    }
    if exact {
        for rel in files_under(copy) {
            if !originals.contains(&rel) {
                problems.push(format!("extra: {}", copy.join(&rel).display()));
            }
        }
    }
    originals.len()
}

fn compare_file(original: &Path, copy: &Path, problems: &mut Vec<String>) {
    let Ok(want) = fs::read(original) else {
        problems.push(format!("cannot read original {}", original.display()));
        return;
    };
    match fs::read(copy) {
        Ok(got) if got == want => {}
        Ok(_) => problems.push(format!("differs: {}", copy.display())),
        Err(_) => problems.push(format!("missing: {}", copy.display())),
    }
}

/// What the comparison found.
#[derive(Debug, PartialEq)]
enum Drift {
    /// No shared folder: nothing to compare.
    Skipped,
    /// Every original has an identical copy: (JSONTestSuite files, scenario files, BFCL
    /// files, provider-stream files).
    Identical(usize, usize, usize, usize),
    /// The problems, one per file.
    Drifted(Vec<String>),
}

fn check(shared: &Path, data: &Path) -> Drift {
    if !shared.is_dir() {
        return Drift::Skipped;
    }
    let mut problems = Vec::new();
    let json_files = compare_dirs(
        &shared.join("data/json-test-suite"),
        &data.join("json-test-suite"),
        true,
        &mut problems,
    );
    let scenario_files = compare_dirs(
        &shared.join("scenarios"),
        &data.join("scenarios"),
        true,
        &mut problems,
    );
    let bfcl_files = compare_dirs(
        &shared.join("data/bfcl"),
        &data.join("bfcl"),
        false,
        &mut problems,
    );
    let stream_files = if shared.join("data/provider-streams").is_dir() {
        compare_dirs(
            &shared.join("data/provider-streams"),
            &data.join("provider-streams"),
            true,
            &mut problems,
        )
    } else {
        0
    };
    compare_file(
        &shared.join("SPEC.md"),
        &data.join("SPEC.md"),
        &mut problems,
    );
    if problems.is_empty() {
        Drift::Identical(json_files, scenario_files, bfcl_files, stream_files)
    } else {
        Drift::Drifted(problems)
    }
}

#[test]
fn copies_match_shared_originals() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = crate_dir.join("../../shared");
    match check(&shared, &crate_dir.join("data")) {
        Drift::Skipped => println!(
            "drift: {} is absent; skipped comparing tests/data/ with the shared originals",
            shared.display()
        ),
        Drift::Drifted(problems) => panic!(
            "tests/data/ has drifted from ../shared ({} files):\n  {}\n\
             refresh the copies, from the workspace root, with:\n  {REFRESH}",
            problems.len(),
            problems.join("\n  ")
        ),
        Drift::Identical(json_files, scenario_files, bfcl_files, stream_files) => {
            println!(
                "drift: {} shared files compared, all identical",
                json_files + scenario_files + bfcl_files + stream_files + 1
            );
            // 318 cases and the LICENSE; the BFCL calls and functions; 71 bodies, their expected
            // files, the README and 4 licences.
            assert_eq!((json_files, bfcl_files, stream_files), (319, 2, 147));
            assert!(scenario_files > 0);
        }
    }
}

/// The checker itself: a missing shared folder skips, and each kind of drift is named.
#[test]
fn checker_finds_every_kind_of_drift() {
    let root = std::env::temp_dir().join(format!("polyweave-drift-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let shared = root.join("shared");
    let data = root.join("data");
    assert_eq!(check(&shared, &data), Drift::Skipped);

    let write = |path: PathBuf, bytes: &[u8]| {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, bytes).expect("write");
    };
    for (rel, bytes) in [
        ("data/json-test-suite/y_a.json", &b"[]"[..]),
        ("data/json-test-suite/n_b.json", b"["),
        ("scenarios/s.json", b"{}"),
        ("data/bfcl/tool-calls.ndjson", b"{\"type\":\"END\"}\n"),
        ("SPEC.md", b"# spec\n"),
    ] {
        write(shared.join(rel), bytes);
    }
    for (rel, bytes) in [
        ("json-test-suite/y_a.json", &b"[]"[..]),
        ("json-test-suite/n_b.json", b"[ "),
        ("json-test-suite/extra.json", b"1"),
        ("scenarios/s.json", b"{}"),
        ("bfcl/tool-calls.ndjson", b"{\"type\":\"END\"}\n"),
        ("bfcl/LICENSE", b"extra files are fine here"),
    ] {
        write(data.join(rel), bytes);
    }
    let drift = check(&shared, &data);
    let _ = fs::remove_dir_all(&root);
    assert_eq!(
        drift,
        Drift::Drifted(vec![
            format!(
                "differs: {}",
                data.join("json-test-suite/n_b.json").display()
            ),
            format!(
                "extra: {}",
                data.join("json-test-suite/extra.json").display()
            ),
            format!("missing: {}", data.join("SPEC.md").display()),
        ])
    );
}
