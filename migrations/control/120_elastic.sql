-- Elastic compute: agents provisioned on demand. An elastic agent is an `agents` row (its identity, grants and
-- history survive restarts) with one `elastic_agents` row per incarnation (one provider instance, one
-- elasticAgent actor with the same id); `agents.elastic_id` is the current incarnation.
create table elastic_agents (
  id uuid primary key,
  agent_id uuid not null references agents(id) on delete cascade,
  -- the storage shape it serves (pool dispatch), or `agent:<id>` for an agent started by an operator
  pool text not null,
  provider text not null,
  size text not null,
  cpu double precision not null,
  memory_gb double precision not null,
  hourly_cost double precision,
  status text not null,
  reason text,
  error text,
  provider_ref text,
  provisioned_at timestamptz,
  terminated_at timestamptz,
  created_at timestamptz not null default now()
);
create index elastic_agents_live on elastic_agents (pool, status) where status not in ('terminated', 'failed');
create index elastic_agents_agent on elastic_agents (agent_id, created_at desc);

alter table agents add column elastic_id uuid;

-- A bootstrap token minted for one pre-created agent row: spending it gives that row its session credential.
alter table agent_bootstrap_tokens add column agent_id uuid references agents(id) on delete cascade;

-- What queued work without an agent waits for: a pool key, or `agent:<id>` for a named elastic agent restarting.
alter table queries add column compute_pool text;
alter table sql_sessions add column compute_pool text;
create index queries_awaiting_compute on queries (compute_pool) where status = 'queued' and agent_id is null;
create index sql_sessions_awaiting_compute on sql_sessions (compute_pool) where status = 'pending' and agent_id is null;
