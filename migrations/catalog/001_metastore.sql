-- The Iceberg REST catalog's metastore (schema `catalog`). Table metadata itself lives in metadata files on the
-- warehouse storage; the row keeps the current file's location (the commit's compare-and-swap point, locked with
-- SELECT … FOR UPDATE) and a copy of its JSON, so loadTable is one indexed read.

-- One warehouse per Eider catalog: its root URI and the S3 endpoint and keys the catalog writes metadata with.
-- kind object_store: vended credentials are short-lived keys derived from secret_access_key (the bundled store
-- verifies them); kind s3: the configured keys are handed out as they are (no STS).
create table warehouses (
  name text primary key,
  root_uri text not null,
  kind text not null default 'object_store' check (kind in ('object_store', 's3')),
  endpoint text,
  region text not null default 'us-east-1',
  access_key_id text not null,
  secret_access_key text not null,
  path_style boolean not null default true,
  -- Bumping the epoch revokes every credential vended before.
  credential_epoch integer not null default 0,
  created_at timestamptz not null default now()
);

-- A namespace's levels joined by U+001F (the REST path encoding), with its depth for parent listings.
create table namespaces (
  warehouse text not null references warehouses (name) on delete cascade,
  namespace text not null,
  depth integer not null,
  properties text not null default '{}',
  created_at timestamptz not null default now(),
  primary key (warehouse, namespace)
);

create table tables (
  warehouse text not null,
  namespace text not null,
  name text not null,
  table_uuid uuid not null,
  metadata_location text not null,
  previous_metadata_location text,
  -- Exact text of the metadata file (int64 snapshot ids: never through jsonb and JSON.parse).
  metadata_json text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (warehouse, namespace, name),
  foreign key (warehouse, namespace) references namespaces (warehouse, namespace) on delete restrict on update cascade
);

-- Individually revoked vended credentials; rows past expires_at can be deleted (the store refuses those anyway).
create table revoked_credentials (
  access_key_id text primary key,
  warehouse text not null,
  expires_at timestamptz not null,
  revoked_at timestamptz not null default now()
);
create index revoked_credentials_expires_at on revoked_credentials (expires_at);
