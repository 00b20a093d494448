// The signed-in frame: the navigation rail (workspace switcher, screens, theme, account and sign-out) and the screen
// for the current path.
import { lazy, Suspense, useEffect, useState } from 'react';
import { match, navigate, useLocation } from './router.ts';
import { isAdmin, useSession } from './session.tsx';
import { applyTheme, currentTheme, type Theme } from './theme.ts';
import { Link } from '../components/Link.tsx';
import { Icon, type IconName } from '../components/Icon.tsx';
import { Loading } from '../components/ErrorNotice.tsx';
import { WorkspaceSwitcher, rememberWorkspace, preferredWorkspace } from './WorkspaceSwitcher.tsx';
import { CatalogScreen } from '../screens/CatalogScreen.tsx';
import { HistoryScreen } from '../screens/HistoryScreen.tsx';
import { HealthScreen } from '../screens/HealthScreen.tsx';
import { ModelsScreen } from '../screens/ModelsScreen.tsx';
import { SessionsScreen } from '../screens/SessionsScreen.tsx';
import { SchedulesScreen } from '../screens/SchedulesScreen.tsx';
import { AgentsScreen } from '../screens/AgentsScreen.tsx';
import { AgentDetailScreen } from '../screens/AgentDetailScreen.tsx';
import { ComputeScreen } from '../screens/ComputeScreen.tsx';
import { TokensScreen } from '../screens/TokensScreen.tsx';
import { MembersScreen } from '../screens/MembersScreen.tsx';
import { UsersScreen } from '../screens/admin/UsersScreen.tsx';
import { ServiceAccountsScreen } from '../screens/admin/ServiceAccountsScreen.tsx';
import { StorageScreen } from '../screens/admin/StorageScreen.tsx';
import { CatalogsAdminScreen } from '../screens/admin/CatalogsAdminScreen.tsx';
import { MachinesScreen } from '../screens/admin/MachinesScreen.tsx';
import { MigrationsScreen } from '../screens/admin/MigrationsScreen.tsx';
import { AuditScreen } from '../screens/admin/AuditScreen.tsx';
import { InspectScreen } from '../charts/InspectScreen.tsx';
import { NoWorkspaceScreen } from '../screens/NoWorkspaceScreen.tsx';
import { AssistantPanel } from '../assistant/AssistantPanel.tsx';
import { useAssistantAvailable } from '../assistant/useAssistantAvailable.ts';
import { useAssistantShortcut } from '../assistant/useAssistantShortcut.ts';
import { openInWorksheet } from '../worksheet/worksheetStore.ts';

// The editor (CodeMirror) is the largest dependency: loaded with the worksheet, not before sign-in.
const WorksheetsScreen = lazy(() => import('../worksheet/WorksheetsScreen.tsx').then((m) => ({ default: m.WorksheetsScreen })));

export function Shell() {
  const session = useSession();
  const { path } = useLocation();
  const [theme, setTheme] = useState<Theme>(currentTheme());
  const [assistantOpen, setAssistantOpen] = useState(false);
  /** bumped to re-read the worksheets screen from storage after the assistant opened SQL in it */
  const [screenKey, setScreenKey] = useState(0);

  const wsMatch = match('/w/:ws/*', path) ?? match('/w/:ws', path);
  const wsSlug = wsMatch?.ws ?? preferredWorkspace(session.workspaces);

  useEffect(() => {
    if (path === '/' || path === '/index.html') {
      navigate(wsSlug ? `/w/${encodeURIComponent(wsSlug)}/worksheets` : '/workspaces/new', { replace: true });
    }
  }, [path, wsSlug]);
  useEffect(() => {
    if (wsMatch?.ws) rememberWorkspace(wsMatch.ws);
  }, [wsMatch?.ws]);

  useAssistantShortcut(() => setAssistantOpen((open) => !open));
  const assistantOn = useAssistantAvailable(wsSlug);
  const openSql = (sql: string) => {
    if (!wsSlug) return;
    openInWorksheet(wsSlug, sql, 'From the assistant');
    const target = `/w/${encodeURIComponent(wsSlug)}/worksheets`;
    if (path === target) setScreenKey((k) => k + 1);
    else navigate(target);
  };

  const changeTheme = (t: Theme) => {
    applyTheme(t);
    setTheme(t);
  };

  const admin = isAdmin(session.user);
  const wsBase = wsSlug ? `/w/${encodeURIComponent(wsSlug)}` : null;
  const items: Array<[string, string, IconName]> = [
    ...(wsBase
      ? ([
          [`${wsBase}/worksheets`, 'Worksheets', 'code'],
          [`${wsBase}/catalog`, 'Catalog', 'database'],
          [`${wsBase}/health`, 'Health', 'pulse'],
          [`${wsBase}/models`, 'Models', 'layers'],
          [`${wsBase}/history`, 'History', 'clock'],
          [`${wsBase}/schedules`, 'Schedules', 'calendar'],
          [`${wsBase}/sessions`, 'Sessions', 'terminal'],
          [`${wsBase}/members`, 'Members', 'users'],
        ] as Array<[string, string, IconName]>)
      : []),
    ['/agents', 'Agents', 'server'],
    ['/compute', 'Compute', 'bolt'],
    ...(admin ? ([['/admin', 'Admin', 'shield']] as Array<[string, string, IconName]>) : []),
  ];

  return (
    <div className="shell">
      {/* On the worksheets, the first Tab reaches the editor: the link focuses the visible worksheet's SQL. */}
      {match('/w/:ws/worksheets', path) ? (
        <a
          className="skip-link"
          href="#main"
          onClick={(e) => {
            const editor = document.querySelector<HTMLElement>('[role=tabpanel]:not([hidden]) .cm-content');
            if (!editor) return;
            e.preventDefault();
            editor.focus();
          }}
        >
          Skip to the SQL editor
        </a>
      ) : null}
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      {/* The rail: a narrow column of icons with their names, so the screen's own content has the width. */}
      <header className="rail">
        <span className="brand">
          <span className="brand-mark" aria-hidden="true">
            E
          </span>
          Eider
        </span>
        <WorkspaceSwitcher current={wsSlug} />
        <nav aria-label="Main" className="rail-nav">
          {items.map(([href, label, icon]) => (
            <Link key={href} href={href} className="rail-item" title={label} aria-current={path === href || path.startsWith(href + '/') ? 'page' : undefined}>
              <Icon name={icon} />
              <span className="rail-label">{label}</span>
            </Link>
          ))}
        </nav>
        <div className="rail-foot">
          {assistantOn ? (
            <button type="button" className="rail-item" aria-pressed={assistantOpen} title="Assistant (Ctrl+I)" onClick={() => setAssistantOpen((open) => !open)}>
              <Icon name="sparkle" />
              <span className="rail-label">Assistant</span>
            </button>
          ) : null}
          <label className="rail-field">
            <span className="rail-caption">Theme</span>
            <select aria-label="Theme" value={theme} onChange={(e) => changeTheme(e.target.value as Theme)}>
              <option value="system">System</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
          <div className="rail-account">
            <Link href="/me/tokens" className="avatar" aria-current={path === '/me/tokens' ? 'page' : undefined} aria-label={`Account and tokens for ${session.user.name}`} title={`${session.user.name}: account and tokens`}>
              {initials(session.user.name)}
            </Link>
            <button type="button" className="icon-button" aria-label="Sign out" title="Sign out" onClick={() => void session.signOut()}>
              <Icon name="logout" />
            </button>
          </div>
        </div>
      </header>
      <main id="main" className="content">
        <Suspense fallback={<Loading />}>
          <Screen key={screenKey} path={path} />
        </Suspense>
      </main>
      {assistantOpen && wsSlug ? <AssistantPanel ws={wsSlug} onClose={() => setAssistantOpen(false)} onOpenSql={openSql} /> : null}
    </div>
  );
}

function Screen({ path }: { path: string }) {
  const session = useSession();
  let m: Record<string, string> | null;
  if ((m = match('/w/:ws/worksheets', path))) return <WorksheetsScreen key={m.ws} ws={m.ws} />;
  if ((m = match('/w/:ws/catalog/*', path)) || (m = match('/w/:ws/catalog', path)))
    return <CatalogScreen key={m.ws} ws={m.ws} trail={(m['*'] ?? '').split('/').filter(Boolean)} />;
  if ((m = match('/w/:ws/history', path))) return <HistoryScreen key={m.ws} ws={m.ws} />;
  if ((m = match('/w/:ws/health', path))) return <HealthScreen key={m.ws} ws={m.ws} />;
  if ((m = match('/w/:ws/models', path))) return <ModelsScreen key={m.ws} ws={m.ws} />;
  if ((m = match('/w/:ws/models/:model', path))) return <ModelsScreen key={`${m.ws}/${m.model}`} ws={m.ws} model={m.model} />;
  if ((m = match('/w/:ws/schedules', path))) return <SchedulesScreen key={m.ws} ws={m.ws} />;
  if ((m = match('/w/:ws/members', path))) return <MembersScreen key={m.ws} ws={m.ws} />;
  if ((m = match('/w/:ws/sessions', path))) return <SessionsScreen key={m.ws} ws={m.ws} />;
  if ((m = match('/w/:ws/sessions/:id', path))) return <SessionsScreen key={`${m.ws}/${m.id}`} ws={m.ws} id={m.id} />;
  if ((m = match('/w/:ws', path))) return <Redirect to={`/w/${encodeURIComponent(m.ws)}/worksheets`} />;
  if (match('/agents', path)) return <AgentsScreen />;
  if ((m = match('/agents/:id', path))) return <AgentDetailScreen id={m.id} />;
  if (match('/compute', path)) return <ComputeScreen />;
  if (match('/me/tokens', path)) return <TokensScreen />;
  if (match('/workspaces/new', path)) return <NoWorkspaceScreen />;
  if ((m = match('/inspect/:kind/:id', path))) return <InspectScreen kind={m.kind} id={m.id} />;
  if (path.startsWith('/admin')) {
    if (!isAdmin(session.user)) return <p>Administration needs the admin role.</p>;
    return <AdminScreen path={path} />;
  }
  if (path === '/' || path === '/index.html') return null;
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. <Link href="/">Go to your worksheets</Link>.
      </p>
    </section>
  );
}

function AdminScreen({ path }: { path: string }) {
  const tabs: Array<[string, string]> = [
    ['/admin/users', 'Users'],
    ['/admin/service-accounts', 'Service accounts'],
    ['/admin/storage', 'Storage backends'],
    ['/admin/catalogs', 'Catalogs'],
    ['/admin/migrations', 'Migrations'],
    ['/admin/machines', 'State machines'],
    ['/admin/audit', 'Audit'],
  ];
  const current = path === '/admin' ? '/admin/users' : path;
  return (
    <div>
      <nav aria-label="Administration" className="subnav">
        {tabs.map(([href, label]) => (
          <Link key={href} href={href} aria-current={current === href ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {current === '/admin/users' ? <UsersScreen /> : null}
      {current === '/admin/service-accounts' ? <ServiceAccountsScreen /> : null}
      {current === '/admin/storage' ? <StorageScreen /> : null}
      {current === '/admin/catalogs' ? <CatalogsAdminScreen /> : null}
      {current === '/admin/migrations' ? <MigrationsScreen /> : null}
      {current === '/admin/machines' ? <MachinesScreen /> : null}
      {current === '/admin/audit' ? <AuditScreen /> : null}
    </div>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => {
    navigate(to, { replace: true });
  }, [to]);
  return null;
}

/** A name's initials for the account button: "Ada Lovelace" → "AL", "admin@example.com" → "A". */
function initials(name: string): string {
  const words = name.split(/[\s@._-]+/).filter(Boolean);
  if (name.includes('@')) return (words[0]?.[0] ?? '?').toUpperCase();
  return words.slice(0, 2).map((w) => w[0]!.toUpperCase()).join('') || '?';
}
