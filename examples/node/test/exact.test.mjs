// Frames and texts keep their exact bytes through the package (SPEC §1): a decoded frame
// reaches an adapter tool as the model wrote it, and a leading U+FEFF survives every text.
import assert from 'node:assert/strict';
import test from 'node:test';
import { createDecoder, createDuplex, createToolAdapterWrapper, framesFromResponse, rawText, wrapToolAdapter } from '../index.mjs';

// An OpenAI Chat Completions stream with one call whose args have an integer past 2^53 and an
// integer-like key after others: JSON.parse and JSON.stringify would change both.
const ARGS = '{"a":1,"2":"b","n":12345678901234567890}';
const BODY =
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'mcp', arguments: ARGS } }] } }] })}\n\n` +
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n` +
  'data: [DONE]\n\n';
const WANT_CALL = `{"type":"TOOL_CALL","content":{"id":"c1","name":"mcp","args":${ARGS}}}`;

/** A wrapper whose `mcp` tool is an adapter recording the exact text of what it gets. */
function wrapped() {
  const toAdapter = [];
  const adapter = createDuplex({ onWrite: (f) => toAdapter.push(rawText(f)) });
  const model = createDuplex();
  const w = createToolAdapterWrapper(model, { tools: { mcp: { adapter } } });
  w.source.pipe({ write() {}, end() {} });
  return { w, model, toAdapter };
}

test('exact: decoded frames pushed into a wrapper reach an adapter tool byte for byte (createDecoder)', () => {
  const { w, model, toAdapter } = wrapped();
  const d = createDecoder('openai-chat');
  const frames = [...d.write(BODY), ...d.finish()];
  d.close();
  assert.equal(rawText(frames[0]), WANT_CALL);
  for (const f of frames) model.source.push(f);
  assert.deepEqual(toAdapter, [WANT_CALL]);
  w.close();
});

test('exact: decoded frames pushed into a wrapper reach an adapter tool byte for byte (framesFromResponse)', async () => {
  const { w, model, toAdapter } = wrapped();
  for await (const f of framesFromResponse(new Response(BODY), 'openai-chat')) model.source.push(f);
  assert.deepEqual(toAdapter, [WANT_CALL]);
  w.close();
});

test('exact: a leading U+FEFF is kept in tool names, error texts and hook args', () => {
  const BOM = '\uFEFF';
  const name = `${BOM}tool`;
  const seen = [];
  const model = createDuplex();
  const toModel = [];
  model.sink.write = (f) => toModel.push(rawText(f));
  const w = createToolAdapterWrapper(model, {
    tools: {
      [name]: () => {
        throw new Error(`${BOM}broken`);
      },
    },
    onToolCall(n, args) {
      seen.push(['call', n, args, this.rawArgs]);
    },
    onToolResult(n, args, result, err) {
      seen.push(['result', n, err.message, this.error]);
    },
  });
  w.source.pipe({ write() {}, end() {} });
  model.source.push({ type: 'TOOL_CALL', content: { id: 'c1', name, args: `${BOM}x` } });
  assert.deepEqual(seen, [
    ['call', name, `${BOM}x`, `"${BOM}x"`],
    ['result', name, `${BOM}broken`, `${BOM}broken`],
  ]);
  assert.deepEqual(w.getToolTrace(), [{ name, args: `${BOM}x`, result: null, error: `${BOM}broken` }]);
  w.close();
  // A standalone call's error text, and its result.
  const adapter = createDuplex();
  const got = [];
  adapter.sink.write = () => {};
  wrapToolAdapter(adapter, { name })({}, function (err) {
    got.push(err.message, this.error);
  });
  adapter.source.push({ type: 'ERROR', content: { message: `${BOM}down` } });
  assert.deepEqual(got, [`${BOM}down`, `${BOM}down`]);
});

test('exact: a frame object made without parsing the frame (a TEXT or REASONING delta, escaped or not) is the one JSON.parse makes, and every other text is parsed', async () => {
  const { objectOf, carriedText, frameBytes, isDelta } = await import('../raw.mjs');
  const contents = ['', 'hi', ' the', 'é€😀', '\u2028\u2029', '\u007f', 'a\\nb', 'q\\"q', 'back\\\\slash', '\\u0000', '$&{}[]:,', 'x'.repeat(5000)];
  // Escapes: a pair, a lone surrogate (JSON.parse keeps it), every short one, one at each end.
  contents.push('\\ud83d\\ude00', '\\ud800x', '\\/\\b\\f\\r\\t', 'end\\\\', '\\"start', '\\u00e9\\u20AC', `${'y'.repeat(3000)}\\n${'z'.repeat(3000)}`);
  const texts = [];
  for (const type of ['TEXT', 'REASONING', 'TOOL_CALL', 'text', 'END']) {
    for (const c of contents) texts.push(`{"type":"${type}","content":"${c}"}`);
  }
  texts.push('{"type":"TEXT","content":"a","x":"b"}', '{"content":"a","type":"TEXT"}', '{"type":"TEXT","content":"a"} ', '{"type":"TEXT","content":1}');
  let made = 0;
  let escaped = 0;
  for (const t of texts) {
    const want = JSON.parse(t);
    const got = objectOf(t);
    assert.deepEqual(Object.entries(got), Object.entries(want), t);
    assert.equal(Object.getPrototypeOf(got), Object.prototype, t);
    assert.equal(carriedText(got), t, t);
    assert.deepEqual(Object.keys(got), Object.keys(want), t);
    // What a user sees is what JSON.parse makes: no key, symbol or prototype more ...
    assert.deepStrictEqual(got, want, t);
    assert.deepEqual(Object.getOwnPropertySymbols(got), [], t);
    assert.deepEqual(Object.getOwnPropertyNames(got), Object.getOwnPropertyNames(want), t);
    // ... and a copy made to change a frame goes to the library as the copy, not the old text.
    const copy = { ...got, extra: 1 };
    assert.equal(carriedText(copy), undefined, t);
    assert.equal(frameBytes(copy), JSON.stringify(copy), t);
    assert.equal(frameBytes(got), t, t);
    if (/^\{"type":"(TEXT|REASONING)","content":"[^"\\]*"\}$/.test(t)) made++;
    // A delta: the two members in that order, a TEXT or REASONING type, string content, and
    // nothing around them (a wrapper gives such a frame its last clock reading again).
    const shaped = Object.keys(want).join() === 'type,content' && ['TEXT', 'REASONING'].includes(want.type) && typeof want.content === 'string';
    const delta = shaped && t.startsWith(`{"type":"${want.type}","content":"`) && t.endsWith('"}');
    assert.equal(isDelta(got), delta, t);
    if (delta && !/^\{"type":"(TEXT|REASONING)","content":"[^"\\]*"\}$/.test(t)) escaped++;
  }
  assert.equal(made, 2 * 8, 'the plain deltas');
  assert.equal(escaped, 2 * 11, 'the deltas with escapes');
  // Not JSON: refused as JSON.parse refuses it (a raw control character in the content).
  // A delta's shape with what JSON has not in its string (an unknown escape, a short `\u`, a
  // control character after an escape) is refused the same way.
  const refused = ['{"type":"TEXT","content":"a"}{"type":"TEXT","content":"b"}', '{"type":"TEXT","content":"a\nb"}', '{"type":"TEXT","content":"a\u0001"}', '{"type":"TEXT","content":"a\\"}'];
  refused.push('{"type":"TEXT","content":"a\\x"}', '{"type":"REASONING","content":"\\u12"}', '{"type":"TEXT","content":"\\n\u0001"}', '{"type":"TEXT","content":"\\\n"}', '{"type":"TEXT","content":"\\\u2028"}');
  for (const bad of refused) {
    assert.throws(() => JSON.parse(bad), SyntaxError);
    assert.throws(() => objectOf(bad), SyntaxError, bad);
  }
});
