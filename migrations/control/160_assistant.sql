-- The data assistant (issue 19): conversations private to the user who started them, their messages, the tool
-- calls the model asked for (what they were given, how they ended, the result the model read), and the turns
-- running now: one row per running turn is both the per-conversation "one turn at a time" rule and the
-- deployment-wide ASSISTANT_MAX_CONCURRENCY count, so every replica counts the same rows.
create table assistant_conversations (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  title text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index assistant_conversations_owner on assistant_conversations (workspace_id, user_id, created_at desc, id desc);

create table assistant_messages (
  -- chosen by the api before the model answers, so streamed text names the message it becomes
  id uuid primary key,
  conversation_id uuid not null references assistant_conversations(id) on delete cascade,
  seq bigint generated always as identity,
  role text not null check (role in ('user', 'assistant')),
  content text not null default '',
  -- assistant messages: how the model's answer ended (answer, tool_calls, length), or the api's own note ending a
  -- turn early (request_limit, output_limit, error); such notes are never replayed to the model
  finish text check (finish in ('answer', 'tool_calls', 'length', 'request_limit', 'output_limit', 'error')),
  created_at timestamptz not null default now()
);
create index assistant_messages_conversation on assistant_messages (conversation_id, seq);

create table assistant_tool_calls (
  id uuid primary key default gen_random_uuid(),
  message_id uuid not null references assistant_messages(id) on delete cascade,
  conversation_id uuid not null references assistant_conversations(id) on delete cascade,
  position int not null,
  -- the model's own id for the call, echoed back with its result
  call_id text not null,
  name text not null,
  -- the JSON text the model sent, as sent (it may not parse)
  arguments text not null,
  status text not null check (status in ('pending', 'approval_required', 'ok', 'error', 'rejected', 'skipped')),
  -- what the model read: the result within ASSISTANT_RESULT_ROW_CAP / ASSISTANT_RESULT_BYTE_CAP, or the error
  result text,
  truncated boolean not null default false,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  unique (message_id, position)
);
create index assistant_tool_calls_open on assistant_tool_calls (conversation_id) where status in ('pending', 'approval_required');

create table assistant_turns (
  id uuid primary key default gen_random_uuid(),
  conversation_id uuid not null unique references assistant_conversations(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  replica_id text not null,
  -- the turn's own token of its user; revoked when the turn ends, or by the next claim once the lease lapsed
  token_id uuid references access_tokens(id) on delete set null,
  started_at timestamptz not null default now(),
  -- renewed while the turn runs; a lapsed lease is a turn whose replica died, and frees its slot
  lease_until timestamptz not null
);
