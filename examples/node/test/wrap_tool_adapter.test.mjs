import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapToolAdapter, createDuplex } from '../index.mjs';
import { sleep } from './helpers.mjs';

// A tool adapter that answers each TOOL_CALL with `answer(call)` (a list of frames).
function toolAdapter(answer, { async = false } = {}) {
  const seen = [];
  const d = createDuplex({
    onWrite: (frame) => {
      seen.push(frame);
      if (frame.type !== 'TOOL_CALL') return;
      const go = () => {
        for (const f of answer(frame)) d.source.push(f);
      };
      if (async) setTimeout(go, 2);
      else go();
    },
  });
  return { d, seen };
}

const settle = (fn, args, opts) =>
  new Promise((resolve) => fn(args, (err, result) => resolve({ err, result }), opts));

test('TOOL_RESULT content.result then END settles with the result; TOOL_CALL carries name, args, id', async () => {
  const { d, seen } = toolAdapter((call) => [
    { type: 'TEXT', content: 'working' },
    { type: 'TOOL_RESULT', content: { name: call.content.name, result: { sum: call.content.args.a + 1 } } },
    { type: 'TOOL_RESULT', content: { result: 'ignored' } },
    { type: 'END' },
  ], { async: true });
  const { err, result } = await settle(wrapToolAdapter(d, { name: 'calc' }), { a: 1 }, { id: 'c1' });
  assert.equal(err, null);
  assert.deepEqual(result, { sum: 2 });
  assert.deepEqual(seen[0], { type: 'TOOL_CALL', content: { id: 'c1', name: 'calc', args: { a: 1 } } });
});

test('result extraction falls back to content.content, then the whole frame; END alone gives null', async () => {
  let r = await settle(wrapToolAdapter(toolAdapter(() => [{ type: 'TOOL_RESULT', content: { content: 'c' } }, { type: 'END' }]).d), {});
  assert.equal(r.result, 'c');
  r = await settle(wrapToolAdapter(toolAdapter(() => [{ type: 'TOOL_RESULT', content: 7 }, { type: 'END' }]).d), {});
  assert.deepEqual(r.result, { type: 'TOOL_RESULT', content: 7 });
  r = await settle(wrapToolAdapter(toolAdapter(() => [{ type: 'END' }]).d), {});
  assert.equal(r.err, null);
  assert.equal(r.result, null);
});

test('an ERROR frame settles with an Error (content.message, else "Tool <name> failed"); later frames ignored', async () => {
  let r = await settle(wrapToolAdapter(toolAdapter(() => [{ type: 'ERROR', content: { message: 'disk full' } }, { type: 'TOOL_RESULT', content: { result: 1 } }, { type: 'END' }]).d, { name: 'w' }), {});
  assert.ok(r.err instanceof Error);
  assert.equal(r.err.message, 'disk full');
  r = await settle(wrapToolAdapter(toolAdapter(() => [{ type: 'ERROR' }]).d, { name: 'w' }), {});
  assert.equal(r.err.message, 'Tool w failed');
});

test('the source ending settles like END', async () => {
  const { d } = toolAdapter(() => [{ type: 'TOOL_RESULT', content: { result: 'x' } }]);
  const p = settle(wrapToolAdapter(d), {});
  d.source.end();
  assert.deepEqual(await p, { err: null, result: 'x' });
});

test('timeout settles with "Tool <name> timed out after <ms>ms" on a real timer, and the adapter gets CANCEL', async () => {
  const { d, seen } = toolAdapter(() => []);
  let calls = 0;
  const t0 = Date.now();
  // The call's own timer keeps the process alive while it waits (see timers.test.mjs).
  const r = await new Promise((resolve) =>
    wrapToolAdapter(d, { name: 'slow', timeoutMs: 30 })({}, (err, result) => {
      calls++;
      resolve({ err, result });
    }),
  );
  assert.ok(Date.now() - t0 >= 25);
  assert.equal(r.err.message, 'Tool slow timed out after 30ms');
  assert.deepEqual(seen.map((f) => f.type), ['TOOL_CALL', 'CANCEL']);
  assert.equal(seen[1].content.reason, 'timeout');
  d.source.push({ type: 'END' });
  await sleep(10);
  assert.equal(calls, 1, 'only the first settlement is delivered');
});

test('malformed adapter frames are rejected (onRejected) and the call keeps waiting', async () => {
  const { d } = toolAdapter(() => []);
  const rejected = [];
  const p = settle(wrapToolAdapter(d, { onRejected: (path, frame, err) => rejected.push([path, err.code]) }), {});
  d.source.push({ content: 'no type' });
  d.source.push({ type: 'TOOL_RESULT', content: { result: 5 } });
  d.source.push({ type: 'END' });
  assert.deepEqual(await p, { err: null, result: 5 });
  assert.deepEqual(rejected, [['adapter', 'PW_FRAME_MISSING_TYPE']]);
});
