// A modal dialog (opened on mount, closed by Escape or its Close button, which has the focus) with a last row of
// its own controls before Close: the worksheet browser, the shortcut list and the value viewer.
import { useEffect, useRef, type ReactNode } from 'react';

export function ModalDialog(props: { label: string; className?: string; onClose: () => void; children: ReactNode; footer?: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal?.();
  }, []);
  return (
    <dialog ref={ref} className={['value-viewer', props.className].filter(Boolean).join(' ')} aria-label={props.label} onClose={props.onClose} onCancel={props.onClose}>
      {props.children}
      <div className="row">
        {props.footer ?? <span className="grow" />}
        <button type="button" onClick={props.onClose} autoFocus>
          Close
        </button>
      </div>
    </dialog>
  );
}
