// Types of request.mjs: the conversation so far and the next request body (SPEC §10).
import type { ProviderId } from './decode.js';
import type { PolyweaveError } from './index.js';

/** JSON given as its exact text (a string), `raw(text)`, a frame the package handed out, or a value. */
export type JsonInput = string | object;

/** A tool the model is told of: the host's own, or an MCP `tools/list` entry as the server sent it. */
export type Declaration =
  | {
      /** The name the model sees, as the provider takes it. */
      name: string;
      description?: string;
      /** JSON Schema of the arguments: an object, or its raw JSON text. Absent: `{"type":"object","properties":{}}`. */
      schema?: JsonInput;
      /** Ask for strict arguments (refused, `PW_DECLARATION_NOT_STRICT`, when the schema does not meet the rules). */
      strict?: boolean;
    }
  | {
      /** An MCP `tools/list` entry (an object, or its raw JSON text). */
      mcp: JsonInput;
    };

/** Which tool the model must call: `{ name }` is a declared name or the name the model sees. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface RequestOptions {
  /** The model (for Gemini it goes in the path: `geminiPath(model)`). */
  model: string;
  /** The most tokens to generate (Anthropic: 4096 when left out). */
  maxTokens?: number;
  /** Written only when a tool is declared; Ollama takes only `'auto'`. */
  toolChoice?: ToolChoice;
  /** Top-level members added after the library's own: an object, or its JSON text. */
  extra?: JsonInput;
}

/** `pw_conversation_get_stats`. */
export interface ConversationStats {
  /** Bytes of its memory in use. */
  used: number;
  /** Bytes of memory it has. */
  capacity: number;
  /** Entries held, the system text included. */
  entries: number;
  /** Entries evicted since it was made or cleared. */
  evicted: number;
}

/** What a frame came to (`pw_pushed`). */
export type Pushed = 'kept' | 'ignored' | 'ended';

/**
 * The conversation so far, in a bounded block of the module's memory (`createConversation`).
 * Refusals throw an Error with `code` (the C name, `'PW_CONVERSATION_NO_ROOM'`...) and `errno`,
 * and change nothing.
 */
export interface Conversation {
  setSystem(text: string): void;
  pushUser(text: string): void;
  pinFirstUser(pin?: boolean): void;
  beginResponse(provider: ProviderId): void;
  /** A decoder's frame, or a wrapper's `TOOL_RESULT` (a frame the package handed out goes in as its exact text). */
  pushFrame(frame: object | string | Uint8Array): Pushed;
  endResponse(): void;
  clear(): void;
  stats(): ConversationStats;
  /** The next request body; a refused declaration throws with `err.index`. */
  request(provider: ProviderId, options: RequestOptions, declarations?: Declaration[]): Request;
  /** Frees its memory now (also `[Symbol.dispose]`, where the engine has it: `using`); later uses (its requests' too) throw `code === 'PW_CONVERSATION_CLOSED'`. */
  close(): void;
  readonly isClosed: boolean;
}

/** A request body, written by the library on demand; stale (`PW_REQUEST_STALE`) once the conversation changes. */
export interface Request {
  readonly conversation: Conversation;
  readonly provider: number;
  /** The body's length in bytes (for `Content-Length`). */
  readonly length: number;
  text(): string;
  bytes(): Uint8Array;
  /** The body chunk by chunk, for `fetch(url, { method: 'POST', body, duplex: 'half' })`. */
  stream(options?: { chunkSize?: number }): ReadableStream<Uint8Array>;
  /** Frees its memory now (also `[Symbol.dispose]`); later uses throw `code === 'PW_REQUEST_CLOSED'`. */
  close(): void;
  readonly isClosed: boolean;
}

/** A declaration refused by `conversation.request` (`code` `'PW_DECLARATION_*'`): `index` is its place in the array. */
export interface DeclarationError extends PolyweaveError {
  index: number;
}

/** A conversation with `capacity` bytes of memory (65536 by default). */
export function createConversation(options?: { capacity?: number }): Conversation;

/** `models/<model>:streamGenerateContent?alt=sse`: where a Gemini body is posted. */
export function geminiPath(model: string): string;
