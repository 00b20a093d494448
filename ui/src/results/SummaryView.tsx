// One column's summary under its header: nulls, distinct values, least and greatest, and a histogram for numbers.
import { formatCount } from '../components/format.ts';
import type { ColumnSummary } from './summary.ts';

export function SummaryView(props: { summary: ColumnSummary }) {
  const s = props.summary;
  const pct = s.rows ? (100 * s.nulls) / s.rows : 0;
  const nulls = s.nulls ? `${formatCount(s.nulls)} null (${pct < 0.1 ? '<0.1' : pct.toFixed(pct < 10 ? 1 : 0)}%)` : 'no nulls';
  const range = s.min === null ? '' : s.min === s.max ? s.min : `${s.min} – ${s.max}`;
  const peak = s.histogram ? Math.max(...s.histogram) : 0;
  const words = `${nulls}, ${formatCount(s.distinct)} distinct${range ? `, ${s.min === s.max ? 'all' : 'from'} ${range.replace(' – ', ' to ')}` : ''}`;
  return (
    // A click on the summary is not a click on the header (which sorts).
    <span className="col-summary" title={words} aria-label={`Summary: ${words}`} onClick={(e) => e.stopPropagation()}>
      {s.histogram ? (
        <svg className="col-histogram" viewBox={`0 0 ${s.histogram.length} 1`} preserveAspectRatio="none" aria-hidden="true">
          {s.histogram.map((n, i) => (
            <rect key={i} x={i + 0.08} width={0.84} y={1 - n / peak} height={n / peak}>
              <title>{formatCount(n)}</title>
            </rect>
          ))}
        </svg>
      ) : null}
      <span className="col-stat">{nulls}</span>
      <span className="col-stat">{formatCount(s.distinct)} distinct</span>
      {range ? <span className="col-stat">{range}</span> : null}
    </span>
  );
}
