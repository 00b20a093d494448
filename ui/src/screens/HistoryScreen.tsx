// Query history of the workspace: the spec's filters and sort (kept in the address, so a filtered history can be
// reloaded, shared, and gone back to), paged by cursor ("Load more"), with each query's SQL openable in a
// worksheet and its rows viewable while the agent still keeps them (below the row, or in a worksheet tab of their own
// with "Results": the tab's last run is that query, its rows read again by id). A query still queued or running shows its
// time so far, ticking, and can be cancelled from here.
import { lazy, Suspense, useEffect, useMemo, useState, type FormEvent } from 'react';
import { ApiError, call, enc, type QueryOf } from '../api/client.ts';
import type { QueryOut } from '../api/types.ts';
import { navigate, useLocation } from '../app/router.ts';
import { ErrorNotice, Loading, Notice } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatCount, formatDuration } from '../components/format.ts';
import { openInWorksheet } from '../worksheet/worksheetStore.ts';
import { forgetRefused, loadRefused, refusedMatching, type RefusedSubmission } from '../worksheet/refusedLog.ts';
import { queryError } from '../worksheet/useQueryRun.ts';
import { Time } from '../components/Time.tsx';
import { TableHead } from '../components/TableHead.tsx';
import { EmptyState } from '../components/EmptyState.tsx';

// The result grid comes with the worksheet's chunk, loaded when a past result is opened, not before sign-in.
const ResultPanel = lazy(() => import('../results/ResultPanel.tsx').then((m) => ({ default: m.ResultPanel })));

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

/** The filters as the address's query string (empty fields left out). */
function filtersToSearch(f: Filters): string {
  const sp = new URLSearchParams();
  if (f.q) sp.set('q', f.q);
  for (const v of f.status) sp.append('status', v);
  for (const v of f.statement_type) sp.append('type', v);
  if (f.slower_than_ms) sp.set('slower_than_ms', f.slower_than_ms);
  if (f.since) sp.set('since', f.since);
  if (f.until) sp.set('until', f.until);
  if (f.agent_id) sp.set('agent', f.agent_id);
  if (f.session_id) sp.set('session', f.session_id);
  if (f.sort !== empty.sort) sp.set('sort', f.sort);
  if (f.dir !== empty.dir) sp.set('dir', f.dir);
  return sp.toString();
}

function filtersFromSearch(sp: URLSearchParams): Filters {
  return {
    q: sp.get('q') ?? '',
    status: sp.getAll('status').filter((v) => STATUSES.includes(v)),
    statement_type: sp.getAll('type').filter((v) => TYPES.includes(v)),
    slower_than_ms: sp.get('slower_than_ms') ?? '',
    since: sp.get('since') ?? '',
    until: sp.get('until') ?? '',
    agent_id: sp.get('agent') ?? '',
    session_id: sp.get('session') ?? '',
    sort: sp.get('sort') === 'duration' ? 'duration' : 'started_at',
    dir: sp.get('dir') === 'asc' ? 'asc' : 'desc',
  };
}

function toQuery(f: Filters): QueryOf<'GET /api/workspaces/{workspace}/queries'> {
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
  const { path, search } = useLocation();
  const query = search.toString();
  // The applied filters are the address's; the form edits a draft until Apply.
  const applied = useMemo(() => filtersFromSearch(new URLSearchParams(query)), [query]);
  const [draft, setDraft] = useState<Filters>(applied);
  useEffect(() => setDraft(applied), [applied]);
  const apply = (f: Filters) => {
    const qs = filtersToSearch(f);
    navigate(qs ? `${path}?${qs}` : path);
  };
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
      const page = await call('GET /api/workspaces/{workspace}/queries', { path: { workspace: props.ws }, query: { ...toQuery(f), cursor: after ?? undefined } });
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

  // Queries still queued or running are read again every 2 s, so their status and Cancel stay true.
  const live = items.filter((q) => q.status === 'queued' || q.status === 'running').map((q) => q.id);
  const liveKey = live.join(',');
  useEffect(() => {
    if (!liveKey) return;
    const t = setInterval(() => {
      for (const id of liveKey.split(','))
        call('GET /api/queries/{query_id}', { path: { query_id: id } }).then(
          (q) => setItems((list) => list.map((x) => (x.id === q.id ? q : x))),
          () => {},
        );
    }, 2000);
    return () => clearInterval(t);
  }, [liveKey]);
  const replace = (q: QueryOut) => setItems((list) => list.map((x) => (x.id === q.id ? q : x)));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply(draft);
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
              apply(empty);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} what="Query history" /> : null}
      <RefusedList ws={props.ws} filters={applied} />
      {items.length ? (
        <table className="table" aria-label="Queries">
          <TableHead columns={['Status', 'Type', 'User', 'SQL', 'Started', 'Duration', 'Rows']} actions />
          <tbody>
            {items.map((q) => (
              <HistoryRow key={q.id} ws={props.ws} q={q} open={open === q.id} onToggle={() => setOpen(open === q.id ? null : q.id)} onChange={replace} />
            ))}
          </tbody>
        </table>
      ) : !loading && !error ? (
        <EmptyState>No queries match.</EmptyState>
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

/** Statements refused at submit in this browser (no query row holds them): time, worksheet, SQL and the api's error. */
function RefusedList(props: { ws: string; filters: Filters }) {
  const [stored, setStored] = useState<RefusedSubmission[]>(() => loadRefused(props.ws));
  useEffect(() => setStored(loadRefused(props.ws)), [props.ws]);
  const list = refusedMatching(stored, props.filters);
  if (!list.length) return null;
  const forget = (id?: string) => {
    forgetRefused(props.ws, id);
    setStored(loadRefused(props.ws));
  };
  return (
    <section aria-labelledby="refused-heading" className="refused">
      <div className="row">
        <h2 id="refused-heading" className="grow">
          Refused at submit
        </h2>
        <span className="hint">kept in this browser: the api runs nothing for these, so the server keeps no query</span>
        <button type="button" className="secondary small" onClick={() => forget()}>
          Clear
        </button>
      </div>
      <table className="table" aria-label="Refused submissions">
        <TableHead columns={['Refused', 'Worksheet', 'SQL', 'Error']} actions />
        <tbody>
          {list.map((r) => (
            <RefusedRow key={r.id} ws={props.ws} r={r} onForget={() => forget(r.id)} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function RefusedRow(props: { ws: string; r: RefusedSubmission; onForget: () => void }) {
  const { r } = props;
  return (
    <tr data-code={r.code}>
      <td>
        <Time iso={r.at} />
      </td>
      <td>{r.worksheet ?? '—'}</td>
      <td className="mono sql-cell" title={r.sql}>
        {r.sql.length > 140 ? r.sql.slice(0, 140) + '…' : r.sql}
      </td>
      <td>
        <span className="refused-error">{r.message}</span> <code className="error-code">{r.code}</code>
      </td>
      <td className="row">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            openInWorksheet(props.ws, r.sql);
            navigate(`/w/${enc(props.ws)}/worksheets`);
          }}
        >
          Open in worksheet
        </button>
        <button type="button" className="secondary" aria-label={`Forget the refusal of ${r.sql.slice(0, 40)}`} onClick={props.onForget}>
          Forget
        </button>
      </td>
    </tr>
  );
}

/** Time since `since`, ticking every second. */
function Elapsed(props: { since: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const t0 = Date.parse(props.since);
  return (
    <span className="elapsed" aria-live="off">
      {formatDuration(Number.isFinite(t0) ? Math.max(0, now - t0) : null)} so far
    </span>
  );
}

function HistoryRow(props: { ws: string; q: QueryOut; open: boolean; onToggle: () => void; onChange: (q: QueryOut) => void }) {
  const { q } = props;
  const err = queryError(q);
  const live = q.status === 'queued' || q.status === 'running';
  const [cancelError, setCancelError] = useState<unknown>(null);
  const cancel = async () => {
    setCancelError(null);
    try {
      props.onChange(await call('POST /api/queries/{query_id}/cancel', { path: { query_id: q.id } }));
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 409)) setCancelError(e);
    }
  };
  return (
    <>
      <tr>
        <td>
          <span className={`pill ${q.status}`}>{q.status}</span>
        </td>
        <td>{q.statement_type ?? '—'}</td>
        <td className="history-user">{q.user_name ?? (q.user_id ? q.user_id.slice(0, 8) : q.schedule_id ? 'schedule' : '—')}</td>
        <td className="mono sql-cell" title={q.sql}>
          {q.sql.length > 140 ? q.sql.slice(0, 140) + '…' : q.sql}
        </td>
        <td>
          <Time iso={q.started_at} />
        </td>
        <td>{live ? <Elapsed since={q.started_at} /> : formatDuration(q.duration_ms)}</td>
        <td>{formatCount(q.row_count)}</td>
        <td className="row">
          {live ? (
            <button type="button" className="danger" onClick={() => void cancel()}>
              Cancel
            </button>
          ) : null}
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
          {q.status === 'done' ? (
            <button
              type="button"
              className="secondary"
              title="Open this query's result in a worksheet tab"
              aria-label={`Results of query ${q.id.slice(0, 8)}`}
              onClick={() => {
                openInWorksheet(props.ws, q.sql, `Result ${q.id.slice(0, 8)}`, null, undefined, { queryId: q.id, agentId: q.agent_id ?? null });
                navigate(`/w/${enc(props.ws)}/worksheets`);
              }}
            >
              Results
            </button>
          ) : null}
          <button type="button" className="secondary" aria-expanded={props.open} onClick={props.onToggle}>
            {props.open ? 'Hide' : 'Details'}
          </button>
          {cancelError ? <ErrorNotice error={cancelError} what="Cancel" /> : null}
        </td>
      </tr>
      {props.open ? (
        <tr>
          <td colSpan={8}>
            <div className="stack">
              <pre className="mono sql-full">{q.sql}</pre>
              <p className="hint">
                Query {q.id}
                {q.agent_id ? ` · agent ${q.agent_id}` : ''}
                {q.session_id ? ` · session ${q.session_id}` : ''} · <Link href={`/inspect/${q.session_id ? 'statement' : 'query'}/${enc(q.id)}`}>state chart</Link>
              </p>
              {err ? <Notice code={err.code} message={err.message} /> : null}
              {q.status === 'done' ? (
                <div className="history-result">
                  <Suspense fallback={<Loading />}>
                    <ResultPanel query={q} />
                  </Suspense>
                </div>
              ) : null}
            </div>
          </td>
        </tr>
      ) : null}
    </>
  );
}
