// The README's first steps are a contract: its curl block, run verbatim as a script the moment `eider up` prints
// its URL (only URL and TOKEN pointed at this stack), ends with the sample's six zones and their counts.
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../runtime/postgres.ts';
import { freshDatabase } from './support/database.ts';
import { docsBlock } from './support/docsBlock.ts';

const ROOT = join(import.meta.dirname, '..');

describe('README first steps', () => {
  it('run as written against a fresh eider up and end with the six sample zones', { timeout: 300_000 }, async () => {
    const block = docsBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'first-steps');
    expect(block).toMatch(/^URL=.*$/m);
    expect(block).toMatch(/^TOKEN=.*$/m);
    const dir = mkdtempSync(join(tmpdir(), 'eider-readme-'));
    const database = await freshDatabase({ empty: true });
    const [port, catalogPort, storePort] = [await freePort(), await freePort(), await freePort()];
    const up = spawn(process.execPath, [join(ROOT, 'bin', 'eider.ts'), 'up'], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? dir,
        DATABASE_URL: database.url,
        DATA_DIR: join(dir, '.eider'),
        PORT: String(port),
        CATALOG_PORT: String(catalogPort),
        OBJECT_STORE_PORT: String(storePort),
        RESULTS_HTTP_PORT: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    up.stdout.on('data', (d) => (out += d));
    up.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((res) => up.on('exit', (code) => res(code)));
    try {
      await expect.poll(() => out.includes('Eider is up.') || up.exitCode !== null, { timeout: 240_000, interval: 50 }).toBe(true);
      expect(out, out.slice(-3000)).toContain('Eider is up.');
      // Only the two lines the README tells a reader to point at their stack change.
      const script = block.replace(/^URL=.*$/m, `URL=http://127.0.0.1:${port}`).replace(/^TOKEN=.*$/m, `TOKEN=$(cat .eider/setup-token)`);
      const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 120_000 });
      expect(run.status, `${run.stderr}\n${run.stdout}`).toBe(0);
      const last = run.stdout.slice(run.stdout.lastIndexOf('{"rows":'));
      const page = JSON.parse(last) as { rows: { zone: string; trips: number }[]; total: number };
      expect(page.total).toBe(6);
      expect(page.rows.map((r) => r.zone).sort()).toEqual(['Airport', 'Harbor', 'Market', 'Old Town', 'Riverside', 'University']);
      expect(page.rows.reduce((n, r) => n + Number(r.trips), 0)).toBe(1_000_000);
      for (const r of page.rows) expect(Number(r.trips)).toBeGreaterThan(100_000);
    } finally {
      up.kill('SIGTERM');
      expect(await exited, out.slice(-2000)).toBe(0);
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
