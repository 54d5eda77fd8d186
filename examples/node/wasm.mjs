// Loading the WebAssembly module (the C ABI compiled by build.mjs) and guarding its calls.
//
// `load(source, imports)` instantiates it once: from a `WebAssembly.Module`, bytes, a
// `Response` (or its promise), a URL, or by default the `polyweave_tool_adapter.wasm` next to
// this file (read with node:fs in Node, `PW_WASM` naming another path; fetched elsewhere).
// Browser-safe: nothing from `node:` is imported at the top level.

/** The module's exports, each function guarded (see `guard`); null until loaded. */
export let X = null;

const WASM_NAME = 'polyweave_tool_adapter.wasm';

/** Where the module is by default: next to this file. */
export const defaultUrl = () => new URL(`./${WASM_NAME}`, import.meta.url);

async function fromResponse(response, imports) {
  const r = await response;
  if (!r.ok) throw new Error(`polyweave: fetching ${r.url || WASM_NAME} answered ${r.status}`);
  if (typeof WebAssembly.instantiateStreaming === 'function') {
    try {
      return (await WebAssembly.instantiateStreaming(r.clone(), imports)).instance;
    } catch (e) {
      // A server that does not send `application/wasm`: compile from the bytes instead.
      if (!(e instanceof TypeError)) throw e;
    }
  }
  return (await WebAssembly.instantiate(await r.arrayBuffer(), imports)).instance;
}

/** A `WebAssembly.Instance` of the module from `source` (see the file's head). */
export async function instantiate(source, imports) {
  if (source instanceof WebAssembly.Module) return WebAssembly.instantiate(source, imports);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return (await WebAssembly.instantiate(source, imports)).instance;
  if (typeof Response === 'function' && (source instanceof Response || source instanceof Promise)) return fromResponse(source, imports);
  let url = source ?? null;
  const env = globalThis.process?.env?.PW_WASM;
  if (url === null && env) url = env;
  if (url === null) url = defaultUrl();
  if (typeof url === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(url) && globalThis.process?.versions?.node) {
    const fs = await import('node:fs');
    return (await WebAssembly.instantiate(fs.readFileSync(url), imports)).instance;
  }
  url = url instanceof URL ? url : new URL(url, import.meta.url);
  if (url.protocol === 'file:') {
    // Node (or another runtime with node:fs): the file itself.
    const fs = await import('node:fs');
    return (await WebAssembly.instantiate(fs.readFileSync(url), imports)).instance;
  }
  return fromResponse(fetch(url), imports);
}

// ------------------------------------------------------------ traps: one poisons the module

// A trap (`WebAssembly.RuntimeError`: a Rust panic is one, the module being built with
// panic=abort; an out-of-bounds access is another) or a stack overflow inside the module
// unwinds the C frames mid-way: whatever that call was changing is left half changed, and every
// object of the module lives in the one linear memory. So the first exception out of the module
// poisons it: that call and every later call into it, on any object, throw `trapError()`.
// Nothing of the binding's own throws through the module (the trampolines rethrow only once it
// is poisoned), so any exception that leaves an export cut a C call short.
let trapCause = null;

/** Whether the module trapped. */
export const trapped = () => trapCause !== null;

/** The error a poisoned module's calls throw (`code === 'PW_WASM_TRAPPED'`, `cause`: the trap). */
export function trapError() {
  const why = trapCause instanceof Error ? `${trapCause.name}: ${trapCause.message}` : String(trapCause);
  const e = new Error(
    `polyweave: the WebAssembly module trapped (${why}); its memory is in an unknown state, so no ` +
      'polyweave object can be used any more: load the package anew (a new process or page)',
    { cause: trapCause },
  );
  e.code = 'PW_WASM_TRAPPED';
  return e;
}

/** The first exception out of the module poisons it (see above): the error to throw instead. */
function poisoned(e) {
  if (trapCause === null) trapCause = e;
  return trapError();
}

/**
 * An export, refused once the module is poisoned, and poisoning it when an exception leaves it.
 * Of the export's own arity up to 6 parameters (every hot call; longer ones take `...args`):
 * a wrapper taking `...args` makes an array on every call.
 */
function guard(f) {
  const refuse = () => {
    if (trapCause !== null) throw trapError();
  };
  switch (f.length) {
    case 0:
      return () => {
        refuse();
        try {
          return f();
        } catch (e) {
          throw poisoned(e);
        }
      };
    case 1:
      return (a) => {
        refuse();
        try {
          return f(a);
        } catch (e) {
          throw poisoned(e);
        }
      };
    case 2:
      return (a, b) => {
        refuse();
        try {
          return f(a, b);
        } catch (e) {
          throw poisoned(e);
        }
      };
    case 3:
      return (a, b, c) => {
        refuse();
        try {
          return f(a, b, c);
        } catch (e) {
          throw poisoned(e);
        }
      };
    case 4:
      return (a, b, c, d) => {
        refuse();
        try {
          return f(a, b, c, d);
        } catch (e) {
          throw poisoned(e);
        }
      };
    case 5:
      return (a, b, c, d, e5) => {
        refuse();
        try {
          return f(a, b, c, d, e5);
        } catch (e) {
          throw poisoned(e);
        }
      };
    case 6:
      return (a, b, c, d, e5, f6) => {
        refuse();
        try {
          return f(a, b, c, d, e5, f6);
        } catch (e) {
          throw poisoned(e);
        }
      };
    default:
      return (...args) => {
        refuse();
        try {
          return f(...args);
        } catch (e) {
          throw poisoned(e);
        }
      };
  }
}

/** Makes `instance` the module every call goes to (once). */
export function use(instance) {
  X = Object.freeze(
    Object.fromEntries(Object.entries(instance.exports).map(([k, v]) => [k, typeof v === 'function' ? guard(v) : v])),
  );
}
