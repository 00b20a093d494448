// The rules a definition must meet to join a model, checked against the model as it stands (no catalog needed):
// names unique per kind, references to datasets and dimensions that exist, relationships declared from the many
// side onto a declared key, expressions that are one scalar expression. The same checks admit a definition added
// through the API and every definition of an import, so both arrive in the same shape.
import { conflict, unprocessable } from '../errors.ts';
import {
  RELATIONSHIP_KINDS,
  settleDimension,
  settleMetric,
  type Dataset,
  type DefinitionKind,
  type Dimension,
  type DimensionInput,
  type Metric,
  type MetricInput,
  type Model,
  type Relationship,
  type RelationshipInput,
} from './definitions.ts';
import { checkExpression } from './expressions.ts';
import { reach } from './joins.ts';

type Defs = Pick<Model, 'datasets' | 'relationships' | 'dimensions' | 'metrics'>;

const field = (name: string, message: string, code = 'unprocessable_content', extra: Record<string, unknown> = {}) =>
  unprocessable(`${name}: ${message}`, code, { fields: [{ field: name, in: 'body', message }], ...extra });

function listOf(defs: Defs, kind: DefinitionKind): Array<{ name: string }> {
  return kind === 'dataset' ? defs.datasets : kind === 'relationship' ? defs.relationships : kind === 'dimension' ? defs.dimensions : defs.metrics;
}

function assertNameFree(defs: Defs, kind: DefinitionKind, name: string) {
  if (listOf(defs, kind).some((d) => d.name === name)) throw conflict(`a ${kind} named ${name} already exists in this model`, 'conflict', { kind, name });
}

function requireDataset(defs: Defs, name: string, fieldName: string): Dataset {
  const ds = defs.datasets.find((d) => d.name === name);
  if (!ds) {
    throw field(fieldName, `no dataset ${name} in this model`, 'unknown_dataset', { alternatives: defs.datasets.map((d) => d.name) });
  }
  return ds;
}

export function admitDataset(defs: Defs, input: Dataset): Dataset {
  assertNameFree(defs, 'dataset', input.name);
  if (new Set(input.primary_key).size !== input.primary_key.length) throw field('primary_key', 'a column appears twice');
  return { ...input, primary_key: [...input.primary_key] };
}

export function admitRelationship(defs: Defs, input: RelationshipInput): Relationship {
  assertNameFree(defs, 'relationship', input.name);
  const kind = input.kind ?? 'many_to_one';
  if (kind === 'one_to_many') {
    throw field('kind', 'one_to_many is not accepted: declare the relationship from the many side (left) as many_to_one');
  }
  if (!(RELATIONSHIP_KINDS as readonly string[]).includes(kind)) throw field('kind', `one of ${RELATIONSHIP_KINDS.join(', ')}`);
  const left = requireDataset(defs, input.left_dataset, 'left_dataset');
  const right = requireDataset(defs, input.right_dataset, 'right_dataset');
  if (left.name === right.name) throw field('right_dataset', 'a relationship joins two different datasets');
  // The unique side must be keyed and joined on its key: that is what keeps a many-side row from matching twice.
  const unique = kind === 'one_to_one' ? [left, right] : [right];
  for (const ds of unique) {
    const side = ds === left ? 'left' : 'right';
    if (ds.primary_key.length === 0) {
      throw field(`${side}_dataset`, `dataset ${ds.name} is the unique side of ${kind} and must declare primary_key`, 'primary_key_required');
    }
    const joined = new Set(input.join_columns.map((j) => j[side]));
    if (joined.size !== ds.primary_key.length || !ds.primary_key.every((k) => joined.has(k))) {
      throw field('join_columns', `the ${side} side must join on ${ds.name}'s primary key (${ds.primary_key.join(', ')})`, 'join_not_on_key');
    }
  }
  return { name: input.name, left_dataset: left.name, right_dataset: right.name, kind: kind as Relationship['kind'], join_columns: input.join_columns.map((j) => ({ ...j })) };
}

export async function admitDimension(defs: Defs, input: DimensionInput): Promise<Dimension> {
  assertNameFree(defs, 'dimension', input.name);
  requireDataset(defs, input.dataset, 'dataset');
  if (input.kind !== 'time' && (input.time_grains !== undefined || input.is_default_time)) {
    throw field(input.time_grains !== undefined ? 'time_grains' : 'is_default_time', 'only a time dimension (kind: time) has grains or is a default time');
  }
  if (input.kind === 'time' && input.time_grains !== undefined && input.time_grains.length === 0) throw field('time_grains', 'at least one grain');
  const d = settleDimension(input);
  if (d.is_default_time) {
    const other = defs.dimensions.find((x) => x.dataset === d.dataset && x.is_default_time);
    if (other) throw field('is_default_time', `dataset ${d.dataset} already has a default time dimension (${other.name})`);
  }
  if (d.expr !== null) await checkExpression(d.expr, 'expr');
  return d;
}

export async function admitMetric(defs: Defs, input: MetricInput, opts: { replacing?: string } = {}): Promise<Metric> {
  if (opts.replacing !== input.name) assertNameFree(defs, 'metric', input.name);
  requireDataset(defs, input.dataset, 'dataset');
  const m = settleMetric(input);
  if (m.expr === null && m.agg !== 'count') throw field('expr', `${m.agg} needs an expression (only count may count rows)`);
  if (m.expr !== null) await checkExpression(m.expr, 'expr');
  if (m.filter !== null) await checkExpression(m.filter, 'filter');
  if (m.time_dimension !== null) {
    const d = defs.dimensions.find((x) => x.name === m.time_dimension);
    const times = defs.dimensions.filter((x) => x.kind === 'time' && reach(defs, m.dataset, x.dataset).kind === 'ok').map((x) => x.name);
    if (!d) throw field('time_dimension', `no dimension ${m.time_dimension} in this model`, 'unknown_dimension', { alternatives: times });
    if (d.kind !== 'time') throw field('time_dimension', `${d.name} is not a time dimension`, 'unknown_dimension', { alternatives: times });
    if (reach(defs, m.dataset, d.dataset).kind !== 'ok') {
      throw field('time_dimension', `${d.name} is not reachable from dataset ${m.dataset} along relationships`, 'no_join_path', { alternatives: times });
    }
  }
  return m;
}

/** What still refers to a definition: the strings `dataset_in_use` and `dimension_in_use` list. */
export function dependentsOf(defs: Defs, kind: 'dataset' | 'dimension', name: string): string[] {
  if (kind === 'dimension') return defs.metrics.filter((m) => m.time_dimension === name).map((m) => `metric ${m.name}`);
  return [
    ...defs.dimensions.filter((d) => d.dataset === name).map((d) => `dimension ${d.name}`),
    ...defs.metrics.filter((m) => m.dataset === name).map((m) => `metric ${m.name}`),
    ...defs.relationships.filter((r) => r.left_dataset === name || r.right_dataset === name).map((r) => `relationship ${r.name}`),
  ];
}

/** The time dimension a metric's ranges and grains use: its own, or its dataset's default. */
export function timeDimensionOf(defs: Pick<Model, 'dimensions'>, m: Pick<Metric, 'time_dimension' | 'dataset'>): Dimension | undefined {
  if (m.time_dimension) return defs.dimensions.find((d) => d.name === m.time_dimension);
  return defs.dimensions.find((d) => d.dataset === m.dataset && d.is_default_time);
}
