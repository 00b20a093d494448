// Shows a failed request in words first (a title from its code, then the api's message), with the code itself
// small at the end. An endpoint the server does not have yet is said plainly, never shown as empty data.
import type { ReactNode } from 'react';
import { ApiError } from '../api/client.ts';
import { errorTitle } from './errorText.ts';
import { Icon } from './Icon.tsx';

export function ErrorNotice(props: { error: unknown; what?: string }) {
  const e = props.error;
  if (e instanceof ApiError && e.notBuilt) {
    return (
      <div className="notice notice-pending" role="status">
        <Icon name="alert" />
        {props.what ? `${props.what}: ` : ''}this server does not offer this yet (the endpoint answered {e.status}).
      </div>
    );
  }
  const code = e instanceof ApiError ? e.code : 'error';
  const message = e instanceof Error ? e.message : String(e);
  return <Notice code={code} title={errorTitle(code, e instanceof ApiError ? e.status : undefined)} message={message} />;
}

/** An error notice: its title in words, the message, and the code small. */
export function Notice(props: { code: string; title?: string; message: ReactNode }) {
  return (
    <div className="notice notice-error" role="alert">
      <Icon name="alert" />
      <strong className="notice-title">{props.title ?? errorTitle(props.code)}</strong> <span className="notice-message">{props.message}</span>{' '}
      <code className="error-code">{props.code}</code>
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
