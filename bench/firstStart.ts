// First start and restart of `npm start` (issue #36): `eider up` on a fresh temporary data directory (embedded
// PostgreSQL's initdb, migrations, the sample seed through the bundled agent), timed to "Eider is up.", stopped
// (Ctrl-C), then started again on the same directory and timed again. With the log at info, prints when each part
// reached its milestones in the first run (where the time goes). Usage: node bench/firstStart.ts [runs=3]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../runtime/postgres.ts';

const ROOT = join(import.meta.dirname, '..');
const runs = Number(process.argv[2] ?? 3);
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** One `eider up` on `dir` until "Eider is up."; its milestones (log messages) with their offsets; then Ctrl-C. */
async function up(dir: string, ports: number[]): Promise<{ ms: number; steps: string[] }> {
  const [port, catalogPort, storePort] = ports;
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'eider.ts'), 'up'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, DATA_DIR: join(dir, '.eider'), PORT: String(port), CATALOG_PORT: String(catalogPort), OBJECT_STORE_PORT: String(storePort), RESULTS_HTTP_PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const steps: string[] = [];
  let out = '';
  let done = false;
  const onData = (d: Buffer) => {
    out += d;
    for (let i; (i = out.indexOf('\n')) >= 0; ) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      const at = `${((performance.now() - t0) / 1000).toFixed(2).padStart(6)} s`;
      if (line.includes('Eider is up.')) done = true;
      try {
        const j = JSON.parse(line) as { name?: string; msg?: string; part?: string };
        steps.push(`${at}  ${j.name ?? ''}: ${j.msg ?? ''}${j.part ? ` (${j.part})` : ''}`);
      } catch {
        if (line.trim()) steps.push(`${at}  ${line.trim().slice(0, 100)}`);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((res) => child.on('exit', res));
  while (!done && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
  const ms = performance.now() - t0;
  if (!done) throw new Error(`eider up exited before it was up:\n${steps.slice(-20).join('\n')}`);
  process.kill(-child.pid!, 'SIGINT');
  await exited;
  return { ms, steps };
}

const first: number[] = [];
const again: number[] = [];
for (let i = 1; i <= runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'eider-first-start-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  try {
    const a = await up(dir, ports);
    const b = await up(dir, ports);
    first.push(a.ms);
    again.push(b.ms);
    console.log(`run ${i}: first start ${(a.ms / 1000).toFixed(1)} s, restart ${(b.ms / 1000).toFixed(1)} s`);
    if (i === 1 || process.env.BENCH_STEPS === '1') console.log(`  first start:\n    ${a.steps.join('\n    ')}\n  restart:\n    ${b.steps.join('\n    ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`\np50 over ${runs}: first start ${(p50(first) / 1000).toFixed(1)} s, restart ${(p50(again) / 1000).toFixed(1)} s`);
