// The assistant's conversations and what they hold (docs/api-decisions.md "MCP and the assistant"). A conversation belongs to
// the user who started it, in one workspace, and is private: anyone else, an admin included, is answered 404. Its
// messages are the user's and the model's, in order; the model's carry the tool calls it asked for, each recorded
// with its arguments, how it ended and the (capped) result the model read.
import { Schema } from 'effect';
import type { Queryable } from '../../runtime/db.ts';
import { exec, rows, sql } from '../../runtime/sql.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from '../pagination.ts';
import { BigCount } from '../rowSchemas.ts';

const TOOL_CALL_STATUSES = ['pending', 'approval_required', 'ok', 'error', 'rejected', 'skipped'] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];
/** answer, tool_calls, length: how the model's answer ended; the rest are the api's notes ending a turn early */
const FINISHES = ['answer', 'tool_calls', 'length', 'request_limit', 'output_limit', 'error'] as const;
export type Finish = (typeof FINISHES)[number];
/** the notes the api writes itself: shown to the user, never replayed to the model */
export const NOTE_FINISHES: readonly Finish[] = ['request_limit', 'output_limit', 'error'];
const CONVERSATION_STATES = ['idle', 'running', 'approval_required'] as const;
type ConversationState = (typeof CONVERSATION_STATES)[number];

/** A tool call the model asked for, as the api answers it. */
const ToolCallOutSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  /** the JSON text the model sent */
  arguments: Schema.String,
  status: Schema.Literals(TOOL_CALL_STATUSES),
  /** what the model read (within the result caps), or the error */
  result: Schema.NullOr(Schema.String),
  truncated: Schema.Boolean,
  created_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String),
});
export type ToolCallOut = typeof ToolCallOutSchema.Type;

/** A stored message, the model's with the tool calls it asked for. */
export const MessageOutSchema = Schema.Struct({
  id: Schema.String,
  role: Schema.Literals(['user', 'assistant']),
  content: Schema.String,
  finish: Schema.NullOr(Schema.Literals(FINISHES)),
  tool_calls: Schema.Array(ToolCallOutSchema),
  created_at: Schema.String,
});
export type MessageOut = typeof MessageOutSchema.Type;

/** A conversation as its listing shows it; the detail adds its messages. */
export const ConversationOutSchema = Schema.Struct({
  id: Schema.String,
  title: Schema.NullOr(Schema.String),
  /** running: a turn is under way; approval_required: a write waits for the user's decision */
  state: Schema.Literals(CONVERSATION_STATES),
  created_at: Schema.String,
  updated_at: Schema.String,
});
export type ConversationOut = typeof ConversationOutSchema.Type;

export const ConversationDetailSchema = Schema.Struct({ ...ConversationOutSchema.fields, messages: Schema.Array(MessageOutSchema) });
export type ConversationDetail = typeof ConversationDetailSchema.Type;

// Row shapes at the database boundary.
const ConversationRowSchema = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  user_id: Schema.String,
  title: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date,
});
export type ConversationRow = typeof ConversationRowSchema.Type;
const MessageRow = Schema.Struct({
  id: Schema.String,
  seq: BigCount,
  role: Schema.Literals(['user', 'assistant']),
  content: Schema.String,
  finish: Schema.NullOr(Schema.Literals(FINISHES)),
  created_at: Schema.Date,
});
const ToolCallRow = Schema.Struct({
  id: Schema.String,
  message_id: Schema.String,
  position: Schema.Number,
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  status: Schema.Literals(TOOL_CALL_STATUSES),
  result: Schema.NullOr(Schema.String),
  truncated: Schema.Boolean,
  created_at: Schema.Date,
  finished_at: Schema.NullOr(Schema.Date),
});
type ToolCallRow = typeof ToolCallRow.Type;
const TOOL_CALL_COLS = sql`id, message_id, position, call_id, name, arguments, status, result, truncated, created_at, finished_at`;

/** A stored tool call with what only the turn needs: the model's id for it and its place in the message. */
export interface StoredToolCall extends ToolCallOut {
  call_id: string;
  message_id: string;
  position: number;
}

export interface StoredMessage extends Omit<MessageOut, 'tool_calls'> {
  seq: number;
  tool_calls: StoredToolCall[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CONVERSATION_COLS = sql`id, workspace_id, user_id, title, created_at, updated_at`;
/** the longest title taken from a first message */
const TITLE_CHARS = 80;

const toolCallOut = ({ call_id: _c, message_id: _m, position: _p, ...out }: StoredToolCall): ToolCallOut => out;
export const messageOut = ({ seq: _s, tool_calls, ...m }: StoredMessage): MessageOut => ({ ...m, tool_calls: tool_calls.map(toolCallOut) });

async function stateOf(q: Queryable, conversationId: string): Promise<ConversationState> {
  const [r] = await rows(
    q,
    Schema.Struct({ running: Schema.Boolean, waiting: Schema.Boolean }),
    sql`select exists(select 1 from assistant_turns where conversation_id = ${conversationId} and lease_until > now()) as running,
               exists(select 1 from assistant_tool_calls where conversation_id = ${conversationId} and status = 'approval_required') as waiting`,
  );
  return r.running ? 'running' : r.waiting ? 'approval_required' : 'idle';
}

export async function conversationOut(q: Queryable, r: ConversationRow): Promise<ConversationOut> {
  return { id: r.id, title: r.title, state: await stateOf(q, r.id), created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

export async function createConversation(q: Queryable, workspaceId: string, userId: string, title: string | null): Promise<ConversationOut> {
  const [row] = await rows(
    q,
    ConversationRowSchema,
    sql`insert into assistant_conversations (workspace_id, user_id, title) values (${workspaceId}, ${userId}, ${title}) returning ${CONVERSATION_COLS}`,
  );
  return conversationOut(q, row);
}

/** The caller's own conversation in this workspace; anyone else's (or none) is 404. */
export async function ownConversation(q: Queryable, workspaceId: string, userId: string, id: string): Promise<ConversationRow> {
  const [row] = UUID.test(id)
    ? await rows(
        q,
        ConversationRowSchema,
        sql`select ${CONVERSATION_COLS} from assistant_conversations where id = ${id} and workspace_id = ${workspaceId} and user_id = ${userId}`,
      )
    : [];
  if (!row) throw notFound('conversation');
  return row;
}

/** A conversation by id, without the owner check: only for one already resolved by `ownConversation`. */
export async function conversationById(q: Queryable, id: string): Promise<ConversationRow | undefined> {
  return (await rows(q, ConversationRowSchema, sql`select ${CONVERSATION_COLS} from assistant_conversations where id = ${id}`))[0];
}

/** The caller's conversations in the workspace, newest first. */
export async function listConversations(q: Queryable, workspaceId: string, userId: string, f: { cursor?: string; limit: number }): Promise<Page<ConversationOut>> {
  const sort = 'created_at:desc';
  let after = sql``;
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!UUID.test(c.id) || !(await exec(q, sql`select 1 from assistant_conversations where id = ${c.id}`)).length) throw staleCursor();
    after = sql`and (created_at, id) < (${c.k}::timestamptz, ${c.id}::uuid)`;
  }
  const found = await rows(
    q,
    Schema.Struct({ ...ConversationRowSchema.fields, sort_key: Schema.String, running: Schema.Boolean, waiting: Schema.Boolean }),
    sql`select ${CONVERSATION_COLS}, created_at::text as sort_key,
               exists(select 1 from assistant_turns t where t.conversation_id = c.id and t.lease_until > now()) as running,
               exists(select 1 from assistant_tool_calls x where x.conversation_id = c.id and x.status = 'approval_required') as waiting
          from assistant_conversations c where workspace_id = ${workspaceId} and user_id = ${userId} ${after}
         order by created_at desc, id desc limit ${f.limit + 1}`,
  );
  return pageOf(found, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), (r) => ({
    id: r.id,
    title: r.title,
    state: r.running ? 'running' : r.waiting ? 'approval_required' : 'idle',
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  }));
}

const storedCall = (r: ToolCallRow): StoredToolCall => ({
  id: r.id,
  message_id: r.message_id,
  position: r.position,
  call_id: r.call_id,
  name: r.name,
  arguments: r.arguments,
  status: r.status,
  result: r.result,
  truncated: r.truncated,
  created_at: r.created_at.toISOString(),
  finished_at: r.finished_at?.toISOString() ?? null,
});

/** Messages of a conversation in order, from `fromSeq` on (all by default), each with its tool calls. */
export async function loadMessages(q: Queryable, conversationId: string, fromSeq = 0): Promise<StoredMessage[]> {
  const messages = await rows(
    q,
    MessageRow,
    sql`select id, seq, role, content, finish, created_at from assistant_messages m where m.conversation_id = ${conversationId} and m.seq >= ${fromSeq} order by m.seq`,
  );
  if (messages.length === 0) return [];
  const calls = await rows(
    q,
    ToolCallRow,
    sql`select ${TOOL_CALL_COLS} from assistant_tool_calls where message_id = any(${messages.map((r) => r.id)}::uuid[]) order by message_id, position`,
  );
  const byMessage = new Map<string, StoredToolCall[]>();
  for (const c of calls) byMessage.set(c.message_id, [...(byMessage.get(c.message_id) ?? []), storedCall(c)]);
  return messages.map((r) => ({
    id: r.id,
    seq: r.seq,
    role: r.role,
    content: r.content,
    finish: r.finish,
    tool_calls: byMessage.get(r.id) ?? [],
    created_at: r.created_at.toISOString(),
  }));
}

export async function conversationDetail(q: Queryable, row: ConversationRow): Promise<ConversationDetail> {
  return { ...(await conversationOut(q, row)), messages: (await loadMessages(q, row.id)).map(messageOut) };
}

/**
 * Where the turns worth replaying start: the seq of the user message opening the (`previousTurns` + 1)-th latest
 * turn, so the current turn and `previousTurns` before it are replayed (0 when the conversation is shorter).
 */
export async function replayStart(q: Queryable, conversationId: string, previousTurns: number): Promise<number> {
  const [r] = await rows(
    q,
    Schema.Struct({ seq: BigCount }),
    sql`select m.seq from assistant_messages m where m.conversation_id = ${conversationId} and m.role = 'user' order by m.seq desc offset ${previousTurns} limit 1`,
  );
  return r ? r.seq : 0;
}

export async function addMessage(
  q: Queryable,
  m: { id: string; conversationId: string; role: 'user' | 'assistant'; content: string; finish: Finish | null },
  calls: Array<{ call_id: string; name: string; arguments: string }> = [],
): Promise<StoredMessage> {
  await exec(
    q,
    sql`insert into assistant_messages (id, conversation_id, role, content, finish) values (${m.id}, ${m.conversationId}, ${m.role}, ${m.content}, ${m.finish})`,
  );
  // The first question names an untitled conversation.
  await exec(
    q,
    sql`update assistant_conversations set updated_at = now(), title = case when title is null and ${m.role}::text = 'user' then ${titleFrom(m.content)} else title end
         where id = ${m.conversationId}`,
  );
  for (const [position, c] of calls.entries()) {
    await exec(
      q,
      sql`insert into assistant_tool_calls (message_id, conversation_id, position, call_id, name, arguments, status)
          values (${m.id}, ${m.conversationId}, ${position}, ${c.call_id}, ${c.name}, ${c.arguments}, 'pending')`,
    );
  }
  const [stored] = (await loadMessages(q, m.conversationId)).filter((x) => x.id === m.id);
  return stored;
}

function titleFrom(content: string): string {
  const line = content.trim().split('\n')[0].trim();
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}

export async function settleToolCall(q: Queryable, id: string, s: { status: ToolCallStatus; result: string | null; truncated?: boolean }): Promise<StoredToolCall> {
  const [row] = await rows(
    q,
    ToolCallRow,
    sql`update assistant_tool_calls set status = ${s.status}, result = ${s.result}, truncated = ${s.truncated ?? false},
               finished_at = case when ${s.status}::text in ('pending', 'approval_required') then null else now() end
         where id = ${id}
         returning ${TOOL_CALL_COLS}`,
  );
  return storedCall(row);
}

/** The call waiting for the user's decision, if any (there is at most one: a turn stops at the first). */
export async function waitingCall(q: Queryable, conversationId: string): Promise<StoredToolCall | undefined> {
  const [row] = await rows(
    q,
    ToolCallRow,
    sql`select ${TOOL_CALL_COLS} from assistant_tool_calls where conversation_id = ${conversationId} and status = 'approval_required' limit 1`,
  );
  return row ? storedCall(row) : undefined;
}

/**
 * Calls left `pending` by a turn whose replica stopped mid-call are ended as errors, so the conversation can go on
 * (the calls queued behind a write that waits for approval are not stale: they run after the decision).
 */
export async function endInterruptedCalls(q: Queryable, conversationId: string): Promise<void> {
  await exec(
    q,
    sql`update assistant_tool_calls c set status = 'error', result = 'interrupted: the server stopped while this call ran', finished_at = now()
         where c.conversation_id = ${conversationId} and c.status = 'pending'
           and not exists (select 1 from assistant_tool_calls w where w.message_id = c.message_id and w.status = 'approval_required')`,
  );
}
