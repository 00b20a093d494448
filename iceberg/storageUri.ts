// Storage locations as Iceberg metadata spells them (`s3://bucket/key`; `s3a://` and `s3n://` from Hadoop-era
// writers), parsed in one place for the catalog service, the agent and the api.

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

/** True when `location` lies strictly under `rootUri` (I4: every table location derives from the root). */
export function isUnderRoot(location: string, rootUri: string): boolean {
  const root = normalizeS3Root(rootUri);
  const loc = `${location.replace(/\/+$/, '')}/`;
  return loc.startsWith(root) && loc !== root;
}
