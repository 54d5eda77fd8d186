//! Checks that include/polyweave_tool_adapter.h is what cbindgen makes of ffi/src today.
//!
//! Regenerate it with:
//!
//! ```text
//! PW_BLESS=1 cargo test -p polyweave-tool-adapter-ffi --test header
//! ```

use std::path::PathBuf;

const BLESS_COMMAND: &str = "PW_BLESS=1 cargo test -p polyweave-tool-adapter-ffi --test header";

fn generate() -> Vec<u8> {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("read ffi/cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src").join("lib.rs"))
        .generate()
        .expect("cbindgen parses ffi/src");
    let mut out = Vec::new();
    bindings.write(&mut out);
    out
}

#[test]
fn header_is_up_to_date() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("include")
        .join("polyweave_tool_adapter.h");
    let generated = generate();
    if std::env::var_os("PW_BLESS").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, &generated).expect("write the header");
        eprintln!("wrote {}", path.display());
        return;
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    if checked_in != generated {
        let first_diff = checked_in
            .iter()
            .zip(&generated)
            .position(|(a, b)| a != b)
            .unwrap_or(checked_in.len().min(generated.len()));
        let line = generated[..first_diff]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        panic!(
            "{} is stale (first difference on line {line}); regenerate it with:\n    {BLESS_COMMAND}",
            path.display()
        );
    }
}

#[test]
fn header_has_guards_and_extern_c() {
    let text = String::from_utf8(generate()).expect("header is UTF-8");
    assert!(text.contains("#ifndef POLYWEAVE_TOOL_ADAPTER_H"));
    assert!(text.contains("#define POLYWEAVE_TOOL_ADAPTER_H"));
    assert!(text.contains("extern \"C\" {"));
    for name in [
        "pw_version",
        "pw_result_text",
        "pw_json_validate",
        "pw_frame_kind",
        "pw_frame_validate",
        "pw_tool_call_fields",
        "pw_json_string_decode",
        "pw_framer_size",
        "pw_framer_align",
        "pw_framer_init",
        "pw_framer_feed",
        "pw_framer_next_line",
        "pw_framer_finish",
    ] {
        assert!(text.contains(&format!("{name}(")), "{name} missing");
    }
    assert!(text.contains("PW_OK = 0"));
    assert!(text.contains("typedef struct pw_framer pw_framer;"));
}

#[test]
fn version_macros_match_cargo_toml() {
    let text = String::from_utf8(generate()).expect("header is UTF-8");
    for (part, want) in [
        ("MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("PATCH", env!("CARGO_PKG_VERSION_PATCH")),
    ] {
        let line = format!("#define PW_VERSION_{part} {want}\n");
        assert!(text.contains(&line), "header lacks {line:?}");
    }
    let version = format!(
        "{}.{}.{}",
        polyweave_tool_adapter_ffi::PW_VERSION_MAJOR,
        polyweave_tool_adapter_ffi::PW_VERSION_MINOR,
        polyweave_tool_adapter_ffi::PW_VERSION_PATCH
    );
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
}
