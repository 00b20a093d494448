// A storage migration survives the death of the process running it: an `eider api` process is killed (SIGKILL)
// while it copies a catalog to a second S3-compatible endpoint (reached over a slow link, so the copy lasts);
// a new api process resumes the copy from the per-table checkpoints in PostgreSQL and completes it, with rows,
// snapshots and time travel unchanged; and once the (short) retention is over the old files are deleted.
import { describe, expect, it } from 'vitest';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { freshDatabase } from './support/database.ts';
import { adminOn, apiReady, exited, processSite, startEider, until } from './support/processes.ts';
import { stackEnv } from './support/api.ts';
import { startCatalogStack, startExtraStore } from './support/catalogStack.ts';
import { icebirdRows } from './support/icebergInspect.ts';
import { fillCatalog, fingerprint, sqlOn, startSlowProxy, waitMigration } from './support/migrations.ts';

const BOOT = 'migration-crash-bootstrap-token-0123';


async function keys(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (page.Contents ?? []).map((o) => o.Key!);
}

describe('a storage migration whose api process is killed mid-copy', () => {
  it('resumes in the next api process from its checkpoints, completes, and purges the old files after the retention', async () => {
    const database = await freshDatabase();
    const stack = await startCatalogStack({ db: database.db });
    const lake = await startExtraStore({ bucket: 'lake2' });
    const proxy = await startSlowProxy(lake.endpoint, 250);
    const site = await processSite(database.url, 'eider-migration-crash-');
    const { url } = site;
    const apiEnv = {
      ...site.apiEnv,
      AGENT_BOOTSTRAP_TOKEN: BOOT,
      ...(await stackEnv(stack)),
      ACTOR_REAPER_TICK_S: '0.2',
      MIGRATION_RUNNER_TICK_S: '0.2',
      // about ten seconds
      MIGRATION_RETENTION_DAYS: '0.00012',
    };
    let api = startEider('api', apiEnv);
    const agent = startEider('agent', site.agentEnv('mover', BOOT));
    try {
      await apiReady(url);
      const t = await adminOn(url);
      const as = { cookie: t.cookie };
      const agentId = await until(async () => {
        const list = (await t.req('GET', '/api/agents')).body as any[];
        return list.find((a) => a.name === 'mover' && a.status === 'healthy')?.id as string | undefined;
      }, 30_000, 'agent healthy');
      const backends = (await t.req('GET', '/api/admin/storage-backends')).body as Array<{ id: string; name: string }>;
      const bundledId = backends.find((b) => b.name === 'bundled')!.id;
      const target = await t.req('POST', '/api/admin/storage-backends', {
        body: { name: 'far-lake', kind: 'object_store', root_uri: 's3://lake2/far/', endpoint: proxy.endpoint, access_key_id: lake.accessKey, secret_access_key: lake.secretKey },
      });
      expect(target.status, target.text).toBe(201);
      const cat = await t.req('POST', '/api/catalogs', { body: { slug: 'crashcat', storage_backend_id: bundledId } });
      expect(cat.status, cat.text).toBe(201);
      await t.req('PUT', '/api/workspaces/default/catalogs/crashcat', { body: { make_default: false } });
      const sql = sqlOn(t, as, agentId, 'crashcat');
      await fillCatalog(sql);
      // events gets many more data files than the others (through the slow proxy it copies for a second or more), so
      // the kill below lands while some tables are copied and events is not.
      for (let i = 0; i < 12; i++) await sql.run(`INSERT INTO s.events SELECT range + ${10_000 + i * 100}, 1, 'x' FROM range(100)`);
      const before = await fingerprint(t, as, sql, 'crashcat');

      const started = await t.req('POST', `/api/catalogs/${cat.body.id}/migrations`, { body: { target_storage_backend_id: target.body.id } });
      expect(started.status, started.text).toBe(202);
      const id = started.body.id as string;
      // Kill the api once part of the data is at the target and part is not.
      await until(async () => {
        const [m] = await database.db.query<{ copied: number; left: number }>(
          `select count(*) filter (where state = 'copied')::int as copied, count(*) filter (where state in ('pending', 'copying'))::int as left
             from storage_migration_tables where migration_id = $1`,
          [id],
        );
        return m.copied >= 1 && m.left >= 1 ? true : undefined;
      }, 60_000, 'a table copied, others not yet');
      api.kill('SIGKILL');
      await exited(api);
      const [mid] = await database.db.query<{ status: string; phase: string }>(`select status, phase from storage_migrations where id = $1`, [id]);
      expect(mid).toEqual({ status: 'running', phase: 'copying' });
      const copiedBefore = await database.db.query<{ table_name: string }>(`select table_name from storage_migration_tables where migration_id = $1 and state = 'copied'`, [id]);

      api = startEider('api', apiEnv);
      await apiReady(url, 'api ready again');
      const done = await waitMigration(t, as, cat.body.id, id, (m) => ['completed', 'failed', 'cancelled'].includes(m.status), 120_000);
      expect(done, JSON.stringify(done)).toMatchObject({ status: 'completed', tables_total: 3, tables_done: 3 });
      expect(done.bytes_copied).toBe(done.bytes_total);
      // the old files are kept for the retention (about ten seconds)
      expect((await keys(stack.s3, stack.bucket, 'crashcat/')).length).toBeGreaterThan(0);
      const logs = (await t.req('GET', `/api/catalogs/${cat.body.id}/migrations/${id}/logs`)).body as Array<{ message: string }>;
      expect(logs.some((l) => /resum/.test(l.message))).toBe(true);
      // the tables copied before the crash were not copied again
      expect(logs.some((l) => new RegExp(`resuming: ${copiedBefore.length} of 3`).test(l.message))).toBe(true);
      const attempts = await database.db.query<{ event: string }>(`select event from actor_transitions where kind = 'storageMigration' and id = $1 order by seq`, [id]);
      expect(attempts.map((a) => a.event)).toContain('resume');

      expect(await fingerprint(t, as, sql, 'crashcat')).toEqual(before);
      for (const table of ['events', 'parts', 'evolved']) {
        const rows = await icebirdRows(stack, 'crashcat', 's', table, (b) => (b === 'lake2' ? lake.s3 : stack.s3));
        expect(rows.length).toBe(before.tables[table].n);
      }
      // The retention ends: the old files go.
      await until(async () => ((await keys(stack.s3, stack.bucket, 'crashcat/')).length === 0 ? true : undefined), 60_000, 'old files purged');
      await until(async () => {
        const [row] = await database.db.query<{ purged_at: Date | null; state: string }>(
          `select m.purged_at, a.state from storage_migrations m join actors a on a.kind = 'storageMigration' and a.id = m.id where m.id = $1`,
          [id],
        );
        return row.purged_at && row.state === 'completed' ? true : undefined;
      }, 30_000, 'migration completed after its purge');
      expect(await fingerprint(t, as, sql, 'crashcat')).toEqual(before);
    } finally {
      agent.kill('SIGTERM');
      api.kill('SIGTERM');
      await Promise.all([exited(agent), exited(api)]);
      await proxy.close();
      await lake.close();
      await stack.close();
      await database.drop();
      site.remove();
    }
  }, 300_000);
});
