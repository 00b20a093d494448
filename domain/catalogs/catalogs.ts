// Storage backends, catalogs and their attachment to workspaces. Each catalog is one warehouse in the catalog
// service, named by the catalog slug and rooted at `{backend root_uri}{slug}/` (I4: every table location derives
// from the backend root). Only the binding and the attachments live in our database; the structure inside a
// catalog lives in the catalog service (I3).
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { DbError, isUniqueViolation } from '../../runtime/db.ts';
import type { Config } from '../../runtime/config.ts';
import { CatalogServiceError, CatalogUnreachableError, type CatalogClient, type WarehouseInput } from '../../runtime/catalogClient.ts';
import type { Logger } from '../../runtime/logger.ts';
import { AppError, conflict, forbidden, notFound, unprocessable } from '../errors.ts';
import { hasPermission, isUuid, type Principal } from '../identity.ts';
import type { WorkspaceAccess } from '../workspaces.ts';
import { isAzureUri, normalizeAzureRoot, normalizeS3Root, parseAzureUri, parseS3Uri, StorageUriError } from '../../iceberg/storageUri.ts';
import { isSealed } from '../../settings/secretBox.ts';
import { isRoleArn } from '../../iceberg/stsRules.ts';
import { backendConnection, blobStoreFor, isBundledStore, probeBackend, sealBackendSecret, type BackendConfig, type BackendTarget, type StorageKind } from '../backendStorage.ts';
import { VENDING_MODES, type VendingMode } from '../../iceberg/vendedStorage.ts';

export type { StorageKind };
export const STORAGE_KINDS: readonly StorageKind[] = ['object_store', 's3', 'azure'];
export const ACCESS_MODES = ['full', 'scoped'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

/** The catalog-service settings a warehouse needs beyond what a backend row holds. */
export type WarehouseConfig = BackendConfig;

// ---- storage backends ---------------------------------------------------------------------------------------

/** A storage_backends row: what reaching it takes (its secret sealed with SECRET_KEY), and its own fields. */
export interface BackendRow extends BackendTarget {
  id: string;
  credential_vending: VendingMode;
  created_at: Date;
}

/** A storage backend as every route answers it (secrets never shown: only has_credentials). */
export const BackendOutSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  kind: Schema.Literals(STORAGE_KINDS),
  root_uri: Schema.String,
  endpoint: Schema.NullOr(Schema.String),
  region: Schema.NullOr(Schema.String),
  has_credentials: Schema.Boolean,
  /** The IAM role STS vending assumes (not a secret); null when none. */
  role_arn: Schema.NullOr(Schema.String),
  credential_vending: Schema.Literals(VENDING_MODES),
  catalog_count: Schema.Finite,
  created_at: Schema.String,
});
export type BackendOut = typeof BackendOutSchema.Type;

export interface BackendInput {
  name: string;
  kind: StorageKind;
  root_uri: string;
  endpoint?: string | null;
  region?: string | null;
  access_key_id?: string | null;
  secret_access_key?: string | null;
  /** azure: the storage account and its key (the same as access_key_id and secret_access_key). */
  account_name?: string | null;
  account_key?: string | null;
  /** s3 and object_store: the IAM role the store's STS AssumeRole assumes for `sts` vending (AWS requires one). */
  role_arn?: string | null;
}

const BACKEND_COLS = `b.id, b.name, b.kind, b.root_uri, b.endpoint, b.region, b.access_key_id, b.secret_access_key, b.role_arn, b.credential_vending, b.created_at`;

// Secrets never leave this module in a response shape: only whether they are set.
const toBackendOut = (b: BackendRow & { catalog_count?: number }): BackendOut => ({
  id: b.id,
  name: b.name,
  kind: b.kind,
  root_uri: b.root_uri,
  endpoint: b.endpoint,
  region: b.region,
  has_credentials: !!(b.access_key_id && b.secret_access_key),
  role_arn: b.role_arn ?? null,
  credential_vending: b.credential_vending,
  catalog_count: Number(b.catalog_count ?? 0),
  created_at: b.created_at.toISOString(),
});

const field = (name: string, message: string) => unprocessable(`${name}: ${message}`, 'unprocessable_content', { fields: [{ field: name, in: 'body', message }] });

/**
 * The root as stored: one trailing slash. object_store and s3 take `s3://bucket/optional/path/`; azure takes
 * `az://container/optional/path/` (the account is the backend's) or, ADLS Gen2 style,
 * `abfss://container@account.dfs.core.windows.net/optional/path/`.
 */
export function normalizeRootUri(kind: StorageKind, raw: string): string {
  const uri = raw.trim();
  if (kind === 'azure' ? !isAzureUri(uri) : !/^s3a?:\/\//.test(uri)) {
    throw field(
      'root_uri',
      kind === 'azure'
        ? 'an azure backend root is az://<container>/<path>/ or abfss://<container>@<account>.dfs.core.windows.net/<path>/'
        : 'an S3 root is s3://<bucket>/<optional path>/ (bucket names are lowercase)',
    );
  }
  try {
    return kind === 'azure' ? normalizeAzureRoot(uri) : normalizeS3Root(uri);
  } catch (e) {
    if (e instanceof StorageUriError) throw field('root_uri', e.message);
    throw e;
  }
}

/**
 * An azure backend's account and key: `account_name` and `account_key` (the names docs/api-decisions.md gives them), or
 * `access_key_id` and `secret_access_key` as for the other kinds; an `abfss://` root names the account itself.
 */
function azureCredentials(input: BackendInput, root: string): { accessKeyId: string | null; secret: string | null } {
  const account = input.account_name || input.access_key_id || null;
  const key = input.account_key || input.secret_access_key || null;
  const inRoot = parseAzureUri(root).account;
  if (account && inRoot && account !== inRoot) throw field('root_uri', `the root names storage account ${inRoot}, the backend ${account}`);
  if (account && !/^[a-z0-9]{3,24}$/.test(account)) throw field('account_name', 'a storage account name is 3-24 lowercase letters and digits');
  if (key && !account && !inRoot) throw field('account_name', 'an account key needs the account name (or an abfss:// root naming it)');
  return { accessKeyId: account ?? (key ? inRoot : null), secret: key };
}

const ROLE_ARN_NOT_FOR_AZURE = 'role_arn is for s3 and object_store backends (STS AssumeRole); an azure backend vends SAS tokens';

/** A role_arn as given (trimmed; empty is none), at registration and rotation: 422 naming the field on an azure
 *  backend or when it is no IAM role ARN. */
function roleArnFor(kind: StorageKind, raw: string | null | undefined): string | null {
  const roleArn = raw?.trim() || null;
  if (roleArn && kind === 'azure') throw field('role_arn', ROLE_ARN_NOT_FOR_AZURE);
  if (roleArn && !isRoleArn(roleArn)) throw field('role_arn', 'an IAM role ARN: arn:<partition>:iam::<12-digit account id>:role/<optional path/><role name>');
  return roleArn;
}

// ---- roots never overlap ------------------------------------------------------------------------------------

/** A root's place for overlap checks: the store it is on (endpoint, or azure account) and its `bucket/path/`. */
interface RootPlace {
  store: string;
  path: string;
}

/** A store's address as compared: host and port, loopback names as one. */
function storeAddress(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    const host = ['localhost', '[::1]', '::1'].includes(u.hostname.toLowerCase()) ? '127.0.0.1' : u.hostname.toLowerCase();
    return `${host}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return endpoint.toLowerCase();
  }
}

function rootPlace(b: Pick<BackendTarget, 'kind' | 'endpoint' | 'access_key_id'>, rootUri: string, config: Pick<Config, 'STORE_ENDPOINT'>): RootPlace {
  if (b.kind === 'azure') {
    const { container, key, account } = parseAzureUri(rootUri);
    return { store: `azure:${account ?? b.access_key_id ?? ''}:${b.endpoint ? storeAddress(b.endpoint) : ''}`, path: `${container}/${key}` };
  }
  const { bucket, key } = parseS3Uri(rootUri);
  const endpoint = b.endpoint ?? (b.kind === 'object_store' ? config.STORE_ENDPOINT : null);
  return { store: endpoint ? `s3:${storeAddress(endpoint)}` : 's3:aws', path: `${bucket}/${key}` };
}

const overlaps = (a: RootPlace, b: RootPlace) => a.store === b.store && (a.path.startsWith(b.path) || b.path.startsWith(a.path));

export interface RootConflict {
  kind: 'storage_backend' | 'catalog';
  name: string;
  root_uri: string;
}

/**
 * The backends and catalogs whose roots overlap `root` (equal, inside it, or containing it) on the same store.
 * Two owners of one prefix would read each other's files through the credentials vended for one, and a purge of one
 * would delete the other's: every root is its owner's alone. `except`: the backend the root belongs to (a catalog
 * lies inside its own backend's root), and with `withItsCatalogs` that backend's catalogs too (a backend's own
 * root contains them); `exceptCatalog`: the catalog the root is for (a migration's target root).
 */
export async function rootConflicts(
  q: Queryable,
  config: Pick<Config, 'STORE_ENDPOINT'>,
  owner: Pick<BackendTarget, 'kind' | 'endpoint' | 'access_key_id'>,
  root: string,
  except: { backendId?: string; withItsCatalogs?: boolean; catalogId?: string } = {},
): Promise<RootConflict[]> {
  const place = rootPlace(owner, root, config);
  const rows = await q.query<Pick<BackendRow, 'id' | 'name' | 'kind' | 'endpoint' | 'access_key_id' | 'root_uri'> & { catalog_id: string | null; slug: string | null }>(
    `select b.id, b.name, b.kind, b.endpoint, b.access_key_id, b.root_uri, c.id as catalog_id, c.slug
       from storage_backends b left join catalogs c on c.storage_backend_id = b.id order by b.name, c.slug`,
  );
  const found: RootConflict[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    if (!seen.has(r.id)) {
      seen.add(r.id);
      if (r.id !== except.backendId && overlaps(place, rootPlace(r, r.root_uri, config))) found.push({ kind: 'storage_backend', name: r.name, root_uri: r.root_uri });
    }
    if (!r.catalog_id || !r.slug || r.catalog_id === except.catalogId) continue;
    if (except.withItsCatalogs && r.id === except.backendId) continue;
    const catalogRoot = `${r.root_uri}${r.slug}/`;
    if (overlaps(place, rootPlace(r, catalogRoot, config))) found.push({ kind: 'catalog', name: r.slug, root_uri: catalogRoot });
  }
  return found;
}

/** 409 storage_root_overlap naming every conflict, when there is one. */
export async function refuseOverlappingRoot(...args: Parameters<typeof rootConflicts>): Promise<void> {
  // One root check at a time across replicas: two overlapping registrations racing would each find the other absent.
  await args[0].query(`select pg_advisory_xact_lock(hashtext('eider.storage_roots'))`);
  const found = await rootConflicts(...args);
  if (!found.length) return;
  const names = found.map((c) => `${c.kind === 'catalog' ? 'catalog' : 'storage backend'} ${c.name} (${c.root_uri})`).join(', ');
  throw conflict(`the root ${args[3]} overlaps the root of ${names}: every backend and catalog needs a root of its own, neither inside nor around another's`, 'storage_root_overlap', {
    root_uri: args[3],
    conflicts: found,
  });
}

/**
 * Registers a backend after probing it (put, read back, delete one object under the root: 422 storage_unreachable
 * with the store's message when that fails). An object_store backend without an endpoint is on the bundled store.
 * The secret is sealed with SECRET_KEY before it reaches the row.
 */
export async function createBackend(q: Queryable, config: BackendConfig, input: BackendInput): Promise<BackendOut> {
  const root = normalizeRootUri(input.kind, input.root_uri);
  if (input.kind !== 'azure' && (input.account_name || input.account_key)) {
    throw field(input.account_name ? 'account_name' : 'account_key', 'account_name and account_key are for azure backends');
  }
  const roleArn = roleArnFor(input.kind, input.role_arn);
  const azure = input.kind === 'azure' ? azureCredentials(input, root) : null;
  const accessKeyId = azure ? azure.accessKeyId : input.access_key_id || null;
  const secret = azure ? azure.secret : input.secret_access_key || null;
  const hasKey = !!accessKeyId;
  const hasSecret = !!secret;
  if (hasKey !== hasSecret) {
    if (azure) throw field('account_key', 'an azure backend needs its account key');
    throw field(hasKey ? 'secret_access_key' : 'access_key_id', 'access_key_id and secret_access_key go together');
  }
  if (input.endpoint) {
    let u: URL | undefined;
    try {
      u = new URL(input.endpoint);
    } catch {}
    if (!u || !['http:', 'https:'].includes(u.protocol)) throw field('endpoint', 'an http or https URL');
  }
  const endpoint = input.endpoint || (input.kind === 'object_store' ? config.STORE_ENDPOINT : null);
  if ((await q.query(`select 1 from storage_backends where name = $1`, [input.name])).length) throw conflict(`storage backend ${input.name} already exists`);
  const target = {
    name: input.name,
    kind: input.kind,
    root_uri: root,
    endpoint,
    region: input.region || null,
    access_key_id: accessKeyId,
    secret_access_key: secret ? sealBackendSecret(config, secret) : null,
    role_arn: roleArn,
  };
  await refuseOverlappingRoot(q, config, target, root);
  const { vending } = await probeBackend(target, config);
  try {
    const [row] = await q.query<BackendRow>(
      `insert into storage_backends as b (name, kind, root_uri, endpoint, region, access_key_id, secret_access_key, credential_vending, role_arn)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning ${BACKEND_COLS}`,
      [target.name, target.kind, root, target.endpoint, target.region, target.access_key_id, target.secret_access_key, vending, roleArn],
    );
    return toBackendOut(row);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`storage backend ${input.name} already exists`);
    throw e;
  }
}

/** Seals backend secrets stored before sealing existed (at start; idempotent). Returns how many it sealed. */
export async function sealStoredBackendSecrets(q: Queryable, config: Pick<Config, 'SECRET_KEY'>): Promise<number> {
  if (!config.SECRET_KEY) return 0;
  const rows = await q.query<{ id: string; secret_access_key: string }>(`select id, secret_access_key from storage_backends where secret_access_key is not null`);
  let n = 0;
  for (const r of rows) {
    if (isSealed(r.secret_access_key)) continue;
    await q.query(`update storage_backends set secret_access_key = $2 where id = $1 and secret_access_key = $3`, [r.id, sealBackendSecret(config, r.secret_access_key), r.secret_access_key]);
    n++;
  }
  return n;
}

export async function listBackends(q: Queryable): Promise<BackendOut[]> {
  const rows = await q.query<BackendRow & { catalog_count: number }>(
    `select ${BACKEND_COLS}, (select count(*)::int from catalogs c where c.storage_backend_id = b.id) as catalog_count
       from storage_backends b order by b.name`,
  );
  return rows.map(toBackendOut);
}

/** A backend's row; `lock` locks it for the caller's transaction. */
export async function findBackend(q: Queryable, id: string, lock?: 'for update' | 'for share'): Promise<BackendRow | undefined> {
  if (!isUuid(id)) return undefined;
  return (await q.query<BackendRow>(`select ${BACKEND_COLS} from storage_backends b where b.id = $1 ${lock ?? ''}`, [id]))[0];
}

export async function getBackend(q: Queryable, id: string): Promise<BackendOut> {
  const b = await findBackend(q, id);
  if (!b) throw notFound('storage backend');
  const [{ n }] = await q.query<{ n: number }>(`select count(*)::int as n from catalogs where storage_backend_id = $1`, [id]);
  return toBackendOut({ ...b, catalog_count: n });
}

/** 409 while a catalog is bound to the backend: the binding changes only by a storage migration. */
export async function deleteBackend(db: Db, id: string): Promise<void> {
  await db.tx(async (tx) => {
    const b = isUuid(id) ? (await tx.query<{ id: string }>(`select id from storage_backends where id = $1 for update`, [id]))[0] : undefined;
    if (!b) throw notFound('storage backend');
    const bound = await tx.query<{ slug: string }>(`select slug from catalogs where storage_backend_id = $1 order by slug`, [id]);
    if (bound.length) {
      throw conflict(`storage backend is bound to catalog(s) ${bound.map((c) => c.slug).join(', ')}`, 'storage_backend_in_use', {
        catalogs: bound.map((c) => c.slug),
      });
    }
    // A migration still needs it: one running from or to it, or one whose old files on it await their purge.
    const needed = await tx.query<{ id: string }>(
      `select id from storage_migrations
        where (status in ('pending', 'running') and (source_storage_backend_id = $1 or target_storage_backend_id = $1))
           or (source_storage_backend_id = $1 and cutover_at is not null and purged_at is null)
        order by created_at`,
      [id],
    );
    if (needed.length) {
      throw conflict(`storage backend is still needed by storage migration(s) ${needed.map((m) => m.id).join(', ')}`, 'storage_backend_in_use', {
        migrations: needed.map((m) => m.id),
      });
    }
    await tx.query(`delete from storage_backends where id = $1`, [id]);
  });
}

// ---- rotating a backend's credentials ----------------------------------------------------------------------

/** What a rotation may change: the credentials only, never the location (I4: a catalog is bound to its root). */
export interface BackendCredentialsInput {
  access_key_id?: string | null;
  secret_access_key?: string | null;
  /** azure: the account's key (the account name is part of the location and stays). */
  account_key?: string | null;
  /** s3 and object_store: the IAM role for sts vending; null removes it. */
  role_arn?: string | null;
}

export const CREDENTIAL_FIELDS = ['access_key_id', 'secret_access_key', 'account_key', 'role_arn'] as const;

/** A checked and probed rotation, ready to be applied (rotateBackendCredentials). */
export interface CredentialRotation {
  backend: BackendRow;
  /** The fields given, by name (what the audit records; never their values). */
  fields: string[];
  next: { access_key_id: string | null; secret_access_key: string | null; role_arn: string | null; credential_vending: VendingMode };
}

/**
 * Checks a rotation (422 naming the field for an empty body, a field another kind takes, keys without their
 * secret; 404 for an unknown backend; 422 for the bundled store's backends, whose keys are its configuration),
 * then probes the store with the new credentials exactly as registration does (422 storage_unreachable with the
 * store's message) and finds the vending mode they allow. Nothing is saved here.
 */
export async function planCredentialRotation(q: Queryable, config: BackendConfig, id: string, input: BackendCredentialsInput): Promise<CredentialRotation> {
  const fields = CREDENTIAL_FIELDS.filter((f) => input[f] !== undefined);
  if (!fields.length) {
    const message = 'give at least one of access_key_id and secret_access_key (s3, object_store), account_key (azure), role_arn (s3, object_store)';
    throw unprocessable(`body: ${message}`, 'unprocessable_content', { fields: [{ field: 'body', in: 'body', message }] });
  }
  const backend = await findBackend(q, id);
  if (!backend) throw notFound('storage backend');
  if (isBundledStore(backend, config)) {
    throw field(fields[0], `storage backend ${backend.name} is on the bundled object store: its keys are the store's own (OBJECT_STORE_ACCESS_KEY, OBJECT_STORE_SECRET_KEY) and change with its configuration`);
  }
  let accessKeyId = backend.access_key_id;
  let secret: string | null = null; // the new secret in the clear, when one is given
  let roleArn = backend.role_arn ?? null;
  if (backend.kind === 'azure') {
    for (const f of ['access_key_id', 'secret_access_key', 'role_arn'] as const) {
      if (input[f] !== undefined) throw field(f, f === 'role_arn' ? ROLE_ARN_NOT_FOR_AZURE : `an azure backend's key is account_key (its account name ${backend.access_key_id ?? ''} stays: it is part of its location)`);
    }
    if (!input.account_key) throw field('account_key', 'an azure backend needs its account key');
    secret = input.account_key;
  } else {
    if (input.account_key !== undefined) throw field('account_key', 'account_key is for azure backends');
    const hasKey = input.access_key_id !== undefined;
    const hasSecret = input.secret_access_key !== undefined;
    if (hasKey !== hasSecret) throw field(hasKey ? 'secret_access_key' : 'access_key_id', 'access_key_id and secret_access_key go together');
    if (hasKey) {
      if (!input.access_key_id) throw field('access_key_id', 'a new access key id (keys are replaced, not removed)');
      if (!input.secret_access_key) throw field('secret_access_key', 'a new secret access key (keys are replaced, not removed)');
      accessKeyId = input.access_key_id;
      secret = input.secret_access_key;
    }
    if (input.role_arn !== undefined) roleArn = roleArnFor(backend.kind, input.role_arn);
  }
  // A backend registered before roots were checked may share its prefix with another: new keys are not given to it.
  const overlap = await rootConflicts(q, config, backend, backend.root_uri, { backendId: backend.id, withItsCatalogs: true });
  if (overlap.length) {
    throw conflict(`storage backend ${backend.name}'s root ${backend.root_uri} overlaps ${overlap.map((c) => `${c.kind === 'catalog' ? 'catalog' : 'storage backend'} ${c.name} (${c.root_uri})`).join(', ')}: move its catalogs to a backend of their own first`, 'storage_root_overlap', { root_uri: backend.root_uri, conflicts: overlap });
  }
  const sealed = secret === null ? backend.secret_access_key : sealBackendSecret(config, secret);
  const target: BackendTarget = { ...backend, access_key_id: accessKeyId, secret_access_key: sealed, role_arn: roleArn };
  const { vending } = await probeBackend(target, config);
  return { backend, fields, next: { access_key_id: accessKeyId, secret_access_key: sealed, role_arn: roleArn, credential_vending: vending } };
}

/**
 * Applies a probed rotation in one transaction, the backend row locked: the row takes the new credentials, and
 * every catalog bound to the backend has its warehouse updated in the catalog service (updateWarehouse: the
 * credentials only, so a warehouse can never be moved by it; idempotent, so a retry converges). A warehouse
 * update that fails rolls everything back (the row keeps the old credentials, and the warehouses updated before it
 * get them back) and its error is the answer.
 *
 * Storage migrations (domain/storageMigrations/phases.ts) read their backends' rows afresh in every phase, and the cutover
 * builds the warehouse's new settings from the target's row. The active migrations from or to this backend are
 * locked here, so none enters its cutover while the rotation commits; one already in its cutover (the warehouse
 * may be on the target while the catalog row still names the source) answers 409 migration_cutover: retry once it
 * is over. Otherwise a migrating catalog bound here gets the new credentials like any other, and a migration to
 * this backend cuts over with them.
 */
export async function rotateBackendCredentials(db: Db, client: () => CatalogClient, config: WarehouseConfig, plan: CredentialRotation, logger?: Logger): Promise<BackendOut> {
  return db.tx(async (tx) => {
    const locked = await findBackend(tx, plan.backend.id, 'for update');
    if (!locked) throw notFound('storage backend');
    if (locked.access_key_id !== plan.backend.access_key_id || locked.secret_access_key !== plan.backend.secret_access_key || (locked.role_arn ?? null) !== (plan.backend.role_arn ?? null)) {
      throw conflict(`the credentials of storage backend ${locked.name} changed meanwhile; send the rotation again`);
    }
    const active = await tx.query<{ id: string; phase: string }>(
      `select id, phase from storage_migrations
        where status in ('pending', 'running') and (source_storage_backend_id = $1 or target_storage_backend_id = $1)
        order by created_at for update`,
      [locked.id],
    );
    const cutover = active.filter((m) => m.phase === 'cutover');
    if (cutover.length) {
      throw conflict(`storage migration ${cutover[0].id} is cutting over a catalog from or to storage backend ${locked.name}; rotate its credentials once the cutover is done`, 'migration_cutover', {
        migrations: cutover.map((m) => m.id),
      });
    }
    const [row] = await tx.query<BackendRow>(
      `update storage_backends as b set access_key_id = $2, secret_access_key = $3, role_arn = $4, credential_vending = $5 where b.id = $1 returning ${BACKEND_COLS}`,
      [locked.id, plan.next.access_key_id, plan.next.secret_access_key, plan.next.role_arn, plan.next.credential_vending],
    );
    const bound = await tx.query<{ slug: string }>(`select slug from catalogs where storage_backend_id = $1 order by slug`, [locked.id]);
    const given: { slug: string }[] = [];
    try {
      for (const c of bound) {
        if (await giveCredentials(client(), row, c, config)) given.push(c);
      }
    } catch (e) {
      // The row rolls back with the throw; the warehouses that already took the new credentials go back to the old
      // ones, so the catalog service keeps agreeing with the row (a failure here is logged: a retry still converges).
      for (const c of given) {
        await giveCredentials(client(), locked, c, config).catch((err: unknown) =>
          logger?.error({ catalog: c.slug, err: err instanceof Error ? err.message : String(err) }, 'a warehouse kept the new credentials of a rotation that failed'),
        );
      }
      throw e;
    }
    return toBackendOut({ ...row, catalog_count: bound.length });
  });
}

/** Hands a backend's credentials (only them: a warehouse is never moved here) to a catalog's warehouse; false when
 *  the catalog service has no such warehouse (ensureCatalogWarehouses creates it, from the row, at start). */
async function giveCredentials(client: CatalogClient, backend: BackendRow, c: { slug: string }, config: WarehouseConfig): Promise<boolean> {
  const w = warehouseInputFor(backend, c.slug, config);
  try {
    await client.updateWarehouse(warehouseName(c), { access_key_id: w.access_key_id, secret_access_key: w.secret_access_key, vending: w.vending, role_arn: w.role_arn ?? null });
    return true;
  } catch (e) {
    if (e instanceof CatalogServiceError && e.status === 404) return false;
    throw e;
  }
}

// ---- catalogs -----------------------------------------------------------------------------------------------

export interface CatalogRow {
  id: string;
  slug: string;
  storage_backend_id: string;
  storage_kind: StorageKind;
  backend_root_uri: string;
  created_by: string | null;
  created_at: Date;
}

/** A catalog as every route answers it: its warehouse root is the backend root plus the slug. */
export const CatalogOutSchema = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  storage_backend_id: Schema.String,
  storage_kind: Schema.Literals(STORAGE_KINDS),
  root_uri: Schema.String,
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
});
export type CatalogOut = typeof CatalogOutSchema.Type;

/** A catalog as one workspace sees it: whether it is the default, and the attachment's access mode. */
export const WorkspaceCatalogOutSchema = Schema.Struct({
  ...CatalogOutSchema.fields,
  is_default: Schema.Boolean,
  access_mode: Schema.Literals(ACCESS_MODES),
});
export type WorkspaceCatalogOut = typeof WorkspaceCatalogOutSchema.Type;

/** An attached catalog as seen from one workspace. */
export interface AttachedCatalog extends CatalogRow {
  access_mode: AccessMode;
  is_default: boolean;
}

const CATALOG_COLS = `c.id, c.slug, c.storage_backend_id, b.kind as storage_kind, b.root_uri as backend_root_uri, c.created_by, c.created_at`;
const CATALOG_FROM = `catalogs c join storage_backends b on b.id = c.storage_backend_id`;

/** The warehouse root of a catalog: the backend root plus the slug (I4). */
export const catalogRootUri = (c: Pick<CatalogRow, 'slug' | 'backend_root_uri'>) => `${c.backend_root_uri}${c.slug}/`;
/** The catalog service warehouse that holds a catalog. */
export const warehouseName = (c: Pick<CatalogRow, 'slug'>) => c.slug;

export const toCatalogOut = (c: CatalogRow): CatalogOut => ({
  id: c.id,
  slug: c.slug,
  storage_backend_id: c.storage_backend_id,
  storage_kind: c.storage_kind,
  root_uri: catalogRootUri(c),
  created_by: c.created_by,
  created_at: c.created_at.toISOString(),
});

const toWorkspaceCatalogOut = (c: AttachedCatalog): WorkspaceCatalogOut => ({
  ...toCatalogOut(c),
  is_default: c.is_default,
  access_mode: c.access_mode,
});

/** Who may bind, attach, scope and drop a catalog: holders of the `catalogs` permission and its creator. */
export const mayManageCatalog = (p: Principal, c: Pick<CatalogRow, 'created_by'>) =>
  hasPermission(p, 'catalogs') || (c.created_by !== null && c.created_by === p.user.id);

/**
 * What the catalog service needs to host a catalog on a backend (backendStorage.ts backendConnection: the bundled
 * store's backends use its root keys from configuration; an s3 backend without keys the deployment's AWS_*
 * variables), with the vending mode the backend's probe found.
 */
export function warehouseInputFor(backend: BackendRow, catalogSlug: string, config: WarehouseConfig): WarehouseInput {
  const c = backendConnection(backend, config);
  if (!c) throw unprocessable(`storage backend ${backend.name} has no credentials the catalog service could use`, 'storage_credentials_missing');
  return {
    name: catalogSlug,
    root_uri: `${backend.root_uri}${catalogSlug}/`,
    kind: backend.kind,
    endpoint: c.endpoint,
    region: c.region,
    access_key_id: c.accessKeyId,
    secret_access_key: c.secretAccessKey,
    path_style: c.pathStyle,
    vending: backend.credential_vending,
    role_arn: backend.kind === 'azure' ? null : (backend.role_arn ?? null),
  };
}

export async function findCatalog(q: Queryable, ref: string): Promise<CatalogRow | undefined> {
  return (await q.query<CatalogRow>(`select ${CATALOG_COLS} from ${CATALOG_FROM} where ${isUuid(ref) ? 'c.id = $1::uuid' : 'c.slug = $1'}`, [ref]))[0];
}

/** Every catalog for catalog managers; for anyone else those attached to one of their workspaces or made by them. */
export async function listCatalogs(q: Queryable, p: Principal): Promise<CatalogOut[]> {
  const rows = hasPermission(p, 'catalogs')
    ? await q.query<CatalogRow>(`select ${CATALOG_COLS} from ${CATALOG_FROM} order by c.slug`)
    : await q.query<CatalogRow>(
        `select ${CATALOG_COLS} from ${CATALOG_FROM}
          where c.created_by = $1
             or exists (select 1 from workspace_catalogs wc join workspace_members m on m.workspace_id = wc.workspace_id
                         where wc.catalog_id = c.id and m.user_id = $1)
          order by c.slug`,
        [p.user.id],
      );
  return rows.map(toCatalogOut);
}

export async function getVisibleCatalog(q: Queryable, p: Principal, id: string): Promise<CatalogOut> {
  const visible = (await listCatalogs(q, p)).find((c) => c.id === id);
  if (!visible) throw notFound('catalog');
  return visible;
}

/**
 * Binds a new catalog to a backend and registers its warehouse in the catalog service, in one database
 * transaction: if the catalog service refuses, no catalog row is left behind.
 */
export async function createCatalog(
  db: Db,
  client: CatalogClient,
  config: WarehouseConfig,
  p: Principal,
  input: { slug: string; storage_backend_id: string },
): Promise<CatalogOut> {
  return db.tx(async (tx) => {
    // FOR SHARE: a credential rotation of the backend (which locks it FOR UPDATE) either lands before this reads its
    // keys or waits for this catalog and then updates its warehouse too.
    const backend = await findBackend(tx, input.storage_backend_id, 'for share');
    if (!backend) throw field('storage_backend_id', 'no storage backend has this id');
    const warehouse = warehouseInputFor(backend, input.slug, config);
    let row: CatalogRow;
    try {
      const [c] = await tx.query<{ id: string }>(
        `insert into catalogs (slug, storage_backend_id, created_by) values ($1, $2, $3) returning id`,
        [input.slug, backend.id, p.user.id],
      );
      row = (await findCatalog(tx, c.id))!;
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`catalog slug ${input.slug} is taken`);
      throw e;
    }
    await refuseOverlappingRoot(tx, config, backend, catalogRootUri(row), { backendId: backend.id, catalogId: row.id });
    await registerWarehouse(client, warehouse);
    return toCatalogOut(row);
  });
}

/**
 * Creates the warehouse; one left by an earlier attempt (same name, same root) is adopted, since a create whose
 * database commit failed leaves exactly that. A warehouse of that name with another root is a conflict.
 */
async function registerWarehouse(client: CatalogClient, w: WarehouseInput): Promise<'created' | 'adopted'> {
  try {
    await client.createWarehouse(w);
    return 'created';
  } catch (e) {
    if (!(e instanceof CatalogServiceError) || e.status !== 409) throw e;
    const existing = await client.getWarehouse(w.name);
    if (existing && existing.root_uri === w.root_uri) {
      await client.updateWarehouse(w.name, { kind: w.kind, endpoint: w.endpoint, region: w.region, access_key_id: w.access_key_id, secret_access_key: w.secret_access_key, path_style: w.path_style, vending: w.vending, role_arn: w.role_arn ?? null });
      return 'adopted';
    }
    throw conflict(`the catalog service already hosts a warehouse named ${w.name} elsewhere (${existing?.root_uri ?? 'unknown root'})`, 'warehouse_exists');
  }
}

/**
 * Drops a catalog that no workspace attaches: every table (purged) and schema in its warehouse, the warehouse,
 * then the row (its sidecar rows go with it). Attachments are checked under the row lock, so an attach racing
 * this either lands first (and this answers 409) or waits and then finds no catalog.
 */
/**
 * The old files a finished migration of the catalog still keeps (cut over, its retention not over): they go with the
 * catalog, since nothing could read them afterwards and their migration record goes too.
 */
async function purgeRetainedCopies(q: Queryable, catalogId: string, config: BackendConfig, logger?: Logger): Promise<void> {
  const retained = await q.query<{ id: string; source_storage_backend_id: string; source_root: string }>(
    `select id, source_storage_backend_id, source_root from storage_migrations where catalog_id = $1 and cutover_at is not null and purged_at is null`,
    [catalogId],
  );
  for (const m of retained) {
    const backend = await findBackend(q, m.source_storage_backend_id);
    const connection = backend ? backendConnection(backend, config) : undefined;
    if (!connection) {
      logger?.warn({ migrationId: m.id, root: m.source_root }, 'the storage a retained migration copy lives on is gone or unreachable: its files were not deleted');
      continue;
    }
    const store = blobStoreFor(connection);
    try {
      const files = await store.deletePrefix(m.source_root);
      logger?.info({ migrationId: m.id, root: m.source_root, files }, 'retained migration copy deleted with its catalog');
    } finally {
      store.close();
    }
  }
}

export async function deleteCatalog(db: Db, client: CatalogClient, p: Principal, id: string, config: BackendConfig, logger?: Logger): Promise<void> {
  await db.tx(async (tx) => {
    const locked = isUuid(id) ? (await tx.query<{ id: string }>(`select id from catalogs where id = $1 for update`, [id]))[0] : undefined;
    if (!locked) throw notFound('catalog');
    const c = (await findCatalog(tx, id))!;
    if (!mayManageCatalog(p, c)) throw forbidden('dropping a catalog needs the catalogs permission or being its creator');
    const moving = await tx.query<{ id: string }>(`select id from storage_migrations where catalog_id = $1 and status in ('pending', 'running')`, [id]);
    if (moving.length) {
      throw new AppError(409, 'catalog_read_only', `catalog ${c.slug} is read-only while its storage migration runs`, { catalog: c.slug, migration_id: moving[0].id });
    }
    const attached = await tx.query<{ slug: string }>(
      `select w.slug from workspace_catalogs wc join workspaces w on w.id = wc.workspace_id where wc.catalog_id = $1 order by w.slug`,
      [id],
    );
    if (attached.length) {
      throw conflict(`catalog ${c.slug} is attached to workspace(s) ${attached.map((w) => w.slug).join(', ')}; detach it first`, 'catalog_attached', {
        workspaces: attached.map((w) => w.slug),
      });
    }
    const wh = warehouseName(c);
    if (await client.getWarehouse(wh)) {
      for (const ns of await client.listNamespaces(wh)) {
        for (const t of await client.listTables(wh, ns)) await client.dropTable(wh, ns, t, { purge: true });
        await client.dropNamespace(wh, ns);
      }
      await client.dropWarehouse(wh);
    }
    await purgeRetainedCopies(tx, id, config, logger);
    await tx.query(`delete from catalogs where id = $1`, [id]);
    logger?.info({ catalog: c.slug, catalogId: c.id }, 'catalog dropped');
  });
}

export interface EnsureReport {
  created: string[];
  updated: string[];
  unchanged: string[];
  failed: Array<{ catalog: string; error: string }>;
}

/**
 * Idempotent, for startup once the catalog service is up: every catalog (the bundled `warehouse` first of all)
 * has its warehouse, with the connection settings its backend implies. Settings the service shows (root, kind,
 * endpoint, region, path style) are compared and updated when they differ; keys are never shown back, so a
 * rotated key is applied by `updateWarehouse` from an operator action, not here (an update revokes every vended
 * credential, which a restart must not do).
 */
export async function ensureCatalogWarehouses(db: Queryable, client: CatalogClient, config: WarehouseConfig, logger?: Logger): Promise<EnsureReport> {
  const report: EnsureReport = { created: [], updated: [], unchanged: [], failed: [] };
  const rows = await db.query<CatalogRow>(`select ${CATALOG_COLS} from ${CATALOG_FROM} order by c.slug`);
  for (const c of rows) {
    // A storage migration between its two cutover steps (the warehouse moved, the catalog row not yet): the resumed
    // cutover finishes it; "correcting" the warehouse back to the old backend here would undo it.
    if ((await db.query(`select 1 from storage_migrations where catalog_id = $1 and status = 'running' and phase = 'cutover'`, [c.id])).length) {
      report.unchanged.push(c.slug);
      continue;
    }
    try {
      const backend = (await findBackend(db, c.storage_backend_id))!;
      const want = warehouseInputFor(backend, c.slug, config);
      const have = await client.getWarehouse(warehouseName(c));
      if (!have) {
        report[(await registerWarehouse(client, want)) === 'created' ? 'created' : 'updated'].push(c.slug);
      } else if (
        have.root_uri !== want.root_uri ||
        have.kind !== want.kind ||
        (have.endpoint ?? null) !== (want.endpoint ?? null) ||
        have.region !== want.region ||
        have.path_style !== want.path_style ||
        (have.vending !== undefined && have.vending !== want.vending) ||
        (have.role_arn !== undefined && (have.role_arn ?? null) !== (want.role_arn ?? null))
      ) {
        const { name: _n, ...settings } = want;
        await client.updateWarehouse(want.name, settings);
        report.updated.push(c.slug);
      } else {
        report.unchanged.push(c.slug);
      }
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      report.failed.push({ catalog: c.slug, error: message });
      logger?.error({ catalog: c.slug, error: message }, 'catalog warehouse could not be ensured');
    }
  }
  return report;
}

// ---- attachments --------------------------------------------------------------------------------------------

const ATTACHED_COLS = `${CATALOG_COLS}, wc.access_mode, (w.default_catalog_id is not distinct from c.id) as is_default`;
const ATTACHED_FROM = `workspace_catalogs wc join ${CATALOG_FROM} on c.id = wc.catalog_id join workspaces w on w.id = wc.workspace_id`;

export async function listWorkspaceCatalogs(q: Queryable, workspaceId: string): Promise<WorkspaceCatalogOut[]> {
  const rows = await q.query<AttachedCatalog>(`select ${ATTACHED_COLS} from ${ATTACHED_FROM} where wc.workspace_id = $1 order by c.slug`, [workspaceId]);
  return rows.map(toWorkspaceCatalogOut);
}

/** `{catalog}` (slug or id) as attached to the workspace; 404 when it is not attached there. */
export async function resolveAttachedCatalog(q: Queryable, workspaceId: string, ref: string): Promise<AttachedCatalog> {
  const rows = await q.query<AttachedCatalog>(
    `select ${ATTACHED_COLS} from ${ATTACHED_FROM} where wc.workspace_id = $1 and ${isUuid(ref) ? 'c.id = $2::uuid' : 'c.slug = $2'}`,
    [workspaceId, ref],
  );
  if (!rows[0]) throw notFound('catalog');
  return rows[0];
}

/**
 * PUT semantics for an attachment. Attaching grants the workspace's members access to the catalog's data, so a
 * new attachment, and widening a scoped one to full, need a catalog manager (besides the workspace owner role the
 * route declares); narrowing to scoped, changing the default or re-sending the same attachment need only the
 * owner role. `access_mode` absent keeps the current mode (`full` on first attach). The first catalog attached to
 * a workspace without a default becomes its default; `make_default: false` never unsets a default.
 */
export async function attachCatalog(
  db: Db,
  p: Principal,
  ws: WorkspaceAccess,
  ref: string,
  input: { make_default: boolean; access_mode?: AccessMode },
): Promise<{ created: boolean; catalog: WorkspaceCatalogOut }> {
  return db.tx(async (tx) => {
    const c = await findCatalog(tx, ref);
    if (!c) throw notFound('catalog');
    await tx.query(`select id from workspaces where id = $1 for update`, [ws.workspace.id]);
    const existing = (await tx.query<{ access_mode: AccessMode }>(
      `select access_mode from workspace_catalogs where workspace_id = $1 and catalog_id = $2`,
      [ws.workspace.id, c.id],
    ))[0];
    const mode: AccessMode = input.access_mode ?? existing?.access_mode ?? 'full';
    const widens = !existing || (existing.access_mode === 'scoped' && mode === 'full');
    if (widens && !mayManageCatalog(p, c)) {
      throw forbidden(
        existing
          ? `widening catalog ${c.slug} to full access needs the catalogs permission or being its creator`
          : `attaching catalog ${c.slug} needs the catalogs permission or being its creator`,
      );
    }
    try {
      await tx.query(
        `insert into workspace_catalogs (workspace_id, catalog_id, access_mode) values ($1, $2, $3)
         on conflict (workspace_id, catalog_id) do update set access_mode = excluded.access_mode`,
        [ws.workspace.id, c.id, mode],
      );
    } catch (e) {
      // the catalog was dropped between our read and the insert
      if (e instanceof DbError && e.code === '23503') throw notFound('catalog');
      throw e;
    }
    await tx.query(
      `update workspaces set default_catalog_id = $2 where id = $1 and ($3::boolean or default_catalog_id is null)`,
      [ws.workspace.id, c.id, input.make_default],
    );
    return { created: !existing, catalog: toWorkspaceCatalogOut(await resolveAttachedCatalog(tx, ws.workspace.id, c.id)) };
  });
}

/** Detaches (its grants go with it). Detaching the default leaves the workspace without a default catalog. */
export async function detachCatalog(db: Db, workspaceId: string, ref: string): Promise<void> {
  await db.tx(async (tx) => {
    await tx.query(`select id from workspaces where id = $1 for update`, [workspaceId]);
    const c = await resolveAttachedCatalog(tx, workspaceId, ref);
    await tx.query(`delete from workspace_catalogs where workspace_id = $1 and catalog_id = $2`, [workspaceId, c.id]);
    await tx.query(`update workspaces set default_catalog_id = null where id = $1 and default_catalog_id = $2`, [workspaceId, c.id]);
  });
}

/** For errors the catalog service answers on our behalf: its conflicts and missing objects keep their status. */
export function fromCatalogService(e: unknown, what: string): unknown {
  if (e instanceof CatalogUnreachableError) return new AppError(503, 'catalog_unavailable', 'the catalog service is not reachable');
  if (!(e instanceof CatalogServiceError)) return e;
  if (e.status === 404) return notFound(what);
  if (e.status === 409) return conflict(e.message);
  if (e.status === 400 || e.status === 422) return unprocessable(e.message);
  return new AppError(502, 'catalog_error', `the catalog service failed: ${e.message}`);
}
