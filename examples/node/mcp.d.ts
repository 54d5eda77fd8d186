// Types of mcp.mjs: the MCP client (SPEC §9) raw, over any transport (McpSession), over a
// child's stdio (connectMcpServer(command): Node only) and over Streamable HTTP through fetch
// (connectMcpServer({ url }): Node and browsers).
import type { Duplex } from './duplex.js';
import type { ToolAdapterWrapper, WrapperOptions, Limits } from './index.js';

export declare const McpCode: Readonly<{
  NOT_ADAPTER_FRAME: 500;
  NO_NAME: 501;
  DUPLICATE_CALL: 503;
  UNKNOWN_CALL: 504;
  OUTBOX_FULL: 505;
  FRAME_PENDING: 506;
  ALREADY_STARTED: 507;
  CLIENT_INFO_TOO_LONG: 508;
  NOT_HTTP: 509;
  UNKNOWN_STREAM: 510;
  HEAD_TWICE: 511;
  NO_HEAD: 512;
  POLL_FIRST: 513;
}>;

/** A refusal of the MCP client: nothing changed. */
export class McpError extends Error {
  constructor(what: string, code: number);
  /** The C name, e.g. `'PW_MCP_OUTBOX_FULL'`. */
  readonly code: string;
  /** The number, e.g. 505. */
  readonly errno: number;
}

export class McpStartupError extends Error {
  constructor(message: string, event?: McpEvent | null);
  readonly event: McpEvent | null;
}

export interface McpLimits {
  lineCap?: number;
  outboxCap?: number;
  nameCap?: number;
  cursorCap?: number;
  maxDepth?: number;
}

export interface McpHandle {
  slot: number;
  index: number;
}

/**
 * Which revision the client speaks (SPEC §9.9): `'auto'` sends `server/discover` first and
 * speaks 2026-07-28 to a server that lists it, the `initialize` handshake to one that refuses it
 * or is silent for `startTimeoutMs`; the others fix one.
 */
export type McpRevision = 'auto' | '2025-11-25' | '2026-07-28';

export type McpEvent =
  /** The `initialize` or `server/discover` result (raw JSON) and the revision spoken from now on. */
  | { type: 'initialized'; protocolVersion: string; result: string }
  | { type: 'tool'; name: string; tool: string }
  | { type: 'toolSkipped'; reason: 'nameTooLong' | 'noName'; tool: string; len: number; cap: number }
  | { type: 'ready'; tools: number }
  /** Listed again after `notifications/tools/list_changed`: the last `tools` `tool` events are the whole list now. */
  | { type: 'toolsChanged'; tools: number }
  | {
      type: 'startFailed';
      error: 'unsupportedVersion' | 'badResult' | 'refused' | 'cursorTooLong' | 'tooManyPages' | 'responseTooLarge' | 'noAnswer' | 'noResponse';
      raw: string;
      /** For `noResponse` (HTTP): the status, 0 when there was no response at all. */
      len: number;
    }
  | { type: 'notification'; method: string; params: string | null; methodCut: boolean };

export interface McpHandled {
  kind: 'sent' | 'failed' | 'cancelled';
  request: number;
  failure: null | 'closed' | 'notStarted' | 'argsNotObject' | 'tooMany' | 'requestTooLong' | 'responseTooLong' | 'responseTooDeep' | 'noOutcome' | 'inputRequired' | 'http';
  /** The failure's limit; for `http` the status. */
  limit: number;
  len: number;
  notified: boolean;
}

export interface McpFrame {
  slot: number;
  index: number;
  frame: string;
}

export interface McpStats {
  lines: number;
  notJson: number;
  notJsonrpc: number;
  tooLong: number;
  tooDeep: number;
  unknownId: number;
  late: number;
  unknownProgress: number;
  pings: number;
  refusedRequests: number;
  notifications: number;
  calls: number;
  answered: number;
  failed: number;
}

export interface McpOptions {
  calls?: number;
  /** A client over Streamable HTTP reading this many responses at once (1 to 65535). */
  streams?: number;
  limits?: McpLimits;
  fit?: { nameCap?: number; maxDepth?: number };
  name?: string;
  version?: string;
  /** `'auto'` by default. */
  revision?: McpRevision;
  /** How long `server/discover` may go unanswered (`pw_mcp_config_default`'s, 10000, by default). */
  startTimeoutMs?: number;
}

/**
 * What `pollRequest` asks of an HTTP host: POST `body` with `headers` (the revision's, in
 * order) and report its response as `stream`; or close `stream`'s response and report nothing
 * more of it (a cancelled 2026-07-28 call).
 */
export type McpRequest =
  | { type: 'post'; stream: number; body: string; headers: Array<[string, string]> }
  | { type: 'close'; stream: number };

/** The raw sans-IO client. */
export class McpClient {
  constructor(options?: McpOptions);
  readonly maxFrameLen: number;
  readonly maxLineLen: number;
  readonly limits: Readonly<Required<McpLimits>>;
  readonly revision: McpRevision;
  readonly startTimeoutMs: number;
  /** Responses read at once over Streamable HTTP; null for a line client. */
  readonly streams: number | null;
  /** The longest header lines `pollRequest` gives (0 for a line client). */
  readonly maxHeadersLen: number;
  /** The revision spoken, once the server said; null before. */
  readonly protocolVersion: string | null;
  close(): void;
  /** Begins the start-up at `now` (milliseconds of the host's clock). */
  start(now: number): void;
  /** The start-up's `server/discover` deadline while it is awaited, else null. */
  pollTimeout(): number | null;
  handleTimeout(now: number): void;
  feed(bytes: Uint8Array | string, start?: number): number;
  handleFrame(handle: McpHandle, frame: object | string | Uint8Array): McpHandled;
  handleClosed(): void;
  pollTransmit(): string | null;
  pollFrame(): McpFrame | null;
  pollEvent(): McpEvent | null;
  transmits(): Generator<string>;
  frames(): Generator<McpFrame>;
  events(): Generator<McpEvent>;
  /** HTTP: the next POST to make or stream to close; null when none (or no stream is free). */
  pollRequest(): McpRequest | null;
  /** HTTP: drains `pollRequest`. */
  requests(): Generator<McpRequest>;
  /** HTTP: a response's head. Throws `McpError` `PW_MCP_POLL_FIRST` until the outputs are drained. */
  handleResponse(stream: number, status: number, contentType: string, sessionId?: string | null): void;
  /** HTTP: body bytes from `start`; returns how many it took (maybe fewer, even 0: keep the rest, drain, give it again). */
  feedResponse(stream: number, bytes: Uint8Array | string, start?: number): number;
  /** HTTP: the response ended, whole or broken (or, before its head, there was none). */
  handleResponseEnd(stream: number): void;
  /**
   * The output schemas results are checked against (SPEC §11), replacing the earlier ones: a
   * result whose `structuredContent` does not satisfy its tool's fails the call. Throws
   * `PW_BAD_SCHEMA` (`tool`, `kind`, `offset`) for a schema the validator refuses: nothing changed.
   */
  setOutputSchemas(schemas: Array<{ tool: string; schema: unknown }>): void;
  readonly state: 'idle' | 'starting' | 'ready' | 'failed' | 'closed';
  readonly inFlight: number;
  readonly queued: number;
  stats(): McpStats;
}

export function createMcpClient(options?: McpOptions): McpClient;

export interface McpSessionOptions {
  timeoutMs?: number;
  maxTotalTimeoutMs?: number;
  extraTools?: string[];
  maxPending?: number;
  maxDepth?: number;
  limits?: Limits;
  clientLimits?: McpLimits;
  clientInfo?: { name?: string; version?: string };
  /** `'auto'` by default: `server/discover` first, `initialize` when the server refuses it or is silent. */
  revision?: McpRevision;
  /** How long `server/discover` may go unanswered before `initialize` goes out (10000 by default). */
  startTimeoutMs?: number;
  onWire?: (direction: 'send' | 'recv', data: string | Uint8Array) => void;
  /**
   * Check each call's args against its tool's listed `inputSchema` (a call that does not satisfy
   * it fails at once: `Tool <name> arguments are invalid: <where>: <why>`, the server never sees
   * it) and each result's `structuredContent` against its `outputSchema` (SPEC §11). True by default.
   */
  validate?: boolean;
  /** The server's tools changed and were listed again: the new list (`session.tools` from now on). */
  onToolsChanged?: (tools: Array<{ name: string; tool: any }>) => void;
  /** Test-only: a manual clock (milliseconds); `session.tick()` gives it, and the session's wrappers get it. */
  clock?: { now(): number };
}

export type Sent =
  | { to: 'model' | 'consumer'; frame: any }
  | { rejected: string; frame: unknown; error: Error };

/** The client over a transport, its listed tools served to any number of wrappers. */
export class McpSession {
  constructor(send: (line: string) => void, options?: McpSessionOptions);
  readonly client: McpClient;
  readonly clock: { now(): number };
  /** The listed tools; replaced by the new list when the server's tools change. */
  readonly tools: Array<{ name: string; tool: any }>;
  /** The `initialize` or `server/discover` result, parsed. */
  readonly serverInfo: any;
  /** The revision spoken, once the server said; null before. */
  readonly protocolVersion: string | null;
  readonly notifications: Array<Extract<McpEvent, { type: 'notification' }>>;
  /** Whether listed schemas are checked (`validate`). */
  readonly validate: boolean;
  /** The listed schemas the validator refuses (a remote `$ref`...): those sides run unchecked. */
  readonly unchecked: Array<{ tool: string; schema: 'inputSchema' | 'outputSchema'; kind: string; offset: number }>;
  readonly ready: Promise<this>;
  readonly closed: boolean;
  receive(chunk: Uint8Array | string): void;
  handleClosed(): void;
  /** Gives the clock now (the start-up's `server/discover` deadline); with a manual clock the only way time passes. */
  tick(): void;
  adapterTools(): Record<string, { adapter: () => Duplex }>;
  wrap(model: Duplex, options?: WrapperOptions): ToolAdapterWrapper;
  run(frames: Iterable<unknown>, options?: WrapperOptions): Promise<Sent[]>;
  call(name: string, args?: unknown, options?: { id?: string }): Promise<unknown>;
  dispose(): void;
}

export function createMcpSession(send: (line: string) => void, options?: McpSessionOptions): McpSession;

export interface ConnectOptions extends McpSessionOptions {
  /** How long the whole start-up may take (by default `startTimeoutMs` + 10000). */
  startupTimeoutMs?: number;
  graceMs?: number;
  env?: Record<string, string | undefined>;
  cwd?: string;
  stderr?: 'inherit' | 'ignore' | 'pipe';
}

/** `connectMcpServer({ url })`'s options. */
export interface McpHttpOptions extends McpSessionOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`. */
  url: string | URL;
  /** The `fetch` to use (the global one by default). */
  fetch?: (url: string, init: { method: 'POST'; headers: Array<[string, string]>; body: string; signal: AbortSignal }) => Promise<Response>;
  /** Headers sent with every POST (authorization...); the protocol's own win. */
  headers?: Record<string, string> | Array<[string, string]>;
  /** Responses read at once (`maxPending` + 2 by default). */
  streams?: number;
  /** How long the whole start-up may take (by default `startTimeoutMs` + 10000). */
  startupTimeoutMs?: number;
}

/** An MCP server over Streamable HTTP: one `fetch` per POST, each response's body read as it comes. */
export class McpHttpSession extends McpSession {
  constructor(url: string | URL, options?: Omit<McpHttpOptions, 'url'>);
  /** The MCP endpoint. */
  readonly url: string;
  /** Aborts every request in flight, fails the calls waiting and frees the client. */
  close(): Promise<void>;
}

/** An MCP server run as a child process (Node only). */
export class McpServer extends McpSession {
  readonly child: any;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  close(): Promise<{ code: number | null; signal: string | null }>;
}

/** Spawns `command args` and resolves once its tools are listed (Node only). */
export function connectMcpServer(command: string, args?: string[], options?: ConnectOptions): Promise<McpServer>;
/** The server at `url` over Streamable HTTP (through `fetch`: Node and browsers); resolves once its tools are listed. */
export function connectMcpServer(options: McpHttpOptions): Promise<McpHttpSession>;
