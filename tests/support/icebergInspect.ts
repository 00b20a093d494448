// Looks at what the bridge wrote, independently of the agent's DuckDB: live data files (through the catalog and
// the object store) and an icebird read of the table with s3:// URLs served from the bundled store (or another S3
// store) and azure URLs from a blob container (Azurite).
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ContainerClient } from '@azure/storage-blob';
import { icebergRead } from 'icebird';
import type { CatalogStack } from './catalogStack.ts';
import { planScan } from '../../agent/iceberg/scan.ts';
import { TableStorage } from '../../agent/iceberg/storage.ts';
import type { TableMetadata } from '../../iceberg/metadata.ts';

export async function loadMetadata(stack: CatalogStack, warehouse: string, ns: string, table: string): Promise<{ metadata: TableMetadata; config: Record<string, string> }> {
  const res = await stack.request('GET', `/v1/${warehouse}/namespaces/${ns}/tables/${table}`, undefined, { 'x-iceberg-access-delegation': 'vended-credentials' });
  if (res.status !== 200) throw new Error(`load ${ns}.${table}: ${res.status}`);
  return { metadata: res.body.metadata, config: res.body.config };
}

export async function liveFiles(stack: CatalogStack, warehouse: string, ns: string, table: string): Promise<string[]> {
  const { metadata, config } = await loadMetadata(stack, warehouse, ns, table);
  const storage = new TableStorage(table, config);
  try {
    return (await planScan(metadata, storage)).files.map((f) => f.file.file_path).sort();
  } finally {
    storage.close();
  }
}

/** Where icebird's reads of azure locations go: the container's client (e.g. Azurite's, tests/support/azurite.ts). */
export type AzureContainerFor = (container: string, account: string | null) => ContainerClient;

/**
 * An azure location as our azure backend writes it (iceberg/objectStorageAzure.ts, docs/api-decisions.md): `az://container/key`
 * (the account is the backend's), or ADLS Gen2 / blob style `abfs[s]://container@account.dfs.core.windows.net/key`
 * and `wasb[s]://container@account.blob.core.windows.net/key`. Parsed here on its own (not with iceberg/storageUri.ts)
 * so that the reader stays independent of what it checks. undefined: not an azure URL.
 */
function azureLocation(url: URL): { container: string; account: string | null; key: string } | undefined {
  const key = decodeURIComponent(url.pathname.replace(/^\/+/, ''));
  if (url.protocol === 'az:') return { container: url.hostname, account: null, key };
  if (!/^(abfss?|wasbs?):$/.test(url.protocol)) return undefined;
  const account = /^([a-z0-9]+)\.(dfs|blob)\.core\.windows\.net$/.exec(url.hostname)?.[1];
  if (!url.username || !account) return undefined;
  return { container: decodeURIComponent(url.username), account, key };
}

/** `Range: bytes=a-b` (or `bytes=a-`) → offset and count for a blob download; undefined: the whole blob. */
function byteRange(header: string | null): { offset: number; count?: number } | undefined {
  const m = header ? /^bytes=(\d+)-(\d*)$/.exec(header.trim()) : null;
  if (!m) return undefined;
  const offset = Number(m[1]);
  return m[2] === '' ? { offset } : { offset, count: Number(m[2]) - offset + 1 };
}

/**
 * Reads the table's current snapshot with icebird. s3:// URLs (icebird rewrites them to amazonaws) hit the store;
 * azure URLs (`az://`, `abfss://`, `wasbs://`) icebird leaves as they are and hands to `fetch`, which serves them from
 * the container `azureFor` gives (through @azure/storage-blob, ranged reads as ranged downloads: 206 like a blob
 * endpoint). icebird itself reads the table: the metadata as the catalog loads it, then the manifest list,
 * manifests, data and delete files at the URLs that metadata names; only the transport is redirected.
 */
export async function icebirdRows(
  stack: CatalogStack,
  warehouse: string,
  ns: string,
  table: string,
  clientFor: (bucket: string) => S3Client = (b) => stack.clientFor(b),
  azureFor?: AzureContainerFor,
): Promise<Record<string, unknown>[]> {
  const { metadata } = await loadMetadata(stack, warehouse, ns, table);
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const range = new Headers(init?.headers).get('range');
    const az = azureLocation(url);
    if (az) {
      if (!azureFor) throw new Error(`icebirdRows: ${url.href} is on azure, and no container client was given`);
      const r = byteRange(range);
      try {
        const res = await azureFor(az.container, az.account).getBlobClient(az.key).downloadToBuffer(r?.offset ?? 0, r?.count);
        return new Response(res as unknown as BodyInit, { status: r ? 206 : 200, headers: { 'content-length': String(res.length) } });
      } catch (e) {
        const status = (e as { statusCode?: number }).statusCode ?? 500;
        return new Response(`${url.href}: ${(e as Error).message}`, { status });
      }
    }
    const m = /^([^.]+)\.s3\.amazonaws\.com$/.exec(url.hostname);
    if (!m) return original(input, init);
    const res = await clientFor(m[1]).send(new GetObjectCommand({ Bucket: m[1], Key: decodeURIComponent(url.pathname.slice(1)), Range: range ?? undefined }));
    const bytes = await res.Body!.transformToByteArray();
    return new Response(Buffer.from(bytes) as unknown as BodyInit, { status: range ? 206 : 200, headers: { 'content-length': String(bytes.length) } });
  }) as typeof fetch;
  try {
    return await icebergRead({ tableUrl: metadata.location, metadata: metadata as never });
  } finally {
    globalThis.fetch = original;
  }
}
