// The page: runs demo.mjs on ./recording.body, shows each frame as it flows, then writes its
// own verdict (exact comparison with EXPECTED) into #verdict, which tests/web_page.sh reads.
import { EXPECTED, runDemo } from './demo.mjs';

const framesEl = document.getElementById('frames');
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

try {
  const flow = await runDemo(new URL('./recording.body', import.meta.url), (direction, text) => {
    framesEl.textContent += `${direction.padEnd(17)} ${text}\n`;
  });
  verdictEl.textContent = verdict(flow);
} catch (e) {
  verdictEl.textContent = `FAIL ${e && e.stack ? e.stack : e}`;
}
