// The schema tree beside the editor: catalogs → schemas → tables → columns, each level loaded from the api when it
// is first opened (the same cached loaders completion uses). Clicking a table or a column inserts its name at the
// editor's cursor (quoted when it needs to be; a table qualified by its schema, and by its catalog unless that is
// the worksheet's); dragging one into the editor drops it there.
import { useEffect, useState, type ReactNode } from 'react';
import { quoteIfNeeded, type CatalogNames, type ColumnName } from './completion.ts';

// Words a bare identifier cannot be (DuckDB's reserved keywords that are also likely column names).
const RESERVED = new Set(
  'all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create default deferrable desc distinct do else end except false fetch for foreign from grant group having in initially intersect into lateral leading limit not null offset on only or order placing primary references returning select symmetric table then to trailing true union unique using variadic when where window with'.split(' '),
);

/** An identifier as SQL text: bare when it can be, else in double quotes. */
export const ident = (name: string) => (RESERVED.has(name) ? `"${name}"` : quoteIfNeeded(name));

function Branch(props: {
  label: string;
  kind: 'catalog' | 'schema' | 'table';
  /** the text a click or a drag inserts (tables); catalogs and schemas open on a click */
  insert?: string;
  onInsert: (text: string) => void;
  detail?: string;
  children: () => ReactNode;
}) {
  const [open, setOpen] = useState(false);
  const { insert } = props;
  return (
    <li className={`tree-${props.kind}`}>
      <button type="button" className="tree-toggle" aria-expanded={open} aria-label={`${open ? 'Collapse' : 'Expand'} ${props.label}`} onClick={() => setOpen(!open)}>
        {open ? '▾' : '▸'}
      </button>
      {insert ? (
        <button
          type="button"
          className="tree-name"
          draggable
          onDragStart={(e) => e.dataTransfer.setData('text/plain', insert)}
          onClick={() => props.onInsert(insert)}
          title={`Insert ${insert} (or drag it into the editor)`}
        >
          {props.label}
        </button>
      ) : (
        <button type="button" className="tree-name" onClick={() => setOpen(!open)}>
          {props.label}
        </button>
      )}
      {props.detail ? <span className="tree-detail">{props.detail}</span> : null}
      {open ? props.children() : null}
    </li>
  );
}

/** A level's children, loaded once when it is first shown. */
function Level<T>(props: { load: () => Promise<T[]>; empty: string; render: (item: T) => ReactNode }) {
  const [items, setItems] = useState<T[] | null>(null);
  const { load } = props;
  useEffect(() => {
    let live = true;
    void load().then((list) => live && setItems(list));
    return () => {
      live = false;
    };
    // loaded once per opening
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  if (!items) return <p className="tree-hint">Loading…</p>;
  if (!items.length) return <p className="tree-hint">{props.empty}</p>;
  return <ul role="group">{items.map(props.render)}</ul>;
}

export function SchemaTree(props: { names: CatalogNames; catalog: string | null; onInsert: (text: string) => void }) {
  const { names, onInsert } = props;
  const sameCatalog = (c: string) => c === (props.catalog ?? names.defaultCatalog);
  return (
    <nav className="schema-tree" aria-label="Schema tree">
      <Level
        load={() => names.catalogs()}
        empty="No catalogs to show."
        render={(c: string) => (
          <Branch key={c} kind="catalog" label={c} detail={c === names.defaultCatalog ? 'default' : undefined} onInsert={onInsert}>
            {() => (
              <Level
                load={() => names.schemas(c)}
                empty="No schemas."
                render={(s: string) => (
                  <Branch key={s} kind="schema" label={s} onInsert={onInsert}>
                    {() => (
                      <Level
                        load={() => names.tables(c, s)}
                        empty="No tables."
                        render={(tb: string) => (
                          <Branch
                            key={tb}
                            kind="table"
                            label={tb}
                            insert={`${sameCatalog(c) ? '' : `${ident(c)}.`}${ident(s)}.${ident(tb)}`}
                            onInsert={onInsert}
                          >
                            {() => (
                              <Level
                                load={() => names.columns(c, s, tb)}
                                empty="No columns."
                                render={(col: ColumnName) => (
                                  <li key={col.name} className="tree-column">
                                    <button
                                      type="button"
                                      className="tree-name"
                                      draggable
                                      onDragStart={(e) => e.dataTransfer.setData('text/plain', ident(col.name))}
                                      onClick={() => onInsert(ident(col.name))}
                                      title={`Insert ${ident(col.name)} (or drag it into the editor)`}
                                    >
                                      {col.name}
                                    </button>
                                    <span className="tree-detail">{col.type}</span>
                                  </li>
                                )}
                              />
                            )}
                          </Branch>
                        )}
                      />
                    )}
                  </Branch>
                )}
              />
            )}
          </Branch>
        )}
      />
    </nav>
  );
}
