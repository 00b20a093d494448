// One turn of the assistant: the user's question (or their decision on a waiting write) → the model → the tools it
// asks for → the model again, until it answers, and within the turn's bounds (ASSISTANT_REQUEST_LIMIT model
// requests, ASSISTANT_MAX_OUTPUT_TOKENS output tokens). Tools act with a token of the asking user minted for the
// turn and deleted when it ends; a call that would write stops the turn with the call recorded `approval_required`
// until the user approves or rejects it. Everything the user sees is stored as it happens, so a turn cut short
// leaves a readable conversation.
import { randomUUID } from 'node:crypto';
import { Schema } from 'effect';
import type { Db } from '../../runtime/db.ts';
import type { Config } from '../../runtime/config.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { Metrics } from '../../runtime/metrics.ts';
import { conflict, unavailable } from '../errors.ts';
import {
  addMessage, conversationById, conversationOut, ConversationOutSchema, endInterruptedCalls, loadMessages, messageOut, MessageOutSchema, NOTE_FINISHES, replayStart,
  settleToolCall, waitingCall, type ConversationRow, type Finish, type MessageOut, type StoredMessage, type StoredToolCall, type ToolCallOut,
} from './conversations.ts';
import { chat, modelEndpoint, ModelError, type ChatMessage, type ChatTool, type ModelEndpoint } from './model.ts';
import { claimTurn, LEASE_S, releaseTurn, renewTurn, setTurnToken } from './turnSlots.ts';
import { mintTurnToken, revokeTurnToken } from './turnToken.ts';

/** What a tool call came to, as the tool bridge reports it. */
export type ToolOutcome =
  | { outcome: 'ok'; value: unknown }
  | { outcome: 'tool_error' | 'invalid_arguments' | 'unknown_tool' | 'internal_error'; message: string };

/** The tools of /mcp, acting with one turn's token. */
export interface ToolBridge {
  tools: ChatTool[];
  /** whether this call would write (then it waits for the user); false for arguments the tool would refuse */
  writes(name: string, args: unknown): Promise<boolean>;
  run(name: string, args: unknown, opts: { allowWrites: boolean; caps: { rows: number; bytes: number } }): Promise<ToolOutcome>;
}

export type Attributes = Record<string, string | number | boolean>;
/** A tracing span around `fn`; `set` adds attributes once they are known. */
type SpanFn = <T>(name: string, attributes: Attributes, fn: (set: (attributes: Attributes) => void) => Promise<T>) => Promise<T>;

export interface TurnDeps {
  db: Db;
  /** read when a turn begins, so a changed setting applies to the next turn */
  config: Config;
  metrics: Metrics | undefined;
  logger: Logger;
  replicaId: string;
  span: SpanFn;
  /** the tool bridge for a turn, acting with its token */
  bridge(token: string): Promise<ToolBridge>;
}

/** What a turn streams while it runs (server-sent events); the JSON answer is the same story, told at the end. */
export interface TurnEvents {
  /** a stored message: the user's at once, each of the model's when its answer is complete */
  message(m: MessageOut): void;
  /** text of the model's answer as it arrives, for the message `messageId` it becomes */
  delta(messageId: string, text: string): void;
  /** a tool call starts running */
  toolCall(messageId: string, call: Omit<ToolCallOut, 'status'> & { status: 'running' }): void;
  /** a tool call ended (or waits for approval) */
  toolResult(messageId: string, call: ToolCallOut): void;
}

/** A turn's JSON answer (and the `done` event of its stream). */
export const TurnOutSchema = Schema.Struct({
  conversation: ConversationOutSchema,
  /** the messages of the current turn, from the user's question on */
  messages: Schema.Array(MessageOutSchema),
});
export type TurnOut = typeof TurnOutSchema.Type;

export type TurnInput = { content: string } | { tool_call_id: string; decision: 'approve' | 'reject' };

export interface Turn {
  run(events?: TurnEvents): Promise<TurnOut>;
}

interface Settings {
  endpoint: ModelEndpoint;
  requestLimit: number;
  maxOutputTokens: number;
  historyTurnCap: number;
  caps: { rows: number; bytes: number };
  traceContent: boolean;
  docsSiteUrl: string;
  patTtlS: number;
}

/** Span attributes may carry message text only while ASSISTANT_TRACE_INCLUDE_CONTENT; this much at most. */
const TRACE_CONTENT_CHARS = 4096;
const NO_EVENTS: TurnEvents = { message() {}, delta() {}, toolCall() {}, toolResult() {} };

function settingsOf(config: Config): Settings {
  const endpoint = modelEndpoint({ model: config.ASSISTANT_MODEL, baseUrl: config.ASSISTANT_OPENAI_BASE_URL, apiKey: config.ASSISTANT_API_KEY });
  if (!endpoint) {
    throw unavailable(
      `no model endpoint for ASSISTANT_MODEL=${config.ASSISTANT_MODEL}: set ASSISTANT_OPENAI_BASE_URL to an OpenAI-compatible endpoint`,
      'assistant_unconfigured',
    );
  }
  return {
    endpoint,
    requestLimit: config.ASSISTANT_REQUEST_LIMIT,
    maxOutputTokens: config.ASSISTANT_MAX_OUTPUT_TOKENS,
    historyTurnCap: config.ASSISTANT_HISTORY_TURN_CAP,
    caps: { rows: config.ASSISTANT_RESULT_ROW_CAP, bytes: config.ASSISTANT_RESULT_BYTE_CAP },
    traceContent: config.ASSISTANT_TRACE_INCLUDE_CONTENT,
    docsSiteUrl: config.DOCS_SITE_URL,
    patTtlS: config.ASSISTANT_PAT_TTL_S,
  };
}

/**
 * Checks and claims everything a turn needs before anything streams (so refusals are ordinary HTTP answers): a model
 * endpoint, a slot (409 turn_in_progress, 429 assistant_busy), the conversation's state (409 approval_pending for a
 * question while a write waits; 409 no_pending_approval for a decision on nothing), then stores the question.
 */
export async function beginTurn(deps: TurnDeps, c: { conversation: ConversationRow; workspaceSlug: string; input: TurnInput }): Promise<Turn> {
  const s = settingsOf(deps.config);
  const { db } = deps;
  const conversationId = c.conversation.id;
  const turnId = await claimTurn(db, { conversationId, userId: c.conversation.user_id, replicaId: deps.replicaId, cap: deps.config.ASSISTANT_MAX_CONCURRENCY });
  let tokenId: string | null = null;
  const end = async () => {
    if (tokenId) await revokeTurnToken(db, tokenId, { replicaId: deps.replicaId, requestId: null });
    await releaseTurn(db, turnId);
  };
  try {
    const waiting = await waitingCall(db, conversationId);
    let question: StoredMessage | null = null;
    if ('content' in c.input) {
      if (waiting) {
        throw conflict(`a write waits for your decision (tool call ${waiting.id}): approve or reject it first`, 'approval_pending', { tool_call_id: waiting.id });
      }
      await endInterruptedCalls(db, conversationId);
      const content = c.input.content;
      question = await db.tx((tx) => addMessage(tx, { id: randomUUID(), conversationId, role: 'user', content, finish: null }));
    } else if (!waiting || waiting.id !== c.input.tool_call_id) {
      throw conflict(
        waiting ? `tool call ${c.input.tool_call_id} does not wait for a decision; ${waiting.id} does` : 'no tool call of this conversation waits for a decision',
        'no_pending_approval',
      );
    }
    const minted = await mintTurnToken(db, c.conversation.user_id, s.patTtlS, { replicaId: deps.replicaId, requestId: null });
    tokenId = minted.id;
    await setTurnToken(db, turnId, minted.id);
    const bridge = await deps.bridge(minted.token);
    const decision = 'decision' in c.input ? { call: waiting!, approve: c.input.decision === 'approve' } : null;
    return {
      async run(events = NO_EVENTS) {
        try {
          await runTurn({ deps, s, bridge, conversation: c.conversation, workspaceSlug: c.workspaceSlug, question, decision, events, turnId });
        } finally {
          await end();
        }
        return turnOut(db, c.conversation);
      },
    };
  } catch (e) {
    await end();
    throw e;
  }
}

interface RunInput {
  deps: TurnDeps;
  s: Settings;
  bridge: ToolBridge;
  conversation: ConversationRow;
  workspaceSlug: string;
  question: StoredMessage | null;
  decision: { call: StoredToolCall; approve: boolean } | null;
  events: TurnEvents;
  turnId: string;
}

type Outcome = 'answer' | 'length' | 'approval_required' | 'request_limit' | 'output_limit' | 'model_error';

async function runTurn(r: RunInput): Promise<void> {
  const { deps, s, events } = r;
  const { db } = deps;
  const conversationId = r.conversation.id;
  // The slot is a lease: renewed while the turn runs, so only a dead replica's turns lapse.
  const renew = setInterval(() => void renewTurn(db, r.turnId).catch(() => undefined), (LEASE_S * 1000) / 3);
  renew.unref();
  try {
    const outcome = await deps.span(
      'assistant turn',
      { 'eider.conversation_id': conversationId, 'eider.assistant.model': s.endpoint.model, ...(s.traceContent && r.question ? { 'eider.assistant.question': clip(r.question.content) } : {}) },
      async (set) => {
        if (r.question) events.message(messageOut(r.question));
        const o = await loop(r, set);
        set({ 'eider.assistant.outcome': o });
        return o;
      },
    );
    deps.metrics?.assistantTurns.inc({ outcome });
  } catch (e) {
    deps.metrics?.assistantTurns.inc({ outcome: 'internal_error' });
    throw e;
  } finally {
    clearInterval(renew);
  }
}

/** The conversation and its current turn's messages, from the user's question on. */
export async function turnOut(db: Db, conversation: ConversationRow): Promise<TurnOut> {
  const start = await replayStart(db, conversation.id, 0);
  const row = await conversationById(db, conversation.id);
  return { conversation: await conversationOut(db, row ?? conversation), messages: (await loadMessages(db, conversation.id, start)).map(messageOut) };
}

async function loop(r: RunInput, set: (a: Attributes) => void): Promise<Outcome> {
  const { deps, s, events, bridge } = r;
  const { db } = deps;
  const conversationId = r.conversation.id;
  const note = async (finish: Finish, content: string) => events.message(messageOut(await db.tx((tx) => addMessage(tx, { id: randomUUID(), conversationId, role: 'assistant', content, finish }))));

  if (r.decision) {
    const [message] = (await loadMessages(db, conversationId)).filter((m) => m.id === r.decision!.call.message_id);
    if (await runCalls(r, message.id, message.tool_calls, r.decision)) return 'approval_required';
  }
  let requests = 0;
  let outputTokens = 0;
  for (;;) {
    if (requests >= s.requestLimit) {
      await note('request_limit', `I stopped: this turn reached its limit of ${s.requestLimit} model requests (ASSISTANT_REQUEST_LIMIT) before an answer. Ask me to continue.`);
      return 'request_limit';
    }
    if (outputTokens >= s.maxOutputTokens) {
      await note('output_limit', `I stopped: this turn used its ${s.maxOutputTokens} output tokens (ASSISTANT_MAX_OUTPUT_TOKENS) before an answer. Ask me to continue.`);
      return 'output_limit';
    }
    const messages = await history(r);
    const id = randomUUID();
    requests++;
    let answer;
    try {
      answer = await deps.span('assistant model', { 'eider.assistant.request': requests, 'eider.assistant.model': s.endpoint.model }, async (setModel) => {
        const a = await chat(s.endpoint, { messages, tools: bridge.tools, maxTokens: s.maxOutputTokens - outputTokens }, (t) => events.delta(id, t));
        setModel({ 'eider.assistant.finish_reason': a.finishReason ?? 'none', 'eider.assistant.tool_calls': a.toolCalls.length, ...(s.traceContent && a.content ? { 'eider.assistant.answer': clip(a.content) } : {}) });
        return a;
      });
    } catch (e) {
      if (!(e instanceof ModelError)) throw e;
      deps.logger.warn({ conversationId, err: e.message }, 'assistant model request failed');
      await note('error', `The model could not answer: ${e.message}`);
      return 'model_error';
    }
    set({ 'eider.assistant.requests': requests });
    outputTokens += answer.outputTokens ?? 0;
    const finish: Finish = answer.toolCalls.length ? 'tool_calls' : answer.finishReason === 'length' ? 'length' : 'answer';
    const stored = await db.tx((tx) =>
      addMessage(tx, { id, conversationId, role: 'assistant', content: answer.content, finish }, answer.toolCalls.map((c) => ({ call_id: c.id, name: c.name, arguments: c.arguments }))),
    );
    events.message(messageOut(stored));
    if (!answer.toolCalls.length) return finish === 'length' ? 'length' : 'answer';
    if (requests >= s.requestLimit) {
      // The model could not read these results within the limit: not run, and said so when the history is replayed.
      for (const call of stored.tool_calls) {
        const done = await settleToolCall(db, call.id, { status: 'skipped', result: `not run: the turn reached ASSISTANT_REQUEST_LIMIT (${s.requestLimit} model requests)` });
        deps.metrics?.assistantToolCalls.inc({ tool: toolLabel(r, call.name), outcome: 'skipped' });
        events.toolResult(id, toolOut(done));
      }
      continue;
    }
    if (await runCalls(r, id, stored.tool_calls, null)) return 'approval_required';
  }
}

const toolOut = ({ call_id: _c, message_id: _m, position: _p, ...out }: StoredToolCall): ToolCallOut => out;
/** Metric label: a name the model made up counts as `unknown`, so it cannot grow the series without bound. */
const toolLabel = (r: RunInput, name: string) => (r.bridge.tools.some((t) => t.function.name === name) ? name : 'unknown');

/**
 * Runs a message's calls in order from the first not yet settled. A call that would write stops there, recorded
 * `approval_required` (true is returned); with the user's decision on that call it runs (approve) or is recorded
 * `rejected`, and the calls after it follow.
 */
async function runCalls(r: RunInput, messageId: string, calls: StoredToolCall[], decision: { call: StoredToolCall; approve: boolean } | null): Promise<boolean> {
  const { deps, s, events, bridge } = r;
  const { db } = deps;
  for (const call of calls) {
    if (call.status !== 'pending' && call.status !== 'approval_required') continue;
    const label = toolLabel(r, call.name);
    const settle = async (status: StoredToolCall['status'], result: string, truncated = false, outcome: string = status) => {
      const done = await settleToolCall(db, call.id, { status, result, truncated });
      deps.metrics?.assistantToolCalls.inc({ tool: label, outcome });
      events.toolResult(messageId, toolOut(done));
    };
    let args: unknown;
    try {
      args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
    } catch {
      await settle('error', `invalid arguments for ${call.name}: not JSON`, false, 'invalid_arguments');
      continue;
    }
    const decided = decision?.call.id === call.id ? decision : null;
    if (decided && !decided.approve) {
      await settle('rejected', 'the user rejected this call: it was not run');
      continue;
    }
    if (!decided && (await bridge.writes(call.name, args))) {
      await settle('approval_required', 'waiting for the user to approve this write');
      return true;
    }
    events.toolCall(messageId, { ...toolOut(call), status: 'running' });
    const o = await deps.span(`assistant ${label}`, { 'eider.assistant_tool': label, 'eider.conversation_id': r.conversation.id }, async (set) => {
      const result = await bridge.run(call.name, args, { allowWrites: decided !== null, caps: s.caps });
      set({ 'eider.assistant.outcome': result.outcome });
      return result;
    });
    if (o.outcome === 'ok') {
      const fed = feedText(o.value, s.caps.rows, s.caps.bytes);
      await settle('ok', fed.text, fed.truncated, 'ok');
    } else {
      await settle('error', cutBytes(o.message, Math.max(s.caps.bytes, 200)), false, o.outcome);
    }
  }
  return false;
}

/** The model's view: instructions, then the current turn and ASSISTANT_HISTORY_TURN_CAP turns before it. */
async function history(r: RunInput): Promise<ChatMessage[]> {
  const { db } = r.deps;
  const start = await replayStart(db, r.conversation.id, r.s.historyTurnCap);
  const out: ChatMessage[] = [{ role: 'system', content: instructions(r) }];
  for (const m of await loadMessages(db, r.conversation.id, start)) {
    if (m.role === 'user') {
      out.push({ role: 'user', content: m.content });
      continue;
    }
    if (m.finish && NOTE_FINISHES.includes(m.finish)) continue;
    out.push({
      role: 'assistant',
      content: m.content || null,
      ...(m.tool_calls.length ? { tool_calls: m.tool_calls.map((c) => ({ id: c.call_id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}),
    });
    for (const c of m.tool_calls) out.push({ role: 'tool', tool_call_id: c.call_id, content: replayed(c) });
  }
  return out;
}

function replayed(c: StoredToolCall): string {
  switch (c.status) {
    case 'ok':
    case 'rejected':
    case 'skipped':
      return c.result ?? '';
    case 'error':
      return `error: ${c.result ?? 'failed'}`;
    default:
      return 'not run';
  }
}

function instructions(r: RunInput): string {
  const { s } = r;
  return [
    `You are Eider's data assistant. Eider is a control plane for SQL analytics over Apache Iceberg tables; agents run DuckDB SQL.`,
    `The user works in the workspace "${r.workspaceSlug}": pass it as \`workspace\` to the tools.`,
    'Find data with list_catalogs, list_schemas, list_tables and describe_table; run DuckDB SQL with run_sql; page on with get_query_result.',
    'Prefer governed numbers where a semantic model has them: search_semantic, get_semantic_model, query_metric.',
    `Tool results you read are cut to ${s.caps.rows} rows and ${s.caps.bytes} bytes; say so when an answer rests on a cut result.`,
    'Every tool acts with the user’s own rights. A statement that writes (INSERT, UPDATE, DELETE, CREATE, DROP…) runs only after the user approves it: propose it with run_sql and say what it will change.',
    'Answer from the tool results, citing the numbers they returned; never invent data. Put SQL meant for the user in ```sql fenced blocks.',
    s.docsSiteUrl ? `Link documentation pages as ${s.docsSiteUrl.replace(/\/+$/, '')}/<page path> (search_docs gives the paths).` : 'Name documentation pages by their path.',
  ].join('\n');
}

/**
 * A tool's value as the model reads it: lists (`rows`, `items`, `results`, or the value itself) cut to the row cap,
 * then the JSON cut to the byte cap. `truncated` says the model did not see all of it.
 */
function feedText(value: unknown, rowCap: number, byteCap: number): { text: string; truncated: boolean } {
  let truncated = false;
  const cut = (list: unknown[]) => {
    if (list.length <= rowCap) return list;
    truncated = true;
    return list.slice(0, rowCap);
  };
  let v = value;
  if (Array.isArray(v)) v = cut(v);
  else if (v && typeof v === 'object') {
    const o: Record<string, unknown> = { ...(v as Record<string, unknown>) };
    for (const k of ['rows', 'items', 'results']) if (Array.isArray(o[k])) o[k] = cut(o[k] as unknown[]);
    if (o.truncated === true) truncated = true;
    v = o;
  }
  let text = typeof v === 'string' ? v : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? 'null';
  if (Buffer.byteLength(text) > byteCap) {
    text = `${cutBytes(text, byteCap)} … (cut at ${byteCap} bytes, ASSISTANT_RESULT_BYTE_CAP)`;
    truncated = true;
  }
  return { text, truncated };
}

function cutBytes(text: string, bytes: number): string {
  const b = Buffer.from(text);
  return b.length <= bytes ? text : b.subarray(0, bytes).toString('utf8').replace(/\uFFFD+$/, '');
}

const clip = (text: string) => (text.length > TRACE_CONTENT_CHARS ? `${text.slice(0, TRACE_CONTENT_CHARS)}…` : text);

