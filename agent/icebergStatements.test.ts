import { describe, it, expect } from 'vitest';
import { analyzeStatement, parsePartitionClause, snapshotSuffix, splitStatements, stripPartitionedBy } from './icebergStatements.ts';

describe('statement recognition for the Iceberg bridge', () => {
  it('splits scripts on semicolons outside strings, identifiers and comments', () => {
    expect(splitStatements(`SELECT ';' AS "a;b"; -- c;\nINSERT INTO t VALUES (1) /* ; */;  ;`)).toEqual([
      `SELECT ';' AS "a;b"`,
      ` -- c;\nINSERT INTO t VALUES (1) /* ; */`,
    ]);
  });

  it('strips and parses PARTITIONED BY', () => {
    const s = stripPartitionedBy(`CREATE TABLE t (id INT, ts TIMESTAMP, s VARCHAR) PARTITIONED BY (day(ts), bucket(16, id), truncate(s, 4), "s")`);
    expect(s.sql).toBe('CREATE TABLE t (id INT, ts TIMESTAMP, s VARCHAR) ');
    expect(parsePartitionClause(s.clause!)).toEqual([
      { transform: 'day', column: 'ts' },
      { transform: 'bucket[16]', column: 'id' },
      { transform: 'truncate[4]', column: 's' },
      { transform: 'identity', column: 's' },
    ]);
    expect(stripPartitionedBy(`SELECT 'PARTITIONED BY (x)'`).clause).toBeNull();
    expect(() => parsePartitionClause('sqrt(x)')).toThrow(/unsupported partition item/);
  });

  it('finds kinds, targets, references and predicates', () => {
    const u = analyzeStatement(`UPDATE wh.s.t AS x SET v = 1 WHERE x.id = 3 AND day >= DATE '2024-01-01' AND r IN ('a', 'b')`);
    expect(u).toMatchObject({ kind: 'update', target: { catalog: 'wh', schema: 's', name: 't' }, targetAlias: 'x' });
    expect(u.predicates.map((p) => [p.qualifier, p.column, p.op, p.values.map((v) => v.text)])).toEqual([
      ['x', 'id', '=', ['3']],
      [null, 'day', '>=', ['2024-01-01']],
      [null, 'r', 'in', ['a', 'b']],
    ]);
    const sel = analyzeStatement(`WITH c AS (SELECT 1) SELECT * FROM c JOIN s.t__snapshot_42 ON true WHERE 5 < id`);
    expect(sel.refs).toEqual([{ catalog: null, schema: 's', name: 't__snapshot_42' }]);
    expect(analyzeStatement(`CREATE TABLE s.t AS SELECT 1`)).toMatchObject({ kind: 'create_table', asSelect: true });
    expect(analyzeStatement(`DROP SCHEMA wh.s CASCADE`)).toMatchObject({ kind: 'drop_schema', target: { catalog: 'wh', name: 's' }, cascade: true });
    expect(analyzeStatement(`ALTER TABLE s.t RENAME TO u`)).toMatchObject({ kind: 'alter_table', renameTo: { name: 'u' } });
    expect(analyzeStatement(`MERGE INTO s.t USING s.u ON t.id = u.id WHEN MATCHED THEN DELETE`)).toMatchObject({ kind: 'merge', target: { schema: 's', name: 't' } });
    expect(snapshotSuffix('orders__snapshot_8744736658442914487')).toEqual({ base: 'orders', snapshotId: 8744736658442914487n });
  });
});
