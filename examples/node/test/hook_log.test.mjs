import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper } from '../index.mjs';
import { llm, consumer } from './helpers.mjs';

const call = (name, args, id) => ({ type: 'TOOL_CALL', content: { ...(id ? { id } : {}), name, args } });

test('hooks fire in their place among the frames, as the library orders them', () => {
  const m = llm();
  const order = [];
  const w = createToolAdapterWrapper(m.duplex, {
    tools: { echo: (args) => args },
    onToolCall: (name) => order.push(`call ${name} after ${m.toModel.length} frames`),
    onToolResult: (name) => order.push(`result ${name} after ${m.toModel.length} frames`),
  });
  consumer(w);
  m.say(call('echo', [1], 'c1'));
  // toolCall before the TOOL_RESULT, toolResult right after it and before the prompt.
  assert.deepEqual(order, ['call echo after 0 frames', 'result echo after 1 frames']);
  assert.equal(m.toModel.length, 2);
  assert.deepEqual(w.stats(), {
    rounds: 1,
    messagesTruncated: 0,
    lastErrorTruncated: 0,
    hookEventsCut: 0,
    hookEventsDropped: 0,
  });
  w.close();
});

test('a hook log too small: the hook sees null args and this.cut, then events are dropped and counted', () => {
  const m = llm();
  const seen = [];
  const w = createToolAdapterWrapper(m.duplex, {
    tools: { echo: (args) => args },
    limits: { hookLogBytes: 40 },
    onToolCall(name, args) {
      seen.push([name, args, this.cut]);
    },
    onToolResult(name, args) {
      seen.push(['result', args, this.cut]);
    },
  });
  consumer(w);
  m.say(call('echo', [1, 2, 3, 4, 5, 6, 7, 8]));
  assert.deepEqual(seen, [['echo', null, true]]);
  assert.equal(w.stats().hookEventsCut, 1);
  assert.equal(w.stats().hookEventsDropped, 1);
  w.close();
});
