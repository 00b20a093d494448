// A SQL session's staging area: `<catalog root>/<SQL_SESSION_STAGING_PREFIX_SEGMENT>/<session id>/` on the session
// catalog's storage. Clients get presigned PUT and GET URLs for files there (signed with the storage backend's own
// credentials, which never leave the api); a statement that names staging files carries presigned URLs for them to
// the agent, which fetches what it reads and uploads what it writes: the agent itself reaches no storage by URL.
// On an azure backend the URLs carry a blob SAS signed with the account key (a PUT to one needs the
// `x-ms-blob-type: BlockBlob` header, as every Put Blob does).
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { deletePrefix, makeS3Client } from '../iceberg/s3Client.ts';
import type { Queryable } from '../runtime/db.ts';
import type { Config } from '../runtime/config.ts';
import { findBackend, findCatalog, warehouseInputFor, type WarehouseConfig } from './catalogs.ts';
import type { WarehouseInput } from '../runtime/catalogClient.ts';
import { blobSasUrl } from '../iceberg/azureSas.ts';
import { AzureBlobStore, azureBlobEndpoint } from '../iceberg/objectStorageAzure.ts';
import { parseAzureUri } from '../iceberg/storageUri.ts';
import { unprocessable } from './errors.ts';
import { isStagingPath } from './statementPolicyRules.ts';

export interface StagedFile {
  name: string;
  /** the file's URI, as statements name it (`COPY t FROM '<key>'`, `read_parquet('<key>')`) */
  key: string;
  put_url: string;
  get_url: string;
}

/** A staging file name: one path segment, printable, no way out of the prefix. */
export function checkStagingName(name: string, index: number): void {
  const bad =
    name.length === 0 || name.length > 200 || name.includes('/') || name.includes('\\') || name.includes('..') || /[\u0000-\u001f\u007f%?#]/.test(name);
  if (bad) {
    throw unprocessable(`files[${index}]: a staging file name is one path segment without / \\ .. or control characters`, 'unprocessable_content', {
      fields: [{ field: `files.${index}`, in: 'body', message: 'a plain file name' }],
    });
  }
}

/**
 * The staging URIs a statement names in string literals: the policy lets them through only as COPY's file and as the
 * paths of the staging readers (read_parquet, read_csv, read_json), so these are the files the agent must fetch
 * (and, for COPY … TO, upload).
 */
export function stagingUrisIn(sql: string, prefix: string): string[] {
  const found = new Set<string>();
  for (const m of sql.matchAll(/'((?:[^']|'')*)'/g)) {
    const literal = m[1].replace(/''/g, "'");
    // Only what the policy could have let through: nothing outside the prefix (a `..` segment included) is signed.
    if (isStagingPath(literal, prefix, { glob: true })) found.add(literal);
  }
  return [...found];
}

function locate(uri: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!m) throw new Error(`not an s3 URI: ${uri}`);
  return { bucket: m[1], key: m[2] };
}

const clients = new Map<string, S3Client>();

export type StagingConfig = WarehouseConfig & Pick<Config, 'STORE_ENDPOINT' | 'STORE_ENDPOINT_PUBLIC'>;

/** The connection of the storage behind a session's catalog (the backend's own credentials, opened). */
async function stagingWarehouse(q: Queryable, config: StagingConfig, catalogSlug: string): Promise<WarehouseInput> {
  const catalog = await findCatalog(q, catalogSlug);
  const backend = catalog ? await findBackend(q, catalog.storage_backend_id) : undefined;
  if (!catalog || !backend) throw unprocessable(`the session's catalog ${catalogSlug} is gone`, 'unprocessable_content');
  return warehouseInputFor(backend, catalog.slug, config);
}

/**
 * An S3 client for that storage (cached per credential set). For URLs handed to clients (`forClients`), the
 * bundled store is addressed at STORE_ENDPOINT_PUBLIC when it is set.
 */
function storageClient(w: WarehouseInput, config: StagingConfig, forClients = false): S3Client {
  const endpoint = forClients && config.STORE_ENDPOINT_PUBLIC && w.endpoint === config.STORE_ENDPOINT ? config.STORE_ENDPOINT_PUBLIC : w.endpoint;
  const fingerprint = [endpoint, w.region, w.access_key_id, w.secret_access_key, w.path_style].join('\u0000');
  let client = clients.get(fingerprint);
  if (!client) {
    client = makeS3Client({ endpoint: endpoint ?? undefined, region: w.region, accessKeyId: w.access_key_id, secretAccessKey: w.secret_access_key, pathStyle: w.path_style });
    if (clients.size > 100) clients.clear();
    clients.set(fingerprint, client);
  }
  return client;
}

/** Presigned PUT and GET URLs for each URI, living `ttlSeconds`; `forClients`: URLs a client outside may use. */
export async function presignStaging(
  q: Queryable,
  config: StagingConfig,
  catalogSlug: string,
  uris: readonly string[],
  ttlSeconds: number,
  forClients = false,
): Promise<Array<{ uri: string; put_url: string; get_url: string }>> {
  const w = await stagingWarehouse(q, config, catalogSlug);
  if (w.kind === 'azure') {
    const signer = { accountName: w.access_key_id, accountKey: w.secret_access_key, endpoint: azureBlobEndpoint(w.access_key_id, w.endpoint) };
    return uris.map((uri) => {
      const { container, key } = parseAzureUri(uri);
      return { uri, put_url: blobSasUrl(signer, container, key, 'cw', ttlSeconds), get_url: blobSasUrl(signer, container, key, 'r', ttlSeconds) };
    });
  }
  const client = storageClient(w, config, forClients);
  return Promise.all(
    uris.map(async (uri) => {
      const { bucket, key } = locate(uri);
      const [put_url, get_url] = await Promise.all([
        getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: ttlSeconds }),
        getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: ttlSeconds }),
      ]);
      return { uri, put_url, get_url };
    }),
  );
}

/** Deletes every object under a session's staging prefix (the session ended); returns how many. */
export async function removeStagingArea(q: Queryable, config: StagingConfig, catalogSlug: string, prefixUri: string): Promise<number> {
  const w = await stagingWarehouse(q, config, catalogSlug);
  if (w.kind === 'azure') {
    const store = new AzureBlobStore({ accountName: w.access_key_id, endpoint: w.endpoint, accountKey: w.secret_access_key });
    try {
      return await store.deletePrefix(prefixUri.endsWith('/') ? prefixUri : `${prefixUri}/`);
    } finally {
      store.close();
    }
  }
  const client = storageClient(w, config);
  const { bucket, key } = locate(prefixUri.endsWith('/') ? prefixUri : `${prefixUri}/`);
  return deletePrefix(client, bucket, key);
}
