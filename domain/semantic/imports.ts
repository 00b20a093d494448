// Applying an import set: each declared model is admitted definition by definition with the same rules as the API
// (an item that fails is skipped with the rule's message, and so is whatever depends on it), then written in one
// transaction: new slugs are created, the provider's own models replaced when their content changed, a slug owned
// by someone else left alone, and with reconcile=provider_run the provider's models the artifact no longer declares
// are retired (deprecated).
import type { Db, Queryable } from '../../runtime/db.ts';
import { exec, sql } from '../../runtime/sql.ts';
import { AppError } from '../errors.ts';
import { datasetReadable, tableReach } from './access.ts';
import { DatasetSpec, DimensionSpec, MetricSpec, RelationshipSpec, type Model } from './definitions.ts';
import { readDbtManifest } from './importDbt.ts';
import { readNative } from './importNative.ts';
import { decodeOrReason, type DeclaredModel, type Skipped } from './importSet.ts';
import { createModel, listModels, replaceDefinitions, setStatus } from './models.ts';
import { admitDataset, admitDimension, admitMetric, admitRelationship } from './rules.ts';

export const IMPORT_PROVIDERS = ['native', 'transform'] as const;
export type ImportProvider = (typeof IMPORT_PROVIDERS)[number];

export interface ImportReport {
  provider: string;
  created: string[];
  updated: string[];
  retired: string[];
  skipped: Skipped[];
}

type Defs = Pick<Model, 'datasets' | 'relationships' | 'dimensions' | 'metrics'>;

async function admitAll(declared: DeclaredModel, readable: (d: { catalog: string; schema_name: string; table_name: string }) => boolean, skipped: Skipped[]): Promise<Defs> {
  const defs: Defs = { datasets: [], relationships: [], dimensions: [], metrics: [] };
  const itemName = (kind: string, raw: unknown, i: number) => {
    const n = (raw as { name?: unknown } | null)?.name;
    return `${declared.slug}: ${kind} ${typeof n === 'string' ? n : `#${i + 1}`}`;
  };
  const step = async <V, T>(kind: string, list: unknown[], decode: (raw: unknown) => { ok: true; value: V } | { ok: false; reason: string }, admit: (v: V) => Promise<T> | T, push: (v: T) => void) => {
    for (const [i, raw] of list.entries()) {
      const item = itemName(kind, raw, i);
      const decoded = decode(raw);
      if (!decoded.ok) {
        skipped.push({ item, reason: decoded.reason });
        continue;
      }
      try {
        push(await admit(decoded.value));
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        skipped.push({ item, reason: e.message });
      }
    }
  };
  await step('dataset', declared.datasets, (r) => decodeOrReason(DatasetSpec, r), (v) => {
    if (!readable(v)) throw new AppError(403, 'not_granted', `table ${v.catalog}.${v.schema_name}.${v.table_name} is not readable from this workspace`);
    return admitDataset(defs, v);
  }, (v) => defs.datasets.push({ ...v, validation_state: 'unchecked' }));
  await step('relationship', declared.relationships, (r) => decodeOrReason(RelationshipSpec, r), (v) => admitRelationship(defs, v), (v) =>
    defs.relationships.push({ ...v, validation_state: 'unchecked' }));
  await step('dimension', declared.dimensions, (r) => decodeOrReason(DimensionSpec, r), (v) => admitDimension(defs, v), (v) =>
    defs.dimensions.push({ ...v, validation_state: 'unchecked' }));
  await step('metric', declared.metrics, (r) => decodeOrReason(MetricSpec, r), (v) => admitMetric(defs, v), (v) => defs.metrics.push({ ...v, validation_state: 'unchecked' }));
  return defs;
}

const strip = (defs: Defs) => ({
  datasets: defs.datasets.map(({ validation_state: _v, ...d }) => d),
  relationships: defs.relationships.map(({ validation_state: _v, ...d }) => d),
  dimensions: defs.dimensions.map(({ validation_state: _v, ...d }) => d),
  metrics: defs.metrics.map(({ validation_state: _v, ...d }) => d),
});
// Key order differs between a stored document (jsonb orders keys) and a fresh one: compare canonical text.
const canonical = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(',')}]`
    : v && typeof v === 'object'
      ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`
      : JSON.stringify(v);
const sameContent = (a: Defs, b: Defs) => canonical(strip(a)) === canonical(strip(b));

export async function importModels(
  db: Db,
  workspaceId: string,
  userId: string,
  provider: ImportProvider,
  body: unknown,
  reconcile: 'provider_run' | 'none',
  /** Written in the import's own transaction once its report is known (its audit row): both commit or neither. */
  record?: (q: Queryable, report: ImportReport) => Promise<unknown>,
): Promise<ImportReport> {
  const set = provider === 'native' ? readNative(body) : readDbtManifest(body);
  const reach = await tableReach(db, workspaceId);
  const report: ImportReport = { provider, created: [], updated: [], retired: [], skipped: [...set.skipped] };
  const admitted: Array<{ declared: DeclaredModel; defs: Defs }> = [];
  for (const declared of set.models) admitted.push({ declared, defs: await admitAll(declared, (d) => datasetReadable(reach, d), report.skipped) });

  await db.tx(async (tx) => {
    // One import of a workspace at a time: a second waits and then sees the first one's models.
    await exec(tx, sql`select pg_advisory_xact_lock(hashtext(${`eider:semantic-import:${workspaceId}`}))`);
    const existing = new Map((await listModels(tx, workspaceId)).map((m) => [m.slug, m]));
    for (const { declared, defs } of admitted) {
      const sorted = sortDefs(defs);
      const current = existing.get(declared.slug);
      if (current && current.provider !== provider) {
        report.skipped.push({
          item: `${declared.slug}: model`,
          reason: current.provider ? `slug ${declared.slug} belongs to provider ${current.provider}` : `slug ${declared.slug} belongs to a model made through the API`,
        });
        continue;
      }
      if (!current) {
        const id = await createModel(tx, workspaceId, { slug: declared.slug, name: declared.name, description: declared.description, provider, createdBy: userId });
        await replaceDefinitions(tx, id, strip(sorted), { name: declared.name, description: declared.description, status: 'draft' });
        report.created.push(declared.slug);
        continue;
      }
      const unchanged = sameContent(sortDefs(current), sorted) && current.name === declared.name && current.description === declared.description;
      if (unchanged && current.status !== 'deprecated') continue;
      // Changed content is a new draft: it is published again only after it validates.
      await replaceDefinitions(tx, current.id, strip(sorted), { name: declared.name, description: declared.description, status: 'draft' });
      report.updated.push(declared.slug);
    }
    if (reconcile === 'provider_run') {
      const declaredSlugs = new Set(set.models.map((m) => m.slug));
      for (const m of existing.values()) {
        if (m.provider === provider && !declaredSlugs.has(m.slug) && m.status !== 'deprecated') {
          await setStatus(tx, m.id, 'deprecated');
          report.retired.push(m.slug);
        }
      }
    }
    report.retired.sort();
    await record?.(tx, report);
  });
  return report;
}

/** Definitions in name order, the order a stored model is read back in. */
function sortDefs(d: Defs): Defs {
  const by = <T extends { name: string }>(l: readonly T[]) => [...l].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { datasets: by(d.datasets), relationships: by(d.relationships), dimensions: by(d.dimensions), metrics: by(d.metrics) };
}

/** Removes every model the provider imported. */
export async function removeImports(db: Db, workspaceId: string, provider: ImportProvider): Promise<{ provider: string; deleted: string[] }> {
  const gone = await exec(db, sql`delete from semantic_models where workspace_id = ${workspaceId} and provider = ${provider} returning slug`);
  return { provider, deleted: gone.map((r) => String(r.slug)).sort() };
}
