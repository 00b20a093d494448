// How an elastic agent's lifecycle reads wherever agents are listed: a badge with its state, and its end reason in words.
import type { ElasticInfo } from '../api/types.ts';

const reasons: Record<string, string> = {
  idle: 'idle: no work within the idle timeout',
  lifetime: 'reached its maximum lifetime',
  operator: 'stopped by an operator',
  agent_lost: 'the agent was lost',
  provisioning_failed: 'provisioning failed (it never dialed home in time)',
};

/** The reaper's and provider's reasons in words; anything else is an error text, shown as written. */
export function elasticReason(reason: string | null | undefined): string {
  if (!reason) return '—';
  return reasons[reason] ?? reason;
}

/** Not running but startable: naming it (a query, a session) or restarting it starts a new instance. */
export const elasticStopped = (e: ElasticInfo | null | undefined) => e?.state === 'terminated' || e?.state === 'failed';

/** Starting or running: it can be stopped (terminating already is; terminated and failed have ended). */
export const elasticStoppable = (e: ElasticInfo | null | undefined) => e?.state === 'provisioning' || e?.state === 'running';

/** Between states: the list is polled while any agent is here. */
export const elasticChanging = (e: ElasticInfo | null | undefined) => e?.state === 'provisioning' || e?.state === 'terminating';

/** The pill colour of a state, reusing the query status colours (running green like done, transitions in accent). */
export function elasticPillClass(state: ElasticInfo['state']): string {
  switch (state) {
    case 'running':
      return 'done';
    case 'failed':
      return 'failed';
    case 'terminated':
      return 'cancelled';
    default:
      return 'running';
  }
}

export function ElasticBadge(props: { elastic: ElasticInfo | null | undefined }) {
  const e = props.elastic;
  if (!e) return null;
  return (
    <span className="badge" title={e.reason ? `elastic ${e.state}: ${elasticReason(e.reason)}` : `elastic agent (${e.size}), ${e.state}`}>
      elastic · {e.state}
    </span>
  );
}
