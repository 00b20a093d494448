// Who is signed in and which workspaces they have: loaded once after sign-in, shared by every screen.
import { createContext, useContext } from 'react';
import type { User, Workspace } from '../api/types.ts';

export interface Session {
  user: User;
  workspaces: Workspace[];
  /** reloads the user and workspace list (after creating a workspace, for example) */
  refresh: () => Promise<void>;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in app');
  return s;
}

export const isAdmin = (u: User) => u.role === 'admin';
export const hasPermission = (u: User, p: string) => u.role === 'admin' || u.permissions.includes(p);
