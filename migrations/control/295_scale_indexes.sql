-- Indexes for reads whose cost grew with the history (bench/scale.ts; docs/performance.md "Cost as work grows").
--
-- History sorted by duration, newest-key first (the default direction): without it every such page sorted the whole
-- workspace's history. The expression is listHistory's sort key, written the same way so the planner matches it.
create index if not exists queries_ws_duration on queries (
  workspace_id,
  (case when finished_at is null then null else coalesce(duration_ms, extract(epoch from (finished_at - started_at)) * 1000) end) desc nulls last,
  id desc
);
-- History of one agent (the agent_id filter): an agent that ran few of the queries was found by walking the whole
-- workspace's history.
create index if not exists queries_agent_started on queries (agent_id, started_at desc, id desc) where agent_id is not null;
-- An agent's last hour (its monitoring counts) read that agent's every query ever.
create index if not exists queries_agent_finished on queries (agent_id, finished_at) where agent_id is not null and finished_at is not null;
-- A session's statements, newest first, without sorting all of them.
create index if not exists queries_session_started on queries (session_id, started_at desc, id desc) where session_id is not null;
drop index if exists queries_session;
-- The hourly prune of inline results read every queries row (a sequential scan of the whole history).
create index if not exists queries_inline_finished on queries (finished_at) where result_inline is not null;
-- The scheduler's tick (runs left queued by a stopped scheduler) read every run ever.
create index if not exists schedule_runs_queued on schedule_runs (started_at) where status = 'queued';
