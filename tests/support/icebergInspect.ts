// Looks at what the bridge wrote, independently of the agent's DuckDB: live data files (through the catalog and
// the object store) and an icebird read of the table with s3:// URLs served from the bundled store.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { icebergRead } from 'icebird';
import type { CatalogStack } from '../../catalog/harness.ts';
import { planScan } from '../../agent/icebergScan.ts';
import { TableStorage } from '../../agent/icebergStorage.ts';
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

/** Reads the table's current snapshot with icebird; s3:// URLs (icebird rewrites them to amazonaws) hit the store. */
export async function icebirdRows(stack: CatalogStack, warehouse: string, ns: string, table: string, clientFor: (bucket: string) => S3Client = (b) => stack.clientFor(b)): Promise<Record<string, unknown>[]> {
  const { metadata } = await loadMetadata(stack, warehouse, ns, table);
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const m = /^([^.]+)\.s3\.amazonaws\.com$/.exec(url.hostname);
    if (!m) return original(input, init);
    const range = new Headers(init?.headers).get('range') ?? undefined;
    const res = await clientFor(m[1]).send(new GetObjectCommand({ Bucket: m[1], Key: decodeURIComponent(url.pathname.slice(1)), Range: range }));
    const bytes = await res.Body!.transformToByteArray();
    return new Response(Buffer.from(bytes) as unknown as BodyInit, { status: range ? 206 : 200, headers: { 'content-length': String(bytes.length) } });
  }) as typeof fetch;
  try {
    return await icebergRead({ tableUrl: metadata.location, metadata: metadata as never });
  } finally {
    globalThis.fetch = original;
  }
}
