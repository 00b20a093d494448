// Storage locations as Iceberg metadata spells them, parsed in one place for the catalog service, the agent and the
// api: S3 (`s3://bucket/key`; `s3a://` and `s3n://` from Hadoop-era writers) and Azure Blob / ADLS Gen2
// (`az://container/key`, the account then coming from the backend; `abfss://container@account.dfs.core.windows.net/key`
// and `wasbs://container@account.blob.core.windows.net/key`, naming the account).

export interface ObjectLocation {
  bucket: string;
  key: string;
}

export class StorageUriError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageUriError';
  }
}

const S3_URI = /^s3[an]?:\/\/([^/]+)(?:\/(.*))?$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket/key` → bucket and key (the key may be empty for a bucket root). */
export function parseS3Uri(uri: string): ObjectLocation {
  const m = S3_URI.exec(uri);
  if (!m) throw new StorageUriError(`not an s3:// location: ${uri}`);
  return { bucket: m[1], key: m[2] ?? '' };
}

/**
 * A warehouse root as stored: `s3://bucket/path/` with exactly one trailing slash. Refuses bucket names S3 would
 * refuse and paths with empty or relative segments, which would let two roots name the same objects.
 */
export function normalizeS3Root(uri: string): string {
  const { bucket, key } = parseS3Uri(uri.trim());
  if (!BUCKET.test(bucket)) throw new StorageUriError(`not a valid bucket name: ${bucket} (lowercase letters, digits, dots and hyphens)`);
  const path = key.replace(/^\/+|\/+$/g, '');
  if (path.split('/').some((p) => p === '.' || p === '..') || /\/\//.test(path)) throw new StorageUriError(`the path of ${uri} has empty or relative segments`);
  return `s3://${bucket}/${path ? `${path}/` : ''}`;
}

export interface AzureLocation {
  container: string;
  /** The blob name (may be empty for a container root). */
  key: string;
  /** The storage account the URI names (`abfss://`, `wasbs://`), or null for `az://`. */
  account: string | null;
}

const AZ_URI = /^az:\/\/([^/@]+)(?:\/(.*))?$/;
const ABFS_URI = /^(abfss?|wasbs?):\/\/([^/@]+)@([a-z0-9]+)\.(dfs|blob)\.core\.windows\.net(?:\/(.*))?$/;
const CONTAINER = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$/;

export const isAzureUri = (uri: string) => /^(az|abfss?|wasbs?):\/\//.test(uri.trim());

/** `az://container/key` or `abfss://container@account.dfs.core.windows.net/key` → container, key and account. */
export function parseAzureUri(uri: string): AzureLocation {
  const az = AZ_URI.exec(uri);
  if (az) return { container: az[1], key: az[2] ?? '', account: null };
  const abfs = ABFS_URI.exec(uri);
  if (abfs) return { container: abfs[2], key: abfs[5] ?? '', account: abfs[3] };
  throw notAzure(uri);
}

const notAzure = (uri: string) =>
  new StorageUriError(`not an azure location (az://<container>/<path> or abfss://<container>@<account>.dfs.core.windows.net/<path>): ${uri}`);

/** The URI prefix up to the container (`az://c/`, `abfss://c@a.dfs.core.windows.net/`), the form listings return. */
export function azureContainerUri(uri: string): string {
  const az = AZ_URI.exec(uri);
  if (az) return `az://${az[1]}/`;
  const abfs = ABFS_URI.exec(uri);
  if (abfs) return `${abfs[1]}://${abfs[2]}@${abfs[3]}.${abfs[4]}.core.windows.net/`;
  throw notAzure(uri);
}

/** An azure root as stored, in the form given, with exactly one trailing slash; refuses bad containers and paths. */
export function normalizeAzureRoot(uri: string): string {
  const trimmed = uri.trim();
  const { container, key } = parseAzureUri(trimmed);
  if (!CONTAINER.test(container)) throw new StorageUriError(`not a valid container name: ${container} (3-63 lowercase letters, digits and single hyphens)`);
  const path = key.replace(/^\/+|\/+$/g, '');
  if (path.split('/').some((p) => p === '.' || p === '..') || /\/\//.test(path)) throw new StorageUriError(`the path of ${uri} has empty or relative segments`);
  return `${azureContainerUri(trimmed)}${path ? `${path}/` : ''}`;
}

/** Any root (S3 or azure) as stored. */
export const normalizeStorageRoot = (uri: string) => (isAzureUri(uri) ? normalizeAzureRoot(uri) : normalizeS3Root(uri));

/** `bucket/key` (or `container/key`) of any location: the form listings and metadata paths are compared in. */
export function objectPath(uri: string): string {
  if (isAzureUri(uri)) {
    const { container, key } = parseAzureUri(uri);
    return `${container}/${key}`;
  }
  const { bucket, key } = parseS3Uri(uri);
  return `${bucket}/${key}`;
}

/** True when `location` lies strictly under `rootUri` (I4: every table location derives from the root). */
export function isUnderRoot(location: string, rootUri: string): boolean {
  const root = normalizeStorageRoot(rootUri);
  const loc = `${location.replace(/\/+$/, '')}/`;
  return loc.startsWith(root) && loc !== root;
}
