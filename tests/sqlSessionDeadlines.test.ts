// The SQL session deadlines that only an agent which never answers can show, fired by the real reaper: an open the
// agent never acknowledges fails `open_timeout` after SQL_SESSION_OPENING_DEADLINE_S, and a statement it never
// acknowledges fails `ack_timeout` after SQL_STATEMENT_ACK_DEADLINE_S. The agent is a raw WebSocket client speaking
// the protocol (bootstrap token, agent_status with the sql_sessions feature, heartbeats) that answers only what
// each test tells it to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../protocol/index.ts';
import { setupAdmin, startTestStack, type Caller, type TestStack } from './support/api.ts';
import { waitForHealthyAgent } from './support/agent.ts';
import { rawAgentSocket, type RawAgentSocket } from './support/frames.ts';

const BOOT = 'bootstrap-token-for-session-deadlines';
const OPENING_DEADLINE_S = 2;
const ACK_DEADLINE_S = 1;

interface SilentAgent extends Pick<RawAgentSocket, 'next' | 'send'> {
  close(): void;
}

/** An agent that authenticates, reports sql_sessions, heartbeats, and otherwise answers nothing on its own. */
async function silentAgent(url: string, name: string): Promise<SilentAgent> {
  const { ws, next, send } = await rawAgentSocket(url, { timeoutMs: 15_000 });
  send({ type: 'auth', payload: { protocol_version: PROTOCOL_VERSION, results_port: 8001, agent_version: 'test', bootstrap_token: BOOT, name } });
  await next('auth_ok');
  send({
    type: 'agent_status',
    payload: {
      capabilities: {
        engine_version: 'v1.5.6',
        extensions: [],
        memory_limit_bytes: 2 ** 30,
        max_concurrency_profile: 'auto',
        features: ['cancel_ack', 'column_schema', 'statement_type', 'sql_sessions'],
      },
    },
  });
  const beat = setInterval(() => send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString(), in_flight: 0 } }), 500);
  return {
    next,
    send,
    close: () => {
      clearInterval(beat);
      ws.close();
    },
  };
}

let t: TestStack;
let admin: Caller;
let agent: SilentAgent;
let agentId: string;

beforeAll(async () => {
  // The stack, not the api alone: a statement's dispatch carries a catalog token for the workspace's catalog.
  t = await startTestStack({
    AGENT_BOOTSTRAP_TOKEN: BOOT,
    SQL_SESSIONS_ENABLED: 'true',
    SQL_SESSION_OPEN_TIMEOUT_S: '1',
    SQL_SESSION_OPENING_DEADLINE_S: String(OPENING_DEADLINE_S),
    SQL_STATEMENT_ACK_DEADLINE_S: String(ACK_DEADLINE_S),
    ACTOR_REAPER_TICK_S: '0.2',
    SQL_SESSION_REAPER_TICK_S: '0.2',
  });
  admin = await setupAdmin(t);
  agent = await silentAgent(t.url, 'silent');
  agentId = await waitForHealthyAgent(t, admin, 'silent');
}, 60_000);
afterAll(async () => {
  agent?.close();
  await t?.close();
});

const session = async (id: string) => (await t.req('GET', `/api/sql/sessions/${id}`, { as: admin })).body;

describe('SQL session deadlines through the reaper', () => {
  it('a session the agent never acknowledges fails open_timeout after SQL_SESSION_OPENING_DEADLINE_S, and the agent is told to drop it', async () => {
    const opened = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, wait_timeout_s: 0, on_wait_timeout: 'continue' } });
    expect(opened.status, opened.text).toBe(202);
    expect(opened.body.status).toBe('opening');
    const id = opened.body.id;
    // The agent was asked, and says nothing.
    await agent.next('open_session', (f) => f.payload.session_id === id);
    await expect.poll(async () => (await session(id)).status, { timeout: 15_000, interval: 100 }).toBe('failed');
    const failed = await session(id);
    expect(failed).toMatchObject({ close_reason: 'open_timeout', error: `the agent did not acknowledge the session within ${OPENING_DEADLINE_S} s` });
    // Not before its deadline (the reaper fires it on its next tick after that).
    expect(Date.parse(failed.closed_at) - Date.parse(failed.created_at)).toBeGreaterThanOrEqual(OPENING_DEADLINE_S * 1000);
    // Whatever the agent may have reserved meanwhile is released: it is told to drop the session.
    expect((await agent.next('close_session', (f) => f.payload.session_id === id)).payload.reason).toBe('open_timeout');
    const late = await t.req('POST', `/api/sql/sessions/${id}/statements`, { as: admin, body: { sql: 'SELECT 1' } });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('session_not_open');
    expect((await t.req('GET', '/api/metrics')).text).toMatch(/eider_sql_sessions_ended\{reason="open_timeout"\} [1-9]/);
  });

  it('a statement the agent never acknowledges fails ack_timeout after SQL_STATEMENT_ACK_DEADLINE_S; the session stays usable', async () => {
    const opening = t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, wait_timeout_s: 10 } });
    const open = await agent.next('open_session');
    agent.send({ type: 'session_opened', payload: { session_id: open.payload.session_id, reserved_bytes: 64 * 2 ** 20 } });
    const opened = await opening;
    expect(opened.status, opened.text).toBe(201);
    const id = opened.body.id;
    expect(id).toBe(open.payload.session_id);

    const submitted = await t.req('POST', `/api/sql/sessions/${id}/statements`, { as: admin, body: { sql: 'SELECT 1' } });
    expect(submitted.status, submitted.text).toBe(202);
    const statementId = submitted.body.id;
    await agent.next('execute_statement', (f) => f.payload.statement_id === statementId);
    await expect.poll(async () => (await t.req('GET', `/api/queries/${statementId}`, { as: admin })).body.status, { timeout: 15_000, interval: 100 }).toBe('failed');
    const statement = (await t.req('GET', `/api/queries/${statementId}`, { as: admin })).body;
    expect(statement).toMatchObject({
      origin: 'session',
      session_id: id,
      error_code: 'ack_timeout',
      error: `the agent did not acknowledge the statement within ${ACK_DEADLINE_S} s`,
    });
    expect(Date.parse(statement.finished_at) - Date.parse(statement.started_at)).toBeGreaterThanOrEqual(ACK_DEADLINE_S * 1000);
    // The agent is told to drop it, in case it only lost the acknowledgement.
    await agent.next('cancel_query', (f) => f.payload.query_id === statementId);

    // The session is still open, and a statement the agent does answer finishes.
    expect((await session(id)).status).toBe('open');
    const again = await t.req('POST', `/api/sql/sessions/${id}/statements`, { as: admin, body: { sql: 'SELECT 2' } });
    expect(again.status, again.text).toBe(202);
    const next = await agent.next('execute_statement', (f) => f.payload.statement_id === again.body.id);
    agent.send({ type: 'query_started', payload: { query_id: next.payload.statement_id, queued_ms: 0 } });
    agent.send({ type: 'query_done', payload: { query_id: next.payload.statement_id, row_count: 0, duration_ms: 1, result_path: null, column_schema: null, columns: [] } });
    await expect.poll(async () => (await t.req('GET', `/api/queries/${again.body.id}`, { as: admin })).body.status, { timeout: 10_000, interval: 100 }).toBe('done');

    expect((await t.req('DELETE', `/api/sql/sessions/${id}`, { as: admin })).status).toBe(204);
    const close = await agent.next('close_session', (f) => f.payload.session_id === id);
    agent.send({ type: 'session_closed', payload: { session_id: close.payload.session_id } });
    await expect.poll(async () => (await session(id)).status, { timeout: 10_000, interval: 100 }).toBe('closed');
  });
});
