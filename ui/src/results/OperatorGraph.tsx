// The query plan as an operator graph: the profile's operator tree drawn top-down as SVG boxes (name, time and its
// share of the total, rows, the optimizer's estimate when the profile carries one), the heaviest operators marked.
import type { ProfileOperator } from '../api/types.ts';
import { formatCount, formatDuration } from '../components/format.ts';

const BOX_W = 190;
const BOX_H = 74;
const GAP_X = 18;
const GAP_Y = 34;
/** how many of the slowest operators are marked (those that take any time) */
const HEAVIEST = 3;

export interface PlacedOperator {
  op: ProfileOperator;
  x: number;
  y: number;
  parent: PlacedOperator | null;
}

/** Lays the tree out top-down: leaves side by side, each parent centred over its children. */
export function layoutOperators(root: ProfileOperator): { nodes: PlacedOperator[]; width: number; height: number } {
  const nodes: PlacedOperator[] = [];
  let nextLeaf = 0;
  let depthMax = 0;
  const place = (op: ProfileOperator, depth: number, parent: PlacedOperator | null): PlacedOperator => {
    depthMax = Math.max(depthMax, depth);
    const node: PlacedOperator = { op, x: 0, y: depth * (BOX_H + GAP_Y), parent };
    nodes.push(node);
    if (!op.children.length) {
      node.x = nextLeaf++ * (BOX_W + GAP_X);
    } else {
      const kids = op.children.map((c) => place(c, depth + 1, node));
      node.x = (kids[0].x + kids[kids.length - 1].x) / 2;
    }
    return node;
  };
  place(root, 0, null);
  return { nodes, width: Math.max(1, nextLeaf) * (BOX_W + GAP_X) - GAP_X, height: (depthMax + 1) * (BOX_H + GAP_Y) - GAP_Y };
}

/** The operators taking the most time (at most HEAVIEST, only those with some time). */
export function heaviest(nodes: ProfileOperator[]): Set<ProfileOperator> {
  return new Set([...nodes].filter((o) => o.timing_ms > 0).sort((a, b) => b.timing_ms - a.timing_ms).slice(0, HEAVIEST));
}

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
const rowsWord = (n: number) => `${formatCount(n)} ${n === 1 ? 'row' : 'rows'}`;
const pct = (share: number) => (share >= 10 || share === 0 ? share.toFixed(0) : share.toFixed(1)) + '%';

export function OperatorGraph(props: { root: ProfileOperator; total: number }) {
  const { nodes, width, height } = layoutOperators(props.root);
  const heavy = heaviest(nodes.map((n) => n.op));
  const pad = 4;
  return (
    <div className="op-graph-wrap">
      <svg
        className="op-graph"
        role="img"
        aria-label={`Operator graph: ${nodes.length} operators`}
        width={width + 2 * pad}
        height={height + 2 * pad}
        viewBox={`${-pad} ${-pad} ${width + 2 * pad} ${height + 2 * pad}`}
      >
        {nodes.map((n, i) =>
          n.parent ? (
            <path
              key={`e${i}`}
              className="op-edge"
              d={`M${n.parent.x + BOX_W / 2},${n.parent.y + BOX_H} C${n.parent.x + BOX_W / 2},${n.parent.y + BOX_H + GAP_Y / 2} ${n.x + BOX_W / 2},${n.y - GAP_Y / 2} ${n.x + BOX_W / 2},${n.y}`}
            />
          ) : null,
        )}
        {nodes.map((n, i) => {
          const { op } = n;
          const share = props.total > 0 ? Math.min(100, (op.timing_ms / props.total) * 100) : 0;
          const est = op.estimated_cardinality;
          const isHeavy = heavy.has(op);
          const words = `${op.name}: ${formatDuration(op.timing_ms)} (${pct(share)} of total), ${rowsWord(op.cardinality)}${est !== undefined ? `, estimated ${formatCount(est)}` : ''}${isHeavy ? ', among the heaviest' : ''}`;
          return (
            <g key={i} className={isHeavy ? 'op-box heavy' : 'op-box'} transform={`translate(${n.x},${n.y})`} data-operator={op.name}>
              <title>{words}</title>
              <rect width={BOX_W} height={BOX_H} rx={6} />
              <rect className="op-share" x={0} y={BOX_H - 5} width={(BOX_W * share) / 100} height={5} rx={2} />
              <text className="op-box-name" x={10} y={19}>
                {clip(op.name, 22)}
              </text>
              <text className="op-box-time" x={10} y={37}>
                {formatDuration(op.timing_ms)} · {pct(share)}
              </text>
              <text className="op-box-rows" x={10} y={55}>
                {rowsWord(op.cardinality)}{est !== undefined ? ` · est. ${formatCount(est)}` : ''}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
