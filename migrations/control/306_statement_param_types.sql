-- The type a client declared for each `$n` of a session statement (the PostgreSQL wire endpoint's Parse), where
-- DuckDB cannot tell it from the value's position (`SELECT 40 + $1`): 'BIGINT', 'DOUBLE', 'BOOLEAN' or null (bound
-- as text, cast by position, as before). Null for every statement without declared types.
alter table queries add column if not exists param_types jsonb;
