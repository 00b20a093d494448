// What a finished query shows: row count and duration, the result grid (pages fetched by row offset as they come
// into view), sorted by a header click and filtered per column or by text in any column, all of it done by the agent
// holding the result over the whole of it (resultView.ts), the export menu (CSV, Parquet, JSON, made by the agent in
// the order and filter shown), and the profile.
// A DDL or DML statement has no grid, just its outcome. An EXPLAIN's result (DuckDB's plan as text) opens on its
// Plan view, the text monospaced. A result the agent no longer keeps (retention) says so.
import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiError, call } from '../api/client.ts';
import { asProfile, asRowsPage, type ColumnSchema, type QueryOut } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { formatCount, formatDuration } from '../components/format.ts';
import { ProfileTree } from './ProfileTree.tsx';
import { ResultGrid } from './ResultGrid.tsx';
import { RowPager } from './rowPager.ts';
import { QuickChart } from './QuickChart.tsx';
import { HELD_LIMIT, loadAll, pagerSource, type Row } from './rowSource.ts';
import { emptyView, exportUrl, viewParams, type GridView } from './resultView.ts';
import { columnKind } from './cells.ts';
import { summarize, type ColumnSummary } from './summary.ts';
import { Icon } from '../components/Icon.tsx';

type ViewParams = ReturnType<typeof viewParams>;

/** The page that starts at a row, of the result or of a view of it (the grid jumps anywhere in a result this way). */
const fetchRowsAt =
  (queryId: string, view: ViewParams = {}) =>
  (offset: number, limit: number) =>
    call('GET /api/queries/{query_id}/rows', { path: { query_id: queryId }, query: { limit, offset, ...view } }).then(asRowsPage);

/** How long typing in a filter waits before the agent is asked (each view is a re-read of the result). */
const FILTER_DEBOUNCE_MS = 300;

export function ResultPanel(props: { query: QueryOut }) {
  const q = props.query;
  const isExplain = (q.column_schema ?? []).some((c) => c.name === 'explain_value') || (q.columns ?? []).includes('explain_value');
  const [tab, setTab] = useState<'rows' | 'chart' | 'profile' | 'plan'>(isExplain ? 'plan' : 'rows');
  const schema: ColumnSchema[] = useMemo(
    () => q.column_schema ?? (q.columns ?? []).map((name) => ({ name, type: '' })),
    [q.column_schema, q.columns],
  );
  const kinds = useMemo(() => Object.fromEntries(schema.map((c) => [c.name, columnKind(c.type)])), [schema]);

  // The view shown: what was typed, and what the agent is asked for (the filters after a pause in typing).
  const [view, setView] = useState<GridView>(emptyView);
  const [asked, setAsked] = useState<GridView>(emptyView);
  useEffect(() => {
    const typing = view.filters !== asked.filters || view.search !== asked.search;
    if (!typing) return setAsked(view);
    const timer = setTimeout(() => setAsked(view), FILTER_DEBOUNCE_MS);
    return () => clearTimeout(timer);
    // asked follows view
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [view]);
  const params = useMemo(() => viewParams(asked, kinds), [asked, kinds]);
  const paramsKey = JSON.stringify(params);
  const viewed = paramsKey !== '{}';

  // eslint-disable-next-line react-hooks/exhaustive-deps -- the pager follows the query and the view's parameters
  const pager = useMemo(() => new RowPager(fetchRowsAt(q.id, params), { pageSize: 500 }), [q.id, paramsKey]);
  // The grid keeps showing the last view until the next one's first rows are in (or it failed): no empty grid
  // between, and the header's sort mark always describes the rows under it.
  const [shown, setShown] = useState(() => ({ pager, queryId: q.id, sort: asked.sort, viewed, source: pagerSource(pager, fetchRowsAt(q.id, params)) }));
  const shownRef = useRef(shown);
  shownRef.current = shown;
  useEffect(() => {
    if (shownRef.current.pager === pager) return;
    const next = { pager, queryId: q.id, sort: asked.sort, viewed, source: pagerSource(pager, fetchRowsAt(q.id, params)) };
    pager.ensure(0, 100);
    const swap = () => {
      // Another query's rows are never kept on screen.
      if (pager.total === null && !pager.error && shownRef.current.queryId === q.id) return;
      const before = shownRef.current.pager;
      if (before === pager) return;
      setShown(next);
      before.dispose();
    };
    swap();
    const stop = pager.subscribe(swap);
    return () => {
      stop();
      if (shownRef.current.pager !== pager) pager.dispose();
    };
    // the pager carries the view it was made for
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pager]);
  useEffect(() => () => shownRef.current.pager.dispose(), []);
  const [, force] = useState(0);
  useEffect(() => shown.pager.subscribe(() => force((n) => n + 1)), [shown.pager]);
  const source = shown.source;
  const pending = shown.pager !== pager;

  const hasGrid = schema.length > 0 || shown.pager.columns.length > 0;
  const gridColumns: ColumnSchema[] = schema.length ? schema : shown.pager.columns.map((name) => ({ name, type: '' }));
  const total = q.row_count ?? 0;

  // The rows held in the browser for summaries and charts: the whole result up to HELD_LIMIT rows, else its first
  // HELD_LIMIT rows (summaries and charts say so), in the query's order. Read once, 1,000 at a time.
  const held = Math.min(total, HELD_LIMIT);
  const heldRows = useRef<Promise<Row[]> | null>(null);
  const readHeld = () =>
    (heldRows.current ??= loadAll(fetchRowsAt(q.id), held).catch((e: unknown) => {
      heldRows.current = null;
      throw e;
    }));
  const heldWords = total > held ? `the first ${formatCount(held)} of ${formatCount(total)} rows` : `all ${formatCount(total)} ${total === 1 ? 'row' : 'rows'}`;

  // A header click cycles ascending, descending, the query's own order.
  const [notice, setNotice] = useState<string | null>(null);
  const onSort = (column: string) => {
    setView((v) => ({
      ...v,
      sort: v.sort?.column !== column ? { column, dir: 'asc' } : v.sort.dir === 'asc' ? { column, dir: 'desc' } : null,
    }));
  };
  const onFilter = (column: string, text: string) => setView((v) => ({ ...v, filters: { ...v.filters, [column]: text } }));

  // Column summaries under the headers, computed here from the rows held.
  const [summaries, setSummaries] = useState<ColumnSummary[] | 'reading' | null>(null);
  const [summaryError, setSummaryError] = useState<unknown>(null);
  const toggleSummaries = () => {
    setSummaryError(null);
    if (summaries) return setSummaries(null);
    setSummaries('reading');
    readHeld().then(
      (data) => setSummaries((s) => (s === 'reading' ? summarize(data, schema) : s)),
      (e) => {
        setSummaries(null);
        setSummaryError(e);
      },
    );
  };

  // A view the agent refused (a value not of its column's type): said above the grid, which keeps its filters.
  const viewError = shown.viewed && shown.pager.error instanceof ApiError && shown.pager.error.status === 400 ? shown.pager.error : null;
  const filtered = shown.viewed && shown.pager.total !== null && shown.pager.total !== total;
  const count = shown.pager.total ?? (shown.viewed ? null : q.row_count);
  const facts = !hasGrid
    ? `${q.statement_type ?? 'statement'} completed`
    : count === null
      ? `${formatCount(total)} rows`
      : filtered
        ? `${formatCount(count)} of ${formatCount(total)} rows`
        : `${formatCount(count)} ${count === 1 ? 'row' : 'rows'}`;

  return (
    <div className="result-panel">
      <div className="result-bar" role="toolbar" aria-label="Result">
        <div role="tablist" aria-label="Result views" className="tabs small">
          <button type="button" role="tab" aria-selected={tab === 'rows'} onClick={() => setTab('rows')}>
            Results
          </button>
          {isExplain ? (
            <button type="button" role="tab" aria-selected={tab === 'plan'} onClick={() => setTab('plan')}>
              Plan
            </button>
          ) : null}
          {hasGrid ? (
            <button type="button" role="tab" aria-selected={tab === 'chart'} onClick={() => setTab('chart')}>
              Chart
            </button>
          ) : null}
          <button type="button" role="tab" aria-selected={tab === 'profile'} onClick={() => setTab('profile')}>
            Profile
          </button>
        </div>
        <span className="result-facts" aria-live="polite">
          {facts}
          {' · '}
          {formatDuration(q.duration_ms)}
          {shown.sort ? ` · sorted by ${shown.sort.column} ${shown.sort.dir === 'asc' ? 'ascending' : 'descending'}` : ''}
          {pending ? ' · reading…' : ''}
        </span>
        {notice ? (
          <span className="hint result-notice" role="status" title={notice}>
            {notice}
          </span>
        ) : null}
        {hasGrid && tab === 'rows' ? (
          <input
            type="search"
            className="result-filter"
            aria-label="Filter rows"
            placeholder="Filter rows"
            title="Shows the rows with this text in any column, over the whole result"
            value={view.search}
            onChange={(e) => {
              const search = e.target.value;
              setView((v) => ({ ...v, search }));
            }}
            onKeyDown={(e) => {
              if (e.key === 'Escape') setView((v) => ({ ...v, search: '' }));
            }}
          />
        ) : null}
        {tab === 'rows' && summaries === 'reading' ? (
          <span className="hint" role="status">
            Reading {heldWords} to summarize…
          </span>
        ) : tab === 'rows' && summaries ? (
          <span className="hint summary-scope" role="status">
            Summaries of {heldWords}
          </span>
        ) : null}
        <span className="grow" />
        {hasGrid && tab === 'rows' ? (
          <button type="button" className="secondary" aria-pressed={!!summaries} onClick={toggleSummaries} title="Nulls, distinct values, least and greatest, and a histogram of numbers, under each header">
            Summaries
          </button>
        ) : null}
        {hasGrid ? <ExportMenu queryId={q.id} params={params} /> : null}
      </div>
      {summaryError ? <ErrorNotice error={summaryError} what="Column summaries" /> : null}
      {viewError ? <ErrorNotice error={viewError} what="Sort and filter" /> : null}
      {tab === 'rows' ? (
        hasGrid ? (
          shown.pager.error && !viewError ? (
            <RowsError error={shown.pager.error} />
          ) : (
            <ResultGrid
              source={source}
              columns={gridColumns}
              sort={shown.sort}
              onSort={onSort}
              filters={view.filters}
              onFilter={onFilter}
              onNotice={setNotice}
              summaries={Array.isArray(summaries) ? summaries : null}
            />
          )
        ) : (
          <p className="hint">This statement returns no rows.</p>
        )
      ) : tab === 'plan' ? (
        <ExplainPlan read={readHeld} />
      ) : tab === 'chart' ? (
        <QuickChart columns={schema} read={readHeld} scope={heldWords} />
      ) : (
        <ProfilePane queryId={q.id} />
      )}
    </div>
  );
}

/** The export menu: each format a plain link to the api, which streams the file the agent makes (in the view shown). */
function ExportMenu(props: { queryId: string; params: ViewParams }) {
  const menu = useRef<HTMLDetailsElement>(null);
  // Closes on a click elsewhere or Escape, as a menu does.
  useEffect(() => {
    const close = (e: Event) => {
      const el = menu.current;
      if (el?.open && (e instanceof KeyboardEvent ? e.key === 'Escape' : !el.contains(e.target as Node))) el.removeAttribute('open');
    };
    document.addEventListener('pointerdown', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('pointerdown', close);
      document.removeEventListener('keydown', close);
    };
  }, []);
  const formats = [
    ['csv', 'CSV'],
    ['parquet', 'Parquet'],
    ['json', 'JSON'],
  ] as const;
  return (
    <details className="export-menu" ref={menu}>
      <summary className="button secondary" title="Download the whole result, in the order and filter shown">
        <Icon name="download" />
        Export
      </summary>
      <ul role="list" aria-label="Export formats">
        {formats.map(([format, label]) => (
          <li key={format}>
            <a href={exportUrl(props.queryId, format, props.params)} download onClick={() => menu.current?.removeAttribute('open')}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </details>
  );
}

function ProfilePane(props: { queryId: string }) {
  const profile = useAsync((signal) => call('GET /api/queries/{query_id}/profile', { path: { query_id: props.queryId }, signal }).then(asProfile), [props.queryId]);
  if (profile.error) return <ErrorNotice error={profile.error} what="Profile" />;
  if (!profile.data) return <Loading label="Loading profile…" />;
  return <ProfileTree profile={profile.data} />;
}

/** Rows that could not be read: a result past the agent's retention says so in words, anything else as an error. */
function RowsError(props: { error: unknown }) {
  if (props.error instanceof ApiError && (props.error.status === 410 || props.error.code === 'result_expired'))
    return (
      <p className="notice result-expired" role="status">
        This result has expired: the agent no longer keeps its rows. Run the query again to see them.
      </p>
    );
  return <ErrorNotice error={props.error} what="Result rows" />;
}

/** DuckDB's EXPLAIN output: the plan text of each row, monospaced. */
function ExplainPlan(props: { read: () => Promise<Row[]> }) {
  const rows = useAsync(() => props.read(), []);
  if (rows.error) return rows.error instanceof ApiError && rows.error.status === 410 ? <RowsError error={rows.error} /> : <ErrorNotice error={rows.error} what="Plan" />;
  if (!rows.data) return <Loading label="Loading plan…" />;
  const text = rows.data.map((r) => String(r.explain_value ?? '')).join('\n');
  return (
    <pre className="explain-plan" aria-label="Query plan">
      {text}
    </pre>
  );
}
