// The first minute, as a newcomer lives it: `npm start` (eider up, embedded PostgreSQL, fresh data directory),
// then the README's first-steps block run as a script the moment the URL is printed. Prints, per run, the time to
// "Eider is up.", the time to the sample's rows, and whether the block ended with the six zones; then the p50s.
// Usage: node bench/firstMinute.ts [runs=10]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../runtime/postgres.ts';
import { docsBlock } from '../tests/support/docsBlock.ts';

const ROOT = join(import.meta.dirname, '..');
const runs = Number(process.argv[2] ?? 10);
const block = docsBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'first-steps');
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const upMs: number[] = [];
const rowsMs: number[] = [];
let ok = 0;
for (let i = 1; i <= runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'eider-first-minute-'));
  const [port, catalogPort, storePort] = [await freePort(), await freePort(), await freePort()];
  const t0 = performance.now();
  const up = spawn(process.execPath, [join(ROOT, 'bin', 'eider.ts'), 'up'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, DATA_DIR: join(dir, '.eider'), PORT: String(port), CATALOG_PORT: String(catalogPort), OBJECT_STORE_PORT: String(storePort), RESULTS_HTTP_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  up.stdout.on('data', (d) => (out += d));
  up.stderr.on('data', (d) => (out += d));
  const exited = new Promise((res) => up.on('exit', res));
  while (!out.includes('Eider is up.') && up.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  const tUp = performance.now() - t0;
  const script = block.replace(/^URL=.*$/m, `URL=http://127.0.0.1:${port}`);
  const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 120_000 });
  const tRows = performance.now() - t0;
  let zones = 0;
  try {
    zones = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('{"rows":'))).rows.length;
  } catch {
    zones = 0;
  }
  const good = run.status === 0 && zones === 6;
  if (good) ok++;
  upMs.push(tUp);
  rowsMs.push(tRows);
  console.log(`run ${i}: up ${(tUp / 1000).toFixed(1)} s, rows ${(tRows / 1000).toFixed(1)} s, ${good ? 'six zones' : `FAILED (exit ${run.status}, ${zones} rows) ${run.stderr.slice(-300)}`}`);
  up.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\n${ok}/${runs} runs ended with the six zones; p50 to "Eider is up." ${(p50(upMs) / 1000).toFixed(1)} s; p50 to rows ${(p50(rowsMs) / 1000).toFixed(1)} s`);
