// The storage configuration the catalog service vends with a loaded table (LoadTableResult.config and
// storage-credentials), written by the catalog service and read by the agent and the api in one place: which keys
// name S3-style credentials (`s3.*`, Iceberg's names) or an azure SAS (`adls.sas-token.<account>`, Iceberg's ADLS
// names, with `adls.connection-string.<account>` carrying the blob endpoint), and the BlobStore they open.
import { S3BlobStore, ObjectStoreError, type BlobStore } from './objectStorage.ts';
import { AzureBlobStore } from './objectStorageAzure.ts';

/**
 * How the catalog service vends a warehouse's credentials (docs/catalog.md "Vended credentials"): derived (keys
 * Eider's stores verify), sts (a store's STS AssumeRole), static (the keys as they are), sas (azure). The api's probe
 * picks one per backend; the catalog service's warehouse holds it.
 */
export const VENDING_MODES = ['derived', 'sts', 'static', 'sas'] as const;
export type VendingMode = (typeof VENDING_MODES)[number];

const ADLS_SAS = 'adls.sas-token.';
const ADLS_SAS_EXPIRES = 'adls.sas-token-expires-at-ms.';
const ADLS_ENDPOINT = 'adls.connection-string.';

/** The vended configuration of an azure table: a SAS for `account`, used at `endpoint`. */
export function azureVendedConfig(account: string, endpoint: string, sasToken: string, expiresAtMs: number): Record<string, string> {
  return {
    [`${ADLS_SAS}${account}`]: sasToken,
    [`${ADLS_SAS_EXPIRES}${account}`]: String(expiresAtMs),
    [`${ADLS_ENDPOINT}${account}`]: endpoint,
  };
}

/** The azure account a vended configuration carries a SAS for, or null. */
function vendedAzureAccount(config: Record<string, string>): string | null {
  const key = Object.keys(config).find((k) => k.startsWith(ADLS_SAS) && !k.startsWith(ADLS_SAS_EXPIRES));
  return key ? key.slice(ADLS_SAS.length) : null;
}

/**
 * The store a vended configuration opens: an azure account with its SAS, or S3 with the vended keys. Throws
 * ObjectStoreError `CredentialMissing` when the configuration carries neither (vending off for the warehouse).
 */
export function blobStoreForVended(config: Record<string, string>): BlobStore {
  return vendedStoreOpener(config)();
}

/**
 * blobStoreForVended in two steps: the configuration is checked now (the same `CredentialMissing`), the store is
 * made when the returned function is called. Making one builds an SDK client, which costs more than a warm scan's
 * planning; a read whose manifests and data files are all cached never reaches storage.
 */
export function vendedStoreOpener(config: Record<string, string>): () => BlobStore {
  const account = vendedAzureAccount(config);
  if (account) {
    return () => new AzureBlobStore({ accountName: account, endpoint: config[`${ADLS_ENDPOINT}${account}`], sasToken: config[`${ADLS_SAS}${account}`] });
  }
  const accessKeyId = config['s3.access-key-id'];
  const secretAccessKey = config['s3.secret-access-key'];
  if (!accessKeyId || !secretAccessKey) throw new ObjectStoreError('CredentialMissing', 'the catalog vended no storage credential');
  return () => new S3BlobStore({
    endpoint: config['s3.endpoint'],
    region: config['s3.region'] ?? config['client.region'],
    accessKeyId,
    secretAccessKey,
    sessionToken: config['s3.session-token'],
    pathStyle: config['s3.path-style-access'] !== 'false',
  });
}
