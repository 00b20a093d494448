// SQL sessions of a workspace (external clients: connectors, dbt, BI tools): live and ended sessions, one session's
// statements, and closing a session (its owner, or a query-admin forcing it).
import { useState } from 'react';
import { call, enc } from '../api/client.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatCount, formatDuration, formatTime } from '../components/format.ts';
import { Time } from '../components/Time.tsx';
import { EmptyState } from '../components/EmptyState.tsx';

const LIVE = ['pending', 'opening', 'open', 'closing'];

export function SessionsScreen(props: { ws: string; id?: string }) {
  const base = `/w/${enc(props.ws)}/sessions`;
  return (
    <section className="sessions">
      <h1>SQL sessions</h1>
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link href={base}>Sessions</Link>
        {props.id ? <> / {props.id}</> : null}
      </nav>
      {props.id ? <SessionDetail id={props.id} /> : <SessionList ws={props.ws} base={base} />}
    </section>
  );
}

function SessionList(props: { ws: string; base: string }) {
  const [which, setWhich] = useState<'live' | 'ended' | 'all'>('live');
  const status = which === 'live' ? LIVE : which === 'ended' ? ['closed', 'failed'] : [];
  const list = useAsync(
    (signal) =>
      call('GET /api/workspaces/{workspace}/sql/sessions', { path: { workspace: props.ws }, signal, query: { limit: 200, ...(status.length ? { status } : {}) } }),
    [props.ws, which],
  );
  return (
    <>
      <label className="inline">
        Show{' '}
        <select aria-label="Show" value={which} onChange={(e) => setWhich(e.target.value as typeof which)}>
          <option value="live">live sessions</option>
          <option value="ended">ended sessions</option>
          <option value="all">all sessions</option>
        </select>
      </label>
      {list.error ? <ErrorNotice error={list.error} what="SQL sessions" /> : null}
      {!list.data && !list.error ? <Loading /> : null}
      {list.data && !list.data.items.length ? <EmptyState>No session. External clients open them through the API (see the docs on SQL sessions).</EmptyState> : null}
      {list.data?.items.length ? (
        <table className="data" aria-label="Sessions">
          <thead>
            <tr>
              <th>Session</th>
              <th>Status</th>
              <th>Client</th>
              <th>Catalog</th>
              <th>Opened</th>
              <th>Last active</th>
              <th>Ended</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link href={`${props.base}/${enc(s.id)}`}>{s.id}</Link>
                </td>
                <td>{s.status}</td>
                <td>{s.client_name ? `${s.client_name}${s.client_version ? ` ${s.client_version}` : ''}` : ''}</td>
                <td>{s.active_catalog ?? ''}</td>
                <td>
                  <Time iso={s.opened_at ?? s.created_at} />
                </td>
                <td>
                  <Time iso={s.last_active_at} />
                </td>
                <td>{s.closed_at ? `${formatTime(s.closed_at)} (${s.close_reason ?? s.status})` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

function SessionDetail(props: { id: string }) {
  const session = useAsync((signal) => call('GET /api/sql/sessions/{session_id}', { path: { session_id: props.id }, signal }), [props.id]);
  const statements = useAsync((signal) => call('GET /api/sql/sessions/{session_id}/statements', { path: { session_id: props.id }, signal, query: { limit: 200 } }), [props.id]);
  const [closing, setClosing] = useState<{ busy: boolean; error?: unknown }>({ busy: false });
  const close = async () => {
    setClosing({ busy: true });
    try {
      await call('DELETE /api/sql/sessions/{session_id}', { path: { session_id: props.id } });
      // The agent acknowledges the close shortly after: show the session once it has ended.
      for (let i = 0; i < 20; i++) {
        const now = await call('GET /api/sql/sessions/{session_id}', { path: { session_id: props.id } });
        if (!LIVE.includes(now.status)) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      setClosing({ busy: false });
    } catch (error) {
      setClosing({ busy: false, error });
    }
    session.reload();
    statements.reload();
  };
  if (session.error) return <ErrorNotice error={session.error} what="SQL session" />;
  if (!session.data) return <Loading />;
  const s = session.data;
  return (
    <>
      <dl className="facts" aria-label="Session">
        <dt>Status</dt>
        <dd>{s.status}</dd>
        <dt>Client</dt>
        <dd>{s.client_name ? `${s.client_name} ${s.client_version ?? ''}` : 'unknown'}</dd>
        <dt>Agent</dt>
        <dd>{s.agent_id ? <Link href={`/agents/${enc(s.agent_id)}`}>{s.agent_id}</Link> : 'none'}</dd>
        <dt>Catalog</dt>
        <dd>{s.active_catalog ?? 'none'}</dd>
        <dt>Opened</dt>
        <dd>
          <Time iso={s.opened_at} />
        </dd>
        <dt>Last active</dt>
        <dd>
          <Time iso={s.last_active_at} />
        </dd>
        {s.closed_at ? (
          <>
            <dt>Ended</dt>
            <dd>
              {formatTime(s.closed_at)} ({s.close_reason ?? s.status}){s.error ? `: ${s.error}` : ''}
            </dd>
          </>
        ) : null}
      </dl>
      <div className="actions">
        {LIVE.includes(s.status) ? (
          <button type="button" disabled={closing.busy} onClick={close}>
            Close session
          </button>
        ) : null}
        <Link href={`/inspect/sqlSession/${enc(s.id)}`}>State chart</Link>
      </div>
      {closing.error ? <ErrorNotice error={closing.error} what="Close" /> : null}
      <h2>Statements</h2>
      {statements.error ? <ErrorNotice error={statements.error} what="Statements" /> : null}
      {statements.data && !statements.data.items.length ? <EmptyState>No statement yet.</EmptyState> : null}
      {statements.data?.items.length ? (
        <table className="data" aria-label="Statements">
          <thead>
            <tr>
              <th>Started</th>
              <th>SQL</th>
              <th>Status</th>
              <th>Rows</th>
              <th>Duration</th>
            </tr>
          </thead>
          <tbody>
            {statements.data.items.map((q) => (
              <tr key={q.id}>
                <td>
                  <Time iso={q.started_at} />
                </td>
                <td className="mono">{q.sql.length > 200 ? `${q.sql.slice(0, 200)}…` : q.sql}</td>
                <td>
                  {q.status}
                  {q.error ? <span className="hint"> {q.error}</span> : null}
                </td>
                <td>{formatCount(q.row_count)}</td>
                <td>{formatDuration(q.duration_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}
