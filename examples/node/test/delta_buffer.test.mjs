// A delta pushed in place (raw.mjs, `lastDelta`) when the decoders' output buffer is short: alone
// in its process, so that the module's one output buffer stays at its first 4,096 bytes (a
// configuration whose longest frame is past 1 MiB keeps it there). A drain told "too small"
// hands out the frames so far and writes the next one at the buffer's start again, over them:
// the delta handed out then must not be read from there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDecoder, createToolAdapterWrapper, rawText } from '../index.mjs';
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
