// Deltas pushed in place (raw.mjs, `inPlace`) when the decoders' output buffer is short: alone
// in its process, so that the module's one output buffer starts at its first 4,096 bytes (a
// configuration whose longest frame is past 1 MiB keeps it there). A drain told "too small"
// hands out the frames so far and writes the next one at the buffer's start again, over them:
// the deltas handed out then must not be read from there. The buffer then doubles (up to 1 MiB)
// for the next writes; the tests run in the order written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDecoder, createToolAdapterWrapper, rawText } from '../index.mjs';
import { C } from '../binding.mjs';
import { inPlace } from '../raw.mjs';
import { consumer, llm } from './helpers.mjs';

const SMALL = { eventCap: 1 << 20, frameBuffer: 1 };
const OUT = 4096; // the output buffer's first size (decode.mjs)

/** One event: a short delta, then a call whose frame is `callLen` bytes, closed at once. */
function event(callLen) {
  const frameOf = (q) => `{"type":"TOOL_CALL","content":{"id":"c","name":"search","args":{"q":"${q}"}}}`;
  const q = 'x'.repeat(callLen - frameOf('').length);
  const call = { index: 0, id: 'c', type: 'function', function: { name: 'search', arguments: JSON.stringify({ q }) } };
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi', tool_calls: [call] }, finish_reason: 'tool_calls' }] })}\n\n`;
}

test('a delta handed out before a "too small" answer is read from its text, not from the buffer the next frame went over', () => {
  const d = createDecoder('openai-chat', SMALL);
  assert.ok(d.maxFrameLen > 1 << 20);
  const delta = '{"type":"TEXT","content":"hi"}';
  // The call's frame fits the buffer, not the room after the delta.
  const frames = d.write(event(OUT - 8));
  assert.deepEqual(
    frames.map((f) => f.type),
    ['TEXT', 'TOOL_CALL'],
  );
  assert.equal(Buffer.byteLength(rawText(frames[1])), OUT - 8);
  assert.ok(OUT - 8 > OUT - delta.length);
  const m = llm();
  const rejected = [];
  const w = createToolAdapterWrapper(m.duplex, { onRejected: (path, frame, err) => rejected.push([path, err.message]) });
  const got = consumer(w);
  m.say(frames[0]);
  assert.deepEqual(rejected, []);
  assert.deepEqual(got, [{ type: 'TEXT', content: 'hi' }]);
  w.close();
  d.close();
});

const delta = (content) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

test('a write whose frames outgrow the output buffer: those written over are read from their texts, and the next such write keeps all in place', (t) => {
  const at = C.handleResponseAt;
  const count = { n: 0 };
  C.handleResponseAt = (...a) => (count.n++, at(...a));
  t.after(() => {
    C.handleResponseAt = at;
  });
  const m = llm();
  const rejected = [];
  const w = createToolAdapterWrapper(m.duplex, { onRejected: (path, frame, err) => rejected.push([path, err.message]) });
  const got = consumer(w);
  const d = createDecoder('openai-chat', SMALL);
  // 3 MiB of frames in one write: the buffer starts over each time they fill it, doubling up to
  // 1 MiB; those after the last start are still in place.
  const words = Array.from({ length: 300 }, (_, i) => `${i}:` + 'y'.repeat(10000));
  const body = words.map(delta).join('');
  const frames = d.write(body);
  assert.equal(frames.length, words.length);
  const kept = inPlace.n;
  assert.ok(kept > 0 && kept < words.length, `${kept} of ${words.length} still in place`);
  assert.deepEqual(inPlace.texts.slice(0, kept), frames.slice(-kept).map(rawText), 'the last ones, those after the last start');
  for (const f of frames) m.say(f);
  assert.equal(count.n, kept, 'only the frames still in place read from there');
  assert.deepEqual(rejected, []);
  assert.deepEqual(
    got.map((f) => f.content),
    words,
  );
  // A body the grown buffer holds: every delta in place.
  count.n = 0;
  got.length = 0;
  const half = words.slice(0, 90);
  const again = d.write(half.map(delta).join(''));
  assert.equal(inPlace.n, half.length);
  for (const f of again) m.say(f);
  assert.equal(count.n, half.length);
  assert.deepEqual(
    got.map((f) => f.content),
    half,
  );
  d.close();
  w.close();
});
