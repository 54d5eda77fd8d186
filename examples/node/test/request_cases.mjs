// The conversations of request.test.mjs, as data: each is built through the package
// (`createConversation`, the decoder on a recorded body, TOOL_RESULT frames) and, as a SPEC §10.4
// conversation file, through `polyweave-replay --request`; request_bodies.json holds what the
// replay printed for each (`node test/request_cases.mjs REPLAY_BIN > test/request_bodies.json`
// writes it again). No tests here.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkoutDir } from './helpers.mjs';

export const STREAMS = path.join(checkoutDir, 'tests', 'data', 'provider-streams');

export const SYSTEM = 'You are terse.';
export const QUESTION = 'Weather in Paris?';
export const THANKS = 'Thanks.';

/** The tools the model is told of: a host tool and an MCP entry whose name most providers cannot take. */
export const DECLARATIONS = [
  { name: 'get_weather', description: 'Weather now', schema: { type: 'object', properties: { location: { type: 'string' } } } },
  { mcp: { name: 'fs.read', title: 'Read', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } } },
];

/**
 * One recorded response per provider, and the results given for its calls (by `id`, or by
 * `name` where the provider gives calls no id).
 */
export const CASES = [
  {
    provider: 'anthropic',
    body: 'anthropic/anthropic-sdk-tool-use-response.body',
    results: [{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', result: { temp_c: 21 } }],
  },
  {
    provider: 'openai-chat',
    body: 'openai-chat/openai-python-parse-multiple-pydantic-tools.body',
    results: [
      { id: 'call_JMW1whyEaYG438VE1OIflxA2', result: { temp_c: 9, sky: 'rain' } },
      { id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', error: 'market closed' },
    ],
  },
  {
    provider: 'openai-responses',
    body: 'openai-responses/vercel-ai-azure-tool-call.body',
    results: [{ id: 'call_H5DxLSFnsGhiROnUiDHmgyc8', result: 'sunny, 18 °C' }],
  },
  {
    provider: 'gemini',
    body: 'gemini/vercel-ai-google-tool-call-gemini3.body',
    results: [{ name: 'weather', result: { temp_f: 61 } }],
  },
  {
    provider: 'ollama',
    body: 'ollama/ollama-docs-chat-streaming-with-tools.body',
    results: [{ name: 'get_weather', error: 'no network' }],
  },
];

/** The request options of each body: every option, as far as the target provider takes it. */
export function optionsFor(target) {
  return {
    model: 'm',
    ...(target === 'gemini' ? {} : { maxTokens: 1024 }),
    ...(target === 'ollama' ? {} : { toolChoice: { name: 'fs.read' } }),
    extra: target === 'gemini' ? { generationConfig: { temperature: 0.2 } } : { temperature: 0.2 },
  };
}

/** Every body checked: each case to its own provider, and the anthropic case to every other. */
export const BODIES = [
  ...CASES.map((c) => ({ case: c.provider, target: c.provider })),
  ...CASES.filter((c) => c.provider !== 'anthropic').map((c) => ({ case: 'anthropic', target: c.provider })),
];

/** The SPEC §10.4 conversation file of a case written to `target` (`response`: the body's absolute path). */
export function conversationFile(c, target) {
  const o = optionsFor(target);
  return {
    model: o.model,
    system: SYSTEM,
    ...(o.maxTokens === undefined ? {} : { max_tokens: o.maxTokens }),
    ...(o.toolChoice === undefined ? {} : { tool_choice: o.toolChoice }),
    extra: o.extra,
    capacity: 65536,
    tools: DECLARATIONS.map((d) => (d.mcp ? d : { name: d.name, description: d.description, input_schema: d.schema })),
    turns: [{ user: QUESTION }, { response: path.join(STREAMS, c.body), provider: c.provider }, { results: c.results }, { user: THANKS }],
  };
}

// Run as a program with the replay's path: the bodies it prints, as request_bodies.json (`node
// --test test/` runs this file too, without arguments: then it does nothing).
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.length > 2) {
  const bin = process.argv[2];
  const out = {};
  for (const b of BODIES) {
    const c = CASES.find((x) => x.provider === b.case);
    const file = path.join(os.tmpdir(), `pw-request-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify(conversationFile(c, b.target)));
    try {
      out[`${b.case} → ${b.target}`] = execFileSync(bin, ['--request', b.target, file], { encoding: 'utf8' }).trimEnd();
    } finally {
      fs.rmSync(file);
    }
  }
  process.stdout.write(`${JSON.stringify(out, null, 1)}${os.EOL}`);
}
