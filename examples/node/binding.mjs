// The C ABI (include/polyweave_tool_adapter.h) compiled to WebAssembly
// (`polyweave_tool_adapter.wasm`, built from examples/node/wasm by build.mjs), as the API modules
// see it: the module's memory, a small allocator over it, the header's struct layouts for
// wasm32 (pointers and size_t are 4 bytes), the functions with their out parameters and byte
// arguments handled, the callback trampolines routed to JS, and result texts.
// Nothing here decides behaviour: every rule lives in the C library.
//
// Browser-safe: nothing from `node:` is imported at the top level. In Node the module reads the
// .wasm next to this file (or `PW_WASM`, a path) with node:fs; elsewhere it fetches it.

// ------------------------------------------------------------ constants (the header's)

export const PW = Object.freeze({
  OK: 0,
  NULL_POINTER: 1,
  BUFFER_TOO_SMALL: 2,
  BAD_CONFIG: 6,
  FRAME_NOT_OBJECT: 100,
  INVALID_JSON: 103,
  WRONG_FRAME_KIND: 106,
  FRAME_DUPLICATE_TYPE: 107,
  NOTHING: 300,
  CLOCK_WENT_BACKWARDS: 301,
  MESSAGE_TOO_LONG: 304,
  INVALID_RESULT: 305,
  QUEUE_FULL: 307,
  CALL_UNKNOWN: 309,
  CALL_COMPLETED: 310,
  CALL_TIMED_OUT: 311,
  CALL_CANCELLED: 312,
  CALL_STALE: 313,
  CALL_WRONG_KIND: 314,
  UNKNOWN_PROVIDER: 400,
  ITEM_NOT_CALL_OR_RESULT: 401,
  ITEM_NO_NAME: 402,
  ITEM_NO_ID: 403,
  ITEM_NO_OUTCOME: 404,
  MCP_NOT_ADAPTER_FRAME: 500,
  MCP_NO_NAME: 501,
  MCP_NAME_TOO_LONG: 502,
  MCP_DUPLICATE_CALL: 503,
  MCP_UNKNOWN_CALL: 504,
  MCP_OUTBOX_FULL: 505,
  MCP_FRAME_PENDING: 506,
  MCP_ALREADY_STARTED: 507,
  MCP_CLIENT_INFO_TOO_LONG: 508,
  MCP_MIN_OUTBOX: 396,
  MCP_CLIENT_TEXT_CAP: 64,
  MCP_METHOD_CAP: 256,
  TOOL_KIND_SYNC: 0,
  TOOL_KIND_DEFERRED: 1,
  TOOL_KIND_ADAPTER: 2,
  TOOL_DEFAULT_TIMEOUT: 0xffffffff,
  DISPOSITION_FORWARD: 0,
  DISPOSITION_INTERCEPTED: 1,
  DISPOSITION_HELD: 2,
  ROUTE_MODEL: 0,
  ROUTE_CONSUMER: 1,
  ROUTE_ADAPTER: 2,
  PENDING_DEFERRED: 0,
  PENDING_ADAPTER: 1,
  OUTPUT_FRAME: 0,
  OUTPUT_TOOL_CALL: 1,
  OUTPUT_TOOL_RESULT: 2,
  PROVIDER_OPENAI_CHAT: 1,
  PROVIDER_OPENAI_RESPONSES: 2,
  PROVIDER_ANTHROPIC: 3,
  PROVIDER_GEMINI: 4,
  PROVIDER_OLLAMA: 5,
});

/** What a `pw_sync_fn` returns: the result was written / the error message was written. */
export const PW_TOOL_STATUS_OK = 0;
export const PW_TOOL_STATUS_FAILED = 1;

// ------------------------------------------------------------ struct layouts (wasm32)

// Field types are the header's C types; `tests/tests/binding_layouts.rs` reads these
// declarations and checks them against the header, and `test/package.test.mjs` checks the sizes
// computed here against the module's own (`pwjs_layout`).
const PRIM = {
  'uint8_t': 1,
  'uint16_t': 2,
  'uint32_t': 4,
  'uint64_t': 8,
  'size_t': 4,
};
/** Every struct declared below, by name: `{ name, size, align, fields: [{ name, type, offset }] }`. */
export const STRUCTS = {};

function struct(name, fields) {
  let offset = 0;
  let align = 1;
  const out = [];
  for (const [field, ctype] of Object.entries(fields)) {
    const type = typeof ctype === 'string' ? (ctype.endsWith('*') ? 'ptr' : ctype) : ctype;
    const size = typeof type === 'object' ? type.size : type === 'ptr' ? 4 : PRIM[type];
    const a = typeof type === 'object' ? type.align : size;
    if (size === undefined) throw new Error(`polyweave: unknown field type ${ctype}`);
    offset = Math.ceil(offset / a) * a;
    out.push({ name: field, type, offset });
    offset += size;
    align = Math.max(align, a);
  }
  const s = { name, size: Math.ceil(offset / align) * align, align, fields: out };
  STRUCTS[name] = s;
  return s;
}

const pw_str = struct('pw_str', { ptr: 'const uint8_t *', len: 'size_t' });
struct('pw_adapter_call_options', {
  name: pw_str,
  id: pw_str,
  args: pw_str,
  timeout_ms: 'uint32_t',
  max_total_timeout_ms: 'uint32_t',
  has_id: 'uint8_t',
  max_depth: 'uint8_t',
});
const pwOutcome = struct('pw_outcome', { is_error: 'uint8_t', text: pw_str });
struct('pw_wrapper_config', {
  tool_timeout_ms: 'uint32_t',
  max_total_timeout_ms: 'uint32_t',
  max_rounds: 'uint32_t',
  mirror_continue: 'uint8_t',
  full_validation: 'uint8_t',
  max_depth: 'uint8_t',
  name_cap: 'size_t',
  id_cap: 'size_t',
  args_cap: 'size_t',
  result_cap: 'size_t',
  message_cap: 'size_t',
  trace_entries: 'size_t',
  trace_bytes: 'size_t',
  held_bytes: 'size_t',
  hook_log_bytes: 'size_t',
});
const pwTool = struct('pw_tool', {
  name: pw_str,
  kind: 'uint32_t',
  timeout_ms: 'uint32_t',
  call: 'pw_sync_fn *',
  userdata: 'void *',
});
const pwCallInfo = struct('pw_call_info', {
  index: 'uint32_t',
  has_name: 'uint8_t',
  has_id: 'uint8_t',
  seq: 'uint64_t',
  name: pw_str,
  id: pw_str,
  args: pw_str,
});
struct('pw_hooks', {
  userdata: 'void *',
  on_tool_call: 'pw_on_tool_call *',
  on_tool_result: 'pw_on_tool_result *',
});
const pwCallHandle = struct('pw_call_handle', {
  index: 'uint32_t',
  slot: 'uint16_t',
  reserved: 'uint16_t',
  owner: 'size_t',
});
const pwDisposition = struct('pw_disposition', {
  kind: 'uint32_t',
  index: 'uint32_t',
  has_handle: 'uint8_t',
  handle: pwCallHandle,
});
const pwTransmit = struct('pw_transmit', { route: 'uint32_t', handle: pwCallHandle, len: 'size_t' });
const pwOutput = struct('pw_output', {
  kind: 'uint32_t',
  cut: 'uint8_t',
  frame: pwTransmit,
  call: pwCallInfo,
  outcome: pwOutcome,
});
struct('pw_stats', {
  rounds: 'uint32_t',
  messages_truncated: 'uint32_t',
  last_error_truncated: 'uint32_t',
  hook_events_cut: 'uint32_t',
  hook_events_dropped: 'uint32_t',
});
struct('pw_event', {
  handle: pwCallHandle,
  kind: 'uint32_t',
  has_id: 'uint8_t',
  tool: 'size_t',
  name: pw_str,
  id: pw_str,
  args: pw_str,
});
struct('pw_trace_entry', {
  has_name: 'uint8_t',
  truncated: 'uint8_t',
  name: pw_str,
  args: pw_str,
  outcome: pwOutcome,
});
struct('pw_decoder_config', {
  event_cap: 'size_t',
  args_cap: 'size_t',
  name_cap: 'size_t',
  id_cap: 'size_t',
  max_depth: 'uint8_t',
});
struct('pw_decode_stats', {
  not_json: 'uint32_t',
  unknown_event: 'uint32_t',
  bad_shape: 'uint32_t',
  overlong: 'uint32_t',
  after_end: 'uint32_t',
  cut: 'uint32_t',
  calls_started: 'uint64_t',
  calls_written: 'uint64_t',
});
struct('pw_mcp_config', {
  line_cap: 'size_t',
  outbox_cap: 'size_t',
  name_cap: 'size_t',
  cursor_cap: 'size_t',
  max_depth: 'uint8_t',
});
struct('pw_mcp_event', {
  kind: 'uint32_t',
  has_params: 'uint8_t',
  method_cut: 'uint8_t',
  tools: 'uint32_t',
  skip: 'uint32_t',
  start_error: 'uint32_t',
  len: 'size_t',
  cap: 'size_t',
  version: pw_str,
  name: pw_str,
  raw: pw_str,
  method: pw_str,
  params: pw_str,
});
struct('pw_mcp_client_stats', {
  lines: 'uint64_t',
  not_json: 'uint32_t',
  not_jsonrpc: 'uint32_t',
  too_long: 'uint32_t',
  too_deep: 'uint32_t',
  unknown_id: 'uint32_t',
  late: 'uint32_t',
  unknown_progress: 'uint32_t',
  pings: 'uint32_t',
  refused_requests: 'uint32_t',
  notifications: 'uint32_t',
  calls: 'uint64_t',
  answered: 'uint64_t',
  failed: 'uint64_t',
});
struct('pw_mcp_handled', {
  kind: 'uint32_t',
  notified: 'uint8_t',
  request: 'uint64_t',
  failure: 'uint32_t',
  limit: 'size_t',
  len: 'size_t',
});
struct('pw_mcp_frame', { index: 'uint32_t', slot: 'uint16_t', reserved: 'uint16_t', len: 'size_t' });

/** A field's offset in a struct, by dotted path (`'frame.len'`). */
function offsetOf(s, path) {
  let off = 0;
  let t = s;
  for (const part of path.split('.')) {
    const f = t.fields.find((x) => x.name === part);
    if (!f) throw new Error(`polyweave: ${t.name} has no field ${part}`);
    off += f.offset;
    t = f.type;
  }
  return off;
}

// ------------------------------------------------------------ the module

// The trampolines' targets (see wasm/src/lib.rs): set below, called during C calls only.
const imports = {
  pw_js: {
    sync_call: (userdata, args, len, out) => onSyncCall(userdata, args, len, out),
    on_tool_call: (userdata, info) => onHook(userdata, info, 0),
    on_tool_result: (userdata, info, outcome) => onHook(userdata, info, outcome),
  },
};

const WASM_NAME = 'polyweave_tool_adapter.wasm';

async function instantiate() {
  const url = new URL(`./${WASM_NAME}`, import.meta.url);
  const env = globalThis.process?.env?.PW_WASM;
  if (url.protocol === 'file:' || env) {
    // Node (or another runtime with node:fs): the file next to this module, or PW_WASM.
    const fs = await import('node:fs');
    const bytes = fs.readFileSync(env || url);
    return (await WebAssembly.instantiate(bytes, imports)).instance;
  }
  const response = fetch(url);
  if (typeof WebAssembly.instantiateStreaming === 'function') {
    try {
      return (await WebAssembly.instantiateStreaming(response, imports)).instance;
    } catch (e) {
      // A server that does not send `application/wasm`: compile from the bytes instead.
      if (!(e instanceof TypeError)) throw e;
    }
  }
  const bytes = await (await fetch(url)).arrayBuffer();
  return (await WebAssembly.instantiate(bytes, imports)).instance;
}

const instance = await instantiate();

// ------------------------------------------------------------ traps: one poisons the module

// A trap (`WebAssembly.RuntimeError`: a Rust panic is one, the module being built with
// panic=abort; an out-of-bounds access is another) or a stack overflow inside the module
// unwinds the C frames mid-way: whatever that call was changing is left half changed, and every
// object of the module lives in the one linear memory. So the first exception out of the module
// poisons it: that call and every later call into it, on any object, throw `trapError()`.
// Nothing of the binding's own throws through the module (the trampolines rethrow only once it
// is poisoned), so any exception that leaves an export cut a C call short.
let trapCause = null;

/** The error a poisoned module's calls throw (`code === 'PW_WASM_TRAPPED'`, `cause`: the trap). */
function trapError() {
  const why = trapCause instanceof Error ? `${trapCause.name}: ${trapCause.message}` : String(trapCause);
  const e = new Error(
    `polyweave: the WebAssembly module trapped (${why}); its memory is in an unknown state, so no ` +
      'polyweave object can be used any more: load the package anew (a new process or page)',
    { cause: trapCause },
  );
  e.code = 'PW_WASM_TRAPPED';
  return e;
}

/** An export, refused once the module is poisoned, and poisoning it when an exception leaves it. */
function guard(f) {
  return (...args) => {
    if (trapCause !== null) throw trapError();
    try {
      return f(...args);
    } catch (e) {
      if (trapCause === null) trapCause = e;
      throw trapError();
    }
  };
}

/**
 * The module's exports (every `pw_*` function of the C ABI, the `pwjs_*` shims, `memory`), the
 * functions guarded (see `guard`): the raw exports are never handed out.
 */
export const X = Object.freeze(
  Object.fromEntries(Object.entries(instance.exports).map(([k, v]) => [k, typeof v === 'function' ? guard(v) : v])),
);
const memory = X.memory;

/** The linear memory as bytes and as a DataView; replaced when the memory grows. */
export let U8 = new Uint8Array(memory.buffer);
export let DV = new DataView(memory.buffer);
function refresh() {
  if (U8.buffer !== memory.buffer) {
    U8 = new Uint8Array(memory.buffer);
    DV = new DataView(memory.buffer);
  }
}

// ------------------------------------------------------------ memory (JS owns it)

// The C library never allocates: every block it works in comes from here, a first-fit
// allocator over the linear memory past the module's stack and data (`__heap_base`), growing
// the memory when no free block fits. Blocks are 16-aligned (the C ABI's largest alignment
// is 8), so no block needs an offset to align it.
const ALIGN = 16;
let top = Math.ceil(X.__heap_base.value / ALIGN) * ALIGN;
const sizes = new Map(); // block -> its size
const freeList = []; // [{ at, size }] sorted by address, neighbours merged

/** A block of `size` bytes (16-aligned), not zeroed. */
export function malloc(size) {
  const n = Math.max(ALIGN, Math.ceil(size / ALIGN) * ALIGN);
  for (let i = 0; i < freeList.length; i++) {
    const b = freeList[i];
    if (b.size < n) continue;
    const at = b.at;
    if (b.size === n) freeList.splice(i, 1);
    else {
      b.at += n;
      b.size -= n;
    }
    sizes.set(at, n);
    return at;
  }
  const at = top;
  const end = top + n;
  // Grow first: when the memory cannot grow (past 4 GiB, or the engine's limit) `grow` throws
  // a RangeError, and `top` must still be the real end of the blocks handed out.
  if (end > memory.buffer.byteLength) {
    memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    refresh();
  }
  top = end;
  sizes.set(at, n);
  return at;
}

/** Gives a block of `malloc` back. */
export function mfree(at) {
  const n = sizes.get(at);
  if (n === undefined) throw new Error(`polyweave: freeing ${at}, not a live block`);
  sizes.delete(at);
  let i = 0;
  while (i < freeList.length && freeList[i].at < at) i++;
  freeList.splice(i, 0, { at, size: n });
  // merge with the next, then with the previous
  if (i + 1 < freeList.length && at + n === freeList[i + 1].at) {
    freeList[i].size += freeList[i + 1].size;
    freeList.splice(i + 1, 1);
  }
  if (i > 0 && freeList[i - 1].at + freeList[i - 1].size === at) {
    freeList[i - 1].size += freeList[i].size;
    freeList.splice(i, 1);
    i--;
  }
  // the last free block gives its room back to the top
  const last = freeList[freeList.length - 1];
  if (last && last.at + last.size === top) {
    top = last.at;
    freeList.pop();
  }
}

/** Live blocks and their bytes (what tests check a close gave back). */
export function heapStats() {
  let bytes = 0;
  for (const n of sizes.values()) bytes += n;
  return { blocks: sizes.size, bytes };
}

// A stack of scratch room for one C call's inputs and out parameters. Calls nest (a sync tool
// runs inside a C call, and may feed another wrapper), so each call takes room above the
// caller's and gives it back when it returns. What does not fit goes to a malloc'd block.
const SCRATCH = 256 * 1024;
const scratchBase = malloc(SCRATCH);
const scratchEnd = scratchBase + SCRATCH;
let sp = scratchBase;
const temps = [];

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');
let lastLen = 0;

/** Room for `n` bytes on the scratch stack (or in a temporary block): its address. */
function take(n) {
  const need = Math.ceil(Math.max(n, 1) / 8) * 8;
  if (sp + need <= scratchEnd) {
    const at = sp;
    sp += need;
    return at;
  }
  const at = malloc(need);
  temps.push(at);
  return at;
}

/**
 * Puts bytes (a string as UTF-8, or a Uint8Array) in scratch room: returns its address; the
 * length is `lastLen`. Never NULL, also for no bytes.
 */
function putBytes(data) {
  if (typeof data === 'string') {
    const max = data.length * 3;
    if (sp + max <= scratchEnd) {
      const at = sp;
      const { written } = encoder.encodeInto(data, U8.subarray(at, at + max));
      sp += Math.ceil(Math.max(written, 1) / 8) * 8;
      lastLen = written;
      return at;
    }
    data = encoder.encode(data);
  }
  const at = take(data.length);
  U8.set(data, at);
  lastLen = data.length;
  return at;
}

/** Gives back scratch room down to `mark` and the temporary blocks above `tempMark`. */
function release(mark, tempMark) {
  sp = mark;
  while (temps.length > tempMark) mfree(temps.pop());
}

// ------------------------------------------------------------ reading and writing structs

function readField(type, p) {
  switch (type) {
    case 'uint8_t':
      return U8[p];
    case 'uint16_t':
      return DV.getUint16(p, true);
    case 'uint32_t':
    case 'size_t':
    case 'ptr':
      return DV.getUint32(p, true);
    case 'uint64_t':
      return Number(DV.getBigUint64(p, true));
    default:
      return readStruct(type, p);
  }
}

function writeField(type, p, v) {
  switch (type) {
    case 'uint8_t':
      U8[p] = v;
      return;
    case 'uint16_t':
      DV.setUint16(p, v, true);
      return;
    case 'uint32_t':
    case 'size_t':
    case 'ptr':
      DV.setUint32(p, v ?? 0, true);
      return;
    case 'uint64_t':
      DV.setBigUint64(p, BigInt(v), true);
      return;
    default:
      writeStruct(type, p, v);
  }
}

/** The struct `s` at address `p` as a plain object (nested structs as objects, spans `{ ptr, len }`). */
export function readStruct(s, p, into = {}) {
  for (const f of s.fields) into[f.name] = readField(f.type, p + f.offset);
  return into;
}

/** Writes object `o` as struct `s` at `p` (missing fields as 0). */
export function writeStruct(s, p, o) {
  U8.fill(0, p, p + s.size);
  for (const f of s.fields) if (o[f.name] !== undefined && o[f.name] !== null) writeField(f.type, p + f.offset, o[f.name]);
}

// ------------------------------------------------------------ the functions

// An argument's kind: 'i' a number as is (u32, size_t, a pointer), 'j' a uint64_t (a JS number),
// 'b' bytes in (a string as UTF-8 or a Uint8Array; it becomes the pointer and the length),
// 'n' a scalar out (an array: `[0]`, its element set), 'h' a `pw_call_handle` in (an object,
// passed by pointer to the pwjs_ shims), `o:T` a struct out (the object given is filled),
// `c:T` a struct in, `u:T` a struct in and out, `a:T` an array of structs in.
function fn(name, sig, ret = 'i') {
  const f = X[name];
  if (typeof f !== 'function') throw new Error(`polyweave: the module lacks ${name}`);
  const kinds = sig.map((k) => {
    const [kind, t] = k.split(':');
    return { kind, s: t ? STRUCTS[t] : null };
  });
  return (...args) => {
    const mark = sp;
    const tempMark = temps.length;
    try {
      const c = [];
      const after = [];
      for (let i = 0; i < kinds.length; i++) {
        const { kind, s } = kinds[i];
        const v = args[i];
        switch (kind) {
          case 'i':
            c.push(v === null || v === undefined ? 0 : v);
            break;
          case 'j':
            c.push(BigInt(v));
            break;
          case 'b':
            c.push(putBytes(v), lastLen);
            break;
          case 'n': {
            const p = take(4);
            DV.setUint32(p, 0, true);
            c.push(p);
            after.push(() => (v[0] = DV.getUint32(p, true)));
            break;
          }
          case 'h': {
            const p = take(pwCallHandle.size);
            writeStruct(pwCallHandle, p, v);
            c.push(p);
            break;
          }
          case 'o':
          case 'c':
          case 'u': {
            const p = take(s.size);
            if (kind === 'o') U8.fill(0, p, p + s.size);
            else writeStruct(s, p, v);
            c.push(p);
            if (kind !== 'c') after.push(() => readStruct(s, p, v));
            break;
          }
          case 'a': {
            const p = take(s.size * v.length);
            v.forEach((o, k) => writeStruct(s, p + k * s.size, o));
            c.push(p);
            break;
          }
          default:
            throw new Error(`polyweave: argument kind ${kind}`);
        }
      }
      const r = f(...c);
      for (const a of after) a();
      return ret === 'j' ? BigInt.asUintN(64, r) : r >>> 0;
    } finally {
      release(mark, tempMark);
    }
  };
}

export const C = {
  resultText: fn('pw_result_text', ['i', 'i', 'i', 'n']),
  resultIsMalformed: fn('pw_result_is_malformed', ['i']),
  resultIsNotWaiting: fn('pw_result_is_not_waiting', ['i']),
  // standalone calls (wrapToolAdapter)
  callOptionsDefault: fn('pw_adapter_call_options_default', ['o:pw_adapter_call_options']),
  callAlign: fn('pw_adapter_call_align', []),
  callSize: fn('pw_adapter_call_size', ['i', 'n']),
  callInit: fn('pw_adapter_call_init', ['i', 'i', 'i', 'j', 'c:pw_adapter_call_options', 'n']),
  callHandleFrame: fn('pw_adapter_call_handle_frame', ['i', 'j', 'b']),
  callHandleClosed: fn('pw_adapter_call_handle_closed', ['i', 'j']),
  callHandleTimeout: fn('pw_adapter_call_handle_timeout', ['i', 'j']),
  callPollTransmit: fn('pw_adapter_call_poll_transmit', ['i', 'i', 'i', 'n']),
  callPollTimeout: fn('pw_adapter_call_poll_timeout', ['i'], 'j'),
  callOutcome: fn('pw_adapter_call_outcome', ['i', 'o:pw_outcome']),
  // the wrapper (createToolAdapterWrapper)
  wrapperAlign: fn('pw_wrapper_align', []),
  wrapperConfigDefault: fn('pw_wrapper_config_default', ['o:pw_wrapper_config']),
  wrapperSize: fn('pw_wrapper_size', ['c:pw_wrapper_config', 'i', 'i', 'n']),
  wrapperInit: fn('pw_wrapper_init', ['i', 'i', 'c:pw_wrapper_config', 'i', 'a:pw_tool', 'i', 'c:pw_hooks', 'n']),
  handleRequest: fn('pw_wrapper_handle_request', ['i', 'j', 'b']),
  complete: fn('pwjs_wrapper_complete', ['i', 'j', 'h', 'c:pw_outcome', 'n']),
  handleAdapterFrame: fn('pwjs_wrapper_handle_adapter_frame', ['i', 'j', 'h', 'b']),
  handleAdapterClosed: fn('pwjs_wrapper_handle_adapter_closed', ['i', 'j', 'h']),
  handleTimeout: fn('pw_wrapper_handle_timeout', ['i', 'j']),
  cancel: fn('pw_wrapper_cancel', ['i', 'j', 'b', 'n']),
  abort: fn('pw_wrapper_abort', ['i']),
  clearTrace: fn('pw_wrapper_clear_trace', ['i']),
  stats: fn('pw_wrapper_stats', ['i', 'o:pw_stats']),
  pollEvent: fn('pw_wrapper_poll_event', ['i', 'o:pw_event']),
  traceEntry: fn('pw_wrapper_trace_entry', ['i', 'i', 'o:pw_trace_entry']),
  // stream decoders and item encoders (decode.mjs)
  decoderConfigDefault: fn('pw_decoder_config_default', ['o:pw_decoder_config']),
  decoderAlign: fn('pw_decoder_align', []),
  decoderSize: fn('pw_decoder_size', ['c:pw_decoder_config', 'i', 'n']),
  decoderMaxFrameLen: fn('pw_decoder_max_frame_len', ['c:pw_decoder_config', 'n']),
  decoderInit: fn('pw_decoder_init', ['i', 'i', 'i', 'c:pw_decoder_config', 'i', 'n']),
  decoderFeed: fn('pw_decoder_feed', ['i', 'i', 'i', 'n']),
  decoderFinish: fn('pw_decoder_finish', ['i']),
  decoderPollFrame: fn('pw_decoder_poll_frame', ['i', 'i', 'i', 'n']),
  decoderStats: fn('pw_decoder_stats', ['i', 'o:pw_decode_stats']),
  providerFromName: fn('pw_provider_from_name', ['b', 'n']),
  encodeItem: fn('pw_encode_item', ['i', 'b', 'i', 'i', 'n']),
  // the MCP client (mcp.mjs)
  mcpConfigDefault: fn('pw_mcp_config_default', ['o:pw_mcp_config']),
  mcpConfigFit: fn('pw_mcp_config_fit', ['u:pw_mcp_config', 'c:pw_wrapper_config']),
  mcpAlign: fn('pw_mcp_align', []),
  mcpSize: fn('pw_mcp_size', ['c:pw_mcp_config', 'i', 'n']),
  mcpMaxFrameLen: fn('pw_mcp_max_frame_len', ['c:pw_mcp_config', 'n']),
  mcpMaxLineLen: fn('pw_mcp_max_line_len', ['c:pw_mcp_config', 'n']),
  mcpInit: fn('pw_mcp_init', ['i', 'i', 'c:pw_mcp_config', 'i', 'b', 'b', 'n']),
  mcpStart: fn('pw_mcp_start', ['i']),
  mcpFeed: fn('pw_mcp_feed', ['i', 'b', 'n']),
  mcpHandleClosed: fn('pw_mcp_handle_closed', ['i']),
  mcpState: fn('pw_mcp_state', ['i', 'n']),
  mcpInFlight: fn('pw_mcp_in_flight', ['i']),
  mcpQueued: fn('pw_mcp_queued', ['i']),
  mcpPollEvent: fn('pw_mcp_poll_event', ['i', 'o:pw_mcp_event']),
  mcpStats: fn('pw_mcp_stats', ['i', 'o:pw_mcp_client_stats']),
  mcpHandleFrame: fn('pw_mcp_handle_frame', ['i', 'i', 'i', 'b', 'o:pw_mcp_handled']),
  mcpPollTransmit: fn('pw_mcp_poll_transmit', ['i', 'i', 'i', 'n']),
  mcpPollFrame: fn('pw_mcp_poll_frame', ['i', 'i', 'i', 'o:pw_mcp_frame']),
  // The hot path, called directly (no argument marshalling): the out structs and buffers are
  // the caller's blocks (OutBlock, OutBuf), the frame goes through `withBytes`.
  pollOutput: X.pw_wrapper_poll_output,
  pollTimeout: (w) => BigInt.asUintN(64, X.pw_wrapper_poll_timeout(w)),
  pending: (w) => X.pw_wrapper_pending(w) >>> 0,
};

/**
 * `pw_wrapper_handle_response` on `data` (a frame's JSON text or bytes), the disposition
 * written at `out` (an OutBlock's): the sync path's one call, with the frame put on the
 * scratch stack directly (no copy but the UTF-8 encoding).
 */
export function handleResponse(w, now, data, out) {
  const mark = sp;
  const tempMark = temps.length;
  try {
    const p = putBytes(data);
    return X.pw_wrapper_handle_response(w, BigInt(now), p, lastLen, out) >>> 0;
  } finally {
    release(mark, tempMark);
  }
}

/** `pw_writer_write` of `data` (a string as UTF-8, or bytes): for sync tools, during their call. */
export function writerWrite(out, data) {
  const mark = sp;
  const tempMark = temps.length;
  try {
    const p = putBytes(data);
    return X.pw_writer_write(out, p, lastLen) >>> 0;
  } finally {
    release(mark, tempMark);
  }
}

/** A malformed frame (SPEC §1): refused with a `rejected` event (the library's own classes). */
export const isMalformed = (r) => C.resultIsMalformed(r) === 1;
/** A completion or adapter input for a call that is not waiting for it. */
export const isNotWaiting = (r) => C.resultIsNotWaiting(r) === 1;

// ------------------------------------------------------------ helpers

/** The library's message for a result code. */
export function resultText(code) {
  const buf = malloc(256);
  try {
    const n = [0];
    if (C.resultText(code, buf, 256, n) !== PW.OK) return `code ${code}`;
    return `${String.fromCharCode(...U8.subarray(buf, buf + n[0]))} (code ${code})`;
  } finally {
    mfree(buf);
  }
}

/** An Error for a result code, with `.code` set to it. */
export function pwError(what, code) {
  const e = new Error(`${what}: ${resultText(code)}`);
  e.code = code;
  return e;
}

/** A copy of `len` bytes at `ptr` (a Uint8Array of its own). */
export function bytesAt(ptr, len) {
  return U8.slice(ptr, ptr + len);
}

/** `len` bytes at `ptr` as a string (UTF-8, invalid bytes as U+FFFD). */
export function textAt(ptr, len) {
  if (len === 0) return '';
  // Short ASCII texts (names, ids, small args) are faster by hand than through TextDecoder.
  if (len <= 32) {
    let s = '';
    for (let i = ptr, end = ptr + len; i < end; i++) {
      const b = U8[i];
      if (b >= 0x80) return decoder.decode(U8.subarray(ptr, ptr + len));
      s += String.fromCharCode(b);
    }
    return s;
  }
  return decoder.decode(U8.subarray(ptr, ptr + len));
}

/** The span's bytes as a string (UTF-8). */
export const strOf = (span) => textAt(span.ptr, span.len);

/** Memory that does not move (the wrapper's block, borrowed names): `size` bytes. */
export class Stable {
  constructor(size) {
    this.size = Math.max(1, size);
    this.ptr = malloc(this.size);
  }
  /** An address `offset` bytes in. */
  at(offset) {
    return this.ptr + offset;
  }
  write(offset, bytes) {
    U8.set(bytes, this.ptr + offset);
  }
  free() {
    if (this.ptr !== null) mfree(this.ptr);
    this.ptr = null;
  }
}

/** An output buffer in linear memory that grows on demand: `ptr`, `cap`, `text(len)`. */
export class OutBuf {
  constructor(cap) {
    this.cap = Math.max(1, cap);
    this.ptr = malloc(this.cap);
  }
  /** Replaces the buffer by one of at least `cap` bytes (the old content is dropped). */
  grow(cap) {
    mfree(this.ptr);
    this.cap = Math.max(1, cap);
    this.ptr = malloc(this.cap);
  }
  text(len) {
    return textAt(this.ptr, len);
  }
  bytes(len) {
    return bytesAt(this.ptr, len);
  }
  free() {
    if (this.ptr !== null) mfree(this.ptr);
    this.ptr = null;
  }
}

/** `ptr` rounded up to `align` (a power of two), as an offset from `ptr`. */
export function alignOffset(ptr, align) {
  return (align - (ptr % align)) % align;
}

/** A 64-bit deadline as a number (`Infinity` for PW_NO_TIMEOUT). */
export function deadline(v) {
  if (typeof v === 'bigint') return v >= 0xffffffffffffffffn ? Infinity : Number(v);
  return v >= 18446744073709552000 ? Infinity : v;
}

// ------------------------------------------------------------ callbacks

// The hooks: the two trampolines serve every wrapper (userdata is the wrapper's number).
const hookTargets = new Map();
let nextHookId = 1;
const hookFns = { call: X.pwjs_on_tool_call() >>> 0, result: X.pwjs_on_tool_result() >>> 0 };

function onHook(userdata, info, outcome) {
  try {
    const t = hookTargets.get(userdata >>> 0);
    (t instanceof WeakRef ? t.deref() : t)?.onCCall(info >>> 0, outcome >>> 0 || null);
  } catch {
    // An exception of JS code would unwind the C frames: kept out of them.
  }
  // onCCall makes no call into the module today; should the module be poisoned all the same,
  // the C call that called this hook must not go on over memory in an unknown state, so this
  // throw unwinds it (see `guard`), as onSyncCall's does.
  if (trapCause !== null) throw trapError();
}

const INFO = {
  index: offsetOf(pwCallInfo, 'index'),
  hasName: offsetOf(pwCallInfo, 'has_name'),
  hasId: offsetOf(pwCallInfo, 'has_id'),
  name: offsetOf(pwCallInfo, 'name'),
  id: offsetOf(pwCallInfo, 'id'),
  args: offsetOf(pwCallInfo, 'args'),
};
const OUTCOME = { isError: offsetOf(pwOutcome, 'is_error'), text: offsetOf(pwOutcome, 'text') };
const spanAt = (p) => textAt(DV.getUint32(p, true), DV.getUint32(p + 4, true));

/** A hook's `pw_call_info` (address, valid during the hook): index and id. */
export function callInfoHead(info) {
  return {
    index: DV.getUint32(info + INFO.index, true),
    id: U8[info + INFO.hasId] ? spanAt(info + INFO.id) : null,
  };
}
/** A hook's `pw_call_info`'s call index alone. */
export const callIndex = (info) => DV.getUint32(info + INFO.index, true);
/** The name (null when the call had none) and args texts of a hook's `pw_call_info`. */
export function callInfoTexts(info) {
  return {
    name: U8[info + INFO.hasName] ? spanAt(info + INFO.name) : null,
    args: spanAt(info + INFO.args),
  };
}
/** A hook's `pw_outcome` (address): `{ isError, text }`. */
export function outcomeOf(outcome) {
  return { isError: U8[outcome + OUTCOME.isError] === 1, text: spanAt(outcome + OUTCOME.text) };
}

const TRANSMIT = { route: offsetOf(pwTransmit, 'route'), handle: offsetOf(pwTransmit, 'handle'), len: offsetOf(pwTransmit, 'len') };
const OUTPUT = {
  kind: offsetOf(pwOutput, 'kind'),
  cut: offsetOf(pwOutput, 'cut'),
  frame: offsetOf(pwOutput, 'frame'),
  call: offsetOf(pwOutput, 'call'),
  outcome: offsetOf(pwOutput, 'outcome'),
};
const DISPOSITION = { kind: offsetOf(pwDisposition, 'kind'), hasHandle: offsetOf(pwDisposition, 'has_handle') };

/**
 * A wrapper's out structs (`pw_disposition`, `pw_output`) in linear memory, read field by
 * field (one per wrapper: a sync tool of another wrapper may run inside the C call).
 */
export class OutBlock {
  constructor() {
    const oAt = Math.ceil(pwDisposition.size / 8) * 8;
    this.mem = new Stable(oAt + pwOutput.size);
    this.disposition = this.mem.at(0);
    this.output = this.mem.at(oAt);
    /** The hook event's `pw_call_info` and `pw_outcome` inside `output`. */
    this.outputCall = this.output + OUTPUT.call;
    this.outputOutcome = this.output + OUTPUT.outcome;
    this.outputFrame = this.output + OUTPUT.frame;
  }
  get outputKind() {
    return DV.getUint32(this.output + OUTPUT.kind, true);
  }
  get outputCut() {
    return U8[this.output + OUTPUT.cut] !== 0;
  }
  get outputRoute() {
    return DV.getUint32(this.outputFrame + TRANSMIT.route, true);
  }
  get outputLen() {
    return DV.getUint32(this.outputFrame + TRANSMIT.len, true);
  }
  get outputHandle() {
    return readStruct(pwCallHandle, this.outputFrame + TRANSMIT.handle);
  }
  get kind() {
    return DV.getUint32(this.disposition + DISPOSITION.kind, true);
  }
  get hasHandle() {
    return U8[this.disposition + DISPOSITION.hasHandle] !== 0;
  }
  free() {
    this.mem.free();
  }
}

/** Hooks for a wrapper: `target.onCCall(info, outcome|null)` (addresses) is called during the C call. */
export function registerHooks(target) {
  const id = nextHookId++;
  hookTargets.set(id, target);
  return { id, hooks: { userdata: id, on_tool_call: hookFns.call, on_tool_result: hookFns.result } };
}
export function unregisterHooks(id) {
  hookTargets.delete(id);
}

// Sync tools: the one `pw_sync_fn` trampoline serves every sync tool of every wrapper
// (userdata is the tool's number). It runs inside the C call that intercepted the TOOL_CALL and
// must not call back into that wrapper (the target's `syncCall` guards against it).
const syncTargets = new Map();
let nextSyncId = 1;
const syncFn = X.pwjs_sync_fn() >>> 0;

function onSyncCall(userdata, args, len, out) {
  let status = PW_TOOL_STATUS_FAILED;
  try {
    const t = syncTargets.get(userdata >>> 0);
    const w = t?.ref.deref();
    if (w) status = w.syncCall(t.tool, textAt(args >>> 0, len >>> 0), out >>> 0);
  } catch {
    // A JS exception (the tool's, whatever its class): the tool failed. It must not unwind the
    // C frames, which would leave the wrapper half changed.
  }
  // But when a call into the module trapped during the tool (a nested wrapper's, or the
  // writer's), even if the tool caught it, the C call that runs the tool must not go on: the
  // memory is in an unknown state. This throw unwinds it (see `guard`).
  if (trapCause !== null) throw trapError();
  return status;
}

/**
 * A `pw_tool.call` / `userdata` pair for sync tool `tool` of a wrapper: during the C call,
 * `ref.deref().syncCall(tool, argsText, out)` runs it (`out` the writer's address).
 */
export function registerSyncTool(ref, tool) {
  const id = nextSyncId++;
  syncTargets.set(id, { ref, tool });
  return { id, call: syncFn, userdata: id };
}
export function unregisterSyncTool(id) {
  syncTargets.delete(id);
}

/** The library's version (`pw_version`, a NUL-terminated string). */
export function version() {
  const p = X.pw_version() >>> 0;
  let end = p;
  while (U8[end] !== 0) end++;
  return textAt(p, end - p);
}

/** Sizes and alignments the module itself computed (`pwjs_layout`), for the layout test. */
export function moduleLayouts() {
  const out = {};
  const n = X.pwjs_layout_count() >>> 0;
  for (let i = 0; i < n; i++) {
    const p = X.pwjs_layout(i) >>> 0;
    const name = textAt(DV.getUint32(p, true), DV.getUint32(p + 4, true));
    out[name] = { size: DV.getUint32(p + 8, true), align: DV.getUint32(p + 12, true) };
  }
  return out;
}

/**
 * `pw_wrapper_complete` (through its by-pointer shim) with the outcome's text (a string) put
 * on the scratch stack for the call: `completed[0]` is set to the `pw_completed` it wrote.
 */
export function complete(w, now, handle, isError, text, completed) {
  const mark = sp;
  const tempMark = temps.length;
  try {
    const t = putBytes(text);
    const len = lastLen;
    const h = take(pwCallHandle.size);
    writeStruct(pwCallHandle, h, handle);
    const o = take(pwOutcome.size);
    writeStruct(pwOutcome, o, { is_error: isError ? 1 : 0, text: { ptr: t, len } });
    const c = take(4);
    const r = X.pwjs_wrapper_complete(w, BigInt(now), h, o, c) >>> 0;
    completed[0] = DV.getUint32(c, true);
    return r;
  } finally {
    release(mark, tempMark);
  }
}

// Through `C` like the others, so a test can stand in for them.
C.handleResponseTo = handleResponse;
C.writerWrite = writerWrite;
C.complete = complete;

/** UTF-8 bytes of a string (a Uint8Array of its own). */
export const utf8 = (s) => encoder.encode(s);
