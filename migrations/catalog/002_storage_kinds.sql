-- Storage kinds beyond S3 and how each warehouse's credentials are vended (docs/catalog.md "Vended credentials"):
--   derived  short-lived keys derived from the warehouse secret, verified by Eider's own object stores
--   static   the warehouse's configured keys as they are (a store with no way to scope a key)
--   sas      azure: a short-lived SAS signed with the account key, scoped to the table's directory
-- read_only: set while a storage migration copies the warehouse; commits are refused until the cutover.
alter table warehouses drop constraint if exists warehouses_kind_check;
alter table warehouses add constraint warehouses_kind_check check (kind in ('object_store', 's3', 'azure'));
alter table warehouses add column vending text not null default 'derived' check (vending in ('derived', 'static', 'sas'));
update warehouses set vending = 'static' where kind = 's3';
alter table warehouses add column read_only boolean not null default false;
