// Maintenance recommendations as the health page and a table's health panel show them: what, why, the estimated
// impact and the statement that carries it out; administrators (the `catalogs` permission) apply one on an agent and
// follow that query to its end, or dismiss it.
import { Fragment, useEffect, useRef, useState } from 'react';
import { call, enc } from '../api/client.ts';
import type { QueryOut, Recommendation, RecommendationKind } from '../api/types.ts';
import { navigate } from '../app/router.ts';
import { hasPermission, useSession } from '../app/session.tsx';
import { ErrorNotice, Notice } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatBytes, formatCount, formatTime } from '../components/format.ts';
import { AgentPicker, agentIdOf } from '../worksheet/AgentPicker.tsx';
import { isTerminal, queryError } from '../worksheet/useQueryRun.ts';
import { openInWorksheet } from '../worksheet/worksheetStore.ts';

const KIND_LABEL: Record<RecommendationKind, string> = {
  compact_small_files: 'Compact small files',
  expire_snapshots: 'Expire old snapshots',
  rewrite_manifests: 'Rewrite manifests',
  cleanup_orphans: 'Remove orphan files',
  investigate_growth: 'Investigate growth',
};

/** The server's schema admits non-finite numbers as strings ("Infinity", "NaN"); Number reads those too. */
export const num = (v: number | string | null | undefined): number => (v === null || v === undefined ? NaN : Number(v));

export const tablePage = (ws: string, catalog: string, schema: string, table: string) => `/w/${enc(ws)}/catalog/${enc(catalog)}/${enc(schema)}/${enc(table)}`;

/** Grades run A (healthy) to F; the colour says how urgent, the letter says it without colour. */
export function GradeBadge(props: { grade: string }) {
  return (
    <span className={`grade grade-${props.grade}`} title={`grade ${props.grade}`}>
      {props.grade}
    </span>
  );
}

const impactLabel = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replace(/_/g, ' ');
const impactValue = (key: string, v: number) => (key.includes('bytes') ? formatBytes(v) : formatCount(v));

/** How long a still-running apply waits before asking again when the server answered at once (no long poll). */
const APPLY_POLL_MS = 1000;

interface ApplyRun {
  rec: Recommendation;
  query: QueryOut;
}

export function RecommendationList(props: {
  ws: string;
  items: Recommendation[];
  /** after an apply or dismiss, and when an applied query ends: the caller reads its lists again */
  onChanged: () => void;
  /** the health page lists many tables' recommendations: each names its table */
  showTable?: boolean;
  /** said when there is none ('' while loading) */
  empty: string;
}) {
  const { user } = useSession();
  const admin = hasPermission(user, 'catalogs');
  const [agentId, setAgentId] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Applies started here, newest first. Kept apart from the list: an applied recommendation leaves the open list at
  // once, while its query still runs.
  const [runs, setRuns] = useState<ApplyRun[]>([]);
  const applicable = (r: Recommendation) => r.remediation_sql !== null && r.status !== 'resolved';

  const act = async (rec: Recommendation, fn: () => Promise<void>) => {
    setBusy(rec.id);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
    props.onChanged();
  };
  const apply = (rec: Recommendation) =>
    act(rec, async () => {
      const agent = agentIdOf(agentId);
      // Run in this workspace (the catalog is attached to it), so the query is this workspace's.
      const query = await call('POST /api/maintenance/recommendations/{recommendation_id}/apply', {
        path: { recommendation_id: rec.id },
        body: { workspace: props.ws, ...(agent ? { agent_id: agent } : {}) },
      });
      setRuns((r) => [{ rec, query }, ...r]);
    });
  const dismiss = (rec: Recommendation) =>
    act(rec, async () => {
      await call('POST /api/maintenance/recommendations/{recommendation_id}/dismiss', { path: { recommendation_id: rec.id } });
    });

  return (
    <div className="stack">
      {admin && props.items.some(applicable) ? (
        <div className="row">
          <AgentPicker value={agentId} onChange={setAgentId} allowPool />
          <span className="hint">runs what Apply starts</span>
        </div>
      ) : null}
      {error ? <ErrorNotice error={error} what="Recommendation" /> : null}
      {runs.length ? (
        <ul className="item-list" aria-label="Applied recommendations">
          {runs.map((run) => (
            <ApplyProgress key={run.query.id} run={run} onSettled={props.onChanged} />
          ))}
        </ul>
      ) : null}
      {props.items.length ? (
        props.items.map((rec) => (
          <RecommendationCard
            key={rec.id}
            ws={props.ws}
            rec={rec}
            showTable={props.showTable}
            busy={busy === rec.id}
            onApply={admin && applicable(rec) ? () => void apply(rec) : undefined}
            applyDisabled={!agentId}
            onDismiss={admin && rec.status === 'open' ? () => void dismiss(rec) : undefined}
          />
        ))
      ) : props.empty ? (
        <p className="hint">{props.empty}</p>
      ) : null}
    </div>
  );
}

function RecommendationCard(props: {
  ws: string;
  rec: Recommendation;
  showTable?: boolean;
  busy: boolean;
  onApply?: () => void;
  applyDisabled: boolean;
  onDismiss?: () => void;
}) {
  const { rec } = props;
  const qualified = `${rec.catalog}.${rec.schema}.${rec.table}`;
  const impact = Object.entries(rec.estimated_impact);
  const sql = rec.remediation_sql;
  return (
    <article className="card rec" aria-label={`${KIND_LABEL[rec.kind]}: ${qualified}`} data-kind={rec.kind} data-status={rec.status}>
      <div className="row wrap">
        <span className={`pill ${rec.severity}`}>{rec.severity}</span>
        <strong>{KIND_LABEL[rec.kind] ?? rec.kind}</strong>
        {props.showTable ? <Link href={tablePage(props.ws, rec.catalog, rec.schema, rec.table)}>{qualified}</Link> : null}
        {rec.status !== 'open' ? <span className="hint">{rec.status}</span> : null}
        <span className="grow" />
        <span className="hint">since {formatTime(rec.created_at)}</span>
      </div>
      <p>{rec.rationale}</p>
      {impact.length ? (
        <dl className="figures" aria-label="Estimated impact">
          {impact.map(([k, v]) => (
            <Fragment key={k}>
              <dt>{impactLabel(k)}</dt>
              <dd>{impactValue(k, num(v))}</dd>
            </Fragment>
          ))}
        </dl>
      ) : null}
      {sql ? <pre className="mono sql-full">{sql}</pre> : <p className="hint">Nothing to run: look at what writes to this table.</p>}
      {rec.applied_query_id ? (
        <p className="hint">
          Applied by query <Link href={`/inspect/query/${enc(rec.applied_query_id)}`}>{rec.applied_query_id.slice(0, 8)}</Link>
        </p>
      ) : null}
      <div className="row">
        {sql ? (
          <button
            type="button"
            className="secondary"
            onClick={() => {
              openInWorksheet(props.ws, sql, rec.table, rec.catalog);
              navigate(`/w/${enc(props.ws)}/worksheets`);
            }}
          >
            Open in worksheet
          </button>
        ) : null}
        {props.onApply ? (
          <button type="button" disabled={props.busy || props.applyDisabled} onClick={props.onApply} title={props.applyDisabled ? 'Choose an agent first' : undefined}>
            Apply
          </button>
        ) : null}
        {props.onDismiss ? (
          <button type="button" className="secondary" disabled={props.busy} onClick={props.onDismiss}>
            Dismiss
          </button>
        ) : null}
      </div>
    </article>
  );
}

/** One apply's query, read again until it ends (a long poll when the server holds the request). */
function ApplyProgress(props: { run: ApplyRun; onSettled: () => void }) {
  const { rec } = props.run;
  const [query, setQuery] = useState(props.run.query);
  const [error, setError] = useState<unknown>(null);
  // The caller's callback changes every render; the loop below outlives renders and calls the latest.
  const settled = useRef(props.onSettled);
  settled.current = props.onSettled;
  const first = props.run.query;
  useEffect(() => {
    const ctl = new AbortController();
    void (async () => {
      let q = first;
      try {
        while (!isTerminal(q.status)) {
          const asked = Date.now();
          q = await call('GET /api/queries/{query_id}', { path: { query_id: q.id }, query: { wait_timeout_s: 10 }, signal: ctl.signal });
          if (ctl.signal.aborted) return;
          setQuery(q);
          if (!isTerminal(q.status) && Date.now() - asked < APPLY_POLL_MS / 2) await new Promise((r) => setTimeout(r, APPLY_POLL_MS));
          if (ctl.signal.aborted) return;
        }
        settled.current();
      } catch (e) {
        if (!ctl.signal.aborted) setError(e);
      }
    })();
    return () => ctl.abort();
  }, [first]);
  const failure = queryError(query);
  // As the worksheet says it: a queued query with no agent waits for the pool to start one.
  const waiting = query.status === 'queued' && query.agent_id === null;
  return (
    <li data-status={query.status}>
      <div className="row wrap">
        <span className={`pill ${query.status}`} role="status" aria-live="polite" data-status={query.status}>
          {waiting ? 'waiting for compute' : query.status}
        </span>
        <span>
          {KIND_LABEL[rec.kind]} on {rec.catalog}.{rec.schema}.{rec.table}: query{' '}
          <Link href={`/inspect/query/${enc(query.id)}`}>{query.id.slice(0, 8)}</Link>
        </span>
        {query.status === 'done' ? <span className="hint">the next scan resolves it once its condition has cleared</span> : null}
      </div>
      {failure ? (
        <Notice code={failure.code} message={failure.message} />
      ) : null}
      {error ? <ErrorNotice error={error} what="Maintenance query" /> : null}
    </li>
  );
}
