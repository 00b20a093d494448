// Storage backends: list and create (secrets go in, never come back out).
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { StorageBackend } from '../../api/types.ts';
import { useAsync } from '../../app/useAsync.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { formatTime } from '../../components/format.ts';

const blank = { name: '', kind: 'object_store', root_uri: '', endpoint: '', region: '', access_key_id: '', secret_access_key: '' };

export function StorageScreen() {
  const list = useAsync((signal) => api.get<StorageBackend[]>('/api/admin/storage-backends', { signal }), []);
  const [form, setForm] = useState(blank);
  const [error, setError] = useState<unknown>(null);
  const set = (k: keyof typeof blank) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const body: Record<string, string> = {};
    for (const [k, v] of Object.entries(form)) if (v) body[k] = v;
    try {
      await api.post('/api/admin/storage-backends', body);
      setForm(blank);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section>
      <h1>Storage backends</h1>
      {list.error ? <ErrorNotice error={list.error} what="Storage backends" /> : null}
      {list.loading && !list.data ? <Loading /> : null}
      {list.data ? (
        <table className="table" aria-label="Storage backends">
          <thead>
            <tr>
              <th>Name</th>
              <th>Kind</th>
              <th>Root</th>
              <th>Endpoint</th>
              <th>Region</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((b) => (
              <tr key={b.id}>
                <td>{b.name}</td>
                <td>{b.kind}</td>
                <td className="mono">{b.root_uri}</td>
                <td className="mono">{b.endpoint ?? '—'}</td>
                <td>{b.region ?? '—'}</td>
                <td>{formatTime(b.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <h2>Add a backend</h2>
      <form className="grid-form" onSubmit={create} aria-label="Add a storage backend">
        <label>
          Name
          <input required value={form.name} onChange={set('name')} />
        </label>
        <label>
          Kind
          <select value={form.kind} onChange={set('kind')}>
            <option value="object_store">S3-compatible object store</option>
            <option value="s3">AWS S3</option>
            <option value="azure">Azure (ADLS Gen2)</option>
          </select>
        </label>
        <label>
          Root URI
          <input required placeholder="s3://bucket/prefix/" value={form.root_uri} onChange={set('root_uri')} />
        </label>
        <label>
          Endpoint
          <input value={form.endpoint} onChange={set('endpoint')} />
        </label>
        <label>
          Region
          <input value={form.region} onChange={set('region')} />
        </label>
        <label>
          Access key id
          <input autoComplete="off" value={form.access_key_id} onChange={set('access_key_id')} />
        </label>
        <label>
          Secret access key
          <input type="password" autoComplete="off" value={form.secret_access_key} onChange={set('secret_access_key')} />
        </label>
        <div>
          <button type="submit">Add backend</button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </section>
  );
}
