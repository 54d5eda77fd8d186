// Stream decoders and item encoders (SPEC §8) over the C ABI's `pw_decoder_*` and
// `pw_encode_item`: an LLM provider's streamed HTTP response body (SSE, or NDJSON for Ollama),
// split anywhere, in; the library's frames (`TEXT`, `REASONING`, `TOOL_CALL`, `ERROR`, one `END`
// per body) out, as objects. Every rule is the C library's; this module moves bytes and text.
//
//   for await (const frame of framesFromResponse(await fetch(url, req), 'openai-chat')) ...
//   response.body.pipeThrough(new DecoderStream('anthropic'))        // WHATWG streams
//   nodeReadable.pipe(new DecoderTransform('gemini'))                // node:stream, object mode
//   const d = createDecoder('ollama'); d.write(chunk); d.finish()    // by hand
//   encodeItem('openai-responses', toolResultFrame)                  // the next request's item
import { C, PW, OutBuf, Stable, U8, alignOffset, pwError } from './binding.mjs';
import { trapError, trapped } from './wasm.mjs';
import { frameBytes, objectOf } from './raw.mjs';

// node:stream only where there is one (Node): a browser loads this module without it, and
// `DecoderTransform` then says what to use instead.
const nodeStream = globalThis.process?.versions?.node ? await import('node:stream') : null;

/** `enum pw_provider`: the formats the decoders read and the item encoders write. */
export const Provider = Object.freeze({
  OPENAI_CHAT: PW.PROVIDER_OPENAI_CHAT,
  OPENAI_RESPONSES: PW.PROVIDER_OPENAI_RESPONSES,
  ANTHROPIC: PW.PROVIDER_ANTHROPIC,
  GEMINI: PW.PROVIDER_GEMINI,
  OLLAMA: PW.PROVIDER_OLLAMA,
});

/**
 * `pw_provider_from_name`: the number of `openai-chat`, `openai-responses`, `anthropic`,
 * `gemini` or `ollama`; an Error with `code === PW.UNKNOWN_PROVIDER` (400) for any other name.
 */
export function providerFromName(name) {
  const out = [0];
  const r = C.providerFromName(String(name), out);
  if (r !== PW.OK) throw pwError(`polyweave: provider ${JSON.stringify(String(name))}`, r);
  return Number(out[0]);
}

/** A provider's number: a name goes through the library; a number is passed as is. */
function providerNumber(provider) {
  if (typeof provider === 'string') return providerFromName(provider);
  if (Number.isInteger(provider) && provider >= 0) return provider;
  throw new TypeError('polyweave: provider must be a name (such as "openai-chat") or a Provider number');
}

const encoder = new TextEncoder();

/** Body bytes as a Uint8Array over the same memory (a string is UTF-8). */
function bytesOf(chunk) {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return encoder.encode(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError('polyweave: a body chunk must be a Uint8Array, Buffer, ArrayBuffer or string');
}

// The options' names and the pw_decoder_config fields they set.
const CONFIG = [
  ['eventCap', 'event_cap'],
  ['argsCap', 'args_cap'],
  ['nameCap', 'name_cap'],
  ['idCap', 'id_cap'],
  ['maxDepth', 'max_depth'],
];

// A decoder holds a block of the module's memory only while a body is being read: the block is
// taken at the body's first bytes and given back by `finish()` (blocks of one size are reused at
// once: memory.mjs), so decoders used and dropped without `close()` hold nothing, and the
// finalizer is needed only for one dropped in the middle of a body.
const freeBlocks = new FinalizationRegistry((mem) => mem.free());

// The output and input buffers, shared by every decoder: a write or a finish runs to its end
// without calling any user code, so no two decoders use them at once.
let out = null;
let input = null;
const n = [0];

function closedError() {
  const e = new Error('polyweave: this decoder is closed (close() was called); create a new one');
  e.code = 'PW_DECODER_CLOSED';
  return e;
}

const STATS = [
  ['notJson', 'not_json'],
  ['unknownEvent', 'unknown_event'],
  ['badShape', 'bad_shape'],
  ['overlong', 'overlong'],
  ['afterEnd', 'after_end'],
  ['cut', 'cut'],
  ['callsStarted', 'calls_started'],
  ['callsWritten', 'calls_written'],
];
const noStats = () => Object.fromEntries(STATS.map(([k]) => [k, 0]));

/**
 * `pw_decoder`: one provider's response bodies in, frames out (`createDecoder` makes one).
 *
 * Options (the C defaults, from `pw_decoder_config_default`, when left out): `eventCap` (the
 * longest provider event kept: a longer one is skipped and counted in `stats.overlong`),
 * `argsCap` (argument bytes per call), `nameCap`, `idCap`, `maxDepth`; `calls` (8: the most
 * calls one response may have open at once); `raw` (true: frames as their exact JSON text
 * instead of objects); `frameBuffer` (the least size of the output buffer; it grows when the
 * library asks for more).
 *
 * While it reads a body the decoder lives in one block of the module's memory; `finish()` gives
 * it back (the next body takes one again), `close()` too, or the finalizer some time after a
 * decoder dropped in the middle of a body becomes unreachable.
 */
class Decoder {
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
    r = C.decoderSize(cfg, this.calls, n);
    if (r !== PW.OK) throw pwError('polyweave: decoder configuration', r);
    /** Bytes of the decoder's block (`pw_decoder_size`). */
    this.memorySize = Number(n[0]);
    r = C.decoderMaxFrameLen(cfg, n);
    if (r !== PW.OK) throw pwError('polyweave: decoder configuration', r);
    /** The longest frame this configuration can write (`pw_decoder_max_frame_len`). */
    this.maxFrameLen = Number(n[0]);
    this.raw = options.raw === true;
    this._cfg = cfg;
    this._align = Number(C.decoderAlign());
    this._frameBuffer = Math.max(1, options.frameBuffer ?? 4096);
    this._mem = null; // the block, while a body is read
    this._d = null;
    this._closed = false;
    this._past = noStats(); // the stats of the bodies whose blocks were given back
    // Checked now, as a configuration error belongs to createDecoder: a block taken and given back.
    this._open();
    this._give();
  }

  /** The decoder's block and `pw_decoder`, taken for a body. */
  _open() {
    if (this._closed) throw closedError();
    if (this._d !== null) return this._d;
    const mem = new Stable(this.memorySize + this._align);
    const r = C.decoderInit(mem.at(alignOffset(mem.ptr, this._align)), this.memorySize, this.provider, this._cfg, this.calls, n);
    if (r !== PW.OK) {
      mem.free();
      throw pwError('polyweave: pw_decoder_init', r);
    }
    this._mem = mem;
    this._d = n[0];
    freeBlocks.register(this, mem, this);
    if (out === null) {
      out = new OutBuf(4096);
      input = new OutBuf(4096);
    }
    if (out.cap < this._frameBuffer) out.grow(this._frameBuffer);
    return this._d;
  }

  /** Gives the block back, its stats kept. */
  _give() {
    if (this._d === null) return;
    this._past = this._sum();
    freeBlocks.unregister(this);
    this._mem.free();
    this._mem = null;
    this._d = null;
  }

  /** The stats so far: the past bodies' and the current one's. */
  _sum() {
    if (this._d === null) return { ...this._past };
    const s = {};
    const r = C.decoderStats(this._d, s);
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_get_stats', r);
    return Object.fromEntries(STATS.map(([k, f]) => [k, this._past[k] + Number(s[f])]));
  }

  /** Every frame waiting, appended to `frames`. */
  _drain(d, frames) {
    for (;;) {
      const r = C.decoderPollFrame(d, out.ptr, out.cap, n);
      if (r === PW.BUFFER_TOO_SMALL) {
        out.grow(n[0]);
        continue;
      }
      if (r === PW.NOTHING) return frames;
      if (r !== PW.OK) throw pwError('polyweave: pw_decoder_poll_frame', r);
      const text = out.text(n[0]);
      frames.push(this.raw ? text : objectOf(text));
    }
  }

  /** Body bytes in (split anywhere; a string is UTF-8): the frames they completed. */
  write(chunk) {
    const bytes = bytesOf(chunk);
    const d = this._open();
    const frames = [];
    if (bytes.length > input.cap) input.grow(bytes.length);
    const at0 = input.ptr;
    U8.set(bytes, at0);
    let at = 0;
    while (at < bytes.length) {
      const r = C.decoderFeed(d, at0 + at, bytes.length - at, n);
      if (r !== PW.OK) throw pwError('polyweave: pw_decoder_feed', r);
      const used = Number(n[0]);
      at += used;
      const before = frames.length;
      this._drain(d, frames);
      // The library takes nothing only while frames wait, and they were all drained.
      if (used === 0 && frames.length === before) {
        throw new Error('polyweave: pw_decoder_feed took no bytes with no frame waiting');
      }
    }
    return frames;
  }

  /**
   * The body is over: its last frames (calls still open, then `END`). The decoder gives its
   * block back and takes the next body.
   */
  finish() {
    const d = this._open();
    const r = C.decoderFinish(d);
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_finish', r);
    const frames = this._drain(d, []);
    this._give();
    return frames;
  }

  /**
   * `pw_decoder_stats`, summed over the bodies since the decoder was made (or reset):
   * `notJson`, `unknownEvent`, `badShape`, `overlong`, `afterEnd`, `cut` (events and values
   * skipped or cut, by kind), `callsStarted` and `callsWritten` (equal once a body is over).
   */
  get stats() {
    if (this._closed) throw closedError();
    // Between bodies no C call is made: a poisoned module is refused all the same, as everywhere.
    if (trapped()) throw trapError();
    return this._sum();
  }

  /** Starts afresh: a body half read is dropped, the stats restart. */
  reset() {
    if (this._closed) throw closedError();
    this._give();
    this._past = noStats();
  }

  /** Frees the C memory now (idempotent); every later use throws (`code === 'PW_DECODER_CLOSED'`). */
  close() {
    if (this._closed) return;
    this._give();
    this._closed = true;
  }

  get isClosed() {
    return this._closed;
  }
}

// `using x = ...` (explicit resource management) closes it, where the engine has the symbol.
if (typeof Symbol.dispose === 'symbol') Decoder.prototype[Symbol.dispose] = Decoder.prototype.close;

/** A stream decoder for `provider` (a name or a `Provider` number); see `Decoder` for the options. */
export function createDecoder(provider, options = {}) {
  return new Decoder(provider, options);
}

/**
 * A `node:stream` Transform: body bytes (Buffers, Uint8Arrays or strings) in, frame objects
 * out (object mode on the readable side). The decoder is `this.decoder`; it is closed when the
 * stream ends or is destroyed.
 */
export const DecoderTransform = nodeStream
  ? class DecoderTransform extends nodeStream.Transform {
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
      for (const f of this.decoder.finish()) this.push(f);
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
  : class DecoderTransform {
      constructor() {
        throw new TypeError('polyweave: DecoderTransform is a node:stream Transform (Node only); use DecoderStream (WHATWG streams) here');
      }
    };

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
        for (const f of decoder.finish()) controller.enqueue(f);
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
    yield* decoder.finish();
  } finally {
    decoder.close();
  }
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
  const out = new OutBuf(Math.max(256, 6 * bytes.length + 128));
  const n = [0];
  try {
    for (;;) {
      const r = C.encodeItem(p, bytes, out.ptr, out.cap, n);
      if (r === PW.BUFFER_TOO_SMALL) {
        out.grow(n[0]);
        continue;
      }
      if (r !== PW.OK) throw pwError('polyweave: encodeItem', r);
      return objectOf(out.text(n[0]));
    }
  } finally {
    out.free();
  }
}
