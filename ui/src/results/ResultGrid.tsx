// The result grid: a virtualized table over a RowPager. Only the rows on screen (plus a margin) exist in the DOM,
// and only their pages are fetched. Rows have one fixed height, so rows arriving never move anything on screen.
import { useEffect, useMemo, useReducer, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { ColumnSchema } from '../api/types.ts';
import type { RowPager } from './rowPager.ts';

export const ROW_HEIGHT = 24;
const OVERSCAN = 20;

function columnWidth(c: ColumnSchema): number {
  const chars = Math.max(c.name.length, c.type.length + 2, 6);
  return Math.min(360, Math.max(96, chars * 8 + 24));
}

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function ResultGrid(props: { pager: RowPager; columns: ColumnSchema[]; height?: number }) {
  const { pager, columns } = props;
  const scrollRef = useRef<HTMLDivElement>(null);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => pager.subscribe(rerender), [pager]);

  const total = pager.total ?? 0;
  const widths = useMemo(() => columns.map(columnWidth), [columns]);
  const template = `56px ${widths.map((w) => `${w}px`).join(' ')}`;
  const totalWidth = 56 + widths.reduce((a, b) => a + b, 0);

  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
  });
  const items = virtualizer.getVirtualItems();
  const first = items.length ? items[0].index : 0;
  const last = items.length ? items[items.length - 1].index : 0;

  useEffect(() => {
    if (pager.total === null || total > 0) pager.ensure(first, last);
  }, [pager, first, last, total]);

  return (
    <div
      ref={scrollRef}
      className="grid-viewport"
      role="grid"
      aria-rowcount={total + 1}
      aria-colcount={columns.length}
      aria-label="Query results"
      tabIndex={0}
      style={{ height: props.height ?? '100%' }}
    >
      <div className="grid-header" role="row" style={{ gridTemplateColumns: template, width: totalWidth }}>
        <div className="grid-cell grid-rownum" role="columnheader">
          #
        </div>
        {columns.map((c) => (
          <div key={c.name} className="grid-cell" role="columnheader" title={`${c.name} ${c.type}`}>
            <span className="col-name">{c.name}</span>
            <span className="col-type">{c.type}</span>
          </div>
        ))}
      </div>
      <div style={{ height: virtualizer.getTotalSize(), width: totalWidth, position: 'relative' }}>
        {items.map((item) => {
          const row = pager.row(item.index);
          return (
            <div
              key={item.key}
              role="row"
              aria-rowindex={item.index + 2}
              className={row ? 'grid-row' : 'grid-row loading'}
              style={{ gridTemplateColumns: template, transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
            >
              <div className="grid-cell grid-rownum">{item.index + 1}</div>
              {columns.map((c) => {
                const v = row?.[c.name];
                return (
                  <div key={c.name} role="gridcell" className={v === null ? 'grid-cell null' : 'grid-cell'}>
                    {row ? formatCell(v) : ''}
                  </div>
                );
              })}
            </div>
          );
        })}
      </div>
    </div>
  );
}
