-- How the catalog service vends credentials for a backend, as the probe at registration found it
-- (docs/catalogs.md "Storage backends"): derived (Eider's object stores verify keys derived from the backend
-- secret: short-lived, prefix-scoped, revocable), static (an S3-compatible store that cannot: the backend's own
-- keys), sas (azure: a short-lived SAS per table directory). Backends registered before the probe keep what the
-- catalog did for them then. Their secrets are sealed with SECRET_KEY at the next start (settings/secretBox.ts).
alter table storage_backends add column credential_vending text not null default 'derived'
  check (credential_vending in ('derived', 'static', 'sas'));
update storage_backends set credential_vending = 'static' where kind = 's3';
update storage_backends set credential_vending = 'sas' where kind = 'azure';
