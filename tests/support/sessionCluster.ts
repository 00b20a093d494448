// Two api replicas (r1, r2) on one PostgreSQL with SQL sessions on, and one agent that lists both, as real processes:
// the stage of the tests that move a SQL session's agent from one replica to the other (drain, death).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from './database.ts';
import { adminOn, agentHolder, eventually, exited, startClusterAgent, startReplica, type Cluster, type LoggedProcess, type Replica } from './processes.ts';
import { freePort } from '../../runtime/postgres.ts';

export interface SessionCluster {
  database: TestDatabase;
  /** The cluster's folder: the replicas' data and the agent's (`dir`/agent). */
  dir: string;
  replicas: Replica[];
  agent: LoggedProcess;
  /** The healthy agent's id. */
  agentId: string;
  /** A request to the replica at `url` with the admin's personal access token; `body` is sent as JSON. */
  req(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }>;
  /** The replica holding the agent while it is healthy. */
  holder(): Promise<Replica | undefined>;
  /** Whether a line of the agent's log names `id` and says `what`. */
  agentSaid(id: string, what: string): boolean;
  /** Kills every process (stopped ones too), drops the database and removes the folder. */
  stop(): Promise<void>;
}

/**
 * Starts the cluster for the test `name` (its secrets and folder are named after it): the replicas with a 4 s agent
 * presence TTL and a long heartbeat TTL (30 s, so the agent's own watchdog never ends a stopped replica's connection;
 * its kill or drain does), ready within `readyMs` each; the first admin and a personal access token; the agent
 * `agentName` with two lanes (with a session open and a query running, the next session's open waits on the agent),
 * healthy within a minute. A failing start stops what it started.
 */
export async function startSessionCluster(name: string, agentName: string, readyMs = 60_000): Promise<SessionCluster> {
  const database = await freshDatabase();
  const dir = mkdtempSync(join(tmpdir(), `eider-${name}-`));
  const replicas: Replica[] = [];
  let agent: LoggedProcess | undefined;
  let token = '';
  const stop = async () => {
    for (const p of [agent, ...replicas.map((r) => r.proc)]) {
      if (!p) continue;
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
      await exited(p.child);
    }
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  const req = async (url: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  };
  try {
    const cluster: Cluster = { databaseUrl: database.url, dir, bootstrapToken: `bootstrap-token-for-the-${name}-test`, internalSecret: `internal-secret-for-the-${name}-test` };
    for (const id of ['r1', 'r2']) {
      replicas.push(startReplica(cluster, id, await freePort(), { SQL_SESSIONS_ENABLED: 'true', AGENT_PRESENCE_TTL_S: '4', AGENT_HEARTBEAT_TTL_S: '30' }));
    }
    for (const r of replicas) {
      await eventually(`${r.id} ready`, async () => (await fetch(`${r.url}/api/readyz`)).ok, readyMs).catch((e: unknown) => {
        throw new Error(`${String(e)}\n${r.proc.logs().slice(-3000)}`);
      });
    }
    const { cookie } = await adminOn(replicas[0].url);
    const pat = await fetch(`${replicas[0].url}/api/me/pats`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ expires_in_days: 1 }) });
    token = ((await pat.json()) as { token: string }).token;
    const started = startClusterAgent(cluster, replicas, agentName, { MAX_CONCURRENCY_PROFILE: 'equal_2', SESSION_QUEUED_TIMEOUT_S: '600' });
    agent = started;
    const agentId = await eventually('a healthy agent', async () => {
      const a = await req(replicas[1].url, 'GET', '/api/agents');
      return (a.body as { id: string; status: string }[]).find((x) => x.status === 'healthy')?.id;
    }, 60_000);
    return {
      database,
      dir,
      replicas,
      agent: started,
      agentId,
      req,
      holder: () => agentHolder(database.db, agentId, replicas),
      agentSaid: (id, what) => started.logs().split('\n').some((l) => l.includes(id) && l.includes(what)),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
