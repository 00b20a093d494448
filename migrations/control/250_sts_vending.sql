-- Vending mode sts (docs/catalogs.md "Storage backends"): an S3-compatible store with STS AssumeRole gets temporary
-- credentials limited by an inline session policy to the table's prefix; the probe at registration finds it.
alter table storage_backends drop constraint if exists storage_backends_credential_vending_check;
alter table storage_backends add constraint storage_backends_credential_vending_check
  check (credential_vending in ('derived', 'sts', 'static', 'sas'));
