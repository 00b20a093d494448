-- Saved queries (shared with a workspace's members), schedules that run them on a 5-field UTC cron, and the runs.
create table saved_queries (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces(id) on delete cascade,
  name text not null,
  sql text not null,
  default_agent_id uuid references agents(id) on delete set null,
  catalog text,
  created_by uuid references users(id) on delete set null,
  updated_by uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_run_at timestamptz,
  unique (workspace_id, name)
);
create index saved_queries_ws on saved_queries (workspace_id, created_at desc, id desc);

create table schedules (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces(id) on delete cascade,
  saved_query_id uuid not null references saved_queries(id) on delete cascade,
  cron text not null,
  agent_id uuid references agents(id) on delete set null,
  enabled boolean not null default true,
  created_by uuid references users(id) on delete set null,
  next_run_at timestamptz,
  last_run_at timestamptz,
  created_at timestamptz not null default now()
);
-- The scheduler's scan: enabled schedules that are due.
create index schedules_due on schedules (next_run_at) where enabled;

create table schedule_runs (
  id uuid primary key default gen_random_uuid(),
  schedule_id uuid not null references schedules(id) on delete cascade,
  workspace_id uuid not null references workspaces(id) on delete cascade,
  query_id uuid,
  -- queued until its query exists; then the query's status is the run's; skipped and failed runs may have none
  status text not null check (status in ('queued', 'skipped', 'failed', 'submitted')),
  scheduled_for timestamptz not null,
  started_at timestamptz not null default now(),
  error text
);
create index schedule_runs_schedule on schedule_runs (schedule_id, started_at desc, id desc);
create index schedule_runs_ws on schedule_runs (workspace_id, started_at desc, id desc);

alter table queries add column schedule_id uuid;
