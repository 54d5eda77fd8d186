// The package itself: the module it loaded, the struct layouts against the module's own, the
// allocator, and what a browser can load (no static `node:` import in the modules it ships).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as pw from '../index.mjs';
import { STRUCTS, U8, heapStats, malloc, mfree, moduleLayouts, version } from '../binding.mjs';

const entry = fileURLToPath(import.meta.resolve('../index.mjs'));
const dir = path.dirname(entry);

test('package: the entry is the copy this run means (installed when PW_EXPECT_INSTALLED=1), and it needs no koffi', () => {
  if (process.env.PW_EXPECT_INSTALLED === '1') {
    assert.match(entry, /[\\/]node_modules[\\/]polyweave-tool-adapter[\\/]index\.mjs$/);
  } else {
    assert.doesNotMatch(entry, /node_modules/);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  assert.equal(manifest.name, 'polyweave-tool-adapter');
  assert.equal(manifest.private, undefined);
  assert.deepEqual(manifest.dependencies ?? {}, {});
  for (const hook of ['preinstall', 'install', 'postinstall']) assert.equal(manifest.scripts?.[hook], undefined, hook);
  assert.equal(version(), `polyweave-tool-adapter-ffi/${manifest.version}`);
});

test('package: every struct the binding lays out has the size and alignment the wasm module gives it', () => {
  // STRUCTS is abi.mjs's: laid out by gen_abi.mjs from the header at build time.
  const mod = moduleLayouts();
  assert.ok(Object.keys(mod).length >= 20, Object.keys(mod).join());
  for (const [name, m] of Object.entries(mod)) {
    assert.ok(STRUCTS[name], `the header has ${name}`);
    assert.deepEqual({ size: STRUCTS[name].size, align: STRUCTS[name].align }, m, name);
  }
  // Spot values (wasm32: 4-byte pointers and size_t, 8-aligned uint64_t).
  assert.deepEqual(mod.pw_str, { size: 8, align: 4 });
  assert.deepEqual(mod.pw_call_info, { size: 40, align: 8 });
  assert.deepEqual(mod.pw_output, { size: 88, align: 8 });
});

test('package: the allocator reuses freed blocks of a size, 16-aligned, and grows the memory past its end', () => {
  const before = heapStats();
  const a = malloc(100);
  const b = malloc(10);
  const c = malloc(1);
  assert.deepEqual([a % 16, b % 16, c % 16], [0, 0, 0]);
  assert.equal(b, a + 112, 'sizes round up to 16');
  assert.equal(c, b + 16);
  assert.deepEqual(heapStats(), { blocks: before.blocks + 3, bytes: before.bytes + 112 + 16 + 16 });
  mfree(a);
  mfree(b);
  assert.equal(malloc(10), b, 'a block of the same size is taken first');
  assert.equal(malloc(97), a, 'any request of the same rounded size takes it');
  assert.throws(() => mfree(a + 8), /not a live block/);
  mfree(a);
  mfree(b);
  mfree(c);
  assert.deepEqual(heapStats(), before);
  const big = malloc(8 << 20); // past the initial memory: it grows, and the views follow
  pw.createToolAdapterWrapper(pw.createDuplex(), { tools: { t: () => 1 } }).close();
  mfree(big);
  assert.deepEqual(heapStats(), before);
});

test('package: a request the memory cannot grow to throws RangeError and changes nothing', () => {
  const before = heapStats();
  const bytes = U8.buffer.byteLength;
  const a = malloc(16);
  mfree(a); // `a` was the top block: the top is back at `a`
  // 4 GiB is more than a wasm32 memory can ever hold beside what it has: `memory.grow` refuses.
  assert.throws(() => malloc(2 ** 32), RangeError);
  assert.equal(U8.buffer.byteLength, bytes, 'the memory did not grow');
  assert.deepEqual(heapStats(), before, 'no block was handed out');
  // Had the top moved before the grow, a new block from the top would lie past the memory's end.
  const b = malloc(16);
  assert.equal(b, a, 'the freed block of that size is taken again');
  const odd = malloc(4000 - 16 * 7);
  assert.ok(odd + 4000 - 16 * 7 <= U8.length, 'a block from the top lies inside the memory');
  U8.set([1, 2, 3], odd);
  assert.deepEqual([...U8.subarray(odd, odd + 3)], [1, 2, 3]);
  mfree(b);
  mfree(odd);
  assert.deepEqual(heapStats(), before);
});

test('package: the modules a browser loads import nothing from node: at the top level', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const shipped = manifest.files.filter((f) => f.endsWith('.mjs'));
  assert.deepEqual(shipped.sort(), ['abi.mjs', 'adapter_call.mjs', 'binding.mjs', 'clock.mjs', 'decode.mjs', 'duplex.mjs', 'index.mjs', 'mcp.mjs', 'memory.mjs', 'raw.mjs', 'request.mjs', 'wasm.mjs', 'wrapper.mjs']);
  for (const f of shipped) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    assert.doesNotMatch(text, /^\s*import\s[^(]*from\s+['"]node:/m, f);
    assert.doesNotMatch(text, /^\s*import\s+['"]node:/m, f);
    assert.doesNotMatch(text, /\bBuffer\./, `${f} uses Buffer (not in browsers)`);
  }
});

test('package: the root offers the JavaScript package API names and the decoders', () => {
  for (const name of ['wrapToolAdapter', 'createToolAdapterWrapper', 'createDuplex', 'createSource', 'createSink', 'isDuplex', 'raw', 'rawText', 'createDecoder', 'framesFromResponse', 'encodeItem', 'DecoderStream', 'DecoderTransform', 'providerFromName', 'init', 'createConversation', 'geminiPath']) {
    assert.equal(typeof pw[name], 'function', name);
  }
  assert.equal(pw.Provider.OLLAMA, 5);
});
