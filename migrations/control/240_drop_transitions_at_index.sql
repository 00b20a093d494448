-- History is pruned by its actor's end (actors.updated_at of terminal actors), never by the transition's own time,
-- and read by (kind, id, seq): nothing uses this index. Every history insert maintained it, and its right-most leaf
-- page (a timestamp only grows) was where concurrent transitions queued for a lock.
drop index if exists actor_transitions_at_idx;
