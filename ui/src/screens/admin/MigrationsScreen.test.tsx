// @vitest-environment happy-dom
// Admin → Migrations against a stand-in api: migrations of every catalog newest first, the selected one's progress
// per table and its log (pulled after the last sequence seen), cancel before the cutover, and starting one.
import { describe, expect, it } from 'vitest';
import { act } from 'react';
import { MigrationsScreen } from './MigrationsScreen.tsx';
import { byRoute, standInApi, type Asked, type Route } from '../../testing/standInApi.ts';
import { testRoot } from '../../testing/testRoot.ts';


const catalogs = [
  { id: 'c1', slug: 'sales', storage_backend_id: 'b1', storage_kind: 'object_store', root_uri: 's3://warehouse/sales/', created_by: null, created_at: '2026-03-01T10:00:00Z' },
  { id: 'c2', slug: 'ops', storage_backend_id: 'b2', storage_kind: 'object_store', root_uri: 's3://lake/ops/', created_by: null, created_at: '2026-03-01T10:00:00Z' },
];
const backends = [
  { id: 'b1', name: 'bundled', kind: 'object_store', root_uri: 's3://warehouse/', endpoint: null, region: null, has_credentials: false, credential_vending: 'derived', catalog_count: 1, created_at: '2026-03-01T10:00:00Z' },
  { id: 'b2', name: 'lake', kind: 'object_store', root_uri: 's3://lake/', endpoint: 'http://lake', region: null, has_credentials: true, credential_vending: 'derived', catalog_count: 1, created_at: '2026-03-01T10:00:00Z' },
];

function migration(id: string, catalog: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    catalog_id: catalog,
    source_storage_backend_id: 'b1',
    target_storage_backend_id: 'b2',
    status: 'running',
    phase: 'copying',
    tables_total: 2,
    tables_done: 1,
    tables_verified: 0,
    bytes_total: 4096,
    bytes_copied: 1024,
    tables: [
      { schema: 's', table: 'events', state: 'copied', bytes: 3072, error: null },
      { schema: 's', table: 'parts', state: 'copying', bytes: 1024, error: null },
    ],
    error: null,
    created_by: null,
    created_at: '2026-03-02T10:00:00Z',
    started_at: '2026-03-02T10:00:01Z',
    finished_at: null,
    retain_until: null,
    ...extra,
  };
}

let calls: Asked[] = [];
function serve(routes: Record<string, Route>) {
  calls = standInApi(byRoute(routes), { postStatus: 202 });
}

const root = testRoot();

async function settle() {
  for (let i = 0; i < 5; i++) await act(async () => new Promise((r) => setTimeout(r, 0)));
}

async function mount() {
  const host = await root.mount(<MigrationsScreen />);
  await settle();
  return host;
}

const texts = (host: Element, selector: string) => [...host.querySelectorAll(selector)].map((e) => e.textContent);

describe('Admin → Migrations', () => {
  it('shows each catalog’s migrations, the selected one’s tables and log, and cancels it before the cutover', async () => {
    let status = 'running';
    serve({
      'GET /api/catalogs': () => catalogs,
      'GET /api/admin/storage-backends': () => backends,
      'GET /api/catalogs/c1/migrations': () => ({ items: [migration('m1', 'c1', { status, phase: status === 'cancelled' ? 'cancelled' : 'copying' })], cursor: null, has_more: false }),
      'GET /api/catalogs/c2/migrations': () => ({ items: [migration('m0', 'c2', { status: 'completed', phase: 'completed', created_at: '2026-02-01T10:00:00Z', bytes_copied: 4096, tables_done: 2, retain_until: '2026-02-08T10:00:00Z' })], cursor: null, has_more: false }),
      'GET /api/catalogs/c1/migrations/m1/logs': (_b, url) =>
        url.searchParams.get('after') === '0'
          ? [
              { seq: 1, at: '2026-03-02T10:00:01Z', level: 'info', message: 'copy started', table: null },
              { seq: 2, at: '2026-03-02T10:00:02Z', level: 'info', message: 'data copied: 3 file(s) written', table: 's.events' },
            ]
          : [],
      'POST /api/catalogs/c1/migrations/m1/cancel': () => {
        status = 'cancelled';
        return migration('m1', 'c1', { status, phase: 'cancelled' });
      },
    });
    const host = await mount();
    const rows = [...host.querySelectorAll('table[aria-label="Storage migrations"] tbody tr')];
    expect(rows.map((r) => [...r.querySelectorAll('td')].slice(0, 5).map((td) => td.textContent))).toEqual([
      ['sales', 'bundled', 'lake', 'running', 'copying'],
      ['ops', 'bundled', 'lake', 'completed', 'completed'],
    ]);
    expect(rows[0].textContent).toContain('25%');
    expect(texts(host, 'table[aria-label="Tables"] tbody tr')).toEqual(['s.eventscopied3.0 KiB', 's.partscopying1.0 KiB']);
    expect(texts(host, 'table[aria-label="Migration log"] tbody tr td:last-child')).toEqual(['copy started', 'data copied: 3 file(s) written']);
    const cancel = [...host.querySelectorAll('button')].find((b) => b.textContent === 'Cancel migration')!;
    await act(async () => cancel.click());
    await settle();
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/catalogs/c1/migrations/m1/cancel')).toBe(true);
    expect(texts(host, 'table[aria-label="Storage migrations"] tbody tr td:nth-child(4)')).toEqual(['cancelled', 'completed']);
    expect([...host.querySelectorAll('button')].some((b) => b.textContent === 'Cancel migration')).toBe(false);
  });

  it('starts a migration of a catalog to another backend', async () => {
    serve({
      'GET /api/catalogs': () => catalogs,
      'GET /api/admin/storage-backends': () => backends,
      'GET /api/catalogs/c1/migrations': () => ({ items: [], cursor: null, has_more: false }),
      'GET /api/catalogs/c2/migrations': () => ({ items: [], cursor: null, has_more: false }),
      'POST /api/catalogs/c1/migrations': (body) => migration('m9', 'c1', { status: 'pending', phase: 'pending', target_storage_backend_id: body.target_storage_backend_id }),
    });
    const host = await mount();
    expect(host.textContent).toContain('No catalog has been migrated yet.');
    const [catalog, target] = [...host.querySelectorAll('form[aria-label="Migrate a catalog"] select')] as HTMLSelectElement[];
    const choose = async (select: HTMLSelectElement, value: string) => {
      await act(async () => {
        const setter = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value')!.set!;
        setter.call(select, value);
        select.dispatchEvent(new Event('change', { bubbles: true }));
      });
    };
    await choose(catalog, 'c1');
    // the backend the catalog is on is not offered
    expect([...target.querySelectorAll('option')].map((o) => o.value)).toEqual(['', 'b2']);
    await choose(target, 'b2');
    await act(async () => (host.querySelector('form[aria-label="Migrate a catalog"] button') as HTMLButtonElement).click());
    await settle();
    expect(calls.find((c) => c.method === 'POST')).toMatchObject({ path: '/api/catalogs/c1/migrations', body: { target_storage_backend_id: 'b2' } });
  });
});
