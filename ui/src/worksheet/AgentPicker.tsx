// Chooses the agent that runs the worksheet's queries, showing each agent's health.
import { useEffect } from 'react';
import { api } from '../api/client.ts';
import type { Agent } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';

export function AgentPicker(props: { value: string | null; onChange: (id: string | null) => void }) {
  const agents = useAsync((signal) => api.get<Agent[]>('/api/agents', { signal }), []);
  if (agents.error) return <ErrorNotice error={agents.error} what="Agents" />;
  const list = agents.data ?? [];
  const healthy = (a: Agent) => a.status === 'healthy';
  // A worksheet with no agent yet runs on the first healthy one, so a first query needs no extra step.
  const firstHealthy = list.find(healthy)?.id ?? null;
  useEffect(() => {
    if (!props.value && firstHealthy) props.onChange(firstHealthy);
  }, [props.value, firstHealthy]);
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
