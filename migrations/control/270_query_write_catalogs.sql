-- The catalogs a statement may write (domain/catalogGrants.ts writeCatalogs), decided at submission from every
-- table name and CREATE/DROP SCHEMA target it holds: a session statement's dispatch reads them here to scope its
-- catalog token. Null on rows from before: their dispatch falls back to the catalogs their tables name.
alter table queries add column if not exists write_catalogs text[];
