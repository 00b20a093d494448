// The native import: a YAML document in the spec's shape, version 1. The document's frame (version, models with
// slug and name) must be right or the whole artifact is refused; each definition is then read on its own, so one
// malformed metric is skipped with its reason instead of sinking the rest.
import { Schema } from 'effect';
import { parse as parseYaml } from 'yaml';
import { SLUG_PATTERN } from '../workspaces.ts';
import { badArtifact, decodeOrReason, type ImportSet } from './importSet.ts';

const NATIVE_FORMAT =
  'a YAML document with version: 1 and models: [{slug, name, datasets: [{name, catalog, schema, table, primary_key}], ' +
  'relationships: [{name, left, right, join: [{left, right}]}], dimensions: [{name, dataset, kind, default_time, synonyms, sample_values}], ' +
  'metrics: [{name, dataset, agg, expr, filter, measured_on, synonyms, caveat}]}]';

const List = Schema.optionalKey(Schema.Array(Schema.Unknown));
const Frame = Schema.Struct({
  version: Schema.Literal(1),
  models: Schema.Array(
    Schema.Struct({
      slug: Schema.String.check(Schema.isPattern(new RegExp(SLUG_PATTERN))),
      name: Schema.optionalKey(Schema.String),
      description: Schema.optionalKey(Schema.String),
      datasets: List,
      relationships: List,
      dimensions: List,
      metrics: List,
    }),
  ),
});

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// The YAML spells some fields differently from the API (schema/table, left/right/join, default_time, measured_on);
// each definition is renamed to the API's shape and then admitted like one sent to the API.
const renames: Record<'datasets' | 'relationships' | 'dimensions' | 'metrics', Record<string, string>> = {
  datasets: { schema: 'schema_name', table: 'table_name' },
  relationships: { left: 'left_dataset', right: 'right_dataset', join: 'join_columns' },
  dimensions: { default_time: 'is_default_time' },
  metrics: { measured_on: 'time_dimension' },
};

function rename(kind: keyof typeof renames, item: unknown): unknown {
  if (!isObj(item)) return item;
  const map = renames[kind];
  return Object.fromEntries(Object.entries(item).map(([k, v]) => [map[k] ?? k, v]));
}

export function readNative(body: unknown): ImportSet {
  let doc: unknown = body;
  if (typeof body === 'string') {
    try {
      doc = parseYaml(body, { maxAliasCount: 100 });
    } catch (e) {
      throw badArtifact('native', NATIVE_FORMAT, `YAML does not parse: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (!isObj(doc)) throw badArtifact('native', NATIVE_FORMAT, 'the document is not a mapping');
  const frame = decodeOrReason(Frame, doc);
  if (!frame.ok) throw badArtifact('native', NATIVE_FORMAT, frame.reason);
  const slugs = new Set<string>();
  for (const m of frame.value.models) {
    if (slugs.has(m.slug)) throw badArtifact('native', NATIVE_FORMAT, `model ${m.slug} is declared twice`);
    slugs.add(m.slug);
  }
  return {
    models: frame.value.models.map((m) => ({
      slug: m.slug,
      name: m.name ?? m.slug,
      description: m.description ?? '',
      datasets: (m.datasets ?? []).map((x) => rename('datasets', x)),
      relationships: (m.relationships ?? []).map((x) => rename('relationships', x)),
      dimensions: (m.dimensions ?? []).map((x) => rename('dimensions', x)),
      metrics: (m.metrics ?? []).map((x) => rename('metrics', x)),
    })),
    skipped: [],
  };
}
