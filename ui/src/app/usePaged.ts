// A cursor-paged collection ({items, cursor, has_more}) read one page at a time with "Load more".
import { useCallback, useEffect, useState } from 'react';
import { api } from '../api/client.ts';
import type { Page } from '../api/types.ts';

export function usePaged<T>(path: string, limit = 100) {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(
    async (after: string | null) => {
      setLoading(true);
      setError(null);
      try {
        const page = await api.get<Page<T>>(path, { query: { limit, cursor: after } });
        setItems((prev) => (after ? [...prev, ...page.items] : page.items));
        setCursor(page.cursor);
        setHasMore(page.has_more);
      } catch (e) {
        setError(e);
      } finally {
        setLoading(false);
      }
    },
    [path, limit],
  );
  useEffect(() => {
    void load(null);
  }, [load]);

  return { items, loading, error, hasMore, more: () => void load(cursor), reload: () => void load(null) };
}
