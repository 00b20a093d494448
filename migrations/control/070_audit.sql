-- The audit trail: one row per security-relevant action (sign-in, tokens, roles, grants, agent credentials, catalog
-- and backend changes, policy rejections). Append-only: rows are never updated, and deleted only by the retention
-- prune (AUDIT_RETENTION_DAYS), which says so with the transaction-local setting eider.audit_prune.
create table audit_events (
  id uuid primary key default gen_random_uuid(),
  at timestamptz not null default clock_timestamp(),
  action text not null,
  outcome text not null check (outcome in ('success', 'failure')),
  actor_kind text not null check (actor_kind in ('user', 'service_account', 'agent', 'anonymous')),
  actor_id uuid,
  actor_email text,
  target_kind text,
  target_id text,
  replica_id text not null,
  request_id text,
  details jsonb not null default '{}'::jsonb
);
-- Newest first, optionally narrowed by action or actor (GET /admin/audit).
create index audit_events_at on audit_events (at desc, id desc);
create index audit_events_action_at on audit_events (action, at desc, id desc);
create index audit_events_actor_at on audit_events (actor_id, at desc, id desc);

create function audit_events_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('eider.audit_prune', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_events is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
end
$$;
create trigger audit_events_append_only before update or delete on audit_events
  for each row execute function audit_events_append_only();
create trigger audit_events_no_truncate before truncate on audit_events
  for each statement execute function audit_events_append_only();
