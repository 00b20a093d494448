-- Agents (the registry of compute that dialled in), their access, bootstrap credentials; queries and their history.
create table agents (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  status text not null default 'registered',
  version text,
  capabilities jsonb not null default '{}'::jsonb,
  access_mode text not null default 'open' check (access_mode in ('open', 'restricted')),
  owner_url text,
  owner_replica text,
  result_url text,
  session_token_hash text unique,
  credential_revoked_at timestamptz,
  connected_at timestamptz,
  last_heartbeat_at timestamptz,
  disconnected_at timestamptz,
  created_at timestamptz not null default now()
);
create index agents_created on agents (created_at, id);

create table agent_bootstrap_tokens (
  id uuid primary key default gen_random_uuid(),
  token_hash text not null unique,
  name text,
  seeded boolean not null default false,
  created_by uuid references users(id) on delete set null,
  expires_at timestamptz,
  created_at timestamptz not null default now()
);

create table agent_grants (
  id uuid primary key default gen_random_uuid(),
  agent_id uuid not null references agents(id) on delete cascade,
  user_id uuid references users(id) on delete cascade,
  workspace_id uuid references workspaces(id) on delete cascade,
  tier text not null check (tier in ('use', 'operate', 'admin')),
  created_at timestamptz not null default now(),
  check ((user_id is null) <> (workspace_id is null)),
  check (workspace_id is null or tier <> 'admin')
);
create unique index agent_grants_user on agent_grants (agent_id, user_id) where user_id is not null;
create unique index agent_grants_workspace on agent_grants (agent_id, workspace_id) where workspace_id is not null;

create table queries (
  id uuid primary key,
  workspace_id uuid not null references workspaces(id) on delete cascade,
  agent_id uuid references agents(id) on delete set null,
  user_id uuid references users(id) on delete set null,
  sql text not null,
  status text not null check (status in ('queued', 'running', 'done', 'failed', 'cancelled')),
  statement_type text,
  origin text not null default 'api',
  session_id uuid,
  catalog text,
  timeout_s integer,
  tables jsonb not null default '[]'::jsonb,
  row_count bigint,
  duration_ms double precision,
  error text,
  error_code text,
  columns jsonb,
  column_schema jsonb,
  profile jsonb,
  result_path text,
  started_at timestamptz not null default now(),
  running_at timestamptz,
  finished_at timestamptz
);
create index queries_ws_started on queries (workspace_id, started_at desc, id desc);
create index queries_started on queries (started_at desc, id desc);
create index queries_agent_live on queries (agent_id) where status in ('queued', 'running');
create index queries_session on queries (session_id) where session_id is not null;

-- the connection actor whose projection the agent row shows: a stale socket ending never overwrites a newer one
alter table agents add column connection_id uuid;
