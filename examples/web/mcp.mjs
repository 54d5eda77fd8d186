// The MCP page: connects to the server at `?server=<url>` over Streamable HTTP (`fetch`, from
// this page's origin to the server's), lists its tools, calls `echo` and `get-sum`, and writes
// its own verdict into #verdict (exact comparison with what server-everything answers), which
// tests/web_page.sh reads.
import { connectMcpServer } from 'polyweave-tool-adapter/mcp';

/** What @modelcontextprotocol/server-everything (2026.8.31, `streamableHttp`) lists, in order. */
export const EXPECTED_TOOLS = [
  'echo', 'get-annotated-message', 'get-env', 'get-resource-links', 'get-resource-reference', 'get-structured-content', 'get-sum',
  'get-tiny-image', 'gzip-file-as-resource', 'toggle-simulated-logging', 'toggle-subscriber-updates', 'trigger-long-running-operation',
  'simulate-research-query',
];
/** The calls the page makes, with the exact results server-everything gives (SPEC §9.3: its content array). */
export const CALLS = [
  ['echo', { message: 'hi' }, [{ type: 'text', text: 'Echo: hi' }]],
  ['get-sum', { a: 2, b: 3 }, [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }]],
];
/** server-everything speaks 2025-11-25 only: it refuses the `server/discover` probe, then the handshake. */
export const EXPECTED_VERSION = '2025-11-25';
/** The POSTs that make it, by JSON-RPC method. */
export const EXPECTED_POSTS = ['server/discover', 'initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'tools/call'];

const toolsEl = document.getElementById('tools');
const callsEl = document.getElementById('calls');
const wireEl = document.getElementById('wire');
const verdictEl = document.getElementById('verdict');

/** The checks, in order; the first that fails is the verdict. */
async function run() {
  const server = new URLSearchParams(location.search).get('server');
  if (!server) return 'FAIL no server: open mcp.html?server=http://127.0.0.1:<port>/mcp';
  const url = new URL(server, location.href);
  // The point of the page: the browser's CORS rules apply to every request.
  if (url.origin === location.origin) return `FAIL ${url.origin} is this page's origin; the server must be another`;
  const posts = [];
  const session = await connectMcpServer({
    url,
    timeoutMs: 5000,
    onWire: (direction, data) => {
      if (direction !== 'send') return;
      const method = JSON.parse(data).method;
      posts.push(method);
      wireEl.textContent += `${method}\n`;
    },
  });
  try {
    const names = session.tools.map((t) => t.name);
    toolsEl.textContent = names.join('\n');
    if (JSON.stringify(names) !== JSON.stringify(EXPECTED_TOOLS)) return `FAIL tools ${JSON.stringify(names)}, expected ${JSON.stringify(EXPECTED_TOOLS)}`;
    if (session.protocolVersion !== EXPECTED_VERSION) return `FAIL protocolVersion ${session.protocolVersion}, expected ${EXPECTED_VERSION}`;
    const results = [];
    for (const [name, args, want] of CALLS) {
      const got = JSON.stringify(await session.call(name, args));
      callsEl.textContent += `${name} ${JSON.stringify(args)} → ${got}\n`;
      if (got !== JSON.stringify(want)) return `FAIL ${name} gave ${got}, expected ${JSON.stringify(want)}`;
      results.push(`${name} → ${got}`);
    }
    if (JSON.stringify(posts) !== JSON.stringify(EXPECTED_POSTS)) return `FAIL POSTs ${posts.join(', ')}, expected ${EXPECTED_POSTS.join(', ')}`;
    return `PASS ${session.protocolVersion} from ${location.origin} to ${url.origin} (cross-origin), ${posts.length} POSTs: ${names.length} tools; ${results.join('; ')}`;
  } finally {
    await session.close();
  }
}

try {
  verdictEl.textContent = await run();
} catch (e) {
  verdictEl.textContent = `FAIL ${e && e.stack ? e.stack : e}`;
}
