// The maintenance rows: each table's latest health, the recommendations (open → dismissed | applied | resolved),
// the runtime policy and the scanner's clock.
import type { Queryable } from '../../runtime/db.ts';
import { notFound, unprocessable } from '../errors.ts';
import { isUuid } from '../identity.ts';
import { decodeCursor, pageOf, staleCursor, type Page } from '../pagination.ts';
import type { Health, Recommendation, TableFigures } from './assess.ts';
import type { Cadence, Profile } from './thresholds.ts';

export interface Policy {
  cadence: Cadence;
  profile: Profile;
  updated_at: string;
  last_scan_at: string | null;
  last_deep_scan_at: string | null;
}

const ts = (d: Date | null) => d?.toISOString() ?? null;

export async function readPolicy(q: Queryable): Promise<Policy> {
  const [r] = await q.query<{ cadence: Cadence; profile: Profile; updated_at: Date; last_scan_at: Date | null; last_deep_scan_at: Date | null }>(
    `select cadence, profile, updated_at, last_scan_at, last_deep_scan_at from maintenance_policy`,
  );
  return { cadence: r.cadence, profile: r.profile, updated_at: r.updated_at.toISOString(), last_scan_at: ts(r.last_scan_at), last_deep_scan_at: ts(r.last_deep_scan_at) };
}

export async function writePolicy(q: Queryable, p: { cadence?: Cadence; profile?: Profile }): Promise<Policy> {
  await q.query(`update maintenance_policy set cadence = coalesce($1, cadence), profile = coalesce($2, profile), updated_at = now()`, [p.cadence ?? null, p.profile ?? null]);
  return readPolicy(q);
}

export async function markScanned(q: Queryable, at: number, deep: boolean) {
  await q.query(`update maintenance_policy set last_scan_at = $1::timestamptz, last_deep_scan_at = case when $2 then $1::timestamptz else last_deep_scan_at end`, [
    new Date(at).toISOString(),
    deep,
  ]);
}

export interface TableKey {
  catalogId: string;
  schema: string;
  table: string;
}

/** The size the previous scan saw, for growth. */
export async function previousFigures(q: Queryable, k: TableKey): Promise<TableFigures['previous']> {
  const [r] = await q.query<{ bytes: string | null; scanned_at: Date }>(
    `select metrics->>'data_bytes' as bytes, scanned_at from table_health where catalog_id = $1 and schema_name = $2 and table_name = $3`,
    [k.catalogId, k.schema, k.table],
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
  await q.query(
    `insert into table_health (catalog_id, schema_name, table_name, score, grade, dimensions, metrics, scanned_at, deep_scanned_at)
     values ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::timestamptz, case when $9 then $8::timestamptz end)
     on conflict (catalog_id, schema_name, table_name) do update set score = excluded.score, grade = excluded.grade,
       dimensions = excluded.dimensions,
       -- a shallow scan keeps the orphan figures and dimension of the last deep one
       metrics = case when $9 then excluded.metrics else excluded.metrics || (table_health.metrics - array['data_files','data_bytes','records','small_files','snapshots','manifests']) end,
       scanned_at = excluded.scanned_at, deep_scanned_at = coalesce(excluded.deep_scanned_at, table_health.deep_scanned_at)`,
    [k.catalogId, k.schema, k.table, h.score, h.grade, JSON.stringify(h.dimensions), JSON.stringify(metrics), new Date(at).toISOString(), deep],
  );
}

/** The orphan figures of the last deep scan, which a shallow scan carries forward. */
export async function lastOrphans(q: Queryable, k: TableKey): Promise<TableFigures['orphans']> {
  const [r] = await q.query<{ m: Record<string, number> }>(
    `select metrics as m from table_health where catalog_id = $1 and schema_name = $2 and table_name = $3 and metrics->>'orphan_files' is not null`,
    [k.catalogId, k.schema, k.table],
  );
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
    const [row] = await q.query<{ inserted: boolean }>(
      `insert into maintenance_recommendations (catalog_id, schema_name, table_name, kind, severity, status, rationale, estimated_impact, remediation_sql, created_at, updated_at)
       values ($1, $2, $3, $4, $5, 'open', $6, $7::jsonb, $8, $9::timestamptz, $9::timestamptz)
       on conflict (catalog_id, schema_name, table_name, kind) where status <> 'resolved' do update set
         severity = excluded.severity, rationale = excluded.rationale, estimated_impact = excluded.estimated_impact,
         remediation_sql = excluded.remediation_sql, updated_at = excluded.updated_at,
         status = case when maintenance_recommendations.status = 'applied'
                        and not exists (select 1 from queries qq where qq.id = maintenance_recommendations.applied_query_id and qq.status in ('queued', 'running'))
                       then 'open' else maintenance_recommendations.status end
       returning (xmax = 0) as inserted`,
      [k.catalogId, k.schema, k.table, r.kind, r.severity, r.rationale, JSON.stringify(r.estimated_impact), r.remediation_sql, when],
    );
    if (row.inserted) opened++;
  }
  const resolved = await q.query(
    `update maintenance_recommendations set status = 'resolved', updated_at = $5::timestamptz
      where catalog_id = $1 and schema_name = $2 and table_name = $3 and status <> 'resolved' and not (kind = any($4::text[]))
      returning id`,
    [k.catalogId, k.schema, k.table, found.map((r) => r.kind), when],
  );
  return { opened, resolved: resolved.length };
}

/** A table that no longer exists keeps no health and no live recommendations. */
export async function forgetMissingTables(q: Queryable, catalogId: string, present: Array<{ schema: string; table: string }>) {
  const gone = `not exists (select 1 from unnest($2::text[], $3::text[]) as p(s, t) where p.s = schema_name and p.t = table_name)`;
  const params = [catalogId, present.map((p) => p.schema), present.map((p) => p.table)];
  await q.query(`delete from table_health where catalog_id = $1 and ${gone}`, params);
  await q.query(`update maintenance_recommendations set status = 'resolved', updated_at = now() where catalog_id = $1 and status <> 'resolved' and ${gone}`, params);
}

export interface RecommendationOut {
  id: string;
  catalog_id: string;
  catalog: string;
  schema: string;
  table: string;
  kind: string;
  severity: string;
  status: string;
  rationale: string;
  estimated_impact: Record<string, number>;
  remediation_sql: string | null;
  applied_query_id: string | null;
  created_at: string;
  updated_at: string;
}

interface RecRow {
  id: string;
  catalog_id: string;
  catalog: string;
  schema_name: string;
  table_name: string;
  kind: string;
  severity: string;
  status: string;
  rationale: string;
  estimated_impact: Record<string, number>;
  remediation_sql: string | null;
  applied_query_id: string | null;
  created_at: Date;
  updated_at: Date;
}
const REC_COLS = `r.id, r.catalog_id, c.slug as catalog, r.schema_name, r.table_name, r.kind, r.severity, r.status, r.rationale,
  r.estimated_impact, r.remediation_sql, r.applied_query_id, r.created_at, r.updated_at`;
const recOut = (r: RecRow): RecommendationOut => ({
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

export const RECOMMENDATION_STATUSES = ['open', 'dismissed', 'resolved', 'applied'] as const;

/** A page of recommendations, newest first; `catalogIds` limits them to those catalogs (null: all). */
export async function listRecommendations(
  q: Queryable,
  f: { statuses: string[]; catalogIds: string[] | null; schema?: string; table?: string; cursor?: string; limit: number },
): Promise<Page<RecommendationOut>> {
  const bad = f.statuses.find((s) => !(RECOMMENDATION_STATUSES as readonly string[]).includes(s));
  if (bad) throw unprocessable(`unknown status ${bad}; one of ${RECOMMENDATION_STATUSES.join(', ')}`, 'unprocessable_content', { fields: [{ field: 'status', in: 'query', message: 'unknown value' }] });
  const sort = 'created_at:desc';
  const params: unknown[] = [f.statuses.length ? f.statuses : null, f.catalogIds, f.schema ?? null, f.table ?? null];
  let after = '';
  if (f.cursor) {
    const c = decodeCursor(f.cursor, sort);
    if (!isUuid(c.id) || !(await q.query(`select 1 from maintenance_recommendations where id = $1`, [c.id])).length) throw staleCursor();
    params.push(c.k, c.id);
    after = `and (r.created_at, r.id) < ($5::timestamptz, $6::uuid)`;
  }
  params.push(f.limit + 1);
  const rows = await q.query<RecRow & { sort_key: string }>(
    `select ${REC_COLS}, r.created_at::text as sort_key from maintenance_recommendations r join catalogs c on c.id = r.catalog_id
      where ($1::text[] is null or r.status = any($1::text[])) and ($2::uuid[] is null or r.catalog_id = any($2::uuid[]))
        and ($3::text is null or r.schema_name = $3) and ($4::text is null or r.table_name = $4) ${after}
      order by r.created_at desc, r.id desc limit $${params.length}`,
    params,
  );
  return pageOf(rows, f.limit, sort, (r) => ({ k: r.sort_key, id: r.id }), recOut);
}

export async function findRecommendation(q: Queryable, id: string): Promise<RecommendationOut> {
  if (!isUuid(id)) throw notFound('recommendation');
  const [r] = await q.query<RecRow>(`select ${REC_COLS} from maintenance_recommendations r join catalogs c on c.id = r.catalog_id where r.id = $1`, [id]);
  if (!r) throw notFound('recommendation');
  return recOut(r);
}

export async function setRecommendationStatus(q: Queryable, id: string, status: 'dismissed' | 'applied', queryId: string | null = null) {
  await q.query(`update maintenance_recommendations set status = $2, applied_query_id = coalesce($3, applied_query_id), updated_at = now() where id = $1`, [id, status, queryId]);
}

export interface HealthOut {
  score: number;
  grade: string;
  dimensions: Record<string, number>;
  metrics: Record<string, number>;
  scanned_at: string;
  deep_scanned_at: string | null;
}

export async function tableHealth(q: Queryable, k: TableKey): Promise<HealthOut | null> {
  const [r] = await q.query<{ score: number; grade: string; dimensions: Record<string, number>; metrics: Record<string, number>; scanned_at: Date; deep_scanned_at: Date | null }>(
    `select score, grade, dimensions, metrics, scanned_at, deep_scanned_at from table_health where catalog_id = $1 and schema_name = $2 and table_name = $3`,
    [k.catalogId, k.schema, k.table],
  );
  return r ? { score: r.score, grade: r.grade, dimensions: r.dimensions, metrics: r.metrics, scanned_at: r.scanned_at.toISOString(), deep_scanned_at: ts(r.deep_scanned_at) } : null;
}

/** Tables of the given catalogs by health, worst first (the Lakehouse health page). */
export async function listHealth(q: Queryable, catalogIds: string[]) {
  return q.query<{ catalog: string; schema: string; table: string; score: number; grade: string; open: number; scanned_at: Date }>(
    `select c.slug as catalog, h.schema_name as schema, h.table_name as table, h.score, h.grade, h.scanned_at,
            (select count(*) from maintenance_recommendations r where r.catalog_id = h.catalog_id and r.schema_name = h.schema_name
               and r.table_name = h.table_name and r.status = 'open')::int as open
       from table_health h join catalogs c on c.id = h.catalog_id where h.catalog_id = any($1::uuid[])
      order by h.score, c.slug, h.schema_name, h.table_name`,
    [catalogIds],
  );
}
