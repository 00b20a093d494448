// Elastic compute on the real stack with the `process` provider: agents are real `eider agent` processes the api
// starts on demand, dialling home over a real WebSocket. Scale from zero on a session and on a query, idle
// termination that really ends the process, restart by naming, the dial-home deadline with a provider that starts
// nothing (`null`), and an api killed with SIGKILL while an agent is being provisioned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setupAdmin, startTestApi, startTestStack, type Caller, type TestApi } from './support/api.ts';
import { elasticCompute } from '../actors/elasticCompute.ts';
import { freshDatabase } from './support/database.ts';
import { adminOn, apiReady, eventually, exited, processSite, processRunning, startEider } from './support/processes.ts';
import { processProvider } from '../runtime/compute/processProvider.ts';

const until = <T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 60_000) => eventually(what, probe, timeoutMs);

/** The process exists and has not exited: a zombie (exited, not yet reaped by its parent) counts as gone. */

/** Every agent process a provider root still holds is stopped (nothing outlives the test). */
async function stopLeftovers(root: string) {
  const p = processProvider({ root, command: ['true'], stopGraceMs: 2_000 });
  for (const i of await p.list()) await p.terminate(i.providerRef);
}

describe('elastic compute with the process provider', () => {
  let t: TestApi;
  let admin: Caller;
  const agents = async () => (await t.req('GET', '/api/agents', { as: admin })).body as any[];
  const waitQuery = async (id: string) => (await t.req('GET', `/api/queries/${id}?wait_timeout_s=60`, { as: admin })).body;

  beforeAll(async () => {
    // With the catalog service and object store: session statements carry the workspace's catalogs.
    t = await startTestStack({
      ELASTIC_COMPUTE_ENABLED: 'true',
      ELASTIC_PROVIDER: 'process',
      ELASTIC_IDLE_TIMEOUT_S: '3',
      ELASTIC_REAPER_TICK_S: '0.5',
      ELASTIC_PROVISIONING_DEADLINE_S: '60',
      SQL_SESSIONS_ENABLED: 'true',
      AGENT_HEARTBEAT_INTERVAL_S: '0.5',
      AGENT_HEARTBEAT_TTL_S: '3',
      ACTOR_REAPER_TICK_S: '0.2',
      SQL_SESSION_REAPER_TICK_S: '0.2',
      INTERNAL_API_SECRET: 'internal-secret-for-the-elastic-test-0123456789',
    });
    admin = await setupAdmin(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });
  afterAll(async () => {
    if (t) await stopLeftovers(join(t.dataDir, 'elastic'));
  });

  it('compute-options lists the sizes with their cost', async () => {
    const r = await t.req('GET', '/api/admin/agents/compute-options', { as: admin });
    expect(r.status).toBe(200);
    expect(r.body.map((o: any) => o.size)).toEqual(['small', 'medium', 'large', 'xlarge']);
    expect(r.body[1]).toEqual({ size: 'medium', cpu: 2, memory_gb: 4, hourly_cost: null, currency: 'USD' });
  });

  it('a session naming no agent is pending while compute starts, then opens on the agent that dialled home', async () => {
    expect((await agents()).filter((a) => a.elastic)).toEqual([]);
    // wait_timeout_s 0: answered at once, whatever the agent's start takes (about a second here, sometimes less).
    const r = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { wait_timeout_s: 0, on_wait_timeout: 'continue' } });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({ status: 'pending', agent_id: null });
    const opened = await until('session open', async () => {
      const s = (await t.req('GET', `/api/sql/sessions/${r.body.id}`, { as: admin })).body;
      expect(s.status).not.toBe('failed');
      return s.status === 'open' ? s : undefined;
    });
    const [agent] = (await agents()).filter((a) => a.elastic);
    expect(opened.agent_id).toBe(agent.id);
    expect(agent).toMatchObject({ status: 'healthy', elastic: { state: 'running', provider: 'process', size: 'medium' } });
    expect(agent.elastic.provisioned_at).toEqual(expect.any(String));
    const st = await t.req('POST', `/api/sql/sessions/${r.body.id}/statements`, { as: admin, body: { sql: 'SELECT 7 AS seven' } });
    const ran = await waitQuery(st.body.id);
    expect(ran.status, JSON.stringify(ran)).toBe('done');
    // With ELASTIC_AGENT_CATALOG_BASE_URL set, an elastic agent's dispatches name that catalog address; any other
    // agent's keep the api's own (unset here: none is replaced).
    const e = t.api.ctx.elastic!;
    const withUrl = elasticCompute({ db: t.api.ctx.db, settings: { ...e.settings, agentCatalogUrl: 'http://catalog.internal:8181' }, provider: e.provider, agentEnv: async () => ({}), link: t.api.ctx.link, logger: t.api.ctx.logger });
    expect(await withUrl.catalogUrlFor(agent.id)).toBe('http://catalog.internal:8181');
    expect(await withUrl.catalogUrlFor('00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await e.catalogUrlFor(agent.id)).toBeNull();
    expect((await t.req('DELETE', `/api/sql/sessions/${r.body.id}`, { as: admin })).status).toBe(204);
  }, 90_000);

  it('a query naming no agent goes to the running pool agent; idle, it is terminated and its process ends', async () => {
    const [agent] = (await agents()).filter((a) => a.elastic);
    const q = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql: 'SELECT 42 AS answer' } });
    expect(q.status, q.text).toBe(202);
    expect(q.body.agent_id).toBe(agent.id);
    expect((await waitQuery(q.body.id)).status).toBe('done');
    const rows = await t.req('GET', `/api/queries/${q.body.id}/rows`, { as: admin });
    expect(rows.body.rows).toEqual([{ answer: 42 }]);

    const [instance] = await processProvider({ root: join(t.dataDir, 'elastic'), command: ['true'] }).list();
    expect(instance.running).toBe(true);
    const pid = Number(readFileSync(join(t.dataDir, 'elastic', instance.elasticId, 'agent.pid'), 'utf8'));
    // ELASTIC_IDLE_TIMEOUT_S=3 without work: the reaper terminates it and the process is gone.
    const ended = await until('idle termination', async () => {
      const a = (await agents()).find((x) => x.id === agent.id);
      return a?.elastic?.state === 'terminated' ? a : undefined;
    }, 30_000);
    expect(ended.elastic.reason).toBe('idle');
    expect(ended.status).toBe('unavailable');
    expect(processRunning(pid)).toBe(false);
    expect(await processProvider({ root: join(t.dataDir, 'elastic'), command: ['true'] }).list()).toEqual([]);
    const metrics = await t.req('GET', '/api/metrics', { as: admin });
    expect(metrics.text).toMatch(/eider_elastic_agents_reaped\{reason="idle"\} 1/);
    expect(metrics.text).toMatch(/eider_elastic_agents_provisioned 1/);
  }, 90_000);

  it('naming the terminated agent starts it again: the query waits queued without an agent, then runs on it', async () => {
    const [agent] = (await agents()).filter((a) => a.elastic);
    const q = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql: 'SELECT 1 AS one', agent_id: agent.id } });
    expect(q.status, q.text).toBe(202);
    expect(q.body).toMatchObject({ status: 'queued', agent_id: null });
    const done = await waitQuery(q.body.id);
    expect(done).toMatchObject({ status: 'done', agent_id: agent.id });
    const again = (await agents()).find((a) => a.id === agent.id);
    expect(again.elastic.state).toBe('running');
    // A running elastic agent is not restarted; terminating it by hand records the operator as the reason.
    expect((await t.req('POST', `/api/admin/agents/${agent.id}/restart`, { as: admin })).status).toBe(409);
    const term = await t.req('POST', `/api/admin/agents/${agent.id}/terminate`, { as: admin });
    expect(term.status, term.text).toBe(202);
    const ended = await until('operator termination', async () => {
      const a = (await agents()).find((x) => x.id === agent.id);
      return a?.elastic?.state === 'terminated' ? a : undefined;
    }, 30_000);
    expect(ended.elastic.reason).toBe('operator');
  }, 120_000);

  it('the reaper terminates an instance the provider runs without a live agent row (a leak)', async () => {
    const root = join(t.dataDir, 'elastic');
    const leakId = '00000000-0000-4000-8000-00000000beef';
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(join(root, leakId), { recursive: true });
    // Any process whose command line names `agent`, as the provider's own do.
    const leak = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'agent'], { detached: true, stdio: 'ignore' });
    writeFileSync(join(root, leakId, 'agent.pid'), String(leak.pid));
    await until('leak terminated', async () => !processRunning(leak.pid!) && !(await processProvider({ root, command: ['true'] }).list()).some((i) => i.elasticId === leakId), 30_000);
  }, 60_000);

  it('an operator starts an elastic agent of a size; it serves work that names it', async () => {
    const bad = await t.req('POST', '/api/admin/agents/elastic', { as: admin, body: { size: 'huge' } });
    expect(bad.status).toBe(422);
    const r = await t.req('POST', '/api/admin/agents/elastic', { as: admin, body: { size: 'small', name: 'by-hand' } });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({ name: 'by-hand', status: 'unavailable', elastic: { state: 'provisioning', size: 'small', provider: 'process' } });
    await until('by-hand healthy', async () => (await agents()).find((a) => a.id === r.body.id && a.status === 'healthy'));
    const q = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql: 'SELECT 2 AS two', agent_id: r.body.id } });
    expect(q.body.agent_id).toBe(r.body.id);
    expect((await waitQuery(q.body.id)).status).toBe('done');
    await t.req('POST', `/api/admin/agents/${r.body.id}/terminate`, { as: admin });
    await until('by-hand terminated', async () => (await agents()).find((a) => a.id === r.body.id && a.elastic.state === 'terminated'), 30_000);
  }, 90_000);
});

describe('elastic compute that never dials home', () => {
  it('fails the agent at its provisioning deadline, and the query waiting for it with a clear error', async () => {
    const t = await startTestApi({
      ELASTIC_COMPUTE_ENABLED: 'true',
      ELASTIC_PROVIDER: 'null',
      ELASTIC_PROVISIONING_DEADLINE_S: '2',
      ELASTIC_REAPER_TICK_S: '0.3',
      ACTOR_REAPER_TICK_S: '0.2',
      SQL_SESSION_REAPER_TICK_S: '0.2',
    });
    try {
      const admin = await setupAdmin(t);
      const q = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql: 'SELECT 1' } });
      expect(q.status, q.text).toBe(202);
      expect(q.body).toMatchObject({ status: 'queued', agent_id: null });
      const failed = (await t.req('GET', `/api/queries/${q.body.id}?wait_timeout_s=30`, { as: admin })).body;
      expect(failed.status).toBe('failed');
      expect(failed.error_code).toBe('compute_unavailable');
      expect(failed.error).toMatch(/did not dial home within 2 s/);
      const [agent] = (await t.req('GET', '/api/agents', { as: admin })).body;
      expect(agent.elastic).toMatchObject({ state: 'failed', reason: 'provisioning_failed', provider: 'null' });
    } finally {
      await t.close();
    }
  }, 60_000);

  it('with elastic compute off, elastic routes answer 422 and work must name an agent', async () => {
    const t = await startTestApi({});
    try {
      const admin = await setupAdmin(t);
      const off = await t.req('POST', '/api/admin/agents/elastic', { as: admin, body: {} });
      expect(off.body?.error, off.text).toBe('elastic_compute_disabled');
      expect((await t.req('GET', '/api/admin/agents/compute-options', { as: admin })).body).toEqual([]);
      const q = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql: 'SELECT 1' } });
      expect(q.status).toBe(422);
      expect(q.body.error).toBe('agent_required');
    } finally {
      await t.close();
    }
  }, 60_000);
});

describe('an api killed while an elastic agent is provisioning', () => {
  it('the next api process adopts the agent; the queued query runs on it', async () => {
    const database = await freshDatabase({ empty: true });
    const site = await processSite(database.url, 'eider-elastic-crash-');
    const { dir, url } = site;
    const env = {
      ...site.apiEnv,
      ELASTIC_COMPUTE_ENABLED: 'true',
      ELASTIC_PROVIDER: 'process',
      ELASTIC_REAPER_TICK_S: '0.5',
      ELASTIC_PROVISIONING_DEADLINE_S: '90',
      ACTOR_REAPER_TICK_S: '0.2',
      SQL_SESSION_REAPER_TICK_S: '0.2',
      AGENT_HEARTBEAT_INTERVAL_S: '0.5',
      AGENT_HEARTBEAT_TTL_S: '3',
    };
    const start = () => startEider('api', env);
    let api = start();
    try {
      await apiReady(url);
      const json = { 'content-type': 'application/json' };
      const { cookie } = await adminOn(url);
      const submit = await fetch(`${url}/api/workspaces/default/queries`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify({ sql: 'SELECT 99 AS n' }) });
      const q = (await submit.json()) as any;
      expect(q).toMatchObject({ status: 'queued', agent_id: null });
      // Killed before the agent it asked for dialled home: the row, the actor and its pending effects are in
      // PostgreSQL, the agent process (its own process group) keeps starting.
      api.kill('SIGKILL');
      await exited(api);
      api = start();
      const done = await until('query done on the adopted agent', async () => {
        const r = (await (await fetch(`${url}/api/queries/${q.id}?wait_timeout_s=5`, { headers: { cookie } })).json()) as any;
        expect(r.status).not.toBe('failed');
        return r.status === 'done' ? r : undefined;
      }, 90_000);
      const list = (await (await fetch(`${url}/api/agents`, { headers: { cookie } })).json()) as any[];
      const elastic = list.filter((a) => a.elastic);
      // One agent for the pool, not one per api process.
      expect(elastic).toHaveLength(1);
      expect(done.agent_id).toBe(elastic[0].id);
      expect(elastic[0].elastic.state).toBe('running');
    } finally {
      api.kill('SIGTERM');
      await exited(api);
      await stopLeftovers(join(dir, 'api', 'elastic'));
      site.remove();
      await database.drop();
    }
  }, 150_000);
});
