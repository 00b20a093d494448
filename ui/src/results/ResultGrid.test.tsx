// @vitest-environment happy-dom
// The grid over a 1,000,000-row result: it fetches the first pages only, then as the user scrolls or jumps only the
// pages that come into view (each by its row offset, none between), and never renders more than a screen.
import { beforeAll, describe, expect, it } from 'vitest';
import { act } from 'react';
import { testRoot } from '../testing/testRoot.ts';
import { ResultGrid, ROW_HEIGHT } from './ResultGrid.tsx';
import { RowPager } from './rowPager.ts';
import { pagerSource } from './rowSource.ts';
import type { RowsPage } from '../api/types.ts';


const VIEWPORT = 480;
beforeAll(() => {
  // happy-dom does no layout: give the grid's scroll box the size a browser would.
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', {
    configurable: true,
    get() {
      return (this as HTMLElement).classList.contains('grid-viewport') ? VIEWPORT : 0;
    },
  });
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', {
    configurable: true,
    get() {
      return (this as HTMLElement).classList.contains('grid-viewport') ? 900 : 0;
    },
  });
});

/** Serves a result of `total` rows by row offset, as the rows endpoint does, recording each request. */
function millionRows(total = 1_000_000) {
  const requests: number[] = [];
  const fetchPage = async (offset: number, limit: number): Promise<RowsPage> => {
    requests.push(offset);
    const start = offset;
    const end = Math.min(total, start + limit);
    const rows = [];
    for (let i = start; i < end; i++) rows.push({ id: i, label: `row ${i}` });
    return {
      rows,
      columns: ['id', 'label'],
      column_schema: [
        { name: 'id', type: 'BIGINT' },
        { name: 'label', type: 'VARCHAR' },
      ],
      cursor: end < total ? btoa(String(end)) : null,
      total,
    };
  };
  return { fetchPage, requests };
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await act(async () => new Promise((r) => setTimeout(r, 5)));
};

const root = testRoot();

async function mount(pager: RowPager) {
  const columns = [
    { name: 'id', type: 'BIGINT' },
    { name: 'label', type: 'VARCHAR' },
  ];
  const host = await root.mount(<ResultGrid source={pagerSource(pager, async () => ({ rows: [] }))} columns={columns} height={VIEWPORT} />);
  await settle();
  return host.querySelector('.grid-viewport') as HTMLElement;
}

async function scrollTo(el: HTMLElement, top: number) {
  el.scrollTop = top;
  await act(async () => {
    el.dispatchEvent(new Event('scroll'));
  });
  await settle();
}

const renderedIds = (el: HTMLElement) =>
  [...el.querySelectorAll('.grid-row:not(.loading)')].map((r) => Number(r.querySelector('[role=gridcell]')!.textContent!.replace(/\D/g, '')));

describe('result grid paging', () => {
  it('shows the column types and loads only the first page of a 1,000,000-row result', async () => {
    const src = millionRows();
    const first = await src.fetchPage(0, 500);
    src.requests.length = 0;
    const pager = new RowPager(src.fetchPage, { pageSize: 500, firstPage: first });
    const el = await mount(pager);
    expect(el.querySelector('[role=columnheader] .col-type')?.textContent).toBe('BIGINT');
    expect(el.getAttribute('aria-rowcount')).toBe('1000001');
    expect(src.requests).toEqual([]); // the first page was handed over: nothing else is needed on screen
    const rows = el.querySelectorAll('.grid-row');
    expect(rows.length).toBeLessThan(80); // a screen and the overscan, not a million
    expect(renderedIds(el)[0]).toBe(0);
  });

  it('fetches pages as the user scrolls, only those on screen, and jumps without walking the pages between', async () => {
    const src = millionRows();
    const pager = new RowPager(src.fetchPage, { pageSize: 500, maxPages: 6 });
    const el = await mount(pager);
    expect(pager.fetched).toEqual([0]);

    await scrollTo(el, 1_400 * ROW_HEIGHT); // rows ~1400-1420: page 2
    expect(pager.fetched).toEqual([0, 2]);
    expect(renderedIds(el)).toContain(1_405);

    await scrollTo(el, 1_500 * ROW_HEIGHT); // still within page 2 and 3
    expect(pager.fetched).toEqual([0, 2, 3]);

    await scrollTo(el, 999_990 * ROW_HEIGHT); // the end: its last page only
    expect(pager.fetched.slice(3)).toEqual([1999]);
    expect(src.requests.at(-1)).toBe(999_500);
    expect(renderedIds(el)).toContain(999_999);

    await scrollTo(el, 10_000 * ROW_HEIGHT); // a jump back: pages 19 (the margin above) and 20, nothing between
    expect(pager.fetched.slice(4).sort()).toEqual([19, 20]);
    expect(renderedIds(el)).toContain(10_010);
    expect(pager.loadedPages.length).toBeLessThanOrEqual(6); // memory stays bounded

    const before = pager.fetched.length;
    await scrollTo(el, 1_450 * ROW_HEIGHT); // back up: evicted pages are fetched again, by their offsets
    expect(renderedIds(el)).toContain(1_460);
    const refetched = pager.fetched.slice(before);
    expect(refetched.every((p) => p === 2 || p === 3)).toBe(true);
    expect(src.requests.length).toBe(pager.fetched.length);
    expect(pager.fetched.length).toBeLessThan(12);
  });

  it('numbers the rows in a gutter as wide as the last number, and right-aligns grouped numbers', async () => {
    const src = millionRows();
    const pager = new RowPager(src.fetchPage, { pageSize: 500 });
    const el = await mount(pager);
    await scrollTo(el, 999_990 * ROW_HEIGHT);
    const lastRow = el.querySelector('[aria-rowindex="1000001"]')!;
    expect(lastRow.querySelector('.grid-rownum')!.textContent).toBe((1_000_000).toLocaleString());
    const gutter = Number(/^(\d+)px/.exec((lastRow as HTMLElement).style.gridTemplateColumns)![1]);
    expect(gutter).toBeGreaterThanOrEqual(9 * 7.5 + 16); // nine characters of 12.5 px monospace and the padding
    const idCell = lastRow.querySelector('[role=gridcell]')!;
    expect(idCell.classList.contains('num')).toBe(true);
    expect(idCell.textContent).toBe((999_999).toLocaleString());
  });

  it('stops at the end of the result', async () => {
    const src = millionRows(1_234);
    const pager = new RowPager(src.fetchPage, { pageSize: 500 });
    const el = await mount(pager);
    await scrollTo(el, 1_234 * ROW_HEIGHT);
    expect(pager.fetched).toEqual([0, 2]); // the last screen lies within the last page
    expect(renderedIds(el).at(-1)).toBe(1_233);
  });
});
