// Statements the api refused at submit (statement policy, syntax, role, grants, agent: any 4xx) never become
// queries, so the server's history has no row for them. This browser keeps the last of them per workspace, with
// the api's error, so History can show them beside the queries instead of losing them when the worksheet moves on.
export interface RefusedSubmission {
  id: string;
  /** when it was refused (ISO) */
  at: string;
  sql: string;
  status: number;
  code: string;
  message: string;
  worksheet: string | null;
}

/** How many refusals a workspace keeps (the oldest go first). */
export const REFUSED_KEPT = 100;

const key = (ws: string) => `eider.refused.${ws}`;

export function loadRefused(ws: string): RefusedSubmission[] {
  try {
    const raw = localStorage.getItem(key(ws));
    const list = raw ? (JSON.parse(raw) as unknown) : [];
    return Array.isArray(list) ? (list as RefusedSubmission[]).filter((r) => r && typeof r.sql === 'string' && typeof r.at === 'string') : [];
  } catch {
    return [];
  }
}

/** Keeps a refusal (newest first). */
export function recordRefused(ws: string, r: Omit<RefusedSubmission, 'id' | 'at'>, at = new Date()): RefusedSubmission {
  const entry: RefusedSubmission = { ...r, id: `${at.getTime().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, at: at.toISOString() };
  try {
    localStorage.setItem(key(ws), JSON.stringify([entry, ...loadRefused(ws)].slice(0, REFUSED_KEPT)));
  } catch {
    // storage full or refused: the worksheet still shows the error
  }
  return entry;
}

export function forgetRefused(ws: string, id?: string): void {
  try {
    const left = id ? loadRefused(ws).filter((r) => r.id !== id) : [];
    localStorage.setItem(key(ws), JSON.stringify(left));
  } catch {
    // nothing to forget
  }
}

/** Forgets every workspace's refusals (at sign-out: their SQL is the signed-out user's, and the browser may be shared). */
export function forgetAllRefused(): void {
  try {
    for (const k of Object.keys(localStorage)) if (k.startsWith('eider.refused.')) localStorage.removeItem(k);
  } catch {
    // nothing to forget
  }
}

/** The refusals History's filters let through: a refusal has no statement type, agent or session, and it failed. */
export function refusedMatching(list: RefusedSubmission[], f: { q: string; status: string[]; statement_type: string[]; agent_id: string; session_id: string; since: string; until: string; slower_than_ms: string }): RefusedSubmission[] {
  if (f.status.length && !f.status.includes('failed')) return [];
  if (f.statement_type.length || f.agent_id || f.session_id || f.slower_than_ms) return [];
  const since = f.since ? Date.parse(f.since) : NaN;
  const until = f.until ? Date.parse(f.until) : NaN;
  const q = f.q.toLowerCase();
  return list.filter((r) => {
    const t = Date.parse(r.at);
    if (Number.isFinite(since) && t < since) return false;
    if (Number.isFinite(until) && t >= until) return false;
    return !q || r.sql.toLowerCase().includes(q);
  });
}
