import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper, createDuplex, raw, rawText } from '../index.mjs';
import { llm, consumer, sleep, types } from './helpers.mjs';

const call = (name, args, id) => ({ type: 'TOOL_CALL', content: { ...(id ? { id } : {}), name, args } });
const PROMPT = { type: 'TEXT', content: 'Tool results above.' };

test('sync tool (fn.length <= 1): TOOL_RESULT to the model, continue prompt to both, hooks, trace', async () => {
  const m = llm();
  const hooks = [];
  const w = createToolAdapterWrapper(m.duplex, {
    tools: { add: (args) => ({ sum: args.a + args.b }) },
    onToolCall: (name, args) => hooks.push(['call', name, args]),
    onToolResult: (name, args, result, err) => hooks.push(['result', name, result, err]),
  });
  const got = consumer(w);
  m.say({ type: 'TEXT', content: 'thinking' });
  m.say(call('add', { a: 1, b: 2 }, 'c1'));
  assert.deepEqual(m.toModel, [
    { type: 'TOOL_RESULT', content: { id: 'c1', name: 'add', result: { sum: 3 } } },
    PROMPT,
  ]);
  assert.deepEqual(got, [{ type: 'TEXT', content: 'thinking' }, PROMPT]);
  assert.deepEqual(hooks, [['call', 'add', { a: 1, b: 2 }], ['result', 'add', { sum: 3 }, null]]);
  assert.deepEqual(w.getToolTrace(), [{ name: 'add', args: { a: 1, b: 2 }, result: { sum: 3 }, error: null }]);
});

test('a throwing sync tool and an erroring callback tool give TOOL_RESULT errors and the last tool error', () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, {
    tools: {
      bad: () => {
        throw new Error('boom');
      },
      cb: (args, done) => done(new Error('no disk')),
    },
  });
  m.say(call('bad', {}, 'x'));
  m.say(call('cb', {}, 'y'));
  assert.deepEqual(m.toModel, [
    { type: 'TOOL_RESULT', content: { id: 'x', name: 'bad', error: 'boom' } },
    { type: 'TEXT', content: 'Tool results above. Last tool error: boom' },
    { type: 'TOOL_RESULT', content: { id: 'y', name: 'cb', error: 'no disk' } },
    { type: 'TEXT', content: 'Tool results above. Last tool error: no disk' },
  ]);
});

test('async tool (async one-parameter function) is awaited; END is held until it completes', async () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, {
    tools: {
      later: async (args) => {
        await sleep(5);
        return args.q.toUpperCase();
      },
    },
  });
  const got = consumer(w);
  m.say(call('later', { q: 'hi' }, 'a'));
  m.say({ type: 'END' });
  assert.equal(w.pending, 1);
  assert.deepEqual(got, [], 'END held while the call is pending');
  await sleep(30);
  assert.equal(w.pending, 0);
  assert.deepEqual(m.toModel[0], { type: 'TOOL_RESULT', content: { id: 'a', name: 'later', result: 'HI' } });
  assert.deepEqual(types(got), ['TEXT', 'END', '<end>'].slice(0, 2));
});

test('callback tool (args, cb) completes later; the callback says whether it was applied', async () => {
  const m = llm();
  let answer;
  const w = createToolAdapterWrapper(m.duplex, { tools: { ask: (args, cb) => (answer = cb) } });
  consumer(w);
  m.say(call('ask', { q: 1 }, 'k'));
  assert.equal(m.toModel.length, 0);
  assert.equal(answer(null, { ok: true }), true);
  assert.equal(answer(null, { ok: false }), false);
  assert.deepEqual(m.toModel[0], { type: 'TOOL_RESULT', content: { id: 'k', name: 'ask', result: { ok: true } } });
});

test('adapter form { adapter: duplex } and a raw duplex: TOOL_CALL to its sink, its frames settle the call', () => {
  for (const form of ['object', 'raw']) {
    const m = llm();
    const fileTool = createDuplex({
      onWrite: (f) => {
        if (f.type === 'TOOL_CALL') {
          fileTool.source.push({ type: 'TOOL_RESULT', content: { id: f.content.id, result: `wrote ${f.content.args.path}` } });
          fileTool.source.push({ type: 'END' });
        }
      },
    });
    const w = createToolAdapterWrapper(m.duplex, { tools: { files: form === 'object' ? { adapter: fileTool } : fileTool } });
    const got = consumer(w);
    m.say(call('files', { path: '/a' }, 'f1'));
    m.say({ type: 'END' });
    assert.deepEqual(m.toModel, [{ type: 'TOOL_RESULT', content: { id: 'f1', name: 'files', result: 'wrote /a' } }, PROMPT], form);
    assert.deepEqual(types(got), ['TEXT', 'END'], form);
  }
});

test('an adapter tool that never answers times out on a real timer (toolTimeout alias) and gets CANCEL', async () => {
  const m = llm();
  const seen = [];
  const silent = createDuplex({ onWrite: (f) => seen.push(f) });
  const w = createToolAdapterWrapper(m.duplex, { tools: { files: { adapter: silent } }, toolTimeout: 20 });
  const got = consumer(w);
  m.say(call('files', {}, 'z'));
  m.say({ type: 'END' });
  await sleep(60);
  assert.deepEqual(types(seen), ['TOOL_CALL', 'CANCEL']);
  assert.deepEqual(m.toModel[0], { type: 'TOOL_RESULT', content: { id: 'z', name: 'files', error: 'Tool files timed out after 20ms' } });
  assert.deepEqual(types(got), ['TEXT', 'END']);
  assert.equal(silent.source.push({ type: 'END' }), false, 'a frame after the timeout is refused');
});

test('a deferred tool past toolTimeoutMs fails and its late completion is refused', async () => {
  const m = llm();
  let cb;
  const w = createToolAdapterWrapper(m.duplex, { tools: { slow: (a, done) => (cb = done) }, toolTimeoutMs: 15 });
  consumer(w);
  m.say(call('slow', {}, 's'));
  await sleep(50);
  assert.equal(m.toModel[0].content.error, 'Tool slow timed out after 15ms');
  assert.equal(cb(null, 1), false);
});

test('unknown tools get TOOL_RESULT error Tool "<name>" not found', () => {
  const m = llm();
  createToolAdapterWrapper(m.duplex, { tools: {} });
  m.say(call('nope', {}, 'u'));
  assert.deepEqual(m.toModel[0], { type: 'TOOL_RESULT', content: { id: 'u', name: 'nope', error: 'Tool "nope" not found' } });
});

test('buffered ENDs are released after the mirrored prompt; mirrorContinue false keeps the prompt to the model', () => {
  const m = llm();
  let cb;
  const w = createToolAdapterWrapper(m.duplex, { tools: { t: (a, done) => (cb = done) }, mirrorContinue: false });
  const got = consumer(w);
  m.say(call('t', {}));
  m.say({ type: 'END', content: 1 });
  m.say({ type: 'TEXT', content: 'overtakes' });
  m.say({ type: 'END', content: 2 });
  assert.deepEqual(got, [{ type: 'TEXT', content: 'overtakes' }]);
  cb(null, 'ok');
  assert.deepEqual(got.slice(1), [{ type: 'END', content: 1 }, { type: 'END', content: 2 }]);
  assert.deepEqual(m.toModel.at(-1), PROMPT);
});

test('trace, clearTrace and abort; _onToolResult is assignable; hook exceptions are caught', () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, {
    tools: { e: (a) => a },
    onToolCall: () => {
      throw new Error('hook bug');
    },
  });
  const seen = [];
  w._onToolResult = (name, args, result) => {
    seen.push(result);
    throw new Error('also caught');
  };
  const got = consumer(w);
  m.say(call('e', { n: 1 }));
  assert.deepEqual(w.getToolTrace(), [{ name: 'e', args: { n: 1 }, result: { n: 1 }, error: null }]);
  const copy = w.getToolTrace();
  copy.pop();
  assert.equal(w.getToolTrace().length, 1, 'getToolTrace returns a copy');
  w.clearTrace();
  assert.deepEqual(w.getToolTrace(), []);
  w.abort();
  m.say(call('e', { n: 2 }));
  assert.deepEqual(seen, [{ n: 1 }, { n: 2 }]);
  assert.equal(got.filter((f) => f.type === 'TEXT').length, 1, 'no prompt after abort');
  assert.equal(w.getToolTrace().length, 1);
});

test('SPEC §5: duplicate ids fail at once without running the tool', () => {
  const m = llm();
  let runs = 0;
  const w = createToolAdapterWrapper(m.duplex, { tools: { t: (a, cb) => runs++ } });
  m.say(call('t', {}, 'same'));
  m.say(call('t', {}, 'same'));
  assert.equal(runs, 1);
  assert.deepEqual(m.toModel[0], { type: 'TOOL_RESULT', content: { id: 'same', name: 't', error: 'Duplicate tool call id "same"' } });
  w.close(); // the first call still waits: its timer would keep the process alive for 30 s
});

test('SPEC §5: cancel(reason) completes every pending call oldest first, adapters get CANCEL, held END released', () => {
  const m = llm();
  const seen = [];
  const adapter = createDuplex({ onWrite: (f) => seen.push(f) });
  const w = createToolAdapterWrapper(m.duplex, { tools: { d: (a, cb) => {}, files: { adapter } } });
  const got = consumer(w);
  m.say(call('d', {}, 'one'));
  m.say(call('files', {}, 'two'));
  m.say({ type: 'END' });
  w.cancel('user stopped');
  assert.deepEqual(types(seen), ['TOOL_CALL', 'CANCEL']);
  assert.deepEqual(seen[1].content, { id: 'two', name: 'files', reason: 'user stopped' });
  assert.deepEqual(m.toModel.slice(0, 2).map((f) => f.content.error), ['Tool d cancelled: user stopped', 'Tool files cancelled: user stopped']);
  assert.deepEqual(types(got), ['TEXT', 'END']);
  assert.equal(w.pending, 0);
});

test('SPEC §5: maxRounds bounds the prompts; the consumer then gets the round-limit ERROR', () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, { tools: { t: () => 1 }, maxRounds: 1 });
  const got = consumer(w);
  m.say(call('t', {}));
  m.say(call('t', {}));
  m.say(call('t', {}));
  assert.deepEqual(got, [PROMPT, { type: 'ERROR', content: { message: 'Tool round limit reached (1)' } }]);
});

test('maxPending: a call past the slots fails with "Too many pending tool calls"', () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, { tools: { t: (a, cb) => {} }, maxPending: 1 });
  m.say(call('t', {}, 'a'));
  m.say(call('t', {}, 'b'));
  assert.equal(m.toModel[0].content.error, 'Too many pending tool calls (max 1)');
  w.close();
});

test('fullValidation: a duplicate type on a pass-through frame is rejected', () => {
  for (const full of [false, true]) {
    const m = llm();
    const rejected = [];
    const w = createToolAdapterWrapper(m.duplex, { fullValidation: full, onRejected: (path) => rejected.push(path) });
    const got = consumer(w);
    m.say(raw('{"type":"TEXT","type":"TOOL_CALL"}'));
    assert.equal(got.length, full ? 0 : 1);
    assert.deepEqual(rejected, full ? ['response'] : []);
  }
});

test('bad input: malformed frames on either path are rejected, nothing else changes; raw values keep their text', () => {
  const m = llm();
  const rejected = [];
  const w = createToolAdapterWrapper(m.duplex, { tools: { e: function (a) { return raw(this.rawArgs); } }, onRejected: (p, f, e) => rejected.push([p, e.code]) });
  const got = consumer(w);
  m.say({ nope: 1 });
  m.say(raw('{"type":7}'));
  w.sink.write(raw('[1]'));
  m.say(raw('{"type":"TOOL_CALL","content":{"name":"e","args":{"big":1e400, "n":12345678901234567890123}}}'));
  assert.deepEqual(rejected, [['response', 'PW_FRAME_MISSING_TYPE'], ['response', 'PW_FRAME_TYPE_NOT_STRING'], ['request', 'PW_FRAME_NOT_OBJECT']]);
  assert.equal(rawText(m.toModel[0]), '{"type":"TOOL_RESULT","content":{"name":"e","result":{"big":1e400,"n":12345678901234567890123}}}');
  assert.equal(got.length, 1);
  assert.throws(() => createToolAdapterWrapper(m.duplex, { tools: { x: 42 } }), TypeError);
});

test('SPEC §7.4: a sync tool holds no pending slot (maxPending 0); a deferred one is refused', () => {
  const m = llm();
  const w = createToolAdapterWrapper(m.duplex, {
    tools: { now: (args) => ({ echoed: args }), later: (args, cb) => cb(null, 'never'), slow: async () => 1 },
    maxPending: 0,
  });
  const got = consumer(w);
  m.say(call('now', { n: 1 }, 'a'));
  m.say(call('later', {}, 'b'));
  m.say(call('slow', {}, 'c'));
  assert.deepEqual(m.toModel.filter((f) => f.type === 'TOOL_RESULT').map((f) => f.content), [
    { id: 'a', name: 'now', result: { echoed: { n: 1 } } },
    { id: 'b', name: 'later', error: 'Too many pending tool calls (max 0)' },
    { id: 'c', name: 'slow', error: 'Too many pending tool calls (max 0)' },
  ]);
  assert.equal(w.pending, 0);
  assert.equal(got.filter((f) => f.type === 'TEXT').length, 3);
});

test('sync tools run inside the C call: this = { index, name, id, rawArgs }, hooks still in frame order', () => {
  const m = llm();
  const seen = [];
  const w = createToolAdapterWrapper(m.duplex, {
    tools: {
      who(args) {
        seen.push(['tool', { ...this }, args]);
        return raw(this.rawArgs);
      },
      d: (args, cb) => {},
    },
    onToolCall: (name) => seen.push(['call', name]),
    onToolResult: (name, args, result) => seen.push(['result', name, result]),
  });
  consumer(w);
  m.say(call('d', {}, 'd0'));
  m.say(raw('{"type":"TOOL_CALL","content":{"id":"x1","name":"who","args":{"big":1e400}}}'));
  assert.deepEqual(seen, [
    ['call', 'd'],
    ['tool', { index: 1, name: 'who', id: 'x1', rawArgs: '{"big":1e400}' }, { big: Infinity }],
    ['call', 'who'],
    ['result', 'who', { big: Infinity }],
  ]);
  assert.equal(rawText(m.toModel[0]), '{"type":"TOOL_RESULT","content":{"id":"x1","name":"who","result":{"big":1e400}}}');
  assert.equal(w.pending, 1, 'the deferred call still waits; the sync one took no slot');
  w.close();
});

test('a sync tool is refused every public method of its own wrapper (the C call running it holds the wrapper)', () => {
  const m = llm();
  let w;
  const refused = [];
  // Each use a sync tool could make of its wrapper; none may reach the C wrapper mid-call.
  const uses = {
    stats: () => w.stats(),
    'sink.write': () => w.sink.write({ type: 'TEXT', content: 'more' }),
    'sink.end': () => w.sink.end(),
    getToolTrace: () => w.getToolTrace(),
    clearTrace: () => w.clearTrace(),
    abort: () => w.abort(),
    cancel: () => w.cancel('why'),
    tick: () => w.tick(),
    pending: () => w.pending,
    close: () => w.close(),
  };
  w = createToolAdapterWrapper(m.duplex, {
    tools: {
      meddles: () => {
        for (const [name, use] of Object.entries(uses)) {
          try {
            use();
            refused.push([name, 'allowed']);
          } catch (e) {
            refused.push([name, e.message]);
          }
        }
        return 'done';
      },
    },
  });
  consumer(w);
  m.say(call('meddles', {}, 'q'));
  const USE = 'a sync tool cannot use its own wrapper while it runs (make it async or (args, cb))';
  const CLOSE = 'a sync tool cannot close its own wrapper while it runs (make it async or (args, cb))';
  assert.deepEqual(refused, Object.keys(uses).map((name) => [name, name === 'close' ? CLOSE : USE]));
  assert.deepEqual(m.toModel, [{ type: 'TOOL_RESULT', content: { id: 'q', name: 'meddles', result: 'done' } }, PROMPT]);
  // Outside the tool the same uses work.
  assert.deepEqual(w.stats(), { rounds: 1, messagesTruncated: 0, lastErrorTruncated: 0, hookEventsCut: 0, hookEventsDropped: 0 });
  assert.equal(w.pending, 0);
  w.close();
});

test('a plain function returning a promise fails (declare it async); a sync tool cannot use its own wrapper', async () => {
  const m = llm();
  let w;
  w = createToolAdapterWrapper(m.duplex, {
    tools: {
      promised: (args) => Promise.reject(new Error('not awaited')),
      meddles: () => w.getToolTrace(),
      big: () => 10n,
    },
  });
  consumer(w);
  m.say(call('promised', {}, 'p'));
  m.say(call('meddles', {}, 'q'));
  m.say(call('big', {}, 'r'));
  const errors = m.toModel.filter((f) => f.type === 'TOOL_RESULT').map((f) => f.content.error);
  assert.equal(errors[0], 'Tool promised returned a promise: declare it async');
  assert.match(errors[1], /sync tool cannot use its own wrapper/);
  assert.equal(errors[2], 'Tool big returned invalid JSON', "the core's text, not one composed in JS");
  await sleep(5); // the dropped promise's rejection is handled
  assert.equal(w.getToolTrace().length, 3, 'the wrapper works again once the tool returned');
});

test("a sync tool driving another wrapper: each wrapper's hooks and tools answer its own calls, in order", () => {
  // The hooks find their wrapper among the ones whose C calls are on the stack (binding.mjs):
  // the inner wrapper is bound and unbound inside the outer one's call, which must still be found.
  const hooks = [];
  const mi = llm();
  const inner = createToolAdapterWrapper(mi.duplex, {
    tools: { double: (args) => ({ v: args.v * 2 }) },
    onToolCall: (name) => hooks.push(['inner call', name]),
    onToolResult: (name, _args, result) => hooks.push(['inner result', name, result]),
  });
  const mo = llm();
  const outer = createToolAdapterWrapper(mo.duplex, {
    tools: {
      viaInner: (args) => {
        mi.say(call('double', { v: args.v }, `i${args.v}`));
        return { inner: mi.toModel.at(-2).content.result };
      },
    },
    onToolCall: (name) => hooks.push(['outer call', name]),
    onToolResult: (name, _args, result) => hooks.push(['outer result', name, result]),
  });
  mo.say(call('viaInner', { v: 3 }, 'o1'));
  mo.say(call('viaInner', { v: 5 }, 'o2'));
  // A wrapper's hooks fire once its C call is over (the hook log): the inner call's first.
  assert.deepEqual(hooks, [
    ['inner call', 'double'],
    ['inner result', 'double', { v: 6 }],
    ['outer call', 'viaInner'],
    ['outer result', 'viaInner', { inner: { v: 6 } }],
    ['inner call', 'double'],
    ['inner result', 'double', { v: 10 }],
    ['outer call', 'viaInner'],
    ['outer result', 'viaInner', { inner: { v: 10 } }],
  ]);
  assert.deepEqual(mo.toModel.filter((f) => f.type === 'TOOL_RESULT'), [
    { type: 'TOOL_RESULT', content: { id: 'o1', name: 'viaInner', result: { inner: { v: 6 } } } },
    { type: 'TOOL_RESULT', content: { id: 'o2', name: 'viaInner', result: { inner: { v: 10 } } } },
  ]);
  assert.equal(inner.getToolTrace().length, 2);
  assert.equal(outer.getToolTrace().length, 2);
});
