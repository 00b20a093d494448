// Boot sequence: first-run setup when no admin exists, sign-in when there is no session, else the signed-in app.
import { useCallback, useEffect, useState } from 'react';
import { ApiError, call, setUnauthorizedHandler } from '../api/client.ts';
import type { User, Workspace } from '../api/types.ts';
import { SessionContext, type Session } from './session.tsx';
import { SetupScreen } from '../screens/SetupScreen.tsx';
import { SignInScreen } from '../screens/SignInScreen.tsx';
import { Shell } from './Shell.tsx';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { forgetAllRefused } from '../worksheet/refusedLog.ts';

type Boot =
  | { kind: 'loading' }
  | { kind: 'setup' }
  | { kind: 'signin'; notice?: string }
  | { kind: 'ready'; user: User; workspaces: Workspace[] }
  | { kind: 'error'; error: unknown };

export function App() {
  const [boot, setBoot] = useState<Boot>({ kind: 'loading' });

  const load = useCallback(async () => {
    try {
      const status = await call('GET /api/setup/status');
      if (status.needs_admin) return setBoot({ kind: 'setup' });
      const user = await call('GET /api/me');
      const workspaces = await call('GET /api/workspaces');
      setBoot({ kind: 'ready', user, workspaces });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setBoot({ kind: 'signin' });
      else setBoot({ kind: 'error', error: e });
    }
  }, []);

  useEffect(() => {
    void load();
    setUnauthorizedHandler(() => setBoot({ kind: 'signin', notice: 'Your session ended. Sign in again.' }));
    return () => setUnauthorizedHandler(null);
  }, [load]);

  if (boot.kind === 'loading') return <Loading label="Starting Eider…" />;
  if (boot.kind === 'error')
    return (
      <main className="centered">
        <h1>Eider</h1>
        <ErrorNotice error={boot.error} />
        <button type="button" onClick={() => void load()}>
          Retry
        </button>
      </main>
    );
  if (boot.kind === 'setup') return <SetupScreen onDone={load} />;
  if (boot.kind === 'signin') return <SignInScreen notice={boot.notice} onSignedIn={load} />;

  const session: Session = {
    user: boot.user,
    workspaces: boot.workspaces,
    refresh: load,
    signOut: async () => {
      try {
        await call('POST /api/auth/logout');
      } finally {
        forgetAllRefused();
        setBoot({ kind: 'signin', notice: 'Signed out.' });
      }
    },
  };
  return (
    <SessionContext.Provider value={session}>
      <Shell />
    </SessionContext.Provider>
  );
}
