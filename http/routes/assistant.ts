// The data assistant's API (docs/api-decisions.md "MCP and the assistant"; docs/assistant.md). Off by default: every route
// answers 503 assistant_disabled while ASSISTANT_ENABLED is off, read per request. Conversations are private to the
// user who started them (anyone else: 404). Posting a message runs a turn and answers when it ends, as JSON, or as
// server-sent events while it runs when the request accepts text/event-stream.
import { Schema } from 'effect';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PageQuery, route } from '../route.ts';
import { AppError } from '../../domain/errors.ts';
import * as conversations from '../../domain/assistant/conversations.ts';
import { beginTurn, turnOut, TurnOutSchema, type Attributes, type TurnDeps, type TurnEvents, type TurnOut } from '../../domain/assistant/turn.ts';
import type { WorkspaceAccess } from '../../domain/workspaces.ts';
import type { AppContext } from '../../usecases/context.ts';
import { envelope, toJson } from '../server.ts';
import { assistantToolBridge } from '../assistantTools.ts';
import { SpanKind } from '../../telemetry/tracing.ts';

const gate = (ctx: AppContext) => {
  if (!ctx.config.ASSISTANT_ENABLED) throw new AppError(503, 'assistant_disabled', 'the data assistant is switched off on this server (ASSISTANT_ENABLED)');
};

const Page = Schema.Struct({ items: Schema.Array(conversations.ConversationOutSchema), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean });
const WsParams = Schema.Struct({ workspace: Schema.String });
const ConversationParams = Schema.Struct({ workspace: Schema.String, conversation_id: Schema.String });
const MessageBody = Schema.Union([
  Schema.Struct({ content: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(32_000)) }),
  Schema.Struct({ tool_call_id: Schema.String, decision: Schema.Literals(['approve', 'reject']) }),
]);

function turnDeps(ctx: AppContext, req: FastifyRequest): TurnDeps {
  return {
    db: ctx.db,
    config: ctx.config,
    metrics: ctx.metrics,
    logger: ctx.logger,
    replicaId: ctx.replica.id,
    span: (name, attributes, fn) =>
      ctx.tracing.span(name, { kind: SpanKind.INTERNAL, attributes }, (span) => fn((more: Attributes) => span.setAttributes(more))),
    bridge: (token) => assistantToolBridge(ctx, req.server, token),
  };
}

/**
 * Streams a turn as server-sent events: `message` (a stored message), `delta` (text as the model writes it),
 * `tool_call` (a call starts), `tool_result` (a call ended or waits for approval), then `done` with the JSON answer,
 * or `error` with the error envelope. The turn runs on if the client goes away; its result is stored either way.
 */
async function streamTurn(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, run: (events: TurnEvents) => Promise<TurnOut>, fallback: () => Promise<TurnOut>): Promise<TurnOut> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-request-id': req.id });
  const send = (event: string, data: unknown) => {
    if (!raw.destroyed && !raw.writableEnded) raw.write(`event: ${event}\ndata: ${toJson(data)}\n\n`);
  };
  try {
    const out = await run({
      message: (m) => send('message', m),
      delta: (message_id, text) => send('delta', { message_id, text }),
      toolCall: (message_id, tool_call) => send('tool_call', { message_id, tool_call }),
      toolResult: (message_id, tool_call) => send('tool_result', { message_id, tool_call }),
    });
    send('done', out);
    return out;
  } catch (e) {
    if (e instanceof AppError) send('error', envelope(e.code, e.message, e.details));
    else {
      ctx.logger.error({ reqId: req.id, err: (e as Error).message }, 'assistant turn failed');
      send('error', envelope('internal_error', 'internal server error'));
    }
    return fallback();
  } finally {
    raw.end();
  }
}

const wsOf = (ws: WorkspaceAccess | undefined) => ws!.workspace;

export const assistantRoutes = [
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/assistant/conversations',
    operationId: 'list_assistant_conversations',
    summary: 'Your assistant conversations in this workspace, newest first (503 assistant_disabled while the assistant is off)',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    query: PageQuery,
    responses: { 200: Page, 503: null },
    handler: async ({ ctx, principal, ws, query }) => ({
      status: 200,
      body: await conversations.listConversations(ctx.db, wsOf(ws).id, principal.user.id, { cursor: query.cursor, limit: query.limit ?? 100 }),
    }),
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/assistant/conversations',
    operationId: 'create_assistant_conversation',
    summary: 'Start an assistant conversation, private to you; its first question titles it unless you do',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    body: Schema.Struct({ title: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)))) }),
    responses: { 201: conversations.ConversationOutSchema, 422: null, 503: null },
    handler: async ({ ctx, principal, ws, body }) => ({
      status: 201,
      body: await conversations.createConversation(ctx.db, wsOf(ws).id, principal.user.id, body.title ?? null),
    }),
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/assistant/conversations/:conversation_id',
    operationId: 'get_assistant_conversation',
    summary: 'One of your assistant conversations with its messages and their tool calls (404 for anyone else’s)',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: ConversationParams,
    responses: { 200: conversations.ConversationDetailSchema, 404: null, 503: null },
    handler: async ({ ctx, principal, ws, params }) => {
      const row = await conversations.ownConversation(ctx.db, wsOf(ws).id, principal.user.id, params.conversation_id);
      return { status: 200, body: await conversations.conversationDetail(ctx.db, row) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/assistant/conversations/:conversation_id/messages',
    operationId: 'create_assistant_message',
    summary: 'Ask the assistant ({content}), or approve or reject the write it waits on ({tool_call_id, decision}): runs a turn',
    description:
      'Answers when the turn ends with the conversation and the turn’s messages; with `Accept: text/event-stream` it streams the turn as ' +
      'server-sent events (message, delta, tool_call, tool_result, then done with the same JSON, or error). A tool call that would write ' +
      'stops the turn with the call `approval_required` (conversation state approval_required) until a decision is posted. ' +
      '409 turn_in_progress (this conversation runs a turn), approval_pending (a question while a write waits), no_pending_approval; ' +
      '429 assistant_busy when ASSISTANT_MAX_CONCURRENCY turns run across the deployment (Retry-After); 503 assistant_unconfigured ' +
      'without a model endpoint.',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: ConversationParams,
    body: MessageBody,
    responses: { 200: TurnOutSchema, 404: null, 409: null, 422: null, 429: null, 503: null },
    handler: async ({ ctx, principal, ws, params, body, req, reply }) => {
      const row = await conversations.ownConversation(ctx.db, wsOf(ws).id, principal.user.id, params.conversation_id);
      const turn = await beginTurn(turnDeps(ctx, req), { conversation: row, workspaceSlug: wsOf(ws).slug, input: body });
      const streaming = (req.headers.accept ?? '').includes('text/event-stream');
      const out = streaming ? await streamTurn(ctx, req, reply, (events) => turn.run(events), () => turnOut(ctx.db, row)) : await turn.run();
      return { status: 200, body: out };
    },
  }),
];
