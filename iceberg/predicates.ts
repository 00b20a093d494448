// Pruning: the simple predicates of a statement's WHERE (conjuncts `col op literal`, `col IN (literals)`,
// `col BETWEEN a AND b`) checked against what manifests know about each data file: its partition values (identity,
// year/month/day/hour, truncate: equality and ranges; bucket: equality and IN) and its column lower/upper bounds.
// Anything else (OR, functions of columns, subqueries, NOT) is simply not used: pruning only ever skips files that
// cannot hold a matching row, and DuckDB still applies the whole WHERE to what is read.
import { decodeBound, type DataFile, type FieldSummary } from './avro.ts';
import type { NestedField, PartitionSpec, Schema } from './metadata.ts';
import { applyTransform, parseTransform, transformResultType, type Transform } from './transforms.ts';

type Op = '=' | '<' | '<=' | '>' | '>=' | 'in';

export interface Literal {
  kind: 'number' | 'string' | 'date' | 'timestamp' | 'boolean';
  text: string;
}

export interface Predicate {
  column: string;
  /** Table qualifier as written (`x.id` → x), or null. */
  qualifier: string | null;
  op: Op;
  values: Literal[];
}

/** The parts of a polyglot expression node read here (each checked before use). */
interface Obj {
  literal?: { literal_type?: unknown; value?: unknown };
  neg?: { this?: Obj };
  boolean?: { value?: unknown };
  cast?: { this?: Obj; to?: { data_type?: unknown } };
  column?: { name?: { name?: unknown }; table?: { name?: string } | null };
  and?: { left?: Obj; right?: Obj };
  paren?: { this?: Obj };
  in?: { not?: unknown; query?: unknown; this?: Obj; expressions?: Obj[] };
  between?: { not?: unknown; this?: Obj; low?: Obj; high?: Obj };
  eq?: Comparison;
  lt?: Comparison;
  lte?: Comparison;
  gt?: Comparison;
  gte?: Comparison;
}
interface Comparison {
  left?: Obj;
  right?: Obj;
}

const FLIP: Record<string, Op> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
const OPS: Record<'eq' | 'lt' | 'lte' | 'gt' | 'gte', Op> = { eq: '=', lt: '<', lte: '<=', gt: '>', gte: '>=' };

function literal(node: Obj | null | undefined): Literal | null {
  if (!node || typeof node !== 'object') return null;
  if (node.literal) {
    const t = node.literal.literal_type;
    if (t === 'number' || t === 'string' || t === 'date' || t === 'timestamp') return { kind: t, text: String(node.literal.value) };
    return null;
  }
  if (node.neg) {
    const inner = literal(node.neg.this);
    return inner?.kind === 'number' ? { kind: 'number', text: `-${inner.text}` } : null;
  }
  if (node.boolean) return { kind: 'boolean', text: String(node.boolean.value) };
  if (node.cast) {
    const inner = literal(node.cast.this);
    const to = String(node.cast.to?.data_type ?? '').toLowerCase();
    if (!inner) return null;
    if (to === 'date') return { kind: 'date', text: inner.text };
    if (to.startsWith('timestamp')) return { kind: 'timestamp', text: inner.text };
    return null;
  }
  return null;
}

function column(node: Obj | null | undefined): { column: string; qualifier: string | null } | null {
  if (!node?.column?.name) return null;
  return { column: String(node.column.name.name), qualifier: node.column.table?.name ?? null };
}

/** The usable conjuncts of a WHERE expression (polyglot AST). */
export function extractPredicates(where: unknown): Predicate[] {
  const out: Predicate[] = [];
  const visit = (n: Obj | null | undefined) => {
    if (!n || typeof n !== 'object') return;
    if (n.and) {
      visit(n.and.left);
      visit(n.and.right);
      return;
    }
    if (n.paren) return visit(n.paren.this);
    for (const [key, op] of Object.entries(OPS)) {
      const cmp = n[key as keyof typeof OPS];
      if (!cmp) continue;
      const l = column(cmp.left);
      const r = literal(cmp.right);
      if (l && r) out.push({ ...l, op, values: [r] });
      const l2 = literal(cmp.left);
      const r2 = column(cmp.right);
      if (l2 && r2) out.push({ ...r2, op: FLIP[op], values: [l2] });
      return;
    }
    if (n.in && !n.in.not && !n.in.query) {
      const c = column(n.in.this);
      const values = (n.in.expressions ?? []).map(literal);
      if (c && values.length && values.every(Boolean)) out.push({ ...c, op: 'in', values: values as Literal[] });
      return;
    }
    if (n.between && !n.between.not) {
      const c = column(n.between.this);
      const low = literal(n.between.low);
      const high = literal(n.between.high);
      if (c && low && high) out.push({ ...c, op: '>=', values: [low] }, { ...c, op: '<=', values: [high] });
    }
  };
  visit(typeof where === 'object' && where !== null ? where : null);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Literal values in Iceberg's representation (see iceberg/transforms.ts)

const DAY_MS = 86_400_000;

function parseDate(text: string): number | undefined {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isFinite(ms) ? Math.round(ms / DAY_MS) : undefined;
}

function parseTimestampMicros(text: string): bigint | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(text.trim());
  if (!m) return undefined;
  let ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0));
  if (!Number.isFinite(ms)) return undefined;
  if (m[8] && m[8] !== 'Z') {
    const sign = m[8][0] === '-' ? -1 : 1;
    const digits = m[8].slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)) * 60_000;
  }
  return BigInt(ms) * 1000n + BigInt((m[7] ?? '').padEnd(6, '0') || 0);
}

/** A literal converted to the Iceberg representation of `type`, or undefined when it cannot be used. */
export function literalValue(type: string, lit: Literal): unknown {
  switch (type) {
    case 'int':
    case 'long':
      if (lit.kind !== 'number' || !/^-?\d+$/.test(lit.text)) return undefined;
      return type === 'int' ? Number(lit.text) : BigInt(lit.text);
    case 'float':
    case 'double':
      return lit.kind === 'number' ? Number(lit.text) : undefined;
    case 'string':
      return lit.kind === 'string' ? lit.text : undefined;
    case 'boolean':
      return lit.kind === 'boolean' ? lit.text === 'true' : undefined;
    case 'date':
      return lit.kind === 'date' || lit.kind === 'string' ? parseDate(lit.text) : undefined;
    case 'timestamp':
    case 'timestamptz':
      if (lit.kind === 'date') {
        const d = parseDate(lit.text);
        return d === undefined ? undefined : BigInt(d) * 86_400_000_000n;
      }
      return lit.kind === 'timestamp' || lit.kind === 'string' ? parseTimestampMicros(lit.text) : undefined;
  }
  return undefined;
}

function compare(a: unknown, b: unknown): number {
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
    if (!Number.isInteger(Number(a)) || !Number.isInteger(Number(b))) return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0;
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether some value v with `op literal` can lie in [lower, upper] (either bound may be unknown). */
function rangeMayMatch(op: Op, values: unknown[], lower: unknown, upper: unknown): boolean {
  const geLower = (v: unknown) => lower === undefined || compare(v, lower) >= 0;
  const leUpper = (v: unknown) => upper === undefined || compare(v, upper) <= 0;
  switch (op) {
    case '=':
    case 'in':
      return values.some((v) => geLower(v) && leUpper(v));
    case '<':
      return lower === undefined || compare(lower, values[0]) < 0;
    case '<=':
      return lower === undefined || compare(lower, values[0]) <= 0;
    case '>':
      return upper === undefined || compare(upper, values[0]) > 0;
    case '>=':
      return upper === undefined || compare(upper, values[0]) >= 0;
  }
}

/** The predicate mapped through a partition transform: a condition on the partition value, or null (unusable). */
function throughTransform(t: Transform, sourceType: string, op: Op, values: unknown[]): { op: Op; values: unknown[] } | null {
  const apply = (v: unknown) => applyTransform(t, sourceType, v);
  switch (t.kind) {
    case 'identity':
      return { op, values };
    case 'bucket':
      return op === '=' || op === 'in' ? { op: 'in', values: values.map(apply) } : null;
    case 'void':
      return null;
    default:
      // year/month/day/hour/truncate are monotonic (non-decreasing): strict bounds become inclusive.
      if (op === '=' || op === 'in') return { op: 'in', values: values.map(apply) };
      return { op: op === '<' ? '<=' : op === '>' ? '>=' : op, values: values.map(apply) };
  }
}

export interface BoundPredicate {
  field: NestedField;
  type: string;
  op: Op;
  values: unknown[];
}

/**
 * Predicates resolved against a schema: only columns of a primitive type, with literals that convert exactly.
 * `qualifiers` are the names the table may be referred to by (its name and alias), lower case.
 */
export function bindPredicates(predicates: readonly Predicate[], schema: Schema, qualifiers: readonly string[]): BoundPredicate[] {
  const out: BoundPredicate[] = [];
  for (const p of predicates) {
    if (p.qualifier !== null && !qualifiers.includes(p.qualifier.toLowerCase())) continue;
    const field = schema.fields.find((f) => f.name === p.column) ?? schema.fields.find((f) => f.name.toLowerCase() === p.column.toLowerCase());
    if (!field || typeof field.type !== 'string') continue;
    const values = p.values.map((v) => literalValue(field.type as string, v));
    if (values.some((v) => v === undefined)) continue;
    out.push({ field, type: field.type, op: p.op, values });
  }
  return out;
}

/** Whether a data file may hold rows matching every bound predicate (false: it can be skipped). */
export function fileMayMatch(predicates: readonly BoundPredicate[], spec: PartitionSpec | undefined, file: DataFile): boolean {
  for (const p of predicates) {
    for (const pf of spec?.fields ?? []) {
      if (pf['source-id'] !== p.field.id) continue;
      const t = parseTransform(pf.transform);
      const mapped = throughTransform(t, p.type, p.op, p.values);
      if (!mapped) continue;
      const value = file.partition[pf.name];
      // A null partition value means the column is null in every row: no comparison can be true.
      if (value === null || value === undefined) return false;
      if (!rangeMayMatch(mapped.op, mapped.values, value, value)) return false;
    }
    const lower = file.lower_bounds?.find((kv) => kv.key === p.field.id)?.value;
    const upper = file.upper_bounds?.find((kv) => kv.key === p.field.id)?.value;
    if (lower || upper) {
      const lo = lower ? decodeBound(p.type, lower) : undefined;
      const hi = upper ? decodeBound(p.type, upper) : undefined;
      if (!rangeMayMatch(p.op, p.values, lo, hi)) return false;
    }
  }
  return true;
}

/** Whether a manifest may hold matching files, from the manifest list's partition summaries. */
export function manifestMayMatch(
  predicates: readonly BoundPredicate[],
  spec: PartitionSpec | undefined,
  summaries: readonly FieldSummary[] | null | undefined,
): boolean {
  if (!spec || !summaries) return true;
  for (const p of predicates) {
    for (let i = 0; i < spec.fields.length; i++) {
      const pf = spec.fields[i];
      const s = summaries[i];
      if (!s || pf['source-id'] !== p.field.id) continue;
      const t = parseTransform(pf.transform);
      const mapped = throughTransform(t, p.type, p.op, p.values);
      if (!mapped) continue;
      if (!s.lower_bound && !s.upper_bound) {
        if (!s.contains_null) continue;
        return false; // only nulls in this manifest for that partition field
      }
      const resultType = transformResultType(t, p.type);
      const lo = s.lower_bound ? decodeBound(resultType, s.lower_bound) : undefined;
      const hi = s.upper_bound ? decodeBound(resultType, s.upper_bound) : undefined;
      if (!rangeMayMatch(mapped.op, mapped.values, lo, hi)) return false;
    }
  }
  return true;
}
