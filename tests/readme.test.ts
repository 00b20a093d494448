// The README's first steps are a contract: its curl block, run verbatim as a script the moment `eider up` prints
// its URL (only URL and TOKEN pointed at this stack), ends with the sample's six zones and their counts.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeUpPorts, startEiderUp } from './support/eiderUp.ts';
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
    const ports = await freeUpPorts();
    const port = ports.api;
    // The README's stack as it starts: the sample seed on.
    const stack = startEiderUp({ dataDir: join(dir, '.eider'), ports, cwd: dir, env: { DATABASE_URL: database.url, SEED_SAMPLES: 'true', LOG_LEVEL: 'warn' } });
    const up = stack.child;
    const exited = new Promise<number | null>((res) => up.on('exit', (code) => res(code)));
    try {
      await stack.ready();
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
      expect(await exited, stack.out().slice(-2000)).toBe(0);
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
