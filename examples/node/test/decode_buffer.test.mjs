// The decoder's output buffer when a frame does not fit it: alone in its process, so that the
// module's one output buffer starts small. A configuration whose longest frame is past 1 MiB
// keeps the buffer at `frameBuffer`, and the library's "too small" answers are taken: the batch
// so far handed out first, or the buffer grown to the size named. Every recorded body then
// decodes to the same frames as with the default configuration, whose buffer holds any frame
// (each written in one pass).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createDecoder } from '../index.mjs';
import { checkoutDir } from './helpers.mjs';

const STREAMS = path.join(checkoutDir, 'tests', 'data', 'provider-streams');
const RECORDINGS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini', 'ollama'].flatMap((provider) =>
  fs
    .readdirSync(path.join(STREAMS, provider))
    .filter((f) => f.endsWith('.body'))
    .sort()
    .map((f) => ({ provider, name: `${provider}/${f}`, body: fs.readFileSync(path.join(STREAMS, provider, f)) })),
);

function frames(provider, body, options) {
  const d = createDecoder(provider, { raw: true, ...options });
  try {
    return [...d.write(body), ...d.finish()];
  } finally {
    d.close();
  }
}

test('frames that do not fit the output buffer come out whole, the same as into a buffer that holds any', () => {
  const small = { eventCap: 1 << 20, frameBuffer: 1 };
  assert.ok(createDecoder('anthropic', small).maxFrameLen > 1 << 20);
  // First, while the buffer is still small: some frames are longer than it (4,096 bytes).
  const got = RECORDINGS.map((r) => frames(r.provider, r.body, small));
  const longest = Math.max(...got.flat().map((t) => Buffer.byteLength(t)));
  assert.ok(longest > 4096, `the longest frame is ${longest} bytes`);
  RECORDINGS.forEach((r, i) => assert.deepEqual(got[i], frames(r.provider, r.body), r.name));
  assert.equal(got.flat().length, 785);
});
