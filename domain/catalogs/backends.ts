// Storage backends: where catalogs keep their files. A backend is registered after a probe of its root (put,
// read back, delete), its secret sealed with SECRET_KEY; it can be dropped only while nothing is bound to it.
import { Schema } from 'effect';
import type { Db, Queryable } from '../../runtime/db.ts';
import { isUniqueViolation } from '../../runtime/db.ts';
import type { Config } from '../../runtime/config.ts';
import { conflict, notFound, unprocessable } from '../errors.ts';
import { isUuid } from '../identity.ts';
import { isAzureUri, normalizeAzureRoot, normalizeS3Root, parseAzureUri, StorageUriError } from '../../iceberg/storageUri.ts';
import { isSealed } from '../../settings/secretBox.ts';
import { isRoleArn } from '../../iceberg/stsRules.ts';
import { probeBackend, sealBackendSecret, type BackendConfig, type BackendTarget, type StorageKind } from '../backendStorage.ts';
import { VENDING_MODES, type VendingMode } from '../../iceberg/vendedStorage.ts';
import { refuseOverlappingRoot } from './roots.ts';

export const STORAGE_KINDS: readonly StorageKind[] = ['object_store', 's3', 'azure'];

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

export const BACKEND_COLS = `b.id, b.name, b.kind, b.root_uri, b.endpoint, b.region, b.access_key_id, b.secret_access_key, b.role_arn, b.credential_vending, b.created_at`;

// Secrets never leave this module in a response shape: only whether they are set.
export const toBackendOut = (b: BackendRow & { catalog_count?: number }): BackendOut => ({
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

export const field = (name: string, message: string) => unprocessable(`${name}: ${message}`, 'unprocessable_content', { fields: [{ field: name, in: 'body', message }] });

/**
 * The root as stored: one trailing slash. object_store and s3 take `s3://bucket/optional/path/`; azure takes
 * `az://container/optional/path/` (the account is the backend's) or, ADLS Gen2 style,
 * `abfss://container@account.dfs.core.windows.net/optional/path/`.
 */
function normalizeRootUri(kind: StorageKind, raw: string): string {
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

export const ROLE_ARN_NOT_FOR_AZURE = 'role_arn is for s3 and object_store backends (STS AssumeRole); an azure backend vends SAS tokens';

/** A role_arn as given (trimmed; empty is none), at registration and rotation: 422 naming the field on an azure
 *  backend or when it is no IAM role ARN. */
export function roleArnFor(kind: StorageKind, raw: string | null | undefined): string | null {
  const roleArn = raw?.trim() || null;
  if (roleArn && kind === 'azure') throw field('role_arn', ROLE_ARN_NOT_FOR_AZURE);
  if (roleArn && !isRoleArn(roleArn)) throw field('role_arn', 'an IAM role ARN: arn:<partition>:iam::<12-digit account id>:role/<optional path/><role name>');
  return roleArn;
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
