import { describe, it, expect } from 'vitest';
import { icebergToDuckdb, duckdbToIceberg, schemaFromColumns } from './duckdbTypes.ts';

describe('DuckDB type mapping', () => {
  it('maps both ways, nested types included', () => {
    let id = 100;
    const t = duckdbToIceberg('STRUCT(a INTEGER, "b c" VARCHAR[], m MAP(VARCHAR, DECIMAL(10,2)))', () => ++id);
    expect(icebergToDuckdb(t)).toBe('STRUCT(a INTEGER, "b c" VARCHAR[], m MAP(VARCHAR, DECIMAL(10,2)))');
    expect(duckdbToIceberg('TIMESTAMP WITH TIME ZONE', () => 0)).toBe('timestamptz');
    expect(icebergToDuckdb('timestamptz')).toBe('TIMESTAMP WITH TIME ZONE');
    expect(duckdbToIceberg('BIGINT', () => 0)).toBe('long');
    // No 128-bit or unsigned 64-bit integer in Iceberg: the exact decimal that holds them (sum() of a BIGINT).
    expect(duckdbToIceberg('HUGEINT', () => 0)).toBe('decimal(38, 0)');
    expect(duckdbToIceberg('UBIGINT', () => 0)).toBe('decimal(20, 0)');
    expect(() => duckdbToIceberg('INTERVAL', () => 0)).toThrow();
    const s = schemaFromColumns([
      { name: 'id', type: 'BIGINT', nullable: false },
      { name: 'xs', type: 'INTEGER[]', nullable: true },
    ]);
    expect(s.fields.map((f) => [f.id, f.required])).toEqual([[1, true], [2, false]]);
    expect((s.fields[1].type as any)['element-id']).toBe(3);
  });
});
