// Quick charts of a result: bar (a value per category: the sum of a numeric column, or the count of rows), line and
// scatter (a numeric column against a numeric or time column), drawn as SVG from the rows held in the browser (the
// whole result up to HELD_LIMIT rows, else its first HELD_LIMIT, which the chart says).
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { ColumnSchema } from '../api/types.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { formatCount } from '../components/format.ts';
import { columnKind, formatCell } from './cells.ts';
import type { Row } from './rowSource.ts';

export type ChartKind = 'bar' | 'line' | 'scatter';
export const COUNT = '(count of rows)';
export const MAX_BARS = 40;
export const MAX_POINTS = 5000;
/** Series a "Colour by" column splits a line or scatter into: the most frequent values, the rest left out (said). */
export const MAX_SERIES = 8;
const NO_COLOUR = '(none)';

const W = 720;
const H = 320;
const M = { left: 70, right: 16, top: 12, bottom: 56 };

/** Column names that are identifiers, not measures: a sum of them means nothing. */
const ID_LIKE = /(^id$|_id$|^id_|Id$)/;

/** Round axis ticks (1, 2 or 5 times a power of ten apart) covering lo..hi. */
function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0];
  if (lo === hi) return [lo];
  const raw = (hi - lo) / Math.max(1, count - 1);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
  const first = Math.floor(lo / step) * step;
  const out: number[] = [];
  for (let v = first; v < hi + step * 0.999; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN);
/** A value as a position on an axis: numbers as they are, times as milliseconds. */
const pos = (v: unknown, time: boolean) => (time && typeof v === 'string' ? Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v) : num(v));
const short = (n: number) => (Math.abs(n) >= 1e6 || (Math.abs(n) < 1e-3 && n !== 0) ? n.toExponential(2) : Number(n.toPrecision(6)).toLocaleString());

export interface Bars {
  bars: Array<{ label: string; value: number }>;
  categories: number;
}

/** Bars: per distinct x, the sum of y (or the count of rows); the largest MAX_BARS, in x's order when x is numeric or a time. */
export function barData(rows: Row[], x: ColumnSchema, y: string): Bars {
  const sums = new Map<string, { key: unknown; value: number }>();
  const kind = columnKind(x.type);
  for (const r of rows) {
    const k = r[x.name];
    const label = formatCell(k, kind);
    const v = y === COUNT ? 1 : num(r[y]);
    if (Number.isNaN(v)) continue;
    const e = sums.get(label) ?? { key: k, value: 0 };
    e.value += v;
    sums.set(label, e);
  }
  let list = [...sums.entries()].map(([label, e]) => ({ label, key: e.key, value: e.value }));
  const categories = list.length;
  if (list.length > MAX_BARS) list = [...list].sort((a, b) => b.value - a.value).slice(0, MAX_BARS);
  if (kind === 'number' || kind === 'time') list.sort((a, b) => pos(a.key, kind === 'time') - pos(b.key, kind === 'time'));
  else if (categories <= MAX_BARS) list.sort((a, b) => a.label.localeCompare(b.label));
  return { bars: list.map(({ label, value }) => ({ label, value })), categories };
}

/** Points (x, y) with both numeric (x may be a time), in x's order; at most MAX_POINTS, evenly picked. */
export function pointData(rows: Row[], x: ColumnSchema, y: string) {
  const time = columnKind(x.type) === 'time';
  const all: Array<[number, number]> = [];
  for (const r of rows) {
    const px = pos(r[x.name], time);
    const py = num(r[y]);
    if (Number.isFinite(px) && Number.isFinite(py)) all.push([px, py]);
  }
  all.sort((a, b) => a[0] - b[0]);
  const step = Math.max(1, Math.ceil(all.length / MAX_POINTS));
  return { points: step > 1 ? all.filter((_, i) => i % step === 0) : all, total: all.length, time };
}

interface Series {
  name: string;
  points: Array<[number, number]>;
}

/**
 * Points split into one series per value of `by` (the MAX_SERIES most frequent, in that order); every series thinned
 * alike so that all of them together keep to MAX_POINTS.
 */
export function seriesData(rows: Row[], x: ColumnSchema, y: string, by: ColumnSchema) {
  const time = columnKind(x.type) === 'time';
  const byKind = columnKind(by.type);
  const groups = new Map<string, Array<[number, number]>>();
  let total = 0;
  for (const r of rows) {
    const px = pos(r[x.name], time);
    const py = num(r[y]);
    if (!Number.isFinite(px) || !Number.isFinite(py)) continue;
    const key = r[by.name] === null || r[by.name] === undefined ? '(null)' : formatCell(r[by.name], byKind);
    const list = groups.get(key) ?? [];
    list.push([px, py]);
    groups.set(key, list);
    total++;
  }
  const ranked = [...groups.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  const kept = ranked.slice(0, MAX_SERIES);
  const count = kept.reduce((n, [, p]) => n + p.length, 0);
  const step = Math.max(1, Math.ceil(count / MAX_POINTS));
  const series: Series[] = kept.map(([name, pts]) => {
    pts.sort((a, b) => a[0] - b[0]);
    return { name, points: step > 1 ? pts.filter((_, i) => i % step === 0) : pts };
  });
  return { series, total, shown: series.reduce((n, s) => n + s.points.length, 0), values: groups.size, time };
}

export function QuickChart(props: { columns: ColumnSchema[]; read: () => Promise<Row[]>; scope: string }) {
  const { columns } = props;
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { read } = props;
  useEffect(() => {
    let live = true;
    read().then(
      (r) => live && setRows(r),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
    // read once per result
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const numeric = columns.filter((c) => columnKind(c.type) === 'number');
  const axisable = columns.filter((c) => ['number', 'time'].includes(columnKind(c.type)));
  // Defaults a reader expects: a measure (not an id) up; a time across makes a line, else a category makes bars.
  const measures = numeric.filter((c) => !ID_LIKE.test(c.name));
  const time = columns.find((c) => columnKind(c.type) === 'time');
  const firstCategory = columns.find((c) => !['number', 'nested'].includes(columnKind(c.type))) ?? columns[0];
  const lineFirst = Boolean(time && measures.length);
  const [kind, setKind] = useState<ChartKind>(lineFirst ? 'line' : 'bar');
  const [xName, setX] = useState((lineFirst ? time : firstCategory)?.name ?? '');
  const [yName, setY] = useState(measures.find((c) => c.name !== firstCategory?.name)?.name ?? numeric.find((c) => c.name !== firstCategory?.name)?.name ?? COUNT);
  const xChoices = kind === 'bar' ? columns : axisable;
  const x = xChoices.find((c) => c.name === xName) ?? xChoices[0];
  const yChoices = kind === 'bar' ? [COUNT, ...numeric.map((c) => c.name)] : numeric.map((c) => c.name);
  const y = yChoices.includes(yName) ? yName : (yChoices.find((n) => n !== x?.name) ?? yChoices[0]);
  // Colour by: a column of categories (text, booleans, times) splits a line or scatter into series.
  const [byName, setBy] = useState(NO_COLOUR);
  const byChoices = columns.filter((c) => !['number', 'nested'].includes(columnKind(c.type)) && c.name !== x?.name);
  const by = kind === 'bar' ? undefined : byChoices.find((c) => c.name === byName);

  const chart = useMemo(() => {
    if (!rows || !x || !y) return null;
    if (kind === 'bar') return { bar: barData(rows, x, y) };
    if (by) return { split: seriesData(rows, x, y, by) };
    const p = pointData(rows, x, y);
    return { points: { series: [{ name: y, points: p.points }], total: p.total, shown: p.points.length, values: 1, time: p.time } };
  }, [rows, x, y, kind, by]);
  const points = chart?.split ?? chart?.points;

  if (error) return <ErrorNotice error={error} what="Chart" />;
  const select = (label: string, value: string, choices: string[], set: (v: string) => void) => (
    <label className="inline">
      {label}
      <select aria-label={label} value={value} onChange={(e) => set(e.target.value)}>
        {choices.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
    </label>
  );
  const yWords = y === COUNT ? 'count of rows' : kind === 'bar' ? `sum of ${y}` : y;
  const title = x && y ? `${kind === 'bar' ? 'Bar chart' : kind === 'line' ? 'Line chart' : 'Scatter plot'} of ${yWords} by ${x.name}${by ? `, coloured by ${by.name}` : ''}` : '';
  return (
    <div className="quick-chart">
      <div className="toolbar" role="toolbar" aria-label="Chart">
        {select('Chart type', kind, ['bar', 'line', 'scatter'], (v) => setKind(v as ChartKind))}
        {select('X axis', x?.name ?? '', xChoices.map((c) => c.name), setX)}
        {select('Y axis', y ?? '', yChoices, setY)}
        {kind === 'bar' ? null : select('Colour by', by?.name ?? NO_COLOUR, [NO_COLOUR, ...byChoices.map((c) => c.name)], setBy)}
        <span className="hint" role="status">
          {!rows ? `Reading ${props.scope}…` : `From ${props.scope}`}
          {chart?.bar && chart.bar.categories > MAX_BARS ? ` · the ${MAX_BARS} largest of ${formatCount(chart.bar.categories)} categories` : ''}
          {points && points.shown < points.total ? ` · ${formatCount(points.shown)} of ${formatCount(points.total)} points, evenly picked` : ''}
          {points && points.values > points.series.length ? ` · the ${points.series.length} most frequent of ${formatCount(points.values)} values of ${by?.name}` : ''}
        </span>
      </div>
      {!x || !y ? (
        <p className="hint">{kind === 'bar' ? 'This result has no columns to chart.' : 'A line or scatter chart needs numeric columns (x may be a time).'}</p>
      ) : !rows ? (
        <Loading label={`Reading ${props.scope}…`} />
      ) : chart?.bar ? (
        <BarChart title={title} bars={chart.bar.bars} />
      ) : points ? (
        <PointChart title={title} kind={kind as 'line' | 'scatter'} series={points.series} time={points.time} legend={Boolean(by)} />
      ) : null}
    </div>
  );
}

function Frame(props: { title: string; yLo: number; yHi: number; children: ReactNode; xLabels: ReactNode }) {
  const { yLo, yHi } = props;
  const ticks = niceTicks(yLo, yHi).filter((v) => v >= yLo - 1e-9 && v <= yHi + 1e-9);
  const sy = (v: number) => M.top + (H - M.top - M.bottom) * (1 - (v - yLo) / (yHi - yLo || 1));
  return (
    <svg className="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={props.title}>
      <title>{props.title}</title>
      {ticks.map((v, i) => (
        <g key={i} className="chart-grid">
          <line x1={M.left} x2={W - M.right} y1={sy(v)} y2={sy(v)} />
          <text x={M.left - 6} y={sy(v) + 4} textAnchor="end">
            {short(v)}
          </text>
        </g>
      ))}
      {props.children}
      {props.xLabels}
    </svg>
  );
}

function BarChart(props: { title: string; bars: Array<{ label: string; value: number }> }) {
  const { bars } = props;
  const round = niceTicks(Math.min(0, ...bars.map((b) => b.value)), Math.max(0, ...bars.map((b) => b.value)));
  const lo = round[0];
  const hi = round[round.length - 1];
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const bw = plotW / Math.max(1, bars.length);
  const sy = (v: number) => M.top + plotH * (1 - (v - lo) / (hi - lo || 1));
  const every = Math.ceil(bars.length / 20);
  return (
    <Frame
      title={props.title}
      yLo={lo}
      yHi={hi}
      xLabels={bars.map((b, i) =>
        i % every === 0 ? (
          <text key={i} className="chart-xlabel" x={M.left + bw * (i + 0.5)} y={H - M.bottom + 14} textAnchor="end" transform={`rotate(-30 ${M.left + bw * (i + 0.5)} ${H - M.bottom + 14})`}>
            {b.label.length > 14 ? `${b.label.slice(0, 13)}…` : b.label}
          </text>
        ) : null,
      )}
    >
      {bars.map((b, i) => (
        <rect key={i} className="chart-bar" x={M.left + bw * i + bw * 0.1} width={bw * 0.8} y={Math.min(sy(b.value), sy(0))} height={Math.abs(sy(b.value) - sy(0))}>
          <title>{`${b.label}: ${short(b.value)}`}</title>
        </rect>
      ))}
    </Frame>
  );
}

function PointChart(props: { title: string; kind: 'line' | 'scatter'; series: Series[]; time: boolean; legend: boolean }) {
  const all = props.series.flatMap((s) => s.points);
  if (!all.length) return <p className="hint">No rows have numbers in both columns.</p>;
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const [xLo, xHi] = [Math.min(...xs), Math.max(...xs)];
  const yRound = niceTicks(Math.min(...ys), Math.max(...ys));
  const [yLo, yHi] = [yRound[0], yRound[yRound.length - 1]];
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const sx = (v: number) => M.left + plotW * ((v - xLo) / (xHi - xLo || 1));
  const sy = (v: number) => M.top + plotH * (1 - (v - yLo) / (yHi - yLo || 1));
  const xText = (v: number) => (props.time ? new Date(v).toISOString().slice(0, 16).replace('T', ' ') : short(v));
  return (
    <>
      <Frame
        title={props.title}
        yLo={yLo}
        yHi={yHi}
        xLabels={[0, 0.5, 1].map((f, i) => (
          <text key={i} className="chart-xlabel" x={M.left + f * plotW} y={H - M.bottom + 16} textAnchor={i === 0 ? 'start' : i === 2 ? 'end' : 'middle'}>
            {xText(xLo + f * (xHi - xLo))}
          </text>
        ))}
      >
        {props.series.map((s, k) => (
          <g key={k} className={`chart-series chart-s${k}`} data-series={s.name}>
            {props.kind === 'line' ? (
              <polyline className="chart-line" points={s.points.map(([a, b]) => `${sx(a).toFixed(1)},${sy(b).toFixed(1)}`).join(' ')} />
            ) : (
              s.points.map(([a, b], i) => <circle key={i} className="chart-dot" cx={sx(a)} cy={sy(b)} r={2.5} />)
            )}
          </g>
        ))}
      </Frame>
      {props.legend ? (
        <ul className="chart-legend" aria-label="Series">
          {props.series.map((s, k) => (
            <li key={k} className={`chart-s${k}`}>
              <span className="chart-swatch" aria-hidden="true" />
              {s.name}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
