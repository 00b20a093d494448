-- Vending mode sts (docs/catalog.md "Vended credentials"): temporary credentials from the store's STS AssumeRole,
-- limited by an inline session policy to the table's prefix.
alter table warehouses drop constraint if exists warehouses_vending_check;
alter table warehouses add constraint warehouses_vending_check check (vending in ('derived', 'sts', 'static', 'sas'));
