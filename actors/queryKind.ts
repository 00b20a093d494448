// The query actor's effects and entity projection: dispatch and cancel frames over the agent's socket, the
// profile, and the queries row written in the same transaction as every transition.
import { machineKinds } from '../machines/index.ts';
import type { QueryProjection } from '../machines/query.ts';
import type { StatementProjection } from '../machines/statement.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { Db } from '../runtime/db.ts';
import { sql } from '../runtime/sql.ts';
import type { Logger } from '../runtime/logger.ts';
import type { AgentSockets } from '../runtime/agentSockets.ts';
import type { ActorKind } from './types.ts';
import { AGENT_RECONNECT_WAIT_MS, type AgentLink } from './agentLink.ts';
import type { ElasticCompute } from './elasticCompute.ts';
import { recordTableWrite } from '../domain/tableMetadata.ts';
import { STATEMENT_WRITES, finishedQuery, type FinishedQuery } from '../domain/queries.ts';
import { markTableDropped } from '../domain/semantic/models.ts';
import { attachedSlugs, dropTableLineage, recordExecutionLineage, recordRename, writtenTable, type LineageEnv } from '../domain/lineage/graph.ts';

export interface QueryKindDeps {
  db: Db;
  sockets: AgentSockets;
  /** reaches the agent on this replica's socket or through the replica holding it */
  link: AgentLink;
  logger: Logger;
  tracing?: Tracing;
  /** a catalog token limited to these warehouses (read or write) for this long: what a dispatch carries */
  catalogToken?: (scope: { warehouse: string; access: 'read' | 'write' }[], ttlSeconds: number) => Promise<string>;
  /** present when ELASTIC_COMPUTE_ENABLED: queries without an agent wait for a pool's compute */
  elastic?: ElasticCompute;
  /** the catalog (column lineage reads source schemas) and the failure counter for execution lineage */
  lineage?: LineageEnv;
}

/** The longest wait between two deliveries of a cancel to an unreachable agent. */
const CANCEL_RETRY_MAX_MS = 1000;

const toDate = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms));

/**
 * The catalogs a dispatched query may reach through its token: every attached catalog to read, and for a write the
 * catalogs the api found it may write (`write_catalogs`, domain/catalogGrants.ts writeCatalogs: every catalog its
 * table names and schema targets resolve to, as the scoped-grant check read them). Which named table a statement
 * writes is decided at the api, not here. Extras persisted before `write_catalogs` existed: the catalogs its tables
 * name (an unqualified table is in the default catalog) and the default one.
 */
export function dispatchScope(catalogs: readonly Record<string, unknown>[], extras: Record<string, unknown> | null): { warehouse: string; access: 'read' | 'write' }[] {
  const write = extras?.write === true;
  const defaultName = catalogs.find((c) => c.default === true)?.name;
  let named: Set<unknown>;
  if (Array.isArray(extras?.write_catalogs)) {
    named = new Set(extras.write_catalogs);
  } else {
    const tables: { catalog?: string | null }[] = Array.isArray(extras?.tables) ? extras.tables : [];
    named = new Set(tables.map((t) => t.catalog ?? defaultName));
    if (defaultName !== undefined) named.add(defaultName);
  }
  return catalogs.map((c) => ({ warehouse: String(c.warehouse), access: write && named.has(c.name) ? 'write' : 'read' }));
}

/** The catalogs a dispatch carries: each with the token, and for an elastic agent the catalog address it reaches
 *  (ELASTIC_AGENT_CATALOG_BASE_URL) in place of the api's own. */
export function dispatchCatalogs(catalogs: readonly Record<string, unknown>[], token: string, catalogUrl: string | null | undefined) {
  return catalogs.map((c) => ({ ...c, token, ...(catalogUrl ? { catalog_url: catalogUrl } : {}) }));
}

export function queryKind(deps: QueryKindDeps): ActorKind {
  const { db, sockets, link } = deps;
  return {
    machine: machineKinds.query.machine,
    project: (s) => ({ ...machineKinds.query.project(s) }),
    // The statement text lives in its queries row: not copied into the snapshot on every transition.
    externalContext: { keys: ['sql'], select: `select jsonb_build_object('sql', q.sql) from queries q where q.id = a.id` },
    effects: {
      sendDispatchQuery: async (
        ctx,
        p: { queryId: string; agentId: string; sql: string; workspace: string; timeoutS: number; extras: Record<string, unknown> | null },
      ) => {
        // The submitting request's trace continues here (possibly on another replica, after a restart): the
        // dispatch span is its child, and the frame carries the dispatch span's context on to the agent.
        const dispatch = async () => {
          const catalogs: Array<Record<string, unknown>> = Array.isArray(p.extras?.catalogs) ? p.extras.catalogs : [];
          let token: string | null = null;
          if (catalogs.length && deps.catalogToken) {
            try {
              token = await deps.catalogToken(dispatchScope(catalogs, p.extras), p.timeoutS + 120);
            } catch (err) {
              // A statement that names no table needs no catalog: it runs without them.
              const tables = Array.isArray(p.extras?.tables) ? p.extras.tables : [];
              if (tables.length) {
                await ctx.send({ type: 'dispatchFailed', message: `the catalog service is unavailable: ${(err as Error).message}` });
                return;
              }
              ctx.logger.warn({ queryId: p.queryId, err: (err as Error).message }, 'catalog service unavailable; dispatching without catalogs');
            }
          }
          // The query id is the idempotency key: an agent ignores a dispatch it has already seen (this effect may run
          // again after a crash, or when persisting `dispatched` failed). An agent whose replica just died is waited
          // for while it reconnects to another (AGENT_RECONNECT_WAIT_MS), unless the query left `queued` meanwhile.
          const stillQueued = async () => (await ctx.host.get('query', p.queryId))?.state === 'queued';
          const sent = await link.sendWaiting(p.agentId, {
            type: 'dispatch_query',
            payload: {
              query_id: p.queryId,
              sql: p.sql,
              workspace: p.workspace,
              backend: String(p.extras?.backend ?? 'object_store'),
              timeout_s: p.timeoutS,
              ...(token ? { catalogs: dispatchCatalogs(catalogs, token, await deps.elastic?.catalogUrlFor(p.agentId)) } : {}),
              ...(deps.tracing?.enabled ? { traceparent: deps.tracing.traceparent() } : {}),
            },
          }, AGENT_RECONNECT_WAIT_MS, stillQueued);
          if (sent && sockets.agent(p.agentId)) sockets.rememberDispatch(p.queryId, p.agentId);
          await ctx.send(sent ? { type: 'dispatched' } : { type: 'dispatchFailed', message: 'the agent is not connected' });
        };
        if (!deps.tracing?.enabled) return dispatch();
        await deps.tracing.span('dispatch', { parent: (p.extras?.traceparent as string | undefined) ?? null, attributes: { 'eider.query_id': p.queryId, 'eider.agent_id': p.agentId } }, dispatch);
      },
      // A cancel is durable: while the agent is unreachable (the replica holding its socket died) it is sent again
      // until the agent's socket is back on some replica, as long as the query is cancelling and before `untilAt`
      // (its deadline, when the agent's own timeout has stopped it). Effects from before `untilAt`: sent once.
      sendCancelQuery: async (ctx, p: { queryId: string; agentId: string | null; untilAt?: number | null }) => {
        sockets.forgetDispatch(p.queryId);
        if (!p.agentId) return;
        for (let attempt = 0; ; attempt++) {
          if (await link.send(p.agentId, { type: 'cancel_query', payload: { query_id: p.queryId } })) return;
          if (p.untilAt === undefined || p.untilAt === null || Date.now() >= p.untilAt) return;
          if ((await ctx.host.get('query', p.queryId))?.state !== 'cancelling') return;
          if (attempt === 0) ctx.logger.info({ queryId: p.queryId, agentId: p.agentId }, 'agent unreachable; the cancel waits for it');
          await new Promise((r) => setTimeout(r, Math.min(CANCEL_RETRY_MAX_MS, 100 * 2 ** attempt)));
        }
      },
      // Emitted once a query is done: its profile, and for writes the tables' last-write provenance.
      // (`profile`: only in effects committed before profiles became an attachment of `done`.)
      // A read (SELECT, DESCRIBE…; submitQuery sets write: false for exactly those) leaves no write provenance, drop
      // or lineage to record: skipping saves reading its row back after every read. Effects persisted before
      // `readOnly` existed, or carrying a profile to store, take the full path.
      recordProfile: async (_ctx, p: { queryId: string; readOnly?: boolean; profile?: unknown }) => {
        if (p.readOnly === true && (p.profile === undefined || p.profile === null)) return;
        await recordRunOutcome(db, p.queryId, p.profile ?? null, deps.lineage);
      },
      // Elastic compute: the query was recorded without an agent; the pool it waits on is on its row.
      requestCompute: async (ctx, p: { queryId: string }) => {
        const [row] = await db.query<{ compute_pool: string | null }>(`select compute_pool from queries where id = $1`, [p.queryId]);
        if (!deps.elastic || !row?.compute_pool) {
          ctx.logger.warn({ queryId: p.queryId }, 'no elastic compute for this query; it waits for its deadline');
          return;
        }
        const agentId = await deps.elastic.ensure(ctx.host, row.compute_pool);
        if (agentId) await ctx.send({ type: 'computeReady', agentId });
      },
      agentWorkChanged: (ctx, p: { agentId: string }) => deps.elastic?.reportWork(ctx.host, p.agentId),
    },
    entityWrite: runEntityWrite,
    eventAttachments: ['resultInline', 'profile'],
    // Waiters elsewhere (a GET with wait_timeout_s, a table sample) wait for the end: queued → running is not sent
    // to every replica.
    announceAcross: 'terminal',
    // Without elastic compute nothing listens for an agent's work changing: no outbox rows for it.
    inertEffects: deps.elastic ? [] : ['agentWorkChanged'],
  };
}

/** A query's projection, or a session statement's: it has no agent of its own, so its agent_id is left unset. */
type RunRowProjection = QueryProjection | (StatementProjection & { agentId?: undefined });

/** The queries row's columns a query's or a session statement's projection sets, as the row reads them back: what
 *  runEntityWrite writes, and what a waiter that heard the transition answers with instead of reading the row. */
export function runColumns<P extends RunRowProjection>(pr: P) {
  return {
    status: pr.status,
    agent_id: pr.agentId as P['agentId'],
    row_count: pr.rowCount,
    duration_ms: pr.durationMs,
    error: pr.error,
    error_code: pr.errorCode,
    columns: pr.columns,
    column_schema: pr.columnSchema,
    result_path: pr.resultPath,
    running_at: toDate(pr.runningAt),
    finished_at: toDate(pr.finishedAt),
  };
}

/** The queries row of a query or a session statement, from its actor's projection (one statement, folded into the
 *  transition's own), with the small result file a done event carries inline. */
export const runEntityWrite = (id: string, pr: RunRowProjection, attachments?: Readonly<Record<string, unknown>>) => {
  const inline = typeof attachments?.resultInline === 'string' ? attachments.resultInline : null;
  const profile = attachments?.profile === undefined || attachments.profile === null ? null : JSON.stringify(attachments.profile);
  const c = runColumns(pr);
  return sql`update queries set status = ${c.status}, agent_id = ${c.agent_id}, row_count = ${c.row_count}, duration_ms = ${c.duration_ms},
      error = ${c.error}, error_code = ${c.error_code}, columns = ${c.columns ? JSON.stringify(c.columns) : null}::jsonb,
      column_schema = ${c.column_schema ? JSON.stringify(c.column_schema) : null}::jsonb, result_path = ${c.result_path},
      running_at = ${c.running_at?.toISOString() ?? null}::timestamptz, finished_at = ${c.finished_at?.toISOString() ?? null}::timestamptz,
      result_inline = coalesce(decode(${inline}::text, 'base64'), result_inline), profile = coalesce(${profile}::jsonb, profile),
      progress = case when ${c.status}::text = 'running' then progress end
    where id = ${id}`;
};

/**
 * What a finished run leaves besides its row: its profile (when given), for writes the tables' last-write
 * provenance, and for a DROP TABLE the semantic models it breaks (as a drop through the catalog API does).
 */
export async function recordRunOutcome(db: Db, queryId: string, profile: unknown, lineage: LineageEnv = {}) {
  // Without a profile to store (it normally comes with the done transition), only a read.
  const q = await finishedQuery(db, queryId, profile);
  if (q?.statement_type && STATEMENT_WRITES.includes(q.statement_type)) {
    await recordWrites(db, queryId, q);
    // Lineage is best effort: a statement whose target cannot be read records none; the query stands either way.
    if (['insert', 'merge', 'update', 'create'].includes(q.statement_type)) await recordExecutionLineage(db, queryId, q, lineage).catch(() => 0);
  }
  if (q?.statement_type === 'drop') await recordDrops(db, q);
  // A renamed table's lineage follows it (by its uuid); the query stands either way.
  if (q?.statement_type === 'alter') await recordRename(db, q, lineage).catch(() => false);
}

async function recordDrops(db: Db, q: FinishedQuery) {
  for (const t of q.tables ?? []) {
    const slug = t.catalog ?? q.catalog;
    if (!slug) continue;
    await markTableDropped(db, slug, t.schema ?? 'main', t.name);
    await dropTableLineage(db, { catalog: slug, schema: t.schema ?? 'main', table: t.name });
  }
}

/**
 * The sidecar's last-write provenance for the table a finished write wrote, in the catalog it resolved to. The tables
 * it only read (a CTAS's sources) keep theirs; a write whose text does not name its target records one only when it
 * named a single table.
 */
async function recordWrites(db: Db, queryId: string, q: FinishedQuery) {
  const written = writtenTable(q.sql, q.catalog ?? '', await attachedSlugs(db, q.workspace_id));
  const only = (q.tables ?? []).length === 1 ? q.tables[0] : null;
  const target = written ?? (only && { catalog: only.catalog ?? q.catalog ?? '', schema: only.schema ?? 'main', table: only.name });
  if (!target?.catalog) return;
  const [c] = await db.query<{ id: string }>(
    `select c.id from catalogs c join workspace_catalogs wc on wc.catalog_id = c.id where lower(c.slug) = lower($1) and wc.workspace_id = $2`,
    [target.catalog, q.workspace_id],
  );
  if (!c) return;
  await recordTableWrite(db, { catalogId: c.id, schema: target.schema, table: target.table, userId: q.user_id, queryId, operation: q.statement_type! });
}
