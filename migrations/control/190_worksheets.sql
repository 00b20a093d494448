-- Worksheets: a member's SQL tabs kept on the server, private to their owner or shared with the workspace (read-only
-- for the other members). Only the owner edits or deletes one; a member leaving the workspace keeps no access to it.
create table worksheets (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces(id) on delete cascade,
  owner_id uuid not null references users(id) on delete cascade,
  title text not null,
  sql text not null default '',
  agent_id uuid references agents(id) on delete set null,
  catalog text,
  visibility text not null default 'private' check (visibility in ('private', 'workspace')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- "My worksheets" and "Shared in workspace", most recently changed first.
create index worksheets_owner on worksheets (workspace_id, owner_id, updated_at desc, id desc);
create index worksheets_shared on worksheets (workspace_id, updated_at desc, id desc) where visibility = 'workspace';
