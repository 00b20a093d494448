// Storage credentials handed to clients that ask for `X-Iceberg-Access-Delegation: vended-credentials`, by the
// warehouse's vending mode (chosen by the api's probe when the backend was registered, domain/backendStorage.ts).
// Every mode is per warehouse and short-lived unless said otherwise; secrets and tokens go into the response's
// config only, never into a log.
//  - derived: keys scoped to the table's location, derived from the warehouse secret (Eider's object stores
//    recompute them, see runtime/objectStore.ts), living the credential TTL, revocable per key or all keys of a
//    warehouse at once by bumping its credential epoch;
//  - sts: an S3-compatible store with STS AssumeRole (AWS, MinIO, Ceph RGW, and Eider's own stores): temporary
//    credentials (key, secret, `s3.session-token`) from AssumeRole of the warehouse's `role_arn` (AWS requires one;
//    none is sent without it) with an inline session policy limited to the table's prefix (iceberg/stsCredentials.ts), living the credential TTL but at least STS's 900 s. The store enforces them;
//    bumping the epoch does not revoke them (the store keeps no list the catalog could change): they expire;
//  - static: an S3-compatible store that offers neither: the configured keys as they are, neither short-lived,
//    scoped nor revocable by the catalog (the backend shows `credential_vending: static` so an administrator knows
//    to give it a key limited to its root);
//  - sas (azure): a service SAS signed with the account key, valid for the credential TTL. On an account with a
//    hierarchical namespace (ADLS Gen2, learnt once per account: hierarchicalNamespaceOf) it is a directory SAS on
//    the table's location, so it reaches that table's files only; on a flat-namespace account (and Azurite) it is a
//    SAS on the table's container (a service SAS cannot name a prefix there: iceberg/azureSas.ts). Either is bound to
//    the container's stored access policy of the warehouse's credential epoch: bumping the epoch replaces that
//    policy, which revokes every SAS of the old epoch at once. A container holds at most 5 stored access policies;
//    when other policies take them all, the SAS is signed unbound (revoked only by its expiry or by rotating the
//    account key).
import { deriveVendedKey, type VendedClaims } from '../runtime/objectStore.ts';
import type { Queryable } from '../runtime/db.ts';
import { isCredentialRevoked, type Warehouse } from './metastore.ts';
import { locate } from './storage.ts';
import { CatalogError } from './errors.ts';
import { containerSas, directorySas, ensureEpochPolicy, hierarchicalNamespace } from '../iceberg/azureSas.ts';
import { azureBlobEndpoint } from '../iceberg/objectStorageAzure.ts';
import { azureVendedConfig } from '../iceberg/vendedStorage.ts';
import { assumeRole, sessionPolicy, type StsCredential } from '../iceberg/stsCredentials.ts';

interface StorageCredential {
  prefix: string;
  config: Record<string, string>;
}

export interface VendedCredentials {
  /** Goes into LoadTableResult.config (older clients read only this). */
  config: Record<string, string>;
  'storage-credentials': StorageCredential[];
}

/** Whether a request asked for vended credentials (the header is a comma-separated list). */
export function wantsVendedCredentials(header: string | string[] | undefined): boolean {
  const values = Array.isArray(header) ? header.join(',') : header ?? '';
  return values.split(',').some((v) => v.trim().toLowerCase() === 'vended-credentials');
}

/** An answer the catalog service keeps for a while, or the question still on its way. */
interface Remembered<T> {
  until: number;
  pending?: Promise<T>;
  answer?: T;
}

/**
 * The answer to `ask` under `key`, asked again only once it is older than `freshFor(answer)` ms (callers meanwhile
 * share the one question; `freshFor()` is how long a question on its way is waited for instead of asked again). A
 * failed question is forgotten. Bounded: past 1,000 keys the cache starts over.
 */
async function remembered<T>(cache: Map<string, Remembered<T>>, key: string, nowMs: number, freshFor: (answer?: T) => number, ask: () => Promise<T>): Promise<T> {
  const hit = cache.get(key);
  if (hit && hit.until > nowMs) return hit.pending ?? (hit.answer as T);
  const pending = ask();
  cache.set(key, { until: nowMs + freshFor(), pending });
  try {
    const answer = await pending;
    cache.set(key, { until: nowMs + freshFor(answer), answer });
    if (cache.size > 1000) cache.clear();
    return answer;
  } catch (e) {
    cache.delete(key);
    throw e;
  }
}

/** Containers whose epoch policy was made sure of lately: `endpoint|account|container|warehouse|epoch` → its id. */
const ensuredPolicies = new Map<string, Remembered<string | undefined>>();
/** How long a policy made sure of is trusted before it is looked at again (someone may have removed it). */
const POLICY_RECHECK_MS = 60_000;

/**
 * The stored access policy a SAS of this warehouse's epoch binds to on `container` (made sure of once a minute per
 * container), or undefined when the container has no room for it.
 */
async function epochPolicyFor(w: Warehouse, secret: string, container: string, nowMs = Date.now()): Promise<string | undefined> {
  const endpoint = azureBlobEndpoint(w.accessKeyId, w.endpoint);
  const key = `${endpoint}|${w.accessKeyId}|${container}|${w.name}|${w.credentialEpoch}`;
  try {
    return await remembered(ensuredPolicies, key, nowMs, () => POLICY_RECHECK_MS, () =>
      ensureEpochPolicy({ accountName: w.accessKeyId, accountKey: secret, endpoint }, container, w.name, w.credentialEpoch),
    );
  } catch (e) {
    throw storageFailed(w, 'could not set the stored access policy of its credential epoch', e);
  }
}

/** Whether an account has a hierarchical namespace, by `endpoint|account`. */
const namespaces = new Map<string, Remembered<boolean>>();
/**
 * How long a flat namespace is trusted before the account is asked again (it may have been upgraded to ADLS Gen2
 * since). A hierarchical namespace is trusted for good: an account cannot be downgraded.
 */
const FLAT_RECHECK_MS = 10 * 60_000;

/** Whether the warehouse's azure account has a hierarchical namespace (asked once per account, see FLAT_RECHECK_MS). */
export async function hierarchicalNamespaceOf(w: Warehouse, secret: string, nowMs = Date.now()): Promise<boolean> {
  const endpoint = azureBlobEndpoint(w.accessKeyId, w.endpoint);
  try {
    return await remembered(namespaces, `${endpoint}|${w.accessKeyId}`, nowMs, (hns) => (hns === true ? Number.POSITIVE_INFINITY : FLAT_RECHECK_MS), () =>
      hierarchicalNamespace({ accountName: w.accessKeyId, accountKey: secret, endpoint }),
    );
  } catch (e) {
    throw storageFailed(w, 'could not get its storage account information', e);
  }
}

/**
 * After the warehouse's credential epoch was bumped: replaces the previous epoch's stored access policy on its root
 * container (an azure `sas` warehouse), so every SAS of the old epoch stops working at once. Other vending modes
 * need nothing here (derived keys ask the metastore; sts and static credentials are not revocable by the catalog).
 */
export async function revokeEpoch(w: Warehouse, secret: string): Promise<void> {
  if (w.kind !== 'azure' || w.vending !== 'sas') return;
  await epochPolicyFor(w, secret, locate(w.rootUri).bucket);
}

function storageFailed(w: Warehouse, what: string, e: unknown): CatalogError {
  const err = e as { name?: string; code?: string; details?: { errorCode?: string }; message?: string };
  const code = err.details?.errorCode ?? err.code ?? err.name ?? 'Error';
  const message = (err.message ?? String(e)).split('\n')[0];
  return new CatalogError(503, 'ServiceUnavailableException', `Warehouse ${w.name}: ${what}: ${code}: ${message}`);
}

/** `secret`: the warehouse secret, opened (WarehouseStorage.secretOf). */
export async function vendCredentials(w: Warehouse, secret: string, tableLocation: string, ttlSeconds: number, nowMs = Date.now()): Promise<VendedCredentials> {
  const { bucket, key } = locate(tableLocation);
  const prefix = key.replace(/\/+$/, '') + '/';
  if (w.kind === 'azure') {
    const endpoint = azureBlobEndpoint(w.accessKeyId, w.endpoint);
    const signer = { accountName: w.accessKeyId, accountKey: secret, endpoint };
    const policy = await epochPolicyFor(w, secret, bucket, nowMs);
    const directory = key.replace(/^\/+|\/+$/g, '');
    const sas = directory && (await hierarchicalNamespaceOf(w, secret, nowMs))
      ? directorySas(signer, bucket, directory, ttlSeconds, nowMs, policy)
      : containerSas(signer, bucket, ttlSeconds, true, nowMs, policy);
    const config = azureVendedConfig(w.accessKeyId, endpoint, sas.token, sas.expiresAtMs);
    return { config, 'storage-credentials': [{ prefix: `${tableLocation.replace(/\/+$/, '')}/`, config }] };
  }
  const base: Record<string, string> = {
    's3.region': w.region,
    's3.path-style-access': String(w.pathStyle),
    'client.region': w.region,
  };
  if (w.endpoint) base['s3.endpoint'] = w.endpoint;
  let config: Record<string, string>;
  if (w.vending === 'derived') {
    const expiresAt = Math.floor(nowMs / 1000) + ttlSeconds;
    const vended = deriveVendedKey(secret, { warehouse: w.name, bucket, prefix, expiresAt, epoch: w.credentialEpoch });
    config = {
      ...base,
      's3.access-key-id': vended.accessKeyId,
      's3.secret-access-key': vended.secretAccessKey,
      's3.session-token-expires-at-ms': String(expiresAt * 1000),
    };
  } else if (w.vending === 'sts') {
    let c: StsCredential;
    try {
      c = await assumeRole({ endpoint: w.endpoint, region: w.region, accessKeyId: w.accessKeyId, secretAccessKey: secret, roleArn: w.roleArn }, sessionPolicy(bucket, prefix), ttlSeconds, `eider-${w.name}`);
    } catch (e) {
      throw storageFailed(w, 'STS AssumeRole failed', e);
    }
    config = {
      ...base,
      's3.access-key-id': c.accessKeyId,
      's3.secret-access-key': c.secretAccessKey,
      's3.session-token': c.sessionToken,
      's3.session-token-expires-at-ms': String(c.expiresAtMs),
    };
  } else {
    config = { ...base, 's3.access-key-id': w.accessKeyId, 's3.secret-access-key': secret };
  }
  return { config, 'storage-credentials': [{ prefix: `s3://${bucket}/${prefix}`, config }] };
}

/** The bundled store's revocation hook (ObjectStoreOptions.isRevoked), backed by the metastore. */
export function revocationCheck(db: Queryable): (claims: VendedClaims, accessKeyId: string) => Promise<boolean> {
  // When the metastore cannot answer this rejects, and the store refuses the key as unavailable (not as revoked).
  return (claims, accessKeyId) => isCredentialRevoked(db, claims.warehouse, claims.epoch, accessKeyId);
}
