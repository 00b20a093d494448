// The semantic layer's vocabulary: what a dataset, relationship, dimension and metric are, as effect Schemas that
// validate requests and decode stored documents alike, so a definition has one shape from the API to the database.
import { Effect, Schema } from 'effect';

export const GRAINS = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type Grain = (typeof GRAINS)[number];

/** Aggregations a metric may use; the key is what a definition says, the value how the compiler spells it. */
export const AGGREGATIONS = ['sum', 'count', 'count_distinct', 'avg', 'min', 'max', 'median', 'sum_boolean'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];
/** Aggregations that only make sense over numbers (checked against the live column type when the expression is a column). */
export const NUMERIC_AGGREGATIONS: ReadonlySet<Aggregation> = new Set(['sum', 'avg', 'median']);

export const RELATIONSHIP_KINDS = ['many_to_one', 'one_to_one'] as const;
type RelationshipKind = (typeof RELATIONSHIP_KINDS)[number];

export const MODEL_STATUSES = ['draft', 'published', 'deprecated'] as const;
export type ModelStatus = (typeof MODEL_STATUSES)[number];

export const VALIDATION_STATES = ['ok', 'broken', 'unchecked'] as const;
export type ValidationState = (typeof VALIDATION_STATES)[number];

export type DefinitionKind = 'dataset' | 'relationship' | 'dimension' | 'metric';

/** Definition names become SQL column aliases and path segments: lowercase identifiers. */
export const NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
const DefinitionName = Schema.String.check(Schema.isPattern(NAME_PATTERN));
const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max));
// An expression or predicate over one dataset's columns (checked by expressions.ts before it is stored).
const Expression = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4000));
const ExternalName = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255));
const SampleValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean]);

export const DatasetSpec = Schema.Struct({
  name: DefinitionName,
  catalog: ExternalName,
  schema_name: ExternalName,
  table_name: ExternalName,
  // Optional (none when left out): only a dataset on the unique side of a relationship needs one (rules.ts).
  primary_key: Schema.Array(ExternalName).check(Schema.isMaxLength(32)).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  display_name: Schema.optionalKey(Text(200)),
  description: Schema.optionalKey(Text(4000)),
});
export type Dataset = typeof DatasetSpec.Type;

const JoinColumn = Schema.Struct({ left: ExternalName, right: ExternalName });
export const RelationshipSpec = Schema.Struct({
  name: DefinitionName,
  left_dataset: DefinitionName,
  right_dataset: DefinitionName,
  // a String so that one_to_many gets a sentence of its own instead of a schema mismatch (see models.ts)
  kind: Schema.optionalKey(Schema.String),
  join_columns: Schema.Array(JoinColumn).check(Schema.isMinLength(1), Schema.isMaxLength(16)),
});
export type RelationshipInput = typeof RelationshipSpec.Type;
export interface Relationship extends RelationshipInput {
  kind: RelationshipKind;
}

export const DimensionSpec = Schema.Struct({
  name: DefinitionName,
  dataset: DefinitionName,
  display_name: Schema.optionalKey(Text(200)),
  description: Schema.optionalKey(Text(4000)),
  kind: Schema.optionalKey(Schema.Literals(['categorical', 'time'])),
  /** SQL over the dataset's columns; absent means the column named like the dimension */
  expr: Schema.optionalKey(Schema.NullOr(Expression)),
  time_grains: Schema.optionalKey(Schema.Array(Schema.Literals(GRAINS)).check(Schema.isMaxLength(5))),
  is_default_time: Schema.optionalKey(Schema.Boolean),
  synonyms: Schema.optionalKey(Schema.Array(Text(200)).check(Schema.isMaxLength(50))),
  sample_values: Schema.optionalKey(Schema.Array(SampleValue).check(Schema.isMaxLength(50))),
});
export type DimensionInput = typeof DimensionSpec.Type;

export const MetricSpec = Schema.Struct({
  name: DefinitionName,
  dataset: DefinitionName,
  display_name: Schema.optionalKey(Text(200)),
  description: Schema.optionalKey(Text(4000)),
  agg: Schema.Literals(AGGREGATIONS),
  /** SQL over the dataset's columns, aggregated by `agg`; absent only for count (count of rows) */
  expr: Schema.optionalKey(Schema.NullOr(Expression)),
  /** a predicate over the dataset's columns, applied before aggregation on every computation */
  filter: Schema.optionalKey(Schema.NullOr(Expression)),
  /** the time dimension ranges and grains apply to; absent means the dataset's default time dimension */
  time_dimension: Schema.optionalKey(Schema.NullOr(DefinitionName)),
  synonyms: Schema.optionalKey(Schema.Array(Text(200)).check(Schema.isMaxLength(50))),
  caveat: Schema.optionalKey(Schema.NullOr(Text(4000))),
});
export type MetricInput = typeof MetricSpec.Type;

/** PATCH of a metric: the spec's fields but its identity (name, dataset); absent fields stay, null clears the
 *  nullable ones. */
const { name: _name, dataset: _dataset, agg, ...patchable } = MetricSpec.fields;
export const MetricPatch = Schema.Struct({ ...patchable, agg: Schema.optionalKey(agg) });
export type MetricPatchInput = typeof MetricPatch.Type;

/** A dimension as stored: every optional field settled. */
export interface Dimension {
  name: string;
  dataset: string;
  display_name: string;
  description: string;
  kind: 'categorical' | 'time';
  expr: string | null;
  time_grains: Grain[];
  is_default_time: boolean;
  synonyms: string[];
  sample_values: Array<string | number | boolean>;
}

/** A metric as stored: every optional field settled. */
export interface Metric {
  name: string;
  dataset: string;
  display_name: string;
  description: string;
  agg: Aggregation;
  expr: string | null;
  filter: string | null;
  time_dimension: string | null;
  synonyms: string[];
  caveat: string | null;
}

export interface Problem {
  kind: DefinitionKind | 'model';
  name: string;
  message: string;
}

export interface Model {
  id: string;
  workspace_id: string;
  slug: string;
  name: string;
  description: string;
  status: ModelStatus;
  provider: string | null;
  validation: { state: ValidationState; checked_at: string | null; problems: Problem[] };
  datasets: Array<Dataset & { validation_state: ValidationState }>;
  relationships: Array<Relationship & { validation_state: ValidationState }>;
  dimensions: Array<Dimension & { validation_state: ValidationState }>;
  metrics: Array<Metric & { validation_state: ValidationState }>;
  created_at: string;
  updated_at: string;
}

export const settleDimension = (d: DimensionInput): Dimension => {
  const kind = d.kind ?? 'categorical';
  return {
    name: d.name,
    dataset: d.dataset,
    display_name: d.display_name ?? d.name,
    description: d.description ?? '',
    kind,
    expr: d.expr ?? null,
    time_grains: kind === 'time' ? [...(d.time_grains ?? GRAINS)].sort((a, b) => GRAINS.indexOf(a) - GRAINS.indexOf(b)) : [],
    is_default_time: kind === 'time' && (d.is_default_time ?? false),
    synonyms: [...(d.synonyms ?? [])],
    sample_values: [...(d.sample_values ?? [])],
  };
};

export const settleMetric = (m: MetricInput): Metric => ({
  name: m.name,
  dataset: m.dataset,
  display_name: m.display_name ?? m.name,
  description: m.description ?? '',
  agg: m.agg,
  expr: m.expr ?? null,
  filter: m.filter ?? null,
  time_dimension: m.time_dimension ?? null,
  synonyms: [...(m.synonyms ?? [])],
  caveat: m.caveat ?? null,
});

