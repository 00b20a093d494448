// The maintenance rows: each table's latest health, the recommendations (open → dismissed | applied | resolved),
// the runtime policy and the scanner's clock.
import { Schema } from 'effect';
import type { Queryable } from '../../runtime/db.ts';
import { exec, rows, sql } from '../../runtime/sql.ts';
import { notFound, unprocessable } from '../errors.ts';
import { isUuid } from '../identity.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from '../pagination.ts';
import type { Health, Kind, Recommendation, TableFigures } from './assess.ts';
import { CADENCES, PROFILES, type Cadence, type Profile } from './thresholds.ts';

const RECOMMENDATION_KINDS = ['compact_small_files', 'expire_snapshots', 'rewrite_manifests', 'cleanup_orphans', 'investigate_growth'] as const satisfies readonly Kind[];
const RECOMMENDATION_SEVERITIES = ['warning', 'critical'] as const;
const RECOMMENDATION_STATUSES = ['open', 'dismissed', 'resolved', 'applied'] as const;

// Row shapes at the database boundary.
const PolicyRow = Schema.Struct({
  cadence: Schema.Literals(CADENCES),
  profile: Schema.Literals(PROFILES),
  updated_at: Schema.Date,
  last_scan_at: Schema.NullOr(Schema.Date),
  last_deep_scan_at: Schema.NullOr(Schema.Date),
});
const Figures = Schema.Record(Schema.String, Schema.Number);
const RecRow = Schema.Struct({
  id: Schema.String,
  catalog_id: Schema.String,
  catalog: Schema.String,
  schema_name: Schema.String,
  table_name: Schema.String,
  kind: Schema.Literals(RECOMMENDATION_KINDS),
  severity: Schema.Literals(RECOMMENDATION_SEVERITIES),
  status: Schema.Literals(RECOMMENDATION_STATUSES),
  rationale: Schema.String,
  estimated_impact: Figures,
  remediation_sql: Schema.NullOr(Schema.String),
  applied_query_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date,
});
const HealthRow = Schema.Struct({
  score: Schema.Number,
  grade: Schema.String,
  dimensions: Figures,
  metrics: Figures,
  scanned_at: Schema.Date,
  deep_scanned_at: Schema.NullOr(Schema.Date),
});

export interface Policy {
  cadence: Cadence;
  profile: Profile;
  updated_at: string;
  last_scan_at: string | null;
  last_deep_scan_at: string | null;
}

const ts = (d: Date | null) => d?.toISOString() ?? null;

export async function readPolicy(q: Queryable): Promise<Policy> {
  const [r] = await rows(q, PolicyRow, sql`select cadence, profile, updated_at, last_scan_at, last_deep_scan_at from maintenance_policy`);
  return { cadence: r.cadence, profile: r.profile, updated_at: r.updated_at.toISOString(), last_scan_at: ts(r.last_scan_at), last_deep_scan_at: ts(r.last_deep_scan_at) };
}

export async function writePolicy(q: Queryable, p: { cadence?: Cadence; profile?: Profile }): Promise<Policy> {
  await exec(
    q,
    sql`update maintenance_policy set cadence = coalesce(${p.cadence ?? null}, cadence), profile = coalesce(${p.profile ?? null}, profile), updated_at = now()`,
  );
  return readPolicy(q);
}

export async function markScanned(q: Queryable, at: number, deep: boolean) {
  const when = new Date(at).toISOString();
  await exec(q, sql`update maintenance_policy set last_scan_at = ${when}::timestamptz, last_deep_scan_at = ${deep ? sql`${when}::timestamptz` : sql`last_deep_scan_at`}`);
}

export interface TableKey {
  catalogId: string;
  schema: string;
  table: string;
}

const tableIs = (k: TableKey) => sql`catalog_id = ${k.catalogId} and schema_name = ${k.schema} and table_name = ${k.table}`;

/** The size the previous scan saw, for growth. */
export async function previousFigures(q: Queryable, k: TableKey): Promise<TableFigures['previous']> {
  const [r] = await rows(
    q,
    Schema.Struct({ bytes: Schema.NullOr(Schema.String), scanned_at: Schema.Date }),
    sql`select metrics->>'data_bytes' as bytes, scanned_at from table_health where ${tableIs(k)}`,
  );
  return r?.bytes ? { dataBytes: Number(r.bytes), scannedAt: r.scanned_at.getTime() } : undefined;
}

export async function saveHealth(q: Queryable, k: TableKey, h: Health, f: TableFigures, at: number, deep: boolean) {
  const metrics = {
    data_files: f.dataFiles,
    data_bytes: f.dataBytes,
    records: f.records,
    small_files: f.smallFiles,
    snapshots: f.snapshots,
    manifests: f.manifests,
    ...(f.orphans
      ? { orphan_files: f.orphans.files, orphan_bytes: f.orphans.bytes, orphan_eligible_files: f.orphans.eligibleFiles, orphan_eligible_bytes: f.orphans.eligibleBytes }
      : {}),
  };
  const when = new Date(at).toISOString();
  await exec(
    q,
    sql`insert into table_health (catalog_id, schema_name, table_name, score, grade, dimensions, metrics, scanned_at, deep_scanned_at)
        values (${k.catalogId}, ${k.schema}, ${k.table}, ${h.score}, ${h.grade}, ${JSON.stringify(h.dimensions)}::jsonb, ${JSON.stringify(metrics)}::jsonb,
                ${when}::timestamptz, ${deep ? sql`${when}::timestamptz` : sql`null`})
        on conflict (catalog_id, schema_name, table_name) do update set score = excluded.score, grade = excluded.grade,
          dimensions = excluded.dimensions,
          -- a shallow scan keeps the orphan figures and dimension of the last deep one
          metrics = ${deep ? sql`excluded.metrics` : sql`excluded.metrics || (table_health.metrics - array['data_files','data_bytes','records','small_files','snapshots','manifests'])`},
          scanned_at = excluded.scanned_at, deep_scanned_at = coalesce(excluded.deep_scanned_at, table_health.deep_scanned_at)`,
  );
}

/** The orphan figures of the last deep scan, which a shallow scan carries forward. */
export async function lastOrphans(q: Queryable, k: TableKey): Promise<TableFigures['orphans']> {
  const [r] = await rows(q, Schema.Struct({ m: Figures }), sql`select metrics as m from table_health where ${tableIs(k)} and metrics->>'orphan_files' is not null`);
  if (!r) return undefined;
  return { files: r.m.orphan_files, bytes: r.m.orphan_bytes, eligibleFiles: r.m.orphan_eligible_files ?? 0, eligibleBytes: r.m.orphan_eligible_bytes ?? 0 };
}

/**
 * Makes the table's live recommendations what the scan found: new conditions open, persisting ones are refreshed
 * (a dismissed one stays dismissed; an applied one whose query has ended is open again, the condition having
 * outlived it), cleared ones are resolved. Returns how many were opened and resolved.
 */
export async function syncRecommendations(q: Queryable, k: TableKey, found: Recommendation[], at: number): Promise<{ opened: number; resolved: number }> {
  const when = new Date(at).toISOString();
  let opened = 0;
  for (const r of found) {
    const [row] = await rows(
      q,
      Schema.Struct({ inserted: Schema.Boolean }),
      sql`insert into maintenance_recommendations (catalog_id, schema_name, table_name, kind, severity, status, rationale, estimated_impact, remediation_sql, created_at, updated_at)
          values (${k.catalogId}, ${k.schema}, ${k.table}, ${r.kind}, ${r.severity}, 'open', ${r.rationale}, ${JSON.stringify(r.estimated_impact)}::jsonb,
                  ${r.remediation_sql}, ${when}::timestamptz, ${when}::timestamptz)
          on conflict (catalog_id, schema_name, table_name, kind) where status <> 'resolved' do update set
            severity = excluded.severity, rationale = excluded.rationale, estimated_impact = excluded.estimated_impact,
            remediation_sql = excluded.remediation_sql, updated_at = excluded.updated_at,
            status = case when maintenance_recommendations.status = 'applied'
                           and not exists (select 1 from queries qq where qq.id = maintenance_recommendations.applied_query_id and qq.status in ('queued', 'running'))
                          then 'open' else maintenance_recommendations.status end
          returning (xmax = 0) as inserted`,
    );
    if (row.inserted) opened++;
  }
  const resolved = await exec(
    q,
    sql`update maintenance_recommendations set status = 'resolved', updated_at = ${when}::timestamptz
         where ${tableIs(k)} and status <> 'resolved' and not (kind = any(${found.map((r) => r.kind)}::text[]))
         returning id`,
  );
  return { opened, resolved: resolved.length };
}

/** A table that no longer exists keeps no health and no live recommendations. */
export async function forgetMissingTables(q: Queryable, catalogId: string, present: Array<{ schema: string; table: string }>) {
  const gone = () =>
    sql`not exists (select 1 from unnest(${present.map((p) => p.schema)}::text[], ${present.map((p) => p.table)}::text[]) as p(s, t)
                     where p.s = schema_name and p.t = table_name)`;
  await exec(q, sql`delete from table_health where catalog_id = ${catalogId} and ${gone()}`);
  await exec(q, sql`update maintenance_recommendations set status = 'resolved', updated_at = now() where catalog_id = ${catalogId} and status <> 'resolved' and ${gone()}`);
}

/** The first workspace (oldest) a catalog is attached to: where maintenance runs when the caller names none. */
export async function firstAttachedWorkspaceSlug(q: Queryable, catalogId: string): Promise<string | undefined> {
  const [w] = await rows(
    q,
    Schema.Struct({ slug: Schema.String }),
    sql`select w.slug from workspace_catalogs wc join workspaces w on w.id = wc.workspace_id where wc.catalog_id = ${catalogId} order by w.created_at limit 1`,
  );
  return w?.slug;
}

/** A maintenance recommendation as the api answers it. */
export const RecommendationOutSchema = Schema.Struct({
  id: Schema.String,
  catalog_id: Schema.String,
  catalog: Schema.String,
  schema: Schema.String,
  table: Schema.String,
  kind: Schema.Literals(RECOMMENDATION_KINDS),
  severity: Schema.Literals(RECOMMENDATION_SEVERITIES),
  status: Schema.Literals(RECOMMENDATION_STATUSES),
  rationale: Schema.String,
  estimated_impact: Schema.Record(Schema.String, Schema.Number),
  remediation_sql: Schema.NullOr(Schema.String),
  applied_query_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
});
export type RecommendationOut = typeof RecommendationOutSchema.Type;

const REC_COLS = sql`r.id, r.catalog_id, c.slug as catalog, r.schema_name, r.table_name, r.kind, r.severity, r.status, r.rationale,
  r.estimated_impact, r.remediation_sql, r.applied_query_id, r.created_at, r.updated_at`;
const recOut = (r: typeof RecRow.Type): RecommendationOut => ({
  id: r.id,
  catalog_id: r.catalog_id,
  catalog: r.catalog,
  schema: r.schema_name,
  table: r.table_name,
  kind: r.kind,
  severity: r.severity,
  status: r.status,
  rationale: r.rationale,
  estimated_impact: r.estimated_impact,
  remediation_sql: r.remediation_sql,
  applied_query_id: r.applied_query_id,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** A page of recommendations, newest first; `catalogIds` limits them to those catalogs (null: all). */
export async function listRecommendations(
  q: Queryable,
  f: { statuses: string[]; catalogIds: string[] | null; schema?: string; table?: string; cursor?: string; limit: number },
): Promise<Page<RecommendationOut>> {
  const bad = f.statuses.find((s) => !(RECOMMENDATION_STATUSES as readonly string[]).includes(s));
  if (bad) throw unprocessable(`unknown status ${bad}; one of ${RECOMMENDATION_STATUSES.join(', ')}`, 'unprocessable_content', { fields: [{ field: 'status', in: 'query', message: 'unknown value' }] });
  const sort = 'created_at:desc';
  const where = [sql`true`];
  if (f.statuses.length) where.push(sql`r.status = any(${f.statuses}::text[])`);
  if (f.catalogIds !== null) where.push(sql`r.catalog_id = any(${f.catalogIds}::uuid[])`);
  if (f.schema !== undefined) where.push(sql`r.schema_name = ${f.schema}`);
  if (f.table !== undefined) where.push(sql`r.table_name = ${f.table}`);
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!isUuid(c.id) || !(await exec(q, sql`select 1 from maintenance_recommendations where id = ${c.id}`)).length) throw staleCursor();
    where.push(sql`(r.created_at, r.id) < (${c.k}::timestamptz, ${c.id}::uuid)`);
  }
  const found = await rows(
    q,
    Schema.Struct({ ...RecRow.fields, sort_key: Schema.String }),
    sql`select ${REC_COLS}, r.created_at::text as sort_key from maintenance_recommendations r join catalogs c on c.id = r.catalog_id
         where ${sql.join(where, ' and ')}
         order by r.created_at desc, r.id desc limit ${f.limit + 1}`,
  );
  return pageOf(found, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), recOut);
}

export async function findRecommendation(q: Queryable, id: string): Promise<RecommendationOut> {
  if (!isUuid(id)) throw notFound('recommendation');
  const [r] = await rows(q, RecRow, sql`select ${REC_COLS} from maintenance_recommendations r join catalogs c on c.id = r.catalog_id where r.id = ${id}`);
  if (!r) throw notFound('recommendation');
  return recOut(r);
}

export async function setRecommendationStatus(q: Queryable, id: string, status: 'dismissed' | 'applied', queryId: string | null = null) {
  await exec(q, sql`update maintenance_recommendations set status = ${status}, applied_query_id = coalesce(${queryId}, applied_query_id), updated_at = now() where id = ${id}`);
}

/** A table's health from its last scan, as the api answers it. */
export const HealthOutSchema = Schema.Struct({
  score: Schema.Number,
  grade: Schema.String,
  dimensions: Schema.Record(Schema.String, Schema.Number),
  metrics: Schema.Record(Schema.String, Schema.Number),
  scanned_at: Schema.String,
  deep_scanned_at: Schema.NullOr(Schema.String),
});
export type HealthOut = typeof HealthOutSchema.Type;

export async function tableHealth(q: Queryable, k: TableKey): Promise<HealthOut | null> {
  const [r] = await rows(q, HealthRow, sql`select score, grade, dimensions, metrics, scanned_at, deep_scanned_at from table_health where ${tableIs(k)}`);
  return r ? { score: r.score, grade: r.grade, dimensions: r.dimensions, metrics: r.metrics, scanned_at: r.scanned_at.toISOString(), deep_scanned_at: ts(r.deep_scanned_at) } : null;
}

/** Tables of the given catalogs by health, worst first (the Lakehouse health page). */
export async function listHealth(q: Queryable, catalogIds: string[]) {
  return rows(
    q,
    Schema.Struct({ catalog: Schema.String, schema: Schema.String, table: Schema.String, score: Schema.Number, grade: Schema.String, scanned_at: Schema.Date, open: Schema.Number }),
    sql`select c.slug as catalog, h.schema_name as schema, h.table_name as table, h.score, h.grade, h.scanned_at,
               (select count(*) from maintenance_recommendations r where r.catalog_id = h.catalog_id and r.schema_name = h.schema_name
                  and r.table_name = h.table_name and r.status = 'open')::int as open
          from table_health h join catalogs c on c.id = h.catalog_id where h.catalog_id = any(${catalogIds}::uuid[])
         order by h.score, c.slug, h.schema_name, h.table_name`,
  );
}
