// The agents listings at scale, without the heartbeating fleet of `bench/scale.ts agents` (whose figures include
// the event loop it keeps busy): what one `GET /api/agents`, `/api/admin/agents` and `/api/admin/agents/metrics`
// cost the api. Builds `n` agent rows directly in PostgreSQL, set-based and deterministic (ids, names, times and the
// mix are functions of the row number): a fifth restricted, grants to a member user and to a workspace it belongs
// to (every tier), a twentieth elastic (running, starting or terminated), a third never reported capabilities, and live
// queries for the counts. Then times each answer as an admin and as that member. Run by hand:
//   npx node bench/agentsList.ts [n=10000] [requests=20]
// API_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the api (summarize with bench/cpuProfile.ts);
// BENCH_DUMP=dir writes each answer there (JSON), to compare two builds' answers over the same rows;
// BENCH_EXPLAIN=1 prints EXPLAIN (ANALYZE, BUFFERS) of every statement the listings run.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectDb, type Queryable } from '../runtime/db.ts';
import { agentMetrics, visibleAgents } from '../domain/agents.ts';
import { principalFromToken } from '../domain/identity.ts';
import { adminToken, startApiProcess } from './support.ts';
import { timed } from './scale/measure.ts';

const n = Number(process.argv[2] ?? 10_000);
const requests = Number(process.argv[3] ?? 20);

// What a real agent reports (protocol Capabilities), so each row's JSON is as large as in production.
const CAPABILITIES = {
  engine_version: 'v1.4.1',
  extensions: ['httpfs', 'iceberg', 'parquet', 'json', 'icu', 'avro', 'aws', 'azure'],
  memory_limit_bytes: 4294967296,
  max_concurrency_profile: 'auto',
  max_queue_depth: 64,
  max_timeout_s: 3600,
  profiling_enabled: true,
  features: ['cancel_ack', 'column_schema', 'profile', 'progress', 'sessions', 'result_views'],
};

async function main() {
  const api = await startApiProcess(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {});
  const db = await connectDb({ url: api.databaseUrl, poolSize: 2 });
  try {
    const admin = await adminToken(api);
    const member = await memberToken(api.url, admin);
    const [{ id: memberId }] = await db.query<{ id: string }>(`select id from eider.users where email = 'member@example.com'`);
    const t0 = performance.now();
    await buildAgents(db, memberId);
    console.log(`${n.toLocaleString('en')} agents built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (process.env.BENCH_EXPLAIN === '1') {
      for (const [who, token] of [['admin', admin], ['member', member]] as const) {
        const p = (await principalFromToken(db, token))!;
        await visibleAgents(explaining(db, `${who}: the agents list`), p);
        await agentMetrics(explaining(db, `${who}: the live counts`), p);
      }
    }
    const dump = process.env.BENCH_DUMP;
    if (dump) mkdirSync(dump, { recursive: true });
    for (const [who, token] of [['admin', admin], ['member', member]] as const) {
      for (const path of ['/api/agents', '/api/admin/agents', '/api/admin/agents/metrics']) {
        const get = async () => {
          const r = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
          const text = await r.text();
          if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${text}`);
          return text;
        };
        const text = await get();
        if (dump) writeFileSync(join(dump, `${who}${path.replaceAll('/', '_')}.json`), text);
        const f = await timed(`${who} GET ${path}`, requests, get, 3);
        console.log(`  ${f.name.padEnd(40)} p50 ${f.p50.toFixed(1).padStart(8)} ms   p95 ${f.p95.toFixed(1).padStart(8)} ms   ${(JSON.parse(text) as unknown[]).length} listed, ${(text.length / 1024).toFixed(0)} KiB`);
      }
    }
  } finally {
    await db.close();
    await api.stop();
    rmSync(api.dataDir, { recursive: true, force: true });
  }
}

/** Runs each statement of the repository function given it as EXPLAIN (ANALYZE, BUFFERS), printed; answers no rows. */
function explaining(db: Queryable, title: string): Queryable {
  return {
    async query<T>(text: string, params?: readonly unknown[]): Promise<T[]> {
      const plan = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${text}`, params);
      console.log(`\n${title}:\n${plan.map((r) => `  ${r['QUERY PLAN']}`).join('\n')}`);
      return [];
    },
  };
}

/** A member of `default` (reader) with a bearer token. */
async function memberToken(url: string, admin: string): Promise<string> {
  const json = { 'content-type': 'application/json' };
  const created = await fetch(`${url}/api/admin/users`, {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${admin}` },
    body: JSON.stringify({ email: 'member@example.com', name: 'Member', password: 'member-password', role: 'member' }),
  });
  if (created.status !== 201) throw new Error(`create member: ${created.status} ${await created.text()}`);
  const login = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'member@example.com', password: 'member-password' }) });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const pat = (await (await fetch(`${url}/api/me/pats`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify({ expires_in_days: 1 }) })).json()) as { token: string };
  return pat.token;
}

async function buildAgents(db: Awaited<ReturnType<typeof connectDb>>, memberId: string) {
  await db.query(
    `insert into eider.workspace_members (workspace_id, user_id, role)
       select id, $1, 'reader' from eider.workspaces where slug = 'default' on conflict do nothing`,
    [memberId],
  );
  const agentId = (i: string) => `md5('bench-agent-' || ${i})::uuid`;
  await db.query(
    `insert into eider.agents (id, name, status, version, capabilities, access_mode, owner_url, owner_replica, result_url,
                         connection_id, connected_at, last_heartbeat_at, created_at)
     select ${agentId('i')}, 'agent-' || lpad(i::text, 6, '0'),
            case when i % 7 = 0 then 'unavailable' when i % 11 = 0 then 'registered' else 'healthy' end,
            case when i % 13 = 0 then null else '0.9.' || (i % 4) end,
            case when i % 3 = 0 then '{}'::jsonb else $1::jsonb end,
            case when i % 5 = 0 then 'restricted' else 'open' end,
            'http://10.0.' || (i % 250) || '.1:8000', 'replica-' || (i % 3), 'http://10.1.' || (i % 250) || '.2:9100',
            case when i % 7 = 0 then null else md5('bench-conn-' || i)::uuid end,
            case when i % 7 = 0 then null else timestamptz '2026-11-01 00:00:00+00' + i * interval '1 second' end,
            case when i % 7 = 0 then null else timestamptz '2026-11-29 12:00:00.123+00' + i * interval '1 millisecond' end,
            timestamptz '2026-10-01 00:00:00+00' + (i / 2) * interval '1 second'
       from generate_series(1, $2::int) i`,
    [JSON.stringify(CAPABILITIES), n],
  );
  // Grants on restricted and open agents alike: to the member (every tier) and to `default` (use, operate).
  await db.query(
    `insert into eider.agent_grants (agent_id, user_id, tier)
     select ${agentId('i')}, $1, (array['use', 'operate', 'admin'])[1 + (i / 10) % 3] from generate_series(1, $2::int) i where i % 10 = 0`,
    [memberId, n],
  );
  await db.query(
    `insert into eider.agent_grants (agent_id, workspace_id, tier)
     select ${agentId('i')}, (select id from eider.workspaces where slug = 'default'), (array['use', 'operate'])[1 + (i / 15) % 2]
       from generate_series(1, $1::int) i where i % 15 = 0`,
    [n],
  );
  await db.query(
    `insert into eider.elastic_agents (id, agent_id, pool, provider, size, cpu, memory_gb, hourly_cost, status, reason, provisioned_at, terminated_at, created_at)
     select md5('bench-elastic-' || i)::uuid, ${agentId('i')}, 'agent:' || ${agentId('i')}, 'process', 'small', 2, 4,
            case when i % 40 = 0 then null else 0.25 end,
            case when i % 40 = 0 then 'terminated' when i % 60 = 0 then 'provisioning' else 'idle' end,
            case when i % 40 = 0 then 'idle' else null end,
            timestamptz '2026-11-29 00:00:00+00' + i * interval '1 second',
            case when i % 40 = 0 then timestamptz '2026-11-29 06:00:00+00' + i * interval '1 second' else null end,
            timestamptz '2026-11-28 00:00:00+00' + i * interval '1 second'
       from generate_series(1, $1::int) i where i % 20 = 0`,
    [n],
  );
  await db.query(`update eider.agents a set elastic_id = e.id from eider.elastic_agents e where e.agent_id = a.id`);
  // Live work for the counts: a running and a queued query on every 50th agent.
  await db.query(
    `insert into eider.queries (id, workspace_id, agent_id, sql, status, started_at)
     select md5('bench-query-' || i || '-' || s)::uuid, (select id from eider.workspaces where slug = 'default'), ${agentId('i')},
            'SELECT 1', s, now()
       from generate_series(1, $1::int) i, unnest(array['running', 'queued']) s where i % 50 = 0`,
    [n],
  );
  await db.query(`analyze eider.agents, eider.agent_grants, eider.elastic_agents`);
}

await main();
