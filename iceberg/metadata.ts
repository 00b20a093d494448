// The Iceberg v2 table metadata model (format/spec.md, "Table Metadata") and the construction of a new
// table's metadata: field ids reassigned from 1, partition field ids from 1000, as the reference implementation
// does, so that a client's create request cannot leave last-column-id behind the schema.
import { randomUUID } from 'node:crypto';
import type { Long } from './json.ts';
import { parseTransform } from './transforms.ts';

type PrimitiveType = string; // boolean, int, long, float, double, decimal(P,S), date, time, timestamp, …

export interface NestedField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
  'initial-default'?: unknown;
  'write-default'?: unknown;
}

export interface StructType {
  type: 'struct';
  fields: NestedField[];
}

export interface ListType {
  type: 'list';
  'element-id': number;
  element: IcebergType;
  'element-required': boolean;
}

export interface MapType {
  type: 'map';
  'key-id': number;
  key: IcebergType;
  'value-id': number;
  value: IcebergType;
  'value-required': boolean;
}

export type IcebergType = PrimitiveType | StructType | ListType | MapType;

export interface Schema extends StructType {
  'schema-id': number;
  'identifier-field-ids'?: number[];
}

interface PartitionField {
  'source-id': number;
  'field-id': number;
  name: string;
  transform: string;
}

export interface PartitionSpec {
  'spec-id': number;
  fields: PartitionField[];
}

interface SortField {
  'source-id': number;
  transform: string;
  direction: 'asc' | 'desc';
  'null-order': 'nulls-first' | 'nulls-last';
}

export interface SortOrder {
  'order-id': number;
  fields: SortField[];
}

export interface Snapshot {
  'snapshot-id': Long;
  'parent-snapshot-id'?: Long | null;
  'sequence-number'?: Long;
  'timestamp-ms': Long;
  'manifest-list': string;
  summary: { operation: string; [key: string]: string };
  'schema-id'?: number;
}

export interface SnapshotRef {
  'snapshot-id': Long;
  type: 'branch' | 'tag';
  'max-ref-age-ms'?: Long;
  'max-snapshot-age-ms'?: Long;
  'min-snapshots-to-keep'?: number;
}

interface SnapshotLogEntry {
  'snapshot-id': Long;
  'timestamp-ms': Long;
}

interface MetadataLogEntry {
  'metadata-file': string;
  'timestamp-ms': Long;
}

export interface TableMetadata {
  'format-version': 1 | 2 | 3;
  'table-uuid': string;
  location: string;
  'last-sequence-number': Long;
  'last-updated-ms': Long;
  'last-column-id': number;
  'current-schema-id': number;
  schemas: Schema[];
  'default-spec-id': number;
  'partition-specs': PartitionSpec[];
  'last-partition-id': number;
  'default-sort-order-id': number;
  'sort-orders': SortOrder[];
  properties: Record<string, string>;
  'current-snapshot-id': Long | null;
  snapshots: Snapshot[];
  'snapshot-log': SnapshotLogEntry[];
  'metadata-log': MetadataLogEntry[];
  refs: Record<string, SnapshotRef>;
  statistics?: unknown[];
  'partition-statistics'?: unknown[];
}

/** Partition spec / sort order as a client sends them in a create request: ids may be missing. */
export interface UnboundPartitionSpec {
  'spec-id'?: number;
  fields: Array<Omit<PartitionField, 'field-id'> & { 'field-id'?: number }>;
}
export interface UnboundSortOrder {
  'order-id'?: number;
  fields: SortField[];
}

export const PARTITION_FIELD_ID_START = 1000;
export const MAIN_BRANCH = 'main';

export function isStruct(t: IcebergType): t is StructType {
  return typeof t === 'object' && t.type === 'struct';
}
export function isList(t: IcebergType): t is ListType {
  return typeof t === 'object' && t.type === 'list';
}
export function isMap(t: IcebergType): t is MapType {
  return typeof t === 'object' && t.type === 'map';
}

/** Every field id in a type, nested ones included (list elements and map keys/values too). */
export function maxFieldId(t: IcebergType): number {
  let max = 0;
  const visit = (x: IcebergType) => {
    if (isStruct(x)) {
      for (const f of x.fields) {
        max = Math.max(max, f.id);
        visit(f.type);
      }
    } else if (isList(x)) {
      max = Math.max(max, x['element-id']);
      visit(x.element);
    } else if (isMap(x)) {
      max = Math.max(max, x['key-id'], x['value-id']);
      visit(x.key);
      visit(x.value);
    }
  };
  visit(t);
  return max;
}

/** Field by id anywhere in the schema. */
export function findField(schema: StructType, id: number): NestedField | undefined {
  let found: NestedField | undefined;
  const visit = (x: IcebergType) => {
    if (found) return;
    if (isStruct(x)) {
      for (const f of x.fields) {
        if (f.id === id) found = f;
        visit(f.type);
      }
    } else if (isList(x)) visit(x.element);
    else if (isMap(x)) {
      visit(x.key);
      visit(x.value);
    }
  };
  visit(schema);
  return found;
}

/**
 * Renumbers a type's field ids from `next()`. Within a struct, the struct's own fields are numbered first, then
 * their children (as the Java reference does), so top-level columns get ids 1..n. `mapping` receives old → new.
 */
function freshIds(t: IcebergType, next: () => number, mapping: Map<number, number>): IcebergType {
  if (isStruct(t)) {
    const ids = t.fields.map((f) => {
      const id = next();
      mapping.set(f.id, id);
      return id;
    });
    return {
      type: 'struct',
      fields: t.fields.map((f, i) => ({ ...f, id: ids[i], type: freshIds(f.type, next, mapping) })),
    };
  }
  if (isList(t)) {
    const id = next();
    mapping.set(t['element-id'], id);
    return { ...t, 'element-id': id, element: freshIds(t.element, next, mapping) };
  }
  if (isMap(t)) {
    const k = next();
    const v = next();
    mapping.set(t['key-id'], k);
    mapping.set(t['value-id'], v);
    return { ...t, 'key-id': k, 'value-id': v, key: freshIds(t.key, next, mapping), value: freshIds(t.value, next, mapping) };
  }
  return t;
}

export interface NewTableInput {
  location: string;
  schema: StructType & { 'schema-id'?: number; 'identifier-field-ids'?: number[] };
  partitionSpec?: UnboundPartitionSpec;
  sortOrder?: UnboundSortOrder;
  properties?: Record<string, string>;
  tableUuid?: string;
  nowMs?: number;
  formatVersion?: 2;
}

export function newTableMetadata(input: NewTableInput): TableMetadata {
  let id = 0;
  const mapping = new Map<number, number>();
  const struct = freshIds(input.schema, () => ++id, mapping) as StructType;
  const remap = (old: number, what: string) => {
    const n = mapping.get(old);
    if (n === undefined) throw new MetadataError(`${what} references unknown source field id ${old}`);
    return n;
  };
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: struct.fields,
    ...(input.schema['identifier-field-ids']?.length
      ? { 'identifier-field-ids': input.schema['identifier-field-ids'].map((f) => remap(f, 'identifier field')) }
      : {}),
  };
  let partitionId = PARTITION_FIELD_ID_START - 1;
  const spec: PartitionSpec = {
    'spec-id': 0,
    fields: (input.partitionSpec?.fields ?? []).map((f) => {
      parseTransform(f.transform);
      return { name: f.name, transform: f.transform, 'source-id': remap(f['source-id'], 'partition field'), 'field-id': ++partitionId };
    }),
  };
  const sortFields = (input.sortOrder?.fields ?? []).map((f) => ({ ...f, 'source-id': remap(f['source-id'], 'sort field') }));
  const sortOrder: SortOrder = { 'order-id': sortFields.length ? 1 : 0, fields: sortFields };
  const sortOrders: SortOrder[] = sortFields.length ? [{ 'order-id': 0, fields: [] }, sortOrder] : [sortOrder];
  const now = input.nowMs ?? Date.now();
  return {
    'format-version': input.formatVersion ?? 2,
    'table-uuid': input.tableUuid ?? randomUUID(),
    location: input.location.replace(/\/+$/, ''),
    'last-sequence-number': 0,
    'last-updated-ms': now,
    'last-column-id': id,
    'current-schema-id': 0,
    schemas: [schema],
    'default-spec-id': 0,
    'partition-specs': [spec],
    'last-partition-id': Math.max(partitionId, PARTITION_FIELD_ID_START - 1),
    'default-sort-order-id': sortOrder['order-id'],
    'sort-orders': sortOrders,
    properties: { ...(input.properties ?? {}) },
    'current-snapshot-id': null,
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    refs: {},
  };
}

export class MetadataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetadataError';
  }
}

export function currentSchema(m: TableMetadata): Schema {
  const s = m.schemas.find((x) => x['schema-id'] === m['current-schema-id']);
  if (!s) throw new MetadataError(`current schema ${m['current-schema-id']} is missing`);
  return s;
}

export function defaultSpec(m: TableMetadata): PartitionSpec {
  const s = m['partition-specs'].find((x) => x['spec-id'] === m['default-spec-id']);
  if (!s) throw new MetadataError(`default partition spec ${m['default-spec-id']} is missing`);
  return s;
}

export function currentSnapshot(m: TableMetadata): Snapshot | undefined {
  const id = m['current-snapshot-id'];
  if (id === null || id === undefined || BigInt(id) === -1n) return undefined;
  return m.snapshots.find((s) => BigInt(s['snapshot-id']) === BigInt(id));
}

/** `{location}/metadata/{version:05}-{uuid}.metadata.json`, the version following `previous` (if any). */
export function metadataFileLocation(location: string, previous?: string | null): string {
  const prev = previous ? /\/(\d+)-[^/]+\.metadata\.json$/.exec(previous) : null;
  const version = prev ? Number(prev[1]) + 1 : 0;
  return `${location.replace(/\/+$/, '')}/metadata/${String(version).padStart(5, '0')}-${randomUUID()}.metadata.json`;
}
