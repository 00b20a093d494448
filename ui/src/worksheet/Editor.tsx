// The SQL editor: CodeMirror 6 with DuckDB's highlighting (colours from the theme's custom properties, so dark mode
// reads at WCAG AA contrast), completion of the tables in scope and DuckDB's own words, the position of the last
// error marked in the text, and Ctrl/Cmd+Enter to run the selection or the statement under the cursor.
import { useEffect, useRef } from 'react';
import { Decoration, EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection, placeholder, type DecorationSet } from '@codemirror/view';
import { EditorState, Prec, Compartment, StateEffect, StateField } from '@codemirror/state';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { autocompletion, closeBrackets, closeCompletion, completionKeymap } from '@codemirror/autocomplete';
import { bracketMatching, HighlightStyle, LanguageSupport, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';
import { DuckDBDialect } from './duckdbDialect.ts';
import { splitStatements, statementAt } from './statementAt.ts';
import { formatSql } from './formatSql.ts';
import { sqlCompletion, type CatalogNames } from './completion.ts';

/** The text a run sends, and where it starts in the editor (an error's position is relative to it). */
export interface RunText {
  text: string;
  from: number;
}

/** What Ctrl/Cmd+Enter runs: the selection when there is one, else the statement under the cursor. */
export function sqlToRun(view: EditorView): RunText | null {
  const sel = view.state.selection.main;
  const doc = view.state.doc.toString();
  if (!sel.empty) {
    const raw = doc.slice(sel.from, sel.to);
    const text = raw.trim();
    return text ? { text, from: sel.from + (raw.length - raw.trimStart().length) } : null;
  }
  const s = statementAt(doc, sel.head);
  return s ? { text: s.text, from: s.from } : null;
}

/** Every statement of the editor's text, in order ("run all"). */
function allToRun(view: EditorView): RunText[] {
  return splitStatements(view.state.doc.toString()).map((s) => ({ text: s.text, from: s.from }));
}

/** Formats the selection, or the whole text when nothing is selected; one undoable change. */
function formatInView(view: EditorView): boolean {
  const sel = view.state.selection.main;
  const from = sel.empty ? 0 : sel.from;
  const to = sel.empty ? view.state.doc.length : sel.to;
  const text = view.state.sliceDoc(from, to);
  const formatted = formatSql(text);
  if (formatted === text) return true;
  view.dispatch({ changes: { from, to, insert: formatted }, selection: { anchor: from + (sel.empty ? Math.min(sel.head, formatted.length) : formatted.length) }, userEvent: 'input.format' });
  return true;
}

/** The shortcuts the worksheet answers, for its shortcut list. */
export const SHORTCUTS: Array<[string, string]> = [
  ['Ctrl/Cmd+Enter', 'Run the selection, or the statement under the cursor'],
  ['Ctrl/Cmd+Shift+Enter', 'Run all statements, one after another'],
  ['Shift+Alt+F', 'Format the SQL (the selection, or all of it)'],
  ['Ctrl/Cmd+S', 'Save as a saved query'],
  ['Ctrl+Space', 'Complete: columns of the tables in scope, tables, functions, keywords'],
  ['Ctrl/Cmd+/', 'Comment or uncomment the line'],
  ['Ctrl/Cmd+Z, Ctrl/Cmd+Shift+Z', 'Undo, redo'],
  ['Ctrl/Cmd+Shift+/', 'This list of shortcuts'],
  ['In the result grid: arrows, Shift+arrows, Ctrl/Cmd+A', 'Move, extend the selection, select all'],
  ['In the result grid: Ctrl/Cmd+C', 'Copy the selected cells (tab-separated)'],
  ['In the result grid: Ctrl/Cmd+Shift+C', 'Copy the selected cells with a header row'],
  ['In the result grid: Enter, double-click', 'See a value whole'],
];

// Token colours are custom properties (styles.css), defined for the light and the dark theme.
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.operatorKeyword, t.modifier], color: 'var(--syn-keyword)', fontWeight: '600' },
  { tag: [t.typeName], color: 'var(--syn-type)' },
  { tag: [t.standard(t.name)], color: 'var(--syn-function)' },
  { tag: [t.string, t.special(t.string)], color: 'var(--syn-string)' },
  { tag: [t.number, t.bool, t.null], color: 'var(--syn-number)' },
  { tag: [t.lineComment, t.blockComment], color: 'var(--syn-comment)', fontStyle: 'italic' },
  { tag: [t.operator, t.punctuation, t.paren, t.brace, t.squareBracket], color: 'var(--syn-punct)' },
  { tag: [t.name, t.special(t.name)], color: 'var(--fg)' },
]);

const baseTheme = EditorView.theme({
  '&': { height: '100%', fontSize: '13px', backgroundColor: 'var(--editor-bg)', color: 'var(--fg)' },
  '.cm-scroller': { fontFamily: 'var(--mono)' },
  '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', border: 'none' },
  '.cm-activeLine': { backgroundColor: 'var(--active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--active-line)' },
  '.cm-content': { caretColor: 'var(--fg)' },
  '&.cm-focused .cm-cursor': { borderLeftColor: 'var(--fg)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: 'var(--selection) !important' },
  '&.cm-focused .cm-matchingBracket': { backgroundColor: 'var(--selection)', outline: '1px solid var(--muted)' },
  '.cm-placeholder': { color: 'var(--muted)' },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--fg)', border: '1px solid var(--border)' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--accent-fg)' },
  '.cm-completionDetail': { color: 'var(--muted)', marginLeft: '0.6em', fontStyle: 'normal' },
  '.cm-tooltip-autocomplete ul li[aria-selected] .cm-completionDetail': { color: 'inherit' },
  '.cm-error-mark': { textDecoration: 'underline wavy var(--danger)', textUnderlineOffset: '3px', backgroundColor: 'var(--error-bg)' },
  '.cm-error-line': { backgroundColor: 'var(--error-bg)' },
});

/** Where the last run's error points in the editor, or null to clear the mark. */
const setErrorMark = StateEffect.define<{ from: number; to: number } | null>();

const errorMark = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    marks = marks.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setErrorMark)) continue;
      if (!e.value) return Decoration.none;
      const len = tr.state.doc.length;
      const from = Math.max(0, Math.min(e.value.from, len));
      const to = Math.max(from, Math.min(e.value.to, len));
      const line = tr.state.doc.lineAt(from);
      const ranges = [Decoration.line({ class: 'cm-error-line' }).range(line.from)];
      if (to > from) ranges.push(Decoration.mark({ class: 'cm-error-mark', attributes: { title: 'The error is here' } }).range(from, to));
      marks = Decoration.set(ranges);
    }
    return marks;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/** The span to mark for an error at `pos`: the word there, or the character before the end of the text. */
export function errorSpan(doc: string, pos: number): { from: number; to: number } {
  let from = Math.max(0, Math.min(pos, doc.length));
  if (from >= doc.length || /\s/.test(doc[from] ?? '')) {
    // "at end of input", or between words: the last word before the position
    while (from > 0 && /\s/.test(doc[from - 1])) from--;
    let start = from;
    while (start > 0 && /[\w$]/.test(doc[start - 1])) start--;
    return start < from ? { from: start, to: from } : { from: Math.max(0, from - 1), to: from };
  }
  let to = from;
  while (to < doc.length && /[\w$]/.test(doc[to])) to++;
  return { from, to: Math.max(to, from + 1) };
}

export function SqlEditor(props: {
  value: string;
  onChange: (sql: string) => void;
  onRun: (run: RunText) => void;
  /** Ctrl/Cmd+Shift+Enter: run every statement in order */
  onRunAll?: (statements: RunText[]) => void;
  /** Ctrl/Cmd+Shift+/: show the shortcut list */
  onShortcuts?: () => void;
  /** Ctrl/Cmd+S: save the worksheet as a saved query */
  onSave?: () => void;
  names: CatalogNames;
  /** the worksheet's catalog (null: the workspace default), for completing unqualified table names */
  catalog?: string | null;
  /** the span of the last run's error, marked in the text */
  errorAt?: { from: number; to: number } | null;
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // Callbacks change every render; the editor reads the latest through refs instead of being rebuilt.
  const onChange = useRef(props.onChange);
  const onRun = useRef(props.onRun);
  const onSave = useRef(props.onSave);
  const onRunAll = useRef(props.onRunAll);
  const onShortcuts = useRef(props.onShortcuts);
  onRunAll.current = props.onRunAll;
  onShortcuts.current = props.onShortcuts;
  const catalog = useRef(props.catalog ?? null);
  onChange.current = props.onChange;
  onRun.current = props.onRun;
  onSave.current = props.onSave;
  catalog.current = props.catalog ?? null;
  const completionSlot = useRef(new Compartment());

  useEffect(() => {
    const run = (v: EditorView) => {
      closeCompletion(v); // a list left open would cover the result's first lines
      const r = sqlToRun(v);
      if (r) onRun.current(r);
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
          syntaxHighlighting(highlight),
          // The language alone: its generic keyword completion is replaced by sqlCompletion's DuckDB words.
          new LanguageSupport(DuckDBDialect.language),
          completionSlot.current.of(autocompletion({ override: null })),
          errorMark,
          placeholder('Write SQL. Ctrl/Cmd+Enter runs the statement under the cursor.'),
          Prec.highest(
            keymap.of([
              { key: 'Mod-Enter', run },
              {
                key: 'Mod-Shift-Enter',
                run: (v) => {
                  closeCompletion(v);
                  const all = allToRun(v);
                  if (all.length) onRunAll.current?.(all);
                  return true;
                },
              },
              { key: 'Shift-Alt-f', run: formatInView },
              { key: 'Mod-Shift-/', preventDefault: true, run: () => (onShortcuts.current?.(), true) },
              { key: 'Mod-?', preventDefault: true, run: () => (onShortcuts.current?.(), true) },
              // The browser's own "save page" never makes sense here.
              { key: 'Mod-s', preventDefault: true, run: () => (onSave.current?.(), true) },
            ]),
          ),
          keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) onChange.current(u.state.doc.toString());
          }),
          // tabindex: the editing area already takes focus (contenteditable); saying so lets axe-core see that a long
          // line's horizontally scrolling region holds something focusable (scrollable-region-focusable, serious).
          EditorView.contentAttributes.of({ 'aria-label': props.label, 'aria-multiline': 'true', tabindex: '0' }),
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
    const source = sqlCompletion(props.names, () => catalog.current);
    v.dispatch({
      effects: completionSlot.current.reconfigure([autocompletion({ activateOnTyping: true, override: [source] })]),
    });
  }, [props.names]);

  const errorFrom = props.errorAt?.from ?? null;
  const errorTo = props.errorAt?.to ?? null;
  useEffect(() => {
    view.current?.dispatch({ effects: setErrorMark.of(errorFrom === null || errorTo === null ? null : { from: errorFrom, to: errorTo }) });
  }, [errorFrom, errorTo]);

  return <div ref={host} className="editor" data-testid="sql-editor" />;
}

const viewIn = (hostEl: HTMLElement | null) => {
  const el = hostEl?.querySelector('.cm-editor');
  return el ? EditorView.findFromDOM(el as HTMLElement) : null;
};

/** The editor's current statement, for running it from outside (the Run button). */
export function runFromView(hostEl: HTMLElement | null): RunText | null {
  const v = viewIn(hostEl);
  return v ? sqlToRun(v) : null;
}

/** Every statement in the editor (the Run all button). */
export function allFromView(hostEl: HTMLElement | null): RunText[] {
  const v = viewIn(hostEl);
  return v ? allToRun(v) : [];
}

/** Formats the editor's SQL from outside (the Format button), and gives the editor the focus back. */
export function formatFromView(hostEl: HTMLElement | null): void {
  const v = viewIn(hostEl);
  if (!v) return;
  formatInView(v);
  v.focus();
}

/** Inserts text at the editor's cursor (replacing the selection), from outside (the schema tree). */
export function insertIntoView(hostEl: HTMLElement | null, text: string): void {
  const v = viewIn(hostEl);
  if (!v) return;
  v.dispatch(v.state.replaceSelection(text), { scrollIntoView: true, userEvent: 'input' });
  v.focus();
}

/** Replaces a range of the editor's text from outside (a "did you mean" suggestion), selecting what it put there. */
export function replaceInView(hostEl: HTMLElement | null, from: number, to: number, text: string): void {
  const v = viewIn(hostEl);
  if (!v) return;
  const len = v.state.doc.length;
  const a = Math.min(from, len);
  v.dispatch({ changes: { from: a, to: Math.min(to, len), insert: text }, selection: { anchor: a, head: a + text.length }, scrollIntoView: true, userEvent: 'input' });
  v.focus();
}
