// Chooses the agent that runs the worksheet's queries, showing each agent's health.
import { useEffect } from 'react';
import { api } from '../api/client.ts';
import type { Agent } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';

const healthy = (a: Agent) => a.status === 'healthy';

export function AgentPicker(props: { value: string | null; onChange: (id: string | null) => void }) {
  const agents = useAsync((signal) => api.get<Agent[]>('/api/agents', { signal }), []);
  const list = agents.data ?? [];
  // A worksheet with no agent yet runs on the first healthy one, so a first query needs no extra step.
  const firstHealthy = list.find(healthy)?.id ?? null;
  const { value, onChange } = props;
  // Hooks run on every render, before any early return (Rules of Hooks): an error render must not skip this one.
  useEffect(() => {
    if (!value && firstHealthy) onChange(firstHealthy);
  }, [value, firstHealthy, onChange]);
  if (agents.error) return <ErrorNotice error={agents.error} what="Agents" />;
  return (
    <label className="inline">
      Agent
      <select
        aria-label="Agent"
        value={props.value ?? ''}
        onChange={(e) => props.onChange(e.target.value || null)}
        onFocus={() => agents.reload()}
      >
        <option value="">{agents.loading && !agents.data ? 'Loading agents…' : list.length ? 'Choose an agent' : 'No agents visible'}</option>
        {list.map((a) => (
          <option key={a.id} value={a.id}>
            {healthy(a) ? '● ' : '○ '}
            {a.name} — {a.status}
            {a.access_tier ? ` (${a.access_tier})` : ''}
          </option>
        ))}
      </select>
    </label>
  );
}
