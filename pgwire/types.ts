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
export function pgTypeOf(duckType: string): { oid: number; typmod: number } {
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
