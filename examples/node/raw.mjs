// Frames and JSON values as exact text: `raw(text)`, the text a frame handed out carries
// (`rawText(frame)`), and the one function that turns a frame into the bytes the library reads.
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

// A frame handed out carries its text in a private field, stamped on the plain object as it is
// made (a base constructor that returns its argument lets a subclass's field be added to it).
// The object stays what JSON.parse makes: its prototype Object.prototype, no own key more, so
// `{ ...frame }` and `assert.deepStrictEqual` see what they would, and a copy made to change a
// frame does not carry the old text. `Object.defineProperty` with a symbol did the same at 130
// ns a frame (a call into the runtime); the stamp costs about 10.
class Plain {
  constructor(o) {
    return o;
  }
}
class Carried extends Plain {
  #text;
  #delta;
  constructor(o, text, delta) {
    super(o);
    this.#text = text;
    this.#delta = delta;
  }
  /** The text `o` carries, or `undefined`. */
  static of(o) {
    return #text in o ? o.#text : undefined;
  }
  /** `NOT_DELTA`, `DELTA_NOT_NOTED`, or the index `inPlace` noted a delta's bytes at. */
  static delta(o) {
    return #text in o ? o.#delta : NOT_DELTA;
  }
}
const NOT_DELTA = -1;
const DELTA_NOT_NOTED = -2;

/** The exact text an object the package made carries (`undefined` for any other value). */
export function carriedText(value) {
  return value !== null && typeof value === 'object' ? Carried.of(value) : undefined;
}

/** A frame's (or value's) JSON text: as received from the library when known. */
export function rawText(value) {
  if (value instanceof RawJSON) return value.rawJSON;
  const carried = carriedText(value);
  if (carried !== undefined) return carried;
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
    const text = Carried.of(frame);
    if (text !== undefined) return text;
    if (frame instanceof Uint8Array) return frame;
    if (ArrayBuffer.isView(frame)) return new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength);
    if (frame instanceof ArrayBuffer) return new Uint8Array(frame);
  }
  const t = JSON.stringify(frame);
  return t === undefined ? '' : t;
}

// A TEXT or REASONING frame exactly as the library writes one: `type`, then `content`, a string.
// Most frames of a stream are such deltas, and their objects are made without parsing the frame.
// With nothing escaped in the content (no `"`, `\` or control character: JSON's unescaped
// characters only) the content is the text between the quotes, as JSON.parse would read it
// (about a third of the time). `test`, then the content cut at the type's fixed offsets: no
// match array is made (34 ns a frame against 46 with `exec` and its captures).
const PLAIN_DELTA = /^\{"type":"(?:TEXT|REASONING)","content":"[^"\\\x00-\x1f]*"\}$/;
// A delta with escapes in its content (a newline, a quote: one delta in ten of the xai body's
// reasoning, more in a model's markdown): only its string is parsed, `JSON.parse` of the string
// literal (116 ns a frame against 264 for the frame). The rest of the text is fixed, so the
// frame is JSON exactly when the literal is: an escape JSON has not, or a control character,
// throws the SyntaxError JSON.parse of the frame throws.
const DELTA = /^\{"type":"(?:TEXT|REASONING)","content":"[^"\\]*(?:\\.[^"\\]*)*"\}$/;
const TEXT_AT = '{"type":"TEXT","content":"'.length;
const REASONING_AT = '{"type":"REASONING","content":"'.length;

/** The object JSON.parse makes of a delta (`DELTA` matched); `escaped`: unless `PLAIN_DELTA` matched. */
function deltaOf(text, escaped) {
  // `{"type":"` is 9 characters: the type's first letter is the tenth.
  const isText = text.charCodeAt(9) === 0x54;
  const at = isText ? TEXT_AT : REASONING_AT;
  const content = escaped ? JSON.parse(text.slice(at - 1, -1)) : text.slice(at, -2);
  return isText ? { type: 'TEXT', content } : { type: 'REASONING', content };
}

/** The object `JSON.parse` makes of the library's text, carrying that text. */
function parsed(text) {
  const v = JSON.parse(text);
  if (v !== null && typeof v === 'object') new Carried(v, text, NOT_DELTA);
  return v;
}

/** A delta's object (`DELTA` matched), carrying its text and `noted` (see `Carried.delta`). */
function deltaObject(text, escaped, noted) {
  const v = deltaOf(text, escaped);
  new Carried(v, text, noted);
  return v;
}

/** Whether `text` is a delta, 0 no, 1 plain, 2 with escapes: the two tests in the order of their odds. */
function deltaKind(text) {
  if (PLAIN_DELTA.test(text)) return 1;
  return DELTA.test(text) ? 2 : 0;
}

/** An object parsed from the library's JSON text, carrying that text (`rawText`). */
export function objectOf(text) {
  const k = deltaKind(text);
  return k === 0 ? parsed(text) : deltaObject(text, k === 2, DELTA_NOT_NOTED);
}

/**
 * Whether `frame` is an object the package made from a `TEXT` or `REASONING` delta: a wrapper
 * gives it its last clock reading again (`wrapper.mjs`, `_deltaNow`).
 */
export function isDelta(frame) {
  return frame !== null && typeof frame === 'object' && Carried.delta(frame) !== NOT_DELTA;
}

/**
 * The deltas decoders handed out whose bytes are still where the library wrote them: the first
 * `n` of each array, each one's text, and `at`, `len` in the module's memory. Emptied
 * (`forgetInPlace`) whenever anything may write there: a decoder's next write or finish (each
 * starts at the output buffer's start), a drain that runs out of room and starts over, the
 * buffer grown. So every delta of a body written whole, or of a stream's event, can be pushed
 * into a wrapper from where it was decoded: the wrapper then hands the library those bytes
 * instead of writing the text into memory again (`wrapper.mjs`, `inPlaceAt`). Deltas only: the
 * library calls no JS while it reads one (no tool, no hook), so nothing can write over the
 * bytes during the call.
 */
export const inPlace = { n: 0, texts: [], at: [], len: [] };

/** Nothing noted is in place any more (the arrays keep their room: an event's write notes one). */
export function forgetInPlace() {
  const { texts } = inPlace;
  for (let i = inPlace.n; i-- > 0; ) texts[i] = undefined;
  inPlace.n = 0;
}

/**
 * Where a frame's bytes still are (its index in `inPlace`), or -1: a delta noted, and the text
 * noted at its index its own text (a frame noted before the last `forgetInPlace` is taken for
 * the one noted at its index now only when their texts are equal).
 */
export function inPlaceAt(frame, text) {
  if (frame === null || typeof frame !== 'object') return -1;
  const i = Carried.delta(frame);
  return i >= 0 && i < inPlace.n && inPlace.texts[i] === text ? i : -1;
}

/** `objectOf` for a frame the decoder wrote at `at` (`len` bytes): a delta is noted in `inPlace`. */
export function objectAt(text, at, len) {
  const k = deltaKind(text);
  if (k === 0) return parsed(text);
  // Made first: a content JSON cannot read throws before anything is noted.
  const i = inPlace.n;
  const v = deltaObject(text, k === 2, i);
  inPlace.texts[i] = text;
  inPlace.at[i] = at;
  inPlace.len[i] = len;
  inPlace.n = i + 1;
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
