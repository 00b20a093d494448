-- SQL sessions: the entity row of each sqlSession actor (its projection, written with every transition). A
-- session's statements are queries rows (origin 'session', session_id set), hosted as statement actors.
create table sql_sessions (
  id uuid primary key,
  workspace_id uuid not null references workspaces(id) on delete cascade,
  user_id uuid references users(id) on delete set null,
  agent_id uuid references agents(id) on delete set null,
  status text not null check (status in ('pending', 'opening', 'open', 'closing', 'closed', 'failed')),
  active_catalog text,
  staging_uri text,
  error text,
  error_code text,
  close_reason text,
  client_name text,
  client_version text,
  statement_count integer not null default 0,
  created_at timestamptz not null default now(),
  opened_at timestamptz,
  last_active_at timestamptz not null default now(),
  closed_at timestamptz
);
create index sql_sessions_ws_created on sql_sessions (workspace_id, created_at desc, id desc);
create index sql_sessions_agent_live on sql_sessions (agent_id) where status in ('pending', 'opening', 'open', 'closing');
