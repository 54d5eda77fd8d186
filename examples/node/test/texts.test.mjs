// Bug 5: one text per failure. Where the C core has the text, the core writes it (the binding
// hands it the raw bytes); a deferred tool's result that is not JSON gets the same text; and no
// retry loop on PW_QUEUE_FULL: drain once, call once more, and a second PW_QUEUE_FULL throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper, raw, wrapToolAdapter, createDuplex } from '../index.mjs';
import { C, PW } from '../binding.mjs';
import { llm, consumer, sleep } from './helpers.mjs';

const call = (name, id, args = {}) => ({ type: 'TOOL_CALL', content: { id, name, args } });
const errors = (frames) => frames.filter((f) => f.type === 'TOOL_RESULT').map((f) => [f.content.id, f.content.error ?? null]);

test('texts: a result that is not JSON gets the core\'s "Tool <name> returned invalid JSON", sync, callback and async alike', async () => {
  const m = llm();
  const circular = {};
  circular.self = circular;
  const w = createToolAdapterWrapper(m.duplex, {
    tools: {
      rawSync: () => raw('{"broken":'),
      bigSync: () => 10n,
      loopSync: () => circular,
      rawCb: (args, cb) => cb(null, raw('{"broken":')),
      bigCb: (args, cb) => cb(null, 10n),
      bigAsync: async () => 10n,
    },
  });
  consumer(w);
  for (const name of ['rawSync', 'bigSync', 'loopSync', 'rawCb', 'bigCb', 'bigAsync']) m.say(call(name, name));
  await sleep(5);
  assert.deepEqual(errors(m.toModel), [
    ['rawSync', 'Tool rawSync returned invalid JSON'],
    ['bigSync', 'Tool bigSync returned invalid JSON'],
    ['loopSync', 'Tool loopSync returned invalid JSON'],
    ['rawCb', 'Tool rawCb returned invalid JSON'],
    ['bigCb', 'Tool bigCb returned invalid JSON'],
    ['bigAsync', 'Tool bigAsync returned invalid JSON'],
  ]);
});

test('texts: an adapter ERROR without a message is the core\'s "Tool <name> failed", in a wrapper and alone', async () => {
  const answer = () => {
    const d = createDuplex({ onWrite: (f) => f.type === 'TOOL_CALL' && d.source.push({ type: 'ERROR', content: { message: 7 } }) });
    return d;
  };
  const m = llm();
  createToolAdapterWrapper(m.duplex, { tools: { files: { adapter: answer() } } });
  m.say(call('files', 'f'));
  assert.deepEqual(errors(m.toModel), [['f', 'Tool files failed']]);
  const err = await new Promise((resolve) => wrapToolAdapter(answer(), { name: 'alone' })({}, (e) => resolve(e)));
  assert.equal(err.message, 'Tool alone failed');
});

test('texts: what only JS knows keeps its JS text: a thrown message, "Tool <name> failed" for a throw without one', async () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, {
    tools: {
      msg: () => {
        throw new Error('disk full');
      },
      bare: () => {
        throw undefined; // eslint-disable-line no-throw-literal
      },
      bareCb: (args, cb) => {
        throw null; // eslint-disable-line no-throw-literal
      },
      bareAsync: async () => {
        throw undefined; // eslint-disable-line no-throw-literal
      },
    },
  });
  consumer(w);
  for (const name of ['msg', 'bare', 'bareCb', 'bareAsync']) m.say(call(name, name));
  await sleep(5);
  assert.deepEqual(errors(m.toModel), [
    ['msg', 'disk full'],
    ['bare', 'Tool bare failed'],
    ['bareCb', 'Tool bareCb failed'],
    ['bareAsync', 'Tool bareAsync failed'],
  ]);
});

/** Replaces `C[fn]` by a stub answering PW_QUEUE_FULL while `body` runs; returns the stub's call count. */
function alwaysQueueFull(fn, body) {
  const real = C[fn];
  let calls = 0;
  C[fn] = () => {
    calls++;
    return PW.QUEUE_FULL;
  };
  try {
    body();
  } finally {
    C[fn] = real;
  }
  return calls;
}

const queueFullError = (e) => e instanceof Error && e.code === 'PW_QUEUE_FULL' && e.errno === PW.QUEUE_FULL && /PW_QUEUE_FULL/.test(e.message) && /bug in the C library/.test(e.message);

test('texts: PW_QUEUE_FULL right after a drain throws an Error naming it (one drain, one more call, no retry loop)', () => {
  const m = llm();
  let cb;
  const w = createToolAdapterWrapper(m.duplex, { tools: { d: (args, done) => (cb = done) } });
  consumer(w);
  const responses = alwaysQueueFull('handleResponseTo', () => assert.throws(() => m.say(call('d', 'x')), queueFullError));
  assert.equal(responses, 2, 'pw_wrapper_handle_response: once, then once more after the drain');
  m.say(call('d', 'y'));
  const completions = alwaysQueueFull('complete', () => assert.throws(() => cb(null, 1), queueFullError));
  assert.equal(completions, 2, 'pw_wrapper_complete: once, then once more after the drain');
  w.close();
});

test('texts: a model that answers inside a delivery finds the queue full: the rest is drained in order and nothing is lost', () => {
  const big = 'x'.repeat(15000);
  const rejected = [];
  const toModel = [];
  const m = createDuplex({
    onWrite: (f) => {
      toModel.push(f);
      if (f.type === 'TOOL_RESULT' && f.content.id === 'c0') {
        for (let i = 1; i <= 8; i++) m.source.push(call('echo', `c${i}`, { s: big }));
      }
    },
  });
  const w = createToolAdapterWrapper(m, { tools: { echo: (args) => args }, onRejected: (path, frame, err) => rejected.push(err.message) });
  const got = consumer(w);
  m.source.push(call('echo', 'c0', { s: big }));
  assert.deepEqual(rejected, []);
  const ids = toModel.filter((f) => f.type === 'TOOL_RESULT').map((f) => f.content.id);
  assert.deepEqual(ids, ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8']);
  assert.ok(toModel.filter((f) => f.type === 'TOOL_RESULT').every((f) => f.content.result.s === big));
  assert.equal(got.length, 9, 'a mirrored prompt per round');
});
