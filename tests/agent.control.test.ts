// The agent as a real child process against a real WebSocket server that speaks the control protocol and
// validates every frame the agent sends (the api side is built separately).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AddressInfo } from 'node:net';
import {
  CLOSE_CODES,
  PROTOCOL_VERSION,
  decodeAgentFrame,
  encodeServiceFrame,
  type AgentFrame,
  type ServiceFrame,
} from '../protocol/index.ts';
import { Arrivals, FrameInbox } from './support/frames.ts';

const BOOTSTRAP = 'bootstrap-secret-b7f3';
const SESSION = 'session-secret-9c21';
const AGENT_ID = randomUUID();

/** One connection of the agent: the frames it sent (decoded and validated), and those that did not decode. */
class Connection {
  readonly invalid: string[] = [];
  readonly socket: WebSocket;
  readonly #inbox = new FrameInbox<AgentFrame>(15_000);
  constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data) => {
      const decoded = decodeAgentFrame(data.toString());
      if (decoded.ok) this.#inbox.push(decoded.frame);
      else this.invalid.push(`${decoded.error.code}: ${decoded.error.message}`);
    });
    socket.on('close', (code) => this.#inbox.end(`the agent's socket closed (${code})`));
  }
  send(frame: ServiceFrame): void {
    const encoded = encodeServiceFrame(frame);
    if (!encoded.ok) throw new Error(encoded.error.message);
    this.socket.send(encoded.text);
  }
  next: FrameInbox<AgentFrame>['next'] = (type, where, timeoutMs) => this.#inbox.next(type, where, timeoutMs);
}

class ControlPlane {
  readonly wss: WebSocketServer;
  readonly #connections = new Arrivals<Connection>(() => 'a connection');
  constructor() {
    this.wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/agents/connect' });
    this.wss.on('connection', (socket) => this.#connections.push(new Connection(socket)));
  }
  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/agents/connect`;
  }
  /** The agent's connections one by one, in the order it made them. */
  nextConnection(timeoutMs = 20_000): Promise<Connection> {
    return this.#connections.take('connection from the agent', () => true, timeoutMs);
  }
  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}

let dataDir: string;
let plane: ControlPlane;
const logs: string[] = [];

function startAgent(): ChildProcess {
  const child = spawn(process.execPath, ['agent/cli.ts'], {
    cwd: join(import.meta.dirname, '..'),
    env: {
      PATH: process.env.PATH,
      CONTROL_PLANE_URL: plane.url,
      BOOTSTRAP_TOKEN: BOOTSTRAP,
      AGENT_DATA_DIR: dataDir,
      AGENT_NAME: 'test-agent',
      RESULTS_HTTP_PORT: '0',
      RESULTS_HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => logs.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  return child;
}

async function stopAgent(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

function authOk(c: Connection, sessionToken?: string, ttl = 30, features?: string[]): void {
  c.send({
    type: 'auth_ok',
    payload: { agent_id: AGENT_ID, ...(sessionToken ? { session_token: sessionToken } : {}), heartbeat_interval_s: 0.2, heartbeat_ttl_s: ttl, ...(features ? { features } : {}) },
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'eider-agent-'));
  plane = new ControlPlane();
  await new Promise<void>((r) => (plane.wss.address() ? r() : plane.wss.once('listening', () => r())));
});

afterAll(async () => {
  await plane.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('agent control channel (child process, real WebSocket)', () => {
  it('authenticates, runs and cancels queries, serves results, survives bad frames, reconnects with its session token', async () => {
    let agent = startAgent();
    try {
      // 1. First connection: bootstrap token.
      let c = await plane.nextConnection();
      const auth = await c.next('auth');
      expect(auth.payload).toMatchObject({ bootstrap_token: BOOTSTRAP, protocol_version: PROTOCOL_VERSION, name: 'test-agent' });
      expect(auth.payload.session_token).toBeUndefined();
      expect(auth.payload.results_port).toBeGreaterThan(0);
      const resultsPort = auth.payload.results_port;
      authOk(c, SESSION);
      const status = await c.next('agent_status');
      expect(status.payload.capabilities.engine_version).toMatch(/^v?\d/);
      expect(status.payload.capabilities.memory_limit_bytes).toBeGreaterThan(0);
      expect(status.payload.capabilities.extensions).toContain('parquet');
      // Heartbeats flow, each followed by a re-advertised agent_status.
      await c.next('heartbeat');
      await c.next('agent_status');
      const heartbeats = setInterval(() => c.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } }), 200);
      try {
        // The session token is stored for restarts, private to the agent's user.
        const tokenFile = await stat(join(dataDir, 'session-token'));
        expect(tokenFile.mode & 0o777).toBe(0o600);

        // 2. Bad frames are answered with an error frame; the agent keeps working.
        c.socket.send('{not json');
        expect((await c.next('error')).payload.code).toBe('bad_json');
        c.socket.send(JSON.stringify({ type: 'dispatch_query', payload: { query_id: 'x' } }));
        const bad = await c.next('error');
        expect(bad.payload).toMatchObject({ code: 'bad_frame', frame_type: 'dispatch_query' });
        c.socket.send(JSON.stringify({ type: 'query_done', payload: {} }));
        expect((await c.next('error')).payload.code).toBe('unexpected_frame_type');

        // 3. A SELECT: started, done, and the result is readable over HTTP with the session token only.
        const q1 = randomUUID();
        c.send({ type: 'dispatch_query', payload: { query_id: q1, sql: 'SELECT 42::DECIMAL(10,2) AS answer, 1 AS answer', workspace: 'default', backend: 'object_store', timeout_s: 30 } });
        await c.next('query_started', (f) => f.payload.query_id === q1);
        const done = await c.next('query_done', (f) => f.payload.query_id === q1);
        expect(done.payload).toMatchObject({
          row_count: 1, result_path: `results/${q1}.parquet`, columns: ['answer', 'answer_1'],
          column_schema: [{ name: 'answer', type: 'DECIMAL(10,2)' }, { name: 'answer_1', type: 'INTEGER' }],
        });
        const resultUrl = `http://127.0.0.1:${resultsPort}/results/${q1}.parquet`;
        const res = await fetch(resultUrl, { headers: { authorization: `Bearer ${SESSION}` } });
        expect(res.status).toBe(200);
        expect(Buffer.from(await res.arrayBuffer()).subarray(0, 4).toString()).toBe('PAR1');
        expect((await fetch(resultUrl, { headers: { authorization: `Bearer ${BOOTSTRAP}` } })).status).toBe(401);

        // 4. Cancel interrupts a long query: cancel_ack, then query_failed cancelled.
        const q2 = randomUUID();
        c.send({ type: 'dispatch_query', payload: { query_id: q2, sql: 'SELECT count(*) FROM range(100000000000)', workspace: 'default', backend: 'object_store', timeout_s: 600 } });
        await c.next('query_started', (f) => f.payload.query_id === q2);
        c.send({ type: 'cancel_query', payload: { query_id: q2 } });
        expect((await c.next('cancel_ack', (f) => f.payload.query_id === q2)).payload.found).toBe(true);
        expect((await c.next('query_failed', (f) => f.payload.query_id === q2)).payload.error.code).toBe('cancelled');

        // 5. DDL reports no grid.
        const q3 = randomUUID();
        c.send({ type: 'dispatch_query', payload: { query_id: q3, sql: 'CREATE TABLE t (a INTEGER)', workspace: 'default', backend: 'object_store', timeout_s: 30 } });
        expect((await c.next('query_done', (f) => f.payload.query_id === q3)).payload).toMatchObject({ result_path: null, column_schema: null, row_count: 0, statement_type: 'create' });
      } finally {
        clearInterval(heartbeats);
      }
      expect(c.invalid).toEqual([]);

      // 6. The control plane drops the socket: the agent reconnects with its session token.
      c.socket.close(CLOSE_CODES.shutdown, 'replica shutting down');
      c = await plane.nextConnection();
      const reauth = await c.next('auth');
      expect(reauth.payload.session_token).toBe(SESSION);
      expect(reauth.payload.bootstrap_token).toBeUndefined();
      authOk(c, undefined, 0.6);
      await c.next('agent_status');

      // 7. The control plane goes silent past the TTL: the agent drops the socket and dials again.
      const silentSince = Date.now();
      c = await plane.nextConnection();
      expect(Date.now() - silentSince).toBeGreaterThanOrEqual(400);
      expect((await c.next('auth')).payload.session_token).toBe(SESSION);

      // 8. Restart: the new process reconnects with the stored session token.
      c.socket.terminate();
      expect(await stopAgent(agent)).toBe(0);
      agent = startAgent();
      c = await plane.nextConnection();
      expect((await c.next('auth')).payload).toMatchObject({ session_token: SESSION });
      expect(c.invalid).toEqual([]);
    } finally {
      await stopAgent(agent);
    }
    // No token ever reaches a log.
    const allLogs = logs.join('');
    expect(allLogs).toContain('connected to control plane');
    expect(allLogs).not.toContain(SESSION);
    expect(allLogs).not.toContain(BOOTSTRAP);
  }, 150_000);

  it('runs a short statement and a cancel at once while more long statements run than libuv has threads by default', async () => {
    // DuckDB's calls run on libuv's pool (4 threads by default): five long statements held it, and a `SELECT 42` or a
    // cancelled statement's end waited for one of them to finish (agent/threadPool.ts). Five, not more: each also
    // keeps DuckDB's own threads busy, and the short statement's CPU share shrinks with every one.
    const agent = startAgent();
    const c = await plane.nextConnection();
    await c.next('auth');
    authOk(c, SESSION);
    await c.next('agent_status');
    const heartbeats = setInterval(() => c.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } }), 200);
    const long = Array.from({ length: 5 }, () => randomUUID());
    try {
      for (const id of long) {
        c.send({ type: 'dispatch_query', payload: { query_id: id, sql: 'SELECT count(*) FROM range(100000000000)', workspace: 'default', backend: 'object_store', timeout_s: 600 } });
      }
      for (const id of long) await c.next('query_started', (f) => f.payload.query_id === id);
      // Admitted: each statement's calls are queued on the pool ahead of the short one's.
      const short = randomUUID();
      let started = Date.now();
      c.send({ type: 'dispatch_query', payload: { query_id: short, sql: 'SELECT 42 AS answer', workspace: 'default', backend: 'object_store', timeout_s: 30 } });
      expect((await c.next('query_done', (f) => f.payload.query_id === short, 5_000)).payload.row_count).toBe(1);
      // Starved, it would wait for a long statement to end (minutes); 3 s leaves room for a loaded 2-core machine.
      expect(Date.now() - started).toBeLessThan(3_000);

      started = Date.now();
      c.send({ type: 'cancel_query', payload: { query_id: long[0] } });
      expect((await c.next('query_failed', (f) => f.payload.query_id === long[0], 5_000)).payload.error.code).toBe('cancelled');
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      for (const id of long.slice(1)) c.send({ type: 'cancel_query', payload: { query_id: id } });
      for (const id of long.slice(1)) await c.next('query_failed', (f) => f.payload.query_id === id, 30_000).catch(() => undefined);
      clearInterval(heartbeats);
      await stopAgent(agent);
    }
  }, 90_000);

  it('sends query_progress only to a control plane that names it, from the first second on, and none after the outcome', async () => {
    // DuckDB measures a table scan's progress (not range()'s): a script makes the table, then hashes every row.
    // Tens of seconds on any machine (both runs are cancelled). The hashing is a CTAS: a script's trailing SELECT was
    // over in a moment (its result is not read), and a fast machine finished the script before the test cancelled it.
    const slow = `CREATE TABLE big AS SELECT range AS x FROM range(10000000); CREATE TABLE hashed AS SELECT count(DISTINCT md5(x::varchar || 'salt')) AS d, sum(length(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(md5(x::varchar)))))))))))))))))))))))))))))))))) AS l FROM big`;
    const agent = startAgent();
    let c = await plane.nextConnection();
    await c.next('auth');
    authOk(c, SESSION, 30, ['query_progress']);
    await c.next('agent_status');
    let heartbeats = setInterval(() => c.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } }), 200);
    try {
      const q1 = randomUUID();
      c.send({ type: 'dispatch_query', payload: { query_id: q1, sql: slow, workspace: 'default', backend: 'object_store', timeout_s: 600 } });
      await c.next('query_started', (f) => f.payload.query_id === q1);
      const started = Date.now();
      const progress = await c.next('query_progress', (f) => f.payload.query_id === q1, 30_000);
      const firstAfterMs = Date.now() - started;
      expect(firstAfterMs).toBeGreaterThanOrEqual(800);
      expect(progress.payload.percent).toBeGreaterThanOrEqual(0);
      expect(progress.payload.percent).toBeLessThanOrEqual(100);
      expect(progress.payload.rows_total).toBeGreaterThanOrEqual(3_000_000);
      c.send({ type: 'cancel_query', payload: { query_id: q1 } });
      expect((await c.next('query_failed', (f) => f.payload.query_id === q1, 10_000)).payload.error.code).toBe('cancelled');
      while (await c.next('query_progress', (f) => f.payload.query_id === q1, 100).catch(() => null)); // any sent before the cancel
      // Time itself must pass: two of the agent's 1 s progress periods go by without a report of the cancelled query.
      await new Promise((r) => setTimeout(r, 2_000));
      await expect(c.next('query_progress', undefined, 100)).rejects.toThrow();

      // The same agent on an older control plane (its auth_ok names no features): none, for twice as long as the
      // first one took to come and at least 3 s.
      clearInterval(heartbeats);
      c.socket.close();
      c = await plane.nextConnection();
      await c.next('auth');
      authOk(c, SESSION);
      await c.next('agent_status');
      heartbeats = setInterval(() => c.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } }), 200);
      const q2 = randomUUID();
      c.send({ type: 'dispatch_query', payload: { query_id: q2, sql: slow, workspace: 'default', backend: 'object_store', timeout_s: 600 } });
      await c.next('query_started', (f) => f.payload.query_id === q2);
      await new Promise((r) => setTimeout(r, Math.max(3_000, 2 * firstAfterMs)));
      c.send({ type: 'cancel_query', payload: { query_id: q2 } });
      await c.next('query_failed', (f) => f.payload.query_id === q2, 10_000);
      await expect(c.next('query_progress', undefined, 100)).rejects.toThrow();
      expect(c.invalid).toEqual([]);
    } finally {
      clearInterval(heartbeats);
      await stopAgent(agent);
    }
  }, 120_000);

  it('logs a protocol version mismatch and falls back to the bootstrap token when the session token is refused', async () => {
    const agent = startAgent(); // the session token file from the previous test is still there
    try {
      let c = await plane.nextConnection();
      expect((await c.next('auth')).payload.session_token).toBe(SESSION);
      c.send({ type: 'auth_error', payload: { code: 'protocol_version_mismatch', message: 'service speaks 99' } });
      c.socket.close(CLOSE_CODES.protocolVersionMismatch, 'protocol version mismatch');
      c = await plane.nextConnection();
      // A version mismatch does not discard the credential.
      expect((await c.next('auth')).payload.session_token).toBe(SESSION);
      c.send({ type: 'auth_error', payload: { code: 'invalid_token', message: 'session revoked' } });
      c = await plane.nextConnection();
      const auth = await c.next('auth');
      expect(auth.payload.bootstrap_token).toBe(BOOTSTRAP);
      expect(auth.payload.session_token).toBeUndefined();
    } finally {
      await stopAgent(agent);
    }
    const allLogs = logs.join('');
    expect(allLogs).toContain('protocol_version_mismatch');
    expect(allLogs).toContain('protocol version mismatch');
  });
});
