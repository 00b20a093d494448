// A SQL session opening while the replica holding its agent drains (SIGTERM), as real processes: two api replicas on
// one PostgreSQL and one agent that lists both. The draining replica closes the agent's socket (1012); the agent drops
// what it held with that connection and dials the other replica, which asks the still-opening session's open again.
// bench/chaos.ts saw such sessions never answered: their clients got 503 compute_starting after 30 s. The agent's
// open in flight found itself abandoned (its channel gone) and was letting the session go when the new channel asked
// again; that ask was taken as answered by the open in progress, which answered nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually, exited, pollUntil } from './support/processes.ts';
import { startSessionCluster, type SessionCluster } from './support/sessionCluster.ts';

let cluster: SessionCluster;

beforeAll(async () => {
  cluster = await startSessionCluster('session-drain', 'drain-agent', 90_000);
}, 240_000);

afterAll(() => cluster?.stop());

describe('a SQL session opening while the replica holding its agent drains', () => {
  it('opens on the agent’s new connection, well within the 30 s its client waits', async () => {
    const { req, holder, agentSaid, replicas, agentId, agent, dir } = cluster;
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
