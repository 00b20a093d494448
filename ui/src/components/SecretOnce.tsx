// A secret the server shows exactly once (token, bootstrap token): displayed read-only with a copy button and a
// warning; it lives only in this component's state and is gone when dismissed.
import { useState } from 'react';

export function SecretOnce(props: { label: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div className="secret-once" role="region" aria-label={props.label}>
      <p>
        <strong>{props.label}</strong> — copy it now: it will not be shown again.
      </p>
      <div className="row">
        <input className="mono grow" readOnly value={props.secret} aria-label={props.label} onFocus={(e) => e.target.select()} />
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="secondary" onClick={props.onDismiss}>
          Done
        </button>
      </div>
    </div>
  );
}
