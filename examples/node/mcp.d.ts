// Types of mcp.mjs: the MCP client (SPEC §9) raw, over any transport (McpSession), and over a
// child's stdio (connectMcpServer: Node only).
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

export type McpEvent =
  | { type: 'initialized'; protocolVersion: string; result: string }
  | { type: 'tool'; name: string; tool: string }
  | { type: 'toolSkipped'; reason: 'nameTooLong' | 'noName'; tool: string; len: number; cap: number }
  | { type: 'ready'; tools: number }
  | {
      type: 'startFailed';
      error: 'unsupportedVersion' | 'badResult' | 'refused' | 'cursorTooLong' | 'tooManyPages' | 'responseTooLarge';
      raw: string;
      len: number;
    }
  | { type: 'notification'; method: string; params: string | null; methodCut: boolean };

export interface McpHandled {
  kind: 'sent' | 'failed' | 'cancelled';
  request: number;
  failure: null | 'closed' | 'notStarted' | 'argsNotObject' | 'tooMany' | 'requestTooLong' | 'responseTooLong' | 'responseTooDeep' | 'noOutcome';
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
  limits?: McpLimits;
  fit?: { nameCap?: number; maxDepth?: number };
  name?: string;
  version?: string;
}

/** The raw sans-IO client. */
export class McpClient {
  constructor(options?: McpOptions);
  readonly maxFrameLen: number;
  readonly maxLineLen: number;
  readonly limits: Readonly<Required<McpLimits>>;
  close(): void;
  start(): void;
  feed(bytes: Uint8Array | string, start?: number): number;
  handleFrame(handle: McpHandle, frame: object | string | Uint8Array): McpHandled;
  handleClosed(): void;
  pollTransmit(): string | null;
  pollFrame(): McpFrame | null;
  pollEvent(): McpEvent | null;
  transmits(): Generator<string>;
  frames(): Generator<McpFrame>;
  events(): Generator<McpEvent>;
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
  onWire?: (direction: 'send' | 'recv', data: string | Uint8Array) => void;
}

export type Sent =
  | { to: 'model' | 'consumer'; frame: any }
  | { rejected: string; frame: unknown; error: Error };

/** The client over a transport, its listed tools served to any number of wrappers. */
export class McpSession {
  constructor(send: (line: string) => void, options?: McpSessionOptions);
  readonly client: McpClient;
  readonly tools: Array<{ name: string; tool: any }>;
  readonly serverInfo: any;
  readonly notifications: Array<Extract<McpEvent, { type: 'notification' }>>;
  readonly ready: Promise<this>;
  readonly closed: boolean;
  receive(chunk: Uint8Array | string): void;
  handleClosed(): void;
  adapterTools(): Record<string, { adapter: () => Duplex }>;
  wrap(model: Duplex, options?: WrapperOptions): ToolAdapterWrapper;
  run(frames: Iterable<unknown>, options?: WrapperOptions): Promise<Sent[]>;
  call(name: string, args?: unknown, options?: { id?: string }): Promise<unknown>;
  dispose(): void;
}

export function createMcpSession(send: (line: string) => void, options?: McpSessionOptions): McpSession;

export interface ConnectOptions extends McpSessionOptions {
  startupTimeoutMs?: number;
  graceMs?: number;
  env?: Record<string, string | undefined>;
  cwd?: string;
  stderr?: 'inherit' | 'ignore' | 'pipe';
}

/** An MCP server run as a child process (Node only). */
export class McpServer extends McpSession {
  readonly child: any;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  close(): Promise<{ code: number | null; signal: string | null }>;
}

/** Spawns `command args` and resolves once its tools are listed (Node only). */
export function connectMcpServer(command: string, args?: string[], options?: ConnectOptions): Promise<McpServer>;
