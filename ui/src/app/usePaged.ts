// A cursor-paged collection ({items, cursor, has_more}) read one page at a time with "Load more".
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type Query } from '../api/client.ts';
import type { Page } from '../api/types.ts';

/** `query` adds filters to every page's request; a change of them reads the first page again. */
export function usePaged<T>(path: string, limit = 100, query?: Query) {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  // Filters arrive as a fresh object each render: compared by value, so only a real change reloads.
  const filters = JSON.stringify(query ?? {});
  // A filter changed while a page was on its way: the older answer must not overwrite the newer.
  const seq = useRef(0);

  const load = useCallback(
    async (after: string | null) => {
      const mine = ++seq.current;
      setLoading(true);
      setError(null);
      try {
        const page = await api.get<Page<T>>(path, { query: { ...(JSON.parse(filters) as Query), limit, cursor: after } });
        if (mine !== seq.current) return;
        setItems((prev) => (after ? [...prev, ...page.items] : page.items));
        setCursor(page.cursor);
        setHasMore(page.has_more);
      } catch (e) {
        if (mine === seq.current) setError(e);
      } finally {
        if (mine === seq.current) setLoading(false);
      }
    },
    [path, limit, filters],
  );
  useEffect(() => {
    void load(null);
  }, [load]);

  return { items, loading, error, hasMore, more: () => void load(cursor), reload: () => void load(null) };
}
