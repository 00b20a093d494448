// The cluster as operators see it: the api replicas (live, draining, what each owns), overdue deadlines and pending
// effects, and the actors filtered by kind, state, owner and liveness, each opening its live chart.
import { useState } from 'react';
import { call, enc } from '../../api/client.ts';
import type { ActorSummary } from '../../api/types.ts';
import { useAsync } from '../../app/useAsync.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { formatTime } from '../../components/format.ts';
import { Time } from '../../components/Time.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';

export function ClusterPanel(props: { kinds: string[] }) {
  const cluster = useAsync((signal) => call('GET /api/admin/cluster', { signal }), []);
  return (
    <section aria-label="Cluster">
      <h2>
        Cluster{' '}
        <button type="button" onClick={cluster.reload}>
          Refresh
        </button>
      </h2>
      {cluster.error ? <ErrorNotice error={cluster.error} what="Cluster" /> : null}
      {!cluster.data && !cluster.error ? <Loading /> : null}
      {cluster.data ? (
        <>
          <table className="data" aria-label="Replicas">
            <thead>
              <tr>
                <th>Replica</th>
                <th>State</th>
                <th>Heartbeat</th>
                <th>Started</th>
                <th>Live actors</th>
                <th>Pending effects</th>
              </tr>
            </thead>
            <tbody>
              {cluster.data.replicas.map((r) => (
                <tr key={r.id}>
                  <td>
                    {r.id} <span className="hint">{r.internal_url}</span>
                  </td>
                  <td>{r.draining ? 'draining' : r.live ? 'live' : 'gone'}</td>
                  <td>
                    <Time iso={r.heartbeat_at} />
                  </td>
                  <td>
                    <Time iso={r.started_at} />
                  </td>
                  <td>{r.live_actors}</td>
                  <td>{r.pending_effects}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p aria-label="Backlog">
            Overdue deadlines: <strong>{cluster.data.overdue_deadlines.count}</strong>
            {cluster.data.overdue_deadlines.oldest_at ? <span className="hint"> oldest {formatTime(cluster.data.overdue_deadlines.oldest_at)}</span> : null}
            {' · '}Pending effects: <strong>{cluster.data.pending_effects.count}</strong>
            {cluster.data.pending_effects.oldest_at ? <span className="hint"> oldest {formatTime(cluster.data.pending_effects.oldest_at)}</span> : null}
          </p>
        </>
      ) : null}
      <ActorList kinds={props.kinds} replicas={cluster.data?.replicas.map((r) => r.id) ?? []} />
    </section>
  );
}

interface Filter {
  kind: string;
  state: string;
  owner: string;
  live: '' | 'true' | 'false';
}

function ActorList(props: { kinds: string[]; replicas: string[] }) {
  const [filter, setFilter] = useState<Filter>({ kind: '', state: '', owner: '', live: 'true' });
  const [pages, setPages] = useState<ActorSummary[][]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const query = (c: string | null) => ({
    limit: 50,
    ...(filter.kind ? { kind: filter.kind } : {}),
    ...(filter.state.trim() ? { state: filter.state.trim() } : {}),
    ...(filter.owner ? { owner: filter.owner } : {}),
    ...(filter.live ? { live: filter.live } : {}),
    ...(c ? { cursor: c } : {}),
  });
  const first = useAsync(
    async (signal) => {
      const page = await call('GET /api/admin/actors', { signal, query: query(null) });
      setPages([page.items]);
      setCursor(page.cursor);
      return page;
    },
    [filter.kind, filter.state, filter.owner, filter.live],
  );
  const [more, setMore] = useState<{ busy: boolean; error?: unknown }>({ busy: false });
  const loadMore = async () => {
    setMore({ busy: true });
    try {
      const page = await call('GET /api/admin/actors', { query: query(cursor) });
      setPages((p) => [...p, page.items]);
      setCursor(page.cursor);
      setMore({ busy: false });
    } catch (error) {
      setMore({ busy: false, error });
    }
  };
  const set = (k: keyof Filter) => (e: { target: { value: string } }) => setFilter((f) => ({ ...f, [k]: e.target.value }));
  const rows = pages.flat();
  return (
    <>
      <h3>Actors</h3>
      <form className="row" aria-label="Filter actors" onSubmit={(e) => e.preventDefault()}>
        <label className="inline">
          Kind{' '}
          <select aria-label="Kind" value={filter.kind} onChange={set('kind')}>
            <option value="">any</option>
            {props.kinds.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          State <input aria-label="State" value={filter.state} onChange={set('state')} placeholder="running, healthy…" />
        </label>
        <label className="inline">
          Owner{' '}
          <select aria-label="Owner" value={filter.owner} onChange={set('owner')}>
            <option value="">any</option>
            {props.replicas.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          Live{' '}
          <select aria-label="Live" value={filter.live} onChange={set('live')}>
            <option value="true">live only</option>
            <option value="false">finished only</option>
            <option value="">both</option>
          </select>
        </label>
      </form>
      {first.error ? <ErrorNotice error={first.error} what="Actors" /> : null}
      {first.loading && !rows.length ? <Loading /> : null}
      {!first.loading && !first.error && !rows.length ? <EmptyState>No actor matches.</EmptyState> : null}
      {rows.length ? (
        <table className="data" aria-label="Actors">
          <thead>
            <tr>
              <th>Kind</th>
              <th>Id</th>
              <th>State</th>
              <th>Version</th>
              <th>Deadline</th>
              <th>Owner</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((a) => (
              <tr key={`${a.kind}/${a.id}`}>
                <td>{a.kind}</td>
                <td>
                  <Link href={`/inspect/${enc(a.kind)}/${enc(a.id)}`}>{a.id}</Link>
                </td>
                <td>{a.state}</td>
                <td>{a.version}</td>
                <td>{a.deadline_at ? formatTime(a.deadline_at) : ''}</td>
                <td>{a.owner_replica ?? ''}</td>
                <td>
                  <Time iso={a.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {more.error ? <ErrorNotice error={more.error} what="More actors" /> : null}
      {cursor ? (
        <button type="button" disabled={more.busy} onClick={loadMore}>
          More
        </button>
      ) : null}
    </>
  );
}
