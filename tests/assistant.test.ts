// The data assistant on the real stack (a real agent process, the real catalog and object store), talking to a
// chat-completions server run inside this test: the one stand-in allowed, for the external model service. The
// server scripts the model's answers (text, tool calls) and keeps every request it got, so the tests check what the
// model was sent as much as what the user gets back: a multi-step turn, the request limit, the approval of writes,
// the per-turn token, privacy, the switch, streaming, the deployment-wide concurrency cap, metrics and spans.
import { beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import { newUser, startTestApi, type Caller, type TestApi } from './support/api.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlpReceiver.ts';

const KEY = 'sk-test-model-key-0123456789';
const W = '/api/workspaces/default';
const C = `${W}/assistant/conversations`;

// ---- the model: an OpenAI-compatible chat-completions server ------------------------------------------------------

/** One scripted answer: text (streamed in pieces), tool calls, or both; `hold` delays it until resolved. */
interface Step {
  text?: string;
  calls?: Array<{ name: string; arguments: Record<string, unknown> }>;
  hold?: Promise<void>;
}

interface Received {
  headers: IncomingMessage['headers'];
  body: any;
}

interface ModelServer {
  url: string;
  received: Received[];
  /** answers the next requests in this order; past the end, `fallback` */
  script(steps: Step[], fallback?: Step): void;
  /** resolves with the next request that arrives */
  nextRequest(): Promise<Received>;
  close(): Promise<void>;
}

async function startModel(): Promise<ModelServer> {
  let steps: Step[] = [];
  let fallback: Step = { text: 'nothing scripted' };
  const received: Received[] = [];
  let waiters: Array<(r: Received) => void> = [];
  let n = 0;
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw);
    const got = { headers: req.headers, body };
    received.push(got);
    const ws = waiters;
    waiters = [];
    for (const w of ws) w(got);
    const step = steps.shift() ?? fallback;
    await step.hold;
    const id = `chatcmpl-${++n}`;
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant' }));
    // Text in small pieces, tool calls with their arguments split across chunks: as real endpoints stream them.
    for (const piece of (step.text ?? '').match(/.{1,6}/gs) ?? []) res.write(chunk({ content: piece }));
    for (const [index, call] of (step.calls ?? []).entries()) {
      const args = JSON.stringify(call.arguments);
      const half = Math.floor(args.length / 2);
      res.write(chunk({ tool_calls: [{ index, id: `call_${n}_${index}`, type: 'function', function: { name: call.name, arguments: args.slice(0, half) } }] }));
      res.write(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
    }
    res.write(chunk({}, step.calls?.length ? 'tool_calls' : 'stop'));
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    script(s, f) {
      steps = [...s];
      if (f) fallback = f;
    },
    nextRequest: () => new Promise((r) => waiters.push(r)),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

// ---- the stack --------------------------------------------------------------------------------------------------


const model = await startModel();
const otlp = await startOtlpReceiver();
const { t, admin, agentId } = await stackWithAgent({
  env: {
    ASSISTANT_ENABLED: 'true',
    ASSISTANT_OPENAI_BASE_URL: model.url,
    ASSISTANT_MODEL: 'openai:test-model',
    ASSISTANT_API_KEY: KEY,
    ASSISTANT_MAX_OUTPUT_TOKENS: '321',
    ASSISTANT_RESULT_ROW_CAP: '5',
    ASSISTANT_PAT_TTL_S: '120',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  },
  agent: { name: 'assistant-agent' },
  closeAfter: [model, otlp],
});
beforeAll(async () => {
  // A table for the assistant to find: seven zones.
  const made = await t.req('POST', `${W}/queries`, {
    body: { sql: "CREATE TABLE zones AS SELECT range AS id, 'zone ' || range AS name FROM range(7)", agent_id: agentId },
    as: admin,
  });
  expect(made.status, made.text).toBe(202);
  const done = await t.req('GET', `/api/queries/${made.body.id}?wait_timeout_s=60`, { as: admin });
  expect(done.body.status, done.text).toBe('done');
});

const config = () => t.api.ctx.config as unknown as Record<string, unknown>;
/** Runs `fn` with configuration changed on the running api (the assistant reads it per request and per turn). */
async function withConfig<T>(patch: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(patch).map((k) => [k, config()[k]]));
  Object.assign(config(), patch);
  try {
    return await fn();
  } finally {
    Object.assign(config(), before);
  }
}

async function newConversation(as: Caller = admin): Promise<string> {
  const r = await t.req('POST', C, { body: {}, as });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}

const ask = (id: string, body: Record<string, unknown>, as: Caller = admin) => t.req('POST', `${C}/${id}/messages`, { body, as });
const tablesInMain = async () =>
  ((await t.req('GET', `${W}/catalogs/warehouse/schemas/main/tables`, { as: admin })).body as Array<{ name: string }>).map((x) => x.name);
const toolMessages = (r: Received) => (r.body.messages as any[]).filter((m) => m.role === 'tool');

/** The events of a server-sent stream, in order. */
function parseEvents(text: string): Array<{ event: string; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

describe('the data assistant', () => {
  it('a multi-step turn: list_tables, then run_sql, then an answer citing the rows; what the model was sent', async () => {
    const id = await newConversation();
    const from = model.received.length;
    model.script([
      { calls: [{ name: 'list_tables', arguments: { workspace: 'default', catalog: 'warehouse', schema: 'main' } }] },
      { text: 'Let me count them.', calls: [{ name: 'run_sql', arguments: { workspace: 'default', sql: 'SELECT id, name FROM zones ORDER BY id' } }] },
      { text: 'There are 7 zones; the first is zone 0.' },
    ]);
    const r = await ask(id, { content: 'How many zones are there?' });
    expect(r.status, r.text).toBe(200);
    const sent = model.received.slice(from);
    expect(sent).toHaveLength(3);

    // Every request: the model part of ASSISTANT_MODEL, the key as Bearer, the output cap, /mcp's tools as functions.
    for (const s of sent) {
      expect(s.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(s.body).toMatchObject({ model: 'test-model', max_tokens: expect.any(Number), stream: true });
      expect(s.body.tools.map((x: any) => x.function.name).sort()).toEqual(
        ['describe_table', 'explain_metric', 'get_lineage', 'get_query_result', 'get_semantic_model', 'list_catalogs', 'list_schemas', 'list_tables', 'list_workspaces', 'query_metric', 'read_doc_page', 'run_sql', 'search_docs', 'search_semantic'].sort(),
      );
      expect(s.body.tools.find((x: any) => x.function.name === 'run_sql').function.parameters).toMatchObject({ type: 'object', properties: { workspace: expect.any(Object), sql: expect.any(Object) } });
    }
    // The output cap is per turn: the first request may use all of it, the next what the reported usage left.
    expect(sent.map((s) => s.body.max_tokens)).toEqual([321, 314, 307]);
    const first = sent[0].body.messages as any[];
    expect(first[0].role).toBe('system');
    expect(first[0].content).toContain('"default"');
    expect(first.at(-1)).toEqual({ role: 'user', content: 'How many zones are there?' });
    // The second request carries the first call and its result; the third, the rows (cut to ASSISTANT_RESULT_ROW_CAP).
    const [listed] = toolMessages(sent[1]);
    expect(sent[1].body.messages.find((m: any) => m.role === 'assistant').tool_calls[0]).toMatchObject({ id: listed.tool_call_id, function: { name: 'list_tables' } });
    expect(JSON.parse(listed.content).map((x: any) => x.name)).toContain('zones');
    const ran = JSON.parse(toolMessages(sent[2])[1].content);
    expect(ran).toMatchObject({ status: 'done', columns: ['id', 'name'], total_rows: 7, truncated: true });
    expect(ran.rows).toHaveLength(5);
    expect(ran.rows[0]).toMatchObject({ name: 'zone 0' });

    // The answer: the question, the model's messages with their recorded calls, the final text.
    expect(r.body.conversation).toMatchObject({ id, state: 'idle', title: 'How many zones are there?' });
    const msgs = r.body.messages as any[];
    expect(msgs.map((m) => [m.role, m.finish])).toEqual([
      ['user', null],
      ['assistant', 'tool_calls'],
      ['assistant', 'tool_calls'],
      ['assistant', 'answer'],
    ]);
    expect(msgs[1].tool_calls[0]).toMatchObject({ name: 'list_tables', status: 'ok', truncated: false });
    expect(JSON.parse(msgs[1].tool_calls[0].arguments)).toEqual({ workspace: 'default', catalog: 'warehouse', schema: 'main' });
    expect(msgs[2]).toMatchObject({ content: 'Let me count them.', tool_calls: [{ name: 'run_sql', status: 'ok', truncated: true }] });
    expect(JSON.parse(msgs[2].tool_calls[0].result).rows).toHaveLength(5);
    expect(msgs[3].content).toBe('There are 7 zones; the first is zone 0.');
    // Stored: the conversation reads back the same, and the next turn replays it to the model.
    const read = await t.req('GET', `${C}/${id}`, { as: admin });
    expect(read.body.messages).toEqual(msgs);
    model.script([{ text: 'Still 7.' }]);
    await ask(id, { content: 'And now?' });
    const replay = model.received.at(-1)!.body.messages as any[];
    expect(replay.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'user']);
    // ASSISTANT_HISTORY_TURN_CAP=1: the turn before this one and this one; 0: this one alone.
    for (const [cap, roles] of [
      [1, ['system', 'user', 'assistant', 'user']],
      [0, ['system', 'user']],
    ] as const) {
      model.script([{ text: 'Yes.' }]);
      await withConfig({ ASSISTANT_HISTORY_TURN_CAP: cap }, () => ask(id, { content: `cap ${cap}?` }));
      const sentNow = model.received.at(-1)!.body.messages as any[];
      expect(sentNow.map((m) => m.role)).toEqual(roles);
      expect(sentNow.at(-1).content).toBe(`cap ${cap}?`);
    }
    // Still in order, however many messages (their order is numeric, never textual).
    const all = (await t.req('GET', `${C}/${id}`, { as: admin })).body.messages as any[];
    expect(all.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['How many zones are there?', 'And now?', 'cap 1?', 'cap 0?']);
    const listed2 = await t.req('GET', C, { as: admin });
    expect(listed2.body.items.map((c: any) => c.id)).toContain(id);
  });

  it('stops at ASSISTANT_REQUEST_LIMIT with a note; the calls of the last answer are not run', async () => {
    const id = await newConversation();
    const from = model.received.length;
    model.script([], { calls: [{ name: 'list_workspaces', arguments: {} }] });
    const r = await withConfig({ ASSISTANT_REQUEST_LIMIT: 2 }, () => ask(id, { content: 'Loop forever' }));
    model.script([], { text: 'nothing scripted' });
    expect(r.status, r.text).toBe(200);
    expect(model.received.length - from).toBe(2);
    const msgs = r.body.messages as any[];
    expect(msgs.map((m) => m.finish)).toEqual([null, 'tool_calls', 'tool_calls', 'request_limit']);
    expect(msgs[1].tool_calls[0].status).toBe('ok');
    expect(msgs[2].tool_calls[0]).toMatchObject({ status: 'skipped', result: expect.stringContaining('ASSISTANT_REQUEST_LIMIT') });
    expect(msgs[3].content).toContain('ASSISTANT_REQUEST_LIMIT');
    expect(r.body.conversation.state).toBe('idle');
    const metrics = (await t.req('GET', '/api/metrics')).text;
    expect(metrics).toMatch(/eider_assistant_tool_calls_total\{tool="list_workspaces",outcome="skipped"\} [1-9]/);
    expect(metrics).toMatch(/eider_assistant_turns_total\{outcome="request_limit"\} [1-9]/);
  });

  it('a write waits for the user: not run until approved, runs once approved; a rejected write stays undone', async () => {
    const id = await newConversation();
    model.script([{ text: 'I will create it.', calls: [{ name: 'run_sql', arguments: { workspace: 'default', sql: 'CREATE TABLE approved_t AS SELECT 1 AS x', agent_id: agentId } }] }]);
    const asked = await ask(id, { content: 'Make a table approved_t' });
    expect(asked.status, asked.text).toBe(200);
    expect(asked.body.conversation.state).toBe('approval_required');
    const waiting = asked.body.messages.at(-1).tool_calls[0];
    expect(waiting).toMatchObject({ name: 'run_sql', status: 'approval_required' });
    expect(await tablesInMain()).not.toContain('approved_t');
    expect((await t.req('GET', `${C}/${id}`, { as: admin })).body.state).toBe('approval_required');

    // Nothing else goes on while it waits; a decision must name the waiting call.
    const blocked = await ask(id, { content: 'something else' });
    expect([blocked.status, blocked.body.error]).toEqual([409, 'approval_pending']);
    const wrong = await ask(id, { tool_call_id: '00000000-0000-4000-8000-000000000000', decision: 'approve' });
    expect([wrong.status, wrong.body.error]).toEqual([409, 'no_pending_approval']);

    const from = model.received.length;
    model.script([{ text: 'Created approved_t.' }]);
    const approved = await ask(id, { tool_call_id: waiting.id, decision: 'approve' });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.conversation.state).toBe('idle');
    const call = approved.body.messages.flatMap((m: any) => m.tool_calls).find((c: any) => c.id === waiting.id);
    expect(call.status).toBe('ok');
    expect(JSON.parse(call.result)).toMatchObject({ status: 'done' });
    expect(approved.body.messages.at(-1)).toMatchObject({ content: 'Created approved_t.', finish: 'answer' });
    expect(await tablesInMain()).toContain('approved_t');
    expect(JSON.parse(toolMessages(model.received[from]).at(-1).content)).toMatchObject({ status: 'done' });

    // Rejected: recorded, never run, and the model is told.
    model.script([{ calls: [{ name: 'run_sql', arguments: { workspace: 'default', sql: 'CREATE TABLE rejected_t AS SELECT 1 AS x' } }] }, { text: 'Understood, not created.' }]);
    const second = await ask(id, { content: 'Now make rejected_t' });
    const pending = second.body.messages.at(-1).tool_calls[0];
    expect(pending.status).toBe('approval_required');
    const rejected = await ask(id, { tool_call_id: pending.id, decision: 'reject' });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.body.messages.flatMap((m: any) => m.tool_calls).find((c: any) => c.id === pending.id).status).toBe('rejected');
    expect(toolMessages(model.received.at(-1)!).at(-1).content).toContain('rejected');
    expect(await tablesInMain()).not.toContain('rejected_t');
    expect(rejected.body.conversation.state).toBe('idle');
    const metrics = (await t.req('GET', '/api/metrics')).text;
    expect(metrics).toMatch(/eider_assistant_tool_calls_total\{tool="run_sql",outcome="approval_required"\} [1-9]/);
    expect(metrics).toMatch(/eider_assistant_tool_calls_total\{tool="run_sql",outcome="rejected"\} [1-9]/);
    expect(metrics).toMatch(/eider_assistant_turns_total\{outcome="approval_required"\} [1-9]/);
  });

  it('tools act with a token of the user made for the turn, living at most ASSISTANT_PAT_TTL_S and refused once the turn ends', async () => {
    const app = t.api.app;
    const inject = app.inject.bind(app);
    const seen = new Set<string>();
    const lifetimes: number[] = [];
    (app as any).inject = async (opts: any) => {
      const auth: string | undefined = opts?.headers?.authorization;
      if (auth && !seen.has(auth)) {
        seen.add(auth);
        const hash = createHash('sha256').update(auth.slice('Bearer '.length)).digest('hex');
        const [row] = await t.database.db.query<{ user_id: string; ttl: number }>(
          `select user_id, extract(epoch from expires_at - created_at)::int as ttl from eider.access_tokens where token_hash = $1`,
          [hash],
        );
        expect(row.user_id).toBe(admin.id);
        lifetimes.push(row.ttl);
      }
      return inject(opts);
    };
    try {
      const id = await newConversation();
      model.script([{ calls: [{ name: 'list_workspaces', arguments: {} }] }, { text: 'One workspace.' }]);
      const r = await ask(id, { content: 'Which workspaces?' });
      expect(r.status, r.text).toBe(200);
    } finally {
      (app as any).inject = inject;
    }
    expect(seen.size).toBe(1);
    expect(lifetimes).toEqual([120]);
    const [token] = [...seen].map((a) => a.slice('Bearer '.length));
    expect(token).toMatch(/^eid_pat_/);
    // Refused by the REST API now that the turn is over, and never sent to the model.
    const after = await t.req('GET', '/api/me', { as: { token } });
    expect([after.status, after.body.error]).toEqual([401, 'unauthorized']);
    expect(JSON.stringify(model.received)).not.toContain(token);
    // The assistant's service account (made at startup) is the actor the audit trail names for the token it issued
    // and revoked on the user's behalf; the token itself appears nowhere in it.
    const accounts = (await t.req('GET', '/api/admin/service-accounts', { as: admin })).body.items as any[];
    const assistant = accounts.find((a) => a.name === 'assistant');
    expect(assistant).toBeDefined();
    const audit = await t.req('GET', `/api/admin/audit?actor_id=${assistant.id}&action=token.create&action=token.revoke`, { as: admin });
    expect(audit.status, audit.text).toBe(200);
    const actions = (audit.body.items as any[]).map((e) => e.action);
    expect(actions).toContain('token.create');
    expect(actions).toContain('token.revoke');
    expect(audit.text).not.toContain(token);
  });

  it('conversations are private to the user who started them (404 for anyone else, admins included)', async () => {
    const member = await newUser(t, admin);
    expect((await t.req('PUT', `${W}/members/${member.id}`, { body: { role: 'reader' }, as: admin })).status).toBeLessThan(300);
    const mine = await newConversation(member);
    model.script([{ text: 'Hello.' }]);
    expect((await ask(mine, { content: 'hi' }, member)).status).toBe(200);
    const theirs = await newConversation(admin);
    for (const [as, id] of [
      [member, theirs],
      [admin, mine],
    ] as const) {
      expect((await t.req('GET', `${C}/${id}`, { as })).status).toBe(404);
      const r = await ask(id, { content: 'peek' }, as);
      expect([r.status, r.body.error]).toEqual([404, 'not_found']);
    }
    expect((await t.req('GET', C, { as: member })).body.items.map((c: any) => c.id)).toEqual([mine]);
    expect((await t.req('GET', C, { as: admin })).body.items.map((c: any) => c.id)).not.toContain(mine);
    const stranger = await newUser(t, admin);
    expect((await t.req('GET', C, { as: stranger })).status).toBe(404);
  });

  it('lists conversations as every page does: limit 1 to 1000, default 100, a cursor to the next page', async () => {
    const member = await newUser(t, admin);
    expect((await t.req('PUT', `${W}/members/${member.id}`, { body: { role: 'reader' }, as: admin })).status).toBeLessThan(300);
    for (let i = 0; i < 101; i++) await newConversation(member);
    const first = await t.req('GET', C, { as: member });
    expect([first.status, first.body.items.length, first.body.has_more]).toEqual([200, 100, true]);
    const rest = await t.req('GET', `${C}?cursor=${encodeURIComponent(first.body.cursor)}`, { as: member });
    expect([rest.body.items.length, rest.body.has_more, rest.body.cursor]).toEqual([1, false, null]);
    for (const limit of [0, 1001]) expect((await t.req('GET', `${C}?limit=${limit}`, { as: member })).status).toBe(422);
  });

  it('answers 503 assistant_disabled while ASSISTANT_ENABLED is off (read per request), 503 assistant_unconfigured without an endpoint', async () => {
    const id = await newConversation();
    await withConfig({ ASSISTANT_ENABLED: false }, async () => {
      for (const [method, path] of [
        ['GET', C],
        ['POST', C],
        ['GET', `${C}/${id}`],
        ['POST', `${C}/${id}/messages`],
      ] as const) {
        const r = await t.req(method, path, { as: admin, ...(method === 'POST' ? { body: { content: 'hi' } } : {}) });
        expect([path, r.status, r.body.error]).toEqual([path, 503, 'assistant_disabled']);
      }
    });
    expect((await t.req('GET', C, { as: admin })).status).toBe(200);
    const r = await withConfig({ ASSISTANT_OPENAI_BASE_URL: null, ASSISTANT_MODEL: 'elsewhere:some-model' }, () => ask(id, { content: 'hi' }));
    expect([r.status, r.body.error]).toEqual([503, 'assistant_unconfigured']);
    expect((await t.req('GET', `${C}/${id}`, { as: admin })).body.messages).toEqual([]);
  });

  it('streams a turn as server-sent events, in order, ending with the stored messages', async () => {
    const id = await newConversation();
    model.script([{ calls: [{ name: 'list_workspaces', arguments: {} }] }, { text: 'You have the default workspace.' }]);
    const res = await fetch(`${t.url}${C}/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${admin.token}` },
      body: JSON.stringify({ content: 'Where am I?' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = parseEvents(await res.text());
    const names = events.map((e) => e.event);
    // question, the model's call, the call running and done, the answer's text in pieces, the answer, the end
    expect(names.filter((n, i) => n !== 'delta' || names[i - 1] !== 'delta')).toEqual(['message', 'message', 'tool_call', 'tool_result', 'delta', 'message', 'done']);
    expect(events[0].data).toMatchObject({ role: 'user', content: 'Where am I?' });
    expect(events[1].data.tool_calls[0]).toMatchObject({ name: 'list_workspaces', status: 'pending' });
    expect(events[2].data).toMatchObject({ message_id: events[1].data.id, tool_call: { status: 'running' } });
    expect(events[3].data).toMatchObject({ message_id: events[1].data.id, tool_call: { status: 'ok' } });
    const deltas = events.filter((e) => e.event === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    const answer = events.at(-2)!.data;
    expect(deltas.map((d) => d.data.text).join('')).toBe('You have the default workspace.');
    expect(deltas.every((d) => d.data.message_id === answer.id)).toBe(true);
    const done = events.at(-1)!.data;
    expect(done.messages.at(-1)).toEqual(answer);
    expect((await t.req('GET', `${C}/${id}`, { as: admin })).body.messages).toEqual(done.messages);
  });

  it('runs at most ASSISTANT_MAX_CONCURRENCY turns across replicas: 429 assistant_busy elsewhere, 409 on the same conversation', async () => {
    // A second replica on the same database, with its own (unrelated) process-local state.
    const second: TestApi = await startTestApi(
      { REPLICA_ID: 'second', ASSISTANT_ENABLED: 'true', ASSISTANT_OPENAI_BASE_URL: model.url, ASSISTANT_MODEL: 'openai:test-model', ASSISTANT_MAX_CONCURRENCY: '1', CATALOG_URL: t.stack.catalog.url, STORE_ENDPOINT: t.stack.store.endpoint },
      { database: t.database },
    );
    try {
      await withConfig({ ASSISTANT_MAX_CONCURRENCY: 1 }, async () => {
        const one = await newConversation();
        const two = await newConversation();
        let release!: () => void;
        model.script([{ text: 'Finally.', hold: new Promise<void>((r) => (release = r)) }, { text: 'My turn.' }]);
        const arrived = model.nextRequest();
        const running = ask(one, { content: 'Take your time' });
        await arrived;
        try {
          expect((await t.req('GET', `${C}/${one}`, { as: admin })).body.state).toBe('running');
          const same = await ask(one, { content: 'Again' });
          expect([same.status, same.body.error]).toEqual([409, 'turn_in_progress']);
          for (const api of [t, second] as const) {
            const busy = await api.req('POST', `${C}/${two}/messages`, { body: { content: 'Me too' }, as: admin });
            expect([busy.status, busy.body.error]).toEqual([429, 'assistant_busy']);
            expect(busy.headers.get('retry-after')).toBe('5');
          }
        } finally {
          release();
        }
        expect((await running).body.messages.at(-1).content).toBe('Finally.');
        const now = await second.req('POST', `${C}/${two}/messages`, { body: { content: 'Me too' }, as: admin });
        expect(now.status, now.text).toBe(200);
        expect(now.body.messages.at(-1).content).toBe('My turn.');
      });
    } finally {
      await second.close();
    }
  });

  it('counts turns and tool calls, and traces them: message text on spans only while ASSISTANT_TRACE_INCLUDE_CONTENT', async () => {
    const turn = async (question: string) => {
      const id = await newConversation();
      model.script([{ calls: [{ name: 'run_sql', arguments: { workspace: 'default', sql: 'SELECT 42 AS answer' } }] }, { text: `The answer to ${question} is 42.` }]);
      expect((await ask(id, { content: question })).status).toBe(200);
      await t.api.ctx.tracing.flush();
      return id;
    };
    const shown = await turn('traced question one');
    const hidden = await withConfig({ ASSISTANT_TRACE_INCLUDE_CONTENT: false }, () => turn('traced question two'));
    const spansOf = async (id: string) => {
      let found: ReturnType<OtlpReceiver['spans']> = [];
      await expect
        .poll(() => {
          const root = otlp.spans().find((s) => s.name === 'assistant turn' && s.attributes['eider.conversation_id'] === id);
          found = root ? otlp.spans().filter((s) => s.traceId === root.traceId) : [];
          return found.map((s) => s.name).filter((n) => n.startsWith('assistant ')).sort();
        })
        .toEqual(['assistant model', 'assistant model', 'assistant run_sql', 'assistant turn']);
      return found;
    };
    const withContent = await spansOf(shown);
    expect(withContent.find((s) => s.name === 'assistant turn')!.attributes).toMatchObject({ 'eider.assistant.question': 'traced question one', 'eider.assistant.outcome': 'answer' });
    expect(withContent.some((s) => s.attributes['eider.assistant.answer'] === 'The answer to traced question one is 42.')).toBe(true);
    expect(withContent.find((s) => s.name === 'assistant run_sql')!.attributes).toMatchObject({ 'eider.assistant_tool': 'run_sql', 'eider.assistant.outcome': 'ok' });
    const without = await spansOf(hidden);
    const text = JSON.stringify(without.map((s) => s.attributes));
    expect(text).not.toContain('traced question two');
    expect(text).not.toContain('The answer to');
    // Never SQL or a token, whatever the setting.
    expect(JSON.stringify([...withContent, ...without].map((s) => s.attributes))).not.toMatch(/SELECT 42|eid_pat_/);

    const metrics = (await t.req('GET', '/api/metrics')).text;
    expect(metrics).toMatch(/eider_assistant_tool_calls_total\{tool="run_sql",outcome="ok"\} \d+/);
    expect(metrics).toMatch(/eider_assistant_turns_total\{outcome="answer"\} \d+/);
  });
});
