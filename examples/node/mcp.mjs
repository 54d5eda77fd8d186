// MCP servers as tool adapters (SPEC §9), over the C ABI's `pw_mcp_*`.
//
// Two levels:
// - `createMcpClient(options)`: the sans-IO client itself. Bytes from the server go in with
//   `feed`, the wrapper's adapter frames with `handleFrame`, the end of the transport with
//   `handleClosed`, the time with `handleTimeout` (at `pollTimeout`); lines for the server come
//   out of `pollTransmit`, frames for the adapter calls out of `pollFrame`, the start-up, the
//   listed tools and notifications out of `pollEvent`. After every input, drain all three. It
//   keeps no clock: `start(now)` and `handleTimeout(now)` are given the host's.
// - `connectMcpServer(command, args, options)`: the server as a child process
//   (`child_process.spawn`), driven by its stdout's `data` events (its exit is the transport's
//   end), started and listed; its tools become adapter tools of `createToolAdapterWrapper`
//   (`server.wrap(model)`, or `server.run(frames)` / `server.call(name, args)`), whose timers
//   (`setTimeout` at the library's deadline, moved by the server's progress) time calls out.
//   The start-up's `server/discover` is timed the same way (`setTimeout` at the client's
//   `pollTimeout`). `createMcpSession(send, options)` is the same over any transport
//   (`send(line)` writes one).
// - `connectMcpServer({ url, ...options })`: the same over Streamable HTTP (SPEC §9.11) with
//   `fetch` alone (Node and browsers): the client (made with `streams`) hands out POSTs
//   (`pollRequest`), each made as one `fetch` whose response body is read as a stream and
//   fed as it comes (`handleResponse`, `feedResponse`, `handleResponseEnd`); a stream the
//   client closes aborts its `fetch` (`McpHttpSession`).
import { C, ENUMS, PW, OutBuf, Stable, alignOffset, deadline, strOf, resultText, utf8, withCode } from './binding.mjs';
import { realClock, clockOf } from './clock.mjs';
import { createDuplex } from './duplex.mjs';
import { memberText, objectOf, raw, rawText } from './raw.mjs';
import { checkSchema, createToolAdapterWrapper } from './wrapper.mjs';

// node:child_process only in Node: in a browser the client, `createMcpSession` (any
// transport) and `connectMcpServer({ url })` (HTTP) work, and `connectMcpServer(command)` (a
// child over stdio) says it needs Node.
const childProcess = globalThis.process?.versions?.node ? await import('node:child_process') : null;

// ------------------------------------------------------------ codes and errors

/** The MCP client's own result codes (`pw_result` 500-513; 502 is retired: a name too long is
 * `PW_NAME_TOO_LONG`, 302, as everywhere). */
export const McpCode = Object.freeze({
  NOT_ADAPTER_FRAME: PW.MCP_NOT_ADAPTER_FRAME,
  NO_NAME: PW.MCP_NO_NAME,
  DUPLICATE_CALL: PW.MCP_DUPLICATE_CALL,
  UNKNOWN_CALL: PW.MCP_UNKNOWN_CALL,
  OUTBOX_FULL: PW.MCP_OUTBOX_FULL,
  FRAME_PENDING: PW.MCP_FRAME_PENDING,
  ALREADY_STARTED: PW.MCP_ALREADY_STARTED,
  CLIENT_INFO_TOO_LONG: PW.MCP_CLIENT_INFO_TOO_LONG,
  NOT_HTTP: PW.MCP_NOT_HTTP,
  UNKNOWN_STREAM: PW.MCP_UNKNOWN_STREAM,
  HEAD_TWICE: PW.MCP_HEAD_TWICE,
  NO_HEAD: PW.MCP_NO_HEAD,
  POLL_FIRST: PW.MCP_POLL_FIRST,
});
/**
 * A refusal of the MCP client (or another `pw_result` it returned): `code` is its C name
 * (`'PW_MCP_OUTBOX_FULL'`), `errno` the number. Nothing changed in the client.
 */
export class McpError extends Error {
  /** @param {string} what @param {number} code */
  constructor(what, code) {
    super(`${what}: ${resultText(code)}`);
    this.name = 'McpError';
    withCode(this, code);
  }
}

/** The start-up failed, or the server could not be started (`event`: the `startFailed` event). */
export class McpStartupError extends Error {
  constructor(message, event = null) {
    super(message);
    this.name = 'McpStartupError';
    /** @type {McpEvent | null} */
    this.event = event;
  }
}

const check = (what, r) => {
  if (r !== PW.OK) throw new McpError(what, r);
};

// ------------------------------------------------------------ the client

/**
 * The values of the header's enum `name` by number, as JS names them: the member's name after
 * `prefix` in camelCase (`PW_MCP_SKIP_NAME_TOO_LONG` → `'nameTooLong'`), null for `_NONE`.
 */
function namesOf(name, prefix) {
  const names = [];
  for (const [k, v] of Object.entries(ENUMS[name] ?? {})) {
    const rest = k.slice(prefix.length).toLowerCase();
    names[v] = rest === 'none' ? null : rest.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  }
  return names;
}
const STATES = namesOf('pw_mcp_client_state', 'PW_MCP_STATE_');
const SKIPS = namesOf('pw_mcp_skip', 'PW_MCP_SKIP_');
const START_ERRORS = namesOf('pw_mcp_start_error', 'PW_MCP_START_');
const HANDLED = namesOf('pw_mcp_handled_kind', 'PW_MCP_HANDLED_');
const FAILURES = namesOf('pw_mcp_failure', 'PW_MCP_FAILURE_');

/** `revision` as JS writes it → `pw_mcp_config.revision`. */
const REVISIONS = Object.freeze({
  auto: PW.MCP_REVISION_AUTO,
  '2025-11-25': PW.MCP_REVISION_2025_11_25,
  '2026-07-28': PW.MCP_REVISION_2026_07_28,
});
const revisionName = (v) => Object.keys(REVISIONS).find((k) => REVISIONS[k] === v) ?? null;

/**
 * @typedef {object} McpLimits capacities of the client (`pw_mcp_config`; defaults of
 *   `pw_mcp_config_default`)
 * @property {number} [lineCap] bytes of the longest line the server may send
 * @property {number} [outboxCap] bytes of lines waiting to go to the server (at least 396)
 * @property {number} [nameCap] bytes of a tool name
 * @property {number} [cursorCap] bytes of a `tools/list` cursor
 * @property {number} [maxDepth] JSON depth limit of the server's lines
 *
 * @typedef {{ slot: number, index: number }} McpHandle a call, as the host names it (unique
 *   among the calls in flight; a wrapper's call handle does)
 *
 * @typedef {'auto' | '2025-11-25' | '2026-07-28'} McpRevision which revision the client speaks:
 *   `'auto'` sends `server/discover` first and speaks 2026-07-28 to a server that lists it,
 *   the `initialize` handshake (2025-11-25) to one that refuses it or does not answer within
 *   `startTimeoutMs`; the others fix one (SPEC §9.9)
 *
 * @typedef {{ type: 'initialized', protocolVersion: string, result: string }
 *   | { type: 'tool', name: string, tool: string }
 *   | { type: 'toolSkipped', reason: 'nameTooLong' | 'noName', tool: string, len: number, cap: number }
 *   | { type: 'ready', tools: number }
 *   | { type: 'toolsChanged', tools: number }
 *   | { type: 'startFailed', error: 'unsupportedVersion' | 'badResult' | 'refused' | 'cursorTooLong' | 'tooManyPages' | 'responseTooLarge' | 'noAnswer' | 'noResponse', raw: string, len: number }
 *   | { type: 'notification', method: string, params: string | null, methodCut: boolean }} McpEvent
 *   what the client tells the host (raw JSON as the server sent it, as text): `initialized`
 *   carries the `initialize` or `server/discover` result; `startFailed` `noResponse` (over
 *   HTTP) has the status in `len` (0: no response at all); `toolsChanged` ends a listing again
 *   after `notifications/tools/list_changed`, its `tools` the last `tool` events (the whole
 *   list now)
 *
 * @typedef {object} McpHandled what `handleFrame` did
 * @property {'sent' | 'failed' | 'cancelled'} kind
 * @property {number} request for `sent`: the JSON-RPC id, also the progress token
 * @property {null | 'closed' | 'notStarted' | 'argsNotObject' | 'tooMany' | 'requestTooLong' | 'responseTooLong' | 'responseTooDeep' | 'noOutcome' | 'inputRequired' | 'http'} failure
 *   for `failed`: why (its `ERROR` waits in `pollFrame`)
 * @property {number} limit the failure's limit (slots, outbox room, ...; for `http` the status), else 0
 * @property {number} len for `requestTooLong`: the line's length, else 0
 * @property {boolean} notified for `cancelled`: `notifications/cancelled` was queued
 *
 * @typedef {{ slot: number, index: number, frame: string }} McpFrame a frame for a call's adapter
 *
 * @typedef {object} McpStats what the client counted (`pw_mcp_stats`)
 * @property {number} lines @property {number} notJson @property {number} notJsonrpc
 * @property {number} tooLong @property {number} tooDeep @property {number} unknownId
 * @property {number} late @property {number} unknownProgress @property {number} pings
 * @property {number} refusedRequests @property {number} notifications @property {number} calls
 * @property {number} answered @property {number} failed
 */

/**
 * @typedef {{ type: 'post', stream: number, body: string, headers: Array<[string, string]> }
 *   | { type: 'close', stream: number }} McpRequest what `pollRequest` asks of an HTTP host:
 *   POST `body` with `headers` (the revision's, in order) and report its response as
 *   `stream`; or close `stream`'s response (a cancelled 2026-07-28 call)
 *
 * @typedef {McpSessionOptions & { url: string | URL, fetch?: typeof fetch, headers?: Record<string, string> | Array<[string, string]>, streams?: number, startupTimeoutMs?: number }} McpHttpOptions
 *   `connectMcpServer({ url })`'s options: `fetch` (the global one by default), `headers`
 *   sent with every POST (authorization...; the protocol's own win), `streams` (responses read
 *   at once: `maxPending` + 2 by default), `startupTimeoutMs` (as over stdio)
 */

/** A clock reading given to the client: whole milliseconds, at least 0. */
function millis(what, now) {
  if (!Number.isSafeInteger(now) || now < 0) throw new TypeError(`${what}: now ${now}: whole milliseconds of the host's clock, at least 0`);
  return now;
}

const encoder = new TextEncoder();
const toBytes = (v) => (v instanceof Uint8Array ? v : encoder.encode(typeof v === 'string' ? v : rawText(v)));
/** `a` then `b`, as one Uint8Array. */
function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function configOf(limits = {}, revision, startTimeoutMs) {
  const cfg = {};
  C.mcpConfigDefault(cfg);
  if (revision !== undefined) {
    if (!Object.hasOwn(REVISIONS, revision)) throw new TypeError(`createMcpClient: revision ${JSON.stringify(revision)}: one of ${Object.keys(REVISIONS).join(', ')}`);
    cfg.revision = REVISIONS[revision];
  }
  if (startTimeoutMs !== undefined) {
    if (!Number.isInteger(startTimeoutMs) || startTimeoutMs < 0 || startTimeoutMs > 0xffffffff) {
      throw new TypeError(`createMcpClient: startTimeoutMs ${startTimeoutMs}: whole milliseconds, 0 to 4294967295`);
    }
    cfg.start_timeout_ms = startTimeoutMs;
  }
  if (limits.lineCap !== undefined) cfg.line_cap = limits.lineCap;
  if (limits.outboxCap !== undefined) cfg.outbox_cap = limits.outboxCap;
  if (limits.nameCap !== undefined) cfg.name_cap = limits.nameCap;
  if (limits.cursorCap !== undefined) cfg.cursor_cap = limits.cursorCap;
  if (limits.maxDepth !== undefined) cfg.max_depth = limits.maxDepth;
  return cfg;
}

/** The MCP client (`pw_mcp`) in one block of stable memory. See `createMcpClient`. */
export class McpClient {
  constructor({ calls = 8, streams, limits, fit, name = 'polyweave-node', version = '0.1.0', revision, startTimeoutMs } = {}) {
    const cfg = configOf(limits, revision, startTimeoutMs);
    if (fit) {
      const w = {};
      C.wrapperConfigDefault(w);
      if (fit.nameCap !== undefined) w.name_cap = fit.nameCap;
      if (fit.maxDepth !== undefined) w.max_depth = fit.maxDepth;
      check('createMcpClient: fit', C.mcpConfigFit(cfg, w));
    }
    const http = streams !== undefined;
    if (http && (!Number.isInteger(streams) || streams < 1 || streams > 0xffff)) {
      throw new TypeError(`createMcpClient: streams ${streams}: a whole number of responses read at once, 1 to 65535`);
    }
    const size = [0];
    check('createMcpClient: limits', http ? C.mcpHttpSize(cfg, calls, streams, size) : C.mcpSize(cfg, calls, size));
    const lens = [0];
    check('createMcpClient: limits', C.mcpMaxFrameLen(cfg, lens));
    /** The longest frame `pollFrame` can give. */
    this.maxFrameLen = Number(lens[0]);
    check('createMcpClient: limits', C.mcpMaxLineLen(cfg, lens));
    /** The longest line `pollTransmit` can give (LF included). */
    this.maxLineLen = Number(lens[0]);
    /** The capacities in force (`McpLimits`). */
    this.limits = Object.freeze({
      lineCap: Number(cfg.line_cap),
      outboxCap: Number(cfg.outbox_cap),
      nameCap: Number(cfg.name_cap),
      cursorCap: Number(cfg.cursor_cap),
      maxDepth: cfg.max_depth,
    });
    /** @type {McpRevision} the revision asked for (`'auto'` by default) */
    this.revision = revisionName(cfg.revision);
    /** Milliseconds `server/discover` may go unanswered (`pw_mcp_config_default`'s by default). */
    this.startTimeoutMs = cfg.start_timeout_ms;
    const align = Number(C.mcpAlign());
    this._mem = new Stable(Number(size[0]) + align);
    /** Responses read at once over Streamable HTTP (`streams`); null for a line client. */
    this.streams = http ? streams : null;
    /** The longest header lines `pollRequest` can give (0 for a line client). */
    this.maxHeadersLen = 0;
    if (http) {
      check('createMcpClient: limits', C.mcpMaxHeadersLen(cfg, lens));
      this.maxHeadersLen = Number(lens[0]);
    }
    const out = [0];
    const mem = this._mem.at(alignOffset(this._mem.ptr, align));
    const r = http
      ? C.mcpHttpInit(mem, Number(size[0]), cfg, calls, streams, String(name), String(version), out)
      : C.mcpInit(mem, Number(size[0]), cfg, calls, String(name), String(version), out);
    if (r !== PW.OK) {
      this._mem.free();
      throw new McpError('createMcpClient', r);
    }
    this._c = out[0];
    this._line = new OutBuf(Math.min(this.maxLineLen, 65536));
    this._frame = new OutBuf(Math.min(this.maxFrameLen, 65536));
    this._headers = http ? new OutBuf(this.maxHeadersLen) : null;
    this._len = [0];
  }

  _ptr() {
    if (this._c === null) throw new Error('polyweave: this MCP client is closed');
    return this._c;
  }

  /** Frees the client's memory; any later use throws. Idempotent. */
  close() {
    if (this._c === null) return;
    this._c = null;
    this._mem.free();
    this._line.free();
    this._frame.free();
    this._headers?.free();
    this._schemas?.free();
    this._schemas = null;
  }

  /**
   * Registers the output schemas results are checked against (SPEC §11), replacing the
   * earlier ones (`[]` removes them): a result whose `structuredContent` does not satisfy its
   * tool's schema fails the call with `Tool <name> returned a result that does not match its
   * output schema: <where>: <why>`. `schemas`: `{ tool, schema }` pairs, `tool` the name calls
   * are made under, `schema` a JSON string, `raw(text)` or an object. A schema the validator
   * refuses throws `PW_BAD_SCHEMA` (with `tool`, `kind`, `offset`) and changes nothing.
   * @param {Array<{ tool: string, schema: unknown }>} schemas
   */
  setOutputSchemas(schemas) {
    const c = this._ptr();
    const given = schemas.map(({ tool, schema }) => [String(tool), typeof schema === 'string' ? schema : rawText(schema)]);
    const texts = given.map(([tool, text]) => [utf8(tool), utf8(text)]);
    const size = [0];
    check('setOutputSchemas', C.mcpOutputSchemasSize(texts.length, size));
    const align = PW.MAX_ALIGN;
    const textLen = texts.reduce((n, [a, b]) => n + a.length + b.length, 0);
    // One block the client keeps using: the names and schemas, then its own memory.
    const block = new Stable(textLen + align + Number(size[0]));
    const entries = [];
    let at = 0;
    for (const [name, schema] of texts) {
      block.write(at, name);
      block.write(at + name.length, schema);
      entries.push({ tool: { ptr: block.at(at), len: name.length }, schema: { ptr: block.at(at + name.length), len: schema.length } });
      at += name.length + schema.length;
    }
    const mem = block.at(at) + alignOffset(block.at(at), align);
    const r = C.mcpSetOutputSchemas(c, mem, Number(size[0]), entries, entries.length);
    if (r !== PW.OK) {
      block.free();
      // The library says only PW_BAD_SCHEMA: which one, why and where, from the first it refuses.
      for (const [tool, text] of r === PW.BAD_SCHEMA ? given : []) {
        try {
          checkSchema(text);
        } catch (e) {
          e.message = `setOutputSchemas: the output schema of tool ${JSON.stringify(tool)}: ${e.message}`;
          e.tool = tool;
          throw e;
        }
      }
      throw new McpError('setOutputSchemas', r);
    }
    this._schemas?.free();
    this._schemas = block;
  }

  /**
   * Begins the start-up at `now` (milliseconds of the host's clock): `server/discover` goes
   * out at the next `pollTransmit` (`initialize` with revision `'2025-11-25'`), and
   * `pollTimeout` says until when it may go unanswered.
   * @param {number} now
   */
  start(now) {
    check('start', C.mcpStart(this._ptr(), millis('start', now)));
  }

  /**
   * When the start-up's `server/discover` counts as unanswered (milliseconds of the clock
   * `start` was given), while it is awaited: call `handleTimeout` then. Null otherwise.
   * @returns {number | null}
   */
  pollTimeout() {
    const d = deadline(C.mcpPollTimeout(this._ptr()));
    return d === Infinity ? null : d;
  }

  /**
   * The time is `now`: a `server/discover` unanswered past its deadline makes the client send
   * `initialize` (fixed to `'2026-07-28'`, the start-up fails with `noAnswer`). Drain the
   * outputs after it.
   * @param {number} now
   */
  handleTimeout(now) {
    check('handleTimeout', C.mcpHandleTimeout(this._ptr(), millis('handleTimeout', now)));
  }

  /** The revision spoken, once the server said (`'2026-07-28'`, or `initialize`'s), else null. @returns {string | null} */
  get protocolVersion() {
    return C.mcpProtocolVersion(this._ptr());
  }

  /**
   * Bytes from the server (a Buffer or a string), from offset `start`: returns how many it took
   * (up to the end of one line; none while what the last line owes is not polled out).
   * @param {Buffer | string} bytes @param {number} [start] @returns {number}
   */
  feed(bytes, start = 0) {
    const b = toBytes(bytes).subarray(start);
    const n = [0];
    check('feed', C.mcpFeed(this._ptr(), b, n));
    return Number(n[0]);
  }

  /**
   * A frame the wrapper routed to a call's adapter (`TOOL_CALL` or `CANCEL`; an object, its
   * JSON text or a Buffer). Throws `McpError` for a refusal (nothing changed).
   * @param {McpHandle} handle @param {object | string | Buffer} frame @returns {McpHandled}
   */
  handleFrame(handle, frame) {
    const b = toBytes(frame);
    const h = {};
    check('handleFrame', C.mcpHandleFrame(this._ptr(), handle.slot, handle.index, b, h));
    return {
      kind: HANDLED[h.kind],
      request: Number(h.request),
      failure: FAILURES[h.failure],
      limit: Number(h.limit),
      len: Number(h.len),
      notified: h.notified === 1,
    };
  }

  /** The transport closed: every call in flight fails, later ones at once. Poll their frames. */
  handleClosed() {
    check('handleClosed', C.mcpHandleClosed(this._ptr()));
  }

  /** The next line for the server (LF included), or null. @returns {string | null} */
  pollTransmit() {
    for (;;) {
      const r = C.mcpPollTransmit(this._ptr(), this._line.ptr, this._line.cap, this._len);
      if (r === PW.NOTHING) return null;
      if (r === PW.BUFFER_TOO_SMALL) {
        this._line.grow(this._len[0]);
        continue;
      }
      check('pollTransmit', r);
      return this._line.text(this._len[0]);
    }
  }

  // ---- Streamable HTTP (SPEC §9.11): a client made with `streams`

  /**
   * The next POST to make, or a response stream to close (a cancelled 2026-07-28 call: abort
   * its request, read nothing more of it), or null (nothing to send, or no stream free).
   * `headers` are the revision's, as `[name, value]` pairs in the client's order.
   * @returns {McpRequest | null}
   */
  pollRequest() {
    const p = {};
    for (;;) {
      const r = C.mcpPollRequest(this._ptr(), this._line.ptr, this._line.cap, this._headers.ptr, this._headers.cap, p);
      if (r === PW.NOTHING) return null;
      if (r === PW.BUFFER_TOO_SMALL && Number(p.body_len) > this._line.cap) {
        // The header room is the client's bound: only the body can be short.
        this._line.grow(Number(p.body_len));
        continue;
      }
      check('pollRequest', r);
      if (p.kind === PW.MCP_POST_CLOSE) return { type: 'close', stream: p.stream };
      const lines = this._headers.text(Number(p.headers_len));
      const headers = lines
        .split('\r\n')
        .filter((l) => l !== '')
        .map((l) => {
          const at = l.indexOf(': ');
          return [l.slice(0, at), l.slice(at + 2)];
        });
      return { type: 'post', stream: p.stream, body: this._line.text(Number(p.body_len)), headers };
    }
  }

  /**
   * The head of stream `stream`'s response: its status, `Content-Type` (a string, '' when
   * none) and `Mcp-Session-Id` (null when none). Throws `McpError` `PW_MCP_POLL_FIRST` while
   * the outputs are not drained (nothing changed: drain them, then give it again).
   * @param {number} stream @param {number} status @param {string} contentType @param {string | null} [sessionId]
   */
  handleResponse(stream, status, contentType, sessionId = null) {
    const session = sessionId === null || sessionId === undefined ? null : toBytes(sessionId);
    check('handleResponse', C.mcpHandleResponse(this._ptr(), stream, status, toBytes(contentType ?? ''), session));
  }

  /**
   * Bytes of stream `stream`'s body, from offset `start`: returns how many it took (fewer,
   * even none, while another stream's message is unfinished or the outputs are not drained:
   * keep the rest and give it again after draining).
   * @param {number} stream @param {Uint8Array | string} bytes @param {number} [start] @returns {number}
   */
  feedResponse(stream, bytes, start = 0) {
    const b = toBytes(bytes).subarray(start);
    const n = [0];
    check('feedResponse', C.mcpFeedResponse(this._ptr(), stream, b, n));
    return Number(n[0]);
  }

  /**
   * Stream `stream`'s response ended, whole or broken (or, before its head, the request got
   * no response): a call it did not answer fails. Throws `McpError` `PW_MCP_POLL_FIRST` as
   * `handleResponse` does.
   * @param {number} stream
   */
  handleResponseEnd(stream) {
    check('handleResponseEnd', C.mcpHandleResponseEnd(this._ptr(), stream));
  }

  /** Drains the requests. @returns {Generator<McpRequest>} */
  *requests() {
    for (let r; (r = this.pollRequest()) !== null; ) yield r;
  }

  /** The next frame for a call's adapter, or null. @returns {McpFrame | null} */
  pollFrame() {
    const f = {};
    for (;;) {
      const r = C.mcpPollFrame(this._ptr(), this._frame.ptr, this._frame.cap, f);
      if (r === PW.NOTHING) return null;
      if (r === PW.BUFFER_TOO_SMALL) {
        this._frame.grow(f.len);
        continue;
      }
      check('pollFrame', r);
      return { slot: f.slot, index: f.index, frame: this._frame.text(f.len) };
    }
  }

  /** The next event, or null. @returns {McpEvent | null} */
  pollEvent() {
    const e = {};
    const r = C.mcpPollEvent(this._ptr(), e);
    if (r === PW.NOTHING) return null;
    check('pollEvent', r);
    switch (e.kind) {
      case PW.MCP_EVENT_INITIALIZED:
        return { type: 'initialized', protocolVersion: strOf(e.version), result: strOf(e.raw) };
      case PW.MCP_EVENT_TOOL:
        return { type: 'tool', name: strOf(e.name), tool: strOf(e.raw) };
      case PW.MCP_EVENT_TOOL_SKIPPED:
        return { type: 'toolSkipped', reason: SKIPS[e.skip], tool: strOf(e.raw), len: Number(e.len), cap: Number(e.cap) };
      case PW.MCP_EVENT_READY:
        return { type: 'ready', tools: e.tools };
      case PW.MCP_EVENT_TOOLS_CHANGED:
        return { type: 'toolsChanged', tools: e.tools };
      case PW.MCP_EVENT_START_FAILED:
        return { type: 'startFailed', error: START_ERRORS[e.start_error], raw: strOf(e.raw), len: Number(e.len) };
      case PW.MCP_EVENT_NOTIFICATION:
        return { type: 'notification', method: strOf(e.method), params: e.has_params ? strOf(e.params) : null, methodCut: e.method_cut === 1 };
      default:
        throw new Error(`polyweave: pw_mcp_poll_event handed out event kind ${e.kind}, which this package does not know`);
    }
  }

  /** Drains the lines. @returns {Generator<string>} */
  *transmits() {
    for (let l; (l = this.pollTransmit()) !== null; ) yield l;
  }

  /** Drains the frames. @returns {Generator<McpFrame>} */
  *frames() {
    for (let f; (f = this.pollFrame()) !== null; ) yield f;
  }

  /** Drains the events. @returns {Generator<McpEvent>} */
  *events() {
    for (let e; (e = this.pollEvent()) !== null; ) yield e;
  }

  /** @returns {'idle' | 'starting' | 'ready' | 'failed' | 'closed'} */
  get state() {
    const s = [0];
    check('state', C.mcpState(this._ptr(), s));
    return STATES[s[0]];
  }

  /** Calls waiting for the server, or with frames not yet polled. */
  get inFlight() {
    return Number(C.mcpInFlight(this._ptr()));
  }

  /** Lines waiting for `pollTransmit`. */
  get queued() {
    return Number(C.mcpQueued(this._ptr()));
  }

  /** @returns {McpStats} */
  stats() {
    const s = {};
    check('stats', C.mcpStats(this._ptr(), s));
    return {
      lines: Number(s.lines),
      notJson: s.not_json,
      notJsonrpc: s.not_jsonrpc,
      tooLong: s.too_long,
      tooDeep: s.too_deep,
      unknownId: s.unknown_id,
      late: s.late,
      unknownProgress: s.unknown_progress,
      pings: s.pings,
      refusedRequests: s.refused_requests,
      notifications: s.notifications,
      calls: Number(s.calls),
      answered: Number(s.answered),
      failed: Number(s.failed),
    };
  }
}

// `using x = ...` (explicit resource management) closes it, where the engine has the symbol.
if (typeof Symbol.dispose === 'symbol') McpClient.prototype[Symbol.dispose] = McpClient.prototype.close;

/**
 * A raw MCP client (SPEC §9): no I/O, no clock. With `streams` (the most responses read at
 * once, 1 to 65535) a client over Streamable HTTP (`pollRequest`, `handleResponse`,
 * `feedResponse`, `handleResponseEnd` instead of `pollTransmit`, `feed`, `handleClosed`).
 * `calls`: the most calls in flight (8);
 * `limits`: its capacities (`McpLimits`); `fit: { nameCap, maxDepth }`: a wrapper's, so every
 * name and frame fits it (`pw_mcp_config_fit`); `name` / `version`: its `clientInfo` (at most
 * 64 bytes each); `revision` (`McpRevision`, `'auto'`) and `startTimeoutMs` (how long
 * `server/discover` may go unanswered; `pw_mcp_config_default`'s when left out). `close()`
 * frees it.
 * @param {{ calls?: number, streams?: number, limits?: McpLimits, fit?: { nameCap?: number, maxDepth?: number }, name?: string, version?: string, revision?: McpRevision, startTimeoutMs?: number }} [options]
 * @returns {McpClient}
 */
export function createMcpClient(options = {}) {
  return new McpClient(options);
}

// ------------------------------------------------------------ a session: the client, a transport, wrappers

// The wrapper's capacities here (index.mjs's defaults for name and args, whose outbox they size).
const NAME_CAP = 256;
const ARGS_CAP = 16384;
const MAX_PENDING = 32;

/**
 * @typedef {object} McpSessionOptions
 * @property {number} [timeoutMs] a call times out after this long without progress (the wrapper's default, `pw_wrapper_config_default`)
 * @property {number} [maxTotalTimeoutMs] and never later than this after it started (the wrapper's default: progress restarts nothing)
 * @property {string[]} [extraTools] names registered too, unlisted, so calls to them reach the server
 * @property {number} [maxPending] calls in flight at once, the wrappers' and the client's (32)
 * @property {object} [limits] the wrappers' capacities (`createToolAdapterWrapper`'s `limits`)
 * @property {McpLimits} [clientLimits] the client's (line 1 MiB, an outbox for every pending call)
 * @property {{ name?: string, version?: string }} [clientInfo]
 * @property {McpRevision} [revision] the revision to speak (`'auto'`: `server/discover` first, then `initialize` if the server refuses it or is silent)
 * @property {number} [startTimeoutMs] how long `server/discover` may go unanswered before `initialize` goes out (`pw_mcp_config_default`'s, 10000)
 * @property {(direction: 'send' | 'recv', data: string | Buffer) => void} [onWire] sees every line sent and chunk received
 * @property {boolean} [validate] check calls' args against each listed tool's `inputSchema` and results'
 *   `structuredContent` against its `outputSchema` (SPEC §11); true by default
 * @property {(tools: Array<{ name: string, tool: object }>) => void} [onToolsChanged] the server's tools changed and were listed again: the new list (also in `session.tools` from now on)
 * @property {{ now(): number }} [clock] test-only: a manual clock (milliseconds); then no timer fires by itself, `session.tick()` gives it, and the session's wrappers get it too
 *
 * @typedef {{ to: 'model' | 'consumer', frame: object } | { rejected: string, frame: unknown, error: Error }} Sent
 *   what a wrapper sent in `run` (frames as objects; `rawText(frame)` is their exact text)
 */

/** The client over a transport, its listed tools served to any number of wrappers. */
export class McpSession {
  /**
   * @param {((line: string) => void) | null} send @param {McpSessionOptions} [options]
   * @param {object | null} [http] Streamable HTTP's part (McpHttpSession's): `{ streams, ... }`
   */
  constructor(send, options = {}, http = null) {
    this.options = options;
    // Left out, the wrappers' own defaults (the C library's) apply.
    this.timeoutMs = options.timeoutMs;
    this.maxTotalTimeoutMs = options.maxTotalTimeoutMs;
    this.maxPending = options.maxPending ?? MAX_PENDING;
    const nameCap = options.limits?.nameCap ?? NAME_CAP;
    const argsCap = options.limits?.argsCap ?? ARGS_CAP;
    const clientLimits = {
      lineCap: 1 << 20,
      // Room for every call's tools/call (args and name escaped) or its notifications/cancelled.
      outboxCap: this.maxPending * (argsCap + 6 * nameCap + 256 + PW.MCP_MIN_OUTBOX + 12),
      cursorCap: 4096,
      ...(options.clientLimits ?? {}),
    };
    /** The raw client. */
    this.client = createMcpClient({
      calls: this.maxPending,
      ...(http === null ? {} : { streams: http.streams }),
      limits: clientLimits,
      fit: { nameCap, maxDepth: options.maxDepth },
      name: options.clientInfo?.name,
      version: options.clientInfo?.version,
      revision: options.revision,
      startTimeoutMs: options.startTimeoutMs,
    });
    const manual = clockOf(options);
    this._manual = manual !== null;
    /** The clock the start-up is timed by (`options.clock`, else a monotonic one). */
    this.clock = manual ?? realClock;
    /**
     * @type {Array<{ name: string, tool: object }>} the listed tools, parsed (each carries its
     * exact text: `rawText(tool)`, so `{ mcp: tool }` declares it as sent), in the server's
     * order; replaced by the new list when the server's tools change
     */
    this.tools = [];
    /** @type {object | null} the `initialize` or `server/discover` result, parsed */
    this.serverInfo = null;
    /** @type {string | null} the revision spoken, once the server said (`'2026-07-28'`, `'2025-11-25'`...) */
    this.protocolVersion = null;
    /** @type {Array<Extract<McpEvent, { type: 'notification' }>>} every notification other than progress */
    this.notifications = [];
    /** Whether listed tools' schemas are checked (SPEC §11): `options.validate`, true by default. */
    this.validate = options.validate ?? true;
    /**
     * @type {Array<{ tool: string, schema: 'inputSchema' | 'outputSchema', kind: string, offset: number }>}
     * the listed schemas the validator refuses: those tools run unchecked on that side (SPEC §11)
     */
    this.unchecked = [];
    this._inputSchemas = new Map(); // tool name -> its inputSchema's text, when checked
    this._send = send;
    this._http = http;
    this._fifo = []; // frames for the client, in order: { handle, bytes }
    this._calls = new Map(); // `${slot}:${index}` -> the call's duplex
    this._next = 0; // handle index of the next call
    this._callIds = 0;
    this._rx = new Uint8Array(0);
    this._rxOff = 0;
    this._pumping = false;
    this._again = false;
    this._closed = false;
    this._disposed = false;
    this._settle = null;
    this._listed = false; // the start-up's listing is done: later `tool` events are a new list
    this._relisted = []; // the `tool` events of a listing again, until its `toolsChanged`
    this._timer = null;
    this._timerAt = Infinity;
    /** Resolves with this session when the tools are listed; rejects with `McpStartupError`. */
    this.ready = new Promise((resolve, reject) => {
      this._settle = { resolve, reject };
    });
    this.ready.catch(() => {}); // a rejection nobody awaits is not unhandled
    this.client.start(this.clock.now());
    this._pump();
  }

  /**
   * Gives the clock now: a `server/discover` unanswered past its deadline makes the client fall
   * back to `initialize` (or fail the start-up with revision `'2026-07-28'`). With
   * `clock: { now() }` the only way time passes; otherwise a timer calls it.
   */
  tick() {
    if (this._disposed) return;
    // The client decides nothing while what the last line owes is not polled out: a pump
    // drains it, so a second try is the last one needed.
    for (let tries = 0; tries < 2; tries++) {
      const now = this.clock.now();
      this.client.handleTimeout(now);
      this._pump();
      if (this._disposed) return;
      const d = this.client.pollTimeout();
      if (d === null || d > now) return;
    }
  }

  /**
   * Arms the timer at the client's start-up deadline, or clears it when there is none. Not
   * unref'd, as the wrappers' timers: what the deadline decides (the fallback to `initialize`,
   * or a failed start-up) settles `ready`, which someone may be waiting for.
   */
  _arm() {
    if (this._manual || this._disposed) return;
    const d = this.client.pollTimeout() ?? Infinity;
    if (d === this._timerAt && this._timer !== null) return;
    this._clearTimer();
    if (d === Infinity) return;
    this._timerAt = d;
    this._timer = setTimeout(() => {
      this._timer = null;
      this._timerAt = Infinity;
      this.tick();
    }, Math.max(0, d - this.clock.now()));
  }

  _clearTimer() {
    if (this._timer !== null) clearTimeout(this._timer);
    this._timer = null;
    this._timerAt = Infinity;
  }

  /** Whether the transport closed (`handleClosed`). */
  get closed() {
    return this._closed;
  }

  /** Bytes from the server. @param {Buffer | string} chunk */
  receive(chunk) {
    if (this._closed || this._disposed) return;
    const b = toBytes(chunk);
    this.options.onWire?.('recv', b);
    this._rx = this._rxOff < this._rx.length ? concat(this._rx.subarray(this._rxOff), b) : b;
    this._rxOff = 0;
    this._pump();
  }

  /** The transport closed: calls in flight fail with `... the MCP server closed the connection`. */
  handleClosed() {
    if (this._closed || this._disposed) return;
    this._closed = true;
    this._rx = new Uint8Array(0);
    this._rxOff = 0;
    this.client.handleClosed();
    this._pump();
    this._startFailed(new McpStartupError('the MCP server closed its output before listing its tools'));
  }

  _startFailed(err) {
    if (this._settle === null) return;
    const { reject } = this._settle;
    this._settle = null;
    reject(err);
  }

  /**
   * The server's tools (and `extraTools`) as `createToolAdapterWrapper` tools:
   * `{ [name]: { adapter: (ctx) => duplex } }`, one duplex per call.
   */
  adapterTools() {
    const names = [...this.tools.map((t) => t.name), ...(this.options.extraTools ?? [])];
    const tools = {};
    for (const name of names) {
      const schema = this._inputSchemas.get(name);
      tools[name] = schema === undefined ? { adapter: () => this._adapter() } : { adapter: () => this._adapter(), schema: raw(schema) };
    }
    return tools;
  }

  /**
   * Reads the listed tools' schemas (SPEC §11): each `inputSchema` goes with its adapter tool
   * (the wrapper checks a call's args before the server sees them), each `outputSchema` to the
   * client (a result's `structuredContent` is checked). A schema the validator refuses leaves
   * that side unchecked and is noted in `unchecked`. Nothing with `validate: false`.
   */
  _readSchemas() {
    this._inputSchemas = new Map();
    this.unchecked = [];
    if (!this.validate) return;
    const outputs = [];
    for (const { name, tool } of this.tools) {
      const text = rawText(tool);
      for (const member of ['inputSchema', 'outputSchema']) {
        const schema = memberText(text, member);
        if (schema === null) continue;
        try {
          checkSchema(schema);
        } catch (e) {
          this.unchecked.push({ tool: name, schema: member, kind: e.kind, offset: e.offset });
          continue;
        }
        if (member === 'inputSchema') this._inputSchemas.set(name, schema);
        else outputs.push({ tool: name, schema });
      }
    }
    this.client.setOutputSchemas(outputs);
  }

  /**
   * A wrapper (`createToolAdapterWrapper`) on `model` whose adapter tools this server serves,
   * with the session's timeouts, `maxPending` and manual clock; `options` are the wrapper's
   * (its `tools` are added to the server's). Its tools are the server's now: a wrapper made
   * before the server's tools changed keeps the list it was made with.
   */
  wrap(model, options = {}) {
    return createToolAdapterWrapper(model, {
      toolTimeoutMs: this.timeoutMs,
      maxTotalTimeoutMs: this.maxTotalTimeoutMs,
      maxPending: this.maxPending,
      limits: this.options.limits,
      ...(this.options.maxDepth === undefined ? {} : { maxDepth: this.options.maxDepth }),
      ...(this._manual ? { clock: this.clock } : {}),
      ...options,
      tools: { ...this.adapterTools(), ...(options.tools ?? {}) },
    });
  }

  /**
   * Runs model frames (objects, JSON texts or `raw(text)`) through a fresh wrapper, in order,
   * and resolves when no call is pending with what it sent to the model and the consumer (and
   * what it rejected), in order. `options` are the wrapper's.
   * @param {Iterable<unknown>} frames @param {object} [options] @returns {Promise<Sent[]>}
   */
  run(frames, options = {}) {
    return new Promise((resolve, reject) => {
      /** @type {Sent[]} */
      const sent = [];
      let fed = false;
      let done = false;
      let w = null;
      const check = () => {
        if (!fed || done) return;
        queueMicrotask(() => {
          if (done || w.pending !== 0) return;
          done = true;
          w.close();
          resolve(sent);
        });
      };
      const model = createDuplex({
        onWrite: (frame) => {
          sent.push({ to: 'model', frame });
          check();
        },
      });
      try {
        w = this.wrap(model, {
          ...options,
          onRejected: (path, frame, error, call) => {
            sent.push({ rejected: path, frame, error });
            options.onRejected?.(path, frame, error, call);
          },
        });
        w.source.pipe({
          write: (frame) => {
            sent.push({ to: 'consumer', frame });
            check();
            return true;
          },
          end: () => true,
        });
        for (const frame of frames) model.source.push(frame);
      } catch (e) {
        done = true;
        w?.close();
        reject(e);
        return;
      }
      fed = true;
      check();
    });
  }

  /**
   * Calls one tool and resolves with its result (parsed); a failed call rejects with an Error
   * whose message is the call's error.
   * @param {string} name @param {unknown} [args] @param {{ id?: string }} [options]
   */
  async call(name, args = {}, { id } = {}) {
    const callId = id ?? `node-${++this._callIds}`;
    const sent = await this.run([{ type: 'TOOL_CALL', content: { id: callId, name, args } }]);
    const r = sent.find((s) => s.to === 'model' && s.frame.type === 'TOOL_RESULT' && s.frame.content?.id === callId);
    if (!r) throw new Error(`Tool ${name}: no TOOL_RESULT`);
    if ('error' in r.frame.content) throw new Error(r.frame.content.error);
    return r.frame.content.result;
  }

  // ---- one call's adapter: a duplex the wrapper writes TOOL_CALL / CANCEL to

  _adapter() {
    const handle = { slot: 0, index: this._next++ >>> 0 };
    const duplex = createDuplex({
      onWrite: (frame) => {
        this._fifo.push({ handle, bytes: toBytes(rawText(frame)) });
        this._pump();
        return true;
      },
    });
    this._calls.set(`${handle.slot}:${handle.index}`, duplex);
    return duplex;
  }

  // ---- the pump (SPEC polling order: after every input, drain each output)

  _pump() {
    if (this._disposed) return; // a wrapper still live after close(): its frames go nowhere
    if (this._pumping) {
      this._again = true; // a frame handed in while the pump runs: taken in its next round
      return;
    }
    this._pumping = true;
    try {
      do {
        this._again = false;
        let moved = true;
        while (moved) {
          moved = this._framesToClient();
          moved = this._events() || moved;
          moved = this._framesToWrappers() || moved;
          moved = this._transmit() || moved;
          moved = this._feed() || moved;
        }
      } while (this._again);
    } finally {
      this._pumping = false;
    }
    this._arm();
  }

  _framesToClient() {
    let moved = false;
    while (this._fifo.length > 0) {
      const { handle, bytes } = this._fifo[0];
      try {
        const h = this.client.handleFrame(handle, bytes);
        if (h.kind === 'cancelled') this._calls.delete(`${handle.slot}:${handle.index}`);
      } catch (e) {
        // Taken once its lines are written, or its failure polled.
        if (e.errno === PW.MCP_OUTBOX_FULL || e.errno === PW.MCP_FRAME_PENDING) break;
        // A CANCEL for a call the client already ended: nothing to tell.
        if (e.errno !== PW.MCP_UNKNOWN_CALL) throw e;
        this._calls.delete(`${handle.slot}:${handle.index}`);
      }
      this._fifo.shift();
      moved = true;
    }
    return moved;
  }

  _events() {
    let moved = false;
    for (const e of this.client.events()) {
      moved = true;
      if (e.type === 'tool') {
        if (this._listed) this._relisted.push(e);
        else if (!this.tools.some((t) => t.name === e.name)) this.tools.push({ name: e.name, tool: objectOf(e.tool) });
      } else if (e.type === 'toolsChanged') {
        // The new list is the last `tools` of them: a listing again that failed half-way
        // handed out some before the one that ended.
        const fresh = [];
        for (const t of this._relisted.slice(this._relisted.length - e.tools)) {
          if (!fresh.some((x) => x.name === t.name)) fresh.push({ name: t.name, tool: objectOf(t.tool) });
        }
        this._relisted = [];
        this.tools = fresh;
        this._readSchemas();
        this.options.onToolsChanged?.(fresh);
      } else if (e.type === 'initialized') {
        this.serverInfo = JSON.parse(e.result);
        this.protocolVersion = e.protocolVersion;
      } else if (e.type === 'notification') {
        this.notifications.push(e);
      } else if (e.type === 'ready') {
        this._listed = true;
        this._readSchemas();
        if (this._settle !== null) {
          const { resolve } = this._settle;
          this._settle = null;
          resolve(this);
        }
      } else if (e.type === 'startFailed') {
        this._startFailed(new McpStartupError(`MCP start-up failed: ${this._startWhy(e)}`, e));
      }
    }
    return moved;
  }

  _framesToWrappers() {
    let moved = false;
    for (const f of this.client.frames()) {
      moved = true;
      const key = `${f.slot}:${f.index}`;
      const duplex = this._calls.get(key);
      if (f.frame.startsWith('{"type":"END"') || f.frame.startsWith('{"type":"ERROR"')) this._calls.delete(key);
      // Refused (false) by a call that timed out meanwhile: nothing lost.
      duplex?.source.push(raw(f.frame));
    }
    return moved;
  }

  _transmit() {
    let moved = false;
    for (const line of this.client.transmits()) {
      moved = true;
      if (this._closed) continue;
      this.options.onWire?.('send', line);
      this._send(line);
    }
    return moved;
  }

  _feed() {
    if (this._rxOff >= this._rx.length) return false;
    const n = this.client.feed(this._rx, this._rxOff);
    this._rxOff += n;
    return n > 0;
  }

  /** A failed start-up's `startFailed` event, said in words. */
  _startWhy(e) {
    const fixed = this.client.revision === '2026-07-28';
    switch (e.error) {
      case 'unsupportedVersion':
        return fixed
          ? `the server does not list 2026-07-28 in its server/discover answer: ${e.raw}`
          : `the server chose a protocol revision this client does not speak: ${e.raw}`;
      case 'badResult':
        return `the server's answer lacks what the start-up needs: ${e.raw}`;
      case 'refused':
        return `the server refused the start-up: ${e.raw}`;
      case 'cursorTooLong':
        return 'a tools/list cursor is longer than the client keeps';
      case 'tooManyPages':
        return 'the server never stops paging tools/list';
      case 'responseTooLarge':
        return "the server's answer is longer or deeper than the client reads";
      case 'noAnswer':
        return `the server did not answer server/discover within ${this.client.startTimeoutMs} ms`;
      case 'noResponse':
        return e.len !== 0 ? `the server answered HTTP ${e.len}` : `the server gave no response${this._noResponseWhy()}`;
      default:
        return `${e.error} ${e.raw}`;
    }
  }

  /** Why a request got no response, as far as the transport said (McpHttpSession's). */
  _noResponseWhy() {
    return '';
  }

  /** Frees the client; frames wrappers still send are dropped (their calls time out). */
  dispose() {
    this._disposed = true;
    this._clearTimer();
    this.client.close();
  }
}

/**
 * The MCP client over any transport: `send(line)` writes one line to the server; give it the
 * server's bytes with `session.receive(chunk)` and the transport's end with
 * `session.handleClosed()`. Await `session.ready` for the listed tools.
 * @param {(line: string) => void} send @param {McpSessionOptions} [options] @returns {McpSession}
 */
export function createMcpSession(send, options = {}) {
  return new McpSession(send, options);
}

// ------------------------------------------------------------ a server over Streamable HTTP

/** `headers` (an object, `[name, value]` pairs or a `Headers`) as pairs. */
function headerPairs(headers) {
  if (headers === undefined || headers === null) return [];
  if (typeof headers[Symbol.iterator] === 'function') return [...headers].map(([k, v]) => [String(k), String(v)]);
  return Object.entries(headers).map(([k, v]) => [k, String(v)]);
}

/**
 * An MCP server over Streamable HTTP (SPEC §9.11), through `fetch` only (so in a browser too,
 * against a server that allows the page's origin): one `fetch` POST per message the client
 * gives, its response's body read as a stream (`response.body.getReader()`) and fed chunk by
 * chunk as it comes; a stream the client closes (a cancelled 2026-07-28 call) aborts its
 * `fetch`. See `connectMcpServer({ url })`.
 */
export class McpHttpSession extends McpSession {
  /** @param {string | URL} url @param {McpHttpOptions} [options] */
  constructor(url, options = {}) {
    const fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== 'function') throw new TypeError('polyweave: MCP over HTTP needs fetch (Node >= 18, a browser) or options.fetch');
    const maxPending = options.maxPending ?? MAX_PENDING;
    // A stream per call in flight, one for a listing again and one for a reply or notification:
    // a server's ping inside a response is answered even when every call waits.
    const streams = options.streams ?? maxPending + 2;
    super(null, options, { url: String(url), fetch: fetchFn, extra: headerPairs(options.headers), streams, open: new Map(), why: null });
    /** The MCP endpoint. */
    this.url = String(url);
  }

  // ---- the pump's transport steps (McpSession's `_pump` calls them)

  /** POSTs the client's requests, aborts the streams it closes. */
  _transmit() {
    let moved = false;
    for (const r of this.client.requests()) {
      moved = true;
      if (r.type === 'close') this._abort(this._http.open.get(r.stream));
      else this._post(r);
    }
    return moved;
  }

  /** Gives the client what the responses brought: heads, body pieces, ends, in that order per stream. */
  _feed() {
    let moved = false;
    for (const st of [...this._http.open.values()]) {
      if (st.head !== null && !st.applied) {
        const { status, contentType, sessionId } = st.head;
        if (!this._tried(() => this.client.handleResponse(st.stream, status, contentType, sessionId))) continue;
        st.applied = true;
        moved = true;
      }
      if (st.chunk !== null && st.applied) {
        const n = this.client.feedResponse(st.stream, st.chunk, st.off);
        if (n > 0) {
          moved = true;
          st.off += n;
          if (st.off >= st.chunk.length) {
            st.chunk = null;
            const wake = st.wake;
            st.wake = null;
            wake?.();
          }
        }
      }
      if (st.ended && st.chunk === null && (st.head === null || st.applied)) {
        if (!this._tried(() => this.client.handleResponseEnd(st.stream))) continue;
        this._http.open.delete(st.stream);
        moved = true;
      }
    }
    return moved;
  }

  /** Runs `f`; false when the client said to drain its outputs first (the pump's next round gives it again). */
  _tried(f) {
    try {
      f();
      return true;
    } catch (e) {
      if (e.errno === PW.MCP_POLL_FIRST) return false;
      throw e;
    }
  }

  _post(r) {
    const h = this._http;
    const st = { stream: r.stream, ac: new AbortController(), head: null, applied: false, chunk: null, off: 0, ended: false, wake: null, reader: null, gone: false };
    h.open.set(r.stream, st);
    this.options.onWire?.('send', r.body);
    // The caller's headers (authorization...), then the protocol's, which no caller's replaces.
    const own = new Set(r.headers.map(([k]) => k.toLowerCase()));
    const headers = [...h.extra.filter(([k]) => !own.has(k.toLowerCase())), ...r.headers];
    // Called unbound: a browser's `fetch` refuses any `this` but the window (or none).
    const fetchFn = h.fetch;
    let response;
    try {
      response = Promise.resolve(fetchFn(h.url, { method: 'POST', headers, body: r.body, signal: st.ac.signal }));
    } catch (e) {
      response = Promise.reject(e);
    }
    response.then(
      (res) => this._opened(st, res),
      (e) => {
        h.why = e;
        this._ended(st);
      },
    );
  }

  _opened(st, res) {
    if (st.gone || this._disposed) {
      res.body?.cancel().catch(() => {});
      return;
    }
    st.head = { status: res.status, contentType: res.headers.get('content-type') ?? '', sessionId: res.headers.get('mcp-session-id') };
    st.reader = res.body ? res.body.getReader() : null;
    this._pump();
    this._read(st);
  }

  /** Reads a response's body, a chunk at a time: the next only once the client took this one. */
  async _read(st) {
    try {
      while (st.reader !== null) {
        const { done, value } = await st.reader.read();
        if (st.gone) return;
        if (done) break;
        if (value.length === 0) continue;
        this.options.onWire?.('recv', value);
        st.chunk = value;
        st.off = 0;
        this._pump();
        if (st.chunk !== null) await new Promise((resolve) => (st.wake = resolve));
        if (st.gone) return;
      }
    } catch (e) {
      // A broken stream: its end, below, fails the call it carried (never sent again).
      if (st.gone) return;
      this._http.why = e;
    }
    this._ended(st);
  }

  _ended(st) {
    if (st.gone || this._disposed) return;
    st.ended = true;
    this._pump();
  }

  /** Stops reading stream record `st` and aborts its request. */
  _abort(st) {
    if (st === undefined) return;
    st.gone = true;
    this._http.open.delete(st.stream);
    st.ac.abort();
    st.reader?.cancel().catch(() => {});
    const wake = st.wake;
    st.wake = null;
    wake?.();
  }

  _noResponseWhy() {
    const e = this._http.why;
    if (e === null) return '';
    const cause = e.cause?.code ?? e.cause?.message;
    return `: ${e.message}${cause ? ` (${cause})` : ''}`;
  }

  /** Not a line transport: throws. */
  receive() {
    throw new TypeError('polyweave: an MCP session over HTTP reads its responses itself');
  }

  /**
   * Aborts every request in flight, fails the calls waiting (`Tool <name> failed: the MCP
   * server closed the connection`) and frees the client. Idempotent.
   * @returns {Promise<void>}
   */
  close() {
    if (!this._disposed) {
      for (const st of [...this._http.open.values()]) this._abort(st);
      this.handleClosed();
      this.dispose();
    }
    return Promise.resolve();
  }
}

/** Starts a session over Streamable HTTP and resolves once the server's tools are listed. */
function connectHttp(options) {
  let session;
  try {
    session = new McpHttpSession(options.url, options);
  } catch (e) {
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    const startup = options.startupTimeoutMs ?? session.client.startTimeoutMs + 10000;
    const timer = setTimeout(() => {
      session.close();
      reject(new McpStartupError(`the MCP server at ${session.url} did not finish its start-up within ${startup} ms`));
    }, startup);
    session.ready.then(
      () => {
        clearTimeout(timer);
        resolve(session);
      },
      (e) => {
        clearTimeout(timer);
        session.close();
        reject(e);
      },
    );
  });
}

// ------------------------------------------------------------ a server over a child's stdio

/** An MCP server run as a child process (see `connectMcpServer`). */
export class McpServer extends McpSession {
  /**
   * Closes the server's stdin, waits `graceMs` (2000) for it to exit, kills it otherwise, and
   * frees the client. Resolves with its exit `{ code, signal }`.
   * @returns {Promise<{ code: number | null, signal: string | null }>}
   */
  close() {
    if (!this._exited) {
      this.child.stdin.end();
      const grace = this.options.graceMs ?? 2000;
      const killer = setTimeout(() => this.child.kill('SIGKILL'), grace);
      this.exited.then(() => clearTimeout(killer));
    }
    return this.exited.then((r) => {
      this.dispose();
      return r;
    });
  }
}

/**
 * `connectMcpServer({ url, ...options })` (`McpHttpOptions`): the server at `url` over
 * Streamable HTTP, through `fetch`; resolves once its tools are listed with an
 * `McpHttpSession` (the same members but `child`; `close()` aborts what is in flight).
 *
 * Spawns `command args` (`child_process.spawn`, stdin and stdout piped) and resolves, once the
 * server is started and its tools listed, with an `McpServer`: `tools` (`[{ name, tool }]`),
 * `serverInfo`, `protocolVersion`, `notifications`, `wrap(model)`, `run(frames)`,
 * `call(name, args)`, `adapterTools()`, `client`, `child`, `close()`. The server's exit (its
 * stdout's end) fails the calls in flight. Beyond `McpSessionOptions` (`revision`,
 * `startTimeoutMs`, `onToolsChanged`...): `startupTimeoutMs` (how long the whole start-up may
 * take; by default the client's `startTimeoutMs` + 10000, so a server silent to
 * `server/discover` still has 10 s for `initialize` and the listing), `graceMs` (2000), `env`,
 * `cwd`, `stderr` (`'inherit'`, or `'ignore'`, `'pipe'`).
 * @param {string | McpHttpOptions} command @param {string[]} [args]
 * @param {McpSessionOptions & { startupTimeoutMs?: number, graceMs?: number, env?: object, cwd?: string, stderr?: 'inherit' | 'ignore' | 'pipe' }} [options]
 * @returns {Promise<McpServer | McpHttpSession>}
 */
export function connectMcpServer(command, args = [], options = {}) {
  if (command !== null && typeof command === 'object' && !(command instanceof URL)) return connectHttp(command);
  if (childProcess === null) {
    return Promise.reject(new TypeError('polyweave: connectMcpServer(command) spawns a child process (Node only); use connectMcpServer({ url }) (Streamable HTTP) or createMcpSession over your own transport'));
  }
  const child = childProcess.spawn(command, args, {
    stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'],
    env: options.env,
    cwd: options.cwd,
  });
  const send = (line) => {
    if (child.stdin.writable) child.stdin.write(line);
  };
  let server;
  try {
    server = new McpServer(send, options);
  } catch (e) {
    // An option the client refused (a revision it does not know...): no server left running.
    child.on('error', () => {});
    child.kill('SIGKILL');
    return Promise.reject(e);
  }
  server.child = child;
  server._exited = false;
  let exited;
  /** Resolves with the server's exit `{ code, signal }`. */
  server.exited = new Promise((resolve) => {
    exited = (r) => {
      if (server._exited) return;
      server._exited = true;
      server.handleClosed();
      resolve(r);
    };
  });
  child.on('close', (code, signal) => exited({ code, signal }));
  child.stdin.on('error', () => server.handleClosed()); // EPIPE: the server is gone
  child.stdout.on('data', (chunk) => server.receive(chunk));
  child.stdout.on('end', () => server.handleClosed());
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!server._exited) child.kill('SIGKILL');
      server.exited.then(() => server.dispose());
      reject(err);
    };
    const startup = options.startupTimeoutMs ?? server.client.startTimeoutMs + 10000;
    const timer = setTimeout(() => fail(new McpStartupError(`the MCP server did not finish its start-up within ${startup} ms`)), startup);
    child.on('error', (e) => {
      fail(new McpStartupError(`cannot start the MCP server ${command}: ${e.message}`));
      exited({ code: null, signal: null });
    });
    server.ready.then(
      () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(server);
      },
      (e) => fail(e),
    );
  });
}
