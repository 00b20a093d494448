// A table's lineage on its catalog page: what feeds it and what it feeds, by direction and depth, each edge with
// its producers, observations and staleness, and the columns a producer mapped (shown for the selected edge).
import { useState } from 'react';
import { api, enc } from '../api/client.ts';
import type { Lineage } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatTime } from '../components/format.ts';

export function LineagePanel(props: { ws: string; catalog: string; schema: string; table: string }) {
  const [direction, setDirection] = useState<'upstream' | 'downstream' | 'both'>('both');
  const [depth, setDepth] = useState(2);
  const [selected, setSelected] = useState<number | null>(null);
  const path = `/api/workspaces/${enc(props.ws)}/catalogs/${enc(props.catalog)}/schemas/${enc(props.schema)}/tables/${enc(props.table)}/lineage`;
  const graph = useAsync((signal) => api.get<Lineage>(path, { signal, query: { direction, depth } }), [path, direction, depth]);
  const self = `${props.catalog}.${props.schema}.${props.table}`.toLowerCase();
  const nodeLink = (key: string) => {
    const n = graph.data?.nodes.find((x) => x.key === key);
    if (!n || n.kind !== 'table' || key === self) return <span className={key === self ? 'strong' : undefined}>{key}</span>;
    return <Link href={`/w/${enc(props.ws)}/catalog/${enc(n.catalog!)}/${enc(n.schema!)}/${enc(n.table!)}`}>{key}</Link>;
  };
  const edge = selected === null ? null : (graph.data?.edges[selected] ?? null);
  return (
    <section aria-label="Lineage">
      <h3>Lineage</h3>
      <div className="row">
        <label className="inline">
          Direction{' '}
          <select aria-label="Direction" value={direction} onChange={(e) => (setDirection(e.target.value as typeof direction), setSelected(null))}>
            <option value="both">upstream and downstream</option>
            <option value="upstream">upstream (what feeds it)</option>
            <option value="downstream">downstream (what it feeds)</option>
          </select>
        </label>
        <label className="inline">
          Depth{' '}
          <select aria-label="Depth" value={depth} onChange={(e) => (setDepth(Number(e.target.value)), setSelected(null))}>
            {[1, 2, 3, 4, 5].map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
      </div>
      {graph.error ? <ErrorNotice error={graph.error} what="Lineage" /> : null}
      {!graph.data && !graph.error ? <Loading /> : null}
      {graph.data && !graph.data.edges.length ? <p className="hint">No lineage recorded for this table yet.</p> : null}
      {graph.data?.edges.length ? (
        <table className="data" aria-label="Lineage edges">
          <thead>
            <tr>
              <th>From</th>
              <th>To</th>
              <th>Producers</th>
              <th>Last seen</th>
              <th>Observations</th>
            </tr>
          </thead>
          <tbody>
            {graph.data.edges.map((e, i) => (
              <tr key={`${e.source}>${e.target}`} aria-selected={selected === i} onClick={() => setSelected(i)} className={e.stale ? 'stale' : undefined}>
                <td>{nodeLink(e.source)}</td>
                <td>{nodeLink(e.target)}</td>
                <td>{e.providers.map((p) => `${p.provider}${p.stale ? ' (stale)' : ''}`).join(', ')}</td>
                <td>{formatTime(e.last_seen_at)}</td>
                <td>{e.observation_count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {graph.data?.truncated ? <p className="hint">The graph stopped at 500 tables.</p> : null}
      {graph.data?.hidden ? <p className="hint">Some lineage into catalogs no longer attached is not shown.</p> : null}
      {edge ? (
        <div aria-label="Edge detail" className="card">
          <strong>
            {edge.source} → {edge.target}
          </strong>
          {edge.columns.length ? (
            <ul>
              {edge.columns.map((c) => (
                <li key={`${c.source_column}>${c.target_column}`}>
                  {c.source_column} → {c.target_column} <span className="hint">({c.providers.join(', ')})</span>
                </li>
              ))}
            </ul>
          ) : (
            <p className="hint">No column detail: {edge.providers.map((p) => `${p.provider} ${p.column_lineage}`).join(', ')}.</p>
          )}
        </div>
      ) : null}
    </section>
  );
}
