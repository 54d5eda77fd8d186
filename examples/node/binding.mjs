// The C ABI (include/polyweave_tool_adapter.h) as the API modules call it: the functions with
// their out parameters and byte arguments marshalled, the structs read and written by the
// header's layouts (abi.mjs, generated from the header), the callback trampolines routed to JS,
// result codes as errors, and `init` (loading the module: wasm.mjs; its memory: memory.mjs).
// Nothing here decides behaviour: every rule lives in the C library.
//
// The C names this package uses are the function names in `C` below and the few struct names
// in `S`; everything else (constants, fields, layouts, which struct a parameter is) is read
// from abi.mjs.
import { CONSTANTS, ENUMS, FUNCTIONS, STRUCTS } from './abi.mjs';
import { X, instantiate, trapError, trapped, use } from './wasm.mjs';
import { DV, U8, lastLen, malloc, mfree, putBytes, release, setup, sp, take, tempMark, textAt } from './memory.mjs';

export { X } from './wasm.mjs';
export { U8, DV, malloc, mfree, heapStats, memoryBytes, textAt, bytesAt, utf8, Stable, OutBuf, alignOffset } from './memory.mjs';
export { ENUMS, STRUCTS } from './abi.mjs';

// ------------------------------------------------------------ constants (the header's)

/** The header's numeric constants without their `PW_` prefix: `PW.OK`, `PW.TOOL_KIND_SYNC`... */
export const PW = Object.freeze(
  Object.fromEntries(
    Object.entries(CONSTANTS)
      .filter(([, v]) => typeof v === 'number' || /^\d+$/.test(v))
      .map(([k, v]) => [k.slice(3), typeof v === 'number' ? v : BigInt(v)]),
  ),
);

/** The struct names this package uses, in one place. */
const S = {
  str: 'pw_str',
  outcome: 'pw_outcome',
  callInfo: 'pw_call_info',
  callHandle: 'pw_call_handle',
  disposition: 'pw_disposition',
  transmit: 'pw_transmit',
  output: 'pw_output',
};
const struct = (name) => {
  const s = STRUCTS[name];
  if (!s) throw new Error(`polyweave: the header has no struct ${name}`);
  return s;
};

// ------------------------------------------------------------ errors

const RESULT_NAMES = new Map(Object.entries(ENUMS.pw_result ?? {}).map(([k, v]) => [v, k]));

/** The C name of a `pw_result` (`'PW_BUFFER_TOO_SMALL'`), `PW_RESULT_<n>` for an unknown one. */
export const resultName = (code) => RESULT_NAMES.get(code) ?? `PW_RESULT_${code}`;

/** The library's message for a result code, with its name. */
export function resultText(code) {
  const buf = malloc(256);
  try {
    const n = [0];
    if (C.resultText(code, buf, 256, n) !== PW.OK) return `${resultName(code)} (${code})`;
    return `${textAt(buf, n[0])} (${resultName(code)}, ${code})`;
  } finally {
    mfree(buf);
  }
}

/** Sets an error's `code` (the C name, a string) and `errno` (the number) for a `pw_result`. */
export function withCode(e, code) {
  e.code = resultName(code);
  e.errno = code;
  return e;
}

/** An Error for a result code: `code` its C name (`'PW_QUEUE_FULL'`), `errno` its number. */
export function pwError(what, code) {
  return withCode(new Error(`${what}: ${resultText(code)}`), code);
}

/** Throws the error of a use before the module is loaded (for the callers of `X` directly). */
export function assertLoaded() {
  if (X === null) throw notLoaded();
}

/** The error of a use before the module is loaded. */
function notLoaded() {
  const e = new Error(
    `polyweave: the WebAssembly module is not loaded${loadError ? ` (${loadError.message})` : ''}; ` +
      'call `await init({ wasm })` first (wasm: a URL, a Response, bytes or a WebAssembly.Module)',
    { cause: loadError ?? undefined },
  );
  e.code = 'PW_WASM_NOT_LOADED';
  return e;
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
      return readStruct(STRUCTS[type], p);
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
      writeStruct(STRUCTS[type], p, v);
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

/** A field's offset in a struct, by dotted path (`'frame.len'`). */
function offsetOf(s, path) {
  let off = 0;
  let t = s;
  for (const part of path.split('.')) {
    const f = t.fields.find((x) => x.name === part);
    if (!f) throw new Error(`polyweave: ${t.name} has no field ${part}`);
    off += f.offset;
    t = STRUCTS[f.type];
  }
  return off;
}

// ------------------------------------------------------------ the functions

const declared = [];

// An argument's kind: 'i' a number as is (u32, size_t, a pointer), 'j' a uint64_t (a JS number),
// 'b' bytes in (a string as UTF-8 or a Uint8Array; it becomes the pointer and the length),
// 'B' the same or null (NULL and 0),
// 'n' a scalar out (an array: `[0]`, its element set), 'h' a `pw_call_handle` in (an object,
// passed by pointer to the pwjs_ shims), 'o' a struct out (the object given is filled), 'c' a
// struct in, 'u' a struct in and out, 'a' an array of structs in. Which struct is the header's
// parameter type at that place (`o:T` names it for the pwjs_ shims, which the header lacks).
function fn(name, sig, ret = 'i') {
  declared.push(name);
  let kinds = null;
  const prepare = () => {
    const params = FUNCTIONS[name] ?? [];
    let at = 0; // the header's parameter the argument is (a 'b' takes two)
    kinds = sig.map((k) => {
      const [kind, t] = k.split(':');
      const ctype = (params[at] ?? '').replace(/\bconst\b|\bstruct\b|\*/g, '').trim();
      at += kind === 'b' || kind === 'B' ? 2 : 1;
      const s = 'ocua'.includes(kind) ? struct(t ?? ctype) : kind === 'h' ? struct(S.callHandle) : null;
      return { kind, s };
    });
  };
  return (...args) => {
    if (X === null) throw notLoaded();
    if (kinds === null) prepare();
    const f = X[name];
    const mark = sp;
    const marked = tempMark();
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
          case 'B':
            if (v === null || v === undefined) {
              c.push(0, 0);
              break;
            }
          // falls through: bytes given
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
          case 'h':
          case 'c': {
            const p = take(s.size);
            writeStruct(s, p, v);
            c.push(p);
            break;
          }
          case 'o':
          case 'u': {
            const p = take(s.size);
            if (kind === 'o') U8.fill(0, p, p + s.size);
            else writeStruct(s, p, v);
            c.push(p);
            after.push(() => readStruct(s, p, v));
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
      release(mark, marked);
    }
  };
}

/** The NUL-terminated string at `p` (UTF-8), null for NULL. */
function cStringAt(p) {
  if (p === 0) return null;
  let end = p;
  while (U8[end] !== 0) end++;
  return textAt(p, end - p);
}

// Returns a pointer (a static C string), read as text by `C.mcpProtocolVersion`.
const protocolVersionPtr = fn('pw_mcp_protocol_version', ['i']);

/** The C functions this package calls, marshalled (see `fn`): the only place naming them. */
export const C = {
  resultText: fn('pw_result_text', ['i', 'i', 'i', 'n']),
  resultIsMalformed: fn('pw_result_is_malformed', ['i']),
  resultIsNotWaiting: fn('pw_result_is_not_waiting', ['i']),
  // standalone calls (wrapToolAdapter)
  callOptionsDefault: fn('pw_adapter_call_options_default', ['o']),
  callAlign: fn('pw_adapter_call_align', []),
  callSize: fn('pw_adapter_call_size', ['i', 'n']),
  callInit: fn('pw_adapter_call_init', ['i', 'i', 'i', 'j', 'c', 'n']),
  callHandleFrame: fn('pw_adapter_call_handle_frame', ['i', 'j', 'b']),
  callHandleClosed: fn('pw_adapter_call_handle_closed', ['i', 'j']),
  callHandleTimeout: fn('pw_adapter_call_handle_timeout', ['i', 'j']),
  callPollTransmit: fn('pw_adapter_call_poll_transmit', ['i', 'i', 'i', 'n']),
  callPollTimeout: fn('pw_adapter_call_poll_timeout', ['i'], 'j'),
  callOutcome: fn('pw_adapter_call_outcome', ['i', 'o']),
  // the wrapper (createToolAdapterWrapper)
  wrapperAlign: fn('pw_wrapper_align', []),
  wrapperConfigDefault: fn('pw_wrapper_config_default', ['o']),
  wrapperSize: fn('pw_wrapper_size', ['c', 'i', 'i', 'n']),
  wrapperInit: fn('pw_wrapper_init', ['i', 'i', 'c', 'i', 'a', 'i', 'c', 'n']),
  handleRequest: fn('pw_wrapper_handle_request', ['i', 'j', 'b']),
  complete: fn('pwjs_wrapper_complete', ['i', 'j', 'h', `c:${S.outcome}`, 'n']),
  completeUnwritable: fn('pwjs_wrapper_complete_unwritable', ['i', 'j', 'h']),
  handleAdapterFrame: fn('pwjs_wrapper_handle_adapter_frame', ['i', 'j', 'h', 'b']),
  handleAdapterClosed: fn('pwjs_wrapper_handle_adapter_closed', ['i', 'j', 'h']),
  handleTimeout: fn('pw_wrapper_handle_timeout', ['i', 'j']),
  cancel: fn('pw_wrapper_cancel', ['i', 'j', 'b', 'n']),
  abort: fn('pw_wrapper_abort', ['i']),
  clearTrace: fn('pw_wrapper_clear_trace', ['i']),
  stats: fn('pw_wrapper_get_stats', ['i', 'o']),
  pollEvent: fn('pw_wrapper_poll_event', ['i', 'o']),
  traceEntry: fn('pw_wrapper_trace_entry', ['i', 'i', 'o']),
  frameKind: fn('pw_frame_peek_kind', ['b', 'n', 'n', 'n']),
  // JSON Schema (wrapper.mjs: tools' schemas, `validate`)
  schemaCheck: fn('pw_schema_check', ['b', 'o']),
  schemaIndexWords: fn('pw_schema_index_words', ['b', 'n']),
  schemaValidate: fn('pw_schema_validate', ['b', 'b', 'i', 'i', 'n']),
  frameValidate: fn('pw_frame_validate', ['b', 'i', 'n']),
  // stream decoders and item encoders (decode.mjs)
  decoderConfigDefault: fn('pw_decoder_config_default', ['o']),
  decoderAlign: fn('pw_decoder_align', []),
  decoderSize: fn('pw_decoder_size', ['c', 'i', 'n']),
  decoderMaxFrameLen: fn('pw_decoder_max_frame_len', ['c', 'n']),
  decoderInit: fn('pw_decoder_init', ['i', 'i', 'i', 'c', 'i', 'n']),
  decoderFeed: fn('pw_decoder_feed', ['i', 'i', 'i', 'n']),
  decoderFinish: fn('pw_decoder_finish', ['i']),
  decoderPollFrame: fn('pw_decoder_poll_frame', ['i', 'i', 'i', 'n']),
  decoderStats: fn('pw_decoder_get_stats', ['i', 'o']),
  providerFromName: fn('pw_provider_from_name', ['b', 'n']),
  encodeItem: fn('pw_encode_item', ['i', 'b', 'i', 'i', 'n']),
  // conversations and requests (request.mjs)
  conversationSize: fn('pw_conversation_size', ['i', 'n']),
  conversationAlign: fn('pw_conversation_align', []),
  conversationInit: fn('pw_conversation_init', ['i', 'i', 'n']),
  conversationSetSystem: fn('pw_conversation_set_system', ['i', 'b']),
  conversationPushUser: fn('pw_conversation_push_user', ['i', 'b']),
  conversationPinFirstUser: fn('pw_conversation_pin_first_user', ['i', 'i']),
  conversationBeginResponse: fn('pw_conversation_begin_response', ['i', 'i']),
  conversationPushFrame: fn('pw_conversation_push_frame', ['i', 'b', 'n']),
  conversationEndResponse: fn('pw_conversation_end_response', ['i']),
  conversationClear: fn('pw_conversation_clear', ['i']),
  conversationStats: fn('pw_conversation_get_stats', ['i', 'o']),
  requestSize: fn('pw_request_size', ['i', 'n']),
  requestAlign: fn('pw_request_align', []),
  requestOptionsDefault: fn('pw_request_options_default', ['o']),
  requestInit: fn('pw_request_init', ['i', 'i', 'i', 'i', 'c', 'a', 'i', 'n', 'n']),
  requestLen: fn('pw_request_len', ['i', 'n']),
  requestWrite: fn('pw_request_write', ['i', 'i', 'i', 'n']),
  requestGeminiPath: fn('pw_request_gemini_path', ['b', 'i', 'i', 'n']),
  // the MCP client (mcp.mjs)
  mcpConfigDefault: fn('pw_mcp_config_default', ['o']),
  mcpConfigFit: fn('pw_mcp_config_fit', ['u', 'c']),
  mcpAlign: fn('pw_mcp_align', []),
  mcpSize: fn('pw_mcp_size', ['c', 'i', 'n']),
  mcpMaxFrameLen: fn('pw_mcp_max_frame_len', ['c', 'n']),
  mcpMaxLineLen: fn('pw_mcp_max_line_len', ['c', 'n']),
  mcpInit: fn('pw_mcp_init', ['i', 'i', 'c', 'i', 'b', 'b', 'n']),
  mcpStart: fn('pw_mcp_start', ['i', 'j']),
  mcpPollTimeout: fn('pw_mcp_poll_timeout', ['i'], 'j'),
  mcpHandleTimeout: fn('pw_mcp_handle_timeout', ['i', 'j']),
  mcpProtocolVersion: (c) => cStringAt(protocolVersionPtr(c)),
  mcpFeed: fn('pw_mcp_feed', ['i', 'b', 'n']),
  mcpHandleClosed: fn('pw_mcp_handle_closed', ['i']),
  mcpState: fn('pw_mcp_state', ['i', 'n']),
  mcpInFlight: fn('pw_mcp_in_flight', ['i']),
  mcpQueued: fn('pw_mcp_queued', ['i']),
  mcpPollEvent: fn('pw_mcp_poll_event', ['i', 'o']),
  mcpStats: fn('pw_mcp_get_stats', ['i', 'o']),
  mcpHandleFrame: fn('pw_mcp_handle_frame', ['i', 'i', 'i', 'b', 'o']),
  mcpPollTransmit: fn('pw_mcp_poll_transmit', ['i', 'i', 'i', 'n']),
  mcpPollFrame: fn('pw_mcp_poll_frame', ['i', 'i', 'i', 'o']),
  mcpOutputSchemasSize: fn('pw_mcp_output_schemas_size', ['i', 'n']),
  mcpSetOutputSchemas: fn('pw_mcp_set_output_schemas', ['i', 'i', 'i', 'a', 'i']),
  // the MCP client over Streamable HTTP (mcp.mjs)
  mcpHttpSize: fn('pw_mcp_http_size', ['c', 'i', 'i', 'n']),
  mcpHttpInit: fn('pw_mcp_http_init', ['i', 'i', 'c', 'i', 'i', 'b', 'b', 'n']),
  mcpMaxHeadersLen: fn('pw_mcp_max_headers_len', ['c', 'n']),
  mcpPollRequest: fn('pw_mcp_poll_request', ['i', 'i', 'i', 'i', 'i', 'o']),
  mcpHandleResponse: fn('pw_mcp_handle_response', ['i', 'i', 'i', 'b', 'B']),
  mcpFeedResponse: fn('pw_mcp_feed_response', ['i', 'i', 'b', 'n']),
  mcpHandleResponseEnd: fn('pw_mcp_handle_response_end', ['i', 'i']),
  // The hot path, called directly (no argument marshalling): the out structs and buffers are
  // the caller's blocks (OutBlock, OutBuf), the frame goes through `withBytes`.
  pollOutput: (w, buf, cap, out) => X.pw_wrapper_poll_output(w, buf, cap, out),
  pollTimeout: (w) => BigInt.asUintN(64, X.pw_wrapper_poll_timeout(w)),
  pending: (w) => X.pw_wrapper_pending(w) >>> 0,
};
declared.push('pw_wrapper_poll_output', 'pw_wrapper_poll_timeout', 'pw_wrapper_pending', 'pw_wrapper_handle_response', 'pw_writer_write');

// The last clock reading as a BigInt: a stream's frames mostly come within one millisecond.
let lastNow = -1;
let lastBigNow = 0n;
function bigNow(now) {
  if (now !== lastNow) {
    const b = BigInt(now);
    lastNow = now;
    lastBigNow = b;
  }
  return lastBigNow;
}

/**
 * `pw_wrapper_handle_response` on `data` (a frame's JSON text or bytes), the disposition
 * written at `out` (an OutBlock's): the sync path's one call, with the frame put on the
 * scratch stack directly (no copy but the UTF-8 encoding).
 */
export function handleResponse(w, now, data, out) {
  const mark = sp;
  const marked = tempMark();
  try {
    const p = putBytes(data);
    return X.pw_wrapper_handle_response(w, bigNow(now), p, lastLen, out) >>> 0;
  } finally {
    release(mark, marked);
  }
}

/** `pw_wrapper_handle_response` on `len` bytes already at `at` in the module's memory. */
export function handleResponseAt(w, now, at, len, out) {
  return X.pw_wrapper_handle_response(w, bigNow(now), at, len, out) >>> 0;
}

/** `pw_writer_write` of `data` (a string as UTF-8, or bytes): for sync tools, during their call. */
export function writerWrite(out, data) {
  const mark = sp;
  const marked = tempMark();
  try {
    const p = putBytes(data);
    return X.pw_writer_write(out, p, lastLen) >>> 0;
  } finally {
    release(mark, marked);
  }
}

/** A malformed frame (SPEC §1): refused with a `rejected` event (the library's own classes). */
export const isMalformed = (r) => C.resultIsMalformed(r) === 1;
/** A completion or adapter input for a call that is not waiting for it. */
export const isNotWaiting = (r) => C.resultIsNotWaiting(r) === 1;

/** The span's bytes as a string (UTF-8). */
export const strOf = (span) => textAt(span.ptr, span.len);

/** A 64-bit deadline as a number (`Infinity` for PW_NO_TIMEOUT). */
export function deadline(v) {
  if (typeof v === 'bigint') return v >= 0xffffffffffffffffn ? Infinity : Number(v);
  return v >= 18446744073709552000 ? Infinity : v;
}

// ------------------------------------------------------------ callbacks

// The trampolines' targets (see wasm/src/lib.rs): called during C calls only.
const imports = {
  pw_js: {
    sync_call: (userdata, args, len, out) => onSyncCall(userdata, args, len, out),
    on_tool_call: (userdata, info) => onHook(userdata, info, 0),
    on_tool_result: (userdata, info, outcome) => onHook(userdata, info, outcome),
  },
};

// The hooks: the two trampolines serve every wrapper (userdata is the wrapper's number). A
// wrapper is in this map only while one of its C calls is on the stack (the hooks fire only
// then): held strongly there, and nowhere else, so a wrapper dropped unfinished is collected.
// A WeakRef would not do: the engine keeps every WeakRef's target alive to the end of the job
// that made it, so 300,000 wrappers made in one synchronous loop held 1.4 GB of JS heap and
// slowed every later one (18 MB when the loop yields).
// A stack, not a Map: C calls nest strictly (a sync tool may use another wrapper inside one), and
// a Map's delete-then-set on every frame rebuilt its table every few calls (about 8 % of a
// streamed body's time in the package, measured on the xai recording).
const hookIds = [];
const hookObjs = [];
/** The wrapper bound under hook `id`, or undefined: the innermost binding first. */
function hookTarget(id) {
  for (let i = hookIds.length - 1; i >= 0; i--) if (hookIds[i] === id) return hookObjs[i];
  return undefined;
}
let nextHookId = 1;
let hookFns = null;

function onHook(userdata, info, outcome) {
  try {
    hookTarget(userdata >>> 0)?.onCCall(info >>> 0, outcome >>> 0 || null);
  } catch {
    // An exception of JS code would unwind the C frames: kept out of them.
  }
  // onCCall makes no call into the module today; should the module be poisoned all the same,
  // the C call that called this hook must not go on over memory in an unknown state, so this
  // throw unwinds it (see wasm.mjs's `guard`), as onSyncCall's does.
  if (trapped()) throw trapError();
}

// Field offsets read on the hot path, set by `init` from the header's layouts.
let INFO, OUTCOME, TRANSMIT, OUTPUT, DISPOSITION, SIZES;
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

/**
 * A wrapper's out structs (`pw_disposition`, `pw_output`) in linear memory, read field by
 * field (one per wrapper: a sync tool of another wrapper may run inside the C call).
 */
export class OutBlock {
  constructor(mem) {
    this.mem = mem; // a Stable of `OutBlock.size()` bytes
    this.disposition = mem.at(0);
    this.output = mem.at(SIZES.outputAt);
    /** The hook event's `pw_call_info` and `pw_outcome` inside `output`. */
    this.outputCall = this.output + OUTPUT.call;
    this.outputOutcome = this.output + OUTPUT.outcome;
    this.outputFrame = this.output + OUTPUT.frame;
  }
  /** Bytes the two structs take. */
  static size() {
    return SIZES.outputAt + SIZES.output;
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
    return readStruct(STRUCTS[S.callHandle], this.outputFrame + TRANSMIT.handle);
  }
  get kind() {
    return DV.getUint32(this.disposition + DISPOSITION.kind, true);
  }
  get hasHandle() {
    return U8[this.disposition + DISPOSITION.hasHandle] !== 0;
  }
}

/**
 * Hooks for a wrapper: while `bindHooks(id, target)` holds, `target.onCCall(info, outcome|null)`
 * (addresses) is called during the C call, and the sync tools registered under `id` call
 * `target.syncCall`.
 */
export function registerHooks() {
  const id = nextHookId++;
  return { id, hooks: { userdata: id, on_tool_call: hookFns.call, on_tool_result: hookFns.result } };
}
/** The wrapper that answers hooks `id` from now until `unbindHooks(id)`: bound around its C calls. */
export function bindHooks(id, target) {
  hookIds.push(id);
  hookObjs.push(target);
}
export function unbindHooks(id) {
  // The innermost binding is the one ending, but a binding left by a throw is found anyway.
  for (let i = hookIds.length - 1; i >= 0; i--) {
    if (hookIds[i] !== id) continue;
    if (i === hookIds.length - 1) {
      hookIds.pop();
      hookObjs.pop();
    } else {
      hookIds.splice(i, 1);
      hookObjs.splice(i, 1);
    }
    return;
  }
}
export const unregisterHooks = unbindHooks;

// Sync tools: the one `pw_sync_fn` trampoline serves every sync tool of every wrapper
// (userdata is the tool's number). It runs inside the C call that intercepted the TOOL_CALL and
// must not call back into that wrapper (the target's `syncCall` guards against it).
const syncTargets = new Map();
let nextSyncId = 1;
let syncFn = 0;

function onSyncCall(userdata, args, len, out) {
  let status = PW.TOOL_STATUS_FAILED;
  try {
    const t = syncTargets.get(userdata >>> 0);
    const w = t && hookTarget(t.owner);
    if (w) status = w.syncCall(t.tool, textAt(args >>> 0, len >>> 0), out >>> 0);
  } catch {
    // A JS exception (the tool's, whatever its class): the tool failed. It must not unwind the
    // C frames, which would leave the wrapper half changed.
  }
  // But when a call into the module trapped during the tool (a nested wrapper's, or the
  // writer's), even if the tool caught it, the C call that runs the tool must not go on: the
  // memory is in an unknown state. This throw unwinds it (see wasm.mjs's `guard`).
  if (trapped()) throw trapError();
  return status;
}

/**
 * A `pw_tool.call` / `userdata` pair for sync tool `tool` of the wrapper with hooks `owner`:
 * during its C call, the bound target's `syncCall(tool, argsText, out)` runs it (`out` the
 * writer's address).
 */
export function registerSyncTool(owner, tool) {
  const id = nextSyncId++;
  syncTargets.set(id, { owner, tool });
  return { id, call: syncFn, userdata: id };
}
export function unregisterSyncTool(id) {
  syncTargets.delete(id);
}

/** The library's version (`pw_version`, a NUL-terminated string). */
export function version() {
  if (X === null) throw notLoaded();
  return cStringAt(X.pw_version() >>> 0);
}

/** Sizes and alignments the module itself computed (`pwjs_layout`), for the layout test. */
export function moduleLayouts() {
  if (X === null) throw notLoaded();
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
  const marked = tempMark();
  try {
    const t = putBytes(text);
    const len = lastLen;
    const handleS = STRUCTS[S.callHandle];
    const outcomeS = STRUCTS[S.outcome];
    const h = take(handleS.size);
    writeStruct(handleS, h, handle);
    const o = take(outcomeS.size);
    writeStruct(outcomeS, o, { is_error: isError ? 1 : 0, text: { ptr: t, len } });
    const c = take(4);
    const r = X.pwjs_wrapper_complete(w, BigInt(now), h, o, c) >>> 0;
    completed[0] = DV.getUint32(c, true);
    return r;
  } finally {
    release(mark, marked);
  }
}

// Through `C` like the others, so a test can stand in for them.
C.handleResponseTo = handleResponse;
C.handleResponseAt = handleResponseAt;
C.writerWrite = writerWrite;
C.complete = complete;

// ------------------------------------------------------------ loading

let loading = null;
let loadError = null;

/**
 * Loads the WebAssembly module, once; every later call resolves at once. `wasm`: a URL (or a
 * path in Node), a `Response` or its promise, the bytes, or a `WebAssembly.Module`; by default
 * the `polyweave_tool_adapter.wasm` next to the package (in Node `PW_WASM`, a path, names
 * another). Importing the package already tries the default; call `init({ wasm })` where that
 * cannot work (a bundler that moves the file, a worker without its URL).
 */
export function init({ wasm } = {}) {
  if (X !== null) return Promise.resolve();
  if (loading !== null) return loading;
  loading = (async () => {
    const instance = await instantiate(wasm, imports);
    const missing = declared.filter((name) => typeof instance.exports[name] !== 'function');
    if (missing.length) throw new Error(`polyweave: the module lacks ${missing.join(', ')}`);
    use(instance);
    setup();
    hookFns = { call: X.pwjs_on_tool_call() >>> 0, result: X.pwjs_on_tool_result() >>> 0 };
    syncFn = X.pwjs_sync_fn() >>> 0;
    const info = struct(S.callInfo);
    const outcome = struct(S.outcome);
    const transmit = struct(S.transmit);
    const output = struct(S.output);
    const disposition = struct(S.disposition);
    INFO = {
      index: offsetOf(info, 'index'),
      hasName: offsetOf(info, 'has_name'),
      hasId: offsetOf(info, 'has_id'),
      name: offsetOf(info, 'name'),
      id: offsetOf(info, 'id'),
      args: offsetOf(info, 'args'),
    };
    OUTCOME = { isError: offsetOf(outcome, 'is_error'), text: offsetOf(outcome, 'text') };
    TRANSMIT = { route: offsetOf(transmit, 'route'), handle: offsetOf(transmit, 'handle'), len: offsetOf(transmit, 'len') };
    OUTPUT = {
      kind: offsetOf(output, 'kind'),
      cut: offsetOf(output, 'cut'),
      frame: offsetOf(output, 'frame'),
      call: offsetOf(output, 'call'),
      outcome: offsetOf(output, 'outcome'),
    };
    DISPOSITION = { kind: offsetOf(disposition, 'kind'), hasHandle: offsetOf(disposition, 'has_handle') };
    SIZES = { outputAt: Math.ceil(disposition.size / 8) * 8, output: output.size };
    loadError = null;
  })();
  loading.catch((e) => {
    loading = null;
    loadError = e;
  });
  return loading;
}

/** Whether the module is loaded. */
export const isLoaded = () => X !== null;

// Zero-config: importing the package loads the default module. Where that fails (a bundler that
// moved the file...), the import still succeeds and `init({ wasm })` is the way; a use before it
// throws saying so.
try {
  await init();
} catch {
  // kept in `loadError`, for the error a use before `init` throws
}
