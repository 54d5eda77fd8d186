// Bug 1: a waiting call's timer keeps the process alive until the call settles (as the JS
// package's timers do), and no timer is left armed once nothing waits. Each case runs in a child
// `node` whose only pending work is the call, so what keeps the event loop alive is visible.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from './helpers.mjs';

// Generous: a child starts Node and the wasm module in well under a second; a lingering 60 s timer or a
// process that waits for nothing shows up far beyond it.
const PROMPT_MS = 10000;

test('timers: a wrapToolAdapter call on a silent adapter keeps the process alive until its 50 ms timeout fires', async () => {
  const r = await runScript(`
    const silent = pw.createDuplex({ onWrite() {} });
    pw.wrapToolAdapter(silent, { name: 'slow', timeoutMs: 50 })({}, (err) => console.log(err ? err.message : 'no error'));
  `);
  assert.equal(r.signal, null, `killed: ${r.err}`);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'Tool slow timed out after 50ms\n', 'the callback ran before the process exited');
  assert.ok(r.ms < PROMPT_MS, `exited after ${r.ms} ms`);
});

test('timers: pending deferred and adapter calls in a wrapper keep the process alive until they time out', async () => {
  const r = await runScript(`
    const model = pw.createDuplex({
      onWrite: (f) => { if (f.type === 'TOOL_RESULT') console.log(f.content.id + ': ' + f.content.error); },
    });
    const silent = pw.createDuplex({ onWrite() {} });
    pw.createToolAdapterWrapper(model, {
      tools: { later: (args, cb) => {}, files: { adapter: silent } },
      toolTimeoutMs: 50,
    });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'd', name: 'later', args: {} } });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'a', name: 'files', args: {} } });
  `);
  assert.equal(r.signal, null, `killed: ${r.err}`);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'd: Tool later timed out after 50ms\na: Tool files timed out after 50ms\n');
  assert.ok(r.ms < PROMPT_MS, `exited after ${r.ms} ms`);
});

test('timers: once a call settles no timer is left armed, so the process exits at once (60 s timeouts)', async () => {
  const r = await runScript(`
    const answering = () => {
      const d = pw.createDuplex({
        onWrite: (f) => {
          if (f.type !== 'TOOL_CALL') return;
          setImmediate(() => {
            d.source.push({ type: 'TOOL_RESULT', content: { id: f.content.id, result: 'done' } });
            d.source.push({ type: 'END' });
          });
        },
      });
      return d;
    };
    const timers = () => process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length;
    pw.wrapToolAdapter(answering(), { name: 'quick', timeoutMs: 60000 })({}, (err, result) => {
      console.log('call: ' + (err ? err.message : result));
      setImmediate(() => console.log('call timers: ' + timers()));
    });
    const model = pw.createDuplex({
      onWrite: (f) => {
        if (f.type !== 'TOOL_RESULT') return;
        console.log(f.content.id + ': ' + (f.content.error ?? f.content.result));
        setImmediate(() => console.log('wrapper timers: ' + timers()));
      },
    });
    pw.createToolAdapterWrapper(model, {
      tools: { later: (args, cb) => setImmediate(() => cb(null, 'ok')), files: { adapter: answering() } },
      toolTimeoutMs: 60000,
    });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'd', name: 'later', args: {} } });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'a', name: 'files', args: {} } });
  `);
  assert.equal(r.signal, null, `killed (a timer lingered): ${r.err}`);
  assert.equal(r.code, 0, r.err);
  const lines = r.out.split('\n').filter(Boolean).sort();
  assert.deepEqual(lines, ['a: done', 'call timers: 0', 'call: done', 'd: ok', 'wrapper timers: 0', 'wrapper timers: 0'].sort());
  assert.ok(r.ms < PROMPT_MS, `exited after ${r.ms} ms`);
});

const mcpUrl = import.meta.resolve('../mcp.mjs');

test('timers: an MCP session keeps the process alive until its server/discover deadline, falls back to initialize, then leaves no timer', async () => {
  const r = await runScript(`
    const { createMcpSession } = await import(${JSON.stringify(mcpUrl)});
    const t0 = performance.now();
    const timers = () => process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length;
    const s = createMcpSession((line) => {
      const m = JSON.parse(line);
      console.log(m.method + ' at ' + (performance.now() - t0 >= 290 ? 'the deadline' : 'once'));
      if (m.method === 'initialize') setImmediate(() => console.log('timers after the fallback: ' + timers()));
    }, { startTimeoutMs: 300 });
    console.log('timers while awaited: ' + timers());
  `);
  assert.equal(r.signal, null, `killed: ${r.err}`);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'server/discover at once\ntimers while awaited: 1\ninitialize at the deadline\ntimers after the fallback: 0\n');
  assert.ok(r.ms < PROMPT_MS, `exited after ${r.ms} ms`);
});
