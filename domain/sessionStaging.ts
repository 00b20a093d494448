// A SQL session's staging area: `<catalog root>/<SQL_SESSION_STAGING_PREFIX_SEGMENT>/<session id>/` on the session
// catalog's storage. Clients get presigned PUT and GET URLs for files there (signed with the storage backend's own
// credentials, which never leave the api); a statement that names staging files carries presigned URLs for them to
// the agent, which fetches what it reads and uploads what it writes: the agent itself reaches no storage by URL.
// On a store that verifies derived keys (Eider's own: the backend's credential_vending is `derived`) the URLs are
// signed with one key derived for the session, limited to its staging prefix (the store holds every request to
// it, a copy's source included) and revoked when the session ends (removeStagingArea): a URL of a closed session
// is refused. Elsewhere (sts, static keys, azure SAS) they are signed with the backend's keys and live out their
// TTL: the latest expiry of a session's URLs is recorded before they are handed out, and once it (and
// SQL_SESSION_STAGING_SWEEP_GRACE_S) has passed after the session's end, the session reaper sweeps the staging area
// again (sweepEndedStaging in sqlSessions.ts): what a leftover URL put there after the end is removed, never read.
// GET URLs ask for the file as an attachment of a non-renderable type: a staged HTML file is never a page.
// On an azure backend the URLs carry a blob SAS signed with the account key (a PUT to one needs the
// `x-ms-blob-type: BlockBlob` header, as every Put Blob does).
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { deletePrefix, makeS3Client } from '../iceberg/s3Client.ts';
import type { Queryable } from '../runtime/db.ts';
import type { Config } from '../runtime/config.ts';
import { findBackend } from './catalogs/backends.ts';
import { findCatalog } from './catalogs/catalogs.ts';
import { warehouseInputFor, type WarehouseConfig } from './catalogs/warehouses.ts';
import type { WarehouseInput } from '../runtime/catalogClient.ts';
import { blobSasUrl } from '../iceberg/azureSas.ts';
import { AzureBlobStore, azureBlobEndpoint } from '../iceberg/objectStorageAzure.ts';
import { parseAzureUri } from '../iceberg/storageUri.ts';
import { unprocessable } from './errors.ts';
import { deriveVendedKey } from '../runtime/objectStore.ts';
import type { CatalogClient } from '../runtime/catalogClient.ts';
import { isStagingPath } from './statementPolicy/rules.ts';

/** A staging file name: one path segment, printable, no way out of the prefix (`.` names the prefix itself). */
export function checkStagingName(name: string, index: number): void {
  const bad =
    name.length === 0 ||
    name.length > 200 ||
    name === '.' ||
    name.includes('/') ||
    name.includes('\\') ||
    name.includes('..') ||
    /[\u0000-\u001f\u007f%?#]/.test(name);
  if (bad) {
    throw unprocessable(`files[${index}]: a staging file name is one path segment, not . and without / \\ .. or control characters`, 'unprocessable_content', {
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

/** What of a session its staging URLs depend on. */
export interface StagingSession {
  id: string;
  created_at: Date;
  staging_uri: string;
  active_catalog: string;
}

/** The catalog service calls staging needs: the warehouse's credential epoch, and revoking the session's key. */
export type StagingCatalog = Pick<CatalogClient, 'getWarehouse' | 'revokeCredential'>;

/**
 * How long a session's staging key is valid at most, from the session's creation. Fixed (not derived from
 * configuration) so every replica derives the same key id for a session, which is what its revocation names; each
 * URL lives only its own X-Amz-Expires within it, and the session's end revokes the key.
 */
const STAGING_KEY_LIFETIME_S = 30 * 86_400;

/** Whether a session's staging URLs on this storage end with it (a derived-key store revokes the session's key). */
const revocable = (w: WarehouseInput) => w.kind !== 'azure' && w.vending === 'derived';

/** Whether the staging URLs of a session on `catalogSlug` can be revoked; if not they live out their TTL. */
export async function stagingRevocable(q: Queryable, config: StagingConfig, catalogSlug: string): Promise<boolean> {
  return revocable(await stagingWarehouse(q, config, catalogSlug));
}

/** The session's staging key on a derived-key store, for the warehouse's current credential epoch; else undefined. */
async function stagingKey(w: WarehouseInput, catalog: StagingCatalog, s: StagingSession) {
  if (!revocable(w)) return undefined;
  const info = await catalog.getWarehouse(w.name);
  if (!info) throw unprocessable(`the session's catalog ${s.active_catalog} has no warehouse`, 'unprocessable_content');
  const { bucket, key } = locate(s.staging_uri.endsWith('/') ? s.staging_uri : `${s.staging_uri}/`);
  const expiresAt = Math.floor(s.created_at.getTime() / 1000) + STAGING_KEY_LIFETIME_S;
  return deriveVendedKey(w.secret_access_key, { warehouse: w.name, bucket, prefix: key, expiresAt, epoch: Number(info.credential_epoch), nonce: `staging-${s.id}` });
}

/**
 * `attachment; filename="…"` for a file's last segment. Only characters every S3 implementation encodes alike in a
 * signed query survive (s3rver canonicalizes with encodeURIComponent, which leaves !'()* as they are, where the SDK
 * escapes them): the rest become `_`; the name is a hint for a save dialog, the key stays as it is.
 */
function attachment(uri: string): string {
  const name = uri.slice(uri.lastIndexOf('/') + 1).replace(/[^\x20-\x7e]|["\\!'()*;]/g, '_');
  return `attachment; filename="${name}"`;
}

/** Presigned PUT and GET URLs for each URI of the session's staging area, living `ttlSeconds`; `forClients`: URLs a client outside may use. */
export async function presignStaging(
  q: Queryable,
  config: StagingConfig,
  catalog: StagingCatalog,
  session: StagingSession,
  uris: readonly string[],
  ttlSeconds: number,
  forClients = false,
): Promise<Array<{ uri: string; put_url: string; get_url: string }>> {
  const w = await stagingWarehouse(q, config, session.active_catalog);
  if (w.kind === 'azure') {
    const signer = { accountName: w.access_key_id, accountKey: w.secret_access_key, endpoint: azureBlobEndpoint(w.access_key_id, w.endpoint) };
    return uris.map((uri) => {
      const { container, key } = parseAzureUri(uri);
      const get_url = blobSasUrl(signer, container, key, 'r', ttlSeconds, Date.now(), { contentDisposition: attachment(uri), contentType: 'application/octet-stream' });
      return { uri, put_url: blobSasUrl(signer, container, key, 'cw', ttlSeconds), get_url };
    });
  }
  const scoped = await stagingKey(w, catalog, session);
  const client = storageClient(scoped ? { ...w, access_key_id: scoped.accessKeyId, secret_access_key: scoped.secretAccessKey } : w, config, forClients);
  return Promise.all(
    uris.map(async (uri) => {
      const { bucket, key } = locate(uri);
      const [put_url, get_url] = await Promise.all([
        getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: ttlSeconds }),
        getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: key, ResponseContentDisposition: attachment(uri), ResponseContentType: 'application/octet-stream' }), {
          expiresIn: ttlSeconds,
        }),
      ]);
      return { uri, put_url, get_url };
    }),
  );
}

/**
 * The session ended: its staging key is revoked (on a derived-key store every URL of the session is refused from
 * now on, so nothing lands after the files go), then every object under its staging prefix is deleted; returns how
 * many.
 */
export async function removeStagingArea(q: Queryable, config: StagingConfig, catalog: StagingCatalog, session: StagingSession): Promise<number> {
  const w = await stagingWarehouse(q, config, session.active_catalog);
  const prefixUri = session.staging_uri.endsWith('/') ? session.staging_uri : `${session.staging_uri}/`;
  if (w.kind === 'azure') {
    const store = new AzureBlobStore({ accountName: w.access_key_id, endpoint: w.endpoint, accountKey: w.secret_access_key });
    try {
      return await store.deletePrefix(prefixUri);
    } finally {
      store.close();
    }
  }
  const scoped = await stagingKey(w, catalog, session);
  if (scoped) await catalog.revokeCredential(w.name, scoped.accessKeyId);
  const client = storageClient(w, config);
  const { bucket, key } = locate(prefixUri);
  return deletePrefix(client, bucket, key);
}
