// A table's sample rows: the first rows of a table, read by submitting a query like any other (statement policy,
// agent tier, connection) with origin `sample`, hidden from the history, waited for briefly.
import { AppError } from '../domain/errors.ts';
import { checkStatementPolicy, policyRejection } from '../domain/statementPolicy/policy.ts';
import type { Principal } from '../domain/identity.ts';
import type { WorkspaceAccess } from '../domain/workspaces.ts';
import { chooseCompute } from './compute.ts';
import { readQuery, submitQuery } from './querySubmission.ts';
import { readRowsPage } from './resultPages.ts';
import type { AppContext } from './context.ts';

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The statement a sample runs: the first `limit` rows of the table, through the query path (origin `sample`). */
const sampleSql = (catalog: string, schema: string, table: string, limit: number) =>
  `SELECT * FROM ${quoteIdent(catalog)}.${quoteIdent(schema)}.${quoteIdent(table)} LIMIT ${limit}`;

/**
 * Runs a sample on an agent the caller may use and returns its rows: submitted like any query (statement policy,
 * agent tier, connection), hidden from history by its origin, waited for up to `waitS` seconds.
 */
export async function sampleTable(
  ctx: AppContext,
  args: { principal: Principal; ws: WorkspaceAccess; catalog: string; schema: string; table: string; agentId: string | undefined; limit: number; waitS: number },
) {
  const sql = sampleSql(args.catalog, args.schema, args.table, args.limit);
  const policy = await checkStatementPolicy(sql, { mode: 'query' });
  if (!policy.ok) throw policyRejection(policy);
  // A sample waits for elastic compute like any query (within its wait).
  const compute = await chooseCompute(ctx, args.principal, args.ws, args.agentId ?? null);
  const id = await submitQuery(ctx, {
    workspaceId: args.ws.workspace.id,
    workspaceSlug: args.ws.workspace.slug,
    userId: args.principal.user.id,
    sql,
    agentId: compute.agentId,
    computePool: compute.pool,
    timeoutS: args.waitS,
    statementType: policy.statementType,
    tables: policy.tables,
    catalog: args.catalog,
    origin: 'sample',
  });
  await ctx.host.waitForTerminal('query', id, args.waitS * 1000);
  const row = await readQuery(ctx, id);
  if (row.status === 'queued' || row.status === 'running') {
    await ctx.host.send('query', id, { type: 'cancel' });
    throw new AppError(504, 'sample_timeout', `the sample did not finish within ${args.waitS}s`, { query_id: id });
  }
  if (row.status !== 'done') {
    throw new AppError(502, 'sample_failed', `the sample query ${row.status}: ${row.error ?? 'no error reported'}`, { query_id: id });
  }
  const page = await readRowsPage(ctx, row, args.limit, undefined);
  return { query_id: id, rows: page.rows, columns: page.columns, column_schema: page.column_schema };
}
