// Frames and JSON values as exact text: `raw(text)`, the text a frame handed out carries
// (`RAW_TEXT`), and the one function that turns a frame into the bytes the library reads.
// Every frame the package gives the C library goes through `frameBytes`, so a frame keeps
// its exact text (big integers, member order, escapes) wherever it came from (SPEC §1).

/** A JSON value given or kept as its exact text (numbers such as `1e400`, member order...). */
export class RawJSON {
  constructor(text) {
    this.rawJSON = String(text);
    Object.freeze(this);
  }
  toJSON() {
    return this.rawJSON; // only for display; the library always uses `rawJSON` as is
  }
}
/** `raw(text)`: a frame, args or a tool result given as exact JSON text. */
export const raw = (text) => new RawJSON(text);

/** The symbol under which frames handed out carry their exact JSON text (non-enumerable). */
export const RAW_TEXT = Symbol.for('polyweave.rawText');

/** A frame's (or value's) JSON text: as received from the library when known. */
export function rawText(value) {
  if (value instanceof RawJSON) return value.rawJSON;
  if (value !== null && typeof value === 'object' && typeof value[RAW_TEXT] === 'string') {
    return value[RAW_TEXT];
  }
  const t = JSON.stringify(value);
  return t === undefined ? 'null' : t;
}

/**
 * The bytes of a frame for the library: its exact text when it has one (`raw(text)`, a frame
 * the package handed out, a string), bytes as given, else the object's JSON.
 */
export function frameBytes(frame) {
  if (typeof frame === 'string') return frame;
  if (frame !== null && typeof frame === 'object') {
    if (frame instanceof RawJSON) return frame.rawJSON;
    const text = frame[RAW_TEXT];
    if (typeof text === 'string') return text;
    if (frame instanceof Uint8Array) return frame;
    if (ArrayBuffer.isView(frame)) return new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength);
    if (frame instanceof ArrayBuffer) return new Uint8Array(frame);
  }
  const t = JSON.stringify(frame);
  return t === undefined ? '' : t;
}

// A TEXT or REASONING frame whose content has nothing escaped (no `"`, `\` or control
// character: JSON's unescaped characters only), exactly as the library writes one. Most frames of
// a stream are such deltas, and for them the content is the text between the quotes, as
// JSON.parse would read it: the object is made without parsing (about a third of the time).
const PLAIN_DELTA = /^\{"type":"(TEXT|REASONING)","content":"([^"\\\x00-\x1f]*)"\}$/;

/** An object parsed from the library's JSON text, carrying that text under `RAW_TEXT`. */
export function objectOf(text) {
  const m = PLAIN_DELTA.exec(text);
  const v = m !== null ? { type: m[1], content: m[2] } : JSON.parse(text);
  if (v !== null && typeof v === 'object') Object.defineProperty(v, RAW_TEXT, { value: text });
  return v;
}

/** A frame from the library's text: a parsed object carrying its text, or RawJSON. */
export function frameOf(text) {
  try {
    return objectOf(text);
  } catch {
    // a held END the model broke after its `type`: handed on as its text
    return new RawJSON(text);
  }
}

/** A value (args, a result) from its JSON text; RawJSON when JS cannot parse it. */
export function valueOf(text) {
  try {
    return JSON.parse(text);
  } catch {
    return new RawJSON(text);
  }
}

/** JSON text of a value (args, a tool's result); `null` for what JSON leaves out. */
export function resultJSON(v) {
  if (v instanceof RawJSON) return v.rawJSON;
  const t = JSON.stringify(v);
  return t === undefined ? 'null' : t;
}
