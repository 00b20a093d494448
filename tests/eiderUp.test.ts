// `eider up` as a user runs it, on its embedded PostgreSQL: killed with SIGKILL (it cannot stop anything), its parts
// stop with it and the next `eider up` on the same DATA_DIR stops the PostgreSQL server it left and comes up; the
// server killed under a running stack is started again; a terminal's Ctrl-C (SIGINT to the whole process group) stops everything in order, the database last, so the api
// drains with no error and nothing is left running.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childrenOf, exited, listeningAddresses, pollUntil, processRunning } from './support/processes.ts';
import { freeUpPorts, startEiderUp, type EiderUp } from './support/eiderUp.ts';

const serverPid = (dataDir: string) => Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);

describe('eider up on its embedded PostgreSQL', () => {
  it('killed, takes its parts with it and the next start stops the server it left; restarts a killed server; Ctrl-C stops all in order', { timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'eider-up-'));
    const ports = await freeUpPorts();
    let second: EiderUp | undefined;
    const first = startEiderUp({ dataDir, ports });
    try {
      await first.ready();
      const server = serverPid(dataDir);
      const parts = childrenOf(first.child.pid!).filter((p) => p !== server);
      expect(parts.length).toBe(4); // object store, catalog, api, agent
      // With HOST unset, no part listens beyond loopback (the api, the agent's result server, the store, the catalog).
      const listening = parts.flatMap(listeningAddresses);
      expect(listening.length).toBeGreaterThanOrEqual(4);
      expect(listening.filter((a) => !a.startsWith('127.'))).toEqual([]);
      // The banner offers the setup token while no admin exists; once one does, a restart no longer prints it.
      expect(first.out()).toContain('Setup token:');
      const setupToken = readFileSync(join(dataDir, 'setup-token'), 'utf8').trim();
      const admin = await fetch(`http://127.0.0.1:${ports.api}/api/setup/admin`, {
        method: 'POST',
        headers: { 'x-setup-token': setupToken, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'up@example.com', password: 'a-long-password', name: 'Up' }),
      });
      expect(admin.status).toBe(201);

      first.child.kill('SIGKILL');
      const left = await pollUntil(async () => parts.filter(processRunning), (l) => l.length === 0, 30_000, 200);
      expect(left, 'parts still running after their supervisor was killed').toEqual([]);
      // The server, in a process group of its own, outlives it: nothing was left to stop it.
      expect(processRunning(server)).toBe(true);

      second = startEiderUp({ dataDir, ports });
      await second.ready();
      expect(second.out()).toContain(`stopping PostgreSQL (pid ${server}) left running`);
      expect(second.out()).not.toContain('Setup token:');
      expect(second.out()).toContain('the first admin exists');
      expect(processRunning(server)).toBe(false);
      const again = await fetch(`http://127.0.0.1:${ports.api}/api/readyz`);
      expect(again.status).toBe(200);

      // The server killed under the running stack: `eider up` starts it again, and the api is ready again.
      const killed = serverPid(dataDir);
      process.kill(killed, 'SIGKILL');
      const ready = async () => (await fetch(`http://127.0.0.1:${ports.api}/api/readyz`).catch(() => null))?.status ?? 0;
      expect(await pollUntil(ready, (s) => s === 503, 30_000, 100)).toBe(503);
      expect(await pollUntil(ready, (s) => s === 200, 90_000, 200)).toBe(200);
      expect(second.out()).toContain('PostgreSQL is running again');
      expect(serverPid(dataDir)).not.toBe(killed);

      // Ctrl-C: SIGINT to the whole foreground group, as a terminal sends it.
      const server2 = serverPid(dataDir);
      const parts2 = childrenOf(second.child.pid!);
      expect(parts2).toContain(server2);
      const log = second.out().length;
      process.kill(-second.child.pid!, 'SIGINT');
      await exited(second.child);
      expect(second.child.exitCode).toBe(0);
      expect(parts2.filter(processRunning)).toEqual([]);
      // The database outlived the api's drain: no error on the way down.
      const shutdown = second.out().slice(log);
      expect(shutdown, shutdown.slice(-3000)).not.toMatch(/"level":(50|60)/);
      expect(shutdown).not.toContain('ENOENT /tmp/.s.PGSQL');
    } finally {
      for (const c of [first.child, second?.child]) if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      try {
        const pid = serverPid(dataDir);
        if (processRunning(pid)) process.kill(pid, 'SIGINT');
        await pollUntil(async () => processRunning(pid), (a) => !a, 30_000, 200);
      } catch {
        // no server left
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
