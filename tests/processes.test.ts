// The api as real processes: two replicas on one empty database migrate once and both become ready; a bad
// configuration value stops the process with one line naming the variable.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from './support/database.ts';
import { eventually } from './support/processes.ts';
import { freePort } from '../runtime/postgres.ts';

const NODE = process.execPath;
const EIDER = join(import.meta.dirname, '..', 'bin', 'eider.ts');

function run(args: string[], env: Record<string, string>) {
  const child = spawn(NODE, [EIDER, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return { child, exited, output: () => ({ out, err }) };
}

async function waitReady(url: string, ms = 60_000) {
  await eventually(`ready: ${url}`, () => fetch(url).then((r) => r.ok, () => false), ms);
}

describe('api processes', () => {
  it('two replicas started at once on one empty database migrate once and both become ready', async () => {
    const database = await freshDatabase({ empty: true });
    const dir = mkdtempSync(join(tmpdir(), 'eider-rep-'));
    const [p1, p2] = [await freePort(), await freePort()];
    const common = { DATABASE_URL: database.url, LOG_LEVEL: 'info', SETUP_TOKEN: 'x'.repeat(24) };
    const a = run(['api'], { ...common, PORT: String(p1), DATA_DIR: join(dir, 'a'), REPLICA_ID: 'a' });
    const b = run(['api'], { ...common, PORT: String(p2), DATA_DIR: join(dir, 'b'), REPLICA_ID: 'b' });
    try {
      await Promise.all([waitReady(`http://127.0.0.1:${p1}/api/readyz`), waitReady(`http://127.0.0.1:${p2}/api/readyz`)]);
      const rows = await database.db.query<{ version: string }>(`select version from eider.schema_migrations order by version`);
      expect(rows.length).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => r.version)).size).toBe(rows.length);
      const logs = a.output().out + b.output().out;
      const appliedLines = logs.split('\n').filter((l) => l.includes('"migrations applied"'));
      expect(appliedLines.length).toBe(1);
      expect((await fetch(`http://127.0.0.1:${p2}/api/version`)).status).toBe(200);
    } finally {
      a.child.kill('SIGTERM');
      b.child.kill('SIGTERM');
      expect(await a.exited, a.output().err + a.output().out.slice(-2000)).toBe(0);
      expect(await b.exited).toBe(0);
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad configuration value stops the process with one line naming it', async () => {
    for (const [name, value, expected] of [
      ['PORT', 'eighty', 'PORT: invalid value "eighty"'],
      ['COOKIE_SECURE', 'sometimes', 'COOKIE_SECURE: invalid value "sometimes"'],
      ['SQL_SESSION_OPENING_DEADLINE_S', '10', 'SQL_SESSION_OPENING_DEADLINE_S'],
      ['DATABASE_URL', 'mysql://u:secretpw@h/db', 'DATABASE_URL: invalid value (hidden)'],
    ] as const) {
      const p = run(['api'], { [name]: value, DATA_DIR: mkdtempSync(join(tmpdir(), 'eider-cfg-')) });
      const code = await p.exited;
      const { err } = p.output();
      expect(code).toBe(2);
      const lines = err.trim().split('\n');
      expect(lines.length).toBe(1);
      expect(lines[0]).toContain(expected);
      expect(lines[0]).toContain('expected');
      expect(err).not.toContain('secretpw');
    }
  });
});
