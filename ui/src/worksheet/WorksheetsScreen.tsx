// Worksheets: tabs of SQL, each with its agent and catalog, its editor, run controls and the last run's results (one
// a statement after "run all"), which stay the worksheet's across leaving the screen and reloading the page. Each tab
// is one of the user's worksheets on the server (saved as it is written, shared with the workspace or not), or a
// worksheet another member shared, read-only here; the Worksheets list opens any of them (useWorksheetSync.ts).
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { ApiError, call, enc } from '../api/client.ts';
import type { WorksheetOut, WorkspaceCatalog } from '../api/types.ts';
import { navigate, useLocation } from '../app/router.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Notice } from '../components/ErrorNotice.tsx';
import { ResultPanel } from '../results/ResultPanel.tsx';
import { AgentPicker, agentIdOf } from './AgentPicker.tsx';
import { CatalogNames } from './completion.ts';
import { allFromView, formatFromView, insertIntoView, replaceInView, runFromView, SHORTCUTS, SqlEditor, type RunText } from './Editor.tsx';
import { SchemaTree } from './SchemaTree.tsx';
import { StatusPill } from './StatusPill.tsx';
import { RunProgressLine } from './RunProgressLine.tsx';
import { isTerminal, queryError, useQueryRun, type Submit } from './useQueryRun.ts';
import { closeSession, connectionNote, submitStatement } from './worksheetSession.ts';
import { splitStatements } from './statementAt.ts';
import { useWorksheetSync, type SaveStatus } from './useWorksheetSync.ts';
import { WorksheetBrowser } from './WorksheetBrowser.tsx';
import { blankWorksheet, loadWorksheets, nextWorksheet, saveWorksheets, type Worksheet, type WorksheetState } from './worksheetStore.ts';
import { fieldsOf, marksDirty, tabOf } from './worksheetSync.ts';
import { ModalDialog } from '../components/ModalDialog.tsx';
import { EmptyState } from '../components/EmptyState.tsx';
import { Icon } from '../components/Icon.tsx';
import { errorTitle } from '../components/errorText.ts';
import { errorPlace } from './errorPlace.ts';

export function WorksheetsScreen(props: { ws: string }) {
  const [state, setState] = useState<WorksheetState>(() => loadWorksheets(props.ws));
  useEffect(() => saveWorksheets(props.ws, state), [props.ws, state]);
  const sync = useWorksheetSync(props.ws, state, setState);
  const [browsing, setBrowsing] = useState(false);
  const names = useMemo(() => new CatalogNames(props.ws), [props.ws]);
  // Bumped by the tree's Refresh and by a worksheet's own DDL: the tree and completion read the catalog again.
  const [schemaVersion, setSchemaVersion] = useState(0);
  const refreshSchema = () => {
    names.invalidate();
    setSchemaVersion((v) => v + 1);
  };
  const catalogs = useAsync((signal) => call('GET /api/workspaces/{workspace}/catalogs', { path: { workspace: props.ws }, signal }), [props.ws]);

  const active = state.tabs.find((t) => t.id === state.active) ?? state.tabs[0];
  // `?agent=<name or id>` in the address picks the active worksheet's agent (the picker turns a name into its id);
  // the parameter is then dropped, so a reload keeps the worksheet's own choice.
  const { search } = useLocation();
  const agentParam = search.get('agent');
  useEffect(() => {
    if (!agentParam) return;
    setState((s) => ({ ...s, tabs: s.tabs.map((t) => (t.id === s.active ? { ...t, agentId: agentParam } : t)) }));
    navigate(`/w/${enc(props.ws)}/worksheets`, { replace: true });
  }, [agentParam, props.ws]);
  // A change to what the server keeps (text, title, agent, catalog, sharing) marks the tab for saving.
  const update = (id: string, patch: Partial<Worksheet>) =>
    setState((s) => ({ ...s, tabs: s.tabs.map((t) => (t.id === id ? { ...t, ...patch, ...(marksDirty(t, patch) ? { dirty: true } : {}) } : t)) }));
  const addTab = () =>
    setState((s) => {
      const { tab: t, issued } = nextWorksheet(s);
      t.agentId = active?.agentId ?? null;
      return { ...s, tabs: [...s.tabs, t], active: t.id, issued };
    });
  const closeTab = (id: string) => {
    const closing = state.tabs.find((t) => t.id === id);
    if (closing) sync.closing(closing);
    void closeSession(props.ws, id);
    setState((s) => {
      const tabs = s.tabs.filter((t) => t.id !== id);
      if (!tabs.length) tabs.push(nextWorksheet(s).tab);
      return { ...s, tabs, active: s.active === id ? tabs[Math.max(0, s.tabs.findIndex((t) => t.id === id) - 1)].id : s.active };
    });
  };
  // A server worksheet from the list: the tab already showing it (brought up to date unless changed here), or a new one.
  const openServer = (w: WorksheetOut) => {
    setBrowsing(false);
    setState((s) => {
      const open = s.tabs.find((t) => t.serverId === w.id);
      if (open) {
        const fresh = !open.dirty && (!open.syncedAt || Date.parse(w.updated_at) > Date.parse(open.syncedAt));
        const tabs = fresh ? s.tabs.map((t) => (t === open ? { ...t, ...fieldsOf(w), rev: (t.rev ?? 0) + 1 } : t)) : s.tabs;
        return { ...s, tabs, active: open.id };
      }
      const t = tabOf(w, active?.agentId ?? null);
      return { ...s, tabs: [...s.tabs, t], active: t.id };
    });
  };
  // A worksheet deleted from the list: its tab stays, as text not kept anywhere but this browser until changed again.
  const forget = (id: string) =>
    setState((s) => ({ ...s, tabs: s.tabs.map((t) => (t.serverId === id ? { ...t, serverId: null, syncedAt: null, visibility: 'private' as const } : t)) }));
  // A copy of a worksheet someone shared: a new worksheet of one's own, with the same text, agent and catalog.
  const copyOf = (from: Worksheet) =>
    setState((s) => {
      const t: Worksheet = { ...blankWorksheet(s.tabs.length + 1, from.sql), title: `Copy of ${from.title}`, agentId: from.agentId, catalog: from.catalog, dirty: true };
      return { ...s, tabs: [...s.tabs, t], active: t.id };
    });
  // Renaming in place (F2 or a double-click on the tab): Enter keeps the name, Escape drops it.
  const [renaming, setRenaming] = useState<string | null>(null);
  const tabRefs = useRef(new Map<string, HTMLButtonElement>());
  const focusTab = (id: string) => {
    setState((s) => ({ ...s, active: id }));
    requestAnimationFrame(() => tabRefs.current.get(id)?.focus());
  };
  // The tablist's keyboard (the WAI-ARIA tabs pattern): arrows move, Home/End, F2 renames, Delete closes.
  const onTabKey = (e: KeyboardEvent, t: Worksheet) => {
    const i = state.tabs.findIndex((x) => x.id === t.id);
    const to = (j: number) => focusTab(state.tabs[(j + state.tabs.length) % state.tabs.length].id);
    if (e.key === 'ArrowRight') to(i + 1);
    else if (e.key === 'ArrowLeft') to(i - 1);
    else if (e.key === 'Home') to(0);
    else if (e.key === 'End') to(state.tabs.length - 1);
    else if (e.key === 'F2') setRenaming(t.id);
    else if (e.key === 'Delete') closeTab(t.id);
    else return;
    e.preventDefault();
  };
  const rename = (t: Worksheet, title: string) => {
    setRenaming(null);
    const clean = title.trim();
    if (clean && clean !== t.title) update(t.id, { title: clean });
    requestAnimationFrame(() => tabRefs.current.get(t.id)?.focus());
  };

  return (
    <section className="worksheets">
      <h1 className="sr-only">Worksheets</h1>
      <div className="tabs">
        <div className="tablist" role="tablist" aria-label="Worksheets">
          {state.tabs.map((t) =>
            renaming === t.id ? (
              <input
                key={t.id}
                className="tab-rename"
                aria-label="Worksheet name"
                defaultValue={t.title}
                autoFocus
                onFocus={(e) => e.currentTarget.select()}
                onBlur={(e) => rename(t, e.currentTarget.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') rename(t, e.currentTarget.value);
                  else if (e.key === 'Escape') rename(t, t.title);
                }}
              />
            ) : (
              <button
                key={t.id}
                ref={(el) => {
                  if (el) tabRefs.current.set(t.id, el);
                  else tabRefs.current.delete(t.id);
                }}
                type="button"
                role="tab"
                id={`ws-tab-${t.id}`}
                aria-controls={`ws-pane-${t.id}`}
                aria-selected={t.id === active.id}
                aria-keyshortcuts="F2 Delete"
                tabIndex={t.id === active.id ? 0 : -1}
                title={`${t.title}: F2 or a double-click renames, Delete closes`}
                onClick={() => setState((s) => ({ ...s, active: t.id }))}
                onDoubleClick={() => setRenaming(t.id)}
                onKeyDown={(e) => onTabKey(e, t)}
              >
                {t.title}
                {/* the mouse's close; the keyboard's is Delete on the tab */}
                <span
                  className="tab-close"
                  aria-hidden="true"
                  data-close={t.title}
                  onClick={(e) => {
                    e.stopPropagation();
                    closeTab(t.id);
                  }}
                >
                  ×
                </span>
              </button>
            ),
          )}
        </div>
        <button type="button" className="tab-add" aria-label="New worksheet" title="New worksheet" onClick={addTab}>
          +
        </button>
        <button type="button" className="link worksheets-open" onClick={() => setBrowsing(true)} title="Your worksheets and those shared in the workspace">
          Worksheets…
        </button>
      </div>
      {browsing ? <WorksheetBrowser ws={props.ws} onOpen={openServer} onDeleted={forget} onClose={() => setBrowsing(false)} /> : null}
      {state.tabs.map((t) => (
        // Every tab stays mounted (hidden when inactive) so its editor, undo history and result survive switching.
        // A newer server version restarts the tab's editor from that text (rev).
        <div key={`${t.id}:${t.rev ?? 0}`} id={`ws-pane-${t.id}`} role="tabpanel" hidden={t.id !== active.id} aria-labelledby={`ws-tab-${t.id}`} className="worksheet-pane">
          <WorksheetPane
            ws={props.ws}
            sheet={t}
            saveStatus={sync.status[t.id] ?? null}
            onCopy={() => copyOf(t)}
            names={names}
            schemaVersion={schemaVersion}
            onSchemaChanged={refreshSchema}
            catalogs={catalogs.data ?? null}
            catalogsError={catalogs.error}
            onChange={(patch) => update(t.id, patch)}
          />
        </div>
      ))}
    </section>
  );
}

function WorksheetPane(props: {
  ws: string;
  sheet: Worksheet;
  saveStatus: SaveStatus | null;
  onCopy: () => void;
  names: CatalogNames;
  schemaVersion: number;
  onSchemaChanged: () => void;
  catalogs: WorkspaceCatalog[] | null;
  catalogsError: unknown;
  onChange: (patch: Partial<Worksheet>) => void;
}) {
  const { sheet } = props;
  const submit: Submit = (sql, agentId, catalog, signal) => submitStatement(props.ws, sheet.id, sql, agentId, catalog, signal);
  const run = useQueryRun(props.ws, sheet.lastRun, (lastRun) => props.onChange({ lastRun }), submit, sheet.title);
  const editorHost = useRef<HTMLDivElement>(null);
  const running = run.submitting || run.pending > 0 || (run.query !== null && !isTerminal(run.query.status) && !run.error);

  // A selection of several statements runs them in order, as "run all" does (the api takes one read at a time).
  const start = (r: RunText) => {
    if (running) return;
    const parts = splitStatements(r.text).map((p) => ({ text: p.text, from: r.from + p.from }));
    if (parts.length > 1) void run.runAll(parts, agentIdOf(sheet.agentId), sheet.catalog);
    else void run.run(r.text, agentIdOf(sheet.agentId), sheet.catalog, r.from);
  };
  const startAll = (all: RunText[]) => {
    if (running || !all.length) return;
    void run.runAll(all, agentIdOf(sheet.agentId), sheet.catalog);
  };
  // Which statement's result shows (after "run all"): the one being run, unless another was picked.
  const [picked, setPicked] = useState<{ runNumber: number; step: number } | null>(null);
  const shown = picked && picked.runNumber === run.runNumber && picked.step < run.steps.length ? picked.step : run.current;
  const step = run.steps[shown] ?? { from: run.from, query: run.query, error: run.error };
  const failedMessage = step.query ? (queryError(step.query)?.message ?? null) : null;
  const place = errorPlace(sheet.sql, step.from, step.query?.sql.length ?? sheet.sql.length - step.from, step.error, failedMessage);
  const [shortcuts, setShortcuts] = useState(false);
  const [tree, setTree] = useState(true);
  const [saved, setSaved] = useState<{ at: string } | { error: unknown } | null>(null);
  // Saves the whole worksheet as the workspace's saved query of its name (replacing one of the same name).
  const save = async () => {
    const name = sheet.savedName ?? sheet.title;
    try {
      await call('POST /api/workspaces/{workspace}/saved-queries', {
        path: { workspace: props.ws },
        body: { name, sql: sheet.sql, default_agent_id: agentIdOf(sheet.agentId), catalog: sheet.catalog },
      });
      props.onChange({ savedName: name });
      setSaved({ at: new Date().toLocaleTimeString() });
    } catch (error) {
      setSaved({ error });
    }
  };
  const failed = step.query ? queryError(step.query) : null;
  // A statement of this worksheet that made, changed or dropped a table (or schema): the tree and completion reload.
  const seenDdl = useRef(new Set<string>());
  const schemaChanged = useRef(props.onSchemaChanged);
  schemaChanged.current = props.onSchemaChanged;
  useEffect(() => {
    const ddl = run.steps.filter((st) => st.query?.status === 'done' && !seenDdl.current.has(st.query.id) && DDL.test(st.query.sql ?? ''));
    if (!ddl.length) return;
    for (const st of ddl) seenDdl.current.add(st.query!.id);
    schemaChanged.current();
  }, [run.steps]);

  return (
    <div className="worksheet">
      {/* one grid row: the toolbar and the notes under it */}
      <div className="worksheet-head">
        <div className="toolbar" role="toolbar" aria-label="Worksheet">
          <AgentPicker value={sheet.agentId} onChange={(agentId) => props.onChange({ agentId })} allowPool />
          <label className="inline">
            Catalog
            <select
              aria-label="Catalog"
              className="catalog-picker"
              value={sheet.catalog ?? ''}
              onChange={(e) => props.onChange({ catalog: e.target.value || null })}
              title={props.catalogsError ? `Catalog list unavailable: ${(props.catalogsError as Error).message}` : (sheet.catalog ?? 'Workspace default')}
            >
              <option value="">{props.catalogsError ? 'Workspace default (list unavailable)' : 'Workspace default'}</option>
              {(props.catalogs ?? []).map((c) => (
                <option key={c.id} value={c.slug}>
                  {c.slug}
                  {c.is_default ? ' (default)' : ''}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            onClick={() => {
              const r = runFromView(editorHost.current);
              if (r) start(r);
            }}
            disabled={running}
            title="Run the selection, or the statement under the cursor (Ctrl/Cmd+Enter)"
          >
            <Icon name="play" />
            Run
          </button>
          <button type="button" className="secondary" onClick={() => startAll(allFromView(editorHost.current))} disabled={running} title="Run every statement, one after another (Ctrl/Cmd+Shift+Enter)">
            Run all
          </button>
          <button type="button" className="secondary" onClick={() => void run.cancel()} disabled={!running || !run.query}>
            <Icon name="stop" />
            Cancel
          </button>
          <button type="button" className="secondary" onClick={() => formatFromView(editorHost.current)} title="Format the SQL (Shift+Alt+F)">
            <Icon name="wand" />
            Format
          </button>
          <button type="button" className="secondary" onClick={() => void save()} title="Save as a saved query (Ctrl/Cmd+S)">
            <Icon name="save" />
            Save
          </button>
          <button type="button" className="link schema-toggle" aria-pressed={tree} onClick={() => setTree(!tree)} title="Show or hide the schema tree beside the editor">
            Schema
          </button>
          <button type="button" className="link" onClick={() => setShortcuts(true)} title="Keyboard shortcuts (Ctrl/Cmd+Shift+/)">
            Shortcuts
          </button>
          <SharingControls sheet={sheet} status={props.saveStatus} onShare={(visibility) => props.onChange({ visibility })} />
          <StatusPill run={run} />
        </div>
        {/* (a note under the toolbar, not in it: the toolbar keeps one row, and this names the query whole) */}
        {saved && 'at' in saved ? (
          <p className="hint saved-as" role="status">
            Saved as {sheet.savedName ?? sheet.title} at {saved.at}
          </p>
        ) : null}
        <RunProgressLine run={run} />
        {sheet.editable === false ? (
          <p className="notice read-only" role="note">
            Shared by {sheet.ownerName ?? 'another member'}: only they can change it. Changes you make stay in this browser.{' '}
            <button type="button" className="link" onClick={props.onCopy}>
              Save a copy
            </button>
          </p>
        ) : null}
        {connectionNote(run.connection) ? (
          <p className="notice connection-note" role="note" data-connection={run.connection?.kind}>
            {connectionNote(run.connection)}
          </p>
        ) : null}
        {props.saveStatus?.kind === 'error' ? <ErrorNotice error={props.saveStatus.error} what="Saving the worksheet" /> : null}
        {saved && 'error' in saved ? <ErrorNotice error={saved.error} what="Save" /> : null}
      </div>
      {shortcuts ? <ShortcutList onClose={() => setShortcuts(false)} /> : null}
      <div className="editor-row">
        {tree ? (
          <SchemaTree
            names={props.names}
            catalog={sheet.catalog}
            version={props.schemaVersion}
            onRefresh={props.onSchemaChanged}
            onInsert={(text) => insertIntoView(editorHost.current, text)}
          />
        ) : null}
        <div ref={editorHost} className="editor-wrap">
          <SqlEditor
            value={sheet.sql}
            onChange={(sql) => props.onChange({ sql })}
            onRun={start}
            onRunAll={startAll}
            onShortcuts={() => setShortcuts(true)}
            onSave={() => void save()}
            names={props.names}
            catalog={sheet.catalog}
            errorAt={place?.span ?? null}
            label={`SQL of ${sheet.title}`}
          />
        </div>
      </div>
      <div className="result-area">
        {run.steps.length + run.pending > 1 ? (
          <div role="tablist" aria-label="Statements" className="tabs small statements">
            {run.steps.map((st, i) => {
              const status = st.error ? 'failed' : (st.query?.status ?? 'submitting');
              return (
                <button
                  key={i}
                  type="button"
                  role="tab"
                  aria-selected={i === shown}
                  data-status={status}
                  onClick={() => setPicked({ runNumber: run.runNumber, step: i })}
                  title={sheet.sql.slice(st.from, st.from + 200)}
                >
                  Statement {i + 1} <span className={`dot ${status}`}>{status}</span>
                </button>
              );
            })}
            {run.pending > 0 ? <span className="hint">{run.pending} more to run</span> : null}
          </div>
        ) : null}
        {step.error instanceof ApiError && step.error.code === 'sql_syntax_error' && place ? (
          <Notice code="sql_syntax_error" message={`At line ${place.line}, column ${place.column}: ${place.message}`} />
        ) : step.error instanceof ApiError && place ? (
          <Notice code={step.error.code} title={errorTitle(step.error.code, step.error.status)} message={place.message} />
        ) : step.error ? (
          <ErrorNotice error={step.error} />
        ) : null}
        {failed ? <Notice code={failed.code} message={place ? `At line ${place.line}, column ${place.column}: ${failed.message}` : failed.message} /> : null}
        {place?.candidates.length ? (
          <p className="did-you-mean" role="note">
            Did you mean{' '}
            {place.candidates.slice(0, 5).map((c, i) => (
              <span key={c}>
                {i ? ', ' : ''}
                <button
                  type="button"
                  className="link"
                  title={`Put ${c} where the error is marked`}
                  onClick={() => replaceInView(editorHost.current, place.span.from, place.span.to, c)}
                >
                  {c}
                </button>
              </span>
            ))}
            ?
          </p>
        ) : null}
        {step.query?.status === 'done' ? <ResultPanel key={step.query.id} query={step.query} /> : null}
        {step.query?.status === 'cancelled' ? <p role="status">The query was cancelled.</p> : null}
        {!step.query && !step.error && !run.submitting ? (
          <EmptyState icon="table" className="results-empty">
            Results appear here. Ctrl/Cmd+Enter runs the statement under the cursor, or the selection; Ctrl/Cmd+Shift+Enter runs them all.
          </EmptyState>
        ) : null}
      </div>
    </div>
  );
}

/** Statements after which the catalog's names may have changed (temporary objects included: they are cheap to reload). */
const DDL = /^\s*(?:create|drop|alter|comment|rename)\b/i;

/** What each of the toolbar's short save words means, on hover. */
const SAVE_TITLES: Record<string, string> = {
  'Saving…': 'Saving the worksheet on the server',
  'Not saved': 'The server could not be reached: the change is kept in this tab and saved once it can be',
  Unsaved: 'Unsaved changes: saved 800 ms after you stop typing',
  Saved: 'Saved on the server',
};

/** Whether the worksheet is shared with the workspace (its owner switches it), and whether it is saved yet. */
function SharingControls(props: { sheet: Worksheet; status: SaveStatus | null; onShare: (v: 'private' | 'workspace') => void }) {
  const { sheet, status } = props;
  const words =
    sheet.editable === false
      ? null
      : status?.kind === 'saving'
        ? 'Saving…'
        : status?.kind === 'error'
          ? 'Not saved'
          : sheet.dirty
            ? 'Unsaved'
            : sheet.serverId
              ? 'Saved'
              : null;
  return (
    <>
      {sheet.editable === false ? null : (
        // "Shared" on screen (the toolbar keeps one row at 1440 px); its name says with whom, the title says what it means.
        <label className="inline" title="Shared with the workspace: every member can open it (read-only for them)">
          <input type="checkbox" aria-label="Shared with workspace" checked={sheet.visibility === 'workspace'} onChange={(e) => props.onShare(e.target.checked ? 'workspace' : 'private')} />
          Shared
        </label>
      )}
      {words ? (
        <span className="hint worksheet-saved" role="status" title={SAVE_TITLES[words]} data-saved={status?.kind === 'error' ? 'error' : sheet.dirty ? 'pending' : 'saved'}>
          {words}
        </span>
      ) : null}
    </>
  );
}

/** The worksheet's keyboard shortcuts, in a dialog (Escape closes it). */
function ShortcutList(props: { onClose: () => void }) {
  return (
    <ModalDialog label="Keyboard shortcuts" className="shortcuts" onClose={props.onClose}>
      <h2>Keyboard shortcuts</h2>
      <table className="table">
        <tbody>
          {SHORTCUTS.map(([keys, what]) => (
            <tr key={keys}>
              <td>
                <kbd>{keys}</kbd>
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ModalDialog>
  );
}
