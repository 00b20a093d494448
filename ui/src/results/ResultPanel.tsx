// What a finished query shows: row count and duration, the result grid (pages fetched by row offset as they come
// into view; sorted and filtered in the browser when the whole result fits), CSV export of the whole result, and
// the profile.
// A DDL or DML statement has no grid, just its outcome. An EXPLAIN's result (DuckDB's plan as text) opens on its
// Plan view, the text monospaced. A result the agent no longer keeps (retention) says so.
import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiError, call } from '../api/client.ts';
import { asProfile, asRowsPage, type ColumnSchema, type QueryOut } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { formatCount, formatDuration } from '../components/format.ts';
import { exportCsv } from './csv.ts';
import { ProfileTree } from './ProfileTree.tsx';
import { ResultGrid } from './ResultGrid.tsx';
import { RowPager } from './rowPager.ts';
import { QuickChart } from './QuickChart.tsx';
import { ArraySource, filterRows, loadAll, pagerSource, sortRows, SORT_LIMIT, type Row, type RowSource, type SortBy } from './rowSource.ts';
import { summarize, type ColumnSummary } from './summary.ts';
import { Icon } from '../components/Icon.tsx';

/** Pages one after another by cursor (CSV export reads the whole result this way). */
export const fetchRows = (queryId: string) => (cursor: string | null, limit: number) =>
  call('GET /api/queries/{query_id}/rows', { path: { query_id: queryId }, query: { limit, cursor: cursor ?? undefined } }).then(asRowsPage);

/** The page that starts at a row (the grid jumps anywhere in a result this way). */
export const fetchRowsAt = (queryId: string) => (offset: number, limit: number) =>
  call('GET /api/queries/{query_id}/rows', { path: { query_id: queryId }, query: { limit, offset } }).then(asRowsPage);

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
  const [sorted, setSorted] = useState<{ by: SortBy; rows: Row[] } | null>(null);
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
        setSorted({ by: next, rows: sortRows(data, next, schema) });
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

  // Filtering: like sorting, on the rows held (the whole result up to SORT_LIMIT rows), over the text each cell
  // shows; a larger result says to filter with WHERE, since a filter of its first rows would read as the whole.
  const [filter, setFilter] = useState('');
  const needle = filter.trim().toLowerCase();
  const canFilter = total <= SORT_LIMIT;
  const [heldData, setHeldData] = useState<Row[] | null>(null);
  const [filterError, setFilterError] = useState<unknown>(null);
  useEffect(() => {
    if (!needle || !canFilter || heldData) return;
    let live = true;
    setFilterError(null);
    readHeld().then(
      (data) => live && setHeldData(data),
      (e: unknown) => live && setFilterError(e),
    );
    return () => {
      live = false;
    };
    // readHeld reads once per result; the effect needs only whether a filter is wanted.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [needle !== '', canFilter, heldData]);
  const sortedRows = sort && sorted && sorted.by === sort ? sorted.rows : null;
  const filtering = needle !== '' && canFilter;
  const filtered = useMemo(
    () => (filtering && (sortedRows ?? heldData) ? filterRows(sortedRows ?? heldData ?? [], needle, schema) : null),
    // schema follows the query
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [filtering, needle, sortedRows, heldData],
  );
  const source: RowSource = useMemo(
    () => (filtered ? new ArraySource(filtered) : sortedRows ? new ArraySource(sortedRows) : filtering ? new ArraySource([]) : paged),
    [filtered, sortedRows, filtering, paged],
  );
  const filterWords = !needle
    ? null
    : !canFilter
      ? `Filtering here needs the whole result, up to ${formatCount(SORT_LIMIT)} rows: filter this one with WHERE in the query.`
      : filtered
        ? `${formatCount(filtered.length)} of ${formatCount(total)} rows match “${filter.trim()}”`
        : `Reading ${formatCount(total)} rows to filter them…`;

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
        {hasGrid && tab === 'rows' ? (
          <input
            type="search"
            className="result-filter"
            aria-label="Filter rows"
            placeholder="Filter rows"
            title="Shows the rows with this text in any column (in the browser, for results up to 50,000 rows)"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') setFilter('');
            }}
          />
        ) : null}
        {tab === 'rows' && filterWords ? (
          <span className="hint" role="status">
            {filterWords}
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
              <Icon name="download" />
              Export CSV
            </button>
          )
        ) : null}
      </div>
      {exportError ? <ErrorNotice error={exportError} what="CSV export" /> : null}
      {sortError ? <ErrorNotice error={sortError} what="Sort" /> : null}
      {summaryError ? <ErrorNotice error={summaryError} what="Column summaries" /> : null}
      {filterError ? <ErrorNotice error={filterError} what="Filter" /> : null}
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
