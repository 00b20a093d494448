// Shared access signatures for azure storage backends, signed with the account key (a service SAS: Azurite has no
// user delegation keys, and a backend registered with an account key has no Entra identity to ask for one).
// Scope: a service SAS on a flat-namespace account can name a container or a single blob, not a prefix (a directory
// SAS, `sr=d`, exists only on hierarchical-namespace accounts), so what the catalog service vends for a table is a
// container SAS, short-lived and with the permissions the use needs. See docs/storage.md.
// Revocation: a SAS the catalog service vends is bound (`si=`) to a stored access policy on its container whose
// identifier names the warehouse and its credential epoch (epochPolicyId); replacing that policy when the epoch is
// bumped revokes every SAS of the old epoch at once (ensureEpochPolicy).
import { createHash } from 'node:crypto';
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

/** A URL for one blob, valid for `ttlSeconds`, that reads it (`r`) or creates and writes it (`cw`). */
export function blobSasUrl(s: SasSigner, container: string, blob: string, permissions: 'r' | 'cw', ttlSeconds: number, nowMs = Date.now()): string {
  const token = generateBlobSASQueryParameters(
    {
      containerName: container,
      blobName: blob,
      permissions: BlobSASPermissions.parse(permissions),
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
export const MAX_CONTAINER_POLICIES = 5;

/** The identifiers of one warehouse's policies: `eider-<16 hex of sha256(warehouse)>-e`, then the epoch. */
const policyPrefix = (warehouse: string) => `eider-${createHash('sha256').update(warehouse).digest('hex').slice(0, 16)}-e`;

/** Permission strings as sets (the service may answer them in its own order). */
const samePermissions = (a: string | undefined, b: string) => [...(a ?? '')].sort().join('') === [...b].sort().join('');

/** The stored access policy identifier of a warehouse's credential epoch (at most 64 characters, as Azure allows). */
export const epochPolicyId = (warehouse: string, epoch: number) => `${policyPrefix(warehouse)}${epoch}`;

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
  const service = new BlobServiceClient(s.endpoint.replace(/\/+$/, ''), new StorageSharedKeyCredential(s.accountName, s.accountKey), { retryOptions: { maxTries: 3, tryTimeoutInMs: 30_000 } });
  const client = service.getContainerClient(container);
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
