// Decode throughput of a Node stream parser on the recorded provider bodies: the SSE parser
// vercel/ai uses (`eventsource-parser`, the version `@ai-sdk/provider-utils` resolves to;
// tests/bench/package.json pins it) and `JSON.parse` of each payload, plus the accumulation the
// SDKs do: text deltas joined, each tool call's argument text joined from its pieces (or its
// whole value taken) and parsed once at the end, the finish reason and an in-stream error kept.
// Ollama's NDJSON is split at LF and each line parsed.
//
//   npm ci --prefix tests/bench && node tests/bench/decode_compare.mjs [--min-time 1.0]
//
// This is leaner than vercel/ai's own `parseJsonEventStream` + provider transforms (no web
// streams, no schema validation, no `isParsableJson` of the arguments at every delta), so the
// figures are an upper bound for a Node parser. For each provider every body is decoded from
// its bytes (`TextDecoder` included), pass after pass for `--min-time` s (at least 5 passes)
// after a JIT warm-up; the median pass is reported as `node`, and `bare` (parser + JSON.parse,
// no accumulation) beside it. One JSON object a provider on stdout (for decode_compare.sh), a
// readable line on stderr. MB is 10^6 bytes.

import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createParser } from "eventsource-parser";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const STREAMS = join(ROOT, "tests", "data", "provider-streams");
const PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"];

/** Every SSE event of `bytes`: (name, data) to `onEvent`. */
function sse(bytes, onEvent) {
  const text = new TextDecoder().decode(bytes);
  const parser = createParser({ onEvent });
  parser.feed(text);
}

function parse(data) {
  try {
    return JSON.parse(data);
  } catch {
    return undefined; // vercel/ai's safeParseJSON: an error chunk, skipped here
  }
}

/** What a caller does with a call's argument text: parse it (null when it is not JSON). */
function argsValue(text) {
  if (text === undefined || text === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function result(r) {
  return {
    text: r.text,
    finish: r.finish ?? null,
    error: r.error ?? null,
    calls: [...r.calls.values()].map((c) => [c.name, c.raw !== undefined ? c.raw : argsValue(c.args)]),
  };
}

function openaiChat(bytes) {
  const r = { text: "", calls: new Map(), whole: 0 };
  sse(bytes, ({ data }) => {
    if (r.error !== undefined || data === "[DONE]") return;
    const chunk = parse(data);
    if (chunk === undefined) return;
    if (chunk.error != null) {
      r.error = chunk.error.message ?? chunk.error;
      return;
    }
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === "string") r.text += delta.content;
    for (const tc of delta.tool_calls ?? []) {
      const key = tc.index ?? `whole${r.whole++}`;
      let call = r.calls.get(key);
      if (!call) r.calls.set(key, (call = { id: null, name: "", args: "" }));
      if (tc.id) call.id ??= tc.id;
      if (tc.function?.name) call.name ||= tc.function.name;
      const a = tc.function?.arguments;
      if (typeof a === "string") call.args += a;
      else if (a != null) call.raw = a;
    }
    if (choice.finish_reason) r.finish = choice.finish_reason;
  });
  return result(r);
}

function openaiResponses(bytes) {
  const r = { text: "", calls: new Map() };
  sse(bytes, ({ data }) => {
    if (r.error !== undefined || data === "[DONE]") return;
    const ev = parse(data);
    if (ev === undefined) return;
    switch (ev.type) {
      case "response.output_text.delta":
        r.text += ev.delta;
        break;
      case "response.output_item.added":
      case "response.output_item.done": {
        const item = ev.item;
        if (item?.type !== "function_call") break;
        let call = r.calls.get(ev.output_index);
        if (!call) r.calls.set(ev.output_index, (call = { id: null, name: "", args: "", pieces: false }));
        call.id ??= item.call_id || null;
        call.name ||= item.name;
        if (!call.pieces && typeof item.arguments === "string") call.args = item.arguments;
        break;
      }
      case "response.function_call_arguments.delta": {
        const call = r.calls.get(ev.output_index);
        if (call) {
          if (!call.pieces) call.args = "";
          call.pieces = true;
          call.args += ev.delta;
        }
        break;
      }
      case "response.function_call_arguments.done": {
        const call = r.calls.get(ev.output_index);
        if (call && !call.pieces) call.args = ev.arguments;
        break;
      }
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        r.finish = ev.response?.status;
        break;
      case "error":
        r.error = ev.message ?? ev.error?.message;
        break;
    }
  });
  return result(r);
}

function anthropic(bytes) {
  const r = { text: "", calls: new Map() };
  sse(bytes, ({ event, data }) => {
    if (r.error !== undefined || event === "ping") return;
    const ev = parse(data);
    if (ev === undefined) return;
    switch (ev.type) {
      case "content_block_start": {
        const block = ev.content_block;
        if (block.type === "text") r.text += block.text ?? "";
        else if (block.type === "tool_use")
          r.calls.set(ev.index, { id: block.id, name: block.name, args: "", input: block.input });
        break;
      }
      case "content_block_delta": {
        const d = ev.delta;
        if (d.type === "text_delta") r.text += d.text;
        else if (d.type === "input_json_delta") {
          const call = r.calls.get(ev.index);
          if (call) call.args += d.partial_json;
        }
        break;
      }
      case "content_block_stop": {
        const call = r.calls.get(ev.index);
        if (call && call.args === "" && call.input !== undefined) call.raw = call.input;
        break;
      }
      case "message_delta":
        if (ev.delta?.stop_reason) r.finish = ev.delta.stop_reason;
        break;
      case "error":
        r.error = ev.error?.message ?? ev;
        break;
    }
  });
  return result(r);
}

function gemini(bytes) {
  const r = { text: "", calls: new Map() };
  let open = null;
  sse(bytes, ({ data }) => {
    if (r.error !== undefined) return;
    const chunk = parse(data);
    if (chunk === undefined) return;
    if (chunk.error) {
      r.error = chunk.error.message ?? chunk.error;
      return;
    }
    const cand = chunk.candidates?.[0];
    for (const part of cand?.content?.parts ?? []) {
      if (typeof part.text === "string" && !part.thought) r.text += part.text;
      const fc = part.functionCall;
      if (!fc) continue;
      if (fc.name) {
        const call = { id: fc.id || null, name: fc.name, raw: fc.args ?? {}, last: {} };
        r.calls.set(r.calls.size, call);
        open = fc.willContinue ? call : null;
      }
      if (open && fc.partialArgs) {
        for (const p of fc.partialArgs) {
          const v = p.stringValue ?? p.numberValue ?? p.boolValue ?? p.nullValue ?? null;
          const path = p.jsonPath ?? "";
          if (typeof v === "string" && open.last[path]) open.raw[path] += v;
          else open.raw[path] = v;
          open.last[path] = p.willContinue === true;
        }
      }
      if (!fc.name && !fc.willContinue) open = null;
    }
    if (cand?.finishReason) r.finish = cand.finishReason;
  });
  return result(r);
}

function ollama(bytes) {
  const r = { text: "", calls: new Map() };
  for (const line of new TextDecoder().decode(bytes).split("\n")) {
    if (r.error !== undefined) break;
    if (line.trim() === "") continue;
    const chunk = parse(line);
    if (chunk === undefined) continue;
    if (chunk.error) {
      r.error = chunk.error;
      break;
    }
    const m = chunk.message ?? {};
    if (typeof m.content === "string") r.text += m.content;
    for (const tc of m.tool_calls ?? [])
      r.calls.set(r.calls.size, { id: tc.id ?? null, name: tc.function?.name, raw: tc.function?.arguments ?? {} });
    if (chunk.done) r.finish = chunk.done_reason ?? null;
  }
  return result(r);
}

function bareSse(bytes) {
  let n = 0;
  sse(bytes, ({ data }) => {
    if (data !== "[DONE]" && parse(data) !== undefined) n++;
  });
  return n;
}

function bareNdjson(bytes) {
  let n = 0;
  for (const line of new TextDecoder().decode(bytes).split("\n")) if (line.trim() !== "" && parse(line) !== undefined) n++;
  return n;
}

const DECODE = {
  "openai-chat": [openaiChat, bareSse],
  "openai-responses": [openaiResponses, bareSse],
  anthropic: [anthropic, bareSse],
  gemini: [gemini, bareSse],
  ollama: [ollama, bareNdjson],
};

function recordings(provider) {
  const dir = join(STREAMS, provider);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".body"))
    .sort()
    .map((f) => ({
      name: f.slice(0, -5),
      body: new Uint8Array(readFileSync(join(dir, f))),
      expected: JSON.parse(readFileSync(join(dir, f.slice(0, -5) + ".expected.json"), "utf8")),
    }));
}

/** Text and call names as the expected file has them. */
function agrees(res, expected) {
  const names = res.calls.map((c) => c[0]);
  const want = expected.tool_calls.map((c) => c.name);
  return res.text === expected.text && names.length === want.length && names.every((n, i) => n === want[i]);
}

let sink = 0;

/** Median seconds of one pass over `bodies`, passes repeated for `minTime` s (at least 5). */
function medianPass(fn, bodies, minTime) {
  const warm = performance.now();
  while (performance.now() - warm < 250) for (const b of bodies) sink += fn(b) ? 1 : 0;
  const samples = [];
  let total = 0;
  while (total < minTime || samples.length < 5) {
    const t0 = performance.now();
    for (const b of bodies) sink += fn(b) ? 1 : 0;
    const dt = (performance.now() - t0) / 1000;
    samples.push(dt);
    total += dt;
  }
  samples.sort((a, b) => a - b);
  const mid = samples.length >> 1;
  const median = samples.length % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  return [median, samples.length];
}

function main() {
  const args = process.argv.slice(2);
  let minTime = 1.0;
  const providers = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--min-time") minTime = Number(args[++i]);
    else providers.push(args[i]);
  }
  const version = JSON.parse(
    readFileSync(join(dirname(fileURLToPath(import.meta.url)), "node_modules", "eventsource-parser", "package.json"), "utf8"),
  ).version;
  for (const provider of providers.length ? providers : PROVIDERS) {
    const recs = recordings(provider);
    const [decode, bare] = DECODE[provider];
    const bodies = recs.map((r) => r.body);
    const agree = recs.filter((r) => agrees(decode(r.body), r.expected)).length;
    const bytes = bodies.reduce((n, b) => n + b.length, 0);
    const [tNode, nNode] = medianPass(decode, bodies, minTime);
    const [tBare, nBare] = medianPass(bare, bodies, minTime);
    const row = {
      provider,
      parser: `eventsource-parser ${version} + JSON.parse, node ${process.version}`,
      bodies: recs.length,
      bytes,
      agree,
      node_s: tNode,
      node_passes: nNode,
      node_mbps: bytes / tNode / 1e6,
      bare_s: tBare,
      bare_passes: nBare,
      bare_mbps: bytes / tBare / 1e6,
    };
    console.log(JSON.stringify(row));
    console.error(
      `node   ${provider.padEnd(16)} ${recs.length.toString().padStart(2)} bodies ${bytes.toString().padStart(7)} B: ` +
        `accumulating ${row.node_mbps.toFixed(2).padStart(7)} MB/s (${nNode} passes), ` +
        `parser+JSON.parse ${row.bare_mbps.toFixed(2).padStart(7)} MB/s (${nBare} passes); ` +
        `${agree}/${recs.length} agree with the expected files`,
    );
  }
  if (sink < 0) console.error(sink);
}

main();
