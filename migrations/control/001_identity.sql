-- Identity: users (people and service accounts), server-side sessions, access tokens; workspaces and members.
create extension if not exists pgcrypto;

create table users (
  id uuid primary key default gen_random_uuid(),
  email text unique,
  name text not null,
  role text not null check (role in ('admin', 'member')),
  kind text not null default 'user' check (kind in ('user', 'service_account')),
  auth_provider text not null default 'local',
  password_hash text,
  is_active boolean not null default true,
  created_at timestamptz not null default now()
);
create index users_kind_created on users (kind, created_at, id);

create table web_sessions (
  id_hash text primary key,
  user_id uuid not null references users(id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index web_sessions_user on web_sessions (user_id);

create table access_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id) on delete cascade,
  token_hash text not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz
);
create index access_tokens_user on access_tokens (user_id, created_at);

create table workspaces (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique,
  name text not null,
  default_catalog_id uuid,
  created_at timestamptz not null default now()
);

create table workspace_members (
  workspace_id uuid not null references workspaces(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  role text not null check (role in ('reader', 'writer', 'owner')),
  created_at timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
create index workspace_members_user on workspace_members (user_id);
