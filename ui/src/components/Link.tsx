// An anchor that navigates within the app (and still opens in a new tab with a modifier key).
import type { AnchorHTMLAttributes, MouseEvent } from 'react';
import { navigate } from '../app/router.ts';

export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const { onClick, ...rest } = props;
  const click = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return <a {...rest} onClick={click} />;
}
