-- A personal or service-account token may carry a name saying what it is for ("laptop dbt", "nightly export"):
-- shown in token lists, never used to authenticate.
alter table access_tokens add column name text;
