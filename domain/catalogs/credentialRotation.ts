// Rotating a storage backend's credentials: checked and probed first (planCredentialRotation), then applied to
// the row and to the warehouse of every catalog bound to it in one transaction (rotateBackendCredentials).
import type { Db, Queryable } from '../../runtime/db.ts';
import { CatalogServiceError, type CatalogClient } from '../../runtime/catalogClient.ts';
import type { Logger } from '../../runtime/logger.ts';
import { conflict, notFound, unprocessable } from '../errors.ts';
import { isBundledStore, probeBackend, sealBackendSecret, type BackendConfig, type BackendTarget } from '../backendStorage.ts';
import type { VendingMode } from '../../iceberg/vendedStorage.ts';
import { BACKEND_COLS, field, findBackend, ROLE_ARN_NOT_FOR_AZURE, roleArnFor, toBackendOut, type BackendOut, type BackendRow } from './backends.ts';
import { rootConflicts } from './roots.ts';
import { warehouseInputFor, warehouseName, type WarehouseConfig } from './warehouses.ts';

/** What a rotation may change: the credentials only, never the location (I4: a catalog is bound to its root). */
export interface BackendCredentialsInput {
  access_key_id?: string | null;
  secret_access_key?: string | null;
  /** azure: the account's key (the account name is part of the location and stays). */
  account_key?: string | null;
  /** s3 and object_store: the IAM role for sts vending; null removes it. */
  role_arn?: string | null;
}

const CREDENTIAL_FIELDS = ['access_key_id', 'secret_access_key', 'account_key', 'role_arn'] as const;

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
