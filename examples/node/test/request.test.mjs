// Asking the model again (SPEC §10) through the package: a conversation made of a recorded
// response decoded by the package's own decoder and the results of its calls (hand-written
// TOOL_RESULT frames, or a wrapper's), and the next request body written by the library —
// exactly what `polyweave-replay --request` prints for the same conversation file
// (request_bodies.json, written by request_cases.mjs), whole, as bytes, and chunk by chunk
// through stream() and fetch(); every refusal its code with nothing changed; a stale request
// refused; memory given back by close() and by the garbage collector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import {
  createConversation,
  createDecoder,
  createDuplex,
  createToolAdapterWrapper,
  geminiPath,
  Provider,
  raw,
  rawText,
} from '../index.mjs';
import { heapStats } from '../binding.mjs';
import { createMcpSession } from '../mcp.mjs';
import { BODIES, CASES, DECLARATIONS, QUESTION, STREAMS, SYSTEM, THANKS, optionsFor } from './request_cases.mjs';

const EXPECTED = JSON.parse(fs.readFileSync(new URL('./request_bodies.json', import.meta.url), 'utf8'));

/** The frames the package's decoder gives for a recorded body. */
function decoded(provider, file) {
  const d = createDecoder(provider);
  const body = fs.readFileSync(path.join(STREAMS, file));
  return [...d.write(body), ...d.finish()];
}

/** A case's TOOL_RESULT frames, as polyweave-replay makes them: each call found by id, or by name. */
function resultFrames(c, frames) {
  const calls = frames.filter((f) => f.type === 'TOOL_CALL').map((f) => ({ ...f.content, answered: false }));
  return c.results.map((r) => {
    const call = calls.find((k) => (r.id !== undefined ? k.id === r.id : !k.answered && k.name === r.name));
    assert.ok(call, `a call for ${JSON.stringify(r)}`);
    call.answered = true;
    const content = { ...(call.id === undefined ? {} : { id: call.id }), name: call.name };
    if ('result' in r) content.result = r.result;
    else content.error = r.error;
    return { type: 'TOOL_RESULT', content };
  });
}

/** A case's conversation through the package; `results` gives the TOOL_RESULT frames. */
function conversationOf(c, results = resultFrames) {
  const conv = createConversation({ capacity: 65536 });
  conv.setSystem(SYSTEM);
  conv.pushUser(QUESTION);
  conv.beginResponse(c.provider);
  const frames = decoded(c.provider, c.body);
  const pushed = frames.map((f) => conv.pushFrame(f));
  // Every decoded frame is kept but the END, which ends the response.
  assert.deepEqual(pushed, frames.map((f) => (f.type === 'END' ? 'ended' : 'kept')), c.provider);
  conv.endResponse();
  for (const f of results(c, frames)) assert.equal(conv.pushFrame(f), 'kept');
  conv.pushUser(THANKS);
  return conv;
}

async function streamed(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}
const joined = (chunks) => Buffer.concat(chunks).toString('utf8');

test('request: every case gives the body polyweave-replay --request prints, as text, bytes and stream', async () => {
  assert.equal(Object.keys(EXPECTED).length, BODIES.length);
  for (const b of BODIES) {
    const key = `${b.case} → ${b.target}`;
    const want = EXPECTED[key];
    const conv = conversationOf(CASES.find((c) => c.provider === b.case));
    const req = conv.request(b.target, optionsFor(b.target), DECLARATIONS);
    assert.equal(req.text(), want, key);
    assert.equal(req.text(), want, `${key}, written again`);
    const bytes = req.bytes();
    assert.ok(bytes instanceof Uint8Array);
    assert.equal(req.length, Buffer.byteLength(want));
    assert.equal(bytes.length, req.length);
    assert.equal(Buffer.from(bytes).toString('utf8'), want);
    // Chunk by chunk: at most chunkSize bytes each, the same bytes whatever the size.
    for (const chunkSize of [1, 7, 100, 1 << 20]) {
      const chunks = await streamed(req.stream({ chunkSize }));
      assert.ok(chunks.every((ch) => ch instanceof Uint8Array && ch.length >= 1 && ch.length <= chunkSize), key);
      assert.equal(chunks.length, Math.ceil(req.length / chunkSize), `${key}: ${chunkSize}`);
      assert.equal(joined(chunks), want, `${key}: ${chunkSize}`);
    }
    assert.equal(joined(await streamed(req.stream())), want);
    // Provider numbers name the same providers.
    const byNumber = conv.request(Provider[b.target.toUpperCase().replace('-', '_')], optionsFor(b.target), DECLARATIONS);
    assert.equal(byNumber.text(), want);
    req.close();
    byNumber.close();
    conv.close();
  }
});

test('request: the results as a wrapper writes them to the model give the same body', () => {
  const c = CASES.find((x) => x.provider === 'anthropic');
  const fromWrapper = (_c, frames) => {
    const toModel = [];
    const model = createDuplex({ onWrite: (f) => toModel.push(f) });
    const wrapper = createToolAdapterWrapper(model, { tools: { get_weather: () => ({ temp_c: 21 }) } });
    wrapper.source.pipe({ write() {}, end() {} });
    for (const f of frames) model.source.push(f);
    wrapper.close();
    // The wrapper answers the call and prompts the model to go on: only the result is part of
    // the conversation (the prompt is the wrapper's; a TEXT outside a response is refused).
    assert.deepEqual(toModel.map((f) => f.type), ['TOOL_RESULT', 'TEXT']);
    assert.equal(rawText(toModel[0]), '{"type":"TOOL_RESULT","content":{"id":"toolu_01NRLabsLyVHZPKxbKvkfSMn","name":"get_weather","result":{"temp_c":21}}}');
    return toModel.slice(0, 1);
  };
  const conv = conversationOf(c, fromWrapper);
  assert.equal(conv.request('anthropic', optionsFor('anthropic'), DECLARATIONS).text(), EXPECTED['anthropic → anthropic']);
  // A TOOL_RESULT given as raw text keeps its exact bytes (the result's number as written).
  const conv2 = createConversation();
  conv2.pushUser('Add.');
  conv2.beginResponse('openai-chat');
  conv2.pushFrame('{"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{"a":1}}}');
  conv2.pushFrame({ type: 'END' });
  assert.equal(conv2.pushFrame(raw('{"type":"TOOL_RESULT","content":{"id":"c1","name":"add","result":1.50}}')), 'kept');
  assert.match(conv2.request('openai-chat', { model: 'm' }).text(), /"content":"1\.50"/);
});

test('request: a decoded frame goes in as its exact text (numbers JS would rewrite), and a call left without result is answered', () => {
  const d = createDecoder('openai-chat');
  const body =
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"add","arguments":"{\\"x\\":1.0,\\"big\\":12345678901234567890}"}}]}}]}\n\n' +
    'data: [DONE]\n\n';
  const frames = [...d.write(body), ...d.finish()];
  assert.equal(JSON.stringify(frames[0].content.args), '{"x":1,"big":12345678901234567000}', 'JS alone would rewrite them');
  const conv = createConversation();
  conv.pushUser('q');
  conv.beginResponse('openai-chat');
  assert.deepEqual(frames.map((f) => conv.pushFrame(f)), ['kept', 'ended']);
  assert.equal(
    conv.request('anthropic', { model: 'm' }).text(),
    '{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":"q"},' +
      '{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"add","input":{"x":1.0,"big":12345678901234567890}}]},' +
      '{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"Tool add got no result","is_error":true}]}],"stream":true}',
  );
  // Frames the conversation does not keep are ignored, and change nothing.
  const before = conv.stats();
  assert.equal(conv.pushFrame({ type: 'PROGRESS', content: {} }), 'ignored');
  assert.deepEqual(conv.stats(), before);
});

test('request: a user text, the system text, stats and the body, exactly', () => {
  const conv = createConversation({ capacity: 4096 });
  assert.deepEqual(conv.stats(), { used: 0, capacity: 4096, entries: 0, evicted: 0 });
  conv.setSystem('Be "terse".');
  conv.pushUser('Hi ✓');
  const s = conv.stats();
  assert.equal(s.entries, 2);
  assert.equal(s.capacity, 4096);
  assert.ok(s.used > 0 && s.used <= 4096);
  const req = conv.request('anthropic', { model: 'claude' });
  assert.equal(
    req.text(),
    '{"model":"claude","max_tokens":4096,"system":"Be \\"terse\\".","messages":[{"role":"user","content":"Hi ✓"}],"stream":true}',
  );
  assert.equal(req.length, Buffer.byteLength(req.text()));
  assert.equal(
    conv.request('ollama', { model: 'llama', maxTokens: 10, toolChoice: 'auto' }, [{ name: 'f', schema: '{ "type" : "object" }' }]).text(),
    '{"model":"llama","messages":[{"role":"system","content":"Be \\"terse\\"."},{"role":"user","content":"Hi ✓"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}],"options":{"num_predict":10},"stream":true}',
  );
  assert.equal(geminiPath('gemini-2.5-flash'), 'models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  assert.equal(geminiPath('x'.repeat(300)), `models/${'x'.repeat(300)}:streamGenerateContent?alt=sse`);
  conv.clear();
  assert.deepEqual(conv.stats(), { used: 0, capacity: 4096, entries: 0, evicted: 0 });
});

test('request: a small memory evicts whole entries, oldest first, the pinned first user text kept', () => {
  const conv = createConversation({ capacity: 256 });
  conv.pinFirstUser(true);
  const texts = Array.from({ length: 12 }, (_, i) => `user text number ${i} ${'.'.repeat(20)}`);
  for (const t of texts) {
    conv.pushUser(t);
    conv.beginResponse('openai-chat');
    conv.pushFrame({ type: 'TEXT', content: `answer ${t.slice(17, 19).trim()}` });
    conv.pushFrame({ type: 'END' });
  }
  const s = conv.stats();
  assert.ok(s.used <= 256, JSON.stringify(s));
  assert.ok(s.evicted > 0, JSON.stringify(s));
  const body = JSON.parse(conv.request('openai-chat', { model: 'm' }).text());
  const users = body.messages.filter((m) => m.role === 'user').map((m) => m.content);
  assert.equal(users[0], texts[0], 'the pinned first user text stays');
  assert.equal(users.at(-1), texts.at(-1), 'the latest stays');
  // What is kept after the pinned text is the newest run, in order.
  assert.deepEqual(users.slice(1), texts.slice(texts.length - (users.length - 1)));
  assert.equal(s.entries + s.evicted, 2 * texts.length, 'every entry is held or was evicted');
});

/** Asserts `fn` throws with `code` (and `errno` when a number is given). */
function refused(fn, code, errno) {
  assert.throws(fn, (e) => {
    assert.equal(e.code, code, e.message);
    assert.equal(e.errno, errno, e.message);
    return true;
  });
}

test('request: every refusal throws its code and errno, and changes nothing', () => {
  const conv = createConversation({ capacity: 4096 });
  conv.setSystem('sys');
  conv.pushUser('Add 2 and 3');
  conv.beginResponse('openai-chat');
  conv.pushFrame({ type: 'TOOL_CALL', content: { id: 'c1', name: 'add', args: { a: 2, b: 3 } } });
  const before = conv.stats();
  const body = () => conv.request('openai-chat', { model: 'm' }).text();
  const bodyBefore = body();
  const conversationRefusals = [
    [() => conv.pushUser(''), 'PW_CONVERSATION_EMPTY_TEXT', 607],
    [() => conv.setSystem(''), 'PW_CONVERSATION_EMPTY_TEXT', 607],
    [() => conv.pushUser('x'.repeat(5000)), 'PW_CONVERSATION_NO_ROOM', 600],
    [() => conv.pushFrame({ type: 'TEXT', content: 5 }), 'PW_CONVERSATION_BAD_CONTENT', 601],
    [() => conv.pushFrame({ type: 'TOOL_CALL', content: { id: 'c2', args: {} } }), 'PW_CONVERSATION_NO_NAME', 603],
    [() => conv.pushFrame({ type: 'TOOL_RESULT', content: { id: 'nope', name: 'add', result: 1 } }), 'PW_CONVERSATION_UNKNOWN_CALL', 604],
    [() => conv.pushFrame({ type: 'TOOL_RESULT', content: { id: 'c1', name: 'add' } }), 'PW_CONVERSATION_NO_OUTCOME', 606],
    [() => conv.pushFrame('{"content":1}'), 'PW_FRAME_MISSING_TYPE', 101],
    [() => conv.pushFrame('{"type":"TEXT",'), 'PW_INVALID_JSON', 103],
    [() => conv.pushFrame('[1]'), 'PW_FRAME_NOT_OBJECT', 100],
    [() => conv.beginResponse(99), 'PW_UNKNOWN_PROVIDER', 400],
    [() => conv.beginResponse('nope'), 'PW_UNKNOWN_PROVIDER', 400],
  ];
  for (const [fn, code, errno] of conversationRefusals) {
    refused(fn, code, errno);
    assert.deepEqual(conv.stats(), before, code);
    assert.equal(body(), bodyBefore, code);
  }
  // A second result for a call, and a frame with no response begun.
  conv.pushFrame({ type: 'END' });
  conv.pushFrame({ type: 'TOOL_RESULT', content: { id: 'c1', name: 'add', result: 5 } });
  const answered = conv.stats();
  const bodyAnswered = body();
  refused(() => conv.pushFrame({ type: 'TOOL_RESULT', content: { id: 'c1', name: 'add', result: 6 } }), 'PW_CONVERSATION_ALREADY_ANSWERED', 605);
  refused(() => conv.pushFrame({ type: 'TEXT', content: 'late' }), 'PW_CONVERSATION_NO_RESPONSE', 602);
  assert.deepEqual(conv.stats(), answered);
  assert.equal(body(), bodyAnswered);

  // Declarations: the index of the one refused.
  const add = { name: 'add', schema: { type: 'object' } };
  const declarationRefusals = [
    ['openai-chat', [add, { name: 'fs.read' }], 'PW_DECLARATION_BAD_NAME', 610, 1],
    ['anthropic', [{ name: 'add', schema: { type: 'object', properties: { a: {} } }, strict: true }], 'PW_DECLARATION_NOT_STRICT', 611, 0],
    ['openai-chat', [add, { name: 'b' }, { name: 'x', schema: '[1]' }], 'PW_DECLARATION_BAD_SCHEMA', 612, 2],
    ['openai-chat', [{ mcp: '{"title":"no name"}' }], 'PW_DECLARATION_BAD_ENTRY', 613, 0],
    ['openai-chat', [add, { mcp: { name: 'add' } }], 'PW_DECLARATION_DUPLICATE_NAME', 614, 1],
  ];
  for (const [provider, decls, code, errno, index] of declarationRefusals) {
    assert.throws(
      () => conv.request(provider, { model: 'm' }, decls),
      (e) => {
        assert.deepEqual([e.code, e.errno, e.index], [code, errno, index], e.message);
        return e.message.includes(`(declaration ${index}`);
      },
    );
  }
  // Options.
  const optionRefusals = [
    ['ollama', { model: 'm', toolChoice: 'required' }, 'PW_REQUEST_TOOL_CHOICE_UNSUPPORTED', 620],
    ['openai-chat', { model: 'm', toolChoice: { name: 'sub' } }, 'PW_REQUEST_UNKNOWN_TOOL', 621],
    ['openai-chat', { model: 'm', extra: '[1]' }, 'PW_REQUEST_BAD_EXTRA', 622],
    ['openai-chat', { model: 'm', extra: { model: 'other' } }, 'PW_REQUEST_EXTRA_CLASH', 623],
  ];
  for (const [provider, options, code, errno] of optionRefusals) {
    assert.throws(
      () => conv.request(provider, options, [add]),
      (e) => {
        assert.deepEqual([e.code, e.errno, e.index], [code, errno, undefined], e.message);
        return true;
      },
    );
  }
  // The package's own checks: TypeErrors before the library.
  assert.throws(() => conv.request('openai-chat', {}), TypeError);
  assert.throws(() => conv.request('openai-chat', { model: 'm', toolChoice: 'any' }), TypeError);
  assert.throws(() => conv.request('openai-chat', { model: 'm', maxTokens: -1 }), TypeError);
  assert.throws(() => conv.request('openai-chat', { model: 'm' }, [{ description: 'no name' }]), TypeError);
  assert.throws(() => createConversation({ capacity: 1.5 }), TypeError);
  assert.deepEqual(conv.stats(), answered);
  assert.equal(body(), bodyAnswered);
  conv.close();
});

test('request: a request is stale once its conversation changes, refused or not; stats() leaves it good', async () => {
  const conv = createConversation();
  conv.pushUser('one');
  const req = conv.request('openai-chat', { model: 'm' });
  const first = req.text();
  conv.stats();
  assert.equal(req.text(), first, 'stats() only reads');
  const streaming = req.stream({ chunkSize: 4 });
  const reader = streaming.getReader();
  assert.equal(Buffer.from((await reader.read()).value).toString(), first.slice(0, 4));
  refused(() => conv.pushUser(''), 'PW_CONVERSATION_EMPTY_TEXT', 607);
  refused(() => req.length, 'PW_REQUEST_STALE', 624);
  refused(() => req.text(), 'PW_REQUEST_STALE', 624);
  refused(() => req.bytes(), 'PW_REQUEST_STALE', 624);
  refused(() => req.stream(), 'PW_REQUEST_STALE', 624);
  await assert.rejects(reader.read(), (e) => e.code === 'PW_REQUEST_STALE' && e.errno === 624);
  // A request made now is good, and the same body (the refusal changed nothing).
  assert.equal(conv.request('openai-chat', { model: 'm' }).text(), first);
  for (const change of [() => conv.pushUser('two'), () => conv.clear(), () => conv.endResponse(), () => conv.pinFirstUser(false)]) {
    const r = conv.request('openai-chat', { model: 'm' });
    change();
    refused(() => r.text(), 'PW_REQUEST_STALE', 624);
  }
  conv.close();
});

test('request: close() frees at once; later uses throw the package codes', async () => {
  const heap = heapStats();
  const conv = createConversation();
  conv.pushUser('hi');
  const req = conv.request('gemini', { model: 'm' });
  const pending = req.stream({ chunkSize: 2 }).getReader();
  await pending.read();
  req.close();
  req.close();
  assert.equal(req.isClosed, true);
  assert.throws(() => req.text(), (e) => e.code === 'PW_REQUEST_CLOSED' && e.errno === undefined);
  await assert.rejects(pending.read(), (e) => e.code === 'PW_REQUEST_CLOSED');
  const req2 = conv.request('gemini', { model: 'm' });
  conv[Symbol.dispose]();
  assert.equal(conv.isClosed, true);
  assert.throws(() => conv.pushUser('x'), (e) => e.code === 'PW_CONVERSATION_CLOSED' && e.errno === undefined);
  assert.throws(() => conv.stats(), (e) => e.code === 'PW_CONVERSATION_CLOSED');
  assert.throws(() => conv.request('gemini', { model: 'm' }), (e) => e.code === 'PW_CONVERSATION_CLOSED');
  assert.throws(() => req2.text(), (e) => e.code === 'PW_CONVERSATION_CLOSED');
  req2.close();
  assert.deepEqual(heapStats(), heap, 'every block is back');
});

test('request: conversations, requests and streams dropped without close() are freed by the garbage collector', async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  /**
   * Collects until the live blocks are down to `floor`, or (no floor) until they stay the same
   * over three collections: the finalizers run in tasks after a collection, later under load.
   */
  const collect = async (floor = -1) => {
    for (let same = 0, last = -1, round = 0; round < 200; round++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
      const now = heapStats().blocks;
      if (now <= floor) return;
      same = now === last ? same + 1 : 0;
      if (floor < 0 && same === 3) return;
      last = now;
    }
  };
  await collect(); // what the tests before dropped
  const heap = heapStats();
  const N = 2000;
  await (async () => {
    for (let i = 0; i < N; i++) {
      const conv = createConversation({ capacity: 8192 });
      conv.pushUser(`question ${i}`);
      const req = conv.request('anthropic', { model: 'm' }, [{ name: 'f' }]);
      const reader = req.stream({ chunkSize: 8 }).getReader();
      await reader.read(); // a stream left midway
    }
  })();
  assert.ok(heapStats().blocks > heap.blocks, 'the objects hold their blocks until collected');
  await collect(heap.blocks);
  assert.deepEqual(heapStats(), heap, 'every block is back');
});

test('request: stream() is a fetch body, sent chunk by chunk with the length as Content-Length', async () => {
  const conv = conversationOf(CASES.find((c) => c.provider === 'anthropic'));
  const req = conv.request('anthropic', optionsFor('anthropic'), DECLARATIONS);
  const got = [];
  const server = http.createServer((rq, rs) => {
    const chunks = [];
    rq.on('data', (d) => chunks.push(d));
    rq.on('end', () => {
      got.push({ length: rq.headers['content-length'], body: Buffer.concat(chunks).toString('utf8') });
      rs.end('ok');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${server.address().port}/v1/messages`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(req.length) },
      body: req.stream({ chunkSize: 64 }),
      duplex: 'half',
    });
    assert.equal(await res.text(), 'ok');
  } finally {
    server.close();
  }
  assert.deepEqual(got, [{ length: String(Buffer.byteLength(EXPECTED['anthropic → anthropic'])), body: EXPECTED['anthropic → anthropic'] }]);
});

test('request: an MCP session\'s listed tools are declared as the server sent them ({ mcp: tool })', async () => {
  const s = createMcpSession(() => {}, { revision: '2025-11-25' });
  s.receive('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}\n');
  // A schema whose number JS would rewrite (1.0 → 1) and members in the server's order.
  s.receive('{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"fs.read","title":"Read","inputSchema":{"type":"object","properties":{"z":{"type":"number","maximum":1.0},"a":{}}}}]}}\n');
  await s.ready;
  assert.equal(rawText(s.tools[0].tool), '{"name":"fs.read","title":"Read","inputSchema":{"type":"object","properties":{"z":{"type":"number","maximum":1.0},"a":{}}}}');
  const conv = createConversation();
  conv.pushUser('Read it.');
  const body = conv.request('anthropic', { model: 'm', toolChoice: { name: 'fs.read' } }, s.tools.map((t) => ({ mcp: t.tool }))).text();
  assert.equal(
    body,
    '{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":"Read it."}],' +
      '"tools":[{"name":"fs_read","input_schema":{"type":"object","properties":{"z":{"type":"number","maximum":1.0},"a":{}}}}],' +
      '"tool_choice":{"type":"tool","name":"fs_read"},"stream":true}',
  );
  s.handleClosed();
});
