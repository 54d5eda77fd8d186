#!/usr/bin/env node
// Issue 28: the realistic JS pipeline, per body and per body byte, on every public recording
// with tool calls (tests/data/provider-streams), in one process, both pipelines interleaved:
//
//   package  fetch (mocked: the recorded bytes as a ReadableStream) → framesFromResponse →
//            createToolAdapterWrapper (the JS tools run as sync tools) → encodeItem of every
//            TOOL_CALL and TOOL_RESULT frame: the next request's items
//   AI SDK   streamText (ai + @ai-sdk/openai .chat() / .responses(), @ai-sdk/anthropic,
//            @ai-sdk/google) over the same mocked fetch, the same tools as `execute`, one step
//            (stopWhen: stepCountIs(1)), the full stream consumed, then `response.messages`:
//            the next request's messages
//
// Both get the same body, cut the same way (one chunk per provider event by default), and run
// the same tool function. Before timing, each recording is run once through both with tools
// that record what they are given: the calls (name + parsed args) must be the same in both
// and the same as the recording's expected file, else the bench exits 1 (a bench measuring
// different work is worthless). The few recordings the AI SDK cannot read are listed in
// SDK_CANNOT with the reason; such a recording is checked to still fail that way (so the list
// cannot go stale) and is timed for the package alone.
//
// Then where the package's time goes, each part measured on the same body, interleaved:
//   library  the C library in wasm alone: pw_decoder_init / feed / poll_frame / finish on the
//            body's chunks already in linear memory, pw_wrapper_handle_response and
//            pw_wrapper_poll_output on each frame's bytes, pw_encode_item on each item's frame
//            (no text decoded; the sync tool's trampoline writes a prepared result)
//   stream   the mocked fetch, the Response, the body's reader (a read per chunk) and an
//            iterator step per frame, as many (prepared) frames per chunk as the decoder hands out
//   json     JSON.parse of every frame the decoder hands out (a plain TEXT / REASONING delta:
//            its object made from a regular expression's match, as raw.mjs does; the wrapper
//            takes a frame as the text it carries, not stringified again), JSON.parse of the tool's args,
//            JSON.stringify of its result, JSON.parse of every frame the wrapper hands out and
//            of every item, JSON.stringify of the request body
//   copy     the UTF-8 copies across the boundary: body chunks in, frame texts out, frames
//            in, args out, results in, wrapper output texts out, item frames in, items out
//   glue     the rest: total − library − stream − json − copy
// and, as the issue measured it, `decode`: the body through one reused decoder (write + end,
// frames as objects), with nothing else.
//
// The parts above are each timed alone, in a loop of their own, where their code and data stay
// in the caches: "glue" then also holds what every part costs more inside the pipeline. So the
// pipeline is also sampled where it runs (V8's profiler through node:inspector, a sample every
// 20 µs over about 150 ms of package rounds a recording) and each sample put where it was taken:
//   library (in place)   the module's wasm functions
//   package JS           the package's JS files, and the engine's and Node's own functions
//                        (web streams' reads, JSON.parse, TextDecoder...) called from them
//   harness              this file: the mocked fetch and its stream's pulls, the user's loop
//   engine               garbage collection and the engine's own work no JS function called
//
// Goal 2 is read against a floor too: floor.mjs runs the same user loop over the same body with
// the least JS any package on a C library must run for it (the reads, copies, texts, objects,
// iterator steps, JSON and the C ABI's calls into a wasm function that does nothing), sampled
// in place the same way; its JS and engine work is what no package can take below.
//
// Every part of every recording runs (--warm-ms, 5 s at the least) before any is timed: a fresh
// process reaches its steady speed only after about half a second of runs.
//
//   node bench.mjs [--iterations N] [--warmup N] [--warm-ms MS] [--block N] [--chunks event|whole] [--variants]
//                  [--only TEXT] [--json FILE]
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { floorOf } from './floor.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..', '..');
const pkgDir = path.join(root, 'examples', 'node');
if (!fs.existsSync(path.join(pkgDir, 'polyweave_tool_adapter.wasm'))) {
  console.error(`bench: ${pkgDir}/polyweave_tool_adapter.wasm is missing: build it first (cd examples/node && npm run build)`);
  process.exit(2);
}
// The checkout's package, by path (index.mjs and binding.mjs by the same URLs, so this bench
// and the package share one module instance and one linear memory).
const pkg = await import(pathToFileURL(path.join(pkgDir, 'index.mjs')).href);
const B = await import(pathToFileURL(path.join(pkgDir, 'binding.mjs')).href);
const { streamText, tool, jsonSchema, stepCountIs } = await import('ai');
const { createOpenAI } = await import('@ai-sdk/openai');
const { createAnthropic } = await import('@ai-sdk/anthropic');
const { createGoogleGenerativeAI } = await import('@ai-sdk/google');

// ------------------------------------------------------------ options

const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const has = (name) => {
  const i = argv.indexOf(name);
  if (i >= 0) argv.splice(i, 1);
  return i >= 0;
};
const ITER = Number(opt('--iterations', '200'));
const WARMUP = Number(opt('--warmup', '60'));
// The least time every recording's parts are run, in turn, before any is timed (ms).
const WARM_MS = Number(opt('--warm-ms', '5000'));
const BLOCK = Number(opt('--block', '20'));
const CHUNKS = opt('--chunks', 'event');
const ONLY = opt('--only', null);
const JSON_OUT = opt('--json', null);
const VARIANTS = has('--variants');
if (argv.length || !['event', 'whole'].includes(CHUNKS) || !(ITER > 0) || !(WARMUP >= 0) || !(WARM_MS >= 0) || !(BLOCK > 0)) {
  console.error('usage: node bench.mjs [--iterations N] [--warmup N] [--warm-ms MS] [--block N] [--chunks event|whole] [--variants] [--only TEXT] [--json FILE]');
  process.exit(2);
}

// ------------------------------------------------------------ recordings

const DATA = path.join(root, 'tests', 'data', 'provider-streams');
// Ollama is left out: the AI SDK has no Ollama provider of its own (only community ones), and
// the recordings are /api/chat NDJSON, not the OpenAI-compatible /v1 format that
// @ai-sdk/openai-compatible reads.
const PROVIDERS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

// Recordings the AI SDK (the versions pinned in package.json) cannot read into the same tool
// calls, with what it does instead: checked on every run.
const SDK_CANNOT = {
  'openai-chat/vercel-ai-mistral-tool-call': {
    why: "Mistral's tool_calls entries have no `index`: @ai-sdk/openai's chunk schema refuses the chunk (a type validation error), no call",
    check: (r) => r.error !== null && /validation/i.test(r.error) && r.calls.length === 0,
  },
  'anthropic/anthropic-sdk-tool-use-response': {
    why: 'the body ends without the blank line after its last event (message_stop, as stored upstream), so no message_stop is dispatched: the AI SDK then finishes with finishReason "other" and runs no tool (the call is in response.messages, without a result); no error',
    check: (r) => r.error === null && r.calls.length === 0,
  },
  // --variants only
  'anthropic/variant-crlf': {
    why: 'the same body with CRLF line ends, its last event (message_stop) unterminated as in the original: the same as anthropic-sdk-tool-use-response',
    check: (r) => r.error === null && r.calls.length === 0,
  },
  'anthropic/variant-no-message-stop': {
    why: 'no message_stop event: the AI SDK finishes with finishReason "other" and runs no tool; no error',
    check: (r) => r.error === null && r.calls.length === 0,
  },
  'gemini/variant-cut-before-terminator': {
    why: "the stream ends while the second streamed call is open (its arguments complete, no closing part): the AI SDK runs neither call; no error",
    check: (r) => r.error === null && r.calls.length === 0,
  },
};

function recordings() {
  const out = [];
  const skipped = [];
  for (const provider of PROVIDERS) {
    for (const f of fs.readdirSync(path.join(DATA, provider)).sort()) {
      if (!f.endsWith('.body')) continue;
      const name = f.slice(0, -'.body'.length);
      const key = `${provider}/${name}`;
      if (ONLY && !key.includes(ONLY)) continue;
      const expected = JSON.parse(fs.readFileSync(path.join(DATA, provider, `${name}.expected.json`), 'utf8'));
      const variant = name.startsWith('variant-');
      if (variant && !VARIANTS) continue;
      if (expected.tool_calls.length === 0) {
        skipped.push([key, 'no tool call']);
        continue;
      }
      if (expected.tool_calls.some((c) => c.invalid)) {
        skipped.push([key, 'a call whose arguments are cut (not JSON): no parsed args to run a tool on']);
        continue;
      }
      const bytes = new Uint8Array(fs.readFileSync(path.join(DATA, provider, f)));
      out.push({ key, provider, name, bytes, chunks: cut(bytes), expected });
    }
  }
  return { out, skipped };
}

/** The body as a provider sends it: one chunk per event (the bytes up to and with the blank line), or whole. */
function cut(bytes) {
  if (CHUNKS === 'whole') return [bytes];
  const chunks = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    const blank = (i >= 1 && bytes[i - 1] === 0x0a) || (i >= 2 && bytes[i - 1] === 0x0d && bytes[i - 2] === 0x0a);
    if (blank) {
      chunks.push(bytes.subarray(start, i + 1));
      start = i + 1;
    }
  }
  if (start < bytes.length) chunks.push(bytes.subarray(start));
  return chunks;
}

/** A mocked `fetch` answering every request with `rec`'s body, chunk by chunk, as an SSE response. */
function mockFetch(rec) {
  return async (_url, init) => {
    if (init?.body !== undefined && typeof init.body !== 'string') throw new Error('a request body that is not text');
    let i = 0;
    const body = new ReadableStream({
      pull(c) {
        if (i < rec.chunks.length) c.enqueue(rec.chunks[i++]);
        else c.close();
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
}

// ------------------------------------------------------------ the tools (the same function in both)

/** The tool every name gets: echoes its args in a small object. */
const echo = (args) => ({ ok: true, echo: args });
const toolNames = (rec) => [...new Set(rec.expected.tool_calls.map((c) => c.name))];

// ------------------------------------------------------------ the package's pipeline

const URLS = {
  'openai-chat': 'https://api.openai.com/v1/chat/completions',
  'openai-responses': 'https://api.openai.com/v1/responses',
  anthropic: 'https://api.anthropic.com/v1/messages',
  gemini: 'https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse',
};

/**
 * The package's pipeline for `rec`, as a user writes it: one wrapper (made once, as an agent
 * keeps it), and per body: the request sent, its frames into the wrapper, the items collected.
 */
function packagePipeline(rec, fns) {
  const fetch = mockFetch(rec);
  const provider = rec.provider;
  let results = [];
  const llm = pkg.createDuplex({
    onWrite: (f) => {
      if (f.type === 'TOOL_RESULT') results.push(pkg.encodeItem(provider, f));
    },
  });
  const wrapper = pkg.createToolAdapterWrapper(llm, { tools: fns });
  wrapper.source.pipe({ write: () => true, end() {} });
  const toolDefs = Object.keys(fns).map((name) => ({ name, parameters: { type: 'object' } }));
  const round = async () => {
    results = [];
    const calls = [];
    let text = '';
    const res = await fetch(URLS[provider], {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], tools: toolDefs, stream: true }),
    });
    for await (const frame of pkg.framesFromResponse(res, provider)) {
      if (frame.type === 'TOOL_CALL') calls.push(pkg.encodeItem(provider, frame));
      else if (frame.type === 'TEXT') text += frame.content;
      llm.source.push(frame);
    }
    wrapper.clearTrace();
    return { text, calls, results };
  };
  return { round, close: () => wrapper.close() };
}

/**
 * The floor's pipeline for `rec` (floor.mjs: the least JS any package must run for it), the
 * user's loop the same as the package's: the request sent, every frame looked at and pushed.
 */
function floorPipeline(rec, t) {
  const fetch = mockFetch(rec);
  const floor = floorOf(t, rec.expected.tool_calls.length);
  return async () => {
    let text = '';
    const res = await fetch(URLS[rec.provider], { method: 'POST', body: JSON.stringify(t.request) });
    for await (const frame of floor.frames(res)) {
      if (frame.type === 'TEXT') text += frame.content;
      floor.push(frame);
    }
    return floor.afterBody(echo) + text.length;
  };
}

// ------------------------------------------------------------ the AI SDK's pipeline

function sdkModel(rec) {
  const fetch = mockFetch(rec);
  switch (rec.provider) {
    case 'openai-chat':
      return createOpenAI({ apiKey: 'k', fetch }).chat('gpt-4o');
    case 'openai-responses':
      return createOpenAI({ apiKey: 'k', fetch }).responses('gpt-4o');
    case 'anthropic':
      return createAnthropic({ apiKey: 'k', fetch })('claude-sonnet-4-5');
    case 'gemini':
      return createGoogleGenerativeAI({ apiKey: 'k', fetch })('gemini-2.5-flash');
    default:
      throw new Error(rec.provider);
  }
}

/** The AI SDK's pipeline for `rec`: the model and the tools made once, a `streamText` per body. */
function sdkPipeline(rec, fns) {
  const model = sdkModel(rec);
  // jsonSchema with no validator: the AI SDK checks nothing against it (zod would add a
  // validation per call to the AI SDK's time; this keeps the comparison in its favour).
  const tools = Object.fromEntries(Object.entries(fns).map(([name, fn]) => [name, tool({ inputSchema: jsonSchema({ type: 'object' }), execute: fn })]));
  const round = async () => {
    let error = null;
    const r = streamText({ model, prompt: 'hi', tools, stopWhen: stepCountIs(1), onError: ({ error: e }) => (error = e) });
    let parts = 0;
    for await (const part of r.fullStream) {
      parts++;
      if (part.type === 'error') error = part.error;
    }
    const { messages } = await r.response;
    return { messages, parts, error };
  };
  return { round, close() {} };
}

// ------------------------------------------------------------ the check: the same calls

const canon = (v) => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

/**
 * Tools recording what they get (name, the call's id when the recording has one, args), and
 * the echo's result. `idOf(thisValue, options)` reads the id each pipeline hands its tool.
 */
function recordingTools(rec, seen, idOf) {
  const ids = rec.expected.tool_calls.some((c) => c.id !== null);
  return Object.fromEntries(
    toolNames(rec).map((name) => [
      name,
      // one declared parameter: the package takes a plain function of one as a sync tool
      function recorded(args) {
        seen.push(`${name} ${ids ? idOf(this, arguments[1]) : '-'} ${canon(args)}`);
        return echo(args);
      },
    ]),
  );
}

/** Runs `rec` once through both with recording tools; what each saw, and what each pipeline produced. */
async function check(rec) {
  const ids = rec.expected.tool_calls.some((c) => c.id !== null);
  const want = rec.expected.tool_calls.map((c) => `${c.name} ${ids ? c.id : '-'} ${canon(c.arguments)}`).sort();
  const pSeen = [];
  const p = packagePipeline(rec, recordingTools(rec, pSeen, (ctx) => ctx.id));
  const pOut = await p.round();
  p.close();
  const sSeen = [];
  const s = sdkPipeline(rec, recordingTools(rec, sSeen, (_this, options) => options.toolCallId));
  let sOut;
  try {
    sOut = await s.round();
  } catch (e) {
    sOut = { messages: [], parts: 0, error: e };
  }
  const sdk = { calls: [...sSeen].sort(), error: sOut.error === null ? null : String(sOut.error?.message ?? sOut.error) };
  const pkgCalls = [...pSeen].sort();
  const problems = [];
  if (canon(pkgCalls) !== canon(want)) problems.push(`package tools got ${canon(pkgCalls)}, expected ${canon(want)}`);
  if (pOut.calls.length !== want.length || pOut.results.length !== want.length) problems.push(`package items: ${pOut.calls.length} calls, ${pOut.results.length} results for ${want.length} calls`);
  const known = SDK_CANNOT[rec.key];
  if (known) {
    if (!known.check(sdk)) problems.push(`listed as one the AI SDK cannot read (${known.why}), but it got ${canon(sdk.calls)} (error: ${sdk.error})`);
  } else {
    if (canon(sdk.calls) !== canon(pkgCalls)) problems.push(`AI SDK tools got ${canon(sdk.calls)}, the package's ${canon(pkgCalls)} (AI SDK error: ${sdk.error})`);
    const results = sOut.messages.flatMap((m) => (m.role === 'tool' ? m.content.filter((c) => c.type === 'tool-result') : []));
    if (results.length !== want.length) problems.push(`AI SDK response.messages has ${results.length} tool results for ${want.length} calls`);
  }
  return { problems, sdkComparable: !known, pkgOut: pOut, pSeen };
}

// ------------------------------------------------------------ the package's parts, alone

const enc = new TextEncoder();
const { C, X, PW, STRUCTS, OutBlock, OutBuf, Stable, malloc, mfree, registerHooks, registerSyncTool, unregisterHooks, unregisterSyncTool, writerWrite, textAt, writeStruct } = B;
const dv = () => B.DV; // the DataView is replaced when the memory grows
const u8 = () => B.U8;

/** Everything the package's pipeline moves for `rec`, recorded once through the package. */
async function traffic(rec) {
  const t = { frames: [], framesPerChunk: [], args: [], results: [], outs: [], itemIn: [], itemOut: [], request: '' };
  const fns = Object.fromEntries(
    toolNames(rec).map((name) => [
      name,
      function recorded(args) {
        t.args.push(this.rawArgs);
        const r = echo(args);
        t.results.push(JSON.stringify(r));
        return r;
      },
    ]),
  );
  const llm = pkg.createDuplex({
    onWrite: (f) => {
      t.outs.push(pkg.rawText(f));
      if (f.type === 'TOOL_RESULT') {
        t.itemIn.push(pkg.rawText(f));
        t.itemOut.push(pkg.rawText(pkg.encodeItem(rec.provider, f)));
      }
    },
  });
  const pushed = new Set();
  const w = pkg.createToolAdapterWrapper(llm, { tools: fns });
  // Forwarded frames are the same objects pushed in (no text crosses); the others are parsed.
  w.source.pipe({ write: (f) => (pushed.has(f) ? true : t.outs.push(pkg.rawText(f))), end() {} });
  const d = pkg.createDecoder(rec.provider);
  const frames = [];
  for (const c of rec.chunks) {
    const fs_ = d.write(c);
    t.framesPerChunk.push(fs_.length);
    frames.push(...fs_);
  }
  const last = d.finish();
  t.framesPerChunk.push(last.length);
  frames.push(...last);
  d.close();
  for (const f of frames) {
    t.frames.push(pkg.rawText(f));
    if (f.type === 'TOOL_CALL') {
      t.itemIn.push(pkg.rawText(f));
      t.itemOut.push(pkg.rawText(pkg.encodeItem(rec.provider, f)));
    }
    pushed.add(f);
    llm.source.push(f);
  }
  w.close();
  t.request = { messages: [{ role: 'user', content: 'hi' }], tools: toolNames(rec).map((name) => ({ name, parameters: { type: 'object' } })), stream: true };
  return t;
}

const NODE_LIMITS = { name_cap: 256, id_cap: 256, args_cap: 16384, result_cap: 65536, message_cap: 4096, trace_entries: 256, trace_bytes: 1 << 20, held_bytes: 65536, hook_log_bytes: 0 };

/** The C library alone on `rec`'s body: decoder, wrapper, item encoder, as the pipeline calls them. */
function libraryPart(rec, t) {
  const provider = pkg.providerFromName(rec.provider);
  // all the inputs placed once in linear memory
  const place = (list) => {
    const bytes = list.map((x) => (typeof x === 'string' ? enc.encode(x) : x));
    const mem = malloc(Math.max(1, bytes.reduce((a, b) => a + b.length, 0)));
    let off = 0;
    const at = bytes.map((b) => {
      u8().set(b, mem + off);
      const span = [mem + off, b.length];
      off += b.length;
      return span;
    });
    return { mem, at };
  };
  const body = place(rec.chunks);
  const frames = place(t.frames);
  const items = place(t.itemIn);
  // decoder
  const dcfg = {};
  C.decoderConfigDefault(dcfg);
  const calls = 8;
  const n = [0];
  C.decoderSize(dcfg, calls, n);
  const dsize = n[0];
  C.decoderMaxFrameLen(dcfg, n);
  const frameBuf = new OutBuf(n[0]);
  const dmem = malloc(dsize + Number(C.decoderAlign()));
  const dblock = dmem + B.alignOffset(dmem, Number(C.decoderAlign()));
  const cfgMem = malloc(STRUCTS.pw_decoder_config.size);
  writeStruct(STRUCTS.pw_decoder_config, cfgMem, dcfg);
  const scratch = malloc(16);
  // wrapper, as index.mjs builds it for sync tools without hooks
  const names = toolNames(rec);
  const cfg = {};
  C.wrapperConfigDefault(cfg);
  Object.assign(cfg, { tool_timeout_ms: 30000, mirror_continue: 1 }, NODE_LIMITS);
  const nameMem = place(names);
  let resultAt = 0;
  const target = {
    syncCall(_tool, _argsText, out) {
      writerWrite(out, t.results[resultAt++ % t.results.length]);
      return 0;
    },
    onCCall() {},
  };
  const ref = new WeakRef(target);
  const syncIds = [];
  const cTools = names.map((_n, i) => {
    const s = registerSyncTool(ref, i);
    syncIds.push(s.id);
    return { name: { ptr: nameMem.at[i][0], len: nameMem.at[i][1] }, kind: PW.TOOL_KIND_SYNC, timeout_ms: PW.TOOL_DEFAULT_TIMEOUT, call: s.call, userdata: s.userdata };
  });
  const hooks = registerHooks(target);
  hooks.hooks.on_tool_result = 0;
  const size = [0];
  if (C.wrapperSize(cfg, 32, cTools.length, size) !== PW.OK) throw new Error('pw_wrapper_size');
  const wmem = malloc(size[0] + Number(C.wrapperAlign()));
  const out = [0];
  if (C.wrapperInit(wmem + B.alignOffset(wmem, Number(C.wrapperAlign())), size[0], cfg, 32, cTools, cTools.length, hooks.hooks, out) !== PW.OK) throw new Error('pw_wrapper_init');
  const w = out[0];
  const blockMem = new Stable(OutBlock.size());
  const block = new OutBlock(blockMem);
  const outBuf = new OutBuf(1 << 16);
  const itemBuf = new OutBuf(1 << 16);
  const wantOuts = t.outs.length;
  const run = () => {
    // the decoder, made anew per body (framesFromResponse makes one per response)
    if (X.pw_decoder_init(dblock, dsize, provider, cfgMem, calls, scratch) !== PW.OK) throw new Error('pw_decoder_init');
    const d = dv().getUint32(scratch, true);
    let nFrames = 0;
    const drain = () => {
      for (;;) {
        const r = X.pw_decoder_poll_frame(d, frameBuf.ptr, frameBuf.cap, scratch + 4);
        if (r === PW.NOTHING) return;
        if (r !== PW.OK) throw new Error(`pw_decoder_poll_frame ${r}`);
        nFrames++;
      }
    };
    for (const [p, len] of body.at) {
      let at = 0;
      while (at < len) {
        if (X.pw_decoder_feed(d, p + at, len - at, scratch) !== PW.OK) throw new Error('pw_decoder_feed');
        at += dv().getUint32(scratch, true);
        drain();
      }
    }
    if (X.pw_decoder_finish(d) !== PW.OK) throw new Error('pw_decoder_finish');
    drain();
    if (nFrames !== t.frames.length) throw new Error(`library: ${nFrames} frames, ${t.frames.length} expected`);
    // the wrapper on each frame
    let outs = 0;
    for (const [p, len] of frames.at) {
      if (X.pw_wrapper_handle_response(w, 1n, p, len, block.disposition) !== PW.OK) throw new Error('pw_wrapper_handle_response');
      while (X.pw_wrapper_poll_output(w, outBuf.ptr, outBuf.cap, block.output) === PW.OK) outs++;
    }
    X.pw_wrapper_clear_trace(w);
    if (outs !== wantOuts) throw new Error(`library: ${outs} outputs, ${wantOuts} expected`);
    // the items
    for (const [p, len] of items.at) {
      if (X.pw_encode_item(provider, p, len, itemBuf.ptr, itemBuf.cap, scratch) !== PW.OK) throw new Error('pw_encode_item');
    }
  };
  const free = () => {
    for (const id of syncIds) unregisterSyncTool(id);
    unregisterHooks(hooks.id);
    for (const p of [body.mem, frames.mem, items.mem, nameMem.mem, dmem, cfgMem, scratch, wmem]) mfree(p);
    for (const b of [blockMem, outBuf, itemBuf, frameBuf]) b.free();
  };
  return { run, free };
}

/**
 * The stream part: fetch, Response, the body's reader, and as many iterator steps as frames,
 * as decode.mjs's framesFromResponse reads a body (one `reader.read()` per chunk, each frame
 * handed out as a settled promise by the iterator's `next()`).
 */
function streamPart(rec, t) {
  const fetch = mockFetch(rec);
  const perChunk = t.framesPerChunk.map((k) => new Array(k).fill(null).map(() => ({})));
  function frames(res) {
    const reader = res.body.getReader();
    let i = 0;
    let list = [];
    let at = 0;
    let ended = false;
    const read = async () => {
      for (;;) {
        if (at < list.length) return { value: list[at++], done: false };
        if (ended) return { value: undefined, done: true };
        const { done } = await reader.read();
        if (done) ended = true; // the reader dropped, not released, as framesFromResponse does
        list = perChunk[i++];
        at = 0;
      }
    };
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      next: () => (at < list.length ? Promise.resolve({ value: list[at++], done: false }) : read()),
    };
  }
  return async () => {
    const res = await fetch(URLS[rec.provider], { method: 'POST', body: '' });
    let k = 0;
    for await (const _f of frames(res)) k++;
    if (k !== t.frames.length) throw new Error(`stream: ${k} frames`);
  };
}

// raw.mjs's deltas: a TEXT or REASONING frame with nothing escaped, made without JSON.parse;
// one with escapes, made with JSON.parse of its content's literal alone.
const PLAIN_DELTA = /^\{"type":"(TEXT|REASONING)","content":"([^"\\\x00-\x1f]*)"\}$/;
const DELTA = /^\{"type":"(TEXT|REASONING)","content":("[^"\\]*(?:\\.[^"\\]*)*")\}$/;

/**
 * The JSON at the boundary (a decoded frame reaches the wrapper as the text it carries: not
 * stringified; a delta's object is made from its match, as raw.mjs makes it).
 */
function jsonPart(t) {
  const results = t.results.map((r) => JSON.parse(r));
  return () => {
    let n = 0;
    for (const f of t.frames) {
      let m = PLAIN_DELTA.exec(f);
      if (m === null && (m = DELTA.exec(f)) !== null) m[2] = JSON.parse(m[2]);
      n += (m !== null ? { type: m[1], content: m[2] } : JSON.parse(f)) === null ? 0 : 1;
    }
    for (const a of t.args) n += JSON.parse(a) === null ? 0 : 1;
    for (const r of results) n += JSON.stringify(r).length;
    for (const o of t.outs) n += JSON.parse(o) === null ? 0 : 1;
    for (const i of t.itemOut) n += JSON.parse(i) === null ? 0 : 1;
    n += JSON.stringify(t.request).length;
    return n;
  };
}

/** The UTF-8 copies across the boundary. */
function copyPart(rec, t) {
  const ins = [...t.frames, ...t.results, ...t.itemIn];
  const outs = [...t.frames, ...t.args, ...t.outs, ...t.itemOut].map((s) => enc.encode(s));
  const outMem = malloc(Math.max(1, outs.reduce((a, b) => a + b.length, 0)));
  const outAt = [];
  let off = 0;
  for (const b of outs) {
    u8().set(b, outMem + off);
    outAt.push([outMem + off, b.length]);
    off += b.length;
  }
  const cap = Math.max(1, ...rec.chunks.map((c) => c.length), ...ins.map((s) => s.length * 3));
  const buf = new OutBuf(cap);
  const run = () => {
    let n = 0;
    for (const c of rec.chunks) {
      u8().set(c, buf.ptr);
      n += c.length;
    }
    for (const s of ins) n += enc.encodeInto(s, u8().subarray(buf.ptr, buf.ptr + cap)).written;
    for (const [p, len] of outAt) n += textAt(p, len).length;
    return n;
  };
  return { run, free: () => (mfree(outMem), buf.free()) };
}

/** As the issue measured decoding: one decoder reused, the body's chunks written, then finish(). */
function decodePart(rec) {
  const d = pkg.createDecoder(rec.provider);
  return {
    run: () => {
      let n = 0;
      for (const c of rec.chunks) n += d.write(c).length;
      return n + d.finish().length;
    },
    free: () => d.close(),
  };
}

// ------------------------------------------------------------ in place: where the samples fall

const inspector = new Session();
inspector.connect();
await inspector.post('Profiler.enable');
await inspector.post('Profiler.setSamplingInterval', { interval: 20 });
const benchUrl = import.meta.url;
const pkgUrl = pathToFileURL(pkgDir).href + '/';
const floorUrl = new URL('./floor.mjs', import.meta.url).href;

/**
 * Runs `round` (async) for at least `ms` milliseconds and `min` rounds under the sampling
 * profiler: the share of the samples in each place (see the file's head).
 */
async function inPlace(round, ms = 150, min = ITER) {
  await inspector.post('Profiler.start');
  const t0 = performance.now();
  for (let i = 0; i < min || performance.now() - t0 < ms; i++) await round();
  const { profile } = await inspector.post('Profiler.stop');
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const placeOf = new Map();
  const own = (n) => {
    const { url, functionName } = n.callFrame;
    if (url.startsWith('wasm://')) return 'library';
    if (url.startsWith(pkgUrl) || url === floorUrl) return 'package'; // the floor's rounds are sampled apart
    if (url === benchUrl) return 'harness';
    if (url === '' && ['(garbage collector)', '(program)', '(root)', '(idle)'].includes(functionName)) return functionName === '(idle)' ? 'idle' : 'engine';
    return null; // the engine's or Node's own function: the place of the code that called it
  };
  const place = (id) => {
    let p = placeOf.get(id);
    if (p !== undefined) return p;
    const n = byId.get(id);
    p = own(n);
    if (p === null) {
      const up = parent.get(id);
      p = up === undefined ? 'engine' : place(up);
      if (p === 'library') p = 'package'; // an import the module calls is the package's JS
      if (p === 'idle') p = 'engine';
    }
    placeOf.set(id, p);
    return p;
  };
  const counts = { library: 0, package: 0, harness: 0, engine: 0 };
  let all = 0;
  for (const id of profile.samples) {
    const p = place(id);
    if (p === 'idle') continue;
    counts[p]++;
    all++;
  }
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / Math.max(1, all)]));
}

// ------------------------------------------------------------ timing

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/**
 * Times `fns` (name → sync or async function): `WARMUP` runs of each, then `ITER` runs of each
 * in blocks of `BLOCK`, the parts' blocks interleaved (their order turning each round), so
 * that slow drift of a shared machine falls on all of them alike, while each block's garbage
 * is collected mostly inside that block (one run per part in turn lets the AI SDK's garbage
 * be collected during the package's runs). Per run: the process's CPU time (process.cpuUsage,
 * µs resolution: what other processes on a shared machine do not inflate) and the wall time
 * (performance.now). Medians and p90s, µs.
 */
async function timeAll(fns) {
  const names = Object.keys(fns);
  const wall = Object.fromEntries(names.map((k) => [k, []]));
  const cpu = Object.fromEntries(names.map((k) => [k, []]));
  for (const k of names) for (let i = 0; i < WARMUP; i++) await fns[k]();
  const rounds = Math.ceil(ITER / BLOCK);
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < names.length; j++) {
      const k = names[(round + j) % names.length];
      const f = fns[k];
      const n = Math.min(BLOCK, ITER - round * BLOCK);
      for (let i = 0; i < n; i++) {
        const c0 = cpuUs();
        const t0 = performance.now();
        const r = f();
        if (r instanceof Promise) await r;
        const t1 = performance.now();
        cpu[k].push(cpuUs() - c0);
        wall[k].push((t1 - t0) * 1000);
      }
    }
  }
  const stats = (xs) => ({ median: quantile(xs, 0.5), p90: quantile(xs, 0.9), mean: xs.reduce((x, y) => x + y, 0) / xs.length });
  return Object.fromEntries(names.map((k) => [k, { cpu: stats(cpu[k]), wall: stats(wall[k]) }]));
}

// ------------------------------------------------------------ run

const { out: recs, skipped } = recordings();
const rows = [];
let failed = false;
const uncomparable = [];
const checked = [];
for (const rec of recs) {
  const c = await check(rec);
  if (c.problems.length) {
    failed = true;
    for (const p of c.problems) console.error(`bench: ${rec.key}: ${p}`);
    continue;
  }
  if (!c.sdkComparable) uncomparable.push([rec.key, SDK_CANNOT[rec.key].why]);
  checked.push({ rec, sdk: c.sdkComparable, t: await traffic(rec) });
}

/** Every part of `rec`'s run, made afresh (`close` frees what they hold). */
function partsOf({ rec, sdk, t }) {
  const fns = Object.fromEntries(toolNames(rec).map((n) => [n, echo]));
  const p = packagePipeline(rec, fns);
  const s = sdk ? sdkPipeline(rec, fns) : null;
  const lib = libraryPart(rec, t);
  const cp = copyPart(rec, t);
  const dec = decodePart(rec);
  const parts = {
    package: p.round,
    ...(s ? { sdk: s.round } : {}),
    library: lib.run,
    stream: streamPart(rec, t),
    json: jsonPart(t),
    copy: cp.run,
    decode: dec.run,
    floor: floorPipeline(rec, t),
  };
  return { parts, inPlaceRound: p.round, close: () => [p, lib, cp, dec].forEach((x) => (x.close ?? x.free)()) };
}

// Every part of every recording is run, in turn, before any is timed: a fresh process takes
// about half a second of runs to reach its steady speed (the engine compiles the module's hot
// functions again, optimised, in the background, on the same two cores), and the first
// recordings were timed during it: the first body took 151-192 µs of CPU against 60-63 after
// this, the library alone 18 µs against 13. Then each recording is timed with its parts made
// afresh, as before, the warm-up's freed.
if (!failed) {
  const warm = checked.map(partsOf);
  const warmT0 = performance.now();
  for (let i = 0; i < WARMUP || performance.now() - warmT0 < WARM_MS; i++) {
    for (const { parts } of warm) for (const f of Object.values(parts)) await f();
  }
  for (const w of warm) w.close();
}

for (const x of checked) {
  if (failed) break;
  const { rec, t } = x;
  const { parts, inPlaceRound, close } = partsOf(x);
  const r = await timeAll(parts);
  r.inPlace = await inPlace(inPlaceRound);
  r.floorInPlace = await inPlace(parts.floor);
  close();
  const row = { key: rec.key, bytes: rec.bytes.length, chunks: rec.chunks.length, frames: t.frames.length, calls: rec.expected.tool_calls.length, ...r };
  rows.push(row);
  const f = (v) => (v === undefined ? '—' : v.cpu.median.toFixed(1));
  console.error(`${rec.key}: package ${f(r.package)} µs, AI SDK ${f(r.sdk)} µs, library ${f(r.library)} µs (CPU medians)`);
}

if (failed) {
  console.error('bench: the two pipelines do not do the same work on every recording: no figures');
  process.exit(1);
}

// ------------------------------------------------------------ report

// The package against the AI SDK: CPU medians (see timeAll), wall medians beside them. Where the
// package's time goes: wall medians (sub-µs resolution; these runs are short and rarely
// preempted: their wall and CPU medians agree), the parts' sum against the package's wall median.
const fmt = (v, d = 1) => (v === undefined || v === null || Number.isNaN(v) ? '—' : v.toFixed(d));
const lines = [];
lines.push(`Per body: CPU µs (median / p90 of ${ITER} runs, wall median in brackets); ns/byte from the CPU medians. The package's parts: wall medians, µs.`);
lines.push('');
lines.push(`| recording | bytes | chunks | frames | calls | package µs | AI SDK µs | AI SDK ÷ package (wall) | package ns/byte | AI SDK ns/byte | package (wall) | library | package JS | stream | json | copy | glue | decode alone | in place: library | package JS | harness | engine | floor: JS + engine |`);
lines.push(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
const sums = { packageWall: 0, package: 0, sdk: 0, pkgWithSdk: 0, library: 0, libWithSdk: 0, bytes: 0, bytesWithSdk: 0, wallPkgWithSdk: 0, wallSdk: 0, stream: 0, json: 0, copy: 0, decode: 0 };
// In place: the package's wall median shared out as its samples fell.
const placed = { library: 0, package: 0, harness: 0, engine: 0 };
let minRatio = Infinity;
let minWallRatio = Infinity;
let worstJs = 0;
let worstPlaced = 0;
// The floor in place: its wall median shared out the same way; its JS and engine work only.
let floorAll = 0;
let floorAbove = 0;
for (const r of rows) {
  const P = r.package.cpu.median;
  const S = r.sdk?.cpu.median;
  const PW_ = r.package.wall.median;
  const L = r.library.wall.median;
  const js = PW_ - L;
  const glue = PW_ - L - r.stream.wall.median - r.json.wall.median - r.copy.wall.median;
  r.packageJs = js;
  r.glue = glue;
  r.ratio = S === undefined ? null : S / P;
  r.wallRatio = S === undefined ? null : r.sdk.wall.median / r.package.wall.median;
  if (r.ratio !== null) {
    minRatio = Math.min(minRatio, r.ratio);
    minWallRatio = Math.min(minWallRatio, r.wallRatio);
  }
  worstJs = Math.max(worstJs, js / L);
  const at = Object.fromEntries(Object.entries(r.inPlace).map(([k, share]) => [k, share * PW_]));
  for (const k of Object.keys(placed)) placed[k] += at[k];
  // The package's own JS in place, the engine's work (collection, mostly of its garbage) with it.
  worstPlaced = Math.max(worstPlaced, (at.package + at.engine) / at.library);
  r.floorJs = r.floor.wall.median * (r.floorInPlace.package + r.floorInPlace.engine);
  floorAll += r.floorJs;
  if (r.floorJs > at.library) floorAbove++;
  sums.package += P;
  sums.packageWall += PW_;
  sums.library += L;
  sums.bytes += r.bytes;
  for (const k of ['stream', 'json', 'copy', 'decode']) sums[k] += r[k].wall.median;
  if (S !== undefined) {
    sums.sdk += S;
    sums.pkgWithSdk += P;
    sums.libWithSdk += L;
    sums.bytesWithSdk += r.bytes;
    sums.wallSdk += r.sdk.wall.median;
    sums.wallPkgWithSdk += r.package.wall.median;
  }
  const cell = (x) => `${fmt(x.cpu.median)} / ${fmt(x.cpu.p90)} (${fmt(x.wall.median)})`;
  lines.push(
    `| ${r.key} | ${r.bytes} | ${r.chunks} | ${r.frames} | ${r.calls} | ${cell(r.package)} | ${S === undefined ? '— (cannot read it)' : cell(r.sdk)} | ${r.ratio === null ? '—' : `${fmt(r.ratio)}× (${fmt(r.wallRatio)}×)`} | ${fmt((P * 1000) / r.bytes)} | ${S === undefined ? '—' : fmt((S * 1000) / r.bytes)} | ${fmt(PW_)} | ${fmt(L)} | ${fmt(js)} | ${fmt(r.stream.wall.median)} | ${fmt(r.json.wall.median)} | ${fmt(r.copy.wall.median)} | ${fmt(glue)} | ${fmt(r.decode.wall.median)} | ${fmt(at.library)} | ${fmt(at.package)} | ${fmt(at.harness)} | ${fmt(at.engine)} | ${fmt(r.floorJs)} |`,
  );
}
const glueAll = sums.packageWall - sums.library - sums.stream - sums.json - sums.copy;
const summary = {
  recordings: rows.length,
  comparable: rows.filter((r) => r.sdk).length,
  chunks: CHUNKS,
  iterations: ITER,
  warmup: WARMUP,
  warm_ms: WARM_MS,
  block: BLOCK,
  package_cpu_median_sum_us: sums.package,
  parts_wall_median_sum_us: { package: sums.packageWall, library: sums.library, stream: sums.stream, json: sums.json, copy: sums.copy, glue: glueAll, decode_alone: sums.decode },
  on_comparable: { package_cpu_us: sums.pkgWithSdk, sdk_cpu_us: sums.sdk, package_wall_us: sums.wallPkgWithSdk, sdk_wall_us: sums.wallSdk },
  ns_per_byte_cpu: { package: (sums.package * 1000) / sums.bytes, package_on_comparable: (sums.pkgWithSdk * 1000) / sums.bytesWithSdk, sdk: (sums.sdk * 1000) / sums.bytesWithSdk },
  min_sdk_over_package_cpu: minRatio,
  min_sdk_over_package_wall: minWallRatio,
  goal_10x_every_recording: minRatio >= 10,
  package_js_over_library_all: (sums.packageWall - sums.library) / sums.library,
  max_package_js_over_library: worstJs,
  goal_js_le_library_every_recording: worstJs <= 1,
  in_place_wall_us: placed,
  in_place_package_js_over_library_all: (placed.package + placed.engine) / placed.library,
  in_place_max_package_js_over_library: worstPlaced,
  floor_in_place_js_us: floorAll,
  floor_over_library_in_place_all: floorAll / placed.library,
  floor_above_library_recordings: floorAbove,
};
const pct = (x) => `${fmt((100 * x) / sums.packageWall, 0)} %`;
lines.push('');
lines.push(`All ${rows.length} recordings (medians summed): the package ${fmt(sums.package)} µs CPU, ${fmt(summary.ns_per_byte_cpu.package)} ns/byte. Where its ${fmt(sums.packageWall)} µs (wall) go: the C library ${fmt(sums.library)} µs (${pct(sums.library)}), stream reading ${fmt(sums.stream)} (${pct(sums.stream)}), JSON ${fmt(sums.json)} (${pct(sums.json)}), copies ${fmt(sums.copy)} (${pct(sums.copy)}), glue ${fmt(glueAll)} (${pct(glueAll)}); decoding alone with a reused decoder: ${fmt(sums.decode)} µs.`);
lines.push(`The ${summary.comparable} the AI SDK reads: the package ${fmt(sums.pkgWithSdk)} µs CPU (${fmt(sums.wallPkgWithSdk)} wall), the AI SDK ${fmt(sums.sdk)} µs CPU (${fmt(sums.wallSdk)} wall): ${fmt(sums.sdk / sums.pkgWithSdk)}× (${fmt(sums.wallSdk / sums.wallPkgWithSdk)}× wall); ${fmt(summary.ns_per_byte_cpu.package_on_comparable)} vs ${fmt(summary.ns_per_byte_cpu.sdk)} ns/byte.`);
lines.push(`In place (the package's wall medians shared out as the profiler's samples fell): the library ${fmt(placed.library)} µs (${pct(placed.library)}), the package's JS ${fmt(placed.package)} (${pct(placed.package)}), the harness ${fmt(placed.harness)} (${pct(placed.harness)}), the engine ${fmt(placed.engine)} (${pct(placed.engine)}): package JS and engine ÷ library ${fmt(summary.in_place_package_js_over_library_all, 2)} over all bodies, ${fmt(worstPlaced, 2)} at worst.`);
lines.push(`Goal 1 (≥ 10× faster than the AI SDK on every recording): ${summary.goal_10x_every_recording ? 'met' : 'NOT met'} (the smallest ratio ${fmt(minRatio)}× CPU, ${fmt(minWallRatio)}× wall).`);
lines.push(`Goal 2 (the package's own JS ≤ the library's time): ${summary.goal_js_le_library_every_recording ? 'met' : 'NOT met'} (package JS ÷ library: ${fmt(summary.package_js_over_library_all, 2)} over all bodies, ${fmt(worstJs, 2)} at worst, the library timed alone; ${fmt(summary.in_place_package_js_over_library_all, 2)} and ${fmt(worstPlaced, 2)} in place).`);
lines.push(`The floor (floor.mjs: the least JS any package on a C library must run here, sampled in place the same way): ${fmt(floorAll)} µs over all bodies, ${fmt(floorAll / placed.library, 2)} of the library's time in place; more than the library's on ${floorAbove} of ${rows.length} recordings. The package's JS and engine above the floor: ${fmt(placed.package + placed.engine - floorAll)} µs.`);
if (skipped.length) lines.push('', 'Left out:', ...skipped.map(([k, why]) => `- ${k}: ${why}`));
if (uncomparable.length) lines.push('', 'Timed for the package alone (the AI SDK cannot read them):', ...uncomparable.map(([k, why]) => `- ${k}: ${why}`));
console.log(lines.join('\n'));
const machine = { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.release()}` };
console.log(`\n${JSON.stringify({ machine, ...summary })}`);
if (JSON_OUT) fs.writeFileSync(JSON_OUT, JSON.stringify({ machine, summary, rows }, null, 1));
