#!/usr/bin/env bash
# Every test of the project, on a fresh machine or a warm one: installs what the
# tests need (idempotently), then runs format, lint, docs, the test suites and the
# no_std builds for Cortex-M. Exit status 0 only when everything passed.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step prints the seconds since the start: CI's budget is 40 minutes on 2 cores.
step() { printf '\n==> [%ds] %s\n' "$SECONDS" "$*"; }

step "toolchain: rustup targets and components"
targets="thumbv7em-none-eabihf thumbv6m-none-eabi"
installed=$(rustup target list --installed)
# wasm32: the npm package's module (examples/node/wasm), built by the Node tests.
for t in $targets wasm32-unknown-unknown; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
for c in rustfmt clippy; do
  rustup component list --installed | grep -q "^$c" || rustup component add "$c"
done
# apt_install, crate_version, target_dir
. tests/lib.sh
command -v cc >/dev/null || apt_install gcc libc6-dev
command -v qemu-system-arm >/dev/null || apt_install qemu-system-arm

# npm's and pip's downloads are cached in the checkout, not in the home folder.
export npm_config_cache="$PWD/target/npm-cache" npm_config_update_notifier=false
export PIP_CACHE_DIR="$PWD/target/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1

step "format"
cargo fmt --all -- --check

step "lint (clippy, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "docs (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "no_std: core on Cortex-M4F and Cortex-M0 checked with every feature combination (each provider alone, the MCP client alone, over lines and over HTTP, the schema validator alone and with MCP), built with all of them; the ffi staticlib built"
# `cargo check` type-checks a library crate as completely as a build does (a build adds only
# code generation, and nothing here links); the steps below build and run the firmware, and
# this builds the crate with every feature (the step takes about half the time of building
# every combination).
providers="openai-chat openai-responses anthropic gemini ollama"
all="openai-chat,openai-responses,anthropic,gemini,ollama,mcp,mcp-http,schema,defmt,embassy-time"
for t in $targets; do
  for f in "" "defmt" "embassy-time" "defmt,embassy-time" $providers "mcp" "mcp,defmt" "mcp-http" \
    "mcp-http,defmt" "openai-chat,mcp-http" "schema" "schema,defmt" "mcp,schema"; do
    echo "   core --target $t --features '${f}' (check)"
    cargo check --quiet --locked -p polyweave-tool-adapter --target "$t" --no-default-features --features "$f"
  done
  echo "   core --target $t --features '$all'"
  cargo build --quiet --locked -p polyweave-tool-adapter --target "$t" --no-default-features --features "$all"
  echo "   ffi  --target $t --no-default-features"
  cargo build --quiet --locked -p polyweave-tool-adapter-ffi --target "$t" --no-default-features
done

step "firmware: lint, then run on a Cortex-M4F under QEMU (mps2-an386), its defmt log decoded on the host"
command -v defmt-print >/dev/null || cargo install defmt-print --locked
(
  cd examples/firmware
  cargo fmt -- --check
  cargo clippy --release --locked --quiet -- -D warnings
  cargo build --release --locked
  elf=target/thumbv7em-none-eabihf/release/polyweave-firmware
  # QEMU's exit status is the firmware's verdict; its stdout is the binary defmt log.
  verdict=0
  timeout 60 cargo run --release --locked >target/defmt.bin || verdict=$?
  defmt-print -e "$elf" <target/defmt.bin | tee target/defmt.log
  [ "$verdict" -eq 0 ] || { echo "firmware verdict: $verdict" >&2; exit 1; }
  grep -q 'INFO  PASS: 15 frames, 2 rounds' target/defmt.log
  # The core's own debug! lines, with the defmt feature on.
  grep -q 'DEBUG call 0 intercepted' target/defmt.log
  grep -q 'DEBUG round 1 ended with a prompt' target/defmt.log
  grep -q 'DEBUG call 4 cancelled' target/defmt.log
  size "$elf"
)

step "footprint: the core's flash (with minus without it, opt-level z and s), RAM and stack on Cortex-M4F, against budgets; the next request's bodies written there are the host's"
command -v arm-none-eabi-size >/dev/null || apt_install binutils-arm-none-eabi
examples/firmware/footprint.sh

step "C firmware: arm-none-eabi-gcc against the no_std ffi staticlib, run on a Cortex-M4F under QEMU (mps2-an386)"
command -v arm-none-eabi-gcc >/dev/null || apt_install gcc-arm-none-eabi libnewlib-arm-none-eabi
command -v make >/dev/null || apt_install make
make -C examples/c-firmware run
arm-none-eabi-size examples/c-firmware/build/c-firmware.elf

step "Cortex-M release archives: built, unpacked, listed, linked with arm-none-eabi-gcc and run on QEMU (mps2-an386, microbit)"
examples/c-firmware/release-archives.sh --check

step "Cortex-M0 firmware: the small configuration on QEMU's microbit (nRF51822, 16 KiB RAM), time from TIMER0"
(
  cd examples/firmware-m0
  cargo fmt -- --check
  cargo clippy --release --locked --quiet -- -D warnings
  # QEMU's exit status is the firmware's verdict (the runner has a 60 s limit).
  cargo run --release --locked | tee target/m0.log
  grep -q '^PASS: 7 frames' target/m0.log
  grep -q '^timeout at 50 ms, 50 ms after the call' target/m0.log
  arm-none-eabi-size target/thumbv6m-none-eabi/release/polyweave-firmware-m0
)

step "C host example: pw-replay with make (C99, warnings are errors), plain and sanitized"
command -v make >/dev/null || apt_install make
command -v valgrind >/dev/null || apt_install valgrind
make -C examples/c-host all asan

step "provider SDKs (pinned, in target/sdk-venv): the request types every encoded item is checked with"
sdk_stamp="target/sdk-venv/.requirements-$(sha1sum tests/sdk/requirements.txt | cut -c1-16)"
if [ ! -f "$sdk_stamp" ]; then
  python3 -m venv --help >/dev/null 2>&1 || apt_install python3-venv
  rm -rf target/sdk-venv
  python3 -m venv target/sdk-venv
  target/sdk-venv/bin/pip install --quiet --disable-pip-version-check -r tests/sdk/requirements.txt
  touch "$sdk_stamp"
fi
export PW_SDK_PYTHON="$PWD/target/sdk-venv/bin/python"
# The request-body checker (SPEC §10.4) against its own valid and broken bodies.
"$PW_SDK_PYTHON" tests/sdk/test_check_request.py

step "MCP servers (pinned, in target/mcp-servers): server-everything (npm) and mcp-server-time (PyPI)"
command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
bash tests/mcp/install.sh >/dev/null
# The MCP tests run the C twin of polyweave-mcp too: it must be there, not skipped.
export PW_REQUIRE_C_MCP=1
export PW_REQUIRE_MCP_SERVERS=1

step "validated arguments (SPEC §11): polyweave-replay --validate against Python jsonschema 4.26.0 (the MCP servers' venv) on the real tools' schemas, the JSON Schema Test Suite's, the BFCL declarations and 2,000 random schemas, values built to pass and to fail; any disagreement fails"
cargo build --quiet --locked -p polyweave-replay
target/mcp-servers/venv/bin/python tests/schema/differential.py --replay "$(target_dir)/debug/polyweave-replay" \
  tests/data/mcp-tool-schemas.ndjson tests/data/json-schema-test-suite
target/mcp-servers/venv/bin/python tests/schema/differential.py --replay "$(target_dir)/debug/polyweave-replay" \
  --values 20 tests/data/bfcl/functions.ndjson
target/mcp-servers/venv/bin/python tests/schema/differential.py --replay "$(target_dir)/debug/polyweave-replay" \
  --values 10 --generate 2000

step "npm package: npm pack (prepack builds the wasm), installed in empty temp folders (no install script, nothing native), the package's tests against the installed copy, tsc --noEmit, the @polyweave/tool-adapter alias"
bash tests/npm_package.sh

step "browser: examples/web in headless Chromium, served with the tarball npm_package.sh left: the page's verdict and mcp.html's (the MCP client over Streamable HTTP, cross-origin, against server-everything) read back"
PW_NPM_TGZ="$(target_dir)/npm-pack/polyweave-tool-adapter-$(crate_version).tgz" bash tests/web_page.sh

step "firmware over MCP: the core's MCP client on the Cortex-M4F serves adapter tools from server-everything over UART0 (QEMU bridged to the server)"
(
  . target/mcp-servers/env.sh # PW_MCP_EVERYTHING, from tests/mcp/install.sh
  cd examples/firmware
  cargo clippy --release --locked --quiet --features mcp -- -D warnings
  cargo build --release --locked --features mcp --bin polyweave-firmware-mcp
  elf=target/thumbv7em-none-eabihf/release/polyweave-firmware-mcp
  # The bridge's exit status is the firmware's verdict (124: its own timeout).
  verdict=0
  mcp/bridge.py --elf "$elf" --timeout 60 --log target/mcp.bin --transcript target/mcp.txt -- \
    node "$PW_MCP_EVERYTHING" stdio || verdict=$?
  defmt-print -e "$elf" <target/mcp.bin | tee target/mcp.log
  [ "$verdict" -eq 0 ] || { echo "MCP firmware verdict: $verdict" >&2; cat target/mcp.txt >&2; exit 1; }
  grep -q 'INFO  PASS: 2 MCP tool results, the prompt and END over UART0' target/mcp.log
  size "$elf"
)

step "tests (unit, doc, data sets, conformance, model, C API, C and C++ hosts, C replay under ASan/UBSan and valgrind, MCP servers)"
cargo test --workspace --locked
# The conversions behind the core's `embassy-time` feature (not on in the workspace build:
# it would pull embassy-time's driver symbols into the C ABI's staticlib).
cargo test --locked -p polyweave-tool-adapter --features embassy-time --lib

# Two tools the steps after miri need, cargo-c and cargo-fuzz, build (on both cores, about 5
# minutes) in the background from here: the wheel, the crates and miri's interpreter leave a
# core idle most of that time. Their steps below wait for them, and build them there if this
# failed (its log is printed then).
tools_log=target/tools-background.log
mkdir -p target
(
  bash tests/install_c.sh --tools-only
  command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
) >"$tools_log" 2>&1 &
tools_pid=$!
tools_wait() {
  [ -n "$tools_pid" ] || return 0
  if wait "$tools_pid"; then
    grep -E 'cargo-c built in|Installed package' "$tools_log" | sed 's/^ */   /' || true
  else
    echo "   building the tools in the background failed:"
    cat "$tools_log"
  fi
  tools_pid=
}

step "Python wheel: sdist, then the wheel from it (py3-none, auditwheel manylinux), installed in a fresh venv (target/py-wheel/venv); mypy --strict through py.typed; every Python test there with pytest, outside the source folder"
bash tests/python_wheel.sh

step "crates: cargo package --list of both crates, their contents, cargo publish --dry-run"
bash tests/cargo_package.sh

step "miri: the C ABI's unsafe code, exercised as C would call it, and the core"
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
rustup +nightly component list --installed | grep -q '^miri' || rustup +nightly component add miri rust-src
cargo +nightly miri test --quiet -p polyweave-tool-adapter-ffi --lib --test abi --test wrapper_api --test call_api \
  --test decoder_api --test mcp_api --test mcp_http_api --test request_api --test schema_api
echo "   miri: the core's unit tests"
cargo +nightly miri test --quiet -p polyweave-tool-adapter --lib

step "C and C++ install: cargo cinstall into a temporary prefix; C and C++ built against it with pkg-config (shared, static) and CMake"
tools_wait
bash tests/install_c.sh

step "docs.rs: both crates as docs.rs builds them (nightly, every feature, --cfg docsrs), warnings are errors"
RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo +nightly doc --quiet --no-deps --locked --all-features \
  -p polyweave-tool-adapter -p polyweave-tool-adapter-ffi

step "fuzz: each target (json, framing, wrapper, ffi, decode_<provider> x5, mcp, mcp_http, request, schema) for 60 s under libFuzzer, one per core at a time; any finding fails"
tools_wait
(
  cd tests/fuzz
  cargo fmt -- --check
  cargo +nightly clippy --locked --quiet --all-targets -- -D warnings
)
SECONDS_EACH="${FUZZ_SECONDS:-60}" tests/fuzz/fuzz.sh
