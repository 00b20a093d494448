// The query profile: summary figures and the operator tree with each operator's time, rows and share of the total,
// as an indented list or as a top-down graph of operator boxes (OperatorGraph).
import { useState } from 'react';
import { OperatorGraph } from './OperatorGraph.tsx';
import type { ProfileOperator, QueryProfile } from '../api/types.ts';
import { formatBytes, formatCount, formatDuration } from '../components/format.ts';

function OperatorNode(props: { op: ProfileOperator; total: number; depth: number }) {
  const [open, setOpen] = useState(props.depth < 6);
  const { op, total } = props;
  const share = total > 0 ? Math.min(100, (op.timing_ms / total) * 100) : 0;
  return (
    <li role="treeitem" aria-expanded={op.children.length ? open : undefined} aria-level={props.depth + 1}>
      <div className="op-row">
        <span className="op-label" style={{ paddingLeft: `${props.depth * 1.1}rem` }}>
        {op.children.length ? (
          <button type="button" className="link" aria-label={open ? `Collapse ${op.name}` : `Expand ${op.name}`} onClick={() => setOpen(!open)}>
            {open ? '▾' : '▸'}
          </button>
        ) : (
          <span className="op-leaf" aria-hidden="true">
            ·
          </span>
        )}
        <span className="op-name">{op.name}</span>
        </span>
        <span className="op-bar" aria-hidden="true">
          <span style={{ width: `${share}%` }} />
        </span>
        <span className="op-time">{formatDuration(op.timing_ms)}</span>
        <span className="op-rows">{formatCount(op.cardinality)} rows</span>
      </div>
      {open && op.children.length ? (
        <ul role="group">
          {op.children.map((c, i) => (
            <OperatorNode key={i} op={c} total={total} depth={props.depth + 1} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

export function ProfileTree(props: { profile: QueryProfile }) {
  const { summary, operators } = props.profile;
  const [view, setView] = useState<'tree' | 'graph'>('tree');
  const total = operators ? Math.max(summary.total_ms, operators.timing_ms) : summary.total_ms;
  return (
    <div className="profile">
      <dl className="facts">
        <dt>Total</dt>
        <dd>{formatDuration(summary.total_ms)}</dd>
        <dt>Rows</dt>
        <dd>{formatCount(summary.rows)}</dd>
        <dt>Peak memory</dt>
        <dd>{formatBytes(summary.peak_memory_bytes)}</dd>
        {summary.cpu_ms !== undefined ? (
          <>
            <dt>CPU</dt>
            <dd>{formatDuration(summary.cpu_ms)}</dd>
          </>
        ) : null}
      </dl>
      {operators ? (
        <>
          <div className="row" role="group" aria-label="Profile view">
            <button type="button" className="secondary" aria-pressed={view === 'tree'} onClick={() => setView('tree')}>
              Tree
            </button>
            <button type="button" className="secondary" aria-pressed={view === 'graph'} onClick={() => setView('graph')}>
              Graph
            </button>
          </div>
          {view === 'graph' ? (
            <OperatorGraph root={operators} total={total} />
          ) : (
            <ul role="tree" aria-label="Operator tree" className="op-tree">
              <OperatorNode op={operators} total={total} depth={0} />
            </ul>
          )}
        </>
      ) : (
        <p>The agent reported no operator tree for this query.</p>
      )}
    </div>
  );
}
