// The stream decoders and item encoders through the Node package: every recorded provider body of
// tests/data/provider-streams, whole and in small random pieces, through createDecoder, the
// node:stream Transform, the WHATWG TransformStream and framesFromResponse over a chunked fetch
// Response, gives back exactly what the provider's own SDK reconstructs (its `.expected.json`);
// items for every provider; every refusal its own code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  createDecoder,
  DecoderStream,
  DecoderTransform,
  encodeItem,
  framesFromResponse,
  Provider,
  providerFromName,
  raw,
  rawText,
} from '../index.mjs';
import { PW } from '../binding.mjs';
import { checkoutDir } from './helpers.mjs';

const STREAMS = path.join(checkoutDir, 'tests', 'data', 'provider-streams');
const PROVIDERS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini', 'ollama'];

/** Every recorded body: `{ provider, name, body, expected }`, sorted by name. */
const RECORDINGS = PROVIDERS.flatMap((provider) =>
  fs
    .readdirSync(path.join(STREAMS, provider))
    .filter((f) => f.endsWith('.body'))
    .sort()
    .map((f) => {
      const stem = f.slice(0, -'.body'.length);
      return {
        provider,
        name: `${provider}/${stem}`,
        body: fs.readFileSync(path.join(STREAMS, provider, f)),
        expected: JSON.parse(fs.readFileSync(path.join(STREAMS, provider, `${stem}.expected.json`), 'utf8')),
      };
    }),
);

/** The expected file's fields that the frames decide. */
function wanted(e) {
  const toolCalls = e.tool_calls.map((c) =>
    c.invalid === true
      ? { id: c.id, name: c.name, arguments_text: c.arguments_text, invalid: true }
      : { id: c.id, name: c.name, arguments: c.arguments },
  );
  return { text: e.text, tool_calls: toolCalls, finish: e.finish, error: e.error };
}

/** What the provider's SDK rebuilds, read back from frame objects. */
function reconstruct(frames) {
  let text = '';
  let finish = null;
  let error = null;
  let ends = 0;
  const toolCalls = [];
  for (const f of frames) {
    const c = f.content;
    switch (f.type) {
      case 'TEXT':
        assert.equal(typeof c, 'string');
        text += c;
        break;
      case 'REASONING':
      case 'STATE':
        break;
      case 'TOOL_CALL':
        toolCalls.push(
          'args_error' in c
            ? { id: c.id ?? null, name: c.name, arguments_text: c.args, invalid: true }
            : { id: c.id ?? null, name: c.name, arguments: c.args },
        );
        break;
      case 'ERROR':
        error = c.message;
        break;
      case 'END':
        ends += 1;
        finish = c.reason;
        break;
      default:
        assert.fail(`unexpected frame type ${f.type}`);
    }
  }
  assert.equal(ends, 1, 'one END per body');
  return { text, tool_calls: toolCalls, finish, error };
}

function check(r, frames, stats, how) {
  for (const f of frames) {
    const t = rawText(f);
    assert.ok(!t.includes('\n'), `${r.name} ${how}: one line`);
    assert.deepEqual(JSON.parse(t), f);
  }
  assert.deepEqual(reconstruct(frames), wanted(r.expected), `${r.name} ${how}`);
  if (stats) {
    assert.equal(stats.callsStarted, stats.callsWritten, `${r.name} ${how}: calls started and written`);
    assert.equal(stats.callsWritten, frames.filter((f) => f.type === 'TOOL_CALL').length);
  }
}

/** A seeded xorshift: `next(most)` is in 1..most. */
function rng(seed) {
  let s = seed >>> 0 || 1;
  return (most) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return 1 + (s % most);
  };
}

function pieces(body, next, most) {
  const out = [];
  for (let at = 0; at < body.length; ) {
    const n = next(most);
    out.push(body.subarray(at, at + n));
    at += n;
  }
  return out;
}

function decodeAll(provider, chunks, options) {
  const d = createDecoder(provider, options);
  try {
    const frames = [];
    for (const c of chunks) frames.push(...d.write(c));
    frames.push(...d.finish());
    return { frames, stats: d.stats };
  } finally {
    d.close();
  }
}

/** A ReadableStream of `chunks` (copies, as a network would hand them), with its cancels counted. */
function streamOf(chunks, seen = {}) {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(new Uint8Array(chunks[i++]));
      else controller.close();
    },
    cancel() {
      seen.cancelled = (seen.cancelled ?? 0) + 1;
    },
  });
}

async function collect(iterable) {
  const out = [];
  for await (const f of iterable) out.push(f);
  return out;
}

const texts = (frames) => frames.map((f) => rawText(f));

test('there are 71 recordings with 87 calls', () => {
  assert.equal(RECORDINGS.length, 71);
  assert.equal(
    RECORDINGS.reduce((n, r) => n + r.expected.tool_calls.length, 0),
    87,
  );
});

test('every recording whole gives what its SDK reconstructs', () => {
  for (const r of RECORDINGS) {
    const { frames, stats } = decodeAll(r.provider, [r.body]);
    check(r, frames, stats, 'whole');
  }
});

test('every recording in small random pieces gives the same frames', () => {
  const next = rng(0x5eed0071);
  for (const r of RECORDINGS) {
    const whole = texts(decodeAll(r.provider, [r.body]).frames);
    for (const most of [1, 3, 7, 16, 64]) {
      const { frames, stats } = decodeAll(r.provider, pieces(r.body, next, most));
      assert.deepEqual(texts(frames), whole, `${r.name} in pieces of 1..${most}`);
      check(r, frames, stats, `pieces of 1..${most}`);
    }
  }
});

test('framesFromResponse over a chunked fetch Response, and over a whole one', async () => {
  const next = rng(71);
  for (const r of RECORDINGS) {
    const whole = texts(decodeAll(r.provider, [r.body]).frames);
    const chunked = await collect(framesFromResponse(new Response(streamOf(pieces(r.body, next, 24))), r.provider));
    assert.deepEqual(texts(chunked), whole, r.name);
    check(r, chunked, null, 'framesFromResponse');
    const once = await collect(framesFromResponse(new Response(r.body), r.provider));
    assert.deepEqual(texts(once), whole, r.name);
  }
});

test('framesFromResponse: early exit cancels the body; a read body is refused; no body is empty', async () => {
  const r = RECORDINGS.find((x) => x.name === 'openai-chat/variant-comments');
  const seen = {};
  for await (const f of framesFromResponse(new Response(streamOf(pieces(r.body, rng(3), 5), seen)), 'openai-chat')) {
    assert.equal(f.type, 'TOOL_CALL');
    break;
  }
  assert.equal(seen.cancelled, 1);

  const used = new Response(r.body);
  await used.arrayBuffer();
  await assert.rejects(collect(framesFromResponse(used, 'openai-chat')), /already read/);
  assert.deepEqual(await collect(framesFromResponse(new Response(null), 'openai-chat')), [
    { type: 'END', content: { reason: null } },
  ]);
  // A ReadableStream and an async iterable of chunks are bodies too.
  const whole = texts(decodeAll('openai-chat', [r.body]).frames);
  assert.deepEqual(texts(await collect(framesFromResponse(streamOf([r.body]), 'openai-chat'))), whole);
  assert.deepEqual(texts(await collect(framesFromResponse(Readable.from([r.body]), 'openai-chat'))), whole);
  await assert.rejects(collect(framesFromResponse(new Response(r.body), 'bedrock')), (e) => e.code === 'PW_UNKNOWN_PROVIDER' && e.errno === PW.UNKNOWN_PROVIDER);
});

test('framesFromResponse answers like an async generator: calls in order, return() and throw() end it, a bad chunk cancels the body', async () => {
  const r = RECORDINGS.find((x) => x.name === 'openai-chat/variant-comments');
  const whole = texts(decodeAll(r.provider, [r.body]).frames);
  // next() called again before the one before settled: answered in order, then done for good
  const it = framesFromResponse(new Response(streamOf(pieces(r.body, rng(5), 9))), 'openai-chat');
  assert.equal(it[Symbol.asyncIterator](), it);
  const all = await Promise.all(Array.from({ length: whole.length + 2 }, () => it.next()));
  assert.deepEqual(all.map((x) => (x.done ? 'done' : rawText(x.value))), [...whole, 'done', 'done']);
  // return() before the first next(): the body is not touched
  const untouched = new Response(r.body);
  assert.deepEqual(await framesFromResponse(untouched, 'openai-chat').return(7), { value: 7, done: true });
  assert.equal(untouched.bodyUsed, false);
  // return() and throw() in the middle cancel the body; later calls are done
  for (const end of ['return', 'throw']) {
    const seen = {};
    const mid = framesFromResponse(streamOf(pieces(r.body, rng(6), 5), seen), 'openai-chat');
    assert.equal((await mid.next()).done, false);
    const oops = new Error('stop');
    if (end === 'return') assert.deepEqual(await mid.return('x'), { value: 'x', done: true });
    else await assert.rejects(mid.throw(oops), (e) => e === oops);
    assert.equal(seen.cancelled, 1, end);
    assert.deepEqual(await mid.next(), { value: undefined, done: true });
  }
  // a chunk that is not bytes: refused (TypeError), the body cancelled, the iterator done
  const seen = {};
  let i = 0;
  const bad = new ReadableStream({
    pull(c) {
      c.enqueue(i++ === 0 ? r.body.subarray(0, 10) : 42);
    },
    cancel() {
      seen.cancelled = (seen.cancelled ?? 0) + 1;
    },
  });
  const badIt = framesFromResponse(bad, 'openai-chat');
  await assert.rejects(badIt.next(), TypeError);
  assert.equal(seen.cancelled, 1);
  assert.deepEqual(await badIt.next(), { value: undefined, done: true });
  // a body that fails while it is read: the frames before it, then its error, then done
  const lost = new Error('connection reset');
  let n = 0;
  const broken = new ReadableStream({
    pull(c) {
      if (n++ === 0) c.enqueue(new TextEncoder().encode('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'));
      else c.error(lost);
    },
  });
  const brokenIt = framesFromResponse(broken, 'openai-chat');
  const first = brokenIt.next();
  const second = brokenIt.next(); // asked before the first settled: answered after it, in order
  assert.deepEqual(await first, { value: { type: 'TEXT', content: 'hi' }, done: false });
  await assert.rejects(second, (e) => e === lost);
  assert.deepEqual(await brokenIt.next(), { value: undefined, done: true });
});

test('frames decoded together keep each frame\'s exact text (multi-byte and invalid UTF-8 across frames)', () => {
  // TEXT deltas with 2-, 3- and 4-byte characters and a lone invalid byte, several events per
  // chunk: their texts must be the ones decoded one frame at a time (chunks of one byte).
  const deltas = ['é', 'a', '€uro', '😀', 'x\u0000y', '', 'plain ascii text that is longer than thirty-two bytes'];
  const events = deltas.map((d) => Buffer.from(`data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(d)}}}]}\n\n`));
  events.push(Buffer.concat([Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"bad '), Buffer.from([0xff]), Buffer.from(' byte"}}]}\n\n')]));
  events.push(Buffer.from('data: [DONE]\n\n'));
  const body = new Uint8Array(Buffer.concat(events));
  for (const raw of [false, true]) {
    const one = decodeAll('openai-chat', pieces(body, () => 1, 1), { raw }).frames;
    const together = decodeAll('openai-chat', [body], { raw }).frames;
    assert.ok(one.length >= deltas.length, `${one.length} frames`);
    assert.deepEqual(raw ? together : texts(together), raw ? one : texts(one));
    if (!raw) assert.deepEqual(together, one);
  }
});

test('the node:stream Transform: bytes in, frame objects out, for every recording', async () => {
  const next = rng(5);
  for (const r of RECORDINGS) {
    const whole = texts(decodeAll(r.provider, [r.body]).frames);
    const t = new DecoderTransform(r.provider);
    const got = [];
    await pipeline(Readable.from(pieces(r.body, next, 40)), t, async (source) => {
      for await (const f of source) got.push(f);
    });
    assert.deepEqual(texts(got), whole, r.name);
    check(r, got, null, 'Transform');
    assert.equal(t.decoder.isClosed, true);
  }
  // Strings are written as UTF-8.
  const ollama = RECORDINGS.find((x) => x.provider === 'ollama');
  const t = new DecoderTransform('ollama');
  const got = [];
  t.on('data', (f) => got.push(f));
  const done = new Promise((resolve) => t.on('end', resolve));
  t.write(ollama.body.toString('utf8'));
  t.end();
  await done;
  assert.deepEqual(texts(got), texts(decodeAll('ollama', [ollama.body]).frames));
});

test('the WHATWG TransformStream: response.body.pipeThrough(new DecoderStream(provider))', async () => {
  const next = rng(9);
  for (const r of RECORDINGS) {
    const whole = texts(decodeAll(r.provider, [r.body]).frames);
    const response = new Response(streamOf(pieces(r.body, next, 33)));
    const s = new DecoderStream(r.provider, { calls: 8 });
    const got = await collect(response.body.pipeThrough(s));
    assert.deepEqual(texts(got), whole, r.name);
    assert.equal(s.decoder.isClosed, true);
  }
});

const BODY = Buffer.from(
  'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n' +
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":' +
    '{"name":"add","arguments":"{\\"a\\":1}"}}]},"finish_reason":"tool_calls"}]}\n\n' +
    'data: [DONE]\n\n',
);
const FRAMES = [
  { type: 'TEXT', content: 'Hi' },
  { type: 'TOOL_CALL', content: { id: 'c1', name: 'add', args: { a: 1 } } },
  { type: 'END', content: { reason: 'tool_calls' } },
];

test('createDecoder: write gives what the bytes completed, end the rest; the next body; stats; reset; close', () => {
  const d = createDecoder('openai-chat');
  assert.equal(d.provider, Provider.OPENAI_CHAT);
  assert.deepEqual(d.write(BODY.subarray(0, 20)), []);
  assert.deepEqual(d.write(new Uint8Array(BODY.subarray(20, 60))), [FRAMES[0]]);
  assert.deepEqual(d.write(BODY.subarray(60).toString('utf8')), FRAMES.slice(1));
  assert.deepEqual(d.finish(), []);
  assert.deepEqual([...d.write(BODY), ...d.finish()], FRAMES);
  assert.deepEqual(d.stats, {
    notJson: 0,
    unknownEvent: 0,
    badShape: 0,
    overlong: 0,
    afterEnd: 0,
    cut: 0,
    callsStarted: 2,
    callsWritten: 2,
  });
  d.reset();
  assert.equal(d.stats.callsStarted, 0);
  d.close();
  d.close();
  assert.equal(d.isClosed, true);
  assert.throws(() => d.write(BODY), (e) => e.code === 'PW_DECODER_CLOSED');
  assert.throws(() => d.stats, (e) => e.code === 'PW_DECODER_CLOSED');
});

test('raw frames, a small frame buffer, capacities, overlong events, open calls at the end', () => {
  const rawFrames = decodeAll('openai-chat', [BODY], { raw: true }).frames;
  assert.deepEqual(rawFrames, FRAMES.map((f) => JSON.stringify(f)));
  for (const r of RECORDINGS.filter((_, i) => i % 5 === 0)) {
    const whole = texts(decodeAll(r.provider, [r.body]).frames);
    assert.deepEqual(texts(decodeAll(r.provider, [r.body], { frameBuffer: 1 }).frames), whole, r.name);
  }
  const small = createDecoder('anthropic', { eventCap: 4096, argsCap: 512, calls: 2 });
  const big = createDecoder('anthropic');
  assert.ok(small.memorySize < big.memorySize);
  assert.ok(small.maxFrameLen >= 2 * 4096);
  small.close();
  big.close();
  assert.throws(() => createDecoder('gemini', { eventCap: 3 }), (e) => e.code === 'PW_BAD_CONFIG' && e.errno === PW.BAD_CONFIG);
  assert.throws(() => createDecoder('gemini', { argsCap: 'big' }), TypeError);
  const { stats } = decodeAll('openai-chat', [BODY], { eventCap: 16 });
  assert.ok(stats.overlong > 0);
  // A call still open when the body ends comes out at end(), cut off, then END.
  const d = createDecoder('openai-chat');
  const cut = BODY.toString('utf8').split('data: [DONE]')[0].replace(',"finish_reason":"tool_calls"', '');
  assert.deepEqual(d.write(cut), [FRAMES[0]]);
  assert.deepEqual([d.stats.callsStarted, d.stats.callsWritten], [1, 0]);
  const last = d.finish();
  assert.deepEqual(last.map((f) => f.type), ['TOOL_CALL', 'END']);
  assert.equal(typeof last[0].content.args_error, 'string');
  assert.deepEqual([d.stats.callsStarted, d.stats.callsWritten], [1, 1]);
  d.close();
});

test('providers by name and number; unknown ones have code 400', () => {
  assert.deepEqual(PROVIDERS.map(providerFromName), [1, 2, 3, 4, 5]);
  assert.deepEqual(Object.values(Provider), [1, 2, 3, 4, 5]);
  for (const p of ['bedrock', '', 'OpenAI-Chat', 0, 6]) {
    assert.throws(() => createDecoder(p), (e) => e.code === 'PW_UNKNOWN_PROVIDER' && e.errno === PW.UNKNOWN_PROVIDER, String(p));
    assert.throws(() => encodeItem(p, FRAMES[1]), (e) => e.code === 'PW_UNKNOWN_PROVIDER' && e.errno === PW.UNKNOWN_PROVIDER, String(p));
  }
  assert.throws(() => createDecoder({}), TypeError);
});

const CALL = '{"type":"TOOL_CALL","content":{"id":"c1","name":"get","args":{"q":[1, 2]}}}';
const RESULT = '{"type":"TOOL_RESULT","content":{"id":"c1","name":"get","result":{"t":"5\\u00b0"}}}';
const ERROR = '{"type":"TOOL_RESULT","content":{"id":"c1","name":"get","error":"Tool get failed"}}';
// SPEC §8's table: the call, the result and the error of each provider, byte for byte.
const ITEMS = {
  'openai-chat': [
    '{"id":"c1","type":"function","function":{"name":"get","arguments":"{\\"q\\":[1,2]}"}}',
    '{"role":"tool","tool_call_id":"c1","content":"{\\"t\\":\\"5\\\\u00b0\\"}"}',
    '{"role":"tool","tool_call_id":"c1","content":"Tool get failed"}',
  ],
  'openai-responses': [
    '{"type":"function_call","call_id":"c1","name":"get","arguments":"{\\"q\\":[1,2]}"}',
    '{"type":"function_call_output","call_id":"c1","output":"{\\"t\\":\\"5\\\\u00b0\\"}"}',
    '{"type":"function_call_output","call_id":"c1","output":"Tool get failed"}',
  ],
  anthropic: [
    '{"type":"tool_use","id":"c1","name":"get","input":{"q":[1,2]}}',
    '{"type":"tool_result","tool_use_id":"c1","content":"{\\"t\\":\\"5\\\\u00b0\\"}"}',
    '{"type":"tool_result","tool_use_id":"c1","content":"Tool get failed","is_error":true}',
  ],
  gemini: [
    '{"functionCall":{"id":"c1","name":"get","args":{"q":[1,2]}}}',
    '{"functionResponse":{"id":"c1","name":"get","response":{"output":{"t":"5\\u00b0"}}}}',
    '{"functionResponse":{"id":"c1","name":"get","response":{"error":"Tool get failed"}}}',
  ],
  ollama: [
    '{"id":"c1","function":{"name":"get","arguments":{"q":[1,2]}}}',
    '{"role":"tool","tool_name":"get","content":"{\\"t\\":\\"5\\\\u00b0\\"}","tool_call_id":"c1"}',
    '{"role":"tool","tool_name":"get","content":"Tool get failed","tool_call_id":"c1"}',
  ],
};

test('encodeItem: each provider writes its row of the table, from text, bytes, raw() or an object', () => {
  for (const [provider, want] of Object.entries(ITEMS)) {
    [CALL, RESULT, ERROR].forEach((frame, i) => {
      const item = encodeItem(provider, frame);
      assert.equal(rawText(item), want[i], `${provider} ${frame}`);
      assert.deepEqual(item, JSON.parse(want[i]));
      assert.equal(rawText(encodeItem(providerFromName(provider), Buffer.from(frame))), want[i]);
      assert.equal(rawText(encodeItem(provider, raw(frame))), want[i]);
      assert.deepEqual(encodeItem(provider, JSON.parse(frame)), encodeItem(provider, JSON.stringify(JSON.parse(frame))));
    });
  }
});

test('encodeItem: a result item for each provider', () => {
  const result = { type: 'TOOL_RESULT', content: { id: 'call_9', name: 'weather', result: 'sunny' } };
  assert.deepEqual(
    PROVIDERS.map((p) => encodeItem(p, result)),
    [
      { role: 'tool', tool_call_id: 'call_9', content: 'sunny' },
      { type: 'function_call_output', call_id: 'call_9', output: 'sunny' },
      { type: 'tool_result', tool_use_id: 'call_9', content: 'sunny' },
      { functionResponse: { id: 'call_9', name: 'weather', response: { output: 'sunny' } } },
      { role: 'tool', tool_name: 'weather', content: 'sunny', tool_call_id: 'call_9' },
    ],
  );
  const blob = 'x'.repeat(100000);
  const big = encodeItem('openai-chat', { type: 'TOOL_RESULT', content: { id: 'c', name: 'n', result: { blob } } });
  assert.deepEqual(JSON.parse(big.content), { blob });
  // Gemini and Ollama match by name: no id is fine there.
  assert.deepEqual(encodeItem('gemini', { type: 'TOOL_CALL', content: { name: 'get' } }), {
    functionCall: { name: 'get', args: {} },
  });
});

test('encodeItem: every refusal throws with its pw_result code', () => {
  for (const [frame, code] of [
    ['{"type":"TEXT","content":"x"}', PW.ITEM_NOT_CALL_OR_RESULT],
    ['{"type":"TOOL_CALL","content":{"id":"c"}}', PW.ITEM_NO_NAME],
    ['{"type":"TOOL_CALL","content":{"name":"n"}}', PW.ITEM_NO_ID],
    ['{"type":"TOOL_RESULT","content":{"name":"n","result":1}}', PW.ITEM_NO_ID],
    ['{"type":"TOOL_RESULT","content":{"id":"c","name":"n"}}', PW.ITEM_NO_OUTCOME],
    ['{"type":"TOOL_CALL",', PW.INVALID_JSON],
    ['[1]', PW.FRAME_NOT_OBJECT],
    ['', PW.FRAME_NOT_OBJECT],
  ]) {
    assert.throws(
      () => encodeItem('openai-chat', frame),
      (e) => e instanceof Error && e.errno === code && typeof e.code === 'string' && PW[e.code.slice(3)] === code && e.message.endsWith(`(${e.code}, ${code})`),
      frame,
    );
  }
  assert.deepEqual([401, 402, 403, 404], [PW.ITEM_NOT_CALL_OR_RESULT, PW.ITEM_NO_NAME, PW.ITEM_NO_ID, PW.ITEM_NO_OUTCOME]);
});

test('every recorded call, and a result answering it, encode for their provider', () => {
  let n = 0;
  for (const r of RECORDINGS) {
    for (const f of decodeAll(r.provider, [r.body]).frames) {
      if (f.type !== 'TOOL_CALL') continue;
      // The decoded frame is encoded from its exact text.
      const call = encodeItem(r.provider, f);
      assert.equal(typeof call, 'object', r.name);
      assert.ok(rawText(call).includes(JSON.stringify(f.content.name).slice(1, -1)), r.name);
      const content = { name: f.content.name, result: { ok: true } };
      if (f.content.id !== undefined) content.id = f.content.id;
      assert.equal(typeof encodeItem(r.provider, { type: 'TOOL_RESULT', content }), 'object', r.name);
      n += 1;
    }
  }
  assert.equal(n, 87);
});
