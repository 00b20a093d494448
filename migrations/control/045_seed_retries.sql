-- A failed seed is retried with backoff (issue 23): how many attempts it took, and when the next may start.
alter table seeds add column attempts integer not null default 0;
alter table seeds add column retry_at timestamptz;
