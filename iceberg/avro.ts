// Avro codecs for manifest lists and manifests (format/spec.md, "Manifests", "Manifest Lists", v2 schemas).
// avsc encodes the records; the object container (header, deflate blocks, sync markers) is written here so that
// the header carries the Iceberg schema exactly as written (with field-id attributes) and longs stay BigInt
// (snapshot ids exceed 2^53). Reading decodes with the file's own writer schema, so files from other writers
// (Java, PyIceberg) read as long as they use the spec's field names.
import avro from 'avsc';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import type { PartitionSpec, Schema, IcebergType } from './metadata.ts';
import { findField } from './metadata.ts';
import { parseTransform, transformResultType, decimalBytes } from './transforms.ts';

// ---------------------------------------------------------------------------------------------------------------
// Types of the decoded records (Avro field names, longs as bigint)

export interface FieldSummary {
  contains_null: boolean;
  contains_nan?: boolean | null;
  lower_bound?: Uint8Array | null;
  upper_bound?: Uint8Array | null;
}

export interface ManifestFile {
  manifest_path: string;
  manifest_length: bigint;
  partition_spec_id: number;
  /** 0 data, 1 deletes. */
  content: number;
  sequence_number: bigint;
  min_sequence_number: bigint;
  added_snapshot_id: bigint;
  added_files_count: number;
  existing_files_count: number;
  deleted_files_count: number;
  added_rows_count: bigint;
  existing_rows_count: bigint;
  deleted_rows_count: bigint;
  partitions?: FieldSummary[] | null;
  key_metadata?: Uint8Array | null;
}

export interface KeyValue<V> {
  key: number;
  value: V;
}

export interface DataFile {
  /** 0 data, 1 position deletes, 2 equality deletes. */
  content: number;
  file_path: string;
  file_format: string;
  /** Partition values by partition field name (transform results; see transforms.ts for representations). */
  partition: Record<string, unknown>;
  record_count: bigint;
  file_size_in_bytes: bigint;
  column_sizes?: KeyValue<bigint>[] | null;
  value_counts?: KeyValue<bigint>[] | null;
  null_value_counts?: KeyValue<bigint>[] | null;
  nan_value_counts?: KeyValue<bigint>[] | null;
  lower_bounds?: KeyValue<Uint8Array>[] | null;
  upper_bounds?: KeyValue<Uint8Array>[] | null;
  key_metadata?: Uint8Array | null;
  split_offsets?: bigint[] | null;
  equality_ids?: number[] | null;
  sort_order_id?: number | null;
}

export interface ManifestEntry {
  /** 0 existing, 1 added, 2 deleted. */
  status: number;
  /** null: inherited from the manifest list entry (added_snapshot_id). */
  snapshot_id: bigint | null;
  sequence_number: bigint | null;
  file_sequence_number: bigint | null;
  data_file: DataFile;
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas

const opt = (type: unknown) => ['null', type];
const kvMap = (keyId: number, valueId: number, valueType: string) => ({
  type: 'array',
  logicalType: 'map',
  items: {
    type: 'record',
    name: `k${keyId}_v${valueId}`,
    fields: [
      { name: 'key', type: 'int', 'field-id': keyId },
      { name: 'value', type: valueType, 'field-id': valueId },
    ],
  },
});

const MANIFEST_LIST_SCHEMA = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    { name: 'manifest_path', type: 'string', doc: 'Location URI with FS scheme', 'field-id': 500 },
    { name: 'manifest_length', type: 'long', doc: 'Total file size in bytes', 'field-id': 501 },
    { name: 'partition_spec_id', type: 'int', doc: 'Spec ID used to write', 'field-id': 502 },
    { name: 'content', type: 'int', doc: 'Contents of the manifest: 0=data, 1=deletes', 'field-id': 517 },
    { name: 'sequence_number', type: 'long', doc: 'Sequence number when the manifest was added', 'field-id': 515 },
    { name: 'min_sequence_number', type: 'long', doc: 'Lowest sequence number in the manifest', 'field-id': 516 },
    { name: 'added_snapshot_id', type: 'long', doc: 'Snapshot ID that added the manifest', 'field-id': 503 },
    { name: 'added_files_count', type: 'int', doc: 'Added entry count', 'field-id': 504 },
    { name: 'existing_files_count', type: 'int', doc: 'Existing entry count', 'field-id': 505 },
    { name: 'deleted_files_count', type: 'int', doc: 'Deleted entry count', 'field-id': 506 },
    { name: 'added_rows_count', type: 'long', doc: 'Added rows count', 'field-id': 512 },
    { name: 'existing_rows_count', type: 'long', doc: 'Existing rows count', 'field-id': 513 },
    { name: 'deleted_rows_count', type: 'long', doc: 'Deleted rows count', 'field-id': 514 },
    {
      name: 'partitions',
      type: opt({
        type: 'array',
        items: {
          type: 'record',
          name: 'r508',
          fields: [
            { name: 'contains_null', type: 'boolean', 'field-id': 509 },
            { name: 'contains_nan', type: opt('boolean'), default: null, 'field-id': 518 },
            { name: 'lower_bound', type: opt('bytes'), default: null, 'field-id': 510 },
            { name: 'upper_bound', type: opt('bytes'), default: null, 'field-id': 511 },
          ],
        },
        'element-id': 508,
      }),
      default: null,
      doc: 'Summary for each partition',
      'field-id': 507,
    },
    { name: 'key_metadata', type: opt('bytes'), default: null, 'field-id': 519 },
  ],
};

function fixedSize(precision: number): number {
  // Smallest byte count whose two's-complement range holds 10^precision - 1.
  let n = 1;
  while (2n ** BigInt(8 * n - 1) <= 10n ** BigInt(precision) - 1n) n++;
  return n;
}

/** The Avro type of a partition value of Iceberg type `type` (field-named so fixed types stay unique). */
function avroPartitionType(type: string, fieldId: number): unknown {
  const dec = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type);
  if (dec) {
    const precision = Number(dec[1]);
    return { type: 'fixed', name: `decimal_${fieldId}`, size: fixedSize(precision), logicalType: 'decimal', precision, scale: Number(dec[2]) };
  }
  const fixed = /^fixed\[(\d+)\]$/.exec(type);
  if (fixed) return { type: 'fixed', name: `fixed_${fieldId}`, size: Number(fixed[1]) };
  switch (type) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
      return type;
    case 'binary':
      return 'bytes';
    case 'date':
      return { type: 'int', logicalType: 'date' };
    case 'time':
      return { type: 'long', logicalType: 'time-micros' };
    case 'timestamp':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false };
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true };
    case 'uuid':
      return { type: 'fixed', name: `uuid_${fieldId}`, size: 16, logicalType: 'uuid' };
  }
  throw new Error(`type ${type} cannot be a partition value`);
}

export interface PartitionFieldType {
  name: string;
  fieldId: number;
  /** Iceberg type of the partition value. */
  type: string;
}

/** Partition value types of a spec, from the transforms' result types over the schema's source columns. */
export function partitionFieldTypes(spec: PartitionSpec, schema: Schema): PartitionFieldType[] {
  return spec.fields.map((f) => {
    const source = findField(schema, f['source-id']);
    if (!source || typeof source.type !== 'string') {
      throw new Error(`partition field ${f.name} has no primitive source column ${f['source-id']}`);
    }
    return { name: f.name, fieldId: f['field-id'], type: transformResultType(parseTransform(f.transform), source.type as string) };
  });
}

function manifestEntrySchema(partition: PartitionFieldType[]): object {
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      { name: 'status', type: 'int', 'field-id': 0 },
      { name: 'snapshot_id', type: opt('long'), default: null, 'field-id': 1 },
      { name: 'sequence_number', type: opt('long'), default: null, 'field-id': 3 },
      { name: 'file_sequence_number', type: opt('long'), default: null, 'field-id': 4 },
      {
        name: 'data_file',
        type: {
          type: 'record',
          name: 'r2',
          fields: [
            { name: 'content', type: 'int', doc: 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes', 'field-id': 134 },
            { name: 'file_path', type: 'string', doc: 'Location URI with FS scheme', 'field-id': 100 },
            { name: 'file_format', type: 'string', doc: 'File format name: avro, orc, or parquet', 'field-id': 101 },
            {
              name: 'partition',
              type: {
                type: 'record',
                name: 'r102',
                fields: partition.map((p) => ({ name: p.name, type: opt(avroPartitionType(p.type, p.fieldId)), default: null, 'field-id': p.fieldId })),
              },
              doc: 'Partition data tuple, schema based on the partition spec',
              'field-id': 102,
            },
            { name: 'record_count', type: 'long', doc: 'Number of records in the file', 'field-id': 103 },
            { name: 'file_size_in_bytes', type: 'long', doc: 'Total file size in bytes', 'field-id': 104 },
            { name: 'column_sizes', type: opt(kvMap(117, 118, 'long')), default: null, doc: 'Map of column id to total size on disk', 'field-id': 108 },
            { name: 'value_counts', type: opt(kvMap(119, 120, 'long')), default: null, doc: 'Map of column id to total count, including null and NaN', 'field-id': 109 },
            { name: 'null_value_counts', type: opt(kvMap(121, 122, 'long')), default: null, doc: 'Map of column id to null value count', 'field-id': 110 },
            { name: 'nan_value_counts', type: opt(kvMap(138, 139, 'long')), default: null, doc: 'Map of column id to number of NaN values in the column', 'field-id': 137 },
            { name: 'lower_bounds', type: opt(kvMap(126, 127, 'bytes')), default: null, doc: 'Map of column id to lower bound', 'field-id': 125 },
            { name: 'upper_bounds', type: opt(kvMap(129, 130, 'bytes')), default: null, doc: 'Map of column id to upper bound', 'field-id': 128 },
            { name: 'key_metadata', type: opt('bytes'), default: null, doc: 'Encryption key metadata blob', 'field-id': 131 },
            { name: 'split_offsets', type: opt({ type: 'array', items: 'long', 'element-id': 133 }), default: null, doc: 'Splittable offsets', 'field-id': 132 },
            { name: 'equality_ids', type: opt({ type: 'array', items: 'int', 'element-id': 136 }), default: null, doc: 'Equality comparison field IDs', 'field-id': 135 },
            { name: 'sort_order_id', type: opt('int'), default: null, doc: 'Sort order ID', 'field-id': 140 },
          ],
        },
        'field-id': 2,
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Object container

const BigIntLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint | number) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(n));
    return buf;
  },
  fromJSON: (x: unknown) => BigInt(x as number),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint' || (typeof n === 'number' && Number.isSafeInteger(n)),
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

/** Compiled avsc types by their schema's JSON text. avsc generates code for each type it compiles (0.1–0.3 ms), and
 *  a table's files share a few schemas, so a warm scan compiled the same ones on every query. Bounded: a file read
 *  may bring any schema. */
const compiledTypes = new Map<string, avro.Type>();
const COMPILED_TYPES_MAX = 64;

function typeFor(schemaText: string): avro.Type {
  let type = compiledTypes.get(schemaText);
  if (!type) {
    type = avro.Type.forSchema(JSON.parse(schemaText) as avro.Schema, { registry: { long: BigIntLong }, wrapUnions: false });
    if (compiledTypes.size >= COMPILED_TYPES_MAX) compiledTypes.delete(compiledTypes.keys().next().value!);
    compiledTypes.set(schemaText, type);
  }
  return type;
}

const HEADER = avro.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
});
const MAGIC = Buffer.from('Obj\x01', 'latin1');
const LONG = avro.Type.forSchema('long');

/** Writes an Avro object container file: one deflate block holding every record. */
function writeAvroFile(schema: object, records: readonly unknown[], metadata: Record<string, string>): Uint8Array {
  const schemaText = JSON.stringify(schema);
  const type = typeFor(schemaText);
  const meta: Record<string, Buffer> = { 'avro.schema': Buffer.from(schemaText), 'avro.codec': Buffer.from('deflate') };
  for (const [k, v] of Object.entries(metadata)) meta[k] = Buffer.from(v);
  const sync = randomBytes(16);
  const parts: Buffer[] = [HEADER.toBuffer({ magic: MAGIC, meta, sync })];
  if (records.length) {
    const body = deflateRawSync(Buffer.concat(records.map((r) => type.toBuffer(r))));
    parts.push(LONG.toBuffer(records.length), LONG.toBuffer(body.length), body, sync);
  }
  return Buffer.concat(parts);
}

interface AvroRecordSchema {
  type: string;
  fields: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface AvroFile<T> {
  metadata: Record<string, string>;
  /** The writer schema from the header, parsed (an Iceberg Avro file's is a record). */
  schema: AvroRecordSchema;
  records: T[];
}

export function readAvroFile<T = unknown>(bytes: Uint8Array): AvroFile<T> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const head = HEADER.decode(buf, 0);
  if (head.offset < 0) throw new Error('truncated Avro header');
  const header = head.value as { magic: Buffer; meta: Record<string, Buffer>; sync: Buffer };
  if (!header.magic.equals(MAGIC)) throw new Error('not an Avro object container file');
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(header.meta)) metadata[k] = v.toString('utf8');
  const schema = JSON.parse(metadata['avro.schema']);
  const codec = metadata['avro.codec'] ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') throw new Error(`unsupported Avro codec ${codec}`);
  const type = typeFor(metadata['avro.schema']);
  const records: T[] = [];
  let pos = head.offset;
  while (pos < buf.length) {
    const count = LONG.decode(buf, pos);
    const size = LONG.decode(buf, count.offset);
    const start = size.offset;
    const end = start + Number(size.value);
    const raw = buf.subarray(start, end);
    const block = codec === 'deflate' ? inflateRawSync(raw) : raw;
    let p = 0;
    for (let i = 0; i < Number(count.value); i++) {
      const r = type.decode(block, p);
      if (r.offset < 0) throw new Error('truncated Avro block');
      records.push(r.value as T);
      p = r.offset;
    }
    if (!buf.subarray(end, end + 16).equals(header.sync)) throw new Error('Avro sync marker mismatch');
    pos = end + 16;
  }
  return { metadata, schema, records };
}

/**
 * The same file with its records changed by `map`: the writer schema and the header metadata are kept as they
 * were (whoever wrote the file), only the records change. A storage migration moves manifests and manifest lists
 * to another root with it.
 */
export function rewriteAvroFile<T>(bytes: Uint8Array, map: (record: T) => T): Uint8Array {
  const f = readAvroFile<T>(bytes);
  const meta = Object.fromEntries(Object.entries(f.metadata).filter(([k]) => !k.startsWith('avro.')));
  return writeAvroFile(f.schema, f.records.map(map), meta);
}

// ---------------------------------------------------------------------------------------------------------------
// Manifest lists and manifests

export interface ManifestListInput {
  snapshotId: bigint;
  parentSnapshotId: bigint | null;
  sequenceNumber: bigint;
  manifests: readonly ManifestFile[];
}

export function writeManifestList(input: ManifestListInput): Uint8Array {
  return writeAvroFile(MANIFEST_LIST_SCHEMA, input.manifests.map(normalizeManifestFile), {
    'snapshot-id': input.snapshotId.toString(),
    'parent-snapshot-id': input.parentSnapshotId === null ? 'null' : input.parentSnapshotId.toString(),
    'sequence-number': input.sequenceNumber.toString(),
    'format-version': '2',
  });
}

function normalizeManifestFile(m: ManifestFile): ManifestFile {
  return {
    ...m,
    partitions: m.partitions?.map((p) => ({
      contains_null: p.contains_null,
      contains_nan: p.contains_nan ?? null,
      lower_bound: p.lower_bound ? Buffer.from(p.lower_bound) : null,
      upper_bound: p.upper_bound ? Buffer.from(p.upper_bound) : null,
    })) ?? null,
    key_metadata: m.key_metadata ? Buffer.from(m.key_metadata) : null,
  };
}

export function readManifestList(bytes: Uint8Array): { metadata: Record<string, string>; manifests: ManifestFile[] } {
  const f = readAvroFile<ManifestFile>(bytes);
  return {
    metadata: f.metadata,
    manifests: f.records.map((r) => ({
      ...r,
      // v1 manifest lists have no content/sequence numbers: data manifests at sequence 0.
      content: r.content ?? 0,
      sequence_number: r.sequence_number ?? 0n,
      min_sequence_number: r.min_sequence_number ?? 0n,
    })),
  };
}

export interface ManifestInput {
  schema: Schema;
  spec: PartitionSpec;
  /** 'data' or 'deletes'. */
  content: 'data' | 'deletes';
  entries: readonly ManifestEntry[];
}

/** Partition values in Avro form: decimals as fixed big-endian bytes, uuids as 16 bytes. */
function toAvroPartition(types: PartitionFieldType[], values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const t of types) {
    const v = values[t.name];
    if (v === null || v === undefined) out[t.name] = null;
    else if (t.type.startsWith('decimal')) {
      const min = decimalBytes(BigInt(v as bigint));
      const size = (avroPartitionType(t.type, t.fieldId) as { size: number }).size;
      const fill = (min[0] & 0x80) !== 0 ? 0xff : 0;
      out[t.name] = Buffer.concat([Buffer.alloc(size - min.length, fill), Buffer.from(min)]);
    } else if (t.type === 'uuid') out[t.name] = Buffer.from((v as string).replace(/-/g, ''), 'hex');
    else if (t.type === 'binary' || t.type.startsWith('fixed')) out[t.name] = Buffer.from(v as Uint8Array);
    else if (t.type === 'long' || t.type === 'time' || t.type.startsWith('timestamp')) out[t.name] = BigInt(v as bigint);
    else out[t.name] = v;
  }
  return out;
}

function fromAvroPartition(types: PartitionFieldType[], values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...values };
  for (const t of types) {
    const v = values[t.name];
    if (v === null || v === undefined) continue;
    if (t.type.startsWith('decimal')) {
      const b = v as Buffer;
      let n = 0n;
      for (const byte of b) n = (n << 8n) | BigInt(byte);
      if (b.length && b[0] & 0x80) n -= 1n << BigInt(8 * b.length);
      out[t.name] = n;
    } else if (t.type === 'uuid') {
      const h = (v as Buffer).toString('hex');
      out[t.name] = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
  }
  return out;
}

export function writeManifest(input: ManifestInput): Uint8Array {
  const types = partitionFieldTypes(input.spec, input.schema);
  const records = input.entries.map((e) => ({
    ...e,
    data_file: {
      ...e.data_file,
      partition: toAvroPartition(types, e.data_file.partition),
      lower_bounds: e.data_file.lower_bounds?.map((kv) => ({ key: kv.key, value: Buffer.from(kv.value) })) ?? null,
      upper_bounds: e.data_file.upper_bounds?.map((kv) => ({ key: kv.key, value: Buffer.from(kv.value) })) ?? null,
      key_metadata: e.data_file.key_metadata ? Buffer.from(e.data_file.key_metadata) : null,
    },
  }));
  return writeAvroFile(manifestEntrySchema(types), records, {
    schema: JSON.stringify(input.schema),
    'schema-id': String(input.schema['schema-id']),
    'partition-spec': JSON.stringify(input.spec.fields),
    'partition-spec-id': String(input.spec['spec-id']),
    'format-version': '2',
    content: input.content,
  });
}

export interface ManifestContents {
  metadata: Record<string, string>;
  schema: Schema | undefined;
  specFields: PartitionSpec['fields'];
  entries: ManifestEntry[];
}

export function readManifest(bytes: Uint8Array): ManifestContents {
  const f = readAvroFile<ManifestEntry>(bytes);
  const schema = f.metadata.schema ? (JSON.parse(f.metadata.schema) as Schema) : undefined;
  const specFields = f.metadata['partition-spec'] ? JSON.parse(f.metadata['partition-spec']) : [];
  let types: PartitionFieldType[] = [];
  if (schema) {
    try {
      types = partitionFieldTypes({ 'spec-id': Number(f.metadata['partition-spec-id'] ?? 0), fields: specFields }, schema);
    } catch {
      types = [];
    }
  }
  return {
    metadata: f.metadata,
    schema,
    specFields,
    entries: f.records.map((e) => ({
      status: e.status,
      snapshot_id: e.snapshot_id ?? null,
      sequence_number: e.sequence_number ?? null,
      file_sequence_number: e.file_sequence_number ?? null,
      data_file: { ...e.data_file, content: e.data_file.content ?? 0, partition: fromAvroPartition(types, e.data_file.partition) },
    })),
  };
}

/**
 * An entry with the values a reader inherits from its manifest list entry (spec: "Sequence Number
 * Inheritance"): a null snapshot id is the manifest's added_snapshot_id; a null sequence number of an ADDED
 * entry is the manifest's sequence_number.
 */
export function inheritFromManifest(entry: ManifestEntry, manifest: ManifestFile): ManifestEntry {
  const added = entry.status === 1;
  return {
    ...entry,
    snapshot_id: entry.snapshot_id ?? manifest.added_snapshot_id,
    sequence_number: entry.sequence_number ?? (added || manifest.sequence_number === 0n ? manifest.sequence_number : null),
    file_sequence_number: entry.file_sequence_number ?? (added || manifest.sequence_number === 0n ? manifest.sequence_number : null),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Single-value serialization (spec Appendix D), used for lower/upper bounds and partition summaries

export function encodeBound(type: IcebergType, value: unknown): Uint8Array {
  if (typeof type !== 'string') throw new Error('bounds exist for primitive types only');
  const buf = (n: number) => Buffer.alloc(n);
  switch (type) {
    case 'boolean':
      return Uint8Array.of(value ? 1 : 0);
    case 'int':
    case 'date': {
      const b = buf(4);
      b.writeInt32LE(value as number);
      return b;
    }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const b = buf(8);
      b.writeBigInt64LE(BigInt(value as bigint));
      return b;
    }
    case 'float': {
      const b = buf(4);
      b.writeFloatLE(value as number);
      return b;
    }
    case 'double': {
      const b = buf(8);
      b.writeDoubleLE(value as number);
      return b;
    }
    case 'string':
      return Buffer.from(value as string, 'utf8');
    case 'uuid':
      return Buffer.from((value as string).replace(/-/g, ''), 'hex');
    case 'binary':
      return Uint8Array.from(value as Uint8Array);
  }
  if (type.startsWith('fixed')) return Uint8Array.from(value as Uint8Array);
  if (type.startsWith('decimal')) return decimalBytes(BigInt(value as bigint));
  throw new Error(`no single-value serialization for ${type}`);
}

export function decodeBound(type: IcebergType, bytes: Uint8Array): unknown {
  if (typeof type !== 'string') throw new Error('bounds exist for primitive types only');
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case 'boolean':
      return b[0] !== 0;
    case 'int':
    case 'date':
      return b.readInt32LE(0);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return b.readBigInt64LE(0);
    case 'float':
      return b.readFloatLE(0);
    case 'double':
      return b.readDoubleLE(0);
    case 'string':
      return b.toString('utf8');
    case 'uuid': {
      const h = b.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
  }
  if (type === 'binary' || type.startsWith('fixed')) return Uint8Array.from(b);
  if (type.startsWith('decimal')) {
    let n = 0n;
    for (const byte of b) n = (n << 8n) | BigInt(byte);
    if (b.length && b[0] & 0x80) n -= 1n << BigInt(8 * b.length);
    return n;
  }
  throw new Error(`no single-value serialization for ${type}`);
}
