// The data assistant beside any screen (Ctrl+I): your conversations in this workspace, the messages of one, the
// answer as it streams, the tool calls it made (collapsed), the prompt to approve or reject a write, and "Open in
// worksheet" on the SQL it proposes. A server with the assistant off says so here.
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent, type ReactNode } from 'react';
import { ApiError } from '../api/client.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import {
  createConversation, getConversation, isOff, listConversations, runTurn, segments, sqlOf, type Message, type MessageBody, type ToolCall, type TurnEvent,
} from './assistantApi.ts';
import './assistant.css';

export interface AssistantPanelProps {
  ws: string;
  onClose(): void;
  /** opens SQL from an answer in a new worksheet tab */
  onOpenSql(sql: string): void;
}

type RunningCall = Omit<ToolCall, 'status'> & { status: ToolCall['status'] | 'running' };
type ShownMessage = Omit<Message, 'tool_calls'> & { tool_calls: RunningCall[] };

export function AssistantPanel(props: AssistantPanelProps) {
  const list = useAsync((signal) => listConversations(props.ws, signal), [props.ws]);
  const [current, setCurrent] = useState<string | null>(null);
  const [messages, setMessages] = useState<ShownMessage[]>([]);
  /** text streamed for answers not stored yet, by the message id they become */
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [text, setText] = useState('');
  const bottom = useRef<HTMLDivElement>(null);
  /** a conversation this panel just created: nothing to load, and loading it could race its first streamed messages */
  const created = useRef<string | null>(null);

  useEffect(() => {
    if (current === null) {
      setMessages([]);
      return;
    }
    if (created.current === current) {
      created.current = null;
      return;
    }
    const ctl = new AbortController();
    getConversation(props.ws, current, ctl.signal).then(
      (c) => setMessages(c.messages),
      (e) => (e as Error)?.name !== 'AbortError' && setError(e),
    );
    return () => ctl.abort();
  }, [props.ws, current]);
  // Braces: Chromium's scrollIntoView now returns a promise, and an effect may return only a cleanup function.
  useEffect(() => {
    void bottom.current?.scrollIntoView?.({ block: 'end' });
  }, [messages, drafts]);

  if (list.error && isOff(list.error)) {
    return (
      <Frame onClose={props.onClose}>
        <p className="assistant-off" role="status">
          The data assistant is off on this server. {(list.error as ApiError).message}
        </p>
      </Frame>
    );
  }

  const upsert = (m: ShownMessage) => setMessages((ms) => (ms.some((x) => x.id === m.id) ? ms.map((x) => (x.id === m.id ? m : x)) : [...ms, m]));
  const updateCall = (messageId: string, call: RunningCall) =>
    setMessages((ms) => ms.map((m) => (m.id === messageId ? { ...m, tool_calls: m.tool_calls.map((c) => (c.id === call.id ? call : c)) } : m)));
  const onEvent = (e: TurnEvent) => {
    if (e.event === 'message') {
      upsert(e.data);
      setDrafts((d) => {
        const { [e.data.id]: _gone, ...rest } = d;
        return rest;
      });
    } else if (e.event === 'delta') setDrafts((d) => ({ ...d, [e.data.message_id]: (d[e.data.message_id] ?? '') + e.data.text }));
    else if (e.event === 'tool_call' || e.event === 'tool_result') updateCall(e.data.message_id, e.data.tool_call);
  };

  const send = async (body: MessageBody) => {
    setBusy(true);
    setError(null);
    try {
      let id = current;
      if (id === null) {
        id = (await createConversation(props.ws)).id;
        created.current = id;
        setCurrent(id);
      }
      const out = await runTurn(props.ws, id, body, onEvent);
      for (const m of out.messages) upsert(m);
      list.reload();
    } catch (e) {
      setError(e);
    } finally {
      setDrafts({});
      setBusy(false);
    }
  };

  const waiting = messages.flatMap((m) => m.tool_calls).find((c) => c.status === 'approval_required');
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const content = text.trim();
    if (!content || busy || waiting) return;
    setText('');
    void send({ content });
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      submit();
    }
  };

  const conversations = list.data?.items ?? [];
  return (
    <Frame onClose={props.onClose}>
      <div className="assistant-bar">
        <label className="inline">
          <span className="sr-only">Conversation</span>
          <select aria-label="Conversation" value={current ?? ''} disabled={busy} onChange={(e) => setCurrent(e.target.value || null)}>
            <option value="">New conversation</option>
            {conversations.map((c) => (
              <option key={c.id} value={c.id}>
                {c.title ?? 'Untitled'}
                {c.state === 'approval_required' ? ' (waits for you)' : ''}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="secondary" disabled={busy || current === null} onClick={() => setCurrent(null)}>
          New
        </button>
      </div>
      {list.error ? <ErrorNotice error={list.error} what="Conversations" /> : null}
      <div className="assistant-messages" aria-live="polite">
        {current === null && messages.length === 0 && !busy ? (
          <p className="assistant-hint">Ask about the data in this workspace. The assistant acts with your access; a statement that writes runs only when you approve it.</p>
        ) : null}
        {messages.map((m) => (
          <MessageView key={m.id} message={m} busy={busy} onOpenSql={props.onOpenSql} onDecide={(call, decision) => void send({ tool_call_id: call.id, decision })} />
        ))}
        {Object.entries(drafts).map(([id, draft]) =>
          messages.some((m) => m.id === id) ? null : (
            <div key={id} className="assistant-msg assistant-msg-assistant" data-streaming="true">
              <Prose content={draft} onOpenSql={props.onOpenSql} />
            </div>
          ),
        )}
        {busy && Object.keys(drafts).length === 0 ? <Loading label="Thinking…" /> : null}
        {error ? <ErrorNotice error={error} what="Assistant" /> : null}
        <div ref={bottom} />
      </div>
      <form className="assistant-compose" onSubmit={submit}>
        <textarea
          aria-label="Message the assistant"
          placeholder={waiting ? 'Approve or reject the statement above first' : 'Ask a question (Enter sends, Shift+Enter for a new line)'}
          value={text}
          rows={3}
          disabled={busy || waiting !== undefined}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKeyDown}
        />
        <button type="submit" disabled={busy || waiting !== undefined || !text.trim()}>
          Send
        </button>
      </form>
    </Frame>
  );
}

function Frame(props: { onClose(): void; children: ReactNode }) {
  return (
    <aside
      className="assistant-panel"
      aria-label="Assistant"
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onClose();
      }}
    >
      <header className="assistant-head">
        <h2>Assistant</h2>
        <span className="grow" />
        <button type="button" className="secondary" aria-label="Close the assistant" onClick={props.onClose}>
          ×
        </button>
      </header>
      {props.children}
    </aside>
  );
}

function MessageView(props: { message: ShownMessage; busy: boolean; onOpenSql(sql: string): void; onDecide(call: RunningCall, decision: 'approve' | 'reject'): void }) {
  const m = props.message;
  if (m.role === 'user') return <div className="assistant-msg assistant-msg-user">{m.content}</div>;
  const note = m.finish === 'request_limit' || m.finish === 'output_limit' || m.finish === 'error';
  return (
    <div className={`assistant-msg assistant-msg-assistant${note ? ' assistant-note' : ''}`} data-finish={m.finish ?? undefined}>
      {m.content ? <Prose content={m.content} onOpenSql={props.onOpenSql} /> : null}
      {m.tool_calls.map((c) =>
        c.status === 'approval_required' ? (
          <Approval key={c.id} call={c} busy={props.busy} onDecide={props.onDecide} />
        ) : (
          <ToolCallView key={c.id} call={c} />
        ),
      )}
    </div>
  );
}

function Prose(props: { content: string; onOpenSql(sql: string): void }) {
  return (
    <>
      {segments(props.content).map((s, i) =>
        s.kind === 'text' ? (
          <p key={i} className="assistant-text">
            {s.text.trim()}
          </p>
        ) : (
          <div key={i} className="assistant-code">
            <pre>
              <code>{s.code}</code>
            </pre>
            {s.lang === 'sql' || s.lang === '' ? (
              <button type="button" className="secondary" onClick={() => props.onOpenSql(s.code)}>
                Open in worksheet
              </button>
            ) : null}
          </div>
        ),
      )}
    </>
  );
}

function ToolCallView(props: { call: RunningCall }) {
  const c = props.call;
  return (
    <details className="assistant-tool" data-status={c.status}>
      <summary>
        <code>{c.name}</code> <span className={`assistant-status assistant-status-${c.status}`}>{c.status === 'running' ? 'running…' : c.status.replace('_', ' ')}</span>
      </summary>
      <div className="assistant-tool-body">
        <div className="muted">Arguments</div>
        <pre>{pretty(c.arguments)}</pre>
        {c.result !== null ? (
          <>
            <div className="muted">{c.truncated ? 'Result (cut to the assistant’s result caps)' : 'Result'}</div>
            <pre>{pretty(c.result)}</pre>
          </>
        ) : null}
      </div>
    </details>
  );
}

function Approval(props: { call: RunningCall; busy: boolean; onDecide(call: RunningCall, decision: 'approve' | 'reject'): void }) {
  const sql = sqlOf(props.call);
  return (
    <div className="assistant-approval" role="group" aria-label="Approve this statement">
      <p>
        <strong>This statement writes.</strong> It runs with your access only if you approve it.
      </p>
      <pre>
        <code>{sql ?? props.call.arguments}</code>
      </pre>
      <div className="assistant-approval-actions">
        <button type="button" disabled={props.busy} onClick={() => props.onDecide(props.call, 'approve')}>
          Approve and run
        </button>
        <button type="button" className="secondary" disabled={props.busy} onClick={() => props.onDecide(props.call, 'reject')}>
          Reject
        </button>
      </div>
    </div>
  );
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
