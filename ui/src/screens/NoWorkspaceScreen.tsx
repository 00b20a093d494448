// Creating a workspace (also where a user without any workspace lands).
import { useState, type FormEvent } from 'react';
import { call } from '../api/client.ts';
import { navigate } from '../app/router.ts';
import { useSession } from '../app/session.tsx';
import { ErrorNotice } from '../components/ErrorNotice.tsx';

export function NoWorkspaceScreen() {
  const session = useSession();
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await call('POST /api/workspaces', { body: { slug, name: name || slug } });
      await session.refresh();
      navigate(`/w/${encodeURIComponent(slug)}/worksheets`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section className="narrow">
      <h1>New workspace</h1>
      {session.workspaces.length === 0 ? <p>You are not a member of any workspace yet. Create one, or ask an owner to add you.</p> : null}
      <form className="stack" onSubmit={submit}>
        <label>
          Slug (lowercase letters, digits, hyphens)
          <input required pattern="[a-z0-9][a-z0-9-]*" value={slug} onChange={(e) => setSlug(e.target.value)} />
        </label>
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        {error ? <ErrorNotice error={error} /> : null}
        <button type="submit">Create workspace</button>
      </form>
    </section>
  );
}
