-- Lineage: table-level edges per workspace and producer. `execution` edges come from write statements the service
-- ran; other providers import theirs. Node keys: `catalog.schema.table` or `external:<name>`.
create table lineage_edges (
  workspace_id uuid not null references workspaces(id) on delete cascade,
  source_key text not null,
  target_key text not null,
  provider text not null,
  first_seen_at timestamptz not null,
  last_seen_at timestamptz not null,
  observation_count bigint not null default 1,
  columns jsonb not null default '[]'::jsonb,
  column_lineage text not null default 'unknown' check (column_lineage in ('derived', 'unsupported', 'unknown')),
  last_query_id uuid,
  primary key (workspace_id, source_key, target_key, provider)
);
create index lineage_edges_target on lineage_edges (workspace_id, target_key);
create index lineage_edges_source on lineage_edges (workspace_id, source_key);
