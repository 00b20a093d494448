// Worksheet tabs as this browser holds them, per workspace: the open tabs, the active one, and each tab's last run.
// The worksheets themselves live on the server (worksheetSync.ts); browser storage is their cache, so the screen
// shows at once, and keeps working while the api cannot be reached (changes are saved once it answers again). A tab
// keeps its last run (each statement's query id, or the api's refusal), so leaving the screen or reloading the page
// finds the run again: a query still running is followed and can be cancelled, a finished one shows its rows, read
// again by its id.

/** One statement of a worksheet's last run: its query, or the refusal when the api did not accept it. */
export interface StepRef {
  queryId: string | null;
  /** where the statement starts in the worksheet's text (an error's position is the statement's own) */
  from: number;
  error?: { status: number; code: string; message: string; details?: unknown } | null;
}

/** The last run of a worksheet: one statement, or each of "run all" up to where it stopped. */
export interface LastRun {
  steps: StepRef[];
}

export interface Worksheet {
  id: string;
  title: string;
  sql: string;
  agentId: string | null;
  catalog: string | null;
  /** the saved query this worksheet was opened from or saved as (Ctrl/Cmd+S replaces it) */
  savedName?: string | null;
  lastRun?: LastRun | null;
  /** the server's worksheet this tab shows; none yet for a tab not saved (a new, untouched one) */
  serverId?: string | null;
  /** private to its owner, or shared with the workspace */
  visibility?: 'private' | 'workspace';
  /** false for a worksheet another member shared: read here, changed only by its owner */
  editable?: boolean;
  ownerName?: string | null;
  /** the server's updated_at of the version this tab holds */
  syncedAt?: string | null;
  /** changed here and not yet on the server */
  dirty?: boolean;
  /** bumped when the server's newer text replaces the tab's, so its editor starts again from that text */
  rev?: number;
}

export interface WorksheetState {
  tabs: Worksheet[];
  active: string;
  /** the highest N of a "Worksheet N" this browser gave out, so a closed one's name is not given again */
  issued?: number;
}

const key = (ws: string) => `eider.worksheets.${ws}`;

const newId = () => (crypto.randomUUID ? crypto.randomUUID() : Math.random().toString(36).slice(2));

export function blankWorksheet(n: number, sql = ''): Worksheet {
  return { id: newId(), title: `Worksheet ${n}`, sql, agentId: null, catalog: null };
}

/** The next "Worksheet N" title: above every one open and every one given out before (names stay unique). */
export function nextWorksheet(state: WorksheetState, sql = ''): { tab: Worksheet; issued: number } {
  let n = state.issued ?? 0;
  for (const t of state.tabs) {
    const m = /^Worksheet (\d+)$/.exec(t.title);
    if (m) n = Math.max(n, Number(m[1]));
  }
  return { tab: blankWorksheet(n + 1, sql), issued: n + 1 };
}

/** Whether this browser holds worksheet tabs of `ws` (a fresh browser opens the server's worksheets instead). */
export function hasCachedWorksheets(ws: string): boolean {
  try {
    return localStorage.getItem(key(ws)) !== null;
  } catch {
    return false;
  }
}

export function loadWorksheets(ws: string): WorksheetState {
  try {
    const raw = localStorage.getItem(key(ws));
    if (raw) {
      const s = JSON.parse(raw) as WorksheetState;
      if (Array.isArray(s.tabs) && s.tabs.length)
        return { tabs: s.tabs, active: s.tabs.some((t) => t.id === s.active) ? s.active : s.tabs[0].id, issued: s.issued };
    }
  } catch {
    // unreadable storage: start fresh rather than fail the screen
  }
  const first = blankWorksheet(1, 'SELECT 42 AS answer;');
  return { tabs: [first], active: first.id };
}

export function saveWorksheets(ws: string, state: WorksheetState): void {
  try {
    localStorage.setItem(key(ws), JSON.stringify(state));
  } catch {
    // storage full or refused: the server keeps the worksheets; only this browser's cache is behind
  }
}

/** Opens `sql` in a new tab of `ws`'s worksheets (from the catalog or history); the worksheet screen picks it up.
 * `result` makes a past query the tab's last run, so the tab shows that query's result (re-read by its id). */
export function openInWorksheet(
  ws: string,
  sql: string,
  title?: string,
  catalog?: string | null,
  saved?: { name: string; agentId: string | null },
  result?: { queryId: string; agentId: string | null },
): void {
  const state = loadWorksheets(ws);
  const current = state.tabs.find((t) => t.id === state.active);
  // The same SQL already open (and no past result to show): that worksheet comes to the front instead of a copy.
  const plain = (text: string) => text.trim().replace(/;+$/, '').trim();
  const same = result ? undefined : state.tabs.find((t) => plain(t.sql) === plain(sql));
  if (same) {
    saveWorksheets(ws, { ...state, active: same.id });
    return;
  }
  const next = nextWorksheet(state, sql);
  const tab = {
    ...next.tab,
    catalog: catalog ?? null,
    agentId: saved?.agentId ?? result?.agentId ?? current?.agentId ?? null,
    savedName: saved?.name ?? null,
    lastRun: result ? { steps: [{ queryId: result.queryId, from: 0 }] } : null,
    // SQL opened from elsewhere becomes one of the user's worksheets; a past result's tab stays in this browser
    dirty: !result,
  };
  if (title) tab.title = title;
  saveWorksheets(ws, { tabs: [...state.tabs, tab], active: tab.id, issued: next.issued });
}
