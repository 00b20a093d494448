// The REST commit's requirements and update actions (open-api/rest-catalog-open-api.yaml: TableRequirement,
// TableUpdate) applied to table metadata. Pure: the caller loads the base, applies, writes the result.
import { randomUUID } from 'node:crypto';
import { sameLong, toBigInt, type Long } from './json.ts';
import {
  MAIN_BRANCH,
  PARTITION_FIELD_ID_START,
  maxFieldId,
  type TableMetadata,
  type Schema,
  type PartitionSpec,
  type SortOrder,
  type Snapshot,
  type SnapshotRef,
  type UnboundPartitionSpec,
  type UnboundSortOrder,
} from './metadata.ts';
import { parseTransform } from './transforms.ts';

export type TableRequirement =
  | { type: 'assert-create' }
  | { type: 'assert-table-uuid'; uuid: string }
  | { type: 'assert-ref-snapshot-id'; ref: string; 'snapshot-id': Long | null }
  | { type: 'assert-last-assigned-field-id'; 'last-assigned-field-id': number }
  | { type: 'assert-current-schema-id'; 'current-schema-id': number }
  | { type: 'assert-last-assigned-partition-id'; 'last-assigned-partition-id': number }
  | { type: 'assert-default-spec-id'; 'default-spec-id': number }
  | { type: 'assert-default-sort-order-id'; 'default-sort-order-id': number };

export type TableUpdate = { action: string; [key: string]: unknown };

/** The snapshot a statistics file entry is for. */
const snapshotOf = (entry: unknown) => (entry as { 'snapshot-id'?: Long })['snapshot-id'];

/** A requirement did not hold: the REST answer is 409 CommitFailedException. */
export class RequirementFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequirementFailed';
  }
}

/** An update cannot be applied to this metadata: 400 BadRequestException. */
export class InvalidUpdate extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidUpdate';
  }
}

/** Checks requirements against the current metadata (`null` when the table does not exist yet). */
export function checkRequirements(base: TableMetadata | null, requirements: readonly TableRequirement[]): void {
  for (const r of requirements) {
    if (r.type === 'assert-create') {
      if (base) throw new RequirementFailed('Requirement failed: table already exists');
      continue;
    }
    if (!base) throw new RequirementFailed(`Requirement failed: table does not exist (${r.type})`);
    switch (r.type) {
      case 'assert-table-uuid':
        if (base['table-uuid'] !== r.uuid) {
          throw new RequirementFailed(`Requirement failed: UUID does not match: expected ${base['table-uuid']} != ${r.uuid}`);
        }
        break;
      case 'assert-ref-snapshot-id': {
        const ref = base.refs[r.ref];
        const want = r['snapshot-id'];
        if (want === null || want === undefined) {
          if (ref) throw new RequirementFailed(`Requirement failed: ref ${r.ref} was created concurrently`);
        } else if (!ref) {
          throw new RequirementFailed(`Requirement failed: ref ${r.ref} is missing, expected snapshot ${want}`);
        } else if (!sameLong(ref['snapshot-id'], want)) {
          throw new RequirementFailed(
            `Requirement failed: ref ${r.ref} has changed: expected id ${want} != ${ref['snapshot-id']}`,
          );
        }
        break;
      }
      case 'assert-last-assigned-field-id':
        if (base['last-column-id'] !== r['last-assigned-field-id']) {
          throw new RequirementFailed(`Requirement failed: last assigned field id changed: expected ${r['last-assigned-field-id']} != ${base['last-column-id']}`);
        }
        break;
      case 'assert-current-schema-id':
        if (base['current-schema-id'] !== r['current-schema-id']) {
          throw new RequirementFailed(`Requirement failed: current schema changed: expected ${r['current-schema-id']} != ${base['current-schema-id']}`);
        }
        break;
      case 'assert-last-assigned-partition-id':
        if (base['last-partition-id'] !== r['last-assigned-partition-id']) {
          throw new RequirementFailed(`Requirement failed: last assigned partition id changed: expected ${r['last-assigned-partition-id']} != ${base['last-partition-id']}`);
        }
        break;
      case 'assert-default-spec-id':
        if (base['default-spec-id'] !== r['default-spec-id']) {
          throw new RequirementFailed(`Requirement failed: default partition spec changed: expected ${r['default-spec-id']} != ${base['default-spec-id']}`);
        }
        break;
      case 'assert-default-sort-order-id':
        if (base['default-sort-order-id'] !== r['default-sort-order-id']) {
          throw new RequirementFailed(`Requirement failed: default sort order changed: expected ${r['default-sort-order-id']} != ${base['default-sort-order-id']}`);
        }
        break;
      default:
        throw new InvalidUpdate(`unknown requirement type: ${(r as { type: string }).type}`);
    }
  }
}

/** The starting point for a table created through updates (create transaction, stage-create). */
export function emptyMetadata(nowMs: number): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': randomUUID(),
    location: '',
    'last-sequence-number': 0,
    'last-updated-ms': nowMs,
    'last-column-id': 0,
    'current-schema-id': -1,
    schemas: [],
    'default-spec-id': -1,
    'partition-specs': [],
    'last-partition-id': PARTITION_FIELD_ID_START - 1,
    'default-sort-order-id': -1,
    'sort-orders': [],
    properties: {},
    'current-snapshot-id': null,
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    refs: {},
  };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a, bigintSafe) === JSON.stringify(b, bigintSafe);
function bigintSafe(_k: string, v: unknown) {
  return typeof v === 'bigint' ? v.toString() : v;
}

/**
 * Applies update actions in order and returns new metadata (the base is not modified). `-1` ids in
 * set-current-schema / set-default-spec / set-default-sort-order mean "the one added last in this change".
 */
export function applyUpdates(base: TableMetadata, updates: readonly TableUpdate[], nowMs: number): TableMetadata {
  const m: TableMetadata = structuredClone(base);
  let lastSchemaId: number | undefined;
  let lastSpecId: number | undefined;
  let lastOrderId: number | undefined;
  const addedSnapshots = new Set<bigint>();
  let changed = false;

  for (const u of updates) {
    changed = true;
    switch (u.action) {
      case 'assign-uuid':
        if (typeof u.uuid !== 'string') throw new InvalidUpdate('assign-uuid requires uuid');
        if (base.schemas.length && base['table-uuid'] !== u.uuid) {
          throw new InvalidUpdate(`cannot reassign the uuid of an existing table`);
        }
        m['table-uuid'] = u.uuid;
        break;
      case 'upgrade-format-version': {
        const v = u['format-version'];
        if (v !== 1 && v !== 2) throw new InvalidUpdate(`unsupported format version ${v}`);
        if (v < m['format-version']) throw new InvalidUpdate(`cannot downgrade format version ${m['format-version']} to ${v}`);
        m['format-version'] = v;
        break;
      }
      case 'add-schema': {
        const s = u.schema as Schema;
        if (!s || s.type !== 'struct' || !Array.isArray(s.fields)) throw new InvalidUpdate('add-schema requires a struct schema');
        const existing = m.schemas.find((x) => sameJson({ ...x, 'schema-id': 0 }, { ...s, 'schema-id': 0 }));
        const newId = existing ? existing['schema-id'] : m.schemas.reduce((a, x) => Math.max(a, x['schema-id']), -1) + 1;
        if (!existing) m.schemas.push({ ...s, 'schema-id': newId });
        m['last-column-id'] = Math.max(m['last-column-id'], maxFieldId(s), Number(u['last-column-id'] ?? 0));
        lastSchemaId = newId;
        break;
      }
      case 'set-current-schema': {
        const id = u['schema-id'] === -1 ? lastSchemaId : u['schema-id'];
        if (id === undefined) throw new InvalidUpdate('set-current-schema -1 without an added schema');
        if (!m.schemas.some((x) => x['schema-id'] === id)) throw new InvalidUpdate(`schema ${id} does not exist`);
        m['current-schema-id'] = id as number; // one of the schemas' ids, checked above
        break;
      }
      case 'add-spec': {
        const spec = u.spec as UnboundPartitionSpec;
        if (!spec || !Array.isArray(spec.fields)) throw new InvalidUpdate('add-spec requires a spec');
        let next = m['last-partition-id'];
        const fields = spec.fields.map((f) => {
          parseTransform(f.transform);
          const id = f['field-id'] ?? ++next;
          next = Math.max(next, id);
          return { name: f.name, transform: f.transform, 'source-id': f['source-id'], 'field-id': id };
        });
        const existing = m['partition-specs'].find((x) => sameJson(x.fields, fields));
        const newId = existing ? existing['spec-id'] : m['partition-specs'].reduce((a, x) => Math.max(a, x['spec-id']), -1) + 1;
        if (!existing) m['partition-specs'].push({ 'spec-id': newId, fields } satisfies PartitionSpec);
        m['last-partition-id'] = Math.max(m['last-partition-id'], next);
        lastSpecId = newId;
        break;
      }
      case 'set-default-spec': {
        const id = u['spec-id'] === -1 ? lastSpecId : u['spec-id'];
        if (id === undefined || !m['partition-specs'].some((x) => x['spec-id'] === id)) {
          throw new InvalidUpdate(`partition spec ${u['spec-id']} does not exist`);
        }
        m['default-spec-id'] = id as number; // one of the specs' ids, checked above
        break;
      }
      case 'add-sort-order': {
        const order = u['sort-order'] as UnboundSortOrder;
        if (!order || !Array.isArray(order.fields)) throw new InvalidUpdate('add-sort-order requires a sort-order');
        const existing = m['sort-orders'].find((x) => sameJson(x.fields, order.fields));
        const newId = existing
          ? existing['order-id']
          : order.fields.length === 0
            ? 0
            : m['sort-orders'].reduce((a, x) => Math.max(a, x['order-id']), 0) + 1;
        if (!existing) m['sort-orders'].push({ 'order-id': newId, fields: order.fields } satisfies SortOrder);
        lastOrderId = newId;
        break;
      }
      case 'set-default-sort-order': {
        const id = u['sort-order-id'] === -1 ? lastOrderId : u['sort-order-id'];
        if (id === undefined || !m['sort-orders'].some((x) => x['order-id'] === id)) {
          throw new InvalidUpdate(`sort order ${u['sort-order-id']} does not exist`);
        }
        m['default-sort-order-id'] = id as number; // one of the orders' ids, checked above
        break;
      }
      case 'add-snapshot': {
        const s = u.snapshot as Snapshot;
        if (!s || s['snapshot-id'] === undefined || typeof s['manifest-list'] !== 'string') {
          throw new InvalidUpdate('add-snapshot requires a snapshot with snapshot-id and manifest-list');
        }
        const id = toBigInt(s['snapshot-id']);
        if (m.snapshots.some((x) => toBigInt(x['snapshot-id']) === id)) {
          throw new InvalidUpdate(`snapshot ${id} already exists`);
        }
        const seq = toBigInt(s['sequence-number'] ?? 0);
        const last = toBigInt(m['last-sequence-number']);
        if (m['format-version'] >= 2 && seq <= last && s['parent-snapshot-id'] != null) {
          throw new InvalidUpdate(`cannot add snapshot with sequence number ${seq} older than last sequence number ${last}`);
        }
        m.snapshots.push(s);
        if (seq > last) m['last-sequence-number'] = s['sequence-number'] as Long;
        addedSnapshots.add(id);
        break;
      }
      case 'set-snapshot-ref': {
        const name = u['ref-name'];
        const type = u.type;
        if (typeof name !== 'string' || (type !== 'branch' && type !== 'tag')) {
          throw new InvalidUpdate('set-snapshot-ref requires ref-name and type branch|tag');
        }
        const snap = m.snapshots.find((x) => sameLong(x['snapshot-id'], u['snapshot-id'] as Long | undefined));
        if (!snap) throw new InvalidUpdate(`cannot set ${name} to unknown snapshot ${u['snapshot-id']}`);
        const ref: SnapshotRef = { 'snapshot-id': snap['snapshot-id'], type };
        for (const k of ['max-ref-age-ms', 'max-snapshot-age-ms', 'min-snapshots-to-keep'] as const) {
          if (u[k] !== undefined && u[k] !== null) Object.assign(ref, { [k]: u[k] });
        }
        if (name === MAIN_BRANCH && type !== 'branch') throw new InvalidUpdate('main must be a branch');
        const previous = m.refs[name];
        m.refs[name] = ref;
        if (name === MAIN_BRANCH && !(previous && sameLong(previous['snapshot-id'], ref['snapshot-id']))) {
          m['current-snapshot-id'] = snap['snapshot-id'];
          const ts = addedSnapshots.has(toBigInt(snap['snapshot-id'])) ? snap['timestamp-ms'] : nowMs;
          m['snapshot-log'].push({ 'snapshot-id': snap['snapshot-id'], 'timestamp-ms': ts });
        }
        break;
      }
      case 'remove-snapshots': {
        const ids = new Set((u['snapshot-ids'] as Long[] | undefined ?? []).map((x) => toBigInt(x)));
        m.snapshots = m.snapshots.filter((s) => !ids.has(toBigInt(s['snapshot-id'])));
        for (const [name, ref] of Object.entries(m.refs)) {
          if (ids.has(toBigInt(ref['snapshot-id']))) delete m.refs[name];
        }
        if (m['current-snapshot-id'] !== null && ids.has(toBigInt(m['current-snapshot-id']))) m['current-snapshot-id'] = null;
        m['snapshot-log'] = m['snapshot-log'].filter((e) => !ids.has(toBigInt(e['snapshot-id'])));
        break;
      }
      case 'remove-snapshot-ref':
        delete m.refs[u['ref-name'] as string];
        if (u['ref-name'] === MAIN_BRANCH) m['current-snapshot-id'] = null;
        break;
      case 'set-location':
        if (typeof u.location !== 'string' || !u.location) throw new InvalidUpdate('set-location requires location');
        m.location = u.location.replace(/\/+$/, '');
        break;
      case 'set-properties':
        for (const [k, v] of Object.entries((u.updates ?? {}) as Record<string, unknown>)) m.properties[k] = String(v);
        break;
      case 'remove-properties':
        for (const k of (u.removals ?? []) as string[]) delete m.properties[k];
        break;
      case 'set-statistics': {
        const stat = u.statistics as { 'snapshot-id': Long };
        m.statistics = [...(m.statistics ?? []).filter((x) => !sameLong(snapshotOf(x), stat['snapshot-id'])), stat];
        break;
      }
      case 'remove-statistics':
        m.statistics = (m.statistics ?? []).filter((x) => !sameLong(snapshotOf(x), u['snapshot-id'] as Long | undefined));
        break;
      case 'set-partition-statistics': {
        const stat = u['partition-statistics'] as { 'snapshot-id': Long };
        m['partition-statistics'] = [
          ...(m['partition-statistics'] ?? []).filter((x) => !sameLong(snapshotOf(x), stat['snapshot-id'])),
          stat,
        ];
        break;
      }
      case 'remove-partition-statistics':
        m['partition-statistics'] = (m['partition-statistics'] ?? []).filter((x) => !sameLong(snapshotOf(x), u['snapshot-id'] as Long | undefined));
        break;
      case 'remove-partition-specs': {
        const ids = new Set(u['spec-ids'] as number[]);
        if (ids.has(m['default-spec-id'])) throw new InvalidUpdate('cannot remove the default partition spec');
        m['partition-specs'] = m['partition-specs'].filter((s) => !ids.has(s['spec-id']));
        break;
      }
      case 'remove-schemas': {
        const ids = new Set(u['schema-ids'] as number[]);
        if (ids.has(m['current-schema-id'])) throw new InvalidUpdate('cannot remove the current schema');
        m.schemas = m.schemas.filter((s) => !ids.has(s['schema-id']));
        break;
      }
      default:
        throw new InvalidUpdate(`unknown update action: ${u.action}`);
    }
  }
  if (changed) m['last-updated-ms'] = nowMs;
  return m;
}

/** Checks that metadata built from updates is a usable table (create transactions). */
export function validateNewTable(m: TableMetadata): void {
  if (!m.location) throw new InvalidUpdate('table location is not set');
  if (!m.schemas.some((s) => s['schema-id'] === m['current-schema-id'])) throw new InvalidUpdate('current schema is not set');
  if (m['partition-specs'].length === 0) {
    m['partition-specs'].push({ 'spec-id': 0, fields: [] });
    m['default-spec-id'] = 0;
  }
  if (m['sort-orders'].length === 0) {
    m['sort-orders'].push({ 'order-id': 0, fields: [] });
    m['default-sort-order-id'] = 0;
  }
  if (!m['partition-specs'].some((s) => s['spec-id'] === m['default-spec-id'])) throw new InvalidUpdate('default partition spec is not set');
  if (!m['sort-orders'].some((s) => s['order-id'] === m['default-sort-order-id'])) throw new InvalidUpdate('default sort order is not set');
}

/**
 * Records the metadata file being replaced in the new metadata's metadata-log, keeping at most
 * `write.metadata.previous-versions-max` entries (default 100), as the spec's writers do.
 */
export function withMetadataLog(next: TableMetadata, previous: { location: string; lastUpdatedMs: Long } | null): TableMetadata {
  if (!previous) return next;
  const max = Number(next.properties['write.metadata.previous-versions-max'] ?? 100);
  const log = [...next['metadata-log'], { 'metadata-file': previous.location, 'timestamp-ms': previous.lastUpdatedMs }];
  return { ...next, 'metadata-log': log.slice(Math.max(0, log.length - max)) };
}
