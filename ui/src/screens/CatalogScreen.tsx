// Catalog browser: catalogs (default marked) → schemas → tables → a table's facts and lineage first, then its
// columns with their statistics, layout (partitioning, sort order, properties), maintenance health, the current
// snapshot's summary, every snapshot and sample rows, with "Query this table" opening a worksheet. A search box
// (CatalogSearch.tsx) finds catalogs, schemas and tables by name.
import { ApiError, call, enc } from '../api/client.ts';
import { CatalogSearch } from './CatalogSearch.tsx';
import { ColumnsWithStats, SnapshotSummary, TableLayout, summaryEntries } from './TableFacts.tsx';
import './catalog.css';
import { LineagePanel } from './LineagePanel.tsx';
import { TableHealthPanel } from './TableHealthPanel.tsx';
import type { TableOut } from '../api/types.ts';
import type { ListCatalogTableSnapshotsResponse } from '../api/generated.ts';
import { navigate } from '../app/router.ts';
import { useAsync } from '../app/useAsync.ts';
import { DataTable } from '../components/DataTable.tsx';
import { ErrorNotice, Loading, Notice } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatBytes, formatCount, formatTime } from '../components/format.ts';
import { openInWorksheet } from '../worksheet/worksheetStore.ts';
import { EmptyState } from '../components/EmptyState.tsx';
import { Icon } from '../components/Icon.tsx';

const quoteIdent = (s: string) => (/^[a-z_][a-z0-9_]*$/.test(s) ? s : `"${s.replace(/"/g, '""')}"`);

export function CatalogScreen(props: { ws: string; trail: string[] }) {
  const [catalog, schema, table] = props.trail;
  const base = `/w/${enc(props.ws)}/catalog`;
  return (
    <section className="catalog">
      <h1>Catalog</h1>
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link href={base}>Catalogs</Link>
        {catalog ? (
          <>
            {' / '}
            <Link href={`${base}/${enc(catalog)}`}>{catalog}</Link>
          </>
        ) : null}
        {schema ? (
          <>
            {' / '}
            <Link href={`${base}/${enc(catalog)}/${enc(schema)}`}>{schema}</Link>
          </>
        ) : null}
        {table ? <> / {table}</> : null}
      </nav>
      {!catalog ? <CatalogSearch ws={props.ws} base={base} /> : null}
      {!catalog ? <CatalogList ws={props.ws} base={base} /> : null}
      {catalog && !schema ? <SchemaList ws={props.ws} catalog={catalog} base={base} /> : null}
      {schema && !table ? <TableList ws={props.ws} catalog={catalog} schema={schema} base={base} /> : null}
      {table ? <TableDetail ws={props.ws} catalog={catalog} schema={schema} table={table} /> : null}
    </section>
  );
}

function CatalogList(props: { ws: string; base: string }) {
  const list = useAsync((signal) => call('GET /api/workspaces/{workspace}/catalogs', { path: { workspace: props.ws }, signal }), [props.ws]);
  if (list.error) return <ErrorNotice error={list.error} what="Catalogs" />;
  if (!list.data) return <Loading />;
  if (!list.data.length) return <EmptyState>No catalog is attached to this workspace.</EmptyState>;
  return (
    <ul className="item-list" aria-label="Catalogs">
      {list.data.map((c) => (
        <li key={c.id}>
          <Link href={`${props.base}/${enc(c.slug)}`}>{c.slug}</Link>
          {c.is_default ? <span className="badge">default</span> : null}
          {c.access_mode ? <span className="hint"> access {c.access_mode}</span> : null}
          {c.storage_kind ? <span className="hint"> · {c.storage_kind}</span> : null}
        </li>
      ))}
    </ul>
  );
}

function SchemaList(props: { ws: string; catalog: string; base: string }) {
  const list = useAsync(
    (signal) => call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas', { path: { workspace: props.ws, catalog: props.catalog }, signal }),
    [props.ws, props.catalog],
  );
  if (list.error) return <ErrorNotice error={list.error} what="Schemas" />;
  if (!list.data) return <Loading />;
  if (!list.data.length) return <p>This catalog has no schemas yet.</p>;
  return (
    <ul className="item-list" aria-label="Schemas">
      {list.data.map((s) => (
        <li key={s.name}>
          <Link href={`${props.base}/${enc(props.catalog)}/${enc(s.name)}`}>{s.name}</Link>
        </li>
      ))}
    </ul>
  );
}

function TableList(props: { ws: string; catalog: string; schema: string; base: string }) {
  const list = useAsync(
    (signal) =>
      call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables', {
        path: { workspace: props.ws, catalog: props.catalog, schema: props.schema },
        signal,
      }),
    [props.ws, props.catalog, props.schema],
  );
  if (list.error) return <ErrorNotice error={list.error} what="Tables" />;
  if (!list.data) return <Loading />;
  if (!list.data.length) return <p>This schema has no tables yet.</p>;
  return (
    <ul className="item-list" aria-label="Tables">
      {list.data.map((t) => (
        <li key={t.name}>
          <Link href={`${props.base}/${enc(props.catalog)}/${enc(props.schema)}/${enc(t.name)}`}>{t.name}</Link>
          {t.table_type ? <span className="hint"> {t.table_type}</span> : null}
        </li>
      ))}
    </ul>
  );
}

function TableDetail(props: { ws: string; catalog: string; schema: string; table: string }) {
  const path = { workspace: props.ws, catalog: props.catalog, schema: props.schema, table: props.table };
  const detail = useAsync(
    (signal) => call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}', { path, signal }),
    [props.ws, props.catalog, props.schema, props.table],
  );
  // Everything else about the table (snapshots, sample rows read by an agent, health, lineage) is asked for only
  // once the table is known to exist: a missing table is one "not found", not a notice per panel and a failed query.
  if (detail.error) {
    const missing = detail.error instanceof ApiError && detail.error.status === 404;
    return missing ? (
      <Notice code="not_found" message={`The table ${props.catalog}.${props.schema}.${props.table} was not found: it does not exist, or this workspace cannot see it.`} />
    ) : (
      <ErrorNotice error={detail.error} what="Table" />
    );
  }
  if (!detail.data) return <Loading />;
  return <TableFound {...props} path={path} detail={detail.data} />;
}

type TablePath = { workspace: string; catalog: string; schema: string; table: string };

function TableFound(props: { ws: string; catalog: string; schema: string; table: string; path: TablePath; detail: TableOut }) {
  const { path, detail } = props;
  const deps = [props.ws, props.catalog, props.schema, props.table];
  const snapshots = useAsync((signal) => call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/snapshots', { path, signal }), deps);
  // Sample rows are read by an agent like any query: the first healthy agent the caller may use.
  const sample = useAsync(async (signal) => {
    const agents = await call('GET /api/agents', { signal });
    const agent = agents.find((a) => a.status === 'healthy');
    if (!agent) throw new Error('no healthy agent is available to read sample rows');
    return call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/sample', { path, query: { agent_id: agent.id, limit: 20 }, signal });
  }, deps);

  const current = snapshots.data?.find((s) => s.is_current);

  const queryThis = () => {
    const name = [props.catalog, props.schema, props.table].map(quoteIdent).join('.');
    openInWorksheet(props.ws, `SELECT *\nFROM ${name}\nLIMIT 100;`, props.table, props.catalog);
    navigate(`/w/${enc(props.ws)}/worksheets`);
  };

  return (
    <div className="stack">
      <div className="row">
        <h2 className="grow">{props.table}</h2>
        <button type="button" onClick={queryThis}>
          <Icon name="play" />
          Query this table
        </button>
      </div>
      <dl className="facts">
        <dt>Rows</dt>
        <dd>{formatCount(detail.row_count)}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(detail.size_bytes)}</dd>
        <dt>Current snapshot</dt>
        <dd className="mono">{detail.current_snapshot_id ?? '—'}</dd>
        <dt>Location</dt>
        <dd className="mono">{detail.location ?? '—'}</dd>
        {detail.last_write ? (
          <>
            <dt>Last write</dt>
            <dd>{describeLastWrite(detail.last_write)}</dd>
          </>
        ) : null}
      </dl>
      {/* Where the table comes from and what reads it: near the top, before the long lists of columns and snapshots. */}
      <LineagePanel ws={props.ws} catalog={props.catalog} schema={props.schema} table={props.table} />
      <ColumnsWithStats path={path} detail={detail} />
      <TableLayout detail={detail} />
      {/* A summary of the snapshots and files below: ahead of their long lists. */}
      <TableHealthPanel ws={props.ws} catalog={props.catalog} schema={props.schema} table={props.table} />
      <h3>Current snapshot</h3>
      {current ? <SnapshotSummary snapshot={current} label="Current snapshot summary" /> : snapshots.data ? <p className="hint">None: the table has never been written.</p> : null}
      <h3>Snapshots</h3>
      {snapshots.error ? <ErrorNotice error={snapshots.error} what="Snapshots" /> : null}
      {snapshots.data ? (
        snapshots.data.length ? (
          <SnapshotTable snapshots={snapshots.data} />
        ) : (
          <EmptyState>No snapshots: the table has never been written.</EmptyState>
        )
      ) : null}
      <h3>Sample rows</h3>
      {sample.error ? <ErrorNotice error={sample.error} what="Sample rows" /> : null}
      {sample.data ? <SampleRows data={sample.data} /> : null}
    </div>
  );
}

/** The sample route's answer (GetCatalogTableSampleResponse), read leniently: bare rows, or rows under `items`. */
type SampleData =
  | Array<Record<string, unknown>>
  | { rows?: Array<Record<string, unknown>>; items?: Array<Record<string, unknown>>; columns?: string[]; column_schema?: Array<{ name: string; type: string }> | null };

function SampleRows(props: { data: SampleData }) {
  const shaped = Array.isArray(props.data) ? undefined : props.data;
  const rows: Array<Record<string, unknown>> = Array.isArray(props.data) ? props.data : (shaped?.rows ?? shaped?.items ?? []);
  const columns: string[] = shaped?.columns ?? (rows[0] ? Object.keys(rows[0]) : []);
  const schema: Array<{ name: string; type: string }> = shaped?.column_schema ?? [];
  if (!rows.length) return <p>No rows.</p>;
  return <DataTable label="Sample rows" columns={columns} rows={rows} types={Object.fromEntries(schema.map((c) => [c.name, c.type]))} />;
}

function describeLastWrite(w: unknown): string {
  if (typeof w === 'string') return formatTime(w);
  const o = w as { at?: string; operation?: string | null } | null;
  if (!o?.at) return '—';
  return o.operation ? `${formatTime(o.at)} (${o.operation})` : formatTime(o.at);
}

type Snapshot = ListCatalogTableSnapshotsResponse[number];

// Iceberg's snapshot summary keys shown as columns; the rest of a summary opens under its row.
const SUMMARY_COLUMNS: Array<[key: string, label: string, bytes?: boolean]> = [
  ['added-records', 'Rows added'],
  ['deleted-records', 'Rows deleted'],
  ['total-records', 'Total rows'],
  ['added-data-files', 'Files added'],
  ['total-data-files', 'Data files'],
  ['total-files-size', 'Total size', true],
];

function SnapshotTable(props: { snapshots: Snapshot[] }) {
  const shown = new Set(SUMMARY_COLUMNS.map(([k]) => k));
  const cell = (summary: Record<string, string>, key: string, bytes?: boolean) => {
    const v = summary[key];
    if (v === undefined) return '—';
    const n = Number(v);
    return Number.isFinite(n) ? (bytes ? formatBytes(n) : formatCount(n)) : v;
  };
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label="Snapshots (scrolls)">
      <table className="table" aria-label="Snapshots">
        <thead>
          <tr>
            <th>Snapshot</th>
            <th>Committed</th>
            <th>Operation</th>
            {SUMMARY_COLUMNS.map(([k, label]) => (
              <th key={k} className="num">
                {label}
              </th>
            ))}
            <th>Other summary</th>
          </tr>
        </thead>
        <tbody>
          {props.snapshots.map((s) => {
            const rest = Object.entries(s.summary ?? {}).filter(([k]) => !shown.has(k) && k !== 'operation');
            return (
              <tr key={s.snapshot_id}>
                <td className="mono">
                  {s.snapshot_id}
                  {s.is_current ? <span className="badge">current</span> : null}
                </td>
                <td>{formatTime(s.committed_at)}</td>
                <td>{s.operation ?? '—'}</td>
                {SUMMARY_COLUMNS.map(([k, , bytes]) => (
                  <td key={k} className="num">
                    {cell(s.summary ?? {}, k, bytes)}
                  </td>
                ))}
                <td>
                  {rest.length ? (
                    <details>
                      <summary>{rest.length} more</summary>
                      <dl className="facts">
                        {summaryEntries(Object.fromEntries(rest)).map((e) => (
                          <div key={e.key} className="contents">
                            <dt title={e.key}>{e.label}</dt>
                            <dd>{e.value}</dd>
                          </div>
                        ))}
                      </dl>
                    </details>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
