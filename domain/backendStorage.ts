// Reaching a storage backend from the api: the credentials a backend row implies (its own sealed keys, the
// bundled store's root keys from configuration, or the deployment's AWS_* keys for s3; for azure the account name
// and its sealed account key), a BlobStore over them, and the probe that registration runs (put, read, delete one
// object; which vending mode the store supports).
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { Config } from '../runtime/config.ts';
import { deriveVendedKey, PROBE_WAREHOUSE } from '../runtime/objectStore.ts';
import { assumeRole, sessionPolicy } from '../iceberg/stsCredentials.ts';
import { ObjectStoreError, S3BlobStore, type BlobStore } from '../iceberg/objectStorage.ts';
import { AzureBlobStore, azureBlobEndpoint } from '../iceberg/objectStorageAzure.ts';
import type { VendingMode } from '../iceberg/vendedStorage.ts';
import { parseS3Uri } from '../iceberg/storageUri.ts';
import { openSecret, sealSecret } from '../settings/secretBox.ts';
import { unprocessable } from './errors.ts';
import { BUNDLED_BACKEND } from './bootstrap.ts';

export type StorageKind = 'object_store' | 's3' | 'azure';

/** The settings the api needs to reach backends beyond what a backend row holds. */
export type BackendConfig = Pick<
  Config,
  | 'OBJECT_STORE_ACCESS_KEY'
  | 'OBJECT_STORE_SECRET_KEY'
  | 'AWS_ACCESS_KEY_ID'
  | 'AWS_SECRET_ACCESS_KEY'
  | 'AWS_REGION'
  | 'STORE_REGION'
  | 'STORE_ENDPOINT'
  | 'SECRET_KEY'
>;

/** What of a backend row reaching it takes (the secret as stored: sealed). */
export interface BackendTarget {
  name: string;
  kind: StorageKind;
  root_uri: string;
  endpoint: string | null;
  region: string | null;
  access_key_id: string | null;
  secret_access_key: string | null;
  /** s3 and object_store: the IAM role STS AssumeRole assumes (AWS requires one; MinIO-like stores take none). */
  role_arn?: string | null;
}

/** For azure: `accessKeyId` is the storage account name, `secretAccessKey` its account key, `endpoint` the blob endpoint. */
export interface ResolvedConnection {
  kind: StorageKind;
  endpoint: string | null;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  pathStyle: boolean;
}

const SEAL_PURPOSE = 'eider.storage_backends.secret_access_key';

export const sealBackendSecret = (config: Pick<Config, 'SECRET_KEY'>, secret: string) => sealSecret(config.SECRET_KEY ?? '', SEAL_PURPOSE, secret);
export const openBackendSecret = (config: Pick<Config, 'SECRET_KEY'>, stored: string) => openSecret(config.SECRET_KEY ?? '', SEAL_PURPOSE, stored);

/** An object_store backend without keys of its own at the bundled store's address: it uses the root keys. */
export const isBundledStore = (b: Pick<BackendTarget, 'name' | 'kind' | 'endpoint' | 'access_key_id'>, config: Pick<Config, 'STORE_ENDPOINT'>) =>
  b.kind === 'object_store' &&
  !b.access_key_id &&
  (b.name === BUNDLED_BACKEND || !b.endpoint || b.endpoint.replace(/\/+$/, '') === config.STORE_ENDPOINT.replace(/\/+$/, ''));

/**
 * The endpoint and keys the api and the catalog service reach a backend with, or undefined when it has none
 * usable. The bundled store's backends carry no keys of their own (the root keys come from configuration); an s3
 * backend without keys falls back to the deployment's AWS_* variables.
 */
export function backendConnection(b: BackendTarget, config: BackendConfig): ResolvedConnection | undefined {
  let accessKeyId = b.access_key_id;
  let secretAccessKey = b.secret_access_key ? openBackendSecret(config, b.secret_access_key) : null;
  let endpoint = b.endpoint;
  if (!accessKeyId || !secretAccessKey) {
    if (isBundledStore(b, config)) {
      accessKeyId = config.OBJECT_STORE_ACCESS_KEY;
      secretAccessKey = config.OBJECT_STORE_SECRET_KEY;
      endpoint ??= config.STORE_ENDPOINT;
    } else if (b.kind === 's3' && config.AWS_ACCESS_KEY_ID && config.AWS_SECRET_ACCESS_KEY) {
      accessKeyId = config.AWS_ACCESS_KEY_ID;
      secretAccessKey = config.AWS_SECRET_ACCESS_KEY;
    }
  }
  if (!accessKeyId || !secretAccessKey) return undefined;
  return {
    kind: b.kind,
    endpoint,
    region: b.region || (b.kind === 's3' ? config.AWS_REGION : '') || config.STORE_REGION,
    accessKeyId,
    secretAccessKey,
    // S3-compatible stores (and the bundled one) want path-style; AWS itself uses virtual-hosted addressing.
    pathStyle: b.kind !== 'azure' && (b.kind === 'object_store' || !!endpoint),
  };
}

export function blobStoreFor(c: ResolvedConnection, opts: { probe?: boolean } = {}): BlobStore {
  if (c.kind === 'azure') return new AzureBlobStore({ accountName: c.accessKeyId, endpoint: c.endpoint, accountKey: c.secretAccessKey, probe: opts.probe });
  return new S3BlobStore({ endpoint: c.endpoint, region: c.region, accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, pathStyle: c.pathStyle, probe: opts.probe });
}

const storageUnreachable = (name: string, where: string, e: unknown) => {
  const err = e instanceof ObjectStoreError ? e : new ObjectStoreError('Error', e instanceof Error ? e.message : String(e));
  return unprocessable(`storage backend ${name} could not be used at ${where}: ${err.code}: ${err.message}`, 'storage_unreachable', {
    store_code: err.code,
    store_message: err.message,
  });
};

/**
 * Puts, reads back and deletes one object under the root; answers 422 storage_unreachable with the store's own
 * code and message when any step fails. On the bundled store a missing bucket is created first. Then finds how
 * credentials can be vended: an azure account gets `sas` (signed with its key); a store that verifies keys derived
 * from the backend secret (Eider's object stores) gets `derived` (revocable before expiry); one whose STS AssumeRole
 * gives temporary credentials that read the probe object under a session policy gets `sts`; any other S3-compatible
 * store `static`.
 */
export async function probeBackend(b: BackendTarget, config: BackendConfig): Promise<{ vending: VendingMode }> {
  const c = backendConnection(b, config);
  if (!c) throw unprocessable(`storage backend ${b.name} has no credentials to reach it with`, 'storage_credentials_missing');
  const where = `${c.kind === 'azure' ? azureBlobEndpoint(c.accessKeyId, c.endpoint) : (c.endpoint ?? 'AWS S3')} (${b.root_uri})`;
  const store = blobStoreFor(c, { probe: true });
  const uri = `${b.root_uri}.eider-probe/${randomUUID()}`;
  const body = `eider probe ${new Date().toISOString()}`;
  try {
    try {
      await store.put(uri, body, 'text/plain');
    } catch (e) {
      if (!(e instanceof ObjectStoreError && e.code === 'NoSuchBucket' && isBundledStore(b, config) && store instanceof S3BlobStore)) throw e;
      await store.client.send(new CreateBucketCommand({ Bucket: parseS3Uri(uri).bucket }));
      await store.put(uri, body, 'text/plain');
    }
    const back = Buffer.from(await store.get(uri)).toString('utf8');
    if (back !== body) throw new ObjectStoreError('ProbeMismatch', 'the object read back differs from the one written');
    const roleArn = b.role_arn ?? null;
    const sts = c.kind === 'azure' || (await verifiesDerivedKeys(c, uri)) ? undefined : await vendsStsCredentials(c, uri, roleArn);
    await store.delete(uri);
    // A role given is a request for sts: a store that cannot assume it answers 422 rather than vend the keys as they are.
    if (roleArn && sts !== undefined && sts !== true) throw new ObjectStoreError('AssumeRoleFailed', `STS AssumeRole of ${roleArn} gave no usable credentials: ${sts}`);
    const vending = c.kind === 'azure' ? 'sas' : sts === undefined ? 'derived' : sts === true ? 'sts' : 'static';
    return { vending };
  } catch (e) {
    throw storageUnreachable(b.name, where, e);
  } finally {
    store.close();
  }
}

/** Whether the store accepts a key derived from the backend secret (a minute-long probe key for one object). */
async function verifiesDerivedKeys(c: ResolvedConnection, uri: string): Promise<boolean> {
  const { bucket, key } = parseS3Uri(uri);
  const probe = deriveVendedKey(c.secretAccessKey, { warehouse: PROBE_WAREHOUSE, bucket, prefix: key, expiresAt: Math.floor(Date.now() / 1000) + 60, epoch: 0 });
  const store = blobStoreFor({ ...c, accessKeyId: probe.accessKeyId, secretAccessKey: probe.secretAccessKey }, { probe: true });
  try {
    return (await store.head(uri)) !== null;
  } catch {
    return false;
  } finally {
    store.close();
  }
}

/**
 * Whether the store's STS AssumeRole (at the backend's endpoint, signed with its keys, assuming the backend's
 * `role_arn` when it has one) gives temporary credentials that read the probe object under a session policy limited
 * to it: true, or why not (no STS, a store that wants a role ARN the backend lacks, a role the keys may not assume,
 * credentials the store then refuses) as the store's code and message.
 */
async function vendsStsCredentials(c: ResolvedConnection, uri: string, roleArn: string | null): Promise<true | string> {
  const { bucket, key } = parseS3Uri(uri);
  let store: BlobStore | undefined;
  try {
    const cred = await assumeRole({ endpoint: c.endpoint, region: c.region, accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, roleArn }, sessionPolicy(bucket, key), 0, 'eider-probe');
    store = new S3BlobStore({ endpoint: c.endpoint, region: c.region, accessKeyId: cred.accessKeyId, secretAccessKey: cred.secretAccessKey, sessionToken: cred.sessionToken, pathStyle: c.pathStyle, probe: true });
    return (await store.head(uri)) !== null ? true : 'the temporary credentials do not find the probe object';
  } catch (e) {
    const err = e as { name?: string; Code?: string; message?: string };
    return `${err.Code ?? err.name ?? 'Error'}: ${(err.message ?? String(e)).split('\n')[0]}`;
  } finally {
    store?.close();
  }
}
