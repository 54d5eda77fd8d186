// Types of duplex.mjs: the push-stream shapes the package reads and writes.

/** A frame: a JS object such as `{ type: 'TEXT', content: 'hi' }`, or `raw(text)` (its exact JSON text). */
export type Frame = { type: string; content?: unknown; [key: string]: unknown } | import('./index.js').RawJSON;

/** Anything with `write(frame)` and `end()`; `write` returns `false` when it refused the frame. */
export interface Sink<F = any> {
  write(frame: F): unknown;
  end(): unknown;
}

/** Pushes frames to one connected sink (frames pushed while none is connected wait). */
export interface Source<F = any> {
  pipe<S extends Sink<F>>(dest: S): S;
  unpipe?(dest?: Sink<F>): void;
}

/** A source you push into: `push` and `end` return what the destination's `write` / `end` returned (`false` while none). */
export interface PushSource<F = any> extends Source<F> {
  unpipe(dest?: Sink<F>): void;
  push(frame: F): unknown;
  end(): unknown;
  readonly ended: boolean;
}

export interface Duplex<F = any> {
  source: Source<F>;
  sink: Sink<F>;
}

export function createSource<F = any>(): PushSource<F>;
export function createSink<F = any>(onWrite: (frame: F) => unknown, onEnd?: () => unknown): Sink<F>;
export function createDuplex<F = any>(handlers?: { onWrite?: (frame: F) => unknown; onEnd?: () => unknown }): {
  source: PushSource<F>;
  sink: Sink<F>;
};
/** Whether `x` looks like a duplex (`.source` with `pipe`, `.sink` with `write`). */
export function isDuplex(x: unknown): x is Duplex;
