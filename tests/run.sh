#!/usr/bin/env bash
# Every test of the project, on a fresh machine or a warm one: installs what the
# tests need (idempotently), then runs format, lint, docs, the test suites and the
# no_std builds for Cortex-M. Exit status 0 only when everything passed.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain: rustup targets and components"
targets="thumbv7em-none-eabihf thumbv6m-none-eabi"
installed=$(rustup target list --installed)
for t in $targets; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
for c in rustfmt clippy; do
  rustup component list --installed | grep -q "^$c" || rustup component add "$c"
done
command -v cc >/dev/null || { apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev; }

step "format"
cargo fmt --all -- --check

step "lint (clippy, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "docs (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "no_std builds: core on Cortex-M4F and Cortex-M0 with every feature combination"
for t in $targets; do
  for f in "" "defmt" "embassy-time" "defmt,embassy-time"; do
    echo "   core --target $t --features '${f}'"
    cargo build --quiet --locked -p polyweave-tool-adapter --target "$t" --no-default-features --features "$f"
  done
  echo "   ffi  --target $t --no-default-features"
  cargo build --quiet --locked -p polyweave-tool-adapter-ffi --target "$t" --no-default-features
done

step "tests (unit, doc, data sets, conformance, model, C API)"
cargo test --workspace --locked
