// A TEXT or REASONING delta pushed into a wrapper before anything wrote over the bytes a decoder
// wrote it as (every delta of a write, until the next write) is read by the library from there
// (raw.mjs, `inPlace`), and given the last clock reading again instead of a new one. These tests
// fail when the bytes are taken after something wrote over them, when deltas that are still in
// place are not read from there, or when a reading given to the library is not kept as the last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDecoder, createToolAdapterWrapper, rawText } from '../index.mjs';
import { inPlace } from '../raw.mjs';
import { realClock } from '../clock.mjs';
import { C } from '../binding.mjs';
import { consumer, llm, sleep, types } from './helpers.mjs';

const sse = (o) => `data: ${JSON.stringify(o)}\n\n`;
const delta = (content) => sse({ choices: [{ index: 0, delta: { content } }] });
const toolCall = (id, name, args) =>
  sse({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: args } }] } }] }) +
  sse({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });

/** A wrapper over a fake model whose consumer and rejections are recorded. */
function wrapped(tools = {}) {
  const m = llm();
  const rejected = [];
  const w = createToolAdapterWrapper(m.duplex, { tools, onRejected: (path, frame, err) => rejected.push([path, err.message]) });
  return { m, w, got: consumer(w), rejected };
}

test('a delta pushed after another decoder wrote over its bytes is read from its text', () => {
  const { m, w, got, rejected } = wrapped();
  const a = createDecoder('openai-chat');
  const b = createDecoder('openai-chat');
  const [hello] = a.write(delta('hello, world'));
  // The other decoder's first frame goes where the delta's bytes were: a `TOOL_CALL` whose
  // first bytes, read as long as the delta, are not a frame.
  const calls = b.write(toolCall('c1', 'search', '{"q":"rust"}'));
  assert.deepEqual(types(calls), ['TOOL_CALL']);
  m.say(hello);
  assert.deepEqual(rejected, []);
  assert.deepEqual(got, [{ type: 'TEXT', content: 'hello, world' }]);
  assert.equal(w.pending, 0);
  a.close();
  b.close();
  w.close();
});

test('a delta noted before the output buffer grows is no longer noted, and is read from its text', () => {
  const { m, w, got, rejected } = wrapped();
  const a = createDecoder('openai-chat');
  const [hello] = a.write(delta('hello, world'));
  assert.deepEqual(inPlace.texts.slice(0, inPlace.n), [rawText(hello)], 'noted where the decoder wrote it');
  // A decoder that wants a longer output buffer grows it as it opens for its first body (an
  // empty write opens it and decodes nothing): the old one is freed, the noted bytes with it.
  const b = createDecoder('openai-chat', { frameBuffer: 8 << 20 });
  assert.deepEqual(b.write(''), []);
  assert.equal(inPlace.n, 0);
  m.say(hello);
  assert.deepEqual(rejected, []);
  assert.deepEqual(got, [{ type: 'TEXT', content: 'hello, world' }]);
  a.close();
  b.close();
  w.close();
});

/** Counts the pushes read in place (`C.handleResponseAt`) until the test ends. */
function countInPlace(t) {
  const at = C.handleResponseAt;
  const count = { n: 0 };
  C.handleResponseAt = (...a) => (count.n++, at(...a));
  t.after(() => {
    C.handleResponseAt = at;
  });
  return count;
}

test('every delta of a write is read in place, across its batches and a call written after them', (t) => {
  const count = countInPlace(t);
  const seen = [];
  const { m, w, got, rejected } = wrapped({ search: (args) => (seen.push(args), { hits: 1 }) });
  const d = createDecoder('openai-chat');
  // A delta past the 4,096 bytes of a text batch, alone in its batch, short ones after it, then
  // a call: all of one write, pushed only once the write is over.
  const long = 'x'.repeat(5000);
  const words = [long, 'one', ' tw\u00f6', ' "three"\n'];
  const body = words.map(delta).join('') + toolCall('c2', 'search', '{"q":"wasm"}');
  const frames = d.write(body);
  assert.deepEqual(types(frames), ['TEXT', 'TEXT', 'TEXT', 'TEXT', 'TOOL_CALL']);
  assert.equal(inPlace.n, 4);
  for (const f of frames) m.say(f);
  assert.deepEqual(rejected, []);
  assert.equal(count.n, 4, 'the four deltas read where the decoder wrote them');
  assert.deepEqual(
    got.filter((f) => f.type === 'TEXT').map((f) => f.content).slice(0, 4),
    words,
  );
  assert.deepEqual(seen, [{ q: 'wasm' }]);
  d.close();
  w.close();
});

test('a delta of an earlier write is read from its text, though a later delta was noted at its index', (t) => {
  const count = countInPlace(t);
  const { m, w, got, rejected } = wrapped();
  const d = createDecoder('openai-chat');
  const [first] = d.write(delta('first'));
  const [second] = d.write(delta('other'));
  assert.equal(inPlace.n, 1, 'the second write forgot the first');
  m.say(first); // its index is 0, where the second's bytes are now
  assert.equal(count.n, 0);
  m.say(second);
  assert.equal(count.n, 1);
  assert.deepEqual(rejected, []);
  assert.deepEqual(
    got.map((f) => f.content),
    ['first', 'other'],
  );
  d.close();
  w.close();
});

test('deltas pushed as they are decoded reach the consumer, and a call among them runs', () => {
  const seen = [];
  const { m, w, got, rejected } = wrapped({ search: (args) => (seen.push(args), { hits: 1 }) });
  const d = createDecoder('openai-chat');
  const words = ['one', ' two', ' thr\u00e9e', ' \u{1F600}'];
  for (const word of words) for (const f of d.write(delta(word))) m.say(f);
  for (const f of d.write(toolCall('c3', 'search', '{"q":12345678901234567890}'))) m.say(f);
  for (const f of d.finish()) m.say(f);
  assert.deepEqual(rejected, []);
  // The deltas, then the library's prompt to go on after the call (mirrored to the consumer).
  assert.deepEqual(
    got.filter((f) => f.type === 'TEXT').map((f) => f.content).slice(0, words.length),
    words,
  );
  assert.deepEqual(seen, [JSON.parse('{"q":12345678901234567890}')]);
  assert.equal(m.toModel[0].type, 'TOOL_RESULT');
  w.close();
});

test('deltas with escapes are read where the decoder wrote them too, and arrive as the model wrote them', (t) => {
  const count = countInPlace(t);
  const { m, w, got, rejected } = wrapped();
  const d = createDecoder('openai-chat');
  const words = ['plain', 'say "hi"\n', '\\', 'tab\there\u0001', 'é\u2028😀', 'end\\'];
  for (const word of words) for (const f of d.write(delta(word))) m.say(f);
  assert.deepEqual(rejected, []);
  assert.deepEqual(
    got.map((f) => f.content),
    words,
  );
  assert.equal(count.n, words.length, 'every delta read in place');
  d.close();
  w.close();
});

test('the real clock is read for a call, not again for each delta, and every reading given is kept', async (t) => {
  const read = realClock.now;
  let now = 1000;
  let reads = 0;
  realClock.now = () => (reads++, now);
  t.after(() => {
    realClock.now = read;
  });
  let answer;
  const { m, w, got, rejected } = wrapped({ ask: (args, cb) => (answer = cb) });
  const d = createDecoder('openai-chat');
  const push = (text) => {
    for (const f of d.write(text)) m.say(f);
  };
  push(delta('a'));
  assert.equal(reads, 1, 'the first delta: no reading yet to give again');
  // Two in one write: the first is no longer where the decoder wrote it, and is still a delta
  // (one with escapes: a quote and a newline).
  push(delta('"b"\n') + delta('c'));
  assert.equal(reads, 1, 'later deltas: the same reading');
  now = 2000;
  push(toolCall('k1', 'ask', '{}'));
  assert.ok(reads > 1, 'a call starts its deadline from a new reading');
  now = 3000;
  const beforeComplete = reads;
  assert.equal(answer(null, { ok: true }), true);
  const afterComplete = reads;
  assert.ok(afterComplete > beforeComplete, 'the result is given a new reading');
  // The library has 3000 now: a delta given any earlier reading would be refused as time
  // going back.
  push(delta('d'));
  assert.equal(reads, afterComplete);
  assert.deepEqual(rejected, []);
  // The deltas (the library's prompt after the call aside).
  assert.deepEqual(
    got.filter((f) => f.type === 'TEXT' && f.content.length <= 4).map((f) => f.content),
    ['a', '"b"\n', 'c', 'd'],
  );
  await sleep(0);
  w.close();
  d.close();
});

test('a manual clock is read for every delta: a test moving it back is told at once', () => {
  let now = 100;
  const m = llm();
  const rejected = [];
  const w = createToolAdapterWrapper(m.duplex, { clock: { now: () => now }, onRejected: (path, frame, err) => rejected.push(path) });
  const got = consumer(w);
  const d = createDecoder('openai-chat');
  for (const f of d.write(delta('a'))) m.say(f);
  now = 50;
  for (const f of d.write(delta('b'))) m.say(f);
  assert.deepEqual(rejected, ['response']);
  assert.deepEqual(
    got.map((f) => f.content),
    ['a'],
  );
  w.close();
  d.close();
});
