// Chooses the agent that runs the worksheet's queries, showing each agent's health; with elastic compute on, also
// "the pool": the query names no agent and the server runs it on (or starts) the workspace's pool compute.
import { useEffect } from 'react';
import { call } from '../api/client.ts';
import type { Agent } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { useComputeOptions } from '../app/useComputeOptions.ts';
import { elasticStopped } from '../components/ElasticBadge.tsx';
import { ErrorNotice } from '../components/ErrorNotice.tsx';

/**
 * The picker's value for the pool. Kept in the worksheet's agentId (agent ids are UUIDs, so it cannot collide) so a
 * worksheet remembers the choice; agentIdOf turns it back into "no agent" for the api.
 */
export const POOL = 'pool';

/** The agent_id a request sends for a picker value: none for the pool (and for no choice). */
export const agentIdOf = (value: string | null): string | null => (value === POOL ? null : value);

const healthy = (a: Agent) => a.status === 'healthy';

function optionLabel(a: Agent): string {
  let label = `${healthy(a) ? '● ' : '○ '}${a.name} — ${a.status}`;
  // A stopped elastic agent stays selectable: naming it starts it again.
  if (a.elastic) label += elasticStopped(a.elastic) ? ` · elastic ${a.elastic.state}, starts on use` : ` · elastic ${a.elastic.state}`;
  if (a.access_tier) label += ` (${a.access_tier})`;
  return label;
}

export function AgentPicker(props: { value: string | null; onChange: (id: string | null) => void; allowPool?: boolean }) {
  const agents = useAsync((signal) => call('GET /api/agents', { signal }), []);
  const options = useComputeOptions(Boolean(props.allowPool));
  const list = agents.data ?? [];
  // Elastic compute is on when it offers sizes; those who may not read the sizes (403) learn it from an elastic agent
  // they can see. A remembered pool choice stays listed either way (the server then says if it is off).
  const poolOn = Boolean(props.allowPool) && (Boolean(options.data?.length) || list.some((a) => a.elastic !== null));
  // A worksheet with no agent yet runs on the first healthy one, so a first query needs no extra step; with none
  // healthy, on the pool when there is one. Decided once the agents and the compute options have both answered.
  const settled = agents.data !== undefined && !options.loading;
  const initial = list.find(healthy)?.id ?? (poolOn ? POOL : null);
  const { value, onChange } = props;
  // Hooks run on every render, before any early return (Rules of Hooks): an error render must not skip this one.
  useEffect(() => {
    if (!value && settled && initial) onChange(initial);
  }, [value, settled, initial, onChange]);
  // A worksheet may name its agent by name (`?agent=<name>` in the address, or a value kept from elsewhere): once the
  // agents are known, the name becomes that agent's id; a name no agent has is said, not silently replaced.
  const byName = value && value !== POOL && agents.data && !list.some((a) => a.id === value) ? list.find((a) => a.name === value) : undefined;
  const unknownName = value && value !== POOL && agents.data && !list.some((a) => a.id === value || a.name === value) ? value : null;
  useEffect(() => {
    if (byName) onChange(byName.id);
  }, [byName, onChange]);
  if (agents.error) return <ErrorNotice error={agents.error} what="Agents" />;
  return (
    <label className="inline">
      Agent
      <select
        className="agent-picker"
        aria-label="Agent"
        // (the whole of the chosen agent's label, when a narrow toolbar cuts it short)
        title={(() => {
          const chosen = list.find((a) => a.id === props.value);
          return chosen ? optionLabel(chosen) : undefined;
        })()}
        value={props.value ?? ''}
        onChange={(e) => props.onChange(e.target.value || null)}
        onFocus={() => agents.reload()}
      >
        <option value="">{agents.loading && !agents.data ? 'Loading agents…' : list.length || poolOn ? 'Choose an agent' : 'No agents visible'}</option>
        {poolOn || (props.allowPool && props.value === POOL) ? <option value={POOL}>Pool (elastic compute)</option> : null}
        {list
          .filter((a) => !(a.elastic && elasticStopped(a.elastic)))
          .map((a) => (
            <option key={a.id} value={a.id} title={optionLabel(a)}>
              {optionLabel(a)}
            </option>
          ))}
        {/* Stopped elastic agents stay selectable (naming one starts it again), apart and briefly. */}
        {list.some((a) => a.elastic && elasticStopped(a.elastic)) ? (
          <optgroup label="Stopped elastic agents (start on use)">
            {list
              .filter((a) => a.elastic && elasticStopped(a.elastic))
              .map((a) => (
                <option key={a.id} value={a.id} title={optionLabel(a)}>
                  {a.name}
                </option>
              ))}
          </optgroup>
        ) : null}
      </select>
      {unknownName ? (
        <span className="hint" role="status">
          no agent named “{unknownName}”
        </span>
      ) : null}
    </label>
  );
}
