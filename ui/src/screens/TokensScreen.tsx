// Personal access tokens for every user: create one, optionally named for what it is for (its secret is shown once),
// list with names and last use, revoke.
import { useState, type FormEvent } from 'react';
import { call } from '../api/client.ts';
import type { IssuedToken, Token } from '../api/types.ts';
import { useAction } from '../app/useAction.ts';
import { useAsync } from '../app/useAsync.ts';
import { useSession } from '../app/session.tsx';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { SecretOnce } from '../components/SecretOnce.tsx';
import { formatTime } from '../components/format.ts';
import { Time } from '../components/Time.tsx';
import { TokenLastUsed, TokenName } from '../components/TokenUse.tsx';
import { TableHead } from '../components/TableHead.tsx';
import { EmptyState } from '../components/EmptyState.tsx';

export function TokensScreen() {
  const { user } = useSession();
  const list = useAsync((signal) => call('GET /api/me/pats', { signal }), []);
  const [days, setDays] = useState(30);
  const [name, setName] = useState('');
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const { error, run } = useAction(list.reload);

  const create = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      setIssued(await call('POST /api/me/pats', { body: { expires_in_days: days, ...(name.trim() ? { name: name.trim() } : {}) } }));
      setName('');
    });
  };
  const revoke = async (t: Token) => {
    if (!confirm(`Revoke the token ${t.name ? `“${t.name}”` : `created ${formatTime(t.created_at)}`}? Programs using it stop working.`)) return;
    await run(async () => {
      await call('DELETE /api/me/pats/{pat_id}', { path: { pat_id: t.id } });
      // the one-time secret of a token that no longer works is not left on screen
      setIssued((shown) => (shown?.id === t.id ? null : shown));
    });
  };

  return (
    <section>
      <h1>Your account</h1>
      <p>
        {user.name} · {user.email} · role <strong>{user.role}</strong>
        {user.permissions.length ? ` · permissions: ${user.permissions.join(', ')}` : ''}
      </p>
      <h2>Personal access tokens</h2>
      <p className="hint">A token acts as you for scripts and tools (Authorization: Bearer …). It expires after the days you choose, at most 365. Name it for what uses it, so you know which one to revoke.</p>
      <form className="row" onSubmit={create} aria-label="Create a personal token">
        <label className="inline">
          Name
          <input type="text" maxLength={100} placeholder="e.g. laptop dbt" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="inline">
          Expires in (days)
          <input type="number" min={1} max={365} required value={days} onChange={(e) => setDays(Number(e.target.value))} />
        </label>
        <button type="submit">Create token</button>
      </form>
      {issued ? <SecretOnce label="New personal token" secret={issued.token} onDismiss={() => setIssued(null)} /> : null}
      {error ? <ErrorNotice error={error} /> : null}
      {list.loading && !list.data ? <Loading /> : null}
      {list.error ? <ErrorNotice error={list.error} /> : null}
      {list.data ? (
        list.data.length === 0 ? (
          <EmptyState>No tokens.</EmptyState>
        ) : (
          <table className="table" aria-label="Personal tokens">
            <TableHead columns={['Token', 'Created', 'Expires', 'Last used']} actions />
            <tbody>
              {list.data.map((t) => (
                <tr key={t.id}>
                  <td>
                    <TokenName token={t} />
                    {t.current ? ' (this request)' : ''}
                  </td>
                  <td>
                    <Time iso={t.created_at} />
                  </td>
                  <td>{t.expires_at ? formatTime(t.expires_at) : 'never'}</td>
                  <td>
                    <TokenLastUsed token={t} />
                  </td>
                  <td>
                    <button type="button" className="danger" onClick={() => void revoke(t)} aria-label={`Revoke token ${t.id.slice(0, 8)}`}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </section>
  );
}
