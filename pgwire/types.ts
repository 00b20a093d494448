// DuckDB result types as PostgreSQL type OIDs, and result values (the api's decoded JSON shapes, runtime/resultValues.ts)
// as PostgreSQL's text format. 64-bit integers and decimals stay exact (they arrive as strings beyond 2^53);
// lists, structs, maps and unions go out as json; INTERVAL as text (ISO 8601, which PostgreSQL's interval parsers
// of the clients do not read in the default style).
import type { FieldDescription } from './wire.ts';

export const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  varchar: 1043,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  timetz: 1266,
  bit: 1560,
  numeric: 1700,
  uuid: 2950,
  unknown: 705,
} as const;

const SIZES: Record<number, number> = { 16: 1, 20: 8, 21: 2, 23: 4, 26: 4, 700: 4, 701: 8, 1082: 4, 1083: 8, 1114: 8, 1184: 8, 2950: 16 };

/** The OID and type modifier for a DuckDB type as DESCRIBE spells it. */
function pgTypeOf(duckType: string): { oid: number; typmod: number } {
  const t = duckType.trim().toUpperCase();
  if (/\[\d*\]$/.test(t) || /^(STRUCT|MAP|UNION)\s*\(/.test(t) || t.startsWith('LIST')) return { oid: OID.json, typmod: -1 };
  const dec = /^(?:DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t);
  if (dec) return { oid: OID.numeric, typmod: ((Number(dec[1]) << 16) | Number(dec[2])) + 4 };
  switch (t) {
    case 'BOOLEAN':
      return { oid: OID.bool, typmod: -1 };
    case 'TINYINT':
    case 'SMALLINT':
    case 'UTINYINT':
      return { oid: OID.int2, typmod: -1 };
    case 'INTEGER':
    case 'USMALLINT':
      return { oid: OID.int4, typmod: -1 };
    case 'BIGINT':
    case 'UINTEGER':
      return { oid: OID.int8, typmod: -1 };
    case 'UBIGINT':
    case 'HUGEINT':
    case 'UHUGEINT':
    case 'BIGNUM':
    case 'VARINT':
    case 'DECIMAL':
    case 'NUMERIC':
      return { oid: OID.numeric, typmod: -1 };
    case 'FLOAT':
    case 'REAL':
      return { oid: OID.float4, typmod: -1 };
    case 'DOUBLE':
      return { oid: OID.float8, typmod: -1 };
    case 'DATE':
      return { oid: OID.date, typmod: -1 };
    case 'TIME':
    case 'TIME_NS':
      return { oid: OID.time, typmod: -1 };
    case 'TIME WITH TIME ZONE':
    case 'TIMETZ':
      return { oid: OID.timetz, typmod: -1 };
    case 'TIMESTAMP':
    case 'TIMESTAMP_S':
    case 'TIMESTAMP_MS':
    case 'TIMESTAMP_NS':
    case 'DATETIME':
      return { oid: OID.timestamp, typmod: -1 };
    case 'TIMESTAMP WITH TIME ZONE':
    case 'TIMESTAMPTZ':
      return { oid: OID.timestamptz, typmod: -1 };
    case 'UUID':
      return { oid: OID.uuid, typmod: -1 };
    case 'BLOB':
    case 'BYTEA':
      return { oid: OID.bytea, typmod: -1 };
    case 'JSON':
      return { oid: OID.json, typmod: -1 };
    default:
      // VARCHAR, ENUM, BIT, INTERVAL and anything newer: text.
      return { oid: OID.text, typmod: -1 };
  }
}

export function fieldsOf(schema: readonly { name: string; type: string }[]): FieldDescription[] {
  return schema.map((c) => {
    const t = pgTypeOf(c.type);
    return { name: c.name, typeOid: t.oid, typeSize: SIZES[t.oid] ?? -1, typeModifier: t.typmod };
  });
}

/** One value in PostgreSQL's text format for the column's OID. */
export function textValue(v: unknown, oid: number): string | null {
  if (v === null || v === undefined) return null;
  switch (oid) {
    case OID.bool:
      return v === true || v === 'true' ? 't' : 'f';
    case OID.timestamp:
    case OID.timestamptz:
      return typeof v === 'string' ? v.replace('T', ' ') : String(v);
    case OID.bytea:
      return typeof v === 'string' ? `\\x${Buffer.from(v, 'base64').toString('hex')}` : String(v);
    case OID.json:
      // A JSON column arrives as its text; lists, structs and maps as decoded values.
      return typeof v === 'string' ? v : JSON.stringify(v);
    default:
      if (typeof v === 'object') return JSON.stringify(v);
      return String(v);
  }
}

/** The DuckDB type a parameter is bound as when Parse declared its type, for the types whose text DuckDB could not
 *  place by position (`SELECT 40 + $1`): integers, floats and booleans (the agent's ParamType). Anything else, and
 *  an unspecified type (0), is bound as text and cast by position. */
export type DeclaredParamType = 'BIGINT' | 'DOUBLE' | 'BOOLEAN';
export function declaredParamType(oid: number): DeclaredParamType | null {
  switch (oid) {
    case OID.int2:
    case OID.int4:
    case OID.int8:
      return 'BIGINT';
    case OID.float4:
    case OID.float8:
      return 'DOUBLE';
    case OID.bool:
      return 'BOOLEAN';
    default:
      return null;
  }
}

/**
 * A Bind parameter in binary format as text, for the types clients send in binary (pgjdbc: integers, floats,
 * booleans, bytea, uuid); `oid` is what Parse declared. Unknown binary types are refused.
 */
export function binaryParam(b: Buffer, oid: number): string {
  switch (oid) {
    case OID.bool:
      return b[0] ? 'true' : 'false';
    case OID.int2:
      return String(b.readInt16BE(0));
    case OID.int4:
    case OID.oid:
      return String(b.readInt32BE(0));
    case OID.int8:
      return String(b.readBigInt64BE(0));
    case OID.float4:
      return String(b.readFloatBE(0));
    case OID.float8:
      return String(b.readDoubleBE(0));
    case OID.bytea:
      return `\\x${b.toString('hex')}`;
    case OID.uuid: {
      const h = b.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    case OID.text:
    case OID.varchar:
    case OID.unknown:
    case 0:
      return b.toString('utf8');
    default:
      throw new Error(`a binary parameter of type ${oid} is not supported; send it as text`);
  }
}

// Result columns a client may ask for in binary (pgjdbc does, for a server-side prepared statement, whatever its
// RowDescription said): the types whose binary form is written here. Any other column goes out as text.
const BINARY_RESULTS = new Set<number>([OID.bool, OID.int2, OID.int4, OID.int8, OID.oid, OID.float4, OID.float8, OID.numeric, OID.date, OID.time, OID.timetz, OID.timestamp, OID.timestamptz, OID.uuid, OID.bytea, OID.text, OID.varchar, OID.json]);

/** The format a result column goes out in: binary when the client asked for it and its type has one here. */
export const resultFormat = (requested: number, oid: number) => (requested === 1 && BINARY_RESULTS.has(oid) ? 1 : 0);

const POSTGRES_EPOCH_DAYS = 10957; // 2000-01-01 in days since 1970-01-01
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const micros = (hms: string) => {
  const m = /^(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?/.exec(hms);
  if (!m) throw new Error(`not a time: ${hms}`);
  return (BigInt(m[1]) * 3600n + BigInt(m[2]) * 60n + BigInt(m[3])) * 1_000_000n + BigInt((m[4] ?? '').padEnd(6, '0') || '0');
};
const days = (ymd: string) => {
  const m = /^(-?\d+)-(\d\d)-(\d\d)/.exec(ymd);
  if (!m) throw new Error(`not a date: ${ymd}`);
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Math.floor(d.getTime() / 86_400_000) - POSTGRES_EPOCH_DAYS;
};
/** A UTC offset at the end of a time text (`+05:30`, `-08`), in seconds east; 0 without one. */
const offsetSeconds = (s: string) => {
  const m = /([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?$/.exec(s.slice(8));
  if (!m) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0));
};

/** PostgreSQL's binary numeric: base-10000 digits with a weight, a sign and the display scale. */
function binaryNumeric(text: string): Buffer {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m) {
    // NaN (and anything not a plain decimal): PostgreSQL's NaN.
    return Buffer.from([0, 0, 0, 0, 0xc0, 0, 0, 0]);
  }
  const intPart = m[2].replace(/^0+/, '');
  const frac = m[3] ?? '';
  const dscale = frac.length;
  const intPadded = intPart.padStart(Math.ceil(intPart.length / 4) * 4, '0');
  const fracPadded = frac.padEnd(Math.ceil(frac.length / 4) * 4, '0');
  const digits: number[] = [];
  for (let i = 0; i < intPadded.length; i += 4) digits.push(Number(intPadded.slice(i, i + 4)));
  let weight = digits.length - 1;
  for (let i = 0; i < fracPadded.length; i += 4) digits.push(Number(fracPadded.slice(i, i + 4)));
  while (digits.length && digits[0] === 0) {
    digits.shift();
    weight--;
  }
  while (digits.length && digits[digits.length - 1] === 0) digits.pop();
  if (digits.length === 0) weight = 0;
  const b = Buffer.alloc(8 + digits.length * 2);
  b.writeInt16BE(digits.length, 0);
  b.writeInt16BE(weight, 2);
  b.writeUInt16BE(m[1] === '-' && digits.length ? 0x4000 : 0, 4);
  b.writeInt16BE(dscale, 6);
  digits.forEach((d, i) => b.writeInt16BE(d, 8 + i * 2));
  return b;
}

const float = (t: string) => (/^-?inf/i.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : /^nan$/i.test(t) ? NaN : Number(t));

/** One result value (its text form, as textValue wrote it) in PostgreSQL's binary format for the column's OID. */
export function binaryValue(text: string, oid: number): Buffer {
  switch (oid) {
    case OID.bool:
      return Buffer.from([text === 't' ? 1 : 0]);
    case OID.int2: {
      const b = Buffer.alloc(2);
      b.writeInt16BE(Number(text));
      return b;
    }
    case OID.int4:
    case OID.oid: {
      const b = Buffer.alloc(4);
      if (oid === OID.oid) b.writeUInt32BE(Number(text));
      else b.writeInt32BE(Number(text));
      return b;
    }
    case OID.int8:
      return int64(BigInt(text));
    case OID.float4: {
      const b = Buffer.alloc(4);
      b.writeFloatBE(float(text));
      return b;
    }
    case OID.float8: {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(float(text));
      return b;
    }
    case OID.numeric:
      return binaryNumeric(text);
    case OID.date: {
      const b = Buffer.alloc(4);
      b.writeInt32BE(days(text));
      return b;
    }
    case OID.time:
      return int64(micros(text));
    case OID.timetz: {
      const b = Buffer.alloc(12);
      b.writeBigInt64BE(micros(text));
      // PostgreSQL keeps the zone as seconds west of UTC.
      b.writeInt32BE(-offsetSeconds(text), 8);
      return b;
    }
    case OID.timestamp:
    case OID.timestamptz: {
      const [d, t = '00:00:00'] = text.split(/[ T]/);
      const local = BigInt(days(d)) * 86_400_000_000n + micros(t);
      return int64(oid === OID.timestamptz ? local - BigInt(offsetSeconds(t)) * 1_000_000n : local);
    }
    case OID.uuid:
      return Buffer.from(text.replace(/-/g, ''), 'hex');
    case OID.bytea:
      return text.startsWith('\\x') ? Buffer.from(text.slice(2), 'hex') : Buffer.from(text, 'utf8');
    default:
      // text, varchar, json: the binary form is the text.
      return Buffer.from(text, 'utf8');
  }
}
