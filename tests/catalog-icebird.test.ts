// A small partitioned table written entirely through iceberg/ (metadata, manifest, manifest list) plus Parquet
// data files, read back by icebird, an independent Iceberg reader, over HTTP with Range requests.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { parquetWriteBuffer, schemaFromColumnData } from 'hyparquet-writer';
import { icebergRead } from 'icebird';
import { newTableMetadata, currentSchema, defaultSpec } from '../iceberg/metadata.ts';
import { applyUpdates } from '../iceberg/updates.ts';
import { stringifyJson } from '../iceberg/json.ts';
import { writeManifest, writeManifestList, encodeBound, type ManifestEntry } from '../iceberg/avro.ts';

let dir: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eider-icebird-'));
  // Serves the directory with Range support, as an object store's presigned GETs would.
  server = createServer((req, res) => {
    const file = join(dir, decodeURIComponent(new URL(req.url!, 'http://x').pathname));
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      const start = Number(range[1]);
      const end = range[2] ? Math.min(Number(range[2]), bytes.length - 1) : bytes.length - 1;
      res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${bytes.length}`, 'content-length': end - start + 1, 'accept-ranges': 'bytes' });
      res.end(bytes.subarray(start, end + 1));
    } else {
      res.writeHead(200, { 'content-length': bytes.length, 'accept-ranges': 'bytes' });
      res.end(req.method === 'HEAD' ? undefined : bytes);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const ROWS = [
  { id: 1n, region: 'eu', amount: 10.5 },
  { id: 2n, region: 'us', amount: 20 },
  { id: 3n, region: 'eu', amount: 30.25 },
  { id: 4n, region: 'us', amount: 40 },
  { id: 5n, region: 'eu', amount: 50 },
];

describe('a table written through iceberg/', () => {
  it('reads back identically with icebird', async () => {
    const location = `${base}/sales/orders`;
    mkdirSync(join(dir, 'sales/orders/data'), { recursive: true });
    mkdirSync(join(dir, 'sales/orders/metadata'), { recursive: true });
    const created = newTableMetadata({
      location,
      schema: {
        type: 'struct',
        fields: [
          { id: 1, name: 'id', required: true, type: 'long' },
          { id: 2, name: 'region', required: false, type: 'string' },
          { id: 3, name: 'amount', required: false, type: 'double' },
        ],
      },
      partitionSpec: { fields: [{ 'source-id': 2, name: 'region', transform: 'identity' }] },
    });
    const schema = currentSchema(created);
    const spec = defaultSpec(created);
    const snapshotId = 8744736658442914487n;

    const entries: ManifestEntry[] = [];
    for (const region of ['eu', 'us']) {
      const rows = ROWS.filter((r) => r.region === region);
      const columnData = [
        { name: 'id', data: rows.map((r) => r.id), type: 'INT64' as const, nullable: false },
        { name: 'region', data: rows.map((r) => r.region), type: 'STRING' as const },
        { name: 'amount', data: rows.map((r) => r.amount), type: 'DOUBLE' as const },
      ];
      // Parquet field ids carry the Iceberg field ids.
      const parquetSchema = schemaFromColumnData({ columnData });
      parquetSchema.slice(1).forEach((el, i) => (el.field_id = i + 1));
      const buf = Buffer.from(parquetWriteBuffer({ columnData: columnData.map(({ type: _t, ...c }) => c), schema: parquetSchema }));
      const rel = `sales/orders/data/region=${region}/part-0.parquet`;
      mkdirSync(join(dir, `sales/orders/data/region=${region}`), { recursive: true });
      writeFileSync(join(dir, rel), buf);
      const ids = rows.map((r) => r.id);
      entries.push({
        status: 1,
        snapshot_id: snapshotId,
        sequence_number: null,
        file_sequence_number: null,
        data_file: {
          content: 0,
          file_path: `${base}/${rel}`,
          file_format: 'PARQUET',
          partition: { region },
          record_count: BigInt(rows.length),
          file_size_in_bytes: BigInt(buf.length),
          value_counts: [{ key: 1, value: BigInt(rows.length) }],
          null_value_counts: [{ key: 1, value: 0n }],
          lower_bounds: [{ key: 1, value: encodeBound('long', ids.reduce((a, b) => (a < b ? a : b))) }],
          upper_bounds: [{ key: 1, value: encodeBound('long', ids.reduce((a, b) => (a > b ? a : b))) }],
        },
      });
    }
    const manifest = writeManifest({ schema, spec, content: 'data', entries });
    writeFileSync(join(dir, 'sales/orders/metadata/m0.avro'), manifest);
    const list = writeManifestList({
      snapshotId,
      parentSnapshotId: null,
      sequenceNumber: 1n,
      manifests: [{
        manifest_path: `${location}/metadata/m0.avro`,
        manifest_length: BigInt(manifest.length),
        partition_spec_id: spec['spec-id'],
        content: 0,
        sequence_number: 1n,
        min_sequence_number: 1n,
        added_snapshot_id: snapshotId,
        added_files_count: 2,
        existing_files_count: 0,
        deleted_files_count: 0,
        added_rows_count: BigInt(ROWS.length),
        existing_rows_count: 0n,
        deleted_rows_count: 0n,
        partitions: [{ contains_null: false, contains_nan: false, lower_bound: encodeBound('string', 'eu'), upper_bound: encodeBound('string', 'us') }],
      }],
    });
    writeFileSync(join(dir, `sales/orders/metadata/snap-${snapshotId}.avro`), list);
    const metadata = applyUpdates(created, [
      {
        action: 'add-snapshot',
        snapshot: {
          'snapshot-id': snapshotId,
          'sequence-number': 1,
          'timestamp-ms': Date.now(),
          'manifest-list': `${location}/metadata/snap-${snapshotId}.avro`,
          summary: { operation: 'append', 'added-records': String(ROWS.length) },
          'schema-id': schema['schema-id'],
        },
      },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
    ], Date.now());
    writeFileSync(join(dir, 'sales/orders/metadata/00001-a.metadata.json'), stringifyJson(metadata));
    expect(statSync(join(dir, 'sales/orders/metadata/00001-a.metadata.json')).size).toBeGreaterThan(0);

    const rows = await icebergRead({ tableUrl: location, metadataFileName: '00001-a.metadata.json' });
    const got = rows.map((r) => ({ id: BigInt(r.id), region: r.region, amount: r.amount })).sort((a, b) => Number(a.id - b.id));
    expect(got).toEqual(ROWS);
  });
});
