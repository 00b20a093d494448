// @vitest-environment happy-dom
// The assistant panel against a stand-in api: it says so when the server has the assistant off; a question starts a
// conversation and its answer streams in (text as it comes, tool calls collapsed, the stored answer at the end);
// SQL in an answer opens in a worksheet; a write waiting for approval is shown with its statement and is approved or
// rejected from the panel, with the composer closed meanwhile.
import { describe, expect, it } from 'vitest';
import { act } from 'react';
import { AssistantPanel } from './AssistantPanel.tsx';
import { segments } from './assistantApi.ts';
import { standInApi, type Asked } from '../testing/standInApi.ts';
import { testRoot } from '../testing/testRoot.ts';
import { useAssistantShortcut } from './useAssistantShortcut.ts';
import type { Message, ToolCall } from './assistantApi.ts';


const T = '2026-11-26T10:00:00.000Z';
const BASE = '/api/workspaces/default/assistant/conversations';
const conversation = (id: string, title: string | null, state = 'idle') => ({ id, title, state, created_at: T, updated_at: T });
const call = (id: string, name: string, args: unknown, status: ToolCall['status'], result: string | null = null): ToolCall => ({
  id,
  name,
  arguments: JSON.stringify(args),
  status,
  result,
  truncated: false,
  created_at: T,
  finished_at: status === 'pending' || status === 'approval_required' ? null : T,
});
const message = (id: string, role: 'user' | 'assistant', content: string, tool_calls: ToolCall[] = [], finish: Message['finish'] = role === 'user' ? null : 'answer'): Message => ({
  id,
  role,
  content,
  finish,
  tool_calls,
  created_at: T,
});
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A stand-in api: `answer` decides each response; every request is kept. */
const serve = (answer: (a: Asked) => Response | Promise<Response>) => standInApi(answer);

/** A response body the test writes to while the panel reads it. */
function stream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const enc = new TextEncoder();
  return {
    response: new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    send: (event: string, data: unknown) => controller.enqueue(enc.encode(sse(event, data))),
    end: () => controller.close(),
  };
}

const root = testRoot();

const settle = () =>
  act(async () => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 0));
  });

async function mount(props: { onOpenSql?: (sql: string) => void; onClose?: () => void } = {}) {
  const host = await root.mount(<AssistantPanel ws="default" onClose={props.onClose ?? (() => {})} onOpenSql={props.onOpenSql ?? (() => {})} />);
  await settle();
  return host;
}

const textarea = (host: Element) => host.querySelector('textarea') as HTMLTextAreaElement;
async function type(host: Element, text: string) {
  const el = textarea(host);
  await act(async () => {
    const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!;
    setter.call(el, text);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
}
const button = (host: Element, label: string) => [...host.querySelectorAll('button')].find((b) => b.textContent?.trim() === label) as HTMLButtonElement;
const click = (el: Element) => act(async () => void (el as HTMLElement).click());

describe('the assistant panel', () => {
  it('says the assistant is off when the server answers 503 assistant_disabled', async () => {
    serve(() => json({ error: 'assistant_disabled', message: 'the data assistant is switched off on this server (ASSISTANT_ENABLED)' }, 503));
    const host = await mount();
    expect(host.textContent).toContain('The data assistant is off on this server');
    expect(host.textContent).toContain('ASSISTANT_ENABLED');
    expect(host.querySelector('textarea')).toBeNull();
  });

  it('starts a conversation, streams the answer, shows tool calls collapsed, and opens SQL in a worksheet', async () => {
    const s = stream();
    const asked = serve((a) => {
      if (a.method === 'GET' && a.path === BASE) return json({ items: [], cursor: null, has_more: false });
      if (a.method === 'POST' && a.path === BASE) return json(conversation('c1', null), 201);
      if (a.method === 'GET' && a.path === `${BASE}/c1`) return json({ ...conversation('c1', null), messages: [] });
      if (a.method === 'POST' && a.path === `${BASE}/c1/messages`) return s.response;
      return json({ error: 'not_found', message: 'no' }, 404);
    });
    const opened: string[] = [];
    const host = await mount({ onOpenSql: (sql) => opened.push(sql) });
    await type(host, 'How many zones?');
    await click(button(host, 'Send'));
    await settle();
    const post = asked.find((a) => a.path === `${BASE}/c1/messages`)!;
    expect(post).toMatchObject({ method: 'POST', body: { content: 'How many zones?' }, accept: 'text/event-stream' });

    const user = message('m1', 'user', 'How many zones?');
    const withCall = message('m2', 'assistant', '', [call('t1', 'run_sql', { workspace: 'default', sql: 'SELECT count(*) FROM zones' }, 'pending')], 'tool_calls');
    s.send('message', user);
    s.send('message', withCall);
    s.send('tool_call', { message_id: 'm2', tool_call: { ...withCall.tool_calls[0], status: 'running' } });
    await settle();
    expect(host.querySelector('.assistant-tool')!.textContent).toContain('running');
    const ran = call('t1', 'run_sql', { workspace: 'default', sql: 'SELECT count(*) FROM zones' }, 'ok', '{"rows":[{"n":7}]}');
    s.send('tool_result', { message_id: 'm2', tool_call: ran });
    s.send('delta', { message_id: 'm3', text: 'There are 7 ' });
    await settle();
    // Text shows while it streams, before the answer is stored.
    expect(host.querySelector('[data-streaming="true"]')!.textContent).toContain('There are 7');
    expect(textarea(host).disabled).toBe(true);
    const answer = message('m3', 'assistant', 'There are 7 zones.\n```sql\nSELECT count(*) FROM zones\n```');
    s.send('delta', { message_id: 'm3', text: 'zones.\n```sql\nSELECT count(*) FROM zones\n```' });
    s.send('message', answer);
    s.send('done', { conversation: conversation('c1', 'How many zones?'), messages: [user, { ...withCall, tool_calls: [ran] }, answer] });
    s.end();
    await settle();

    expect(host.querySelector('[data-streaming="true"]')).toBeNull();
    const texts = [...host.querySelectorAll('.assistant-msg')].map((m) => m.textContent);
    expect(texts[0]).toBe('How many zones?');
    expect(texts[2]).toContain('There are 7 zones.');
    const tool = host.querySelector('details.assistant-tool') as HTMLDetailsElement;
    expect(tool.open).toBe(false);
    expect(tool.querySelector('summary')!.textContent).toMatch(/run_sql\s+ok/);
    expect(tool.textContent).toContain('"n": 7');
    await click(button(host, 'Open in worksheet'));
    expect(opened).toEqual(['SELECT count(*) FROM zones']);
    expect(textarea(host).disabled).toBe(false);
  });

  it('shows a waiting write with its statement; approving posts the decision and runs the rest of the turn', async () => {
    const waiting = call('w1', 'run_sql', { workspace: 'default', sql: 'CREATE TABLE t AS SELECT 1 AS x' }, 'approval_required', 'waiting for the user to approve this write');
    const history = [message('m1', 'user', 'Make table t'), message('m2', 'assistant', 'I will create it.', [waiting], 'tool_calls')];
    const asked = serve((a) => {
      if (a.method === 'GET' && a.path === BASE) return json({ items: [conversation('c9', 'Make table t', 'approval_required')], cursor: null, has_more: false });
      if (a.method === 'GET' && a.path === `${BASE}/c9`) return json({ ...conversation('c9', 'Make table t', 'approval_required'), messages: history });
      if (a.method === 'POST' && a.path === `${BASE}/c9/messages`) {
        const done = call('w1', 'run_sql', JSON.parse(waiting.arguments), 'ok', '{"status":"done"}');
        const final = message('m3', 'assistant', 'Created t.');
        return new Response(
          sse('tool_call', { message_id: 'm2', tool_call: { ...waiting, status: 'running' } }) +
            sse('tool_result', { message_id: 'm2', tool_call: done }) +
            sse('message', final) +
            sse('done', { conversation: conversation('c9', 'Make table t'), messages: [history[0], { ...history[1], tool_calls: [done] }, final] }),
          { status: 200, headers: { 'content-type': 'text/event-stream' } },
        );
      }
      return json({ error: 'not_found', message: 'no' }, 404);
    });
    const host = await mount();
    const select = host.querySelector('select') as HTMLSelectElement;
    expect(select.textContent).toContain('Make table t (waits for you)');
    await act(async () => {
      select.value = 'c9';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await settle();
    const prompt = host.querySelector('.assistant-approval')!;
    expect(prompt.textContent).toContain('CREATE TABLE t AS SELECT 1 AS x');
    expect(textarea(host).disabled).toBe(true);
    await click(button(host, 'Approve and run'));
    await settle();
    expect(asked.find((a) => a.method === 'POST')!.body).toEqual({ tool_call_id: 'w1', decision: 'approve' });
    expect(host.querySelector('.assistant-approval')).toBeNull();
    expect(host.textContent).toContain('Created t.');
    expect(textarea(host).disabled).toBe(false);
  });

  it('rejecting posts the decision; a refusal (429) is shown; Escape closes the panel', async () => {
    const waiting = call('w2', 'run_sql', { workspace: 'default', sql: 'DROP TABLE t' }, 'approval_required');
    const asked = serve((a) => {
      if (a.method === 'GET' && a.path === BASE) return json({ items: [conversation('c2', 'Drop t', 'approval_required')], cursor: null, has_more: false });
      if (a.method === 'GET' && a.path === `${BASE}/c2`) return json({ ...conversation('c2', 'Drop t', 'approval_required'), messages: [message('m1', 'user', 'Drop t'), message('m2', 'assistant', '', [waiting], 'tool_calls')] });
      return json({ error: 'assistant_busy', message: 'the assistant is running 4 turns, its limit (ASSISTANT_MAX_CONCURRENCY=4); try again shortly' }, 429);
    });
    let closed = 0;
    const host = await mount({ onClose: () => closed++ });
    const select = host.querySelector('select') as HTMLSelectElement;
    await act(async () => {
      select.value = 'c2';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await settle();
    await click(button(host, 'Reject'));
    await settle();
    expect(asked.at(-1)!.body).toEqual({ tool_call_id: 'w2', decision: 'reject' });
    expect(host.querySelector('[role="alert"]')!.textContent).toContain('ASSISTANT_MAX_CONCURRENCY');
    await act(async () => void host.querySelector('.assistant-panel')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })));
    expect(closed).toBe(1);
  });
});

describe('answer text', () => {
  it('is cut into prose and fenced code blocks', () => {
    expect(segments('Count them:\n```sql\nSELECT 1\n```\nDone.')).toEqual([
      { kind: 'text', text: 'Count them:\n' },
      { kind: 'code', lang: 'sql', code: 'SELECT 1' },
      { kind: 'text', text: '\nDone.' },
    ]);
    // A block still streaming (no closing fence yet) is code already.
    expect(segments('```sql\nSELECT')).toEqual([{ kind: 'code', lang: 'sql', code: 'SELECT' }]);
  });
});

describe('the shortcut', () => {
  it('Ctrl+I and Cmd+I toggle, even from a text field, before the field sees the key', async () => {
    let toggles = 0;
    function Probe() {
      useAssistantShortcut(() => toggles++);
      return <textarea aria-label="editor" />;
    }
    const host = await root.mount(<Probe />);
    const field = host.querySelector('textarea')!;
    let fieldSaw = 0;
    field.addEventListener('keydown', () => fieldSaw++);
    const press = (init: KeyboardEventInit) => {
      const e = new KeyboardEvent('keydown', { bubbles: true, cancelable: true, ...init });
      field.dispatchEvent(e);
      return e;
    };
    expect(press({ key: 'i', ctrlKey: true }).defaultPrevented).toBe(true);
    press({ key: 'I', metaKey: true });
    press({ key: 'i' });
    press({ key: 'i', ctrlKey: true, shiftKey: true });
    expect(toggles).toBe(2);
    expect(fieldSaw).toBe(2);
  });
});
