// Loading: importing the package loads the default module; where that fails the import still
// succeeds, a use throws PW_WASM_NOT_LOADED naming why, and init({ wasm }) loads the module
// from what the user has (bytes, a compiled module, a path, a URL).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { indexUrl, packageDir } from './helpers.mjs';

// The module next to the package's entry (the checkout's, or the installed copy's).
const wasmPath = fileURLToPath(new URL('./polyweave_tool_adapter.wasm', indexUrl));

/** Runs `body` as a module with `pw` the package, PW_WASM naming a file that is not there. */
function run(body) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import * as pw from ${JSON.stringify(indexUrl)};\nimport fs from 'node:fs';\n${body}`], {
    env: { ...process.env, PW_WASM: path.join(packageDir, 'no-such.wasm') },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n');
}

const USE = `const d = pw.createDecoder('openai-chat'); console.log(JSON.stringify(d.write('data: {"choices":[{"delta":{"content":"x"}}]}\\n\\n')));`;

test('init: a failed default load leaves the import working; a use says to call init; init({ wasm: bytes }) loads', () => {
  const lines = run(`
console.log(pw.isLoaded());
try { pw.createDecoder('openai-chat'); } catch (e) { console.log(e.code, /no-such\\.wasm/.test(e.message), /init\\(\\{ wasm \\}\\)/.test(e.message)); }
await pw.init({ wasm: fs.readFileSync(${JSON.stringify(wasmPath)}) });
console.log(pw.isLoaded());
${USE}
await pw.init(); // loaded: resolves at once
console.log(pw.version().startsWith('polyweave-tool-adapter-ffi/'));
`);
  assert.deepEqual(lines, ['false', 'PW_WASM_NOT_LOADED true true', 'true', '[{"type":"TEXT","content":"x"}]', 'true']);
});

test('init: a compiled WebAssembly.Module, a path and a file: URL load too', () => {
  for (const wasm of [
    `new WebAssembly.Module(fs.readFileSync(${JSON.stringify(wasmPath)}))`,
    JSON.stringify(wasmPath),
    `new URL(${JSON.stringify(`file://${wasmPath}`)})`,
  ]) {
    assert.deepEqual(run(`await pw.init({ wasm: ${wasm} });\n${USE}`), ['[{"type":"TEXT","content":"x"}]'], wasm);
  }
});

test('init: a source that is not the module rejects, and a later init can still load', () => {
  const lines = run(`
try { await pw.init({ wasm: new Uint8Array([1, 2, 3]) }); } catch (e) { console.log(e instanceof WebAssembly.CompileError); }
console.log(pw.isLoaded());
await pw.init({ wasm: fs.readFileSync(${JSON.stringify(wasmPath)}) });
${USE}
`);
  assert.deepEqual(lines, ['true', 'false', '[{"type":"TEXT","content":"x"}]']);
});
