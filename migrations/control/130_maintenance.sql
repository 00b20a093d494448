-- Table maintenance: each table's latest health (score, grade, per-dimension scores, the figures they came from),
-- the recommendations the scanner made, the runtime policy and the scanner's own clock.
create table table_health (
  catalog_id uuid not null references catalogs(id) on delete cascade,
  schema_name text not null,
  table_name text not null,
  score int not null,
  grade text not null,
  dimensions jsonb not null,
  metrics jsonb not null,
  scanned_at timestamptz not null,
  deep_scanned_at timestamptz,
  primary key (catalog_id, schema_name, table_name)
);

create table maintenance_recommendations (
  id uuid primary key default gen_random_uuid(),
  catalog_id uuid not null references catalogs(id) on delete cascade,
  schema_name text not null,
  table_name text not null,
  kind text not null check (kind in ('compact_small_files', 'expire_snapshots', 'rewrite_manifests', 'cleanup_orphans', 'investigate_growth')),
  severity text not null check (severity in ('warning', 'critical')),
  status text not null check (status in ('open', 'dismissed', 'resolved', 'applied')),
  rationale text not null,
  estimated_impact jsonb not null,
  remediation_sql text,
  applied_query_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- One live recommendation of a kind per table (resolved ones are history).
create unique index maintenance_recommendations_live on maintenance_recommendations (catalog_id, schema_name, table_name, kind) where status <> 'resolved';
create index maintenance_recommendations_page on maintenance_recommendations (created_at desc, id desc);

-- One row: the runtime settings (spec: cadence and profile are runtime settings, not variables) and the clock.
create table maintenance_policy (
  id boolean primary key default true check (id),
  cadence text not null default 'daily' check (cadence in ('off', 'hourly', 'daily')),
  profile text not null default 'balanced' check (profile in ('conservative', 'balanced', 'aggressive')),
  updated_at timestamptz not null default now(),
  last_scan_at timestamptz,
  last_deep_scan_at timestamptz
);
insert into maintenance_policy (id) values (true);
