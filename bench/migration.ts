// Storage migration throughput, run by hand: `node bench/migration.ts`.
// A catalog of BENCH_MIGRATION_TABLES tables (20) holding BENCH_MIGRATION_BYTES in total (2 GiB; e.g. 200MiB for a
// quick run) moves from the bundled object store to a second one, each its own `eider objectstore` process, driven
// by a real api process and catalog service. Prints MiB/s and tables/s of the copy, of the whole migration, the
// time the catalog refused writes (from the request to the cutover), and the cutover itself.
//
// The tables are written straight through the catalog's REST commits: each snapshot adds data files of opaque
// bytes (a migration copies files without reading them; only manifests and metadata are parsed and rewritten), so
// building 2 GiB takes seconds instead of an agent's minutes.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startApiProcess } from './support.ts';
import { freePort } from '../runtime/postgres.ts';
import { makeS3Client } from '../iceberg/s3Client.ts';
import { CatalogClient } from '../runtime/catalogClient.ts';
import { readManifestList, writeManifest, writeManifestList, type ManifestEntry, type ManifestFile } from '../iceberg/avro.ts';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { TableMetadata } from '../iceberg/metadata.ts';
import { parseJson, stringifyJson } from '../iceberg/json.ts';

const MiB = 1024 * 1024;
const sizeOf = (s: string) => {
  const m = /^(\d+(?:\.\d+)?)\s*(GiB|MiB|KiB|B)?$/i.exec(s.trim());
  if (!m) throw new Error(`BENCH_MIGRATION_BYTES: ${s}`);
  return Math.round(Number(m[1]) * { gib: 1024 * MiB, mib: MiB, kib: 1024, b: 1 }[(m[2] ?? 'b').toLowerCase() as 'gib' | 'mib' | 'kib' | 'b']);
};
const TOTAL = sizeOf(process.env.BENCH_MIGRATION_BYTES ?? '2GiB');
const TABLES = Number(process.env.BENCH_MIGRATION_TABLES ?? 20);
const FILES_PER_SNAPSHOT = 2;
const SNAPSHOTS = 2;
const ROOT_KEY = { accessKeyId: 'eider-root', secretAccessKey: 'bench-object-store-secret' };
const SCHEMA = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] };

async function waitFor(url: string) {
  const until = Date.now() + 60_000;
  while (!(await fetch(url).then(() => true, () => false))) {
    if (Date.now() > until) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function manifestsOf(s3: ReturnType<typeof makeS3Client>, listPath: string): Promise<ManifestFile[]> {
  const res = await s3.send(new GetObjectCommand({ Bucket: 'warehouse', Key: listPath.replace('s3://warehouse/', '') }));
  return readManifestList(await res.Body!.transformToByteArray()).manifests;
}

let nextSnapshot = 6_100_000_000_000_000_000n;

/** One append of `files` data files of `fileBytes` each to a table, committed through the catalog. */
async function append(base: string, token: string, ns: string, table: string, files: number, fileBytes: number, chunk: Buffer, s3: ReturnType<typeof makeS3Client>) {
  const path = `/v1/benchcat/namespaces/${ns}/tables/${table}`;
  const load = async () => parseJson<{ metadata: TableMetadata }>(await (await fetch(base + path, { headers: { authorization: `Bearer ${token}` } })).text());
  const m = (await load()).metadata;
  const id = nextSnapshot++;
  const seq = BigInt(m['last-sequence-number']) + 1n;
  const entries: ManifestEntry[] = [];
  for (let i = 0; i < files; i++) {
    const key = `${m.location.replace('s3://warehouse/', '')}/data/${id}-${i}.parquet`;
    await s3.send(new PutObjectCommand({ Bucket: 'warehouse', Key: key, Body: chunk.subarray(0, fileBytes), ContentLength: fileBytes }));
    entries.push({
      status: 1,
      snapshot_id: id,
      sequence_number: null,
      file_sequence_number: null,
      data_file: { content: 0, file_path: `s3://warehouse/${key}`, file_format: 'PARQUET', partition: {}, record_count: BigInt(Math.floor(fileBytes / 8)), file_size_in_bytes: BigInt(fileBytes) },
    });
  }
  const manifest = writeManifest({ schema: SCHEMA as never, spec: { 'spec-id': 0, fields: [] }, content: 'data', entries });
  const manifestPath = `${m.location}/metadata/${id}-m0.avro`;
  await s3.send(new PutObjectCommand({ Bucket: 'warehouse', Key: manifestPath.replace('s3://warehouse/', ''), Body: manifest }));
  const parent = m['current-snapshot-id'];
  // Each snapshot's list holds the manifests of the snapshots before it, as an append's does.
  const previous = parent === null || parent === undefined ? [] : await manifestsOf(s3, m.snapshots.find((x) => String(x['snapshot-id']) === String(parent))!['manifest-list']);
  const list = writeManifestList({
    snapshotId: id,
    parentSnapshotId: parent === null || parent === undefined ? null : BigInt(parent),
    sequenceNumber: seq,
    manifests: [
      ...previous,
      {
        manifest_path: manifestPath,
        manifest_length: BigInt(manifest.byteLength),
        partition_spec_id: 0,
        content: 0,
        sequence_number: seq,
        min_sequence_number: seq,
        added_snapshot_id: id,
        added_files_count: files,
        existing_files_count: 0,
        deleted_files_count: 0,
        added_rows_count: BigInt(files * Math.floor(fileBytes / 8)),
        existing_rows_count: 0n,
        deleted_rows_count: 0n,
        partitions: [],
        key_metadata: null,
      },
    ],
  });
  const listPath = `${m.location}/metadata/snap-${id}.avro`;
  await s3.send(new PutObjectCommand({ Bucket: 'warehouse', Key: listPath.replace('s3://warehouse/', ''), Body: list }));
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: stringifyJson({
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent ?? null }],
      updates: [
        {
          action: 'add-snapshot',
          snapshot: { 'snapshot-id': id, ...(parent === null || parent === undefined ? {} : { 'parent-snapshot-id': parent }), 'sequence-number': seq, 'timestamp-ms': Date.now(), 'manifest-list': listPath, summary: { operation: 'append' } },
        },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
      ],
    }),
  });
  if (res.status !== 200) throw new Error(`commit ${table}: ${res.status} ${await res.text()}`);
}

async function main() {
  const api = await startApiProcess({ MIGRATION_RUNNER_TICK_S: '0.5', ACTOR_REAPER_TICK_S: '0.5' });
  const dir2 = mkdtempSync(join(tmpdir(), 'eider-bench-lake-'));
  const port2 = await freePort();
  const eider = join(import.meta.dirname, '..', 'bin', 'eider.ts');
  const lake: ChildProcess = spawn(process.execPath, [eider, 'objectstore'], {
    env: { ...process.env, DATABASE_URL: api.databaseUrl, DATA_DIR: dir2, OBJECT_STORE_PORT: String(port2), STORE_BUCKET: 'lake2', OBJECT_STORE_SECRET_KEY: 'bench-lake-secret', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    await waitFor(`http://127.0.0.1:${port2}/`);
    const json = { 'content-type': 'application/json' };
    await fetch(`${api.url}/api/setup/admin`, { method: 'POST', headers: { ...json, 'x-setup-token': 'bench-setup-token-000000' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password-1', name: 'Bench' }) });
    const login = await fetch(`${api.url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password-1' }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(api.url + path, { method, headers: { ...json, cookie }, body: body === undefined ? undefined : JSON.stringify(body) });
      const out = await r.json().catch(() => undefined);
      if (r.status >= 400) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(out)}`);
      return out as any;
    };
    const backends = (await call('GET', '/api/admin/storage-backends')) as Array<{ id: string; name: string }>;
    const bundled = backends.find((b) => b.name === 'bundled')!;
    const target = await call('POST', '/api/admin/storage-backends', {
      name: 'bench-lake',
      kind: 'object_store',
      root_uri: 's3://lake2/',
      endpoint: `http://127.0.0.1:${port2}`,
      access_key_id: 'eider-root',
      secret_access_key: 'bench-lake-secret',
    });
    const cat = await call('POST', '/api/catalogs', { slug: 'benchcat', storage_backend_id: bundled.id });

    // Build the catalog.
    const base = api.catalogUrl;
    const client = new CatalogClient({ baseUrl: base, clientId: 'root', clientSecret: 'bench-catalog-secret' });
    const { token } = await client.catalogToken();
    const s3 = makeS3Client({ endpoint: api.storeEndpoint, ...ROOT_KEY });
    const fileBytes = Math.max(1024, Math.floor(TOTAL / TABLES / (FILES_PER_SNAPSHOT * SNAPSHOTS)));
    const chunk = randomBytes(fileBytes);
    const built = Date.now();
    await client.createNamespace('benchcat', ['bench']);
    for (let t = 0; t < TABLES; t++) {
      await client.createTable('benchcat', ['bench'], { name: `t${t}`, schema: SCHEMA });
      for (let s = 0; s < SNAPSHOTS; s++) await append(base, token, 'bench', `t${t}`, FILES_PER_SNAPSHOT, fileBytes, chunk, s3);
    }
    const dataBytes = TABLES * SNAPSHOTS * FILES_PER_SNAPSHOT * fileBytes;
    console.log(`built ${TABLES} tables, ${(dataBytes / MiB).toFixed(0)} MiB of data files in ${((Date.now() - built) / 1000).toFixed(1)} s`);

    const startedAt = Date.now();
    const m = await call('POST', `/api/catalogs/${cat.id}/migrations`, { target_storage_backend_id: target.id });
    let rec: any;
    for (;;) {
      rec = await call('GET', `/api/catalogs/${cat.id}/migrations/${m.id}`);
      if (['completed', 'failed', 'cancelled'].includes(rec.status)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const endedAt = Date.now();
    if (rec.status !== 'completed') throw new Error(`migration ${rec.status}: ${rec.error}`);
    const logs = (await call('GET', `/api/catalogs/${cat.id}/migrations/${m.id}/logs`)) as Array<{ at: string; message: string }>;
    const phaseMs = (phase: string) => Number(/done in (\d+) ms/.exec(logs.find((l) => l.message.startsWith(`${phase} done`))?.message ?? '')?.[1] ?? NaN);
    const cutoverMs = Number(/in (\d+) ms/.exec(logs.find((l) => l.message.startsWith('cut over'))?.message ?? '')?.[1] ?? NaN);
    const readOnlyMs = Date.parse(rec.finished_at) - Date.parse(rec.created_at);
    const copyS = phaseMs('copy') / 1000;
    const totalS = (endedAt - startedAt) / 1000;
    const mib = rec.bytes_total / MiB;
    console.log(`migrated ${rec.tables_total} tables, ${mib.toFixed(0)} MiB (bytes_total) to a second object store`);
    console.log(`  copy phase:    ${copyS.toFixed(1)} s   ${(dataBytes / MiB / copyS).toFixed(1)} MiB/s   ${(TABLES / copyS).toFixed(2)} tables/s`);
    console.log(`  rewrite:       ${(phaseMs('rewrite') / 1000).toFixed(2)} s`);
    console.log(`  verify:        ${(phaseMs('verify') / 1000).toFixed(2)} s`);
    console.log(`  whole:         ${totalS.toFixed(1)} s   ${(mib / totalS).toFixed(1)} MiB/s   ${(TABLES / totalS).toFixed(2)} tables/s`);
    console.log(`  writes refused ${(readOnlyMs / 1000).toFixed(1)} s (request to cutover); the cutover itself ${cutoverMs} ms (phase ${phaseMs('cutover')} ms)`);
  } finally {
    await new Promise<void>((res) => {
      if (lake.exitCode !== null) return res();
      lake.once('exit', () => res());
      lake.kill('SIGTERM');
    });
    await api.stop();
    rmSync(dir2, { recursive: true, force: true });
    rmSync(api.dataDir, { recursive: true, force: true });
  }
}

await main();
