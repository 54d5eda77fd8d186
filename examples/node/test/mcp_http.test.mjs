// The MCP client over Streamable HTTP (SPEC §9.11) through the Node package:
// `connectMcpServer({ url, fetch })` against a scripted `fetch` (each POST's URL, headers and
// body exactly; JSON and event-stream responses cut into small chunks; HTTP errors, a broken
// stream, a cancel that aborts its fetch, a 2025-11-25 session), the raw client's HTTP calls,
// and real servers on the loopback interface: server-everything `streamableHttp` and, where
// the checkout has it, tests/mcp/http_server.py (the Python `mcp` package).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { rawText } from '../index.mjs';
import { connectMcpServer, createMcpClient, McpError, McpHttpSession, McpStartupError } from '../mcp.mjs';
import { llm, consumer, checkoutDir } from './helpers.mjs';

const URL_ = 'http://127.0.0.1:9/mcp';
const ENVELOPE =
  '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},' +
  '"io.modelcontextprotocol/clientInfo":{"name":"polyweave-node","version":"0.1.0"}';
const COMMON = [
  ['Content-Type', 'application/json'],
  ['Accept', 'application/json, text/event-stream'],
];
const V26 = ['MCP-Protocol-Version', '2026-07-28'];
const DISCOVER = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{${ENVELOPE}}}}`;
const LIST = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{${ENVELOPE}}}}`;
const DISCOVERED = '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}';
const LISTED = '{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}';
const CLOSED = 'Tool echo failed: the MCP server closed the connection';
const prompt = (error) => JSON.stringify({ type: 'TEXT', content: `Tool results above.${error ? ` Last tool error: ${error}` : ''}` });

/** Lets every pending promise and stream read run. */
async function flush() {
  for (let i = 0; i < 30; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A scripted `fetch`: `posts` are the requests it got (`{ url, method, headers, body, signal }`),
 * each answered with `post.respond(status, headers, body, { piece, broken })` (the body cut into
 * chunks of `piece` bytes, each read when asked for; `broken`: the stream errors after them;
 * `held`: it stays open after them, `post.push(text)` sending more) or
 * `post.fail(error)`.
 */
function scripted() {
  const posts = [];
  let wake = null;
  // As a browser's: refuses any `this` but the global object (or none).
  const fetch = function (url, init) {
    if (this !== undefined && this !== globalThis) return Promise.reject(new TypeError("Failed to execute 'fetch' on 'Window': Illegal invocation"));
    return new Promise((resolve, reject) => {
      const post = {
        url,
        method: init.method,
        headers: init.headers,
        body: init.body,
        signal: init.signal,
        pulls: 0,
        respond(status, headers, body = '', { piece = 1 << 20, broken = false, held = false } = {}) {
          let bytes = new TextEncoder().encode(body);
          let at = 0;
          let more = null;
          const stream = new ReadableStream({
            pull: (c) => {
              post.pulls++;
              if (at < bytes.length) {
                c.enqueue(bytes.slice(at, at + piece));
                at += piece;
              } else if (broken) c.error(new TypeError('terminated'));
              else if (held) {
                // Waits for `post.push(text)`.
                return new Promise((resolve) => (more = resolve));
              } else c.close();
            },
            cancel: () => {
              post.cancelled = true;
            },
          });
          /** More body for a `held` response. */
          post.push = (text) => {
            bytes = new Uint8Array([...bytes.subarray(at), ...new TextEncoder().encode(text)]);
            at = 0;
            more?.();
          };
          resolve(new Response(stream, { status, headers }));
        },
        fail: (e) => reject(e),
      };
      posts.push(post);
      wake?.();
    });
  };
  /** The `n`th POST (0-based), once made. */
  const nth = async (n) => {
    while (posts.length <= n) await new Promise((resolve) => (wake = resolve));
    return posts[n];
  };
  return { fetch, posts, nth };
}

/** `connectMcpServer({ url, fetch })` on a scripted fetch, started in 2026-07-28 with tool `echo`. */
async function modern(options = {}) {
  const f = scripted();
  const connecting = connectMcpServer({ url: URL_, fetch: f.fetch, ...options });
  (await f.nth(0)).respond(200, { 'content-type': 'application/json' }, DISCOVERED, { piece: 7 });
  (await f.nth(1)).respond(200, { 'content-type': 'application/json' }, LISTED, { piece: 5 });
  const s = await connecting;
  return { s, f };
}

const sse = (...messages) => messages.map((m) => `event: message\ndata: ${m}\n\n`).join('');

test('mcp http: the probe, the listing and a call, each POST exactly; JSON and event-stream responses in small chunks', async () => {
  const f = scripted();
  const changed = [];
  const connecting = connectMcpServer({ url: URL_, fetch: f.fetch, headers: { Authorization: 'Bearer t', Accept: 'ignored/x' }, onToolsChanged: (t) => changed.push(t) });
  const p0 = await f.nth(0);
  assert.equal(p0.url, URL_);
  assert.equal(p0.method, 'POST');
  // The caller's header first; the protocol's Accept replaces the caller's.
  assert.deepEqual(p0.headers, [['Authorization', 'Bearer t'], ...COMMON, V26, ['Mcp-Method', 'server/discover']]);
  assert.equal(p0.body, DISCOVER);
  await flush();
  assert.equal(f.posts.length, 1, 'one request at a time while starting');
  p0.respond(200, { 'content-type': 'application/json; charset=utf-8' }, DISCOVERED, { piece: 7 });
  const p1 = await f.nth(1);
  assert.deepEqual(p1.headers, [['Authorization', 'Bearer t'], ...COMMON, V26, ['Mcp-Method', 'tools/list']]);
  assert.equal(p1.body, LIST);
  // The listing as an event stream: a priming event, a comment, then the message, CRLF lines.
  const listing = `id: 0\ndata: \n\n: keep-alive\r\nevent: message\r\ndata: ${LISTED}\r\n\r\n`;
  p1.respond(200, { 'content-type': 'text/event-stream' }, listing, { piece: 5 });
  const s = await connecting;
  assert.ok(s instanceof McpHttpSession);
  assert.equal(s.protocolVersion, '2026-07-28');
  assert.deepEqual(s.serverInfo, JSON.parse(DISCOVERED).result);
  assert.deepEqual(s.tools.map((t) => rawText(t.tool)), ['{"name":"echo","inputSchema":{"type":"object"}}']);
  assert.equal(s.client.state, 'ready');
  assert.equal(s.client.streams, 34, 'maxPending (32) + 2');

  const result = s.call('echo', { message: 'hi' });
  const p2 = await f.nth(2);
  assert.deepEqual(p2.headers, [['Authorization', 'Bearer t'], ...COMMON, V26, ['Mcp-Method', 'tools/call'], ['Mcp-Name', 'echo']]);
  assert.equal(p2.body, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":3,${ENVELOPE}}}}`);
  const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"total":2}}';
  const answer = '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}';
  p2.respond(200, { 'content-type': 'text/event-stream' }, sse(progress, answer), { piece: 3 });
  assert.deepEqual(await result, [{ type: 'text', text: 'Echo: hi' }]);
  assert.ok(p2.pulls > 60, `read chunk by chunk: ${p2.pulls} reads`);
  assert.equal(s.client.inFlight, 0);
  assert.equal(f.posts.length, 3);
  assert.deepEqual(changed, []);
  await s.close();
});

test('mcp http: an error status without the answer fails the call with HTTP <status>; with the answer, the answer', async () => {
  const { s, f } = await modern();
  const failed = s.call('echo', { message: 'hi' });
  (await f.nth(2)).respond(500, { 'content-type': 'text/html' }, '<p>oops</p>', { piece: 2 });
  await assert.rejects(failed, { message: 'Tool echo failed: HTTP 500' });
  // 2026-07-28 answers an unknown tool with 400 and the JSON-RPC error in the body.
  const unknown = s.call('echo', {});
  const err = '{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown tool: echo"}}';
  (await f.nth(3)).respond(400, { 'content-type': 'application/json' }, err, { piece: 4 });
  await assert.rejects(unknown, { message: 'Unknown tool: echo' });
  assert.equal(s.client.inFlight, 0);
  await s.close();
});

test('mcp http: a stream that breaks before its answer, or a fetch that fails, fails its call once; nothing is sent again', async () => {
  const { s, f } = await modern();
  const broken = s.call('echo', {});
  const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}';
  (await f.nth(2)).respond(200, { 'content-type': 'text/event-stream' }, `${sse(progress)}data: {"jsonrpc":"2.0","id":3,"res`, { piece: 6, broken: true });
  await assert.rejects(broken, { message: CLOSED });
  const refused = s.call('echo', {});
  (await f.nth(3)).fail(new TypeError('fetch failed'));
  await assert.rejects(refused, { message: CLOSED });
  // A 200 whose JSON body is empty answers nothing either.
  const empty = s.call('echo', {});
  (await f.nth(4)).respond(200, { 'content-type': 'application/json' }, '');
  await assert.rejects(empty, { message: CLOSED });
  await flush();
  assert.equal(f.posts.length, 5, 'no call was sent twice');
  assert.equal(s.client.inFlight, 0);
  await s.close();
});

test('mcp http: a cancelled 2026-07-28 call aborts its fetch, stops reading its body and posts nothing; its stream serves the next call', async () => {
  const { s, f } = await modern();
  const m = llm();
  const clock = { t: 0, now: () => clock.t };
  const w = s.wrap(m.duplex, { clock });
  const got = consumer(w);
  m.say({ type: 'TOOL_CALL', content: { id: 'c', name: 'echo', args: { message: 'slow' } } });
  const p = await f.nth(2);
  assert.equal(p.signal.aborted, false);
  p.respond(200, { 'content-type': 'text/event-stream' }, `id: 0\ndata: \n\n`, { piece: 4, held: true });
  await flush();
  assert.equal(s.client.inFlight, 1);
  w.cancel('user stopped');
  assert.equal(p.signal.aborted, true);
  await flush();
  assert.equal(p.cancelled, true, 'its body is no longer read');
  const stopped = 'Tool echo cancelled: user stopped';
  assert.deepEqual(m.toModel.map(rawText), [`{"type":"TOOL_RESULT","content":{"id":"c","name":"echo","error":"${stopped}"}}`, prompt(stopped)]);
  await flush();
  assert.equal(f.posts.length, 3, 'no notifications/cancelled over HTTP in 2026-07-28');
  assert.equal(s.client.inFlight, 0);
  // The stream is free again: the next call goes on it.
  m.say({ type: 'TOOL_CALL', content: { id: 'd', name: 'echo', args: {} } });
  const q = await f.nth(3);
  q.respond(200, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":4,"result":{"structuredContent":{"ok":true}}}');
  await flush();
  assert.deepEqual(m.toModel.map(rawText).slice(2), ['{"type":"TOOL_RESULT","content":{"id":"d","name":"echo","result":{"ok":true}}}', prompt()]);
  assert.deepEqual(got.map(rawText), [prompt(stopped), prompt()]);
  w.close();
  await s.close();
});

test('mcp http: streams answered interleaved, each message whole before the next; a chunk is read only once the last was taken', async () => {
  const { s, f } = await modern();
  const a = s.call('echo', { n: 1 });
  const b = s.call('echo', { n: 2 });
  const c = s.call('echo', { n: 3 });
  const [pa, pb, pc] = [await f.nth(2), await f.nth(3), await f.nth(4)];
  const result = (id, n) => `{"jsonrpc":"2.0","id":${id},"result":{"structuredContent":{"n":${n}}}}`;
  const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1}}';
  // B's message begins first and holds the client's buffer: A's chunks wait, unread past the first.
  pb.respond(200, { 'content-type': 'text/event-stream' }, sse(result(4, 2)), { piece: 2 });
  pa.respond(200, { 'content-type': 'text/event-stream' }, sse(result(3, 1)), { piece: 3 });
  // Two events in one chunk: the client takes the first; the rest is given again.
  pc.respond(200, { 'content-type': 'text/event-stream' }, sse(progress, result(5, 3)));
  assert.deepEqual(await Promise.all([a, b, c]), [{ n: 1 }, { n: 2 }, { n: 3 }]);
  assert.equal(pc.pulls, 2, "C's body in one read, and its end");
  await s.close();
});

test('mcp http: a 2025-11-25 server: the probe refused, initialize, its session on every later POST', async () => {
  const f = scripted();
  const connecting = connectMcpServer({ url: URL_, fetch: f.fetch });
  const refusal = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}';
  (await f.nth(0)).respond(400, { 'content-type': 'application/json' }, refusal);
  const init = await f.nth(1);
  assert.equal(init.body, '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"polyweave-node","version":"0.1.0"}}}');
  assert.deepEqual(init.headers, COMMON);
  const initialized = '{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"0"}}}';
  init.respond(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'sess-1' }, `id: 1\ndata: \n\n${sse(initialized)}`, { piece: 9 });
  const note = await f.nth(2);
  const session = [...COMMON, ['MCP-Protocol-Version', '2025-11-25'], ['Mcp-Session-Id', 'sess-1']];
  assert.equal(note.body, '{"jsonrpc":"2.0","method":"notifications/initialized"}');
  assert.deepEqual(note.headers, session);
  // tools/list waits for the notification's answer: on two POSTs at once the server could list first.
  await flush();
  assert.equal(f.posts.length, 3, 'tools/list posted before notifications/initialized was answered');
  note.respond(202, {});
  const list = await f.nth(3);
  assert.equal(list.body, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}');
  assert.deepEqual(list.headers, session);
  list.respond(200, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo"}]}}');
  const s = await connecting;
  assert.equal(s.protocolVersion, '2025-11-25');
  const r = s.call('echo', {});
  const c = await f.nth(4);
  assert.deepEqual(c.headers, session);
  assert.equal(c.body, '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"progressToken":4}}}');
  c.respond(200, { 'content-type': 'text/event-stream' }, sse('{"jsonrpc":"2.0","id":4,"result":{"content":[]}}'), { piece: 1 });
  assert.deepEqual(await r, []);
  await s.close();
});

test('mcp http: a server that gives no response rejects the start-up with why', async () => {
  const fetch = () => Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) }));
  await assert.rejects(connectMcpServer({ url: URL_, fetch }), (e) => {
    assert.ok(e instanceof McpStartupError);
    assert.equal(e.message, 'MCP start-up failed: the server gave no response: fetch failed (ECONNREFUSED)');
    assert.equal(e.event.error, 'noResponse');
    return true;
  });
  // A status the probe falls back on, then initialize refused with 405: said with its status.
  const f = scripted();
  const connecting = connectMcpServer({ url: URL_, fetch: f.fetch });
  (await f.nth(0)).respond(405, {}, '');
  (await f.nth(1)).respond(405, {}, '');
  await assert.rejects(connecting, { message: 'MCP start-up failed: the server answered HTTP 405' });
});

test('mcp http: a 2026-07-28 server offering tool-list changes: subscriptions/listen held open, a change lists the tools again for onToolsChanged', async () => {
  const f = scripted();
  const changes = [];
  const connecting = connectMcpServer({ url: URL_, fetch: f.fetch, onToolsChanged: (tools) => changes.push(tools.map((t) => t.name)) });
  (await f.nth(0)).respond(200, { 'content-type': 'application/json' }, DISCOVERED.replace('"tools":{}', '"tools":{"listChanged":true}'));
  (await f.nth(1)).respond(200, { 'content-type': 'application/json' }, LISTED);
  const s = await connecting;
  const listen = await f.nth(2);
  assert.deepEqual(listen.headers, [...COMMON, V26, ['Mcp-Method', 'subscriptions/listen']]);
  assert.equal(listen.body, `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{${ENVELOPE}}}}`);
  listen.respond(200, { 'content-type': 'text/event-stream' }, sse('{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}'), { piece: 8, held: true });
  await flush();
  assert.equal(f.posts.length, 3);
  // A call runs beside the held stream.
  const r = s.call('echo', {});
  (await f.nth(3)).respond(200, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":4,"result":{"content":[]}}');
  assert.deepEqual(await r, []);
  listen.push(sse('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'));
  const again = await f.nth(4);
  assert.equal(again.body, LIST.replace('"id":2', '"id":5'));
  again.respond(200, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"echo"},{"name":"add"}]}}', { piece: 9 });
  await flush();
  assert.deepEqual(changes, [['echo', 'add']]);
  assert.deepEqual(s.tools.map((t) => t.name), ['echo', 'add']);
  // close() aborts the held stream.
  await s.close();
  assert.equal(listen.signal.aborted, true);
});

test('mcp http: close() aborts the requests in flight and fails their calls', async () => {
  const { s, f } = await modern();
  const pending = s.call('echo', {});
  const p = await f.nth(2);
  p.respond(200, { 'content-type': 'text/event-stream' }, 'id: 0\ndata: \n\n', { held: true });
  await flush();
  await s.close();
  assert.equal(p.signal.aborted, true);
  await assert.rejects(pending, { message: CLOSED });
  await s.close();
});

test('mcp http: the raw client: pollRequest, handleResponse, feedResponse, handleResponseEnd and their refusals', () => {
  const c = createMcpClient({ calls: 1, streams: 1 });
  assert.equal(c.streams, 1);
  assert.ok(c.maxHeadersLen >= 160, `${c.maxHeadersLen}`);
  c.start(0);
  const post = c.pollRequest();
  assert.deepEqual(post, { type: 'post', stream: 0, body: DISCOVER, headers: [...COMMON, V26, ['Mcp-Method', 'server/discover']] });
  assert.equal(c.pollRequest(), null, 'one stream, in use');
  assert.throws(() => c.feedResponse(0, '{}'), (e) => e instanceof McpError && e.code === 'PW_MCP_NO_HEAD' && e.errno === 512);
  assert.throws(() => c.handleResponse(1, 200, 'application/json'), (e) => e.code === 'PW_MCP_UNKNOWN_STREAM' && e.errno === 510);
  c.handleResponse(0, 200, 'application/json', null);
  assert.throws(() => c.handleResponse(0, 200, 'application/json'), (e) => e.code === 'PW_MCP_HEAD_TWICE' && e.errno === 511);
  const body = new TextEncoder().encode(`xx${DISCOVERED}`);
  assert.equal(c.feedResponse(0, body, 2), body.length - 2);
  c.handleResponseEnd(0);
  const list = c.pollRequest();
  assert.equal(list.body, LIST);
  // The initialized event is owed: the head waits until it is polled.
  assert.throws(() => c.handleResponse(list.stream, 200, 'application/json'), (e) => e.code === 'PW_MCP_POLL_FIRST' && e.errno === 513);
  assert.deepEqual([...c.events()].map((e) => e.type), ['initialized']);
  assert.equal(c.protocolVersion, '2026-07-28');
  c.handleResponse(list.stream, 200, 'application/json');
  assert.throws(() => c.handleResponseEnd(3), { code: 'PW_MCP_UNKNOWN_STREAM' });
  c.close();
  const line = createMcpClient({ calls: 1 });
  assert.equal(line.streams, null);
  line.start(0);
  assert.throws(() => line.handleResponseEnd(0), (e) => e.code === 'PW_MCP_NOT_HTTP' && e.errno === 509);
  line.close();
  assert.throws(() => createMcpClient({ streams: 0 }), /streams 0/);
});

// ------------------------------------------------------------ real servers on the loopback interface

const EVERYTHING_TOOLS = [
  'echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference', 'get-structured-content', 'get-sum',
  'get-tiny-image', 'gzip-file-as-resource', 'toggle-simulated-logging', 'toggle-subscriber-updates', 'trigger-long-running-operation',
  'simulate-research-query',
];
const INSTALL_HINT = 'run `bash tests/mcp/install.sh` from the workspace root (it writes target/mcp-servers/env.sh)';

/** A value of target/mcp-servers/env.sh (or the environment's), or why there is none. */
function installed(name) {
  if (process.env[name]) return { value: process.env[name] };
  const envFile = path.join(checkoutDir, 'target', 'mcp-servers', 'env.sh');
  if (!fs.existsSync(envFile)) return { why: `the MCP servers are not installed: ${envFile} is missing; ${INSTALL_HINT}` };
  for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
    const m = /^export (\w+)=(.*)$/.exec(line.trim());
    if (m && m[1] === name) return { value: m[2].replace(/^'(.*)'$/, '$1').replace(/\\(.)/g, '$1') };
  }
  return { why: `${envFile} has no ${name}; ${INSTALL_HINT}` };
}

/** Skips `t` (or fails it with PW_REQUIRE_MCP_SERVERS=1) for `why`. */
function skip(t, why) {
  if (process.env.PW_REQUIRE_MCP_SERVERS === '1') throw new Error(`PW_REQUIRE_MCP_SERVERS=1 but ${why}`);
  console.log(`skipping: ${why}`);
  t.skip(why);
}

/** A free TCP port on the loopback interface. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const children = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Runs `command args` with `env`, and resolves once `port` on 127.0.0.1 accepts connections. */
async function serve(command, args, env, port) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}: ${err}`);
    const up = await new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.end();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
    });
    if (up) return child;
    if (Date.now() - t0 > 20000) throw new Error(`${command} did not listen on ${port} within 20 s: ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('mcp http real: server-everything streamableHttp — 2025-11-25 after the probe, a session, SSE answers, echo, an unknown tool, progress keeps a long operation alive, a cancel', async (t) => {
  const found = installed('PW_MCP_EVERYTHING');
  if (!found.value || !fs.existsSync(found.value)) return skip(t, found.why ?? `${found.value} does not exist; ${INSTALL_HINT}`);
  const port = await freePort();
  const child = await serve(process.execPath, [found.value, 'streamableHttp'], { PORT: String(port) }, port);
  const wire = [];
  const s = await connectMcpServer({
    url: `http://127.0.0.1:${port}/mcp`,
    timeoutMs: 700,
    maxTotalTimeoutMs: 5000,
    extraTools: ['nope'],
    onWire: (d, data) => wire.push([d, d === 'send' ? data : new TextDecoder().decode(data)]),
  });
  try {
    assert.equal(s.protocolVersion, '2025-11-25');
    assert.deepEqual(s.tools.map((x) => x.name), EVERYTHING_TOOLS);
    const sent = wire.filter(([d]) => d === 'send').map(([, b]) => JSON.parse(b));
    assert.deepEqual(sent.slice(0, 4).map((m) => m.method), ['server/discover', 'initialize', 'notifications/initialized', 'tools/list']);
    assert.deepEqual(await s.call('echo', { message: 'hi' }), [{ type: 'text', text: 'Echo: hi' }]);
    assert.deepEqual(await s.call('get-sum', { a: 2, b: 40 }), [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }]);
    await assert.rejects(s.call('nope', {}), { message: 'MCP error -32602: Tool nope not found' });
    // Every answer came as an event stream.
    assert.ok(wire.some(([d, c]) => d === 'recv' && c.includes('event: message')));
    const t0 = performance.now();
    const long = await s.call('trigger-long-running-operation', { duration: 2, steps: 4 });
    const took = performance.now() - t0;
    assert.deepEqual(long, [{ type: 'text', text: 'Long running operation completed. Duration: 2 seconds, Steps: 4.' }]);
    assert.ok(took >= 1900 && took < 4500, `the 2 s operation took ${took} ms, past the 700 ms timeout by its progress`);
    const progress = wire.filter(([d, c]) => d === 'recv' && c.includes('notifications/progress')).length;
    assert.ok(progress >= 4, `${progress} chunks with progress`);
    // A call that times out (no progress within 300 ms): cancelled with notifications/cancelled (2025-11-25).
    const m = llm();
    const w = s.wrap(m.duplex, { toolTimeoutMs: 300 });
    consumer(w);
    const ended = new Promise((resolve) => w.source.on?.('end', resolve));
    m.say({ type: 'TOOL_CALL', content: { id: 'slow', name: 'trigger-long-running-operation', args: { duration: 3, steps: 1 } } });
    for (let i = 0; i < 100 && m.toModel.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    void ended;
    assert.equal(rawText(m.toModel[0]), '{"type":"TOOL_RESULT","content":{"id":"slow","name":"trigger-long-running-operation","error":"Tool trigger-long-running-operation timed out after 300ms"}}');
    for (let i = 0; i < 50 && !wire.some(([d, b]) => d === 'send' && b.includes('notifications/cancelled')); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const cancelled = wire.filter(([d, b]) => d === 'send' && b.includes('notifications/cancelled')).map(([, b]) => JSON.parse(b));
    assert.equal(cancelled.length, 1);
    assert.equal(cancelled[0].params.reason, 'timeout');
    w.close();
  } finally {
    await s.close();
    child.kill('SIGKILL');
  }
});

test('mcp http real: tests/mcp/http_server.py (Python mcp) — 2026-07-28: JSON and SSE answers, structuredContent, progress, isError, an unknown tool, a timeout that aborts its POST; then 2025-11-25 with its session', async (t) => {
  const script = process.env.PW_MCP_HTTP_SERVER ?? path.join(checkoutDir, 'tests', 'mcp', 'http_server.py');
  if (!fs.existsSync(script)) return skip(t, `${script} is not in this checkout (PW_MCP_HTTP_SERVER names another)`);
  const time = installed('PW_MCP_TIME');
  if (!time.value) return skip(t, time.why);
  const python = path.join(path.dirname(time.value), 'python');
  if (!fs.existsSync(python)) return skip(t, `${python} does not exist; ${INSTALL_HINT}`);
  const port = await freePort();
  const child = await serve(python, [script, '--port', String(port)], {}, port);
  const url = `http://127.0.0.1:${port}/mcp`;
  const wire = [];
  const onWire = (d, data) => wire.push([d, d === 'send' ? data : new TextDecoder().decode(data)]);
  try {
    const s = await connectMcpServer({ url, extraTools: ['nope'], timeoutMs: 600, maxTotalTimeoutMs: 5000, onWire });
    try {
      assert.equal(s.protocolVersion, '2026-07-28');
      assert.deepEqual(s.tools.map((x) => x.name), ['echo', 'add', 'slow', 'fail', 'weather.report']);
      assert.deepEqual(await s.call('echo', { message: 'hi' }), { result: 'Echo: hi' });
      assert.deepEqual(await s.call('add', { a: 2, b: 40 }), { sum: 42 });
      const t0 = performance.now();
      assert.deepEqual(await s.call('slow', { seconds: 1 }), { result: 'slept 1' });
      const took = performance.now() - t0;
      assert.ok(took >= 900 && took < 3000, `slow(1) took ${took} ms, past the 600 ms timeout by its progress`);
      assert.equal(wire.filter(([d, c]) => d === 'recv' && c.includes('"method":"notifications/progress"')).length, 4);
      await assert.rejects(s.call('fail', {}), { message: 'Error executing tool fail: fail was asked to fail' });
      await assert.rejects(s.call('nope', {}), { message: 'Unknown tool: nope' });
      // A call that times out: its POST is aborted, nothing is posted for it.
      const posts = wire.filter(([d]) => d === 'send').length;
      const m = llm();
      const w = s.wrap(m.duplex, { toolTimeoutMs: 300, maxTotalTimeoutMs: 300 });
      consumer(w);
      m.say({ type: 'TOOL_CALL', content: { id: 'z', name: 'slow', args: { seconds: 2 } } });
      for (let i = 0; i < 100 && m.toModel.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(rawText(m.toModel[0]), '{"type":"TOOL_RESULT","content":{"id":"z","name":"slow","error":"Tool slow timed out after 300ms"}}');
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(wire.filter(([d]) => d === 'send').length, posts + 1, 'only the call was posted');
      assert.equal(s.client.inFlight, 0);
      w.close();
    } finally {
      await s.close();
    }
    const legacy = await connectMcpServer({ url, revision: '2025-11-25' });
    try {
      assert.equal(legacy.protocolVersion, '2025-11-25');
      assert.deepEqual(await legacy.call('add', { a: 1, b: 2 }), { sum: 3 });
    } finally {
      await legacy.close();
    }
  } finally {
    child.kill('SIGKILL');
  }
});
