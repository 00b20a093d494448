// Ctrl/Cmd+I toggles the assistant from anywhere in the app. The listener captures the key before the focused
// element sees it: the SQL editor binds Mod-i to "select parent syntax", and the assistant must win.
import { useEffect, useRef } from 'react';

const isAssistantShortcut = (e: KeyboardEvent) => (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'i';

export function useAssistantShortcut(toggle: () => void): void {
  const latest = useRef(toggle);
  latest.current = toggle;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!isAssistantShortcut(e)) return;
      e.preventDefault();
      e.stopPropagation();
      latest.current();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, []);
}
