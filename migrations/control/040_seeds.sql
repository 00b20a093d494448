-- One-time seeds (the `samples` table `eider up` creates for newcomers): what ran, with which query, and how it ended.
create table seeds (
  name text primary key,
  status text not null check (status in ('running', 'done', 'failed')),
  query_id uuid,
  error text,
  updated_at timestamptz not null default now()
);
