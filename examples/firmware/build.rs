//! Puts `memory.x` where cortex-m-rt's `link.x` looks for it (the output dir, on the linker
//! path); with the feature `bfcl-speed`, writes the table of the BFCL corpus's tool names;
//! sets the footprint probe's cfgs `probe_request` (a `request-*` feature is on) and
//! `probe_decode` (a `decode-*` feature is on and none of them: a request run has its own
//! decoder, and a second one would change what is inlined where in the flash figure).

use std::{env, fs, path::PathBuf};

const CORPUS: &str = "../../tests/data/bfcl/tool-calls.ndjson";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    fs::copy("memory.x", out.join("memory.x")).unwrap();
    if env::var_os("CARGO_FEATURE_BFCL_SPEED").is_some() {
        fs::write(out.join("bfcl_tools.rs"), bfcl_tools()).unwrap();
        println!("cargo:rerun-if-changed={CORPUS}");
    }
    let on =
        |kind: &str| env::vars().any(|(k, _)| k.starts_with(&format!("CARGO_FEATURE_{kind}_")));
    println!("cargo::rustc-check-cfg=cfg(probe_request, probe_decode)");
    if on("REQUEST") {
        println!("cargo::rustc-cfg=probe_request");
    } else if on("DECODE") {
        println!("cargo::rustc-cfg=probe_decode");
    }
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}

/// `TOOLS`: a sync tool `echo` under every tool name of the corpus, sorted (so the wrapper
/// finds them by binary search, as the host benchmark registers them). The names are plain
/// (no escapes: checked), so each is the text after `"name":"` up to the next quote.
fn bfcl_tools() -> String {
    let corpus = fs::read_to_string(CORPUS).unwrap();
    let mut names: Vec<&str> = corpus
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let at = l.find(r#""name":""#).expect("a name") + r#""name":""#.len();
            let name = &l[at..at + l[at..].find('"').unwrap()];
            assert!(!name.contains('\\'), "escaped name {name}");
            name
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    // A `const`, not a `static`: a static must be `Sync`, which `dyn SyncTool` is not. It is
    // used once, so there is one copy.
    let mut s = format!(
        "#[allow(clippy::large_const_arrays)]\npub const TOOLS: [polyweave_tool_adapter::Tool<'static>; {}] = [\n",
        names.len()
    );
    for n in names {
        s += &format!("    polyweave_tool_adapter::Tool::sync({n:?}, &echo),\n");
    }
    s + "];\n"
}
