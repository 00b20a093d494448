// Worksheets on the server (GET/POST/PATCH/DELETE /api/workspaces/{ws}/worksheets) and how the browser's tabs follow
// them: a tab shows one server worksheet (serverId); changes made here are sent (POST the first time, PATCH after);
// a newer version on the server replaces a tab that holds no unsaved change. Pure functions and the api calls; the
// screen's timing (debounce, retries) is useWorksheetSync.ts.
import { call } from '../api/client.ts';
import type { WorksheetOut, WorksheetPage } from '../api/types.ts';
import { POOL } from './AgentPicker.tsx';
import type { Worksheet, WorksheetState } from './worksheetStore.ts';

/** How many of the user's worksheets a fresh browser opens as tabs (the rest are a click away in the list). */
export const OPEN_ON_FIRST_VISIT = 8;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The fields a worksheet keeps on the server; the rest of a tab (its last run) stays in this browser. */
const SYNCED_FIELDS = ['title', 'sql', 'agentId', 'catalog', 'visibility'] as const;

/**
 * Whether a change makes the tab's worksheet need saving. A tab not on the server yet becomes a worksheet when its
 * text, title or sharing changes, not when the agent picker settles on an agent for it (every new tab would).
 */
export function marksDirty(t: Worksheet, patch: Partial<Worksheet>): boolean {
  if (t.serverId) return SYNCED_FIELDS.some((f) => f in patch);
  return (['title', 'sql', 'visibility'] as const).some((f) => f in patch && patch[f] !== t[f]);
}

/** What the server keeps of a tab. The agent is kept only as an id (not the pool, nor a name still being resolved). */
export function payloadOf(t: Worksheet) {
  return {
    title: t.title.trim().slice(0, 200) || 'Worksheet',
    sql: t.sql,
    agent_id: t.agentId && t.agentId !== POOL && UUID.test(t.agentId) ? t.agentId : null,
    catalog: t.catalog,
    visibility: t.visibility ?? 'private',
  };
}

export type Payload = ReturnType<typeof payloadOf>;

const samePayload = (a: Payload, b: Payload) =>
  a.title === b.title && a.sql === b.sql && a.agent_id === b.agent_id && a.catalog === b.catalog && a.visibility === b.visibility;

/** The tab fields a server worksheet sets. */
export function fieldsOf(w: WorksheetOut): Partial<Worksheet> {
  return {
    serverId: w.id,
    title: w.title,
    sql: w.sql,
    catalog: w.catalog,
    visibility: w.visibility,
    editable: w.editable,
    ownerName: w.owner_name,
    syncedAt: w.updated_at,
  };
}

/** A new tab showing a server worksheet (the agent: the worksheet's, else the one the user has picked). */
export function tabOf(w: WorksheetOut, agentId: string | null): Worksheet {
  return { id: w.id, agentId: w.agent_id ?? agentId, lastRun: null, dirty: false, rev: 0, ...fieldsOf(w) } as Worksheet;
}

/**
 * The tabs once the server's list of the user's worksheets has answered. A tab without unsaved changes takes a newer
 * server version (its editor restarts from that text); a fresh browser (nothing cached, or only untouched starter
 * tabs) opens the user's most recent worksheets instead of its starter tab.
 */
export function mergeServer(state: WorksheetState, mine: WorksheetOut[], firstVisit: boolean): WorksheetState {
  // The server's "Worksheet N" names count as given out: a new tab is not named like one closed here or elsewhere.
  const issued = mine.reduce((n, w) => Math.max(n, Number(/^Worksheet (\d+)$/.exec(w.title)?.[1] ?? 0)), state.issued ?? 0);
  if (issued > (state.issued ?? 0)) state = { ...state, issued };
  const byId = new Map(mine.map((w) => [w.id, w]));
  let tabs = state.tabs.map((t) => {
    const w = t.serverId ? byId.get(t.serverId) : undefined;
    if (!w || t.dirty || (t.syncedAt && Date.parse(w.updated_at) <= Date.parse(t.syncedAt))) return t;
    return { ...t, ...fieldsOf(w), agentId: w.agent_id ?? t.agentId, rev: (t.rev ?? 0) + 1 };
  });
  const isUntouched = (t: Worksheet) => !t.serverId && !t.dirty && !t.lastRun;
  // A browser whose only tabs are untouched starters counts as fresh too: it may have cached its starter tab before
  // the list answered (a sign-in that lands on this screen, then a reload).
  if ((firstVisit || tabs.every(isUntouched)) && mine.length) {
    const untouched = tabs.filter(isUntouched);
    const kept = tabs.filter((t) => !untouched.includes(t));
    const open = new Set(kept.map((t) => t.serverId));
    const agentId = state.tabs[0]?.agentId ?? null;
    const added = mine.filter((w) => !open.has(w.id)).slice(0, OPEN_ON_FIRST_VISIT).map((w) => tabOf(w, agentId));
    tabs = [...kept, ...added];
    if (!tabs.length) return state;
    return { ...state, tabs, active: tabs.some((t) => t.id === state.active) ? state.active : tabs[0].id };
  }
  return { ...state, tabs };
}

/** After a save: the tab takes the server's id and version, and stays dirty if it changed again meanwhile. */
export function afterSave(t: Worksheet, sent: Payload, w: WorksheetOut): Worksheet {
  return {
    ...t,
    serverId: w.id,
    editable: w.editable,
    ownerName: w.owner_name,
    visibility: t.visibility ?? w.visibility,
    syncedAt: w.updated_at,
    dirty: !samePayload(payloadOf(t), sent),
  };
}

/** Sends a tab: creates its worksheet the first time, changes it after. */
export function saveTab(ws: string, t: Worksheet, body: Payload): Promise<WorksheetOut> {
  return t.serverId
    ? call('PATCH /api/workspaces/{workspace}/worksheets/{worksheet_id}', { path: { workspace: ws, worksheet_id: t.serverId }, body })
    : call('POST /api/workspaces/{workspace}/worksheets', { path: { workspace: ws }, body });
}

export function listWorksheets(ws: string, scope: 'mine' | 'shared', signal?: AbortSignal): Promise<WorksheetPage> {
  return call('GET /api/workspaces/{workspace}/worksheets', { path: { workspace: ws }, query: { scope, limit: 200 }, signal });
}

export function deleteWorksheet(ws: string, id: string): Promise<void> {
  return call('DELETE /api/workspaces/{workspace}/worksheets/{worksheet_id}', { path: { workspace: ws, worksheet_id: id } });
}
