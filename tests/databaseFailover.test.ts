// A PostgreSQL primary with a synchronous streaming standby behind one DATABASE_URL naming both hosts: the primary
// killed (kill -9) under an api that has acknowledged writes, the api answers 503 unavailable meanwhile, the standby
// promoted, and the same api process serves again without a restart, with every acknowledged write there and new
// writes going to the new primary.
import { describe, expect, it } from 'vitest';
import { adminOn, apiReady, exited, pollUntil, processSite, startEider } from './support/processes.ts';
import { primaryWithStandby } from './support/pgStandby.ts';
import { connectDb, isDatabaseUnavailable } from '../runtime/db.ts';

describe('database failover', () => {
  it('kill -9 of the primary, then promotion: 503 meanwhile, then served again with no acknowledged write lost', { timeout: 300_000 }, async () => {
    const pg = await primaryWithStandby();
    const site = await processSite(pg.url, 'eider-failover-api-');
    const api = startEider('api', { ...site.apiEnv, DATABASE_URL: pg.url });
    try {
      await apiReady(site.url);
      const admin = await adminOn(site.url);
      const acknowledged: string[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await admin.req('POST', '/api/workspaces', { body: { slug: `kept-${i}`, name: `Kept ${i}` } });
        expect(r.status).toBe(201);
        acknowledged.push(`kept-${i}`);
      }

      process.kill(pg.primaryPid(), 'SIGKILL');
      const during = await pollUntil(() => admin.req('GET', '/api/workspaces'), (r) => r.status === 503, 30_000, 100);
      expect(during.status).toBe(503);
      expect(during.body.error).toBe('unavailable');

      pg.promoteStandby();
      const after = await pollUntil(() => admin.req('GET', '/api/workspaces'), (r) => r.status === 200, 60_000, 200);
      expect(after.status).toBe(200);
      const slugs = (after.body as { slug: string }[]).map((w) => w.slug);
      for (const slug of acknowledged) expect(slugs).toContain(slug);
      // Writes go to the new primary, and readiness is back.
      expect((await admin.req('POST', '/api/workspaces', { body: { slug: 'after-failover', name: 'After' } })).status).toBe(201);
      expect((await fetch(`${site.url}/api/readyz`)).status).toBe(200);
    } finally {
      api.kill('SIGTERM');
      await exited(api);
      pg.stop();
      site.remove();
    }
  });

  it('statements waiting on the pool when the primary dies fail as unavailable (a 503), none as an unknown error', { timeout: 180_000 }, async () => {
    // Found by bench/chaos.ts: statements still queued on the old pool when a failover closed it failed with "database
    // operation interrupted" or "Connection closed", which the api answered 500.
    const pg = await primaryWithStandby();
    try {
      const db = await connectDb({ url: pg.url, poolSize: 2, maxOverflow: 1 });
      await db.query('create table writes (x int)');
      const unknown: string[] = [];
      let failures = 0;
      let commits = 0;
      let stop = false;
      const worker = async () => {
        while (!stop) {
          try {
            await db.tx(async (tx) => {
              await tx.query('insert into writes values (1)');
              await tx.query('select pg_sleep(0.01)');
            });
            commits++;
          } catch (e) {
            failures++;
            if (!isDatabaseUnavailable(e)) unknown.push(String((e as Error)?.message ?? e));
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      };
      // Many more callers than connections: most wait on the pool when the primary goes.
      const workers = Array.from({ length: 40 }, worker);
      // Under way: the workers have committed on the primary (and keep its pool full).
      await pollUntil(async () => commits, (n) => n >= 100, 30_000, 50);
      process.kill(pg.primaryPid(), 'SIGKILL');
      // Time itself must pass: an outage the waiting statements see before the standby takes over.
      await new Promise((r) => setTimeout(r, 300));
      pg.promoteStandby();
      await pollUntil(async () => db.query<{ n: number }>('select 1 as n').catch(() => null), (r) => r !== null, 60_000, 200);
      // The workers write through the new primary before they stop.
      const before = commits;
      await pollUntil(async () => commits, (n) => n >= before + 50, 30_000, 50);
      stop = true;
      await Promise.all(workers);
      expect(failures).toBeGreaterThan(0);
      expect(unknown).toEqual([]);
      await db.close();
    } finally {
      pg.stop();
    }
  });
});
