// Shared by the benches: start a real api process, and drive HTTP load with latency percentiles.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startEmbeddedPostgres } from '../runtime/postgres.ts';
import { connectDb, type Db } from '../runtime/db.ts';
import { migrate } from '../runtime/migrate.ts';

export interface BenchApi {
  url: string;
  /** the embedded PostgreSQL the parts share */
  databaseUrl: string;
  child: ChildProcess;
  dataDir: string;
  /** the bundled object store and the catalog service the api was started with */
  storeEndpoint: string;
  catalogUrl: string;
  stop(): Promise<void>;
}

/**
 * The api as `eider up` runs it: embedded PostgreSQL (started here), the bundled object store and the catalog
 * service as their own processes, then the api, each on a free port. `onPgLog`: every line PostgreSQL logs.
 */
export async function startApiProcess(env: Record<string, string> = {}, opts: { onPgLog?: (line: string) => void } = {}): Promise<BenchApi> {
  const dataDir = mkdtempSync(join(tmpdir(), 'eider-bench-'));
  const pg = await startEmbeddedPostgres(join(dataDir, 'pg'), { onLog: opts.onPgLog });
  const [port, storePort, catalogPort] = [await freePort(), await freePort(), await freePort()];
  const common = {
    ...process.env,
    DATABASE_URL: pg.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    OBJECT_STORE_PORT: String(storePort),
    STORE_ENDPOINT: `http://127.0.0.1:${storePort}`,
    CATALOG_PORT: String(catalogPort),
    CATALOG_URL: `http://127.0.0.1:${catalogPort}`,
    CATALOG_CLIENT_SECRET: 'bench-catalog-secret',
    OBJECT_STORE_SECRET_KEY: 'bench-object-store-secret',
  };
  const eider = join(import.meta.dirname, '..', 'bin', 'eider.ts');
  const part = (name: string, extra: Record<string, string> = {}) =>
    spawn(process.execPath, [eider, name], { env: { ...common, ...extra }, stdio: ['ignore', 'inherit', 'inherit'] });
  const parts = [part('objectstore')];
  await waitFor(`http://127.0.0.1:${storePort}/`, () => true);
  parts.push(part('catalog'));
  await waitFor(`http://127.0.0.1:${catalogPort}/v1/config`, () => true);
  const child = part('api', { PORT: String(port), SETUP_TOKEN: 'bench-setup-token-000000', ...env });
  parts.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/api/readyz`, (r) => r.ok);
  return {
    url,
    databaseUrl: pg.url,
    child,
    dataDir,
    storeEndpoint: `http://127.0.0.1:${storePort}`,
    catalogUrl: `http://127.0.0.1:${catalogPort}`,
    async stop() {
      for (const p of parts.reverse()) {
        await new Promise<void>((res) => {
          if (p.exitCode !== null || p.signalCode !== null) return res();
          p.once('exit', () => res());
          p.kill('SIGTERM');
        });
      }
      await pg.stop();
    },
  };
}

async function waitFor(url: string, ok: (r: Response) => boolean) {
  const until = Date.now() + 120_000;
  for (;;) {
    if (await fetch(url).then(ok, () => false)) return;
    if (Date.now() > until) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
}

/** Runs `fn` `total` times with `concurrency` in flight; latencies in milliseconds. */
export async function load(total: number, concurrency: number, fn: () => Promise<void>): Promise<LoadResult> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const s = performance.now();
        await fn();
        lat.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
  return { requests: lat.length, seconds, rps: lat.length / seconds, p50: pct(50), p99: pct(99) };
}

export const fmt = (r: LoadResult) =>
  `${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   (${r.requests} requests)`;

export const BENCH_BOOTSTRAP = 'bench-bootstrap-token-000000000000';

/** Creates the first admin and returns a bearer token for it. */
export async function adminToken(api: BenchApi): Promise<string> {
  const json = { 'content-type': 'application/json' };
  await fetch(`${api.url}/api/setup/admin`, {
    method: 'POST',
    headers: { ...json, 'x-setup-token': 'bench-setup-token-000000' },
    body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password', name: 'Bench' }),
  });
  const login = await fetch(`${api.url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }) });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const pat = (await (await fetch(`${api.url}/api/me/pats`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify({ expires_in_days: 1 }) })).json()) as { token: string };
  return pat.token;
}

/** Starts an `eider agent` process dialling the bench api; resolves once the api lists it healthy. */
export async function startAgentProcess(api: BenchApi, token: string, name: string, bootstrapToken: string): Promise<ChildProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'eider-bench-agent-'));
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'eider.ts'), 'agent'], {
    env: {
      ...process.env,
      CONTROL_PLANE_URL: api.url.replace(/^http/, 'ws') + '/agents/connect',
      BOOTSTRAP_TOKEN: bootstrapToken,
      AGENT_DATA_DIR: dataDir,
      AGENT_NAME: name,
      RESULTS_HTTP_PORT: '0',
      LOG_LEVEL: 'warn',
      // e.g. AGENT_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the agents of a bench
      ...(process.env.AGENT_NODE_OPTIONS ? { NODE_OPTIONS: process.env.AGENT_NODE_OPTIONS } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const until = Date.now() + 180_000; // a loaded machine (other benches and tests) can take a minute to start DuckDB
  for (;;) {
    const agents = (await (await fetch(`${api.url}/api/agents`, { headers: { authorization: `Bearer ${token}` } })).json()) as any[];
    if (agents.some((a) => a.name === name && a.status === 'healthy')) return child;
    if (Date.now() > until) throw new Error(`agent ${name} did not register`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function agentIdByName(api: BenchApi, token: string, name: string): Promise<string> {
  const agents = (await (await fetch(`${api.url}/api/agents`, { headers: { authorization: `Bearer ${token}` } })).json()) as any[];
  return agents.find((a) => a.name === name).id;
}

export async function bootstrapToken(api: BenchApi, token: string): Promise<string> {
  const r = await fetch(`${api.url}/api/admin/agents/bootstrap`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({}),
  });
  return ((await r.json()) as { token: string }).token;
}

/** Submits SQL and waits for the end; throws unless it is done. */
export async function runQuery(api: BenchApi, token: string, agentId: string, sql: string): Promise<any> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const sub = await fetch(`${api.url}/api/workspaces/default/queries`, { method: 'POST', headers, body: JSON.stringify({ sql, agent_id: agentId }) });
  const q = (await sub.json()) as any;
  if (sub.status !== 202) throw new Error(`submit: ${sub.status} ${JSON.stringify(q)}`);
  const final = q.status === 'done' ? q : ((await (await fetch(`${api.url}/api/queries/${q.id}?wait_timeout_s=30`, { headers })).json()) as any);
  if (final.status !== 'done') throw new Error(`query ${final.status}: ${final.error}`);
  return final;
}

export function percentiles(lat: number[]) {
  const s = [...lat].sort((a, b) => a - b);
  const pct = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  return { p50: pct(50), p99: pct(99), n: s.length };
}

/**
 * The database of an in-process bench (the catalog service beside it): DATABASE_URL when set, else an embedded
 * PostgreSQL in a temporary folder; the catalog's schema migrated. `close` stops and removes what it started.
 */
export async function benchDatabase(poolSize: number): Promise<{ db: Db; close(): Promise<void> }> {
  let url = process.env.DATABASE_URL;
  const dir = url ? undefined : mkdtempSync(join(tmpdir(), 'eider-bench-pg-'));
  const pg = dir ? await startEmbeddedPostgres(dir) : undefined;
  url ??= pg!.url;
  const db = await connectDb({ url, poolSize, maxOverflow: poolSize });
  await migrate(db, 'catalog');
  return {
    db,
    async close() {
      await db.close();
      await pg?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
