// Validation resolves every binding of a model against the live catalog: each dataset's table exists (in a catalog
// attached to the workspace) and has its key columns, each relationship's join columns exist on both sides, each
// dimension's and metric's columns exist, a time dimension is a date or timestamp, and an aggregation fits its
// column's type. Each definition gets its own state; the model is broken when any is.
import type { Queryable } from '../../runtime/db.ts';
import { CatalogServiceError, type CatalogClient } from '../../runtime/catalogClient.ts';
import { icebergToDuckdb, TypeMappingError } from '../../iceberg/duckdbTypes.ts';
import { currentSchema, type TableMetadata } from '../../iceberg/metadata.ts';
import { listWorkspaceCatalogs } from '../catalogs/attachments.ts';
import { warehouseName } from '../catalogs/warehouses.ts';
import { NUMERIC_AGGREGATIONS, type DefinitionKind, type Model, type Problem, type ValidationState } from './definitions.ts';
import { checkExpression } from './expressions.ts';
import { reach } from './joins.ts';
import { AppError } from '../errors.ts';

export interface ValidationOutcome {
  state: ValidationState;
  problems: Problem[];
  perDefinition: Array<{ kind: DefinitionKind; name: string; state: ValidationState }>;
}

/** Column name (folded: DuckDB resolves unquoted names case-insensitively) → DuckDB type. */
type Columns = Map<string, string>;

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\))$/;
const TEMPORAL = /^(DATE|TIMESTAMP|TIMESTAMP_NS|TIMESTAMP_MS|TIMESTAMP_S|TIMESTAMP WITH TIME ZONE)$/;

export async function validateModel(q: Queryable, client: CatalogClient, model: Model): Promise<ValidationOutcome> {
  const problems: Problem[] = [];
  const perDefinition: ValidationOutcome['perDefinition'] = [];
  const attached = new Map((await listWorkspaceCatalogs(q, model.workspace_id)).map((c) => [c.slug.toLowerCase(), c]));
  const tables = new Map<string, Columns | null>();

  for (const ds of model.datasets) {
    const found: string[] = [];
    const c = attached.get(ds.catalog.toLowerCase());
    let columns: Columns | null = null;
    if (!c) found.push(`catalog ${ds.catalog} is not attached to this workspace`);
    else {
      try {
        const { metadata } = await client.loadTable<TableMetadata>(warehouseName(c), [ds.schema_name], ds.table_name);
        columns = new Map(currentSchema(metadata).fields.map((f) => [f.name.toLowerCase(), typeName(f.type)]));
      } catch (e) {
        if (e instanceof CatalogServiceError && e.status === 404) found.push(`table ${ds.catalog}.${ds.schema_name}.${ds.table_name} does not exist`);
        else if (e instanceof CatalogServiceError) found.push(`the catalog could not load ${ds.catalog}.${ds.schema_name}.${ds.table_name}: ${e.message}`);
        else throw new AppError(503, 'catalog_unavailable', 'the catalog service is not reachable: validation needs it');
      }
    }
    if (columns) for (const k of ds.primary_key) if (!columns.has(k.toLowerCase())) found.push(`primary key column ${k} does not exist`);
    tables.set(ds.name, columns);
    note('dataset', ds.name, found);
  }

  for (const r of model.relationships) {
    const found: string[] = [];
    const left = tables.get(r.left_dataset);
    const right = tables.get(r.right_dataset);
    if (left === undefined || right === undefined) found.push('a dataset it joins is missing from the model');
    else if (left === null || right === null) found.push(`dataset ${left === null ? r.left_dataset : r.right_dataset} is broken`);
    else {
      for (const j of r.join_columns) {
        if (!left.has(j.left.toLowerCase())) found.push(`join column ${r.left_dataset}.${j.left} does not exist`);
        if (!right.has(j.right.toLowerCase())) found.push(`join column ${r.right_dataset}.${j.right} does not exist`);
      }
    }
    const rightDs = model.datasets.find((d) => d.name === r.right_dataset);
    if (rightDs && rightDs.primary_key.length === 0) found.push(`dataset ${r.right_dataset} declares no primary key`);
    note('relationship', r.name, found);
  }

  for (const d of model.dimensions) {
    const found: string[] = [];
    const cols = tables.get(d.dataset);
    if (cols === undefined) found.push(`dataset ${d.dataset} is missing from the model`);
    else if (cols === null) found.push(`dataset ${d.dataset} is broken`);
    else {
      const read = await columnsRead(d.expr ?? null, d.name, found);
      for (const c of read) if (!cols.has(c.toLowerCase())) found.push(`column ${d.dataset}.${c} does not exist`);
      if (d.kind === 'time' && d.expr === null && cols.has(d.name.toLowerCase()) && !TEMPORAL.test(cols.get(d.name.toLowerCase())!)) {
        found.push(`a time dimension needs a date or timestamp column; ${d.name} is ${cols.get(d.name.toLowerCase())}`);
      }
    }
    note('dimension', d.name, found);
  }

  for (const m of model.metrics) {
    const found: string[] = [];
    const cols = tables.get(m.dataset);
    if (cols === undefined) found.push(`dataset ${m.dataset} is missing from the model`);
    else if (cols === null) found.push(`dataset ${m.dataset} is broken`);
    else {
      const read = [...(await columnsRead(m.expr, null, found)), ...(await columnsRead(m.filter, null, found))];
      for (const c of read) if (!cols.has(c.toLowerCase())) found.push(`column ${m.dataset}.${c} does not exist`);
      // The type of a bare column is known; a computed expression's is the engine's to judge when it runs.
      const bare = m.expr !== null && /^"?[A-Za-z_][A-Za-z0-9_]*"?$/.test(m.expr.trim()) ? m.expr.trim().replace(/"/g, '').toLowerCase() : null;
      if (bare && cols.has(bare) && NUMERIC_AGGREGATIONS.has(m.agg) && !NUMERIC.test(cols.get(bare)!)) {
        found.push(`${m.agg} needs a number; column ${bare} is ${cols.get(bare)}`);
      }
      if (bare && cols.has(bare) && m.agg === 'sum_boolean' && cols.get(bare) !== 'BOOLEAN') found.push(`sum_boolean needs a boolean; column ${bare} is ${cols.get(bare)}`);
    }
    if (m.time_dimension !== null) {
      const td = model.dimensions.find((d) => d.name === m.time_dimension);
      if (!td || td.kind !== 'time') found.push(`time dimension ${m.time_dimension} is not a time dimension of this model`);
      else if (reach(model, m.dataset, td.dataset).kind !== 'ok') found.push(`time dimension ${td.name} is not reachable from ${m.dataset}`);
    }
    note('metric', m.name, found);
  }

  return { state: problems.length ? 'broken' : 'ok', problems, perDefinition };

  function note(kind: DefinitionKind, name: string, found: string[]) {
    for (const message of found) problems.push({ kind, name, message });
    perDefinition.push({ kind, name, state: found.length ? 'broken' : 'ok' });
  }
}

function typeName(t: Parameters<typeof icebergToDuckdb>[0]): string {
  try {
    return icebergToDuckdb(t);
  } catch (e) {
    if (e instanceof TypeMappingError) return 'UNKNOWN';
    throw e;
  }
}

/** The columns an expression reads; with no expression, the column named like the definition (if any). */
async function columnsRead(expr: string | null, implicit: string | null, found: string[]): Promise<string[]> {
  if (expr === null) return implicit ? [implicit] : [];
  try {
    return (await checkExpression(expr, 'expr')).columns;
  } catch (e) {
    if (e instanceof AppError) {
      found.push(e.message);
      return [];
    }
    throw e;
  }
}
