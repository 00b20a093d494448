// Saved queries and schedules of a workspace: open a saved query in a worksheet, schedule it on a cron (UTC) through
// an agent, switch schedules on and off, fire one now, and follow the runs.
import { useState, type FormEvent } from 'react';
import { call, enc } from '../api/client.ts';
import type { SavedQuery, SavedQueryPage, Schedule } from '../api/types.ts';
import { navigate } from '../app/router.ts';
import { useAction } from '../app/useAction.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatTime } from '../components/format.ts';
import { AgentPicker } from '../worksheet/AgentPicker.tsx';
import { openInWorksheet } from '../worksheet/worksheetStore.ts';
import { Time } from '../components/Time.tsx';
import { EmptyState } from '../components/EmptyState.tsx';

type Tab = 'saved' | 'schedules' | 'runs';

export function SchedulesScreen(props: { ws: string }) {
  const [tab, setTab] = useState<Tab>('saved');
  const path = { workspace: props.ws };
  const savedList = useAsync((signal) => call('GET /api/workspaces/{workspace}/saved-queries', { path, signal, query: { limit: 500 } }), [props.ws]);
  const schedules = useAsync((signal) => call('GET /api/workspaces/{workspace}/schedules', { path, signal }), [props.ws]);
  const names = new Map((savedList.data?.items ?? []).map((q) => [q.id, q.name]));
  return (
    <section className="schedules">
      <h1>Saved queries and schedules</h1>
      <div role="tablist" aria-label="Saved queries and schedules" className="tabs">
        {(
          [
            ['saved', 'Saved queries'],
            ['schedules', 'Schedules'],
            ['runs', 'Runs'],
          ] as const
        ).map(([id, label]) => (
          <button key={id} type="button" role="tab" aria-selected={tab === id} onClick={() => setTab(id)}>
            {label}
          </button>
        ))}
      </div>
      {tab === 'saved' ? <SavedQueries ws={props.ws} list={savedList} onScheduled={schedules.reload} /> : null}
      {tab === 'schedules' ? <Schedules ws={props.ws} list={schedules} names={names} /> : null}
      {tab === 'runs' ? <Runs ws={props.ws} names={names} schedules={schedules.data ?? []} /> : null}
    </section>
  );
}

function SavedQueries(props: { ws: string; list: ReturnType<typeof useAsync<SavedQueryPage>>; onScheduled: () => void }) {
  const [scheduling, setScheduling] = useState<SavedQuery | null>(null);
  /** what the last schedule made here was, said until the next one is started */
  const [created, setCreated] = useState<Schedule | null>(null);
  const { list } = props;
  // A refused delete (a reader's 403, a query already gone) is shown, not dropped as an unhandled rejection.
  const deleting = useAction(() => {
    list.reload();
    props.onScheduled();
  });
  if (list.error) return <ErrorNotice error={list.error} what="Saved queries" />;
  if (!list.data) return <Loading />;
  if (!list.data.items.length) return <EmptyState>No saved query yet: in a worksheet, Ctrl/Cmd+S saves it under its tab’s name.</EmptyState>;
  return (
    <>
      {deleting.error ? <ErrorNotice error={deleting.error} what="Deleting the saved query" /> : null}
      <table className="data" aria-label="Saved queries">
        <thead>
          <tr>
            <th>Name</th>
            <th>SQL</th>
            <th>Updated</th>
            <th>Last run</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.data.items.map((q) => (
            <tr key={q.id}>
              <td>{q.name}</td>
              <td className="mono">{q.sql.length > 120 ? `${q.sql.slice(0, 120)}…` : q.sql}</td>
              <td>
                <Time iso={q.updated_at} />
              </td>
              <td>{q.last_run_at ? formatTime(q.last_run_at) : ''}</td>
              <td className="actions">
                <button
                  type="button"
                  onClick={() => {
                    openInWorksheet(props.ws, q.sql, q.name, q.catalog, { name: q.name, agentId: q.default_agent_id });
                    navigate(`/w/${enc(props.ws)}/worksheets`);
                  }}
                >
                  Open
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    setCreated(null);
                    setScheduling(q);
                  }}
                >
                  Schedule
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    if (!confirm(`Delete the saved query ${q.name} and its schedules?`)) return;
                    void deleting.run(() => call('DELETE /api/workspaces/{workspace}/saved-queries/{saved_query_id}', { path: { workspace: props.ws, saved_query_id: q.id } }));
                  }}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {scheduling ? (
        <NewSchedule
          ws={props.ws}
          query={scheduling}
          onDone={(made) => {
            setScheduling(null);
            setCreated(made);
            props.onScheduled();
          }}
        />
      ) : null}
      {created ? (
        <p className="notice notice-ok" role="status">
          Scheduled {props.list.data?.items.find((q) => q.id === created.saved_query_id)?.name ?? 'the query'} at <code>{created.cron}</code> (UTC)
          {created.next_run_at ? `; next run ${formatTime(created.next_run_at)}` : ''}. It is listed under Schedules.
        </p>
      ) : null}
    </>
  );
}

function NewSchedule(props: { ws: string; query: SavedQuery; onDone: (made: Schedule) => void }) {
  const [cron, setCron] = useState('0 6 * * *');
  const [agentId, setAgentId] = useState<string | null>(props.query.default_agent_id);
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      if (!agentId) return; // the button waits for an agent
      props.onDone(await call('POST /api/workspaces/{workspace}/schedules', { path: { workspace: props.ws }, body: { saved_query_id: props.query.id, cron, agent_id: agentId } }));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="card" aria-label="New schedule" onSubmit={submit}>
      <h2>Schedule {props.query.name}</h2>
      <label className="inline">
        Cron (UTC: minute hour day month weekday) <input aria-label="Cron" value={cron} onChange={(e) => setCron(e.target.value)} />
      </label>
      <AgentPicker value={agentId} onChange={setAgentId} />
      <button type="submit" disabled={!agentId}>
        Create schedule
      </button>
      {error ? <ErrorNotice error={error} what="Schedule" /> : null}
    </form>
  );
}

function Schedules(props: { ws: string; list: ReturnType<typeof useAsync<Schedule[]>>; names: Map<string, string> }) {
  const { list } = props;
  const [error, setError] = useState<unknown>(undefined);
  const act = async (fn: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await fn();
    } catch (e) {
      setError(e);
    }
    list.reload();
  };
  if (list.error) return <ErrorNotice error={list.error} what="Schedules" />;
  if (!list.data) return <Loading />;
  if (!list.data.length) return <EmptyState>No schedule yet: schedule a saved query from its row.</EmptyState>;
  return (
    <>
      {error ? <ErrorNotice error={error} what="Schedule" /> : null}
      <table className="data" aria-label="Schedules">
        <thead>
          <tr>
            <th>Saved query</th>
            <th>Cron (UTC)</th>
            <th>Next run</th>
            <th>Last run</th>
            <th>Enabled</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.data.map((s) => (
            <tr key={s.id}>
              <td>{props.names.get(s.saved_query_id) ?? s.saved_query_id}</td>
              <td className="mono">{s.cron}</td>
              <td>{s.next_run_at ? formatTime(s.next_run_at) : '—'}</td>
              <td>{s.last_run_at ? `${formatTime(s.last_run_at)} (${s.last_status ?? '—'})` : ''}</td>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Enabled: ${props.names.get(s.saved_query_id) ?? s.id}`}
                  checked={s.enabled}
                  onChange={() => void act(() => call('PATCH /api/workspaces/{workspace}/schedules/{schedule_id}', { path: { workspace: props.ws, schedule_id: s.id }, body: { enabled: !s.enabled } }))}
                />
              </td>
              <td className="actions">
                <button type="button" onClick={() => void act(() => call('POST /api/workspaces/{workspace}/schedules/{schedule_id}/run', { path: { workspace: props.ws, schedule_id: s.id } }))}>
                  Run now
                </button>
                <button type="button" className="secondary" onClick={() => void act(() => call('DELETE /api/workspaces/{workspace}/schedules/{schedule_id}', { path: { workspace: props.ws, schedule_id: s.id } }))}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function Runs(props: { ws: string; names: Map<string, string>; schedules: Schedule[] }) {
  const runs = useAsync((signal) => call('GET /api/workspaces/{workspace}/schedule-runs', { path: { workspace: props.ws }, signal, query: { limit: 200 } }), [props.ws]);
  const queryOf = new Map(props.schedules.map((s) => [s.id, props.names.get(s.saved_query_id) ?? s.saved_query_id]));
  if (runs.error) return <ErrorNotice error={runs.error} what="Runs" />;
  if (!runs.data) return <Loading />;
  if (!runs.data.items.length) return <EmptyState>No run yet.</EmptyState>;
  return (
    <>
      <button type="button" className="secondary" onClick={runs.reload}>
        Refresh
      </button>
      <table className="data" aria-label="Runs">
        <thead>
          <tr>
            <th>Started</th>
            <th>Schedule</th>
            <th>Status</th>
            <th>Query</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {runs.data.items.map((r) => (
            <tr key={r.id}>
              <td>
                <Time iso={r.started_at} />
              </td>
              <td>{queryOf.get(r.schedule_id) ?? r.schedule_id}</td>
              <td>{r.status}</td>
              <td>{r.query_id ? <Link href={`/inspect/query/${enc(r.query_id)}`}>{r.query_id.slice(0, 8)}</Link> : ''}</td>
              <td>{r.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
