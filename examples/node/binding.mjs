// The C ABI (include/polyweave_tool_adapter.h) as koffi sees it: types, functions and the
// small helpers the API module needs (bytes at a pointer, stable memory, result texts).
// Nothing here decides behaviour: every rule lives in the C library.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';

const here = path.dirname(fileURLToPath(import.meta.url));
const LIB_NAME = 'libpolyweave_tool_adapter_ffi.so';

/** Where the shared library is: `PW_LIB` (a file), else `../../target/release/`. */
export function libraryPath() {
  const fromEnv = process.env.PW_LIB;
  if (fromEnv) return fromEnv;
  return path.resolve(here, '..', '..', 'target', 'release', LIB_NAME);
}

const libPath = libraryPath();
if (!fs.existsSync(libPath)) {
  throw new Error(
    `polyweave: shared library not found at ${libPath}: build it with ` +
      '`cargo build --release -p polyweave-tool-adapter-ffi` or set PW_LIB to its path',
  );
}
const lib = koffi.load(libPath);

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


// ------------------------------------------------------------ types

const pw_str = koffi.struct('pw_str', { ptr: 'const uint8_t *', len: 'size_t' });
koffi.opaque('pw_wrapper');
koffi.opaque('pw_adapter_call');
koffi.opaque('pw_writer');
koffi.struct('pw_adapter_call_options', {
  name: pw_str,
  id: pw_str,
  args: pw_str,
  timeout_ms: 'uint32_t',
  max_total_timeout_ms: 'uint32_t',
  has_id: 'uint8_t',
  max_depth: 'uint8_t',
});
const pwOutcome = koffi.struct('pw_outcome', { is_error: 'uint8_t', text: pw_str });
koffi.struct('pw_wrapper_config', {
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
const syncFnProto = koffi.proto('uint32_t pw_sync_fn(void *userdata, pw_str args, pw_writer *out)');
koffi.struct('pw_tool', {
  name: pw_str,
  kind: 'uint32_t',
  timeout_ms: 'uint32_t',
  call: 'pw_sync_fn *',
  userdata: 'void *',
});
const pwCallInfo = koffi.struct('pw_call_info', {
  index: 'uint32_t',
  has_name: 'uint8_t',
  has_id: 'uint8_t',
  seq: 'uint64_t',
  name: pw_str,
  id: pw_str,
  args: pw_str,
});
const onToolCallProto = koffi.proto('void pw_on_tool_call(void *userdata, const pw_call_info *call)');
const onToolResultProto = koffi.proto(
  'void pw_on_tool_result(void *userdata, const pw_call_info *call, const pw_outcome *outcome)',
);
koffi.struct('pw_hooks', {
  userdata: 'void *',
  on_tool_call: 'pw_on_tool_call *',
  on_tool_result: 'pw_on_tool_result *',
});
const pwCallHandle = koffi.struct('pw_call_handle', {
  index: 'uint32_t',
  slot: 'uint16_t',
  reserved: 'uint16_t',
  owner: 'size_t',
});
const pwDisposition = koffi.struct('pw_disposition', {
  kind: 'uint32_t',
  index: 'uint32_t',
  has_handle: 'uint8_t',
  handle: 'pw_call_handle',
});
const pwTransmit = koffi.struct('pw_transmit', { route: 'uint32_t', handle: 'pw_call_handle', len: 'size_t' });
const pwOutput = koffi.struct('pw_output', {
  kind: 'uint32_t',
  cut: 'uint8_t',
  frame: pwTransmit,
  call: pwCallInfo,
  outcome: pwOutcome,
});
koffi.struct('pw_stats', {
  rounds: 'uint32_t',
  messages_truncated: 'uint32_t',
  last_error_truncated: 'uint32_t',
  hook_events_cut: 'uint32_t',
  hook_events_dropped: 'uint32_t',
});
koffi.struct('pw_event', {
  handle: 'pw_call_handle',
  kind: 'uint32_t',
  has_id: 'uint8_t',
  tool: 'size_t',
  name: pw_str,
  id: pw_str,
  args: pw_str,
});
koffi.struct('pw_trace_entry', {
  has_name: 'uint8_t',
  truncated: 'uint8_t',
  name: pw_str,
  args: pw_str,
  outcome: 'pw_outcome',
});

koffi.opaque('pw_decoder');
koffi.struct('pw_decoder_config', {
  event_cap: 'size_t',
  args_cap: 'size_t',
  name_cap: 'size_t',
  id_cap: 'size_t',
  max_depth: 'uint8_t',
});
koffi.struct('pw_decode_stats', {
  not_json: 'uint32_t',
  unknown_event: 'uint32_t',
  bad_shape: 'uint32_t',
  overlong: 'uint32_t',
  after_end: 'uint32_t',
  cut: 'uint32_t',
  calls_started: 'uint64_t',
  calls_written: 'uint64_t',
});

// the MCP client (pw_mcp_*)
koffi.opaque('pw_mcp');
koffi.struct('pw_mcp_config', {
  line_cap: 'size_t',
  outbox_cap: 'size_t',
  name_cap: 'size_t',
  cursor_cap: 'size_t',
  max_depth: 'uint8_t',
});
koffi.struct('pw_mcp_event', {
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
koffi.struct('pw_mcp_client_stats', {
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
koffi.struct('pw_mcp_handled', {
  kind: 'uint32_t',
  notified: 'uint8_t',
  request: 'uint64_t',
  failure: 'uint32_t',
  limit: 'size_t',
  len: 'size_t',
});
koffi.struct('pw_mcp_frame', { index: 'uint32_t', slot: 'uint16_t', reserved: 'uint16_t', len: 'size_t' });

// ------------------------------------------------------------ functions

const f = (sig) => lib.func(sig);
export const C = {
  version: f('const char *pw_version(void)'),
  resultText: f('uint32_t pw_result_text(uint32_t code, _Out_ uint8_t *buf, size_t len, _Out_ size_t *out_len)'),
  resultIsMalformed: f('uint8_t pw_result_is_malformed(uint32_t code)'),
  resultIsNotWaiting: f('uint8_t pw_result_is_not_waiting(uint32_t code)'),
  // standalone calls (wrapToolAdapter)
  callOptionsDefault: f('uint32_t pw_adapter_call_options_default(_Out_ pw_adapter_call_options *out)'),
  callAlign: f('size_t pw_adapter_call_align(void)'),
  callSize: f('uint32_t pw_adapter_call_size(size_t result_cap, _Out_ size_t *out_size)'),
  callInit: f(
    'uint32_t pw_adapter_call_init(void *mem, size_t mem_len, size_t result_cap, uint64_t now_ms, const pw_adapter_call_options *opts, _Out_ pw_adapter_call **out)',
  ),
  callHandleFrame: f('uint32_t pw_adapter_call_handle_frame(pw_adapter_call *c, uint64_t now_ms, const uint8_t *bytes, size_t len)'),
  callHandleClosed: f('uint32_t pw_adapter_call_handle_closed(pw_adapter_call *c, uint64_t now_ms)'),
  callHandleTimeout: f('uint32_t pw_adapter_call_handle_timeout(pw_adapter_call *c, uint64_t now_ms)'),
  callPollTransmit: f('uint32_t pw_adapter_call_poll_transmit(pw_adapter_call *c, _Out_ uint8_t *buf, size_t cap, _Out_ size_t *out_len)'),
  callPollTimeout: f('uint64_t pw_adapter_call_poll_timeout(const pw_adapter_call *c)'),
  callOutcome: f('uint32_t pw_adapter_call_outcome(const pw_adapter_call *c, _Out_ pw_outcome *out)'),
  // the wrapper (createToolAdapterWrapper)
  wrapperAlign: f('size_t pw_wrapper_align(void)'),
  wrapperConfigDefault: f('uint32_t pw_wrapper_config_default(_Out_ pw_wrapper_config *out)'),
  wrapperSize: f(
    'uint32_t pw_wrapper_size(const pw_wrapper_config *cfg, size_t slots, size_t n_tools, _Out_ size_t *out_size)',
  ),
  wrapperInit: f(
    'uint32_t pw_wrapper_init(void *mem, size_t mem_len, const pw_wrapper_config *cfg, size_t slots, const pw_tool *tools, size_t n_tools, const pw_hooks *hooks, _Out_ pw_wrapper **out)',
  ),
  handleResponse: f(
    'uint32_t pw_wrapper_handle_response(pw_wrapper *w, uint64_t now_ms, const uint8_t *bytes, size_t len, _Out_ pw_disposition *out)',
  ),
  handleRequest: f('uint32_t pw_wrapper_handle_request(pw_wrapper *w, uint64_t now_ms, const uint8_t *bytes, size_t len)'),
  complete: f(
    'uint32_t pw_wrapper_complete(pw_wrapper *w, uint64_t now_ms, pw_call_handle handle, const pw_outcome *outcome, _Out_ uint32_t *completed)',
  ),
  handleAdapterFrame: f(
    'uint32_t pw_wrapper_handle_adapter_frame(pw_wrapper *w, uint64_t now_ms, pw_call_handle handle, const uint8_t *bytes, size_t len)',
  ),
  handleAdapterClosed: f('uint32_t pw_wrapper_handle_adapter_closed(pw_wrapper *w, uint64_t now_ms, pw_call_handle handle)'),
  handleTimeout: f('uint32_t pw_wrapper_handle_timeout(pw_wrapper *w, uint64_t now_ms)'),
  cancel: f('uint32_t pw_wrapper_cancel(pw_wrapper *w, uint64_t now_ms, const uint8_t *reason, size_t len, _Out_ size_t *left)'),
  abort: f('uint32_t pw_wrapper_abort(pw_wrapper *w)'),
  clearTrace: f('uint32_t pw_wrapper_clear_trace(pw_wrapper *w)'),
  pollTransmit: f('uint32_t pw_wrapper_poll_transmit(pw_wrapper *w, _Out_ uint8_t *buf, size_t cap, _Out_ pw_transmit *out)'),
  // the same two with the out struct as raw memory (see OutBlock): no JS object filled per call
  pollTransmitTo: f('uint32_t pw_wrapper_poll_transmit(pw_wrapper *w, _Out_ uint8_t *buf, size_t cap, void *out)'),
  // frames and the hook events the log kept, in SPEC order (the out struct as raw memory)
  pollOutputTo: f('uint32_t pw_wrapper_poll_output(pw_wrapper *w, _Out_ uint8_t *buf, size_t cap, void *out)'),
  stats: f('uint32_t pw_wrapper_stats(const pw_wrapper *w, _Out_ pw_stats *out)'),
  handleResponseTo: f(
    'uint32_t pw_wrapper_handle_response(pw_wrapper *w, uint64_t now_ms, const uint8_t *bytes, size_t len, void *out)',
  ),
  pollEvent: f('uint32_t pw_wrapper_poll_event(pw_wrapper *w, _Out_ pw_event *out)'),
  pollTimeout: f('uint64_t pw_wrapper_poll_timeout(const pw_wrapper *w)'),
  pending: f('size_t pw_wrapper_pending(const pw_wrapper *w)'),
  traceEntry: f('uint32_t pw_wrapper_trace_entry(const pw_wrapper *w, size_t index, _Out_ pw_trace_entry *out)'),
  // stream decoders and item encoders (decode.mjs)
  decoderConfigDefault: f('uint32_t pw_decoder_config_default(_Out_ pw_decoder_config *out)'),
  decoderAlign: f('size_t pw_decoder_align(void)'),
  decoderSize: f('uint32_t pw_decoder_size(const pw_decoder_config *cfg, size_t calls, _Out_ size_t *out_size)'),
  decoderMaxFrameLen: f('uint32_t pw_decoder_max_frame_len(const pw_decoder_config *cfg, _Out_ size_t *out_len)'),
  decoderInit: f(
    'uint32_t pw_decoder_init(void *mem, size_t mem_len, uint32_t provider, const pw_decoder_config *cfg, size_t calls, _Out_ pw_decoder **out)',
  ),
  decoderFeed: f('uint32_t pw_decoder_feed(pw_decoder *d, const uint8_t *bytes, size_t len, _Out_ size_t *consumed)'),
  decoderFinish: f('uint32_t pw_decoder_finish(pw_decoder *d)'),
  decoderPollFrame: f('uint32_t pw_decoder_poll_frame(pw_decoder *d, _Out_ uint8_t *out, size_t cap, _Out_ size_t *len)'),
  decoderStats: f('uint32_t pw_decoder_stats(const pw_decoder *d, _Out_ pw_decode_stats *out)'),
  providerFromName: f('uint32_t pw_provider_from_name(const uint8_t *name, size_t len, _Out_ uint32_t *out)'),
  encodeItem: f(
    'uint32_t pw_encode_item(uint32_t provider, const uint8_t *frame, size_t len, _Out_ uint8_t *out, size_t cap, _Out_ size_t *out_len)',
  ),
  // the MCP client (mcp.mjs)
  mcpConfigDefault: f('uint32_t pw_mcp_config_default(_Out_ pw_mcp_config *out)'),
  mcpConfigFit: f('uint32_t pw_mcp_config_fit(_Inout_ pw_mcp_config *cfg, const pw_wrapper_config *wrapper)'),
  mcpAlign: f('size_t pw_mcp_align(void)'),
  mcpSize: f('uint32_t pw_mcp_size(const pw_mcp_config *cfg, size_t calls, _Out_ size_t *out_size)'),
  mcpMaxFrameLen: f('uint32_t pw_mcp_max_frame_len(const pw_mcp_config *cfg, _Out_ size_t *out_len)'),
  mcpMaxLineLen: f('uint32_t pw_mcp_max_line_len(const pw_mcp_config *cfg, _Out_ size_t *out_len)'),
  mcpInit: f(
    'uint32_t pw_mcp_init(void *mem, size_t mem_len, const pw_mcp_config *cfg, size_t calls, const uint8_t *name, size_t name_len, const uint8_t *version, size_t version_len, _Out_ pw_mcp **out)',
  ),
  mcpStart: f('uint32_t pw_mcp_start(pw_mcp *c)'),
  mcpFeed: f('uint32_t pw_mcp_feed(pw_mcp *c, const uint8_t *bytes, size_t len, _Out_ size_t *consumed)'),
  mcpHandleClosed: f('uint32_t pw_mcp_handle_closed(pw_mcp *c)'),
  mcpState: f('uint32_t pw_mcp_state(const pw_mcp *c, _Out_ uint32_t *out)'),
  mcpInFlight: f('size_t pw_mcp_in_flight(const pw_mcp *c)'),
  mcpQueued: f('size_t pw_mcp_queued(const pw_mcp *c)'),
  mcpPollEvent: f('uint32_t pw_mcp_poll_event(pw_mcp *c, _Out_ pw_mcp_event *out)'),
  mcpStats: f('uint32_t pw_mcp_stats(const pw_mcp *c, _Out_ pw_mcp_client_stats *out)'),
  mcpHandleFrame: f(
    'uint32_t pw_mcp_handle_frame(pw_mcp *c, uint16_t slot, uint32_t index, const uint8_t *bytes, size_t len, _Out_ pw_mcp_handled *out)',
  ),
  mcpPollTransmit: f('uint32_t pw_mcp_poll_transmit(pw_mcp *c, _Out_ uint8_t *buf, size_t cap, _Out_ size_t *len)'),
  mcpPollFrame: f('uint32_t pw_mcp_poll_frame(pw_mcp *c, _Out_ uint8_t *buf, size_t cap, _Out_ pw_mcp_frame *out)'),
  // sync tools write their output through the writer they are handed (during the call only)
  writerWrite: f('uint32_t pw_writer_write(pw_writer *out, const uint8_t *bytes, size_t len)'),
};

/** A malformed frame (SPEC §1): refused with a `rejected` event (the library's own classes). */
export const isMalformed = (r) => C.resultIsMalformed(r) === 1;
/** A completion or adapter input for a call that is not waiting for it. */
export const isNotWaiting = (r) => C.resultIsNotWaiting(r) === 1;

// ------------------------------------------------------------ helpers

const textBuf = Buffer.alloc(256);
const lenOut = [0];
/** The library's message for a result code. */
export function resultText(code) {
  if (C.resultText(code, textBuf, textBuf.length, lenOut) !== PW.OK) return `code ${code}`;
  return `${textBuf.toString('latin1', 0, Number(lenOut[0]))} (code ${code})`;
}

/** An Error for a result code, with `.code` set to it. */
export function pwError(what, code) {
  const e = new Error(`${what}: ${resultText(code)}`);
  e.code = code;
  return e;
}

/** A copy of `len` bytes at the C pointer `ptr`, as a Buffer. */
export function bytesAt(ptr, len) {
  const n = Number(len);
  if (n === 0 || ptr === null || ptr === undefined) return Buffer.alloc(0);
  return Buffer.from(new Uint8Array(koffi.view(ptr, n)));
}

/** `len` bytes at `ptr` as a string (UTF-8, invalid bytes as U+FFFD, as Buffer does). */
export function textAt(ptr, len) {
  const n = Number(len);
  if (n === 0 || ptr === null || ptr === undefined) return '';
  // koffi decodes UTF-8 as Buffer does but stops at a NUL byte: then its length falls short.
  const s = koffi.decode(ptr, 'char', n);
  return Buffer.byteLength(s, 'utf8') === n ? s : bytesAt(ptr, n).toString('utf8');
}

/** The span's bytes as a string (UTF-8). */
export const strOf = (span) => textAt(span.ptr, span.len);

/** Memory that does not move (the wrapper's block, borrowed names): `size` bytes. */
export class Stable {
  constructor(size) {
    this.size = Math.max(1, size);
    this.ptr = koffi.alloc('uint8_t', this.size);
  }
  /** A pointer `offset` bytes in. */
  at(offset) {
    return this.ptr + BigInt(offset);
  }
  write(offset, bytes) {
    if (bytes.length > 0) Buffer.from(koffi.view(this.at(offset), bytes.length)).set(bytes);
  }
  free() {
    if (this.ptr !== null) koffi.free(this.ptr);
    this.ptr = null;
  }
}

/** `ptr` rounded up to `align` (a power of two), as an offset from `ptr`. */
export function alignOffset(ptr, align) {
  const a = BigInt(align);
  return Number((a - (ptr % a)) % a);
}

/** A 64-bit deadline as a number (`Infinity` for PW_NO_TIMEOUT). */
export function deadline(v) {
  if (typeof v === 'bigint') return v >= 0xffffffffffffffffn ? Infinity : Number(v);
  return v >= 18446744073709552000 ? Infinity : v;
}

// The hooks: one registered pair for every wrapper (userdata is the wrapper's number).
const hookTargets = new Map();
let nextHookId = 1;
function target(userdata) {
  const t = hookTargets.get(Number(userdata));
  return t instanceof WeakRef ? t.deref() : t;
}
const onToolCall = koffi.register((userdata, info) => {
  try {
    target(userdata)?.onCCall(info, null);
  } catch {
    // never let an exception cross the C frames
  }
}, koffi.pointer(onToolCallProto));
const onToolResult = koffi.register((userdata, info, outcome) => {
  try {
    target(userdata)?.onCCall(info, outcome);
  } catch {
    // never let an exception cross the C frames
  }
}, koffi.pointer(onToolResultProto));

// Field by field: decoding a whole pw_call_info costs far more than the few fields a hook needs.
const decode = koffi.decode;
const PTR = koffi.sizeof('void *');
const at = (type, field) => koffi.offsetof(type, field);
const INFO = {
  index: at(pwCallInfo, 'index'),
  hasName: at(pwCallInfo, 'has_name'),
  hasId: at(pwCallInfo, 'has_id'),
  seq: at(pwCallInfo, 'seq'),
  name: at(pwCallInfo, 'name'),
  id: at(pwCallInfo, 'id'),
  args: at(pwCallInfo, 'args'),
};
const OUTCOME = { isError: at(pwOutcome, 'is_error'), text: at(pwOutcome, 'text') };
const spanAt = (p, off) => textAt(decode(p, off, 'const uint8_t *'), decode(p, off + PTR, 'size_t'));

/** A hook's `pw_call_info` (pointer, valid during the hook): index, seq and id. */
export function callInfoHead(info) {
  return {
    index: decode(info, INFO.index, 'uint32_t'),
    seq: Number(decode(info, INFO.seq, 'uint64_t')),
    id: decode(info, INFO.hasId, 'uint8_t') ? spanAt(info, INFO.id) : null,
  };
}
/** The name (null when the call had none) and args texts of a hook's `pw_call_info`. */
export function callInfoTexts(info) {
  return {
    name: decode(info, INFO.hasName, 'uint8_t') ? spanAt(info, INFO.name) : null,
    args: spanAt(info, INFO.args),
  };
}
/** A hook's `pw_outcome` (pointer): `{ isError, text }`. */
export function outcomeOf(outcome) {
  return { isError: decode(outcome, OUTCOME.isError, 'uint8_t') === 1, text: spanAt(outcome, OUTCOME.text) };
}

/**
 * A wrapper's out structs for `pollTransmitTo` / `handleResponseTo` in stable memory, read field
 * by field (one per wrapper: a sync tool of another wrapper may run inside the C call).
 */
export class OutBlock {
  constructor() {
    this.tSize = koffi.sizeof(pwTransmit);
    const dSize = koffi.sizeof(pwDisposition);
    // pw_output is aligned for its u64 and pointers: placed at a multiple of 8.
    const oAt = Math.ceil((this.tSize + dSize) / 8) * 8;
    this.mem = new Stable(oAt + koffi.sizeof(pwOutput));
    this.transmit = this.mem.at(0);
    this.disposition = this.mem.at(this.tSize);
    this.output = this.mem.at(oAt);
    /** The hook event's `pw_call_info` and `pw_outcome` inside `output`. */
    this.outputCall = this.mem.at(oAt + OUTPUT.call);
    this.outputOutcome = this.mem.at(oAt + OUTPUT.outcome);
    this.outputFrame = this.mem.at(oAt + OUTPUT.frame);
  }
  get outputKind() {
    return decode(this.output, OUTPUT.kind, 'uint32_t');
  }
  get outputCut() {
    return decode(this.output, OUTPUT.cut, 'uint8_t') !== 0;
  }
  get outputRoute() {
    return decode(this.outputFrame, TRANSMIT.route, 'uint32_t');
  }
  get outputLen() {
    return Number(decode(this.outputFrame, TRANSMIT.len, 'size_t'));
  }
  get outputHandle() {
    return decode(this.outputFrame, TRANSMIT.handle, pwCallHandle);
  }
  get route() {
    return decode(this.transmit, TRANSMIT.route, 'uint32_t');
  }
  get len() {
    return Number(decode(this.transmit, TRANSMIT.len, 'size_t'));
  }
  get handle() {
    return decode(this.transmit, TRANSMIT.handle, pwCallHandle);
  }
  get kind() {
    return decode(this.disposition, DISPOSITION.kind, 'uint32_t');
  }
  get hasHandle() {
    return decode(this.disposition, DISPOSITION.hasHandle, 'uint8_t') !== 0;
  }
  free() {
    this.mem.free();
  }
}
const TRANSMIT = { route: at(pwTransmit, 'route'), handle: at(pwTransmit, 'handle'), len: at(pwTransmit, 'len') };
const OUTPUT = {
  kind: at(pwOutput, 'kind'),
  cut: at(pwOutput, 'cut'),
  frame: at(pwOutput, 'frame'),
  call: at(pwOutput, 'call'),
  outcome: at(pwOutput, 'outcome'),
};
const DISPOSITION = { kind: at(pwDisposition, 'kind'), hasHandle: at(pwDisposition, 'has_handle') };

/** Hooks for a wrapper: `target.onCCall(info, outcome|null)` (C pointers) is called during the C call. */
export function registerHooks(target) {
  const id = nextHookId++;
  hookTargets.set(id, target);
  return { id, hooks: { userdata: BigInt(id), on_tool_call: onToolCall, on_tool_result: onToolResult } };
}
export function unregisterHooks(id) {
  hookTargets.delete(id);
}

// Sync tools: one registered `pw_sync_fn` for every sync tool of every wrapper (userdata is the
// tool's number). It runs inside the C call that intercepted the TOOL_CALL and must not call
// back into that wrapper (the target's `syncCall` guards against it).
const syncTargets = new Map();
let nextSyncId = 1;
const onSyncCall = koffi.register((userdata, args, out) => {
  try {
    const t = syncTargets.get(Number(userdata));
    const w = t?.ref.deref();
    if (!w) return PW_TOOL_STATUS_FAILED;
    return w.syncCall(t.tool, args, out);
  } catch {
    return PW_TOOL_STATUS_FAILED; // never let an exception cross the C frames
  }
}, koffi.pointer(syncFnProto));
/** What a `pw_sync_fn` returns: the result was written / the error message was written. */
export const PW_TOOL_STATUS_OK = 0;
export const PW_TOOL_STATUS_FAILED = 1;

/**
 * A `pw_tool.call` / `userdata` pair for sync tool `tool` of a wrapper: during the C call,
 * `ref.deref().syncCall(tool, args, out)` runs it (`args` a `pw_str`, `out` the writer).
 */
export function registerSyncTool(ref, tool) {
  const id = nextSyncId++;
  syncTargets.set(id, { ref, tool });
  return { id, call: onSyncCall, userdata: BigInt(id) };
}
export function unregisterSyncTool(id) {
  syncTargets.delete(id);
}

export const version = () => C.version();
export { koffi };
