// Shared access signatures for azure storage backends, signed with the account key (a service SAS: Azurite has no
// user delegation keys, and a backend registered with an account key has no Entra identity to ask for one).
// Scope: on a hierarchical-namespace account (ADLS Gen2, hierarchicalNamespace) a service SAS can name a directory
// (`sr=d` with its depth `sdd`, service version 2020-02-10 and later), so what the catalog service vends for a table
// there is a directory SAS on the table's location (directorySas). On a flat-namespace account (and Azurite) a
// service SAS can name only a container or a single blob, not a prefix, so a table gets a container SAS
// (containerSas). Either is short-lived and has the permissions the use needs. See docs/catalogs.md "Scope of an
// azure SAS".
// Revocation: a SAS the catalog service vends is bound (`si=`) to a stored access policy on its container whose
// identifier names the warehouse and its credential epoch (epochPolicyId); replacing that policy when the epoch is
// bumped revokes every SAS of the old epoch at once (ensureEpochPolicy).
import { createHash, createHmac } from 'node:crypto';
import { BlobSASPermissions, BlobServiceClient, ContainerSASPermissions, generateBlobSASQueryParameters, SASProtocol, StorageSharedKeyCredential, type SignedIdentifier } from '@azure/storage-blob';

/** Clocks drift: a SAS starts this much before it was signed. */
const START_SKEW_MS = 5 * 60_000;

export interface SasSigner {
  accountName: string;
  accountKey: string;
  /** The blob endpoint the SAS is used at: `http:` (an emulator) allows plain HTTP, anything else HTTPS only. */
  endpoint: string;
}

const protocolFor = (endpoint: string) => (endpoint.startsWith('http:') ? SASProtocol.HttpsAndHttp : SASProtocol.Https);

/** What a vended SAS allows: read and list, add, create, write and delete (an agent writes data and metadata files and removes orphans). */
const VENDED_PERMISSIONS = 'racwdl';

/**
 * A container SAS valid for `ttlSeconds`: read and list, plus add, create, write and delete when `write`. Returns
 * the token (no leading `?`) and when it expires.
 * With `policy` (an identifier from ensureEpochPolicy) the SAS is bound to that stored access policy, which carries
 * the permissions (VENDED_PERMISSIONS); the SAS carries its own start and expiry. Azure takes each of start, expiry
 * and permissions from whichever of the two names it and refuses a SAS when both do, so the policy names only what is
 * the same for every SAS of an epoch and each SAS keeps its own lifetime.
 */
export function containerSas(s: SasSigner, container: string, ttlSeconds: number, write: boolean, nowMs = Date.now(), policy?: string): { token: string; expiresAtMs: number } {
  if (policy !== undefined && !write) throw new Error('a SAS bound to an epoch policy has its permissions: racwdl');
  const expiresAtMs = nowMs + ttlSeconds * 1000;
  const token = generateBlobSASQueryParameters(
    {
      containerName: container,
      ...(policy === undefined ? { permissions: ContainerSASPermissions.parse(write ? VENDED_PERMISSIONS : 'rl') } : { identifier: policy }),
      startsOn: new Date(nowMs - START_SKEW_MS),
      expiresOn: new Date(expiresAtMs),
      protocol: protocolFor(s.endpoint),
    },
    new StorageSharedKeyCredential(s.accountName, s.accountKey),
  ).toString();
  return { token, expiresAtMs };
}

/** The service version directorySas signs for: the string-to-sign below is that of 2020-12-06 and later. */
const DIRECTORY_SAS_VERSION = '2020-12-06';

/** A SAS time: ISO 8601 UTC to the second. */
const sasTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * A directory SAS (`sr=d`, hierarchical-namespace accounts only) on `directoryPath` of `container` and everything
 * under it, valid for `ttlSeconds`, with the permissions of containerSas's write case: bound to `policy` (which
 * carries them) when given, else `racwdl` of its own. Leading and trailing slashes of the path do not matter.
 * Signed here with the account key as "Create a service SAS" documents it: the installed @azure/storage-blob can
 * sign `sr=d` but checks its permissions as a blob's, which have no `l` (list).
 */
export function directorySas(s: SasSigner, container: string, directoryPath: string, ttlSeconds: number, nowMs = Date.now(), policy?: string): { token: string; expiresAtMs: number } {
  const path = directoryPath.replace(/^\/+|\/+$/g, '');
  if (!path || path.split('/').includes('')) throw new Error(`not a directory path: '${directoryPath}'`);
  const expiresAtMs = nowMs + ttlSeconds * 1000;
  const fields = {
    sp: policy === undefined ? VENDED_PERMISSIONS : '',
    st: sasTime(nowMs - START_SKEW_MS),
    se: sasTime(expiresAtMs),
    si: policy ?? '',
    spr: protocolFor(s.endpoint),
    sv: DIRECTORY_SAS_VERSION,
    sr: 'd',
  };
  // signedPermissions, signedStart, signedExpiry, canonicalizedResource, signedIdentifier, signedIP,
  // signedProtocol, signedVersion, signedResource, signedSnapshotTime, signedEncryptionScope, then the five
  // response headers (rscc, rscd, rsce, rscl, rsct); `sdd` is not signed.
  const stringToSign = [fields.sp, fields.st, fields.se, `/blob/${s.accountName}/${container}/${path}`, fields.si, '', fields.spr, fields.sv, fields.sr, '', '', '', '', '', '', ''].join('\n');
  const sig = createHmac('sha256', Buffer.from(s.accountKey, 'base64')).update(stringToSign, 'utf8').digest('base64');
  const query = new URLSearchParams({ sv: fields.sv, spr: fields.spr, st: fields.st, se: fields.se, sr: 'd', sdd: String(path.split('/').length) });
  if (policy === undefined) query.set('sp', fields.sp);
  else query.set('si', policy);
  query.set('sig', sig);
  return { token: query.toString(), expiresAtMs };
}

/** The account's Blob service, with the account key (what the catalog service asks of the account itself). */
const serviceClient = (s: SasSigner) =>
  new BlobServiceClient(s.endpoint.replace(/\/+$/, ''), new StorageSharedKeyCredential(s.accountName, s.accountKey), { retryOptions: { maxTries: 3, tryTimeoutInMs: 30_000 } });

/**
 * Whether the account has a hierarchical namespace (ADLS Gen2), from the Blob service's Get Account Information
 * (`x-ms-is-hns-enabled`; Azurite answers false).
 */
export async function hierarchicalNamespace(s: SasSigner): Promise<boolean> {
  return (await serviceClient(s).getAccountInfo()).isHierarchicalNamespaceEnabled === true;
}

/** A URL for one blob, valid for `ttlSeconds`, that reads it (`r`) or creates and writes it (`cw`). */
export function blobSasUrl(
  s: SasSigner,
  container: string,
  blob: string,
  permissions: 'r' | 'cw',
  ttlSeconds: number,
  nowMs = Date.now(),
  /** Response headers the SAS fixes for a read (rscd, rsct): what a browser is told the blob is. */
  response: { contentDisposition?: string; contentType?: string } = {},
): string {
  const token = generateBlobSASQueryParameters(
    {
      containerName: container,
      blobName: blob,
      permissions: BlobSASPermissions.parse(permissions),
      contentDisposition: response.contentDisposition,
      contentType: response.contentType,
      startsOn: new Date(nowMs - START_SKEW_MS),
      expiresOn: new Date(nowMs + ttlSeconds * 1000),
      protocol: protocolFor(s.endpoint),
    },
    new StorageSharedKeyCredential(s.accountName, s.accountKey),
  ).toString();
  const path = blob.split('/').map(encodeURIComponent).join('/');
  return `${s.endpoint.replace(/\/+$/, '')}/${container}/${path}?${token}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Stored access policies per warehouse and credential epoch

/** The Blob service keeps at most this many stored access policies per container (Set Container ACL). */
const MAX_CONTAINER_POLICIES = 5;

/** The identifiers of one warehouse's policies: `eider-<16 hex of sha256(warehouse)>-e`, then the epoch. */
const policyPrefix = (warehouse: string) => `eider-${createHash('sha256').update(warehouse).digest('hex').slice(0, 16)}-e`;

/** Permission strings as sets (the service may answer them in its own order). */
const samePermissions = (a: string | undefined, b: string) => [...(a ?? '')].sort().join('') === [...b].sort().join('');

/** The stored access policy identifier of a warehouse's credential epoch (at most 64 characters, as Azure allows). */
const epochPolicyId = (warehouse: string, epoch: number) => `${policyPrefix(warehouse)}${epoch}`;

/**
 * Makes the container's stored access policy for (warehouse, epoch) exist and removes that warehouse's policies of
 * other epochs (so a SAS bound to one of those stops working), keeping every other policy of the container.
 * Idempotent: nothing is written when the policies are already so. Returns the identifier, or undefined when the
 * container has no room for it (MAX_CONTAINER_POLICIES taken by other policies): the caller then signs an unbound
 * SAS. Concurrent writers of the same container's ACL are detected by its Last-Modified (If-Unmodified-Since) and
 * the update is retried.
 */
export async function ensureEpochPolicy(s: SasSigner, container: string, warehouse: string, epoch: number): Promise<string | undefined> {
  const id = epochPolicyId(warehouse, epoch);
  const ours = policyPrefix(warehouse);
  const client = serviceClient(s).getContainerClient(container);
  for (let attempt = 0; ; attempt++) {
    const current = await client.getAccessPolicy();
    const identifiers: SignedIdentifier[] = current.signedIdentifiers.map((si) => ({ id: si.id, accessPolicy: { ...si.accessPolicy } }));
    const others = identifiers.filter((si) => !si.id.startsWith(ours));
    const have = identifiers.filter((si) => si.id.startsWith(ours));
    const room = others.length < MAX_CONTAINER_POLICIES;
    const want = room ? [...others, { id, accessPolicy: { permissions: VENDED_PERMISSIONS } }] : others;
    const unchanged = have.length === (room ? 1 : 0) && (!room || (have[0].id === id && samePermissions(have[0].accessPolicy.permissions, VENDED_PERMISSIONS) && !have[0].accessPolicy.startsOn && !have[0].accessPolicy.expiresOn));
    if (unchanged) return room ? id : undefined;
    try {
      await client.setAccessPolicy(current.blobPublicAccess, want, { conditions: { ifUnmodifiedSince: current.lastModified } });
      return room ? id : undefined;
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode !== 412 || attempt >= 4) throw e;
    }
  }
}
