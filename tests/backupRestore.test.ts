// docs/backup.md's procedure for the one-machine stack, end to end: a table written and a query in history, the stack
// stopped, its DATA_DIR copied (the cold backup), the original removed, and a stack started on the copy reads the same
// table and the same history.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from './support/processes.ts';
import { freeUpPorts, startEiderUp, type UpPorts } from './support/eiderUp.ts';

const up = (dataDir: string, ports: UpPorts) => startEiderUp({ dataDir, ports, home: dataDir, env: { LOG_LEVEL: 'warn' } });

describe('backup and restore of the one-machine stack', () => {
  it('a stopped stack\'s DATA_DIR copied to a fresh place comes up with the same tables and history', { timeout: 400_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'eider-backup-'));
    const original = join(root, 'original');
    const restored = join(root, 'restored');
    const ports = await freeUpPorts();
    const url = `http://127.0.0.1:${ports.api}`;
    const json = { 'content-type': 'application/json' };
    const signIn = async () => {
      const login = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'b@example.com', password: 'a-long-password' }) });
      expect(login.status).toBe(200);
      return { ...json, cookie: (login.headers.get('set-cookie') ?? '').split(';')[0], origin: url };
    };
    const healthyAgent = async (as: Record<string, string>) =>
      (await pollUntil(
        async () => ((await (await fetch(`${url}/api/agents`, { headers: as })).json()) as { id: string; status: string }[]).find((a) => a.status === 'healthy'),
        (a) => a !== undefined,
        60_000,
      ))!.id;
    const run = async (as: Record<string, string>, agent: string, sql: string) => {
      const q = (await (await fetch(`${url}/api/workspaces/default/queries`, { method: 'POST', headers: as, body: JSON.stringify({ sql, agent_id: agent }) })).json()) as { id: string };
      expect(q.id, JSON.stringify(q)).toBeTruthy();
      const done = (await (await fetch(`${url}/api/queries/${q.id}?wait_timeout_s=60`, { headers: as })).json()) as { status: string };
      expect(done.status, JSON.stringify(done)).toBe('done');
      return { id: q.id, rows: ((await (await fetch(`${url}/api/queries/${q.id}/rows`, { headers: as })).json()) as { rows: unknown[] }).rows };
    };
    try {
      const first = up(original, ports);
      let written: { id: string };
      try {
        await first.ready();
        const token = readFileSync(join(original, 'setup-token'), 'utf8').trim();
        const admin = await fetch(`${url}/api/setup/admin`, { method: 'POST', headers: { ...json, 'x-setup-token': token }, body: JSON.stringify({ email: 'b@example.com', password: 'a-long-password', name: 'B' }) });
        expect(admin.status).toBe(201);
        const as = await signIn();
        const agent = await healthyAgent(as);
        await run(as, agent, 'CREATE SCHEMA IF NOT EXISTS kept');
        written = await run(as, agent, 'CREATE TABLE kept.numbers AS SELECT range AS n, range * 2 AS twice FROM range(1000)');
      } finally {
        await first.stop();
      }

      // The cold backup: the whole DATA_DIR of the stopped stack (database, object store, secrets), then the
      // original is gone, as on a lost machine.
      const copy = spawnSync('cp', ['-a', original, restored]);
      expect(copy.status, String(copy.stderr)).toBe(0);
      rmSync(original, { recursive: true, force: true });

      const second = up(restored, ports);
      try {
        await second.ready();
        const as = await signIn();
        const agent = await healthyAgent(as);
        const read = await run(as, agent, 'SELECT count(*) AS n, sum(twice) AS s FROM kept.numbers');
        // sum() of a BIGINT is a HUGEINT, which travels as a string (exact past 2^53).
        expect(read.rows).toEqual([{ n: 1000, s: '999000' }]);
        const history = (await (await fetch(`${url}/api/workspaces/default/queries?limit=100`, { headers: as })).json()) as { items: { id: string }[] };
        expect(history.items.map((q) => q.id)).toContain(written!.id);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
