// Catalog storage migrations as the api shows them (docs/api-decisions.md "Storage backends and migrations"), the rules for
// starting one, the log, and the read-only rule: while a migration of a catalog is active, writes to it answer
// 409 catalog_read_only before anything is dispatched. The work itself is the migration runner's
// (actors/migrationRunner.ts, over domain/storageMigrations/copy.ts); the lifecycle is machines/storageMigration.ts.
import { randomUUID } from 'node:crypto';
import { Schema } from 'effect';
import type { Queryable } from '../../runtime/db.ts';
import type { Config } from '../../runtime/config.ts';
import { isUniqueViolation } from '../../runtime/db.ts';
import { AppError, conflict, forbidden, notFound, unprocessable } from '../errors.ts';
import { isUuid, type Principal } from '../identity.ts';
import { catalogRootUri, findCatalog, getVisibleCatalog, mayManageCatalog } from '../catalogs/catalogs.ts';
import { findBackend } from '../catalogs/backends.ts';
import { refuseOverlappingRoot } from '../catalogs/roots.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from '../pagination.ts';
import { sql, type SqlFragment } from '../../runtime/sql.ts';

const MIGRATION_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
const MIGRATION_PHASES = ['pending', 'copying', 'verifying', 'cutover', 'completed', 'failed', 'cancelled'] as const;
const TABLE_STATES = ['pending', 'copying', 'copied', 'rewritten', 'verified', 'failed'] as const;
type MigrationStatus = (typeof MIGRATION_STATUSES)[number];
type MigrationPhaseName = (typeof MIGRATION_PHASES)[number];

/** How long a phase may go without a progress report before it is presumed crashed and run again. */
export const PHASE_LEASE_MS = 120_000;
export const MAX_PHASE_ATTEMPTS = 5;

/** One table of a migration and how far its copy got. */
const MigrationTableOutSchema = Schema.Struct({
  schema: Schema.String,
  table: Schema.String,
  state: Schema.Literals(TABLE_STATES),
  bytes: Schema.Finite,
  error: Schema.NullOr(Schema.String),
});
type MigrationTableOut = typeof MigrationTableOutSchema.Type;

/** A storage migration as the api answers it, with its per-table progress. */
export const MigrationOutSchema = Schema.Struct({
  id: Schema.String,
  catalog_id: Schema.String,
  source_storage_backend_id: Schema.String,
  target_storage_backend_id: Schema.String,
  status: Schema.Literals(MIGRATION_STATUSES),
  phase: Schema.Literals(MIGRATION_PHASES),
  tables_total: Schema.Finite,
  tables_done: Schema.Finite,
  tables_verified: Schema.Finite,
  bytes_total: Schema.Finite,
  bytes_copied: Schema.Finite,
  tables: Schema.Array(MigrationTableOutSchema),
  error: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String),
  retain_until: Schema.NullOr(Schema.String),
});
export type MigrationOut = typeof MigrationOutSchema.Type;

/** One line of a migration's log. */
export const MigrationLogOutSchema = Schema.Struct({
  seq: Schema.Finite,
  at: Schema.String,
  level: Schema.Literals(['info', 'warn', 'error']),
  message: Schema.String,
  table: Schema.NullOr(Schema.String),
});
export type MigrationLogOut = typeof MigrationLogOutSchema.Type;

export interface MigrationRow {
  id: string;
  catalog_id: string;
  source_storage_backend_id: string;
  target_storage_backend_id: string;
  source_root: string;
  target_root: string;
  status: MigrationStatus;
  phase: MigrationPhaseName;
  bytes_total: string;
  bytes_copied: string;
  error: string | null;
  created_by: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  cutover_at: Date | null;
  retain_until: Date | null;
  purged_at: Date | null;
  sort_key: string;
}

const COLS = `m.id, m.catalog_id, m.source_storage_backend_id, m.target_storage_backend_id, m.source_root, m.target_root,
  m.status, m.phase, m.bytes_total, m.bytes_copied, m.error, m.created_by, m.created_at, m.started_at, m.finished_at,
  m.cutover_at, m.retain_until, m.purged_at, m.created_at::text as sort_key`;

const iso = (d: Date | null) => (d ? d.toISOString() : null);
/** The namespace key (levels joined by U+001F) as a schema name. */
export const schemaName = (namespace: string) => namespace.split('\u001f').join('.');

export async function findMigration(q: Queryable, id: string): Promise<MigrationRow | undefined> {
  if (!isUuid(id)) return undefined;
  return (await q.query<MigrationRow>(`select ${COLS} from storage_migrations m where m.id = $1`, [id]))[0];
}

async function toOut(q: Queryable, rows: MigrationRow[]): Promise<MigrationOut[]> {
  if (!rows.length) return [];
  const tables = await q.query<{ migration_id: string; namespace: string; table_name: string; state: MigrationTableOut['state']; bytes: string; error: string | null; rewritten: boolean }>(
    `select migration_id, namespace, table_name, state, bytes, error, target_metadata_location is not null as rewritten from storage_migration_tables
      where migration_id = any($1::uuid[]) order by namespace, table_name`,
    [rows.map((r) => r.id)],
  );
  return rows.map((r) => {
    const mine = tables.filter((t) => t.migration_id === r.id);
    // Progress a user watches never goes backwards: each table counts once in tables_done, when its copy (data and
    // rewritten metadata) is finished, and verification has its own count. (tables_done once counted copies while
    // copying and verified tables while verifying: 3 → 0 when verifying began.)
    const completed = r.phase === 'completed';
    const done = completed ? mine.length : mine.filter((t) => t.state === 'rewritten' || t.state === 'verified' || (t.state === 'failed' && t.rewritten)).length;
    const verified = completed ? mine.length : mine.filter((t) => t.state === 'verified').length;
    return {
      id: r.id,
      catalog_id: r.catalog_id,
      source_storage_backend_id: r.source_storage_backend_id,
      target_storage_backend_id: r.target_storage_backend_id,
      status: r.status,
      phase: r.phase,
      tables_total: mine.length,
      tables_done: done,
      tables_verified: verified,
      bytes_total: Number(r.bytes_total),
      bytes_copied: Math.min(Number(r.bytes_copied), Number(r.bytes_total) || Number(r.bytes_copied)),
      tables: mine.map((t) => ({ schema: schemaName(t.namespace), table: t.table_name, state: t.state, bytes: Number(t.bytes), error: t.error })),
      error: r.error,
      created_by: r.created_by,
      created_at: r.created_at.toISOString(),
      started_at: iso(r.started_at),
      finished_at: iso(r.finished_at),
      retain_until: iso(r.retain_until),
    };
  });
}

/** The catalog as its manager sees it: 404 when not visible, 403 when visible but not theirs to manage. */
async function managedCatalog(q: Queryable, p: Principal, catalogId: string) {
  await getVisibleCatalog(q, p, catalogId);
  const c = (await findCatalog(q, catalogId))!;
  if (!mayManageCatalog(p, c)) throw forbidden('storage migrations need the catalogs permission or being the catalog\'s creator');
  return c;
}

export async function getMigration(q: Queryable, p: Principal, catalogId: string, migrationId: string): Promise<MigrationOut> {
  await managedCatalog(q, p, catalogId);
  const row = await findMigration(q, migrationId);
  if (!row || row.catalog_id !== catalogId) throw notFound('storage migration');
  return (await toOut(q, [row]))[0];
}

export async function listMigrations(q: Queryable, p: Principal, catalogId: string, f: { cursor?: string; limit: number }): Promise<Page<MigrationOut>> {
  await managedCatalog(q, p, catalogId);
  const sort = 'created_at:desc';
  const params: unknown[] = [catalogId];
  const cond = ['m.catalog_id = $1'];
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!isUuid(c.id) || !(await q.query(`select 1 from storage_migrations where id = $1`, [c.id])).length) throw staleCursor();
    params.push(c.k, c.id);
    cond.push(`(m.created_at, m.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(f.limit + 1);
  const rows = await q.query<MigrationRow>(`select ${COLS} from storage_migrations m where ${cond.join(' and ')} order by m.created_at desc, m.id desc limit $${params.length}`, params);
  const page = pageOf(rows, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), (r) => r);
  return { ...page, items: await toOut(q, page.items) };
}

export async function migrationLogs(q: Queryable, p: Principal, catalogId: string, migrationId: string, after: number): Promise<MigrationLogOut[]> {
  await getMigration(q, p, catalogId, migrationId);
  const rows = await q.query<{ seq: string; at: Date; level: MigrationLogOut['level']; message: string; table_name: string | null }>(
    `select seq, at, level, message, table_name from storage_migration_logs where migration_id = $1 and seq > $2 order by seq limit 1000`,
    [migrationId, after],
  );
  return rows.map((r) => ({ seq: Number(r.seq), at: r.at.toISOString(), level: r.level, message: r.message, table: r.table_name }));
}

export async function appendLog(q: Queryable, migrationId: string, level: MigrationLogOut['level'], message: string, table: string | null = null): Promise<void> {
  await q.query(`insert into storage_migration_logs (migration_id, level, message, table_name) values ($1, $2, $3, $4)`, [migrationId, level, message, table]);
}

/** Two catalog roots that one contains the other: copying one onto the other would destroy what it copies. */
export const rootsOverlap = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);

/** What a start decides: the migration's id, its catalog and the two backends, and when (the machine's input adds
 *  its timing parameters: http/routes/migrations.ts). */
export interface MigrationStart {
  migrationId: string;
  catalogId: string;
  sourceBackendId: string;
  targetBackendId: string;
  at: number;
}

/**
 * Checks a migration may start and returns what it decided and the row's INSERT (written with the actor, in
 * one statement, by the caller's host.spawn). 409 migration_active when one is active (the unique index decides
 * a race of two starts).
 */
export async function prepareMigration(
  q: Queryable,
  p: Principal,
  catalogId: string,
  targetBackendId: string,
  config: Pick<Config, 'STORE_ENDPOINT'>,
): Promise<{ start: MigrationStart; entity: SqlFragment }> {
  const c = await managedCatalog(q, p, catalogId);
  const target = await findBackend(q, targetBackendId);
  if (!target) throw unprocessable('target_storage_backend_id: no storage backend has this id', 'unprocessable_content', { fields: [{ field: 'target_storage_backend_id', in: 'body', message: 'no storage backend has this id' }] });
  if (target.id === c.storage_backend_id) throw unprocessable(`catalog ${c.slug} is already on storage backend ${target.name}`, 'unprocessable_content', { fields: [{ field: 'target_storage_backend_id', in: 'body', message: 'the catalog is already there' }] });
  const sourceRoot = catalogRootUri(c);
  const targetRoot = `${target.root_uri}${c.slug}/`;
  if (rootsOverlap(sourceRoot, targetRoot)) {
    throw unprocessable(`the catalog's root on ${target.name} (${targetRoot}) overlaps its current root (${sourceRoot})`, 'unprocessable_content', {
      fields: [{ field: 'target_storage_backend_id', in: 'body', message: 'the roots overlap' }],
    });
  }
  if ((await q.query(`select 1 from storage_migrations where catalog_id = $1 and status in ('pending', 'running')`, [c.id])).length) throw migrationActive(c.slug);
  // The copy lands at the target root: a prefix another backend or catalog owns would be overwritten (and purged).
  await refuseOverlappingRoot(q, config, target, targetRoot, { backendId: target.id, catalogId: c.id });
  const id = randomUUID();
  const at = Date.now();
  return {
    start: { migrationId: id, catalogId: c.id, sourceBackendId: c.storage_backend_id, targetBackendId: target.id, at },
    entity: sql`insert into storage_migrations (id, catalog_id, source_storage_backend_id, target_storage_backend_id, source_root, target_root, status, phase, created_by, created_at)
      values (${id}, ${c.id}, ${c.storage_backend_id}, ${target.id}, ${sourceRoot}, ${targetRoot}, 'pending', 'pending', ${p.user.id}, ${new Date(at).toISOString()}::timestamptz)`,
  };
}

const migrationActive = (slug: string) => conflict(`a storage migration of catalog ${slug} is already active`, 'migration_active');

/** Turns the unique-index race of two starts into 409 migration_active. */
export function asStartConflict(e: unknown, slug: string): unknown {
  return isUniqueViolation(e) ? migrationActive(slug) : e;
}

export const pastCutover = () => conflict('the migration is past its cutover: it can no longer be cancelled', 'migration_past_cutover');

// ---- the read-only rule ---------------------------------------------------------------------------------------

/** The active migrations among these catalogs (by id). */
async function activeMigrations(q: Queryable, catalogIds: readonly string[]): Promise<Array<{ id: string; catalog_id: string; slug: string }>> {
  if (!catalogIds.length) return [];
  return q.query(
    `select m.id, m.catalog_id, c.slug from storage_migrations m join catalogs c on c.id = m.catalog_id
      where m.catalog_id = any($1::uuid[]) and m.status in ('pending', 'running')`,
    [catalogIds],
  );
}

const catalogReadOnly = (slug: string, migrationId: string) =>
  new AppError(409, 'catalog_read_only', `catalog ${slug} is read-only while its storage migration runs; reads work, writes resume after the cutover`, {
    catalog: slug,
    migration_id: migrationId,
  });

/** 409 catalog_read_only when any of these catalogs is being migrated. */
export async function assertCatalogsWritable(q: Queryable, catalogIds: readonly string[]): Promise<void> {
  const [m] = await activeMigrations(q, catalogIds);
  if (m) throw catalogReadOnly(m.slug, m.id);
}

/**
 * The ids of the catalogs a writing statement may write, as its catalog token will allow them: `slugs` from
 * domain/catalogGrants.ts writeCatalogs (what actors/queryKind.ts dispatchScope gives write scope to).
 */
export function writtenCatalogs(slugs: readonly string[], attached: readonly { id: string; slug: string }[]): string[] {
  return attached.filter((c) => slugs.includes(c.slug)).map((c) => c.id);
}
