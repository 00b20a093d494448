-- The semantic layer: models per workspace and their definitions (datasets, relationships, dimensions, metrics).
-- A definition is a small document validated by its effect Schema at the boundary; the rules that span kinds
-- (a metric's dataset exists, a dataset is still bound) are the domain's, uniqueness per kind is the database's.
create table semantic_models (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces(id) on delete cascade,
  slug text not null,
  name text not null,
  description text not null default '',
  status text not null default 'draft' check (status in ('draft', 'published', 'deprecated')),
  -- the import set that owns the model (native, transform); null for a model made through the api
  provider text,
  validation_state text not null default 'unchecked' check (validation_state in ('ok', 'broken', 'unchecked')),
  validation_problems jsonb not null default '[]'::jsonb,
  checked_at timestamptz,
  created_by uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, slug)
);
create index semantic_models_provider on semantic_models (workspace_id, provider) where provider is not null;

create table semantic_definitions (
  model_id uuid not null references semantic_models(id) on delete cascade,
  kind text not null check (kind in ('dataset', 'relationship', 'dimension', 'metric')),
  name text not null,
  spec jsonb not null,
  validation_state text not null default 'unchecked' check (validation_state in ('ok', 'broken', 'unchecked')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (model_id, kind, name)
);
-- the table route asks which datasets bind a table
create index semantic_datasets_by_table on semantic_definitions ((spec->>'catalog'), (spec->>'schema_name'), (spec->>'table_name'))
  where kind = 'dataset';
