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
import { C, PW, OutBuf, STRUCTS, Stable, U8, X, alignOffset, assertLoaded, pwError, writeStruct } from './binding.mjs';
import { trapError, trapped } from './wasm.mjs';
import { DV, lastLen, malloc, putBytes, release, sp, take, tempMark, textAt } from './memory.mjs';
import { forgetInPlace, frameBytes, objectAt, objectOf } from './raw.mjs';

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

// The names the library knew: a decoder per response and an item per call each name their
// provider, and the answer for a name does not change.
const providerNames = new Map();

/** A provider's number: a name goes through the library (once); a number is passed as is. */
function providerNumber(provider) {
  if (typeof provider === 'string') {
    const known = providerNames.get(provider);
    if (known !== undefined) return known;
    const p = providerFromName(provider);
    if (providerNames.size < 64) providerNames.set(provider, p);
    return p;
  }
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
// The bytes of the output buffer the frames of the current write (or finish) fill.
let outUsed = 0;
// Room for the length or count the library writes back: shared likewise (a write or a finish
// calls no JS while the library may write it), so a chunk takes no scratch room of its own.
let word = 0;
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
// A literal, not built from STATS: a decoder is made per response.
const noStats = () => ({ notJson: 0, unknownEvent: 0, badShape: 0, overlong: 0, afterEnd: 0, cut: 0, callsStarted: 0, callsWritten: 0 });
const CONFIG_STRUCT = STRUCTS.pw_decoder_config;
const STATS_STRUCT = STRUCTS.pw_decoder_stats;
// Each stat's field in `pw_decoder_stats`, read where the struct is written.
const STATS_AT = STATS.map(([k, name]) => {
  const f = STATS_STRUCT.fields.find((x) => x.name === name);
  return [k, { offset: f.offset, wide: f.type === 'uint64_t' }];
});

// Configurations already sized and checked by the library (key: the provider, `calls` and the
// options' values): a decoder made per response (framesFromResponse) takes their figures
// instead of asking the library again and taking and giving back a block to check them.
const checked = new Map();

/** The frames of one poll batch: `len` bytes at `at`, the frames' lengths in `lens`, appended to `frames` (deltas noted in place). */
function textsOf(at, len, lens, count, raw, frames) {
  const all = textAt(at, len);
  if (count === 1) {
    frames.push(raw ? all : objectAt(all, at, len));
    return;
  }
  // One UTF-16 unit per byte only when every byte is ASCII or an invalid byte decoded alone
  // (U+FFFD): then the frames' texts are the batch's text cut at their byte offsets, as each
  // frame decoded alone would read. Otherwise each frame is decoded alone.
  const sliced = all.length === len;
  let off = 0;
  for (let i = 0; i < count; i++) {
    const n = lens[i];
    const t = sliced ? all.slice(off, off + n) : textAt(at + off, n);
    frames.push(raw ? t : objectAt(t, at + off, n));
    off += n;
  }
}
// The lengths of a batch's frames: one array for every decoder, as a drain calls no user code.
const lens = [];
// A batch's text is cut into its frames' texts, and each of them keeps the whole batch's text
// alive: batches end past this many bytes, so a frame kept holds little more than itself.
const BATCH_BYTES = 4096;
// The output buffer is kept at least `pw_decoder_max_frame_len` past a batch for frames up
// to this long (the default configuration's is 32,832 bytes).
const WHOLE_FRAME_ROOM = 1 << 20;
// A write whose frames fill the output buffer doubles it, up to this size, so that the next
// writes of a body that long keep all their frames in place.
const WHOLE_WRITE_ROOM = 1 << 20;

/** Struct `s` with the values of `o`, as its bytes. */
function structBytes(s, o) {
  const mark = sp;
  const marked = tempMark();
  try {
    const at = take(s.size);
    writeStruct(s, at, o);
    return U8.slice(at, at + s.size);
  } finally {
    release(mark, marked);
  }
}

/**
 * `pw_decoder`: one provider's response bodies in, frames out (`createDecoder` makes one).
 *
 * Options (the C defaults, from `pw_decoder_config_default`, when left out): `eventCap` (the
 * longest provider event kept: a longer one is skipped and counted in `stats.overlong`),
 * `argsCap` (argument bytes per call), `nameCap`, `idCap`, `maxDepth`; `calls` (8: the most
 * calls one response may have open at once); `raw` (true: frames as their exact JSON text
 * instead of objects); `frameBuffer` (the least size of the output buffer the decoders share;
 * it grows when a frame needs more, and doubles, up to 1 MiB, when one write's frames fill it).
 *
 * While it reads a body the decoder lives in one block of the module's memory; `finish()` gives
 * it back (the next body takes one again), `close()` too, or the finalizer some time after a
 * decoder dropped in the middle of a body becomes unreachable.
 */
class Decoder {
  constructor(provider, options = {}) {
    this.provider = providerNumber(provider);
    this.calls = options.calls ?? 8;
    let plain = this.calls === 8;
    for (const [option, field] of CONFIG) {
      const v = options[option];
      if (v === undefined) continue;
      plain = false;
      if (!Number.isInteger(v) || v < 0) throw new TypeError(`polyweave: ${option} must be a non-negative integer`);
      if (field === 'max_depth' && v > 255) throw new RangeError('polyweave: maxDepth must be at most 255');
    }
    // The provider's number for its default configuration; a text naming the values otherwise.
    const key = plain ? this.provider : [this.provider, this.calls, ...CONFIG.map(([o]) => options[o])].join('/');
    this.raw = options.raw === true;
    this._frameBuffer = Math.max(1, options.frameBuffer ?? 4096);
    this._mem = null; // the block, while a body is read
    this._d = null;
    this._closed = false;
    this._past = noStats(); // the stats of the bodies whose blocks were given back
    const seen = Number.isInteger(this.calls) ? checked.get(key) : undefined;
    if (seen !== undefined) {
      this.memorySize = seen.memorySize;
      this.maxFrameLen = seen.maxFrameLen;
      this._cfg = seen.cfg;
      this._cfgBytes = seen.cfgBytes;
      this._align = seen.align;
      return;
    }
    const cfg = {};
    let r = C.decoderConfigDefault(cfg);
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_config_default', r);
    for (const [option, field] of CONFIG) if (options[option] !== undefined) cfg[field] = options[option];
    r = C.decoderSize(cfg, this.calls, n);
    if (r !== PW.OK) throw pwError('polyweave: decoder configuration', r);
    /** Bytes of the decoder's block (`pw_decoder_size`). */
    this.memorySize = Number(n[0]);
    r = C.decoderMaxFrameLen(cfg, n);
    if (r !== PW.OK) throw pwError('polyweave: decoder configuration', r);
    /** The longest frame this configuration can write (`pw_decoder_max_frame_len`). */
    this.maxFrameLen = Number(n[0]);
    this._cfg = cfg;
    this._cfgBytes = structBytes(CONFIG_STRUCT, cfg);
    this._align = Number(C.decoderAlign());
    // Checked now, as a configuration error belongs to createDecoder: a block taken and given back.
    this._open();
    this._give();
    if (!Number.isInteger(this.calls)) return;
    if (checked.size >= 64) checked.clear();
    checked.set(key, { memorySize: this.memorySize, maxFrameLen: this.maxFrameLen, cfg: Object.freeze(cfg), cfgBytes: this._cfgBytes, align: this._align });
  }

  /** The decoder's block and `pw_decoder`, taken for a body. */
  _open() {
    if (this._closed) throw closedError();
    if (this._d !== null) return this._d;
    assertLoaded();
    const mem = new Stable(this.memorySize + this._align);
    const mark = sp;
    const marked = tempMark();
    let r;
    let d;
    try {
      const cfgAt = take(this._cfgBytes.length);
      U8.set(this._cfgBytes, cfgAt);
      const dAt = take(4);
      r = X.pw_decoder_init(mem.at(alignOffset(mem.ptr, this._align)), this.memorySize, this.provider, cfgAt, this.calls, dAt) >>> 0;
      d = DV.getUint32(dAt, true);
    } catch (e) {
      mem.free();
      throw e;
    } finally {
      release(mark, marked);
    }
    if (r !== PW.OK) {
      mem.free();
      throw pwError('polyweave: pw_decoder_init', r);
    }
    this._mem = mem;
    this._d = d;
    freeBlocks.register(this, mem, this);
    if (out === null) {
      out = new OutBuf(4096);
      input = new OutBuf(4096);
      word = malloc(8);
    }
    // Room for a whole frame after a batch's bytes: the library then writes each frame once
    // instead of measuring it first (for a configuration whose longest frame is not huge).
    const want = Math.max(this._frameBuffer, this.maxFrameLen <= WHOLE_FRAME_ROOM ? this.maxFrameLen + BATCH_BYTES : 0);
    if (out.cap < want) {
      forgetInPlace(); // their bytes go with the old buffer
      out.grow(want);
    }
    return this._d;
  }

  /** Gives the block back, its stats kept (unless `drop`: no one will read them). */
  _give(drop = false) {
    if (this._d === null) return;
    if (!drop) this._past = this._sum();
    freeBlocks.unregister(this);
    this._mem.free();
    this._mem = null;
    this._d = null;
  }

  /** The stats so far: the past bodies' and the current one's. */
  _sum() {
    if (this._d === null) return { ...this._past };
    const mark = sp;
    const marked = tempMark();
    try {
      const at = take(STATS_STRUCT.size);
      const r = X.pw_decoder_get_stats(this._d, at) >>> 0;
      if (r !== PW.OK) throw pwError('polyweave: pw_decoder_get_stats', r);
      const s = {};
      for (const [k, f] of STATS_AT) s[k] = this._past[k] + (f.wide ? Number(DV.getBigUint64(at + f.offset, true)) : DV.getUint32(at + f.offset, true));
      return s;
    } finally {
      release(mark, marked);
    }
  }

  /**
   * Every frame waiting, appended to `frames`. The frames are polled one after the other into
   * the output buffer, after those of the write's earlier drains (`outUsed`), so that every
   * frame of a write stays where the library wrote it until the next write (raw.mjs, `inPlace`);
   * their texts are decoded together, a batch at a time (`textsOf`). `word` is room for the
   * length the library writes.
   */
  _drain(d, frames, word) {
    let used = outUsed;
    let start = used; // the batch's first byte
    let count = 0;
    for (;;) {
      const r = X.pw_decoder_poll_frame(d, out.ptr + used, out.cap - used, word) >>> 0;
      if (r === PW.OK) {
        const len = DV.getUint32(word, true);
        lens[count++] = len;
        used += len;
        if (used - start >= BATCH_BYTES) {
          textsOf(out.ptr + start, used - start, lens, count, this.raw, frames);
          start = used;
          count = 0;
        }
        continue;
      }
      if (r === PW.BUFFER_TOO_SMALL) {
        // The batch so far out first, then the next frame at the buffer's start: over this
        // write's frames, no longer in place. A larger buffer for the next writes, unless the
        // frame needs more than an empty one holds.
        if (count > 0) textsOf(out.ptr + start, used - start, lens, count, this.raw, frames);
        count = 0;
        forgetInPlace();
        if (used > 0) {
          if (out.cap < WHOLE_WRITE_ROOM) out.grow(Math.min(WHOLE_WRITE_ROOM, out.cap * 2));
        } else out.grow(DV.getUint32(word, true));
        used = 0;
        start = 0;
        continue;
      }
      if (count > 0) textsOf(out.ptr + start, used - start, lens, count, this.raw, frames);
      outUsed = used;
      if (r === PW.NOTHING) return frames;
      throw pwError('polyweave: pw_decoder_poll_frame', r);
    }
  }

  /** Body bytes in (split anywhere; a string is UTF-8): the frames they completed. */
  write(chunk) {
    const bytes = bytesOf(chunk);
    const d = this._open();
    const frames = [];
    // This write's frames go at the output buffer's start, over the last write's.
    forgetInPlace();
    outUsed = 0;
    if (bytes.length > input.cap) input.grow(bytes.length);
    const at0 = input.ptr;
    U8.set(bytes, at0);
    let at = 0;
    while (at < bytes.length) {
      const r = X.pw_decoder_feed(d, at0 + at, bytes.length - at, word) >>> 0;
      if (r !== PW.OK) throw pwError('polyweave: pw_decoder_feed', r);
      const used = DV.getUint32(word, true);
      at += used;
      const before = frames.length;
      this._drain(d, frames, word);
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
    return this._last(false);
  }

  /** finish(), and with `close` the decoder closed at once, its stats never read. */
  _last(close) {
    const d = this._open();
    const r = X.pw_decoder_finish(d) >>> 0;
    if (r !== PW.OK) throw pwError('polyweave: pw_decoder_finish', r);
    forgetInPlace();
    outUsed = 0;
    const frames = this._drain(d, [], word);
    this._give(close);
    if (close) this._closed = true;
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

/** The chunks of a body that is not a web ReadableStream: a Node Readable or any (async) iterable. */
async function* chunksOf(body) {
  if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) {
    yield body; // a whole body
    return;
  }
  if (typeof body[Symbol.asyncIterator] === 'function' || typeof body[Symbol.iterator] === 'function') {
    yield* body;
    return;
  }
  throw new TypeError('polyweave: a response body must be a ReadableStream or an async iterable of chunks');
}

const NEW = 0;
const READING = 1;
const DONE = 2;

/**
 * framesFromResponse's iterator. An async generator would take two promise turns per frame
 * (and `yield*` of each chunk's frames more): here a chunk's frames wait in an array and each
 * `next()` hands the next one out as a promise already settled; only reading a chunk waits.
 * As a generator's, the work starts at the first `next()`, the calls are answered in order
 * (one waits for the one before), and `return()` / `throw()` end it, cancelling the body.
 */
class FrameIterator {
  constructor(response, provider, options) {
    this._response = response;
    this._provider = provider;
    this._options = options;
    this._state = NEW;
    this._frames = [];
    this._at = 0;
    this._decoder = null;
    this._reader = null; // a web ReadableStream's reader
    this._chunks = null; // or the iterator of chunksOf(body)
    this._waiting = 0; // calls not answered yet (each waits for the one before)
    this._tail = null; // the promise of the last of them
    this._nextOp = () => this._next();
    this._onChunk = (chunk) => this._chunk(chunk);
    this._onFail = (e) => this._fail(e);
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    if (this._waiting === 0 && this._at < this._frames.length) {
      const value = this._frames[this._at];
      this._frames[this._at++] = undefined; // handed out: not kept here
      return Promise.resolve({ value, done: false });
    }
    return this._queue(this._nextOp);
  }

  return(value) {
    return this._queue(async () => {
      try {
        await this._end(true, false);
        return { value, done: true };
      } finally {
        this._waiting--;
      }
    });
  }

  throw(err) {
    return this._queue(async () => {
      try {
        await this._end(true, true);
        throw err;
      } finally {
        this._waiting--;
      }
    });
  }

  /**
   * Runs `op` (an async call that counts itself off `_waiting` when it ends) once the call
   * before it was answered: its promise.
   */
  _queue(op) {
    const p = this._waiting++ === 0 ? op() : this._tail.then(op, op);
    this._tail = p;
    return p;
  }

  /**
   * The next frame: from `_frames`, else from the next chunks read and decoded (one wait a
   * chunk). Counted off `_waiting` when it ends. Promise callbacks rather than an async
   * function: a chunk's wait is then one reaction, and a chunk's first frame is handed out
   * from that reaction as a plain result.
   */
  _next() {
    let r;
    try {
      r = this._advance();
    } catch (e) {
      return this._fail(e);
    }
    if (r !== null) {
      this._waiting--;
      return Promise.resolve(r);
    }
    return this._read();
  }

  /** The next result that needs no wait, or null when a chunk must be read first. */
  _advance() {
    for (;;) {
      if (this._at < this._frames.length) {
        const value = this._frames[this._at];
        this._frames[this._at++] = undefined;
        return { value, done: false };
      }
      if (this._state === DONE) return { value: undefined, done: true };
      if (this._state !== NEW) return null;
      this._start();
    }
  }

  /** Reads the next chunk: the promise of the next result. */
  _read() {
    let p;
    try {
      p = this._reader !== null ? this._reader.read() : this._chunks.next();
    } catch (e) {
      return this._fail(e);
    }
    return p.then(this._onChunk, this._onFail);
  }

  /** A chunk read: decoded, and the next result (or the next read's promise). */
  _chunk({ done, value }) {
    let r;
    try {
      if (done) {
        // The body is closed: its reader is dropped, not released (releasing one makes the
        // TypeError its `closed` promise now rejects with, stack and all: about 1 µs a body in
        // Node, for nothing a closed body can still give).
        this._reader = null;
        this._chunks = null;
        this._finish();
      } else {
        this._frames = this._decoder.write(value);
        this._at = 0;
      }
      r = this._advance();
    } catch (e) {
      return this._fail(e);
    }
    if (r === null) return this._read();
    this._waiting--;
    return r;
  }

  /** Ends the iterator on `e` (the body cancelled) and rejects with it. */
  async _fail(e) {
    try {
      await this._end(true, true);
    } finally {
      this._waiting--;
    }
    throw e;
  }

  /** The first `next()`: the decoder and the body's reader. */
  _start() {
    this._state = READING;
    const response = this._response;
    this._response = null;
    this._decoder = createDecoder(this._provider, this._options);
    let body = response;
    if (response !== null && typeof response === 'object' && 'body' in response && 'bodyUsed' in response) {
      if (response.bodyUsed) throw new TypeError('polyweave: the response body was already read');
      body = response.body; // null for a response without a body: it decodes as empty
    }
    if (body === null || body === undefined) this._finish();
    else if (typeof body.getReader === 'function') this._reader = body.getReader();
    else this._chunks = chunksOf(body);
  }

  /** The body is over: its last frames wait, the decoder is closed. */
  _finish() {
    this._frames = this._decoder._last(true); // its stats are no one's
    this._at = 0;
    this._decoder = null;
    this._state = DONE;
  }

  /**
   * Ends the iterator: the frames left are dropped, the decoder closed, and a body still being
   * read cancelled (`cancel`). `quiet`: the body's refusal to cancel is not thrown (an error
   * is already on its way out).
   */
  async _end(cancel, quiet) {
    this._state = DONE;
    this._frames = [];
    this._at = 0;
    this._response = null;
    const decoder = this._decoder;
    const reader = this._reader;
    const chunks = this._chunks;
    this._decoder = null;
    this._reader = null;
    this._chunks = null;
    decoder?.close();
    try {
      if (reader !== null) {
        if (cancel) await reader.cancel();
        reader.releaseLock();
      } else if (chunks !== null && cancel) await chunks.return();
    } catch (e) {
      if (!quiet) throw e;
    }
  }
}

// What async generators inherit (`[Symbol.asyncIterator]`, and whatever the engine adds there).
Object.setPrototypeOf(FrameIterator.prototype, Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}).prototype));

/**
 * The frames of a `fetch()` Response's body (or of a ReadableStream / async iterable of chunks),
 * as they complete: `for await (const frame of framesFromResponse(res, 'anthropic'))`. The body
 * ends with its `END` frame; leaving the loop early cancels the body. Options are `createDecoder`'s.
 */
export function framesFromResponse(response, provider, options = {}) {
  return new FrameIterator(response, provider, options);
}

/**
 * `pw_encode_item`: a `TOOL_CALL` frame (for the assistant turn) or a `TOOL_RESULT` frame (an
 * object, `raw(text)`, its JSON text or bytes) as `provider`'s request item, an object (carrying its
 * exact text: `rawText(item)`). A refusal throws an Error whose `code` is the
 * pw_result: `PW.ITEM_NOT_CALL_OR_RESULT`, `ITEM_NO_NAME`, `ITEM_NO_ID` (OpenAI and Anthropic
 * match results by id), `ITEM_NO_OUTCOME`, a frame's `FRAME_*` / `INVALID_JSON`, `UNKNOWN_PROVIDER`.
 */
export function encodeItem(provider, frame) {
  const p = providerNumber(provider);
  const bytes = frameBytes(frame);
  assertLoaded();
  // The frame, the item and the length on the scratch stack (a large item in a block given back).
  const mark = sp;
  const marked = tempMark();
  try {
    const at = putBytes(bytes);
    const len = lastLen;
    const word = take(4);
    let cap = Math.max(256, 6 * len + 128);
    let out = take(cap);
    for (;;) {
      const r = X.pw_encode_item(p, at, len, out, cap, word) >>> 0;
      if (r === PW.BUFFER_TOO_SMALL) {
        cap = DV.getUint32(word, true);
        out = take(cap);
        continue;
      }
      if (r !== PW.OK) throw pwError('polyweave: encodeItem', r);
      return objectOf(textAt(out, DV.getUint32(word, true)));
    }
  } finally {
    release(mark, marked);
  }
}
