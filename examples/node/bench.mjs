#!/usr/bin/env node
// CPU ns per sync BFCL round trip, in one process, through the harness of
// ../shared/reference-js/bench-api.mjs (plain duplex objects, a sync echo tool per name, every
// TOOL_CALL pushed to the wrapper, TOOL_RESULT + prompt to the model, the prompt to the
// consumer) over both the pure-JavaScript reference (when ../shared/reference-js is there) and
// this package, passes interleaved, CPU time (process.cpuUsage) rather than wall time, since the
// machine is shared. Then where this package's time goes, each part measured on the same frames:
//
//   json     JSON.stringify of the frame in, JSON.parse of the args the tool gets,
//            JSON.stringify of its result, JSON.parse of every frame out (model and consumer)
//   library  the C library in wasm: pw_wrapper_handle_response on the frame's bytes already in
//            linear memory, pw_wrapper_poll_output until empty (no text decoded), with the
//            least JS a sync tool needs: the trampoline into JS, its args decoded and written
//            back as its result (so the args' two copies are counted here)
//   copy     the other UTF-8 copies across the boundary: the frame's text in (encodeInto),
//            every output frame's text out (decode)
//   glue     the rest: the wrapper's JS (dispatch, out structs, hooks' state, duplexes)
//
//   node bench.mjs [CORPUS.ndjson] [--reference PATH/tool-adapter.mjs] [--passes N]
//   PW_WASM=/path/to/other.wasm node bench.mjs      (e.g. a `node build.mjs --opt 3` module)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as pkg from './index.mjs';
import { C, OutBlock, OutBuf, PW, Stable, U8, X, bindHooks, malloc, mfree, registerHooks, registerSyncTool, textAt, unregisterHooks, unregisterSyncTool, writerWrite } from './binding.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const refPath = flag('--reference', path.resolve(here, '..', '..', '..', 'shared', 'reference-js', 'tool-adapter.mjs'));
const passes = Number(flag('--passes', '9'));
const file = args[0] ?? path.join(here, '..', '..', 'tests', 'data', 'bfcl', 'tool-calls.ndjson');
const frames = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const REPEAT = 4; // corpus passes per timed pass: enough CPU time for cpuUsage's resolution

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000; // ns
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** bench-api.mjs's harness over `mod`: a function running one timed pass, ns per call. */
function harness(mod) {
  const tools = Object.fromEntries([...new Set(frames.map((f) => f.content.name))].map((n) => [n, (a) => a]));
  let results = 0;
  let push = null;
  const model = {
    source: {
      pipe(s) {
        push = (f) => s.write(f);
        return s;
      },
    },
    sink: {
      write(f) {
        if (f.type === 'TOOL_RESULT') results++;
        return true;
      },
      end() {},
    },
  };
  const w = mod.createToolAdapterWrapper(model, { tools });
  w.source.pipe({ write: () => true, end() {} });
  if (!push) throw new Error('the wrapper never piped the model source');
  return () => {
    results = 0;
    const t0 = cpuNow();
    for (let r = 0; r < REPEAT; r++) for (const f of frames) push(f);
    const ns = (cpuNow() - t0) / (frames.length * REPEAT);
    if (results !== frames.length * REPEAT) throw new Error(`${results} results for ${frames.length * REPEAT} calls`);
    if (w.clearTrace) w.clearTrace();
    return ns;
  };
}

/** Runs the passes of every named bench interleaved (one of each in turn); medians, the first pass dropped. */
function interleaved(benches) {
  const times = Object.fromEntries(Object.keys(benches).map((k) => [k, []]));
  for (let p = 0; p <= passes; p++) {
    for (const [k, run] of Object.entries(benches)) {
      const ns = run();
      if (p > 0) times[k].push(ns);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v))]));
}

// ---- what crosses the boundary, recorded once through the package
const texts = { in: [], args: [], out: [] };
{
  const tools = Object.fromEntries(
    [...new Set(frames.map((f) => f.content.name))].map((n) => [
      n,
      function echo(a) {
        texts.args.push(this.rawArgs);
        return a;
      },
    ]),
  );
  const model = pkg.createDuplex({ onWrite: (f) => texts.out.push(pkg.rawText(f)) });
  const w = pkg.createToolAdapterWrapper(model, { tools });
  w.source.pipe({ write: (f) => texts.out.push(pkg.rawText(f)), end() {} });
  for (const f of frames) {
    texts.in.push(JSON.stringify(f));
    model.source.push(f);
  }
  w.close();
  if (texts.args.length !== frames.length) throw new Error('every call reached its tool');
}

function jsonPart() {
  const t0 = cpuNow();
  let n = 0;
  for (let r = 0; r < REPEAT; r++) {
    for (const f of frames) n += JSON.stringify(f).length;
    for (const a of texts.args) n += JSON.stringify(JSON.parse(a)).length;
    for (const o of texts.out) n += JSON.parse(o) === null ? 0 : 1;
  }
  if (n === 0) throw new Error('nothing measured');
  return (cpuNow() - t0) / (frames.length * REPEAT);
}

// The copies: texts put in linear memory and read back, as the binding does (the output
// frames' texts placed once, outside the timing, and decoded in it).
const copyBuf = new OutBuf(1 << 16);
const encoder = new TextEncoder();
const outTexts = texts.out.map((t) => encoder.encode(t));
const outMem = malloc(outTexts.reduce((a, b) => a + b.length, 0));
const outAt = [];
{
  let off = 0;
  for (const b of outTexts) {
    U8.set(b, outMem + off);
    outAt.push(off);
    off += b.length;
  }
}
function copyPart() {
  const t0 = cpuNow();
  let n = 0;
  const p = copyBuf.ptr;
  for (let r = 0; r < REPEAT; r++) {
    for (const t of texts.in) n += encoder.encodeInto(t, U8.subarray(p, p + t.length * 3)).written;
    for (let i = 0; i < outTexts.length; i++) n += textAt(outMem + outAt[i], outTexts[i].length).length;
  }
  if (n === 0) throw new Error('nothing measured');
  return (cpuNow() - t0) / (frames.length * REPEAT);
}

// The library alone: a wrapper built through the C calls, the frames' bytes in linear memory.
function libraryBench() {
  const names = [...new Set(frames.map((f) => f.content.name))];
  const cfg = {};
  C.wrapperConfigDefault(cfg);
  // wrapper.mjs's capacities (NODE_LIMITS), no hook log (as the package sets it without hooks).
  Object.assign(cfg, { name_cap: 256, id_cap: 256, args_cap: 16384, result_cap: 65536, message_cap: 4096, trace_entries: 256, trace_bytes: 1 << 20, held_bytes: 65536, hook_log_bytes: 0 });
  const nameBytes = names.map((n) => encoder.encode(n));
  const nameMem = malloc(nameBytes.reduce((a, b) => a + b.length, 0));
  let off = 0;
  const target = {
    syncCall(_tool, argsText, out) {
      writerWrite(out, argsText);
      return 0;
    },
    onCCall() {},
  };
  const hooks = registerHooks();
  bindHooks(hooks.id, target); // bound for the bench's life: it makes every call itself
  const syncIds = [];
  const cTools = names.map((n, i) => {
    U8.set(nameBytes[i], nameMem + off);
    const s = registerSyncTool(hooks.id, i);
    syncIds.push(s.id);
    const t = { name: { ptr: nameMem + off, len: nameBytes[i].length }, kind: PW.TOOL_KIND_SYNC, timeout_ms: PW.TOOL_DEFAULT_TIMEOUT, call: s.call, userdata: s.userdata };
    off += nameBytes[i].length;
    return t;
  });
  hooks.hooks.on_tool_result = 0; // as index.mjs sets it when every tool is sync
  const size = [0];
  if (C.wrapperSize(cfg, 32, cTools.length, size) !== PW.OK) throw new Error('pw_wrapper_size');
  const mem = malloc(size[0]);
  const out = [0];
  if (C.wrapperInit(mem, size[0], cfg, 32, cTools, cTools.length, hooks.hooks, out) !== PW.OK) throw new Error('pw_wrapper_init');
  const w = out[0];
  const inBytes = texts.in.map((t) => encoder.encode(t));
  const inMem = malloc(inBytes.reduce((a, b) => a + b.length, 0));
  const at = [];
  off = 0;
  for (const b of inBytes) {
    U8.set(b, inMem + off);
    at.push(off);
    off += b.length;
  }
  const blockMem = new Stable(OutBlock.size());
  const block = new OutBlock(blockMem);
  const buf = new OutBuf(1 << 16);
  const now = 1n;
  const run = () => {
    const t0 = cpuNow();
    let outs = 0;
    for (let r = 0; r < REPEAT; r++) {
      for (let i = 0; i < inBytes.length; i++) {
        if (X.pw_wrapper_handle_response(w, now, inMem + at[i], inBytes[i].length, block.disposition) !== PW.OK) throw new Error('refused');
        while (X.pw_wrapper_poll_output(w, buf.ptr, buf.cap, block.output) === PW.OK) outs++;
      }
      X.pw_wrapper_clear_trace(w);
    }
    if (outs !== texts.out.length * REPEAT) throw new Error(`${outs} outputs, ${texts.out.length * REPEAT} expected`);
    return (cpuNow() - t0) / (frames.length * REPEAT);
  };
  const free = () => {
    for (const id of syncIds) unregisterSyncTool(id);
    unregisterHooks(hooks.id);
    for (const p of [mem, nameMem, inMem]) mfree(p);
    blockMem.free();
    buf.free();
  };
  return { run, free };
}

const benches = {};
let reference = null;
if (fs.existsSync(refPath)) {
  reference = await import(pathToFileURL(refPath).href);
  benches.pureJs = harness(reference);
} else {
  console.error(`bench: no reference at ${refPath}: the package alone`);
}
benches.wasm = harness(pkg);
const lib = libraryBench();
benches.library = lib.run;
benches.json = jsonPart;
benches.copy = copyPart;
const r = interleaved(benches);
lib.free();
mfree(outMem);
copyBuf.free();
const glue = r.wasm - r.library - r.copy - r.json;
const out = {
  corpus: path.basename(file),
  calls: frames.length,
  ns_per_call_cpu: { pure_js: r.pureJs ?? null, wasm: r.wasm },
  wasm_vs_pure_js: r.pureJs ? Number((r.wasm / r.pureJs).toFixed(2)) : null,
  wasm_breakdown_ns: { json: r.json, library: r.library, copy: r.copy, glue },
  wasm_module: process.env.PW_WASM ?? 'polyweave_tool_adapter.wasm',
  passes,
};
console.log(JSON.stringify(out));
