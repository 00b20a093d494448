-- Lineage follows renames by the Iceberg table uuid: an execution edge records the uuids of the tables it joins
-- (when the catalog could load them), so a rename moves exactly that table's edges to its new key.
alter table lineage_edges add column source_uuid uuid, add column target_uuid uuid;
create index lineage_edges_source_uuid on lineage_edges (source_uuid) where source_uuid is not null;
create index lineage_edges_target_uuid on lineage_edges (target_uuid) where target_uuid is not null;
