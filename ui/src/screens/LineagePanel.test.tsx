// @vitest-environment happy-dom
// The drawn lineage graph against a stand-in api that gives column detail only around the nodes asked about (as the
// api does): boxes left to right by hops from the table, edges as paths (dashed when stale), a redacted box without
// names, a click (or Enter) on a box asking for its columns and showing them, a click on an edge showing its.
import { describe, expect, it } from 'vitest';
import { act } from 'react';
import type { Lineage } from '../api/types.ts';
import { LineagePanel } from './LineagePanel.tsx';
import { depths, layoutLineage } from './lineageLayout.ts';
import { standInApi } from '../testing/standInApi.ts';
import { testRoot } from '../testing/testRoot.ts';


const T = '2026-11-20T08:30:00.000Z';
const provider = (name: string, stale = false, column_lineage = 'derived') => ({ provider: name, first_seen_at: T, last_seen_at: T, observation_count: 1, stale, column_lineage });
const table = (schema: string, name: string) => ({ key: `warehouse.${schema}.${name}`, kind: 'table' as const, catalog: 'warehouse', schema, table: name, column_count: 0 });

/** The graph around warehouse.lin.enriched, two hops each way, with each edge's column pairs. */
const NODES: Lineage['nodes'] = [
  { key: 'external:crm.accounts', kind: 'external', catalog: null, schema: null, table: null, column_count: 0 },
  { key: 'redacted:1', kind: 'redacted', catalog: null, schema: null, table: null, column_count: 0 },
  table('lin', 'enriched'),
  table('lin', 'raw'),
  table('lin', 'wide'),
];
const EDGES: Array<Lineage['edges'][number]> = [
  { source: 'external:crm.accounts', target: 'warehouse.lin.raw', providers: [provider('dbt', true)], observation_count: 1, first_seen_at: T, last_seen_at: T, stale: true, columns: [{ source_column: 'acct', target_column: 'id', providers: ['dbt'], stale: true }] },
  { source: 'redacted:1', target: 'warehouse.lin.enriched', providers: [provider('execution', false, 'derived')], observation_count: 1, first_seen_at: T, last_seen_at: T, stale: false, columns: [] },
  { source: 'warehouse.lin.enriched', target: 'warehouse.lin.wide', providers: [provider('execution')], observation_count: 2, first_seen_at: T, last_seen_at: T, stale: false, columns: [{ source_column: 'name', target_column: 'name_u', providers: ['execution'], stale: false }] },
  { source: 'warehouse.lin.raw', target: 'warehouse.lin.enriched', providers: [provider('execution')], observation_count: 1, first_seen_at: T, last_seen_at: T, stale: false, columns: [{ source_column: 'id', target_column: 'id', providers: ['execution'], stale: false }] },
];

/** Answers the lineage read, filling columns only for edges touching `columns_for` (none when not asked). */
function serve() {
  return standInApi(({ url }): Lineage => {
    const around = new Set(url.searchParams.getAll('columns_for'));
    const edges = EDGES.map((e) => ({ ...e, columns: around.has(e.source) || around.has(e.target) ? e.columns : [] }));
    return { nodes: NODES, edges, truncated: false, hidden: false, columns_truncated: false };
  });
}

const root = testRoot();

const settle = () =>
  act(async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  });

async function mount() {
  const host = await root.mount(<LineagePanel ws="default" catalog="warehouse" schema="lin" table="enriched" />);
  await settle();
  return host;
}

const box = (host: Element, key: string) => host.querySelector(`g[data-node="${key}"]`) as SVGGElement;
const xOf = (g: Element) => Number(/translate\(([-\d.]+),/.exec(g.getAttribute('transform')!)![1]);

describe('lineage layout', () => {
  it('places upstream left and downstream right of the table, by hops, whatever the edge order', () => {
    const d = depths(
      NODES.map((n) => n.key),
      [...EDGES].reverse(),
      'warehouse.lin.enriched',
    );
    expect(Object.fromEntries(d)).toEqual({
      'warehouse.lin.enriched': 0,
      'warehouse.lin.raw': -1,
      'redacted:1': -1,
      'external:crm.accounts': -2,
      'warehouse.lin.wide': 1,
    });
    const l = layoutLineage(NODES, EDGES, 'warehouse.lin.enriched');
    expect(l.edges).toHaveLength(4);
    // Every edge here runs left to right: it starts at its source's right side and ends at its target's left.
    for (const e of l.edges) {
      const [sx, tx] = [/^M([\d.]+),/.exec(e.d)![1], / ([\d.]+),[\d.]+$/.exec(e.d)![1]].map(Number);
      expect(sx).toBeLessThan(tx);
    }
  });
});

describe('Lineage panel', () => {
  it('draws boxes by depth and edges as paths, dashed when stale, a redacted box without names', async () => {
    serve();
    const host = await mount();
    const svg = host.querySelector('svg[aria-label="Lineage graph"]')!;
    expect(svg).not.toBeNull();
    expect([...svg.querySelectorAll('g[data-node]')].map((g) => g.getAttribute('data-node')).sort()).toEqual(NODES.map((n) => n.key).sort());
    const [ext, raw, red, self, wide] = ['external:crm.accounts', 'warehouse.lin.raw', 'redacted:1', 'warehouse.lin.enriched', 'warehouse.lin.wide'].map((k) => xOf(box(host, k)));
    expect(ext).toBeLessThan(raw);
    expect(raw).toBe(red);
    expect(raw).toBeLessThan(self);
    expect(self).toBeLessThan(wide);
    expect(svg.querySelectorAll('g[data-edge]')).toHaveLength(4);
    const dashed = (id: string) => [...svg.querySelector(`g[data-edge="${id}"]`)!.querySelectorAll('path')].some((p) => p.getAttribute('stroke-dasharray'));
    expect(dashed('external:crm.accounts>warehouse.lin.raw')).toBe(true);
    expect(dashed('warehouse.lin.raw>warehouse.lin.enriched')).toBe(false);
    expect(box(host, 'redacted:1').textContent).toContain('hidden table');
    expect(box(host, 'warehouse.lin.enriched').getAttribute('aria-label')).toContain('(this table)');
  });

  it('a click on a box asks for its columns and shows where they come from and go', async () => {
    const asked = serve();
    const host = await mount();
    expect(asked[0].url.searchParams.getAll('columns_for')).toEqual([]);
    await act(async () => box(host, 'warehouse.lin.raw').dispatchEvent(new MouseEvent('click', { bubbles: true })));
    await settle();
    expect(asked.at(-1)!.url.searchParams.getAll('columns_for')).toEqual(['warehouse.lin.raw']);
    const detail = host.querySelector('[aria-label="Node detail"]')!;
    expect(detail.querySelector('ul[aria-label="Columns in"]')!.textContent).toContain('id ← external:crm.accounts.acct');
    expect(detail.querySelector('ul[aria-label="Columns out"]')!.textContent).toContain('id → warehouse.lin.enriched.id');
    expect(box(host, 'warehouse.lin.raw').getAttribute('aria-pressed')).toBe('true');

    // The keyboard does what the mouse does.
    await act(async () => box(host, 'warehouse.lin.enriched').dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })));
    await settle();
    expect(asked.at(-1)!.url.searchParams.getAll('columns_for')).toEqual(['warehouse.lin.enriched']);
    const self = host.querySelector('[aria-label="Node detail"]')!.textContent!;
    expect(self).toContain('name → warehouse.lin.wide.name_u');
    expect(self).toContain('redacted:1: no column detail: execution derived');

    // A redacted box tells nothing.
    await act(async () => box(host, 'redacted:1').dispatchEvent(new MouseEvent('click', { bubbles: true })));
    await settle();
    expect(host.querySelector('[aria-label="Node detail"]')!.textContent).toContain('A table you cannot read');
  });

  it('a click on an edge shows its producers and columns', async () => {
    serve();
    const host = await mount();
    const edge = host.querySelector('g[data-edge="external:crm.accounts>warehouse.lin.raw"]')!;
    await act(async () => edge.dispatchEvent(new MouseEvent('click', { bubbles: true })));
    await settle();
    const detail = host.querySelector('[aria-label="Edge detail"]')!.textContent!;
    expect(detail).toContain('external:crm.accounts → warehouse.lin.raw');
    expect(detail).toContain('dbt: 1 seen');
    expect(detail).toContain('(stale)');
    expect(detail).toContain('acct → id');
  });
});
