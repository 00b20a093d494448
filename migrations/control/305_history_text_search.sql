-- History searched by its SQL text (the `q` filter, `sql ilike '%…%'`): a text that few queries contain read the
-- workspace's whole history to find them (3.3 s at 10M rows on an idle 2-core machine; 304 ms with this index). A
-- trigram index answers any substring of three or more characters; a text most queries contain is still found
-- faster by walking the history newest first, and the planner keeps that plan for it. pg_trgm ships with
-- PostgreSQL and is a trusted extension (a database owner may create it, as pgcrypto).
create extension if not exists pg_trgm;
create index if not exists queries_sql_trgm on queries using gin (sql gin_trgm_ops);
