// Users: list (paged), create, change role, deactivate (which revokes their sessions and tokens) or reactivate.
import { useState, type FormEvent } from 'react';
import { type BodyOf, call } from '../../api/client.ts';
import { useAction } from '../../app/useAction.ts';
import { usePaged } from '../../app/usePaged.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { Time } from '../../components/Time.tsx';
import { TableHead } from '../../components/TableHead.tsx';

export function UsersScreen() {
  const users = usePaged('GET /api/admin/users');
  const [form, setForm] = useState<BodyOf<'POST /api/admin/users'>>({ email: '', name: '', password: '', role: 'member' });
  const { error, run } = useAction(users.reload);
  const create = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await call('POST /api/admin/users', { body: form });
      setForm({ email: '', name: '', password: '', role: 'member' });
    });
  };
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });

  return (
    <section>
      <h1>Users</h1>
      <form className="row wrap" onSubmit={create} aria-label="Create a user">
        <input aria-label="Email" type="email" placeholder="email" required value={form.email} onChange={set('email')} />
        <input aria-label="Name" placeholder="name" required value={form.name} onChange={set('name')} />
        <input aria-label="Initial password" type="password" placeholder="initial password" minLength={8} required value={form.password} onChange={set('password')} />
        <select aria-label="Role" value={form.role} onChange={set('role')}>
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
        <button type="submit">Create user</button>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      {users.error ? <ErrorNotice error={users.error} what="Users" /> : null}
      <table className="table" aria-label="Users">
        <TableHead columns={['Name', 'Email', 'Role', 'Sign-in', 'Active', 'Created']} actions />
        <tbody>
          {users.items.map((u) => (
            <tr key={u.id}>
              <td>{u.name}</td>
              <td>{u.email}</td>
              <td>
                <select
                  aria-label={`Role of ${u.name}`}
                  value={u.role}
                  onChange={(e) => void run(() => call('PATCH /api/admin/users/{user_id}', { path: { user_id: u.id }, body: { role: e.target.value as BodyOf<'PATCH /api/admin/users/{user_id}'>['role'] } }))}
                >
                  <option value="member">member</option>
                  <option value="admin">admin</option>
                </select>
              </td>
              <td>{u.auth_provider}</td>
              <td>{u.is_active ? 'yes' : 'no'}</td>
              <td>
                <Time iso={u.created_at} />
              </td>
              <td>
                <button
                  type="button"
                  className={u.is_active ? 'danger' : 'secondary'}
                  onClick={() => void run(() => call('PATCH /api/admin/users/{user_id}', { path: { user_id: u.id }, body: { is_active: !u.is_active } }))}
                >
                  {u.is_active ? 'Deactivate' : 'Reactivate'}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {users.loading ? <Loading /> : null}
      {users.hasMore && !users.loading ? (
        <button type="button" className="secondary" onClick={users.more}>
          Load more
        </button>
      ) : null}
    </section>
  );
}
