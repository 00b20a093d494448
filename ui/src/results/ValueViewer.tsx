// A value seen whole: a long text or a nested value (list, struct, map, JSON) that a grid cell cuts short, in a
// dialog with its column, type and row; nested values indented as JSON. Escape or Close returns to the grid.
import { useEffect, useRef, useState } from 'react';
import type { ColumnSchema } from '../api/types.ts';
import { formatCount } from '../components/format.ts';
import { rawText } from './cells.ts';

export function ValueViewer(props: { column: ColumnSchema; row: number; value: unknown; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal?.();
  }, []);
  const nested = props.value !== null && typeof props.value === 'object';
  const text = props.value === null || props.value === undefined ? 'NULL' : rawText(props.value, true);
  return (
    <dialog ref={ref} className="value-viewer" aria-label={`Value of ${props.column.name}`} onClose={props.onClose} onCancel={props.onClose}>
      <div className="row">
        <strong className="grow">
          {props.column.name} <span className="hint">{props.column.type}</span>
        </strong>
        <span className="hint">row {formatCount(props.row + 1)}</span>
      </div>
      <pre className={`value-text${nested ? ' nested' : ''}`} tabIndex={0}>
        {text}
      </pre>
      <div className="row">
        <span className="hint grow">{formatCount(text.length)} characters</span>
        <button
          type="button"
          className="secondary"
          onClick={() => void navigator.clipboard?.writeText(rawText(props.value, true)).then(() => setCopied(true), () => setCopied(false))}
        >
          {copied ? 'Copied' : 'Copy value'}
        </button>
        <button type="button" onClick={props.onClose} autoFocus>
          Close
        </button>
      </div>
    </dialog>
  );
}
