-- Catalog storage migrations (docs/migrations.md): one row per migration, the entity of its storageMigration
-- actor (status, phase and times are projected from the actor on every transition); the runner's checkpoints per
-- table (a crashed copy resumes with the tables not yet done); and the log, read by `after=<seq>`.
create table storage_migrations (
  id uuid primary key,
  catalog_id uuid not null references catalogs(id) on delete cascade,
  -- No foreign keys: the history outlives a backend deleted later (deleting one a migration still needs is 409).
  source_storage_backend_id uuid not null,
  target_storage_backend_id uuid not null,
  -- The catalog's root on each backend, fixed at the start: {backend root_uri}{catalog slug}/
  source_root text not null,
  target_root text not null,
  status text not null check (status in ('pending', 'running', 'completed', 'failed', 'cancelled')),
  phase text not null check (phase in ('pending', 'copying', 'verifying', 'cutover', 'completed', 'failed', 'cancelled')),
  bytes_total bigint not null default 0,
  bytes_copied bigint not null default 0,
  error text,
  created_by uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  cutover_at timestamptz,
  retain_until timestamptz,
  -- When the source's files were deleted (the retention ended, or a later migration back onto that root ended it).
  purged_at timestamptz
);
-- One active migration per catalog (409 migration_active); the catalog is read-only while it is active.
create unique index storage_migrations_one_active on storage_migrations (catalog_id) where status in ('pending', 'running');
create index storage_migrations_catalog on storage_migrations (catalog_id, created_at desc, id desc);

create table storage_migration_tables (
  migration_id uuid not null references storage_migrations(id) on delete cascade,
  -- namespace levels joined by U+001F, as the catalog service keys them
  namespace text not null,
  table_name text not null,
  state text not null default 'pending' check (state in ('pending', 'copying', 'copied', 'rewritten', 'verified', 'failed')),
  bytes bigint not null default 0,
  bytes_copied bigint not null default 0,
  files int not null default 0,
  source_metadata_location text not null,
  target_metadata_location text,
  error text,
  updated_at timestamptz not null default now(),
  primary key (migration_id, namespace, table_name)
);

create table storage_migration_logs (
  seq bigserial primary key,
  migration_id uuid not null references storage_migrations(id) on delete cascade,
  at timestamptz not null default now(),
  level text not null check (level in ('info', 'warn', 'error')),
  message text not null,
  table_name text
);
create index storage_migration_logs_migration on storage_migration_logs (migration_id, seq);
