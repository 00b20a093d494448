// The Catalog screen's search box: catalogs, schemas and tables of the workspace's attached catalogs whose name has a
// word starting with the text typed, asked of the api's search route (one request, whatever the catalogs hold) a
// moment after typing stops. Keyboard: ArrowDown moves from the box into the results, ArrowUp/ArrowDown move among
// them, Enter opens one (it is a link), Escape clears the box or returns to it.
import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { call, enc } from '../api/client.ts';
import type { SearchCatalogsResponse } from '../api/generated.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { EmptyState } from '../components/EmptyState.tsx';
import { Link } from '../components/Link.tsx';

type Item = SearchCatalogsResponse['items'][number];

/** How long typing must pause before the search is sent. */
const SEARCH_DEBOUNCE_MS = 250;
const LIMIT = 20;

function useDebounced(value: string, ms: number): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

const searchItemHref = (base: string, i: Item) => [base, i.catalog, i.schema, i.table].filter((x): x is string => x !== null).map((x, n) => (n ? enc(x) : x)).join('/');
const searchItemName = (i: Item) => [i.catalog, i.schema, i.table].filter((x) => x !== null).join('.');

export function CatalogSearch(props: { ws: string; base: string }) {
  const [text, setText] = useState('');
  const q = useDebounced(text.trim(), SEARCH_DEBOUNCE_MS);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const resultsId = useId();
  const found = useAsync(
    (signal) => (q ? call('GET /api/workspaces/{workspace}/catalog-search', { path: { workspace: props.ws }, query: { q, limit: LIMIT }, signal }) : Promise.resolve(null)),
    [props.ws, q],
  );
  const links = () => [...(list.current?.querySelectorAll<HTMLAnchorElement>('a') ?? [])];
  const onInputKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown') {
      const first = links()[0];
      if (first) {
        e.preventDefault();
        first.focus();
      }
    } else if (e.key === 'Escape' && text) {
      e.preventDefault();
      setText('');
    }
  };
  const onListKey = (e: KeyboardEvent<HTMLUListElement>) => {
    const all = links();
    const at = all.indexOf(document.activeElement as HTMLAnchorElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = at + (e.key === 'ArrowDown' ? 1 : -1);
      if (next < 0) input.current?.focus();
      else all[Math.min(next, all.length - 1)]?.focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      input.current?.focus();
    }
  };
  const settling = text.trim() !== q;
  const items = found.data?.items ?? [];
  return (
    <div className="stack catalog-search" role="search" aria-label="Catalog">
      <input
        ref={input}
        type="search"
        aria-label="Search catalogs, schemas and tables"
        aria-controls={items.length ? resultsId : undefined}
        aria-describedby={`${resultsId}-status`}
        placeholder="Search catalogs, schemas and tables"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onInputKey}
      />
      {/* Announced when the results change: how many, or that there are none. */}
      <p id={`${resultsId}-status`} role="status" className="hint">
        {!q || settling || found.loading ? '' : found.data ? `${items.length}${found.data.has_more ? '+' : ''} ${items.length === 1 ? 'match' : 'matches'}` : ''}
      </p>
      {q ? (
        found.error ? (
          <ErrorNotice error={found.error} what="Search" />
        ) : !found.data ? (
          <Loading label="Searching…" />
        ) : items.length ? (
          <ul id={resultsId} ref={list} className="item-list search-results" aria-label="Search results" onKeyDown={onListKey}>
            {items.map((i) => (
              <li key={`${i.kind} ${searchItemName(i)}`}>
                <Link href={searchItemHref(props.base, i)}>{searchItemName(i)}</Link>
                <span className="hint"> {i.kind}</span>
              </li>
            ))}
            {found.data.has_more ? <li className="hint">More match: type more of the name to narrow them.</li> : null}
          </ul>
        ) : (
          <EmptyState>Nothing named like “{q}”.</EmptyState>
        )
      ) : null}
    </div>
  );
}
