// A table's lineage on its catalog page, drawn: boxes left to right by hops from the table (what feeds it on the
// left, what it feeds on the right), an edge per producer-observed flow (dashed when stale). A click on a box shows
// that table's column detail (the api gives column pairs only around the nodes asked about); a click on an edge
// shows its producers and columns. The edges are also listed as a table for keyboards and screen readers.
import { useMemo, useState, type KeyboardEvent, type MouseEvent, type ReactNode } from 'react';
import { call, enc } from '../api/client.ts';
import type { Lineage } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatTime } from '../components/format.ts';
import { BOX, layoutLineage } from './lineageLayout.ts';
import { Time } from '../components/Time.tsx';
import { EmptyState } from '../components/EmptyState.tsx';

type LineageNode = Lineage['nodes'][number];
type LineageEdge = Lineage['edges'][number];
type Selection = { kind: 'node'; key: string } | { kind: 'edge'; source: string; target: string } | null;

const edgeId = (e: { source: string; target: string }) => `${e.source}>${e.target}`;
/** Enter and Space act on a focused box or edge, as a click does. */
const onActivate = (fn: () => void) => (e: KeyboardEvent) => {
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    fn();
  }
};

function labels(n: LineageNode | undefined, key: string): [string, string] {
  if (!n || n.kind === 'redacted') return ['hidden table', 'no access'];
  if (n.kind === 'external') return [key.replace(/^external:/, ''), 'external'];
  return [n.table ?? key, `${n.catalog}.${n.schema}`];
}

// A click selects without focusing: the browser's focus ring around an SVG group is its whole bounding box. The
// keyboard still focuses (and shows the ring).
const noMouseFocus = (e: MouseEvent) => e.preventDefault();

const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

export function LineagePanel(props: { ws: string; catalog: string; schema: string; table: string }) {
  const [direction, setDirection] = useState<'upstream' | 'downstream' | 'both'>('both');
  const [depth, setDepth] = useState(2);
  const [selected, setSelected] = useState<Selection>(null);
  // Column detail comes for edges touching the nodes asked about: the clicked box, or the clicked edge's source.
  const columnsFor = selected?.kind === 'node' ? selected.key : selected?.kind === 'edge' ? selected.source : null;
  const graph = useAsync(
    (signal) =>
      call('GET /api/workspaces/{workspace}/catalogs/{catalog}/schemas/{schema}/tables/{table}/lineage', {
        path: { workspace: props.ws, catalog: props.catalog, schema: props.schema, table: props.table },
        signal,
        query: { direction, depth, columns_for: columnsFor ? [columnsFor] : undefined },
      }),
    [props.ws, props.catalog, props.schema, props.table, direction, depth, columnsFor],
  );
  const self = `${props.catalog}.${props.schema}.${props.table}`.toLowerCase();
  const data = graph.data;
  const layout = useMemo(() => (data ? layoutLineage(data.nodes, data.edges, self) : null), [data, self]);
  const nodeOf = (key: string) => data?.nodes.find((x) => x.key === key);
  const nodeLink = (key: string) => {
    const n = nodeOf(key);
    if (!n || n.kind !== 'table' || key === self) return <span className={key === self ? 'strong' : undefined}>{key}</span>;
    return <Link href={`/w/${enc(props.ws)}/catalog/${enc(n.catalog!)}/${enc(n.schema!)}/${enc(n.table!)}`}>{key}</Link>;
  };
  const reset = () => setSelected(null);
  const edge = selected?.kind === 'edge' ? (data?.edges.find((e) => e.source === selected.source && e.target === selected.target) ?? null) : null;
  const node = selected?.kind === 'node' ? selected.key : null;

  return (
    <section aria-label="Lineage">
      <h3>Lineage</h3>
      <div className="row">
        <label className="inline">
          Direction{' '}
          <select aria-label="Direction" value={direction} onChange={(e) => (setDirection(e.target.value as typeof direction), reset())}>
            <option value="both">upstream and downstream</option>
            <option value="upstream">upstream (what feeds it)</option>
            <option value="downstream">downstream (what it feeds)</option>
          </select>
        </label>
        <label className="inline">
          Depth{' '}
          <select aria-label="Depth" value={depth} onChange={(e) => (setDepth(Number(e.target.value)), reset())}>
            {[1, 2, 3, 4, 5].map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
      </div>
      {graph.error ? <ErrorNotice error={graph.error} what="Lineage" /> : null}
      {!data && !graph.error ? <Loading /> : null}
      {data && !data.edges.length ? <EmptyState>No lineage recorded for this table yet.</EmptyState> : null}
      {data?.edges.length && layout ? (
        <div style={{ overflowX: 'auto' }}>
          <svg aria-label="Lineage graph" role="group" width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`}>
            <defs>
              <marker id="lineage-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" markerUnits="userSpaceOnUse" orient="auto">
                <path d="M0,0 L8,4 L0,8 z" style={{ fill: 'var(--muted)' }} />
              </marker>
            </defs>
            {layout.edges.map((p) => {
              const e = data.edges.find((x) => x.source === p.source && x.target === p.target)!;
              const on = selected?.kind === 'edge' && edgeId(selected) === edgeId(e);
              const pick = () => setSelected({ kind: 'edge', source: e.source, target: e.target });
              return (
                <g
                  key={edgeId(p)}
                  data-edge={edgeId(p)}
                  role="button"
                  tabIndex={0}
                  aria-label={`${e.source} feeds ${e.target}${e.stale ? ' (stale)' : ''}`}
                  aria-pressed={on}
                  onClick={pick}
                  onKeyDown={onActivate(pick)}
                  onMouseDown={noMouseFocus}
                  style={{ cursor: 'pointer' }}
                >
                  <title>{`${e.source} → ${e.target}: ${e.providers.map((x) => x.provider).join(', ')}`}</title>
                  {/* A wide transparent stroke under the line: a thin curve is hard to hit. */}
                  <path d={p.d} fill="none" style={{ stroke: 'transparent' }} strokeWidth={12} />
                  <path
                    d={p.d}
                    fill="none"
                    style={{ stroke: on ? 'var(--accent)' : 'var(--muted)' }}
                    strokeWidth={on ? 2.5 : 1.5}
                    strokeDasharray={e.stale ? '5 4' : undefined}
                    markerEnd="url(#lineage-arrow)"
                  />
                  <circle cx={p.mx} cy={p.my} r={on ? 6 : 5} style={{ fill: 'var(--panel)', stroke: on ? 'var(--accent)' : 'var(--muted)' }} strokeWidth={1.5} />
                </g>
              );
            })}
            {layout.nodes.map((p) => {
              const n = nodeOf(p.key);
              const [title, sub] = labels(n, p.key);
              const on = node === p.key;
              const pick = () => setSelected({ kind: 'node', key: p.key });
              return (
                <g
                  key={p.key}
                  data-node={p.key}
                  data-depth={p.depth}
                  transform={`translate(${p.x},${p.y})`}
                  role="button"
                  tabIndex={0}
                  aria-label={`${n?.kind === 'redacted' ? 'a table you cannot read' : p.key}${p.key === self ? ' (this table)' : ''}`}
                  aria-pressed={on}
                  onClick={pick}
                  onKeyDown={onActivate(pick)}
                  onMouseDown={noMouseFocus}
                  style={{ cursor: 'pointer' }}
                >
                  <title>{n?.kind === 'redacted' ? 'a table you cannot read' : p.key}</title>
                  <rect
                    width={BOX.w}
                    height={BOX.h}
                    rx={6}
                    style={{ fill: 'var(--panel)', stroke: on || p.key === self ? 'var(--accent)' : 'var(--border)' }}
                    strokeWidth={p.key === self ? 2.5 : on ? 2 : 1}
                    strokeDasharray={n?.kind === 'external' ? '4 3' : undefined}
                  />
                  <text x={10} y={19} fontSize={13} fontWeight={p.key === self ? 700 : 500} style={{ fill: n?.kind === 'redacted' ? 'var(--muted)' : 'var(--fg)' }}>
                    {clip(title, 26)}
                  </text>
                  <text x={10} y={36} fontSize={11} style={{ fill: 'var(--muted)' }}>
                    {clip(sub, 32)}
                  </text>
                </g>
              );
            })}
          </svg>
        </div>
      ) : null}
      {data?.truncated ? <p className="hint">The graph stopped at 500 tables.</p> : null}
      {data?.hidden ? <p className="hint">Some lineage into catalogs no longer attached is not shown.</p> : null}
      {data?.columns_truncated ? <p className="hint">Column detail stopped at 2,000 entries.</p> : null}
      {node && data ? <NodeDetail nodeKey={node} data={data} link={nodeLink} /> : null}
      {edge ? <EdgeDetail edge={edge} /> : null}
      {data?.edges.length ? (
        <details>
          <summary>Edges as a table</summary>
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
              {data.edges.map((e) => (
                <tr
                  key={edgeId(e)}
                  aria-selected={selected?.kind === 'edge' && edgeId(selected) === edgeId(e)}
                  onClick={() => setSelected({ kind: 'edge', source: e.source, target: e.target })}
                  className={e.stale ? 'stale' : undefined}
                >
                  <td>{nodeLink(e.source)}</td>
                  <td>{nodeLink(e.target)}</td>
                  <td>{e.providers.map((p) => `${p.provider}${p.stale ? ' (stale)' : ''}`).join(', ')}</td>
                  <td>
                    <Time iso={e.last_seen_at} />
                  </td>
                  <td>{e.observation_count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
    </section>
  );
}

const noColumns = (e: LineageEdge) => `no column detail: ${e.providers.map((p) => `${p.provider} ${p.column_lineage}`).join(', ')}`;

/** A table's column detail: which columns feed its columns, and which of its columns feed others'. */
function NodeDetail(props: { nodeKey: string; data: Lineage; link: (key: string) => ReactNode }) {
  const { nodeKey, data } = props;
  const n = data.nodes.find((x) => x.key === nodeKey);
  if (n?.kind === 'redacted') {
    return (
      <div aria-label="Node detail" className="card">
        <strong>A table you cannot read</strong>
        <p className="hint">Its name and columns are not shown.</p>
      </div>
    );
  }
  const into = data.edges.filter((e) => e.target === nodeKey);
  const out = data.edges.filter((e) => e.source === nodeKey);
  return (
    <div aria-label="Node detail" className="card">
      <strong>{props.link(nodeKey)}</strong> <span className="hint">({n?.column_count ?? 0} columns)</span>
      {into.length ? (
        <>
          <h4>Its columns come from</h4>
          <ul aria-label="Columns in">
            {into.map((e) =>
              e.columns.length ? (
                e.columns.map((c) => (
                  <li key={`${edgeId(e)}:${c.source_column}>${c.target_column}`}>
                    <code>{c.target_column}</code> ← {e.source}.<code>{c.source_column}</code> <span className="hint">({c.providers.join(', ')})</span>
                  </li>
                ))
              ) : (
                <li key={edgeId(e)} className="hint">
                  {e.source}: {noColumns(e)}
                </li>
              ),
            )}
          </ul>
        </>
      ) : null}
      {out.length ? (
        <>
          <h4>Its columns feed</h4>
          <ul aria-label="Columns out">
            {out.map((e) =>
              e.columns.length ? (
                e.columns.map((c) => (
                  <li key={`${edgeId(e)}:${c.source_column}>${c.target_column}`}>
                    <code>{c.source_column}</code> → {e.target}.<code>{c.target_column}</code> <span className="hint">({c.providers.join(', ')})</span>
                  </li>
                ))
              ) : (
                <li key={edgeId(e)} className="hint">
                  {e.target}: {noColumns(e)}
                </li>
              ),
            )}
          </ul>
        </>
      ) : null}
      {!into.length && !out.length ? <EmptyState>No edges of this table in the graph shown.</EmptyState> : null}
    </div>
  );
}

function EdgeDetail(props: { edge: LineageEdge }) {
  const { edge } = props;
  return (
    <div aria-label="Edge detail" className="card">
      <strong>
        {edge.source} → {edge.target}
      </strong>
      <p className="hint">
        {edge.providers.map((p) => `${p.provider}: ${p.observation_count} seen, last ${formatTime(p.last_seen_at)}${p.stale ? ' (stale)' : ''}`).join('; ')}
      </p>
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
  );
}
