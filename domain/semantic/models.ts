// Semantic models and their definitions in PostgreSQL: a model row per workspace slug and one row per definition
// (its document in `spec`). Every change runs in a transaction that locks the model row first, so two writers adding
// definitions that depend on each other (a metric on a dataset being deleted) see each other's outcome.
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { isUniqueViolation } from '../../runtime/db.ts';
import { exec, rows, sql } from '../../runtime/sql.ts';
import { conflict, notFound } from '../errors.ts';
import {
  DatasetSpec,
  DimensionSpec,
  MetricSpec,
  MODEL_STATUSES,
  RelationshipSpec,
  settleDimension,
  settleMetric,
  VALIDATION_STATES,
  type Dataset,
  type DefinitionKind,
  type Dimension,
  type Metric,
  type MetricPatchInput,
  type Model,
  type ModelStatus,
  type Problem,
  type Relationship,
  type ValidationState,
} from './definitions.ts';
import { admitMetric, dependentsOf } from './rules.ts';

const ModelRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  description: Schema.String,
  status: Schema.Literals(MODEL_STATUSES),
  provider: Schema.NullOr(Schema.String),
  validation_state: Schema.Literals(VALIDATION_STATES),
  validation_problems: Schema.Array(Schema.Struct({ kind: Schema.String, name: Schema.String, message: Schema.String })),
  checked_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
  updated_at: Schema.Date,
});
type ModelRow = typeof ModelRow.Type;

const DefinitionRow = Schema.Struct({
  model_id: Schema.String,
  kind: Schema.Literals(['dataset', 'relationship', 'dimension', 'metric']),
  name: Schema.String,
  spec: Schema.Unknown,
  validation_state: Schema.Literals(VALIDATION_STATES),
});

const MODEL_COLS = sql`m.id, m.workspace_id, m.slug, m.name, m.description, m.status, m.provider, m.validation_state,
  m.validation_problems, m.checked_at, m.created_at, m.updated_at`;

const decodeWith = <S extends Schema.Codec<unknown, unknown>>(schema: S) => Schema.decodeUnknownSync(schema);
const decodeDataset = decodeWith(DatasetSpec);
const decodeRelationship = decodeWith(RelationshipSpec);
const decodeDimension = decodeWith(DimensionSpec);
const decodeMetric = decodeWith(MetricSpec);

function assemble(m: ModelRow, defs: ReadonlyArray<typeof DefinitionRow.Type>): Model {
  const model: Model = {
    id: m.id,
    workspace_id: m.workspace_id,
    slug: m.slug,
    name: m.name,
    description: m.description,
    status: m.status,
    provider: m.provider,
    validation: { state: m.validation_state, checked_at: m.checked_at?.toISOString() ?? null, problems: m.validation_problems as Problem[] },
    datasets: [],
    relationships: [],
    dimensions: [],
    metrics: [],
    created_at: m.created_at.toISOString(),
    updated_at: m.updated_at.toISOString(),
  };
  for (const d of defs) {
    if (d.model_id !== m.id) continue;
    const state = { validation_state: d.validation_state };
    if (d.kind === 'dataset') model.datasets.push({ ...(decodeDataset(d.spec) as Dataset), ...state });
    else if (d.kind === 'relationship') {
      const r = decodeRelationship(d.spec);
      model.relationships.push({ ...r, kind: (r.kind ?? 'many_to_one') as Relationship['kind'], join_columns: [...r.join_columns], ...state });
    } else if (d.kind === 'dimension') model.dimensions.push({ ...settleDimension(decodeDimension(d.spec)), ...state });
    else model.metrics.push({ ...settleMetric(decodeMetric(d.spec)), ...state });
  }
  return model;
}

async function load(q: Queryable, where: ReturnType<typeof sql>): Promise<Model[]> {
  const models = await rows(q, ModelRow, sql`select ${MODEL_COLS} from semantic_models m where ${where} order by m.slug`);
  if (models.length === 0) return [];
  const defs = await rows(
    q,
    DefinitionRow,
    sql`select model_id, kind, name, spec, validation_state from semantic_definitions
         where model_id = any(${models.map((m) => m.id)}::uuid[]) order by name`,
  );
  return models.map((m) => assemble(m, defs));
}

export async function listModels(q: Queryable, workspaceId: string, statuses: readonly ModelStatus[] = []): Promise<Model[]> {
  const byStatus = statuses.length ? sql` and m.status = any(${[...statuses]}::text[])` : sql``;
  return load(q, sql`m.workspace_id = ${workspaceId}${byStatus}`);
}

export async function findModel(q: Queryable, workspaceId: string, slug: string): Promise<Model | undefined> {
  return (await load(q, sql`m.workspace_id = ${workspaceId} and m.slug = ${slug}`))[0];
}

export async function getModel(q: Queryable, workspaceId: string, slug: string): Promise<Model> {
  const m = await findModel(q, workspaceId, slug);
  if (!m) throw notFound('semantic model');
  return m;
}

/** The model locked for a change, inside `tx`. */
async function lockModel(tx: Queryable, workspaceId: string, slug: string): Promise<Model> {
  await exec(tx, sql`select id from semantic_models where workspace_id = ${workspaceId} and slug = ${slug} for update`);
  return getModel(tx, workspaceId, slug);
}

/** Imported models change only by importing again (spec: 409 when editing an imported semantic model). */
function assertEditable(m: Model) {
  if (m.provider !== null) {
    throw conflict(`model ${m.slug} was imported by provider ${m.provider}: change it by importing again`, 'model_imported', { provider: m.provider });
  }
}

export async function createModel(
  q: Queryable,
  workspaceId: string,
  input: { slug: string; name: string; description?: string; provider?: string | null; createdBy: string | null },
): Promise<string> {
  try {
    const [row] = await exec(
      q,
      sql`insert into semantic_models (workspace_id, slug, name, description, provider, created_by)
          values (${workspaceId}, ${input.slug}, ${input.name}, ${input.description ?? ''}, ${input.provider ?? null}, ${input.createdBy})
          returning id`,
    );
    return String(row.id);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`a model with slug ${input.slug} already exists`, 'conflict', { slug: input.slug });
    throw e;
  }
}

export async function updateModel(db: Db, workspaceId: string, slug: string, patch: { name?: string; description?: string }): Promise<void> {
  await db.tx(async (tx) => {
    const m = await lockModel(tx, workspaceId, slug);
    assertEditable(m);
    await exec(
      tx,
      sql`update semantic_models set name = ${patch.name ?? m.name}, description = ${patch.description ?? m.description}, updated_at = now()
           where id = ${m.id}`,
    );
  });
}

export async function deleteModel(q: Queryable, workspaceId: string, slug: string): Promise<void> {
  const gone = await exec(q, sql`delete from semantic_models where workspace_id = ${workspaceId} and slug = ${slug} returning id`);
  if (!gone.length) throw notFound('semantic model');
}

export async function setStatus(q: Queryable, modelId: string, status: ModelStatus): Promise<void> {
  await exec(q, sql`update semantic_models set status = ${status}, updated_at = now() where id = ${modelId}`);
}

/** A definition added or changed: the model's last validation no longer describes it. */
async function touch(tx: Queryable, modelId: string) {
  await exec(tx, sql`update semantic_models set updated_at = now(), validation_state = 'unchecked' where id = ${modelId}`);
}

async function insertDefinition(tx: Queryable, modelId: string, kind: DefinitionKind, spec: Dataset | Relationship | Dimension | Metric) {
  try {
    await exec(tx, sql`insert into semantic_definitions (model_id, kind, name, spec) values (${modelId}, ${kind}, ${spec.name}, ${JSON.stringify(spec)}::jsonb)`);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`a ${kind} named ${spec.name} already exists in this model`, 'conflict', { kind, name: spec.name });
    throw e;
  }
}

/**
 * Adds one definition after `admit` checked it against the locked model (names, references, expressions).
 * `admit` may also refuse for reasons outside the model (catalog grants for a dataset).
 */
export async function addDefinition<T extends Dataset | Relationship | Dimension | Metric>(
  db: Db,
  workspaceId: string,
  slug: string,
  kind: DefinitionKind,
  admit: (m: Model) => Promise<T> | T,
): Promise<T> {
  return db.tx(async (tx) => {
    const m = await lockModel(tx, workspaceId, slug);
    assertEditable(m);
    const spec = await admit(m);
    await insertDefinition(tx, m.id, kind, spec);
    await touch(tx, m.id);
    return spec;
  });
}

/** PATCH of a metric: the merged metric is admitted again, and its validation resets to unchecked. */
export async function patchMetric(db: Db, workspaceId: string, slug: string, name: string, patch: MetricPatchInput): Promise<Metric> {
  return db.tx(async (tx) => {
    const m = await lockModel(tx, workspaceId, slug);
    assertEditable(m);
    const current = m.metrics.find((x) => x.name === name);
    if (!current) throw notFound('metric');
    const { validation_state: _v, ...base } = current;
    const merged = await admitMetric(m, { ...base, ...patch }, { replacing: name });
    await exec(
      tx,
      sql`update semantic_definitions set spec = ${JSON.stringify(merged)}::jsonb, validation_state = 'unchecked', updated_at = now()
           where model_id = ${m.id} and kind = 'metric' and name = ${name}`,
    );
    await touch(tx, m.id);
    return merged;
  });
}

/** Removes a definition; a dataset still bound, or a dimension a metric is measured on, is 409 naming its dependents. */
export async function deleteDefinition(db: Db, workspaceId: string, slug: string, kind: DefinitionKind, name: string): Promise<void> {
  await db.tx(async (tx) => {
    const m = await lockModel(tx, workspaceId, slug);
    assertEditable(m);
    if (kind === 'dataset' || kind === 'dimension') {
      const dependents = dependentsOf(m, kind, name);
      if (dependents.length) {
        throw conflict(`${kind} ${name} is used by ${dependents.join(', ')}`, `${kind}_in_use`, { dependents });
      }
    }
    const gone = await exec(tx, sql`delete from semantic_definitions where model_id = ${m.id} and kind = ${kind} and name = ${name} returning name`);
    if (!gone.length) throw notFound(kind);
    await touch(tx, m.id);
  });
}

/** The outcome of a validation: per definition and for the model, with the problems found. */
export async function recordValidation(
  q: Queryable,
  modelId: string,
  outcome: { state: ValidationState; problems: Problem[]; perDefinition: Array<{ kind: DefinitionKind; name: string; state: ValidationState }> },
): Promise<void> {
  await exec(
    q,
    sql`update semantic_models set validation_state = ${outcome.state}, validation_problems = ${JSON.stringify(outcome.problems)}::jsonb,
               checked_at = now() where id = ${modelId}`,
  );
  for (const d of outcome.perDefinition) {
    await exec(
      q,
      sql`update semantic_definitions set validation_state = ${d.state} where model_id = ${modelId} and kind = ${d.kind} and name = ${d.name}`,
    );
  }
}

/** Replaces every definition of a model (an import); the model's validation resets. */
export async function replaceDefinitions(
  tx: Queryable,
  modelId: string,
  defs: { datasets: readonly Dataset[]; relationships: readonly Relationship[]; dimensions: readonly Dimension[]; metrics: readonly Metric[] },
  fields: { name: string; description: string; status: ModelStatus },
): Promise<void> {
  await exec(tx, sql`delete from semantic_definitions where model_id = ${modelId}`);
  for (const d of defs.datasets) await insertDefinition(tx, modelId, 'dataset', d);
  for (const r of defs.relationships) await insertDefinition(tx, modelId, 'relationship', r);
  for (const d of defs.dimensions) await insertDefinition(tx, modelId, 'dimension', d);
  for (const x of defs.metrics) await insertDefinition(tx, modelId, 'metric', x);
  await exec(
    tx,
    sql`update semantic_models set name = ${fields.name}, description = ${fields.description}, status = ${fields.status},
           validation_state = 'unchecked', validation_problems = '[]'::jsonb, checked_at = null, updated_at = now()
         where id = ${modelId}`,
  );
}

/** Datasets of a workspace's models that bind one table (the table's semantic route, table drops). */
export async function modelsBindingTable(q: Queryable, workspaceId: string, catalog: string, schema: string, table: string): Promise<Model[]> {
  return load(
    q,
    sql`m.workspace_id = ${workspaceId} and exists (
          select 1 from semantic_definitions d where d.model_id = m.id and d.kind = 'dataset'
             and d.spec->>'catalog' = ${catalog} and d.spec->>'schema_name' = ${schema} and d.spec->>'table_name' = ${table})`,
  );
}

/** A table was dropped: every dataset binding it, and its model, is broken until the table is back. */
export async function markTableDropped(q: Queryable, catalog: string, schema: string, table: string): Promise<void> {
  const problem = (name: string) => ({ kind: 'dataset', name, message: `table ${catalog}.${schema}.${table} was dropped` });
  const hit = await rows(
    q,
    Schema.Struct({ model_id: Schema.String, name: Schema.String }),
    sql`update semantic_definitions set validation_state = 'broken'
         where kind = 'dataset' and spec->>'catalog' = ${catalog} and spec->>'schema_name' = ${schema} and spec->>'table_name' = ${table}
         returning model_id, name`,
  );
  for (const h of hit) {
    await exec(
      q,
      sql`update semantic_models set validation_state = 'broken', checked_at = now(),
             validation_problems = validation_problems || ${JSON.stringify([problem(h.name)])}::jsonb
           where id = ${h.model_id}`,
    );
  }
}
