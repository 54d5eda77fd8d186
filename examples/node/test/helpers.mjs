// Test helpers: a fake LLM duplex recording what the wrapper wrote to it, and a consumer.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDuplex } from '../duplex.mjs';

export function llm() {
  const toModel = [];
  const d = createDuplex({ onWrite: (f) => toModel.push(f) });
  return { duplex: d, toModel, say: (f) => d.source.push(f) };
}

export function consumer(wrapper) {
  const got = [];
  wrapper.source.pipe({ write: (f) => got.push(f), end: () => got.push('<end>') });
  return got;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const types = (frames) => frames.map((f) => (typeof f === 'string' ? f : f.type));

// ---- child processes: a script run on its own (what keeps it alive), and replay.mjs


export const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The checkout (its `tests/data`, `target/mcp-servers`): two folders up from the package, or
 * `PW_CHECKOUT` when these tests run from a copy next to an installed package.
 */
export const checkoutDir = process.env.PW_CHECKOUT ? path.resolve(process.env.PW_CHECKOUT) : path.resolve(packageDir, '..', '..');
/** The package's entry as a URL (for `import` in a child's source): what this folder imports. */
export const indexUrl = import.meta.resolve('../index.mjs');

/**
 * Runs `node` with `args` (killed after `killAfterMs`): `{ code, signal, out, err, ms }`.
 */
export function runNode(args, { killAfterMs = 20000 } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, out, err, ms: Date.now() - t0 });
    });
  });
}

/** Runs ES module source `body` in a child `node`, with `pw` the package (`import * as pw`). */
export const runScript = (body, opts) =>
  runNode(['--input-type=module', '-e', `import * as pw from ${JSON.stringify(indexUrl)};\n${body}`], opts);

/** Runs replay.mjs on a scenario (its JSON text): `{ code, lines, err }` (lines parsed). */
export async function runReplay(text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pw-node-replay-'));
  const file = path.join(dir, 'scenario.json');
  fs.writeFileSync(file, text);
  try {
    const r = await runNode([path.join(packageDir, 'replay.mjs'), file]);
    return { code: r.code, err: r.err, lines: r.out.split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
