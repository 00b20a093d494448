// Shared access signatures for azure storage backends, signed with the account key (a service SAS: Azurite has no
// user delegation keys, and a backend registered with an account key has no Entra identity to ask for one).
// Scope: a service SAS on a flat-namespace account can name a container or a single blob, not a prefix (a directory
// SAS, `sr=d`, exists only on hierarchical-namespace accounts), so what the catalog service vends for a table is a
// container SAS, short-lived and with the permissions the use needs. See docs/storage.md.
import { BlobSASPermissions, ContainerSASPermissions, generateBlobSASQueryParameters, SASProtocol, StorageSharedKeyCredential } from '@azure/storage-blob';

/** Clocks drift: a SAS starts this much before it was signed. */
const START_SKEW_MS = 5 * 60_000;

export interface SasSigner {
  accountName: string;
  accountKey: string;
  /** The blob endpoint the SAS is used at: `http:` (an emulator) allows plain HTTP, anything else HTTPS only. */
  endpoint: string;
}

const protocolFor = (endpoint: string) => (endpoint.startsWith('http:') ? SASProtocol.HttpsAndHttp : SASProtocol.Https);

/**
 * A container SAS valid for `ttlSeconds`: read and list, plus add, create, write and delete when `write` (an agent
 * writes data and metadata files and removes orphans). Returns the token (no leading `?`) and when it expires.
 */
export function containerSas(s: SasSigner, container: string, ttlSeconds: number, write: boolean, nowMs = Date.now()): { token: string; expiresAtMs: number } {
  const expiresAtMs = nowMs + ttlSeconds * 1000;
  const token = generateBlobSASQueryParameters(
    {
      containerName: container,
      permissions: ContainerSASPermissions.parse(write ? 'racwdl' : 'rl'),
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
