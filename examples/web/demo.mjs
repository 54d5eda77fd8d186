// The page's work, apart from the DOM: a recorded Anthropic Messages stream (SSE, as fetch()
// gives it) decoded into frames by the package's decoder, pushed through a tool-adapter
// wrapper whose `get_weather` tool is a plain JS function; every frame reported as it flows.
// Then the second turn: the conversation (the question, the decoded response, the wrapper's
// result) and the next request body the browser would send, written by the library.
import { createConversation, createDuplex, createToolAdapterWrapper, framesFromResponse, rawText } from 'polyweave-tool-adapter';

/** What the user asked (the recording answers it). */
export const QUESTION = 'What is the weather in Paris?';
/** The tool as the model is told of it. */
export const DECLARATIONS = [
  {
    name: 'get_weather',
    description: 'The current weather at a location',
    schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
];

/**
 * Runs the recording at `url`; `onFrame(direction, frameText)` hears each frame as it flows:
 * `model→wrapper` (decoded from the body), `wrapper→model` (what the next request carries),
 * `wrapper→consumer` (what the user sees). Resolves with `flow`, every `[direction, text]` in
 * order, and `next`, the second request: `{ text, length, chunks, streamed, stats }`.
 */
export async function runDemo(url, onFrame = () => {}) {
  const flow = [];
  const note = (direction, frame) => {
    const text = rawText(frame);
    flow.push([direction, text]);
    onFrame(direction, text);
  };
  // The conversation so far: the question, then the model's response as decoded (each frame as
  // its exact text), then the wrapper's results for its calls.
  const conversation = createConversation({ capacity: 16384 });
  conversation.pushUser(QUESTION);
  conversation.beginResponse('anthropic');
  const model = createDuplex({
    onWrite: (frame) => {
      note('wrapper→model', frame);
      if (frame.type === 'TOOL_RESULT') conversation.pushFrame(frame);
    },
  });
  const wrapper = createToolAdapterWrapper(model, {
    tools: {
      // A sync tool: runs inside the library's call that intercepted the TOOL_CALL.
      get_weather: ({ location }) => ({ location, temperatureC: 18, sky: 'cloudy' }),
    },
  });
  wrapper.source.pipe({ write: (frame) => note('wrapper→consumer', frame), end() {} });
  for await (const frame of framesFromResponse(await fetch(url), 'anthropic')) {
    note('model→wrapper', frame);
    conversation.pushFrame(frame); // before the wrapper: its result follows the call
    model.source.push(frame);
  }
  wrapper.close();
  // The second turn: the body written by the library, whole and chunk by chunk (as fetch would
  // send `request.stream()`).
  const request = conversation.request('anthropic', { model: 'claude-sonnet-4-5', maxTokens: 1024 }, DECLARATIONS);
  const text = request.text();
  const chunks = [];
  for await (const chunk of request.stream({ chunkSize: 64 })) chunks.push(chunk);
  const streamed = new TextDecoder().decode(concat(chunks));
  const next = { text, length: request.length, chunks: chunks.length, streamed, stats: conversation.stats() };
  request.close();
  conversation.close();
  return { flow, next };
}

/** The chunks as one Uint8Array. */
function concat(chunks) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * What the recording must give, exactly (the page's own assertion): the text deltas passed
 * through, the call (id, name and args as the Anthropic SDK rebuilds them from this body:
 * tests/data/provider-streams/anthropic/anthropic-sdk-tool-use-response.expected.json)
 * intercepted and answered to the model with the continue prompt mirrored to the consumer
 * (SPEC §3), and the END passed on.
 */
export const EXPECTED = [
  ["model→wrapper", "{\"type\":\"TEXT\",\"content\":\"I\"}"],
  ["wrapper→consumer", "{\"type\":\"TEXT\",\"content\":\"I\"}"],
  ["model→wrapper", "{\"type\":\"TEXT\",\"content\":\"'ll check the current weather in Paris for you.\"}"],
  ["wrapper→consumer", "{\"type\":\"TEXT\",\"content\":\"'ll check the current weather in Paris for you.\"}"],
  ["model→wrapper", "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"toolu_01NRLabsLyVHZPKxbKvkfSMn\",\"name\":\"get_weather\",\"args\":{\"location\":\"Paris\"}}}"],
  ["wrapper→model", "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"toolu_01NRLabsLyVHZPKxbKvkfSMn\",\"name\":\"get_weather\",\"result\":{\"location\":\"Paris\",\"temperatureC\":18,\"sky\":\"cloudy\"}}}"],
  ["wrapper→model", "{\"type\":\"TEXT\",\"content\":\"Tool results above.\"}"],
  ["wrapper→consumer", "{\"type\":\"TEXT\",\"content\":\"Tool results above.\"}"],
  ["model→wrapper", "{\"type\":\"END\",\"content\":{\"reason\":\"tool_use\"}}"],
  ["wrapper→consumer", "{\"type\":\"END\",\"content\":{\"reason\":\"tool_use\"}}"],
];

/**
 * The second request, exactly: the question, the assistant turn as decoded (its text and its
 * `tool_use` with the call's id, name and args), the wrapper's result as a `tool_result` for
 * that id, the declared tool; what `polyweave-replay --request anthropic` prints for the same
 * conversation.
 */
export const EXPECTED_REQUEST =
  '{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"What is the weather in Paris?"},' +
  '{"role":"assistant","content":[{"type":"text","text":"I\'ll check the current weather in Paris for you."},' +
  '{"type":"tool_use","id":"toolu_01NRLabsLyVHZPKxbKvkfSMn","name":"get_weather","input":{"location":"Paris"}}]},' +
  '{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01NRLabsLyVHZPKxbKvkfSMn","content":"{\\"location\\":\\"Paris\\",\\"temperatureC\\":18,\\"sky\\":\\"cloudy\\"}"}]}],' +
  '"tools":[{"name":"get_weather","description":"The current weather at a location","input_schema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}],' +
  '"stream":true}';
