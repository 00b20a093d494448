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

/**
 * What the test before left running stopped, then a PostgreSQL of the test's own (its data in `dir`/`name`), an api
 * over it started with `env`, and its admin signed in. `stopDb` stops that PostgreSQL; `restartDb` starts it again
 * on the same data and port.
 */
async function outageSite(name: string, env: Record<string, string> = {}) {
  await agent?.kill();
  if (agent) cleanupAgentDir(agent);
  agent = undefined;
  await t?.close();
  t = undefined;
  await pg?.stop();
  const port = await freePort();
  const data = join(dir, name);
  pg = await startEmbeddedPostgres(data, { port });
  const db = await connectDb({ url: pg.url, poolSize: 2 });
  const api = await startTestApi(env, { database: { url: pg.url, name: 'eider', db, drop: () => db.close() } });
  t = api;
  const admin = await setupAdmin(api);
  return {
    t: api,
    admin,
    db,
    stopDb: () => pg!.stop(),
    restartDb: async () => {
      pg = await startEmbeddedPostgres(data, { port });
    },
  };
}

describe('the database going away under a running api', () => {
  it('answers 503 unavailable while it is gone and serves again once it is back', { timeout: 120_000 }, async () => {
    const { t, admin, stopDb, restartDb } = await outageSite('pg');
    expect((await t.req('GET', '/api/agents', { as: admin })).status).toBe(200);

    await stopDb();
    for (const path of ['/api/agents', '/api/me', '/api/workspaces/default/queries']) {
      const r = await t.req('GET', path, { as: admin });
      expect(r.status, `${path}: ${r.text}`).toBe(503);
      expect(r.body).toMatchObject({ error: 'unavailable', message: 'the database is not reachable; try again shortly' });
    }
    const signIn = await t.req('POST', '/api/auth/login', { body: { email: 'admin@example.com', password: 'admin-password-1' } });
    expect(signIn.status, signIn.text).toBe(503);
    expect((await t.req('GET', '/api/readyz')).status).toBe(503);

    await restartDb();
    const back = await pollUntil(async () => (await t.req('GET', '/api/agents', { as: admin })).status, (s) => s === 200, 30_000, 200);
    expect(back).toBe(200);
    expect((await pollUntil(async () => (await t.req('GET', '/api/readyz')).status, (s) => s === 200, 30_000, 200))).toBe(200);
  });

  it('keeps a query outcome that arrives while the database is gone, and records it once the database is back', { timeout: 180_000 }, async () => {
    // A query runs on a real agent; the database goes away while it runs, and stays away well past the host's few
    // persistence attempts (about 2 s) after the agent reports done.
    // The agent's connection outlives the outage here (a long heartbeat TTL): what is tested is the outcome alone.
    const { t, admin, stopDb, restartDb } = await outageSite('pg2', { AGENT_BOOTSTRAP_TOKEN: 'outage-bootstrap-token', AGENT_HEARTBEAT_TTL_S: '300' });
    agent = await startAgent(t, { bootstrapToken: 'outage-bootstrap-token', name: 'outage-agent' });
    const agentId = await waitForHealthyAgent(t, admin, 'outage-agent', 60_000);
    const submitted = await t.req('POST', '/api/workspaces/default/queries', {
      as: admin,
      body: { sql: 'SELECT count(*) AS n FROM range(200000000) t(i) WHERE (i * 7) % 13 = 3', agent_id: agentId },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const id = submitted.body.id as string;
    await pollUntil(async () => (await t.req('GET', `/api/queries/${id}`, { as: admin })).body.status, (s) => s === 'running', 30_000, 100);
    await stopDb();
    const doneAt = await pollUntil(async () => agent!.logs().includes('query done'), (d) => d, 120_000, 100);
    expect(doneAt).toBe(true);
    // Gone for longer than the host's persistence attempts take.
    await new Promise((r) => setTimeout(r, 5_000));
    await restartDb();
    const ended = await pollUntil(async () => (await t.req('GET', `/api/queries/${id}`, { as: admin })).body, (q) => q?.status !== undefined && !['queued', 'running'].includes(q.status), 60_000, 200);
    expect(ended.status, JSON.stringify(ended)).toBe('done');
    expect(ended.row_count).toBe(1);
  });

  it('an outage longer than the heartbeat TTL: once the database is back the agent is still connected, what it runs is not failed, and it takes work', { timeout: 180_000 }, async () => {
    // As in production (a heartbeat every 10 s, a TTL of 30 s, the reaper every second), heartbeats are rare next to
    // the reaper's ticks: the first tick after the outage comes long before the agent's next heartbeat.
    const { t, admin, db, stopDb, restartDb } = await outageSite('pg3', {
      AGENT_BOOTSTRAP_TOKEN: 'outage-bootstrap-token-3',
      AGENT_HEARTBEAT_INTERVAL_S: '8',
      AGENT_HEARTBEAT_TTL_S: '10',
      ACTOR_REAPER_TICK_S: '0.2',
    });
    agent = await startAgent(t, { bootstrapToken: 'outage-bootstrap-token-3', name: 'outage-agent-3' });
    const agentId = await waitForHealthyAgent(t, admin, 'outage-agent-3', 60_000);
    const agentRow = async () => (await db.query<{ status: string; connection_id: string }>(`select status, connection_id from eider.agents where id = $1`, [agentId]))[0];
    const lastBeat = async () => (await db.query<{ at: string }>(`select last_heartbeat_at::text as at from eider.agents where id = $1`, [agentId]))[0].at;
    const before = await agentRow();
    const submit = async (sql: string) => {
      const r = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql, agent_id: agentId, timeout_s: 300 } });
      expect(r.status, r.text).toBe(202);
      return r.body.id as string;
    };
    const ended = (id: string) =>
      pollUntil(async () => (await t.req('GET', `/api/queries/${id}?wait_timeout_s=5`, { as: admin })).body, (q) => q?.status !== undefined && !['queued', 'running'].includes(q.status), 90_000, 100);
    // Runs through the outage and past it (cancelled at the end).
    const long = await submit('SELECT count(*) AS n FROM range(100000000000) t(i) WHERE (i * 7) % 13 = 3');
    await pollUntil(async () => (await t.req('GET', `/api/queries/${long}`, { as: admin })).body.status, (s) => s === 'running', 30_000, 100);

    // Right after a heartbeat landed (t0), the database goes away past the TTL, and comes back between two
    // heartbeats (the one of t0 + 8 s has given up retrying; the next comes at t0 + 16 s): the connection's deadline
    // (t0 + 10 s) passed while nothing could be written.
    const beat0 = await lastBeat();
    await pollUntil(lastBeat, (b) => b !== beat0, 20_000, 50);
    const t0 = Date.now();
    await stopDb();
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + 11_000 - Date.now())));
    await restartDb();
    await pollUntil(async () => (await t.req('GET', '/api/readyz')).status, (s) => s === 200, 30_000, 200);
    // The agent's next heartbeat has come (t0 + 16 s), and the reaper has had every chance to end the connection.
    await new Promise((r) => setTimeout(r, Math.max(3_000, t0 + 20_000 - Date.now())));
    const after = await agentRow();
    expect(after, JSON.stringify({ before, after })).toEqual(before);
    // What it runs was not failed as if the agent had gone (agent_disconnected): it still runs, or ended done.
    const q = (await t.req('GET', `/api/queries/${long}`, { as: admin })).body;
    expect(['running', 'done'], JSON.stringify(q)).toContain(q.status);
    expect((await t.req('POST', `/api/queries/${long}/cancel`, { as: admin })).status).toBe(202);
    expect((await ended(await submit('SELECT 2 AS two'))).status).toBe('done');
    // The agent process ran throughout (it was never restarted).
    expect(agent.child.exitCode).toBeNull();
  });

  it('keeps a SQL session’s answer that arrives while the database is gone: the session ends as the agent said once it is back', { timeout: 180_000 }, async () => {
    // A primary's failover under load (bench/chaos.ts): a session's answer to its open that came while no database
    // answered was dropped, and the session stayed opening, its client waiting, until the opening deadline.
    const { t, admin, stopDb, restartDb } = await outageSite('pg4', { AGENT_BOOTSTRAP_TOKEN: 'outage-bootstrap-token-4', AGENT_HEARTBEAT_TTL_S: '300', SQL_SESSIONS_ENABLED: 'true' });
    // One lane: while the query below runs, a session's open waits on the agent, and gives up after 8 s (while the
    // database is gone): the agent answers session_open_failed, with no query outcome ahead of it.
    agent = await startAgent(t, { bootstrapToken: 'outage-bootstrap-token-4', name: 'outage-agent-4', env: { MAX_CONCURRENCY_PROFILE: 'single', SESSION_QUEUED_TIMEOUT_S: '8' } });
    const agentId = await waitForHealthyAgent(t, admin, 'outage-agent-4', 60_000);
    const said = (id: string, what: string) => agent!.logs().split('\n').some((l) => l.includes(id) && l.includes(what));
    const submitted = await t.req('POST', '/api/workspaces/default/queries', {
      as: admin,
      body: { sql: 'SELECT count(*) AS n FROM range(100000000000) t(i) WHERE (i * 7) % 13 = 3', agent_id: agentId, timeout_s: 300 },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const id = submitted.body.id as string;
    // Admitted on the agent (it sizes a query before it asks for a lane, so `running` alone may come first).
    expect(await pollUntil(async () => said(id, 'query admitted'), (x) => x, 60_000, 100)).toBe(true);
    const opened = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, wait_timeout_s: 1, on_wait_timeout: 'continue' } });
    expect(opened.status, opened.text).toBe(202);
    const sessionId = opened.body.id as string;
    await stopDb();
    expect(said(sessionId, 'session open failed'), 'the agent answered before the database was gone').toBe(false);
    expect(await pollUntil(async () => said(sessionId, 'session open failed'), (d) => d, 60_000, 100)).toBe(true);
    await new Promise((r) => setTimeout(r, 5_000));
    await restartDb();
    const session = await pollUntil(async () => (await t.req('GET', `/api/sql/sessions/${sessionId}`, { as: admin })).body, (x) => x?.status !== undefined && x.status !== 'opening', 30_000, 200);
    expect(session, JSON.stringify(session)).toMatchObject({ status: 'failed', error: 'queued timeout' });
    // The query still runs; cancelled, its lane takes a session at once.
    expect((await t.req('POST', `/api/queries/${id}/cancel`, { as: admin })).status).toBe(202);
    const next = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, wait_timeout_s: 30 } });
    expect(next.status, next.text).toBe(201);
  });
});
