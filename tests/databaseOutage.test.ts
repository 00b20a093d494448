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
import { cleanupAgentDir, startAgent, waitForHealthyAgent, type TestAgent } from './support/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'eider-outage-'));
let pg: EmbeddedPg | undefined;
let t: TestApi | undefined;
let agent: TestAgent | undefined;
afterAll(async () => {
  await agent?.kill();
  if (agent) cleanupAgentDir(agent);
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

  it('keeps a query outcome that arrives while the database is gone, and records it once the database is back', { timeout: 180_000 }, async () => {
    // A query runs on a real agent; the database goes away while it runs, and stays away well past the host's few
    // persistence attempts (about 2 s) after the agent reports done.
    await t?.close();
    t = undefined;
    await pg?.stop();
    const port = await freePort();
    pg = await startEmbeddedPostgres(join(dir, 'pg2'), { port });
    const db = await connectDb({ url: pg.url, poolSize: 2 });
    // The agent's connection outlives the outage here (a long heartbeat TTL): what is tested is the outcome alone.
    t = await startTestApi({ AGENT_BOOTSTRAP_TOKEN: 'outage-bootstrap-token', AGENT_HEARTBEAT_TTL_S: '300' }, { database: { url: pg.url, name: 'eider', db, drop: () => db.close() } });
    const admin = await setupAdmin(t);
    agent = await startAgent(t, { bootstrapToken: 'outage-bootstrap-token', name: 'outage-agent' });
    const agentId = await waitForHealthyAgent(t, admin, 'outage-agent', 60_000);
    const submitted = await t.req('POST', '/api/workspaces/default/queries', {
      as: admin,
      body: { sql: 'SELECT count(*) AS n FROM range(200000000) t(i) WHERE (i * 7) % 13 = 3', agent_id: agentId },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const id = submitted.body.id as string;
    await pollUntil(async () => (await t!.req('GET', `/api/queries/${id}`, { as: admin })).body.status, (s) => s === 'running', 30_000, 100);
    await pg!.stop();
    const doneAt = await pollUntil(async () => agent!.logs().includes('query done'), (d) => d, 120_000, 100);
    expect(doneAt).toBe(true);
    // Gone for longer than the host's persistence attempts take.
    await new Promise((r) => setTimeout(r, 5_000));
    pg = await startEmbeddedPostgres(join(dir, 'pg2'), { port });
    const ended = await pollUntil(async () => (await t!.req('GET', `/api/queries/${id}`, { as: admin })).body, (q) => q?.status !== undefined && !['queued', 'running'].includes(q.status), 60_000, 200);
    expect(ended.status, JSON.stringify(ended)).toBe('done');
    expect(ended.row_count).toBe(1);
  });
});
