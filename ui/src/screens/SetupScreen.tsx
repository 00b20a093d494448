// First run: no admin exists yet. The setup token (printed by `eider up`, also in DATA_DIR/setup-token) proves the
// person at the browser runs this server; it creates the first admin and then signs in.
import { useState, type FormEvent } from 'react';
import { call } from '../api/client.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';

export function SetupScreen(props: { onDone: () => void }) {
  const [form, setForm] = useState({ token: '', name: '', email: '', password: '' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await call('POST /api/setup/admin', {
        body: { email: form.email, password: form.password, name: form.name },
        headers: { 'x-setup-token': form.token.trim() },
      });
      await call('POST /api/auth/login', { body: { email: form.email, password: form.password } });
      props.onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="centered auth-card">
      <span className="brand-mark auth-mark" aria-hidden="true">
        E
      </span>
      <h1>Welcome to Eider</h1>
      <p>Create the first administrator. The setup token was printed when the server started and is in its data directory as <code>setup-token</code>.</p>
      <form onSubmit={submit} className="stack">
        <label>
          Setup token
          <input name="setup-token" autoComplete="off" required value={form.token} onChange={set('token')} />
        </label>
        <label>
          Name
          <input name="name" autoComplete="name" required value={form.name} onChange={set('name')} />
        </label>
        <label>
          Email
          <input name="email" type="email" autoComplete="email" required value={form.email} onChange={set('email')} />
        </label>
        <label>
          Password (at least 8 characters)
          <input name="password" type="password" autoComplete="new-password" minLength={8} required value={form.password} onChange={set('password')} />
        </label>
        {error ? <ErrorNotice error={error} /> : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create administrator'}
        </button>
      </form>
    </main>
  );
}
