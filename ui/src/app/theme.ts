// Light and dark themes: follows the system unless the user picked one; the choice is kept in browser storage.
import { useSyncExternalStore } from 'react';

export type Theme = 'light' | 'dark' | 'system';

const KEY = 'eider.theme';
const CHANGED = 'eider-theme-change';

export function currentTheme(): Theme {
  const t = localStorage.getItem(KEY);
  return t === 'light' || t === 'dark' ? t : 'system';
}

export function applyTheme(t: Theme): void {
  if (t === 'system') {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(KEY, t);
    document.documentElement.dataset.theme = t;
  }
  window.dispatchEvent(new Event(CHANGED));
}

/** Whether dark colours are in effect now. */
function isDark(): boolean {
  const t = document.documentElement.dataset.theme;
  if (t) return t === 'dark';
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;
}

function subscribe(fn: () => void) {
  const media = window.matchMedia?.('(prefers-color-scheme: dark)');
  window.addEventListener(CHANGED, fn);
  media?.addEventListener?.('change', fn);
  return () => {
    window.removeEventListener(CHANGED, fn);
    media?.removeEventListener?.('change', fn);
  };
}

/** Whether dark colours are in effect, re-rendering when the theme or the system's preference changes (for what CSS cannot restyle, such as an image). */
export function useDark(): boolean {
  return useSyncExternalStore(subscribe, isDark, () => false);
}
