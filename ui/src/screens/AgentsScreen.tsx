// Agents the caller can see: status, capabilities and the caller's tier; managers create single-use bootstrap
// tokens for new agents here (the token is shown once).
import { useState, type FormEvent } from 'react';
import { call, type ResponseOf } from '../api/client.ts';
import type { Agent } from '../api/types.ts';
import { hasPermission, useSession } from '../app/session.tsx';
import { useAsync } from '../app/useAsync.ts';
import { ElasticBadge } from '../components/ElasticBadge.tsx';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { SecretOnce } from '../components/SecretOnce.tsx';
import { formatBytes, formatTime } from '../components/format.ts';
import { Time } from '../components/Time.tsx';
import { EmptyState } from '../components/EmptyState.tsx';

export function capabilitySummary(c: Agent['capabilities']): string {
  if (!c) return '—';
  const parts: string[] = [];
  if (c.engine_version) parts.push(`DuckDB ${c.engine_version}`);
  if (typeof c.memory_limit_bytes === 'number') parts.push(`${formatBytes(c.memory_limit_bytes)} memory`);
  if (Array.isArray(c.extensions) && c.extensions.length) parts.push(`extensions: ${c.extensions.join(', ')}`);
  return parts.join(' · ') || '—';
}

export function AgentsScreen() {
  const { user } = useSession();
  const agents = useAsync((signal) => call('GET /api/agents', { signal }), []);
  const manager = hasPermission(user, 'agents:manage');
  return (
    <section>
      <h1>Agents</h1>
      <p className="hint">
        Agents started on demand are listed with an elastic badge; <Link href="/compute">Compute</Link> starts and stops them.
      </p>
      {manager ? <BootstrapToken /> : null}
      {agents.error ? <ErrorNotice error={agents.error} what="Agents" /> : null}
      {agents.loading && !agents.data ? <Loading /> : null}
      {agents.data ? (
        agents.data.length ? (
          <table className="table" aria-label="Agents">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Your tier</th>
                <th>Access</th>
                <th>Capabilities</th>
                <th>Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {agents.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link href={`/agents/${encodeURIComponent(a.id)}`}>{a.name}</Link>
                  </td>
                  <td>
                    <span className={`pill ${a.status === 'healthy' ? 'done' : 'failed'}`}>{a.status}</span>
                    <ElasticBadge elastic={a.elastic} />
                  </td>
                  <td>{a.access_tier ?? '—'}</td>
                  <td>{a.access_mode ?? '—'}</td>
                  <td>{capabilitySummary(a.capabilities)}</td>
                  <td>
                    <Time iso={a.last_heartbeat_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <EmptyState>No agents are visible to you.</EmptyState>
        )
      ) : null}
    </section>
  );
}

function BootstrapToken() {
  const [name, setName] = useState('');
  const [hours, setHours] = useState(24);
  const [issued, setIssued] = useState<ResponseOf<'POST /api/admin/agents/bootstrap'> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      setIssued(await call('POST /api/admin/agents/bootstrap', { body: { ...(name ? { name } : {}), expires_in_hours: hours } }));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div className="card">
      <h2>Connect a new agent</h2>
      <p className="hint">A bootstrap token lets one agent register (single use). Start the agent with CONTROL_PLANE_URL and BOOTSTRAP_TOKEN.</p>
      <form className="row" onSubmit={submit} aria-label="Create a bootstrap token">
        <label className="inline">
          Name (optional)
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="inline">
          Expires in (hours)
          <input type="number" min={1} max={720} value={hours} onChange={(e) => setHours(Number(e.target.value))} />
        </label>
        <button type="submit">Create bootstrap token</button>
      </form>
      {issued ? (
        <SecretOnce label={`Bootstrap token (expires ${formatTime(issued.expires_at)})`} secret={issued.token} onDismiss={() => setIssued(null)} />
      ) : null}
      {error ? <ErrorNotice error={error} what="Bootstrap token" /> : null}
    </div>
  );
}
