// A minimal push-stream duplex: what this package's API reads and writes.
//
// A *frame* is a JS object such as `{ type: 'TEXT', content: 'hi' }` (or a `raw(text)` value from
// index.mjs carrying a frame's exact JSON text).
//
// - A *sink* is any object with `write(frame)` and `end()`. `write` may return `false` to say
//   the frame was refused (the wrapper does so for a frame from a tool adapter whose call is no
//   longer waiting); any other return value means it was taken.
// - A *source* pushes frames to a sink: `source.pipe(dest)` connects `dest` (a sink) and
//   returns it; `source.unpipe(dest)` disconnects it. Frames pushed while nothing is connected
//   wait in order and go to the next `pipe`.
// - A *duplex* is `{ source, sink }`.
//
// `createSource()` gives a source you push into (`push(frame)`, `end()`, both returning what the
// destination's `write` / `end` returned, or `false` while nothing is connected);
// `createSink(onWrite, onEnd)` a sink from two functions; `createDuplex({ onWrite, onEnd })` a
// duplex whose sink calls them and whose source you push into.

export function createSource() {
  let dest = null;
  let waiting = [];
  let ended = false;
  let endDelivered = false;
  return {
    pipe(d) {
      dest = d;
      const queued = waiting;
      waiting = [];
      for (const frame of queued) if (dest === d) d.write(frame);
      if (ended && !endDelivered && dest === d) {
        endDelivered = true;
        d.end();
      }
      return d;
    },
    unpipe(d) {
      if (d === undefined || dest === d) dest = null;
    },
    push(frame) {
      if (ended) return false;
      if (dest === null) {
        waiting.push(frame);
        return false;
      }
      return dest.write(frame);
    },
    end() {
      if (ended) return false;
      ended = true;
      if (dest === null) return false;
      endDelivered = true;
      return dest.end();
    },
    get ended() {
      return ended;
    },
  };
}

export function createSink(onWrite, onEnd = () => {}) {
  return { write: (frame) => onWrite(frame), end: () => onEnd() };
}

export function createDuplex({ onWrite = () => {}, onEnd = () => {} } = {}) {
  return { source: createSource(), sink: createSink(onWrite, onEnd) };
}

/** Whether `x` looks like a duplex (`.source` with `pipe`, `.sink` with `write`). */
export function isDuplex(x) {
  return (
    x !== null &&
    typeof x === 'object' &&
    x.source != null &&
    typeof x.source.pipe === 'function' &&
    x.sink != null &&
    typeof x.sink.write === 'function'
  );
}
