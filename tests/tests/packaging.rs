//! What the crates carry when packaged, checked fast (tests/cargo_package.sh and
//! tests/install_c.sh run the real `cargo publish --dry-run` and `cargo cinstall`): the licence
//! and header links resolve to the root files, the manifests carry the crates.io and docs.rs
//! fields, the cargo-c metadata names the C library `polyweave_tool_adapter`, and no other
//! workspace member can be published.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the checkout")
        .to_path_buf()
}

/// `cargo metadata --no-deps` of the workspace: the manifests as cargo reads them.
fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--locked",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn package<'a>(meta: &'a Value, name: &str) -> &'a Value {
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not a workspace member"))
}

/// `link` is a symbolic link whose target is exactly `target` and whose bytes are `file`'s.
fn assert_links_to(link: &str, target: &str, file: &str) {
    let root = root();
    let meta = std::fs::symlink_metadata(root.join(link)).unwrap_or_else(|e| panic!("{link}: {e}"));
    assert!(meta.file_type().is_symlink(), "{link} is not a symlink");
    assert_eq!(
        std::fs::read_link(root.join(link)).expect("read the link"),
        Path::new(target),
        "{link}"
    );
    let through = std::fs::read(root.join(link)).unwrap_or_else(|e| panic!("{link}: {e}"));
    let direct = std::fs::read(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert!(!direct.is_empty(), "{file} is empty");
    assert!(through == direct, "{link} does not read as {file}");
}

#[test]
fn licence_links_resolve_to_the_root_files() {
    for krate in ["core", "ffi"] {
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert_links_to(
                &format!("{krate}/{licence}"),
                &format!("../{licence}"),
                licence,
            );
        }
    }
}

#[test]
fn ffi_include_links_resolve_to_the_checked_in_headers() {
    for header in ["polyweave_tool_adapter.h", "polyweave_tool_adapter.hpp"] {
        assert_links_to(
            &format!("ffi/include/{header}"),
            &format!("../../include/{header}"),
            &format!("include/{header}"),
        );
    }
}

#[test]
fn licences_are_the_standard_texts() {
    let mit = std::fs::read_to_string(root().join("LICENSE-MIT")).expect("LICENSE-MIT");
    let lines: Vec<&str> = mit.lines().collect();
    assert_eq!(lines[0], "MIT License");
    assert_eq!(
        lines[2],
        "Copyright (c) The polyweave-tool-adapter developers"
    );
    assert_eq!(
        lines[4],
        "Permission is hereby granted, free of charge, to any person obtaining a copy"
    );
    assert_eq!(lines.last(), Some(&"SOFTWARE."));
    assert_eq!(lines.len(), 21);

    let apache = std::fs::read_to_string(root().join("LICENSE-APACHE")).expect("LICENSE-APACHE");
    let lines: Vec<&str> = apache.lines().map(str::trim).collect();
    assert_eq!(
        &lines[..3],
        [
            "Apache License",
            "Version 2.0, January 2004",
            "http://www.apache.org/licenses/"
        ]
    );
    assert!(lines.contains(&"END OF TERMS AND CONDITIONS"));
    assert_eq!(lines.last(), Some(&"limitations under the License."));
    assert_eq!(lines.len(), 201);
}

#[test]
fn manifests_carry_the_crates_io_fields() {
    let meta = metadata();
    for (name, dir, keywords, categories) in [
        (
            "polyweave-tool-adapter",
            "core",
            json!(["llm", "tool-calling", "no-std", "embedded", "mcp"]),
            json!([
                "no-std",
                "no-std::no-alloc",
                "embedded",
                "parser-implementations"
            ]),
        ),
        (
            "polyweave-tool-adapter-ffi",
            "ffi",
            json!(["llm", "tool-calling", "ffi", "c-api", "mcp"]),
            json!([
                "development-tools::ffi",
                "no-std",
                "no-std::no-alloc",
                "embedded"
            ]),
        ),
    ] {
        let p = package(&meta, name);
        assert_eq!(p["license"], "MIT OR Apache-2.0", "{name}");
        assert_eq!(p["readme"], "README.md", "{name}");
        assert!(
            root().join(dir).join("README.md").is_file(),
            "{dir}/README.md"
        );
        assert_eq!(
            p["documentation"],
            format!("https://docs.rs/{name}"),
            "{name}"
        );
        // No placeholder: left out until there is a real repository.
        assert_eq!(p["repository"], Value::Null, "{name}");
        assert_eq!(p["publish"], Value::Null, "{name} must be publishable");
        assert!(
            p["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name}"
        );
        assert_eq!(p["keywords"], keywords, "{name}");
        assert_eq!(p["categories"], categories, "{name}");
        // crates.io's rules: at most 5 keywords and 5 categories, a keyword at most 20
        // ASCII characters, a letter first, then letters, digits, `_`, `-` or `+`.
        for k in keywords.as_array().expect("list") {
            let k = k.as_str().expect("keyword");
            assert!(k.len() <= 20, "{k}");
            assert!(k.starts_with(|c: char| c.is_ascii_alphabetic()), "{k}");
            assert!(
                k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-+".contains(c)),
                "{k}"
            );
        }
        assert!(keywords.as_array().expect("list").len() <= 5);
        assert!(categories.as_array().expect("list").len() <= 5);
        assert_eq!(
            p["metadata"]["docs"]["rs"],
            json!({"all-features": true, "rustdoc-args": ["--cfg", "docsrs"]}),
            "{name}"
        );
    }
}

#[test]
fn capi_metadata_names_the_c_library() {
    let meta = metadata();
    let ffi = package(&meta, "polyweave-tool-adapter-ffi");
    let capi = &ffi["metadata"]["capi"];
    assert_eq!(capi["library"], json!({"name": "polyweave_tool_adapter"}));
    assert_eq!(
        capi["header"],
        json!({"name": "polyweave_tool_adapter", "subdirectory": false, "generation": false})
    );
    assert_eq!(
        capi["pkg_config"],
        json!({"name": "polyweave-tool-adapter", "filename": "polyweave-tool-adapter"})
    );
    assert_eq!(
        capi["install"]["include"]["asset"],
        json!([
            {"from": "include/polyweave_tool_adapter.h", "to": ""},
            {"from": "include/polyweave_tool_adapter.hpp", "to": ""},
        ])
    );
    for asset in capi["install"]["include"]["asset"]
        .as_array()
        .expect("list")
    {
        let from = asset["from"].as_str().expect("from");
        assert!(root().join("ffi").join(from).is_file(), "ffi/{from}");
    }
    // cargo-c turns `capi` on; it must exist and must bring nothing in.
    assert_eq!(ffi["features"]["capi"], json!([]));
    // The Rust library keeps its name: the bindings load libpolyweave_tool_adapter_ffi.so.
    let lib = &ffi["targets"][0];
    assert_eq!(lib["name"], "polyweave_tool_adapter_ffi");
    assert_eq!(lib["crate_types"], json!(["staticlib", "cdylib", "rlib"]));
}

#[test]
fn only_the_two_crates_can_be_published() {
    let meta = metadata();
    let mut private: Vec<&str> = Vec::new();
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().expect("name");
        if name == "polyweave-tool-adapter" || name == "polyweave-tool-adapter-ffi" {
            assert_eq!(p["publish"], Value::Null, "{name}");
        } else {
            // `publish = false` reads as an empty list of registries.
            assert_eq!(p["publish"], json!([]), "{name} lacks publish = false");
            private.push(name);
        }
    }
    assert!(private.contains(&"polyweave-tests"));
}
