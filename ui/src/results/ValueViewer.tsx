// A value seen whole: a long text or a nested value (list, struct, map, JSON) that a grid cell cuts short, in a
// dialog with its column, type and row; nested values indented as JSON. Escape or Close returns to the grid.
import { useState } from 'react';
import type { ColumnSchema } from '../api/types.ts';
import { formatCount } from '../components/format.ts';
import { ModalDialog } from '../components/ModalDialog.tsx';
import { rawText } from './cells.ts';

export function ValueViewer(props: { column: ColumnSchema; row: number; value: unknown; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  const nested = props.value !== null && typeof props.value === 'object';
  const text = props.value === null || props.value === undefined ? 'NULL' : rawText(props.value, true);
  return (
    <ModalDialog
      label={`Value of ${props.column.name}`}
      onClose={props.onClose}
      footer={
        <>
          <span className="hint grow">{formatCount(text.length)} characters</span>
          <button
            type="button"
            className="secondary"
            onClick={() => void navigator.clipboard?.writeText(rawText(props.value, true)).then(() => setCopied(true), () => setCopied(false))}
          >
            {copied ? 'Copied' : 'Copy value'}
          </button>
        </>
      }
    >
      <div className="row">
        <strong className="grow">
          {props.column.name} <span className="hint">{props.column.type}</span>
        </strong>
        <span className="hint">row {formatCount(props.row + 1)}</span>
      </div>
      <pre className={`value-text${nested ? ' nested' : ''}`} tabIndex={0}>
        {text}
      </pre>
    </ModalDialog>
  );
}
