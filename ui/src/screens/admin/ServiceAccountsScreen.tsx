// Service accounts and their tokens: create an account, issue a token (secret shown once; may never expire),
// list and revoke tokens, deactivate an account.
import { useState, type FormEvent } from 'react';
import { type BodyOf, call } from '../../api/client.ts';
import type { IssuedToken } from '../../api/types.ts';
import { useAction } from '../../app/useAction.ts';
import { usePaged } from '../../app/usePaged.ts';
import { useAsync } from '../../app/useAsync.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { formatTime } from '../../components/format.ts';
import { TokenLastUsed, TokenName } from '../../components/TokenUse.tsx';
import { EmptyState } from '../../components/EmptyState.tsx';

export function ServiceAccountsScreen() {
  const accounts = usePaged('GET /api/admin/service-accounts');
  const [name, setName] = useState('');
  const [role, setRole] = useState<BodyOf<'POST /api/admin/service-accounts'>['role']>('member');
  const { error, setError, run } = useAction(accounts.reload);
  const [open, setOpen] = useState<string | null>(null);
  const create = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      await call('POST /api/admin/service-accounts', { body: { name, role } });
      setName('');
    });
  };
  return (
    <section>
      <h1>Service accounts</h1>
      <form className="row" onSubmit={create} aria-label="Create a service account">
        <input aria-label="Service account name" placeholder="name" required value={name} onChange={(e) => setName(e.target.value)} />
        <select aria-label="Role" value={role} onChange={(e) => setRole(e.target.value as typeof role)}>
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
        <button type="submit">Create service account</button>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      {accounts.error ? <ErrorNotice error={accounts.error} what="Service accounts" /> : null}
      <ul className="item-list" aria-label="Service accounts">
        {accounts.items.map((sa) => (
          <li key={sa.id} className="stack">
            <div className="row">
              <strong>{sa.name}</strong>
              <span className="hint">
                {sa.role} · {sa.is_active ? 'active' : 'inactive'} · created {formatTime(sa.created_at)}
              </span>
              <span className="grow" />
              <button type="button" className="secondary" aria-expanded={open === sa.id} onClick={() => setOpen(open === sa.id ? null : sa.id)}>
                Tokens
              </button>
              <button
                type="button"
                className={sa.is_active ? 'danger' : 'secondary'}
                onClick={async () => {
                  try {
                    await call('PATCH /api/admin/service-accounts/{service_account_id}', { path: { service_account_id: sa.id }, body: { is_active: !sa.is_active } });
                    accounts.reload();
                  } catch (err) {
                    setError(err);
                  }
                }}
              >
                {sa.is_active ? 'Deactivate' : 'Reactivate'}
              </button>
            </div>
            {open === sa.id ? <AccountTokens id={sa.id} /> : null}
          </li>
        ))}
      </ul>
      {accounts.loading ? <Loading /> : null}
      {accounts.hasMore && !accounts.loading ? (
        <button type="button" className="secondary" onClick={accounts.more}>
          Load more
        </button>
      ) : null}
    </section>
  );
}

function AccountTokens(props: { id: string }) {
  const tokens = useAsync((signal) => call('GET /api/admin/service-accounts/{service_account_id}/pats', { path: { service_account_id: props.id }, signal }), [props.id]);
  const [days, setDays] = useState('90');
  const [name, setName] = useState('');
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const { error, setError, run } = useAction(tokens.reload);
  const issue = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      setIssued(
        await call('POST /api/admin/service-accounts/{service_account_id}/pats', {
          path: { service_account_id: props.id },
          body: { expires_in_days: days === 'never' ? null : Number(days), ...(name.trim() ? { name: name.trim() } : {}) },
        }),
      );
      setName('');
    });
  };
  return (
    <div className="card">
      <form className="row" onSubmit={issue} aria-label="Issue a token">
        <label className="inline">
          Name
          <input type="text" maxLength={100} placeholder="e.g. nightly export" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="inline">
          Expires
          <select value={days} onChange={(e) => setDays(e.target.value)}>
            <option value="30">in 30 days</option>
            <option value="90">in 90 days</option>
            <option value="365">in 365 days</option>
            <option value="never">never</option>
          </select>
        </label>
        <button type="submit">Issue token</button>
      </form>
      {issued ? <SecretOnce label="New service-account token" secret={issued.token} onDismiss={() => setIssued(null)} /> : null}
      {error ? <ErrorNotice error={error} /> : null}
      {tokens.error ? <ErrorNotice error={tokens.error} /> : null}
      {tokens.data ? (
        tokens.data.length ? (
          <ul aria-label="Tokens">
            {tokens.data.map((t) => (
              <li key={t.id} className="row">
                <TokenName token={t} />
                <span className="hint">
                  created {formatTime(t.created_at)} · {t.expires_at ? `expires ${formatTime(t.expires_at)}` : 'never expires'} · last used{' '}
                </span>
                <TokenLastUsed token={t} />
                <button
                  type="button"
                  className="danger"
                  aria-label={`Revoke token ${t.id.slice(0, 8)}`}
                  onClick={async () => {
                    try {
                      await call('DELETE /api/admin/service-accounts/{service_account_id}/pats/{pat_id}', { path: { service_account_id: props.id, pat_id: t.id } });
                      setIssued((shown) => (shown?.id === t.id ? null : shown));
                      tokens.reload();
                    } catch (err) {
                      setError(err);
                    }
                  }}
                >
                  Revoke
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <EmptyState>No tokens.</EmptyState>
        )
      ) : null}
    </div>
  );
}
