// The SQL editor: CodeMirror 6 with the DuckDB dialect's highlighting and keywords, catalog-name completion, and
// Ctrl/Cmd+Enter to run the selection or the statement under the cursor.
import { useEffect, useRef } from 'react';
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection, placeholder } from '@codemirror/view';
import { EditorState, Prec, Compartment } from '@codemirror/state';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { autocompletion, completionKeymap, closeBrackets } from '@codemirror/autocomplete';
import { bracketMatching, syntaxHighlighting, defaultHighlightStyle } from '@codemirror/language';
import { sql } from '@codemirror/lang-sql';
import { DuckDBDialect } from './duckdbDialect.ts';
import { statementAt } from './statementAt.ts';
import { catalogCompletion, type CatalogNames } from './completion.ts';

/** What Ctrl/Cmd+Enter runs: the selection when there is one, else the statement under the cursor. */
export function sqlToRun(view: EditorView): string | null {
  const sel = view.state.selection.main;
  const doc = view.state.doc.toString();
  if (!sel.empty) return doc.slice(sel.from, sel.to).trim() || null;
  return statementAt(doc, sel.head)?.text ?? null;
}

const baseTheme = EditorView.theme({
  '&': { height: '100%', fontSize: '13px', backgroundColor: 'var(--editor-bg)', color: 'var(--fg)' },
  '.cm-scroller': { fontFamily: 'var(--mono)' },
  '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', border: 'none' },
  '.cm-activeLine': { backgroundColor: 'var(--active-line)' },
  '.cm-content': { caretColor: 'var(--fg)' },
  '&.cm-focused .cm-cursor': { borderLeftColor: 'var(--fg)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: 'var(--selection) !important' },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--fg)', border: '1px solid var(--border)' },
});

export function SqlEditor(props: {
  value: string;
  onChange: (sql: string) => void;
  onRun: (sql: string) => void;
  /** Ctrl/Cmd+S: save the worksheet as a saved query */
  onSave?: () => void;
  names: CatalogNames;
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // Callbacks change every render; the editor reads the latest through refs instead of being rebuilt.
  const onChange = useRef(props.onChange);
  const onRun = useRef(props.onRun);
  const onSave = useRef(props.onSave);
  onChange.current = props.onChange;
  onRun.current = props.onRun;
  onSave.current = props.onSave;
  const completionSlot = useRef(new Compartment());

  useEffect(() => {
    const run = (v: EditorView) => {
      const text = sqlToRun(v);
      if (text) onRun.current(text);
      return true;
    };
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          lineNumbers(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          bracketMatching(),
          closeBrackets(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          sql({ dialect: DuckDBDialect, upperCaseKeywords: true }),
          completionSlot.current.of(autocompletion({ override: null })),
          placeholder('Write SQL. Ctrl/Cmd+Enter runs the statement under the cursor.'),
          Prec.highest(
            keymap.of([
              { key: 'Mod-Enter', run },
              // The browser's own "save page" never makes sense here.
              { key: 'Mod-s', preventDefault: true, run: () => (onSave.current?.(), true) },
            ]),
          ),
          keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) onChange.current(u.state.doc.toString());
          }),
          EditorView.contentAttributes.of({ 'aria-label': props.label, 'aria-multiline': 'true' }),
          baseTheme,
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // The editor is created once per tab; later value changes come from typing.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    // Completion sources: the dialect's keywords (from the language) plus catalog names from the api.
    const source = catalogCompletion(props.names);
    v.dispatch({
      effects: completionSlot.current.reconfigure([
        autocompletion({ activateOnTyping: true }),
        EditorState.languageData.of(() => [{ autocomplete: source }]),
      ]),
    });
  }, [props.names]);

  return <div ref={host} className="editor" data-testid="sql-editor" />;
}

/** Runs the editor's current statement from outside (the Run button). */
export function runFromView(hostEl: HTMLElement | null): string | null {
  const el = hostEl?.querySelector('.cm-editor');
  const v = el ? EditorView.findFromDOM(el as HTMLElement) : null;
  return v ? sqlToRun(v) : null;
}
