// The agents listings (GET /api/agents, /api/admin/agents, /api/admin/agents/metrics, /api/admin/agents/{id}) for
// callers of every kind over a registry that has every kind of agent: open and restricted, grants of each tier to a
// user and to workspaces (one the caller belongs to, one not), elastic incarnations running and ended, an agent that
// never reported capabilities. The expected answers are built here from the rows and the visibility rule (who
// manages agents: admin on all; anyone else: the best of `use` on an open agent and their grants, an agent with
// neither left out), field by field.
import { afterAll, describe, expect, it } from 'vitest';
import { newUser, setupAdmin, startTestApi, type Caller } from './support/api.ts';

const t = await startTestApi();
afterAll(() => t.close());
const admin = await setupAdmin(t);
const member = await newUser(t, admin);
const teammate = await newUser(t, admin);
const outsider = await newUser(t, admin);
const db = t.database.db;
const [{ id: defaultWs }] = await db.query<{ id: string }>(`select id from eider.workspaces where slug = 'default'`);
expect((await t.req('POST', '/api/workspaces', { body: { slug: 'agws', name: 'Agents elsewhere' }, as: admin })).status).toBe(201);
const [{ id: otherWs }] = await db.query<{ id: string }>(`select id from eider.workspaces where slug = 'agws'`);
for (const u of [member, teammate]) {
  expect((await t.req('PUT', `/api/workspaces/default/members/${u.id}`, { body: { role: 'reader' }, as: admin })).status).toBeLessThan(300);
}

type Tier = 'use' | 'operate' | 'admin';
interface Spec {
  name: string;
  mode: 'open' | 'restricted';
  status?: string;
  capabilities?: Record<string, unknown>;
  heartbeat?: string | null;
  created: string;
  grants?: Array<{ to: 'member' | 'default' | 'agws'; tier: Tier }>;
  elastic?: { status: string; reason: string | null; error: string | null; cost: number | null; terminated: string | null };
  live?: { running: number; queued: number };
}
const CAPS = { engine_version: 'v1.4.1', extensions: ['parquet', 'json'], memory_limit_bytes: 4294967296, max_concurrency_profile: 'auto', features: ['cancel_ack'] };
const specs: Spec[] = [
  { name: 'open-plain', mode: 'open', created: '2026-11-01 00:00:00+00', live: { running: 2, queued: 1 } },
  // the same created_at as the one before: the id breaks the tie
  { name: 'open-registered', mode: 'open', status: 'registered', created: '2026-11-01 00:00:00+00', grants: [{ to: 'member', tier: 'operate' }] },
  { name: 'restricted-nobody', mode: 'restricted', created: '2026-11-02 00:00:00+00', live: { running: 1, queued: 0 } },
  { name: 'restricted-use', mode: 'restricted', created: '2026-11-03 00:00:00+00', grants: [{ to: 'member', tier: 'use' }] },
  { name: 'restricted-best', mode: 'restricted', created: '2026-11-04 00:00:00+00', grants: [{ to: 'member', tier: 'admin' }, { to: 'default', tier: 'operate' }] },
  { name: 'restricted-team', mode: 'restricted', status: 'unavailable', created: '2026-11-05 00:00:00+00', grants: [{ to: 'default', tier: 'operate' }] },
  { name: 'restricted-elsewhere', mode: 'restricted', created: '2026-11-06 00:00:00+00', grants: [{ to: 'agws', tier: 'use' }] },
  {
    name: 'open-elastic',
    mode: 'open',
    created: '2026-11-07 00:00:00+00',
    grants: [{ to: 'member', tier: 'use' }],
    elastic: { status: 'idle', reason: null, error: null, cost: 0.25, terminated: null },
    live: { running: 0, queued: 3 },
  },
  {
    name: 'restricted-elastic-ended',
    mode: 'restricted',
    created: '2026-11-08 00:00:00+00',
    grants: [{ to: 'default', tier: 'use' }],
    elastic: { status: 'failed', reason: null, error: 'instance lost', cost: null, terminated: '2026-11-29 06:00:00.987654+00' },
  },
  { name: 'open-silent', mode: 'open', capabilities: {}, heartbeat: null, created: '2026-11-09 00:00:00+00' },
  { name: 'open-odd-memory', mode: 'open', capabilities: { ...CAPS, memory_limit_bytes: '4 GiB' }, created: '2026-11-10 00:00:00+00' },
];

const ids = new Map<string, string>();
for (const s of specs) {
  const heartbeat = s.heartbeat === undefined ? '2026-11-29 12:00:00.123456+00' : s.heartbeat;
  const [{ id }] = await db.query<{ id: string }>(
    `insert into eider.agents (name, status, version, capabilities, access_mode, owner_url, connection_id, connected_at, last_heartbeat_at, created_at)
     values ($1, $2, '0.9.1', $3::jsonb, $4, 'http://10.0.0.1:8000', gen_random_uuid(), '2026-11-29 11:00:00.5+00', $5, $6) returning id`,
    [s.name, s.status ?? 'healthy', JSON.stringify(s.capabilities ?? CAPS), s.mode, heartbeat, s.created],
  );
  ids.set(s.name, id);
  for (const g of s.grants ?? []) {
    await db.query(`insert into eider.agent_grants (agent_id, user_id, workspace_id, tier) values ($1, $2, $3, $4)`, [
      id,
      g.to === 'member' ? member.id : null,
      g.to === 'default' ? defaultWs : g.to === 'agws' ? otherWs : null,
      g.tier,
    ]);
  }
  if (s.elastic) {
    const e = s.elastic;
    await db.query(
      `with e as (insert into eider.elastic_agents (id, agent_id, pool, provider, size, cpu, memory_gb, hourly_cost, status, reason, error, provisioned_at, terminated_at)
                  values (gen_random_uuid(), $1, $7, 'process', 'small', 2, 4, $2, $3, $4, $5, '2026-11-29 01:00:00.000999+00', $6) returning id)
       update eider.agents set elastic_id = (select id from e) where id = $1`,
      [id, e.cost, e.status, e.reason, e.error, e.terminated, `agent:${id}`],
    );
  }
  for (const [status, n] of Object.entries(s.live ?? {})) {
    for (let i = 0; i < n; i++) {
      await db.query(`insert into eider.queries (id, workspace_id, agent_id, sql, status) values (gen_random_uuid(), $1, $2, 'SELECT 1', $3)`, [defaultWs, id, status]);
    }
  }
  // work that has ended is no live work
  await db.query(`insert into eider.queries (id, workspace_id, agent_id, sql, status) values (gen_random_uuid(), $1, $2, 'SELECT 1', 'done')`, [defaultWs, id]);
}

const RANK: Record<Tier, number> = { use: 1, operate: 2, admin: 3 };
/** The rule, written out: `null` when the caller does not see the agent. */
function tierOf(s: Spec, who: 'admin' | 'member' | 'teammate' | 'outsider'): Tier | null {
  if (who === 'admin') return 'admin';
  const reach = (to: 'member' | 'default' | 'agws') => (to === 'member' ? who === 'member' : to === 'default' ? who !== 'outsider' : false);
  const tiers: Tier[] = [...(s.mode === 'open' ? (['use'] as Tier[]) : []), ...(s.grants ?? []).filter((g) => reach(g.to)).map((g) => g.tier)];
  return tiers.length ? tiers.reduce((a, b) => (RANK[b] > RANK[a] ? b : a)) : null;
}

// registry order: created_at, then id (a uuid orders as its lowercase text)
const key = (s: Spec) => `${s.created} ${ids.get(s.name)}`;
const inOrder = [...specs].sort((a, b) => (key(a) < key(b) ? -1 : 1));

function expectedAgent(s: Spec, tier: Tier) {
  const heartbeat = s.heartbeat === undefined ? '2026-11-29T12:00:00.123Z' : null;
  return {
    id: ids.get(s.name),
    name: s.name,
    status: (s.status ?? 'healthy') === 'healthy' ? 'healthy' : 'unavailable',
    version: '0.9.1',
    capabilities: s.capabilities ?? CAPS,
    access_tier: tier,
    access_mode: s.mode,
    owner_url: 'http://10.0.0.1:8000',
    connection_id: expect.any(String),
    connected_at: '2026-11-29T11:00:00.500Z',
    last_heartbeat_at: heartbeat,
    elastic: s.elastic
      ? {
          state: s.elastic.status === 'idle' ? 'running' : s.elastic.status,
          provider: 'process',
          size: 'small',
          reason: s.elastic.reason ?? s.elastic.error,
          provisioned_at: '2026-11-29T01:00:00.000Z',
          terminated_at: s.elastic.terminated ? '2026-11-29T06:00:00.987Z' : null,
          hourly_cost: s.elastic.cost,
        }
      : null,
  };
}

const callers: Array<['admin' | 'member' | 'teammate' | 'outsider', Caller]> = [
  ['admin', admin],
  ['member', member],
  ['teammate', teammate],
  ['outsider', outsider],
];

describe('the agents listings', () => {
  it.each(callers)('list what %s sees, at the tier the rule gives, every field as stored', async (who, as) => {
    const expected = inOrder.filter((s) => tierOf(s, who)).map((s) => expectedAgent(s, tierOf(s, who)!));
    const listed = await t.req('GET', '/api/agents', { as });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(expected);
    // every key in the order the schema declares
    for (const a of listed.body) expect(Object.keys(a)).toEqual(Object.keys(expected[0]));
    const adminPath = await t.req('GET', '/api/admin/agents', { as });
    expect(adminPath.text).toBe(listed.text);
    // one agent at a time: the same object, or 404 for an agent the caller does not see
    for (const s of specs) {
      const one = await t.req('GET', `/api/admin/agents/${ids.get(s.name)}`, { as });
      const tier = tierOf(s, who);
      expect(one.status, s.name).toBe(tier ? 200 : 404);
      if (tier) expect(one.text).toBe(JSON.stringify(listed.body.find((a: { id: string }) => a.id === ids.get(s.name))));
    }
  });

  it.each(callers)('count the live work of what %s sees', async (who, as) => {
    const metrics = await t.req('GET', '/api/admin/agents/metrics', { as });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toEqual(
      inOrder
        .filter((s) => tierOf(s, who))
        .map((s) => ({
          agent_id: ids.get(s.name),
          name: s.name,
          status: (s.status ?? 'healthy') === 'healthy' ? 'healthy' : 'unavailable',
          running_queries: s.live?.running ?? 0,
          queued_queries: s.live?.queued ?? 0,
          memory_limit_bytes: typeof (s.capabilities ?? CAPS).memory_limit_bytes === 'number' ? (s.capabilities ?? CAPS).memory_limit_bytes : null,
          last_heartbeat_at: s.heartbeat === undefined ? '2026-11-29T12:00:00.123Z' : null,
        })),
    );
  });

  it('a tier below the one a route needs is refused, not hidden', async () => {
    // the member uses restricted-use: operating it is 403, an agent the member does not see is 404
    const disconnect = await t.req('POST', `/api/admin/agents/${ids.get('restricted-use')}/disconnect`, { as: member });
    expect(disconnect.status).toBe(403);
    expect(disconnect.body.error).toBe('agent_forbidden');
    expect((await t.req('POST', `/api/admin/agents/${ids.get('restricted-elsewhere')}/disconnect`, { as: member })).status).toBe(404);
    expect((await t.req('GET', `/api/admin/agents/${ids.get('restricted-best')}/access`, { as: member })).status).toBe(200);
  });
});
