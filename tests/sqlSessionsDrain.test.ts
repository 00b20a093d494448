// A SQL session opening while the replica holding its agent drains (SIGTERM), as real processes: two api replicas on
// one PostgreSQL and one agent that lists both. The draining replica closes the agent's socket (1012); the agent drops
// what it held with that connection and dials the other replica, which asks the still-opening session's open again.
// bench/chaos.ts saw such sessions never answered: their clients got 503 compute_starting after 30 s. The agent's
// open in flight found itself abandoned (its channel gone) and was letting the session go when the new channel asked
// again; that ask was taken as answered by the open in progress, which answered nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from './support/database.ts';
import { adminOn, agentHolder, eventually, exited, pollUntil, startClusterAgent, startReplica, type Cluster, type LoggedProcess, type Replica } from './support/processes.ts';
import { freePort } from '../runtime/postgres.ts';

const SECRET = 'internal-secret-for-the-session-drain-test';
const BOOT = 'bootstrap-token-for-the-session-drain-test';

let database: TestDatabase;
let dir: string;
const replicas: Replica[] = [];
let agent: LoggedProcess;
let token: string;
let agentId: string;

async function req(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

const holder = () => agentHolder(database.db, agentId, replicas);
const agentSaid = (id: string, what: string) => agent.logs().split('\n').some((l) => l.includes(id) && l.includes(what));

beforeAll(async () => {
  database = await freshDatabase();
  dir = mkdtempSync(join(tmpdir(), 'eider-session-drain-'));
  const cluster: Cluster = { databaseUrl: database.url, dir, bootstrapToken: BOOT, internalSecret: SECRET };
  for (const id of ['r1', 'r2']) {
    replicas.push(
      startReplica(cluster, id, await freePort(), {
        SQL_SESSIONS_ENABLED: 'true',
        AGENT_PRESENCE_TTL_S: '4',
        AGENT_HEARTBEAT_TTL_S: '30',
      }),
    );
  }
  for (const r of replicas) {
    await eventually(`${r.id} ready`, async () => (await fetch(`${r.url}/api/readyz`)).ok, 90_000).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${r.proc.logs().slice(-3000)}`);
    });
  }
  const { cookie } = await adminOn(replicas[0].url);
  const pat = await fetch(`${replicas[0].url}/api/me/pats`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ expires_in_days: 1 }) });
  token = ((await pat.json()) as { token: string }).token;
  agent = startClusterAgent(cluster, replicas, 'drain-agent', {
    // Two lanes: with a session open and a query running, the next session's open waits on the agent.
    MAX_CONCURRENCY_PROFILE: 'equal_2',
    SESSION_QUEUED_TIMEOUT_S: '600',
  });
  agentId = await eventually('a healthy agent', async () => {
    const a = await req(replicas[1].url, 'GET', '/api/agents');
    return (a.body as { id: string; status: string }[]).find((x) => x.status === 'healthy')?.id;
  }, 60_000);
}, 240_000);

afterAll(async () => {
  for (const p of [agent, ...replicas.map((r) => r.proc)]) {
    if (!p) continue;
    p.child.kill('SIGCONT');
    p.child.kill('SIGKILL');
    await exited(p.child);
  }
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a SQL session opening while the replica holding its agent drains', () => {
  it('opens on the agent’s new connection, well within the 30 s its client waits', async () => {
    const owner = (await holder())!;
    expect(owner.id).toBe('r1');
    const other = replicas[1];
    const session = async () => {
      const r = await req(owner.url, 'POST', '/api/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 1, on_wait_timeout: 'continue' });
      expect([201, 202], r.text).toContain(r.status);
      return r.body.id as string;
    };
    const statusOf = async (id: string) => (await req(other.url, 'GET', `/api/sql/sessions/${id}`)).body;

    // One session open on the agent (one lane), a query in the other until its timeout, and a session whose open
    // waits on the agent for a lane.
    const wasOpen = await session();
    expect((await pollUntil(() => statusOf(wasOpen), (x) => x.status === 'open', 30_000)).status).toBe('open');
    const q = await req(owner.url, 'POST', '/api/workspaces/default/queries', { sql: 'SELECT count(*) AS n FROM range(100000000000) t(i) WHERE (i * 7) % 13 = 3', agent_id: agentId, timeout_s: 60 });
    expect(q.status, q.text).toBe(202);
    expect(await pollUntil(async () => agentSaid(q.body.id, 'query admitted'), (x) => x, 60_000)).toBe(true);
    const opening = await session();
    expect((await statusOf(opening)).status).toBe('opening');
    // Its cleanup made slow: its scratch directory (named after the session) holds a marker, removed at once, and a
    // chain of nested directories, removed one level after another for seconds. In bench/chaos.ts the new channel's
    // ask came during the engine's close on a loaded agent; here it surely does.
    const scratch = join(dir, 'agent', 'tmp', opening);
    await mkdir(join(scratch, 'junk', ...Array.from({ length: 1000 }, () => 'd')), { recursive: true });
    await writeFile(join(scratch, 'marker'), '');

    // r1 drains: it closes the agent's socket with 1012. r2 is stopped meanwhile, so the agent's new connection (and
    // the ask again) waits until the session found itself abandoned: the drain dropped the open session, this one got
    // its lane, opened its engine, saw the channel it was asked on gone, and lets go (its scratch directory goes).
    other.proc.child.kill('SIGSTOP');
    const drainedAt = Date.now();
    owner.proc.child.kill('SIGTERM');
    await eventually('the abandoned open letting go', async () => !existsSync(join(scratch, 'marker')), 30_000).finally(() => other.proc.child.kill('SIGCONT'));
    await eventually('the agent healthy on r2', async () => (await holder()) === other, 30_000);

    // Asked again on the new connection, the session opens there; the open one failed with the old connection.
    const settled = await pollUntil(() => statusOf(opening), (x) => x.status !== 'opening', 25_000);
    expect(settled, `${JSON.stringify(settled)}\n${agent.logs().split('\n').filter((l) => l.includes(opening)).join('\n')}`).toMatchObject({ status: 'open' });
    expect(Date.now() - drainedAt).toBeLessThan(25_000);
    expect(agentSaid(opening, 'session open abandoned')).toBe(true);
    expect((await statusOf(wasOpen)).status).toBe('failed');
    await exited(owner.proc.child);
    // The agent holds it: it answers its close.
    expect((await req(other.url, 'DELETE', `/api/sql/sessions/${opening}`)).status).toBe(204);
    expect((await pollUntil(() => statusOf(opening), (x) => x.status === 'closed', 20_000)).status).toBe('closed');
  }, 180_000);
});
