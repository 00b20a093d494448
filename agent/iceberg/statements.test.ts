import { describe, it, expect } from 'vitest';
import { analyzeStatement, parsePartitionClause, parseProcedureCall, parseTimestampMs, snapshotSuffix, stripPartitionedBy } from './statements.ts';
import { splitStatements } from '../../sqltext/scan.ts';

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

  it('a read analyzed before is the same analysis, each caller with a copy of its own; a procedure call is named afresh', () => {
    const text = `SELECT k, count(*) FROM s.t WHERE id = 3 GROUP BY k`;
    const first = analyzeStatement(text);
    first.sql = 'rewritten';
    first.refs.push({ catalog: null, schema: null, name: 'added' });
    first.predicates[0].values.length = 0;
    const again = analyzeStatement(text);
    expect(again).not.toBe(first);
    expect(again).toMatchObject({ sql: text, kind: 'select', refs: [{ catalog: null, schema: 's', name: 't' }] });
    expect(again.predicates.map((p) => [p.column, p.op, p.values.map((v) => v.text)])).toEqual([['id', '=', ['3']]]);
    expect(analyzeStatement(text)).toEqual(again);
    const call = `CALL system.expire_snapshots(table => 's.t')`;
    expect(analyzeStatement(call).call!.resultTable).not.toBe(analyzeStatement(call).call!.resultTable);
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
    // WAREHOUSE is a keyword to polyglot: the schema statement is recognized without it
    expect(analyzeStatement(`CREATE SCHEMA warehouse.x`)).toMatchObject({ kind: 'create_schema', target: { catalog: 'warehouse', name: 'x' }, ifNotExists: false, parseError: null });
    expect(analyzeStatement(`create schema if not exists "Warehouse"."My S"`)).toMatchObject({ kind: 'create_schema', target: { catalog: 'Warehouse', name: 'My S' }, ifNotExists: true });
    expect(analyzeStatement(`DROP SCHEMA IF EXISTS warehouse.x`)).toMatchObject({ kind: 'drop_schema', target: { catalog: 'warehouse', name: 'x' }, ifExists: true, cascade: false });
    expect(analyzeStatement(`ALTER TABLE s.t RENAME TO u`)).toMatchObject({ kind: 'alter_table', renameTo: { name: 'u' } });
    expect(analyzeStatement(`MERGE INTO s.t USING s.u ON t.id = u.id WHEN MATCHED THEN DELETE`)).toMatchObject({ kind: 'merge', target: { schema: 's', name: 't' } });
    expect(snapshotSuffix('orders__snapshot_8744736658442914487')).toEqual({ base: 'orders', snapshotId: 8744736658442914487n });
  });

  it('finds what bounds the target rows a MERGE can touch: its key equalities, target conditions and source', () => {
    const sql = `MERGE INTO bench.t AS x USING (SELECT unnest([1, 2]) AS id, 'a' AS s) AS src ON x.id = src.id AND src.s = x.s AND x.k = 5 WHEN MATCHED AND src.id > 1 THEN UPDATE SET v = 0 WHEN NOT MATCHED THEN INSERT VALUES (src.id, 0, 0, 'new')`;
    const m = analyzeStatement(sql).merge!;
    expect(m).toMatchObject({ keys: [{ column: 'id', sourceColumn: 'id' }, { column: 's', sourceColumn: 's' }], sourceQualifier: 'src', targetQualifiers: ['x'], sourceIsTable: false });
    expect(m.targetPredicates.map((p) => [p.column, p.op, p.values.map((v) => v.text)])).toEqual([['k', '=', ['5']]]);
    expect(sql.slice(m.source.start, m.source.end).trim()).toBe(`(SELECT unnest([1, 2]) AS id, 'a' AS s) AS src`);
    // A table source, aliased or not, with comments and an ON inside a string; WHEN NOT MATCHED BY TARGET inserts.
    const t = analyzeStatement(`MERGE INTO s.t USING /* ON */ s.u ON t.id = u.id AND u.note = 'ON' WHEN MATCHED THEN DELETE WHEN NOT MATCHED BY TARGET THEN INSERT (id) VALUES (u.id)`).merge!;
    expect(t).toMatchObject({ keys: [{ column: 'id', sourceColumn: 'id' }], sourceQualifier: 'u', targetQualifiers: ['t'], sourceIsTable: true });
    expect(analyzeStatement(`MERGE INTO s.t USING s.u AS v ON v.id = t.id WHEN MATCHED THEN DELETE`).merge).toMatchObject({ keys: [{ column: 'id', sourceColumn: 'id' }], sourceQualifier: 'v' });
    // Not bounded: a clause touching target rows without a match, a WITH, USING (columns), an ON naming no equal
    // columns of both, unqualified columns, a source joined without parentheses.
    for (const unbounded of [
      `MERGE INTO s.t USING s.u ON t.id = u.id WHEN NOT MATCHED BY SOURCE THEN DELETE`,
      `MERGE INTO s.t USING s.u ON t.id = u.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED BY SOURCE AND t.k > 1 THEN UPDATE SET k = 0`,
      `WITH c AS (SELECT 1 AS id) MERGE INTO s.t USING c ON t.id = c.id WHEN MATCHED THEN DELETE`,
      `MERGE INTO s.t USING s.u USING (id) WHEN MATCHED THEN DELETE`,
      `MERGE INTO s.t USING s.u ON t.id < u.id WHEN MATCHED THEN DELETE`,
      `MERGE INTO s.t USING s.u ON id = u.id WHEN MATCHED THEN DELETE`,
      `MERGE INTO s.t USING s.u ON t.id = u.id OR t.k = u.k WHEN MATCHED THEN DELETE`,
      `MERGE INTO s.t USING s.u JOIN s.w ON u.id = w.id ON t.id = u.id WHEN MATCHED THEN DELETE`,
    ]) {
      expect(analyzeStatement(unbounded).merge, unbounded).toBeNull();
    }
  });

  it('recognizes the maintenance procedures in Spark syntax, named or positional', () => {
    const c = analyzeStatement(`/* nightly */ call System.Rewrite_Data_Files(table => 'wh.app.events', target_file_size_bytes => 1048576, MIN_INPUT_FILES => 5);`);
    expect(c.kind).toBe('maintenance');
    expect(c.call).toMatchObject({
      procedure: 'rewrite_data_files',
      table: { catalog: 'wh', schema: 'app', name: 'events' },
      options: { targetFileSizeBytes: 1048576, minInputFiles: 5 },
    });
    expect(c.sql).toBe(`SELECT * FROM temp.main.${c.call!.resultTable}`);
    expect(parseProcedureCall(`CALL wh.system.rewrite_data_files(table => 'app.e', strategy => 'binpack', options => map('target-file-size-bytes', '1024', 'min-input-files', '3'))`)).toMatchObject({
      table: { catalog: 'wh', schema: 'app', name: 'e' },
      options: { targetFileSizeBytes: 1024, minInputFiles: 3 },
    });
    expect(parseProcedureCall(`CALL system.expire_snapshots('app.e', TIMESTAMP '2026-01-01 00:00:00', 3)`)).toMatchObject({
      procedure: 'expire_snapshots',
      table: { catalog: null, schema: 'app', name: 'e' },
      options: { olderThanMs: Date.UTC(2026, 0, 1), retainLast: 3 },
    });
    expect(parseProcedureCall(`CALL system.remove_orphan_files(table => '"odd.name"', older_than => '2026-01-02T03:04:05+02:00')`)).toMatchObject({
      table: { catalog: null, schema: null, name: 'odd.name' },
      options: { olderThanMs: Date.UTC(2026, 0, 2, 1, 4, 5) },
    });
    expect(parseProcedureCall(`CALL system.rewrite_manifests(table => 'wh.app.e')`)?.procedure).toBe('rewrite_manifests');
    // DuckDB's own CALL, and other statements, are left to DuckDB.
    expect(parseProcedureCall(`CALL pragma_version()`)).toBeNull();
    expect(parseProcedureCall(`CALL system.unknown_thing(table => 'x')`)).toBeNull();
    expect(parseProcedureCall(`SELECT 'CALL system.rewrite_manifests(1)'`)).toBeNull();
    expect(analyzeStatement(`CALL pragma_version()`).kind).toBe('other');
  });

  it('refuses malformed procedure calls with sql_error', () => {
    const err = (sql: string) => {
      try {
        parseProcedureCall(sql);
      } catch (e) {
        return { code: (e as { code?: string }).code, message: (e as Error).message };
      }
      return null;
    };
    expect(err(`CALL system.rewrite_manifests()`)).toEqual({ code: 'sql_error', message: expect.stringContaining('table argument is required') });
    expect(err(`CALL system.rewrite_manifests(table => 'a.b.c', bogus => 1)`)?.message).toContain('unknown argument bogus');
    expect(err(`CALL system.expire_snapshots(table => 'a', retain_last => 0)`)?.message).toContain('retain_last must be an integer of at least 1');
    expect(err(`CALL system.expire_snapshots(table => 'a', older_than => TIMESTAMP 'yesterday')`)?.message).toContain('is not a timestamp');
    expect(err(`CALL system.rewrite_data_files(table => 'a', strategy => 'sort')`)?.message).toContain('binpack');
    expect(err(`CALL system.rewrite_data_files(table => 'a', options => map('delete-file-threshold', '1'))`)?.message).toContain('not supported');
    expect(err(`CALL system.rewrite_manifests(table => 'a.b.c.d')`)?.message).toContain('is not a table name');
    expect(err(`CALL system.rewrite_manifests(table => 'a') extra`)?.message).toContain('after the argument list');
    expect(parseTimestampMs('2026-02-30 00:00:00')).toBeNull();
    expect(parseTimestampMs('2026-01-01')).toBe(Date.UTC(2026, 0, 1));
    // A maintenance recommendation's cutoff carries its milliseconds (domain/maintenance/assess.ts).
    expect(parseProcedureCall(`CALL system.expire_snapshots(table => 'a.b.c', older_than => TIMESTAMP '2026-11-26 12:00:00.250', retain_last => 1)`)?.options.olderThanMs).toBe(
      Date.UTC(2026, 10, 26, 12, 0, 0, 250),
    );
  });
});
