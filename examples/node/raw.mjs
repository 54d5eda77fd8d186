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

// ---- a member's exact text in valid JSON (what an object parsed from it cannot give back)

const isWs = (c) => c === ' ' || c === '\n' || c === '\r' || c === '\t';
function skipWs(t, i) {
  while (i < t.length && isWs(t[i])) i++;
  return i;
}
/** Just past the string whose quote is at `i`. */
function stringEnd(t, i) {
  for (i++; i < t.length; i++) {
    if (t[i] === '\\') i++;
    else if (t[i] === '"') return i + 1;
  }
  return t.length;
}
/** Just past the value that starts at `i`. */
function valueEnd(t, i) {
  if (t[i] === '"') return stringEnd(t, i);
  if (t[i] === '{' || t[i] === '[') {
    let depth = 0;
    while (i < t.length) {
      const c = t[i];
      if (c === '"') {
        i = stringEnd(t, i);
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
      i++;
    }
    return t.length;
  }
  while (i < t.length && !isWs(t[i]) && t[i] !== ',' && t[i] !== '}' && t[i] !== ']') i++;
  return i;
}

/**
 * The exact text of member `key`'s value in `text`, a JSON object's valid text (the last member
 * so named, as `JSON.parse` reads it), or null: a tool's `inputSchema` as the server wrote it,
 * numbers past a double's precision included.
 */
export function memberText(text, key) {
  let found = null;
  let i = skipWs(text, 0);
  if (text[i] !== '{') return null;
  i++;
  for (;;) {
    i = skipWs(text, i);
    if (text[i] === ',') i = skipWs(text, i + 1);
    if (text[i] !== '"') return found;
    const nameEnd = stringEnd(text, i);
    const name = JSON.parse(text.slice(i, nameEnd));
    const start = skipWs(text, skipWs(text, nameEnd) + 1);
    const end = valueEnd(text, start);
    if (name === key) found = text.slice(start, end);
    i = end;
  }
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
