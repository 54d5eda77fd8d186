// `createToolAdapterWrapper` (SPEC §3) over the C ABI's wrapper (`pw_wrapper_*`): this module only
// moves frames and calls between JS and the C wrapper; interception, pending counts, held ENDs,
// continue prompts, timeouts, cancel, round limits and the trace all happen in the C library.
import {
  C,
  ENUMS,
  PW,
  Stable,
  alignOffset,
  bindHooks,
  callIndex,
  callInfoHead,
  callInfoTexts,
  deadline,
  isMalformed,
  isNotWaiting,
  OutBlock,
  OutBuf,
  outcomeOf,
  pwError,
  registerHooks,
  registerSyncTool,
  strOf,
  unbindHooks,
  unregisterHooks,
  unregisterSyncTool,
  utf8,
  withCode,
} from './binding.mjs';
import { realClock, clockOf } from './clock.mjs';
import { createSource, isDuplex } from './duplex.mjs';
import { frameBytes, frameOf, inPlace, inPlaceAt, isDelta, rawText, resultJSON, valueOf } from './raw.mjs';

function messageOf(err) {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  if (err !== null && typeof err === 'object' && typeof err.message === 'string') return err.message;
  return String(err);
}


// ------------------------------------------------------------ createToolAdapterWrapper (pw_wrapper_*)

// Capacities of a Node wrapper (the C defaults are sized for microcontrollers).
const NODE_LIMITS = {
  nameCap: 256,
  idCap: 256,
  argsCap: 16384,
  resultCap: 65536,
  messageCap: 4096,
  traceEntries: 256,
  traceBytes: 1 << 20,
  heldBytes: 64 * 1024,
  // The hook log: the hook events between two drains, each 28 bytes plus its texts.
  hookLogBytes: 1 << 20,
};

/** Frees what a wrapper holds outside the JS heap (once: by `close()` or by the finalizer). */
function release(held) {
  if (held.freed) return;
  held.freed = true;
  unregisterHooks(held.hookId);
  for (const id of held.syncIds) unregisterSyncTool(id);
  for (const s of held.stable) s.free();
}
const freeBlocks = new FinalizationRegistry(release);

const isAsyncFunction = (fn) => Object.prototype.toString.call(fn) === '[object AsyncFunction]';
const isThenable = (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';

// ------------------------------------------------------------ JSON Schema (SPEC §11)

const SCHEMA_KINDS = new Map(Object.entries(ENUMS.pw_schema_error_kind ?? {}).map(([k, v]) => [v, k]));

/** A schema's UTF-8 JSON text: a string as is, `raw(text)` or an object carrying its text, else a value's JSON. */
const schemaBytes = (v) => utf8(typeof v === 'string' ? v : rawText(v));

/**
 * Throws, for a schema the validator refuses, the error `PW_BAD_SCHEMA` with `kind` (the C
 * name of why: `'PW_SCHEMA_ERROR_REMOTE_REF'`...) and `offset` (in the schema's UTF-8 text).
 */
function refuseSchema(bytes, what) {
  const e = {};
  const r = C.schemaCheck(bytes, e);
  if (r === PW.OK) return;
  if (r !== PW.BAD_SCHEMA) throw pwError(what, r);
  const kind = SCHEMA_KINDS.get(e.kind) ?? `PW_SCHEMA_ERROR_${e.kind}`;
  const err = pwError(`${what} is refused at byte ${e.at} (${kind})`, r);
  err.kind = kind;
  err.offset = e.at;
  throw err;
}

/**
 * Checks that the validator reads `schema` (a JSON string, `raw(text)`, or an object): returns
 * nothing when it does; throws `PW_BAD_SCHEMA` with `kind` (`'PW_SCHEMA_ERROR_REMOTE_REF'`...)
 * and `offset` (in the schema's UTF-8 text) when it refuses it (SPEC §11: a tool with such a
 * schema is registered unchecked, or refused, as the host decides).
 */
export function checkSchema(schema) {
  refuseSchema(schemaBytes(schema), 'checkSchema: the schema');
}

/**
 * Checks `value` (any JSON value: a JS value is written by `JSON.stringify`, `raw(text)` is
 * taken as is) against `schema` (a JSON string, `raw(text)`, or an object): `null` when it
 * satisfies it, else why, as the wrapper tells the model (`'/city: expected string'`,
 * `'(args): missing required property "city"'`; a limit of the validator is refused the same
 * way). Throws `PW_BAD_SCHEMA` (with `kind`, `offset`) for a schema the validator refuses,
 * `PW_INVALID_JSON` for a `raw` value that is not JSON.
 */
export function validate(schema, value) {
  const s = schemaBytes(schema);
  const v = utf8(rawText(value));
  // The text quotes the value's path (each byte at most twice, as `~0`) and schema tokens.
  const cap = 2 * (s.length + v.length) + 128;
  const buf = new OutBuf(cap);
  try {
    const n = [0];
    const r = C.schemaValidate(s, v, buf.ptr, cap, n);
    if (r === PW.OK) return null;
    if (r === PW.SCHEMA_INVALID || r === PW.SCHEMA_LIMIT) return buf.text(n[0]);
    if (r === PW.BAD_SCHEMA) refuseSchema(s, 'validate: the schema');
    throw pwError('validate: the value', r);
  } finally {
    buf.free();
  }
}

/**
 * A JS tool registration, classified as the JS package does (`fn.length > 1`: the callback form),
 * with one split the C library needs: a plain function of at most one parameter (the package's
 * "sync function") is a C sync tool, run at once and holding no pending slot (SPEC §7.4); an
 * `async` one is a C deferred tool, completed when its promise settles.
 */
function classify(name, v) {
  if (typeof v === 'function') {
    if (v.length > 1) return { form: 'callback', fn: v, kind: PW.TOOL_KIND_DEFERRED };
    if (isAsyncFunction(v)) return { form: 'async', fn: v, kind: PW.TOOL_KIND_DEFERRED };
    return { form: 'sync', fn: v, kind: PW.TOOL_KIND_SYNC };
  }
  if (v !== null && typeof v === 'object' && 'adapter' in v) {
    const a = v.adapter;
    const { timeoutMs, schema } = v;
    if (typeof a === 'function') return { form: 'factory', factory: a, kind: PW.TOOL_KIND_ADAPTER, timeoutMs, schema };
    if (isDuplex(a)) return { form: 'adapter', duplex: a, kind: PW.TOOL_KIND_ADAPTER, timeoutMs, schema };
  }
  // `{ fn, schema }`: a function tool of any form, its calls' args checked first (SPEC §11).
  if (v !== null && typeof v === 'object' && 'fn' in v && typeof v.fn === 'function') {
    return { ...classify(name, v.fn), schema: v.schema };
  }
  if (isDuplex(v)) return { form: 'adapter', duplex: v, kind: PW.TOOL_KIND_ADAPTER };
  throw new TypeError(`Tool ${JSON.stringify(name)} must be a function, { fn, schema }, { adapter: duplex }, or a duplex`);
}

/**
 * The `tools` option as `[name, registration]` pairs: a `Map` (string keys) or an object's own
 * enumerable string keys. No name is special: `__proto__` (an own property, as `JSON.parse`
 * makes it), `constructor`, `toString`... are tool names like any other.
 */
function toolEntries(tools) {
  if (tools === undefined || tools === null) return [];
  if (tools instanceof Map) {
    const entries = [...tools];
    for (const [name] of entries) {
      if (typeof name !== 'string') throw new TypeError('createToolAdapterWrapper: tool names (Map keys) must be strings');
    }
    return entries;
  }
  if (typeof tools !== 'object') throw new TypeError('createToolAdapterWrapper: tools must be an object or a Map');
  return Object.keys(tools).map((name) => [name, tools[name]]);
}

/** The error for a use of a closed wrapper. */
function closedError() {
  const e = new Error('polyweave: this wrapper is closed (close() was called); create a new one');
  e.code = 'PW_WRAPPER_CLOSED';
  return e;
}

/**
 * The error for a `PW_QUEUE_FULL` right after a full drain of the output queue: the core
 * guarantees a drained queue takes any input, so this is a bug in the C library.
 */
function queueFullAfterDrain(what, how = 'returned PW_QUEUE_FULL') {
  const e = new Error(
    `polyweave: ${what} ${how} (code ${PW.QUEUE_FULL}) right after the output queue was drained: ` +
      'a drained queue takes any input, so this is a bug in the C library',
  );
  return withCode(e, PW.QUEUE_FULL);
}


class ToolAdapterWrapper {
  constructor(inner, options) {
    this.inner = inner;
    this.options = options;
    this.name = options.name ?? null;
    this._onToolResult = typeof options.onToolResult === 'function' ? options.onToolResult : null;
    const manual = clockOf(options);
    this.manual = manual !== null;
    this.clock = manual ?? realClock;
    // The last reading given to the library (-1: none yet), which a delta may be given
    // again: see `_now`.
    this.lastNow = -1;
    this.source = createSource();
    this.sink = {
      write: (frame) => this._request(frame),
      // Guarded as every use: a sync tool ending its own wrapper's request path would run the
      // model's end while the C call that runs the tool is on the stack.
      end: () => {
        this._enter();
        try {
          return inner.sink.end?.();
        } finally {
          this._leave();
        }
      },
    };
    this.calls = new Map(); // call index -> pending call
    this.lastCall = null; // { index, id } of the newest intercepted call
    this.draining = false;
    this.again = false;
    this.toStart = [];
    this.timer = null;
    this.timerAt = Infinity;
    this.innerEnded = false;
    this.inTool = false; // a sync tool is running inside a C call on this wrapper
    this.eventsWaiting = false; // a deferred or adapter call started: pw_wrapper_poll_event has work
    this.closed = false; // close() was called: every later use throws
    this.finished = false; // the model's source ended and no call is pending: the wrapper is done
    this.retired = null; // once finished and out of every call: the trace and stats kept in JS
    this.depth = 0; // wrapper methods on the stack: the C memory is freed only at 0
    this.outBuf = new OutBuf(65536);
    this.outMem = new Stable(OutBlock.size());
    this.out = new OutBlock(this.outMem);
    this._build(options);
    this.innerDest = { write: (frame) => this._response(frame), end: () => this._innerEnd() };
    inner.source.pipe(this.innerDest);
  }

  _build(options) {
    const limits = { ...NODE_LIMITS, ...(options.limits ?? {}) };
    const tools = toolEntries(options.tools);
    this.tools = tools.map(([name, v]) => ({ name, ...classify(name, v), active: [], router: null }));
    const schemas = this.tools.map((t) => (t.schema === undefined || t.schema === null ? null : schemaBytes(t.schema)));
    // Each schema checked alone first: pw_wrapper_init says only PW_BAD_SCHEMA, not why or whose.
    schemas.forEach((b, i) => {
      if (b === null) return;
      try {
        refuseSchema(b, `createToolAdapterWrapper: the schema of tool ${JSON.stringify(this.tools[i].name)}`);
      } catch (e) {
        this.outMem.free();
        this.outBuf.free();
        e.tool = this.tools[i].name;
        throw e;
      }
    });
    const cfg = {};
    C.wrapperConfigDefault(cfg);
    // What is left out keeps pw_wrapper_config_default's value: the defaults are the C library's.
    const timeout = options.toolTimeoutMs ?? options.toolTimeout;
    if (timeout !== undefined) cfg.tool_timeout_ms = timeout;
    if (options.maxTotalTimeoutMs !== undefined) cfg.max_total_timeout_ms = options.maxTotalTimeoutMs;
    if (options.maxRounds !== undefined) cfg.max_rounds = options.maxRounds;
    if (options.mirrorContinue !== undefined) cfg.mirror_continue = options.mirrorContinue === false ? 0 : 1;
    if (options.fullValidation !== undefined) cfg.full_validation = options.fullValidation ? 1 : 0;
    if (options.maxDepth !== undefined) cfg.max_depth = options.maxDepth;
    this.cfg = cfg;
    cfg.name_cap = limits.nameCap;
    cfg.id_cap = limits.idCap;
    cfg.args_cap = limits.argsCap;
    cfg.result_cap = limits.resultCap;
    cfg.message_cap = limits.messageCap;
    cfg.trace_entries = limits.traceEntries;
    cfg.trace_bytes = limits.traceBytes;
    cfg.held_bytes = limits.heldBytes;
    // Without a JS hook nothing reads the hook log: the library then keeps no events, and
    // the sync path does not copy every call's texts out for nobody (an explicit
    // `limits.hookLogBytes` is kept as given).
    const hooked = [options.onToolCall, options.onToolResult].some((h) => typeof h === 'function');
    cfg.hook_log_bytes = hooked || options.limits?.hookLogBytes !== undefined ? limits.hookLogBytes : 0;
    this.messageCap = limits.messageCap;
    const slots = options.maxPending ?? 32;
    const size = [0];
    let r = C.wrapperSize(cfg, slots, tools.length, size);
    if (r !== PW.OK) {
      this.outMem.free();
      this.outBuf.free();
      throw pwError('createToolAdapterWrapper: options out of range', r);
    }
    const align = Number(C.wrapperAlign());
    const names = this.tools.map((t) => utf8(t.name));
    // The names and then the schemas, in one block: the C wrapper borrows both for its life.
    const namesLen = names.reduce((n, b) => n + b.length, 0);
    const nameMem = new Stable(namesLen + schemas.reduce((n, b) => n + (b === null ? 0 : b.length), 0));
    const mem = new Stable(Number(size[0]) + align);
    // Each schema's index (SPEC §11), which pw_wrapper_init writes: a call's args are then
    // checked without reading the schema's annotations or comparing keyword names.
    const indexWords = schemas.map((b) => {
      const n = [0];
      return b !== null && C.schemaIndexWords(b, n) === PW.OK ? n[0] : 0;
    });
    const allWords = indexWords.reduce((a, n) => a + n, 0);
    const indexMem = allWords > 0 ? new Stable(allWords * 4 + 4) : null;
    let indexOff = indexMem === null ? 0 : alignOffset(indexMem.ptr, 4);
    const stable = [mem, nameMem, indexMem, this.outMem, this.outBuf].filter((b) => b !== null);
    const reg = registerHooks();
    const syncIds = [];
    let off = 0;
    let schemaOff = namesLen;
    const cTools = this.tools.map((t, i) => {
      nameMem.write(off, names[i]);
      const entry = {
        name: { ptr: nameMem.at(off), len: names[i].length },
        kind: t.kind,
        timeout_ms: t.timeoutMs ?? PW.TOOL_DEFAULT_TIMEOUT,
        call: 0,
        userdata: 0,
        schema: null,
      };
      if (schemas[i] !== null) {
        nameMem.write(schemaOff, schemas[i]);
        entry.schema = { ptr: nameMem.at(schemaOff), len: schemas[i].length };
        schemaOff += schemas[i].length;
        if (indexWords[i] > 0) {
          entry.schema_index = indexMem.at(indexOff);
          entry.schema_index_words = indexWords[i];
          indexOff += indexWords[i] * 4;
        }
      }
      if (t.kind === PW.TOOL_KIND_SYNC) {
        const s = registerSyncTool(reg.id, i);
        syncIds.push(s.id);
        entry.call = s.call;
        entry.userdata = s.userdata;
      }
      off += names[i].length;
      return entry;
    });
    // A call's end matters here only for deferred and adapter calls (see onCCall): with sync
    // tools alone the library is not asked to call back into JS for it.
    if (this.tools.every((t) => t.kind === PW.TOOL_KIND_SYNC)) reg.hooks.on_tool_result = 0;
    const out = [0];
    r = C.wrapperInit(mem.at(alignOffset(mem.ptr, align)), Number(size[0]), cfg, slots, cTools, cTools.length, reg.hooks, out);
    if (r !== PW.OK) {
      release({ hookId: reg.id, syncIds, stable });
      throw pwError('createToolAdapterWrapper: cannot build the wrapper', r);
    }
    this.w = out[0];
    this.held = { hookId: reg.id, syncIds, stable, freed: false };
    freeBlocks.register(this, this.held, this);
    // The engine does not see the module's memory a wrapper holds, so it would collect wrappers
    // dropped before they finished (and run the finalizer that frees their blocks) only when the
    // JS heap fills, long after the module's 4 GiB are gone. An ArrayBuffer of a sixteenth of
    // the block makes the engine count some of it and collect in time; measured (5,000 dropped
    // unfinished wrappers, the event loop turning every 100): the module's memory stays under
    // 2.2 GiB at 0.3 ms a wrapper, against 3.4 GiB and growing without it, and 1.5-2.8 ms a
    // wrapper with an ArrayBuffer of the block's whole size.
    this.pressure = new ArrayBuffer(mem.size >> 4);
  }

  // ---- entering and leaving: a closed wrapper refuses every use; its memory goes at depth 0

  /** Refuses a use of a closed wrapper, or of this wrapper from a sync tool it is running. */
  _enter() {
    if (this.closed) throw closedError();
    if (this.inTool) {
      throw new Error('a sync tool cannot use its own wrapper while it runs (make it async or (args, cb))');
    }
    // The hooks reach this wrapper only while one of its C calls can call them (see bindHooks).
    if (this.depth++ === 0) bindHooks(this.held.hookId, this);
  }

  _leave() {
    if (--this.depth !== 0) return;
    unbindHooks(this.held.hookId);
    if (this.closed) this._release();
    else if (this.finished && this.retired === null) this._retire();
  }

  /**
   * A finished wrapper (the model's source ended, no call pending) gives its C memory back: no
   * frame can reach it any more, so what is left to read (the trace, the stats) is read out
   * once and kept here, and wrappers dropped without `close()` hold nothing.
   */
  _retire() {
    // getToolTrace's reading, with the wrapper still live (retired is null until set here).
    const trace = this._traceEntries();
    this.retired = { trace, stats: this._readStats() };
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.inner.source.unpipe?.(this.innerDest);
    this._release();
  }

  _release() {
    freeBlocks.unregister(this);
    release(this.held);
    this.w = null;
    this.pressure = null; // the memory it stood for is back
  }

  /**
   * Closes the wrapper at once (SPEC-independent, beyond the JS package): frees its C memory,
   * clears its timer, disconnects it from the model's and the tool adapters' sources, and makes
   * every later use throw (`err.code === 'PW_WRAPPER_CLOSED'`). Calls still pending are
   * dropped: their `(args, cb)` callbacks return `false`, async results are ignored, and the
   * model gets no `TOOL_RESULT` for them (`cancel(reason)` first if it should). Idempotent.
   * Called from a hook or a consumer's `write`, it takes effect there: nothing more is
   * delivered, and the memory is freed when the wrapper's own call returns.
   */
  close() {
    if (this.closed) return;
    if (this.inTool) {
      throw new Error('a sync tool cannot close its own wrapper while it runs (make it async or (args, cb))');
    }
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
    this.inner.source.unpipe?.(this.innerDest);
    for (const call of this.calls.values()) {
      call.done = true;
      if (call.dest) call.duplex.source.unpipe?.(call.dest);
    }
    for (const tool of this.tools) {
      if (tool.router) tool.duplex.source.unpipe?.(tool.router);
      tool.active = [];
    }
    this.calls.clear();
    this.toStart = [];
    if (this.depth === 0) this._release();
  }

  /** Whether `close()` was called. */
  get isClosed() {
    return this.closed;
  }

  // Called by the C library during a wrapper call, for the state it tells (which call a sync
  // tool is for, which calls ended). `info` and `outcome` are C pointers, valid during this call
  // only. The JS hooks are not called from here: the library keeps the events in its hook log
  // and `_pump` hands them out in their place among the frames (pw_wrapper_poll_output).
  onCCall(info, outcome) {
    if (outcome) {
      // Only deferred and adapter calls are kept here (a sync call's end changes nothing).
      if (this.calls.size === 0) return;
      const call = this.calls.get(callIndex(info));
      if (call) call.done = true;
    } else {
      this.lastCall = callInfoHead(info); // the call a sync tool about to run is for
    }
  }

  _fireHook(rec) {
    const hook = rec.outcome ? this._onToolResult : this.options.onToolCall;
    if (typeof hook !== 'function') return;
    const ctx = { index: rec.index, rawArgs: rec.args, cut: rec.cut };
    try {
      const args = valueOf(rec.args);
      if (!rec.outcome) {
        hook.call(ctx, rec.name, args);
        return;
      }
      const { isError, text } = rec.outcome;
      ctx.rawResult = isError ? null : text;
      ctx.error = isError ? text : null;
      hook.call(ctx, rec.name, args, isError ? null : valueOf(text), isError ? new Error(text) : null);
    } catch {
      // hook exceptions are caught (as in the JS package)
    }
  }

  // ---- sync tools (C sync calls: run inside pw_wrapper_handle_response)

  /**
   * Runs sync tool `index` for the C library (through `pw_sync_fn`): `args` is the call's
   * `pw_str`, `out` the writer for its result (JSON text) or its error message. Nothing here
   * calls into this wrapper; a tool that tries is refused (see `_enter`).
   *
   * Texts: a result is written as its JSON text and checked by the core (not JSON: the core's
   * `Tool <name> returned invalid JSON`; a value JSON cannot express, such as a BigInt, is
   * written as no text at all, which the core answers the same way). Only what the core cannot
   * know is composed here: a thrown exception's message, `Tool <name> failed` for a throw
   * without one (the core's text for an adapter ERROR without a message), and `Tool <name>
   * returned a promise: declare it async`.
   */
  syncCall(index, rawArgs, out) {
    const tool = this.tools[index];
    // on_tool_call fired just before the tool runs: the newest call is this one.
    const call = this.lastCall;
    this.lastCall = null;
    const ctx = { index: call ? call.index : -1, name: tool.name, id: call ? call.id : null, rawArgs };
    let failed = true;
    let text;
    this.inTool = true;
    try {
      const v = tool.fn.call(ctx, valueOf(rawArgs));
      if (isThenable(v)) {
        Promise.resolve(v).catch(() => {}); // its outcome is dropped: no unhandled rejection
        text = `Tool ${tool.name} returned a promise: declare it async`;
      } else {
        try {
          text = resultJSON(v);
        } catch {
          text = ''; // not JSON: the core says so, in its own words
        }
        failed = false;
      }
    } catch (e) {
      try {
        text = e === null || e === undefined ? `Tool ${tool.name} failed` : messageOf(e);
      } catch {
        text = `Tool ${tool.name} failed`;
      }
    } finally {
      this.inTool = false;
    }
    C.writerWrite(out, text);
    return failed ? PW.TOOL_STATUS_FAILED : PW.TOOL_STATUS_OK;
  }

  // ---- the queue, the events, the timer

  /**
   * Calls `fn` (a C call that may answer `PW_QUEUE_FULL`, changing nothing); on
   * `PW_QUEUE_FULL` drains the output queue completely and calls it once more (`r`: the
   * first call's result when the caller made it). A second
   * `PW_QUEUE_FULL` throws (the core guarantees a drained queue takes any input).
   */
  _withRoom(what, fn, r = fn()) {
    if (r !== PW.QUEUE_FULL) return r;
    this._pump();
    if (this.closed) throw closedError(); // closed by a hook or a consumer while draining
    const again = fn();
    if (again === PW.QUEUE_FULL) throw queueFullAfterDrain(what);
    return again;
  }

  /**
   * Delivers every queued frame and fires every kept hook event, in the library's order
   * (pw_wrapper_poll_output), until both are empty (what the deliveries cause included). Safe
   * to re-enter: a delivery that feeds the wrapper and finds the queue full drains the rest of
   * it here, in order.
   */
  _pump() {
    const o = this.out;
    for (;;) {
      if (this.closed) return;
      const r = C.pollOutput(this.w, this.outBuf.ptr, this.outBuf.cap, o.output) >>> 0;
      if (r === PW.NOTHING) break;
      if (r === PW.BUFFER_TOO_SMALL) {
        this.outBuf.grow(o.outputLen * 2);
        continue;
      }
      if (r !== PW.OK) throw pwError('pw_wrapper_poll_output', r);
      const kind = o.outputKind;
      if (kind !== PW.OUTPUT_FRAME) {
        const head = callInfoHead(o.outputCall);
        const { name, args } = callInfoTexts(o.outputCall);
        const outcome = kind === PW.OUTPUT_TOOL_RESULT ? outcomeOf(o.outputOutcome) : null;
        this._fireHook({ index: head.index, name, args, outcome, cut: o.outputCut });
        continue;
      }
      const route = o.outputRoute;
      const frame = frameOf(this.outBuf.text(o.outputLen));
      if (route === PW.ROUTE_MODEL) this.inner.sink.write(frame);
      else if (route === PW.ROUTE_CONSUMER) this.source.push(frame);
      else this._toAdapter(o.outputHandle.index, frame);
    }
  }

  /**
   * Counters: `rounds`, `messagesTruncated`, `lastErrorTruncated`, and the hook events the log
   * kept without their args (`hookEventsCut`: the hook saw `null` and `this.cut`) or could not
   * keep (`hookEventsDropped`: their hooks were not called). Raise `limits.hookLogBytes` if
   * either is not 0.
   */
  stats() {
    // Guarded: a sync tool reading its own wrapper's stats would read the C wrapper while the
    // call running the tool holds it (the header forbids it; in Rust it is aliasing).
    this._enter();
    try {
      return this.retired ? { ...this.retired.stats } : this._readStats();
    } finally {
      this._leave();
    }
  }

  _readStats() {
    const s = {};
    const r = C.stats(this.w, s);
    if (r !== PW.OK) throw pwError('pw_wrapper_get_stats', r);
    return {
      rounds: s.rounds,
      messagesTruncated: s.messages_truncated,
      lastErrorTruncated: s.last_error_truncated,
      hookEventsCut: s.hook_events_cut,
      hookEventsDropped: s.hook_events_dropped,
    };
  }

  _drain() {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    try {
      do {
        this.again = false;
        this._takeEvents();
        if (this.closed) return;
        this._pump();
        if (this.closed) return;
        if (this.calls.size > 0) this._cleanup();
        if (this.toStart.length > 0) {
          const start = this.toStart;
          this.toStart = [];
          for (const call of start) {
            this._run(call);
            if (this.closed) return;
          }
          this.again = true;
        }
      } while (this.again);
    } finally {
      this.draining = false;
    }
    this._arm();
    if (this.innerEnded && C.pending(this.w) === 0) {
      this.finished = true;
      if (!this.source.ended) this.source.end();
    }
  }

  // Calls the library started: adapters are connected at once, JS tools run after the frames.
  _takeEvents() {
    if (!this.eventsWaiting) return;
    this.eventsWaiting = false;
    const ev = {};
    while (!this.closed && C.pollEvent(this.w, ev) === PW.OK) {
      const tool = this.tools[Number(ev.tool)];
      const call = {
        index: ev.handle.index,
        handle: ev.handle,
        tool,
        name: strOf(ev.name),
        id: ev.has_id ? strOf(ev.id) : null,
        args: strOf(ev.args),
        done: false,
        duplex: null,
        dest: null,
      };
      this.calls.set(call.index, call);
      if (tool.kind === PW.TOOL_KIND_ADAPTER) this._connect(call);
      else this.toStart.push(call);
    }
  }

  _connect(call) {
    const { tool } = call;
    if (tool.form === 'factory') {
      const ctx = { index: call.index, name: call.name, id: call.id, rawArgs: call.args };
      let duplex;
      try {
        duplex = tool.factory.call(ctx, ctx);
      } catch {
        duplex = null;
      }
      if (this.closed || !isDuplex(duplex)) return; // the call times out (or is cancelled)
      call.duplex = duplex;
      call.dest = {
        write: (frame) => this._adapterFrame(call, frame),
        end: () => this._adapterClosed(call),
      };
      duplex.source.pipe(call.dest);
      return;
    }
    // One duplex shared by the tool's calls: its frames go to the call whose id they carry,
    // else to the oldest waiting one; its end closes every waiting call.
    call.duplex = tool.duplex;
    tool.active.push(call);
    if (!tool.router) {
      tool.router = {
        write: (frame) => {
          const id = frame?.content?.id;
          const target = tool.active.find((c) => !c.done && typeof id === 'string' && c.id === id) ?? tool.active.find((c) => !c.done);
          return target ? this._adapterFrame(target, frame) : false;
        },
        end: () => {
          let any = false;
          for (const c of [...tool.active]) any = this._adapterClosed(c) || any;
          return any;
        },
      };
      tool.duplex.source.pipe(tool.router);
    }
  }

  _toAdapter(index, frame) {
    // A call started by a frame that arrived while this drain ran: take its event first.
    if (!this.calls.has(index)) {
      this.eventsWaiting = true;
      this._takeEvents();
    }
    const call = this.calls.get(index);
    if (call?.duplex) call.duplex.sink.write(frame);
  }

  _cleanup() {
    for (const [index, call] of this.calls) {
      if (!call.done) continue;
      this.calls.delete(index);
      if (call.dest) call.duplex.source.unpipe?.(call.dest);
      const a = call.tool.active;
      const i = a.indexOf(call);
      if (i >= 0) a.splice(i, 1);
    }
  }

  /**
   * Arms the timer at the library's earliest deadline. Not unref'd: while a deferred or adapter
   * call waits, its timeout keeps the process alive (as the JS package's timers do); when no
   * call waits, no timer is left armed, so nothing keeps the process alive for nothing.
   */
  _arm() {
    if (this.manual || this.closed) return;
    // Deadlines belong to pending deferred and adapter calls: none known, none armed, none due.
    if (this.calls.size === 0 && this.timer === null) return;
    const d = deadline(C.pollTimeout(this.w));
    if (d === this.timerAt && this.timer) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = d;
    if (d === Infinity) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      if (!this.closed) this.tick();
    }, Math.max(0, d - this.clock.now()));
  }

  // ---- JS tools (C deferred calls): the (args, cb) and async forms

  _run(call) {
    const { tool } = call;
    const ctx = { index: call.index, name: call.name, id: call.id, rawArgs: call.args };
    const args = valueOf(call.args);
    if (tool.form === 'callback') {
      let answered = false;
      const cb = (err, result) => {
        if (answered) return false;
        answered = true;
        return this._complete(call, err, result);
      };
      try {
        tool.fn.call(ctx, args, cb);
      } catch (e) {
        cb(e ?? new Error(`Tool ${call.name} failed`));
      }
      return;
    }
    let v;
    try {
      v = tool.fn.call(ctx, args);
    } catch (e) {
      this._complete(call, e ?? new Error(`Tool ${call.name} failed`));
      return;
    }
    if (isThenable(v)) {
      Promise.resolve(v).then(
        (res) => this._complete(call, null, res),
        (e) => this._complete(call, e ?? new Error(`Tool ${call.name} failed`)),
      );
    } else {
      this._complete(call, null, v);
    }
  }

  /**
   * Completes a deferred call through the library; false when the call was not waiting (or
   * the wrapper was closed). A result that is not JSON (the core refuses it,
   * `PW_INVALID_RESULT`, or JS cannot write it) fails the call through
   * `pw_wrapper_complete_unwritable`, with the core's own text for it.
   */
  _complete(call, err, result) {
    if (this.closed || this.retired) return false; // a tool answering after close(): dropped
    this._enter();
    try {
      let outcome = null;
      if (err !== null && err !== undefined) {
        // The core cuts a message over message_cap (and reports it): passed whole.
        outcome = { is_error: 1, text: messageOf(err) };
      } else {
        try {
          outcome = { is_error: 0, text: resultJSON(result) };
        } catch {
          // No JSON form (a BigInt, a cycle): failed below with the core's own text.
        }
      }
      const completed = [0];
      const once = () => C.complete(this.w, this._now(), call.handle, outcome.is_error, outcome.text, completed);
      let r = outcome === null ? PW.INVALID_RESULT : this._withRoom('pw_wrapper_complete', once);
      // A result that is not JSON (the core refused it, or JS could not write it) fails the
      // call with the core's text for it, `Tool <name> returned invalid JSON`.
      if (r === PW.INVALID_RESULT && (outcome === null || outcome.is_error === 0)) {
        r = this._withRoom('pw_wrapper_complete_unwritable', () =>
          C.completeUnwritable(this.w, this._now(), call.handle),
        );
      }
      if (isNotWaiting(r)) return false;
      if (r !== PW.OK) throw pwError(`completing tool ${call.name}`, r);
      this._drain();
      return true;
    } finally {
      this._leave();
    }
  }

  // ---- adapter input

  _adapterFrame(call, frame) {
    if (this.closed || this.retired) return false; // an adapter answering after close(): not waiting
    this._enter();
    try {
      let bytes;
      try {
        bytes = frameBytes(frame);
      } catch (e) {
        this._reject('adapter', frame, e, call.index);
        return true;
      }
      const r = this._withRoom('pw_wrapper_handle_adapter_frame', () =>
        C.handleAdapterFrame(this.w, this._now(), call.handle, bytes),
      );
      if (isMalformed(r)) this._reject('adapter', frame, pwError('malformed adapter frame', r), call.index);
      else if (isNotWaiting(r)) return false;
      else if (r !== PW.OK) throw pwError('pw_wrapper_handle_adapter_frame', r);
      this._drain();
      return true;
    } finally {
      this._leave();
    }
  }

  _adapterClosed(call) {
    if (this.closed || this.retired) return false;
    this._enter();
    try {
      const r = this._withRoom('pw_wrapper_handle_adapter_closed', () =>
        C.handleAdapterClosed(this.w, this._now(), call.handle),
      );
      if (isNotWaiting(r)) return false;
      if (r !== PW.OK) throw pwError('pw_wrapper_handle_adapter_closed', r);
      this._drain();
      return true;
    } finally {
      this._leave();
    }
  }

  /** A clock reading for the library, kept as the last one given. */
  _now() {
    return (this.lastNow = this.clock.now());
  }

  /**
   * The time for a `TEXT` or `REASONING` delta: the last reading given, when the clock
   * is the real one. The library reads the time of such a frame only to keep its clock from
   * going back (`pw_wrapper_handle_response` starts deadlines for `TOOL_CALL`s alone), so an
   * earlier reading it already had is as good, and a stream of deltas does not read the clock
   * for each (about a tenth of a delta's push). A manual clock is read every time: a test
   * moving it back is told so at once.
   */
  _deltaNow() {
    return this.manual || this.lastNow < 0 ? this._now() : this.lastNow;
  }

  _reject(path, frame, err, call) {
    if (typeof this.options.onRejected !== 'function') return;
    try {
      this.options.onRejected(path, frame, err, call);
    } catch {
      // a hook's exception is caught
    }
  }

  // ---- the two paths

  _response(frame) {
    this._enter();
    try {
      if (this.retired) return false; // the model's source ended: a source pushing still is not heard
      let bytes;
      try {
        bytes = frameBytes(frame);
      } catch (e) {
        this._reject('response', frame, e);
        return true;
      }
      const d = this.out;
      // The common case without a closure: the queue had room. A delta pushed before anything
      // wrote over the bytes a decoder wrote it as is read from there (raw.mjs, `inPlace`).
      const at = inPlaceAt(frame, bytes);
      let r =
        at >= 0
          ? C.handleResponseAt(this.w, this._deltaNow(), inPlace.at[at], inPlace.len[at], d.disposition)
          : C.handleResponseTo(this.w, isDelta(frame) ? this._deltaNow() : this._now(), bytes, d.disposition);
      if (r === PW.QUEUE_FULL) {
        // Draining runs the consumer, which may decode: from the text, then.
        r = this._withRoom('pw_wrapper_handle_response', () => C.handleResponseTo(this.w, this._now(), bytes, d.disposition), r);
      }
      if (r !== PW.OK) {
        this._reject('response', frame, pwError('response frame refused', r));
        return true;
      }
      if (d.hasHandle) this.eventsWaiting = true;
      if (d.kind === PW.DISPOSITION_FORWARD) this.source.push(frame);
      this._drain();
      return true;
    } finally {
      this._leave();
    }
  }

  _request(frame) {
    this._enter();
    try {
      let bytes;
      try {
        bytes = frameBytes(frame);
      } catch (e) {
        this._reject('request', frame, e);
        return true;
      }
      // A retired wrapper's request frames get the check pw_wrapper_handle_request makes.
      const r = this.retired
        ? this.cfg.full_validation
          ? C.frameValidate(bytes, this.cfg.max_depth, [0])
          : C.frameKind(bytes, [0], [0], [0])
        : C.handleRequest(this.w, this._now(), bytes);
      if (r !== PW.OK) {
        this._reject('request', frame, pwError('request frame refused', r));
        return true;
      }
      return this.inner.sink.write(frame);
    } finally {
      this._leave();
    }
  }

  _innerEnd() {
    this._enter();
    try {
      this.innerEnded = true;
      this._drain();
    } finally {
      this._leave();
    }
  }

  // ---- the helpers of the JS package, and SPEC §5

  /** A copy of the trace, oldest first: `[{ name, args, result, error }]` (`{ raw: true }`: JSON texts). */
  getToolTrace({ raw: asText = false } = {}) {
    this._enter();
    try {
      const entries = this.retired ? this.retired.trace : this._traceEntries();
      return entries.map(({ name, args, isError, text, truncated }) => {
        const entry = asText
          ? { name, args, result: isError ? null : text, error: isError ? text : null }
          : { name, args: valueOf(args), result: isError ? null : valueOf(text), error: isError ? text : null };
        if (truncated) entry.truncated = true;
        return entry;
      });
    } finally {
      this._leave();
    }
  }

  /** The C trace's entries as texts: `[{ name, args, isError, text, truncated }]`. */
  _traceEntries() {
    const entries = [];
    const e = {};
    for (let i = 0; C.traceEntry(this.w, i, e) === PW.OK; i++) {
      entries.push({
        name: e.has_name ? strOf(e.name) : null,
        args: strOf(e.args),
        isError: e.outcome.is_error === 1,
        text: strOf(e.outcome.text),
        truncated: e.truncated === 1,
      });
    }
    return entries;
  }

  clearTrace() {
    this._enter();
    try {
      if (this.retired) this.retired.trace = [];
      else C.clearTrace(this.w);
    } finally {
      this._leave();
    }
  }

  abort() {
    this._enter();
    try {
      // A retired wrapper will prompt no more: nothing to stop.
      if (!this.retired) C.abort(this.w);
    } finally {
      this._leave();
    }
  }

  /**
   * Completes every pending call with `Tool <name> cancelled: <reason>` (SPEC §5). The library
   * cancels as many as its output queue takes; the rest wait for a drain: drained, the queue
   * takes at least one more, so a call that makes no progress after a drain throws (a bug in
   * the C library).
   */
  cancel(reason = 'cancelled') {
    this._enter();
    try {
      if (this.retired) return; // no call is pending
      // The core cuts a reason too long for message_cap: passed whole.
      const text = String(reason);
      const left = [0];
      let before = Infinity;
      for (;;) {
        const r = C.cancel(this.w, this._now(), text, left);
        if (r !== PW.OK) throw pwError('cancel', r);
        const n = Number(left[0]);
        if (n === 0) break;
        if (n >= before) throw queueFullAfterDrain('pw_wrapper_cancel', 'cancelled no call for want of room (PW_QUEUE_FULL)');
        before = n;
        this._pump();
        if (this.closed) return;
      }
      this._drain();
    } finally {
      this._leave();
    }
  }

  /**
   * Gives the clock now (timeouts due fire); with `clock: { now() }` the only way time passes.
   * Timeouts the full output queue could not take yet fire after a drain; a drain that lets
   * none of them through throws (a bug in the C library).
   */
  tick() {
    this._enter();
    try {
      if (this.retired) return; // no call is pending: no timeout
      let before = Infinity;
      for (;;) {
        const now = this._now();
        const r = C.handleTimeout(this.w, now);
        if (r !== PW.OK) throw pwError('clock', r);
        if (deadline(C.pollTimeout(this.w)) > now) break;
        const n = Number(C.pending(this.w));
        if (n >= before) throw queueFullAfterDrain('pw_wrapper_handle_timeout', 'fired no due timeout for want of room (PW_QUEUE_FULL)');
        before = n;
        this._pump();
        if (this.closed) return;
      }
      this._drain();
    } finally {
      this._leave();
    }
  }

  /** Calls intercepted and not yet completed. */
  get pending() {
    this._enter();
    try {
      return this.retired ? 0 : Number(C.pending(this.w));
    } finally {
      this._leave();
    }
  }
}

// `using x = ...` (explicit resource management) closes it, where the engine has the symbol.
if (typeof Symbol.dispose === 'symbol') ToolAdapterWrapper.prototype[Symbol.dispose] = ToolAdapterWrapper.prototype.close;

/**
 * Wraps an LLM adapter duplex: TOOL_CALL frames on its response path go to the registered tools
 * (SPEC §3). Options: `name`, `tools` (an object or a `Map`, name → registration),
 * `toolTimeoutMs` (alias `toolTimeout`), `maxTotalTimeoutMs` (SPEC §5 progress cap, 0: off),
 * `onToolCall`, `onToolResult`, `mirrorContinue`; beyond the JS package: `maxPending` (32),
 * `maxRounds`, `fullValidation`, `maxDepth`, `limits` (capacities), (what is left out has
 * `pw_wrapper_config_default`'s value, but for `limits`, which are sized for Node),
 * `onRejected(path, frame, err, call)`, `clock: { now() }` (test-only manual clock, with
 * `wrapper.tick()`). `wrapper.close()` frees it at once (see `close`).
 */
export function createToolAdapterWrapper(innerDuplex, options = {}) {
  if (!isDuplex(innerDuplex)) throw new TypeError('createToolAdapterWrapper: innerDuplex must have .source and .sink');
  return new ToolAdapterWrapper(innerDuplex, options);
}
