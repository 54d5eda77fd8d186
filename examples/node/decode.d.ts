// Types of decode.mjs: stream decoders (a provider's response body in, frames out) and item encoders.

/** `enum pw_provider`. */
export declare const Provider: Readonly<{
  OPENAI_CHAT: 1;
  OPENAI_RESPONSES: 2;
  ANTHROPIC: 3;
  GEMINI: 4;
  OLLAMA: 5;
}>;
export type ProviderName = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini' | 'ollama';
export type ProviderId = ProviderName | (typeof Provider)[keyof typeof Provider];

/** A decoded frame: `TEXT`, `REASONING`, `STATE`, `TOOL_CALL`, `ERROR` or `END` (its exact text: `rawText(frame)`). */
export interface DecodedFrame {
  type: 'TEXT' | 'REASONING' | 'STATE' | 'TOOL_CALL' | 'ERROR' | 'END' | string;
  content?: any;
  [key: string]: unknown;
}

export type BodyChunk = Uint8Array | ArrayBuffer | ArrayBufferView | string;

export interface DecoderOptions {
  /** The longest provider event kept (16384 bytes). */
  eventCap?: number;
  /** Argument bytes per call (4096). */
  argsCap?: number;
  nameCap?: number;
  idCap?: number;
  maxDepth?: number;
  /** The most calls one response may have open at once (8). */
  calls?: number;
  /** Frames as their exact JSON text instead of objects. */
  raw?: boolean;
  /** The least size of the output buffer shared by the decoders (it grows when a frame needs more, and doubles up to 1 MiB when one write's frames fill it). */
  frameBuffer?: number;
}

export interface DecoderStats {
  notJson: number;
  unknownEvent: number;
  badShape: number;
  overlong: number;
  afterEnd: number;
  cut: number;
  callsStarted: number;
  callsWritten: number;
}

/** `pw_provider_from_name`; throws (`code` `'PW_UNKNOWN_PROVIDER'`, `errno` 400) for an unknown name. */
export function providerFromName(name: string): number;

/** A stream decoder (`createDecoder` makes one). */
export interface Decoder {
  readonly provider: number;
  readonly maxFrameLen: number;
  readonly memorySize: number;
  readonly raw: boolean;
  /** Body bytes in (split anywhere): the frames they completed. */
  write(chunk: BodyChunk): Array<DecodedFrame | string>;
  /** The body is over: its last frames (calls still open, then `END`). */
  finish(): Array<DecodedFrame | string>;
  readonly stats: DecoderStats;
  reset(): void;
  close(): void;
  readonly isClosed: boolean;
}

export function createDecoder(provider: ProviderId, options?: DecoderOptions): Decoder;

/** A `node:stream` Transform (Node only; in a browser the constructor throws: use DecoderStream). */
export class DecoderTransform {
  constructor(provider: ProviderId, options?: DecoderOptions);
  readonly decoder: Decoder;
  pipe<T>(destination: T, options?: { end?: boolean }): T;
  on(event: string, listener: (...args: any[]) => void): this;
  write(chunk: BodyChunk, callback?: (error?: Error | null) => void): boolean;
  end(chunk?: BodyChunk): this;
  [Symbol.asyncIterator](): AsyncIterableIterator<DecodedFrame>;
}

/** A WHATWG TransformStream: `response.body.pipeThrough(new DecoderStream('openai-chat'))`. */
export class DecoderStream extends TransformStream<BodyChunk, DecodedFrame | string> {
  constructor(provider: ProviderId, options?: DecoderOptions);
  readonly decoder: Decoder;
}

/** The frames of a `fetch()` Response's body (or a ReadableStream / async iterable of chunks). */
export function framesFromResponse(
  response: Response | ReadableStream<BodyChunk> | AsyncIterable<BodyChunk> | Iterable<BodyChunk> | BodyChunk | { body: unknown; bodyUsed: boolean },
  provider: ProviderId,
  options?: DecoderOptions,
): AsyncGenerator<DecodedFrame | string, void, undefined>;

/** `pw_encode_item`: a TOOL_CALL or TOOL_RESULT frame as the provider's request item (throws with `code`). */
export function encodeItem(provider: ProviderId, frame: object | string | Uint8Array | ArrayBuffer): Record<string, any>;
