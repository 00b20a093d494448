import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { encodeAgentFrame, type AgentFrame } from '../protocol/index.ts';
import { AdmissionController, admissionOptions } from './admission.ts';
import { agentConfigFromEnv, type AgentConfig } from './config.ts';
import { engineOptions } from './engine.ts';
import { MemoryAsk } from './memoryAsk.ts';
import { QueryRunner } from './queryRunner.ts';
import { slotsForEngine } from './sandboxSlots.ts';

const MiB = 2 ** 20;
const LONG = 'SELECT count(*) FROM range(100000000000) a';
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eider-runner-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function setup(env: Record<string, string> = {}) {
  const config: AgentConfig = agentConfigFromEnv({
    CONTROL_PLANE_URL: 'ws://127.0.0.1:1/agents/connect',
    BOOTSTRAP_TOKEN: 'unused',
    AGENT_DATA_DIR: dataDir,
    ...env,
  });
  const budgetBytes = 1024 * MiB;
  const admission = new AdmissionController(admissionOptions(config, budgetBytes));
  const memoryAsk = new MemoryAsk(config, budgetBytes);
  const frames: AgentFrame[] = [];
  const waiters: Array<() => void> = [];
  const engine = engineOptions(config);
  const slots = slotsForEngine(engine);
  const runner = new QueryRunner({
    config,
    admission,
    memoryAsk,
    slots,
    logger: pino({ level: 'silent' }),
    engine,
    send: (frame) => {
      // Everything the agent sends must be a valid frame.
      const encoded = encodeAgentFrame(frame);
      expect(encoded.ok, JSON.stringify(frame)).toBe(true);
      frames.push(frame);
      for (const w of waiters.splice(0)) w();
    },
  });
  const outcome = async (queryId: string) => {
    for (;;) {
      const f = frames.find((x) => (x.type === 'query_done' || x.type === 'query_failed') && x.payload.query_id === queryId);
      if (f) return f;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const started = async (queryId: string) => {
    while (!frames.some((x) => x.type === 'query_started' && x.payload.query_id === queryId)) {
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const dispatch = (sql: string, timeout_s = 60) => {
    const query_id = randomUUID();
    runner.dispatch({ query_id, sql, workspace: 'default', backend: 'object_store', timeout_s });
    return query_id;
  };
  return { config, runner, admission, memoryAsk, slots, frames, outcome, started, dispatch };
}

describe('QueryRunner (real DuckDB)', () => {
  it('runs a statement whose size is known on a warm slot, with a small result inline', async () => {
    const t = setup({ RESULT_INLINE_MAX_BYTES: '65536' });
    const sql = `SELECT 42 AS answer, 'x' AS s`;
    const first = await t.outcome(t.dispatch(sql));
    // The first run sizes itself by EXPLAIN on an instance of its own; the estimate is then known.
    expect(t.slots.idleCount).toBe(0);
    for (let i = 0; i < 3; i++) {
      const done = await t.outcome(t.dispatch(sql));
      if (done.type !== 'query_done') throw new Error(JSON.stringify(done));
      expect(done.payload.row_count).toBe(1);
      const bytes = Buffer.from(done.payload.result_inline ?? '', 'base64');
      expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
      expect((await stat(join(t.config.resultsDir, basename(done.payload.result_path!)))).size).toBe(bytes.length);
      await vi.waitFor(() => expect(t.slots.idleCount).toBe(1));
    }
    expect(first.type).toBe('query_done');
    // Cancelled on a slot: reported as cancelled, and the slot serves the next query.
    const sized = t.dispatch(LONG);
    await t.started(sized);
    t.runner.cancel(sized);
    await t.outcome(sized);
    const id = t.dispatch(LONG);
    await t.started(id);
    t.runner.cancel(id);
    const cancelled = await t.outcome(id);
    expect(cancelled.type === 'query_failed' && cancelled.payload.error.code).toBe('cancelled');
    const after = await t.outcome(t.dispatch(sql));
    expect(after.type).toBe('query_done');
    await t.runner.close();
  });

  it('reports query_started then query_done with the result, schema and profile', async () => {
    const t = setup();
    const id = t.dispatch('SELECT range AS n, range::VARCHAR AS s FROM range(10)');
    const done = await t.outcome(id);
    expect(done.type).toBe('query_done');
    if (done.type !== 'query_done') return;
    expect(done.payload).toMatchObject({
      row_count: 10, result_path: `results/${id}.parquet`, columns: ['n', 's'], statement_type: 'select',
      column_schema: [{ name: 'n', type: 'BIGINT' }, { name: 's', type: 'VARCHAR' }],
    });
    expect(done.payload.profile?.summary.rows).toBe(10);
    expect(t.frames.findIndex((f) => f.type === 'query_started')).toBeLessThan(t.frames.indexOf(done));
    expect((await stat(join(t.config.resultsDir, `${id}.parquet`))).size).toBeGreaterThan(0);
    expect(t.runner.inFlightCount).toBe(0);
    // The outcome goes out first; the reservation lasts until the engine is closed, just after.
    await vi.waitFor(() => expect(t.admission.stats.reservedBytes).toBe(0));
  });

  it('reports SQL errors as sql_error with the engine message', async () => {
    const t = setup();
    const id = t.dispatch('SELECT * FROM no_such_table');
    const f = await t.outcome(id);
    expect(f).toMatchObject({ type: 'query_failed', payload: { error: { code: 'sql_error' } } });
    if (f.type === 'query_failed') expect(f.payload.error.message).toMatch(/no_such_table/);
  });

  it('cancel interrupts a running statement', async () => {
    const t = setup();
    const id = t.dispatch(LONG);
    await t.started(id);
    const begin = Date.now();
    expect(t.runner.cancel(id)).toBe(true);
    const f = await t.outcome(id);
    expect(f).toMatchObject({ type: 'query_failed', payload: { error: { code: 'cancelled' } } });
    expect(Date.now() - begin).toBeLessThan(5000);
    expect(t.runner.cancel(id)).toBe(false);
    expect(t.runner.cancel(randomUUID())).toBe(false);
  });

  it('the timeout interrupts a running statement (capped by MAX_TIMEOUT_S)', async () => {
    const t = setup({ MAX_TIMEOUT_S: '0.5' });
    const begin = Date.now();
    const id = t.dispatch(LONG, 3600);
    const f = await t.outcome(id);
    expect(f).toMatchObject({ type: 'query_failed', payload: { error: { code: 'timeout' } } });
    expect(Date.now() - begin).toBeLessThan(5000);
  });

  it('queue full and queued timeout under the single ladder', async () => {
    const t = setup({ MAX_CONCURRENCY_PROFILE: 'single', MAX_QUEUE_DEPTH: '1', QUEUED_TIMEOUT_S: '0.5' });
    const running = t.dispatch(LONG);
    await t.started(running);
    const queued = t.dispatch('SELECT 1');
    while (!t.admission.isQueued(queued)) await new Promise((r) => setTimeout(r, 5));
    const rejected = t.dispatch('SELECT 2');
    expect(await t.outcome(rejected)).toMatchObject({ type: 'query_failed', payload: { error: { code: 'queue_full', message: 'queue full' } } });
    expect(await t.outcome(queued)).toMatchObject({ type: 'query_failed', payload: { error: { code: 'queued_timeout', message: 'queued timeout' } } });
    t.runner.cancel(running);
    await t.outcome(running);
  });

  it('a queued query runs when the running one finishes, and cancel of a queued query never runs it', async () => {
    const t = setup({ MAX_CONCURRENCY_PROFILE: 'single' });
    const running = t.dispatch(LONG);
    await t.started(running);
    const waiting = t.dispatch('SELECT 7 AS x');
    const dropped = t.dispatch('SELECT 8 AS x');
    while (t.admission.stats.queued < 2) await new Promise((r) => setTimeout(r, 10));
    t.runner.cancel(dropped);
    expect(await t.outcome(dropped)).toMatchObject({ type: 'query_failed', payload: { error: { code: 'cancelled' } } });
    t.runner.cancel(running);
    expect(await t.outcome(waiting)).toMatchObject({ type: 'query_done', payload: { row_count: 1 } });
    expect(t.frames.some((f) => f.type === 'query_started' && f.payload.query_id === dropped)).toBe(false);
  });

  it('remembers the measured peak for the same statement and forgets it after a write', async () => {
    const t = setup();
    const sql = 'SELECT range % 1000 AS k, count(*) AS c FROM range(200000) GROUP BY k';
    expect(t.memoryAsk.fromFeedback(sql)).toBeNull();
    await t.outcome(t.dispatch(sql));
    expect(t.memoryAsk.fromFeedback(sql)?.source).toBe('feedback');
    await t.outcome(t.dispatch('CREATE TABLE w (a INTEGER)'));
    expect(t.memoryAsk.fromFeedback(sql)).toBeNull();
  });
});
