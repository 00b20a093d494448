// The semantic layer's operations as the routes call them: each checks what the workspace may read first, then
// goes to the repository, then answers with the model as it now stands.
import type { Db, Queryable } from '../../runtime/db.ts';
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import { conflict, notFound, unprocessable } from '../errors.ts';
import { modelReadable, requireReadable, tableReach } from './access.ts';
import { compile, type CompileRequest, type Compiled } from './compiler.ts';
import type { Model, ModelStatus } from './definitions.ts';
import { describePath, legalDimensions } from './joins.ts';
import { findModel, getModel, listModels, recordValidation, setStatus } from './models.ts';
import { validateModel } from './validation.ts';

/** The workspace's models that bind only tables it may read. */
export async function visibleModels(q: Queryable, workspaceId: string, statuses: readonly ModelStatus[] = []): Promise<Model[]> {
  const reach = await tableReach(q, workspaceId);
  return (await listModels(q, workspaceId, statuses)).filter((m) => modelReadable(reach, m));
}

export async function readableModel(q: Queryable, workspaceId: string, slug: string): Promise<Model> {
  return requireReadable(await tableReach(q, workspaceId), await findModel(q, workspaceId, slug));
}

/** Resolves every binding against the live catalog and records the outcome per definition and for the model. */
export async function validate(db: Db, client: CatalogClient, workspaceId: string, slug: string): Promise<Model> {
  const model = await readableModel(db, workspaceId, slug);
  const outcome = await validateModel(db, client, model);
  await db.tx(async (tx) => {
    // A definition changed while the catalog answered: its state stays unchecked rather than recording a verdict on
    // what it used to be.
    const now = await getModel(tx, workspaceId, slug);
    if (now.updated_at !== model.updated_at) return;
    await recordValidation(tx, model.id, outcome);
  });
  return getModel(db, workspaceId, slug);
}

/** draft → published when validation passes (422 model_broken naming the problems otherwise). */
export async function publish(db: Db, client: CatalogClient, workspaceId: string, slug: string): Promise<Model> {
  const before = await readableModel(db, workspaceId, slug);
  if (before.status === 'deprecated') throw conflict(`model ${slug} is deprecated; a deprecated model is not published again`, 'invalid_transition');
  const model = await validate(db, client, workspaceId, slug);
  if (model.validation.state !== 'ok') {
    throw unprocessable(`model ${slug} is broken: ${model.validation.problems.map((p) => `${p.kind} ${p.name}: ${p.message}`).join('; ')}`, 'model_broken', {
      problems: model.validation.problems,
    });
  }
  if (model.datasets.length === 0) throw unprocessable(`model ${slug} has no datasets to publish`, 'model_broken', { problems: [] });
  await setStatus(db, model.id, 'published');
  return getModel(db, workspaceId, slug);
}

/** published → deprecated: still readable, excluded from new answers. */
export async function deprecate(db: Db, workspaceId: string, slug: string): Promise<Model> {
  const model = await readableModel(db, workspaceId, slug);
  if (model.status === 'draft') throw conflict(`model ${slug} is a draft: only a published model is deprecated (delete a draft instead)`, 'invalid_transition');
  if (model.status === 'published') await setStatus(db, model.id, 'deprecated');
  return getModel(db, workspaceId, slug);
}

export async function compileRequest(q: Queryable, workspaceId: string, req: CompileRequest, publishedOnly: boolean): Promise<Compiled> {
  const model = await readableModel(q, workspaceId, req.model);
  if (publishedOnly && model.status !== 'published') {
    const published = (await visibleModels(q, workspaceId, ['published'])).map((m) => m.slug);
    throw unprocessable(`model ${model.slug} is ${model.status}, and published_only asks for a published model`, 'model_not_published', { alternatives: published });
  }
  return compile(model, req);
}

/** The dimensions a metric may be grouped by, with the join path to each. */
export async function metricDimensions(q: Queryable, workspaceId: string, slug: string, metric: string) {
  const model = await readableModel(q, workspaceId, slug);
  const m = model.metrics.find((x) => x.name === metric);
  if (!m) throw notFound('metric');
  return legalDimensions(model, m.dataset).map(({ dimension, path }) => ({ ...dimension, join_path: path.length ? describePath(m.dataset, path) : null }));
}
