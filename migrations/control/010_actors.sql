-- Persisted actors: one row per hosted machine instance (its latest snapshot and the columns projected from it),
-- and one row per accepted transition. `version` is the optimistic-concurrency token and equals the seq of the
-- actor's newest transition, so history is contiguous by construction.
create table actors (
  kind text not null,
  id uuid not null,
  version bigint not null,
  state text not null,
  status text not null,
  terminal boolean not null default false,
  deadline_at timestamptz,
  snapshot jsonb not null,
  owner_replica text,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (kind, id)
);

-- The reaper's scan: only live actors with a deadline, oldest deadline first.
create index actors_deadline_idx on actors (deadline_at) where not terminal and deadline_at is not null;

-- Rehydration at startup: the live actors a replica owns.
create index actors_owner_idx on actors (owner_replica) where not terminal;

create table actor_transitions (
  kind text not null,
  id uuid not null,
  seq bigint not null,
  event text not null,
  event_payload jsonb not null default '{}'::jsonb,
  from_state text,
  to_state text not null,
  at timestamptz not null,
  replica text not null,
  primary key (kind, id, seq)
);
