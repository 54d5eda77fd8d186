#!/usr/bin/env node
// Builds the C ABI as WebAssembly for this package: first abi.mjs from the C header (gen_abi.mjs:
// the constants, enums, struct layouts and parameter types the binding reads), then `cargo build --release --target
// wasm32-unknown-unknown -p polyweave-tool-adapter-wasm` (the crate in ./wasm), then copies the
// module next to binding.mjs as polyweave_tool_adapter.wasm (what the package loads and ships).
// Run by `npm run build` and by `prepack`, so `npm pack` in a checkout gives a complete tarball.
//
//   node build.mjs [--opt z|s|2|3] [--target-dir DIR] [--out FILE]
//
// Opt-level 2 (by default), fat LTO, one codegen unit, panic=abort (a panic is a trap: a JS
// exception), symbols stripped. `2` rather than the smaller `s`: measured on the same day
// (tests/bench/js-pipeline, Node 20), the library's part of decoding a 52.9 KB stream of 229
// deltas took 174 µs against 236 (26 % less) and of a sync round trip 1,437 ns against 1,662,
// for 487 KB (172 KB gzipped) against 362 KB (141 KB); `3` is no faster and 23 KB larger.
// `--opt s` (or `z`) builds the smaller module for a page that counts bytes first. The profile
// is set through cargo's environment so the workspace's own release profile (host builds) is
// untouched; any other `--opt` builds into a separate target directory so the builds never
// overwrite each other.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { abiSource, parseHeader } from './gen_abi.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const opt = option('--opt', '2');
if (!['z', 's', '0', '1', '2', '3'].includes(opt)) throw new Error(`build.mjs: --opt ${opt}: one of z, s, 0-3`);
const baseTarget = path.resolve(root, option('--target-dir', process.env.CARGO_TARGET_DIR ?? 'target'));
const targetDir = opt === '2' ? baseTarget : path.join(baseTarget, `wasm-opt-${opt}`);
const out = path.resolve(option('--out', path.join(here, 'polyweave_tool_adapter.wasm')));

{
  const header = path.join(root, 'include', 'polyweave_tool_adapter.h');
  const abiOut = path.join(here, 'abi.mjs');
  const tmp = `${abiOut}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, abiSource(parseHeader(fs.readFileSync(header, 'utf8')), 'include/polyweave_tool_adapter.h'));
  fs.renameSync(tmp, abiOut);
}

const cargo = process.env.CARGO ?? 'cargo';
const env = {
  ...process.env,
  CARGO_PROFILE_RELEASE_OPT_LEVEL: opt,
  CARGO_PROFILE_RELEASE_LTO: 'fat',
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS: '1',
  CARGO_PROFILE_RELEASE_PANIC: 'abort',
  CARGO_PROFILE_RELEASE_STRIP: 'symbols',
  CARGO_PROFILE_RELEASE_DEBUG: 'false',
};
try {
  execFileSync(
    cargo,
    ['build', '-q', '--release', '--target', 'wasm32-unknown-unknown', '-p', 'polyweave-tool-adapter-wasm', '--target-dir', targetDir],
    { cwd: root, env, stdio: 'inherit' },
  );
} catch (e) {
  console.error('build.mjs: the wasm build failed (is the target installed? `rustup target add wasm32-unknown-unknown`)');
  process.exit(typeof e.status === 'number' && e.status !== 0 ? e.status : 1);
}
const built = path.join(targetDir, 'wasm32-unknown-unknown', 'release', 'polyweave_tool_adapter_wasm.wasm');
// Through a temporary file and a rename: a test reading the module meanwhile sees the old or the new one whole.
const tmp = `${out}.${process.pid}.tmp`;
fs.copyFileSync(built, tmp);
fs.renameSync(tmp, out);
console.error(`build.mjs: ${path.relative(process.cwd(), out) || out} (${fs.statSync(out).size} bytes, opt-level ${opt})`);

// The licence texts ship in the tarball: the first copy found in the checkout (the root or a crate's).
for (const name of ['LICENSE-MIT', 'LICENSE-APACHE']) {
  const from = [root, path.join(root, 'core'), path.join(root, 'ffi')].map((d) => path.join(d, name)).find((f) => fs.existsSync(f));
  if (from) fs.copyFileSync(from, path.join(here, name));
  else console.error(`build.mjs: no ${name} in the checkout: the tarball goes without it`);
}
