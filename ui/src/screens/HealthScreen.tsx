// Lakehouse health of a workspace: its tables by the maintenance scanner's score (worst first), the recommendations
// for them by status, and, for administrators (the `catalogs` permission), the scanner's policy and a scan on demand.
import { useState, type FormEvent } from 'react';
import { call } from '../api/client.ts';
import type { MaintenancePolicy, MaintenancePolicyBody, RecommendationStatus, ScanReport } from '../api/types.ts';
import { hasPermission, useSession } from '../app/session.tsx';
import { useAsync } from '../app/useAsync.ts';
import { usePaged } from '../app/usePaged.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatCount, formatDuration, formatTime } from '../components/format.ts';
import { GradeBadge, RecommendationList, num, tablePage } from './Recommendations.tsx';
import { Time } from '../components/Time.tsx';
import { EmptyState } from '../components/EmptyState.tsx';

const STATUSES: RecommendationStatus[] = ['open', 'dismissed', 'applied', 'resolved'];
const CADENCES: Array<MaintenancePolicy['cadence']> = ['off', 'hourly', 'daily'];
const PROFILES: Array<MaintenancePolicy['profile']> = ['conservative', 'balanced', 'aggressive'];

export function HealthScreen(props: { ws: string }) {
  const { user } = useSession();
  const admin = hasPermission(user, 'catalogs');
  const health = useAsync((signal) => call('GET /api/workspaces/{workspace}/maintenance/health', { path: { workspace: props.ws }, signal }), [props.ws]);
  const [statuses, setStatuses] = useState<RecommendationStatus[]>(['open']);
  const recs = usePaged('GET /api/maintenance/recommendations', 50, { workspace: props.ws, status: statuses });
  const reload = () => {
    health.reload();
    recs.reload();
  };
  const toggle = (s: RecommendationStatus) => setStatuses((cur) => (cur.includes(s) ? cur.filter((x) => x !== s) : [...cur, s]));

  return (
    <section className="health">
      <h1>Lakehouse health</h1>
      <p className="hint">
        The maintenance scanner reads each table’s Iceberg metadata (never its rows) and scores small files, snapshots, manifests, orphan files and growth:
        100 is healthy.
      </p>
      {admin ? <Scanner onScanned={reload} /> : null}

      <h2>Tables</h2>
      {health.error ? <ErrorNotice error={health.error} what="Table health" /> : null}
      {health.data ? (
        health.data.length ? (
          <table className="table" aria-label="Tables by health">
            <thead>
              <tr>
                <th>Grade</th>
                <th>Score</th>
                <th>Table</th>
                <th>Open recommendations</th>
                <th>Scanned</th>
              </tr>
            </thead>
            <tbody>
              {health.data.map((h) => (
                <tr key={`${h.catalog}.${h.schema}.${h.table}`} data-grade={h.grade}>
                  <td>
                    <GradeBadge grade={h.grade} />
                  </td>
                  <td>{Math.round(num(h.score))}</td>
                  <td>
                    <Link href={tablePage(props.ws, h.catalog, h.schema, h.table)}>
                      {h.catalog}.{h.schema}.{h.table}
                    </Link>
                  </td>
                  <td>{formatCount(num(h.open))}</td>
                  <td>
                    <Time iso={h.scanned_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <EmptyState>No table of this workspace has been scanned yet{admin ? ': Scan now reads them all.' : '.'}</EmptyState>
        )
      ) : health.loading ? (
        <Loading />
      ) : null}

      <h2>Recommendations</h2>
      <fieldset className="filters" aria-label="Recommendation status">
        <legend>Status</legend>
        {STATUSES.map((s) => (
          <label key={s} className="check">
            <input type="checkbox" checked={statuses.includes(s)} onChange={() => toggle(s)} /> {s}
          </label>
        ))}
      </fieldset>
      {recs.error ? <ErrorNotice error={recs.error} what="Recommendations" /> : null}
      {/* Mounted throughout, reloads included: it holds the applies under way. */}
      <RecommendationList
        ws={props.ws}
        items={recs.items}
        onChanged={reload}
        showTable
        empty={recs.loading || recs.error ? '' : statuses.length ? `No ${statuses.join(' or ')} recommendation.` : 'No recommendation.'}
      />
      {recs.loading ? <Loading /> : null}
      {recs.hasMore && !recs.loading ? (
        <button type="button" className="secondary" onClick={recs.more}>
          Load more
        </button>
      ) : null}
    </section>
  );
}

/** The scanner's runtime policy (cadence and profile, see docs/maintenance.md) and a scan on demand with its report. */
function Scanner(props: { onScanned: () => void }) {
  const policy = useAsync((signal) => call('GET /api/admin/maintenance/policy', { signal }), []);
  // Edits to the policy before Save; null follows the server's.
  const [draft, setDraft] = useState<Required<MaintenancePolicyBody> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [scanning, setScanning] = useState<'scan' | 'deep' | null>(null);
  const [saving, setSaving] = useState(false);
  const [report, setReport] = useState<ScanReport | null>(null);
  const current = draft ?? policy.data ?? null;
  const changed = draft !== null && policy.data !== undefined && (draft.cadence !== policy.data.cadence || draft.profile !== policy.data.profile);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft) return;
    setSaving(true);
    setError(null);
    try {
      await call('PUT /api/admin/maintenance/policy', { body: draft });
      setDraft(null);
      policy.reload();
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };
  const scan = async (deep: boolean) => {
    setScanning(deep ? 'deep' : 'scan');
    setError(null);
    try {
      setReport(await call('POST /api/admin/maintenance/scan', { body: { deep } }));
      policy.reload();
      props.onScanned();
    } catch (err) {
      setError(err);
    } finally {
      setScanning(null);
    }
  };

  return (
    <section className="card" aria-label="Scanner">
      <h2>Scanner</h2>
      {policy.error ? <ErrorNotice error={policy.error} what="Maintenance policy" /> : null}
      {current ? (
        <form className="row wrap" aria-label="Maintenance policy" onSubmit={save}>
          <label className="inline">
            Cadence
            <select aria-label="Cadence" value={current.cadence} onChange={(e) => setDraft({ ...current, cadence: e.target.value as MaintenancePolicy['cadence'] })}>
              {CADENCES.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </label>
          <label className="inline">
            Profile
            <select aria-label="Profile" value={current.profile} onChange={(e) => setDraft({ ...current, profile: e.target.value as MaintenancePolicy['profile'] })}>
              {PROFILES.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!changed || saving}>
            Save policy
          </button>
        </form>
      ) : policy.loading ? (
        <Loading />
      ) : null}
      {policy.data ? (
        <p className="hint">
          Last scan {formatTime(policy.data.last_scan_at)} · last deep scan {formatTime(policy.data.last_deep_scan_at)} · policy changed{' '}
          {formatTime(policy.data.updated_at)}
        </p>
      ) : null}
      <div className="row">
        <button type="button" disabled={scanning !== null} onClick={() => void scan(false)}>
          Scan now
        </button>
        <button type="button" className="secondary" disabled={scanning !== null} onClick={() => void scan(true)} title="Also lists storage to find orphan files">
          Deep scan
        </button>
      </div>
      {scanning ? <Loading label={scanning === 'deep' ? 'Deep scan: reading metadata and listing storage…' : 'Scanning…'} /> : null}
      {error ? <ErrorNotice error={error} what="Scanner" /> : null}
      {report ? <Report report={report} /> : null}
    </section>
  );
}

const counted = (n: number | string, noun: string) => `${formatCount(num(n))} ${noun}${num(n) === 1 ? '' : 's'}`;

function Report(props: { report: ScanReport }) {
  const r = props.report;
  return (
    <div className="notice" role="status" aria-label="Scan report">
      {r.deep ? 'Deep scan' : 'Scan'} of {counted(r.tables, 'table')} in {counted(r.catalogs, 'catalog')} ({r.profile} profile) took {formatDuration(num(r.duration_ms))}:{' '}
      {counted(r.recommendations_opened, 'recommendation')} opened, {formatCount(num(r.recommendations_resolved))} resolved.
      {r.errors.length ? (
        <ul aria-label="Scan errors">
          {r.errors.map((e, i) => (
            <li key={i} className="notice-error">
              {[e.catalog, e.schema, e.table].filter(Boolean).join('.')}: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
