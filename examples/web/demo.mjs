// The page's work, apart from the DOM: a recorded Anthropic Messages stream (SSE, as fetch()
// gives it) decoded into frames by the package's decoder, pushed through a tool-adapter
// wrapper whose `get_weather` tool is a plain JS function; every frame reported as it flows.
import { createDuplex, createToolAdapterWrapper, framesFromResponse, rawText } from 'polyweave-tool-adapter';

/**
 * Runs the recording at `url`; `onFrame(direction, frameText)` hears each frame as it flows:
 * `model→wrapper` (decoded from the body), `wrapper→model` (what the next request carries),
 * `wrapper→consumer` (what the user sees). Resolves with every `[direction, text]` in order.
 */
export async function runDemo(url, onFrame = () => {}) {
  const flow = [];
  const note = (direction, frame) => {
    const text = rawText(frame);
    flow.push([direction, text]);
    onFrame(direction, text);
  };
  const model = createDuplex({ onWrite: (frame) => note('wrapper→model', frame) });
  const wrapper = createToolAdapterWrapper(model, {
    tools: {
      // A sync tool: runs inside the library's call that intercepted the TOOL_CALL.
      get_weather: ({ location }) => ({ location, temperatureC: 18, sky: 'cloudy' }),
    },
  });
  wrapper.source.pipe({ write: (frame) => note('wrapper→consumer', frame), end() {} });
  for await (const frame of framesFromResponse(await fetch(url), 'anthropic')) {
    note('model→wrapper', frame);
    model.source.push(frame);
  }
  wrapper.close();
  return flow;
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
