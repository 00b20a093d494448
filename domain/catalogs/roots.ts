// Roots never overlap: every backend's root and every catalog's root (its backend's root plus its slug) is its
// owner's alone on its store, checked at registration, at a catalog's creation, before a rotation and a migration.
import type { Queryable } from '../../runtime/db.ts';
import type { Config } from '../../runtime/config.ts';
import { conflict } from '../errors.ts';
import { parseAzureUri, parseS3Uri } from '../../iceberg/storageUri.ts';
import type { BackendTarget } from '../backendStorage.ts';

/** A root's place for overlap checks: the store it is on (endpoint, or azure account) and its `bucket/path/`. */
interface RootPlace {
  store: string;
  path: string;
}

/** A store's address as compared: host and port, loopback names as one. */
function storeAddress(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    const host = ['localhost', '[::1]', '::1'].includes(u.hostname.toLowerCase()) ? '127.0.0.1' : u.hostname.toLowerCase();
    return `${host}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return endpoint.toLowerCase();
  }
}

function rootPlace(b: Pick<BackendTarget, 'kind' | 'endpoint' | 'access_key_id'>, rootUri: string, config: Pick<Config, 'STORE_ENDPOINT'>): RootPlace {
  if (b.kind === 'azure') {
    const { container, key, account } = parseAzureUri(rootUri);
    return { store: `azure:${account ?? b.access_key_id ?? ''}:${b.endpoint ? storeAddress(b.endpoint) : ''}`, path: `${container}/${key}` };
  }
  const { bucket, key } = parseS3Uri(rootUri);
  const endpoint = b.endpoint ?? (b.kind === 'object_store' ? config.STORE_ENDPOINT : null);
  return { store: endpoint ? `s3:${storeAddress(endpoint)}` : 's3:aws', path: `${bucket}/${key}` };
}

const overlaps = (a: RootPlace, b: RootPlace) => a.store === b.store && (a.path.startsWith(b.path) || b.path.startsWith(a.path));

export interface RootConflict {
  kind: 'storage_backend' | 'catalog';
  name: string;
  root_uri: string;
}

/**
 * The backends and catalogs whose roots overlap `root` (equal, inside it, or containing it) on the same store.
 * Two owners of one prefix would read each other's files through the credentials vended for one, and a purge of one
 * would delete the other's: every root is its owner's alone. `except`: the backend the root belongs to (a catalog
 * lies inside its own backend's root), and with `withItsCatalogs` that backend's catalogs too (a backend's own
 * root contains them); `exceptCatalog`: the catalog the root is for (a migration's target root).
 */
export async function rootConflicts(
  q: Queryable,
  config: Pick<Config, 'STORE_ENDPOINT'>,
  owner: Pick<BackendTarget, 'kind' | 'endpoint' | 'access_key_id'>,
  root: string,
  except: { backendId?: string; withItsCatalogs?: boolean; catalogId?: string } = {},
): Promise<RootConflict[]> {
  const place = rootPlace(owner, root, config);
  const rows = await q.query<Pick<BackendTarget, 'name' | 'kind' | 'endpoint' | 'access_key_id' | 'root_uri'> & { id: string; catalog_id: string | null; slug: string | null }>(
    `select b.id, b.name, b.kind, b.endpoint, b.access_key_id, b.root_uri, c.id as catalog_id, c.slug
       from storage_backends b left join catalogs c on c.storage_backend_id = b.id order by b.name, c.slug`,
  );
  const found: RootConflict[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    if (!seen.has(r.id)) {
      seen.add(r.id);
      if (r.id !== except.backendId && overlaps(place, rootPlace(r, r.root_uri, config))) found.push({ kind: 'storage_backend', name: r.name, root_uri: r.root_uri });
    }
    if (!r.catalog_id || !r.slug || r.catalog_id === except.catalogId) continue;
    if (except.withItsCatalogs && r.id === except.backendId) continue;
    const catalogRoot = `${r.root_uri}${r.slug}/`;
    if (overlaps(place, rootPlace(r, catalogRoot, config))) found.push({ kind: 'catalog', name: r.slug, root_uri: catalogRoot });
  }
  return found;
}

/** 409 storage_root_overlap naming every conflict, when there is one. */
export async function refuseOverlappingRoot(...args: Parameters<typeof rootConflicts>): Promise<void> {
  // One root check at a time across replicas: two overlapping registrations racing would each find the other absent.
  await args[0].query(`select pg_advisory_xact_lock(hashtext('eider.storage_roots'))`);
  const found = await rootConflicts(...args);
  if (!found.length) return;
  const names = found.map((c) => `${c.kind === 'catalog' ? 'catalog' : 'storage backend'} ${c.name} (${c.root_uri})`).join(', ');
  throw conflict(`the root ${args[3]} overlaps the root of ${names}: every backend and catalog needs a root of its own, neither inside nor around another's`, 'storage_root_overlap', {
    root_uri: args[3],
    conflicts: found,
  });
}
