// The module's linear memory, which JS owns: the C library never allocates, so every block it
// works in (wrappers, calls, decoders, clients, out buffers) comes from here, and each C call's
// inputs and out parameters go on a scratch stack. Also the UTF-8 texts in and out.
import { X } from './wasm.mjs';

/** The linear memory as bytes and as a DataView; replaced when the memory grows. */
export let U8 = new Uint8Array(0);
export let DV = new DataView(new ArrayBuffer(0));
let memory = null;

// In Node, texts out are decoded by a Buffer over the same memory: its `utf8Slice` is V8's own
// UTF-8 decoder, which reads invalid bytes as U+FFFD as TextDecoder does (and keeps a leading
// U+FEFF, as `ignoreBOM` does), in half TextDecoder's time a call. Elsewhere TextDecoder.
// (A browser has no Buffer: there NodeBuffer is null and nothing of it is used.)
const NodeBuffer = ((B) => (typeof B === 'function' && typeof B.prototype?.utf8Slice === 'function' ? B : null))(globalThis['Buffer']);
let BUF = null;

function refresh() {
  if (U8.buffer !== memory.buffer) {
    U8 = new Uint8Array(memory.buffer);
    DV = new DataView(memory.buffer);
    BUF = NodeBuffer === null ? null : NodeBuffer.from(memory.buffer);
  }
}

// ------------------------------------------------------------ the allocator

// Blocks are 16-aligned (the C ABI's largest alignment is 8), so no block needs an offset to
// align it. A freed block first goes to the bin of its size, and a block of that size is taken
// from there: objects of one kind (decoders of one configuration, wrappers of one set of
// options) reuse each other's blocks at once, whatever the order they are freed in, and nothing
// fragments. A bin keeps at most BIN_BYTES; the rest goes back to a first-fit list, address
// ordered and merged, whose last block gives its room back to the top.
const ALIGN = 16;
const BIN_BYTES = 16 << 20;
let top = 0;
const sizes = new Map(); // block -> its size
const bins = new Map(); // size -> [block]
let binned = 0;
const freeList = []; // [{ at, size }] sorted by address, neighbours merged

/** A block of `size` bytes (16-aligned), not zeroed. */
export function malloc(size) {
  const n = Math.max(ALIGN, Math.ceil(size / ALIGN) * ALIGN);
  const bin = bins.get(n);
  if (bin !== undefined && bin.length > 0) {
    const at = bin.pop();
    binned -= n;
    sizes.set(at, n);
    return at;
  }
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
  // a RangeError, and `top` must still be the real end of the blocks handed out. By an eighth
  // at least, so a run of new blocks does not grow it every time.
  const have = memory.buffer.byteLength;
  if (end > have) {
    const need = Math.ceil((end - have) / 65536);
    const pages = Math.max(need, Math.min(Math.ceil(have / 8 / 65536), 65536 - have / 65536));
    memory.grow(pages);
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
  if (binned + n <= BIN_BYTES) {
    let bin = bins.get(n);
    if (bin === undefined) bins.set(n, (bin = []));
    bin.push(at);
    binned += n;
    return;
  }
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

/** The linear memory's size in bytes (it only grows). */
export const memoryBytes = () => (memory ? memory.buffer.byteLength : 0);

// ------------------------------------------------------------ the scratch stack

// Scratch room for one C call's inputs and out parameters. Calls nest (a sync tool runs inside
// a C call, and may feed another wrapper), so each call takes room above the caller's and gives
// it back when it returns. What does not fit goes to a malloc'd block.
const SCRATCH = 256 * 1024;
let scratchEnd = 0;
/** The scratch stack's top: a C call's caller keeps it and gives it back to `release`. */
export let sp = 0;
const temps = [];
/** Bytes `putBytes` wrote last. */
export let lastLen = 0;

/** Sets the allocator and the scratch stack up over the loaded module's memory. */
export function setup() {
  memory = X.memory;
  refresh();
  top = Math.ceil(X.__heap_base.value / ALIGN) * ALIGN;
  sp = malloc(SCRATCH);
  scratchEnd = sp + SCRATCH;
}

/** The temporary blocks' mark, to hand `release` with `sp`. */
export const tempMark = () => temps.length;

/** Room for `n` bytes on the scratch stack (or in a temporary block): its address. */
export function take(n) {
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

const encoder = new TextEncoder();
// `ignoreBOM`: a text that starts with U+FEFF keeps it (TextDecoder drops it by default).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Puts bytes (a string as UTF-8, or a Uint8Array) in scratch room: returns its address; the
 * length is `lastLen`. Never NULL, also for no bytes.
 */
export function putBytes(data) {
  if (typeof data === 'string') {
    const max = data.length * 3;
    if (sp + max <= scratchEnd) {
      const at = sp;
      // Node: V8's UTF-8 writer through the Buffer over the memory (lone surrogates as U+FFFD,
      // as encodeInto writes them), with no view made per call.
      const written = BUF !== null ? BUF.utf8Write(data, at, max) : encoder.encodeInto(data, U8.subarray(at, at + max)).written;
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

/** Gives back scratch room down to `mark` and the temporary blocks above `marked`. */
export function release(mark, marked) {
  sp = mark;
  while (temps.length > marked) mfree(temps.pop());
}

// ------------------------------------------------------------ texts and bytes

/** A copy of `len` bytes at `ptr` (a Uint8Array of its own). */
export function bytesAt(ptr, len) {
  return U8.slice(ptr, ptr + len);
}

/** `len` bytes at `ptr` decoded (see `BUF`). */
function decodeAt(ptr, len) {
  if (BUF !== null) return BUF.utf8Slice(ptr, ptr + len);
  return decoder.decode(U8.subarray(ptr, ptr + len));
}

/** `len` bytes at `ptr` as a string (UTF-8, invalid bytes as U+FFFD, a leading U+FEFF kept). */
export function textAt(ptr, len) {
  if (len === 0) return '';
  // Short ASCII texts (names, ids, small args) are faster by hand than through TextDecoder
  // (up to 32 bytes); V8's own UTF-8 decoder on a Buffer is faster from 8 bytes on (a 24-byte
  // text: 47 ns against 138 by hand; 4 bytes: 45 against 23).
  if (len <= (BUF !== null ? 6 : 32)) {
    let s = '';
    for (let i = ptr, end = ptr + len; i < end; i++) {
      const b = U8[i];
      if (b >= 0x80) return decodeAt(ptr, len);
      s += String.fromCharCode(b);
    }
    return s;
  }
  return decodeAt(ptr, len);
}

/** UTF-8 bytes of a string (a Uint8Array of its own). */
export const utf8 = (s) => encoder.encode(s);

/** Memory that does not move (an object's block, borrowed names): `size` bytes. */
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
