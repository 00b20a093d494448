// A table's health on its catalog page: the last scan's grade and score, each dimension's score as a bar, the
// figures behind them, and the table's open recommendations. Before the first scan the api answers 404: "not
// scanned yet", not an error.
import { ApiError, call } from '../api/client.ts';
import { useAsync } from '../app/useAsync.ts';
import { usePaged } from '../app/usePaged.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { formatBytes, formatCount, formatTime } from '../components/format.ts';
import { GradeBadge, RecommendationList, num } from './Recommendations.tsx';

/** The scanner's dimensions in the order docs/maintenance.md weighs them; orphans and growth only once measured. */
const DIMENSIONS: Array<[string, string]> = [
  ['file_sizes', 'File sizes'],
  ['snapshots', 'Snapshots'],
  ['manifests', 'Manifests'],
  ['orphans', 'Orphan files'],
  ['growth', 'Growth'],
];

const METRICS: Array<[string, string, (n: number) => string]> = [
  ['data_files', 'Data files', formatCount],
  ['small_files', 'Small files', formatCount],
  ['data_bytes', 'Data size', formatBytes],
  ['records', 'Records', formatCount],
  ['snapshots', 'Snapshots', formatCount],
  ['manifests', 'Manifests (current snapshot)', formatCount],
  ['orphan_files', 'Orphan files (last deep scan)', formatCount],
  ['orphan_bytes', 'Orphan size', formatBytes],
  ['orphan_eligible_files', 'Orphans old enough to remove', formatCount],
];

/** Bar colour by the scanner's levels: 75 is a warning's score, 40 a critical one's. */
const level = (score: number) => (score >= 75 ? 'ok' : score >= 40 ? 'warn' : 'bad');

export function TableHealthPanel(props: { ws: string; catalog: string; schema: string; table: string }) {
  const health = useAsync(
    (signal) =>
      call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/health', {
        path: { workspace: props.ws, catalog: props.catalog, schema: props.schema, table: props.table },
        signal,
      }),
    [props.ws, props.catalog, props.schema, props.table],
  );
  const notScanned = health.error instanceof ApiError && health.error.status === 404 && !health.error.notBuilt;
  const h = health.data;
  const known = new Set(DIMENSIONS.map(([k]) => k));
  const dims = h ? [...DIMENSIONS, ...Object.keys(h.dimensions).filter((k) => !known.has(k)).map((k): [string, string] => [k, k.replace(/_/g, ' ')])].filter(([k]) => k in h.dimensions) : [];
  return (
    <section aria-label="Health">
      <h3>Health</h3>
      {notScanned ? (
        <p className="hint">Not scanned yet: the maintenance scanner has not read this table’s metadata.</p>
      ) : health.error ? (
        <ErrorNotice error={health.error} what="Health" />
      ) : !h ? (
        <Loading />
      ) : (
        <div className="stack">
          <div className="row">
            <GradeBadge grade={h.grade} />
            <span className="health-score">
              {Math.round(num(h.score))}
              <span className="hint"> / 100</span>
            </span>
            <span className="hint">
              scanned {formatTime(h.scanned_at)}
              {h.deep_scanned_at ? ` · deep scan ${formatTime(h.deep_scanned_at)}` : ''}
            </span>
          </div>
          <div className="health-dims" aria-label="Dimension scores">
            {dims.map(([k, label]) => {
              const v = Math.round(num(h.dimensions[k]));
              return (
                <div key={k} className="health-dim">
                  <span>{label}</span>
                  <span className={`health-bar ${level(v)}`} role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={v}>
                    <span style={{ width: `${Math.max(0, Math.min(100, v))}%` }} />
                  </span>
                  <span className="health-num">{v}</span>
                </div>
              );
            })}
          </div>
          <dl className="figures" aria-label="Health metrics">
            {METRICS.filter(([k]) => k in h.metrics).map(([k, label, fmt]) => [<dt key={`${k}-t`}>{label}</dt>, <dd key={`${k}-d`}>{fmt(num(h.metrics[k]))}</dd>])}
          </dl>
          <h4>Open recommendations</h4>
          <TableRecommendations {...props} onChanged={health.reload} />
        </div>
      )}
    </section>
  );
}

/** Mounted once the table has a health: there is nothing to recommend before a scan. */
function TableRecommendations(props: { ws: string; catalog: string; schema: string; table: string; onChanged: () => void }) {
  const recs = usePaged('GET /api/maintenance/recommendations', 50, {
    workspace: props.ws,
    catalog: props.catalog,
    schema: props.schema,
    table: props.table,
    status: ['open'],
  });
  return (
    <>
      {recs.error ? <ErrorNotice error={recs.error} what="Recommendations" /> : null}
      <RecommendationList
        ws={props.ws}
        items={recs.items}
        onChanged={() => {
          recs.reload();
          props.onChanged();
        }}
        empty={recs.loading || recs.error ? '' : 'No open recommendation: nothing to do for this table.'}
      />
      {recs.hasMore && !recs.loading ? (
        <button type="button" className="secondary" onClick={recs.more}>
          Load more
        </button>
      ) : null}
    </>
  );
}
