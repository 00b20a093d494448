// Iceberg ↔ DuckDB type mapping. DuckDB type strings are spelled as DuckDB's DESCRIBE spells them
// (`DECIMAL(10,2)`, `INTEGER[]`, `STRUCT(a INTEGER, b VARCHAR)`, `MAP(VARCHAR, BIGINT)`).
import type { IcebergType, NestedField, StructType } from './metadata.ts';
import { isList, isMap, isStruct } from './metadata.ts';

export class TypeMappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TypeMappingError';
  }
}

const quoteIdent = (name: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

export function icebergToDuckdb(t: IcebergType): string {
  if (isStruct(t)) return `STRUCT(${t.fields.map((f) => `${quoteIdent(f.name)} ${icebergToDuckdb(f.type)}`).join(', ')})`;
  if (isList(t)) return `${icebergToDuckdb(t.element)}[]`;
  if (isMap(t)) return `MAP(${icebergToDuckdb(t.key)}, ${icebergToDuckdb(t.value)})`;
  const dec = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t);
  if (dec) return `DECIMAL(${dec[1]},${dec[2]})`;
  if (/^fixed\[\d+\]$/.test(t)) return 'BLOB';
  switch (t) {
    case 'boolean':
      return 'BOOLEAN';
    case 'int':
      return 'INTEGER';
    case 'long':
      return 'BIGINT';
    case 'float':
      return 'FLOAT';
    case 'double':
      return 'DOUBLE';
    case 'date':
      return 'DATE';
    case 'time':
      return 'TIME';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'timestamptz':
      return 'TIMESTAMP WITH TIME ZONE';
    case 'timestamp_ns':
      return 'TIMESTAMP_NS';
    case 'timestamptz_ns':
      return 'TIMESTAMP WITH TIME ZONE';
    case 'string':
      return 'VARCHAR';
    case 'uuid':
      return 'UUID';
    case 'binary':
      return 'BLOB';
  }
  throw new TypeMappingError(`no DuckDB type for Iceberg type ${t}`);
}

// ---------------------------------------------------------------------------------------------------------------
// DuckDB type strings → Iceberg

type DuckType =
  | { kind: 'name'; name: string; args: string[] }
  | { kind: 'list'; element: DuckType }
  | { kind: 'struct'; fields: Array<{ name: string; type: DuckType }> }
  | { kind: 'map'; key: DuckType; value: DuckType };

class TypeParser {
  private pos = 0;
  private readonly s: string;
  constructor(s: string) {
    this.s = s;
  }
  private ws() {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos])) this.pos++;
  }
  private peek(c: string) {
    this.ws();
    return this.s.startsWith(c, this.pos);
  }
  private expect(c: string) {
    this.ws();
    if (!this.s.startsWith(c, this.pos)) throw new TypeMappingError(`cannot parse DuckDB type ${this.s}: expected '${c}' at ${this.pos}`);
    this.pos += c.length;
  }
  private ident(): string {
    this.ws();
    if (this.s[this.pos] === '"') {
      let out = '';
      this.pos++;
      for (;;) {
        const c = this.s[this.pos++];
        if (c === undefined) throw new TypeMappingError(`unterminated identifier in ${this.s}`);
        if (c === '"') {
          if (this.s[this.pos] === '"') {
            out += '"';
            this.pos++;
          } else break;
        } else out += c;
      }
      return out;
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.pos));
    if (!m) throw new TypeMappingError(`cannot parse DuckDB type ${this.s} at ${this.pos}`);
    this.pos += m[0].length;
    return m[0];
  }
  parse(): DuckType {
    const t = this.type();
    this.ws();
    if (this.pos !== this.s.length) throw new TypeMappingError(`cannot parse DuckDB type ${this.s}`);
    return t;
  }
  private type(): DuckType {
    let t = this.base();
    while (this.peek('[')) {
      this.expect('[');
      this.ws();
      if (/\d/.test(this.s[this.pos] ?? '')) throw new TypeMappingError(`fixed-size arrays are not supported: ${this.s}`);
      this.expect(']');
      t = { kind: 'list', element: t };
    }
    return t;
  }
  private base(): DuckType {
    const name = this.ident().toUpperCase();
    if (name === 'STRUCT') {
      this.expect('(');
      const fields: Array<{ name: string; type: DuckType }> = [];
      do {
        const n = this.ident();
        fields.push({ name: n, type: this.type() });
      } while (this.peek(',') && (this.expect(','), true));
      this.expect(')');
      return { kind: 'struct', fields };
    }
    if (name === 'MAP') {
      this.expect('(');
      const key = this.type();
      this.expect(',');
      const value = this.type();
      this.expect(')');
      return { kind: 'map', key, value };
    }
    let full = name;
    // Multi-word names: TIMESTAMP WITH TIME ZONE, DOUBLE PRECISION.
    for (const suffix of [' WITH TIME ZONE', ' PRECISION']) {
      this.ws();
      if (this.s.slice(this.pos).toUpperCase().startsWith(suffix.trim())) {
        this.pos += suffix.trim().length;
        full += suffix;
      }
    }
    const args: string[] = [];
    if (this.peek('(')) {
      this.expect('(');
      const end = this.s.indexOf(')', this.pos);
      if (end < 0) throw new TypeMappingError(`cannot parse DuckDB type ${this.s}`);
      args.push(...this.s.slice(this.pos, end).split(',').map((a) => a.trim()));
      this.pos = end + 1;
    }
    return { kind: 'name', name: full, args };
  }
}

function primitiveToIceberg(name: string, args: string[]): string {
  switch (name) {
    case 'BOOLEAN':
    case 'BOOL':
      return 'boolean';
    case 'TINYINT':
    case 'SMALLINT':
    case 'INTEGER':
    case 'INT':
    case 'INT4':
    case 'INT2':
    case 'INT1':
    case 'UTINYINT':
    case 'USMALLINT':
      return 'int';
    case 'BIGINT':
    case 'INT8':
    case 'LONG':
    case 'UINTEGER':
      return 'long';
    // Iceberg has no 128-bit or unsigned 64-bit integer; the exact decimal that holds them (sum() of a BIGINT is a
    // HUGEINT, so without this a plain `CREATE TABLE … AS SELECT k, sum(n) …` could not be written). A HUGEINT past
    // 38 digits fails the write rather than losing digits.
    case 'HUGEINT':
    case 'INT128':
      return 'decimal(38, 0)';
    case 'UBIGINT':
      return 'decimal(20, 0)';
    case 'FLOAT':
    case 'REAL':
    case 'FLOAT4':
      return 'float';
    case 'DOUBLE':
    case 'FLOAT8':
    case 'DOUBLE PRECISION':
      return 'double';
    case 'DECIMAL':
    case 'NUMERIC': {
      const p = args.length ? Number(args[0]) : 18;
      const s = args.length > 1 ? Number(args[1]) : 3;
      if (p > 38) throw new TypeMappingError(`DECIMAL precision ${p} exceeds Iceberg's 38`);
      return `decimal(${p}, ${s})`;
    }
    case 'DATE':
      return 'date';
    case 'TIME':
      return 'time';
    case 'TIMESTAMP':
    case 'DATETIME':
    case 'TIMESTAMP_US':
      return 'timestamp';
    case 'TIMESTAMP WITH TIME ZONE':
    case 'TIMESTAMPTZ':
      return 'timestamptz';
    case 'VARCHAR':
    case 'TEXT':
    case 'STRING':
    case 'CHAR':
    case 'BPCHAR':
      return 'string';
    case 'BLOB':
    case 'BYTEA':
    case 'VARBINARY':
      return 'binary';
    case 'UUID':
      return 'uuid';
  }
  throw new TypeMappingError(`DuckDB type ${name} has no Iceberg v2 equivalent`);
}

/**
 * Converts a DuckDB type string to an Iceberg type, numbering nested fields with `nextId()`.
 * Nested fields are optional (DuckDB has no NOT NULL inside nested types).
 */
export function duckdbToIceberg(duckType: string, nextId: () => number): IcebergType {
  const convert = (t: DuckType): IcebergType => {
    switch (t.kind) {
      case 'name':
        return primitiveToIceberg(t.name, t.args);
      case 'list':
        return { type: 'list', 'element-id': nextId(), element: convert(t.element), 'element-required': false };
      case 'map': {
        const keyId = nextId();
        const valueId = nextId();
        return { type: 'map', 'key-id': keyId, key: convert(t.key), 'value-id': valueId, value: convert(t.value), 'value-required': false };
      }
      case 'struct': {
        const ids = t.fields.map(() => nextId());
        return {
          type: 'struct',
          fields: t.fields.map((f, i) => ({ id: ids[i], name: f.name, required: false, type: convert(f.type) })),
        } satisfies StructType;
      }
    }
  };
  return convert(new TypeParser(duckType).parse());
}

export interface ColumnDef {
  name: string;
  /** DuckDB type string. */
  type: string;
  nullable: boolean;
}

/** A table schema from column definitions; top-level fields get ids 1..n, nested ones follow. */
export function schemaFromColumns(columns: readonly ColumnDef[]): StructType {
  let id = columns.length;
  const next = () => ++id;
  const fields: NestedField[] = columns.map((c, i) => ({
    id: i + 1,
    name: c.name,
    required: !c.nullable,
    type: duckdbToIceberg(c.type, next),
  }));
  return { type: 'struct', fields };
}
