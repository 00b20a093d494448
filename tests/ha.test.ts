// The HA cluster as real processes: three api replicas on one PostgreSQL and one agent that lists all three. Every
// public route works through every replica; the replica holding the agent can be killed (-9) or drained (SIGTERM)
// mid-query without losing the query; replicas refuse a duplicate REPLICA_ID and answer /internal only to peers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from './support/database.ts';
import { adminOn, agentHolder, eventually, pollUntil, runEider, startClusterAgent, startReplica, type Cluster, type LoggedProcess, type Replica } from './support/processes.ts';
import { freePort } from '../runtime/postgres.ts';
import { SETUP_TOKEN } from './support/api.ts';
import { DRAIN_BOUND_MS } from '../bin/api.ts';

const SECRET = 'internal-secret-for-the-ha-test';
const BOOT = 'bootstrap-token-for-the-ha-test';
// A killed replica is declared dead this long after its last heartbeat, and its agent's work fails unless the agent
// connected again by then: the agent held still for 2 s below must be back well within it on a loaded machine.
const PRESENCE_TTL_S = 6;
// Long enough to kill a replica while it runs, short enough for the suite.
const SLOW_SQL = 'SELECT count(*) AS n FROM range(1500000000) t(i) WHERE (i * 7) % 13 = 3';

let database: TestDatabase;
let dir: string;
let cluster: Cluster;
const replicas: Replica[] = [];
let agent: LoggedProcess;
let token: string;
let agentId: string;
/** Every status a replica answered with while the test ran: a 5xx fails the test at the end. */
const statuses: { replica: string; path: string; status: number }[] = [];

async function req(r: Replica, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(r.url + path, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  statuses.push({ replica: r.id, path, status: res.status });
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const replica = (id: string, port: number) => startReplica(cluster, id, port, { AGENT_PRESENCE_TTL_S: String(PRESENCE_TTL_S), AGENT_HEARTBEAT_TTL_S: '3' });

/** Starts the killed `owner` again under its own id and port (its dead row is taken over), in its place. */
async function restart(owner: Replica) {
  const again = replica(owner.id, owner.port);
  replicas[replicas.indexOf(owner)] = again;
  await until(`${owner.id} ready again`, async () => (await fetch(`${again.url}/api/readyz`)).ok, 60_000);
}

const until = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000) => eventually(what, probe, timeoutMs);

const live = () => replicas.filter((r) => r.proc.child.exitCode === null && r.proc.child.signalCode === null);
const holder = () => agentHolder(database.db, agentId, replicas);

async function submit(r: Replica, sql: string) {
  const s = await req(r, 'POST', '/api/workspaces/default/queries', { sql, agent_id: agentId });
  expect(s.status, JSON.stringify(s.body)).toBe(202);
  return s.body.id as string;
}

/** Long-polls the query until it ends (at most `seconds`); returns its last state either way. */
const waitDone = (r: Replica, id: string, seconds = 60) =>
  pollUntil(async () => (await req(r, 'GET', `/api/queries/${id}?wait_timeout_s=10`)).body, (q) => !['queued', 'running'].includes(q.status), seconds * 1000);

beforeAll(async () => {
  database = await freshDatabase();
  dir = mkdtempSync(join(tmpdir(), 'eider-ha-'));
  cluster = { databaseUrl: database.url, dir, bootstrapToken: BOOT, internalSecret: SECRET };
  for (const id of ['r1', 'r2', 'r3']) replicas.push(replica(id, await freePort()));
  for (const r of replicas) await until(`${r.id} ready`, async () => (await fetch(`${r.url}/api/readyz`)).ok, 60_000);
  const { cookie } = await adminOn(replicas[0].url);
  const pat = await fetch(`${replicas[1].url}/api/me/pats`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ expires_in_days: 1 }) });
  token = ((await pat.json()) as { token: string }).token;
  agent = startClusterAgent(cluster, replicas, 'ha-agent');
  agentId = await until('a healthy agent', async () => {
    const a = await req(replicas[2], 'GET', '/api/agents');
    return (a.body as { id: string; status: string }[]).find((x) => x.status === 'healthy')?.id;
  });
}, 120_000);

afterAll(async () => {
  agent?.child.kill('SIGKILL');
  for (const r of replicas) r.proc.child.kill('SIGKILL');
  await Promise.all([agent?.exited, ...replicas.map((r) => r.proc.exited)]);
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('HA replicas', () => {
  it('submit, wait, rows, profile and cancel work through every replica, whichever holds the agent', async () => {
    const owner = await holder();
    expect(owner).toBeDefined();
    for (const r of replicas) {
      const id = await submit(r, `SELECT 40 + ${replicas.indexOf(r)} + 2 AS answer`);
      const done = await waitDone(r, id);
      expect(done.status).toBe('done');
      for (const reader of replicas) {
        const rows = await req(reader, 'GET', `/api/queries/${id}/rows`);
        expect(rows.status, `${reader.id} reading a result of an agent held by ${owner!.id}`).toBe(200);
        expect(rows.body.rows).toEqual([{ answer: 42 + replicas.indexOf(r) }]);
        expect((await req(reader, 'GET', `/api/queries/${id}/profile`)).status).toBeLessThan(500);
      }
      const slow = await submit(r, SLOW_SQL);
      await until('the slow query running', async () => (await req(r, 'GET', `/api/queries/${slow}`)).body.status === 'running');
      const c = await req(r, 'POST', `/api/queries/${slow}/cancel`);
      expect(c.status).toBeLessThan(300);
      const ended = await waitDone(r, slow);
      expect(ended.status).toBe('cancelled');
    }
  }, 180_000);

  it('a sorted and filtered view and an export of a result work through every replica, streamed from the holder', async () => {
    const owner = await holder();
    const id = await submit(replicas[0], 'SELECT range AS i, range % 3 AS m FROM range(100000)');
    expect((await waitDone(replicas[0], id)).status).toBe('done');
    const view = `order_by=${encodeURIComponent('[{"column":"i","dir":"desc"}]')}&filter=${encodeURIComponent('[{"column":"m","op":"=","value":"1"}]')}`;
    for (const reader of replicas) {
      const rows = await req(reader, 'GET', `/api/queries/${id}/rows?limit=2&${view}`);
      expect(rows.status, `${reader.id} reading a view of a result of an agent held by ${owner?.id}`).toBe(200);
      expect({ total: rows.body.total, rows: rows.body.rows }).toEqual({ total: 33_333, rows: [{ i: 99_997, m: 1 }, { i: 99_994, m: 1 }] });
      const bad = await req(reader, 'GET', `/api/queries/${id}/rows?filter=${encodeURIComponent('[{"column":"i","op":">","value":"x"}]')}`);
      expect({ status: bad.status, error: bad.body.error }).toEqual({ status: 400, error: 'invalid_filter' });
      const csv = await fetch(`${reader.url}/api/queries/${id}/export?format=csv&${view}`, { headers: { authorization: `Bearer ${token}` } });
      expect(csv.status).toBe(200);
      const lines = (await csv.text()).trim().split('\n');
      expect([lines.length, lines[0], lines[1]]).toEqual([33_334, 'i,m', '99997,1']);
    }
  }, 120_000);

  it('/internal answers only a peer that presents the secret; everyone else gets the unknown-path 404', async () => {
    const r = replicas[0];
    for (const headers of [{}, { 'x-internal-secret': 'wrong' }] as Record<string, string>[]) {
      const res = await fetch(`${r.url}/internal/agents/${agentId}/close`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"code":1000,"reason":"x"}' });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: string }).error).toBe('not_found');
    }
    const bad = await fetch(`${r.url}/internal/agents/${agentId}/frames`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-internal-secret': SECRET },
      body: JSON.stringify({ frame: { type: 'auth_ok', payload: {} } }),
    });
    expect(bad.status).toBe(400);
  });

  it('a second process with a live REPLICA_ID refuses to start with one line', async () => {
    const dup = runEider(['api'], {
      DATABASE_URL: database.url,
      PORT: String(await freePort()),
      DATA_DIR: join(dir, 'dup'),
      REPLICA_ID: 'r2',
      SETUP_TOKEN,
      INTERNAL_API_SECRET: SECRET,
      AGENT_PRESENCE_TTL_S: String(PRESENCE_TTL_S),
      LOG_LEVEL: 'silent',
    });
    expect(await dup.exited).toBe(2);
    const lines = dup.logs().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('REPLICA_ID r2 is held by a live replica');
  }, 60_000);

  it('kill -9 of the replica holding the agent mid-query: the agent moves, the query ends, nothing stays running', async () => {
    const owner = (await holder())!;
    const other = live().find((r) => r !== owner)!;
    const id = await submit(other, SLOW_SQL);
    await until('the query running', async () => (await req(other, 'GET', `/api/queries/${id}`)).body.status === 'running');
    const killedAt = Date.now();
    owner.proc.child.kill('SIGKILL');
    await owner.proc.exited;
    const moved = await until('the agent healthy on another replica', async () => {
      const h = await holder();
      return h && h !== owner ? h : undefined;
    }, PRESENCE_TTL_S * 1000 + 20_000);
    const failoverMs = Date.now() - killedAt;
    expect(failoverMs).toBeLessThan(PRESENCE_TTL_S * 1000 + 20_000);
    const ended = await waitDone(other, id, 120);
    expect(ended.status).toBe('done');
    expect(ended.row_count).toBe(1);
    // Rows through the replica that now holds the agent, and through one that does not.
    for (const r of live()) expect((await req(r, 'GET', `/api/queries/${id}/rows`)).status).toBe(200);
    const stuck = await database.db.query(`select id from eider.queries where status in ('queued', 'running')`);
    expect(stuck).toEqual([]);
    expect(moved.id).not.toBe(owner.id);
    // The killed replica comes back under its own id (its dead row is taken over) and serves again.
    await restart(owner);
  }, 240_000);

  it('kill -9 of the replica holding the agent, then a cancel through another: running until the agent, back on a replica, confirms it', async () => {
    const owner = (await holder())!;
    const other = live().find((r) => r !== owner)!;
    // Far longer than the test: only the cancel can end it soon.
    const s = await req(other, 'POST', '/api/workspaces/default/queries', { sql: 'SELECT count(*) FROM range(100000000000)', agent_id: agentId, timeout_s: 300 });
    expect(s.status, JSON.stringify(s.body)).toBe(202);
    const id = s.body.id as string;
    await until('the query running', async () => (await req(other, 'GET', `/api/queries/${id}`)).body.status === 'running');
    owner.proc.child.kill('SIGKILL');
    await owner.proc.exited;
    const cancelledAt = Date.now();
    const c = await req(other, 'POST', `/api/queries/${id}/cancel`);
    expect(c.status).toBe(202);
    // The agent cannot be told yet: not cancelled (it still runs), and the cancel waits for it.
    expect(c.body.status).toBe('running');
    const ended = await waitDone(other, id, 60);
    expect(ended.status).toBe('cancelled');
    // The agent stopped it itself (its query_failed cancelled), long before its 300 s timeout.
    expect(Date.now() - cancelledAt).toBeLessThan(PRESENCE_TTL_S * 1000 + 30_000);
    expect(agent.logs()).toMatch(new RegExp(`"queryId":"${id}"[^\\n]*"code":"cancelled"`));
    await restart(owner);
  }, 240_000);

  it('kill -9 of the replica holding the agent, then a submit through another before the agent is back: it waits for the agent and runs, not agent_unreachable', async () => {
    const owner = (await holder())!;
    const other = live().find((r) => r !== owner)!;
    // The agent is held still for 2 s so that the submits surely come before it reconnects (it redials in 0.25-0.5 s).
    agent.child.kill('SIGSTOP');
    owner.proc.child.kill('SIGKILL');
    await owner.proc.exited;
    const killedAt = Date.now();
    setTimeout(() => agent.child.kill('SIGCONT'), 2_000);
    // The registry still names the dead replica as the agent's holder (its heartbeat is fresh): the first submit
    // passes the agent check and its dispatch finds no socket; the second may come after that too.
    const sentMs = Date.now() - killedAt;
    const ids = [await submit(other, 'SELECT 42 AS answer')];
    ids.push(await submit(other, 'SELECT 43 AS answer'));
    for (const [i, id] of ids.entries()) {
      const ended = await waitDone(other, id, 60);
      expect(ended.status, JSON.stringify(ended)).toBe('done');
      expect((await req(other, 'GET', `/api/queries/${id}/rows`)).body.rows).toEqual([{ answer: 42 + i }]);
    }
    // Sent while the agent could not be back yet.
    expect(sentMs).toBeLessThan(2_000);
    await restart(owner);
  }, 240_000);

  it('SIGTERM drains within its bound: the holder hands the agent over, a long-poll answers, keep-alive clients do not hold it, the query still ends done', async () => {
    const owner = (await holder())!;
    const other = live().find((r) => r !== owner)!;
    const id = await submit(other, SLOW_SQL);
    await until('the query running', async () => (await req(other, 'GET', `/api/queries/${id}`)).body.status === 'running');
    // Clients of the draining replica: a long-poll in flight (up to 60 s), and a keep-alive client that keeps asking
    // on its open connections until the replica stops answering.
    const keepAlive = new HttpAgent({ keepAlive: true, maxSockets: 2 });
    const refusals: { status: number; body: string }[] = [];
    const get = (path: string) =>
      new Promise<number>((res, rej) => {
        const r = httpRequest(`${owner.url}${path}`, { agent: keepAlive, headers: { authorization: `Bearer ${token}` } }, (m) => {
          let body = '';
          m.on('data', (d) => (body += d));
          m.on('end', () => {
            if (m.statusCode !== 200) refusals.push({ status: m.statusCode ?? 0, body });
            res(m.statusCode ?? 0);
          });
        });
        r.on('error', rej);
        r.end();
      });
    expect(await get('/api/readyz')).toBe(200);
    const longPoll = req(owner, 'GET', `/api/queries/${id}?wait_timeout_s=60`);
    let polling = true;
    const chatter = (async () => {
      while (polling) {
        await get('/api/readyz').catch(() => undefined);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // The agent is held still while the replica drains, so the hand-over (and with it the drain) waits for it: the
    // window in which the draining replica still answers, refusing, stays open however loaded the machine is (on a
    // busy CI machine the whole drain once passed between two of the chatter's requests).
    agent.child.kill('SIGSTOP');
    const resume = setTimeout(() => agent.child.kill('SIGCONT'), 5_000);
    const termAt = Date.now();
    owner.proc.child.kill('SIGTERM');
    const answered = await longPoll;
    const answeredMs = Date.now() - termAt;
    expect(answered.status).toBe(200);
    expect(answered.body.id).toBe(id);
    expect(answeredMs).toBeLessThan(10_000);
    // Draining by now (the long-poll was answered by it): readiness says so.
    expect(await get('/api/readyz')).toBe(503);
    clearTimeout(resume);
    agent.child.kill('SIGCONT');
    expect(await owner.proc.exited).toBe(0);
    const exitMs = Date.now() - termAt;
    polling = false;
    await chatter;
    keepAlive.destroy();
    expect(exitMs).toBeLessThan(DRAIN_BOUND_MS);
    // The draining replica said it is not ready, and every refusal it answered was the error envelope (not
    // Fastify's own {"error":"Service Unavailable",…,"statusCode":503}).
    expect(refusals.length).toBeGreaterThan(0);
    for (const r of refusals) {
      expect(r.status).toBe(503);
      const body = JSON.parse(r.body);
      expect(body).toMatchObject({ error: expect.stringMatching(/^(not_ready|unavailable)$/), message: expect.any(String) });
      expect(body).not.toHaveProperty('statusCode');
    }
    expect(owner.proc.logs()).not.toContain('drain bound passed');
    for (const failure of ['drain not recorded', 'actor effects abandoned', 'actor failed under supervision']) expect(owner.proc.logs()).not.toContain(failure);
    await until('the agent healthy on another replica', async () => {
      const h = await holder();
      return h && h !== owner ? h : undefined;
    });
    expect((await waitDone(other, id, 120)).status).toBe('done');
    const [conn] = await database.db.query<{ state: string }>(
      `select a.state from eider.actors a where a.kind = 'agentConnection' and a.snapshot->'context'->>'replicaUrl' = $1 order by a.created_at desc limit 1`,
      [owner.url],
    );
    expect(conn.state).toBe('unavailable');
  }, 240_000);

  it('operators see the cluster: replicas with what they own, pending effects, actors by kind and state, paged', async () => {
    const r = live()[0];
    const cluster = await req(r, 'GET', '/api/admin/cluster');
    expect(cluster.status).toBe(200);
    const ids = (cluster.body.replicas as { id: string; live: boolean }[]).filter((x) => x.live).map((x) => x.id).sort();
    expect(ids).toEqual(live().map((x) => x.id).sort());
    expect(cluster.body.pending_effects.count).toBeGreaterThanOrEqual(0);
    const conns = await req(r, 'GET', '/api/admin/actors?kind=agentConnection&live=true');
    expect(conns.body.items.map((x: { state: string }) => x.state)).toContain('healthy');
    const first = await req(r, 'GET', '/api/admin/actors?kind=query&limit=2');
    expect(first.body.items).toHaveLength(2);
    const next = await req(r, 'GET', `/api/admin/actors?kind=query&limit=2&cursor=${first.body.cursor}`);
    expect(first.body.has_more).toBe(true);
    expect(next.body.items.map((x: { id: string }) => x.id)).not.toContain(first.body.items[1].id);
    expect((await req(r, 'GET', '/api/admin/actors?cursor=bm9wZQ')).status).toBe(400);
    expect((await req(r, 'GET', '/api/admin/actors?kind=nope')).status).toBe(404);
  });

  it('no replica answered a 5xx at any point', () => {
    expect(statuses.filter((s) => s.status >= 500)).toEqual([]);
  });
});
