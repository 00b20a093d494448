// Query history of the workspace: the spec's filters and sort, paged by cursor ("Load more"), with each query's SQL
// openable in a worksheet and its rows viewable while the agent still keeps them.
import { useEffect, useState, type FormEvent } from 'react';
import { api, enc, type Query } from '../api/client.ts';
import type { Page, QueryOut } from '../api/types.ts';
import { navigate } from '../app/router.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatCount, formatDuration, formatTime } from '../components/format.ts';
import { ResultPanel } from '../results/ResultPanel.tsx';
import { openInWorksheet } from '../worksheet/worksheetStore.ts';
import { queryError } from '../worksheet/useQueryRun.ts';

const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'];
const TYPES = ['select', 'insert', 'update', 'delete', 'merge', 'copy', 'create', 'alter', 'drop', 'describe', 'other'];

interface Filters {
  q: string;
  status: string[];
  statement_type: string[];
  slower_than_ms: string;
  since: string;
  until: string;
  agent_id: string;
  session_id: string;
  sort: 'started_at' | 'duration';
  dir: 'desc' | 'asc';
}

const empty: Filters = { q: '', status: [], statement_type: [], slower_than_ms: '', since: '', until: '', agent_id: '', session_id: '', sort: 'started_at', dir: 'desc' };

const toIso = (local: string) => (local ? new Date(local).toISOString() : undefined);

function toQuery(f: Filters): Query {
  return {
    q: f.q || undefined,
    status: f.status,
    statement_type: f.statement_type,
    slower_than_ms: f.slower_than_ms || undefined,
    since: toIso(f.since),
    until: toIso(f.until),
    agent_id: f.agent_id || undefined,
    session_id: f.session_id || undefined,
    sort: f.sort,
    dir: f.dir,
    limit: 50,
  };
}

export function HistoryScreen(props: { ws: string }) {
  const [draft, setDraft] = useState<Filters>(empty);
  const [applied, setApplied] = useState<Filters>(empty);
  const [items, setItems] = useState<QueryOut[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<string | null>(null);

  const load = async (f: Filters, after: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.get<Page<QueryOut>>(`/api/workspaces/${enc(props.ws)}/queries`, { query: { ...toQuery(f), cursor: after } });
      setItems((prev) => (after ? [...prev, ...page.items] : page.items));
      setCursor(page.cursor);
      setHasMore(page.has_more);
    } catch (e) {
      setError(e);
      if (!after) setItems([]);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load(applied, null);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.ws, applied]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setApplied(draft);
  };
  const toggle = (key: 'status' | 'statement_type', v: string) =>
    setDraft((d) => ({ ...d, [key]: d[key].includes(v) ? d[key].filter((x) => x !== v) : [...d[key], v] }));
  const set = (key: keyof Filters) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [key]: e.target.value }));

  return (
    <section>
      <h1>Query history</h1>
      <form className="filters" onSubmit={submit} aria-label="History filters">
        <label>
          Text
          <input type="search" value={draft.q} onChange={set('q')} placeholder="part of the SQL" />
        </label>
        <fieldset>
          <legend>Status</legend>
          {STATUSES.map((s) => (
            <label key={s} className="check">
              <input type="checkbox" checked={draft.status.includes(s)} onChange={() => toggle('status', s)} /> {s}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Statement type</legend>
          {TYPES.map((s) => (
            <label key={s} className="check">
              <input type="checkbox" checked={draft.statement_type.includes(s)} onChange={() => toggle('statement_type', s)} /> {s}
            </label>
          ))}
        </fieldset>
        <label>
          Slower than (ms)
          <input type="number" min={0} value={draft.slower_than_ms} onChange={set('slower_than_ms')} />
        </label>
        <label>
          Since
          <input type="datetime-local" value={draft.since} onChange={set('since')} />
        </label>
        <label>
          Until
          <input type="datetime-local" value={draft.until} onChange={set('until')} />
        </label>
        <label>
          Agent id
          <input value={draft.agent_id} onChange={set('agent_id')} />
        </label>
        <label>
          Session id
          <input value={draft.session_id} onChange={set('session_id')} />
        </label>
        <label>
          Sort by
          <select value={draft.sort} onChange={set('sort')}>
            <option value="started_at">start time</option>
            <option value="duration">duration</option>
          </select>
        </label>
        <label>
          Order
          <select value={draft.dir} onChange={set('dir')}>
            <option value="desc">descending</option>
            <option value="asc">ascending</option>
          </select>
        </label>
        <div className="row">
          <button type="submit">Apply</button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setDraft(empty);
              setApplied(empty);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} what="Query history" /> : null}
      {items.length ? (
        <table className="table" aria-label="Queries">
          <thead>
            <tr>
              <th>Status</th>
              <th>Type</th>
              <th>SQL</th>
              <th>Started</th>
              <th>Duration</th>
              <th>Rows</th>
              <th>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((q) => (
              <HistoryRow key={q.id} ws={props.ws} q={q} open={open === q.id} onToggle={() => setOpen(open === q.id ? null : q.id)} />
            ))}
          </tbody>
        </table>
      ) : !loading && !error ? (
        <p>No queries match.</p>
      ) : null}
      {loading ? <Loading /> : null}
      {hasMore && cursor && !loading ? (
        <button type="button" className="secondary" onClick={() => void load(applied, cursor)}>
          Load more
        </button>
      ) : null}
    </section>
  );
}

function HistoryRow(props: { ws: string; q: QueryOut; open: boolean; onToggle: () => void }) {
  const { q } = props;
  const err = queryError(q);
  return (
    <>
      <tr>
        <td>
          <span className={`pill ${q.status}`}>{q.status}</span>
        </td>
        <td>{q.statement_type ?? '—'}</td>
        <td className="mono sql-cell" title={q.sql}>
          {q.sql.length > 140 ? q.sql.slice(0, 140) + '…' : q.sql}
        </td>
        <td>{formatTime(q.started_at)}</td>
        <td>{formatDuration(q.duration_ms)}</td>
        <td>{formatCount(q.row_count)}</td>
        <td className="row">
          <button
            type="button"
            className="secondary"
            onClick={() => {
              openInWorksheet(props.ws, q.sql);
              navigate(`/w/${enc(props.ws)}/worksheets`);
            }}
          >
            Open in worksheet
          </button>
          <button type="button" className="secondary" aria-expanded={props.open} onClick={props.onToggle}>
            {props.open ? 'Hide' : 'Details'}
          </button>
        </td>
      </tr>
      {props.open ? (
        <tr>
          <td colSpan={7}>
            <div className="stack">
              <pre className="mono sql-full">{q.sql}</pre>
              <p className="hint">
                Query {q.id}
                {q.agent_id ? ` · agent ${q.agent_id}` : ''}
                {q.session_id ? ` · session ${q.session_id}` : ''} · <Link href={`/inspect/query/${enc(q.id)}`}>state chart</Link>
              </p>
              {err ? (
                <div className="notice notice-error" role="alert">
                  <code className="error-code">{err.code}</code> {err.message}
                </div>
              ) : null}
              {q.status === 'done' ? (
                <div className="history-result">
                  <ResultPanel query={q} />
                </div>
              ) : null}
            </div>
          </td>
        </tr>
      ) : null}
    </>
  );
}
