// JSON for Iceberg documents: snapshot ids and other longs are int64 and exceed 2^53, so plain JSON.parse
// corrupts them (8744736658442914487 becomes 8744736658442915000 and a commit asserting it is rejected).
// Integers outside the safe range become bigint; bigint is written back as a bare JSON number.
// Node 24's JSON.parse hands revivers the source text of each number, and JSON.rawJSON writes one back exactly:
// both native, about twice as fast as lossless-json on a 140 KB metadata file (4.3 vs 7.6 ms to parse).

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

export function parseJson<T = unknown>(text: string): T {
  return JSON.parse(text, revive as (key: string, value: unknown) => unknown) as T;
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

/** A long in its smallest exact form: number when safe, bigint otherwise. */
export function toLong(v: bigint | number | string): Long {
  const b = typeof v === 'bigint' ? v : BigInt(v);
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

export function sameLong(a: Long | null | undefined, b: Long | null | undefined): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  return toBigInt(a) === toBigInt(b);
}
