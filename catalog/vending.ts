// Storage credentials handed to clients that ask for `X-Iceberg-Access-Delegation: vended-credentials`, by the
// warehouse's vending mode (chosen by the api's probe when the backend was registered):
//  - derived: short-lived keys scoped to the table's location, derived from the warehouse secret (Eider's object
//    stores recompute them, see runtime/objectStore.ts) and revocable (per key, or all keys of a warehouse by
//    bumping its credential epoch);
//  - static: the configured keys as they are, for an S3-compatible store that can verify no derived key: this
//    catalog has no STS, so those are neither short-lived, scoped nor revocable by the catalog (the backend shows
//    `credential_vending: static` so an administrator knows to give it a key limited to its root);
//  - sas (azure): a service SAS signed with the account key, valid for the credential TTL, on the table's container
//    (a service SAS cannot name a prefix on a flat-namespace account: iceberg/azureSas.ts); bumping the epoch does
//    not revoke a SAS already handed out (rotating the account key does), it expires with its TTL.
import { deriveVendedKey, type VendedClaims } from '../runtime/objectStore.ts';
import type { Queryable } from '../runtime/db.ts';
import { isCredentialRevoked, type Warehouse } from './metastore.ts';
import { locate } from './storage.ts';
import { containerSas } from '../iceberg/azureSas.ts';
import { azureBlobEndpoint } from '../iceberg/objectStorageAzure.ts';
import { azureVendedConfig } from '../iceberg/vendedStorage.ts';

export interface StorageCredential {
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

/** `secret`: the warehouse secret, opened (WarehouseStorage.secretOf). */
export function vendCredentials(w: Warehouse, secret: string, tableLocation: string, ttlSeconds: number, nowMs = Date.now()): VendedCredentials {
  const { bucket, key } = locate(tableLocation);
  const prefix = key.replace(/\/+$/, '') + '/';
  if (w.kind === 'azure') {
    const endpoint = azureBlobEndpoint(w.accessKeyId, w.endpoint);
    const sas = containerSas({ accountName: w.accessKeyId, accountKey: secret, endpoint }, bucket, ttlSeconds, true, nowMs);
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
  } else {
    config = { ...base, 's3.access-key-id': w.accessKeyId, 's3.secret-access-key': secret };
  }
  return { config, 'storage-credentials': [{ prefix: `s3://${bucket}/${prefix}`, config }] };
}

/** The bundled store's revocation hook (ObjectStoreOptions.isRevoked), backed by the metastore. */
export function revocationCheck(db: Queryable): (claims: VendedClaims, accessKeyId: string) => Promise<boolean> {
  // Fails closed: when the metastore cannot answer, the key is refused.
  return (claims, accessKeyId) => isCredentialRevoked(db, claims.warehouse, claims.epoch, accessKeyId).catch(() => true);
}
