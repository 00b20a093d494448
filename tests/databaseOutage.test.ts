// The api over a PostgreSQL server of its own that goes away and comes back (a crash, a restart, a failover): while
// it is gone requests answer 503 `unavailable` in the envelope, never 500, and readiness says not ready; once it is
// back the same api serves again without a restart.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDb } from '../runtime/db.ts';
import { freePort, startEmbeddedPostgres, type EmbeddedPg } from '../runtime/postgres.ts';
import { setupAdmin, startTestApi, type TestApi } from './support/api.ts';
import { pollUntil } from './support/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'eider-outage-'));
let pg: EmbeddedPg | undefined;
let t: TestApi | undefined;
afterAll(async () => {
  await t?.close();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the database going away under a running api', () => {
  it('answers 503 unavailable while it is gone and serves again once it is back', { timeout: 120_000 }, async () => {
    const port = await freePort();
    pg = await startEmbeddedPostgres(join(dir, 'pg'), { port });
    const db = await connectDb({ url: pg.url, poolSize: 2 });
    t = await startTestApi({}, { database: { url: pg.url, name: 'eider', db, drop: () => db.close() } });
    const admin = await setupAdmin(t);
    expect((await t.req('GET', '/api/agents', { as: admin })).status).toBe(200);

    await pg.stop();
    for (const path of ['/api/agents', '/api/me', '/api/workspaces/default/queries']) {
      const r = await t.req('GET', path, { as: admin });
      expect(r.status, `${path}: ${r.text}`).toBe(503);
      expect(r.body).toMatchObject({ error: 'unavailable', message: 'the database is not reachable; try again shortly' });
    }
    const signIn = await t.req('POST', '/api/auth/login', { body: { email: 'admin@example.com', password: 'admin-password-1' } });
    expect(signIn.status, signIn.text).toBe(503);
    expect((await t.req('GET', '/api/readyz')).status).toBe(503);

    pg = await startEmbeddedPostgres(join(dir, 'pg'), { port });
    const back = await pollUntil(async () => (await t!.req('GET', '/api/agents', { as: admin })).status, (s) => s === 200, 30_000, 200);
    expect(back).toBe(200);
    expect((await pollUntil(async () => (await t!.req('GET', '/api/readyz')).status, (s) => s === 200, 30_000, 200))).toBe(200);
  });
});
