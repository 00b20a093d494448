// A worksheet's statements run as on one connection: where the server has SQL sessions on (docs/sql-sessions.md),
// each worksheet holds a session on its agent and sends its statements there, so temporary tables, SET, SET
// VARIABLE and USE carry over from one statement (and one run) to the next. The session is opened on the first run,
// kept across leaving the screen and a reload (its id in sessionStorage), opened again when the agent or catalog
// changes or the server ended it (idle, lifetime), and closed with the worksheet's tab. Where sessions are off, each
// statement is a query of its own and the worksheet says what does not carry over.
import { ApiError, call } from '../api/client.ts';
import type { QueryOut } from '../api/types.ts';

/** How a statement ran: in the worksheet's session, or alone (and why). */
export type Connection =
  | { kind: 'session'; sessionId: string; /** the session was opened again: state from before is gone */ reopened: boolean }
  | { kind: 'alone'; reason: 'off' | 'no-agent' };

interface Held {
  id: string;
  agentId: string | null;
  catalog: string | null;
}

const OPEN_WAIT_S = 30;
const storeKey = (ws: string, sheetId: string) => `eider.session.${ws}.${sheetId}`;
/** Workspaces whose server answered that sessions are off (this page's life: a restart with them on is a reload away). */
const off = new Set<string>();

function held(ws: string, sheetId: string): Held | null {
  try {
    const raw = sessionStorage.getItem(storeKey(ws, sheetId));
    return raw ? (JSON.parse(raw) as Held) : null;
  } catch {
    return null;
  }
}

function keep(ws: string, sheetId: string, h: Held | null) {
  try {
    if (h) sessionStorage.setItem(storeKey(ws, sheetId), JSON.stringify(h));
    else sessionStorage.removeItem(storeKey(ws, sheetId));
  } catch {
    // storage refused: the session lasts this page's life only
  }
}

const sessionsOff = (e: unknown) => e instanceof ApiError && e.status === 404 && /not enabled/i.test(e.message);
const sessionGone = (e: unknown) => e instanceof ApiError && (e.code === 'session_not_open' || e.status === 404);

async function open(ws: string, agentId: string | null, catalog: string | null, signal?: AbortSignal): Promise<string> {
  let s = await call('POST /api/workspaces/{workspace}/sql/sessions', {
    path: { workspace: ws },
    body: { ...(agentId ? { agent_id: agentId } : {}), ...(catalog ? { catalog } : {}), wait_timeout_s: OPEN_WAIT_S, on_wait_timeout: 'continue' },
  });
  // Still opening (an elastic agent starting): wait for it, as the run's own wait would.
  while (s.status === 'pending' || s.status === 'opening') {
    await new Promise((r) => setTimeout(r, 1000));
    if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
    s = await call('GET /api/sql/sessions/{session_id}', { path: { session_id: s.id }, signal });
  }
  if (s.status !== 'open') throw new ApiError(503, 'session_failed', `the worksheet's session could not be opened: ${s.error ?? s.status}`);
  return s.id;
}

/**
 * Submits one statement of worksheet `sheetId` (in its session where the server has them), answering the query it
 * became and how it ran.
 */
export async function submitStatement(
  ws: string,
  sheetId: string,
  sql: string,
  agentId: string | null,
  catalog: string | null,
  signal?: AbortSignal,
): Promise<{ query: QueryOut; connection: Connection }> {
  const alone = async (reason: 'off' | 'no-agent') => ({
    query: await call('POST /api/workspaces/{workspace}/queries', {
    path: { workspace: ws },
    body: { sql, ...(agentId ? { agent_id: agentId } : {}), ...(catalog ? { catalog } : {}) },
  }),
    connection: { kind: 'alone', reason } as const,
  });
  if (off.has(ws)) return alone('off');

  let h = held(ws, sheetId);
  if (h && (h.agentId !== agentId || h.catalog !== catalog)) {
    void closeSession(ws, sheetId);
    h = null;
  }
  const hadOne = h !== null;
  let reopened = false;
  for (let attempt = 0; attempt < 2; attempt++) {
    if (!h) {
      try {
        h = { id: await open(ws, agentId, catalog, signal), agentId, catalog };
      } catch (e) {
        if (sessionsOff(e)) {
          off.add(ws);
          return alone('off');
        }
        // No agent chosen and no elastic pool to wait for: the statement runs where a query would.
        if (e instanceof ApiError && e.code === 'agent_required') return alone('no-agent');
        throw e;
      }
      keep(ws, sheetId, h);
      reopened = hadOne || attempt > 0;
    }
    try {
      const query = await call('POST /api/sql/sessions/{session_id}/statements', { path: { session_id: h.id }, body: { sql } });
      return { query, connection: { kind: 'session', sessionId: h.id, reopened } };
    } catch (e) {
      if (sessionsOff(e)) {
        off.add(ws);
        keep(ws, sheetId, null);
        return alone('off');
      }
      if (!sessionGone(e) || attempt > 0) throw e;
      // The server ended the session (idle, lifetime, agent gone): a new one, and the worksheet says state is gone.
      keep(ws, sheetId, null);
      h = null;
    }
  }
  throw new Error('unreachable');
}

/** Closes the worksheet's session (its tab closed, or its agent or catalog changed). */
export async function closeSession(ws: string, sheetId: string): Promise<void> {
  const h = held(ws, sheetId);
  if (!h) return;
  keep(ws, sheetId, null);
  try {
    await call('DELETE /api/sql/sessions/{session_id}', { path: { session_id: h.id } });
  } catch {
    // already gone: the server's idle timeout closes what this could not
  }
}

/** What a worksheet says about how its statements ran, or null when they share a session as they should. */
export function connectionNote(c: Connection | null): string | null {
  if (!c) return null;
  if (c.kind === 'alone' && c.reason === 'off')
    return 'SQL sessions are off on this server (SQL_SESSIONS_ENABLED): each statement runs on a connection of its own, so temporary tables, SET, SET VARIABLE, USE and transactions do not carry over to the next statement.';
  if (c.kind === 'alone')
    return 'No agent is chosen and there is no elastic pool to open a session on: each statement runs on a connection of its own, so temporary tables and settings do not carry over. Choose an agent to keep them.';
  if (c.reopened) return "The worksheet's previous session had ended (idle or closed by the server): a new one was opened, and temporary tables and settings from before are gone.";
  return null;
}
