// What a table page says about a table beside its data: its columns with the statistics its Iceberg manifests keep,
// how it is laid out (partition spec, sort order, properties), and a snapshot's summary as a readable list.
import { call } from '../api/client.ts';
import type { GetCatalogTableColumnStatsResponse, ListCatalogTableSnapshotsResponse } from '../api/generated.ts';
import type { TableOut } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { formatBytes, formatCount } from '../components/format.ts';

type TablePath = { workspace: string; catalog: string; schema: string; table: string };
type Stats = GetCatalogTableColumnStatsResponse;
type Snapshot = ListCatalogTableSnapshotsResponse[number];

const dash = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? '—' : v);

/** The columns, and per column what the current snapshot's manifests record (asked for once the table is shown). */
export function ColumnsWithStats(props: { path: TablePath; detail: TableOut }) {
  const { path, detail } = props;
  const stats = useAsync(
    (signal) => call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/column-stats', { path, signal }),
    [path.workspace, path.catalog, path.schema, path.table, detail.current_snapshot_id],
  );
  const byName = new Map((stats.data?.columns ?? []).map((c) => [c.name, c]));
  const withStats = stats.data !== undefined && stats.data.files_read > 0;
  // Column sizes are optional in a manifest (Eider's own writes leave them out): a column of dashes says nothing.
  const withSizes = withStats && (stats.data?.columns ?? []).some((c) => c.size_bytes !== null);
  return (
    <section className="stack" aria-labelledby="table-columns">
      <h3 id="table-columns">Columns</h3>
      <p className="hint">{statsNote(stats.data, stats.loading)}</p>
      {stats.error ? <ErrorNotice error={stats.error} what="Column statistics" /> : null}
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Columns (scrolls)">
        <table className="table" aria-label="Columns">
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Nullable</th>
              {withStats ? (
                <>
                  <th className="num">Values</th>
                  <th className="num">Nulls</th>
                  <th>Lower bound</th>
                  <th>Upper bound</th>
                  {withSizes ? <th className="num">Size</th> : null}
                </>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {detail.columns.map((c) => {
              const s = byName.get(c.name);
              return (
                <tr key={c.name}>
                  <td className="mono">{c.name}</td>
                  <td className="mono">{c.type}</td>
                  <td>{c.nullable ? 'yes' : 'no'}</td>
                  {withStats ? (
                    <>
                      <td className="num">{formatCount(s?.value_count)}</td>
                      <td className="num">{formatCount(s?.null_count)}</td>
                      <td className="mono">{dash(s?.lower_bound)}</td>
                      <td className="mono">{dash(s?.upper_bound)}</td>
                      {withSizes ? <td className="num">{formatBytes(s?.size_bytes)}</td> : null}
                    </>
                  ) : null}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function statsNote(s: Stats | undefined, loading: boolean): string {
  if (!s) return loading ? 'Reading column statistics from the table’s manifests…' : '';
  if (s.snapshot_id === null) return 'No statistics: the table has never been written.';
  if (s.files_read === 0) return 'No statistics: the current snapshot has no data files.';
  const files = (n: number) => `${formatCount(n)} data ${n === 1 ? 'file' : 'files'}`;
  const coverage = s.files_read < s.data_files ? `${formatCount(s.files_read)} of its ${files(s.data_files)} (the first manifests only)` : s.data_files === 1 ? 'its one data file' : `all its ${files(s.data_files)}`;
  const deletes = s.delete_files ? `; counts are before ${formatCount(s.delete_files)} delete files apply` : '';
  return `Statistics from the Iceberg manifests of the current snapshot, over ${coverage}${deletes}. Bounds may be truncated by the writer.`;
}

/** Partition spec, sort order and table properties. */
export function TableLayout(props: { detail: TableOut }) {
  const { partition_spec: spec, sort_order: order, properties, format_version } = props.detail;
  const props_ = Object.entries(properties).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section className="stack table-layout" aria-labelledby="table-layout">
      <h3 id="table-layout">Layout</h3>
      <dl className="facts">
        <dt>Partitioned by</dt>
        <dd>
          {spec.length ? (
            <ul className="inline-list" aria-label="Partition spec">
              {spec.map((f) => (
                <li key={f.name} className="mono">
                  {transformText(f.transform, f.source_column)}
                </li>
              ))}
            </ul>
          ) : (
            'not partitioned'
          )}
        </dd>
        <dt>Sorted by</dt>
        <dd>
          {order.length ? (
            <ul className="inline-list" aria-label="Sort order">
              {order.map((f, i) => (
                <li key={i} className="mono">
                  {transformText(f.transform, f.source_column)} {f.direction} {f.null_order.replace('-', ' ')}
                </li>
              ))}
            </ul>
          ) : (
            'unsorted'
          )}
        </dd>
        <dt>Format version</dt>
        <dd>{format_version}</dd>
      </dl>
      <h4 id="table-properties">Properties</h4>
      {props_.length ? (
        <dl className="facts" aria-labelledby="table-properties">
          {props_.map(([k, v]) => (
            <div key={k} className="contents">
              <dt className="mono">{k}</dt>
              <dd className="mono">{v}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p className="hint">No properties are set.</p>
      )}
    </section>
  );
}

/** `day(ts)`, `bucket[16](id)`, or just the column for identity. */
const transformText = (transform: string, column: string | null) => (transform === 'identity' ? dash(column) : `${transform}(${dash(column)})`);

// Iceberg's snapshot summary keys in people's words, in the order they read best; any other key follows as written.
const SUMMARY_LABELS: Array<[key: string, label: string, kind?: 'bytes' | 'count']> = [
  ['operation', 'Operation'],
  ['added-records', 'Rows added', 'count'],
  ['deleted-records', 'Rows deleted', 'count'],
  ['total-records', 'Total rows', 'count'],
  ['added-data-files', 'Data files added', 'count'],
  ['deleted-data-files', 'Data files removed', 'count'],
  ['total-data-files', 'Data files', 'count'],
  ['added-delete-files', 'Delete files added', 'count'],
  ['total-delete-files', 'Delete files', 'count'],
  ['added-position-deletes', 'Position deletes added', 'count'],
  ['total-position-deletes', 'Position deletes', 'count'],
  ['added-equality-deletes', 'Equality deletes added', 'count'],
  ['total-equality-deletes', 'Equality deletes', 'count'],
  ['added-files-size', 'Bytes added', 'bytes'],
  ['removed-files-size', 'Bytes removed', 'bytes'],
  ['total-files-size', 'Total size', 'bytes'],
  ['changed-partition-count', 'Partitions changed', 'count'],
];

export function summaryEntries(summary: Record<string, string>): Array<{ key: string; label: string; value: string }> {
  const known = new Set(SUMMARY_LABELS.map(([k]) => k));
  const value = (v: string, kind?: 'bytes' | 'count') => {
    const n = Number(v);
    if (!kind || v.trim() === '' || !Number.isFinite(n)) return v;
    return kind === 'bytes' ? formatBytes(n) : formatCount(n);
  };
  return [
    ...SUMMARY_LABELS.filter(([k]) => summary[k] !== undefined).map(([key, label, kind]) => ({ key, label, value: value(summary[key], kind) })),
    ...Object.keys(summary)
      .filter((k) => !known.has(k))
      .sort()
      .map((key) => ({ key, label: key, value: summary[key] })),
  ];
}

/** A snapshot's summary as a key/value list, known keys named and their numbers formatted. */
export function SnapshotSummary(props: { snapshot: Snapshot; label: string }) {
  const entries = summaryEntries(props.snapshot.summary ?? {});
  if (!entries.length) return <p className="hint">This snapshot has no summary.</p>;
  return (
    <dl className="facts snapshot-summary" aria-label={props.label}>
      {entries.map((e) => (
        <div key={e.key} className="contents">
          <dt title={e.key}>{e.label}</dt>
          <dd>{e.value}</dd>
        </div>
      ))}
    </dl>
  );
}
