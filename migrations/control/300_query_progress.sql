-- A running query's latest progress as its agent reports it (query_progress frames, written by
-- domain/queries.ts recordProgress at most once a second per query): {percent, rows_processed, rows_total}. Null
-- before the first report, for plans the engine reports no progress for, and once the query has ended (the run's
-- projection clears it).
alter table queries add column if not exists progress jsonb;
