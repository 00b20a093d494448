// Switches the workspace every worksheet, catalog and history screen works in; the choice is remembered.
import { navigate, useLocation } from './router.ts';
import { useSession } from './session.tsx';
import type { Workspace } from '../api/types.ts';

const KEY = 'eider.workspace';

export function rememberWorkspace(slug: string) {
  localStorage.setItem(KEY, slug);
}

export function preferredWorkspace(list: Workspace[]): string | null {
  const saved = localStorage.getItem(KEY);
  if (saved && list.some((w) => w.slug === saved)) return saved;
  return list[0]?.slug ?? null;
}

export function WorkspaceSwitcher(props: { current: string | null }) {
  const { workspaces } = useSession();
  const { path } = useLocation();
  const change = (slug: string) => {
    if (slug === '__new') return navigate('/workspaces/new');
    // Keep the same screen in the other workspace; item paths (a table) may not exist there, so go to its root.
    const m = /^\/w\/[^/]+\/([^/]+)/.exec(path);
    const screen = m ? m[1] : 'worksheets';
    navigate(`/w/${encodeURIComponent(slug)}/${screen}`);
  };
  const here = workspaces.find((w) => w.slug === props.current);
  const currentName = here ? `${here.name} (${here.slug})` : props.current;
  return (
    <label className="rail-field">
      <span className="rail-caption">Workspace</span>
      <select aria-label="Workspace" title={currentName ? `Workspace: ${currentName}` : 'Workspace'} value={props.current ?? ''} onChange={(e) => change(e.target.value)}>
        {props.current && !workspaces.some((w) => w.slug === props.current) ? <option value={props.current}>{props.current}</option> : null}
        {workspaces.map((w) => (
          <option key={w.id} value={w.slug}>
            {/* the name alone fits the rail; the slug tells two same-named workspaces apart */}
            {workspaces.some((o) => o !== w && o.name === w.name) ? `${w.name} (${w.slug})` : w.name}
          </option>
        ))}
        <option value="__new">New workspace…</option>
      </select>
    </label>
  );
}
