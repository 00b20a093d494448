// The lifecycle machines the server hosts, each with its diagram; the cluster (replicas, backlog, actors); and a way
// to open one actor's live chart.
import { useState, type FormEvent } from 'react';
import { call, enc } from '../../api/client.ts';
import { navigate } from '../../app/router.ts';
import { useAsync } from '../../app/useAsync.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { StateDiagram } from '../../charts/StateChart.tsx';
import { ClusterPanel } from './ClusterPanel.tsx';

export function MachinesScreen() {
  const machines = useAsync((signal) => call('GET /api/admin/machines', { signal }), []);
  const [kind, setKind] = useState('query');
  const [id, setId] = useState('');
  const open = (e: FormEvent) => {
    e.preventDefault();
    if (id.trim()) navigate(`/inspect/${enc(kind)}/${enc(id.trim())}`);
  };
  return (
    <section>
      <h1>State machines</h1>
      <form className="row" onSubmit={open} aria-label="Inspect an actor">
        <label className="inline">
          Kind
          <select value={kind} onChange={(e) => setKind(e.target.value)}>
            {(machines.data ?? [{ kind: 'query', description: '' }]).map((m) => (
              <option key={m.kind} value={m.kind}>
                {m.kind}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          Id
          <input value={id} onChange={(e) => setId(e.target.value)} placeholder="query, session, agent or migration id" />
        </label>
        <button type="submit">Open live chart</button>
      </form>
      <ClusterPanel kinds={(machines.data ?? []).map((m) => m.kind)} />
      {machines.error ? <ErrorNotice error={machines.error} what="Machines" /> : null}
      {machines.loading && !machines.data ? <Loading /> : null}
      {machines.data?.map((m) => (
        <article key={m.kind} className="card">
          <h2>{m.kind}</h2>
          <p>{m.description}</p>
          <StateDiagram kind={m.kind} />
        </article>
      ))}
    </section>
  );
}
