// Partition transforms (format/spec.md, "Partition Transforms" and Appendix B "32-bit Hash Requirements"):
// identity, bucket[N] (Murmur3 x86 32-bit, seed 0), truncate[W], year, month, day, hour, void.
//
// Value representations used across iceberg/: int/date/time-less ints as number (date = days since epoch),
// long as number|bigint, timestamp/timestamptz/time as bigint microseconds, string as string, binary/fixed as
// Uint8Array, decimal as its unscaled bigint, uuid as its canonical string.

export type Transform =
  | { kind: 'identity' }
  | { kind: 'void' }
  | { kind: 'year' }
  | { kind: 'month' }
  | { kind: 'day' }
  | { kind: 'hour' }
  | { kind: 'bucket'; n: number }
  | { kind: 'truncate'; width: number };

export class TransformError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransformError';
  }
}

export function parseTransform(text: string): Transform {
  const t = text.trim();
  switch (t) {
    case 'identity':
    case 'void':
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
      return { kind: t };
  }
  const m = /^(bucket|truncate)\[(\d+)\]$/.exec(t);
  if (m) {
    const n = Number(m[2]);
    if (!(n > 0 && n <= 2147483647)) throw new TransformError(`invalid transform parameter in ${t}`);
    return m[1] === 'bucket' ? { kind: 'bucket', n } : { kind: 'truncate', width: n };
  }
  throw new TransformError(`unknown partition transform: ${text}`);
}

/** The Iceberg type of a transform's result for a source of type `source` (primitive type names). */
export function transformResultType(t: Transform, source: string): string {
  switch (t.kind) {
    case 'identity':
    case 'truncate':
    case 'void':
      return source;
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return 'int';
    case 'day':
      return 'date';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Murmur3

function mix(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

/** Murmur3 x86 32-bit with seed 0, as a signed 32-bit int (what the spec's examples show). */
export function murmur3(bytes: Uint8Array): number {
  let h = 0;
  const len = bytes.length;
  const blocks = len & ~3;
  for (let i = 0; i < blocks; i += 4) {
    const k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    h ^= mix(k);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  switch (len & 3) {
    case 3:
      k ^= bytes[blocks + 2] << 16;
    // falls through
    case 2:
      k ^= bytes[blocks + 1] << 8;
    // falls through
    case 1:
      k ^= bytes[blocks];
      h ^= mix(k);
  }
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

function longBytes(v: number | bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, BigInt(v), true);
  return b;
}

/** Minimal big-endian two's-complement bytes of an unscaled decimal (Java BigInteger.toByteArray). */
export function decimalBytes(unscaled: bigint): Uint8Array {
  const out: number[] = [];
  let v = unscaled;
  for (;;) {
    const byte = Number(v & 0xffn);
    out.unshift(byte);
    v >>= 8n;
    const signBit = (byte & 0x80) !== 0;
    if ((v === 0n && !signBit) || (v === -1n && signBit)) break;
  }
  return Uint8Array.from(out);
}

function uuidBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TransformError(`invalid uuid: ${uuid}`);
  return Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)));
}

/** The bytes the spec hashes for a value of the given Iceberg type. */
export function hashBytes(type: string, value: unknown): Uint8Array {
  if (type === 'int' || type === 'long' || type === 'date' || type === 'time' || type.startsWith('timestamp')) {
    return longBytes(value as number | bigint);
  }
  if (type === 'string') return new TextEncoder().encode(value as string);
  if (type === 'uuid') return uuidBytes(value as string);
  if (type === 'binary' || type.startsWith('fixed')) return value as Uint8Array;
  if (type.startsWith('decimal')) return decimalBytes(BigInt(value as bigint));
  throw new TransformError(`bucket is not defined for type ${type}`);
}

export function bucketOf(type: string, value: unknown, n: number): number {
  return (murmur3(hashBytes(type, value)) & 0x7fffffff) % n;
}

// ---------------------------------------------------------------------------------------------------------------
// Dates

const MICROS_PER_HOUR = 3_600_000_000n;
const MICROS_PER_DAY = 86_400_000_000n;

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

function daysOf(type: string, value: unknown): number {
  if (type === 'date') return value as number;
  if (type.startsWith('timestamp')) return Number(floorDiv(BigInt(value as bigint), type.endsWith('_ns') ? MICROS_PER_DAY * 1000n : MICROS_PER_DAY));
  throw new TransformError(`date transforms are not defined for type ${type}`);
}

function yearMonth(days: number): { year: number; month: number } {
  const d = new Date(days * 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() };
}

/** Applies a transform to one value; null stays null (void always gives null). */
export function applyTransform(t: Transform, type: string, value: unknown): unknown {
  if (value === null || value === undefined || t.kind === 'void') return null;
  switch (t.kind) {
    case 'identity':
      return value;
    case 'bucket':
      return bucketOf(type, value, t.n);
    case 'year':
      return yearMonth(daysOf(type, value)).year - 1970;
    case 'month': {
      const { year, month } = yearMonth(daysOf(type, value));
      return (year - 1970) * 12 + month;
    }
    case 'day':
      return daysOf(type, value);
    case 'hour': {
      if (!type.startsWith('timestamp')) throw new TransformError(`hour is not defined for type ${type}`);
      const per = type.endsWith('_ns') ? MICROS_PER_HOUR * 1000n : MICROS_PER_HOUR;
      return Number(floorDiv(BigInt(value as bigint), per));
    }
    case 'truncate':
      return truncate(type, value, t.width);
  }
}

function truncate(type: string, value: unknown, w: number): unknown {
  if (type === 'int') {
    const v = value as number;
    return v - (((v % w) + w) % w);
  }
  if (type === 'long' || type.startsWith('decimal')) {
    const v = BigInt(value as bigint);
    const W = BigInt(w);
    const r = v - (((v % W) + W) % W);
    return type === 'long' && typeof value === 'number' ? Number(r) : r;
  }
  if (type === 'string') return Array.from(value as string).slice(0, w).join('');
  if (type === 'binary') return (value as Uint8Array).slice(0, w);
  throw new TransformError(`truncate is not defined for type ${type}`);
}
