// SPEC §5 Progress: a PROGRESS frame from a tool adapter restarts its call's timeout, but never
// past start + maxTotalTimeoutMs; a call kept alive past its plain timeout fails at the cap with
// `Tool <name> timed out after <cap>ms`. In a wrapper (createToolAdapterWrapper) and alone
// (wrapToolAdapter), on the manual clock (exact) and on real timers (the timer is re-armed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper, createDuplex, wrapToolAdapter } from '../index.mjs';
import { llm, consumer } from './helpers.mjs';

const PROGRESS = { type: 'PROGRESS', content: { done: 1 } };

test('progress: a wrapper adapter tool kept alive by PROGRESS past its timeout fails at maxTotalTimeoutMs (manual clock)', () => {
  const clock = { t: 0, now: () => clock.t };
  const m = llm();
  const seen = [];
  const files = createDuplex({ onWrite: (f) => seen.push(f) });
  const w = createToolAdapterWrapper(m.duplex, { tools: { files: { adapter: files } }, toolTimeoutMs: 100, maxTotalTimeoutMs: 250, clock });
  consumer(w);
  m.say({ type: 'TOOL_CALL', content: { id: 'p', name: 'files', args: {} } });
  for (const t of [90, 180, 240]) {
    clock.t = t;
    w.tick();
    assert.equal(files.source.push(PROGRESS), true, `PROGRESS at ${t} is taken`);
  }
  clock.t = 249; // past 100 (the plain timeout) and past 180 + 100 would be: the cap holds it
  w.tick();
  assert.equal(w.pending, 1, 'still waiting just before the cap');
  clock.t = 250;
  w.tick();
  assert.equal(w.pending, 0);
  assert.deepEqual(m.toModel[0], { type: 'TOOL_RESULT', content: { id: 'p', name: 'files', error: 'Tool files timed out after 250ms' } });
  assert.deepEqual(seen.map((f) => f.type), ['TOOL_CALL', 'CANCEL']);
  assert.equal(files.source.push(PROGRESS), false, 'a PROGRESS after the timeout is refused');
});

test('progress: a wrapToolAdapter call kept alive by PROGRESS past its timeout fails at maxTotalTimeoutMs (manual clock)', () => {
  const clock = { t: 0, now: () => clock.t };
  const seen = [];
  const adapter = createDuplex({ onWrite: (f) => seen.push(f) });
  const wrapped = wrapToolAdapter(adapter, { name: 'crawl', timeoutMs: 100, maxTotalTimeoutMs: 250, clock });
  const settled = [];
  wrapped({}, (err, result) => settled.push(err ? err.message : result));
  for (const t of [90, 180, 240]) {
    clock.t = t;
    wrapped.tick();
    adapter.source.push(PROGRESS);
  }
  clock.t = 249;
  wrapped.tick();
  assert.deepEqual(settled, [], 'still waiting just before the cap');
  clock.t = 250;
  wrapped.tick();
  assert.deepEqual(settled, ['Tool crawl timed out after 250ms']);
  assert.deepEqual(seen.map((f) => f.type), ['TOOL_CALL', 'CANCEL']);
});

/** An adapter that sends PROGRESS every `everyMs` after each TOOL_CALL, until CANCEL. */
function progressing(everyMs) {
  const seen = [];
  let timer = null;
  const d = createDuplex({
    onWrite: (f) => {
      seen.push(f.type);
      if (f.type === 'TOOL_CALL') timer = setInterval(() => d.source.push(PROGRESS), everyMs);
      if (f.type === 'CANCEL') clearInterval(timer);
    },
  });
  return { d, seen, stop: () => clearInterval(timer) };
}

// Real timers, with margins for a loaded machine: PROGRESS every 20 ms against a 300 ms timeout.
const TIMEOUT = 300;
const CAP = 700;

test('progress: real timers: a wrapper adapter tool fed PROGRESS fails at the cap, not at its timeout', async () => {
  const files = progressing(20);
  const t0 = Date.now();
  const frame = await new Promise((resolve) => {
    const m = createDuplex({ onWrite: (f) => f.type === 'TOOL_RESULT' && resolve(f) });
    createToolAdapterWrapper(m, { tools: { files: { adapter: files.d } }, toolTimeoutMs: TIMEOUT, maxTotalTimeoutMs: CAP });
    m.source.push({ type: 'TOOL_CALL', content: { id: 'r', name: 'files', args: {} } });
  });
  files.stop();
  const ms = Date.now() - t0;
  assert.equal(frame.content.error, `Tool files timed out after ${CAP}ms`);
  assert.ok(ms >= CAP - 5, `settled after ${ms} ms`);
  assert.deepEqual(files.seen, ['TOOL_CALL', 'CANCEL']);
});

test('progress: real timers: a wrapToolAdapter call fed PROGRESS fails at the cap, not at its timeout', async () => {
  const adapter = progressing(20);
  const t0 = Date.now();
  const err = await new Promise((resolve) =>
    wrapToolAdapter(adapter.d, { name: 'crawl', timeoutMs: TIMEOUT, maxTotalTimeoutMs: CAP })({}, (e) => resolve(e)),
  );
  adapter.stop();
  const ms = Date.now() - t0;
  assert.equal(err.message, `Tool crawl timed out after ${CAP}ms`);
  assert.ok(ms >= CAP - 5, `settled after ${ms} ms`);
  assert.deepEqual(adapter.seen, ['TOOL_CALL', 'CANCEL']);
});
