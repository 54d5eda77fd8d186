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
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("read ffi/cbindgen.toml");
    // PW_VERSION_STRING comes from Cargo.toml's version here: cbindgen writes no `&str`
    // constant, and a literal in cbindgen.toml would be one more copy to keep in step.
    let version_define = format!(
        "\n/** The library's version, \"MAJOR.MINOR.PATCH\": what follows the '/' in pw_version()'s string. */\n#define PW_VERSION_STRING \"{}\"\n",
        env!("CARGO_PKG_VERSION")
    );
    config.after_includes = Some(config.after_includes.unwrap_or_default() + &version_define);
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
        "pw_frame_peek_kind",
        "pw_frame_validate",
        "pw_tool_call_fields",
        "pw_json_string_decode",
        "pw_line_splitter_size",
        "pw_line_splitter_align",
        "pw_line_splitter_init",
        "pw_line_splitter_feed",
        "pw_line_splitter_next_line",
        "pw_line_splitter_finish",
    ] {
        assert!(text.contains(&format!("{name}(")), "{name} missing");
    }
    assert!(text.contains("PW_OK = 0"));
    assert!(text.contains("typedef struct pw_line_splitter pw_line_splitter;"));
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
    let line = format!(
        "#define PW_VERSION_STRING \"{}\"\n",
        env!("CARGO_PKG_VERSION")
    );
    assert!(text.contains(&line), "header lacks {line:?}");
}

/// The value of the header's `#define PW_VERSION_STRING "..."`.
fn header_version_string(text: &str) -> &str {
    let rest = text
        .split_once("#define PW_VERSION_STRING \"")
        .expect("the header defines PW_VERSION_STRING")
        .1;
    rest.split_once('"').expect("a closing quote").0
}

#[test]
fn version_string_is_what_pw_version_says() {
    let text = String::from_utf8(generate()).expect("header is UTF-8");
    // SAFETY: pw_version returns a static NUL-terminated string, never NULL.
    let said = unsafe { std::ffi::CStr::from_ptr(polyweave_tool_adapter_ffi::pw_version()) };
    let said = said.to_str().expect("pw_version is ASCII");
    assert_eq!(
        said,
        format!(
            "polyweave-tool-adapter-ffi/{}",
            header_version_string(&text)
        )
    );
    assert_eq!(
        said,
        concat!("polyweave-tool-adapter-ffi/", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn preamble_points_at_the_c_api_docs() {
    let text = String::from_utf8(generate()).expect("header is UTF-8");
    assert!(text.contains(" * ffi/src/lib.rs and in ffi/README.md.\n"));
    assert!(!text.contains("README.md (\"C API\")"));
}
