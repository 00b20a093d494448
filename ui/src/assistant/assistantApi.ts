// The assistant's API as the panel uses it. Shapes come from the server's OpenAPI document (generated.ts). A turn is
// posted with `Accept: text/event-stream` and read as it streams (docs/assistant.md lists the events).
import { ApiError, call, callStream } from '../api/client.ts';
import type * as Api from '../api/generated.ts';

export type Conversation = Api.CreateAssistantConversationResponse;
export type ConversationPage = Api.ListAssistantConversationsResponse;
type ConversationDetail = Api.GetAssistantConversationResponse;
export type Message = ConversationDetail['messages'][number];
export type ToolCall = Message['tool_calls'][number];
export type TurnOut = Api.CreateAssistantMessageResponse;
export type MessageBody = Api.CreateAssistantMessageBody;

/** What the stream says while a turn runs. */
export type TurnEvent =
  | { event: 'message'; data: Message }
  | { event: 'delta'; data: { message_id: string; text: string } }
  | { event: 'tool_call'; data: { message_id: string; tool_call: Omit<ToolCall, 'status'> & { status: 'running' } } }
  | { event: 'tool_result'; data: { message_id: string; tool_call: ToolCall } }
  | { event: 'done'; data: TurnOut }
  | { event: 'error'; data: { error: string; message: string; details?: unknown } };

export const listConversations = (ws: string, signal?: AbortSignal) =>
  call('GET /api/workspaces/{workspace}/assistant/conversations', { path: { workspace: ws }, query: { limit: 50 }, signal });
export const createConversation = (ws: string) => call('POST /api/workspaces/{workspace}/assistant/conversations', { path: { workspace: ws }, body: {} });
export const getConversation = (ws: string, id: string, signal?: AbortSignal) =>
  call('GET /api/workspaces/{workspace}/assistant/conversations/{conversation_id}', { path: { workspace: ws, conversation_id: id }, signal });

/** True for the answer of an assistant that is switched off (or not configured) on this server. */
export const isOff = (e: unknown) => e instanceof ApiError && e.status === 503;

/**
 * Posts a message (or a decision) and reads the turn as it streams, handing each event to `onEvent`; resolves with the
 * turn's final answer. A refusal before the stream starts (409, 429, 503…) rejects with its ApiError.
 */
export async function runTurn(ws: string, conversationId: string, body: MessageBody, onEvent: (e: TurnEvent) => void): Promise<TurnOut> {
  const res = await callStream('POST /api/workspaces/{workspace}/assistant/conversations/{conversation_id}/messages', {
    path: { workspace: ws, conversation_id: conversationId },
    body,
  });
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return (await res.json()) as TurnOut;
  let done: TurnOut | null = null;
  let failed: ApiError | null = null;
  for await (const e of events(res)) {
    onEvent(e);
    if (e.event === 'done') done = e.data;
    if (e.event === 'error') failed = new ApiError(500, e.data.error, e.data.message, e.data.details);
  }
  if (failed) throw failed;
  if (!done) throw new ApiError(0, 'network_error', 'the answer stopped before the turn ended');
  return done;
}

/** The events of a server-sent stream, as they arrive. */
async function* events(res: Response): AsyncGenerator<TurnEvent> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      if (event && data) yield { event, data: JSON.parse(data) } as TurnEvent;
    }
    if (done) return;
  }
}

/** An answer's text cut into prose and fenced code blocks (```sql …```), in order. */
export type Segment = { kind: 'text'; text: string } | { kind: 'code'; lang: string; code: string };

export function segments(content: string): Segment[] {
  const out: Segment[] = [];
  const fence = /```([A-Za-z0-9_-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g;
  let at = 0;
  for (let m = fence.exec(content); m; m = fence.exec(content)) {
    if (m.index > at) out.push({ kind: 'text', text: content.slice(at, m.index) });
    out.push({ kind: 'code', lang: m[1].toLowerCase(), code: m[2].replace(/\n$/, '') });
    at = fence.lastIndex;
  }
  if (at < content.length) out.push({ kind: 'text', text: content.slice(at) });
  return out.filter((s) => s.kind === 'code' || s.text.trim() !== '');
}

/** The SQL of a run_sql call, for the approval prompt (null when its arguments do not parse). */
export function sqlOf(call: Pick<ToolCall, 'arguments'>): string | null {
  try {
    const a = JSON.parse(call.arguments);
    return typeof a?.sql === 'string' ? a.sql : null;
  } catch {
    return null;
  }
}
