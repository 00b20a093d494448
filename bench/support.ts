// Shared by the benches: start a real api process, and drive HTTP load with latency percentiles.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../runtime/postgres.ts';

export interface BenchApi {
  url: string;
  child: ChildProcess;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startApiProcess(env: Record<string, string> = {}): Promise<BenchApi> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'eider-bench-'));
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'eider.ts'), 'api'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SETUP_TOKEN: 'bench-setup-token-000000', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 120_000;
  for (;;) {
    if (await fetch(`${url}/api/readyz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > until) throw new Error('api did not become ready');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    child,
    dataDir,
    stop: () =>
      new Promise((res) => {
        child.once('exit', () => res());
        child.kill('SIGTERM');
      }),
  };
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
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const until = Date.now() + 60_000;
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
