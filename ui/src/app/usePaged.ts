// A cursor-paged collection ({items, cursor, has_more}) read one page at a time with "Load more".
import { useCallback, useEffect, useRef, useState } from 'react';
import { call, type Operation, type PathOf, type QueryOf, type ResponseOf } from '../api/client.ts';

/** The operations that answer a page: GETs without path parameters whose answer is {items, cursor, has_more}. */
type PagedOperation = {
  [K in Operation]: K extends `GET ${string}`
    ? [PathOf<K>] extends [never]
      ? ResponseOf<K> extends { items: unknown[]; cursor: string | null; has_more: boolean }
        ? QueryOf<K> extends { limit?: unknown; cursor?: unknown }
          ? K
          : never
        : never
      : never
    : never;
}[Operation];
type ItemOf<K extends PagedOperation> = ResponseOf<K> extends { items: Array<infer T> } ? T : never;

/** `query` adds filters to every page's request; a change of them reads the first page again. */
export function usePaged<K extends PagedOperation>(op: K, limit = 100, query?: Omit<QueryOf<K>, 'limit' | 'cursor'>) {
  const [items, setItems] = useState<Array<ItemOf<K>>>([]);
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
        // TypeScript cannot check a call whose operation is a type parameter: PagedOperation holds what it needs (no
        // path parameters, a limit and a cursor, an answer of {items, cursor, has_more}), and `op` is one of them.
        const page = (await call<PagedOperation>(op, { query: { ...JSON.parse(filters), limit, cursor: after ?? undefined } } as never)) as {
          items: Array<ItemOf<K>>;
          cursor: string | null;
          has_more: boolean;
        };
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
    [op, limit, filters],
  );
  useEffect(() => {
    void load(null);
  }, [load]);

  return { items, loading, error, hasMore, more: () => void load(cursor), reload: () => void load(null) };
}
