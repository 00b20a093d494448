// The semantic layer under /workspaces/{workspace}/semantic: models and their definitions, validation and the
// model lifecycle, compile, search and imports. Roles follow the spec's table; every model route answers 404 for
// a model binding a table the workspace cannot read, as for one that does not exist.
import { Schema } from 'effect';
import { asArray, repeatable, route } from '../route.ts';
import { catalogClientOf } from '../catalogService.ts';
import { SLUG_PATTERN } from '../../domain/workspaces.ts';
import {
  AGGREGATIONS,
  DatasetSpec,
  DimensionSpec,
  GRAINS,
  MetricPatch,
  MetricSpec,
  MODEL_STATUSES,
  RelationshipSpec,
  VALIDATION_STATES,
  type Model,
} from '../../domain/semantic/definitions.ts';
import * as models from '../../domain/semantic/models.ts';
import * as service from '../../domain/semantic/service.ts';
import { admitDataset, admitDimension, admitMetric, admitRelationship } from '../../domain/semantic/rules.ts';
import { requireReadable, tableReach } from '../../domain/semantic/access.ts';
import { FILTER_OPS, TIME_RANGE_KINDS } from '../../domain/semantic/compiler.ts';
import { searchModels } from '../../domain/semantic/search.ts';
import { IMPORT_PROVIDERS, importModels, removeImports, type ImportReport } from '../../domain/semantic/imports.ts';
import type { Queryable } from '../../runtime/db.ts';
import { successRow } from '../audit.ts';
import { resolveAttachedCatalog } from '../../domain/catalogs/attachments.ts';
import { checkExpression } from '../../domain/semantic/expressions.ts';

const BASE = '/api/workspaces/:workspace/semantic';
const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200));
const ModelSlug = Schema.String.check(Schema.isPattern(new RegExp(SLUG_PATTERN)));
const State = Schema.Literals(VALIDATION_STATES);
const Strings = Schema.Array(Schema.String);

const DatasetOut = Schema.Struct({
  name: Schema.String,
  catalog: Schema.String,
  schema_name: Schema.String,
  table_name: Schema.String,
  primary_key: Strings,
  display_name: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  validation_state: State,
});
const RelationshipOut = Schema.Struct({
  name: Schema.String,
  left_dataset: Schema.String,
  right_dataset: Schema.String,
  kind: Schema.Literals(['many_to_one', 'one_to_one']),
  join_columns: Schema.Array(Schema.Struct({ left: Schema.String, right: Schema.String })),
  validation_state: State,
});
const DimensionFields = {
  name: Schema.String,
  dataset: Schema.String,
  display_name: Schema.String,
  description: Schema.String,
  kind: Schema.Literals(['categorical', 'time']),
  expr: Schema.NullOr(Schema.String),
  time_grains: Schema.Array(Schema.Literals(GRAINS)),
  is_default_time: Schema.Boolean,
  synonyms: Strings,
  sample_values: Schema.Array(Schema.Union([Schema.String, Schema.Finite, Schema.Boolean])),
  validation_state: State,
};
const DimensionOut = Schema.Struct(DimensionFields);
const MetricOut = Schema.Struct({
  name: Schema.String,
  dataset: Schema.String,
  display_name: Schema.String,
  description: Schema.String,
  agg: Schema.Literals(AGGREGATIONS),
  expr: Schema.NullOr(Schema.String),
  filter: Schema.NullOr(Schema.String),
  time_dimension: Schema.NullOr(Schema.String),
  synonyms: Strings,
  caveat: Schema.NullOr(Schema.String),
  validation_state: State,
});
const ModelOut = Schema.Struct({
  slug: Schema.String,
  name: Schema.String,
  description: Schema.String,
  status: Schema.Literals(MODEL_STATUSES),
  imported: Schema.Boolean,
  provider: Schema.NullOr(Schema.String),
  validation: Schema.Struct({
    state: State,
    checked_at: Schema.NullOr(Schema.String),
    problems: Schema.Array(Schema.Struct({ kind: Schema.String, name: Schema.String, message: Schema.String })),
  }),
  datasets: Schema.Array(DatasetOut),
  relationships: Schema.Array(RelationshipOut),
  dimensions: Schema.Array(DimensionOut),
  metrics: Schema.Array(MetricOut),
  created_at: Schema.String,
  updated_at: Schema.String,
});
const toOut = (m: Model) => ({ ...m, imported: m.provider !== null });

const WsParams = Schema.Struct({ workspace: Schema.String });
const ModelParams = Schema.Struct({ workspace: Schema.String, model: Schema.String });
const defParams = <K extends string>(key: K) => Schema.Struct({ workspace: Schema.String, model: Schema.String, [key]: Schema.String } as { workspace: typeof Schema.String; model: typeof Schema.String } & Record<K, typeof Schema.String>);

const Filter = Schema.Struct({
  dimension: Schema.String,
  op: Schema.Literals(FILTER_OPS),
  value: Schema.optionalKey(Schema.Unknown),
});
const CompileBody = Schema.Struct({
  model: Schema.String,
  metrics: Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(50)),
  dimensions: Schema.optionalKey(Schema.Array(Schema.String).check(Schema.isMaxLength(20))),
  grain: Schema.optionalKey(Schema.Literals(GRAINS)),
  time_range: Schema.optionalKey(
    Schema.Struct({
      kind: Schema.Literals(TIME_RANGE_KINDS),
      grain: Schema.optionalKey(Schema.Literals(GRAINS)),
      n: Schema.optionalKey(Schema.Finite),
      start: Schema.optionalKey(Schema.String),
      end: Schema.optionalKey(Schema.String),
    }),
  ),
  filters: Schema.optionalKey(Schema.Array(Filter).check(Schema.isMaxLength(50))),
  order_by: Schema.optionalKey(
    Schema.Array(Schema.Struct({ field: Schema.String, direction: Schema.optionalKey(Schema.Literals(['asc', 'desc'])) })).check(Schema.isMaxLength(20)),
  ),
  limit: Schema.optionalKey(Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1_000_000 }))),
});
const CompiledOut = Schema.Struct({ sql: Schema.String, model: Schema.String, metrics: Strings, dimensions: Strings });

const SearchItem = Schema.Struct({
  kind: Schema.Literals(['model', 'dataset', 'dimension', 'metric']),
  model: Schema.String,
  name: Schema.String,
  display_name: Schema.String,
  description: Schema.String,
  validation_state: State,
  model_status: Schema.Literals(MODEL_STATUSES),
});
const SearchOut = Schema.Struct({
  items: Schema.Array(SearchItem),
  ambiguous: Schema.Array(Schema.Struct({ kind: Schema.String, name: Schema.String, models: Strings })),
  broken: Schema.Array(Schema.Struct({ kind: Schema.String, model: Schema.String, name: Schema.String })),
  has_more: Schema.Boolean,
});
const ImportOut = Schema.Struct({
  provider: Schema.String,
  created: Strings,
  updated: Strings,
  retired: Strings,
  skipped: Schema.Array(Schema.Struct({ item: Schema.String, reason: Schema.String })),
});

const TAGS = ['semantic'];

const modelRoute = {
  tags: TAGS,
  params: ModelParams,
} as const;

export const semanticRoutes = [
  route({
    method: 'GET',
    path: `${BASE}/models`,
    operationId: 'list_semantic_models',
    summary: 'Semantic models of the workspace (those binding a table the workspace cannot read are absent)',
    tags: TAGS,
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    query: Schema.Struct({ status: repeatable(Schema.Literals(MODEL_STATUSES)) }),
    responses: { 200: Schema.Array(ModelOut), 404: null, 422: null },
    handler: async ({ ctx, ws, query }) => ({ status: 200, body: (await service.visibleModels(ctx.db, ws!.workspace.id, asArray(query.status))).map(toOut) }),
  }),
  route({
    method: 'POST',
    path: `${BASE}/models`,
    operationId: 'create_semantic_model',
    summary: 'Create a model (a draft); 409 when the slug is taken',
    tags: TAGS,
    access: { kind: 'workspace', role: 'writer' },
    params: WsParams,
    body: Schema.Struct({ slug: ModelSlug, name: Name, description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4000))) }),
    responses: { 201: ModelOut, 404: null, 409: null, 422: null },
    handler: async ({ ctx, ws, principal, body }) => {
      await models.createModel(ctx.db, ws!.workspace.id, { ...body, createdBy: principal.user.id });
      return { status: 201, body: toOut(await models.getModel(ctx.db, ws!.workspace.id, body.slug)) };
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/models/:model`,
    operationId: 'get_semantic_model',
    summary: 'A model with its datasets, relationships, dimensions and metrics',
    ...modelRoute,
    access: { kind: 'workspace', role: 'reader' },
    responses: { 200: ModelOut, 404: null },
    handler: async ({ ctx, ws, params }) => ({ status: 200, body: toOut(await service.readableModel(ctx.db, ws!.workspace.id, params.model)) }),
  }),
  route({
    method: 'PATCH',
    path: `${BASE}/models/:model`,
    operationId: 'update_semantic_model',
    summary: 'Rename or re-describe a model; 409 model_imported on an imported model',
    ...modelRoute,
    access: { kind: 'workspace', role: 'writer' },
    body: Schema.Struct({ name: Schema.optionalKey(Name), description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4000))) }),
    responses: { 200: ModelOut, 404: null, 409: null, 422: null },
    handler: async ({ ctx, ws, params, body }) => {
      await service.readableModel(ctx.db, ws!.workspace.id, params.model);
      await models.updateModel(ctx.db, ws!.workspace.id, params.model, body);
      return { status: 200, body: toOut(await models.getModel(ctx.db, ws!.workspace.id, params.model)) };
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/models/:model`,
    operationId: 'delete_semantic_model',
    summary: 'Delete a model and its definitions',
    ...modelRoute,
    access: { kind: 'workspace', role: 'owner' },
    responses: { 204: null, 404: null },
    handler: async ({ ctx, ws, params }) => {
      await service.readableModel(ctx.db, ws!.workspace.id, params.model);
      await models.deleteModel(ctx.db, ws!.workspace.id, params.model);
      return { status: 204 };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/models/:model/publish`,
    operationId: 'publish_semantic_model',
    summary: 'Validate against the live catalog, then publish; 422 model_broken naming the problems',
    ...modelRoute,
    access: { kind: 'workspace', role: 'owner' },
    responses: { 200: ModelOut, 404: null, 409: null, 422: null, 503: null },
    handler: async ({ ctx, ws, params }) => ({ status: 200, body: toOut(await service.publish(ctx.db, catalogClientOf(ctx), ws!.workspace.id, params.model)) }),
  }),
  route({
    method: 'POST',
    path: `${BASE}/models/:model/deprecate`,
    operationId: 'deprecate_semantic_model',
    summary: 'Retire a published model: still readable, excluded from new answers',
    ...modelRoute,
    access: { kind: 'workspace', role: 'owner' },
    responses: { 200: ModelOut, 404: null, 409: null },
    handler: async ({ ctx, ws, params }) => ({ status: 200, body: toOut(await service.deprecate(ctx.db, ws!.workspace.id, params.model)) }),
  }),
  route({
    method: 'POST',
    path: `${BASE}/models/:model/validate`,
    operationId: 'validate_semantic_model',
    summary: 'Resolve every binding against the live catalog; the outcome is recorded per definition',
    ...modelRoute,
    access: { kind: 'workspace', role: 'writer' },
    responses: { 200: ModelOut, 404: null, 503: null },
    handler: async ({ ctx, ws, params }) => ({ status: 200, body: toOut(await service.validate(ctx.db, catalogClientOf(ctx), ws!.workspace.id, params.model)) }),
  }),
  route({
    method: 'POST',
    path: `${BASE}/models/:model/datasets`,
    operationId: 'create_semantic_dataset',
    summary: 'Bind a dataset to a table; needs read access to the table; 409 on a repeated name',
    ...modelRoute,
    access: { kind: 'workspace', role: 'writer' },
    body: DatasetSpec,
    responses: { 201: DatasetOut, 403: null, 404: null, 409: null, 422: null },
    handler: async ({ ctx, ws, params, body }) => {
      const reach = await tableReach(ctx.db, ws!.workspace.id);
      requireReadable(reach, await models.findModel(ctx.db, ws!.workspace.id, params.model));
      reach.require(body.catalog, body.schema_name, body.table_name);
      const d = await models.addDefinition(ctx.db, ws!.workspace.id, params.model, 'dataset', (m) => admitDataset(m, body));
      return { status: 201, body: { ...d, validation_state: 'unchecked' } };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/models/:model/relationships`,
    operationId: 'create_semantic_relationship',
    summary: 'Relate two datasets, left the many side (many_to_one, one_to_one; one_to_many is 422)',
    ...modelRoute,
    access: { kind: 'workspace', role: 'writer' },
    body: RelationshipSpec,
    responses: { 201: RelationshipOut, 404: null, 409: null, 422: null },
    handler: async ({ ctx, ws, params, body }) => {
      await service.readableModel(ctx.db, ws!.workspace.id, params.model);
      const r = await models.addDefinition(ctx.db, ws!.workspace.id, params.model, 'relationship', (m) => admitRelationship(m, body));
      return { status: 201, body: { ...r, validation_state: 'unchecked' } };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/models/:model/dimensions`,
    operationId: 'create_semantic_dimension',
    summary: 'Add a dimension (categorical, or time with grains); 409 on a repeated name',
    ...modelRoute,
    access: { kind: 'workspace', role: 'writer' },
    body: DimensionSpec,
    responses: { 201: DimensionOut, 404: null, 409: null, 422: null },
    handler: async ({ ctx, ws, params, body }) => {
      await service.readableModel(ctx.db, ws!.workspace.id, params.model);
      const d = await models.addDefinition(ctx.db, ws!.workspace.id, params.model, 'dimension', (m) => admitDimension(m, body));
      return { status: 201, body: { ...d, validation_state: 'unchecked' } };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/models/:model/metrics`,
    operationId: 'create_semantic_metric',
    summary: 'Add a metric (an aggregation of an expression, with an optional filter); 409 on a repeated name',
    ...modelRoute,
    access: { kind: 'workspace', role: 'writer' },
    body: MetricSpec,
    responses: { 201: MetricOut, 404: null, 409: null, 422: null },
    handler: async ({ ctx, ws, params, body }) => {
      await service.readableModel(ctx.db, ws!.workspace.id, params.model);
      const m = await models.addDefinition(ctx.db, ws!.workspace.id, params.model, 'metric', (model) => admitMetric(model, body));
      return { status: 201, body: { ...m, validation_state: 'unchecked' } };
    },
  }),
  route({
    method: 'PATCH',
    path: `${BASE}/models/:model/metrics/:metric`,
    operationId: 'update_semantic_metric',
    summary: 'Edit a metric; its validation resets to unchecked',
    tags: TAGS,
    params: defParams('metric'),
    access: { kind: 'workspace', role: 'writer' },
    body: MetricPatch,
    responses: { 200: MetricOut, 404: null, 409: null, 422: null },
    handler: async ({ ctx, ws, params, body }) => {
      await service.readableModel(ctx.db, ws!.workspace.id, params.model);
      const m = await models.patchMetric(ctx.db, ws!.workspace.id, params.model, params.metric, body);
      return { status: 200, body: { ...m, validation_state: 'unchecked' } };
    },
  }),
  ...(['metric', 'dimension', 'relationship', 'dataset'] as const).map((kind) =>
    route({
      method: 'DELETE',
      path: `${BASE}/models/:model/${kind}s/:${kind}`,
      operationId: `delete_semantic_${kind}`,
      summary:
        kind === 'dataset'
          ? 'Remove a dataset; 409 dataset_in_use with details.dependents while anything binds it'
          : kind === 'dimension'
            ? 'Remove a dimension; 409 dimension_in_use while a metric is measured on it'
            : `Remove a ${kind}`,
      tags: TAGS,
      params: defParams(kind),
      access: { kind: 'workspace', role: 'writer' },
      responses: { 204: null, 404: null, 409: null },
      handler: async ({ ctx, ws, params }) => {
        await service.readableModel(ctx.db, ws!.workspace.id, params.model);
        await models.deleteDefinition(ctx.db, ws!.workspace.id, params.model, kind, (params as Record<string, string>)[kind]);
        return { status: 204 };
      },
    }),
  ),
  route({
    method: 'GET',
    path: `${BASE}/models/:model/metrics/:metric/dimensions`,
    operationId: 'list_semantic_metric_dimensions',
    summary: 'The dimensions a metric may be grouped and filtered by, with the join path to each',
    tags: TAGS,
    params: defParams('metric'),
    access: { kind: 'workspace', role: 'reader' },
    responses: { 200: Schema.Array(Schema.Struct({ ...DimensionFields, join_path: Schema.NullOr(Schema.String) })), 404: null },
    handler: async ({ ctx, ws, params }) => ({ status: 200, body: await service.metricDimensions(ctx.db, ws!.workspace.id, params.model, params.metric) }),
  }),
  route({
    method: 'GET',
    path: `${BASE}/search`,
    operationId: 'search_semantic',
    summary: 'Search models, datasets, dimensions and metrics by name, display name, synonym and description',
    description: '`ambiguous` lists names that match in more than one model; `broken` lists matches whose last validation found problems.',
    tags: TAGS,
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    query: Schema.Struct({
      q: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
      limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 }))),
      status: repeatable(Schema.Literals(MODEL_STATUSES)),
    }),
    responses: { 200: SearchOut, 404: null, 422: null },
    handler: async ({ ctx, ws, query }) => {
      const list = await service.visibleModels(ctx.db, ws!.workspace.id, asArray(query.status));
      return { status: 200, body: searchModels(list, query.q, query.limit ?? 100) };
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/compile`,
    operationId: 'compile_semantic_query',
    summary: 'Compile a structured request into one DuckDB statement (not executed; submit it as a query)',
    description:
      'Same request, same text. 422 codes name the legal alternatives in details.alternatives: unknown_metric, unknown_dimension, ' +
      'ambiguous_join_path, no_join_path, unsupported_grain. Time ranges: last_complete and trailing take grain and n, to_date takes grain, ' +
      'absolute takes start and end (dates, end exclusive). published_only=true compiles against published models only.',
    tags: TAGS,
    access: { kind: 'workspace', role: 'reader' },
    params: WsParams,
    query: Schema.Struct({ published_only: Schema.optionalKey(Schema.Literals(['true', 'false'])) }),
    body: CompileBody,
    responses: { 200: CompiledOut, 404: null, 422: null },
    handler: async ({ ctx, ws, query, body }) => ({
      status: 200,
      body: await service.compileRequest(ctx.db, ws!.workspace.id, body, query.published_only === 'true'),
    }),
  }),
  route({
    method: 'POST',
    path: `${BASE}/imports/:provider`,
    operationId: 'import_semantic_models',
    // (its success row is written in the import's own transaction)
    audit: { action: 'semantic.import', target: { kind: 'workspace', param: 'workspace' } },
    summary: 'Import models: native (a YAML document, version 1) or transform (a dbt manifest.json)',
    description:
      'The body is the artifact as text (text/plain, application/yaml or application/json). reconcile=provider_run (the default) ' +
      'retires (deprecates) the provider’s models the artifact no longer declares; reconcile=none leaves them. A bad artifact is 422 ' +
      'naming the expected format; unusable items are listed in skipped. Imported models arrive as drafts and are read-only.',
    tags: TAGS,
    access: { kind: 'workspace', role: 'writer' },
    params: Schema.Struct({ workspace: Schema.String, provider: Schema.Literals(IMPORT_PROVIDERS) }),
    query: Schema.Struct({ reconcile: Schema.optionalKey(Schema.Literals(['provider_run', 'none'])) }),
    body: Schema.Union([Schema.String, Schema.Record(Schema.String, Schema.Unknown)]),
    consumes: ['application/json', 'text/plain', 'application/yaml', 'application/x-yaml', 'text/yaml'],
    responses: { 200: ImportOut, 403: null, 404: null, 422: null },
    handler: async ({ ctx, ws, principal, params, query, body, req }) => {
      const record = (q: Queryable, r: ImportReport) =>
        successRow(ctx, req, principal, {
          action: 'semantic.import',
          target: { kind: 'workspace', id: ws!.workspace.id },
          details: { operation: 'import_semantic_models', provider: params.provider, created: r.created.length, updated: r.updated.length, retired: r.retired.length },
        })(q);
      return { status: 200, body: await importModels(ctx.db, ws!.workspace.id, principal.user.id, params.provider, body, query.reconcile ?? 'provider_run', record) };
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/imports`,
    operationId: 'delete_semantic_imports',
    summary: 'Remove every model a provider imported (a report with the slugs removed)',
    tags: TAGS,
    access: { kind: 'workspace', role: 'owner' },
    params: WsParams,
    query: Schema.Struct({ provider: Schema.Literals(IMPORT_PROVIDERS) }),
    responses: { 200: Schema.Struct({ provider: Schema.String, deleted: Strings }), 404: null, 422: null },
    handler: async ({ ctx, ws, query }) => ({ status: 200, body: await removeImports(ctx.db, ws!.workspace.id, query.provider) }),
  }),
  route({
    method: 'GET',
    path: '/api/workspaces/:workspace/catalogs/:catalog/schemas/:schema/tables/:table/semantic',
    operationId: 'get_catalog_table_semantic',
    summary: 'The semantic definitions depending on a table (datasets binding it and what is defined on them)',
    description: 'With column, only the definitions that read that column. Needs read access to the table.',
    tags: ['catalogs', ...TAGS],
    access: { kind: 'workspace', role: 'reader' },
    params: Schema.Struct({ workspace: Schema.String, catalog: Schema.String, schema: Schema.String, table: Schema.String }),
    query: Schema.Struct({ column: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255))) }),
    responses: {
      200: Schema.Array(
        Schema.Struct({
          model: Schema.String,
          model_status: Schema.Literals(MODEL_STATUSES),
          kind: Schema.Literals(['dataset', 'relationship', 'dimension', 'metric']),
          name: Schema.String,
          dataset: Schema.String,
          validation_state: State,
        }),
      ),
      403: null,
      404: null,
    },
    handler: async ({ ctx, ws, params, query }) => {
      const c = await resolveAttachedCatalog(ctx.db, ws!.workspace.id, params.catalog);
      const reach = await tableReach(ctx.db, ws!.workspace.id);
      reach.require(c.slug, params.schema, params.table);
      const list = (await models.modelsBindingTable(ctx.db, ws!.workspace.id, c.slug, params.schema, params.table)).filter((m) => {
        try {
          requireReadable(reach, m);
          return true;
        } catch {
          return false;
        }
      });
      const out = [];
      const column = query.column?.toLowerCase();
      const reads = async (expr: string | null, implicit: string | null) => {
        if (column === undefined) return true;
        if (expr === null) return implicit?.toLowerCase() === column;
        return (await checkExpression(expr, 'expr')).columns.some((x) => x.toLowerCase() === column);
      };
      for (const m of list) {
        const base = { model: m.slug, model_status: m.status };
        for (const d of m.datasets.filter((x) => x.catalog === c.slug && x.schema_name === params.schema && x.table_name === params.table)) {
          if (column === undefined || d.primary_key.some((k) => k.toLowerCase() === column)) out.push({ ...base, kind: 'dataset' as const, name: d.name, dataset: d.name, validation_state: d.validation_state });
          for (const r of m.relationships) {
            const cols = r.left_dataset === d.name ? r.join_columns.map((j) => j.left) : r.right_dataset === d.name ? r.join_columns.map((j) => j.right) : [];
            if (cols.length && (column === undefined || cols.some((x) => x.toLowerCase() === column))) out.push({ ...base, kind: 'relationship' as const, name: r.name, dataset: d.name, validation_state: r.validation_state });
          }
          for (const x of m.dimensions.filter((x) => x.dataset === d.name)) {
            if (await reads(x.expr, x.name)) out.push({ ...base, kind: 'dimension' as const, name: x.name, dataset: d.name, validation_state: x.validation_state });
          }
          for (const x of m.metrics.filter((x) => x.dataset === d.name)) {
            if (column === undefined || (await reads(x.expr, null)) || (x.filter !== null && (await reads(x.filter, null)))) {
              out.push({ ...base, kind: 'metric' as const, name: x.name, dataset: d.name, validation_state: x.validation_state });
            }
          }
        }
      }
      return { status: 200, body: out };
    },
  }),
];
