// The data assistant's API (spec: off by default, 503 while off). The assistant itself is not built in this
// version: these routes exist so clients get the spec's answer, 503 `assistant_disabled` while ASSISTANT_ENABLED
// is off, and a 503 saying it is not built when it is switched on.
import { Schema } from 'effect';
import { route } from '../route.ts';
import { AppError } from '../../domain/errors.ts';
import type { AppContext } from '../context.ts';

const gate = (ctx: AppContext) => {
  if (!ctx.config.ASSISTANT_ENABLED) throw new AppError(503, 'assistant_disabled', 'the data assistant is switched off on this server (ASSISTANT_ENABLED)');
  throw new AppError(503, 'unavailable', 'the data assistant is not built in this version of the server (see /mcp for the same tools)');
};
const handler = async (): Promise<never> => {
  throw new AppError(503, 'unavailable', 'the data assistant is not available');
};
const Conversation = Schema.Struct({ id: Schema.String, title: Schema.NullOr(Schema.String), created_at: Schema.String, updated_at: Schema.String });
const WsParams = Schema.Struct({ workspace: Schema.String });
const ConversationParams = Schema.Struct({ workspace: Schema.String, conversation_id: Schema.String });

export const assistantRoutes = [
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/assistant/conversations',
    operationId: 'list_assistant_conversations',
    summary: 'Your assistant conversations (503 assistant_disabled while the assistant is off; not built yet)',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    responses: { 200: Schema.Struct({ items: Schema.Array(Conversation), cursor: Schema.NullOr(Schema.String), has_more: Schema.Boolean }), 503: null },
    handler,
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/assistant/conversations',
    operationId: 'create_assistant_conversation',
    summary: 'Start an assistant conversation (503 assistant_disabled while the assistant is off; not built yet)',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    responses: { 201: Conversation, 503: null },
    handler,
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/assistant/conversations/:conversation_id',
    operationId: 'get_assistant_conversation',
    summary: 'One assistant conversation (503 assistant_disabled while the assistant is off; not built yet)',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: ConversationParams,
    responses: { 200: Conversation, 503: null },
    handler,
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/:workspace/assistant/conversations/:conversation_id/messages',
    operationId: 'create_assistant_message',
    summary: 'Ask the assistant (503 assistant_disabled while the assistant is off; not built yet)',
    tags: ['assistant'],
    gate,
    access: { kind: 'workspace', role: 'reader' },
    params: ConversationParams,
    responses: { 200: Schema.Unknown, 503: null },
    handler,
  }),
];
