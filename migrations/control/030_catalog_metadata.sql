-- The two things I3 lets the control plane keep about catalog contents, both keyed by catalog id plus schema and
-- table name (never the structure itself, which only the catalog service holds):
--  * table_metadata: the sidecar of ownership, last-write provenance and row/size stats;
--  * catalog_grants: the access list of a scoped attachment (I10), at catalog, schema or table level.
create table table_metadata (
  catalog_id uuid not null references catalogs(id) on delete cascade,
  schema_name text not null,
  table_name text not null,
  owner_id uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  last_write_at timestamptz,
  last_write_by uuid references users(id) on delete set null,
  last_write_query_id uuid,
  last_write_operation text,
  row_count bigint,
  size_bytes bigint,
  file_count bigint,
  -- the snapshot the stats were counted from (a 64-bit id, kept as text like everywhere in the API)
  stats_snapshot_id text,
  stats_refreshed_at timestamptz,
  primary key (catalog_id, schema_name, table_name)
);

create table catalog_grants (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  catalog_id uuid not null,
  -- catalog level: both null; schema level: schema_name only; table level: both
  schema_name text,
  table_name text,
  privilege text not null check (privilege in ('read', 'write')),
  created_by uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (table_name is null or schema_name is not null),
  -- a grant belongs to one attachment: detaching the catalog removes its grants
  foreign key (workspace_id, catalog_id) references workspace_catalogs (workspace_id, catalog_id) on delete cascade
);
create unique index catalog_grants_target on catalog_grants (workspace_id, catalog_id, coalesce(schema_name, ''), coalesce(table_name, ''));
