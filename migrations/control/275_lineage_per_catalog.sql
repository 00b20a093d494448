-- Lineage is a property of the catalog's tables, not of the workspace that saw it written: every workspace that
-- attaches a catalog sees its edges (node keys name the catalog by its slug, unique across the service). Edges that
-- several workspaces recorded for the same (source, target, provider) merge into one: the earliest first sighting,
-- the latest last sighting, their observations added up, and the newest sighting's columns and query.
create temporary table lineage_merged on commit drop as
  select source_key, target_key, provider,
         min(first_seen_at) as first_seen_at,
         max(last_seen_at) as last_seen_at,
         sum(observation_count)::bigint as observation_count,
         (array_agg(columns order by last_seen_at desc))[1] as columns,
         (array_agg(column_lineage order by last_seen_at desc))[1] as column_lineage,
         (array_agg(last_query_id order by last_seen_at desc) filter (where last_query_id is not null))[1] as last_query_id,
         (array_agg(source_uuid order by last_seen_at desc) filter (where source_uuid is not null))[1] as source_uuid,
         (array_agg(target_uuid order by last_seen_at desc) filter (where target_uuid is not null))[1] as target_uuid
    from lineage_edges
   group by source_key, target_key, provider;
delete from lineage_edges;
alter table lineage_edges drop constraint lineage_edges_pkey;
drop index lineage_edges_target;
drop index lineage_edges_source;
alter table lineage_edges drop column workspace_id;
insert into lineage_edges (source_key, target_key, provider, first_seen_at, last_seen_at, observation_count, columns, column_lineage,
                           last_query_id, source_uuid, target_uuid)
  select source_key, target_key, provider, first_seen_at, last_seen_at, observation_count, columns, column_lineage,
         last_query_id, source_uuid, target_uuid
    from lineage_merged;
alter table lineage_edges add primary key (source_key, target_key, provider);
create index lineage_edges_target on lineage_edges (target_key);
