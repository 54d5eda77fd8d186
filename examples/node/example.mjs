import { createDuplex, createToolAdapterWrapper, rawText } from 'polyweave-tool-adapter';

// The model's side: what the wrapper writes to the model arrives here.
const llm = createDuplex({ onWrite: (frame) => console.log('model   ', rawText(frame)) });
const wrapper = createToolAdapterWrapper(llm, {
  tools: {
    add: ({ a, b }) => ({ sum: a + b }), // sync
    ask: (args, cb) => setTimeout(() => cb(null, `yes, ${args.q}`), 10), // callback, later
  },
  toolTimeoutMs: 5000,
});
wrapper.source.pipe({ write: (frame) => console.log('consumer', rawText(frame)), end() {} });

llm.source.push({ type: 'TOOL_CALL', content: { id: 'c1', name: 'add', args: { a: 1, b: 2 } } });
llm.source.push({ type: 'TOOL_CALL', content: { id: 'c2', name: 'ask', args: { q: 'rain?' } } });
llm.source.push({ type: 'END' }); // held until both calls have their results
