#!/usr/bin/env bash
# The two crates as crates.io would take them: `cargo package --list` of each holds its
# README, both licences (the ffi crate also its headers and cbindgen settings), the .crate
# files hold the checkout's bytes for those (symlinks followed), and `cargo publish --dry-run`
# packages both together (the ffi crate against the packaged core, through cargo's local
# overlay registry), builds them from the .crate files and stops before the upload.
#
# A clean checkout (CI's clone; target/ and the other ignored build output do not count) is
# packaged as is. A tree with uncommitted changes in what the crates are made of gets
# --allow-dirty, said out loud: that run checks the working files, not a commit.
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
cd "$checkout"
# crate_version, target_dir
. tests/lib.sh

fail() { printf 'cargo_package.sh: %s\n' "$*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What `cargo package` reads: the two crates, the workspace manifest and lock file, and the
# root files the crates' symlinks point at.
sources=(core ffi include Cargo.toml Cargo.lock LICENSE-MIT LICENSE-APACHE)
dirty=()
if [ -n "$(git status --porcelain -- "${sources[@]}")" ]; then
  dirty=(--allow-dirty)
  echo "cargo_package.sh: uncommitted changes in ${sources[*]}: packaging the working files (--allow-dirty)"
  git status --short -- "${sources[@]}"
fi

# lists CRATE FILE...: `cargo package --list` of CRATE names every FILE.
lists() {
  local crate=$1
  shift
  cargo package --locked "${dirty[@]}" --list -p "$crate" >"$tmp/$crate.list"
  for f in "$@"; do
    grep -qxF "$f" "$tmp/$crate.list" || { cat "$tmp/$crate.list"; fail "$crate's package lacks $f"; }
  done
  echo "$crate: $(wc -l <"$tmp/$crate.list") files, $* among them"
}
common=(Cargo.toml README.md LICENSE-MIT LICENSE-APACHE src/lib.rs)
lists polyweave-tool-adapter "${common[@]}"
lists polyweave-tool-adapter-ffi "${common[@]}" include/polyweave_tool_adapter.h \
  include/polyweave_tool_adapter.hpp cbindgen.toml

# The .crate files, for the look inside below (publish --dry-run builds them after), land in
# the target directory's package/ (target/ unless CARGO_TARGET_DIR or a config says otherwise).
version=$(crate_version)
cargo metadata --locked --no-deps --format-version 1 >"$tmp/metadata.json"
target_dir=$(target_dir)
rm -f "$target_dir/package/polyweave-tool-adapter-$version.crate" \
  "$target_dir/package/polyweave-tool-adapter-ffi-$version.crate"
cargo package --locked "${dirty[@]}" --no-verify -p polyweave-tool-adapter -p polyweave-tool-adapter-ffi
# crate_holds CRATE CHECKOUT_FILE PATH_IN_CRATE...: the .crate's file is the checkout's, byte for byte.
crate_holds() {
  local crate=$1 dir=$2
  shift 2
  local file="$target_dir/package/$crate-$version.crate"
  [ -f "$file" ] || fail "cargo package left no $file"
  mkdir -p "$tmp/$crate"
  tar -xzf "$file" -C "$tmp/$crate"
  for f in "$@"; do
    [ -f "$tmp/$crate/$crate-$version/$f" ] && [ ! -L "$tmp/$crate/$crate-$version/$f" ] ||
      fail "$file: $f is not a regular file"
    cmp "$dir/$f" "$tmp/$crate/$crate-$version/$f" || fail "$file: $f differs from $dir/$f"
  done
  echo "$file: $* as in the checkout"
}
crate_holds polyweave-tool-adapter core README.md LICENSE-MIT LICENSE-APACHE
crate_holds polyweave-tool-adapter-ffi ffi README.md LICENSE-MIT LICENSE-APACHE \
  include/polyweave_tool_adapter.h include/polyweave_tool_adapter.hpp

# publish --dry-run builds the ffi crate against the packaged core through a local registry,
# which cargo unpacks under $CARGO_HOME/registry/src and does not unpack again while the
# version is the same: a core packaged by an earlier run (same path, same 0.1.0) would be
# built instead of this one. Those unpacked copies of our two crates are removed first
# (nothing else is touched; neither crate comes from crates.io).
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/polyweave-tool-adapter-"$version" \
  "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/polyweave-tool-adapter-ffi-"$version"
cargo publish --dry-run --locked "${dirty[@]}" -p polyweave-tool-adapter -p polyweave-tool-adapter-ffi

# Every other workspace member stays off crates.io.
python3 - "$tmp/metadata.json" <<'EOF'
import json, sys
meta = json.load(open(sys.argv[1]))
published = {"polyweave-tool-adapter", "polyweave-tool-adapter-ffi"}
wrong = [p["name"] for p in meta["packages"] if (p["publish"] != []) != (p["name"] in published)]
if wrong:
    sys.exit(f"cargo_package.sh: publish setting wrong for {wrong} (only {sorted(published)} are published)")
print("publish = false on every other member:", sorted(p["name"] for p in meta["packages"] if p["name"] not in published))
EOF
echo "cargo_package.sh: both crates package and pass cargo publish --dry-run"
