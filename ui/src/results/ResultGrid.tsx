// The result grid: a virtualized table over a row source. Only the rows on screen (plus a margin) exist in the DOM,
// and only their pages are fetched. Rows have one fixed height, so rows arriving never move anything on screen.
// Numbers are right-aligned with digit grouping; a value wider than its cell carries the whole of it as a tooltip.
// Columns sort (header click), filter (the box under each header), resize (drag the header's edge, or its arrow
// keys; double-click fits the values on screen); cells and ranges are selected with the mouse (click, shift+click,
// drag) or the keyboard (arrows, shift+arrows, Ctrl+A) and copied as tab-separated text with a header row of the
// column names (Ctrl/Cmd+C; a single cell is its value alone; Ctrl/Cmd+Shift+C leaves the header out); Enter or a
// double-click opens a value whole.
import { useEffect, useMemo, useReducer, useRef, useState, type KeyboardEvent, type PointerEvent as ReactPointerEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { ColumnSchema } from '../api/types.ts';
import { formatCount } from '../components/format.ts';
import { columnKind, formatCell, initialWidth, rawText, type ColumnKind } from './cells.ts';
import type { Row, RowSource } from './rowSource.ts';
import type { SortBy } from './resultView.ts';
import { SummaryView } from './SummaryView.tsx';
import type { ColumnSummary } from './summary.ts';
import { ValueViewer } from './ValueViewer.tsx';

export const ROW_HEIGHT = 24;
const OVERSCAN = 20;
const CHAR = 7.8; // the grid's 12.5 px monospace, rounded up
const PAD = 18; // a cell's padding and border
const MIN_WIDTH = 48;
/** rows copied at most in one go */
const COPY_LIMIT = 10_000;

interface Cell {
  r: number;
  c: number;
}
interface Selection {
  anchor: Cell;
  focus: Cell;
}

const rangeOf = (s: Selection) => ({
  r1: Math.min(s.anchor.r, s.focus.r),
  r2: Math.max(s.anchor.r, s.focus.r),
  c1: Math.min(s.anchor.c, s.focus.c),
  c2: Math.max(s.anchor.c, s.focus.c),
});

/** One field of tab-separated text, quoted the way spreadsheets read it when it holds a tab, newline or quote. */
const tsvField = (v: unknown) => {
  const s = rawText(v);
  return /[\t\n\r"]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function ResultGrid(props: {
  source: RowSource;
  columns: ColumnSchema[];
  height?: number;
  sort?: SortBy | null;
  onSort?: (column: string) => void;
  /** a column filter's text by column name, and where a change goes (no filter row without it) */
  filters?: Record<string, string>;
  onFilter?: (column: string, text: string) => void;
  /** says what happened (copied, …) in the result's status line */
  onNotice?: (text: string) => void;
  /** column summaries shown under each header (in the order of `columns`) */
  summaries?: ColumnSummary[] | null;
}) {
  const { source, columns } = props;
  const scrollRef = useRef<HTMLDivElement>(null);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => source.subscribe(rerender), [source]);

  const total = source.total ?? 0;
  const kinds: ColumnKind[] = useMemo(() => columns.map((c) => columnKind(c.type)), [columns]);
  // Widths from the header, the type and the first page's values, fixed once those rows are here; a column the
  // user resized keeps its width.
  const firstLoaded = source.row(0) !== undefined;
  const initial = useMemo(() => {
    const sample = firstLoaded ? Array.from({ length: Math.min(50, total) }, (_, i) => source.row(i)).filter(Boolean) : [];
    return columns.map((c, i) => initialWidth(c.name, c.type, sample.map((r) => formatCell(r![c.name], kinds[i]))));
  }, [columns, kinds, source, firstLoaded, total]);
  const [resized, setResized] = useState<Record<number, number>>({});
  const widths = initial.map((w, i) => resized[i] ?? w);
  // The row-number gutter is as wide as the last row's number (1,000,000 needs nine characters).
  const gutter = Math.ceil(Math.max(2, formatCount(total).length) * CHAR) + PAD;
  const template = `${gutter}px ${widths.map((w) => `${w}px`).join(' ')}`;
  const totalWidth = gutter + widths.reduce((a, b) => a + b, 0);

  // The sticky header sits above the rows inside the scroll box: the rows start below it.
  const headerRef = useRef<HTMLDivElement>(null);
  const [headerHeight, setHeaderHeight] = useState(0);
  useEffect(() => setHeaderHeight(headerRef.current?.offsetHeight ?? 0), [columns, props.summaries]);
  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    scrollMargin: headerHeight,
  });
  const items = virtualizer.getVirtualItems();
  const first = items.length ? items[0].index : 0;
  const last = items.length ? items[items.length - 1].index : 0;

  useEffect(() => {
    if (source.total === null || total > 0) source.ensure(first, last);
  }, [source, first, last, total]);

  // ---- selection ----
  const [sel, setSel] = useState<Selection | null>(null);
  const [viewing, setViewing] = useState<Cell | null>(null);
  const dragging = useRef(false);
  useEffect(() => {
    const up = () => (dragging.current = false);
    window.addEventListener('pointerup', up);
    return () => window.removeEventListener('pointerup', up);
  }, []);
  const range = sel ? rangeOf(sel) : null;
  const inRange = (r: number, c: number) => !!range && r >= range.r1 && r <= range.r2 && c >= range.c1 && c <= range.c2;

  const reveal = (cell: Cell) => {
    virtualizer.scrollToIndex(cell.r, { align: 'auto' });
    const el = scrollRef.current;
    if (!el) return;
    const left = gutter + widths.slice(0, cell.c).reduce((a, b) => a + b, 0);
    const right = left + widths[cell.c];
    if (left - gutter < el.scrollLeft) el.scrollLeft = left - gutter;
    else if (right > el.scrollLeft + el.clientWidth) el.scrollLeft = right - el.clientWidth;
  };

  /** Copies the selection as tab-separated text; `header` puts the column names first (not for a single cell). */
  const copy = async (wantHeader = true) => {
    if (!range) return;
    const header = wantHeader && (range.r1 !== range.r2 || range.c1 !== range.c2);
    const r2 = Math.min(range.r2, range.r1 + COPY_LIMIT - 1);
    const rows: Row[] = await source.rows(range.r1, r2);
    const names = columns.slice(range.c1, range.c2 + 1).map((c) => c.name);
    const lines = rows.map((row) => names.map((n) => tsvField(row[n])).join('\t'));
    const text = (header ? [names.map((n) => tsvField(n)).join('\t'), ...lines] : lines).join('\n');
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // no clipboard permission: the browser's copy command with a hidden text box
      const area = document.createElement('textarea');
      area.value = text;
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      document.execCommand('copy');
      area.remove();
      scrollRef.current?.focus();
    }
    const cells = `${formatCount(rows.length)} × ${names.length}`;
    const withHeader = header ? ' with a header row' : '';
    props.onNotice?.(r2 < range.r2 ? `Copied the first ${formatCount(COPY_LIMIT)} rows (${cells} cells)${withHeader}` : `Copied ${cells} cells${withHeader}`);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if ((e.target as HTMLElement).closest('.col-resize, .col-filter, dialog')) return;
    const mod = e.ctrlKey || e.metaKey;
    if (mod && e.key.toLowerCase() === 'c') {
      e.preventDefault();
      void copy(!e.shiftKey);
      return;
    }
    if (mod && e.key.toLowerCase() === 'a') {
      e.preventDefault();
      setSel({ anchor: { r: 0, c: 0 }, focus: { r: Math.max(0, total - 1), c: columns.length - 1 } });
      return;
    }
    if (e.key === 'Escape') {
      setSel(null);
      return;
    }
    if (e.key === 'Enter' && sel) {
      e.preventDefault();
      setViewing(sel.focus);
      return;
    }
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 240) / ROW_HEIGHT) - 2);
    const moves: Record<string, (c: Cell) => Cell> = {
      ArrowUp: (c) => ({ ...c, r: c.r - 1 }),
      ArrowDown: (c) => ({ ...c, r: c.r + 1 }),
      ArrowLeft: (c) => ({ ...c, c: c.c - 1 }),
      ArrowRight: (c) => ({ ...c, c: c.c + 1 }),
      PageUp: (c) => ({ ...c, r: c.r - page }),
      PageDown: (c) => ({ ...c, r: c.r + page }),
      Home: (c) => (mod ? { r: 0, c: 0 } : { ...c, c: 0 }),
      End: (c) => (mod ? { r: total - 1, c: columns.length - 1 } : { ...c, c: columns.length - 1 }),
    };
    const move = moves[e.key];
    if (!move || !total) return;
    e.preventDefault();
    const from = sel?.focus ?? { r: first, c: 0 };
    const moved = move(from);
    const to = { r: Math.max(0, Math.min(total - 1, moved.r)), c: Math.max(0, Math.min(columns.length - 1, moved.c)) };
    setSel(e.shiftKey && sel ? { anchor: sel.anchor, focus: to } : { anchor: to, focus: to });
    reveal(to);
  };

  const pick = (e: ReactPointerEvent, cell: Cell) => {
    if (e.button !== 0) return;
    scrollRef.current?.focus({ preventScroll: true });
    dragging.current = true;
    setSel((s) => (e.shiftKey && s ? { anchor: s.anchor, focus: cell } : { anchor: cell, focus: cell }));
  };

  // ---- resizing ----
  const startResize = (e: ReactPointerEvent<HTMLDivElement>, i: number) => {
    e.preventDefault();
    e.stopPropagation();
    const x0 = e.clientX;
    const w0 = widths[i];
    const handle = e.currentTarget;
    handle.setPointerCapture(e.pointerId);
    const move = (ev: PointerEvent) => setResized((r) => ({ ...r, [i]: Math.max(MIN_WIDTH, Math.round(w0 + ev.clientX - x0)) }));
    const done = () => {
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', done);
      handle.removeEventListener('pointercancel', done);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', done);
    handle.addEventListener('pointercancel', done);
  };
  const fit = (i: number) => {
    let chars = columns[i].name.length + 2;
    for (let r = first; r <= last; r++) {
      const row = source.row(r);
      if (row) chars = Math.max(chars, formatCell(row[columns[i].name], kinds[i]).length);
    }
    setResized((r) => ({ ...r, [i]: Math.min(900, Math.ceil(chars * CHAR) + PAD) }));
  };

  const viewed = viewing ? source.row(viewing.r) : undefined;
  return (
    <>
      <div
        ref={scrollRef}
        className="grid-viewport"
        role="grid"
        aria-rowcount={total + 1}
        aria-colcount={columns.length}
        aria-multiselectable="true"
        aria-label="Query results"
        tabIndex={0}
        onKeyDown={onKeyDown}
        style={{ height: props.height ?? '100%' }}
      >
        <div ref={headerRef} className="grid-header" role="row" style={{ gridTemplateColumns: template, width: totalWidth }}>
          <div className="grid-cell grid-rownum" role="columnheader">
            #
          </div>
          {columns.map((c, i) => {
            const sorted = props.sort?.column === c.name ? props.sort.dir : null;
            return (
              <div
                key={c.name}
                className={kinds[i] === 'number' ? 'grid-cell num' : 'grid-cell'}
                role="columnheader"
                aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
                title={`${c.name} ${c.type}${props.onSort ? ' · click to sort' : ''}`}
                onClick={props.onSort ? () => props.onSort!(c.name) : undefined}
              >
                <span className="col-name">
                  {c.name}
                  {sorted ? <span className="sort-mark">{sorted === 'asc' ? ' ▲' : ' ▼'}</span> : null}
                </span>
                <span className="col-type">{c.type}</span>
                {props.onFilter ? (
                  <input
                    className="col-filter"
                    type="text"
                    aria-label={`Filter ${c.name}`}
                    placeholder={kinds[i] === 'text' || kinds[i] === 'nested' ? 'contains…' : '= > < null…'}
                    title="Contains (text) or equals (numbers, times); or > 5, <= 2024-01-01, != x, null, !null"
                    value={props.filters?.[c.name] ?? ''}
                    onClick={(e) => e.stopPropagation()}
                    onPointerDown={(e) => e.stopPropagation()}
                    onChange={(e) => props.onFilter!(c.name, e.target.value)}
                    onKeyDown={(e) => {
                      if (e.key === 'Escape') props.onFilter!(c.name, '');
                    }}
                  />
                ) : null}
                {props.summaries?.[i] ? <SummaryView summary={props.summaries[i]} /> : null}
                <div
                  className="col-resize"
                  role="separator"
                  aria-orientation="vertical"
                  aria-label={`Resize ${c.name}`}
                  aria-valuenow={widths[i]}
                  tabIndex={-1}
                  onClick={(e) => e.stopPropagation()}
                  onDoubleClick={(e) => {
                    e.stopPropagation();
                    fit(i);
                  }}
                  onPointerDown={(e) => startResize(e, i)}
                  onKeyDown={(e) => {
                    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
                    e.preventDefault();
                    setResized((r) => ({ ...r, [i]: Math.max(MIN_WIDTH, widths[i] + (e.key === 'ArrowRight' ? 16 : -16)) }));
                  }}
                />
              </div>
            );
          })}
        </div>
        <div style={{ height: virtualizer.getTotalSize(), width: totalWidth, position: 'relative' }}>
          {items.map((item) => {
            const row = source.row(item.index);
            const r = item.index;
            return (
              <div
                key={item.key}
                role="row"
                aria-rowindex={r + 2}
                className={row ? 'grid-row' : 'grid-row loading'}
                style={{ gridTemplateColumns: template, transform: `translateY(${item.start - headerHeight}px)`, height: ROW_HEIGHT }}
              >
                <div
                  className="grid-cell grid-rownum"
                  role="rowheader"
                  onPointerDown={(e) => {
                    if (e.button !== 0) return;
                    scrollRef.current?.focus({ preventScroll: true });
                    setSel((s) => (e.shiftKey && s ? { anchor: { r: s.anchor.r, c: 0 }, focus: { r, c: columns.length - 1 } } : { anchor: { r, c: 0 }, focus: { r, c: columns.length - 1 } }));
                  }}
                >
                  {formatCount(r + 1)}
                </div>
                {columns.map((c, i) => {
                  const v = row?.[c.name];
                  const text = row ? formatCell(v, kinds[i]) : '';
                  const cut = text.length * CHAR + PAD > widths[i];
                  const selected = inRange(r, i);
                  const focused = sel?.focus.r === r && sel.focus.c === i;
                  return (
                    <div
                      key={c.name}
                      role="gridcell"
                      aria-selected={selected || undefined}
                      className={`grid-cell${v === null ? ' null' : ''}${kinds[i] === 'number' ? ' num' : ''}${selected ? ' selected' : ''}${focused ? ' focused' : ''}`}
                      title={cut ? text : undefined}
                      onPointerDown={(e) => pick(e, { r, c: i })}
                      onPointerEnter={() => dragging.current && setSel((s) => (s ? { anchor: s.anchor, focus: { r, c: i } } : s))}
                      onDoubleClick={() => setViewing({ r, c: i })}
                    >
                      {text}
                    </div>
                  );
                })}
              </div>
            );
          })}
        </div>
      </div>
      {viewing && viewed ? (
        <ValueViewer
          column={columns[viewing.c]}
          row={viewing.r}
          value={viewed[columns[viewing.c].name]}
          onClose={() => {
            setViewing(null);
            scrollRef.current?.focus({ preventScroll: true });
          }}
        />
      ) : null}
    </>
  );
}
