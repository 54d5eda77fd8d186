// The floor of goal 2: the least JavaScript any package built on a C library must run for the
// pipeline bench.mjs times, with none of this package's own code. A file of its own so that
// bench.mjs's profiler can tell its samples from the harness's (see "The floor" in README.md).
//
// What it keeps, per body, as any such package must:
// - the body read from the user's Response with one reader, one `read()` a chunk (the reader
//   not released at the end: the body is closed);
// - each chunk copied into the module's memory;
// - each frame's text decoded from the module's memory (the library writes frames as JSON text)
//   and made an object: a TEXT / REASONING delta by cutting out its content (JSON.parse of the
//   content's literal when it has escapes), as if the library said which frames are deltas (no
//   test of the text), any other frame by JSON.parse;
// - each frame handed out through the async iterator `for await` reads (a settled promise each);
// - the C ABI's calls at their least, each into a wasm function that does nothing: a chunk fed,
//   each frame polled, the poll that finds no more, each frame pushed into the wrapper (from
//   where the decoder wrote it) and the wrapper's output polled, each item encoded;
// - each call's args decoded and parsed, the tool run, its result stringified and written into
//   the module's memory;
// - every frame the wrapper writes (its TOOL_RESULTs to the model) and every request item
//   decoded and parsed.
// What it leaves out: everything else this package does (argument checks, the decoder's and
// the wrapper's objects, the texts frames carry, buffers, errors, hooks, timers, closing).

// A wasm function that takes four i32 and returns 0: its own time is the library's (wasm), the
// crossing into it the caller's.
const NOOP = new WebAssembly.Instance(
  new WebAssembly.Module(
    new Uint8Array([
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
      0x01, 0x09, 0x01, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, // type: (i32 ×4) → i32
      0x03, 0x02, 0x01, 0x00, // one function of that type
      0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // exported as "f"
      0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x00, 0x0b, // body: i32.const 0
    ]),
  ),
).exports.f;

const TEXT_AT = '{"type":"TEXT","content":"'.length;
const REASONING_AT = '{"type":"REASONING","content":"'.length;
const PLAIN = /^\{"type":"(TEXT|REASONING)","content":"[^"\\\x00-\x1f]*"\}$/;
const ESCAPED = /^\{"type":"(TEXT|REASONING)","content":"[^"\\]*(?:\\.[^"\\]*)*"\}$/;

/**
 * The floor's pipeline for one recording: `t` is bench.mjs's traffic (the frames' texts and how
 * many each chunk completes, the args, results, the wrapper's output frames and the items).
 * Returns `frames(response)`, the async iterable of frame objects, and `afterBody()`, the
 * calls' and items' share, for the harness's loop to run as it runs the package's.
 */
export function floorOf(t, calls) {
  const enc = new TextEncoder();
  // The module's memory: the chunk's room first, then every text the library would write.
  const texts = [...t.frames, ...t.args, ...t.outs, ...t.itemOut].map((s) => enc.encode(s));
  const inRoom = 1 << 16;
  const mem = Buffer.alloc(inRoom + texts.reduce((a, b) => a + b.length, 0) + 4096);
  let top = inRoom;
  const spans = texts.map((b) => {
    mem.set(b, top);
    top += b.length;
    return [top - b.length, b.length];
  });
  const kind = t.frames.map((f) => {
    const plain = PLAIN.exec(f);
    const m = plain ?? ESCAPED.exec(f);
    if (m === null) return 0;
    return (m[1] === 'TEXT' ? 1 : 2) + (plain !== null ? 0 : 2);
  });
  let k = 0;
  const frameSpans = [];
  for (const n of t.framesPerChunk) {
    const list = [];
    for (let j = 0; j < n; j++, k++) list.push(spans[k][0], spans[k][1], kind[k]);
    frameSpans.push(list);
  }
  const argSpans = spans.slice(k, k + t.args.length);
  const outSpans = spans.slice(k + t.args.length, k + t.args.length + t.outs.length);
  const itemSpans = spans.slice(k + t.args.length + t.outs.length);

  function frameAt(at, len, kind) {
    NOOP(0, at, len, 8); // polled
    const text = mem.utf8Slice(at, at + len);
    if (kind === 1) return { type: 'TEXT', content: text.slice(TEXT_AT, -2) };
    if (kind === 2) return { type: 'REASONING', content: text.slice(REASONING_AT, -2) };
    if (kind === 3) return { type: 'TEXT', content: JSON.parse(text.slice(TEXT_AT - 1, -1)) };
    if (kind === 4) return { type: 'REASONING', content: JSON.parse(text.slice(REASONING_AT - 1, -1)) };
    return JSON.parse(text);
  }

  function frames(response) {
    const reader = response.body.getReader();
    let chunk = 0;
    let list = [];
    let at = 0;
    let ended = false;
    const onRead = ({ done, value }) => {
      let spans;
      if (done) {
        ended = true;
        spans = frameSpans[frameSpans.length - 1];
      } else {
        mem.set(value, 0);
        NOOP(0, 0, value.length, 8); // fed
        spans = frameSpans[chunk++];
      }
      list = [];
      at = 0;
      for (let j = 0; j < spans.length; j += 3) list.push(frameAt(spans[j], spans[j + 1], spans[j + 2]));
      NOOP(0, 0, 0, 8); // the poll that finds no more
      if (at < list.length) return { value: list[at++], done: false };
      if (ended) return { value: undefined, done: true };
      return reader.read().then(onRead);
    };
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      next() {
        if (at < list.length) return Promise.resolve({ value: list[at++], done: false });
        if (ended) return Promise.resolve({ value: undefined, done: true });
        return reader.read().then(onRead);
      },
    };
  }

  /** A frame pushed into the wrapper from where the decoder wrote it, the output polled. */
  function push() {
    NOOP(0, 0, 0, 8);
    NOOP(0, 0, 0, 8);
  }

  /** The calls' work: args parsed, the tool run, its result written; outputs and items parsed. */
  function afterBody(fn) {
    let n = 0;
    for (const [at, len] of argSpans) {
      const result = JSON.stringify(fn(JSON.parse(mem.utf8Slice(at, at + len))));
      n += mem.utf8Write(result, 0);
      NOOP(0, 0, result.length, 8);
    }
    for (const [at, len] of outSpans) n += JSON.parse(mem.utf8Slice(at, at + len)) === null ? 0 : 1;
    for (const [at, len] of itemSpans) {
      NOOP(0, 0, 0, 8); // encoded
      n += JSON.parse(mem.utf8Slice(at, at + len)) === null ? 0 : 1;
    }
    if (argSpans.length !== calls) throw new Error(`floor: ${argSpans.length} calls`);
    return n;
  }

  return { frames, push, afterBody };
}
