// A trap in the WebAssembly module (a Rust panic is one: the module is built with panic=abort)
// poisons it: the C call it cut short does not go on, and every later call on any object of the
// package throws. The trap is made the way a bug would: a call with a pointer past the end of
// the linear memory (`memory access out of bounds`, the same `WebAssembly.RuntimeError` a
// panic's `unreachable` raises), through the binding's exports, which the package never hands
// to users. A poisoned module stays poisoned for its process, so that part runs in a child.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper } from '../index.mjs';
import { llm, consumer, runNode } from './helpers.mjs';

const call = (name, args, id) => ({ type: 'TOOL_CALL', content: { id, name, args } });
const urls = {
  index: import.meta.resolve('../index.mjs'),
  mcp: import.meta.resolve('../mcp.mjs'),
  binding: import.meta.resolve('../binding.mjs'),
};

const TRAPPED =
  'polyweave: the WebAssembly module trapped (RuntimeError: memory access out of bounds); its memory is in an ' +
  'unknown state, so no polyweave object can be used any more: load the package anew (a new process or page)';

// The child: objects of every kind made first, then a sync tool whose nested call traps (the
// tool even catches it and returns), then every use of every object, old and new.
const SCRIPT = `
import * as pw from ${JSON.stringify(urls.index)};
import { createMcpClient } from ${JSON.stringify(urls.mcp)};
import { C, X, malloc } from ${JSON.stringify(urls.binding)};
const report = {};
// Whether pw_wrapper_handle_response, the C call running the tool, returned (it went on after
// the tool) or was unwound: the wrapper calls it through \`C\`, so a stand-in sees it.
const handleResponse = [];
const original = C.handleResponseTo;
C.handleResponseTo = (...args) => {
  try {
    const r = original(...args);
    handleResponse.push('returned');
    return r;
  } catch (e) {
    handleResponse.push('unwound');
    throw e;
  }
};
const errorOf = (e) => ({ code: e.code, message: e.message, cause: e.cause?.constructor.name, causeMessage: e.cause?.message });
const outcome = (f) => {
  try {
    f();
    return 'no error';
  } catch (e) {
    return e.code ?? e.message;
  }
};
const toModel = [];
const model = pw.createDuplex({ onWrite: (f) => toModel.push(pw.rawText(f)) });
const toConsumer = [];
let inTool = null;
const w = pw.createToolAdapterWrapper(model, {
  tools: {
    traps: () => {
      try {
        X.pw_wrapper_get_stats(0xfffffff0, malloc(64)); // a wrapper past the memory's end
      } catch (e) {
        inTool = errorOf(e); // caught: the tool goes on and returns a result
      }
      return 'went on';
    },
  },
});
w.source.pipe({ write: (f) => toConsumer.push(pw.rawText(f)), end() {} });
const other = pw.createToolAdapterWrapper(pw.createDuplex(), { tools: { t: () => 1 } });
const decoder = pw.createDecoder('anthropic');
const client = createMcpClient();
const adapter = pw.createDuplex();
const wrapped = pw.wrapToolAdapter(adapter, { name: 'a' });
let outer = null;
try {
  model.source.push(${JSON.stringify(call('traps', {}, 'c1'))});
} catch (e) {
  outer = errorOf(e);
}
report.handleResponse = [...handleResponse];
report.inTool = inTool;
report.outer = outer;
report.toModel = toModel;
report.toConsumer = toConsumer;
report.later = {
  'wrapper: a model frame': outcome(() => model.source.push({ type: 'TEXT', content: 'x' })),
  'wrapper: stats': outcome(() => w.stats()),
  'wrapper: pending': outcome(() => w.pending),
  'wrapper: getToolTrace': outcome(() => w.getToolTrace()),
  'another wrapper: sink.write': outcome(() => other.sink.write({ type: 'TEXT', content: 'x' })),
  'another wrapper: tick': outcome(() => other.tick()),
  'decoder: write': outcome(() => decoder.write('event: ping\\n\\n')),
  'decoder: stats': outcome(() => decoder.stats),
  'MCP client: start': outcome(() => client.start(0)),
  'MCP client: handleTimeout': outcome(() => client.handleTimeout(0)),
  'MCP client: stats': outcome(() => client.stats()),
  'wrapToolAdapter: a call': outcome(() => wrapped({}, () => {})),
  'a new wrapper': outcome(() => pw.createToolAdapterWrapper(pw.createDuplex(), {})),
  'a new decoder': outcome(() => pw.createDecoder('openai-chat')),
  'a new MCP client': outcome(() => createMcpClient()),
  'encodeItem': outcome(() => pw.encodeItem('openai-chat', { type: 'TOOL_RESULT', content: { id: 'c', name: 'n', result: 1 } })),
  // close() only gives the JS allocator its blocks back (no call into the module): it works,
  // so cleanup code in a finally does not hide the first error.
  'wrapper: close': outcome(() => w.close()),
  'decoder: close': outcome(() => decoder.close()),
  'MCP client: close': outcome(() => client.close()),
};
console.log(JSON.stringify(report));
// Without poisoning, the wrapToolAdapter call above would start and its timer keep the child alive.
process.exit(0);
`;

test('trap: a trap under a sync tool stops the outer C call, and every later call on any object throws', async () => {
  const r = await runNode(['--input-type=module', '-e', SCRIPT]);
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(r.out);
  const first = { code: 'PW_WASM_TRAPPED', message: TRAPPED, cause: 'RuntimeError', causeMessage: 'memory access out of bounds' };
  assert.deepEqual(report.inTool, first, 'the trapping call throws the clear error, the trap as its cause');
  assert.deepEqual(report.outer, first, 'the wrapper call that ran the tool throws too, though the tool caught it');
  assert.deepEqual(report.handleResponse, ['unwound'], 'the C call that ran the tool did not go on after it');
  assert.deepEqual(report.toModel, [], 'no TOOL_RESULT for the tool that returned');
  assert.deepEqual(report.toConsumer, []);
  const closes = ['wrapper: close', 'decoder: close', 'MCP client: close'];
  assert.deepEqual(
    report.later,
    Object.fromEntries(Object.keys(report.later).map((k) => [k, closes.includes(k) ? 'no error' : 'PW_WASM_TRAPPED'])),
  );
  assert.equal(Object.keys(report.later).length, 19);
});

test('trap: a RuntimeError a tool throws itself (another module, or JS) is a tool failure, not a trap of this one', () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, {
    tools: {
      foreign: () => {
        throw new WebAssembly.RuntimeError('unreachable in some other module');
      },
      fine: () => 'ok',
    },
  });
  consumer(w);
  m.say(call('foreign', {}, 'f1'));
  m.say(call('fine', {}, 'f2'));
  const results = m.toModel.filter((f) => f.type === 'TOOL_RESULT').map((f) => f.content);
  assert.deepEqual(results, [
    { id: 'f1', name: 'foreign', error: 'unreachable in some other module' },
    { id: 'f2', name: 'fine', result: 'ok' },
  ]);
  assert.equal(w.stats().rounds, 2);
  w.close();
});
