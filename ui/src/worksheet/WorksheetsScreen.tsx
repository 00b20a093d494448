// Worksheets: tabs of SQL, each with its agent and catalog, its editor, run controls and the last run's result.
import { useEffect, useMemo, useRef, useState } from 'react';
import { api, enc } from '../api/client.ts';
import type { WorkspaceCatalog } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { ResultPanel } from '../results/ResultPanel.tsx';
import { AgentPicker, agentIdOf } from './AgentPicker.tsx';
import { CatalogNames } from './completion.ts';
import { SqlEditor, runFromView } from './Editor.tsx';
import { StatusPill } from './StatusPill.tsx';
import { isTerminal, queryError, useQueryRun } from './useQueryRun.ts';
import { blankWorksheet, loadWorksheets, saveWorksheets, type Worksheet, type WorksheetState } from './worksheetStore.ts';

export function WorksheetsScreen(props: { ws: string }) {
  const [state, setState] = useState<WorksheetState>(() => loadWorksheets(props.ws));
  useEffect(() => saveWorksheets(props.ws, state), [props.ws, state]);
  const names = useMemo(() => new CatalogNames(props.ws), [props.ws]);
  const catalogs = useAsync((signal) => api.get<WorkspaceCatalog[]>(`/api/workspaces/${enc(props.ws)}/catalogs`, { signal }), [props.ws]);

  const active = state.tabs.find((t) => t.id === state.active) ?? state.tabs[0];
  const update = (id: string, patch: Partial<Worksheet>) =>
    setState((s) => ({ ...s, tabs: s.tabs.map((t) => (t.id === id ? { ...t, ...patch } : t)) }));
  const addTab = () =>
    setState((s) => {
      const t = blankWorksheet(s.tabs.length + 1);
      t.agentId = active?.agentId ?? null;
      return { tabs: [...s.tabs, t], active: t.id };
    });
  const closeTab = (id: string) =>
    setState((s) => {
      const tabs = s.tabs.filter((t) => t.id !== id);
      if (!tabs.length) tabs.push(blankWorksheet(1));
      return { tabs, active: s.active === id ? tabs[Math.max(0, s.tabs.findIndex((t) => t.id === id) - 1)].id : s.active };
    });

  return (
    <section className="worksheets">
      <h1 className="sr-only">Worksheets</h1>
      <div className="tabs" role="tablist" aria-label="Worksheets">
        {state.tabs.map((t) => (
          <span key={t.id} className="tab-wrap">
            <button
              type="button"
              role="tab"
              aria-selected={t.id === active.id}
              onClick={() => setState((s) => ({ ...s, active: t.id }))}
              onDoubleClick={() => {
                const title = prompt('Rename worksheet', t.title);
                if (title) update(t.id, { title });
              }}
            >
              {t.title}
            </button>
            <button type="button" className="tab-close" aria-label={`Close ${t.title}`} onClick={() => closeTab(t.id)}>
              ×
            </button>
          </span>
        ))}
        <button type="button" className="tab-add" aria-label="New worksheet" onClick={addTab}>
          +
        </button>
      </div>
      {state.tabs.map((t) => (
        // Every tab stays mounted (hidden when inactive) so its editor, undo history and result survive switching.
        <div key={t.id} role="tabpanel" hidden={t.id !== active.id} aria-label={t.title} className="worksheet-pane">
          <WorksheetPane
            ws={props.ws}
            sheet={t}
            names={names}
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
  names: CatalogNames;
  catalogs: WorkspaceCatalog[] | null;
  catalogsError: unknown;
  onChange: (patch: Partial<Worksheet>) => void;
}) {
  const { sheet } = props;
  const run = useQueryRun(props.ws);
  const editorHost = useRef<HTMLDivElement>(null);
  const running = run.submitting || (run.query !== null && !isTerminal(run.query.status) && !run.error);

  const start = (sql: string) => {
    if (running) return;
    void run.run(sql, agentIdOf(sheet.agentId), sheet.catalog);
  };
  const [saved, setSaved] = useState<{ at: string } | { error: unknown } | null>(null);
  // Saves the whole worksheet as the workspace's saved query of its name (replacing one of the same name).
  const save = async () => {
    const name = sheet.savedName ?? sheet.title;
    try {
      await api.post(`/api/workspaces/${enc(props.ws)}/saved-queries`, { name, sql: sheet.sql, default_agent_id: agentIdOf(sheet.agentId), catalog: sheet.catalog });
      props.onChange({ savedName: name });
      setSaved({ at: new Date().toLocaleTimeString() });
    } catch (error) {
      setSaved({ error });
    }
  };
  const failed = run.query ? queryError(run.query) : null;

  return (
    <div className="worksheet">
      <div className="toolbar" role="toolbar" aria-label="Worksheet">
        <AgentPicker value={sheet.agentId} onChange={(agentId) => props.onChange({ agentId })} allowPool />
        <label className="inline">
          Catalog
          <select
            aria-label="Catalog"
            value={sheet.catalog ?? ''}
            onChange={(e) => props.onChange({ catalog: e.target.value || null })}
            title={props.catalogsError ? `Catalog list unavailable: ${(props.catalogsError as Error).message}` : undefined}
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
            const sql = runFromView(editorHost.current);
            if (sql) start(sql);
          }}
          disabled={running}
          title="Run (Ctrl/Cmd+Enter)"
        >
          Run
        </button>
        <button type="button" className="secondary" onClick={() => void run.cancel()} disabled={!running || !run.query}>
          Cancel
        </button>
        <button type="button" className="secondary" onClick={() => void save()} title="Save as a saved query (Ctrl/Cmd+S)">
          Save
        </button>
        {saved && 'at' in saved ? (
          <span className="hint" role="status">
            Saved as {sheet.savedName ?? sheet.title} at {saved.at}
          </span>
        ) : null}
        <StatusPill run={run} />
      </div>
      {saved && 'error' in saved ? <ErrorNotice error={saved.error} what="Save" /> : null}
      <div ref={editorHost} className="editor-wrap">
        <SqlEditor value={sheet.sql} onChange={(sql) => props.onChange({ sql })} onRun={start} onSave={() => void save()} names={props.names} label={`SQL of ${sheet.title}`} />
      </div>
      <div className="result-area">
        {run.error ? <ErrorNotice error={run.error} /> : null}
        {failed ? (
          <div className="notice notice-error" role="alert">
            <code className="error-code">{failed.code}</code> {failed.message}
          </div>
        ) : null}
        {run.query?.status === 'done' ? <ResultPanel key={run.query.id} query={run.query} /> : null}
        {run.query?.status === 'cancelled' ? <p role="status">The query was cancelled.</p> : null}
        {!run.query && !run.error && !run.submitting ? <p className="hint">Results appear here. Ctrl/Cmd+Enter runs the statement under the cursor, or the selection.</p> : null}
      </div>
    </div>
  );
}
