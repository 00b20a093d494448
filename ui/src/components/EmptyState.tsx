// The one way a screen says something is not there (no rows match, nothing made yet): an icon, the words, and
// what to do about it when there is something to do. A status, so a filter that empties a list is announced.
import type { ReactNode } from 'react';
import { Icon, type IconName } from './Icon.tsx';

export function EmptyState(props: { children: ReactNode; title?: string; icon?: IconName; action?: ReactNode; className?: string }) {
  return (
    <div className={`empty-state${props.className ? ` ${props.className}` : ''}`} role="status">
      <Icon name={props.icon ?? 'inbox'} />
      <div className="stack">
        {props.title ? <p className="empty-title">{props.title}</p> : null}
        <p>{props.children}</p>
        {props.action ? <div className="row">{props.action}</div> : null}
      </div>
    </div>
  );
}
