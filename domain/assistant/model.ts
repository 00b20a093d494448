// The model: an OpenAI-compatible chat-completions endpoint (`POST <base>/chat/completions`), asked to stream so the
// user sees text as it comes. A server that answers with one JSON body instead is read the same way. The key is sent
// as a Bearer token and nowhere else; errors name the endpoint's status and its own words, never the key.

/** A message as chat-completions reads it. */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ModelEndpoint {
  /** `<base>/chat/completions` */
  url: string;
  /** the model part of ASSISTANT_MODEL */
  model: string;
  apiKey: string | null;
}

export interface ChatResult {
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
  /** output tokens, when the endpoint reports usage */
  outputTokens: number | null;
}

/** The endpoint failed or answered something unreadable: the turn ends with a note saying so. */
export class ModelError extends Error {}

/** A model request that neither answers nor streams for this long is abandoned. */
const REQUEST_TIMEOUT_MS = 300_000;
const PROVIDER_BASE: Record<string, string> = { openai: 'https://api.openai.com/v1' };

/**
 * ASSISTANT_MODEL is `<provider>:<model>`; the model part is what the endpoint is asked for. Without
 * ASSISTANT_OPENAI_BASE_URL the provider must be one whose endpoint is known (openai). The key is ASSISTANT_API_KEY,
 * else the provider's standard variable (OPENAI_API_KEY); none is sent when neither is set (local servers).
 */
export function modelEndpoint(
  s: { model: string; baseUrl: string | null; apiKey: string | null },
  env: Record<string, string | undefined> = process.env,
): ModelEndpoint | null {
  const at = s.model.indexOf(':');
  const provider = at > 0 ? s.model.slice(0, at).toLowerCase() : 'openai';
  const model = at > 0 ? s.model.slice(at + 1) : s.model;
  const base = s.baseUrl ?? PROVIDER_BASE[provider];
  if (!base || !model) return null;
  const apiKey = s.apiKey ?? env[`${provider.toUpperCase()}_API_KEY`] ?? null;
  return { url: `${base.replace(/\/+$/, '')}/chat/completions`, model, apiKey: apiKey || null };
}

export async function chat(
  endpoint: ModelEndpoint,
  req: { messages: ChatMessage[]; tools: ChatTool[]; maxTokens: number },
  onText: (delta: string) => void,
): Promise<ChatResult> {
  const scrub = (text: string) => (endpoint.apiKey ? text.split(endpoint.apiKey).join('(key)') : text);
  let res: Response;
  try {
    res = await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream, application/json',
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: endpoint.model,
        messages: req.messages,
        ...(req.tools.length ? { tools: req.tools, tool_choice: 'auto' } : {}),
        max_tokens: req.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (e) {
    throw new ModelError(scrub(`the model endpoint could not be reached: ${(e as Error).message}`));
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let said = text.slice(0, 300);
    try {
      said = JSON.parse(text)?.error?.message ?? said;
    } catch {
      // not JSON: its text as it is
    }
    throw new ModelError(scrub(`the model endpoint answered HTTP ${res.status}${said ? `: ${said}` : ''}`));
  }
  const acc = new Accumulator(onText);
  try {
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      for await (const data of sseData(res.body!)) {
        if (data === '[DONE]') break;
        acc.chunk(JSON.parse(data));
      }
    } else {
      acc.whole(await res.json());
    }
  } catch (e) {
    throw new ModelError(scrub(`the model endpoint's answer could not be read: ${(e as Error).message}`));
  }
  return acc.result();
}

/** A tool call as an OpenAI-compatible server sends it: whole in an answer, in pieces (by index) in a stream. */
interface ToolCallPart {
  index?: unknown;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** A chat completion answer or stream chunk, as far as it is read (every field checked before use). */
interface ChatAnswer {
  usage?: { completion_tokens?: unknown };
  choices?: Array<{
    delta?: { content?: unknown; tool_calls?: ToolCallPart[] };
    message?: { content?: unknown; tool_calls?: ToolCallPart[] };
    finish_reason?: string | null;
  }>;
}

/** Builds one answer from streamed chunks (or a whole body): text, tool calls by index, finish reason, usage. */
class Accumulator {
  private content = '';
  private calls: Array<{ id: string; name: string; arguments: string }> = [];
  private finishReason: string | null = null;
  private outputTokens: number | null = null;
  private readonly onText: (delta: string) => void;
  constructor(onText: (delta: string) => void) {
    this.onText = onText;
  }

  chunk(c: ChatAnswer | null) {
    if (c?.usage?.completion_tokens !== undefined) this.outputTokens = Number(c.usage.completion_tokens);
    const choice = c?.choices?.[0];
    if (!choice) return;
    const d = choice.delta ?? {};
    if (typeof d.content === 'string' && d.content) {
      this.content += d.content;
      this.onText(d.content);
    }
    for (const t of d.tool_calls ?? []) {
      const i = typeof t.index === 'number' ? t.index : this.calls.length;
      const call = (this.calls[i] ??= { id: '', name: '', arguments: '' });
      if (t.id) call.id = t.id;
      if (t.function?.name) call.name += t.function.name;
      if (t.function?.arguments) call.arguments += t.function.arguments;
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  whole(b: ChatAnswer | null) {
    if (b?.usage?.completion_tokens !== undefined) this.outputTokens = Number(b.usage.completion_tokens);
    const choice = b?.choices?.[0];
    if (!choice?.message) throw new Error('no choices[0].message in the answer');
    const m = choice.message;
    if (typeof m.content === 'string' && m.content) {
      this.content = m.content;
      this.onText(m.content);
    }
    this.calls = (m.tool_calls ?? []).map((t) => ({ id: String(t.id ?? ''), name: String(t.function?.name ?? ''), arguments: String(t.function?.arguments ?? '') }));
    this.finishReason = choice.finish_reason ?? null;
  }

  result(): ChatResult {
    const calls = this.calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` }));
    return { content: this.content, toolCalls: calls, finishReason: this.finishReason, outputTokens: this.outputTokens };
  }
}

/** The `data:` payloads of a server-sent event stream, one per event. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        if (data.length) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
  }
  if (data.length) yield data.join('\n');
}
