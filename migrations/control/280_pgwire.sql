-- The PostgreSQL wire endpoint (docs/postgres-protocol.md).
-- A session statement's `$n` values (text form, null for SQL NULL), bound on the agent through a prepared statement.
alter table queries add column if not exists params jsonb;
-- Each wire connection's BackendKeyData: a CancelRequest arrives on a new connection, possibly at another replica,
-- and names the session only by (process id, secret key). Removed when the connection ends.
create table if not exists pgwire_backends (
  process_id integer primary key,
  secret_key integer not null,
  session_id uuid not null,
  created_at timestamptz not null default now()
);
create index if not exists pgwire_backends_session on pgwire_backends (session_id);
-- SCRAM-SHA-256 verifiers of tokens (never the token): recorded when a token authenticates over TLS, so the same
-- token then authenticates without TLS with SCRAM. One salt per user: the server names the salt before it knows
-- which of the user's tokens the client holds. Gone with the token.
create table if not exists pgwire_scram_verifiers (
  token_id uuid primary key references access_tokens (id) on delete cascade,
  user_id uuid not null,
  salt text not null,
  iterations integer not null,
  stored_key text not null,
  server_key text not null
);
create index if not exists pgwire_scram_verifiers_user on pgwire_scram_verifiers (user_id);
