-- role_arn (docs/catalogs.md "Storage backends"): the IAM role an s3 or object_store backend's STS AssumeRole
-- assumes for sts vending (AWS STS requires one; MinIO-like stores take none). Not a secret: it is shown back.
alter table storage_backends add column if not exists role_arn text;
