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
