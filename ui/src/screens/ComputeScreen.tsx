// Elastic compute: the agents provisioned on demand, with their state, size, hourly cost and why they ended.
// Agent managers start new ones here; whoever operates an agent stops it or starts it again.
import { useEffect, useState, type FormEvent } from 'react';
import { call, enc } from '../api/client.ts';
import type { Agent, ComputeOption, ElasticInfo } from '../api/types.ts';
import { hasPermission, useSession } from '../app/session.tsx';
import { useAsync } from '../app/useAsync.ts';
import { currencyOf, useComputeOptions } from '../app/useComputeOptions.ts';
import { elasticChanging, elasticPillClass, elasticReason, elasticStoppable, elasticStopped } from '../components/ElasticBadge.tsx';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Link } from '../components/Link.tsx';
import { formatHourlyCost } from '../components/format.ts';
import { Time } from '../components/Time.tsx';
import { TableHead } from '../components/TableHead.tsx';

/** How often the list is re-read while an agent is provisioning or terminating. */
export const COMPUTE_POLL_MS = 3000;

type ElasticAgent = Agent & { elastic: ElasticInfo };

const operates = (a: Agent) => a.access_tier === 'operate' || a.access_tier === 'admin';

export function ComputeScreen() {
  const { user } = useSession();
  const manager = hasPermission(user, 'agents:manage');
  const agents = useAsync((signal) => call('GET /api/agents', { signal }), []);
  const options = useComputeOptions();
  const [error, setError] = useState<unknown>(null);
  // What the last action did: its agent's state is read from the list as it reloads, so "provisioning" becomes
  // "running" once the agent dials home instead of staying as it was when the action answered.
  const [done, setDone] = useState<{ verb: string; id: string; name: string; state: string } | null>(null);
  const doneState = done ? ((agents.data ?? []).find((a) => a.id === done.id)?.elastic?.state ?? done.state) : null;

  const elastic = (agents.data ?? []).filter((a): a is ElasticAgent => a.elastic !== null);
  const changing = elastic.some((a) => elasticChanging(a.elastic));
  // Provisioning and terminating end on their own, server-side: re-read until they settle. The interval is cleared
  // when they have, and when the screen unmounts.
  const { reload } = agents;
  useEffect(() => {
    if (!changing) return;
    const t = setInterval(reload, COMPUTE_POLL_MS);
    return () => clearInterval(t);
  }, [changing, reload]);

  const act = async (label: string, fn: () => Promise<Agent>) => {
    setError(null);
    setDone(null);
    try {
      const a = await fn();
      setDone({ verb: label, id: a.id, name: a.name, state: a.elastic?.state ?? a.status });
    } catch (e) {
      setError(e);
    }
    reload();
  };
  const stop = (a: Agent) => {
    if (!confirm(`Stop ${a.name}? Its running work fails and its instance is removed.`)) return;
    void act('Stop', () => call('POST /api/admin/agents/{agent_id}/terminate', { path: { agent_id: a.id } }));
  };
  const restart = (a: Agent) => void act('Start again', () => call('POST /api/admin/agents/{agent_id}/restart', { path: { agent_id: a.id } }));

  const off = options.data !== undefined && options.data !== null && options.data.length === 0;
  return (
    <section>
      <h1>Compute</h1>
      <p className="hint">
        Elastic agents are started on demand and stopped when idle or at their maximum lifetime. A query that names no agent runs on its workspace's pool;
        naming a stopped elastic agent starts it again.
      </p>
      {options.error ? <ErrorNotice error={options.error} what="Compute options" /> : null}
      {off ? (
        <div className="notice notice-pending" role="status">
          Elastic compute is off (ELASTIC_COMPUTE_ENABLED): no agent can be started here, and every query must name a connected agent.
        </div>
      ) : null}
      {manager && options.data?.length ? (
        <StartForm
          options={options.data}
          onStarted={(a) => {
            setError(null);
            setDone({ verb: 'Started', id: a.id, name: a.name, state: a.elastic?.state ?? a.status });
            reload();
          }}
        />
      ) : null}
      {done ? (
        <p role="status">
          {done.verb === 'Started' ? `Started ${done.name}: ${doneState}.` : `${done.verb}: ${done.name} is ${doneState}.`}
        </p>
      ) : null}
      {error ? <ErrorNotice error={error} /> : null}
      {agents.error ? <ErrorNotice error={agents.error} what="Agents" /> : null}
      {agents.loading && !agents.data ? <Loading /> : null}
      {agents.data ? (
        elastic.length ? (
          <table className="table" aria-label="Elastic agents">
            <TableHead columns={['Name', 'State', 'Size', 'Hourly cost', 'Reason', 'Provisioned', 'Terminated']} actions />
            <tbody>
              {elastic.map((a) => (
                <tr key={a.id} data-state={a.elastic.state}>
                  <td>
                    <Link href={`/agents/${enc(a.id)}`}>{a.name}</Link>
                  </td>
                  <td>
                    <span className={`pill ${elasticPillClass(a.elastic.state)}`}>{a.elastic.state}</span>
                  </td>
                  <td>{a.elastic.size}</td>
                  <td>{formatHourlyCost(a.elastic.hourly_cost, currencyOf(options.data, a.elastic.size))}</td>
                  <td>{elasticReason(a.elastic.reason)}</td>
                  <td>
                    <Time iso={a.elastic.provisioned_at} />
                  </td>
                  <td>
                    <Time iso={a.elastic.terminated_at} />
                  </td>
                  <td>
                    {operates(a) ? (
                      <span className="row">
                        {/* Stop while it is starting or running, start again once it has ended; while terminating, neither. */}
                        <button type="button" className="danger" disabled={!elasticStoppable(a.elastic)} onClick={() => stop(a)}>
                          Stop
                        </button>
                        <button type="button" className="secondary" disabled={!elasticStopped(a.elastic)} onClick={() => restart(a)}>
                          Start again
                        </button>
                      </span>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>{off ? 'No elastic agents.' : 'No elastic agents are visible to you.'}</p>
        )
      ) : null}
    </section>
  );
}

function optionLabel(o: ComputeOption): string {
  return `${o.size} — ${String(o.cpu)} CPU · ${String(o.memory_gb)} GB · ${formatHourlyCost(o.hourly_cost, o.currency)}`;
}

function StartForm(props: { options: ComputeOption[]; onStarted: (a: Agent) => void }) {
  // The server's default size is medium; offer it first when it exists.
  const fallback = props.options.find((o) => o.size === 'medium')?.size ?? props.options[0].size;
  const [size, setSize] = useState('');
  const [name, setName] = useState('');
  const [accessMode, setAccessMode] = useState<'open' | 'restricted'>('open');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const a = await call('POST /api/admin/agents/elastic', { body: { size: size || fallback, ...(name.trim() ? { name: name.trim() } : {}), access_mode: accessMode } });
      setName('');
      props.onStarted(a);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="card">
      <h2>Start an elastic agent</h2>
      <p className="hint">It serves the work that names it; pool work starts its own agents.</p>
      <form className="row wrap" onSubmit={submit} aria-label="Start an elastic agent">
        <label className="inline">
          Size
          <select value={size || fallback} onChange={(e) => setSize(e.target.value)}>
            {props.options.map((o) => (
              <option key={o.size} value={o.size}>
                {optionLabel(o)}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          Name (optional)
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
        </label>
        <label className="inline">
          Access mode
          <select value={accessMode} onChange={(e) => setAccessMode(e.target.value as 'open' | 'restricted')}>
            <option value="open">open (every member may use it)</option>
            <option value="restricted">restricted (grants only)</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Start
        </button>
      </form>
      {error ? <ErrorNotice error={error} what="Start" /> : null}
    </div>
  );
}
