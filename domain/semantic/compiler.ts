// Compiles a structured request (metrics, dimensions, grain, time range, filters, order, limit) into one DuckDB
// statement. The same request always gives the same text: everything is emitted in request order, and what the
// model supplies is taken in name order. Shape of the statement:
// - metrics are grouped by what their rows must satisfy (dataset, metric filter, and the time dimension a range
//   applies to); each group is one aggregate over its dataset with the metric filter applied to the dataset's rows
//   before any join or aggregation;
// - dimensions on other datasets are reached along relationships from the metric's dataset, left to right only, so
//   every join is onto a key and a measure is never repeated by a join (no fan-out);
// - several groups are joined on the dimension values (full outer, null-safe), one row per dimension combination.
import { unprocessable } from '../errors.ts';
import { GRAINS, type Dimension, type Grain, type Metric, type Model } from './definitions.ts';
import { describePath, legalDimensions, reach, type JoinStep } from './joins.ts';
import { timeDimensionOf } from './rules.ts';
import { dateLiteral, ident, literal, tableRef } from './sqlText.ts';

export const FILTER_OPS = ['=', '!=', '<', '<=', '>', '>=', 'in', 'not_in', 'like', 'is_null', 'is_not_null'] as const;
type FilterOp = (typeof FILTER_OPS)[number];
export const TIME_RANGE_KINDS = ['last_complete', 'trailing', 'to_date', 'absolute'] as const;
type TimeRangeKind = (typeof TIME_RANGE_KINDS)[number];

export interface CompileRequest {
  model: string;
  metrics: readonly string[];
  dimensions?: readonly string[];
  grain?: Grain;
  time_range?: { kind: TimeRangeKind; grain?: Grain; n?: number; start?: string; end?: string };
  filters?: ReadonlyArray<{ dimension: string; op: FilterOp; value?: unknown }>;
  order_by?: ReadonlyArray<{ field: string; direction?: 'asc' | 'desc' }>;
  limit?: number;
}

export interface Compiled {
  sql: string;
  model: string;
  /** the metric columns of the result, in order */
  metrics: string[];
  /** the dimension columns of the result, in order (a time dimension is named `<dimension>__<grain>`) */
  dimensions: string[];
}

const fail = (code: string, message: string, alternatives: readonly string[], field: string) =>
  unprocessable(message, code, { alternatives: [...alternatives], fields: [{ field, in: 'body', message }] });

const byName = <T extends { name: string }>(list: readonly T[]) => [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** A dimension as the result groups it: the dimension, the grain of a time dimension, its output column. */
interface Output {
  dimension: Dimension;
  grain: Grain | null;
  column: string;
}

// `order_date__month` names a time dimension at a grain, as the response names that column.
function parseDimensionRef(model: Model, ref: string): { dimension: Dimension | undefined; grain: Grain | null } {
  const exact = model.dimensions.find((d) => d.name === ref);
  if (exact) return { dimension: exact, grain: null };
  const at = ref.lastIndexOf('__');
  if (at > 0) {
    const grain = ref.slice(at + 2) as Grain;
    const d = model.dimensions.find((x) => x.name === ref.slice(0, at) && x.kind === 'time');
    if (d && (GRAINS as readonly string[]).includes(grain)) return { dimension: d, grain };
  }
  return { dimension: undefined, grain: null };
}

function intervalOf(grain: Grain, n: number): string {
  if (grain === 'week') return `INTERVAL ${n * 7} DAY`;
  if (grain === 'quarter') return `INTERVAL ${n * 3} MONTH`;
  return `INTERVAL ${n} ${grain.toUpperCase()}`;
}

const truncToday = (grain: Grain) => `CAST(date_trunc('${grain}', current_date) AS DATE)`;
const TOMORROW = `CAST(current_date + INTERVAL 1 DAY AS DATE)`;

/** [start, end) of a time range as SQL date expressions; relative kinds stay relative so the text never changes. */
function rangeBounds(range: NonNullable<CompileRequest['time_range']>): [string, string] {
  const needGrain = (): Grain => {
    if (!range.grain) throw fail('unsupported_grain', `time_range.grain is required for ${range.kind}`, GRAINS, 'time_range.grain');
    return range.grain;
  };
  const needN = (): number => {
    const n = range.n;
    if (n === undefined || !Number.isInteger(n) || n < 1 || n > 10_000) {
      throw unprocessable(`time_range.n: a whole number of periods from 1 to 10000 for ${range.kind}`, 'unprocessable_content', {
        fields: [{ field: 'time_range.n', in: 'body', message: 'required, 1 to 10000' }],
      });
    }
    return n;
  };
  switch (range.kind) {
    case 'last_complete': {
      const g = needGrain();
      const end = truncToday(g);
      return [`CAST(${end} - ${intervalOf(g, needN())} AS DATE)`, end];
    }
    case 'trailing': {
      const g = needGrain();
      return [`CAST(${TOMORROW} - ${intervalOf(g, needN())} AS DATE)`, TOMORROW];
    }
    case 'to_date':
      return [truncToday(needGrain()), TOMORROW];
    case 'absolute': {
      if (!range.start || !range.end) {
        throw unprocessable('time_range: absolute needs start and end (dates, end exclusive)', 'unprocessable_content', {
          fields: [{ field: range.start ? 'time_range.end' : 'time_range.start', in: 'body', message: 'required for absolute' }],
        });
      }
      const start = dateLiteral(range.start, 'time_range.start');
      const end = dateLiteral(range.end, 'time_range.end');
      if (range.start >= range.end) {
        throw unprocessable('time_range: start must be before end (end is exclusive)', 'unprocessable_content', {
          fields: [{ field: 'time_range.end', in: 'body', message: 'not after start' }],
        });
      }
      return [start, end];
    }
  }
}

function predicate(expr: string, f: { op: FilterOp; value?: unknown }, field: string): string {
  const noValue = f.op === 'is_null' || f.op === 'is_not_null';
  if (noValue) {
    if (f.value !== undefined && f.value !== null) throw unprocessable(`${field}: ${f.op} takes no value`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'no value' }] });
    return `${expr} IS ${f.op === 'is_null' ? '' : 'NOT '}NULL`;
  }
  if (f.op === 'in' || f.op === 'not_in') {
    if (!Array.isArray(f.value) || f.value.length === 0 || f.value.length > 1000) {
      throw unprocessable(`${field}: ${f.op} takes a list of 1 to 1000 values`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'a non-empty list' }] });
    }
    return `${expr} ${f.op === 'in' ? 'IN' : 'NOT IN'} (${f.value.map((v, i) => literal(v, `${field}.${i}`)).join(', ')})`;
  }
  if (f.op === 'like') {
    if (typeof f.value !== 'string') throw unprocessable(`${field}: like takes a string pattern`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'a string' }] });
    return `${expr} LIKE ${literal(f.value, field)}`;
  }
  if (f.value === null || f.value === undefined) {
    throw unprocessable(`${field}: ${f.op} takes a value (use is_null for missing values)`, 'unprocessable_content', { fields: [{ field, in: 'body', message: 'a value' }] });
  }
  return `${expr} ${f.op === '!=' ? '<>' : f.op} ${literal(f.value, field)}`;
}

const aggregate = (m: Metric, arg: string | null) => {
  switch (m.agg) {
    case 'count':
      return `count(${arg ?? '*'})`;
    case 'count_distinct':
      return `count(DISTINCT ${arg})`;
    case 'sum_boolean':
      return `sum(CAST(${arg} AS INTEGER))`;
    default:
      return `${m.agg}(${arg})`;
  }
};

interface Group {
  dataset: string;
  filter: string | null;
  timeDimension: Dimension | null;
  metrics: Metric[];
}

/** One aggregate over one dataset, joined to what its dimensions, filters and time range need. */
function groupSelect(model: Model, g: Group, outputs: Output[], req: CompileRequest): string {
  const base = model.datasets.find((d) => d.name === g.dataset)!;
  // The datasets this group reaches, keyed by their path from the base (the same dataset reached along two
  // different paths is two joins, two aliases).
  interface Node { key: string; alias: string; datasetName: string; step: JoinStep | null; parentKey: string | null; computed: string[] }
  const nodes = new Map<string, Node>([['', { key: '', alias: base.name, datasetName: base.name, step: null, parentKey: null, computed: [] }]]);
  const aliases = new Set([base.name]);
  const nodeFor = (d: Dimension, field: string): Node => {
    const r = reach(model, g.dataset, d.dataset);
    if (r.kind === 'ambiguous') {
      const paths = r.paths.map((p) => describePath(g.dataset, p));
      throw fail('ambiguous_join_path', `dimension ${d.name} is reached from ${g.dataset} along more than one path: ${paths.join('; ')}`, paths, field);
    }
    if (r.kind === 'none') {
      const legal = legalDimensions(model, g.dataset).map((x) => x.dimension.name);
      throw fail('no_join_path', `dimension ${d.name} cannot be reached from dataset ${g.dataset} (metrics ${g.metrics.map((m) => m.name).join(', ')}) without repeating rows`, legal, field);
    }
    let key = '';
    for (const step of r.path) {
      const parentKey = key;
      key = key ? `${key}/${step.relationship}` : step.relationship;
      if (!nodes.has(key)) {
        const alias = aliases.has(step.to) ? `${step.to}__${step.relationship}` : step.to;
        aliases.add(alias);
        nodes.set(key, { key, alias, datasetName: step.to, step, parentKey, computed: [] });
      }
    }
    return nodes.get(key)!;
  };
  const dimExpr = (d: Dimension, field: string): string => {
    const node = nodeFor(d, field);
    if (d.expr === null) return `${ident(node.alias)}.${ident(d.name)}`;
    const col = `__eider_dim_${d.name}`;
    const text = `(${d.expr}) AS ${ident(col)}`;
    if (!node.computed.includes(text)) node.computed.push(text);
    return `${ident(node.alias)}.${ident(col)}`;
  };

  const select: string[] = outputs.map((o, i) => {
    const e = dimExpr(o.dimension, `dimensions.${i}`);
    return `${o.grain ? `CAST(date_trunc('${o.grain}', ${e}) AS DATE)` : e} AS ${ident(o.column)}`;
  });
  const baseNode = nodes.get('')!;
  for (const m of g.metrics) {
    let arg: string | null = null;
    if (m.expr !== null) {
      const col = `__eider_metric_${m.name}`;
      baseNode.computed.push(`(${m.expr}) AS ${ident(col)}`);
      arg = `${ident(base.name)}.${ident(col)}`;
    }
    select.push(`${aggregate(m, arg)} AS ${ident(m.name)}`);
  }
  const where: string[] = [];
  if (req.time_range && g.timeDimension) {
    const [start, end] = rangeBounds(req.time_range);
    const e = dimExpr(g.timeDimension, 'time_range');
    where.push(`${e} >= ${start}`, `${e} < ${end}`);
  }
  (req.filters ?? []).forEach((f, i) => {
    const d = model.dimensions.find((x) => x.name === f.dimension)!;
    where.push(predicate(dimExpr(d, `filters.${i}.dimension`), f, `filters.${i}.value`));
  });

  const source = (n: Node, filter: string | null) => {
    const ds = model.datasets.find((d) => d.name === n.datasetName)!;
    const table = tableRef(ds.catalog, ds.schema_name, ds.table_name);
    if (n.computed.length === 0 && filter === null) return `${table} AS ${ident(n.alias)}`;
    const cols = ['*', ...n.computed].join(', ');
    return `(SELECT ${cols} FROM ${table}${filter === null ? '' : ` WHERE (${filter})`}) AS ${ident(n.alias)}`;
  };
  const lines = [`SELECT ${select.join(', ')}`, `FROM ${source(baseNode, g.filter)}`];
  const joined = [...nodes.values()].filter((n) => n.step).sort((a, b) => a.key.split('/').length - b.key.split('/').length || (a.key < b.key ? -1 : 1));
  for (const n of joined) {
    const rel = model.relationships.find((r) => r.name === n.step!.relationship)!;
    const parent = nodes.get(n.parentKey!)!;
    const on = rel.join_columns.map((j) => `${ident(parent.alias)}.${ident(j.left)} = ${ident(n.alias)}.${ident(j.right)}`).join(' AND ');
    lines.push(`LEFT JOIN ${source(n, null)} ON ${on}`);
  }
  if (where.length) lines.push(`WHERE ${where.join(' AND ')}`);
  if (outputs.length) lines.push(`GROUP BY ${outputs.map((_, i) => i + 1).join(', ')}`);
  return lines.join('\n');
}

export function compile(model: Model, req: CompileRequest): Compiled {
  // Metrics, in request order.
  const metrics: Metric[] = [];
  req.metrics.forEach((name, i) => {
    const m = model.metrics.find((x) => x.name === name);
    if (!m) throw fail('unknown_metric', `no metric ${name} in model ${model.slug}`, byName(model.metrics).map((x) => x.name), `metrics.${i}`);
    if (metrics.includes(m)) throw unprocessable(`metrics: ${name} is named twice`, 'unprocessable_content', { fields: [{ field: `metrics.${i}`, in: 'body', message: 'duplicate' }] });
    metrics.push(m);
  });
  // What every requested metric may be grouped by: the alternatives a wrong dimension is told.
  const legalForAll = byName(model.dimensions)
    .filter((d) => metrics.every((m) => reach(model, m.dataset, d.dataset).kind === 'ok'))
    .map((d) => d.name);

  const outputs: Output[] = [];
  const grainFor = (d: Dimension, explicit: Grain | null, field: string): Grain => {
    const grain = explicit ?? req.grain ?? (d.time_grains.includes('day') ? 'day' : d.time_grains[0]);
    if (!d.time_grains.includes(grain)) {
      throw fail('unsupported_grain', `time dimension ${d.name} has no grain ${grain}`, d.time_grains, field);
    }
    return grain;
  };
  (req.dimensions ?? []).forEach((ref, i) => {
    const { dimension: d, grain } = parseDimensionRef(model, ref);
    if (!d) throw fail('unknown_dimension', `no dimension ${ref} that ${metrics.map((m) => m.name).join(', ')} may be grouped by`, legalForAll, `dimensions.${i}`);
    if (grain && d.kind !== 'time') throw fail('unsupported_grain', `${d.name} is not a time dimension`, [], `dimensions.${i}`);
    const g = d.kind === 'time' ? grainFor(d, grain, `dimensions.${i}`) : null;
    const column = g ? `${d.name}__${g}` : d.name;
    if (outputs.some((o) => o.column === column)) throw unprocessable(`dimensions: ${column} is named twice`, 'unprocessable_content', { fields: [{ field: `dimensions.${i}`, in: 'body', message: 'duplicate' }] });
    outputs.push({ dimension: d, grain: g, column });
  });
  // A grain alone ("revenue by month") groups by the metrics' shared time dimension.
  if (req.grain && !outputs.some((o) => o.dimension.kind === 'time')) {
    const times = metrics.map((m) => timeDimensionOf(model, m));
    const first = times[0];
    if (!first || times.some((t) => t !== first)) {
      const choices = legalForAll.filter((n) => model.dimensions.find((d) => d.name === n)!.kind === 'time');
      throw fail('unknown_dimension', 'grain needs a time dimension: the metrics share none, so name one in dimensions', choices, 'grain');
    }
    const g = grainFor(first, null, 'grain');
    outputs.push({ dimension: first, grain: g, column: `${first.name}__${g}` });
  }
  for (const m of metrics) {
    if (outputs.some((o) => o.column === m.name)) {
      throw unprocessable(`metric ${m.name} and a dimension column share a name`, 'unprocessable_content', { fields: [{ field: 'metrics', in: 'body', message: 'name clash' }] });
    }
  }
  (req.filters ?? []).forEach((f, i) => {
    if (!model.dimensions.some((d) => d.name === f.dimension)) {
      throw fail('unknown_dimension', `filters: no dimension ${f.dimension}`, legalForAll, `filters.${i}.dimension`);
    }
  });

  // Metrics that can share one aggregate: same dataset, same filter, same time dimension for the range.
  const groups: Group[] = [];
  for (const m of metrics) {
    let timeDimension: Dimension | null = null;
    if (req.time_range) {
      timeDimension = timeDimensionOf(model, m) ?? null;
      if (!timeDimension) {
        throw fail('unknown_dimension', `metric ${m.name} has no time dimension for time_range (set its time_dimension or a default time dimension on ${m.dataset})`,
          legalDimensions(model, m.dataset).filter((x) => x.dimension.kind === 'time').map((x) => x.dimension.name), 'time_range');
      }
    }
    const g = groups.find((x) => x.dataset === m.dataset && x.filter === m.filter && x.timeDimension === timeDimension);
    if (g) g.metrics.push(m);
    else groups.push({ dataset: m.dataset, filter: m.filter, timeDimension, metrics: [m] });
  }

  const dimCols = outputs.map((o) => o.column);
  const metricCols = metrics.map((m) => m.name);
  const order: string[] = [];
  const ordered = new Set<string>();
  (req.order_by ?? []).forEach((o, i) => {
    if (!dimCols.includes(o.field) && !metricCols.includes(o.field)) {
      throw fail('unknown_field', `order_by: ${o.field} is not a column of the result`, [...dimCols, ...metricCols], `order_by.${i}.field`);
    }
    if (ordered.has(o.field)) return;
    ordered.add(o.field);
    order.push(`${ident(o.field)} ${o.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`);
  });
  // Rows come back in one order for one request: the remaining dimensions ascending.
  for (const c of dimCols) if (!ordered.has(c)) order.push(`${ident(c)} ASC NULLS LAST`);
  const tail = [order.length ? `ORDER BY ${order.join(', ')}` : '', req.limit !== undefined ? `LIMIT ${req.limit}` : ''].filter(Boolean);

  let text: string;
  if (groups.length === 1) {
    text = [groupSelect(model, groups[0], outputs, req), ...tail].join('\n');
  } else {
    const names = groups.map((_, i) => `g${i + 1}`);
    const ctes = groups.map((g, i) => `${ident(names[i])} AS (\n${groupSelect(model, g, outputs, req)}\n)`);
    const seen = (col: string, upto: number) => (upto === 0 ? `${ident(names[0])}.${ident(col)}` : `COALESCE(${names.slice(0, upto + 1).map((n) => `${ident(n)}.${ident(col)}`).join(', ')})`);
    const from = [`FROM ${ident(names[0])}`];
    for (let i = 1; i < groups.length; i++) {
      if (dimCols.length === 0) from.push(`CROSS JOIN ${ident(names[i])}`);
      else from.push(`FULL OUTER JOIN ${ident(names[i])} ON ${dimCols.map((c) => `${seen(c, i - 1)} IS NOT DISTINCT FROM ${ident(names[i])}.${ident(c)}`).join(' AND ')}`);
    }
    // Metric columns come back in request order whatever group computed them.
    const metricCol = new Map(groups.flatMap((g, i) => g.metrics.map((m) => [m.name, `${ident(names[i])}.${ident(m.name)}`] as const)));
    const projected = [...dimCols.map((c) => `${seen(c, groups.length - 1)} AS ${ident(c)}`), ...metricCols.map((n) => `${metricCol.get(n)} AS ${ident(n)}`)];
    text = [`WITH ${ctes.join(',\n')}`, `SELECT ${projected.join(', ')}`, ...from, ...tail].join('\n');
  }
  return { sql: text, model: model.slug, metrics: metricCols, dimensions: dimCols };
}
