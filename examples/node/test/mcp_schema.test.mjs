// Validated MCP tools (SPEC §11) through the Node package: a session checks each call's args
// against the tool's listed `inputSchema` (the server never sees a call that fails) and each
// result's `structuredContent` against its `outputSchema`, by default; the raw client's
// `setOutputSchemas`. Against a scripted server: exact lines and frames.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawText } from '../index.mjs';
import { createMcpClient, createMcpSession } from '../mcp.mjs';
import { llm } from './helpers.mjs';

const rpc = (m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`;
const call = (name, args, id) => ({ type: 'TOOL_CALL', content: { id, name, args } });
const results = (m) => m.toModel.filter((f) => f.type === 'TOOL_RESULT').map((f) => rawText(f));

// The listing as a server writes it: `big`'s bound is past a double's precision (2^53 + 1), so
// only its exact text checks 2^53 + 1 right; `remote`'s input schema is one the validator refuses.
const LISTING =
  '{"jsonrpc":"2.0","id":2,"result":{"tools":[' +
  '{"name":"weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},' +
  '"outputSchema":{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}},' +
  '{"name":"big","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}},' +
  '{"name":"remote","inputSchema":{"$ref":"https://example.com/schema.json"}},' +
  '{"name":"plain"}]}}\n';

async function listed(options = {}) {
  const lines = [];
  const s = createMcpSession((l) => lines.push(l), { timeoutMs: 1000, revision: '2025-11-25', ...options });
  s.receive(rpc({ id: 1, result: { protocolVersion: '2025-11-25' } }));
  s.receive(LISTING);
  await s.ready;
  lines.length = 0;
  const clock = { t: 0, now: () => clock.t };
  const m = llm();
  const w = s.wrap(m.duplex, { clock });
  return { s, lines, m, w };
}

const toolsCall = (id, name, args) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args},"_meta":{"progressToken":${id}}}}\n`;

test('mcp schemas: args that fail the listed inputSchema never reach the server; a result whose structuredContent fails its outputSchema fails the call', async () => {
  const { s, lines, m, w } = await listed();
  assert.equal(s.validate, true);
  m.say(call('weather', { city: 3 }, 'w1'));
  m.say(call('weather', {}, 'w2'));
  m.say(call('weather', { city: 'Oslo', when: 'now' }, 'w3'));
  assert.deepEqual(lines, [], 'no call reached the server');
  assert.deepEqual(results(m), [
    '{"type":"TOOL_RESULT","content":{"id":"w1","name":"weather","error":"Tool weather arguments are invalid: /city: expected string"}}',
    '{"type":"TOOL_RESULT","content":{"id":"w2","name":"weather","error":"Tool weather arguments are invalid: (args): missing required property \\"city\\""}}',
    '{"type":"TOOL_RESULT","content":{"id":"w3","name":"weather","error":"Tool weather arguments are invalid: /when: property not allowed"}}',
  ]);
  m.toModel.length = 0;
  m.say(call('weather', { city: 'Oslo' }, 'w4'));
  m.say(call('weather', { city: 'Bergen' }, 'w5'));
  assert.deepEqual(lines, [toolsCall(3, 'weather', '{"city":"Oslo"}'), toolsCall(4, 'weather', '{"city":"Bergen"}')]);
  s.receive('{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"warm"}],"structuredContent":{"temp":"warm"}}}\n');
  s.receive('{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\\"temp\\":21.5}"}],"structuredContent":{"temp":21.5}}}\n');
  assert.deepEqual(results(m), [
    '{"type":"TOOL_RESULT","content":{"id":"w4","name":"weather","error":"Tool weather returned a result that does not match its output schema: /temp: expected number"}}',
    '{"type":"TOOL_RESULT","content":{"id":"w5","name":"weather","result":{"temp":21.5}}}',
  ]);
  w.close();
  s.dispose();
});

test('mcp schemas: read from the listing exactly (a bound past 2^53 holds as written); a schema the validator refuses leaves its tool unchecked and is noted', async () => {
  const { s, lines, m, w } = await listed();
  assert.deepEqual(s.unchecked, [{ tool: 'remote', schema: 'inputSchema', kind: 'PW_SCHEMA_ERROR_REMOTE_REF', offset: 8 }]);
  m.say(call('big', {}, 'b1'));
  m.say(call('big', {}, 'b2'));
  s.receive('{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"n":9007199254740993}}}\n');
  s.receive('{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"n":9007199254740994}}}\n');
  m.say(call('remote', { anything: [1] }, 'r'));
  m.say(call('plain', { x: 1 }, 'p'));
  assert.deepEqual(lines.slice(2), [toolsCall(5, 'remote', '{"anything":[1]}'), toolsCall(6, 'plain', '{"x":1}')]);
  assert.deepEqual(results(m), [
    '{"type":"TOOL_RESULT","content":{"id":"b1","name":"big","result":{"n":9007199254740993}}}',
    '{"type":"TOOL_RESULT","content":{"id":"b2","name":"big","error":"Tool big returned a result that does not match its output schema: /n: must be <= 9007199254740993"}}',
  ]);
  w.close();
  s.dispose();
});

test('mcp schemas: validate: false checks nothing', async () => {
  const { s, lines, m, w } = await listed({ validate: false });
  assert.equal(s.validate, false);
  assert.deepEqual(s.unchecked, []);
  m.say(call('weather', { city: 3 }, 'w1'));
  assert.deepEqual(lines, [toolsCall(3, 'weather', '{"city":3}')]);
  s.receive('{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"temp":"warm"}}}\n');
  assert.deepEqual(results(m), ['{"type":"TOOL_RESULT","content":{"id":"w1","name":"weather","result":{"temp":"warm"}}}']);
  w.close();
  s.dispose();
});

test('mcp schemas: a new listing brings its own schemas (wrappers made after it check the new ones)', async () => {
  const { s, lines, w } = await listed();
  w.close();
  s.receive('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n');
  assert.deepEqual(lines, ['{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n']);
  lines.length = 0;
  s.receive(
    '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"weather","inputSchema":{"type":"object","required":["city","country"]},' +
      '"outputSchema":{"type":"object","required":["celsius"]}}]}}\n',
  );
  assert.deepEqual(s.unchecked, []);
  const clock = { t: 0, now: () => clock.t };
  const m = llm();
  const w2 = s.wrap(m.duplex, { clock });
  m.say(call('weather', { city: 'Oslo' }, 'a'));
  m.say(call('weather', { city: 'Oslo', country: 'NO' }, 'b'));
  assert.deepEqual(lines, [toolsCall(4, 'weather', '{"city":"Oslo","country":"NO"}')]);
  s.receive('{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"temp":1}}}\n');
  assert.deepEqual(results(m), [
    '{"type":"TOOL_RESULT","content":{"id":"a","name":"weather","error":"Tool weather arguments are invalid: (args): missing required property \\"country\\""}}',
    '{"type":"TOOL_RESULT","content":{"id":"b","name":"weather","error":"Tool weather returned a result that does not match its output schema: (result): missing required property \\"celsius\\""}}',
  ]);
  w2.close();
  s.dispose();
});

test('mcp schemas: the raw client: setOutputSchemas replaces, [] removes, a refused schema throws and changes nothing', () => {
  const c = createMcpClient({ calls: 2, revision: '2025-11-25' });
  c.start(0);
  c.pollTransmit();
  c.feed(rpc({ id: 1, result: { protocolVersion: '2025-11-25' } }));
  [...c.events(), ...c.transmits()];
  c.feed(rpc({ id: 2, result: { tools: [{ name: 't' }] } }));
  [...c.events()];
  const answer = (id) => {
    const r = c.handleFrame({ slot: 0, index: id }, call('t', {}, `c${id}`));
    assert.equal(r.kind, 'sent');
    c.feed(`{"jsonrpc":"2.0","id":${r.request},"result":{"content":[],"structuredContent":{"ok":"yes"}}}\n`);
    return [...c.frames()].map((f) => f.frame).at(-1);
  };
  c.setOutputSchemas([{ tool: 't', schema: { properties: { ok: { type: 'boolean' } } } }]);
  const failed = '{"type":"ERROR","content":{"message":"Tool t returned a result that does not match its output schema: /ok: expected boolean"}}';
  assert.equal(answer(1), failed);
  assert.throws(
    () => c.setOutputSchemas([{ tool: 'u', schema: '{"type":"object"}' }, { tool: 't', schema: '{"$ref":"other.json"}' }]),
    (e) => e.code === 'PW_BAD_SCHEMA' && e.tool === 't' && e.kind === 'PW_SCHEMA_ERROR_REMOTE_REF' && e.offset === 8,
  );
  assert.equal(answer(2), failed, 'the schemas before the refusal still hold');
  c.setOutputSchemas([]);
  assert.equal(answer(3), '{"type":"END"}');
  c.close();
});
