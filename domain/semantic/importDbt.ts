// The transform provider: a dbt `manifest.json`. Its semantic models become one Eider model named after the dbt
// project: each semantic model a dataset (its relation is catalog.schema.table), its primary entity the key, each
// foreign entity matched to the semantic model whose primary entity it names a many_to_one relationship, its
// dimensions dimensions, and every simple metric a metric over its measure. Measures without a simple metric, other
// metric types and filters reaching another semantic model are skipped with the reason.
import { badArtifact, type DeclaredModel, type ImportSet, type Skipped } from './importSet.ts';
import { GRAINS, NAME_PATTERN, type Aggregation, type Grain } from './definitions.ts';

const DBT_FORMAT = 'a dbt manifest.json (a JSON object with semantic_models and metrics, as dbt parse writes it)';

// The manifest is untrusted JSON: every field is read as unknown and narrowed where it is used; what the model gets
// is raw definitions that the model rules decode (importSet.ts), so a field of the wrong type is refused there.
type Obj = Record<string, unknown>;
/** A semantic model the import keeps: a lowercase identifier for a name, and a relation. */
type SemanticModel = Obj & { name: string; node_relation: Obj };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `v[key]` when `v` is an object, else undefined (as `v?.[key]` reads a missing or scalar field). */
const at = (v: unknown, key: string): unknown => (isObj(v) ? v[key] : undefined);
const values = (v: unknown): Obj[] => (isObj(v) ? Object.values(v).filter(isObj) : Array.isArray(v) ? v.filter(isObj) : []);
const sortByName = (list: Obj[]) => [...list].sort((a, b) => String(a.name).localeCompare(String(b.name)));

const AGG: Record<string, Aggregation> = {
  sum: 'sum',
  count: 'count',
  count_distinct: 'count_distinct',
  average: 'avg',
  avg: 'avg',
  min: 'min',
  max: 'max',
  median: 'median',
  sum_boolean: 'sum_boolean',
};
const KEY_TYPES = new Set(['primary', 'unique', 'natural']);
const isKey = (entity: Obj) => typeof entity.type === 'string' && KEY_TYPES.has(entity.type);

const grainsFrom = (granularity: unknown): Grain[] => {
  const i = GRAINS.indexOf(String(granularity ?? 'day').toLowerCase() as Grain);
  return i < 0 ? [...GRAINS] : GRAINS.slice(i);
};

const slugOf = (s: string) => s.toLowerCase().replace(/[^a-z0-9_-]+/g, '_').replace(/^[^a-z0-9]+/, '').slice(0, 63) || 'dbt';

export function readDbtManifest(body: unknown): ImportSet {
  let doc: unknown = body;
  if (typeof body === 'string') {
    try {
      doc = JSON.parse(body);
    } catch {
      throw badArtifact('transform', DBT_FORMAT, 'the body is not JSON');
    }
  }
  if (!isObj(doc)) throw badArtifact('transform', DBT_FORMAT, 'the body is not a JSON object');
  if (!('semantic_models' in doc) || !(isObj(doc.semantic_models) || Array.isArray(doc.semantic_models))) {
    throw badArtifact('transform', DBT_FORMAT, 'it has no semantic_models');
  }
  const skipped: Skipped[] = [];
  const project = String(at(doc.metadata, 'project_name') ?? 'dbt');
  const model: DeclaredModel = {
    slug: slugOf(project),
    name: project,
    description: `Imported from the dbt project ${project}`,
    datasets: [],
    relationships: [],
    dimensions: [],
    metrics: [],
  };

  const sms = sortByName(values(doc.semantic_models)).filter((sm): sm is SemanticModel => {
    const rel = sm.node_relation;
    if (typeof sm.name !== 'string' || !NAME_PATTERN.test(sm.name)) {
      skipped.push({ item: `semantic_model ${String(sm.name)}`, reason: 'its name is not a lowercase identifier' });
      return false;
    }
    if (!isObj(rel) || !rel.alias || !rel.schema_name) {
      skipped.push({ item: `semantic_model ${sm.name}`, reason: 'it has no node_relation (alias, schema_name, database)' });
      return false;
    }
    return true;
  });
  const keyOf = (sm: Obj) => values(sm.entities).find((e) => e.type === 'primary') ?? values(sm.entities).find(isKey);
  const entityExpr = (e: Obj) => String(e.expr ?? e.name);

  // Dimension names are per semantic model in dbt and per model here: a clash is resolved dbt's way, by the
  // semantic model's name (`orders__created_at`), for every dimension that shares the name.
  const dimCount = new Map<unknown, number>();
  for (const sm of sms) for (const d of values(sm.dimensions)) dimCount.set(d.name, (dimCount.get(d.name) ?? 0) + 1);
  const dimName = (sm: SemanticModel, d: unknown) => ((dimCount.get(d) ?? 0) > 1 ? `${sm.name}__${d}` : d);

  for (const sm of sms) {
    const key = keyOf(sm);
    model.datasets.push({
      name: sm.name,
      catalog: String(sm.node_relation.database ?? ''),
      schema_name: String(sm.node_relation.schema_name),
      table_name: String(sm.node_relation.alias),
      primary_key: key ? [entityExpr(key)] : [],
      display_name: typeof sm.label === 'string' ? sm.label : sm.name,
      description: typeof sm.description === 'string' ? sm.description : '',
    });
    for (const d of values(sm.dimensions)) {
      const isTime = d.type === 'time';
      const expr = d.expr === undefined || d.expr === null || String(d.expr) === d.name ? null : String(d.expr);
      model.dimensions.push({
        name: dimName(sm, d.name),
        dataset: sm.name,
        display_name: typeof d.label === 'string' ? d.label : d.name,
        description: typeof d.description === 'string' ? d.description : '',
        kind: isTime ? 'time' : 'categorical',
        // a renamed dimension still reads its own column
        expr: expr ?? (dimName(sm, d.name) !== d.name ? `"${String(d.name).replace(/"/g, '""')}"` : null),
        ...(isTime ? { time_grains: grainsFrom(at(d.type_params, 'time_granularity')), is_default_time: at(sm.defaults, 'agg_time_dimension') === d.name } : {}),
      });
    }
  }

  for (const sm of sms) {
    for (const e of sortByName(values(sm.entities))) {
      if (e.type !== 'foreign') continue;
      const target = sms.find((other) => other !== sm && values(other.entities).some((x) => x.name === e.name && isKey(x)));
      if (!target) {
        skipped.push({ item: `entity ${sm.name}.${e.name}`, reason: `no semantic model declares ${e.name} as its primary entity` });
        continue;
      }
      model.relationships.push({
        name: `${sm.name}__${e.name}`,
        left_dataset: sm.name,
        right_dataset: target.name,
        kind: 'many_to_one',
        join_columns: [{ left: entityExpr(e), right: entityExpr(keyOf(target)!) }],
      });
    }
  }

  const measures = new Map<unknown, { sm: SemanticModel; m: Obj }>();
  for (const sm of sms) for (const m of values(sm.measures)) measures.set(m.name, { sm, m });

  for (const metric of sortByName(values(doc.metrics))) {
    const item = `metric ${String(metric.name)}`;
    if (metric.type !== 'simple') {
      skipped.push({ item, reason: `${String(metric.type)} metrics are not imported (only simple metrics)` });
      continue;
    }
    const ref = at(metric.type_params, 'measure');
    const measureName = typeof ref === 'string' ? ref : at(ref, 'name');
    const found = measures.get(measureName);
    if (!found) {
      skipped.push({ item, reason: `its measure ${String(measureName)} is not in an imported semantic model` });
      continue;
    }
    const agg = AGG[String(found.m.agg)];
    if (!agg) {
      skipped.push({ item, reason: `aggregation ${String(found.m.agg)} is not supported (${Object.keys(AGG).join(', ')})` });
      continue;
    }
    const filters = [...values(at(metric.filter, 'where_filters')), ...values(at(at(ref, 'filter'), 'where_filters'))].map((f) => String(f.where_sql_template));
    const translated = filters.map((f) => translateFilter(f, found.sm));
    const untranslatable = translated.findIndex((t) => t === null);
    if (untranslatable >= 0) {
      skipped.push({ item, reason: `its filter ${filters[untranslatable]} reaches beyond semantic model ${found.sm.name}` });
      continue;
    }
    const timeDim = found.m.agg_time_dimension ?? at(found.sm.defaults, 'agg_time_dimension');
    const expr = found.m.expr === undefined || found.m.expr === null ? found.m.name : String(found.m.expr);
    model.metrics.push({
      name: metric.name,
      dataset: found.sm.name,
      display_name: typeof metric.label === 'string' ? metric.label : metric.name,
      description: typeof metric.description === 'string' ? metric.description : '',
      agg,
      expr: agg === 'count' && expr === '1' ? null : expr,
      filter: translated.length ? translated.map((t) => `(${t})`).join(' AND ') : null,
      time_dimension: typeof timeDim === 'string' ? dimName(found.sm, timeDim) : null,
    });
  }
  return { models: [model], skipped };
}

/**
 * A where filter's Jinja references (`{{ Dimension('order__is_food') }}`, `{{ TimeDimension('order__ordered_at',
 * 'day') }}`, `{{ Entity('customer') }}`) become the columns of the metric's own semantic model; null when one names
 * something outside it (a join the filter would need before aggregation).
 */
function translateFilter(template: string, sm: Obj): string | null {
  let outside = false;
  const entities = values(sm.entities);
  const text = template.replace(/\{\{\s*(Dimension|TimeDimension|Entity)\(\s*'([^']+)'(?:\s*,\s*'[^']*')?\s*\)\s*\}\}/g, (_all, fn: string, ref: string) => {
    if (fn === 'Entity') {
      const e = entities.find((x) => x.name === ref);
      if (!e) outside = true;
      return e ? String(e.expr ?? e.name) : '';
    }
    const [entity, dim] = ref.includes('__') ? ref.split('__', 2) : [null, ref];
    const d = values(sm.dimensions).find((x) => x.name === dim);
    if (!d || (entity !== null && !entities.some((x) => x.name === entity))) {
      outside = true;
      return '';
    }
    return `(${String(d.expr ?? d.name)})`;
  });
  return outside || text.includes('{{') || text.includes('{%') ? null : text;
}
