// Storage backends: list, create and rotate credentials (secrets go in, never come back out).
import { Fragment, useState, type FormEvent } from 'react';
import { type BodyOf, call } from '../../api/client.ts';
import type { UpdateStorageBackendCredentialsBody, StorageBackend } from '../../api/types.ts';
import { useAsync } from '../../app/useAsync.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { formatTime } from '../../components/format.ts';

type NewBackend = BodyOf<'POST /api/admin/storage-backends'>;
const blank = { name: '', kind: 'object_store' as NewBackend['kind'], root_uri: '', endpoint: '', region: '', access_key_id: '', secret_access_key: '' };

export function StorageScreen() {
  const list = useAsync((signal) => call('GET /api/admin/storage-backends', { signal }), []);
  const [form, setForm] = useState(blank);
  const [error, setError] = useState<unknown>(null);
  const [rotating, setRotating] = useState<string | null>(null);
  const set = (k: keyof typeof blank) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const { name, kind, root_uri, ...optional } = form;
    const body: NewBackend = { name, kind, root_uri };
    for (const [k, v] of Object.entries(optional)) if (v) body[k as keyof typeof optional] = v;
    try {
      await call('POST /api/admin/storage-backends', { body });
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
              <th>Credentials</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((b) => (
              <Fragment key={b.id}>
                <tr>
                  <td>{b.name}</td>
                  <td>{b.kind}</td>
                  <td className="mono">{b.root_uri}</td>
                  <td className="mono">{b.endpoint ?? '—'}</td>
                  <td>{b.region ?? '—'}</td>
                  <td>{formatTime(b.created_at)}</td>
                  <td>
                    {isBundled(b) ? (
                      <span className="hint">the bundled store&apos;s own</span>
                    ) : (
                      <button type="button" className="secondary" aria-expanded={rotating === b.id} onClick={() => setRotating(rotating === b.id ? null : b.id)}>
                        Rotate credentials
                      </button>
                    )}
                  </td>
                </tr>
                {rotating === b.id ? (
                  <tr>
                    <td colSpan={7}>
                      <RotateCredentials
                        backend={b}
                        onDone={() => {
                          setRotating(null);
                          list.reload();
                        }}
                      />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
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
        <KeyPairInputs accessKeyId={form.access_key_id} secret={form.secret_access_key} onAccessKeyId={set('access_key_id')} onSecret={set('secret_access_key')} />
        <div>
          <button type="submit">Add backend</button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </section>
  );
}

/** An object_store backend without keys of its own is on the bundled store: its keys are the store's configuration. */
const isBundled = (b: StorageBackend) => b.kind === 'object_store' && !b.has_credentials;

/**
 * New credentials for a backend (never its location): s3 and object_store take a key pair and the STS role
 * (emptied: removed), azure its account key. The store is probed with them before anything changes.
 */
function RotateCredentials(props: { backend: StorageBackend; onDone: () => void }) {
  const b = props.backend;
  const azure = b.kind === 'azure';
  const [form, setForm] = useState({ access_key_id: '', secret_access_key: '', account_key: '', role_arn: b.role_arn ?? '' });
  const [error, setError] = useState<unknown>(null);
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const rotate = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const body: UpdateStorageBackendCredentialsBody = {};
    if (azure) {
      if (form.account_key) body.account_key = form.account_key;
    } else {
      if (form.access_key_id || form.secret_access_key) {
        body.access_key_id = form.access_key_id;
        body.secret_access_key = form.secret_access_key;
      }
      const role = form.role_arn.trim();
      if (role !== (b.role_arn ?? '')) body.role_arn = role || null;
    }
    try {
      await call('PATCH /api/admin/storage-backends/{storage_backend_id}', { path: { storage_backend_id: b.id }, body });
      props.onDone();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div className="card">
      <form className="grid-form" onSubmit={rotate} aria-label={`Rotate the credentials of ${b.name}`}>
        {azure ? (
          <label>
            Account key
            <input type="password" autoComplete="off" required value={form.account_key} onChange={set('account_key')} />
          </label>
        ) : (
          <>
            <KeyPairInputs accessKeyId={form.access_key_id} secret={form.secret_access_key} onAccessKeyId={set('access_key_id')} onSecret={set('secret_access_key')} />
            <label>
              Role ARN (STS; empty: none)
              <input autoComplete="off" value={form.role_arn} onChange={set('role_arn')} />
            </label>
          </>
        )}
        <div>
          <button type="submit">Rotate credentials</button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </div>
  );
}

type Change = (e: { target: { value: string } }) => void;

/** An S3-style key pair, as registration and rotation take it (the secret never shown back). */
function KeyPairInputs(props: { accessKeyId: string; secret: string; onAccessKeyId: Change; onSecret: Change }) {
  return (
    <>
      <label>
        Access key id
        <input autoComplete="off" value={props.accessKeyId} onChange={props.onAccessKeyId} />
      </label>
      <label>
        Secret access key
        <input type="password" autoComplete="off" value={props.secret} onChange={props.onSecret} />
      </label>
    </>
  );
}
