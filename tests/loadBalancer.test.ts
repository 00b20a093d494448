// `API_REPLICAS=2 eider up` with HAProxy in front: one URL serves the app, the API and the agent; no affinity;
// `/internal/*` is not reachable through it; a draining replica leaves the rotation while the other serves; the
// agent dials the balancer, and its result address comes from X-Forwarded-For (results are read back through it).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../runtime/postgres.ts';
import pg from 'pg';
import { checkConfig, haproxyConfig } from '../bin/loadBalancer.ts';
import { childrenOf, listeningAddresses, pollUntil } from './support/processes.ts';
import { startEiderUp } from './support/eiderUp.ts';

const ROOT = join(import.meta.dirname, '..');
const ensureHaproxy = () => execFileSync('sh', [join(ROOT, 'scripts/ensure-haproxy.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();

describe('the load balancer in front of eider up', () => {
  it('its generated configuration is one HAProxy accepts', () => {
    const haproxy = ensureHaproxy();
    const dir = mkdtempSync(join(tmpdir(), 'eider-lbcfg-'));
    try {
      const path = join(dir, 'haproxy.cfg');
      const backends = [{ name: 'api-1', host: '127.0.0.1', port: 18000 }, { name: 'api-2', host: '127.0.0.1', port: 18001 }];
      const pgBackends = [{ name: 'api-1', host: '127.0.0.1', port: 15434 }, { name: 'api-2', host: '127.0.0.1', port: 15435 }];
      writeFileSync(path, haproxyConfig({ host: '127.0.0.1', port: 18080, backends, pg: { port: 15433, backends: pgBackends } }));
      expect(checkConfig(haproxy, path)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves API, app and agent on one URL, keeps /internal out, spreads requests and survives a draining replica', { timeout: 300_000 }, async () => {
    ensureHaproxy();
    const dir = mkdtempSync(join(tmpdir(), 'eider-lb-'));
    const [api, lb, catalog, store, pgPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    // Two consecutive ports for the replicas.
    const api2 = api + 1;
    const stack = startEiderUp({
      dataDir: join(dir, '.eider'),
      home: dir,
      ports: { api, catalog, store },
      // The PostgreSQL endpoint behind the balancer too (the replicas take the next two ports).
      env: { LB_PORT: String(lb), API_REPLICAS: '2', PG_PORT: String(pgPort), SQL_SESSIONS_ENABLED: 'true', LOG_LEVEL: 'warn' },
    });
    const up = stack.child;
    const url = `http://127.0.0.1:${lb}`;
    try {
      await stack.ready();
      expect(stack.out()).toContain(`URL:          ${url}`);

      // No affinity: readiness through the balancer is answered by both replicas.
      const seen = new Set<string>();
      for (let i = 0; i < 8; i++) seen.add(((await (await fetch(`${url}/api/readyz`)).json()) as { replica_id: string }).replica_id);
      expect([...seen].sort()).toEqual(['api-1', 'api-2']);
      // The web app and the API on the same URL.
      expect((await fetch(`${url}/`)).headers.get('content-type')).toMatch(/text\/html/);
      // The replicas' internal channel is not reachable through the balancer, whatever it is sent.
      const internal = await fetch(`${url}/internal/agents/x/cancel`, { method: 'POST', headers: { 'x-internal-secret': 'guess' } });
      expect(internal.status).toBe(404);
      expect(await internal.json()).toMatchObject({ error: 'not_found', details: {} });

      // The first admin and a query through the balancer: the agent dialled it, and its results are read back.
      const token = readFileSync(join(dir, '.eider', 'setup-token'), 'utf8').trim();
      const json = { 'content-type': 'application/json' };
      expect((await fetch(`${url}/api/setup/admin`, { method: 'POST', headers: { ...json, 'x-setup-token': token }, body: JSON.stringify({ email: 'lb@example.com', password: 'a-long-password', name: 'LB' }) })).status).toBe(201);
      const login = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'lb@example.com', password: 'a-long-password' }) });
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
      const as = { ...json, cookie, origin: url };
      const agent = await pollUntil(
        async () => ((await (await fetch(`${url}/api/agents`, { headers: as })).json()) as { id: string; status: string }[]).find((a) => a.status === 'healthy'),
        (a) => a !== undefined,
        30_000,
      );
      const runQuery = async (sql: string) => {
        const q = (await (await fetch(`${url}/api/workspaces/default/queries`, { method: 'POST', headers: as, body: JSON.stringify({ sql, agent_id: agent!.id }) })).json()) as { id: string };
        expect(q.id, JSON.stringify(q)).toBeTruthy();
        const done = (await (await fetch(`${url}/api/queries/${q.id}?wait_timeout_s=30`, { headers: as })).json()) as { status: string };
        expect(done.status, JSON.stringify(done)).toBe('done');
        return (await (await fetch(`${url}/api/queries/${q.id}/rows`, { headers: as })).json()) as { rows: Record<string, unknown>[] };
      };
      expect((await runQuery('SELECT 42 AS answer')).rows).toEqual([{ answer: 42 }]);
      // A PostgreSQL client through the balancer's PG_PORT: a token as the password, a SQL session on some replica.
      expect(stack.out()).toContain(`port=${pgPort}`);
      const pat = ((await (await fetch(`${url}/api/me/pats`, { method: 'POST', headers: as, body: JSON.stringify({ expires_in_days: 1 }) })).json()) as { token: string }).token;
      for (let i = 0; i < 2; i++) {
        const client = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'lb@example.com', password: pat, database: 'default', ssl: { rejectUnauthorized: false } });
        await client.connect();
        try {
          expect((await client.query('SELECT 40 + $1::INTEGER AS answer', [2])).rows).toEqual([{ answer: 42 }]);
        } finally {
          await client.end();
        }
      }

      // SIGTERM to api-1: it drains, leaves the rotation, and the balancer keeps serving from api-2 (the agent moves).
      const pidOn = (port: number) => childrenOf(up.pid!).find((p) => listeningAddresses(p).includes(`127.0.0.1:${port}`));
      const first = pidOn(api);
      expect(first).toBeDefined();
      expect(pidOn(api2)).toBeDefined();
      process.kill(first!, 'SIGTERM');
      const onlySecond = await pollUntil(
        async () => {
          const ids = new Set<string>();
          for (let i = 0; i < 4; i++) {
            const r = await fetch(`${url}/api/readyz`).catch(() => null);
            ids.add(r?.ok ? (((await r.json()) as { replica_id: string }).replica_id) : `status ${r?.status ?? 'none'}`);
          }
          return [...ids];
        },
        (ids) => ids.length === 1 && ids[0] === 'api-2',
        30_000,
        250,
      );
      expect(onlySecond).toEqual(['api-2']);
      expect((await runQuery('SELECT 7 AS seven')).rows).toEqual([{ seven: 7 }]);
    } finally {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
