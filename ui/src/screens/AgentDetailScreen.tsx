// One agent: its details and live connection state chart; for its admins, disconnect, credential revocation,
// access mode and grants.
import { useState, type FormEvent } from 'react';
import { type BodyOf, call } from '../api/client.ts';
import { useAction } from '../app/useAction.ts';
import { useAsync } from '../app/useAsync.ts';
import { currencyOf, useComputeOptions } from '../app/useComputeOptions.ts';
import { StateChart, StateDiagram } from '../charts/StateChart.tsx';
import { ElasticBadge, elasticReason, elasticStoppable, elasticStopped } from '../components/ElasticBadge.tsx';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatHourlyCost, formatTime } from '../components/format.ts';
import { capabilitySummary } from './AgentsScreen.tsx';
import { Time } from '../components/Time.tsx';
import { TableHead } from '../components/TableHead.tsx';

const tierRank: Record<string, number> = { use: 1, operate: 2, admin: 3 };

export function AgentDetailScreen(props: { id: string }) {
  const agent = useAsync((signal) => call('GET /api/admin/agents/{agent_id}', { path: { agent_id: props.id }, signal }), [props.id]);
  // for the currency of an elastic agent's price (readable by agent managers only)
  const options = useComputeOptions();
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const tier = tierRank[agent.data?.access_tier ?? ''] ?? 0;

  const act = async (label: string, fn: () => Promise<unknown>) => {
    if (!confirm(`${label}?`)) return;
    setError(null);
    setDone(null);
    try {
      await fn();
      setDone(`${label}: done.`);
      agent.reload();
    } catch (e) {
      setError(e);
    }
  };

  if (agent.error) return <ErrorNotice error={agent.error} what="Agent" />;
  if (!agent.data) return <Loading />;
  const a = agent.data;
  return (
    <section className="stack">
      <h1>Agent {a.name}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          {a.status}
          <ElasticBadge elastic={a.elastic} />
        </dd>
        {a.elastic ? (
          <>
            <dt>Elastic</dt>
            <dd>
              {a.elastic.size} on {a.elastic.provider} · {formatHourlyCost(a.elastic.hourly_cost, currencyOf(options.data, a.elastic.size))} · provisioned {formatTime(a.elastic.provisioned_at)}
              {a.elastic.terminated_at ? ` · terminated ${formatTime(a.elastic.terminated_at)}` : ''} (<Link href="/compute">Compute</Link>)
            </dd>
            <dt>Reason</dt>
            <dd>{elasticReason(a.elastic.reason)}</dd>
          </>
        ) : null}
        <dt>Your tier</dt>
        <dd>{a.access_tier ?? '—'}</dd>
        <dt>Access mode</dt>
        <dd>{a.access_mode ?? '—'}</dd>
        <dt>Version</dt>
        <dd>{a.version ?? '—'}</dd>
        <dt>Capabilities</dt>
        <dd>{capabilitySummary(a.capabilities)}</dd>
        <dt>Connected</dt>
        <dd>
          <Time iso={a.connected_at} />
        </dd>
        <dt>Last heartbeat</dt>
        <dd>
          <Time iso={a.last_heartbeat_at} />
        </dd>
        <dt>Replica</dt>
        <dd>{a.owner_url ?? '—'}</dd>
      </dl>
      {tier >= 2 ? (
        <div className="row">
          <button type="button" className="secondary" onClick={() => void act('Disconnect this agent', () => call('POST /api/admin/agents/{agent_id}/disconnect', { path: { agent_id: a.id } }))}>
            Disconnect
          </button>
          <button type="button" className="danger" onClick={() => void act('Revoke this agent’s credentials', () => call('DELETE /api/admin/agents/{agent_id}/credential', { path: { agent_id: a.id } }))}>
            Revoke credentials
          </button>
          {a.elastic ? (
            <>
              <button
                type="button"
                className="danger"
                disabled={!elasticStoppable(a.elastic)}
                onClick={() => void act('Stop this elastic agent (its running work fails)', () => call('POST /api/admin/agents/{agent_id}/terminate', { path: { agent_id: a.id } }))}
              >
                Stop
              </button>
              <button
                type="button"
                className="secondary"
                disabled={!elasticStopped(a.elastic)}
                onClick={() => void act('Start this elastic agent again', () => call('POST /api/admin/agents/{agent_id}/restart', { path: { agent_id: a.id } }))}
              >
                Start again
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      {done ? <p role="status">{done}</p> : null}
      {error ? <ErrorNotice error={error} /> : null}
      {tier >= 3 ? <AccessPanel agentId={a.id} /> : null}
      <h2>Connection state</h2>
      {a.connection_id ? (
        <StateChart kind="agentConnection" id={a.connection_id} />
      ) : (
        <>
          <p className="hint">The server does not name this agent's connection actor yet, so the chart below shows the machine without its current state.</p>
          <StateDiagram kind="agentConnection" />
        </>
      )}
    </section>
  );
}

function AccessPanel(props: { agentId: string }) {
  const path = { agent_id: props.agentId };
  const access = useAsync((signal) => call('GET /api/admin/agents/{agent_id}/access', { path, signal }), [props.agentId]);
  const [principal, setPrincipal] = useState<'user_id' | 'workspace_id'>('user_id');
  const [target, setTarget] = useState('');
  const [tier, setTier] = useState<BodyOf<'PUT /api/admin/agents/{agent_id}/grants'>['tier']>('use');
  const { error, run } = useAction(access.reload);
  const grant = (e: FormEvent) => {
    e.preventDefault();
    void run(() => call('PUT /api/admin/agents/{agent_id}/grants', { path, body: { [principal]: target.trim(), tier } }));
  };

  return (
    <div className="card stack">
      <h2>Access</h2>
      {access.error ? <ErrorNotice error={access.error} what="Access" /> : null}
      {access.data ? (
        <>
          <label className="inline">
            Access mode
            <select
              value={access.data.access_mode}
              onChange={(e) => void run(() => call('PATCH /api/admin/agents/{agent_id}/access-mode', { path, body: { access_mode: e.target.value as BodyOf<'PATCH /api/admin/agents/{agent_id}/access-mode'>['access_mode'] } }))}
            >
              <option value="open">open (every member may use it)</option>
              <option value="restricted">restricted (grants only)</option>
            </select>
          </label>
          <table className="table" aria-label="Grants">
            <TableHead columns={['Principal', 'Tier']} actions />
            <tbody>
              {access.data.grants.length === 0 ? (
                <tr>
                  <td colSpan={3}>No grants{access.data.access_mode === 'open' ? ': every workspace member may use this agent.' : '.'}</td>
                </tr>
              ) : null}
              {access.data.grants.map((g) => (
                <tr key={g.id}>
                  <td>{g.user_id ? `user ${g.principal_name}` : `workspace ${g.principal_name}`}</td>
                  <td>{g.tier}</td>
                  <td>
                    <button type="button" className="danger" onClick={() => void run(() => call('DELETE /api/admin/agents/{agent_id}/grants/{grant_id}', { path: { ...path, grant_id: g.id } }))}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <form className="row" onSubmit={grant} aria-label="Grant access">
            <select
              aria-label="Principal kind"
              value={principal}
              onChange={(e) => {
                setPrincipal(e.target.value as 'user_id' | 'workspace_id');
                setTarget('');
                if (e.target.value === 'workspace_id' && tier === 'admin') setTier('operate');
              }}
            >
              <option value="user_id">User</option>
              <option value="workspace_id">Workspace</option>
            </select>
            {principal === 'user_id' && access.data.candidates?.users ? (
              <select aria-label="User" required value={target} onChange={(e) => setTarget(e.target.value)}>
                <option value="">Choose a user…</option>
                {access.data.candidates.users.map((u) => (
                  <option key={u.id} value={u.id}>
                    {u.name}
                    {u.email ? ` <${u.email}>` : ''}
                    {u.kind && u.kind !== 'user' ? ` (${u.kind})` : ''}
                  </option>
                ))}
              </select>
            ) : principal === 'workspace_id' && access.data.candidates?.workspaces ? (
              <select aria-label="Workspace" required value={target} onChange={(e) => setTarget(e.target.value)}>
                <option value="">Choose a workspace…</option>
                {access.data.candidates.workspaces.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name} ({w.slug})
                  </option>
                ))}
              </select>
            ) : (
              <input aria-label="Principal id" required value={target} onChange={(e) => setTarget(e.target.value)} />
            )}
            <select aria-label="Tier" value={tier} onChange={(e) => setTier(e.target.value as typeof tier)}>
              <option value="use">use</option>
              <option value="operate">operate</option>
              {principal === 'user_id' ? <option value="admin">admin</option> : null}
            </select>
            <button type="submit">Grant</button>
          </form>
        </>
      ) : null}
      {error ? <ErrorNotice error={error} /> : null}
    </div>
  );
}
