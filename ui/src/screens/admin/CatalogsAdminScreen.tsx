// Catalogs and their attachments: create a catalog on a storage backend, drop one, attach a catalog to a workspace
// (optionally as its default) or detach it.
import { useState, type FormEvent } from 'react';
import { call } from '../../api/client.ts';
import type { CatalogOut } from '../../api/types.ts';
import { useAction } from '../../app/useAction.ts';
import { useAsync } from '../../app/useAsync.ts';
import { useSession } from '../../app/session.tsx';
import { preferredWorkspace } from '../../app/WorkspaceSwitcher.tsx';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { Time } from '../../components/Time.tsx';
import { TableHead } from '../../components/TableHead.tsx';

export function CatalogsAdminScreen() {
  const { workspaces } = useSession();
  const catalogs = useAsync((signal) => call('GET /api/catalogs', { signal }), []);
  const backends = useAsync((signal) => call('GET /api/admin/storage-backends', { signal }), []);
  const [slug, setSlug] = useState('');
  const [backend, setBackend] = useState('');
  // The workspace the rail shows (the one last worked in), not merely the first of the list.
  const [attachWs, setAttachWs] = useState(preferredWorkspace(workspaces) ?? '');
  const attached = useAsync(
    (signal) => (attachWs ? call('GET /api/workspaces/{workspace}/catalogs', { path: { workspace: attachWs }, signal }) : Promise.resolve([])),
    [attachWs],
  );

  const { error, run } = useAction(() => {
    catalogs.reload();
    attached.reload();
  });
  const create = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await call('POST /api/catalogs', { body: { slug, storage_backend_id: backend } });
      setSlug('');
    });
  };
  const isAttached = (c: CatalogOut) => attached.data?.find((a) => a.slug === c.slug);

  return (
    <section>
      <h1>Catalogs</h1>
      {catalogs.error ? <ErrorNotice error={catalogs.error} what="Catalogs" /> : null}
      {catalogs.loading && !catalogs.data ? <Loading /> : null}
      <label className="inline">
        Attachments of workspace
        <select value={attachWs} onChange={(e) => setAttachWs(e.target.value)}>
          {workspaces.map((w) => (
            <option key={w.id} value={w.slug}>
              {w.slug}
            </option>
          ))}
        </select>
      </label>
      {attached.error ? <ErrorNotice error={attached.error} what="Attachments" /> : null}
      {catalogs.data ? (
        <table className="table" aria-label="Catalogs">
          <TableHead columns={['Slug', 'Storage', 'Root', 'Created', `In ${attachWs}`]} actions />
          <tbody>
            {catalogs.data.map((c) => {
              const a = isAttached(c);
              const path = { workspace: attachWs, catalog: c.slug };
              return (
                <tr key={c.id}>
                  <td>{c.slug}</td>
                  <td>{c.storage_kind ?? '—'}</td>
                  <td className="mono">{c.root_uri ?? '—'}</td>
                  <td>
                    <Time iso={c.created_at} />
                  </td>
                  <td>{a ? (a.is_default ? 'attached (default)' : 'attached') : 'no'}</td>
                  <td className="row">
                    {!a || !a.is_default ? (
                      <button type="button" className="secondary" onClick={() => void run(() => call('PUT /api/workspaces/{workspace}/catalogs/{catalog}', { path, body: { make_default: Boolean(a) } }))}>
                        {a ? 'Make default' : 'Attach'}
                      </button>
                    ) : null}
                    {a ? (
                      <button type="button" className="secondary" onClick={() => void run(() => call('DELETE /api/workspaces/{workspace}/catalogs/{catalog}', { path }))}>
                        Detach
                      </button>
                    ) : null}
                    <button
                      type="button"
                      className="danger"
                      onClick={() => confirm(`Drop catalog ${c.slug}?`) && void run(() => call('DELETE /api/catalogs/{catalog_id}', { path: { catalog_id: c.id } }))}
                    >
                      Drop
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      <h2>New catalog</h2>
      <form className="row" onSubmit={create} aria-label="Create a catalog">
        <input aria-label="Catalog slug" placeholder="slug" required value={slug} onChange={(e) => setSlug(e.target.value)} />
        <select aria-label="Storage backend" required value={backend} onChange={(e) => setBackend(e.target.value)}>
          <option value="">Storage backend…</option>
          {(backends.data ?? []).map((b) => (
            <option key={b.id} value={b.id}>
              {b.name} ({b.kind})
            </option>
          ))}
        </select>
        <button type="submit">Create catalog</button>
      </form>
      {backends.error ? <ErrorNotice error={backends.error} what="Storage backends" /> : null}
      {error ? <ErrorNotice error={error} /> : null}
    </section>
  );
}
