// A live state chart for operators: the machine's diagram from the inspection endpoints with the actor's current
// state highlighted (the server draws it; in dark mode restyled to a dark panel), and the actor's transitions,
// newest first, with times. Refreshes while the actor is not in a final state.
import { useEffect, useRef, useState } from 'react';
import { ApiError, call } from '../api/client.ts';
import type { ActorDetail, ActorOut, TransitionOut } from '../api/types.ts';
import { useDark } from '../app/theme.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { Time } from '../components/Time.tsx';

/** Transitions shown at most (the newest). */
const SHOWN = 200;
/** The endpoint's largest page. */
const PAGE = 500;

interface ActorPage {
  actor: ActorOut;
  transitions: TransitionOut[];
  cursor: string | null;
}

/** The actor endpoint's answer split into the actor and its page of transitions. */
function readActor(body: ActorDetail): ActorPage {
  const { transitions, ...actor } = body;
  return { actor, transitions: [...transitions.items], cursor: transitions.cursor };
}

// The server's diagram is light (white panel, dark ink); in dark mode its own style rules are overridden (an <img>
// cannot be restyled from outside).
const DARK_SVG_STYLE = `<style>
svg > rect:first-of-type { fill: #1a2029; }
text { fill: #e3e8ef; }
.state rect { fill: #1e2a44; stroke: #8fa3ff; }
.state.final rect { fill: #262d38; stroke: #aab4c3; }
.state.final rect.inner { fill: none; }
.state.transient rect { fill: #1a2029; }
.state.current rect { fill: #5a3b05; stroke: #f5b041; }
.state.current rect.inner { fill: none; }
.edge, .initial path { stroke: #9aa6b5; }
.initial circle { fill: #e3e8ef; }
.edge-label text { fill: #c9d1d9; }
.edge-label rect { fill: #1a2029; stroke: #2e3744; }
#arrow path { fill: #9aa6b5; }
</style>`;

function darkenSvg(svg: string): string {
  const at = svg.indexOf('</defs>');
  return at < 0 ? svg.replace(/<svg[^>]*>/, (m) => m + DARK_SVG_STYLE) : svg.slice(0, at) + DARK_SVG_STYLE + svg.slice(at);
}

export function StateDiagram(props: { kind: string; actorId?: string; version?: number }) {
  const [svg, setSvg] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const dark = useDark();
  useEffect(() => {
    let live = true;
    call('GET /api/admin/machines/{kind}/diagram', { path: { kind: props.kind }, query: { actor: props.actorId }, text: true })
      .then((text) => {
        if (!live) return;
        setSvg(text);
        setError(null);
      })
      .catch((e) => live && setError(e));
    return () => {
      live = false;
    };
  }, [props.kind, props.actorId, props.version]);
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (svg === null) return;
    // Shown as an image: the SVG cannot run script or restyle the page.
    const u = URL.createObjectURL(new Blob([dark ? darkenSvg(svg) : svg], { type: 'image/svg+xml' }));
    setUrl(u);
    return () => URL.revokeObjectURL(u);
  }, [svg, dark]);
  if (error) return <ErrorNotice error={error} what="Diagram" />;
  if (!url) return <Loading label="Drawing the state chart…" />;
  return <img className="diagram" src={url} alt={`State chart of the ${props.kind} machine${props.actorId ? ', current state highlighted' : ''}`} />;
}

/**
 * The actor and its newest transitions. The endpoint pages transitions oldest first by a forward cursor, so this
 * follows the cursor to the last page once, then re-reads from that page's start on each refresh: a long-lived
 * actor (an agent connection logs every heartbeat) shows what happens now, not its first 200 transitions.
 */
function useActor(kind: string, id: string) {
  const [state, setState] = useState<{ actor?: ActorOut; transitions: TransitionOut[]; error?: unknown }>({ transitions: [] });
  const [tick, setTick] = useState(0);
  const lastPage = useRef<{ key: string; cursor: string | null }>({ key: '', cursor: null });
  useEffect(() => {
    const key = `${kind}/${id}`;
    if (lastPage.current.key !== key) lastPage.current = { key, cursor: null };
    const ctl = new AbortController();
    void (async () => {
      try {
        let cursor = lastPage.current.cursor;
        let page: ActorPage;
        const seen = new Map<number, TransitionOut>();
        for (;;) {
          page = readActor(await call('GET /api/admin/actors/{kind}/{actor_id}', { path: { kind, actor_id: id }, signal: ctl.signal, query: { limit: PAGE, cursor: cursor ?? undefined } }));
          for (const t of page.transitions) seen.set(t.seq, t);
          if (!page.cursor) break;
          cursor = page.cursor;
          // only the newest pages matter: keep the last full page's start as the place to re-read from
          for (const s of [...seen.keys()].sort((a, b) => a - b).slice(0, Math.max(0, seen.size - SHOWN))) seen.delete(s);
        }
        lastPage.current.cursor = cursor;
        setState((prev) => {
          // rows already shown and older than this page stay, up to SHOWN in all
          const merged = new Map(prev.actor?.id === page.actor.id ? prev.transitions.map((t) => [t.seq, t] as const) : []);
          for (const [s, t] of seen) merged.set(s, t);
          const transitions = [...merged.values()].sort((a, b) => b.seq - a.seq).slice(0, SHOWN);
          return { actor: page.actor, transitions };
        });
      } catch (e) {
        if ((e as Error)?.name !== 'AbortError') setState((s) => ({ ...s, error: e }));
      }
    })();
    return () => ctl.abort();
  }, [kind, id, tick]);
  return { ...state, refresh: () => setTick((n) => n + 1) };
}

export function StateChart(props: { kind: string; id: string }) {
  const view = useActor(props.kind, props.id);
  const terminal = view.actor?.terminal;
  // An actor that does not exist will not appear by waiting: stop asking (a live one is polled until it ends).
  const gone = view.error instanceof ApiError && view.error.status === 404;
  const { refresh } = view;
  const refreshRef = useRef(refresh);
  refreshRef.current = refresh;
  useEffect(() => {
    if (terminal || gone) return;
    const t = setInterval(() => refreshRef.current(), 2000);
    return () => clearInterval(t);
  }, [terminal, gone]);

  return (
    <div className="state-chart stack">
      {view.error ? <ErrorNotice error={view.error} what="Actor state" /> : null}
      {view.actor ? (
        <p>
          Current state <strong data-testid="current-state">{view.actor.state}</strong> (status {view.actor.status}, version {view.actor.version})
          {view.actor.terminal ? ' — final' : ' — live'}
          {view.actor.deadline_at ? (
            <>
              {' · deadline '}
              <Time iso={view.actor.deadline_at} />
            </>
          ) : null}
          {view.actor.last_error ? ` · last error: ${view.actor.last_error}` : ''}
        </p>
      ) : null}
      <StateDiagram kind={props.kind} actorId={props.id} version={view.actor?.version} />
      <h3>Transitions{view.transitions.length >= SHOWN ? ` (the newest ${SHOWN})` : ''}</h3>
      {view.actor ? (
        view.transitions.length ? (
          <table className="table" aria-label="Transitions">
            <thead>
              <tr>
                <th className="num">#</th>
                <th>Time</th>
                <th>Event</th>
                <th>From</th>
                <th>To</th>
              </tr>
            </thead>
            <tbody>
              {view.transitions.map((t) => (
                <tr key={t.seq}>
                  <td className="num">{t.seq}</td>
                  <td>
                    <Time iso={t.at} />
                  </td>
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
