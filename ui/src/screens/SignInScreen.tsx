// Sign-in: local email and password, plus one button per single sign-on provider the server lists.
import { useState, type FormEvent } from 'react';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Notice } from '../components/ErrorNotice.tsx';
import { ApiError, call } from '../api/client.ts';

export function SignInScreen(props: { notice?: string; onSignedIn: () => void }) {
  const methods = useAsync((signal) => call('GET /api/auth/methods', { signal }), []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await call('POST /api/auth/login', { body: { email, password } });
      props.onSignedIn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const providers = methods.data?.oidc_providers ?? [];
  return (
    <main className="centered auth-card">
      <span className="brand-mark auth-mark" aria-hidden="true">
        E
      </span>
      <h1>Sign in to Eider</h1>
      {props.notice ? <p role="status">{props.notice}</p> : null}
      <form onSubmit={submit} className="stack" aria-label="Sign in">
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {methods.data?.ldap ? <p className="hint">Directory (LDAP) accounts sign in here too.</p> : null}
        {/* A refused sign-in is not "signed out" (the 401 title elsewhere): it says the sign-in failed. */}
        {error instanceof ApiError && error.status === 401 ? (
          <Notice code={error.code} title="Sign-in failed" message={error.message} />
        ) : error ? (
          <ErrorNotice error={error} />
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {providers.length ? (
        <div className="stack sso" aria-label="Single sign-on">
          <p className="hint">or</p>
          {providers.map((p) => (
            <a key={p.id} className="button secondary" href={`/api/auth/oidc/${encodeURIComponent(p.id)}/login`}>
              Sign in with {p.label}
            </a>
          ))}
        </div>
      ) : null}
      {methods.error ? <ErrorNotice error={methods.error} what="Sign-in methods" /> : null}
    </main>
  );
}
