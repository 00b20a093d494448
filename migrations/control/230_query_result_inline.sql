-- A small result travels in its query_done frame and is kept here (the Parquet file itself), so its rows are
-- served without a read back from the agent.
alter table queries add column if not exists result_inline bytea;
