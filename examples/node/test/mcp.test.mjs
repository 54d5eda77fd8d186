// The MCP client (SPEC §9) through the Node package: `createMcpClient` and `createMcpSession`
// against a scripted server (exact lines and frames), `connectMcpServer` against a small Node
// server, and against the two real servers `tests/mcp/install.sh` installs (server-everything
// and mcp-server-time). The real-server cases read `target/mcp-servers/env.sh` (or
// PW_MCP_EVERYTHING / PW_MCP_TIME); without them they are skipped with the reason printed,
// unless PW_REQUIRE_MCP_SERVERS=1 (tests/run.sh sets it): then they fail, saying what to run.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { rawText } from '../index.mjs';
import { connectMcpServer, createMcpClient, createMcpSession, McpCode, McpError, McpStartupError } from '../mcp.mjs';
import { llm, consumer, checkoutDir } from './helpers.mjs';

const rpc = (m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`;
const call = (name, args, id) => ({ type: 'TOOL_CALL', content: { ...(id ? { id } : {}), name, ...(args === undefined ? {} : { args }) } });
const texts = (frames) => frames.map((f) => rawText(f));
const prompt = (error) => JSON.stringify({ type: 'TEXT', content: `Tool results above.${error ? ` Last tool error: ${error}` : ''}` });
const INIT =
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"polyweave-node","version":"0.1.0"}}}\n';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
/** 2026-07-28's `_meta` members (SPEC §9.9), as the client writes them. */
const ENVELOPE =
  '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},' +
  '"io.modelcontextprotocol/clientInfo":{"name":"polyweave-node","version":"0.1.0"}';
const DISCOVER = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{${ENVELOPE}}}}\n`;
const CLOSED = 'Tool echo failed: the MCP server closed the connection';

/** A session whose server the test plays (`lines`: what the client wrote), started (2025-11-25) and listed. */
async function started(tools = ['echo'], options = {}) {
  const lines = [];
  const s = createMcpSession((l) => lines.push(l), { timeoutMs: 1000, revision: '2025-11-25', ...options });
  s.receive(rpc({ id: 1, result: { protocolVersion: '2025-11-25' } }));
  s.receive(rpc({ id: 2, result: { tools: tools.map((name) => ({ name, inputSchema: { type: 'object' } })) } }));
  await s.ready;
  lines.length = 0;
  return { s, lines };
}

/** A wrapper of the session on a manual clock: `{ m, w, got, clock }`. */
function wrapped(s, options = {}) {
  const clock = { t: 0, now: () => clock.t };
  const m = llm();
  const w = s.wrap(m.duplex, { clock, ...options });
  return { m, w, got: consumer(w), clock };
}

test('mcp: start-up lines, events and pagination are exact (raw client, 2025-11-25)', () => {
  const c = createMcpClient({ calls: 2, revision: '2025-11-25' });
  assert.equal(c.state, 'idle');
  assert.equal(c.pollTransmit(), null);
  c.start(0);
  assert.equal(c.state, 'starting');
  assert.equal(c.pollTimeout(), null, 'no server/discover to time');
  assert.deepEqual([...c.transmits()], [INIT]);
  const init = rpc({ id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 's' } } });
  assert.equal(c.feed(init), Buffer.byteLength(init));
  assert.equal(c.feed(init), 0, 'nothing while what the line owes is not polled out');
  assert.deepEqual([...c.events()], [{ type: 'initialized', protocolVersion: '2025-06-18', result: '{"protocolVersion":"2025-06-18","serverInfo":{"name":"s"}}' }]);
  assert.equal(c.protocolVersion, '2025-06-18');
  assert.deepEqual([...c.transmits()], [INITIALIZED, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n']);
  c.feed(rpc({ id: 2, result: { tools: [{ name: 'echo', description: 'Echoes' }], nextCursor: 'page 2' } }));
  assert.deepEqual([...c.events()], [{ type: 'tool', name: 'echo', tool: '{"name":"echo","description":"Echoes"}' }]);
  assert.deepEqual([...c.transmits()], ['{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"page 2"}}\n']);
  c.feed(Buffer.from(`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"t\\u0069me"},{"x":1},{"name":"${'n'.repeat(65)}"}]}}\r\n`));
  assert.deepEqual([...c.events()], [
    { type: 'tool', name: 'time', tool: '{"name":"t\\u0069me"}' },
    { type: 'toolSkipped', reason: 'noName', tool: '{"x":1}', len: 0, cap: 0 },
    { type: 'toolSkipped', reason: 'nameTooLong', tool: `{"name":"${'n'.repeat(65)}"}`, len: 65, cap: 64 },
    { type: 'ready', tools: 2 },
  ]);
  assert.equal(c.state, 'ready');
  assert.equal(c.stats().lines, 3);
  assert.deepEqual(c.limits, { lineCap: 8192, outboxCap: 4096, nameCap: 64, cursorCap: 256, maxDepth: 32 });
  c.close();
  assert.throws(() => c.start(0), /closed/);
});

test('mcp: an unsupported revision rejects the session ready with McpStartupError', async () => {
  const lines = [];
  const s = createMcpSession((l) => lines.push(l), { revision: '2025-11-25' });
  s.receive(rpc({ id: 1, result: { protocolVersion: '1999-01-01' } }));
  await assert.rejects(s.ready, (e) => {
    assert.ok(e instanceof McpStartupError);
    assert.equal(e.message, 'MCP start-up failed: the server chose a protocol revision this client does not speak: "1999-01-01"');
    assert.deepEqual(e.event, { type: 'startFailed', error: 'unsupportedVersion', raw: '"1999-01-01"', len: 0 });
    return true;
  });
  assert.equal(s.client.state, 'failed');
  assert.deepEqual(lines, [INIT]);
});

test('mcp: a call becomes its tools/call line; results, structuredContent, isError and JSON-RPC errors become exact frames', async () => {
  const { s, lines } = await started(['echo', 'weather']);
  const { m, w, got } = wrapped(s);
  m.say(call('echo', { message: 'hi' }, 'c1'));
  assert.deepEqual(lines, [
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":3}}}\n',
  ]);
  assert.equal(s.client.inFlight, 1);
  s.receive('{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}\n');
  assert.deepEqual(texts(m.toModel), [
    '{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}',
    prompt(),
  ]);
  assert.deepEqual(texts(got), [prompt()]);
  m.toModel.length = 0;
  m.say(call('weather', { city: 'Oslo' }, 'w'));
  m.say(call('echo', {}, 'a'));
  m.say(call('weather', {}, 'b'));
  m.say({ type: 'END' });
  // Answered out of order, in one chunk.
  s.receive(
    rpc({ id: 6, error: { code: -32602, message: 'Unknown tool: weather' } }) +
      rpc({ id: 5, result: { isError: true, content: [{ type: 'text', text: 'bad' }, { type: 'image', data: '' }, { type: 'text', text: 'input "x"' }] } }) +
      rpc({ id: 4, result: { content: [{ type: 'text', text: '{}' }], structuredContent: { t: 3 } } }),
  );
  assert.deepEqual(texts(m.toModel), [
    '{"type":"TOOL_RESULT","content":{"id":"b","name":"weather","error":"Unknown tool: weather"}}',
    '{"type":"TOOL_RESULT","content":{"id":"a","name":"echo","error":"bad\\ninput \\"x\\""}}',
    '{"type":"TOOL_RESULT","content":{"id":"w","name":"weather","result":{"t":3}}}',
    prompt('bad\ninput "x"'),
  ]);
  assert.deepEqual(texts(got).slice(1), [prompt('bad\ninput "x"'), '{"type":"END"}']);
  assert.equal(s.client.stats().answered, 4);
  w.close();
  s.dispose();
});

test('mcp: isError without texts, args not an object', async () => {
  // Without validation: the client's own check (with it, the listed inputSchema refuses first).
  const { s, lines } = await started(['echo'], { validate: false });
  const { m, w } = wrapped(s);
  m.say(call('echo', {}, 'a'));
  s.receive(rpc({ id: 3, result: { isError: true, content: [] } }));
  m.say(call('echo', [1], 'b'));
  assert.deepEqual(texts(m.toModel.filter((f) => f.type === 'TOOL_RESULT')), [
    '{"type":"TOOL_RESULT","content":{"id":"a","name":"echo","error":"Tool echo failed"}}',
    '{"type":"TOOL_RESULT","content":{"id":"b","name":"echo","error":"Tool echo arguments must be an object"}}',
  ]);
  assert.equal(lines.length, 1, 'the second call never reached the server');
  w.close();
  s.dispose();
});

test('mcp: progress becomes a PROGRESS frame (raw client) that restarts the timeout under the cap (session)', async () => {
  const c = createMcpClient({ calls: 1, revision: '2025-11-25' });
  c.start(0);
  c.pollTransmit();
  c.feed(rpc({ id: 1, result: { protocolVersion: '2025-11-25' } }));
  [...c.events(), ...c.transmits()];
  c.feed(rpc({ id: 2, result: { tools: [{ name: 'echo' }] } }));
  [...c.events()];
  assert.equal(c.handleFrame({ slot: 0, index: 7 }, call('echo', {})).request, 3);
  c.feed('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"total":4}}\n');
  assert.deepEqual([...c.frames()], [{ slot: 0, index: 7, frame: '{"type":"PROGRESS","content":{"progressToken":3,"progress":1,"total":4}}' }]);
  c.close();

  const { s } = await started(['echo'], { timeoutMs: 1000, maxTotalTimeoutMs: 5000 });
  const { m, w, clock } = wrapped(s);
  m.say(call('echo', {}, 'p'));
  clock.t = 800;
  s.receive('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"total":4}}\n');
  clock.t = 1799;
  w.tick();
  assert.equal(w.pending, 1, 'restarted at 800: due at 1800, not 1000');
  s.receive(rpc({ id: 3, result: { content: [] } }));
  assert.deepEqual(texts(m.toModel), ['{"type":"TOOL_RESULT","content":{"id":"p","name":"echo","result":[]}}', prompt()]);
  s.receive(rpc({ method: 'notifications/progress', params: { progressToken: 99, progress: 1 } }));
  assert.equal(s.client.stats().unknownProgress, 1);
  w.close();
  s.dispose();
});

test('mcp: cancel sends notifications/cancelled, a timeout cancels with reason timeout, a late answer is ignored', async () => {
  const { s, lines } = await started();
  const { m, w, clock } = wrapped(s);
  m.say(call('echo', {}, 'c'));
  w.cancel('user stopped');
  assert.equal(lines[1], '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user stopped"}}\n');
  assert.equal(rawText(m.toModel[0]), '{"type":"TOOL_RESULT","content":{"id":"c","name":"echo","error":"Tool echo cancelled: user stopped"}}');
  s.receive(rpc({ id: 3, result: { content: [] } }));
  assert.equal(s.client.stats().late, 1);
  m.toModel.length = 0;
  m.say(call('echo', {}, 't'));
  clock.t = 1000;
  w.tick();
  assert.equal(lines[3], '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"timeout"}}\n');
  assert.equal(rawText(m.toModel[0]), '{"type":"TOOL_RESULT","content":{"id":"t","name":"echo","error":"Tool echo timed out after 1000ms"}}');
  w.close();
  s.dispose();
});

test('mcp: ping is answered, other requests refused -32601, notifications handed out, junk counted', async () => {
  const { s, lines } = await started();
  s.receive('{"jsonrpc":"2.0","id":"p-1","method":"ping"}\n{"jsonrpc":"2.0","id":7,"method":"roots/list"}\n');
  s.receive('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}\n');
  s.receive('not json\n{"jsonrpc":"2.0","id":42,"result":{}}\n');
  assert.deepEqual(lines, ['{"jsonrpc":"2.0","id":"p-1","result":{}}\n', '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}\n']);
  assert.deepEqual(s.notifications, [{ type: 'notification', method: 'notifications/message', params: '{"level":"info","data":"hello"}', methodCut: false }]);
  const st = s.client.stats();
  assert.deepEqual([st.pings, st.refusedRequests, st.notifications, st.notJson, st.unknownId], [1, 1, 1, 1, 1]);
  s.dispose();
});

test('mcp: closing fails the calls in flight and later ones with "the MCP server closed the connection"', async () => {
  const { s } = await started();
  const { m, w } = wrapped(s);
  m.say(call('echo', { message: 'hi' }, 'x'));
  s.handleClosed();
  assert.equal(s.closed, true);
  assert.equal(s.client.state, 'closed');
  assert.deepEqual(texts(m.toModel), [`{"type":"TOOL_RESULT","content":{"id":"x","name":"echo","error":"${CLOSED}"}}`, prompt(CLOSED)]);
  await assert.rejects(s.call('echo', { message: 'again' }), { message: CLOSED });
  w.close();
  s.dispose();
});

test('mcp: each 500-508 code (and 302 for a name too long) is an McpError with its code and name, raised for its case (509-513: mcp_http.test.mjs)', () => {
  const c = createMcpClient({ calls: 2, revision: '2025-11-25' });
  c.start(0);
  c.pollTransmit();
  c.feed(rpc({ id: 1, result: { protocolVersion: '2025-11-25' } }));
  [...c.events(), ...c.transmits()];
  c.feed(rpc({ id: 2, result: { tools: [{ name: 'echo' }] } }));
  [...c.events()];
  const refused = (code, name, fn) =>
    assert.throws(fn, (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, name);
      assert.equal(e.errno, code);
      assert.ok(e.message.endsWith(`(${name}, ${code})`), e.message);
      return true;
    });
  const h = (index) => ({ slot: 0, index });
  refused(500, 'PW_MCP_NOT_ADAPTER_FRAME', () => c.handleFrame(h(1), { type: 'TEXT', content: 'x' }));
  refused(501, 'PW_MCP_NO_NAME', () => c.handleFrame(h(1), '{"type":"TOOL_CALL","content":{"args":{}}}'));
  refused(302, 'PW_NAME_TOO_LONG', () => c.handleFrame(h(1), call('x'.repeat(65), {})));
  assert.equal(c.handleFrame(h(1), call('echo', {})).kind, 'sent');
  refused(503, 'PW_MCP_DUPLICATE_CALL', () => c.handleFrame(h(1), call('echo', {})));
  refused(504, 'PW_MCP_UNKNOWN_CALL', () => c.handleFrame({ slot: 1, index: 9 }, { type: 'CANCEL', content: { name: 'echo', reason: 'r' } }));
  refused(507, 'PW_MCP_ALREADY_STARTED', () => c.start(0));
  assert.deepEqual(c.handleFrame(h(2), call('echo', '[1]')), { kind: 'failed', request: 0, failure: 'argsNotObject', limit: 0, len: 0, notified: false });
  refused(506, 'PW_MCP_FRAME_PENDING', () => c.handleFrame(h(3), call('echo', {})));
  assert.deepEqual(c.pollFrame(), { slot: 0, index: 2, frame: '{"type":"ERROR","content":{"message":"Tool echo arguments must be an object"}}' });
  c.close();
  const small = createMcpClient({ calls: 2, limits: { outboxCap: 396 }, revision: '2025-11-25' });
  small.start(0);
  small.pollTransmit();
  small.feed(rpc({ id: 1, result: { protocolVersion: '2025-11-25' } }));
  [...small.events(), ...small.transmits()];
  small.feed(rpc({ id: 2, result: { tools: [] } }));
  [...small.events()];
  const big = { text: 'a'.repeat(200) };
  assert.equal(small.handleFrame(h(1), call('echo', big)).request, 3);
  assert.equal(small.queued, 1);
  refused(505, 'PW_MCP_OUTBOX_FULL', () => small.handleFrame(h(2), call('echo', big)));
  assert.ok(small.pollTransmit().startsWith('{"jsonrpc":"2.0","id":3,"method":"tools/call"'));
  assert.equal(small.handleFrame(h(2), call('echo', big)).request, 4);
  const tooMany = small.handleFrame(h(3), call('echo', {}));
  assert.deepEqual([tooMany.kind, tooMany.failure, tooMany.limit], ['failed', 'tooMany', 2]);
  small.close();
  refused(508, 'PW_MCP_CLIENT_INFO_TOO_LONG', () => createMcpClient({ name: 'n'.repeat(65) }));
  refused(508, 'PW_MCP_CLIENT_INFO_TOO_LONG', () => createMcpClient({ version: 'v'.repeat(65) }));
  assert.deepEqual(Object.values(McpCode), [500, 501, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513]);
});

// ------------------------------------------------------------ 2026-07-28 (SPEC §9.9, §9.10, §9.12), scripted

const LIST_2026 = (id, cursor) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{${cursor ? `"cursor":"${cursor}",` : ''}"_meta":{${ENVELOPE}}}}\n`;
const LISTEN = (id) => `{"jsonrpc":"2.0","id":${id},"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{${ENVELOPE}}}}\n`;
const DISCOVERED = { supportedVersions: ['2025-11-25', '2026-07-28'], capabilities: { tools: { listChanged: true } }, serverInfo: { name: 's', version: '1' } };

test('mcp 2026: the defaults come from the C library; a revision it does not know is a TypeError', () => {
  const c = createMcpClient();
  assert.equal(c.revision, 'auto');
  assert.equal(c.startTimeoutMs, 10000);
  assert.equal(c.protocolVersion, null);
  c.close();
  const fixed = createMcpClient({ revision: '2026-07-28', startTimeoutMs: 250 });
  assert.deepEqual([fixed.revision, fixed.startTimeoutMs], ['2026-07-28', 250]);
  fixed.close();
  assert.throws(() => createMcpClient({ revision: '2026' }), { name: 'TypeError', message: 'createMcpClient: revision "2026": one of auto, 2025-11-25, 2026-07-28' });
  assert.throws(() => createMcpClient({ startTimeoutMs: -1 }), TypeError);
  const idle = createMcpClient();
  assert.throws(() => idle.start(1.5), { name: 'TypeError', message: "start: now 1.5: whole milliseconds of the host's clock, at least 0" });
  assert.equal(idle.state, 'idle', 'nothing changed');
  idle.close();
});

test('mcp 2026: server/discover is the first line, exact; a server listing 2026-07-28 gets no handshake and every request its envelope (raw client)', () => {
  const c = createMcpClient({ calls: 2 });
  c.start(1000);
  assert.equal(c.pollTimeout(), 11000, 'start + the default 10000 ms');
  assert.deepEqual([...c.transmits()], [DISCOVER]);
  assert.equal(c.pollTimeout(), 11000, 'still awaited');
  const answer = rpc({ id: 1, result: DISCOVERED });
  c.feed(answer);
  assert.deepEqual([...c.events()], [{ type: 'initialized', protocolVersion: '2026-07-28', result: JSON.stringify(DISCOVERED) }]);
  assert.equal(c.protocolVersion, '2026-07-28');
  assert.equal(c.pollTimeout(), null, 'answered: nothing to time');
  assert.deepEqual([...c.transmits()], [LIST_2026(2)], 'no initialize, no notifications/initialized');
  c.feed(rpc({ id: 2, result: { tools: [{ name: 'echo' }], nextCursor: 'p2' } }));
  assert.deepEqual([...c.events()], [{ type: 'tool', name: 'echo', tool: '{"name":"echo"}' }]);
  assert.deepEqual([...c.transmits()], [LIST_2026(3, 'p2')]);
  c.feed(rpc({ id: 3, result: { tools: [] } }));
  assert.deepEqual([...c.events()], [{ type: 'ready', tools: 1 }]);
  // The server can tell of tool-list changes: the client subscribes.
  assert.deepEqual([...c.transmits()], [LISTEN(4)]);
  assert.equal(c.handleFrame({ slot: 0, index: 1 }, call('echo', { m: 'hi' })).request, 5);
  assert.deepEqual([...c.transmits()], [
    `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},"_meta":{"progressToken":5,${ENVELOPE}}}}\n`,
  ]);
  // No ping in 2026-07-28: refused as any other request.
  c.feed('{"jsonrpc":"2.0","id":"p","method":"ping"}\n');
  assert.deepEqual([...c.transmits()], ['{"jsonrpc":"2.0","id":"p","error":{"code":-32601,"message":"Method not found"}}\n']);
  assert.deepEqual([c.stats().pings, c.stats().refusedRequests], [0, 1]);
  c.close();
});

test('mcp 2026: a tools/call in a session carries the envelope; resultType input_required fails the call with its exact text', async () => {
  const lines = [];
  const s = createMcpSession((l) => lines.push(l), { timeoutMs: 1000 });
  assert.deepEqual(lines, [DISCOVER]);
  s.receive(rpc({ id: 1, result: { supportedVersions: ['2026-07-28'], capabilities: {} } }));
  s.receive(rpc({ id: 2, result: { tools: [{ name: 'echo' }, { name: 'ask' }] } }));
  await s.ready;
  assert.equal(s.protocolVersion, '2026-07-28');
  assert.deepEqual(s.serverInfo, { supportedVersions: ['2026-07-28'], capabilities: {} });
  assert.deepEqual(lines.slice(1), [LIST_2026(2)], 'no subscription: the server cannot tell of changes');
  lines.length = 0;
  const { m, w } = wrapped(s);
  m.say(call('echo', { message: 'hi' }, 'c1'));
  m.say(call('ask', {}, 'c2'));
  assert.deepEqual(lines, [
    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":3,${ENVELOPE}}}}\n`,
    `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":{"progressToken":4,${ENVELOPE}}}}\n`,
  ]);
  s.receive(rpc({ id: 4, result: { resultType: 'input_required', inputRequests: { q: { method: 'elicitation/create', params: {} } } } }));
  s.receive(rpc({ id: 3, result: { resultType: 'complete', content: [{ type: 'text', text: 'Echo: hi' }] } }));
  const needs = 'Tool ask needs input this client cannot give';
  assert.deepEqual(texts(m.toModel), [
    `{"type":"TOOL_RESULT","content":{"id":"c2","name":"ask","error":"${needs}"}}`,
    '{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}',
    prompt(needs),
  ]);
  w.close();
  s.dispose();
});

test('mcp 2026: server/discover refused (an id:null error) or unanswered by the deadline: initialize on the same connection (manual clock)', async () => {
  // Refused with "id":null, as some earlier-revision servers do.
  const refusedLines = [];
  const r = createMcpSession((l) => refusedLines.push(l));
  r.receive('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}\n');
  assert.deepEqual(refusedLines, [DISCOVER, INIT.replace('"id":1', '"id":2')]);
  r.dispose();

  const clock = { t: 5000, now: () => clock.t };
  const lines = [];
  const s = createMcpSession((l) => lines.push(l), { clock, startTimeoutMs: 500 });
  assert.equal(s.client.pollTimeout(), 5500);
  assert.deepEqual(lines, [DISCOVER]);
  clock.t = 5499;
  s.tick();
  assert.deepEqual(lines, [DISCOVER], 'not yet due');
  clock.t = 5500;
  s.tick();
  assert.deepEqual(lines, [DISCOVER, INIT.replace('"id":1', '"id":2')]);
  assert.equal(s.client.pollTimeout(), null);
  // The late answer to server/discover is counted and ignored.
  s.receive(rpc({ id: 1, result: DISCOVERED }));
  assert.equal(s.client.stats().late, 1);
  s.receive(rpc({ id: 2, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'old' } } }));
  s.receive(rpc({ id: 3, result: { tools: [{ name: 'echo' }] } }));
  await s.ready;
  assert.equal(s.protocolVersion, '2025-11-25');
  assert.deepEqual(s.serverInfo, { protocolVersion: '2025-11-25', serverInfo: { name: 'old' } });
  assert.deepEqual(lines.slice(2), [INITIALIZED, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n']);
  s.dispose();

  // Fixed to 2026-07-28: silence fails the start-up.
  const fixed = createMcpSession(() => {}, { clock, revision: '2026-07-28', startTimeoutMs: 500 });
  clock.t += 500;
  fixed.tick();
  await assert.rejects(fixed.ready, (e) => {
    assert.ok(e instanceof McpStartupError);
    assert.equal(e.message, 'MCP start-up failed: the server did not answer server/discover within 500 ms');
    assert.deepEqual(e.event, { type: 'startFailed', error: 'noAnswer', raw: '', len: 0 });
    return true;
  });
  assert.equal(fixed.client.state, 'failed');
  fixed.dispose();

  // Fixed to 2026-07-28: a server that does not list it fails the start-up.
  const old = createMcpSession(() => {}, { clock, revision: '2026-07-28' });
  old.receive(rpc({ id: 1, result: { supportedVersions: ['2025-11-25'] } }));
  await assert.rejects(old.ready, {
    name: 'McpStartupError',
    message: 'MCP start-up failed: the server does not list 2026-07-28 in its server/discover answer: ["2025-11-25"]',
  });
  old.dispose();
});

test('mcp 2026: notifications/tools/list_changed → tools/list again → onToolsChanged with the new list; later wrappers serve it', async () => {
  const lines = [];
  const changes = [];
  const s = createMcpSession((l) => lines.push(l), { timeoutMs: 1000, onToolsChanged: (tools) => changes.push(tools) });
  s.receive(rpc({ id: 1, result: DISCOVERED }));
  s.receive(rpc({ id: 2, result: { tools: [{ name: 'echo' }, { name: 'old' }] } }));
  await s.ready;
  assert.deepEqual(lines.slice(1), [LIST_2026(2), LISTEN(3)]);
  const before = wrapped(s);
  lines.length = 0;
  s.receive('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n');
  assert.deepEqual(lines, [LIST_2026(4)]);
  assert.deepEqual(changes, [], 'nothing changed until the new list is in');
  s.receive(rpc({ id: 4, result: { tools: [{ name: 'echo' }], nextCursor: 'c' } }));
  assert.deepEqual(lines.slice(1), [LIST_2026(5, 'c')]);
  s.receive(rpc({ id: 5, result: { tools: [{ name: 'new', inputSchema: { type: 'object' } }] } }));
  const fresh = [{ name: 'echo', tool: { name: 'echo' } }, { name: 'new', tool: { name: 'new', inputSchema: { type: 'object' } } }];
  assert.deepEqual(changes, [fresh]);
  assert.deepEqual(s.tools, fresh);
  assert.equal(rawText(s.tools[1].tool), '{"name":"new","inputSchema":{"type":"object"}}');
  assert.deepEqual(s.notifications.map((n) => n.method), ['notifications/tools/list_changed']);
  assert.deepEqual(Object.keys(s.adapterTools()), ['echo', 'new']);
  // A wrapper made now serves the new tool; the one made before keeps its list.
  const after = wrapped(s);
  lines.length = 0;
  after.m.say(call('new', {}, 'n1'));
  assert.deepEqual(lines, [`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"new","arguments":{},"_meta":{"progressToken":6,${ENVELOPE}}}}\n`]);
  before.m.say(call('new', {}, 'n2'));
  assert.equal(lines.length, 1, 'the older wrapper does not know the tool');
  assert.match(rawText(before.m.toModel[0]), /"id":"n2","name":"new","error":/);
  before.w.close();
  after.w.close();
  s.dispose();
});

test('mcp: a re-listing is told as toolsChanged with its count, in 2025-11-25 too (raw client)', () => {
  const c = createMcpClient({ revision: '2025-11-25' });
  c.start(0);
  c.pollTransmit();
  c.feed(rpc({ id: 1, result: { protocolVersion: '2025-11-25' } }));
  [...c.events(), ...c.transmits()];
  c.feed(rpc({ id: 2, result: { tools: [{ name: 'a' }] } }));
  assert.deepEqual([...c.events()], [{ type: 'tool', name: 'a', tool: '{"name":"a"}' }, { type: 'ready', tools: 1 }]);
  assert.deepEqual([...c.transmits()], [], 'no subscription in 2025-11-25');
  c.feed('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n');
  assert.deepEqual([...c.events()], [{ type: 'notification', method: 'notifications/tools/list_changed', params: null, methodCut: false }]);
  assert.deepEqual([...c.transmits()], ['{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n']);
  c.feed(rpc({ id: 3, result: { tools: [{ name: 'b' }, { x: 1 }, { name: 'c' }] } }));
  assert.deepEqual([...c.events()], [
    { type: 'tool', name: 'b', tool: '{"name":"b"}' },
    { type: 'toolSkipped', reason: 'noName', tool: '{"x":1}', len: 0, cap: 0 },
    { type: 'tool', name: 'c', tool: '{"name":"c"}' },
    { type: 'toolsChanged', tools: 2 },
  ]);
  c.close();
});

// ------------------------------------------------------------ connectMcpServer against a small Node server

const FAKE = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const say = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
const mode = process.argv[1];
rl.on('line', async (line) => {
  const m = JSON.parse(line);
  if (m.method === 'server/discover') {
    if (mode === 'silent') return; // an earlier-revision server that ignores what it does not know
    if (mode !== 'modern') return say({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    say({ id: m.id, result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'fake' } } });
  } else if (m.method === 'initialize') {
    if (mode === 'refuse') return say({ id: m.id, error: { code: -32000, message: 'no' } });
    say({ id: m.id, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'fake' } } });
  } else if (m.method === 'tools/list') {
    say({ method: 'notifications/message', params: { level: 'info', data: 'listing' } });
    say({ id: m.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }, { name: 'die' }] } });
  } else if (m.method === 'tools/call') {
    const p = m.params;
    if (p.name === 'die') process.exit(3);
    for (let i = 0; i < (p.arguments.steps ?? 0); i++) {
      await new Promise((r) => setTimeout(r, 100));
      say({ method: 'notifications/progress', params: { progressToken: p._meta.progressToken, progress: i } });
    }
    say({ id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(p.arguments) }] } });
  }
  if (mode === 'exit-at-start') process.exit(0);
});
`;
const fake = (mode = 'ok') => ['-e', FAKE, mode];

test('mcp: connectMcpServer lists, calls, keeps a call alive by progress, and a server that dies fails its calls', async () => {
  const wire = [];
  const s = await connectMcpServer(process.execPath, fake(), {
    timeoutMs: 250,
    maxTotalTimeoutMs: 3000,
    extraTools: ['other'],
    onWire: (d, data) => wire.push([d, String(data)]),
  });
  assert.deepEqual(s.tools, [{ name: 'echo', tool: { name: 'echo', inputSchema: { type: 'object' } } }, { name: 'die', tool: { name: 'die' } }]);
  assert.deepEqual(Object.keys(s.adapterTools()), ['echo', 'die', 'other']);
  assert.deepEqual(s.serverInfo.serverInfo, { name: 'fake' });
  assert.equal(s.notifications[0].params, '{"level":"info","data":"listing"}');
  assert.deepEqual(await s.call('echo', { a: 1 }), [{ type: 'text', text: '{"a":1}' }]);
  const t0 = performance.now();
  const sent = await s.run([{ type: 'TEXT', content: 'go' }, call('echo', { steps: 6 }, 'p'), { type: 'END' }, '[1]']);
  assert.ok(performance.now() - t0 > 500, 'six progress notifications 100 ms apart kept a 250 ms timeout alive');
  assert.deepEqual(
    sent.map((x) => (x.rejected ? `rejected ${x.rejected} ${x.frame}` : `${x.to} ${rawText(x.frame)}`)),
    [
      'consumer {"type":"TEXT","content":"go"}',
      'rejected response [1]',
      'model {"type":"TOOL_RESULT","content":{"id":"p","name":"echo","result":[{"type":"text","text":"{\\"steps\\":6}"}]}}',
      `model ${prompt()}`,
      `consumer ${prompt()}`,
      'consumer {"type":"END"}',
    ],
  );
  assert.equal(wire.filter(([d, l]) => d === 'send' && l.includes('notifications/cancelled')).length, 0);
  await assert.rejects(s.call('die'), { message: 'Tool die failed: the MCP server closed the connection' });
  assert.equal(s.closed, true);
  await assert.rejects(s.call('echo'), { message: CLOSED });
  assert.deepEqual(await s.close(), { code: 3, signal: null });
});

test('mcp: a call without progress times out on the real timers and the server is told', async () => {
  const wire = [];
  const s = await connectMcpServer(process.execPath, fake(), { timeoutMs: 150, onWire: (d, data) => wire.push([d, String(data)]) });
  const t0 = performance.now();
  await assert.rejects(s.call('echo', { steps: 4 }, { id: 'slow' }), { message: 'Tool echo timed out after 150ms' });
  const took = performance.now() - t0;
  assert.ok(took >= 140 && took < 1000, `took ${took} ms`);
  const sentLines = wire.filter(([d]) => d === 'send').map(([, l]) => JSON.parse(l));
  // server/discover (refused) 1, initialize 2, tools/list 3: the call is request 4.
  assert.deepEqual(sentLines.at(-1), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4, reason: 'timeout' } });
  await s.close();
});

test('mcp: start-up failures reject connectMcpServer with McpStartupError', async () => {
  await assert.rejects(connectMcpServer(process.execPath, fake('refuse')), {
    name: 'McpStartupError',
    message: 'MCP start-up failed: the server refused the start-up: {"code":-32000,"message":"no"}',
  });
  await assert.rejects(connectMcpServer(process.execPath, fake('exit-at-start')), {
    message: 'the MCP server closed its output before listing its tools',
  });
  await assert.rejects(connectMcpServer(process.execPath, ['-e', 'setTimeout(() => {}, 5000)'], { startupTimeoutMs: 200 }), {
    message: 'the MCP server did not finish its start-up within 200 ms',
  });
  await assert.rejects(connectMcpServer('/nonexistent/mcp-server'), (e) => e instanceof McpStartupError && /cannot start the MCP server/.test(e.message));
  await assert.rejects(connectMcpServer(process.execPath, fake(), { revision: '2024-11-05' }), {
    name: 'TypeError',
    message: 'createMcpClient: revision "2024-11-05": one of auto, 2025-11-25, 2026-07-28',
  });
});

test('mcp: connectMcpServer times server/discover on real timers: a silent server gets initialize after startTimeoutMs', async () => {
  const wire = [];
  const t0 = performance.now();
  const s = await connectMcpServer(process.execPath, fake('silent'), { startTimeoutMs: 200, onWire: (d, data) => wire.push([d, String(data)]) });
  const took = performance.now() - t0;
  assert.ok(took >= 190 && took < 5000, `took ${took} ms`);
  assert.equal(s.protocolVersion, '2025-11-25');
  assert.deepEqual(wire.filter(([d]) => d === 'send').map(([, l]) => JSON.parse(l).method), ['server/discover', 'initialize', 'notifications/initialized', 'tools/list']);
  assert.deepEqual(await s.call('echo', { a: 1 }), [{ type: 'text', text: '{"a":1}' }]);
  await s.close();
});

test('mcp: connectMcpServer speaks 2026-07-28 to a server that lists it, and 2025-11-25 when told to', async () => {
  const wire = [];
  const s = await connectMcpServer(process.execPath, fake('modern'), { onWire: (d, data) => wire.push([d, String(data)]) });
  assert.equal(s.protocolVersion, '2026-07-28');
  assert.deepEqual(s.serverInfo.serverInfo, { name: 'fake' });
  assert.deepEqual(await s.call('echo', { a: 1 }), [{ type: 'text', text: '{"a":1}' }]);
  const sent = wire.filter(([d]) => d === 'send').map(([, l]) => l);
  assert.deepEqual(sent.map((l) => JSON.parse(l).method), ['server/discover', 'tools/list', 'tools/call']);
  assert.equal(sent[0], DISCOVER);
  assert.equal(sent[2], `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":{"progressToken":3,${ENVELOPE}}}}\n`);
  await s.close();
  const legacy = await connectMcpServer(process.execPath, fake('modern'), { revision: '2025-11-25' });
  assert.equal(legacy.protocolVersion, '2025-11-25');
  assert.equal(legacy.client.stats().lines, 3, "the answers to initialize and tools/list, and a notification: no server/discover's");
  await legacy.close();
});

// ------------------------------------------------------------ the real servers

const INSTALL_HINT = 'run `bash tests/mcp/install.sh` from the workspace root (it writes target/mcp-servers/env.sh)';

/** `{ everything, time }` from the environment or env.sh; null (test skipped) or a failure without them. */
function realServers(t) {
  const values = { PW_MCP_EVERYTHING: process.env.PW_MCP_EVERYTHING, PW_MCP_TIME: process.env.PW_MCP_TIME };
  const envFile = path.join(checkoutDir, 'target', 'mcp-servers', 'env.sh');
  let why = null;
  if (!values.PW_MCP_EVERYTHING || !values.PW_MCP_TIME) {
    if (fs.existsSync(envFile)) {
      for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
        const m = /^export (\w+)=(.*)$/.exec(line.trim());
        // install.sh writes the values with printf %q: plain paths, or quoted ones.
        if (m && m[1] in values && !values[m[1]]) values[m[1]] = m[2].replace(/^'(.*)'$/, '$1').replace(/\\(.)/g, '$1');
      }
    } else {
      why = `the MCP servers are not installed: ${envFile} is missing; ${INSTALL_HINT}`;
    }
  }
  if (!why) {
    for (const [k, v] of Object.entries(values)) {
      if (!v || !fs.existsSync(v)) {
        why = `${k}=${v} (from ${envFile}) does not exist; ${INSTALL_HINT}`;
        break;
      }
    }
  }
  if (why) {
    if (process.env.PW_REQUIRE_MCP_SERVERS === '1') throw new Error(`PW_REQUIRE_MCP_SERVERS=1 but ${why}`);
    console.log(`skipping the real MCP server tests: ${why}`);
    t.skip(why);
    return null;
  }
  return { everything: values.PW_MCP_EVERYTHING, time: values.PW_MCP_TIME };
}

const EVERYTHING_TOOLS = [
  'echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference', 'get-structured-content', 'get-sum',
  'get-tiny-image', 'gzip-file-as-resource', 'toggle-simulated-logging', 'toggle-subscriber-updates', 'trigger-long-running-operation',
  'simulate-research-query',
];
const LONG = 'trigger-long-running-operation';

const open = [];
after(async () => {
  await Promise.all(open.map((s) => s.close()));
});

test('mcp real: server-everything — 2025-11-25 after refusing server/discover, its list_changed at start-up listed again, every listed tool, echo, an unknown tool, a long operation kept alive by progress', async (t) => {
  const srv = realServers(t);
  if (!srv) return;
  const wire = [];
  let changed;
  const relisted = new Promise((resolve) => (changed = resolve));
  const s = await connectMcpServer('node', [srv.everything, 'stdio'], {
    timeoutMs: 700,
    maxTotalTimeoutMs: 5000,
    extraTools: ['nope'],
    stderr: 'ignore',
    onWire: (d, data) => wire.push([d, String(data)]),
    onToolsChanged: (tools) => changed(tools),
  });
  open.push(s);
  // server/discover refused (-32601), then the 2025-11-25 handshake on the same connection.
  assert.equal(s.protocolVersion, '2025-11-25');
  const start = wire.filter(([d]) => d === 'send').map(([, l]) => l);
  assert.deepEqual(start.slice(0, 4), [DISCOVER, INIT.replace('"id":1', '"id":2'), INITIALIZED, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n']);
  const refusal = JSON.parse(wire.filter(([d]) => d === 'recv').map(([, c]) => c).join('').split('\n')[0]);
  assert.equal(refusal.id, 1);
  assert.equal(refusal.error.code, -32601);
  assert.deepEqual(s.tools.map((x) => x.name), EVERYTHING_TOOLS);
  // It says its tools changed once initialized: they are listed again, the same 13.
  const tools = await relisted;
  assert.deepEqual(tools.map((x) => x.name), EVERYTHING_TOOLS);
  assert.equal(s.tools, tools);
  assert.equal(wire.filter(([d]) => d === 'send').map(([, l]) => l)[4], '{"jsonrpc":"2.0","id":4,"method":"tools/list"}\n');
  assert.deepEqual(s.notifications.map((n) => n.method).filter((m) => m === 'notifications/tools/list_changed'), ['notifications/tools/list_changed']);
  assert.equal(s.tools.length, 13);
  assert.equal(s.tools[0].tool.inputSchema.properties.message.type, 'string');
  assert.equal(s.client.state, 'ready');

  const echo = await s.run([call('echo', { message: 'hi' }, 'c1')]);
  assert.deepEqual(echo.map((x) => `${x.to} ${rawText(x.frame)}`), [
    'model {"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}',
    `model ${prompt()}`,
    `consumer ${prompt()}`,
  ]);

  const e = 'MCP error -32602: Tool nope not found';
  const nope = await s.run([call('nope', {}, 'n1')]);
  assert.deepEqual(nope.map((x) => `${x.to} ${rawText(x.frame)}`), [
    `model {"type":"TOOL_RESULT","content":{"id":"n1","name":"nope","error":"${e}"}}`,
    `model ${prompt(e)}`,
    `consumer ${prompt(e)}`,
  ]);

  const from = wire.length;
  const t0 = performance.now();
  const long = await s.run([call(LONG, { duration: 2, steps: 4 }, 'L')]);
  const took = performance.now() - t0;
  assert.deepEqual(long.map((x) => `${x.to} ${rawText(x.frame)}`), [
    `model {"type":"TOOL_RESULT","content":{"id":"L","name":"${LONG}","result":[{"type":"text","text":"Long running operation completed. Duration: 2 seconds, Steps: 4."}]}}`,
    `model ${prompt()}`,
    `consumer ${prompt()}`,
  ]);
  assert.ok(took >= 1900 && took < 4500, `the 2 s operation took ${took} ms`);
  const sent = wire.slice(from).filter(([d]) => d === 'send').map(([, l]) => JSON.parse(l));
  const request = sent.find((m) => m.method === 'tools/call');
  assert.equal(request.params._meta.progressToken, request.id);
  assert.equal(sent.filter((m) => m.method === 'notifications/cancelled').length, 0, 'nothing cancelled');
  const received = wire.slice(from).filter(([d]) => d === 'recv').map(([, c]) => c).join('').split('\n');
  const progress = received.filter((l) => l.includes('notifications/progress')).map((l) => JSON.parse(l).params.progressToken);
  assert.deepEqual(progress, [request.id, request.id, request.id, request.id]);
});

test('mcp real: mcp-server-time — 2026-07-28 with no initialize written, get_current_time structuredContent, an unknown tool', async (t) => {
  const srv = realServers(t);
  if (!srv) return;
  const wire = [];
  const s = await connectMcpServer(srv.time, [], { extraTools: ['nope'], stderr: 'ignore', onWire: (d, data) => wire.push([d, String(data)]) });
  open.push(s);
  assert.equal(s.protocolVersion, '2026-07-28');
  assert.ok(s.serverInfo.supportedVersions.includes('2026-07-28'), JSON.stringify(s.serverInfo));
  assert.deepEqual(s.tools.map((x) => x.name), ['get_current_time', 'convert_time']);
  const result = await s.call('get_current_time', { timezone: 'UTC' });
  assert.deepEqual(Object.keys(result).sort(), ['datetime', 'day_of_week', 'is_dst', 'timezone']);
  assert.equal(result.timezone, 'UTC');
  assert.match(result.datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  const e = 'Unknown tool: nope';
  const nope = await s.run([call('nope', {}, 't3')]);
  assert.deepEqual(nope.map((x) => `${x.to} ${rawText(x.frame)}`), [
    `model {"type":"TOOL_RESULT","content":{"id":"t3","name":"nope","error":"${e}"}}`,
    `model ${prompt(e)}`,
    `consumer ${prompt(e)}`,
  ]);
  const sent = wire.filter(([d]) => d === 'send').map(([, l]) => l);
  assert.equal(sent[0], DISCOVER);
  assert.equal(sent.filter((l) => JSON.parse(l).method === 'initialize').length, 0, 'no initialize written');
  assert.equal(sent[1], LIST_2026(2));
  const calls = sent.filter((l) => JSON.parse(l).method === 'tools/call');
  assert.equal(calls.length, 2);
  for (const l of calls) {
    const { id } = JSON.parse(l);
    assert.ok(l.endsWith(`"_meta":{"progressToken":${id},${ENVELOPE}}}}\n`), l);
  }
});
