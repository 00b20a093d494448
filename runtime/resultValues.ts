// Maps values decoded from an agent's result Parquet file to the JSON shapes of docs/api-decisions.md "Queries".
//
// hyparquet's own conversions lose information we must keep: DECIMAL becomes a double, timestamps become millisecond
// Dates, Parquet INTERVAL throws, and MAP becomes an object keyed by String(key). So `decodingMetadata` hands hyparquet
// a copy of the footer with those annotations removed (it then yields the physical values: unscaled integers, raw
// int64 ticks, 12-byte intervals, key/value entries), and the converters built here format them from the original
// annotations, refined by the query's column_schema where Parquet is ambiguous (TIMESTAMP_S is written as micros,
// HUGEINT and INTERVAL may be written as text, a MAP's key type decides object vs entries).
//
// The shapes, for reference (docs and api clients rely on them):
// - integers: numbers within ±(2^53−1), else decimal strings; HUGEINT, UHUGEINT and BIGNUM always strings;
// - DECIMAL: strings with exactly `scale` fraction digits ("12.30");
// - FLOAT: the shortest decimal that reads back as the same float32 (0.1, not 0.10000000149011612); DOUBLE as is;
//   NaN and ±Infinity (not representable in JSON) as the strings "NaN", "Infinity", "-Infinity";
// - DATE "YYYY-MM-DD"; TIME "HH:MM:SS" plus ".ffffff" when the fraction is not zero;
// - TIMESTAMP "YYYY-MM-DDTHH:MM:SS.ffffff" with the type's full precision always printed (6 digits; 0 for TIMESTAMP_S,
//   3 for TIMESTAMP_MS, 9 for TIMESTAMP_NS); TIMESTAMP WITH TIME ZONE the same in UTC with the offset "+00:00";
//   TIME WITH TIME ZONE likewise "HH:MM:SS[.ffffff]+00:00". Years outside 0000-9999 are written as ±YYYYYY
//   (ECMAScript's expanded years); DuckDB's infinities as "infinity" / "-infinity";
// - INTERVAL: ISO 8601 duration in PostgreSQL's iso_8601 style, months, days and time kept apart, each part signed
//   ("P1Y2M3DT4H5M6.000007S", "P-1Y-2M-3DT-4H-5M-6.000007S", "PT0S");
// - UUID canonical lower-case; BLOB base64; VARCHAR, ENUM, BIT, JSON as text (JSON is not re-parsed: it may hold
//   numbers a double cannot carry);
// - VARIANT as the JSON value it holds (the agent writes it as JSON text; it is parsed back);
// - LIST and ARRAY as arrays; STRUCT as objects in field order; UNION as the value of its active member;
//   MAP as an object when its keys are text (VARCHAR, ENUM), else as an array of {key, value}; NULL as null.
import type { FileMetaData, SchemaElement, SchemaTree } from 'hyparquet';

// ---------------------------------------------------------------------------------------------------------------
// DuckDB type spelling (as DESCRIBE prints it) → tree

export type DuckType =
  | { readonly kind: 'scalar'; readonly name: string }
  | { readonly kind: 'decimal'; readonly precision: number; readonly scale: number }
  | { readonly kind: 'enum' }
  | { readonly kind: 'list'; readonly element: DuckType }
  | { readonly kind: 'struct'; readonly fields: readonly DuckField[] }
  | { readonly kind: 'union'; readonly members: readonly DuckField[] }
  | { readonly kind: 'map'; readonly key: DuckType; readonly value: DuckType };

interface DuckField {
  readonly name: string;
  readonly type: DuckType;
}

type Token = { kind: 'word' | 'quoted' | 'string' | 'number' | 'punct'; text: string };

function tokenize(spelling: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < spelling.length) {
    const c = spelling[i];
    if (/\s/.test(c)) {
      i++;
    } else if ('(),[]'.includes(c)) {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else if (c === '"' || c === "'") {
      let text = '';
      i++;
      for (;;) {
        if (i >= spelling.length) return null;
        if (spelling[i] === c) {
          if (spelling[i + 1] === c) {
            text += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += spelling[i++];
      }
      tokens.push({ kind: c === '"' ? 'quoted' : 'string', text });
    } else {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*|^-?\d+/.exec(spelling.slice(i));
      if (!m) return null;
      tokens.push({ kind: /^-?\d/.test(m[0]) ? 'number' : 'word', text: m[0] });
      i += m[0].length;
    }
  }
  return tokens;
}

class TypeParser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  done(): boolean {
    return this.#at >= this.#tokens.length;
  }

  #peek(): Token | undefined {
    return this.#tokens[this.#at];
  }

  #isPunct(text: string): boolean {
    const t = this.#peek();
    return t !== undefined && t.kind === 'punct' && t.text === text;
  }

  #expect(text: string): void {
    if (!this.#isPunct(text)) throw new Error(`expected ${text}`);
    this.#at++;
  }

  type(): DuckType {
    let type = this.#base();
    // `INTEGER[]` (LIST) and `INTEGER[3]` (ARRAY) are both arrays in JSON.
    while (this.#isPunct('[')) {
      this.#at++;
      if (this.#peek()?.kind === 'number') this.#at++;
      this.#expect(']');
      type = { kind: 'list', element: type };
    }
    return type;
  }

  #fields(): DuckField[] {
    this.#expect('(');
    const fields: DuckField[] = [];
    for (;;) {
      const t = this.#peek();
      if (!t || (t.kind !== 'word' && t.kind !== 'quoted')) throw new Error('expected a field name');
      this.#at++;
      fields.push({ name: t.text, type: this.type() });
      if (this.#isPunct(',')) {
        this.#at++;
        continue;
      }
      this.#expect(')');
      return fields;
    }
  }

  #skipArguments(): void {
    let depth = 0;
    do {
      const t = this.#peek();
      if (!t) throw new Error('unbalanced parentheses');
      if (t.kind === 'punct' && t.text === '(') depth++;
      if (t.kind === 'punct' && t.text === ')') depth--;
      this.#at++;
    } while (depth > 0);
  }

  #base(): DuckType {
    const first = this.#peek();
    if (!first || first.kind !== 'word') throw new Error('expected a type name');
    this.#at++;
    const head = first.text.toUpperCase();
    if ((head === 'STRUCT' || head === 'ROW') && this.#isPunct('(')) return { kind: 'struct', fields: this.#fields() };
    if (head === 'UNION' && this.#isPunct('(')) return { kind: 'union', members: this.#fields() };
    if (head === 'MAP' && this.#isPunct('(')) {
      this.#expect('(');
      const key = this.type();
      this.#expect(',');
      const value = this.type();
      this.#expect(')');
      return { kind: 'map', key, value };
    }
    if ((head === 'DECIMAL' || head === 'NUMERIC') && this.#isPunct('(')) {
      this.#expect('(');
      const precision = Number(this.#peek()?.text);
      this.#at++;
      let scale = 0;
      if (this.#isPunct(',')) {
        this.#at++;
        scale = Number(this.#peek()?.text);
        this.#at++;
      }
      this.#expect(')');
      return { kind: 'decimal', precision, scale };
    }
    if (head === 'ENUM') {
      if (this.#isPunct('(')) this.#skipArguments();
      return { kind: 'enum' };
    }
    // Multi-word names: TIMESTAMP WITH TIME ZONE, TIME WITH TIME ZONE, DOUBLE PRECISION.
    const words = [head];
    while (this.#peek()?.kind === 'word') {
      words.push(this.#tokens[this.#at].text.toUpperCase());
      this.#at++;
    }
    if (this.#isPunct('(')) this.#skipArguments(); // VARCHAR(10), GEOMETRY('OGC:CRS84') and the like
    return { kind: 'scalar', name: words.join(' ') };
  }
}

/** Parse a DuckDB type as DESCRIBE spells it; null when it does not parse (conversion then follows Parquet alone). */
export function parseDuckType(spelling: string): DuckType | null {
  const tokens = tokenize(spelling);
  if (!tokens) return null;
  try {
    const parser = new TypeParser(tokens);
    const type = parser.type();
    return parser.done() ? type : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Scalar formatting

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT64_MAX = 2n ** 63n - 1n;
const DATE_INFINITY = 2 ** 31 - 1; // DuckDB's date 'infinity'; '-infinity' is its negation
const TEXT = new TextDecoder();

/** A 64-bit integer as a JSON number when exact, else as a decimal string. */
function integerValue(value: bigint): number | string {
  return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
}

function doubleValue(value: number): number | string {
  if (Number.isFinite(value)) return value;
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/** The shortest decimal that reads back as the same float32. */
export function floatValue(value: number): number | string {
  if (!Number.isFinite(value)) return doubleValue(value);
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return candidate;
  }
  return Number(value.toPrecision(9));
}

export function decimalValue(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return (negative ? '-' : '') + digits;
  const padded = digits.padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}

/** Big-endian two's complement, as Parquet stores DECIMAL in byte arrays. */
export function bigIntFromTwosComplement(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return bytes[0] & 0x80 ? value - (1n << BigInt(bytes.length * 8)) : value;
}

function pad(value: number, width: number): string {
  return `${value}`.padStart(width, '0');
}

function yearText(year: number): string {
  if (year >= 0 && year <= 9999) return pad(year, 4);
  return (year < 0 ? '-' : '+') + pad(Math.abs(year), 6);
}

/** Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's civil_from_days). */
export function dateValue(days: number): string {
  if (days === DATE_INFINITY) return 'infinity';
  if (days === -DATE_INFINITY) return '-infinity';
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return `${yearText(year)}-${pad2(month)}-${pad2(day)}`;
}

export type TimeUnitName = 'MILLIS' | 'MICROS' | 'NANOS';

const TICKS_PER_SECOND: Record<TimeUnitName, number> = { MILLIS: 1e3, MICROS: 1e6, NANOS: 1e9 };
const UNIT_DIGITS: Record<TimeUnitName, number> = { MILLIS: 3, MICROS: 6, NANOS: 9 };
const MAX_EXACT = 2 ** 53;

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

function fraction(sub: number, unit: TimeUnitName, digits: number): string {
  if (digits === 0) return '';
  const native = UNIT_DIGITS[unit];
  const text = `${sub}`.padStart(native, '0');
  return '.' + (digits <= native ? text.slice(0, digits) : text.padEnd(digits, '0'));
}

/** ticks → whole days since the epoch and ticks into that day (floor division). */
function splitDays(ticks: bigint, unit: TimeUnitName): { days: number; ofDay: number } {
  const perDay = TICKS_PER_SECOND[unit] * 86_400;
  if (ticks > -MAX_EXACT && ticks < MAX_EXACT) {
    // Number arithmetic on exact integers (the common case: micros within ±285 years of 1970), corrected for the
    // rounding of the division.
    const n = Number(ticks);
    let days = Math.floor(n / perDay);
    let ofDay = n - days * perDay;
    if (ofDay < 0) {
      days -= 1;
      ofDay += perDay;
    } else if (ofDay >= perDay) {
      days += 1;
      ofDay -= perDay;
    }
    return { days, ofDay };
  }
  const big = BigInt(perDay);
  let days = ticks / big;
  let ofDay = ticks % big;
  if (ofDay < 0n) {
    ofDay += big;
    days -= 1n;
  }
  return { days: Number(days), ofDay: Number(ofDay) };
}

function clockText(ticksOfDay: number, unit: TimeUnitName): { hms: string; sub: number } {
  const perSecond = TICKS_PER_SECOND[unit];
  const seconds = Math.floor(ticksOfDay / perSecond); // exact: ticksOfDay < 2^53
  const sub = ticksOfDay - seconds * perSecond;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor(seconds / 60) % 60;
  return { hms: `${pad2(h)}:${pad2(m)}:${pad2(seconds % 60)}`, sub };
}

// Consecutive timestamps mostly share their date: remember the last one formatted.
let lastDays = Number.NaN;
let lastDateText = '';

/** `digits` fraction digits are always printed: the type's full precision. */
export function timestampValue(ticks: bigint, unit: TimeUnitName, digits: number, utc: boolean): string {
  if (ticks === INT64_MAX) return 'infinity';
  if (ticks === -INT64_MAX) return '-infinity';
  const { days, ofDay } = splitDays(ticks, unit);
  if (days !== lastDays) {
    lastDateText = dateValue(days);
    lastDays = days;
  }
  const { hms, sub } = clockText(ofDay, unit);
  return `${lastDateText}T${hms}${fraction(sub, unit, digits)}${utc ? '+00:00' : ''}`;
}

/** TIME: the fraction only when it is not zero, as DuckDB prints it. */
export function timeValue(ticks: bigint, unit: TimeUnitName, utc: boolean): string {
  const { hms, sub } = clockText(Number(ticks), unit);
  const frac = sub === 0 ? '' : fraction(sub, unit, Math.max(6, UNIT_DIGITS[unit]));
  return `${hms}${frac}${utc ? '+00:00' : ''}`;
}

/** ISO 8601 duration, PostgreSQL iso_8601 style: each part carries its own sign; months and days never folded. */
export function intervalValue(months: number, days: number, micros: bigint): string {
  const years = Math.trunc(months / 12);
  const restMonths = months % 12;
  let date = '';
  if (years !== 0) date += `${years}Y`;
  if (restMonths !== 0) date += `${restMonths}M`;
  if (days !== 0) date += `${days}D`;
  let time = '';
  const hours = micros / 3_600_000_000n;
  const minutes = (micros / 60_000_000n) % 60n;
  const secondMicros = micros % 60_000_000n;
  if (hours !== 0n) time += `${hours}H`;
  if (minutes !== 0n) time += `${minutes}M`;
  if (secondMicros !== 0n) {
    const negative = secondMicros < 0n;
    const abs = negative ? -secondMicros : secondMicros;
    const frac = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
    time += `${negative ? '-' : ''}${abs / 1_000_000n}${frac ? `.${frac}` : ''}S`;
  }
  if (date === '' && time === '') return 'PT0S';
  return `P${date}${time ? `T${time}` : ''}`;
}

/** Parquet INTERVAL: three little-endian uint32 (months, days, milliseconds). */
function intervalFromParquet(bytes: Uint8Array): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return intervalValue(view.getUint32(0, true), view.getUint32(4, true), BigInt(view.getUint32(8, true)) * 1000n);
}

const INTERVAL_TEXT =
  /^(?:(-?\d+) years? ?)?(?:(-?\d+) months? ?)?(?:(-?\d+) days? ?)?(?:(-?)(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?)?$/;

/** DuckDB's INTERVAL text ("1 year 2 months -3 days -04:05:06.000007") in the ISO form; null if it is not one. */
export function intervalFromDuckText(text: string): string | null {
  const m = INTERVAL_TEXT.exec(text.trim());
  if (!m || text.trim() === '') return null;
  const months = Number(m[1] ?? 0) * 12 + Number(m[2] ?? 0);
  const days = Number(m[3] ?? 0);
  let micros = 0n;
  if (m[5] !== undefined) {
    micros =
      BigInt(m[5]) * 3_600_000_000n +
      BigInt(m[6]) * 60_000_000n +
      BigInt(m[7]) * 1_000_000n +
      BigInt((m[8] ?? '').padEnd(6, '0') || '0');
    if (m[4] === '-') micros = -micros;
  }
  return intervalValue(months, days, micros);
}

function base64Value(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function textValue(value: unknown): unknown {
  return value instanceof Uint8Array ? TEXT.decode(value) : value;
}

/** A VARIANT's JSON text as the value it holds; integers past ±(2^53−1) as decimal strings, as integers are. */
function variantFromJson(text: string): unknown {
  try {
    const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' && context?.source !== undefined && /^-?\d+$/.test(context.source) && !Number.isSafeInteger(value) ? context.source : value;
    return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch {
    return text;
  }
}

/** Last resort for shapes this file does not know: never let a bigint, byte array or undefined reach JSON. */
function jsonSafe(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'bigint') return integerValue(value);
  if (typeof value === 'number') return doubleValue(value);
  if (value instanceof Uint8Array) return base64Value(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<unknown>, jsonSafe);
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, jsonSafe(v)]));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// Footer rewrite and converter tree

export type Convert = (value: unknown) => unknown;

const HANDLED_CONVERTED = new Set(['DECIMAL', 'INTERVAL', 'DATE', 'TIMESTAMP_MILLIS', 'TIMESTAMP_MICROS', 'TIME_MILLIS', 'TIME_MICROS', 'MAP', 'MAP_KEY_VALUE']);
const HANDLED_LOGICAL = new Set(['DECIMAL', 'DATE', 'TIMESTAMP', 'TIME', 'MAP']);

/**
 * The footer hyparquet should decode with: the same file, minus the annotations we convert ourselves, so hyparquet
 * yields physical values. The original footer stays untouched: converters read the annotations from it.
 */
export function decodingMetadata(metadata: FileMetaData): FileMetaData {
  const schema = metadata.schema.map((element): SchemaElement => {
    const convertedHandled = element.converted_type !== undefined && HANDLED_CONVERTED.has(element.converted_type);
    const logicalHandled = element.logical_type !== undefined && HANDLED_LOGICAL.has(element.logical_type.type);
    if (!convertedHandled && !logicalHandled) return element;
    const copy: SchemaElement = { ...element };
    if (convertedHandled) delete copy.converted_type;
    if (logicalHandled) delete copy.logical_type;
    return copy;
  });
  return { ...metadata, schema };
}

/** hyparquet parsers for what the rewrite leaves it to convert: JSON stays text; INT96 stays raw nanoseconds. */
export const RAW_PARSERS = {
  jsonFromBytes: (bytes: Uint8Array) => (bytes === undefined ? undefined : TEXT.decode(bytes)),
  timestampFromNanoseconds: (nanos: bigint) => nanos,
};

function nullable(convert: Convert): Convert {
  return (value) => (value === null || value === undefined ? null : convert(value));
}

function scalarName(type: DuckType | null): string | null {
  return type?.kind === 'scalar' ? type.name : null;
}

function timestampDigits(type: DuckType | null, unit: TimeUnitName): number {
  switch (scalarName(type)) {
    case 'TIMESTAMP_S': return 0;
    case 'TIMESTAMP_MS': return 3;
    case 'TIMESTAMP_NS': return 9;
    case 'TIMESTAMP':
    case 'DATETIME':
    case 'TIMESTAMP WITH TIME ZONE':
    case 'TIMESTAMPTZ': return 6;
    default: return UNIT_DIGITS[unit];
  }
}

const TEXT_AS_STORED = new Set(['HUGEINT', 'UHUGEINT', 'BIGNUM', 'VARINT', 'BIT', 'BITSTRING', 'VARCHAR', 'JSON', 'TEXT', 'STRING']);

function isTextKey(type: DuckType | null, keyElement: SchemaElement): boolean {
  if (type) return type.kind === 'enum' || scalarName(type) === 'VARCHAR' || scalarName(type) === 'TEXT' || scalarName(type) === 'STRING';
  return keyElement.converted_type === 'UTF8' || keyElement.logical_type?.type === 'STRING' || keyElement.converted_type === 'ENUM';
}

function leafConverter(element: SchemaElement, type: DuckType | null): Convert {
  const converted = element.converted_type;
  const logical = element.logical_type;
  const name = scalarName(type);

  if (name === 'VARIANT' && element.type === 'BYTE_ARRAY') {
    // An agent writes a VARIANT as its JSON text (DuckDB's Parquet writer cannot write one inside a list, map or struct).
    return nullable((v) => variantFromJson(String(textValue(v))));
  }
  if (name === 'INTERVAL' && element.type === 'BYTE_ARRAY') {
    // An agent that writes INTERVAL as DuckDB's text (Parquet's INTERVAL cannot hold negative parts or micros).
    return nullable((v) => {
      const text = String(textValue(v));
      return intervalFromDuckText(text) ?? text;
    });
  }
  if (converted === 'DECIMAL' || logical?.type === 'DECIMAL') {
    const scale = element.scale ?? (logical?.type === 'DECIMAL' ? logical.scale : 0);
    return nullable((v) => {
      const unscaled = v instanceof Uint8Array ? bigIntFromTwosComplement(v) : BigInt(v as number | bigint);
      return decimalValue(unscaled, scale);
    });
  }
  if (converted === 'INTERVAL') return nullable((v) => intervalFromParquet(v as Uint8Array));
  if (logical?.type === 'TIMESTAMP' || converted === 'TIMESTAMP_MICROS' || converted === 'TIMESTAMP_MILLIS') {
    const unit: TimeUnitName = logical?.type === 'TIMESTAMP' ? logical.unit : converted === 'TIMESTAMP_MILLIS' ? 'MILLIS' : 'MICROS';
    // The legacy converted types mean UTC-adjusted; DuckDB always writes the logical type too.
    const utc = logical?.type === 'TIMESTAMP' ? logical.isAdjustedToUTC : true;
    const digits = timestampDigits(type, unit);
    return nullable((v) => timestampValue(BigInt(v as bigint | number), unit, digits, utc));
  }
  if (element.type === 'INT96') return nullable((v) => timestampValue(v as bigint, 'NANOS', 9, false));
  if (converted === 'DATE' || logical?.type === 'DATE') return nullable((v) => dateValue(Number(v)));
  if (logical?.type === 'TIME' || converted === 'TIME_MICROS' || converted === 'TIME_MILLIS') {
    const unit: TimeUnitName = logical?.type === 'TIME' ? logical.unit : converted === 'TIME_MILLIS' ? 'MILLIS' : 'MICROS';
    const utc = logical?.type === 'TIME' ? logical.isAdjustedToUTC : false;
    return nullable((v) => timeValue(BigInt(v as bigint | number), unit, utc));
  }
  switch (element.type) {
    case 'BOOLEAN':
      return nullable((v) => Boolean(v));
    case 'INT32':
      return nullable((v) => v);
    case 'INT64':
      return nullable((v) => (typeof v === 'bigint' ? integerValue(v) : v));
    case 'FLOAT':
      return nullable((v) => floatValue(v as number));
    case 'DOUBLE':
      return nullable((v) => doubleValue(v as number));
    case 'BYTE_ARRAY':
    case 'FIXED_LEN_BYTE_ARRAY': {
      const annotatedText =
        converted === 'UTF8' || converted === 'ENUM' || converted === 'JSON' ||
        logical?.type === 'STRING' || logical?.type === 'ENUM' || logical?.type === 'JSON' || logical?.type === 'UUID';
      if (annotatedText || type?.kind === 'enum' || (name !== null && TEXT_AS_STORED.has(name))) return nullable(textValue);
      if (logical?.type === 'FLOAT16') return nullable((v) => doubleValue(v as number));
      return nullable((v) => (v instanceof Uint8Array ? base64Value(v) : jsonSafe(v)));
    }
    default:
      return jsonSafe;
  }
}

function isListNode(node: SchemaTree): boolean {
  // Mirrors hyparquet's isListLike: only these nodes come back as arrays.
  if (node.element.converted_type !== 'LIST' || node.children.length !== 1) return false;
  const repeated = node.children[0];
  return repeated.children.length <= 1 && repeated.element.repetition_type === 'REPEATED';
}

function isMapNode(node: SchemaTree): boolean {
  const annotated = node.element.converted_type === 'MAP' || node.element.converted_type === 'MAP_KEY_VALUE' || node.element.logical_type?.type === 'MAP';
  if (!annotated || node.children.length !== 1) return false;
  const repeated = node.children[0];
  return repeated.element.repetition_type === 'REPEATED' && repeated.children.length === 2;
}

function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  // A column, field or map key may be named "__proto__": assignment would set the prototype instead.
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Converter for one column (any node of the original footer's schema tree) and its DuckDB type, when known. */
export function converterFor(node: SchemaTree, type: DuckType | null): Convert {
  if (node.children.length === 0) {
    const leaf = leafConverter(node.element, type);
    if (node.element.repetition_type !== 'REPEATED') return leaf;
    return nullable((v) => Array.from(v as ArrayLike<unknown>, leaf)); // a bare repeated field is a list
  }
  if (isListNode(node)) {
    const repeated = node.children[0];
    const elementNode = repeated.children.length === 1 ? repeated.children[0] : repeated;
    const element = converterFor(elementNode, type?.kind === 'list' ? type.element : null);
    return nullable((v) => Array.from(v as ArrayLike<unknown>, element));
  }
  if (isMapNode(node)) {
    // With the MAP annotation removed, hyparquet reads the map as a struct holding its entries in file order.
    const repeated = node.children[0];
    const keyNode = repeated.children.find((c) => c.element.name === 'key') ?? repeated.children[0];
    const valueNode = repeated.children.find((c) => c !== keyNode) ?? repeated.children[1];
    const mapType = type?.kind === 'map' ? type : null;
    const key = converterFor(keyNode, mapType?.key ?? null);
    const value = converterFor(valueNode, mapType?.value ?? null);
    const entriesName = repeated.element.name;
    const keyName = keyNode.element.name;
    const valueName = valueNode.element.name;
    const asObject = keyNode.children.length === 0 && isTextKey(mapType?.key ?? null, keyNode.element);
    return nullable((v) => {
      const entries = ((v as Record<string, unknown>)[entriesName] ?? []) as Record<string, unknown>[];
      if (asObject) {
        const out: Record<string, unknown> = {};
        for (const entry of entries) setField(out, String(key(entry[keyName])), value(entry[valueName]));
        return out;
      }
      return entries.map((entry) => ({ key: key(entry[keyName]), value: value(entry[valueName]) }));
    });
  }
  if (type?.kind === 'union' && node.children.length === type.members.length + 1) {
    // DuckDB writes a UNION as a struct of its tag (field "") and one field per member.
    const members = type.members.map((m, i) => ({ name: node.children[i + 1].element.name, convert: converterFor(node.children[i + 1], m.type) }));
    const tagName = node.children[0].element.name;
    return nullable((v) => {
      const struct = v as Record<string, unknown>;
      const member = members[Number(struct[tagName])];
      return member ? member.convert(struct[member.name]) : null;
    });
  }
  const fieldTypes = type?.kind === 'struct' && type.fields.length === node.children.length ? type.fields : null;
  const fields = node.children.map((child, i) => ({ name: child.element.name, convert: converterFor(child, fieldTypes?.[i].type ?? null) }));
  return nullable((v) => {
    const struct = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const field of fields) setField(out, field.name, field.convert(struct[field.name]));
    return out;
  });
}
