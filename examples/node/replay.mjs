#!/usr/bin/env node
// node replay.mjs SCENARIO.json: runs one replay scenario (SPEC §6) through this package's
// exported API only (tools registered in the package's forms, the manual test clock
// `clock: { now() }` with `tick()`), printing the Rust replay's NDJSON events.
// Exit codes: 0 when the scenario ran; 2 for bad arguments or a scenario it cannot run (one
// line on stderr naming the file).
import fs from 'node:fs';
import { createDuplex, createToolAdapterWrapper, raw, rawText, wrapToolAdapter } from './index.mjs';
import { isMalformed } from './binding.mjs';

// ------------------------------------------------------------ a JSON reader that keeps raw text

class ScenarioError extends Error {}

/** Parses `text` into nodes `{ kind, raw, value }` (objects: value = [[key, node]...]). */
function parseRaw(text) {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++;
  };
  const fail = () => {
    throw new ScenarioError('not JSON');
  };
  function value(depth) {
    if (depth > 10000) fail();
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members = [];
      ws();
      if (text[i] === '}') i++;
      else {
        for (;;) {
          ws();
          if (text[i] !== '"') fail();
          const k = value(depth + 1);
          ws();
          if (text[i++] !== ':') fail();
          members.push([k.value, value(depth + 1)]);
          ws();
          if (text[i] === ',') i++;
          else if (text[i] === '}') {
            i++;
            break;
          } else fail();
        }
      }
      return { kind: 'object', raw: text.slice(start, i), value: members };
    }
    if (c === '[') {
      i++;
      const items = [];
      ws();
      if (text[i] === ']') i++;
      else {
        for (;;) {
          items.push(value(depth + 1));
          ws();
          if (text[i] === ',') i++;
          else if (text[i] === ']') {
            i++;
            break;
          } else fail();
        }
      }
      return { kind: 'array', raw: text.slice(start, i), value: items };
    }
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      if (i >= text.length) fail();
      i++;
      const r = text.slice(start, i);
      let v;
      try {
        v = JSON.parse(r);
      } catch {
        fail();
      }
      return { kind: 'string', raw: r, value: v };
    }
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 4096));
    if (!m) fail();
    i += m[0].length;
    const r = m[0];
    const kind = r === 'true' || r === 'false' ? 'bool' : r === 'null' ? 'null' : 'number';
    return { kind, raw: r, value: kind === 'number' ? Number(r) : JSON.parse(r) };
  }
  const v = value(0);
  ws();
  if (i !== text.length) fail();
  return v;
}

/** An object node's member `key` (a repeated name: its last value, as the Rust replay reads it). */
const member = (node, key) => {
  if (node?.kind !== 'object') return undefined;
  let found;
  for (const [k, v] of node.value) if (k === key) found = v;
  return found;
};
const num = (node, what) => {
  if (node === undefined) return undefined;
  if (node.kind !== 'number' || !Number.isInteger(node.value) || node.value < 0) {
    throw new ScenarioError(`${what} must be a non-negative integer`);
  }
  return node.value;
};
const bool = (node) => node?.kind === 'bool' && node.value === true;
/** An error message as the scenario gives it: a string decoded, any other value as written. */
const messageOf = (node) => (node.kind === 'string' ? node.value : node.raw);
/** A frame as the scenario gives it: an object's exact text, or a string's text. */
const frameOf = (node) => (node.kind === 'string' ? raw(node.value) : raw(node.raw));

// ------------------------------------------------------------ output

const lines = [];
const print = (line) => lines.push(line);
const jstr = (s) => JSON.stringify(s);

/** A raw JSON text as it goes into one output line (white space between tokens dropped). */
function jv(text) {
  try {
    JSON.parse(text);
  } catch {
    return jstr(text);
  }
  let out = '';
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n') continue;
    else if (ch === '"') inString = true;
    out += ch;
  }
  return out;
}
const nameOf = (name) => (name === null ? 'null' : jstr(name));

// ------------------------------------------------------------ wrapper mode

function runWrapper(sc) {
  const options = member(sc, 'options');
  const toolsNode = member(sc, 'tools');
  const clock = { t: 0, now: () => clock.t };
  const deferred = new Map(); // call index -> callback
  const adapters = new Map(); // call index -> duplex
  // Names are strings and nothing more: a Map, so `__proto__`, `constructor`... are tools like
  // any other (a repeated name keeps its first place and its last value, as in the Rust replay).
  const tools = new Map();
  for (const [name, spec] of toolsNode?.kind === 'object' ? toolsNode.value : []) {
    const kind = member(spec, 'kind')?.value;
    if (kind === 'deferred') {
      tools.set(name, function deferredTool(args, cb) {
        deferred.set(this.index, cb);
      });
    } else if (kind === 'adapter') {
      tools.set(name, {
        adapter: (ctx) => {
          const d = createDuplex({
            onWrite: (frame) => print(`{"to":"adapter","call":${ctx.index},"frame":${jv(rawText(frame))}}`),
          });
          adapters.set(ctx.index, d);
          return d;
        },
      });
    } else if (kind === 'sync') {
      const error = member(spec, 'error');
      const result = member(spec, 'result');
      if (error !== undefined && error.kind !== 'null') {
        // SPEC §6: fails with E, a string as it is, any other JSON value as its text as written.
        const message = messageOf(error);
        tools.set(name, () => {
          throw new Error(message);
        });
      } else if (bool(member(spec, 'echo'))) {
        tools.set(name, function echo() {
          return raw(this.rawArgs);
        });
      } else {
        tools.set(name, () => raw(result === undefined ? 'null' : result.raw));
      }
    } else {
      throw new ScenarioError(`tool ${jstr(name)}: unknown kind`);
    }
  }
  const inner = createDuplex({ onWrite: (frame) => print(`{"to":"model","frame":${jv(rawText(frame))}}`) });
  const wrapper = createToolAdapterWrapper(inner, {
    tools,
    clock,
    toolTimeoutMs: num(member(options, 'toolTimeoutMs'), 'toolTimeoutMs'),
    maxTotalTimeoutMs: num(member(options, 'maxTotalTimeoutMs'), 'maxTotalTimeoutMs'),
    mirrorContinue: member(options, 'mirrorContinue')?.value !== false,
    maxPending: num(member(options, 'maxPending'), 'maxPending') ?? 8,
    maxRounds: num(member(options, 'maxRounds'), 'maxRounds') ?? 0,
    fullValidation: bool(member(options, 'fullValidation')),
    // The replay's capacities (SPEC §6): as the Rust replay's.
    limits: {
      nameCap: 1024,
      idCap: 1024,
      argsCap: 4096,
      resultCap: 4096,
      messageCap: 64 * 1024,
      traceEntries: 32,
      traceBytes: 32 * (12 + 1024 + 4096 + 64 * 1024),
      heldBytes: 8 * (8 * 1024 + 4),
    },
    onToolCall(name) {
      print(`{"hook":"toolCall","name":${nameOf(name)},"args":${jv(this.rawArgs)}}`);
    },
    onToolResult(name) {
      const result = this.rawResult === null ? 'null' : jv(this.rawResult);
      const error = this.error === null ? 'null' : jstr(this.error);
      print(`{"hook":"toolResult","name":${nameOf(name)},"args":${jv(this.rawArgs)},"result":${result},"error":${error}}`);
    },
    onRejected(path, frame, err, call) {
      if (!isMalformed(err.errno)) throw Object.assign(new ScenarioError(`${path} refused: ${err.message}`), { fatal: true });
      print(path === 'adapter' ? `{"rejected":{"path":"adapter","call":${call}}}` : `{"rejected":{"path":"${path}"}}`);
    },
  });
  // onRejected's exceptions are caught by the wrapper: remember a fatal one here.
  let fatal = null;
  const onRejected = wrapper.options.onRejected;
  wrapper.options.onRejected = (...a) => {
    try {
      onRejected(...a);
    } catch (e) {
      fatal ??= e;
    }
  };
  wrapper.source.pipe({ write: (frame) => print(`{"to":"consumer","frame":${jv(rawText(frame))}}`), end() {} });
  if (bool(member(options, 'aborted'))) wrapper.abort();
  const steps = member(sc, 'steps');
  for (const [i, step] of (steps?.kind === 'array' ? steps.value : []).entries()) {
    try {
      const at = num(member(step, 'at'), 'at');
      if (at !== undefined) {
        if (at < clock.t) throw new ScenarioError(`at ${at} is earlier than the previous step's ${clock.t}`);
        clock.t = at;
      }
      wrapper.tick();
      applyStep(step, wrapper, inner, deferred, adapters);
      if (fatal) throw fatal;
    } catch (e) {
      throw new ScenarioError(`step ${i}: ${e.message}`);
    }
  }
  const trace = wrapper.getToolTrace({ raw: true }).map((e) => {
    const result = e.result === null ? 'null' : jv(e.result);
    const error = e.error === null ? 'null' : jstr(e.error);
    const cut = e.truncated ? ',"truncated":true' : '';
    return `{"name":${nameOf(e.name)},"args":${jv(e.args)},"result":${result},"error":${error}${cut}}`;
  });
  print(`{"trace":[${trace.join(',')}]}`);
}

function applyStep(step, wrapper, inner, deferred, adapters) {
  const refused = (n) => print(`{"refused":{"call":${n}}}`);
  let node;
  if ((node = member(step, 'response')) !== undefined) inner.source.push(frameOf(node));
  else if ((node = member(step, 'request')) !== undefined) wrapper.sink.write(frameOf(node));
  else if ((node = member(step, 'complete')) !== undefined) {
    const n = num(node, 'complete');
    const cb = deferred.get(n);
    const error = member(step, 'error');
    const result = member(step, 'result');
    const applied =
      cb !== undefined &&
      (error !== undefined && error.kind !== 'null'
        ? cb(new Error(messageOf(error)))
        : cb(null, raw(result === undefined ? 'null' : result.raw)));
    if (!applied) refused(n);
  } else if ((node = member(step, 'adapter')) !== undefined) {
    const n = num(node, 'adapter');
    const d = adapters.get(n);
    if (d === undefined) return refused(n);
    const frame = member(step, 'frame');
    if (frame !== undefined && d.source.push(frameOf(frame)) === false) return refused(n);
    if (bool(member(step, 'close')) && d.source.end() === false) refused(n);
  } else if (bool(member(step, 'abort'))) wrapper.abort();
  else if ((node = member(step, 'cancel')) !== undefined) wrapper.cancel(node.kind === 'string' ? node.value : node.raw);
  else if (bool(member(step, 'clearTrace'))) wrapper.clearTrace();
  else if (bool(member(step, 'tick'))) {
    // the clock only
  } else throw new ScenarioError('unknown step');
}

// ------------------------------------------------------------ call mode

function runCall(sc) {
  const clock = { t: 0, now: () => clock.t };
  const adapter = createDuplex({ onWrite: (frame) => print(`{"to":"adapter","call":0,"frame":${jv(rawText(frame))}}`) });
  const wrapped = wrapToolAdapter(adapter, {
    name: member(sc, 'name')?.value,
    timeoutMs: num(member(sc, 'timeoutMs'), 'timeoutMs'),
    maxTotalTimeoutMs: num(member(sc, 'maxTotalTimeoutMs'), 'maxTotalTimeoutMs'),
    // SPEC §6: a call's result capacity is the replay's 4096 bytes.
    resultCap: 4096,
    clock,
    onRejected: () => print('{"rejected":{"path":"adapter","call":0}}'),
  });
  const args = member(sc, 'args');
  const id = member(sc, 'id');
  wrapped(
    raw(args === undefined ? '{}' : args.raw),
    function settled(err) {
      if (err) print(`{"settled":{"error":${jstr(this.error)}}}`);
      else print(`{"settled":{"result":${jv(this.rawResult)}}}`);
    },
    id?.kind === 'string' ? { id: id.value } : {},
  );
  const steps = member(sc, 'steps');
  for (const [i, step] of (steps?.kind === 'array' ? steps.value : []).entries()) {
    try {
      const at = num(member(step, 'at'), 'at');
      if (at !== undefined) {
        if (at < clock.t) throw new ScenarioError(`at ${at} is earlier than the previous step's ${clock.t}`);
        clock.t = at;
      }
      wrapped.tick();
      const frame = member(step, 'frame');
      if (frame !== undefined) adapter.source.push(frameOf(frame));
      else if (bool(member(step, 'close'))) adapter.source.end();
      else if (!bool(member(step, 'tick'))) throw new ScenarioError('unknown step');
    } catch (e) {
      throw new ScenarioError(`step ${i}: ${e.message}`);
    }
  }
}

// ------------------------------------------------------------ main

const file = process.argv[2];
if (!file || process.argv.length !== 3) {
  process.stderr.write('usage: node replay.mjs SCENARIO.json\n');
  process.exit(2);
}
let code = 0;
try {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(fs.readFileSync(file));
  } catch (e) {
    throw new ScenarioError(e.code === 'ENOENT' ? 'cannot read the file' : 'not JSON');
  }
  const sc = parseRaw(text);
  if (sc.kind !== 'object') throw new ScenarioError('a scenario must be a JSON object');
  const mode = member(sc, 'mode')?.value ?? 'wrapper';
  if (mode === 'call') runCall(sc);
  else if (mode === 'wrapper') runWrapper(sc);
  else throw new ScenarioError('mode must be "wrapper" or "call"');
} catch (e) {
  process.stderr.write(`replay.mjs: ${file}: ${e instanceof ScenarioError ? e.message : e.stack}\n`);
  code = 2;
}
process.stdout.write(lines.map((l) => `${l}\n`).join(''));
process.exitCode = code;
