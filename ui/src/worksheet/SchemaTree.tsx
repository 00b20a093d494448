// The schema tree beside the editor, an ARIA tree: catalogs → schemas → tables → columns (with their types), each
// level loaded from the api when it is first opened (the same cached loaders completion uses). One item at a time
// is in the tab order (roving tabindex); the arrow keys move (Down, Up, Home, End), Right opens a branch or enters
// it, Left closes it or goes to its parent, Enter inserts a table's or a column's name at the editor's cursor (quoted
// when it must be; a table qualified by its schema, and by its catalog unless that is the worksheet's). A click
// opens and closes, a double-click or a drag into the editor inserts. Refresh (and the worksheet's own DDL) reloads
// the levels, keeping what was open.
import { createContext, useContext, useEffect, useState, type KeyboardEvent, type ReactNode } from 'react';
import { quoteIfNeeded, type CatalogNames, type ColumnName } from './completion.ts';

// Words a bare identifier cannot be (DuckDB's reserved keywords that are also likely column names).
const RESERVED = new Set(
  'all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create default deferrable desc distinct do else end except false fetch for foreign from grant group having in initially intersect into lateral leading limit not null offset on only or order placing primary references returning select symmetric table then to trailing true union unique using variadic when where window with'.split(' '),
);

/** An identifier as SQL text: bare when it can be, else in double quotes. */
const ident = (name: string) => (RESERVED.has(name) ? `"${name}"` : quoteIfNeeded(name));

interface TreeState {
  open: ReadonlySet<string>;
  toggle: (key: string, to?: boolean) => void;
  active: string | null;
  setActive: (key: string) => void;
  firstShown: (key: string) => void;
  onInsert: (text: string) => void;
  /** bumped by Refresh: every open level loads again */
  version: number;
}
const Tree = createContext<TreeState | null>(null);
const useTree = () => useContext(Tree)!;

function Item(props: {
  id: string;
  /** the key of the item this one is under (Left goes there) */
  parent?: string;
  level: number;
  label: string;
  kind: 'catalog' | 'schema' | 'table' | 'column';
  /** what Enter, a double-click or a drag inserts (tables and columns) */
  insert?: string;
  detail?: string;
  /** the children of a branch, shown while it is open; none for a leaf (a column) */
  children?: () => ReactNode;
}) {
  const tree = useTree();
  const branch = props.children !== undefined;
  const open = branch && tree.open.has(props.id);
  const { insert } = props;
  const { firstShown } = tree;
  useEffect(() => {
    firstShown(props.id);
  }, [firstShown, props.id]);
  // A flat tree (aria-level says the depth): each item holds only its own row, so its name is its own text.
  return (
    <>
      <div
        role="treeitem"
        className={`tree-item tree-${props.kind}`}
        style={{ paddingLeft: `${(props.level - 1) * 0.9 + 0.2}rem` }}
        aria-level={props.level}
        aria-expanded={branch ? open : undefined}
        aria-selected={tree.active === props.id}
        data-key={props.id}
        data-parent={props.parent}
        data-insert={insert}
        tabIndex={tree.active === props.id ? 0 : -1}
        draggable={insert !== undefined}
        onDragStart={(e) => {
          if (insert) e.dataTransfer.setData('text/plain', insert);
        }}
        onFocus={() => tree.setActive(props.id)}
        onClick={(e) => {
          tree.setActive(props.id);
          e.currentTarget.focus();
          if (branch) tree.toggle(props.id);
        }}
        onDoubleClick={() => {
          if (insert) tree.onInsert(insert);
        }}
        title={insert ? `Enter or double-click inserts ${insert}; drag it into the editor` : undefined}
      >
        <span className="tree-toggle" aria-hidden="true">
          {branch ? (open ? '▾' : '▸') : ''}
        </span>
        <span className="tree-name">{props.label}</span>
        {props.detail ? (
          <>
            {' '}
            <span className="tree-detail">{props.detail}</span>
          </>
        ) : null}
      </div>
      {open && props.children ? props.children() : null}
    </>
  );
}

/** A level's children, loaded when it is shown (again after a refresh). */
function Level<T>(props: { load: () => Promise<T[]>; empty: string; render: (item: T) => ReactNode; /** the depth of its items, less one */ level: number }) {
  const { version } = useTree();
  const [items, setItems] = useState<T[] | null>(null);
  const { load } = props;
  useEffect(() => {
    let live = true;
    void load().then((list) => live && setItems(list));
    return () => {
      live = false;
    };
    // loaded once per opening, and again on a refresh
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [version]);
  const hint = !items ? 'Loading…' : !items.length ? props.empty : null;
  if (hint)
    return (
      <div className="tree-hint" role="none" style={{ paddingLeft: `${props.level * 0.9 + 0.2}rem` }}>
        {hint}
      </div>
    );
  return <>{items!.map(props.render)}</>;
}

/** The tree's keyboard: the WAI-ARIA tree pattern over the items shown. */
function onTreeKey(e: KeyboardEvent<HTMLElement>, tree: TreeState) {
  const root = e.currentTarget;
  const current = (e.target as HTMLElement).closest<HTMLElement>('[role=treeitem]');
  if (!current) return;
  const items = [...root.querySelectorAll<HTMLElement>('[role=treeitem]')];
  const i = items.indexOf(current);
  const key = current.dataset.key!;
  const go = (el: HTMLElement | undefined) => {
    if (!el) return;
    tree.setActive(el.dataset.key!);
    el.focus();
  };
  const expanded = current.getAttribute('aria-expanded');
  switch (e.key) {
    case 'ArrowDown':
      go(items[i + 1]);
      break;
    case 'ArrowUp':
      go(items[i - 1]);
      break;
    case 'Home':
      go(items[0]);
      break;
    case 'End':
      go(items[items.length - 1]);
      break;
    case 'ArrowRight':
      if (expanded === 'false') tree.toggle(key, true);
      else if (expanded === 'true' && items[i + 1]?.dataset.parent === key) go(items[i + 1]);
      break;
    case 'ArrowLeft':
      if (expanded === 'true') tree.toggle(key, false);
      else go(items.find((el) => el.dataset.key === current.dataset.parent));
      break;
    case 'Enter':
    case ' ':
      if (current.dataset.insert) tree.onInsert(current.dataset.insert);
      else if (expanded !== null) tree.toggle(key);
      break;
    default:
      return;
  }
  e.preventDefault();
  e.stopPropagation();
}

export function SchemaTree(props: { names: CatalogNames; catalog: string | null; onInsert: (text: string) => void; version: number; onRefresh: () => void }) {
  const { names } = props;
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [active, setActive] = useState<string | null>(null);
  // Until an item is chosen, the first one shown takes the tab stop.
  const firstShown = (key: string) => setActive((a) => a ?? key);
  const sameCatalog = (c: string) => c === (props.catalog ?? names.defaultCatalog);
  const state: TreeState = {
    open,
    toggle: (key, to) =>
      setOpen((s) => {
        const next = new Set(s);
        if (to ?? !s.has(key)) next.add(key);
        else next.delete(key);
        return next;
      }),
    active,
    setActive,
    firstShown,
    onInsert: props.onInsert,
    version: props.version,
  };

  return (
    <nav className="schema-tree" aria-label="Schema browser">
      <div className="tree-head">
        <span className="tree-title" id="schema-tree-title">
          Schema
        </span>
        <button type="button" className="link tree-refresh" onClick={props.onRefresh} title="Load catalogs, schemas, tables and columns again">
          Refresh
        </button>
      </div>
      <Tree.Provider value={state}>
        <div role="tree" aria-label="Schema tree" className="tree" onKeyDown={(e) => onTreeKey(e, state)}>
          <Level
            level={0}
            load={() => names.catalogs()}
            empty="No catalogs to show."
            render={(c: string) => (
              <Item key={c} id={c} level={1} kind="catalog" label={c} detail={c === names.defaultCatalog ? 'default' : undefined}>
                {() => (
                  <Level
                    level={1}
                    load={() => names.schemas(c)}
                    empty="No schemas."
                    render={(s: string) => (
                      <Item key={s} id={`${c}.${s}`} parent={c} level={2} kind="schema" label={s}>
                        {() => (
                          <Level
                            level={2}
                            load={() => names.tables(c, s)}
                            empty="No tables."
                            render={(tb: string) => (
                              <Item
                                key={tb}
                                id={`${c}.${s}.${tb}`}
                                parent={`${c}.${s}`}
                                level={3}
                                kind="table"
                                label={tb}
                                insert={`${sameCatalog(c) ? '' : `${ident(c)}.`}${ident(s)}.${ident(tb)}`}
                              >
                                {() => (
                                  <Level
                                    level={3}
                                    load={() => names.columns(c, s, tb)}
                                    empty="No columns."
                                    render={(col: ColumnName) => (
                                      <Item key={col.name} id={`${c}.${s}.${tb}.${col.name}`} parent={`${c}.${s}.${tb}`} level={4} kind="column" label={col.name} detail={col.type} insert={ident(col.name)} />
                                    )}
                                  />
                                )}
                              </Item>
                            )}
                          />
                        )}
                      </Item>
                    )}
                  />
                )}
              </Item>
            )}
          />
        </div>
      </Tree.Provider>
    </nav>
  );
}
