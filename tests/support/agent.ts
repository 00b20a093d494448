// Agents as real processes (`eider agent`) dialling a test api over a real WebSocket.
import { onTestFinished, vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller, TestApi } from './api.ts';

const EIDER = join(import.meta.dirname, '..', '..', 'bin', 'eider.ts');

export interface TestAgent {
  child: ChildProcess;
  dataDir: string;
  logs(): string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash) and wait for exit. */
  kill(): Promise<void>;
  /** Starts the same agent again (same data dir: it reconnects with its stored session token). */
  restart(): Promise<TestAgent>;
}

export async function startAgent(t: TestApi, opts: { bootstrapToken: string; name?: string; env?: Record<string, string>; dataDir?: string }): Promise<TestAgent> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'eider-agent-'));
  const wsUrl = t.url.replace(/^http/, 'ws') + '/agents/connect';
  let logs = '';
  const child = spawn(process.execPath, [EIDER, 'agent'], {
    env: {
      PATH: process.env.PATH ?? '',
      CONTROL_PLANE_URL: wsUrl,
      BOOTSTRAP_TOKEN: opts.bootstrapToken,
      AGENT_DATA_DIR: dataDir,
      AGENT_NAME: opts.name ?? 'test-agent',
      RESULTS_HTTP_PORT: '0',
      RESULTS_HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...(opts.env ?? {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (logs += d));
  child.stderr!.on('data', (d) => (logs += d));
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const self: TestAgent = {
    child,
    dataDir,
    logs: () => logs,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    restart: () => startAgent(t, { ...opts, dataDir }),
  };
  return self;
}

/** Waits until an agent named `name` is healthy as `caller` sees it; returns its id. */
export async function waitForHealthyAgent(t: TestApi, caller: Caller, name: string, timeoutMs = 30_000): Promise<string> {
  // vi.waitFor, not expect.poll: this also runs in beforeAll hooks, outside any test.
  return vi.waitFor(
    async () => {
      const r = await t.req('GET', '/api/agents', { as: caller });
      const id = (r.body as { id: string; name: string; status: string }[] | undefined)?.find?.((x) => x.name === name && x.status === 'healthy')?.id;
      if (!id) throw new Error(`agent ${name} not healthy: ${r.text}`);
      return id;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

export function cleanupAgentDir(a: TestAgent) {
  rmSync(a.dataDir, { recursive: true, force: true });
}

/** An agent for the running test only: stopped and its directory removed when the test ends, whatever the outcome. */
export async function agentForTest(t: TestApi, opts: Parameters<typeof startAgent>[1]): Promise<TestAgent> {
  const a = await startAgent(t, opts);
  onTestFinished(async () => {
    await a.stop();
    cleanupAgentDir(a);
  });
  return a;
}
