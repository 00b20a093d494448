// The agent's CPU per trivial query, in-process: `SELECT 42` dispatched to a QueryRunner on warm sandbox slots (as
// `eider agent` runs it, without the socket), its query_done frame awaited. CPU is this process's (every thread,
// DuckDB's included, from the kernel), so the figure holds on a shared machine better than a latency does.
// Run by hand: node bench/agentCpu.ts [queries] [concurrency] [sql]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { AgentFrame } from '../protocol/index.ts';
import { AdmissionController, admissionOptions } from '../agent/admission.ts';
import { agentConfigFromEnv } from '../agent/config.ts';
import { engineOptions } from '../agent/engine.ts';
import { MemoryAsk } from '../agent/memoryAsk.ts';
import { QueryRunner } from '../agent/queryRunner.ts';
import { slotsForEngine } from '../agent/sandboxSlots.ts';

const total = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 4);
const sql = process.argv[4] ?? 'SELECT 42';
const dataDir = mkdtempSync(join(tmpdir(), 'eider-bench-agentcpu-'));
const config = agentConfigFromEnv({ CONTROL_PLANE_URL: 'ws://127.0.0.1:1/agents/connect', BOOTSTRAP_TOKEN: 'unused', AGENT_DATA_DIR: dataDir, ...process.env });
const budgetBytes = 1024 * 2 ** 20;
const engine = engineOptions(config);
const waiting = new Map<string, (frame: AgentFrame) => void>();
const runner = new QueryRunner({
  config,
  admission: new AdmissionController(admissionOptions(config, budgetBytes)),
  memoryAsk: new MemoryAsk(config, budgetBytes),
  slots: slotsForEngine(engine),
  logger: pino({ level: 'silent' }),
  engine,
  send: (frame) => {
    if (frame.type === 'query_done' || frame.type === 'query_failed') waiting.get(frame.payload.query_id)?.(frame);
  },
});

async function once(): Promise<void> {
  const id = randomUUID();
  const frame = await new Promise<AgentFrame>((resolve) => {
    waiting.set(id, resolve);
    runner.dispatch({ query_id: id, sql, workspace: 'bench', backend: 'object_store', timeout_s: 60 });
  });
  waiting.delete(id);
  if (frame.type !== 'query_done') throw new Error(JSON.stringify(frame));
}

async function run(n: number): Promise<void> {
  let started = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (started++ < n) await once();
  }));
}

try {
  await run(200); // warm: slots made, the statement's size learned
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(total);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  console.log(`${sql}: ${total} queries, ${concurrency} at a time, ${(total / seconds).toFixed(0)}/s`);
  console.log(`agent CPU per query: ${((cpu.user + cpu.system) / 1000 / total).toFixed(3)} ms (user ${(cpu.user / 1000 / total).toFixed(3)}, system ${(cpu.system / 1000 / total).toFixed(3)})`);
} finally {
  await runner.close();
  rmSync(dataDir, { recursive: true, force: true });
}
