-- The project's documentation pages, indexed for full-text search (the /mcp and assistant documentation tools).
-- Rebuilt from ASSISTANT_DOCS_DIR at every api start.
create table doc_pages (
  path text primary key,
  title text not null,
  body text not null,
  tsv tsvector generated always as (setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')) stored,
  indexed_at timestamptz not null default now()
);
create index doc_pages_tsv on doc_pages using gin (tsv);
