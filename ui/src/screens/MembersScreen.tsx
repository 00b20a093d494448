// A workspace's members and their roles. Everyone in the workspace sees the list; owners (and administrators, who
// act as owners) add a user, change a role and remove a member. The api names members by user id: an administrator
// picks the user by name or email from the users list; others, who may not list users, paste the user's id.
import { useMemo, useState, type FormEvent } from 'react';
import { call } from '../api/client.ts';
import { isAdmin, useSession } from '../app/session.tsx';
import { useAction } from '../app/useAction.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { TableHead } from '../components/TableHead.tsx';

const ROLES = ['reader', 'writer', 'owner'] as const;
type Role = (typeof ROLES)[number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function MembersScreen(props: { ws: string }) {
  const session = useSession();
  const admin = isAdmin(session.user);
  const members = useAsync((signal) => call('GET /api/workspaces/{workspace}/members', { path: { workspace: props.ws }, signal }), [props.ws]);
  const putMember = (user_id: string, role: Role) => call('PUT /api/workspaces/{workspace}/members/{user_id}', { path: { workspace: props.ws, user_id }, body: { role } });
  // Only administrators may list users (GET /api/admin/users); the first 1,000 are enough to pick from.
  const users = useAsync(
    (signal) => (admin ? call('GET /api/admin/users', { signal, query: { limit: 1000 } }).then((p) => p.items) : Promise.resolve([])),
    [admin],
  );
  const mine = members.data?.find((m) => m.user_id === session.user.id)?.role;
  const canManage = admin || mine === 'owner';
  const [who, setWho] = useState('');
  const [role, setRole] = useState<Role>('reader');
  const [notice, setNotice] = useState<string | null>(null);

  const candidates = useMemo(() => {
    const inWs = new Set((members.data ?? []).map((m) => m.user_id));
    return (users.data ?? []).filter((u) => u.is_active && !inWs.has(u.id));
  }, [users.data, members.data]);

  const { error, setError, run } = useAction(members.reload);
  const act = (fn: () => Promise<unknown>, done?: string) => {
    setNotice(null);
    return run(async () => {
      await fn();
      if (done) setNotice(done);
    });
  };

  const add = (e: FormEvent) => {
    e.preventDefault();
    const text = who.trim();
    const lower = text.toLowerCase();
    const user = (users.data ?? []).find((u) => u.id === text || (u.email ?? '').toLowerCase() === lower);
    const id = user?.id ?? (UUID.test(text) ? text : null);
    if (!id) {
      setNotice(null);
      setError(
        new Error(admin ? `No active user has the email or id “${text}”.` : 'Enter the user’s id: only an administrator can look users up by email.'),
      );
      return;
    }
    void act(async () => {
      await putMember(id, role);
      setWho('');
    }, `Added ${user?.name ?? id} as ${role}.`);
  };

  return (
    <section>
      <h1>Members of {props.ws}</h1>
      {canManage ? (
        <form className="row wrap" onSubmit={add} aria-label="Add a member">
          <label className="inline">
            {admin ? 'User (email or pick)' : 'User id'}
            <input
              aria-label={admin ? 'User email' : 'User id'}
              list={admin ? 'member-candidates' : undefined}
              placeholder={admin ? 'name@example.com' : '00000000-0000-…'}
              required
              value={who}
              onChange={(e) => setWho(e.target.value)}
            />
          </label>
          {admin ? (
            <datalist id="member-candidates">
              {candidates.map((u) => (
                <option key={u.id} value={u.email ?? u.id}>
                  {u.name}
                </option>
              ))}
            </datalist>
          ) : null}
          <select aria-label="New member's role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <button type="submit">Add member</button>
        </form>
      ) : members.data ? (
        <p className="hint">Only the workspace's owners change its members{mine ? `; you are a ${mine}` : ''}.</p>
      ) : null}
      {notice ? (
        <p role="status" className="hint">
          {notice}
        </p>
      ) : null}
      {error ? <ErrorNotice error={error} what="Members" /> : null}
      {users.error ? <ErrorNotice error={users.error} what="Users" /> : null}
      {members.error ? <ErrorNotice error={members.error} what="Members" /> : null}
      {members.loading && !members.data ? <Loading /> : null}
      {members.data ? (
        <table className="table" aria-label="Members">
          <TableHead columns={['Name', 'Email', 'Role']} actions />
          <tbody>
            {members.data.map((m) => (
              <tr key={m.user_id}>
                <td>
                  {m.name}
                  {m.user_id === session.user.id ? ' (you)' : ''}
                </td>
                <td>{m.email ?? '—'}</td>
                <td>
                  {canManage ? (
                    <select
                      aria-label={`Role of ${m.name}`}
                      value={m.role}
                      onChange={(e) => void act(() => putMember(m.user_id, e.target.value as Role), `${m.name} is now ${e.target.value}.`)}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                <td>
                  {canManage ? (
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Remove ${m.name}`}
                      onClick={() => {
                        if (confirm(`Remove ${m.name} from ${props.ws}?`)) void act(() => call('DELETE /api/workspaces/{workspace}/members/{user_id}', { path: { workspace: props.ws, user_id: m.user_id } }), `Removed ${m.name}.`);
                      }}
                    >
                      Remove
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
