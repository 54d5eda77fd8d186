// Bug 3: replay.mjs gives a sync tool whose scenario `error` is not a string that error, as its
// JSON text exactly as the scenario writes it (SPEC §6; as the Rust, C and Python replays do),
// not a null result. `"error": null` means no error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runReplay } from './helpers.mjs';

test('replay: a sync tool with a non-string scenario error fails with that error as its JSON text, as written', async () => {
  const scenario = `{
    "description": "sync tools whose error is not a string",
    "tools": {
      "obj": {"kind": "sync", "error": {"code": 1e400, "n": 12345678901234567890123}},
      "arr": {"kind": "sync", "error": [1, "\\u00e9", -0, 1.50]},
      "num": {"kind": "sync", "error": 7},
      "yes": {"kind": "sync", "error": true},
      "str": {"kind": "sync", "error": "boom"},
      "none": {"kind": "sync", "error": null, "result": {"ok": 1}}
    },
    "steps": [
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "1", "name": "obj", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "2", "name": "arr", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "3", "name": "num", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "4", "name": "yes", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "5", "name": "str", "args": {}}}},
      {"at": 0, "response": {"type": "TOOL_CALL", "content": {"id": "6", "name": "none", "args": {}}}}
    ]
  }`;
  const { code, lines, err } = await runReplay(scenario);
  assert.equal(code, 0, err);
  const toModel = lines.filter((l) => l.to === 'model' && l.frame.type === 'TOOL_RESULT').map((l) => l.frame.content);
  assert.deepEqual(toModel, [
    { id: '1', name: 'obj', error: '{"code": 1e400, "n": 12345678901234567890123}' },
    { id: '2', name: 'arr', error: '[1, "\\u00e9", -0, 1.50]' },
    { id: '3', name: 'num', error: '7' },
    { id: '4', name: 'yes', error: 'true' },
    { id: '5', name: 'str', error: 'boom' },
    { id: '6', name: 'none', result: { ok: 1 } },
  ]);
  const hooks = lines.filter((l) => l.hook === 'toolResult').map((l) => [l.name, l.result, l.error]);
  assert.deepEqual(hooks[0], ['obj', null, '{"code": 1e400, "n": 12345678901234567890123}']);
  const trace = lines.at(-1).trace;
  assert.deepEqual(trace.map((e) => e.error), toModel.map((c) => c.error ?? null));
  // The continue prompt names the last tool error (SPEC §3.2).
  const prompts = lines.filter((l) => l.to === 'model' && l.frame.type === 'TEXT').map((l) => l.frame.content);
  assert.equal(prompts[0], 'Tool results above. Last tool error: {"code": 1e400, "n": 12345678901234567890123}');
});
