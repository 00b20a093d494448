// A table's header row: one cell per column label, and a last, visually hidden "Actions" cell for the row buttons
// (screen readers announce the column).
import type { ReactNode } from 'react';

export function TableHead(props: { columns: ReactNode[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {props.columns.map((c, i) => (
          <th key={i}>{c}</th>
        ))}
        {props.actions ? (
          <th>
            <span className="sr-only">Actions</span>
          </th>
        ) : null}
      </tr>
    </thead>
  );
}
