// SQL sessions across the agent's move to another replica, as real processes: two api replicas on one PostgreSQL and
// one agent that lists both. When the replica holding the agent dies, the agent drops its sessions with that
// connection and dials the other replica, which registers it long before anyone notices the old connection's end
// (a killed replica's connection ends only past its heartbeat TTL, and then fails nothing: it is no longer the
// agent's newest). A session still opening whose acknowledgement died with the replica opens on the new connection;
// a session that was open fails at once. bench/chaos.ts saw the first case as session opens answered 503
// compute_starting after 30 s; the second left sessions open that the agent no longer held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, exited, pollUntil } from './support/processes.ts';
import { startSessionCluster, type SessionCluster } from './support/sessionCluster.ts';

let cluster: SessionCluster;

beforeAll(async () => {
  cluster = await startSessionCluster('session-reconnect', 'reconnect-agent');
}, 120_000);

afterAll(() => cluster?.stop());

describe('SQL sessions when the replica holding the agent dies', () => {
  it('an open acknowledged to the dead replica opens on the new connection; an open session fails at once; new ones open', async () => {
    const { req, holder, agentSaid, replicas, agentId } = cluster;
    const owner = (await holder())!;
    expect(owner.id).toBe('r1');
    const other = replicas[1];
    const session = async (via: string) => {
      const r = await req(via, 'POST', '/api/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 1, on_wait_timeout: 'continue' });
      expect([201, 202], r.text).toContain(r.status);
      return r.body.id as string;
    };
    const statusOf = async (id: string) => (await req(other.url, 'GET', `/api/sql/sessions/${id}`)).body;

    // One session open on the agent (through r1): one lane.
    const wasOpen = await session(owner.url);
    expect((await pollUntil(() => statusOf(wasOpen), (s) => s.status === 'open', 30_000)).status).toBe('open');
    // A query in the other lane until its timeout, and a session whose open waits on the agent for a lane.
    const q = await req(owner.url, 'POST', '/api/workspaces/default/queries', { sql: 'SELECT count(*) AS n FROM range(100000000000) t(i) WHERE (i * 7) % 13 = 3', agent_id: agentId, timeout_s: 12 });
    expect(q.status, q.text).toBe(202);
    // Admitted on the agent (it sizes a query before it asks for a lane, so `running` alone may come first).
    expect(await pollUntil(async () => agentSaid(q.body.id, 'query admitted'), (x) => x, 60_000)).toBe(true);
    const opening = await session(owner.url);
    expect((await statusOf(opening)).status).toBe('opening');
    // r1 stops taking frames; the query's timeout frees the memory, and the agent opens the session and tells r1,
    // which never reads it: r1 is killed.
    await new Promise((r) => setTimeout(r, 1_000));
    owner.proc.child.kill('SIGSTOP');
    expect(await pollUntil(async () => agentSaid(opening, 'session opened'), (x) => x, 60_000)).toBe(true);
    owner.proc.child.kill('SIGKILL');
    await exited(owner.proc.child);
    const movedAt = Date.now();
    await eventually('the agent healthy on r2', async () => (await holder()) === other, 30_000);

    // The agent dropped both with r1's connection. The opening one is asked again on the new connection and opens;
    // the open one fails (agent_disconnect) instead of staying open on an agent that no longer holds it. Both well
    // within the 30 s a client waits (and r1's connection is not even noticed dead yet: its TTL is 30 s).
    const reopened = await pollUntil(() => statusOf(opening), (s) => s.status !== 'opening', 20_000);
    expect(reopened, JSON.stringify(reopened)).toMatchObject({ status: 'open' });
    const lost = await pollUntil(() => statusOf(wasOpen), (s) => s.status !== 'open', 20_000);
    expect(lost, JSON.stringify(lost)).toMatchObject({ status: 'failed', close_reason: 'agent_disconnect' });
    expect(Date.now() - movedAt).toBeLessThan(20_000);
    // The agent holds the reopened session: it answers its close.
    expect((await req(other.url, 'DELETE', `/api/sql/sessions/${opening}`)).status).toBe(204);
    expect((await pollUntil(() => statusOf(opening), (s) => s.status === 'closed', 20_000)).status).toBe('closed');
    // And a new session opens on it at once.
    const fresh = await req(other.url, 'POST', '/api/workspaces/default/sql/sessions', { agent_id: agentId, wait_timeout_s: 30 });
    expect(fresh.status, fresh.text).toBe(201);
  }, 240_000);
});
