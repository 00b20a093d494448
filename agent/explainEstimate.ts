// Peak-memory estimate from DuckDB's `EXPLAIN (FORMAT json)` plan. DuckDB estimates rows, not bytes, so this
// prices the operators that hold rows in memory at once (hash tables, sorts, windows) at an assumed footprint per
// row; streaming operators (scans, filters, projections) are free. The result is a rough, deliberately generous
// figure: the safety multiplier and the floor/ceiling clamp are applied by the caller.

// Per stored row: 16 bytes per column value plus 48 bytes of hash-table / sort-key overhead.
const BYTES_PER_COLUMN = 16;
const ROW_OVERHEAD_BYTES = 48;

const MATERIALIZING = new Set([
  'HASH_GROUP_BY', 'PERFECT_HASH_GROUP_BY', 'PARTITIONED_AGGREGATE', 'ORDER_BY', 'TOP_N', 'WINDOW',
  'STREAMING_WINDOW', 'DISTINCT', 'HASH_JOIN', 'RIGHT_DELIM_JOIN', 'LEFT_DELIM_JOIN', 'DELIM_JOIN',
  'PIECEWISE_MERGE_JOIN', 'NESTED_LOOP_JOIN', 'BLOCKWISE_NL_JOIN', 'CROSS_PRODUCT', 'IE_JOIN', 'ASOF_JOIN',
  'COLUMN_DATA_SCAN', 'CTE', 'RECURSIVE_CTE',
]);
// Joins keep their build side (DuckDB builds on the right child).
const BUILD_SIDE_JOINS = new Set([
  'HASH_JOIN', 'PIECEWISE_MERGE_JOIN', 'NESTED_LOOP_JOIN', 'BLOCKWISE_NL_JOIN', 'CROSS_PRODUCT', 'IE_JOIN', 'ASOF_JOIN',
]);

interface PlanNode {
  readonly name?: unknown;
  readonly children?: unknown;
  readonly extra_info?: unknown;
}

function cardinality(node: PlanNode): number {
  const info = node.extra_info;
  if (typeof info !== 'object' || info === null) return 0;
  const raw = (info as Record<string, unknown>)['Estimated Cardinality'];
  const n = typeof raw === 'string' ? Number(raw.replace(/[^0-9.]/g, '')) : typeof raw === 'number' ? raw : NaN;
  return Number.isFinite(n) ? n : 0;
}

function columnCount(node: PlanNode): number {
  const info = node.extra_info;
  if (typeof info !== 'object' || info === null) return 1;
  let count = 0;
  for (const value of Object.values(info as Record<string, unknown>)) {
    if (Array.isArray(value)) count += value.length;
  }
  return Math.max(1, count);
}

function rowBytes(node: PlanNode): number {
  return columnCount(node) * BYTES_PER_COLUMN + ROW_OVERHEAD_BYTES;
}

function children(node: PlanNode): PlanNode[] {
  return Array.isArray(node.children) ? (node.children as PlanNode[]).filter((c) => typeof c === 'object' && c !== null) : [];
}

function nodeBytes(node: PlanNode): number {
  const name = typeof node.name === 'string' ? node.name.trim().toUpperCase() : '';
  let own = 0;
  if (MATERIALIZING.has(name)) {
    const kids = children(node);
    const held = BUILD_SIDE_JOINS.has(name) && kids.length >= 2 ? kids[1] : node;
    own = cardinality(held) * rowBytes(held);
  }
  return own + children(node).reduce((sum, child) => sum + nodeBytes(child), 0);
}

/** Estimated peak bytes for a plan, or null when the text is not a plan DuckDB produced. */
export function estimatePeakBytesFromExplain(planJson: string): number | null {
  let plan: unknown;
  try {
    plan = JSON.parse(planJson);
  } catch {
    return null;
  }
  const roots = Array.isArray(plan) ? plan : [plan];
  if (roots.length === 0 || roots.some((r) => typeof r !== 'object' || r === null)) return null;
  return Math.ceil(roots.reduce((sum: number, root: PlanNode) => sum + nodeBytes(root), 0));
}
