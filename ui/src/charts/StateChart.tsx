// A live state chart for operators: the machine's diagram from the inspection endpoints with the actor's current
// state highlighted (the server draws it), and the actor's transition history with times. Refreshes while the actor
// is not in a final state.
import { useEffect, useState } from 'react';
import { api, ApiError, enc } from '../api/client.ts';
import type { ActorOut, TransitionOut } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { formatTime } from '../components/format.ts';

interface ActorView {
  actor: ActorOut;
  transitions: TransitionOut[];
}

/** The actor endpoint's answer, whether it nests the actor and its transitions page or flattens them. */
function readActor(body: any): ActorView {
  const actor: ActorOut = body?.actor ?? body;
  const t = body?.transitions;
  const transitions: TransitionOut[] = Array.isArray(t) ? t : (t?.items ?? []);
  return { actor, transitions };
}

export function StateDiagram(props: { kind: string; actorId?: string; version?: number }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let revoked: string | null = null;
    let live = true;
    api
      .get<string>(`/api/admin/machines/${enc(props.kind)}/diagram`, { query: { actor: props.actorId }, text: true })
      .then((svg) => {
        if (!live) return;
        // Shown as an image: the SVG cannot run script or restyle the page.
        revoked = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
        setUrl(revoked);
        setError(null);
      })
      .catch((e) => live && setError(e));
    return () => {
      live = false;
      if (revoked) URL.revokeObjectURL(revoked);
    };
  }, [props.kind, props.actorId, props.version]);
  if (error) return <ErrorNotice error={error} what="Diagram" />;
  if (!url) return <Loading label="Drawing the state chart…" />;
  return <img className="diagram" src={url} alt={`State chart of the ${props.kind} machine${props.actorId ? ', current state highlighted' : ''}`} />;
}

export function StateChart(props: { kind: string; id: string }) {
  const [tick, setTick] = useState(0);
  const view = useAsync(
    (signal) => api.get(`/api/admin/actors/${enc(props.kind)}/${enc(props.id)}`, { signal, query: { limit: 200 } }).then(readActor),
    [props.kind, props.id, tick],
  );
  const terminal = view.data?.actor?.terminal;
  // An actor that does not exist will not appear by waiting: stop asking (a live one is polled until it ends).
  const gone = view.error instanceof ApiError && view.error.status === 404;
  useEffect(() => {
    if (terminal || gone) return;
    const t = setInterval(() => setTick((n) => n + 1), 2000);
    return () => clearInterval(t);
  }, [terminal, gone]);

  return (
    <div className="state-chart stack">
      {view.error ? <ErrorNotice error={view.error} what="Actor state" /> : null}
      {view.data ? (
        <p>
          Current state <strong data-testid="current-state">{view.data.actor.state}</strong> (status {view.data.actor.status}, version{' '}
          {view.data.actor.version}){view.data.actor.terminal ? ' — final' : ' — live'}
          {view.data.actor.deadline_at ? ` · deadline ${formatTime(view.data.actor.deadline_at)}` : ''}
          {view.data.actor.last_error ? ` · last error: ${view.data.actor.last_error}` : ''}
        </p>
      ) : null}
      <StateDiagram kind={props.kind} actorId={props.id} version={view.data?.actor.version} />
      <h3>Transitions</h3>
      {view.data ? (
        view.data.transitions.length ? (
          <table className="table" aria-label="Transitions">
            <thead>
              <tr>
                <th>#</th>
                <th>Time</th>
                <th>Event</th>
                <th>From</th>
                <th>To</th>
              </tr>
            </thead>
            <tbody>
              {view.data.transitions.map((t) => (
                <tr key={t.seq}>
                  <td>{t.seq}</td>
                  <td>{formatTime(t.at)}</td>
                  <td className="mono">{t.event}</td>
                  <td>{t.from_state ?? '—'}</td>
                  <td>{t.to_state}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>No transitions recorded.</p>
        )
      ) : null}
    </div>
  );
}
