-- Lineage backfill: a one-shot job per workspace that derives execution lineage from past done writes, newest
-- first. Its checkpoint (the last query it finished, by finished_at and id) commits with each batch's edges, so a
-- job whose runner stopped resumes exactly where it was. The runner holds the job by its token while its
-- heartbeat is fresh.
create table lineage_backfills (
  id uuid primary key,
  workspace_id uuid not null references workspaces(id) on delete cascade,
  status text not null check (status in ('running', 'done')),
  started_by uuid references users(id) on delete set null,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  cutoff timestamptz not null,
  checkpoint_at timestamptz,
  checkpoint_id uuid,
  scanned bigint not null default 0,
  edges_created bigint not null default 0,
  edges_updated bigint not null default 0,
  failed bigint not null default 0,
  resumed_from_at timestamptz,
  resumed_from_id uuid,
  runner uuid,
  heartbeat_at timestamptz,
  last_error text
);
create unique index lineage_backfills_running on lineage_backfills (workspace_id) where status = 'running';
create index lineage_backfills_ws on lineage_backfills (workspace_id, started_at desc);
-- The backfill walks a workspace's done writes newest first.
create index queries_ws_done_writes on queries (workspace_id, finished_at desc, id desc)
  where status = 'done' and statement_type in ('insert', 'merge', 'update', 'create');
