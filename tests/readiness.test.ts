// Readiness names what a starting stack still waits for (issue 23), read from the database so every replica agrees;
// `eider api` without those settings keeps the spec's contract (database up, not draining).
import { describe, expect, it } from 'vitest';
import { startTestApi } from './support/api.ts';

describe('readiness', () => {
  it('is the spec contract by default: 200 with the replica id', async () => {
    const t = await startTestApi({ REPLICA_ID: 'api-7' });
    try {
      const r = await t.req('GET', '/api/readyz');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ready', replica_id: 'api-7' });
    } finally {
      await t.close();
    }
  });

  it('waits for the named agent and the sample data, saying so; a failed seed is visible; then the gate opens', async () => {
    const t = await startTestApi({ READY_AFTER_AGENT: 'bundled', SEED_SAMPLES: 'true' });
    try {
      const waiting = await t.req('GET', '/api/readyz');
      expect(waiting.status).toBe(503);
      expect(waiting.body.error).toBe('not_ready');
      expect(waiting.body.details.waiting_for).toEqual(['agent bundled to connect', 'the sample data (samples.trips) to be seeded']);

      await t.database.db.query(`insert into agents (name, status) values ('bundled', 'healthy')`);
      await t.database.db.query(
        `insert into seeds (name, status, error, attempts, retry_at) values ('samples', 'failed', 'Catalog Error: boom', 2, now() + interval '10 seconds')`,
      );
      const failed = await t.req('GET', '/api/readyz');
      expect(failed.status).toBe(503);
      expect(failed.body.message).toContain('seed attempt 2 failed (Catalog Error: boom); retrying at');

      await t.database.db.query(`update seeds set status = 'done', error = null where name = 'samples'`);
      expect((await t.req('GET', '/api/readyz')).status).toBe(200);
      // Once open it stays open: the agent going away does not take the replica out of a load balancer.
      await t.database.db.query(`update agents set status = 'unavailable' where name = 'bundled'`);
      expect((await t.req('GET', '/api/readyz')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
