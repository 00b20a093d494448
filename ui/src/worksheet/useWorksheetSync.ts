// Keeps the worksheet tabs and the server in step: on opening the screen, the user's worksheets are read and merged
// into the cached tabs (a fresh browser opens them); a tab changed here is saved 800 ms after the last change (POST
// the first time, PATCH after). A save that fails for the network or the server is tried again every 10 s, so the
// tabs keep working while the api is away; one the api refuses waits for the next change. Saves survive leaving the
// screen: one still pending is sent at once, and its answer lands in the browser's cache.
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/client.ts';
import type { WorksheetOut } from '../api/types.ts';
import { afterSave, listWorksheets, mergeServer, payloadOf, saveTab } from './worksheetSync.ts';
import { hasCachedWorksheets, loadWorksheets, saveWorksheets, type Worksheet, type WorksheetState } from './worksheetStore.ts';

export type SaveStatus = { kind: 'saving' } | { kind: 'saved'; at: string } | { kind: 'error'; error: unknown };

const DEBOUNCE_MS = 800;
const RETRY_MS = 10_000;

// Per workspace and tab, across mounts of the screen: the save in flight, and the server id a save has given the
// tab (so a screen reopened before that answer reached its state still changes the same worksheet, never a copy).
const inflight = new Map<string, Promise<unknown>>();
const serverIds = new Map<string, string>();

const retriable = (e: unknown) => !(e instanceof ApiError) || e.status >= 500 || e.status === 0;

export function useWorksheetSync(ws: string, state: WorksheetState, setState: (fn: (s: WorksheetState) => WorksheetState) => void) {
  const [status, setStatus] = useState<Record<string, SaveStatus>>({});
  const stateRef = useRef(state);
  stateRef.current = state;
  const mounted = useRef(true);
  const firstVisit = useRef(!hasCachedWorksheets(ws));
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  const seen = useRef(new Map<string, Worksheet>());
  const closed = useRef(new Map<string, Worksheet>());

  /** Changes one tab in the screen's state, or in the browser's cache once the screen is gone. */
  const apply = useCallback(
    (tabId: string, fn: (t: Worksheet) => Worksheet) => {
      const map = (s: WorksheetState) => ({ ...s, tabs: s.tabs.map((t) => (t.id === tabId ? fn(t) : t)) });
      if (mounted.current) setState(map);
      else saveWorksheets(ws, map(loadWorksheets(ws)));
    },
    [ws, setState],
  );
  const report = (tabId: string, s: SaveStatus) => mounted.current && setStatus((all) => ({ ...all, [tabId]: s }));

  const flush = useCallback(
    async (tabId: string): Promise<void> => {
      timers.current.delete(tabId);
      const key = `${ws}:${tabId}`;
      await inflight.get(key)?.catch(() => undefined);
      const current = mounted.current ? stateRef.current : loadWorksheets(ws);
      const found = current.tabs.find((t) => t.id === tabId) ?? closed.current.get(tabId);
      closed.current.delete(tabId);
      if (!found || !found.dirty || found.editable === false) return;
      const tab = found.serverId ? found : { ...found, serverId: serverIds.get(key) ?? null };
      const body = payloadOf(tab);
      report(tabId, { kind: 'saving' });
      const sending = saveTab(ws, tab, body);
      inflight.set(key, sending);
      try {
        const w: WorksheetOut = await sending;
        serverIds.set(key, w.id);
        apply(tabId, (t) => afterSave(t, body, w));
        report(tabId, { kind: 'saved', at: new Date().toLocaleTimeString() });
      } catch (error) {
        report(tabId, { kind: 'error', error });
        if (error instanceof ApiError && error.status === 404 && tab.serverId) {
          // deleted elsewhere: the text here is kept, as a new worksheet
          serverIds.delete(key);
          apply(tabId, (t) => ({ ...t, serverId: null, syncedAt: null }));
          schedule(tabId, 0);
        } else if (error instanceof ApiError && error.code === 'worksheet_read_only') {
          apply(tabId, (t) => ({ ...t, editable: false }));
        } else if (retriable(error) && mounted.current) {
          schedule(tabId, RETRY_MS);
        }
      } finally {
        if (inflight.get(key) === sending) inflight.delete(key);
      }
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [ws, apply],
  );

  const schedule = (tabId: string, ms: number) => {
    clearTimeout(timers.current.get(tabId));
    timers.current.set(
      tabId,
      setTimeout(() => void flush(tabId), ms),
    );
  };

  // The server's worksheets, once per screen: newer versions replace unchanged tabs; a fresh browser opens them.
  const [pulled, setPulled] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    listWorksheets(ws, 'mine', ctl.signal).then(
      (page) => {
        setState((s) => mergeServer(s, page.items, firstVisit.current));
        firstVisit.current = false;
      },
      () => undefined, // the api cannot be reached: the cached tabs stay, and saves retry
    );
    return () => ctl.abort();
  }, [ws, setState, pulled]);

  // A tab changed here (a new object that is dirty) is saved once the changes pause.
  useEffect(() => {
    for (const t of state.tabs) {
      if (seen.current.get(t.id) === t) continue;
      seen.current.set(t.id, t);
      if (t.dirty && t.editable !== false) schedule(t.id, DEBOUNCE_MS);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [state]);

  useEffect(() => {
    mounted.current = true;
    const pending = timers.current;
    return () => {
      mounted.current = false;
      // Leaving the screen: what is waiting to be saved goes now.
      for (const [tabId, timer] of pending) {
        clearTimeout(timer);
        void flush(tabId);
      }
      pending.clear();
    };
  }, [flush]);

  /** A tab being closed: a change still waiting is saved now (the worksheet itself stays on the server). */
  const closing = (t: Worksheet) => {
    if (!t.dirty || t.editable === false) return;
    closed.current.set(t.id, t);
    schedule(t.id, 0);
  };

  return { status, closing, refresh: () => setPulled((n) => n + 1) };
}
