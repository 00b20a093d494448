-- Storage backends and catalogs as the control plane knows them. Catalog structure (schemas, tables, columns)
-- lives in the catalog service (I3); here only the binding, attachments and access lists.
create table storage_backends (
  id uuid primary key default gen_random_uuid(),
  name text not null unique,
  kind text not null check (kind in ('object_store', 's3', 'azure')),
  root_uri text not null,
  endpoint text,
  region text,
  access_key_id text,
  secret_access_key text,
  created_at timestamptz not null default now()
);

create table catalogs (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique,
  storage_backend_id uuid not null references storage_backends(id),
  created_by uuid references users(id) on delete set null,
  created_at timestamptz not null default now()
);

create table workspace_catalogs (
  workspace_id uuid not null references workspaces(id) on delete cascade,
  catalog_id uuid not null references catalogs(id),
  access_mode text not null default 'full' check (access_mode in ('full', 'scoped')),
  created_at timestamptz not null default now(),
  primary key (workspace_id, catalog_id)
);

alter table workspaces add constraint workspaces_default_catalog_fk foreign key (default_catalog_id) references catalogs(id) on delete set null;
