// A small, non-virtualized table of rows (sample rows, snapshots): for a few hundred rows at most. Given the
// columns' DuckDB types, numbers are right-aligned with digit grouping, as in the result grid.
import { columnKind, formatCell, type ColumnKind } from '../results/cells.ts';

export function DataTable(props: { columns: string[]; rows: Array<Record<string, unknown>>; label: string; types?: Record<string, string> }) {
  const kinds: ColumnKind[] = props.columns.map((c) => (props.types?.[c] ? columnKind(props.types[c]) : 'text'));
  return (
    // Focusable, so a table wider than its box scrolls from the keyboard too.
    <div className="table-scroll" tabIndex={0} role="region" aria-label={`${props.label} (scrolls)`}>
      <table className="table" aria-label={props.label}>
        <thead>
          <tr>
            {props.columns.map((c, i) => (
              <th key={c} className={kinds[i] === 'number' ? 'num' : undefined}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r, i) => (
            <tr key={i}>
              {props.columns.map((c, j) => (
                <td key={c} className={[r[c] === null ? 'null' : '', kinds[j] === 'number' ? 'num' : ''].join(' ').trim() || undefined}>
                  {formatCell(r[c], kinds[j])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
