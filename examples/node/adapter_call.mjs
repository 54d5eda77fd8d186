// `wrapToolAdapter` (SPEC §2) over the C ABI's standalone call (`pw_adapter_call_*`): one call
// through a tool adapter duplex, the C library deciding every frame, timeout and outcome.
import { C, PW, Stable, OutBuf, alignOffset, deadline, isMalformed, pwError, strOf, utf8 } from './binding.mjs';
import { realClock, clockOf } from './clock.mjs';
import { isDuplex } from './duplex.mjs';
import { frameBytes, frameOf, resultJSON, valueOf } from './raw.mjs';


/**
 * Wraps a tool adapter duplex as an `(args, callback)` function (SPEC §2).
 *
 * Options (left out: `pw_adapter_call_options_default`'s value): `name`, `timeoutMs`, and beyond the JS package:
 * `maxTotalTimeoutMs` (0: off; SPEC §5, a `PROGRESS` frame restarts the timeout up to this cap),
 * `resultCap` (bytes of a result, 65536), `maxDepth` (32), `onRejected(path, frame, err, call)` for malformed
 * adapter frames, `clock: { now() }` (test-only: a manual clock; then nothing fires by itself and
 * `wrapped.tick()` gives the clock to every live call).
 *
 * `wrapped(args, callback, { id })`: `args` any JSON value (or `raw(text)`); the callback is
 * called once as `callback(err, result)` with `this` = `{ rawResult, error }`.
 */
export function wrapToolAdapter(toolAdapter, options = {}) {
  if (!isDuplex(toolAdapter)) throw new TypeError('wrapToolAdapter: toolAdapter must have .source and .sink');
  const resultCap = options.resultCap ?? 65536;
  const manual = clockOf(options);
  const clock = manual ?? realClock;
  const live = new Set();

  function wrapped(args, callback, callOptions = {}) {
    if (typeof callback !== 'function') throw new TypeError('wrapToolAdapter: callback must be a function');
    // What is left out keeps pw_adapter_call_options_default's value (the C library's defaults).
    const opts = {};
    C.callOptionsDefault(opts);
    const name = options.name === undefined ? strOf(opts.name) : String(options.name);
    const nameB = utf8(name);
    const hasId = typeof callOptions.id === 'string';
    const idB = utf8(hasId ? callOptions.id : '');
    const argsB = utf8(args === undefined ? '{}' : resultJSON(args));
    // The options' spans are borrowed for the call's life: stable memory.
    const spans = new Stable(nameB.length + idB.length + argsB.length);
    spans.write(0, nameB);
    spans.write(nameB.length, idB);
    spans.write(nameB.length + idB.length, argsB);
    opts.name = { ptr: spans.at(0), len: nameB.length };
    opts.id = { ptr: spans.at(nameB.length), len: idB.length };
    opts.args = { ptr: spans.at(nameB.length + idB.length), len: argsB.length };
    if (options.timeoutMs !== undefined) opts.timeout_ms = options.timeoutMs;
    if (options.maxTotalTimeoutMs !== undefined) opts.max_total_timeout_ms = options.maxTotalTimeoutMs;
    opts.has_id = hasId ? 1 : 0;
    if (options.maxDepth !== undefined) opts.max_depth = options.maxDepth;
    const size = [0];
    let r = C.callSize(resultCap, size);
    if (r !== PW.OK) throw pwError('wrapToolAdapter: result capacity', r);
    const align = Number(C.callAlign());
    const mem = new Stable(Number(size[0]) + align);
    const out = [0];
    r = C.callInit(mem.at(alignOffset(mem.ptr, align)), Number(size[0]), resultCap, clock.now(), opts, out);
    if (r !== PW.OK) {
      mem.free();
      spans.free();
      callback.call({ rawResult: null, error: null }, pwError(`Tool ${name} could not start`, r), null);
      return;
    }
    const c = out[0];
    let done = false;
    let timer = null;
    const buf = new OutBuf(65536);
    const lenOut = [0];

    const call = {
      tick() {
        if (done) return;
        C.callHandleTimeout(c, clock.now());
        flush();
      },
    };
    const dest = {
      write(frame) {
        if (done) return false;
        let bytes;
        try {
          bytes = frameBytes(frame);
        } catch (e) {
          reject(frame, e);
          return true;
        }
        const res = C.callHandleFrame(c, clock.now(), bytes);
        if (isMalformed(res)) reject(frame, pwError('malformed adapter frame', res));
        else if (res !== PW.OK) return false;
        flush();
        return true;
      },
      end() {
        if (done) return false;
        const res = C.callHandleClosed(c, clock.now());
        flush();
        return res === PW.OK;
      },
    };
    function reject(frame, err) {
      if (typeof options.onRejected === 'function') {
        try {
          options.onRejected('adapter', frame, err, 0);
        } catch {
          // a hook's exception is caught
        }
      }
    }
    function arm() {
      if (manual || done) return;
      const d = deadline(C.callPollTimeout(c));
      if (timer) clearTimeout(timer);
      timer = null;
      if (d === Infinity) return;
      // Not unref'd: a waiting call keeps the process alive until it settles (as the JS
      // package's timer does); settled, the call clears it, so nothing lingers.
      timer = setTimeout(() => {
        timer = null;
        call.tick();
      }, Math.max(0, d - clock.now()));
    }
    function flush() {
      if (done) return;
      for (;;) {
        const res = C.callPollTransmit(c, buf.ptr, buf.cap, lenOut);
        if (res === PW.BUFFER_TOO_SMALL) {
          buf.grow(lenOut[0]);
          continue;
        }
        if (res !== PW.OK) break;
        toolAdapter.sink.write(frameOf(buf.text(lenOut[0])));
        if (done) return;
      }
      const o = {};
      if (C.callOutcome(c, o) === PW.OK) {
        const text = strOf(o.text);
        done = true;
        live.delete(call);
        if (timer) clearTimeout(timer);
        timer = null;
        toolAdapter.source.unpipe?.(dest);
        mem.free();
        spans.free();
        buf.free();
        if (o.is_error) callback.call({ rawResult: null, error: text }, new Error(text), null);
        else callback.call({ rawResult: text, error: null }, null, valueOf(text));
        return;
      }
      arm();
    }
    live.add(call);
    toolAdapter.source.pipe(dest);
    flush();
  }
  /** Test-only with a manual clock: gives the clock to every live call. */
  wrapped.tick = () => {
    for (const call of [...live]) call.tick();
  };
  return wrapped;
}

