// JSON for Iceberg documents: snapshot ids and other longs are int64 and exceed 2^53, so plain JSON.parse
// corrupts them (8744736658442914487 becomes 8744736658442915000 and a commit asserting it is rejected).
// Integers outside the safe range become bigint; bigint is written back as a bare JSON number.
// Parsing quotes the unsafe literals before JSON.parse (below); JSON.rawJSON writes a bigint back exactly.

/** An Iceberg long as it comes out of parseJson: a number when it fits exactly, a bigint otherwise. */
export type Long = number | bigint;

const INTEGER = /^-?\d+$/;

function revive(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && INTEGER.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
}

function replace(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(value.toString()) : value;
}

// Node 24's JSON.parse hands a reviver each number's source text (exact), but calling back for every value with a
// context object makes it 6× slower than no reviver on a metadata file (0.93 against 0.14 ms for 91 KB). So the
// unsafe integer literals are quoted as marked strings first, JSON.parse runs with no reviver, and the marked strings
// become bigints (0.49 ms in all). The scan jumps over strings (a digit run inside one, such as
// snap-8744736658442914487-1.avro, stays text); a text that holds the marker itself takes the reviver.
const MARKER = '\uE000';
const holdsMarker = (text: string) => text.includes(MARKER) || text.includes('\\uE000') || text.includes('\\ue000');
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
// the characters a JSON number may continue with: digits, `.`, `e`, `E`, `+`, `-`
const continuesNumber = (c: number) => isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;

/** The text with every integer literal outside the safe range quoted as a marked string, or null when none is. */
function markUnsafeIntegers(text: string): string | null {
  let parts: string[] | null = null;
  let copied = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: its closing quote is the next one not escaped (preceded by an even run of backslashes)
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return null; // unterminated: JSON.parse reports it
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = end + 1;
    } else if (isDigit(c) || c === 0x2d) {
      const digits = c === 0x2d ? i + 1 : i;
      let j = digits;
      while (isDigit(text.charCodeAt(j))) j++;
      const next = text.charCodeAt(j);
      // 16 digits or more, no fraction or exponent, no leading zero (invalid JSON stays invalid)
      if (j - digits >= 16 && next !== 0x2e && next !== 0x65 && next !== 0x45 && text.charCodeAt(digits) !== 0x30) {
        const token = text.slice(i, j);
        if (!Number.isSafeInteger(Number(token))) {
          (parts ??= []).push(text.slice(copied, i), '"', MARKER, token, '"');
          copied = j;
        }
      }
      while (continuesNumber(text.charCodeAt(j))) j++;
      i = j;
    } else {
      i++;
    }
  }
  if (!parts) return null;
  parts.push(text.slice(copied));
  return parts.join('');
}

const isMarked = (x: unknown): x is string => typeof x === 'string' && x.charCodeAt(0) === 0xe000;

/** Turns marked strings back into bigints, in place (objects and arrays are mutated, never replaced). */
function unmark(v: unknown): unknown {
  if (isMarked(v)) return BigInt(v.slice(1));
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (isMarked(x)) v[i] = BigInt(x.slice(1));
      else if (typeof x === 'object' && x !== null) unmark(x);
    }
  } else if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    for (const k in o) {
      // A marked key was a bare number where a key belongs (`{"a":1,12345678901234567890:2}`): invalid JSON.
      if (k.charCodeAt(0) === 0xe000) throw new SyntaxError(`Unexpected number in JSON: ${k.slice(1)}`);
      const x = o[k];
      // defineProperty: a `__proto__` key is JSON.parse's own property, and assigning it would set the prototype.
      if (isMarked(x)) Object.defineProperty(o, k, { value: BigInt(x.slice(1)), writable: true, enumerable: true, configurable: true });
      else if (typeof x === 'object' && x !== null) unmark(x);
    }
  }
  return v;
}

export function parseJson<T = unknown>(text: string): T {
  if (holdsMarker(text)) return JSON.parse(text, revive as (key: string, value: unknown) => unknown) as T;
  const marked = markUnsafeIntegers(text);
  return (marked === null ? JSON.parse(text) : unmark(JSON.parse(marked))) as T;
}

export function stringifyJson(value: unknown, space?: number): string {
  const out = JSON.stringify(value, replace, space);
  if (out === undefined) throw new TypeError('value is not JSON-serializable');
  return out;
}

/** A long normalised to bigint, for comparisons and arithmetic. */
export function toBigInt(v: Long | string): bigint {
  return typeof v === 'bigint' ? v : BigInt(v);
}

export function sameLong(a: Long | null | undefined, b: Long | null | undefined): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  return toBigInt(a) === toBigInt(b);
}
