# Shell functions the test scripts share (sourced, not run): tests/run.sh, tests/install_c.sh,
# tests/cargo_package.sh, tests/web_page.sh, examples/c-firmware/release-archives.sh.

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
