//! The programs outside this workspace that some tests run (`cc`, `make`, `valgrind`,
//! `python3`, `node`, `npm`): whether one is installed. A test skips, with a message, when one
//! it needs is not ([`installed`]).

use std::process::Command;

/// Whether `tool --version` runs and exits 0.
pub fn on_path(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether every one of `tools` is [`on_path`]; at the first that is not, prints
/// ``skipping {what}: `{tool}` is not installed`` and says no.
pub fn installed(tools: &[&str], what: &str) -> bool {
    match tools.iter().find(|tool| !on_path(tool)) {
        Some(tool) => {
            eprintln!("skipping {what}: `{tool}` is not installed");
            false
        }
        None => true,
    }
}
