import { describe, expect, it } from 'vitest';
import type { WorksheetOut } from '../api/types.ts';
import { POOL } from './AgentPicker.tsx';
import { afterSave, marksDirty, mergeServer, OPEN_ON_FIRST_VISIT, payloadOf } from './worksheetSync.ts';
import { blankWorksheet, type Worksheet, type WorksheetState } from './worksheetStore.ts';

const AGENT = '11111111-1111-4111-8111-111111111111';

const server = (id: string, patch: Partial<WorksheetOut> = {}): WorksheetOut => ({
  id,
  workspace_id: 'w',
  title: `Sheet ${id}`,
  sql: `SELECT '${id}'`,
  agent_id: null,
  catalog: null,
  visibility: 'private',
  owner_id: 'me',
  owner_name: 'Me',
  editable: true,
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z',
  ...patch,
});

const tabFor = (w: WorksheetOut, patch: Partial<Worksheet> = {}): Worksheet => ({
  ...blankWorksheet(1, w.sql),
  serverId: w.id,
  title: w.title,
  syncedAt: w.updated_at,
  ...patch,
});

describe('worksheets and the server', () => {
  it('a fresh browser opens the server’s worksheets in place of its untouched starter tab', () => {
    const starter = blankWorksheet(1, 'SELECT 42 AS answer;');
    const state: WorksheetState = { tabs: [starter], active: starter.id };
    const mine = Array.from({ length: OPEN_ON_FIRST_VISIT + 2 }, (_, i) => server(`s${i}`));
    const merged = mergeServer(state, mine, true);
    expect(merged.tabs.map((t) => t.serverId)).toEqual(mine.slice(0, OPEN_ON_FIRST_VISIT).map((w) => w.id));
    expect(merged.active).toBe(merged.tabs[0].id);
    expect(merged.tabs[0]).toMatchObject({ sql: "SELECT 's0'", dirty: false, editable: true });
    // With nothing on the server, the starter stays. A browser that cached only its untouched starter (it reached
    // the screen before the list answered) is still fresh; one with a tab of its own keeps its tabs as they are.
    expect(mergeServer(state, [], true)).toEqual(state);
    expect(mergeServer(state, mine, false).tabs.map((t) => t.serverId)).toEqual(mine.slice(0, OPEN_ON_FIRST_VISIT).map((w) => w.id));
    const typed = { ...starter, sql: 'SELECT 1', dirty: true };
    expect(mergeServer({ tabs: [typed], active: typed.id }, mine, false).tabs).toEqual([typed]);
  });

  it('a newer server version replaces a tab without unsaved changes, never one with them', () => {
    const w = server('a');
    const newer = server('a', { sql: 'SELECT 2', updated_at: '2026-11-02T00:00:00.000Z' });
    const clean = tabFor(w);
    const edited = tabFor(w, { id: 'other', sql: 'SELECT local', dirty: true });
    const merged = mergeServer({ tabs: [clean, edited], active: clean.id }, [newer], false);
    expect(merged.tabs[0]).toMatchObject({ sql: 'SELECT 2', syncedAt: newer.updated_at, rev: 1 });
    expect(merged.tabs[1]).toBe(edited);
    // The same version changes nothing (no editor restart).
    expect(mergeServer({ tabs: [clean], active: clean.id }, [w], false).tabs[0]).toBe(clean);
  });

  it('only text, title or sharing make a new tab a worksheet; on a saved one the agent and catalog count too', () => {
    const fresh = blankWorksheet(2);
    expect(marksDirty(fresh, { agentId: AGENT })).toBe(false);
    expect(marksDirty(fresh, { catalog: 'warehouse' })).toBe(false);
    expect(marksDirty(fresh, { sql: 'SELECT 1' })).toBe(true);
    expect(marksDirty(fresh, { lastRun: null })).toBe(false);
    const saved = tabFor(server('b'));
    expect(marksDirty(saved, { agentId: AGENT })).toBe(true);
    expect(marksDirty(saved, { lastRun: null })).toBe(false);
  });

  it('sends the agent only as an id, and stays dirty when the tab changed while its save was on the way', () => {
    expect(payloadOf({ ...blankWorksheet(1), agentId: POOL }).agent_id).toBeNull();
    expect(payloadOf({ ...blankWorksheet(1), agentId: 'agent-name' }).agent_id).toBeNull();
    expect(payloadOf({ ...blankWorksheet(1), agentId: AGENT, title: '  ' })).toMatchObject({ agent_id: AGENT, title: 'Worksheet', visibility: 'private' });
    const tab = { ...blankWorksheet(1, 'SELECT 1'), dirty: true };
    const sent = payloadOf(tab);
    const answer = server('c', { sql: 'SELECT 1', updated_at: '2026-11-03T00:00:00.000Z' });
    expect(afterSave(tab, sent, answer)).toMatchObject({ serverId: 'c', syncedAt: answer.updated_at, dirty: false });
    expect(afterSave({ ...tab, sql: 'SELECT 12' }, sent, answer).dirty).toBe(true);
  });
});
