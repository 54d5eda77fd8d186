// Types of the package's root: @polyweave/tool-adapter's API (wrapToolAdapter,
// createToolAdapterWrapper) over the polyweave C library compiled to WebAssembly, the duplex
// helpers, and the stream decoders / item encoders.
import type { Duplex, Frame, PushSource, Sink } from './duplex.js';

export { createSource, createSink, createDuplex, isDuplex } from './duplex.js';
export type { Duplex, Frame, PushSource, Sink, Source } from './duplex.js';
export {
  createDecoder,
  DecoderStream,
  DecoderTransform,
  encodeItem,
  framesFromResponse,
  Provider,
  providerFromName,
  type Decoder,
} from './decode.js';
export type { BodyChunk, DecodedFrame, DecoderStats, DecoderOptions, ProviderId, ProviderName } from './decode.js';
export { createConversation, geminiPath } from './request.js';
export type {
  Conversation,
  ConversationStats,
  Declaration,
  DeclarationError,
  JsonInput,
  Pushed,
  Request,
  RequestOptions,
  ToolChoice,
} from './request.js';

/** A JSON value given or kept as its exact text. */
export class RawJSON {
  constructor(text: string);
  readonly rawJSON: string;
  toJSON(): string;
}
/** `raw(text)`: a frame, args or a tool result given as exact JSON text. */
export function raw(text: string): RawJSON;
/** A frame's (or value's) JSON text: as received from the library when known. */
export function rawText(value: unknown): string;
/**
 * Loads the WebAssembly module (once). Importing the package already tries the default (the
 * `.wasm` next to the package); call this where that cannot work (a bundler, a worker):
 * `wasm` is a URL (or a path in Node), a Response or its promise, the bytes, or a compiled module.
 */
export function init(options?: { wasm?: string | URL | Response | Promise<Response> | BufferSource | WebAssembly.Module }): Promise<void>;
/** Whether the module is loaded. */
export function isLoaded(): boolean;
/** The C library's version (`pw_version`). */
export function version(): string;

/**
 * An error of the package: `code` is a string (Node's convention): the C library's name for a
 * `pw_result` (`'PW_QUEUE_FULL'`, `'PW_FRAME_MISSING_TYPE'`...), with the number as `errno`, or
 * the package's own (`'PW_WRAPPER_CLOSED'`, `'PW_DECODER_CLOSED'`, `'PW_WASM_TRAPPED'`,
 * `'PW_WASM_NOT_LOADED'`), without `errno`.
 */
export interface PolyweaveError extends Error {
  code: string;
  errno?: number;
  /** `'PW_BAD_SCHEMA'`: why the validator refuses the schema (`'PW_SCHEMA_ERROR_REMOTE_REF'`...). */
  kind?: string;
  /** `'PW_BAD_SCHEMA'`: where, a byte offset in the schema's UTF-8 text. */
  offset?: number;
  /** `'PW_BAD_SCHEMA'` from `createToolAdapterWrapper`: the tool whose schema it is. */
  tool?: string;
}

/** `this` of a tool, a hook and a callback. */
export interface CallContext {
  index: number;
  name?: string;
  id?: string | null;
  rawArgs: string;
  rawResult?: string | null;
  error?: string | null;
  cut?: boolean;
}

export type Callback = (err: Error | null, result?: unknown) => boolean | void;
/** A sync tool (a plain function of at most one parameter: runs inside the C call). */
export type SyncTool = (this: CallContext, args: any) => unknown;
/** A deferred tool: `async (args) => result` or `(args, cb) => void`. */
export type AsyncTool = (this: CallContext, args: any) => Promise<unknown>;
export type CallbackTool = (this: CallContext, args: any, cb: Callback) => void;
/** A JSON Schema (SPEC §11): its JSON text, `raw(text)`, or a value (`JSON.stringify`d once). */
export type SchemaInput = string | object | boolean;
export type AdapterTool =
  | Duplex
  | { adapter: Duplex | ((this: CallContext, ctx: CallContext) => Duplex); timeoutMs?: number; schema?: SchemaInput };
/**
 * A function tool with its input schema: a call whose args do not satisfy it completes at once
 * with `Tool <name> arguments are invalid: <where>: <why>`, and `fn` never sees it.
 */
export interface SchemaTool {
  fn: SyncTool | AsyncTool | CallbackTool;
  schema?: SchemaInput;
}
export type Tool = SyncTool | AsyncTool | CallbackTool | AdapterTool | SchemaTool;

/** A manual clock (test-only): nothing fires by itself; `tick()` gives the clock. */
export interface Clock {
  now(): number;
}

export interface Limits {
  nameCap?: number;
  idCap?: number;
  argsCap?: number;
  resultCap?: number;
  messageCap?: number;
  traceEntries?: number;
  traceBytes?: number;
  heldBytes?: number;
  hookLogBytes?: number;
}

export type RejectPath = 'response' | 'request' | 'adapter';

export interface WrapperOptions {
  name?: string;
  tools?: Record<string, Tool> | Map<string, Tool>;
  toolTimeoutMs?: number;
  /** Alias of `toolTimeoutMs`. */
  toolTimeout?: number;
  maxTotalTimeoutMs?: number;
  onToolCall?: (this: CallContext, name: string | null, args: unknown) => void;
  onToolResult?: (this: CallContext, name: string | null, args: unknown, result: unknown, error: Error | null) => void;
  mirrorContinue?: boolean;
  maxPending?: number;
  maxRounds?: number;
  fullValidation?: boolean;
  maxDepth?: number;
  limits?: Limits;
  onRejected?: (path: RejectPath, frame: unknown, err: PolyweaveError | Error, call?: number) => void;
  clock?: Clock;
}

export interface TraceEntry {
  name: string | null;
  args: unknown;
  result: unknown;
  error: string | null;
  truncated?: true;
}

export interface WrapperStats {
  rounds: number;
  messagesTruncated: number;
  lastErrorTruncated: number;
  hookEventsCut: number;
  hookEventsDropped: number;
}

export interface ToolAdapterWrapper extends Duplex {
  /** Frames for the consumer. */
  source: PushSource;
  /** The consumer's frames, for the model. */
  sink: Sink;
  getToolTrace(options?: { raw?: false }): TraceEntry[];
  getToolTrace(options: { raw: true }): Array<{ name: string | null; args: string; result: string | null; error: string | null; truncated?: true }>;
  clearTrace(): void;
  abort(): void;
  cancel(reason?: string): void;
  tick(): void;
  stats(): WrapperStats;
  close(): void;
  readonly pending: number;
  readonly isClosed: boolean;
}

/**
 * Checks `value` (a JS value, or `raw(text)`) against `schema`: `null` when it satisfies it,
 * else why (`'/city: expected string'`). Throws `PW_BAD_SCHEMA` (`kind`, `offset`) for a schema
 * the validator refuses, `PW_INVALID_JSON` for a `raw` value that is not JSON.
 */
export function validate(schema: SchemaInput, value: unknown): string | null;
/**
 * Checks that the validator reads `schema`: returns when it does; throws `PW_BAD_SCHEMA`
 * (`kind`, `offset`) when it refuses it (a remote `$ref`, a pattern it cannot run...).
 */
export function checkSchema(schema: SchemaInput): void;
/** Wraps an LLM adapter duplex: TOOL_CALL frames on its response path go to the registered tools. */
export function createToolAdapterWrapper(innerDuplex: Duplex, options?: WrapperOptions): ToolAdapterWrapper;

export interface WrapToolAdapterOptions {
  name?: string;
  timeoutMs?: number;
  maxTotalTimeoutMs?: number;
  resultCap?: number;
  maxDepth?: number;
  onRejected?: (path: 'adapter', frame: unknown, err: PolyweaveError | Error, call: number) => void;
  clock?: Clock;
}

export interface WrappedToolAdapter {
  (args: unknown, callback: (this: { rawResult: string | null; error: string | null }, err: Error | null, result: unknown) => void, callOptions?: { id?: string }): void;
  /** Test-only with a manual clock: gives the clock to every live call. */
  tick(): void;
}

/** Wraps a tool adapter duplex as an `(args, callback)` function. */
export function wrapToolAdapter(toolAdapter: Duplex, options?: WrapToolAdapterOptions): WrappedToolAdapter;

