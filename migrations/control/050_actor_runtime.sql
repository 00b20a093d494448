-- The actor runtime across replicas.
--
-- actor_effects is the outbox: a transition's effects are inserted by the same statement that persists it, so a
-- process that dies after the commit leaves them here, and the owning replica (or, once it is gone, another
-- replica) runs them. A row is deleted once its transition's effects have run.
-- The table holds only pending rows, so it stays small: one index (the key) keeps each transition's insert cheap, and
-- the effect runner's scans need no other.
create table actor_effects (
  kind text not null,
  actor_id uuid not null,
  version bigint not null,
  idx int not null,
  effect text not null,
  params jsonb,
  owner_replica text not null,
  attempts int not null default 0,
  last_error text,
  created_at timestamptz not null default now(),
  primary key (kind, actor_id, version, idx)
);

-- The replica registry: one row per live api process, heartbeated; a replica whose heartbeat is older than
-- AGENT_PRESENCE_TTL_S is gone, and its actors and pending effects are adopted by the others. `instance` tells two
-- processes claiming the same REPLICA_ID apart; host and pid let a restarted process take over the row its dead
-- predecessor on the same host left behind.
create table replicas (
  id text primary key,
  instance uuid not null,
  internal_url text not null,
  host text,
  pid int,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now(),
  draining boolean not null default false
);

-- Heartbeats persist the actor's snapshot and deadline but append no history row (a row every 10 s per agent
-- was ≈ 8,640 rows a day), so an actor's history may skip versions: seq is the version the transition produced.
-- Pruning finished actors' history by age.
create index actor_transitions_at_idx on actor_transitions (at);
