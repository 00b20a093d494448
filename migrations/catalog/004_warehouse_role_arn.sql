-- role_arn (docs/catalog.md "Vended credentials"): the IAM role sts vending assumes, sent as RoleArn in AssumeRole
-- (AWS STS requires one; MinIO-like stores take none).
alter table warehouses add column if not exists role_arn text;
