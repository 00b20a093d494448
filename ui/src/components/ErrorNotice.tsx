// Shows a failed request as the api reported it: its code and message. An endpoint the server does not have yet is
// said plainly, never shown as empty data.
import { ApiError } from '../api/client.ts';

export function ErrorNotice(props: { error: unknown; what?: string }) {
  const e = props.error;
  if (e instanceof ApiError && e.notBuilt) {
    return (
      <div className="notice notice-pending" role="status">
        {props.what ? `${props.what}: ` : ''}this server does not offer this yet (the endpoint answered {e.status}).
      </div>
    );
  }
  const code = e instanceof ApiError ? e.code : 'error';
  const message = e instanceof Error ? e.message : String(e);
  return (
    <div className="notice notice-error" role="alert">
      <code className="error-code">{code}</code> {message}
    </div>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <div className="loading-line" role="status" aria-live="polite">
      {props.label ?? 'Loading…'}
    </div>
  );
}
