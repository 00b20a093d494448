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
