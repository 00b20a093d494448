// @vitest-environment happy-dom
// The web app's side of table maintenance against a stand-in api: the Lakehouse health page (tables by score, the
// recommendations by status), what administrators and members may do (apply, dismiss, scan, policy), an apply
// followed to its query's end, and the table page's health panel (bars, figures, "not scanned yet" on 404).
import { describe, expect, it } from 'vitest';
import { act } from 'react';
import type { ReactNode } from 'react';
import type { Agent, ComputeOption, QueryOut, Recommendation, ScanReport, TableHealth, TableHealthRow, User } from '../api/types.ts';
import { SessionContext } from '../app/session.tsx';
import { HealthScreen } from './HealthScreen.tsx';
import { TableHealthPanel } from './TableHealthPanel.tsx';
import { byRoute, standInApi, type Route as Handler } from '../testing/standInApi.ts';
import { testRoot } from '../testing/testRoot.ts';


const admin = { id: 'u1', email: 'a@example.com', name: 'Ada', role: 'admin', auth_provider: 'local', is_active: true, permissions: [], created_at: '2026-01-01T00:00:00Z' } as User;
const member = { ...admin, id: 'u2', role: 'member', permissions: [] } as User;

const TABLES: TableHealthRow[] = [
  { catalog: 'warehouse', schema: 'mnt', table: 'events', score: 43, grade: 'D', open: 3, scanned_at: '2026-03-01T10:00:00Z' },
  { catalog: 'warehouse', schema: 'shop', table: 'products', score: 100, grade: 'A', open: 0, scanned_at: '2026-03-01T10:00:00Z' },
];

function rec(id: string, kind: Recommendation['kind'], extra: Partial<Recommendation> = {}): Recommendation {
  return {
    id,
    catalog_id: 'c1',
    catalog: 'warehouse',
    schema: 'mnt',
    table: 'events',
    kind,
    severity: 'warning',
    status: 'open',
    rationale: `why ${kind}`,
    estimated_impact: {},
    remediation_sql: kind === 'investigate_growth' ? null : `CALL system.${kind}(table => 'warehouse.mnt.events')`,
    applied_query_id: null,
    created_at: '2026-03-01T10:00:00Z',
    updated_at: '2026-03-01T10:00:00Z',
    ...extra,
  };
}

const compact = rec('r1', 'compact_small_files', {
  severity: 'critical',
  rationale: '25 of 25 data files (100%) are smaller than 64.0 MiB',
  estimated_impact: { data_files_before: 25, data_files_after: 1, small_files: 25, rewritten_bytes: 3 * 1024 * 1024 },
  remediation_sql: "CALL system.rewrite_data_files(table => 'warehouse.mnt.events', target_file_size_bytes => 134217728)",
});
const manifests = rec('r2', 'rewrite_manifests');
const growth = rec('r3', 'investigate_growth');

function agent(id: string): Agent {
  return { id, name: `agent-${id}`, status: 'healthy', version: null, capabilities: {}, access_tier: 'admin', access_mode: 'open', owner_url: null, connection_id: null, connected_at: null, last_heartbeat_at: null, elastic: null };
}
const sizes: ComputeOption[] = [{ size: 'small', cpu: 0.5, memory_gb: 1, hourly_cost: null, currency: 'USD' }];

function query(id: string, status: string, extra: Partial<QueryOut> = {}): QueryOut {
  return { id, status, agent_id: 'a1', sql: 'CALL …', error: null, error_code: null, duration_ms: null, ...extra } as QueryOut;
}

/** A stand-in api: answers by method and path (the query string is the handler's to read), recording every request. */
const serve = (routes: Record<string, Handler>) => standInApi(byRoute(routes));

const page = (items: Recommendation[]) => ({ items, cursor: null, has_more: false });
const error = (status: number, code: string, message: string) => new Response(JSON.stringify({ error: code, message }), { status });

/** The page's usual answers; `recs` filters by the statuses asked for, as the server does. */
function healthApi(recs: Recommendation[], more: Record<string, Handler> = {}) {
  return serve({
    'GET /api/workspaces/default/maintenance/health': () => TABLES,
    'GET /api/maintenance/recommendations': (_b, url) => {
      const statuses = url.searchParams.getAll('status');
      return page(recs.filter((r) => !statuses.length || statuses.includes(r.status)));
    },
    'GET /api/admin/maintenance/policy': () => ({ cadence: 'daily', profile: 'balanced', updated_at: '2026-03-01T09:00:00Z', last_scan_at: null, last_deep_scan_at: null }),
    'GET /api/agents': () => [agent('a1')],
    'GET /api/admin/agents/compute-options': () => [],
    ...more,
  });
}

const root = testRoot();

/** Lets the stand-in's answers (and what they trigger) land. */
async function settle() {
  for (let i = 0; i < 4; i++) await act(async () => new Promise((r) => setTimeout(r, 0)));
}

async function mount(node: ReactNode, user: User = admin) {
  const host = await root.mount(<SessionContext.Provider value={{ user, workspaces: [], refresh: async () => {}, signOut: async () => {} }}>{node}</SessionContext.Provider>);
  await settle();
  return host;
}

const buttons = (el: Element) => [...el.querySelectorAll('button')].map((b) => b.textContent);
const button = (el: Element, label: string) => [...el.querySelectorAll('button')].find((b) => b.textContent === label) as HTMLButtonElement;
const card = (host: Element, kind: string) => host.querySelector(`article[data-kind="${kind}"]`)!;
const click = async (b: HTMLElement) => {
  await act(async () => b.click());
  await settle();
};

describe('Lakehouse health page', () => {
  it('lists the tables by score and the open recommendations with their impact and statement', async () => {
    const calls = healthApi([compact, manifests, growth, rec('r9', 'expire_snapshots', { status: 'dismissed' })]);
    const host = await mount(<HealthScreen ws="default" />);
    const rows = [...host.querySelectorAll('table[aria-label="Tables by health"] tbody tr')];
    expect(rows.map((r) => [...r.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent))).toEqual([
      ['D', '43', 'warehouse.mnt.events', '3'],
      ['A', '100', 'warehouse.shop.products', '0'],
    ]);
    expect(rows[0].querySelector('.grade')!.className).toBe('grade grade-D');
    expect(rows[0].querySelector('a')!.getAttribute('href')).toBe('/w/default/catalog/warehouse/mnt/events');

    const asked = calls.find((c) => c.path === '/api/maintenance/recommendations')!.url.searchParams;
    expect(asked.get('workspace')).toBe('default');
    expect(asked.getAll('status')).toEqual(['open']);
    const cards = [...host.querySelectorAll('article')];
    expect(cards.map((c) => c.getAttribute('aria-label'))).toEqual([
      'Compact small files: warehouse.mnt.events',
      'Rewrite manifests: warehouse.mnt.events',
      'Investigate growth: warehouse.mnt.events',
    ]);
    const c = card(host, 'compact_small_files');
    expect(c.querySelector('.pill')!.textContent).toBe('critical');
    expect(c.textContent).toContain('25 of 25 data files (100%) are smaller than 64.0 MiB');
    const impact = [...c.querySelectorAll('dl[aria-label="Estimated impact"] > *')].map((e) => e.textContent);
    expect(impact).toEqual(['Data files before', '25', 'Data files after', '1', 'Small files', '25', 'Rewritten bytes', '3.0 MiB']);
    expect(c.querySelector('pre')!.textContent).toBe(compact.remediation_sql);
    // Investigate growth has nothing to run: no statement, no worksheet, no apply.
    const g = card(host, 'investigate_growth');
    expect(g.querySelector('pre')).toBeNull();
    expect(buttons(g)).not.toContain('Open in worksheet');

    // Open in worksheet: a new worksheet tab holds the statement.
    await click(button(c, 'Open in worksheet'));
    expect(location.pathname).toBe('/w/default/worksheets');
    expect(JSON.stringify(localStorage)).toContain('rewrite_data_files');

    // Another status: asked again, with both.
    const dismissed = [...host.querySelectorAll('fieldset input[type=checkbox]')][1] as HTMLInputElement;
    await click(dismissed);
    const last = calls.filter((x) => x.path === '/api/maintenance/recommendations').at(-1)!.url.searchParams;
    expect(last.getAll('status')).toEqual(['open', 'dismissed']);
    expect(host.querySelectorAll('article').length).toBe(4);
  });

  it('gives administrators apply, dismiss and the scanner; members read only', async () => {
    healthApi([compact, growth]);
    const host = await mount(<HealthScreen ws="default" />);
    expect(buttons(card(host, 'compact_small_files'))).toEqual(['Open in worksheet', 'Apply', 'Dismiss']);
    expect(buttons(card(host, 'investigate_growth'))).toEqual(['Dismiss']);
    expect(host.querySelector('section[aria-label="Scanner"]')).not.toBeNull();
    expect((host.querySelector('select[aria-label="Profile"]') as HTMLSelectElement).value).toBe('balanced');
    expect(host.querySelector('select[aria-label="Agent"]')).not.toBeNull();
    root.unmount();

    const calls = healthApi([compact, growth]);
    const other = await mount(<HealthScreen ws="default" />, member);
    expect(buttons(card(other, 'compact_small_files'))).toEqual(['Open in worksheet']);
    expect(buttons(card(other, 'investigate_growth'))).toEqual([]);
    expect(other.querySelector('section[aria-label="Scanner"]')).toBeNull();
    expect(other.querySelector('select[aria-label="Agent"]')).toBeNull();
    expect(calls.some((c) => c.path.startsWith('/api/admin/'))).toBe(false);
    expect(buttons(other)).not.toContain('Scan now');
  });

  it('applies on the chosen agent and follows the query until it is done', async () => {
    const recs = [compact, manifests];
    let release: (q: QueryOut) => void = () => {};
    const calls = healthApi(recs, {
      'POST /api/maintenance/recommendations/r1/apply': () => {
        recs[0] = { ...compact, status: 'applied', applied_query_id: 'q-apply-1' };
        return new Response(JSON.stringify(query('q-apply-1', 'running')), { status: 202 });
      },
      'GET /api/queries/q-apply-1': () => new Promise<QueryOut>((r) => (release = r)),
    });
    const host = await mount(<HealthScreen ws="default" />);
    expect((host.querySelector('select[aria-label="Agent"]') as HTMLSelectElement).value).toBe('a1');
    const listReads = () => calls.filter((c) => c.path === '/api/maintenance/recommendations').length;
    const before = listReads();
    await click(button(card(host, 'compact_small_files'), 'Apply'));
    expect(calls.find((c) => c.method === 'POST')).toMatchObject({ path: '/api/maintenance/recommendations/r1/apply', body: { workspace: 'default', agent_id: 'a1' } });
    const progress = () => host.querySelector('ul[aria-label="Applied recommendations"] li')!;
    expect(progress().querySelector('.pill')!.textContent).toBe('running');
    expect(progress().textContent).toContain('Compact small files on warehouse.mnt.events: query q-apply-');
    expect(progress().querySelector('a')!.getAttribute('href')).toBe('/inspect/query/q-apply-1');
    // The applied recommendation leaves the open list; its query is still followed.
    expect(listReads()).toBe(before + 1);
    expect(card(host, 'compact_small_files')).toBeNull();
    expect(calls.filter((c) => c.path === '/api/queries/q-apply-1')[0].url.searchParams.get('wait_timeout_s')).toBe('10');

    await act(async () => release(query('q-apply-1', 'done', { duration_ms: 1200 })));
    await settle();
    expect(progress().getAttribute('data-status')).toBe('done');
    expect(progress().querySelector('.pill')!.textContent).toBe('done');
    expect(listReads()).toBe(before + 2);
  });

  it('applies on the pool (no agent named) and shows a failed query and a refused apply', async () => {
    const calls = healthApi([compact, manifests], {
      'GET /api/agents': () => [],
      'GET /api/admin/agents/compute-options': () => sizes,
      'POST /api/maintenance/recommendations/r1/apply': () => new Response(JSON.stringify(query('q2', 'queued', { agent_id: null })), { status: 202 }),
      'GET /api/queries/q2': () => query('q2', 'failed', { error: 'commit conflict: retried 3 times', error_code: 'maintenance_conflict' }),
      'POST /api/maintenance/recommendations/r2/apply': () => error(503, 'no_compute', 'elastic compute could not start an agent'),
    });
    const host = await mount(<HealthScreen ws="default" />);
    expect((host.querySelector('select[aria-label="Agent"]') as HTMLSelectElement).value).toBe('pool');
    await click(button(card(host, 'compact_small_files'), 'Apply'));
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ workspace: 'default' });
    const li = host.querySelector('ul[aria-label="Applied recommendations"] li')!;
    expect(li.getAttribute('data-status')).toBe('failed');
    expect(li.querySelector('[role=alert]')!.textContent).toBe('Maintenance conflict commit conflict: retried 3 times maintenance_conflict');

    await click(button(card(host, 'rewrite_manifests'), 'Apply'));
    const alerts = [...host.querySelectorAll('[role=alert]')].map((a) => a.textContent);
    expect(alerts).toContain('No compute elastic compute could not start an agent no_compute');
  });

  it('dismisses a recommendation, which then leaves the open list', async () => {
    const recs = [compact, manifests];
    const calls = healthApi(recs, {
      'POST /api/maintenance/recommendations/r2/dismiss': () => (recs[1] = { ...manifests, status: 'dismissed' }),
    });
    const host = await mount(<HealthScreen ws="default" />);
    await click(button(card(host, 'rewrite_manifests'), 'Dismiss'));
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/maintenance/recommendations/r2/dismiss')).toBe(true);
    expect([...host.querySelectorAll('article')].map((a) => a.getAttribute('data-kind'))).toEqual(['compact_small_files']);
  });

  it('scans on demand and shows the report; saves the policy', async () => {
    const report: ScanReport = {
      scanned_at: '2026-03-01T10:00:00Z',
      deep: true,
      profile: 'aggressive',
      catalogs: 1,
      tables: 2,
      recommendations_opened: 3,
      recommendations_resolved: 1,
      errors: [{ catalog: 'warehouse', schema: 'bad', table: 'gone', message: 'metadata file missing' }],
      duration_ms: 250,
    };
    const calls = healthApi([], {
      'POST /api/admin/maintenance/scan': () => report,
      'PUT /api/admin/maintenance/policy': (b) => ({ cadence: 'daily', profile: 'balanced', updated_at: '2026-03-01T09:00:00Z', last_scan_at: null, last_deep_scan_at: null, ...b }),
    });
    const host = await mount(<HealthScreen ws="default" />);
    expect(host.textContent).toContain('No open recommendation.');
    const healthReads = () => calls.filter((c) => c.path.endsWith('/maintenance/health')).length;
    await click(button(host, 'Deep scan'));
    expect(calls.find((c) => c.path === '/api/admin/maintenance/scan')!.body).toEqual({ deep: true });
    const shown = host.querySelector('[aria-label="Scan report"]')!.textContent;
    expect(shown).toContain('Deep scan of 2 tables in 1 catalog (aggressive profile) took 250 ms: 3 recommendations opened, 1 resolved.');
    expect(shown).toContain('warehouse.bad.gone: metadata file missing');
    expect(healthReads()).toBe(2);

    const save = button(host, 'Save policy');
    expect(save.disabled).toBe(true);
    const profile = host.querySelector('select[aria-label="Profile"]') as HTMLSelectElement;
    await act(async () => {
      profile.value = 'aggressive';
      profile.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(save.disabled).toBe(false);
    await act(async () => (host.querySelector('form[aria-label="Maintenance policy"]') as HTMLFormElement).requestSubmit());
    await settle();
    expect(calls.find((c) => c.method === 'PUT')).toMatchObject({ path: '/api/admin/maintenance/policy', body: { cadence: 'daily', profile: 'aggressive' } });
  });
});

describe('table health panel', () => {
  const PATH = '/api/workspaces/default/catalogs/warehouse/schemas/mnt/tables/events/health';
  const panel = <TableHealthPanel ws="default" catalog="warehouse" schema="mnt" table="events" />;

  it('says "not scanned yet" when the table has no health', async () => {
    const calls = serve({ [`GET ${PATH}`]: () => error(404, 'not_found', 'table health (the table has not been scanned yet) not found') });
    const host = await mount(panel);
    expect(host.textContent).toContain('Not scanned yet');
    expect(host.querySelector('[role=alert]')).toBeNull();
    expect(calls.some((c) => c.path === '/api/maintenance/recommendations')).toBe(false);
  });

  it('shows grade, score, a bar per dimension, the figures and the table’s open recommendations', async () => {
    const health: TableHealth = {
      score: 43,
      grade: 'D',
      dimensions: { file_sizes: 13, snapshots: 73, manifests: 80, orphans: 100 },
      metrics: { data_files: 25, data_bytes: 25 * 1024, records: 25, small_files: 25, snapshots: 26, manifests: 25, orphan_files: 0 },
      scanned_at: '2026-03-01T10:00:00Z',
      deep_scanned_at: null,
    };
    const calls = healthApi([compact], { [`GET ${PATH}`]: () => health });
    const host = await mount(panel, member);
    expect(host.querySelector('.grade')!.textContent).toBe('D');
    expect(host.querySelector('.health-score')!.textContent).toBe('43 / 100');
    const bars = [...host.querySelectorAll('[role=meter]')].map((m) => [m.getAttribute('aria-label'), m.getAttribute('aria-valuenow'), m.className]);
    expect(bars).toEqual([
      ['File sizes', '13', 'health-bar bad'],
      ['Snapshots', '73', 'health-bar warn'],
      ['Manifests', '80', 'health-bar ok'],
      ['Orphan files', '100', 'health-bar ok'],
    ]);
    const facts = [...host.querySelectorAll('dl[aria-label="Health metrics"] > *')].map((e) => e.textContent);
    expect(facts.slice(0, 6)).toEqual(['Data files', '25', 'Small files', '25', 'Data size', '25.0 KiB']);
    const asked = calls.find((c) => c.path === '/api/maintenance/recommendations')!.url.searchParams;
    expect(Object.fromEntries(asked)).toMatchObject({ workspace: 'default', catalog: 'warehouse', schema: 'mnt', table: 'events', status: 'open' });
    expect(card(host, 'compact_small_files')).not.toBeNull();
    expect(buttons(card(host, 'compact_small_files'))).toEqual(['Open in worksheet']);
  });
});
