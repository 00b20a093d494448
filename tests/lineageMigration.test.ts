// The move of lineage from per-workspace to per-catalog edges (migration 275) keeps the existing data: edges that
// several workspaces recorded for the same (source, target, provider) merge into one, observations added up, the
// earliest first and latest last sighting, the newest sighting's columns; every other edge stays as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitStatements } from '../sqltext/scan.ts';
import { freshDatabase, type TestDatabase } from './support/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => database?.drop());

const MIGRATION = readFileSync(join(import.meta.dirname, '..', 'migrations', 'control', '275_lineage_per_catalog.sql'), 'utf8');

describe('lineage per catalog (migration 275)', () => {
  it('merges the edges two workspaces recorded and keeps every other edge', async () => {
    // In one transaction on a database of its own, as the migration runner applies a file.
    const merged = await database.db.tx(async (q) => {
      await q.query(`set local search_path to eider, public`);
      // The shape before the migration: edges keyed by workspace.
      await q.query(`alter table lineage_edges drop constraint lineage_edges_pkey`);
      await q.query(`drop index lineage_edges_target`);
      await q.query(`alter table lineage_edges add column workspace_id uuid`);
      await q.query(`alter table lineage_edges add primary key (workspace_id, source_key, target_key, provider)`);
      await q.query(`create index lineage_edges_target on lineage_edges (workspace_id, target_key)`);
      await q.query(`create index lineage_edges_source on lineage_edges (workspace_id, source_key)`);
      const a = '00000000-0000-4000-8000-00000000000a';
      const b = '00000000-0000-4000-8000-00000000000b';
      const edge = (ws: string, target: string, first: string, last: string, n: number, columns: unknown[], uuid: string | null) =>
        q.query(
          `insert into lineage_edges (workspace_id, source_key, target_key, provider, first_seen_at, last_seen_at, observation_count, columns, column_lineage, target_uuid)
           values ($1, 'w.s.src', $2, 'execution', $3, $4, $5, $6::jsonb, 'derived', $7::uuid)`,
          [ws, target, first, last, n, JSON.stringify(columns), uuid],
        );
      await edge(a, 'w.s.t', '2026-01-01T00:00:00Z', '2026-01-05T00:00:00Z', 2, [{ source_column: 'old', target_column: 'x' }], '00000000-0000-4000-8000-000000000001');
      await edge(b, 'w.s.t', '2026-01-03T00:00:00Z', '2026-01-09T00:00:00Z', 3, [{ source_column: 'new', target_column: 'x' }], null);
      await edge(b, 'w.s.other', '2026-02-01T00:00:00Z', '2026-02-01T00:00:00Z', 1, [], null);
      for (const stmt of splitStatements(MIGRATION)) await q.query(stmt);
      const out = await q.query<Record<string, unknown>>(
        `select source_key, target_key, provider, first_seen_at, last_seen_at, observation_count::int as n, columns, target_uuid::text from lineage_edges order by target_key`,
      );
      const cols = await q.query<{ column_name: string }>(`select column_name from information_schema.columns where table_schema = 'eider' and table_name = 'lineage_edges'`);
      return { out, cols: cols.map((c) => c.column_name) };
    });
    expect(merged.cols).not.toContain('workspace_id');
    expect(merged.out).toEqual([
      expect.objectContaining({ target_key: 'w.s.other', n: 1 }),
      expect.objectContaining({
        target_key: 'w.s.t',
        n: 5,
        first_seen_at: new Date('2026-01-01T00:00:00Z'),
        last_seen_at: new Date('2026-01-09T00:00:00Z'),
        columns: [{ source_column: 'new', target_column: 'x' }],
        target_uuid: '00000000-0000-4000-8000-000000000001',
      }),
    ]);
  });
});
