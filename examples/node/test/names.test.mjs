// Bug 2: tool registries are maps of strings; no name is special. `__proto__` (an own property,
// as JSON.parse makes it), `constructor`, `toString`, `hasOwnProperty` are tools like any other,
// in the package (an object or a Map of tools) and in replay.mjs (scenario `tools`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper, createDuplex } from '../index.mjs';
import { llm, consumer, runReplay } from './helpers.mjs';

const SPECIAL = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
const call = (name, id) => ({ type: 'TOOL_CALL', content: { id, name, args: { n: name } } });
const results = (frames) => frames.filter((f) => f.type === 'TOOL_RESULT').map((f) => f.content);

test('names: tools named __proto__, constructor, toString, hasOwnProperty from JSON.parse are found; an unregistered one is not', () => {
  const m = llm();
  const tools = JSON.parse('{"__proto__": 0, "constructor": 0, "toString": 0, "hasOwnProperty": 0}');
  for (const name of Object.keys(tools)) tools[name] = (args) => `ran ${args.n}`;
  assert.ok(Object.hasOwn(tools, '__proto__'));
  const w = createToolAdapterWrapper(m.duplex, { tools });
  consumer(w);
  SPECIAL.forEach((name, i) => m.say(call(name, `c${i}`)));
  assert.deepEqual(results(m.toModel), [
    { id: 'c0', name: '__proto__', result: 'ran __proto__' },
    { id: 'c1', name: 'constructor', result: 'ran constructor' },
    { id: 'c2', name: 'toString', result: 'ran toString' },
    { id: 'c3', name: 'hasOwnProperty', result: 'ran hasOwnProperty' },
    { id: 'c4', name: 'valueOf', error: 'Tool "valueOf" not found' },
  ]);
});

test('names: a Map of tools works, in every form, special names included; its keys must be strings', () => {
  const m = llm();
  const adapter = createDuplex({
    onWrite: (f) => {
      if (f.type !== 'TOOL_CALL') return;
      adapter.source.push({ type: 'TOOL_RESULT', content: { id: f.content.id, result: `adapter ${f.content.name}` } });
      adapter.source.push({ type: 'END' });
    },
  });
  const tools = new Map([
    ['__proto__', (args) => 'sync'],
    ['constructor', (args, cb) => cb(null, 'callback')],
    ['toString', { adapter }],
    ['hasOwnProperty', { adapter: () => adapter }],
  ]);
  const w = createToolAdapterWrapper(m.duplex, { tools });
  consumer(w);
  SPECIAL.forEach((name, i) => m.say(call(name, `c${i}`)));
  assert.deepEqual(results(m.toModel), [
    { id: 'c0', name: '__proto__', result: 'sync' },
    { id: 'c1', name: 'constructor', result: 'callback' },
    { id: 'c2', name: 'toString', result: 'adapter toString' },
    { id: 'c3', name: 'hasOwnProperty', result: 'adapter hasOwnProperty' },
    { id: 'c4', name: 'valueOf', error: 'Tool "valueOf" not found' },
  ]);
  assert.throws(() => createToolAdapterWrapper(llm().duplex, { tools: new Map([[1, () => 1]]) }), TypeError);
});

test('names: replay.mjs runs scenario tools named __proto__, constructor, toString, hasOwnProperty (sync, deferred, adapter)', async () => {
  const scenario = `{
    "description": "special tool names",
    "tools": {
      "__proto__": {"kind": "sync", "result": {"p": 1}},
      "constructor": {"kind": "deferred"},
      "toString": {"kind": "adapter"},
      "hasOwnProperty": {"kind": "sync", "echo": true}
    },
    "steps": [
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "a", "name": "__proto__", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "b", "name": "constructor", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "c", "name": "toString", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "d", "name": "hasOwnProperty", "args": {"x": 1}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "e", "name": "valueOf", "args": {}}}},
      {"at": 1, "complete": 1, "result": "done"},
      {"at": 2, "adapter": 2, "frame": {"type": "TOOL_RESULT", "content": {"id": "c", "result": "listed"}}},
      {"at": 2, "adapter": 2, "close": true}
    ]
  }`;
  const { code, lines, err } = await runReplay(scenario);
  assert.equal(code, 0, err);
  const toModel = lines.filter((l) => l.to === 'model' && l.frame.type === 'TOOL_RESULT').map((l) => l.frame.content);
  assert.deepEqual(toModel, [
    { id: 'a', name: '__proto__', result: { p: 1 } },
    { id: 'd', name: 'hasOwnProperty', result: { x: 1 } },
    { id: 'e', name: 'valueOf', error: 'Tool "valueOf" not found' },
    { id: 'b', name: 'constructor', result: 'done' },
    { id: 'c', name: 'toString', result: 'listed' },
  ]);
  assert.deepEqual(
    lines.filter((l) => l.to === 'adapter').map((l) => [l.call, l.frame]),
    [[2, { type: 'TOOL_CALL', content: { id: 'c', name: 'toString', args: {} } }]],
  );
  assert.equal(lines.filter((l) => l.refused).length, 0);
});
