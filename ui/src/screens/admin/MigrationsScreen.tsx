// Admin → Migrations: move a catalog to another storage backend, and follow each migration (phase, bytes, progress
// per table), its log as it streams in, and cancel one before its cutover. While a migration is active its catalog
// is read-only (writes answer catalog_read_only); reads go on.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { call } from '../../api/client.ts';
import type { GetCatalogMigrationLogsResponse, GetCatalogMigrationResponse, ListCatalogsResponse, ListStorageBackendsResponse } from '../../api/generated.ts';
import { useAsync } from '../../app/useAsync.ts';
import { ErrorNotice, Loading } from '../../components/ErrorNotice.tsx';
import { formatBytes, formatTime } from '../../components/format.ts';
import { EmptyState } from '../../components/EmptyState.tsx';

type Migration = GetCatalogMigrationResponse & { catalog_slug: string };
type LogEntry = GetCatalogMigrationLogsResponse[number];

const ACTIVE = new Set(['pending', 'running']);
const percent = (m: Pick<Migration, 'bytes_copied' | 'bytes_total' | 'status'>) =>
  m.status === 'completed' ? 100 : m.bytes_total > 0 ? Math.min(100, Math.floor((100 * m.bytes_copied) / m.bytes_total)) : 0;
const pillOf = (status: string) => (status === 'completed' ? 'done' : status === 'pending' ? 'queued' : status);

async function loadAll(signal: AbortSignal): Promise<{ migrations: Migration[]; catalogs: ListCatalogsResponse; backends: ListStorageBackendsResponse }> {
  const [catalogs, backends] = await Promise.all([
    call('GET /api/catalogs', { signal }),
    call('GET /api/admin/storage-backends', { signal }),
  ]);
  const pages = await Promise.all(
    catalogs.map((c) =>
      call('GET /api/catalogs/{catalog_id}/migrations', { path: { catalog_id: c.id }, signal, query: { limit: 20 } }).then(
        (p) => p.items.map((m) => ({ ...m, catalog_slug: c.slug })),
        () => [] as Migration[],
      ),
    ),
  );
  const migrations = pages.flat().sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  return { migrations, catalogs, backends };
}

export function MigrationsScreen() {
  const all = useAsync(loadAll, []);
  const [selected, setSelected] = useState<string | null>(null);
  const anyActive = all.data?.migrations.some((m) => ACTIVE.has(m.status)) ?? false;
  // Active migrations are followed every two seconds.
  useEffect(() => {
    if (!anyActive) return;
    const timer = setInterval(all.reload, 2000);
    return () => clearInterval(timer);
  }, [anyActive, all.reload]);
  const migrations = all.data?.migrations ?? [];
  const current = migrations.find((m) => m.id === selected) ?? migrations[0];
  const started = (id: string) => {
    setSelected(id);
    all.reload();
  };
  const backendName = (id: string) => all.data?.backends.find((b) => b.id === id)?.name ?? id;
  return (
    <section>
      <h1>Storage migrations</h1>
      <p className="muted">
        A migration copies every file of a catalog to another storage backend, rewrites the paths inside its metadata, verifies the copy and
        then switches all its tables at once. The catalog is read-only until then; reads keep working. The old files are kept for the
        retention period, then deleted.
      </p>
      {all.error ? <ErrorNotice error={all.error} what="Migrations" /> : null}
      {all.loading && !all.data ? <Loading /> : null}
      {all.data ? <StartForm catalogs={all.data.catalogs} backends={all.data.backends} onStarted={started} /> : null}
      {all.data && migrations.length === 0 ? <EmptyState>No catalog has been migrated yet.</EmptyState> : null}
      {migrations.length > 0 ? (
        <table className="table" aria-label="Storage migrations">
          <thead>
            <tr>
              <th>Catalog</th>
              <th>From</th>
              <th>To</th>
              <th>Status</th>
              <th>Phase</th>
              <th className="num">Tables</th>
              <th className="num">Copied</th>
              <th>Started</th>
            </tr>
          </thead>
          <tbody>
            {migrations.map((m) => (
              <tr key={m.id} aria-selected={m.id === current?.id} onClick={() => setSelected(m.id)} style={{ cursor: 'pointer' }}>
                <td>{m.catalog_slug}</td>
                <td>{backendName(m.source_storage_backend_id)}</td>
                <td>{backendName(m.target_storage_backend_id)}</td>
                <td>
                  <span className={`pill ${pillOf(m.status)}`}>{m.status}</span>
                </td>
                <td>{m.phase}</td>
                <td className="num">
                  {m.tables_done} / {m.tables_total}
                </td>
                <td className="num">
                  {formatBytes(m.bytes_copied)} of {formatBytes(m.bytes_total)} ({percent(m)}%)
                </td>
                <td>{formatTime(m.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {current ? <MigrationDetail key={current.id} m={current} onChanged={all.reload} /> : null}
    </section>
  );
}

function StartForm(props: { catalogs: ListCatalogsResponse; backends: ListStorageBackendsResponse; onStarted: (id: string) => void }) {
  const [catalogId, setCatalogId] = useState('');
  const [target, setTarget] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const catalog = props.catalogs.find((c) => c.id === catalogId);
  const targets = props.backends.filter((b) => b.id !== catalog?.storage_backend_id);
  const start = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const m = await call('POST /api/catalogs/{catalog_id}/migrations', { path: { catalog_id: catalogId }, body: { target_storage_backend_id: target } });
      setTarget('');
      props.onStarted(m.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <form className="grid-form" onSubmit={start} aria-label="Migrate a catalog">
        <label>
          Catalog
          <select required value={catalogId} onChange={(e) => setCatalogId(e.target.value)}>
            <option value="">Choose a catalog</option>
            {props.catalogs.map((c) => (
              <option key={c.id} value={c.id}>
                {c.slug} ({c.root_uri})
              </option>
            ))}
          </select>
        </label>
        <label>
          To storage backend
          <select required value={target} onChange={(e) => setTarget(e.target.value)} disabled={!catalog}>
            <option value="">Choose a backend</option>
            {targets.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name} ({b.kind}, {b.root_uri})
              </option>
            ))}
          </select>
        </label>
        <div>
          <button type="submit" disabled={busy || !catalogId || !target}>
            Start migration
          </button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </>
  );
}

function MigrationDetail(props: { m: Migration; onChanged: () => void }) {
  const { m } = props;
  const [log, setLog] = useState<LogEntry[]>([]);
  const [error, setError] = useState<unknown>(null);
  const last = useRef(0);
  const active = ACTIVE.has(m.status);
  // A cancel or a failure removes the copy at the target after the status changed, and logs it: such a log is
  // followed for a minute past its end.
  const tailUntil = !active && m.finished_at && (m.status === 'cancelled' || m.status === 'failed') ? Date.parse(m.finished_at) + 60_000 : 0;
  // The log streams in: entries after the last sequence seen, every second while the migration is active.
  useEffect(() => {
    let stopped = false;
    const ctl = new AbortController();
    const pull = async () => {
      try {
        const more = await call('GET /api/catalogs/{catalog_id}/migrations/{migration_id}/logs', {
          path: { catalog_id: m.catalog_id, migration_id: m.id },
          signal: ctl.signal,
          query: { after: last.current },
        });
        if (stopped || more.length === 0) return;
        last.current = more[more.length - 1].seq;
        setLog((l) => [...l, ...more]);
      } catch (e) {
        if ((e as Error)?.name !== 'AbortError') setError(e);
      }
    };
    void pull();
    const timer =
      active || Date.now() < tailUntil
        ? setInterval(() => {
            if (active || Date.now() < tailUntil) void pull();
            else clearInterval(timer);
          }, 1000)
        : undefined;
    return () => {
      stopped = true;
      ctl.abort();
      if (timer) clearInterval(timer);
    };
  }, [m.id, m.catalog_id, active, tailUntil]);
  const cancel = async () => {
    setError(null);
    try {
      await call('POST /api/catalogs/{catalog_id}/migrations/{migration_id}/cancel', { path: { catalog_id: m.catalog_id, migration_id: m.id } });
      props.onChanged();
    } catch (e) {
      setError(e);
    }
  };
  const cancellable = active && m.phase !== 'cutover';
  return (
    <div className="card" role="region" aria-label="Migration detail">
      <div className="toolbar">
        <h2>
          {m.catalog_slug}: {m.status}
        </h2>
        {cancellable ? (
          <button type="button" onClick={() => void cancel()}>
            Cancel migration
          </button>
        ) : null}
      </div>
      <progress max={100} value={percent(m)} aria-label="Bytes copied" style={{ width: '100%' }} />
      <p>
        {formatBytes(m.bytes_copied)} of {formatBytes(m.bytes_total)} · {m.tables_done} of {m.tables_total} table(s) · phase {m.phase}
        {m.retain_until ? ` · old files kept until ${formatTime(m.retain_until)}` : ''}
      </p>
      {m.error ? <p className="error-code">{m.error}</p> : null}
      {error ? <ErrorNotice error={error} /> : null}
      <table className="table" aria-label="Tables">
        <thead>
          <tr>
            <th>Table</th>
            <th>State</th>
            <th className="num">Size</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {m.tables.map((t) => (
            <tr key={`${t.schema}.${t.table}`}>
              <td className="mono">
                {t.schema}.{t.table}
              </td>
              <td>{t.state}</td>
              <td className="num">{formatBytes(t.bytes)}</td>
              <td>{t.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Log</h3>
      <div className="table-scroll">
        <table className="table" aria-label="Migration log">
          <tbody>
            {log.map((l) => (
              <tr key={l.seq}>
                <td>{formatTime(l.at)}</td>
                <td>{l.level}</td>
                <td className="mono">{l.table ?? ''}</td>
                <td>{l.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
