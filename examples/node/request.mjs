// Asking the model again (SPEC §10) over the C ABI's `pw_conversation_*` and `pw_request_*`:
// the conversation so far (system text, user texts, the model's turns as the decoder gave them,
// the wrapper's results) kept in a bounded block of the module's memory, and the next request
// body written by the library in the provider's shape, chunk by chunk. Every rule (what is kept,
// what is evicted, the body's bytes, every refusal) is the C library's; this module moves bytes.
//
//   const conv = createConversation({ capacity: 65536 });
//   conv.setSystem('Be terse.'); conv.pushUser('Weather in Paris?');
//   conv.beginResponse('anthropic'); for (const f of frames) conv.pushFrame(f);  // decoded frames
//   conv.pushFrame(toolResultFrame);                                             // the wrapper's
//   const req = conv.request('anthropic', { model: 'claude-x' }, [{ name: 'get_weather' }]);
//   await fetch(url, { method: 'POST', body: req.stream(), duplex: 'half' });
import { C, PW, OutBuf, Stable, U8, alignOffset, bytesAt, pwError, utf8 } from './binding.mjs';
import { providerFromName } from './decode.mjs';
import { frameBytes, rawText } from './raw.mjs';

/** A provider's number: a name goes through the library; a number is passed as is. */
function providerNumber(provider) {
  if (typeof provider === 'string') return providerFromName(provider);
  if (Number.isInteger(provider) && provider >= 0) return provider;
  throw new TypeError('polyweave: provider must be a name (such as "openai-chat") or a Provider number');
}

/** An Error with a package code (no `errno`: it is not a `pw_result`). */
function packageError(message, code) {
  const e = new Error(message);
  e.code = code;
  return e;
}
const conversationClosed = () =>
  packageError('polyweave: this conversation is closed (close() was called); create a new one', 'PW_CONVERSATION_CLOSED');
const requestClosed = () =>
  packageError('polyweave: this request is closed (close() was called); make it again with conversation.request()', 'PW_REQUEST_CLOSED');

/** JSON text given as a string (as is), `raw(text)`, an object carrying its text, or a value (its JSON). */
function jsonText(v) {
  return typeof v === 'string' ? v : rawText(v);
}

const PUSHED = new Map([
  [PW.PUSHED_KEPT, 'kept'],
  [PW.PUSHED_IGNORED, 'ignored'],
  [PW.PUSHED_ENDED, 'ended'],
]);

const CHOICES = new Map([
  ['auto', PW.TOOL_CHOICE_AUTO],
  ['none', PW.TOOL_CHOICE_NONE],
  ['required', PW.TOOL_CHOICE_REQUIRED],
]);

// Blocks of conversations and requests dropped without close(): freed some time after their
// object becomes unreachable.
const freeBlocks = new FinalizationRegistry((held) => {
  for (const s of held) s.free();
});

/**
 * `pw_conversation`: what goes back to the model, in one block of the module's memory
 * (`createConversation` makes one). Its memory is `capacity` bytes: when an entry does not fit,
 * older exchanges lose their reasoning, then whole entries are evicted, oldest first (SPEC
 * §10.2.3); an entry that does not fit even then is refused (`PW_CONVERSATION_NO_ROOM`).
 *
 * Every refusal throws an Error whose `code` is the C name (`'PW_CONVERSATION_UNKNOWN_CALL'`...)
 * and `errno` its number, and changes nothing. Any call that may change the conversation makes
 * the requests made from it before stale (`PW_REQUEST_STALE`), whatever it returns.
 */
class Conversation {
  constructor({ capacity = 65536 } = {}) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new TypeError('polyweave: capacity must be a non-negative integer');
    const n = [0];
    let r = C.conversationSize(capacity, n);
    if (r !== PW.OK) throw pwError('polyweave: pw_conversation_size', r);
    const size = Number(n[0]);
    const align = Number(C.conversationAlign());
    const mem = new Stable(size + align);
    r = C.conversationInit(mem.at(alignOffset(mem.ptr, align)), size, n);
    if (r !== PW.OK) {
      mem.free();
      throw pwError('polyweave: pw_conversation_init', r);
    }
    this._c = n[0];
    this._mem = mem;
    this._closed = false;
    freeBlocks.register(this, [mem], this);
    // The engine does not see the module's memory, so a dropped conversation would be collected
    // only when the JS heap fills: an ArrayBuffer of a sixteenth of the block makes it count some
    // of it (as the wrappers do, wrapper.mjs).
    this._pressure = new ArrayBuffer(mem.size >> 4);
  }

  /** The conversation, or a throw when it is closed. */
  _live() {
    if (this._closed) throw conversationClosed();
    return this._c;
  }

  /** Throws the refusal of a `pw_conversation_*` call. */
  _check(what, r) {
    if (r !== PW.OK) throw pwError(`polyweave: conversation.${what}`, r);
  }

  /** Sets the system text (written first, never evicted); it replaces the one held. */
  setSystem(text) {
    this._check('setSystem', C.conversationSetSystem(this._live(), String(text)));
  }

  /** Adds a user text; it ends a response still open. */
  pushUser(text) {
    this._check('pushUser', C.conversationPushUser(this._live(), String(text)));
  }

  /** Keeps the first user text whatever else is evicted (`true`) or not. */
  pinFirstUser(pin = true) {
    this._check('pinFirstUser', C.conversationPinFirstUser(this._live(), pin ? 1 : 0));
  }

  /** Begins the assistant turn of one response from `provider` (a name or a `Provider` number). */
  beginResponse(provider) {
    this._check('beginResponse', C.conversationBeginResponse(this._live(), providerNumber(provider)));
  }

  /**
   * Hands in one frame: a decoder's `TEXT`, `REASONING`, `STATE`, `TOOL_CALL`, `END`, `ERROR`
   * into the response begun, a wrapper's `TOOL_RESULT` beside its call. A frame the package
   * handed out goes in as its exact text. Returns `'kept'`, `'ignored'` (not part of what goes
   * back to a provider) or `'ended'` (`END` / `ERROR`: the response is over).
   */
  pushFrame(frame) {
    const out = [0];
    this._check('pushFrame', C.conversationPushFrame(this._live(), frameBytes(frame), out));
    return PUSHED.get(out[0]);
  }

  /** Ends the response being read (a decoder's `END` does it too). */
  endResponse() {
    this._check('endResponse', C.conversationEndResponse(this._live()));
  }

  /** Forgets every entry (the memory is kept; the eviction count restarts). */
  clear() {
    this._check('clear', C.conversationClear(this._live()));
  }

  /**
   * `pw_conversation_get_stats`: `used` and `capacity` (bytes of its memory), `entries` (the
   * system text included), `evicted` (since it was made or cleared). It only reads.
   */
  stats() {
    const s = {};
    this._check('stats', C.conversationStats(this._live(), s));
    return { used: Number(s.used), capacity: Number(s.capacity), entries: Number(s.entries), evicted: Number(s.evicted) };
  }

  /**
   * The next request body for `provider`, as the conversation stands now: `options` `{ model,
   * maxTokens, toolChoice ('auto' | 'none' | 'required' | { name }), extra (an object of
   * top-level members, or its JSON text) }`, `declarations` the tools the model is told of
   * (`{ name, description, schema, strict }` or `{ mcp: tools/list entry }`). A refused
   * declaration throws with `err.index`, its place in `declarations`.
   */
  request(provider, options = {}, declarations = []) {
    return new Request(this, providerNumber(provider), options, declarations);
  }

  /** Frees the C memory now (idempotent); every later use, and its requests', throws (`code === 'PW_CONVERSATION_CLOSED'`). */
  close() {
    if (this._closed) return;
    this._closed = true;
    freeBlocks.unregister(this);
    this._mem.free();
    this._c = null;
    this._pressure = null;
  }

  get isClosed() {
    return this._closed;
  }
}

/** Texts laid out one after another in one block; their spans `{ ptr, len }` once placed. */
class Texts {
  constructor() {
    this.parts = [];
    this.size = 0;
  }
  /** Reserves a text (a string as UTF-8); its span is filled in by `place`. */
  add(text) {
    const bytes = utf8(text);
    const span = { ptr: 0, len: bytes.length, at: this.size, bytes };
    this.parts.push(span);
    this.size += bytes.length;
    return span;
  }
  /** Copies the texts into the block at `ptr` and sets their spans. */
  place(ptr) {
    for (const s of this.parts) {
      s.ptr = ptr + s.at;
      U8.set(s.bytes, s.ptr);
      delete s.at;
      delete s.bytes;
    }
  }
}

/** A `pw_declaration`'s texts from a plain declaration object. */
function declarationTexts(d, i, texts) {
  if (d === null || typeof d !== 'object') throw new TypeError(`polyweave: declaration ${i} must be an object`);
  if (d.mcp !== undefined) {
    return { mcp_entry: texts.add(jsonText(d.mcp)), strict: 0 };
  }
  if (typeof d.name !== 'string') throw new TypeError(`polyweave: declaration ${i} needs a string name (or mcp: a tools/list entry)`);
  if (d.description !== undefined && typeof d.description !== 'string') {
    throw new TypeError(`polyweave: declaration ${i}'s description must be a string`);
  }
  return {
    name: texts.add(d.name),
    description: texts.add(d.description ?? ''),
    schema: texts.add(d.schema === undefined ? '' : jsonText(d.schema)),
    strict: d.strict ? 1 : 0,
  };
}

/** `pw_request_options` (from `pw_request_options_default`) with the options' texts. */
function optionsOf(options, texts) {
  if (options === null || typeof options !== 'object') throw new TypeError('polyweave: request options must be an object');
  const o = {};
  const r = C.requestOptionsDefault(o);
  if (r !== PW.OK) throw pwError('polyweave: pw_request_options_default', r);
  const { model, maxTokens, toolChoice, extra } = options;
  if (typeof model !== 'string') throw new TypeError('polyweave: options.model must be a string');
  o.model = texts.add(model);
  if (maxTokens !== undefined) {
    if (!Number.isInteger(maxTokens) || maxTokens < 0 || maxTokens > 0xffffffff) {
      throw new TypeError('polyweave: options.maxTokens must be an integer from 0 to 2^32-1');
    }
    o.max_tokens = maxTokens;
  }
  if (toolChoice !== undefined) {
    if (typeof toolChoice === 'string' && CHOICES.has(toolChoice)) o.tool_choice = CHOICES.get(toolChoice);
    else if (toolChoice !== null && typeof toolChoice === 'object' && typeof toolChoice.name === 'string') {
      o.tool_choice = PW.TOOL_CHOICE_TOOL;
      o.tool = texts.add(toolChoice.name);
    } else throw new TypeError("polyweave: options.toolChoice must be 'auto', 'none', 'required' or { name }");
  }
  if (extra !== undefined) o.extra = texts.add(jsonText(extra));
  return o;
}

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** Bytes of a chunk `stream()` writes by default. */
const CHUNK = 16 * 1024;

/**
 * `pw_request`: one request body, checked and measured when made, written by the library on
 * demand (`text()`, `bytes()`, `stream()`, each from the start). It borrows its conversation:
 * once that changes, every use throws `PW_REQUEST_STALE` (make the request again).
 */
class Request {
  constructor(conversation, provider, options, declarations) {
    const c = conversation._live();
    if (!Array.isArray(declarations)) throw new TypeError('polyweave: declarations must be an array');
    const texts = new Texts();
    const opts = optionsOf(options, texts);
    const decls = declarations.map((d, i) => declarationTexts(d, i, texts));
    // For a refusal's message: the tool's name as the host gave it, where it is at hand.
    this._names = declarations.map((d) => (typeof d.name === 'string' ? d.name : typeof d.mcp?.name === 'string' ? d.mcp.name : null));
    const n = [0];
    let r = C.requestSize(decls.length, n);
    if (r !== PW.OK) throw pwError('polyweave: pw_request_size', r);
    this._size = Number(n[0]);
    this._align = Number(C.requestAlign());
    // One block: the request, then the texts it borrows (the structs are read at init only).
    const at = Math.ceil((this._size + this._align) / 8) * 8;
    const mem = new Stable(at + texts.size);
    texts.place(mem.at(at));
    this.conversation = conversation;
    this.provider = provider;
    this._opts = opts;
    this._decls = decls;
    this._mem = mem;
    this._closed = false;
    try {
      this._r = this._init(mem, c);
    } catch (e) {
      mem.free();
      throw e;
    }
    freeBlocks.register(this, [mem], this);
  }

  /** `pw_request_init` in `mem`: the request's own block, or a pass's. */
  _init(mem, c) {
    const out = [0];
    const bad = [0];
    const r = C.requestInit(mem.at(alignOffset(mem.ptr, this._align)), this._size, c, this.provider, this._opts, this._decls, this._decls.length, out, bad);
    if (r !== PW.OK) {
      const e = pwError('polyweave: conversation.request', r);
      // Only a declaration's refusal writes its index: the PW_DECLARATION_* codes here, as the
      // texts this module hands in are UTF-8 and `strict` is 0 or 1.
      if (r >= PW.DECLARATION_BAD_NAME && r <= PW.DECLARATION_DUPLICATE_NAME) {
        const name = this._names[bad[0]];
        e.index = bad[0];
        e.message += ` (declaration ${bad[0]}${name === null ? '' : `, ${JSON.stringify(name)}`})`;
      }
      throw e;
    }
    return out[0];
  }

  /** The request, or a throw when it (or its conversation) is closed (the library says when it is stale). */
  _live() {
    if (this._closed) throw requestClosed();
    this.conversation._live();
    return this._r;
  }

  /** The body's length in bytes (for `Content-Length`), known before any is written. */
  get length() {
    return this._len('length');
  }

  /** `pw_request_len`, or the throw of `request.<what>` (stale, closed). */
  _len(what) {
    const n = [0];
    const r = C.requestLen(this._live(), n);
    if (r !== PW.OK) throw pwError(`polyweave: request.${what}`, r);
    return Number(n[0]);
  }

  /**
   * A writing pass from the start: a fresh `pw_request` over the same texts, in a block of its
   * own (so passes may overlap). The request is checked not stale first.
   */
  _pass(what) {
    const length = this._len(what);
    const mem = new Stable(this._size + this._align);
    try {
      return { mem, r: this._init(mem, this.conversation._live()), length };
    } catch (e) {
      mem.free();
      throw e;
    }
  }

  /** `pw_request_write` into `buf`: the bytes written, 0 at the end. */
  _write(pass, buf) {
    this._live();
    const n = [0];
    const r = C.requestWrite(pass.r, buf.ptr, buf.cap, n);
    if (r === PW.NOTHING) return 0;
    if (r !== PW.OK) throw pwError('polyweave: request body', r);
    return Number(n[0]);
  }

  /** The whole body as bytes (a Uint8Array of its own), written chunk by chunk. */
  bytes() {
    const pass = this._pass('bytes');
    const buf = new OutBuf(Math.min(Math.max(pass.length, 1), 64 * 1024));
    try {
      const body = new Uint8Array(pass.length);
      let at = 0;
      for (;;) {
        const k = this._write(pass, buf);
        if (k === 0) break;
        if (at + k > body.length) throw new Error('polyweave: the request body is longer than its length');
        body.set(U8.subarray(buf.ptr, buf.ptr + k), at);
        at += k;
      }
      if (at !== body.length) throw new Error('polyweave: the request body is shorter than its length');
      return body;
    } finally {
      buf.free();
      pass.mem.free();
    }
  }

  /** The whole body as a string. */
  text() {
    return utf8Decoder.decode(this.bytes());
  }

  /**
   * The body as a `ReadableStream<Uint8Array>` (e.g. `fetch`'s `body`, with `duplex: 'half'`):
   * each chunk (at most `chunkSize` bytes) written by the library when the stream pulls it.
   * The stream errors when the request becomes stale, or it or its conversation is closed.
   */
  stream({ chunkSize = CHUNK } = {}) {
    if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new TypeError('polyweave: chunkSize must be a positive integer');
    const pass = this._pass('stream');
    const buf = new OutBuf(chunkSize);
    const held = [pass.mem, buf];
    const source = {
      pull: (controller) => {
        try {
          const k = this._write(pass, buf);
          if (k === 0) {
            done();
            controller.close();
          } else controller.enqueue(bytesAt(buf.ptr, k));
        } catch (e) {
          done();
          controller.error(e);
        }
      },
      cancel: () => done(),
    };
    // The pass's blocks go back at the end, on cancel or error, or with the stream dropped midway.
    const done = () => {
      freeBlocks.unregister(source);
      for (const s of held.splice(0)) s.free();
    };
    freeBlocks.register(source, held, source);
    return new ReadableStream(source, { highWaterMark: 0 });
  }

  /** Frees the C memory now (idempotent); every later use throws (`code === 'PW_REQUEST_CLOSED'`). */
  close() {
    if (this._closed) return;
    this._closed = true;
    freeBlocks.unregister(this);
    this._mem.free();
    this._r = null;
  }

  get isClosed() {
    return this._closed;
  }
}

// `using x = ...` (explicit resource management) closes them, where the engine has the symbol.
if (typeof Symbol.dispose === 'symbol') {
  Conversation.prototype[Symbol.dispose] = Conversation.prototype.close;
  Request.prototype[Symbol.dispose] = Request.prototype.close;
}

/** A conversation with `capacity` bytes of memory (65536 by default); see `Conversation`. */
export function createConversation(options = {}) {
  return new Conversation(options);
}

/** `pw_request_gemini_path`: the path Gemini takes a body at, `models/<model>:streamGenerateContent?alt=sse`. */
export function geminiPath(model) {
  if (typeof model !== 'string') throw new TypeError('polyweave: model must be a string');
  const buf = new OutBuf(model.length * 3 + 64);
  const n = [0];
  try {
    for (;;) {
      const r = C.requestGeminiPath(model, buf.ptr, buf.cap, n);
      if (r === PW.BUFFER_TOO_SMALL) {
        buf.grow(n[0]);
        continue;
      }
      if (r !== PW.OK) throw pwError('polyweave: geminiPath', r);
      return buf.text(n[0]);
    }
  } finally {
    buf.free();
  }
}

export { Conversation, Request };
