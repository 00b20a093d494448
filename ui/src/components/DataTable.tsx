// A small, non-virtualized table of rows (sample rows, snapshots): for a few hundred rows at most.
import { formatCell } from '../results/ResultGrid.tsx';

export function DataTable(props: { columns: string[]; rows: Array<Record<string, unknown>>; label: string }) {
  return (
    <div className="table-scroll">
      <table className="table" aria-label={props.label}>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r, i) => (
            <tr key={i}>
              {props.columns.map((c) => (
                <td key={c} className={r[c] === null ? 'null' : undefined}>
                  {formatCell(r[c])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
