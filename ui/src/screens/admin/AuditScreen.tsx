// The audit trail (admins): newest first, a page of 50 at a time, filtered by action and outcome on the server (so
// "failure" pages through every refusal, not the failures among the rows read so far).
import { useState } from 'react';
import { queryLiterals, type ListAuditEventsResponse } from '../../api/generated.ts';
import { usePaged } from '../../app/usePaged.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { TableHead } from '../../components/TableHead.tsx';
import { Time } from '../../components/Time.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';
import { Icon } from '../../components/Icon.tsx';

type AuditEvent = ListAuditEventsResponse['items'][number];
type Outcome = AuditEvent['outcome'];

// The actions the api's filter accepts (domain/audit.ts AUDIT_ACTIONS, through the generated types).
const ACTIONS = queryLiterals['GET /api/admin/audit'].action;
type Action = (typeof ACTIONS)[number];

const actorText = (a: AuditEvent['actor']) =>
  a.kind === 'user' ? (a.email ?? a.id ?? 'a user') : a.kind === 'anonymous' ? `anonymous${a.email ? ` (${a.email})` : ''}` : `${a.kind.replace('_', ' ')} ${a.email ?? a.id ?? ''}`.trim();

export function AuditScreen() {
  const [action, setAction] = useState<'' | Action>('');
  const [outcome, setOutcome] = useState<'' | Outcome>('');
  const events = usePaged('GET /api/admin/audit', 50, { ...(action ? { action } : {}), ...(outcome ? { outcome } : {}) });
  const shown = events.items;
  return (
    <section>
      <h1>Audit trail</h1>
      <form className="filters" aria-label="Audit filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Action{' '}
          <select value={action} onChange={(e) => setAction(e.target.value as '' | Action)}>
            <option value="">any action</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Outcome{' '}
          <select value={outcome} onChange={(e) => setOutcome(e.target.value as typeof outcome)}>
            <option value="">any outcome</option>
            <option value="success">success</option>
            <option value="failure">failure</option>
          </select>
        </label>
        <button type="button" className="secondary" onClick={events.reload}>
          <Icon name="refresh" />
          Refresh
        </button>
      </form>
      {events.error ? <ErrorNotice error={events.error} what="Audit trail" /> : null}
      <table className="table" aria-label="Audit events">
        <TableHead columns={['Time', 'Actor', 'Action', 'Outcome', 'Target', 'Details']} />
        <tbody>
          {shown.map((e) => (
            <tr key={e.id} data-outcome={e.outcome}>
              <td>
                <Time iso={e.at} />
              </td>
              <td>{actorText(e.actor)}</td>
              <td className="mono">{e.action}</td>
              <td>
                {e.outcome === 'failure' ? <strong>failure</strong> : e.outcome}
              </td>
              <td className="mono">{e.target ? `${e.target.kind}${e.target.id ? ` ${e.target.id}` : ''}` : '—'}</td>
              <td className="audit-details">
                {Object.entries(e.details)
                  .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
                  .join(' · ') || '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!events.loading && !shown.length ? (
        <EmptyState>No audit events match.</EmptyState>
      ) : null}
      {events.loading ? <Loading /> : null}
      {events.hasMore && !events.loading ? (
        <button type="button" className="secondary" onClick={events.more}>
          Load more
        </button>
      ) : null}
    </section>
  );
}
