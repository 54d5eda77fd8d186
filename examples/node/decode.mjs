// Stream decoders and item encoders (SPEC §8) over the C ABI's `pw_decoder_*` and
// `pw_encode_item`: an LLM provider's streamed HTTP response body (SSE, or NDJSON for Ollama),
// split anywhere, in; the library's frames (`TEXT`, `REASONING`, `TOOL_CALL`, `ERROR`, one `END`
// per body) out, as objects. Every rule is the C library's; this module moves bytes and text.
//
//   for await (const frame of framesFromResponse(await fetch(url, req), 'openai-chat')) ...
//   response.body.pipeThrough(new DecoderStream('anthropic'))        // WHATWG streams
//   nodeReadable.pipe(new DecoderTransform('gemini'))                // node:stream, object mode
//   const d = createDecoder('ollama'); d.write(chunk); d.end()       // by hand
//   encodeItem('openai-responses', toolResultFrame)                  // the next request's item
import { Transform } from 'node:stream';
import { C, PW, Stable, alignOffset, pwError } from './binding.mjs';

/** The symbol under which frames and items carry their exact JSON text (index.mjs's RAW_TEXT). */
const RAW_TEXT = Symbol.for('polyweave.rawText');

/** `enum pw_provider`: the formats the decoders read and the item encoders write. */
export const Provider = Object.freeze({
  OPENAI_CHAT: PW.PROVIDER_OPENAI_CHAT,
  OPENAI_RESPONSES: PW.PROVIDER_OPENAI_RESPONSES,
  ANTHROPIC: PW.PROVIDER_ANTHROPIC,
  GEMINI: PW.PROVIDER_GEMINI,
  OLLAMA: PW.PROVIDER_OLLAMA,
});

const ONE = Buffer.alloc(1); // a non-NULL pointer for empty inputs

/**
 * `pw_provider_from_name`: the number of `openai-chat`, `openai-responses`, `anthropic`,
 * `gemini` or `ollama`; an Error with `code === PW.UNKNOWN_PROVIDER` (400) for any other name.
 */
export function providerFromName(name) {
  const b = Buffer.from(String(name), 'utf8');
  const out = [0];
  const r = C.providerFromName(b.length > 0 ? b : ONE, b.length, out);
  if (r !== PW.OK) throw pwError(`polyweave: provider ${JSON.stringify(String(name))}`, r);
  return Number(out[0]);
}

/** A provider's number: a name goes through the library; a number is passed as is. */
function providerNumber(provider) {
  if (typeof provider === 'string') return providerFromName(provider);
  if (Number.isInteger(provider) && provider >= 0) return provider;
  throw new TypeError('polyweave: provider must be a name (such as "openai-chat") or a Provider number');
}

/** Body bytes as a Buffer over the same memory (a string is UTF-8). */
function bytesOf(chunk) {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (ArrayBuffer.isView(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return Buffer.from(chunk);
  throw new TypeError('polyweave: a body chunk must be a Uint8Array, Buffer, ArrayBuffer or string');
}

/** An object parsed from the library's JSON text, carrying that text under RAW_TEXT. */
function objectOf(text) {
  const v = JSON.parse(text);
  if (v !== null && typeof v === 'object') Object.defineProperty(v, RAW_TEXT, { value: text });
  return v;
}

// The options' names and the pw_decoder_config fields they set.
const CONFIG = [
  ['eventCap', 'event_cap'],
  ['argsCap', 'args_cap'],
  ['nameCap', 'name_cap'],
  ['idCap', 'id_cap'],
  ['maxDepth', 'max_depth'],
];

const freeBlocks = new FinalizationRegistry((mem) => mem.free());

function closedError() {
  const e = new Error('polyweave: this decoder is closed (close() was called); create a new one');
  e.code = 'PW_DECODER_CLOSED';
  return e;
}

/**
 * `pw_decoder`: one provider's response bodies in, frames out (`createDecoder` makes one).
 *
 * Options (the C defaults, from `pw_decoder_config_default`, when left out): `eventCap` (the
 * longest provider event kept, 16384 bytes: a longer one is skipped and counted in
 * `stats.overlong`), `argsCap` (argument bytes per call, 4096), `nameCap`, `idCap` (64),
 * `maxDepth` (32); `calls` (8: the most calls one response may have open at once); `raw`
 * (true: frames as their exact JSON text instead of objects); `frameBuffer` (the first size of
 * the output buffer, by default `pw_decoder_max_frame_len`; a smaller one grows when the library
 * asks for more).
 *
 * The decoder lives in one block of C memory (`koffi.alloc`): `close()` frees it at once, or the
 * finalizer some time after the decoder becomes unreachable.
 */
export class StreamDecoder {
  constructor(provider, options = {}) {
    this.provider = providerNumber(provider);
    const cfg = {};
    let r = C.decoderConfigDefault(cfg);
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_config_default', r);
    for (const [option, field] of CONFIG) {
      const v = options[option];
      if (v === undefined) continue;
      if (!Number.isInteger(v) || v < 0) throw new TypeError(`polyweave: ${option} must be a non-negative integer`);
      if (field === 'max_depth' && v > 255) throw new RangeError('polyweave: maxDepth must be at most 255');
      cfg[field] = v;
    }
    this.calls = options.calls ?? 8;
    const n = [0];
    r = C.decoderSize(cfg, this.calls, n);
    if (r !== PW.OK) throw pwError('polyweave: decoder configuration', r);
    const size = Number(n[0]);
    r = C.decoderMaxFrameLen(cfg, n);
    if (r !== PW.OK) throw pwError('polyweave: decoder configuration', r);
    /** The longest frame this configuration can write (`pw_decoder_max_frame_len`). */
    this.maxFrameLen = Number(n[0]);
    /** Bytes of the decoder's block (`pw_decoder_size`). */
    this.memorySize = size;
    this.raw = options.raw === true;
    this._cfg = cfg;
    const align = Number(C.decoderAlign());
    this._mem = new Stable(size + align);
    this._block = this._mem.at(alignOffset(this._mem.ptr, align));
    this._d = null;
    try {
      this._init();
    } catch (e) {
      this._mem.free();
      throw e;
    }
    freeBlocks.register(this, this._mem, this);
    this._out = Buffer.alloc(Math.max(1, options.frameBuffer ?? this.maxFrameLen));
    this._n = [0];
  }

  _init() {
    const out = [null];
    const r = C.decoderInit(this._block, this.memorySize, this.provider, this._cfg, this.calls, out);
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_init', r);
    this._d = out[0];
  }

  _ptr() {
    if (this._d === null) throw closedError();
    return this._d;
  }

  /** Every frame waiting, appended to `frames`. */
  _drain(frames) {
    const d = this._ptr();
    for (;;) {
      const r = C.decoderPollFrame(d, this._out, this._out.length, this._n);
      if (r === PW.BUFFER_TOO_SMALL) {
        this._out = Buffer.alloc(Number(this._n[0]));
        continue;
      }
      if (r === PW.NOTHING) return frames;
      if (r !== PW.OK) throw pwError('polyweave: pw_decoder_poll_frame', r);
      const text = this._out.toString('utf8', 0, Number(this._n[0]));
      frames.push(this.raw ? text : objectOf(text));
    }
  }

  /** Body bytes in (split anywhere; a string is UTF-8): the frames they completed. */
  write(chunk) {
    const bytes = bytesOf(chunk);
    const d = this._ptr();
    const frames = [];
    let at = 0;
    while (at < bytes.length) {
      const r = C.decoderFeed(d, at === 0 ? bytes : bytes.subarray(at), bytes.length - at, this._n);
      if (r !== PW.OK) throw pwError('polyweave: pw_decoder_feed', r);
      const used = Number(this._n[0]);
      at += used;
      const before = frames.length;
      this._drain(frames);
      // The library takes nothing only while frames wait, and they were all drained.
      if (used === 0 && frames.length === before) {
        throw new Error('polyweave: pw_decoder_feed took no bytes with no frame waiting');
      }
    }
    return frames;
  }

  /** The body is over: its last frames (calls still open, then `END`). The decoder then takes the next body. */
  end() {
    const r = C.decoderFinish(this._ptr());
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_finish', r);
    return this._drain([]);
  }

  /**
   * `pw_decoder_stats`, since the decoder was made (or reset): `notJson`, `unknownEvent`,
   * `badShape`, `overlong`, `afterEnd`, `cut` (events and values skipped or cut, by kind),
   * `callsStarted` and `callsWritten` (equal once a body is over).
   */
  get stats() {
    const s = {};
    const r = C.decoderStats(this._ptr(), s);
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_stats', r);
    return {
      notJson: s.not_json,
      unknownEvent: s.unknown_event,
      badShape: s.bad_shape,
      overlong: s.overlong,
      afterEnd: s.after_end,
      cut: s.cut,
      callsStarted: Number(s.calls_started),
      callsWritten: Number(s.calls_written),
    };
  }

  /** Starts afresh on the same memory: a body half read is dropped, the stats restart. */
  reset() {
    this._ptr();
    this._init();
  }

  /** Frees the C memory now (idempotent); every later use throws (`code === 'PW_DECODER_CLOSED'`). */
  close() {
    if (this._d === null) return;
    this._d = null;
    freeBlocks.unregister(this);
    this._mem.free();
  }

  get isClosed() {
    return this._d === null;
  }
}

/** A stream decoder for `provider` (a name or a `Provider` number); see `StreamDecoder` for the options. */
export function createDecoder(provider, options = {}) {
  return new StreamDecoder(provider, options);
}

/**
 * A `node:stream` Transform: body bytes (Buffers, Uint8Arrays or strings) in, frame objects
 * out (object mode on the readable side). The decoder is `this.decoder`; it is closed when the
 * stream ends or is destroyed.
 */
export class DecoderTransform extends Transform {
  constructor(provider, options = {}) {
    super({ readableObjectMode: true });
    this.decoder = createDecoder(provider, options);
  }
  _transform(chunk, _encoding, callback) {
    try {
      for (const f of this.decoder.write(chunk)) this.push(f);
      callback();
    } catch (e) {
      callback(e);
    }
  }
  _flush(callback) {
    try {
      for (const f of this.decoder.end()) this.push(f);
      callback();
    } catch (e) {
      callback(e);
    }
  }
  _destroy(err, callback) {
    this.decoder.close();
    callback(err);
  }
}

/**
 * A WHATWG TransformStream: body chunks (Uint8Array or string) in, frame objects out, e.g.
 * `response.body.pipeThrough(new DecoderStream('openai-chat'))`. The decoder is
 * `this.decoder`; it is closed when the stream ends or errors.
 */
export class DecoderStream extends TransformStream {
  constructor(provider, options = {}) {
    const decoder = createDecoder(provider, options);
    const guarded = (fn) => (...args) => {
      try {
        return fn(...args);
      } catch (e) {
        decoder.close();
        throw e;
      }
    };
    super({
      transform: guarded((chunk, controller) => {
        for (const f of decoder.write(chunk)) controller.enqueue(f);
      }),
      flush: guarded((controller) => {
        for (const f of decoder.end()) controller.enqueue(f);
        decoder.close();
      }),
      cancel: () => decoder.close(),
    });
    this.decoder = decoder;
  }
}

/** The chunks of a body: a web ReadableStream, a Node Readable or any (async) iterable. */
async function* chunksOf(body) {
  if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) {
    yield body; // a whole body
    return;
  }
  if (typeof body[Symbol.asyncIterator] === 'function' || typeof body[Symbol.iterator] === 'function') {
    yield* body;
    return;
  }
  if (typeof body.getReader === 'function') {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  }
  throw new TypeError('polyweave: a response body must be a ReadableStream or an async iterable of chunks');
}

/**
 * The frames of a `fetch()` Response's body (or of a ReadableStream / async iterable of chunks),
 * as they complete: `for await (const frame of framesFromResponse(res, 'anthropic'))`. The body
 * ends with its `END` frame; leaving the loop early cancels the body. Options are `createDecoder`'s.
 */
export async function* framesFromResponse(response, provider, options = {}) {
  const decoder = createDecoder(provider, options);
  try {
    let body = response;
    if (response !== null && typeof response === 'object' && 'body' in response && 'bodyUsed' in response) {
      if (response.bodyUsed) throw new TypeError('polyweave: the response body was already read');
      body = response.body; // null for a response without a body: it decodes as empty
    }
    if (body !== null && body !== undefined) {
      for await (const chunk of chunksOf(body)) yield* decoder.write(chunk);
    }
    yield* decoder.end();
  } finally {
    decoder.close();
  }
}

/** A frame's bytes: its exact text when it carries one, a string or bytes as given, else JSON. */
function frameBytes(frame) {
  if (typeof frame === 'string') return Buffer.from(frame, 'utf8');
  if (frame instanceof Uint8Array || frame instanceof ArrayBuffer) return bytesOf(frame);
  if (frame !== null && typeof frame === 'object') {
    if (typeof frame.rawJSON === 'string') return Buffer.from(frame.rawJSON, 'utf8'); // raw(text)
    if (typeof frame[RAW_TEXT] === 'string') return Buffer.from(frame[RAW_TEXT], 'utf8'); // a decoded frame
  }
  const t = JSON.stringify(frame);
  return Buffer.from(t === undefined ? '' : t, 'utf8');
}

/**
 * `pw_encode_item`: a `TOOL_CALL` frame (for the assistant turn) or a `TOOL_RESULT` frame (an
 * object, `raw(text)`, its JSON text or bytes) as `provider`'s request item, an object (its exact
 * text under `RAW_TEXT`: `rawText(item)`). A refusal throws an Error whose `code` is the
 * pw_result: `PW.ITEM_NOT_CALL_OR_RESULT`, `ITEM_NO_NAME`, `ITEM_NO_ID` (OpenAI and Anthropic
 * match results by id), `ITEM_NO_OUTCOME`, a frame's `FRAME_*` / `INVALID_JSON`, `UNKNOWN_PROVIDER`.
 */
export function encodeItem(provider, frame) {
  const p = providerNumber(provider);
  const bytes = frameBytes(frame);
  let out = Buffer.alloc(Math.max(256, 2 * bytes.length + 128));
  const n = [0];
  for (;;) {
    const r = C.encodeItem(p, bytes.length > 0 ? bytes : ONE, bytes.length, out, out.length, n);
    if (r === PW.BUFFER_TOO_SMALL) {
      out = Buffer.alloc(Number(n[0]));
      continue;
    }
    if (r !== PW.OK) throw pwError('polyweave: encodeItem', r);
    return objectOf(out.toString('utf8', 0, Number(n[0])));
  }
}
