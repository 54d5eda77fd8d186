// Defaults are the C library's: what an option leaves out keeps the value of
// pw_wrapper_config_default / pw_adapter_call_options_default. A stand-in for those two calls
// (the binding reaches every C function through `C`) shows the package reads them, and
// restates none.
import assert from 'node:assert/strict';
import test from 'node:test';
import { C } from '../binding.mjs';
import { createDuplex, createToolAdapterWrapper, raw, rawText, wrapToolAdapter } from '../index.mjs';

function standIn(key, change) {
  const real = C[key];
  C[key] = (out) => {
    const r = real(out);
    change(out);
    return r;
  };
  return () => (C[key] = real);
}

test('defaults: a wrapper without toolTimeoutMs times calls out at pw_wrapper_config_default\'s', () => {
  const undo = standIn('wrapperConfigDefault', (cfg) => (cfg.tool_timeout_ms = 1234));
  try {
    let now = 0;
    const toModel = [];
    const model = createDuplex({ onWrite: (f) => toModel.push(rawText(f)) });
    const w = createToolAdapterWrapper(model, { tools: { wait: (args, cb) => {} }, clock: { now: () => now } });
    w.source.pipe({ write() {}, end() {} });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'c1', name: 'wait', args: {} } });
    now = 1233;
    w.tick();
    assert.deepEqual(toModel, []);
    now = 1234;
    w.tick();
    assert.equal(toModel[0], '{"type":"TOOL_RESULT","content":{"id":"c1","name":"wait","error":"Tool wait timed out after 1234ms"}}');
    w.close();
  } finally {
    undo();
  }
});

test('defaults: a standalone call without name or timeoutMs has pw_adapter_call_options_default\'s', () => {
  const undo = standIn('callOptionsDefault', (o) => (o.timeout_ms = 4321));
  try {
    let now = 0;
    const sent = [];
    const adapter = createDuplex({ onWrite: (f) => sent.push(rawText(f)) });
    const call = wrapToolAdapter(adapter, { clock: { now: () => now } });
    let got = null;
    call({ a: 1 }, (err) => (got = err.message));
    assert.deepEqual(sent, ['{"type":"TOOL_CALL","content":{"name":"unknown","args":{"a":1}}}']);
    now = 4321;
    call.tick();
    assert.equal(got, 'Tool unknown timed out after 4321ms');
  } finally {
    undo();
  }
});

test('texts: a deferred result with no JSON form is failed by pw_wrapper_complete_unwritable, whose text is the core\'s', async () => {
  const real = C.completeUnwritable;
  const seen = [];
  C.completeUnwritable = (...a) => {
    seen.push(a.length);
    return real(...a);
  };
  try {
    const toModel = [];
    const model = createDuplex({ onWrite: (f) => toModel.push(rawText(f)) });
    const w = createToolAdapterWrapper(model, {
      tools: { big: (args, cb) => cb(null, { n: 1n }), raw: (args, cb) => cb(null, raw('{nope')) },
    });
    w.source.pipe({ write() {}, end() {} });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'c1', name: 'big', args: {} } });
    model.source.push({ type: 'TOOL_CALL', content: { id: 'c2', name: 'raw', args: {} } });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(seen.length, 2, 'both failed through the C call');
    assert.deepEqual(
      toModel.filter((f) => f.includes('"TOOL_RESULT"')),
      [
        '{"type":"TOOL_RESULT","content":{"id":"c1","name":"big","error":"Tool big returned invalid JSON"}}',
        '{"type":"TOOL_RESULT","content":{"id":"c2","name":"raw","error":"Tool raw returned invalid JSON"}}',
      ],
    );
    w.close();
  } finally {
    C.completeUnwritable = real;
  }
});
