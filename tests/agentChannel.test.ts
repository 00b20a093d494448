// The agent control channel from the api's side, driven by a raw WebSocket client speaking the protocol, and
// the operator actions on a real agent process (disconnect, credential revocation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PROTOCOL_VERSION, CLOSE_CODES } from '../protocol/index.ts';
import { setupAdmin, startTestApi, type Caller, type TestApi } from './support/api.ts';
import { startAgent, waitForHealthyAgent, cleanupAgentDir } from './support/agent.ts';
import { parseTrustedProxies } from '../runtime/trustedProxies.ts';
import { rawAgentSocket, type RawAgentSocket } from './support/frames.ts';

let t: TestApi;
let admin: Caller;

beforeAll(async () => {
  t = await startTestApi({ AGENT_BOOTSTRAP_TOKEN: 'seeded-bootstrap-token-xyz', AGENT_HEARTBEAT_INTERVAL_S: '0.3', AGENT_HEARTBEAT_TTL_S: '1.5', ACTOR_REAPER_TICK_S: '0.2' });
  admin = await setupAdmin(t);
});
afterAll(async () => t?.close());

const connect = (opts: { forwardedFor?: string } = {}): Promise<RawAgentSocket> =>
  rawAgentSocket(t.url, { headers: opts.forwardedFor ? { 'x-forwarded-for': opts.forwardedFor } : {}, timeoutMs: 5000 });

const auth = (p: Record<string, unknown>) => ({ type: 'auth', payload: { protocol_version: PROTOCOL_VERSION, results_port: 8001, agent_version: 'test', ...p } });
const capabilities = { engine_version: 'v1.5.6', extensions: [], memory_limit_bytes: 1024, max_concurrency_profile: 'auto' };

// X-Forwarded-For chooses the URL the api later calls with a Bearer token: believed only from TRUSTED_PROXIES,
// and only when it is a usable IP address.
async function resultHostFor(api: TestApi, as: Caller, forwardedFor: string, name: string): Promise<string> {
  const boot = await api.req('POST', '/api/admin/agents/bootstrap', { body: {}, as });
  const p = await rawAgentSocket(api.url, { headers: { 'x-forwarded-for': forwardedFor }, timeoutMs: 5000 });
  p.send(auth({ bootstrap_token: boot.body.token, name }));
  try {
    const ok = await p.next('auth_ok');
    const [row] = await api.database.db.query<{ result_url: string }>(`select result_url from eider.agents where id = $1`, [ok.payload.agent_id]);
    return new URL(row.result_url).hostname;
  } finally {
    p.ws.close();
  }
}

describe('X-Forwarded-For on /agents/connect', () => {
  it('from a trusted proxy, an address that is no usable IP falls back to the peer', async () => {
    expect(await resultHostFor(t, admin, '169.254.169.254', 'xff-metadata')).toBe('127.0.0.1');
    expect(await resultHostFor(t, admin, 'internal.example', 'xff-name')).toBe('127.0.0.1');
    expect(await resultHostFor(t, admin, '10.1.2.3', 'xff-ok')).toBe('10.1.2.3');
  });

  it('from a peer that is not a trusted proxy, the header is ignored', async () => {
    const other = await startTestApi({ TRUSTED_PROXIES: '10.0.0.0/8' });
    try {
      expect(await resultHostFor(other, await setupAdmin(other), '10.1.2.3', 'xff-untrusted')).toBe('127.0.0.1');
    } finally {
      await other.close();
    }
  });

  it('TRUSTED_PROXIES must list addresses or CIDR ranges', async () => {
    expect(() => parseTrustedProxies('10.0.0.0/8, ::1, 192.168.1.7')).not.toThrow();
    for (const bad of ['proxy.internal', '10.0.0.0/33', '10.0.0.1/8/2', '*']) expect(() => parseTrustedProxies(bad), bad).toThrow(/TRUSTED_PROXIES/);
  });
});

describe('an agent written from the spec\'s frame table alone', () => {
  it('registers with only a bootstrap token, turns healthy on bare capabilities, runs a dispatched query and reports it done', async () => {
    const boot = await t.req('POST', '/api/admin/agents/bootstrap', { body: { name: 'spec-minimal' }, as: admin });
    const p = await connect();
    let beating: ReturnType<typeof setInterval> | undefined;
    try {
      // auth: bootstrap_token; agent_status: capabilities; heartbeat: payload not shown (none sent).
      p.send({ type: 'auth', payload: { bootstrap_token: boot.body.token } });
      const ok = await p.next('auth_ok');
      expect(ok.payload.session_token).toEqual(expect.any(String));
      p.send({ type: 'agent_status', payload: { capabilities: {} } });
      // This api's heartbeat TTL is 1.5 s: beat as an agent does.
      beating = setInterval(() => p.send({ type: 'heartbeat', payload: {} }), 250);
      let agent: { id: string; status: string } | undefined;
      await expect
        .poll(async () => {
          agent = ((await t.req('GET', '/api/agents', { as: admin })).body as Array<{ id: string; name: string; status: string }>).find((a) => a.id === ok.payload.agent_id);
          return agent?.status;
        })
        .toBe('healthy');
      // dispatch_query: sql, backend, workspace slug; query_done: row_count, duration_ms, result_path (none here:
      // this api has no catalog service, so the statement names no table).
      const sub = await t.req('POST', '/api/workspaces/default/queries', { as: admin, body: { sql: 'SELECT 42', agent_id: agent!.id } });
      expect(sub.status, sub.text).toBe(202);
      const dispatch = await p.next('dispatch_query');
      expect(dispatch.payload).toMatchObject({ query_id: sub.body.id, sql: 'SELECT 42', workspace: 'default', backend: expect.any(String) });
      p.send({ type: 'query_done', payload: { query_id: sub.body.id, row_count: 1, duration_ms: 3, result_path: null } });
      const done = await t.req('GET', `/api/queries/${sub.body.id}?wait_timeout_s=10`, { as: admin });
      expect(done.body).toMatchObject({ status: 'done', row_count: 1 });
      // Its result server is taken to be on the spec's default port.
      const [row] = await t.database.db.query<{ result_url: string }>(`select result_url from eider.agents where id = $1`, [agent!.id]);
      expect(new URL(row.result_url).port).toBe('8001');
    } finally {
      clearInterval(beating);
      p.ws.close();
    }
  });
});

describe('agent channel', () => {
  it('bad frames get an error frame and the socket stays usable', async () => {
    const p = await connect();
    p.send('{not json');
    expect((await p.next('error')).payload.code).toBe('bad_json');
    p.send({ type: 'query_done', payload: { nope: 1 } });
    expect((await p.next('error')).payload.code).toBe('bad_frame');
    p.send({ type: 'teleport', payload: {} });
    expect((await p.next('error')).payload.code).toBe('unknown_frame_type');
    p.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } });
    expect((await p.next('error')).payload.message).toMatch(/authenticate first/);
    expect(p.ws.readyState).toBe(WebSocket.OPEN);
    p.ws.close();
  });

  it('a protocol version mismatch is refused with a reason and close code 4002', async () => {
    const p = await connect();
    p.send({ ...auth({ bootstrap_token: 'whatever' }), payload: { ...auth({ bootstrap_token: 'whatever' }).payload, protocol_version: 999 } });
    const err = await p.next('auth_error');
    expect(err.payload.code).toBe('protocol_version_mismatch');
    expect((await p.closed).code).toBe(CLOSE_CODES.protocolVersionMismatch);
  });

  it('an unknown bootstrap token is refused (4001); the seeded one registers once; the result address honours X-Forwarded-For from a trusted proxy', async () => {
    const bad = await connect();
    bad.send(auth({ bootstrap_token: 'not-a-token' }));
    expect((await bad.next('auth_error')).payload.code).toBe('invalid_bootstrap_token');
    expect((await bad.closed).code).toBe(CLOSE_CODES.authFailed);

    const p = await connect({ forwardedFor: '10.1.2.3, 192.168.0.1' });
    p.send(auth({ bootstrap_token: 'seeded-bootstrap-token-xyz', name: 'raw' }));
    const ok = await p.next('auth_ok');
    expect(ok.payload.session_token).toMatch(/^eid_agent_/);
    expect(ok.payload.heartbeat_interval_s).toBe(0.3);
    p.send({ type: 'agent_status', payload: { capabilities } });
    const id = await waitForHealthyAgent(t, admin, 'raw');
    expect(id).toBe(ok.payload.agent_id);
    const [row] = await t.database.db.query<{ result_url: string }>(`select result_url from eider.agents where id = $1`, [id]);
    // the loopback peer is a trusted proxy (default TRUSTED_PROXIES): the address it saw is the right-most hop
    expect(row.result_url).toBe('http://192.168.0.1:8001');
    // the api heartbeats too
    expect((await p.next('heartbeat')).payload.sent_at).toBeTruthy();

    const again = await connect();
    again.send(auth({ bootstrap_token: 'seeded-bootstrap-token-xyz', name: 'raw2' }));
    expect((await again.next('auth_error')).payload.code).toBe('invalid_bootstrap_token');

    // a silent agent (no heartbeats) becomes unavailable after the TTL, by the reaper
    await expect.poll(async () => (await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).body.status, { timeout: 10_000, interval: 100 }).toBe('unavailable');
    const closed = await p.closed;
    expect(closed.code).toBeGreaterThanOrEqual(1000);
  });

  it('presence is written once an interval: an unchanged status, or a heartbeat soon after the last renewal, is not written again; a changed status is', async () => {
    // Its own api with the default 10 s interval: half an interval (5 s) outlasts the frames below on a loaded machine.
    const api = await startTestApi({ AGENT_BOOTSTRAP_TOKEN: 'presence-bootstrap-token-xyz' });
    try {
      const as = await setupAdmin(api);
      const p = await rawAgentSocket(api.url, { timeoutMs: 5000 });
      p.send(auth({ bootstrap_token: 'presence-bootstrap-token-xyz', name: 'presence' }));
      await p.next('auth_ok');
      p.send({ type: 'agent_status', payload: { capabilities } });
      const id = await waitForHealthyAgent(api, as, 'presence');
      // Each transition the connection actor takes bumps its row's version (a quiet one too).
      const version = async () =>
        Number((await api.database.db.query<{ v: string }>(`select a.version as v from eider.actors a join eider.agents g on g.connection_id = a.id where g.id = $1 and a.kind = 'agentConnection'`, [id]))[0].v);
      const memory = async () => (await api.req('GET', `/api/admin/agents/${id}`, { as })).body.capabilities?.memory_limit_bytes;
      const status = (bytes: number) => p.send({ type: 'agent_status', payload: { capabilities: { ...capabilities, memory_limit_bytes: bytes } } });
      status(2048);
      await expect.poll(memory, { timeout: 10_000, interval: 50 }).toBe(2048);
      const before = await version();
      // Presence frames a little apart (each taken on its own: a newer one of a kind supersedes one still waiting),
      // then a changed status, which is written.
      for (let i = 0; i < 4; i++) {
        p.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } });
        status(2048);
        await new Promise((r) => setTimeout(r, 100));
      }
      status(4096);
      await expect.poll(memory, { timeout: 10_000, interval: 50 }).toBe(4096);
      expect(await version()).toBe(before + 1);
      p.ws.close();
    } finally {
      await api.close();
    }
  });

  it('presence is still renewed every interval: an agent sending heartbeats and its unchanged status stays healthy past the TTL', async () => {
    const boot = await t.req('POST', '/api/admin/agents/bootstrap', { body: {}, as: admin });
    const p = await connect();
    p.send(auth({ bootstrap_token: boot.body.token, name: 'presence-kept' }));
    await p.next('auth_ok');
    p.send({ type: 'agent_status', payload: { capabilities } });
    const id = await waitForHealthyAgent(t, admin, 'presence-kept');
    const beat = setInterval(() => {
      p.send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } });
      p.send({ type: 'agent_status', payload: { capabilities } });
    }, 300);
    try {
      const [{ at }] = await t.database.db.query<{ at: Date }>(`select last_heartbeat_at as at from eider.agents where id = $1`, [id]);
      await new Promise((r) => setTimeout(r, 2500));
      expect((await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).body.status).toBe('healthy');
      const [{ at: later }] = await t.database.db.query<{ at: Date }>(`select last_heartbeat_at as at from eider.agents where id = $1`, [id]);
      expect(later.getTime() - at.getTime()).toBeGreaterThan(1500);
    } finally {
      clearInterval(beat);
      p.ws.close();
    }
  });

  it('an agent may not report on a query it was not given', async () => {
    const boot = await t.req('POST', '/api/admin/agents/bootstrap', { body: {}, as: admin });
    const p = await connect();
    p.send(auth({ bootstrap_token: boot.body.token, name: 'liar' }));
    await p.next('auth_ok');
    p.send({ type: 'agent_status', payload: { capabilities } });
    p.send({ type: 'query_done', payload: { query_id: '00000000-0000-4000-8000-000000000000', row_count: 1, duration_ms: 1, result_path: null, column_schema: null, columns: [] } });
    expect((await p.next('error')).payload.code).toBe('unknown_query');
    p.ws.close();
  });
});

describe('operator actions on a real agent', () => {
  it('disconnect: the agent reconnects with its session token; revoking the credential keeps it out', async () => {
    const boot = await t.req('POST', '/api/admin/agents/bootstrap', { body: {}, as: admin });
    const agent = await startAgent(t, { bootstrapToken: boot.body.token, name: 'ops', env: { LOG_LEVEL: 'info' } });
    try {
      const id = await waitForHealthyAgent(t, admin, 'ops');
      const before = (await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).body.connection_id;
      expect((await t.req('POST', `/api/admin/agents/${id}/disconnect`, { as: admin })).status).toBe(202);
      // reconnected: healthy again on a new connection
      await expect
        .poll(
          async () => {
            const a = (await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).body;
            return a.status === 'healthy' ? a.connection_id : before;
          },
          { timeout: 15_000, interval: 100 },
        )
        .not.toBe(before);

      expect((await t.req('DELETE', `/api/admin/agents/${id}/credential`, { as: admin })).status).toBe(204);
      const [row] = await t.database.db.query<{ session_token_hash: string | null }>(`select session_token_hash from eider.agents where id = $1`, [id]);
      expect(row.session_token_hash).toBeNull();
      await expect.poll(async () => (await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).body.status, { timeout: 10_000, interval: 100 }).toBe('unavailable');
      // it cannot come back: it tries, its session token is refused and its bootstrap token was used
      await expect.poll(() => agent.logs(), { timeout: 10_000, interval: 100 }).toContain('invalid_session_token');
      expect((await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).body.status).toBe('unavailable');
      expect((await t.req('DELETE', `/api/admin/agents/${id}`, { as: admin })).status).toBe(204);
      expect((await t.req('GET', `/api/admin/agents/${id}`, { as: admin })).status).toBe(404);
    } finally {
      await agent.stop();
      cleanupAgentDir(agent);
    }
  });
});
