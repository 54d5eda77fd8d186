# Shell functions the test scripts share (sourced, not run): tests/run.sh, tests/install_c.sh,
# tests/cargo_package.sh, tests/npm_package.sh, tests/web_page.sh,
# examples/c-firmware/release-archives.sh.

# apt_install PKG...: Debian packages (CI runs as root; elsewhere through sudo).
apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}

# crate_version: the workspace's version, as the C library and every package carry it.
crate_version() {
  local id
  id=$(cargo pkgid -p polyweave-tool-adapter-ffi)
  echo "${id##*[#@]}"
}

# target_dir: cargo's target directory (target/ unless CARGO_TARGET_DIR or a cargo config
# says otherwise).
target_dir() {
  cargo metadata --locked --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

# npm_version: the npm package's version (examples/node/package.json).
npm_version() {
  node -p 'require(process.argv[1]).version' "$(dirname "${BASH_SOURCE[0]}")/../examples/node/package.json"
}

# npm_pack DEST: `npm pack` of examples/node into DEST (its prepack builds the wasm); prints
# the tarball's path, or fails when npm left none.
npm_pack() {
  local tgz
  tgz="$1/polyweave-tool-adapter-$(npm_version).tgz"
  (cd "$(dirname "${BASH_SOURCE[0]}")/../examples/node" && npm pack --silent --pack-destination "$1" >/dev/null)
  [ -f "$tgz" ] || { echo "npm pack left no $tgz" >&2; return 1; }
  echo "$tgz"
}
