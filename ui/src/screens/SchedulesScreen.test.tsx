// @vitest-environment happy-dom
// The saved queries tab against a stand-in api: deleting one asks first, then reloads the list; a delete the api
// refuses is shown to the user and the list stays.
import { describe, expect, it, vi } from 'vitest';
import { act } from 'react';
import type { SavedQuery } from '../api/types.ts';
import { SchedulesScreen } from './SchedulesScreen.tsx';
import { byRoute, standInApi } from '../testing/standInApi.ts';
import { testRoot } from '../testing/testRoot.ts';

const root = testRoot();

const saved = (id: string, name: string): SavedQuery => ({
  id,
  workspace_id: 'w1',
  name,
  sql: 'select 1',
  default_agent_id: null,
  catalog: null,
  created_by: null,
  updated_by: null,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  last_run_at: null,
});

const settle = () =>
  act(async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  });

function serve(deleteAnswer: () => unknown) {
  let items = [saved('q1', 'daily revenue')];
  return standInApi(
    byRoute({
      'GET /api/workspaces/default/saved-queries': () => ({ items, next_cursor: null }),
      'GET /api/workspaces/default/schedules': () => [],
      'DELETE /api/workspaces/default/saved-queries/q1': () => {
        const out = deleteAnswer();
        if (!(out instanceof Response)) items = [];
        return out instanceof Response ? out : new Response(null, { status: 204 });
      },
    }),
  );
}

const deleteButton = (host: HTMLElement) => [...host.querySelectorAll('table[aria-label="Saved queries"] button')].find((b) => b.textContent === 'Delete') as HTMLButtonElement;

describe('Saved queries tab', () => {
  it('deletes a saved query once confirmed, and reloads the list', async () => {
    const asked = serve(() => null);
    vi.stubGlobal('confirm', () => true);
    const host = await root.mount(<SchedulesScreen ws="default" />);
    await settle();
    await act(async () => deleteButton(host).click());
    await settle();
    expect(asked.filter((a) => a.method === 'DELETE').map((a) => a.path)).toEqual(['/api/workspaces/default/saved-queries/q1']);
    expect(host.textContent).toContain('No saved query yet');
    expect(host.querySelector('[role="alert"]')).toBeNull();
  });

  it('shows a delete the api refuses, and keeps the list', async () => {
    serve(() => new Response(JSON.stringify({ error: 'forbidden', message: 'deleting needs the writer role in workspace default' }), { status: 403 }));
    vi.stubGlobal('confirm', () => true);
    const host = await root.mount(<SchedulesScreen ws="default" />);
    await settle();
    await act(async () => deleteButton(host).click());
    await settle();
    expect(host.querySelector('[role="alert"]')?.textContent).toContain('deleting needs the writer role in workspace default');
    expect(host.textContent).toContain('daily revenue');
  });

  it('asks first: nothing is deleted when the user declines', async () => {
    const asked = serve(() => null);
    vi.stubGlobal('confirm', () => false);
    const host = await root.mount(<SchedulesScreen ws="default" />);
    await settle();
    await act(async () => deleteButton(host).click());
    await settle();
    expect(asked.some((a) => a.method === 'DELETE')).toBe(false);
  });
});
