#!/usr/bin/env bash
# The npm package as a user gets it: `npm pack` in the checkout (prepack builds the C ABI as
# WebAssembly), `npm install ./polyweave-tool-adapter-<version>.tgz` in an empty folder, then
#   - nothing native: no install scripts, no dependencies, no koffi, no .node file;
#   - the package's whole test suite (examples/node/test) run against the installed copy;
#   - `tsc --noEmit` (strict) on examples/node/types-test/usage.ts against the installed types;
#   - the alias install `@polyweave/tool-adapter` (from the same tarball: the package is not on
#     the registry yet; once published, `npm install @polyweave/tool-adapter@npm:polyweave-tool-adapter`)
#     and a script importing `@polyweave/tool-adapter`.
# Everything goes to a temporary folder (removed on exit); npm's cache is target/npm-cache. The
# tarball, once its contents check out, is left at target/npm-pack/polyweave-tool-adapter-<version>.tgz
# (the only one there) for tests/web_page.sh (`PW_NPM_TGZ`), so the wasm is built and packed once.
# The MCP tests find the servers of tests/mcp/install.sh through PW_CHECKOUT; with
# PW_REQUIRE_MCP_SERVERS=1 they fail, not skip, without them.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/tests/lib.sh"
pkg="$root/examples/node"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export npm_config_cache="$root/target/npm-cache"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
log() { echo "npm package: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---- pack
log "npm pack (prepack builds the wasm)"
version=$(npm_version)
tgz=$(npm_pack "$tmp") || die "npm pack failed"
want="LICENSE-APACHE LICENSE-MIT README.md abi.mjs adapter_call.mjs binding.mjs clock.mjs decode.d.ts decode.mjs duplex.d.ts duplex.mjs index.d.ts index.mjs mcp.d.ts mcp.mjs memory.mjs package.json polyweave_tool_adapter.wasm raw.mjs request.d.ts request.mjs wasm.mjs wrapper.mjs"
got=$(tar tzf "$tgz" | sed 's#^package/##' | sort | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] || die "the tarball holds [$got], not [$want]"
wasm_bytes=$(tar xzOf "$tgz" package/polyweave_tool_adapter.wasm | wc -c)
wasm_gzip=$(tar xzOf "$tgz" package/polyweave_tool_adapter.wasm | gzip -9 | wc -c)
log "tarball $(wc -c <"$tgz") bytes; polyweave_tool_adapter.wasm $wasm_bytes bytes, $wasm_gzip gzipped"
# Kept for tests/web_page.sh (through a temporary name and a rename: a reader sees it whole);
# an older version's tarball is removed, so the folder holds what this checkout packs.
packed="$(cd "$root" && target_dir)/npm-pack"
mkdir -p "$packed"
rm -f "$packed"/polyweave-tool-adapter-*.tgz
cp "$tgz" "$packed/.polyweave-tool-adapter-$version.tgz.$$"
mv "$packed/.polyweave-tool-adapter-$version.tgz.$$" "$packed/polyweave-tool-adapter-$version.tgz"
log "tarball kept at $packed/polyweave-tool-adapter-$version.tgz"

# ---- an empty folder installs it: nothing native
alias_app="$tmp/alias-app"
mkdir "$alias_app"
(cd "$alias_app" && npm init -y >/dev/null && npm install --silent "@polyweave/tool-adapter@file:$tgz")
(cd "$alias_app" && node --input-type=module -e '
import fs from "node:fs";
const lock = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8"));
const pkgs = Object.entries(lock.packages);
if (pkgs.length !== 1 || pkgs[0][0] !== "node_modules/@polyweave/tool-adapter") throw new Error(`installed: ${pkgs.map(([k]) => k)}`);
if (pkgs.some(([, p]) => p.hasInstallScript)) throw new Error("an install script");
if (fs.existsSync("node_modules/koffi")) throw new Error("koffi is installed");
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(`${d}/${e.name}`) : [`${d}/${e.name}`]));
const native = walk("node_modules").filter((f) => f.endsWith(".node"));
if (native.length) throw new Error(`native files: ${native}`);
')
cat >"$alias_app/alias.mjs" <<'JS'
import { createToolAdapterWrapper, createDuplex, rawText } from '@polyweave/tool-adapter';
const toModel = [];
const llm = createDuplex({ onWrite: (f) => toModel.push(rawText(f)) });
const w = createToolAdapterWrapper(llm, { tools: { add: (a) => ({ sum: a.a + a.b }) } });
w.source.pipe({ write() {}, end() {} });
llm.source.push({ type: 'TOOL_CALL', content: { id: 'c1', name: 'add', args: { a: 1, b: 2 } } });
w.close();
console.log(toModel[0]);
JS
got=$(cd "$alias_app" && node alias.mjs)
[ "$got" = '{"type":"TOOL_RESULT","content":{"id":"c1","name":"add","result":{"sum":3}}}' ] || die "the alias script printed $got"
log "alias @polyweave/tool-adapter: installs with no install script, no dependency, nothing native; its script ran"

# ---- the test suite against the installed copy, and the types
app="$tmp/app"
cp -r "$pkg/types-test" "$app"
(cd "$app" && npm install --silent "$tgz" "@polyweave/tool-adapter@file:$tgz")
[ -f "$app/node_modules/polyweave-tool-adapter/index.mjs" ] || die "not installed"
cp -r "$pkg/test" "$app/test"
cp "$pkg/replay.mjs" "$app/replay.mjs"
# The copies import the installed package, never the checkout's files.
sed -i \
  -e "s#'\.\./index\.mjs'#'polyweave-tool-adapter'#g" \
  -e "s#'\.\./decode\.mjs'#'polyweave-tool-adapter/decode'#g" \
  -e "s#'\.\./duplex\.mjs'#'polyweave-tool-adapter/duplex'#g" \
  -e "s#'\.\./mcp\.mjs'#'polyweave-tool-adapter/mcp'#g" \
  -E -e "s#'\.\./(binding|memory|wasm|raw|abi|clock|wrapper|adapter_call)\.mjs'#'../node_modules/polyweave-tool-adapter/\1.mjs'#g" \
  "$app"/test/*.mjs
sed -i \
  -e "s#'\./index\.mjs'#'polyweave-tool-adapter'#g" \
  -E -e "s#'\./(binding|memory|wasm|raw|abi|clock|wrapper|adapter_call)\.mjs'#'./node_modules/polyweave-tool-adapter/\1.mjs'#g" \
  "$app/replay.mjs"
if grep -nE "'\.\.?/[a-z_]+\.mjs'" "$app"/test/*.mjs "$app/replay.mjs" | grep -vE "'\./(helpers|request_cases)\.mjs'"; then
  die "an import of the checkout's files is left in the copied tests"
fi
log "package tests against the installed copy"
out="$tmp/test.out"
# TAP explicitly: the counts below are read from its `# pass` / `# skipped` lines, and Node >= 23
# reports in the `spec` format by default.
if ! (cd "$app" && PW_CHECKOUT="$root" PW_EXPECT_INSTALLED=1 node --test --test-reporter=tap test/ >"$out" 2>&1); then
  grep -B2 -A25 '^not ok' "$out" >&2 || tail -50 "$out" >&2
  die "the package tests failed against the installed copy"
fi
pass=$(sed -n 's/^# pass //p' "$out")
skip=$(sed -n 's/^# skipped //p' "$out")
log "installed copy: $pass tests passed, $skip skipped"
[ "$pass" -gt 0 ] || die "no test ran"
if [ "${PW_REQUIRE_MCP_SERVERS:-}" = 1 ] && [ "$skip" != 0 ]; then die "$skip tests skipped with PW_REQUIRE_MCP_SERVERS=1"; fi

# README's JavaScript example (examples/node/example.mjs, the same bytes: tests/tests/docs.rs),
# run against the installed copy; a sync tool, a callback tool, the held END.
cp "$pkg/example.mjs" "$app/example.mjs"
got=$(cd "$app" && node example.mjs)
want='model    {"type":"TOOL_RESULT","content":{"id":"c1","name":"add","result":{"sum":3}}}
model    {"type":"TEXT","content":"Tool results above."}
consumer {"type":"TEXT","content":"Tool results above."}
model    {"type":"TOOL_RESULT","content":{"id":"c2","name":"ask","result":"yes, rain?"}}
model    {"type":"TEXT","content":"Tool results above."}
consumer {"type":"TEXT","content":"Tool results above."}
consumer {"type":"END"}'
[ "$got" = "$want" ] || die "example.mjs printed:
$got"
log "README's example ran against the installed copy"

log "tsc --noEmit on types-test/usage.ts"
(cd "$app" && ./node_modules/.bin/tsc -p tsconfig.json) || die "tsc found type errors"
log "ok"
