// What a finished query shows: row count and duration, the result grid (pages fetched by row offset as they come
// into view; sorted in the browser when the whole result fits), CSV export of the whole result, and the profile.
// A DDL or DML statement has no grid, just its outcome. An EXPLAIN's result (DuckDB's plan as text) opens on its
// Plan view, the text monospaced. A result the agent no longer keeps (retention) says so.
import { useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError, enc } from '../api/client.ts';
import type { ColumnSchema, QueryOut, QueryProfile, RowsPage } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { formatCount, formatDuration } from '../components/format.ts';
import { exportCsv } from './csv.ts';
import { ProfileTree } from './ProfileTree.tsx';
import { ResultGrid } from './ResultGrid.tsx';
import { RowPager } from './rowPager.ts';
import { QuickChart } from './QuickChart.tsx';
import { ArraySource, loadAll, pagerSource, sortRows, SORT_LIMIT, type Row, type RowSource, type SortBy } from './rowSource.ts';
import { summarize, type ColumnSummary } from './summary.ts';

/** Pages one after another by cursor (CSV export reads the whole result this way). */
export const fetchRows = (queryId: string) => (cursor: string | null, limit: number) =>
  api.get<RowsPage>(`/api/queries/${enc(queryId)}/rows`, { query: { limit, cursor } });

/** The page that starts at a row (the grid jumps anywhere in a result this way). */
export const fetchRowsAt = (queryId: string) => (offset: number, limit: number) =>
  api.get<RowsPage>(`/api/queries/${enc(queryId)}/rows`, { query: { limit, offset } });

function download(chunks: string[], name: string) {
  const url = URL.createObjectURL(new Blob(chunks, { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function ResultPanel(props: { query: QueryOut }) {
  const q = props.query;
  const isExplain = (q.column_schema ?? []).some((c) => c.name === 'explain_value') || (q.columns ?? []).includes('explain_value');
  const [tab, setTab] = useState<'rows' | 'chart' | 'profile' | 'plan'>(isExplain ? 'plan' : 'rows');
  const pager = useMemo(() => new RowPager(fetchRowsAt(q.id), { pageSize: 500 }), [q.id]);
  useEffect(() => () => pager.dispose(), [pager]);
  const [, force] = useState(0);
  useEffect(() => pager.subscribe(() => force((n) => n + 1)), [pager]);
  const paged = useMemo(() => pagerSource(pager, fetchRowsAt(q.id)), [pager, q.id]);

  const schema: ColumnSchema[] =
    q.column_schema ?? (q.columns ?? pager.columns).map((name) => ({ name, type: '' }));
  const hasGrid = schema.length > 0;
  const total = pager.total ?? q.row_count ?? 0;

  // The rows held in the browser for sorting, summaries and charts: the whole result up to SORT_LIMIT rows, else
  // its first SORT_LIMIT rows (summaries and charts say so; sorting is not offered). Read once, 1,000 at a time.
  const held = Math.min(total, SORT_LIMIT);
  const heldRows = useRef<Promise<Row[]> | null>(null);
  const readHeld = () =>
    (heldRows.current ??= loadAll(fetchRowsAt(q.id), held).catch((e: unknown) => {
      heldRows.current = null;
      throw e;
    }));
  const heldWords = total > held ? `the first ${formatCount(held)} of ${formatCount(total)} rows` : `all ${formatCount(total)} ${total === 1 ? 'row' : 'rows'}`;

  // Sorting: the whole result is read once (up to SORT_LIMIT rows) and sorted here; a header click cycles
  // ascending, descending, the query's own order.
  const [sort, setSort] = useState<SortBy | null>(null);
  const [sorted, setSorted] = useState<{ by: SortBy; source: RowSource } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [sortError, setSortError] = useState<unknown>(null);
  const onSort = (column: string) => {
    setSortError(null);
    if (total > SORT_LIMIT) {
      setNotice(`Sorting here needs the whole result, up to ${formatCount(SORT_LIMIT)} rows: sort this one with ORDER BY ${column} in the query.`);
      return;
    }
    const next: SortBy | null = sort?.column !== column ? { column, dir: 'asc' } : sort.dir === 'asc' ? { column, dir: 'desc' } : null;
    setSort(next);
    if (!next) return setSorted(null);
    setNotice(total > 5000 ? `Reading ${formatCount(total)} rows to sort them…` : null);
    readHeld().then(
      (data) => {
        setSorted({ by: next, source: new ArraySource(sortRows(data, next, schema)) });
        setNotice(null);
      },
      (e) => {
        setSort(null);
        setSortError(e);
      },
    );
  };

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
  const source = sort && sorted && sorted.by === sort ? sorted.source : paged;

  const [exporting, setExporting] = useState<{ rows: number; total: number; ctl: AbortController } | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  const startExport = async () => {
    const ctl = new AbortController();
    setExportError(null);
    setExporting({ rows: 0, total: q.row_count ?? 0, ctl });
    try {
      const chunks = await exportCsv(fetchRows(q.id), {
        pageSize: 1000,
        signal: ctl.signal,
        onProgress: (p) => setExporting((e) => (e ? { ...e, rows: p.rows, total: p.total } : e)),
      });
      download(chunks, `query-${q.id.slice(0, 8)}.csv`);
    } catch (e) {
      if ((e as Error)?.name !== 'AbortError') setExportError(e);
    } finally {
      setExporting(null);
    }
  };

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
          {hasGrid ? `${formatCount(pager.total ?? q.row_count)} ${(pager.total ?? q.row_count) === 1 ? 'row' : 'rows'}` : `${q.statement_type ?? 'statement'} completed`}
          {' · '}
          {formatDuration(q.duration_ms)}
          {sort ? ` · sorted by ${sort.column} ${sort.dir === 'asc' ? 'ascending' : 'descending'}` : ''}
        </span>
        {notice ? (
          <span className="hint" role="status">
            {notice}
          </span>
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
        {hasGrid ? (
          exporting ? (
            <span className="row">
              <span role="status">
                Exporting {formatCount(exporting.rows)} / {formatCount(exporting.total)}
              </span>
              <button type="button" className="secondary" onClick={() => exporting.ctl.abort()}>
                Stop export
              </button>
            </span>
          ) : (
            <button type="button" className="secondary" onClick={() => void startExport()}>
              Export CSV
            </button>
          )
        ) : null}
      </div>
      {exportError ? <ErrorNotice error={exportError} what="CSV export" /> : null}
      {sortError ? <ErrorNotice error={sortError} what="Sort" /> : null}
      {summaryError ? <ErrorNotice error={summaryError} what="Column summaries" /> : null}
      {tab === 'rows' ? (
        hasGrid ? (
          pager.error ? (
            <RowsError error={pager.error} />
          ) : (
            <ResultGrid source={source} columns={schema} sort={sort} onSort={onSort} onNotice={setNotice} summaries={Array.isArray(summaries) ? summaries : null} />
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

function ProfilePane(props: { queryId: string }) {
  const profile = useAsync((signal) => api.get<QueryProfile>(`/api/queries/${enc(props.queryId)}/profile`, { signal }), [props.queryId]);
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
