// The phases of a catalog storage migration, each an idempotent step the migration runner may run again after a
// crash (actors/migrationRunner.ts): copy (data files, table by table, checkpointed in storage_migration_tables),
// rewrite (every path in metadata, manifest lists, manifests and position deletes), verify, cutover (the catalog
// service moves every table and the warehouse in one transaction, then the catalog row is rebound), purge (the old
// root, after the retention), and the cleanup of a target copy when a migration is cancelled or fails.
import type { Db } from '../../runtime/db.ts';
import type { CatalogClient } from '../../runtime/catalogClient.ts';
import type { BlobStore } from '../../iceberg/objectStorage.ts';
import { backendConnection, blobStoreFor, type BackendConfig } from '../backendStorage.ts';
import { findBackend, type BackendRow } from '../catalogs/backends.ts';
import { findCatalog } from '../catalogs/catalogs.ts';
import { warehouseInputFor, warehouseName } from '../catalogs/warehouses.ts';
import { appendLog, schemaName, type MigrationRow } from './records.ts';
import { copyTableData, inPool, PathMap, rewriteTable, tableFiles, VerificationError, verifyTable, type CopyContext, type TableFiles } from './copy.ts';

/** A failure not worth another attempt: the same input would fail the same way. */
export class PermanentMigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentMigrationError';
  }
}

export interface PhaseEnv {
  db: Db;
  catalog: CatalogClient;
  config: BackendConfig;
  migration: MigrationRow;
  signal: AbortSignal;
  /** Streams in flight per table, and tables at once. */
  fileConcurrency: number;
  tableConcurrency: number;
  /** Ends the retention of earlier migrations whose retained files lie under `root` and waits until they are gone. */
  expireRetentionUnder(root: string): Promise<void>;
}

interface MigrationTableRow {
  namespace: string;
  table_name: string;
  state: string;
  bytes: string;
  source_metadata_location: string;
  target_metadata_location: string | null;
}

const tableLabel = (t: Pick<MigrationTableRow, 'namespace' | 'table_name'>) => `${schemaName(t.namespace)}.${t.table_name}`;

async function backendOf(env: PhaseEnv, id: string): Promise<BackendRow> {
  const b = await findBackend(env.db, id);
  if (!b) throw new PermanentMigrationError(`storage backend ${id} is gone`);
  return b;
}

function storeOf(env: PhaseEnv, b: BackendRow): BlobStore {
  const c = backendConnection(b, env.config);
  if (!c) throw new PermanentMigrationError(`storage backend ${b.name} has no credentials to reach it with`);
  return blobStoreFor(c);
}

async function catalogOf(env: PhaseEnv) {
  const c = await findCatalog(env.db, env.migration.catalog_id);
  if (!c) throw new PermanentMigrationError('the catalog is gone');
  return c;
}

async function withStores<T>(env: PhaseEnv, fn: (source: BlobStore, target: BlobStore) => Promise<T>): Promise<T> {
  const [s, t] = await Promise.all([backendOf(env, env.migration.source_storage_backend_id), backendOf(env, env.migration.target_storage_backend_id)]);
  const source = storeOf(env, s);
  const target = storeOf(env, t);
  try {
    return await fn(source, target);
  } finally {
    source.close();
    target.close();
  }
}

const log = (env: PhaseEnv, level: 'info' | 'warn' | 'error', message: string, table: string | null = null) => appendLog(env.db, env.migration.id, level, message, table);

/** Every table of a warehouse, namespaces walked level by level. */
async function listWarehouseTables(catalog: CatalogClient, warehouse: string): Promise<Array<{ namespace: string[]; name: string }>> {
  const out: Array<{ namespace: string[]; name: string }> = [];
  const walk = async (parent: string[]) => {
    for (const ns of await catalog.listNamespaces(warehouse, parent)) {
      for (const name of await catalog.listTables(warehouse, ns)) out.push({ namespace: ns, name });
      await walk(ns);
    }
  };
  await walk([]);
  return out;
}

async function tableRows(env: PhaseEnv): Promise<MigrationTableRow[]> {
  return env.db.query<MigrationTableRow>(
    `select namespace, table_name, state, bytes, source_metadata_location, target_metadata_location from storage_migration_tables
      where migration_id = $1 order by namespace, table_name`,
    [env.migration.id],
  );
}

async function setTable(env: PhaseEnv, t: MigrationTableRow, patch: { state?: string; bytes?: number; bytesCopied?: number; files?: number; target?: string; error?: string | null }) {
  await env.db.query(
    `update storage_migration_tables set state = coalesce($4, state), bytes = coalesce($5, bytes), bytes_copied = coalesce($6, bytes_copied),
       files = coalesce($7, files), target_metadata_location = coalesce($8, target_metadata_location),
       error = case when $9::boolean then $10 else error end, updated_at = now()
     where migration_id = $1 and namespace = $2 and table_name = $3`,
    [env.migration.id, t.namespace, t.table_name, patch.state ?? null, patch.bytes ?? null, patch.bytesCopied ?? null, patch.files ?? null, patch.target ?? null, patch.error !== undefined, patch.error ?? null],
  );
}

/** Bytes per table, flushed to the rows once a second and at the end (the record sums them). */
class ByteCounter {
  private readonly counts = new Map<string, number>();
  private dirty = false;
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly env: PhaseEnv;
  constructor(env: PhaseEnv) {
    this.env = env;
    this.timer = setInterval(() => void this.flush().catch(() => undefined), 1000);
    this.timer.unref();
  }
  set(t: MigrationTableRow, n: number) {
    this.counts.set(`${t.namespace}\u0000${t.table_name}`, n);
    this.dirty = true;
  }
  add(t: MigrationTableRow, n: number) {
    const k = `${t.namespace}\u0000${t.table_name}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + n);
    this.dirty = true;
  }
  /**
   * Flushes run one after another: a timer's flush still writing older counts must not land after the final one
   * (two at once on two connections did, and a completed migration showed fewer bytes copied than its total).
   */
  flush(): Promise<void> {
    const next = this.writing.then(() => this.write());
    this.writing = next.catch(() => undefined);
    return next;
  }
  private async write() {
    if (!this.dirty) return;
    this.dirty = false;
    const entries = [...this.counts];
    await this.env.db.query(
      `update storage_migration_tables t set bytes_copied = v.n
         from unnest($2::text[], $3::text[], $4::bigint[]) as v(namespace, table_name, n)
        where t.migration_id = $1 and t.namespace = v.namespace and t.table_name = v.table_name`,
      [this.env.migration.id, entries.map(([k]) => k.split('\u0000')[0]), entries.map(([k]) => k.split('\u0000')[1]), entries.map(([, n]) => n)],
    );
    await this.env.db.query(
      `update storage_migrations set bytes_copied = (select coalesce(sum(least(bytes_copied, bytes)), 0) from storage_migration_tables where migration_id = $1),
         bytes_total = (select coalesce(sum(bytes), 0) from storage_migration_tables where migration_id = $1)
       where id = $1`,
      [this.env.migration.id],
    );
  }
  async close() {
    clearInterval(this.timer);
    this.dirty = true;
    await this.flush();
  }
}

function copyContext(env: PhaseEnv, source: BlobStore, target: BlobStore, t: MigrationTableRow, bytes: ByteCounter): CopyContext {
  return {
    source,
    target,
    paths: new PathMap(env.migration.source_root, env.migration.target_root),
    progress: (n) => bytes.add(t, n),
    log: (level, message) => log(env, level, message, tableLabel(t)),
    concurrency: env.fileConcurrency,
    signal: env.signal,
  };
}

/**
 * Copy: marks the warehouse read-only in the catalog service (commits refused from here to the cutover), ends
 * the retention of an earlier migration whose old files lie where this one copies to, checks the target root is
 * empty on a first attempt, lists the tables (checkpoint rows), then streams every data, equality-delete and
 * statistics file of each table not yet copied. A table whose copy a crash interrupted starts again, skipping
 * the files already at the target with their size.
 */
export async function copyPhase(env: PhaseEnv): Promise<void> {
  const c = await catalogOf(env);
  const warehouse = warehouseName(c);
  await env.catalog.setWarehouseReadOnly(warehouse, true);
  await env.expireRetentionUnder(env.migration.target_root);
  await withStores(env, async (source, target) => {
    let rows = await tableRows(env);
    if (rows.length === 0) {
      const present = await target.list(env.migration.target_root, 1);
      if (present.length) throw new PermanentMigrationError(`the target location ${env.migration.target_root} is not empty (${present[0].uri})`);
    }
    const tables = await listWarehouseTables(env.catalog, warehouse);
    const key = (ns: string, name: string) => `${ns}\u0000${name}`;
    const seen = new Set<string>();
    for (const t of tables) {
      const loaded = await env.catalog.loadTable(warehouse, t.namespace, t.name);
      const ns = t.namespace.join('\u001f');
      seen.add(key(ns, t.name));
      // A table whose metadata moved on since an earlier attempt listed it starts over.
      await env.db.query(
        `insert into storage_migration_tables (migration_id, namespace, table_name, source_metadata_location) values ($1, $2, $3, $4)
         on conflict (migration_id, namespace, table_name) do update set
           state = case when storage_migration_tables.source_metadata_location = excluded.source_metadata_location then storage_migration_tables.state else 'pending' end,
           source_metadata_location = excluded.source_metadata_location`,
        [env.migration.id, ns, t.name, loaded.metadataLocation],
      );
    }
    rows = await tableRows(env);
    for (const r of rows) {
      if (!seen.has(key(r.namespace, r.table_name))) await env.db.query(`delete from storage_migration_tables where migration_id = $1 and namespace = $2 and table_name = $3`, [env.migration.id, r.namespace, r.table_name]);
    }
    rows = rows.filter((r) => seen.has(key(r.namespace, r.table_name)));
    const todo = rows.filter((r) => r.state === 'pending' || r.state === 'copying' || r.state === 'failed');
    if (rows.length > todo.length) await log(env, 'info', `resuming: ${rows.length - todo.length} of ${rows.length} table(s) already copied`);
    else await log(env, 'info', `copying ${rows.length} table(s) from ${env.migration.source_root} to ${env.migration.target_root}`);
    const bytes = new ByteCounter(env);
    try {
      // Sizes first, so the record shows bytes_total while the copy runs.
      const inventories = new Map<MigrationTableRow, TableFiles>();
      await inPool(todo, env.tableConcurrency, async (t) => {
        const files = await tableFiles(source, t.source_metadata_location, env.signal);
        inventories.set(t, files);
        await setTable(env, t, { state: 'copying', bytes: files.bytes, bytesCopied: 0, files: files.files.size + files.manifests.size + files.manifestLists.length + 1 + files.previousMetadata.length, error: null });
      }, env.signal);
      await bytes.flush();
      await inPool(
        todo,
        env.tableConcurrency,
        async (t) => {
          const started = Date.now();
          const counts = await copyTableData(copyContext(env, source, target, t, bytes), inventories.get(t)!);
          await setTable(env, t, { state: 'copied' });
          await log(env, 'info', `data copied: ${counts.copied} file(s) written, ${counts.present} already there, in ${Date.now() - started} ms`, tableLabel(t));
        },
        env.signal,
      );
    } finally {
      await bytes.close();
    }
  });
}

/** Rewrite: every path in each table's metadata files, manifest lists, manifests and position delete files. */
export async function rewritePhase(env: PhaseEnv): Promise<void> {
  await withStores(env, async (source, target) => {
    const rows = await tableRows(env);
    const todo = rows.filter((r) => r.state === 'copied');
    const bytes = new ByteCounter(env);
    try {
      await inPool(
        todo,
        env.tableConcurrency,
        async (t) => {
          const files = await tableFiles(source, t.source_metadata_location, env.signal);
          const dataBytes = [...files.files.values()].filter((f) => f.content !== 1).reduce((a, f) => a + f.size, 0) + [...files.statistics.values()].reduce((a, n) => a + n, 0);
          bytes.set(t, dataBytes);
          const location = await rewriteTable(copyContext(env, source, target, t, bytes), files);
          bytes.set(t, files.bytes);
          // The count goes with the checkpoint: a crash before the counter's next flush would leave a rewritten table
          // short of its bytes for good (a resumed rewrite skips it).
          await setTable(env, t, { state: 'rewritten', target: location, bytesCopied: files.bytes });
          await log(env, 'info', `metadata rewritten: ${files.manifests.size} manifest(s), ${files.manifestLists.length} manifest list(s), ${1 + files.previousMetadata.length} metadata file(s)`, tableLabel(t));
        },
        env.signal,
      );
    } finally {
      await bytes.close();
    }
    const left = (await tableRows(env)).filter((r) => r.state !== 'rewritten' && r.state !== 'verified');
    if (left.length) throw new Error(`${left.length} table(s) are not copied yet: ${left.map(tableLabel).join(', ')}`);
  });
}

/**
 * Verify: the catalog still holds exactly the tables copied, each at the metadata file copied (the warehouse is
 * read-only, so a difference means something went around it), and every table's copy matches its source.
 */
export async function verifyPhase(env: PhaseEnv): Promise<void> {
  const c = await catalogOf(env);
  const warehouse = warehouseName(c);
  const rows = await tableRows(env);
  const now = await listWarehouseTables(env.catalog, warehouse);
  const names = (xs: Array<{ ns: string; name: string }>) => xs.map((x) => `${x.ns}.${x.name}`).sort().join(',');
  if (names(now.map((t) => ({ ns: t.namespace.join('\u001f'), name: t.name }))) !== names(rows.map((r) => ({ ns: r.namespace, name: r.table_name })))) {
    throw new PermanentMigrationError('the catalog\'s tables changed during the migration');
  }
  await withStores(env, async (source, target) => {
    const bytes = new ByteCounter(env);
    try {
      await inPool(
        rows.filter((r) => r.state !== 'verified'),
        env.tableConcurrency,
        async (t) => {
          const loaded = await env.catalog.loadTable(warehouse, t.namespace.split('\u001f'), t.table_name);
          if (loaded.metadataLocation !== t.source_metadata_location) throw new PermanentMigrationError(`table ${tableLabel(t)} changed during the migration`);
          if (!t.target_metadata_location) throw new Error(`table ${tableLabel(t)} has no rewritten metadata yet`);
          const files = await tableFiles(source, t.source_metadata_location, env.signal);
          try {
            const r = await verifyTable(copyContext(env, source, target, t, bytes), files, t.target_metadata_location);
            await setTable(env, t, { state: 'verified', error: null });
            await log(env, 'info', `verified: ${r.snapshots} snapshot(s), ${r.files} live file(s), row counts per snapshot equal`, tableLabel(t));
          } catch (e) {
            if (!(e instanceof VerificationError)) throw e;
            await setTable(env, t, { state: 'failed', error: e.message });
            await log(env, 'error', `verification failed: ${e.message}`, tableLabel(t));
            throw new PermanentMigrationError(`table ${tableLabel(t)}: ${e.message}`);
          }
        },
        env.signal,
      );
    } finally {
      await bytes.close();
    }
  });
}

/**
 * Cutover: the catalog service moves every table to its rewritten metadata and the warehouse to the target
 * storage in one transaction (and clears the read-only mark); then the catalog row is rebound to the target
 * backend. Both steps are idempotent, so a crash between them is finished by the next attempt.
 */
export async function cutoverPhase(env: PhaseEnv): Promise<{ ms: number }> {
  const c = await catalogOf(env);
  const warehouse = warehouseName(c);
  const targetBackend = await backendOf(env, env.migration.target_storage_backend_id);
  const rows = await tableRows(env);
  const notVerified = rows.filter((r) => r.state !== 'verified');
  if (notVerified.length) throw new Error(`${notVerified.length} table(s) are not verified`);
  const tables = await withStores(env, async (_source, target) =>
    Promise.all(
      rows.map(async (r) => ({
        namespace: r.namespace.split('\u001f'),
        name: r.table_name,
        from: r.source_metadata_location,
        to: r.target_metadata_location!,
        metadata_json: Buffer.from(await target.get(r.target_metadata_location!)).toString('utf8'),
      })),
    ),
  );
  const { name: _name, ...settings } = warehouseInputFor(targetBackend, c.slug, env.config);
  const started = performance.now();
  await env.catalog.relocateWarehouse(warehouse, { ...settings, tables });
  await env.db.query(`update catalogs set storage_backend_id = $2 where id = $1 and storage_backend_id = $3`, [c.id, targetBackend.id, env.migration.source_storage_backend_id]);
  const ms = Math.round(performance.now() - started);
  await log(env, 'info', `cut over: ${tables.length} table(s) and the catalog now on ${targetBackend.name} (${env.migration.target_root}) in ${ms} ms`);
  return { ms };
}

/** Purge: the source root's files go, after the retention (or when a later migration copies onto that root). */
export async function purgePhase(env: PhaseEnv): Promise<number> {
  const source = await findBackend(env.db, env.migration.source_storage_backend_id);
  if (!source) {
    await log(env, 'warn', `the source storage backend is gone; its files under ${env.migration.source_root} were not deleted`);
    return 0;
  }
  const store = storeOf(env, source);
  try {
    const n = await store.deletePrefix(env.migration.source_root);
    await env.db.query(`update storage_migrations set purged_at = now() where id = $1`, [env.migration.id]);
    await log(env, 'info', `retention over: ${n} old file(s) under ${env.migration.source_root} deleted`);
    return n;
  } finally {
    store.close();
  }
}

/**
 * After a cancel or a failure before the cutover: the copy at the target goes and the warehouse is writable again.
 * Nothing is deleted when the catalog already lives at the target root (the cutover happened after all).
 */
export async function cleanupTargetPhase(env: PhaseEnv): Promise<number> {
  const c = await catalogOf(env);
  const w = await env.catalog.getWarehouse(warehouseName(c));
  if (w && w.root_uri === env.migration.target_root) {
    // The catalog service moved the tables, and the catalog row was not rebound before the cutover gave up: the
    // data lives at the target now, so the row follows it (deleting the copy would lose the catalog).
    await env.db.query(`update catalogs set storage_backend_id = $2 where id = $1`, [c.id, env.migration.target_storage_backend_id]);
    await log(env, 'error', 'the catalog service had already moved the catalog to the target: it stays there, and nothing is deleted');
    return 0;
  }
  const target = await findBackend(env.db, env.migration.target_storage_backend_id);
  let n = 0;
  if (target) {
    const store = storeOf(env, target);
    try {
      n = await store.deletePrefix(env.migration.target_root);
    } finally {
      store.close();
    }
  }
  if (w) await env.catalog.setWarehouseReadOnly(w.name, false);
  await log(env, 'info', `the copy at the target was removed (${n} file(s)); the catalog stays on its source and takes writes again`);
  return n;
}
