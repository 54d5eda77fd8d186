// Bug 4: wrapper.close() frees the wrapper's C memory at once (besides the finalizer), clears
// its timer, disconnects it, and makes every later use throw a clear Error; it is idempotent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper, createDuplex } from '../index.mjs';
import { heapStats } from '../binding.mjs';
import { llm, consumer, runScript, sleep } from './helpers.mjs';

const call = (name, id) => ({ type: 'TOOL_CALL', content: { id, name, args: {} } });

/** How many blocks of the module's memory (the wrapper's) `fn` gave back. */
function countFrees(fn) {
  const before = heapStats().blocks;
  fn();
  return before - heapStats().blocks;
}

const isClosedError = (e) => e instanceof Error && e.code === 'PW_WRAPPER_CLOSED' && /wrapper is closed/.test(e.message);

test('close: frees the C memory once, and every later use throws a clear Error (idempotent)', () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, { tools: { t: () => 1 } });
  consumer(w);
  m.say(call('t', 'a'));
  assert.equal(w.getToolTrace().length, 1);
  assert.equal(w.isClosed, false);
  assert.equal(countFrees(() => w.close()), 4, 'the wrapper block, its tool names, its out structs, its output buffer');
  assert.equal(w.isClosed, true);
  assert.equal(countFrees(() => w.close()), 0, 'a second close does nothing');
  for (const use of [
    () => w.getToolTrace(),
    () => w.clearTrace(),
    () => w.abort(),
    () => w.cancel('x'),
    () => w.tick(),
    () => w.pending,
    () => w.sink.write({ type: 'TEXT', content: 'hi' }),
    () => w.sink.end(),
  ]) {
    assert.throws(use, isClosedError);
  }
  // Disconnected from the model: its frames no longer reach the wrapper (nor freed memory).
  assert.equal(m.say(call('t', 'b')), false);
  assert.equal(m.toModel.filter((f) => f.type === 'TOOL_RESULT').length, 1);
});

test('close: pending calls are dropped: a late callback returns false, a late async result is ignored, a late adapter frame is refused', async () => {
  const m = llm();
  let cb;
  let open;
  const gate = new Promise((r) => (open = r));
  const adapter = createDuplex();
  const w = createToolAdapterWrapper(m.duplex, {
    tools: {
      d: (args, done) => (cb = done),
      a: async () => {
        await gate;
        return 'late';
      },
      files: { adapter },
    },
  });
  consumer(w);
  m.say(call('d', '1'));
  m.say(call('a', '2'));
  m.say(call('files', '3'));
  assert.equal(w.pending, 3);
  w.close();
  assert.equal(cb(null, 'late'), false);
  assert.equal(adapter.source.push({ type: 'END' }), false);
  open();
  await sleep(5);
  assert.equal(m.toModel.filter((f) => f.type === 'TOOL_RESULT').length, 0);
});

test('close: from a consumer write while the wrapper delivers, nothing more is delivered and the memory goes after', () => {
  const m = llm();
  let cb;
  const w = createToolAdapterWrapper(m.duplex, { tools: { d: (args, done) => (cb = done) } });
  const got = [];
  let freedInside = -1;
  w.source.pipe({
    write: (f) => {
      got.push(f.type);
      if (f.type === 'TEXT') freedInside = countFrees(() => w.close());
    },
    end() {},
  });
  m.say(call('d', '1'));
  m.say({ type: 'END' }); // held while d is pending
  const frees = countFrees(() => assert.equal(cb(null, 'ok'), true));
  assert.equal(freedInside, 0, 'not freed while the wrapper was still delivering');
  assert.equal(frees, 4, 'freed when the wrapper call returned');
  assert.deepEqual(got, ['TEXT'], 'the held END was not delivered after close');
  assert.throws(() => w.getToolTrace(), isClosedError);
});

test('close: a sync tool cannot close its own wrapper while it runs', () => {
  const m = llm();
  let w;
  w = createToolAdapterWrapper(m.duplex, { tools: { s: () => w.close() } });
  consumer(w);
  m.say(call('s', '1'));
  assert.match(m.toModel[0].content.error, /sync tool cannot close its own wrapper/);
  assert.equal(w.isClosed, false);
  w.close();
});

test('close: clears the timer, so a process whose only work was a pending call exits at once (60 s timeout)', async () => {
  const r = await runScript(`
    const model = pw.createDuplex({ onWrite() {} });
    const silent = pw.createDuplex({ onWrite() {} });
    const w = pw.createToolAdapterWrapper(model, { tools: { later: (args, cb) => {}, files: { adapter: silent } }, toolTimeoutMs: 60000 });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'd', name: 'later', args: {} } });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'a', name: 'files', args: {} } });
    console.log('pending ' + w.pending);
    w.close();
    console.log('timers ' + process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length);
  `);
  assert.equal(r.signal, null, `killed (a timer lingered): ${r.err}`);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'pending 2\ntimers 0\n');
  assert.ok(r.ms < 10000, `exited after ${r.ms} ms`);
});
