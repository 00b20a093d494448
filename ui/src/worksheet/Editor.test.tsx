// @vitest-environment happy-dom
// What Ctrl/Cmd+Enter runs in the real editor: the selection when there is one, else the statement under the cursor;
// and the key binding itself submits it.
import { describe, expect, it } from 'vitest';
import { testRoot } from '../testing/testRoot.ts';
import { EditorView } from '@codemirror/view';
import { EditorSelection } from '@codemirror/state';
import { SqlEditor, sqlToRun } from './Editor.tsx';
import { CatalogNames } from './completion.ts';


const root = testRoot();

async function mount(sql: string) {
  const ran: string[] = [];
  const host = await root.mount(<SqlEditor value={sql} onChange={() => {}} onRun={(s) => ran.push(s.text)} names={new CatalogNames('default')} label="SQL" />);
  const view = EditorView.findFromDOM(host.querySelector('.cm-editor') as HTMLElement)!;
  return { view, ran };
}

describe('editor: what runs', () => {
  const sql = 'SELECT 1;\nSELECT 2 AS two;\nSELECT 3;';

  it('the statement under the cursor', async () => {
    const { view } = await mount(sql);
    view.dispatch({ selection: EditorSelection.cursor(sql.indexOf('two')) });
    expect(sqlToRun(view)).toEqual({ text: 'SELECT 2 AS two', from: sql.indexOf('SELECT 2') });
    view.dispatch({ selection: EditorSelection.cursor(sql.length) });
    expect(sqlToRun(view)).toEqual({ text: 'SELECT 3', from: sql.indexOf('SELECT 3') });
  });

  it('the selection when there is one', async () => {
    const { view } = await mount(sql);
    view.dispatch({ selection: EditorSelection.range(sql.indexOf('SELECT 2') - 1, sql.indexOf(' AS two')) });
    expect(sqlToRun(view)).toEqual({ text: 'SELECT 2', from: sql.indexOf('SELECT 2') }); // from: where the trimmed text starts
  });

  it('Mod-Enter submits it', async () => {
    const { view, ran } = await mount(sql);
    view.dispatch({ selection: EditorSelection.cursor(2) });
    view.focus();
    const key = { key: 'Enter', code: 'Enter', ctrlKey: true, metaKey: false, bubbles: true, cancelable: true };
    const isMac = /Mac/.test(navigator.platform);
    view.contentDOM.dispatchEvent(new KeyboardEvent('keydown', isMac ? { ...key, ctrlKey: false, metaKey: true } : key));
    expect(ran).toEqual(['SELECT 1']);
  });
});
