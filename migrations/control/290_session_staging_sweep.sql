-- Staging URLs a store cannot revoke (sts, static keys, azure SAS) live out their TTL: a session records the latest
-- expiry of the URLs it handed out, and when its staging area was swept after that (the session reaper's retention).
alter table sql_sessions
  add column staging_urls_expire_at timestamptz,
  add column staging_swept_at timestamptz;
create index sql_sessions_staging_sweep on sql_sessions (staging_urls_expire_at)
  where staging_swept_at is null and staging_urls_expire_at is not null;
