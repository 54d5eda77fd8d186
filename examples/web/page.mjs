// The page: runs demo.mjs on ./recording.body, shows each frame as it flows and the next request
// the browser would send, then writes its own verdict (exact comparison with EXPECTED and
// EXPECTED_REQUEST, and what the body carries) into #verdict, which tests/web_page.sh reads.
import { EXPECTED, EXPECTED_REQUEST, runDemo } from './demo.mjs';

const framesEl = document.getElementById('frames');
const requestEl = document.getElementById('request');
const verdictEl = document.getElementById('verdict');

function verdict(flow) {
  if (flow.length !== EXPECTED.length) return `FAIL ${flow.length} frames, ${EXPECTED.length} expected`;
  for (let i = 0; i < flow.length; i++) {
    const [d, t] = flow[i];
    if (d !== EXPECTED[i][0] || t !== EXPECTED[i][1]) return `FAIL frame ${i + 1}: ${d} ${t}, expected ${EXPECTED[i][0]} ${EXPECTED[i][1]}`;
  }
  const count = (dir) => flow.filter(([d]) => d === dir).length;
  return `PASS ${flow.length} frames: ${count('model→wrapper')} decoded from the recording, ${count('wrapper→model')} to the model, ${count('wrapper→consumer')} to the consumer`;
}

/**
 * The second request: written whole and streamed alike, its length the bytes', and it carries
 * every call of the first response (id, name, args) in the assistant turn and the wrapper's
 * result for each in the next user message; then exactly EXPECTED_REQUEST.
 */
function nextVerdict(flow, next) {
  if (next.streamed !== next.text) return 'FAIL the streamed body differs from text()';
  const bytes = new TextEncoder().encode(next.text).length;
  if (next.length !== bytes) return `FAIL length ${next.length}, the body has ${bytes} bytes`;
  const body = JSON.parse(next.text);
  const frames = (type, dir) => flow.filter(([d, t]) => d === dir && JSON.parse(t).type === type).map(([, t]) => JSON.parse(t).content);
  const calls = frames('TOOL_CALL', 'model→wrapper');
  const results = frames('TOOL_RESULT', 'wrapper→model');
  const [user, assistant, answers] = body.messages;
  if (user?.role !== 'user' || assistant?.role !== 'assistant' || answers?.role !== 'user') return `FAIL messages ${next.text}`;
  const uses = assistant.content.filter((b) => b.type === 'tool_use');
  const given = answers.content.filter((b) => b.type === 'tool_result');
  if (uses.length !== calls.length || given.length !== results.length) return `FAIL ${uses.length} tool_use and ${given.length} tool_result blocks`;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    const u = uses[i];
    if (u.id !== c.id || u.name !== c.name || JSON.stringify(u.input) !== JSON.stringify(c.args)) return `FAIL call ${i + 1}: ${JSON.stringify(u)}`;
    const r = given.find((g) => g.tool_use_id === c.id);
    const want = results.find((x) => x.id === c.id);
    if (!r || !want || r.content !== JSON.stringify(want.result)) return `FAIL result ${i + 1}: ${JSON.stringify(r)}`;
  }
  if (next.text !== EXPECTED_REQUEST) return `FAIL the next request is ${next.text}`;
  return `next request: ${next.length} bytes in ${next.chunks} chunks, ${calls.length} call with its result`;
}

try {
  const { flow, next } = await runDemo(new URL('./recording.body', import.meta.url), (direction, text) => {
    framesEl.textContent += `${direction.padEnd(17)} ${text}\n`;
  });
  requestEl.textContent = next.text;
  const first = verdict(flow);
  const second = nextVerdict(flow, next);
  verdictEl.textContent = first.startsWith('FAIL') ? first : second.startsWith('FAIL') ? second : `${first}; ${second}`;
} catch (e) {
  verdictEl.textContent = `FAIL ${e && e.stack ? e.stack : e}`;
}
