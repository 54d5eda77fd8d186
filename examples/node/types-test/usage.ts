// Type-checked by tests/npm_package.sh (`tsc --noEmit`, strict) against the installed package:
// every export used once with the types a user would write; the @ts-expect-error lines must fail.
import {
  createConversation,
  createDecoder,
  createDuplex,
  createSink,
  createSource,
  createToolAdapterWrapper,
  DecoderStream,
  DecoderTransform,
  encodeItem,
  framesFromResponse,
  isDuplex,
  Provider,
  providerFromName,
  raw,
  RawJSON,
  rawText,
  type Conversation,
  type ConversationStats,
  type Decoder,
  type Declaration,
  type DeclarationError,
  geminiPath,
  type Request,
  wrapToolAdapter,
  type DecodedFrame,
  type ToolAdapterWrapper,
  type WrapperStats,
  type PolyweaveError,
  type SchemaInput,
  validate,
  checkSchema,
  init,
  isLoaded,
  version,
} from 'polyweave-tool-adapter';
import { createDecoder as createDecoder2 } from 'polyweave-tool-adapter/decode';
import { createDuplex as createDuplex2 } from 'polyweave-tool-adapter/duplex';
import { connectMcpServer, createMcpClient, createMcpSession, McpCode, McpError, McpStartupError, type McpEvent, type McpHttpSession, type McpRequest } from 'polyweave-tool-adapter/mcp';
import * as alias from '@polyweave/tool-adapter';

const llm = createDuplex({ onWrite: (frame) => console.log('to model', rawText(frame)) });
const wrapper: ToolAdapterWrapper = createToolAdapterWrapper(llm, {
  tools: {
    add: (args: { a: number; b: number }) => ({ sum: args.a + args.b }),
    later: async (args: unknown) => args,
    ask(args: unknown, cb) {
      cb(null, 'yes');
    },
    remote: { adapter: createDuplex2(), timeoutMs: 100 },
    weather: { fn: (args: { city: string }) => args.city, schema: { type: 'object', required: ['city'] } },
    checked: { adapter: createDuplex2(), schema: '{"type":"object"}' },
  },
  toolTimeoutMs: 5000,
  onToolCall(name, args) {
    console.log(this.index, name, args);
  },
});
wrapper.source.pipe(createSink((f) => console.log(f)));
llm.source.push({ type: 'TOOL_CALL', content: { id: 'c1', name: 'add', args: { a: 1, b: 2 } } });
const stats: WrapperStats = wrapper.stats();
const trace: string | null = wrapper.getToolTrace({ raw: true })[0]?.args ?? null;
const pending: number = wrapper.pending;
wrapper.cancel('stop');
wrapper.close();
console.log(stats.rounds, trace, pending, wrapper.isClosed);

const wrapped = wrapToolAdapter(createDuplex(), { name: 'x', timeoutMs: 10 });
wrapped({ q: 1 }, function (err, result) {
  console.log(err?.message, result, this.rawResult);
});

const d: Decoder = createDecoder('openai-chat', { calls: 4 });
const frames = d.write(new TextEncoder().encode('data: {}\n\n'));
const last = d.finish();
console.log(frames.length + last.length, d.stats.callsStarted, createDecoder2(Provider.GEMINI).maxFrameLen, providerFromName('ollama'));
const item: Record<string, unknown> = encodeItem('anthropic', raw('{"type":"TOOL_RESULT","content":{"id":"a","name":"n","result":1}}'));
console.log(item, rawText(item), new RawJSON('1').rawJSON, isDuplex(llm), createSource().ended);
async function decodeFetch(url: string): Promise<void> {
  for await (const f of framesFromResponse(await fetch(url), 'anthropic')) {
    const frame = f as DecodedFrame;
    console.log(frame.type);
  }
  const body = (await fetch(url)).body!;
  body.pipeThrough(new DecoderStream('openai-responses'));
  console.log(typeof DecoderTransform);
}
void decodeFetch;

const client = createMcpClient({ calls: 2, revision: 'auto', startTimeoutMs: 5000 });
client.start(performance.now());
const line: string | null = client.pollTransmit();
const ev: McpEvent | null = client.pollEvent();
if (ev?.type === 'toolsChanged') console.log(ev.tools + 1);
const due: number | null = client.pollTimeout();
if (due !== null) client.handleTimeout(due);
const spoken: string | null = client.protocolVersion;
console.log(line, ev?.type, spoken, McpCode.OUTBOX_FULL, McpError, McpStartupError);
client.close();
// @ts-expect-error: a revision the client does not know
createMcpClient({ revision: '2026' });
const session = createMcpSession((l: string) => console.log(l), { timeoutMs: 100, revision: '2026-07-28', validate: true, clock: { now: () => 0 } });
session.receive('{}\n');
for (const u of session.unchecked) console.log(u.tool, u.schema === 'inputSchema', u.kind, u.offset + 1, session.validate);
client.setOutputSchemas([{ tool: 'weather', schema: { type: 'object' } }, { tool: 'time', schema: '{"required":["t"]}' }]);
session.tick();
void connectMcpServer('node', ['server.js'], {
  stderr: 'ignore',
  revision: '2025-11-25',
  startTimeoutMs: 2000,
  onToolsChanged: (tools) => console.log(tools.map((t) => t.name)),
}).then((s) => {
  console.log(s.protocolVersion?.length, s.tools.length);
  return s.close();
});

// Over Streamable HTTP through fetch (a browser's, or one given).
void connectMcpServer({
  url: new URL('http://127.0.0.1:3001/mcp'),
  fetch: (input, init) => fetch(input, init),
  headers: { Authorization: 'Bearer t' },
  streams: 4,
  revision: 'auto',
}).then(async (s: McpHttpSession) => {
  console.log(s.url, s.protocolVersion, s.tools.map((t) => t.name), await s.call('echo', { message: 'hi' }));
  await s.close();
});
const httpClient = createMcpClient({ calls: 2, streams: 3 });
httpClient.start(0);
const postOrClose: McpRequest | null = httpClient.pollRequest();
if (postOrClose?.type === 'post') {
  const headers: Array<[string, string]> = postOrClose.headers;
  console.log(postOrClose.body.length, headers, httpClient.maxHeadersLen);
  httpClient.handleResponse(postOrClose.stream, 200, 'application/json', null);
  const took: number = httpClient.feedResponse(postOrClose.stream, new Uint8Array([123, 125]));
  httpClient.handleResponseEnd(postOrClose.stream);
  console.log(took, McpCode.POLL_FIRST);
} else if (postOrClose?.type === 'close') {
  console.log(postOrClose.stream);
}
// @ts-expect-error: a POST has no `stream` of type string
const wrongStream: string = httpClient.pollRequest()!.stream;
void wrongStream;
httpClient.close();

// Explicit loading (bundlers, workers): a URL, bytes or a compiled module.
void init({ wasm: new URL('./polyweave_tool_adapter.wasm', import.meta.url) }).then(() => console.log(isLoaded(), version()));
function codeOf(e: unknown): string | undefined {
  const err = e as PolyweaveError;
  return `${err.code}:${err.errno ?? ''}`;
}
void codeOf;
try {
  client.handleFrame({ slot: 0, index: 0 }, '{}');
} catch (e) {
  if (e instanceof McpError) console.log(e.code.toLowerCase(), e.errno + 1);
}

// The next request: the conversation so far, the body written by the library.
const conv: Conversation = createConversation({ capacity: 65536 });
conv.setSystem('Be terse.');
conv.pushUser('Weather in Paris?');
conv.pinFirstUser(true);
conv.beginResponse('anthropic');
const pushed: 'kept' | 'ignored' | 'ended' = conv.pushFrame({ type: 'TEXT', content: 'Let me look.' });
conv.pushFrame(raw('{"type":"END"}'));
conv.endResponse();
const tools: Declaration[] = [
  { name: 'get_weather', description: 'Weather now', schema: { type: 'object' }, strict: false },
  { name: 'raw_schema', schema: '{"type":"object"}' },
  { mcp: { name: 'fs.read', inputSchema: { type: 'object' } } },
];
const req: Request = conv.request(Provider.ANTHROPIC, { model: 'm', maxTokens: 1024, toolChoice: { name: 'fs.read' }, extra: { temperature: 0.2 } }, tools);
const cstats: ConversationStats = conv.stats();
const body: ReadableStream<Uint8Array> = req.stream({ chunkSize: 4096 });
console.log(pushed, req.length, req.text().length, req.bytes().byteLength, cstats.evicted, new Response(body), geminiPath('gemini-2.5-flash'));
try {
  conv.request('openai-chat', { model: 'm', toolChoice: 'required' }, [{ name: 'bad name' }]);
} catch (e) {
  const err = e as DeclarationError;
  console.log(err.code, err.errno, err.index);
}
req.close();
conv.clear();
conv.close();
// @ts-expect-error: the model is required
conv.request('ollama', { maxTokens: 1 });
// @ts-expect-error: a tool choice is auto, none, required or { name }
conv.request('ollama', { model: 'm', toolChoice: 'any' });

// The alias names the same API.
const w2 = alias.createToolAdapterWrapper(alias.createDuplex(), { tools: {} });
w2.close();

// @ts-expect-error: tools must be functions, duplexes or { adapter }
createToolAdapterWrapper(llm, { tools: { bad: 42 } });
// JSON Schema: null or why; a refused schema's kind and offset on the error.
const schema: SchemaInput = { type: 'integer' };
const why: string | null = validate(schema, 3);
try {
  validate('{"$ref":"other.json"}', raw('1'));
} catch (e) {
  const err = e as PolyweaveError;
  console.log(why, err.code, err.kind, err.offset, err.tool);
}
checkSchema({ type: 'object', required: ['city'] });
// @ts-expect-error: a { fn } tool needs a function
createToolAdapterWrapper(llm, { tools: { bad: { fn: 1, schema: true } } });
// @ts-expect-error: an unknown provider number type
createDecoder({ provider: 1 });
