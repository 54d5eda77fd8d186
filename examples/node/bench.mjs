#!/usr/bin/env node
// Round trip on the BFCL corpus: every TOOL_CALL goes through createToolAdapterWrapper to a sync
// echo tool registered per tool name; prints µs per round trip (TOOL_CALL in -> TOOL_RESULT and
// prompt out), best of 3 passes.  node bench.mjs [CORPUS.ndjson]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDuplex, createToolAdapterWrapper } from './index.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = process.argv[2] ?? path.join(here, '..', '..', 'tests', 'data', 'bfcl', 'tool-calls.ndjson');
const frames = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const names = new Set(frames.map((f) => f.content?.name).filter((n) => typeof n === 'string'));
const tools = Object.fromEntries([...names].map((n) => [n, (args) => args]));

let results = 0;
const model = createDuplex({ onWrite: (f) => (results += f.type === 'TOOL_RESULT' ? 1 : 0) });
const wrapper = createToolAdapterWrapper(model, { tools, limits: { traceEntries: 8, traceBytes: 1 << 16 } });
wrapper.source.pipe({ write() {}, end() {} });

let best = Infinity;
for (let pass = 0; pass < 4; pass++) {
  results = 0;
  const t0 = process.hrtime.bigint();
  for (const f of frames) model.source.push(f);
  const us = Number(process.hrtime.bigint() - t0) / 1000 / frames.length;
  if (results !== frames.length) throw new Error(`${results} results for ${frames.length} calls`);
  if (pass > 0) best = Math.min(best, us); // pass 0 warms up
}
console.log(`${frames.length} calls, ${names.size} tools: ${best.toFixed(2)} µs per sync round trip (best of 3)`);
