-- Name search over namespaces and tables (docs/catalog.md "Name search"): every name is indexed at each of its word
-- starts, so a search is one btree range scan whatever the warehouse holds. pg_trgm would find any substring but is
-- not in every PostgreSQL an operator points DATABASE_URL at; a btree is.
--
-- A word starts at the name's first character, at a letter or digit after any other character (`_`, `-`, `.`, a
-- space), at an upper-case letter after a lower-case one (camelCase) and where letters and digits meet. The term is
-- the lower-cased name from that start to its end: `sales_Orders2024` gives `sales_orders2024` (whole), then
-- `orders2024` and `2024`, so `ord`, `orders20` and `sales_or` find it, `rders` does not.
create function name_search_terms(n text) returns table (term text, whole boolean)
language sql immutable strict parallel safe as $$
  -- U+0001 before each word start but the first, one regexp_replace per name; each piece's term runs to the end.
  select lower(substr(n, 1 + coalesce(sum(length(p)) over (order by i rows between unbounded preceding and 1 preceding), 0)::int)), i = 1
    from string_to_table(
           regexp_replace(n, '(?<=[^[:alnum:]])[[:alnum:]]|(?<=[[:lower:]])[[:upper:]]|(?<=[[:alpha:]])[[:digit:]]|(?<=[[:digit:]])[[:alpha:]]', chr(1) || '\&', 'g'),
           chr(1)) with ordinality s(p, i)
$$;

-- One row per term of a table's name (name = the table) or of a namespace's (name = ''; the levels joined by '.').
-- The key is the search's order: whole-name matches first, then by term; a prefix of `term` is a range (collation C
-- compares bytes, so every term starting with q lies in [q, q || U+10FFFF)).
create table name_search (
  warehouse text not null,
  whole boolean not null,
  term text collate "C" not null,
  namespace text not null,
  name text not null,
  primary key (warehouse, whole, term, namespace, name)
);

-- Kept by triggers, so every way a row is written (the REST routes, a relocation, a restore, a bench's bulk insert)
-- keeps the index: statement-level for inserts and deletes (one set-based write per statement), row-level for a
-- rename (commits update metadata_json only and do not fire it).
create function name_search_tables_added() returns trigger language plpgsql as $$
begin
  insert into catalog.name_search (warehouse, whole, term, namespace, name)
  select a.warehouse, t.whole, t.term, a.namespace, a.name from added a, catalog.name_search_terms(a.name) t
  on conflict do nothing;
  return null;
end $$;

create function name_search_tables_removed() returns trigger language plpgsql as $$
begin
  delete from catalog.name_search s
   using removed r, catalog.name_search_terms(r.name) t
   where s.warehouse = r.warehouse and s.whole = t.whole and s.term = t.term and s.namespace = r.namespace and s.name = r.name;
  return null;
end $$;

create function name_search_tables_renamed() returns trigger language plpgsql as $$
begin
  delete from catalog.name_search s
   using catalog.name_search_terms(old.name) t
   where s.warehouse = old.warehouse and s.whole = t.whole and s.term = t.term and s.namespace = old.namespace and s.name = old.name;
  insert into catalog.name_search (warehouse, whole, term, namespace, name)
  select new.warehouse, t.whole, t.term, new.namespace, new.name from catalog.name_search_terms(new.name) t
  on conflict do nothing;
  return null;
end $$;

create trigger name_search_tables_added after insert on tables referencing new table as added
  for each statement execute function name_search_tables_added();
create trigger name_search_tables_removed after delete on tables referencing old table as removed
  for each statement execute function name_search_tables_removed();
create trigger name_search_tables_renamed after update of warehouse, namespace, name on tables
  for each row when (old.warehouse is distinct from new.warehouse or old.namespace is distinct from new.namespace or old.name is distinct from new.name)
  execute function name_search_tables_renamed();

create function name_search_namespaces_added() returns trigger language plpgsql as $$
begin
  insert into catalog.name_search (warehouse, whole, term, namespace, name)
  select a.warehouse, t.whole, t.term, a.namespace, '' from added a, catalog.name_search_terms(replace(a.namespace, chr(31), '.')) t
  on conflict do nothing;
  return null;
end $$;

create function name_search_namespaces_removed() returns trigger language plpgsql as $$
begin
  delete from catalog.name_search s
   using removed r, catalog.name_search_terms(replace(r.namespace, chr(31), '.')) t
   where s.warehouse = r.warehouse and s.whole = t.whole and s.term = t.term and s.namespace = r.namespace and s.name = '';
  return null;
end $$;

create trigger name_search_namespaces_added after insert on namespaces referencing new table as added
  for each statement execute function name_search_namespaces_added();
create trigger name_search_namespaces_removed after delete on namespaces referencing old table as removed
  for each statement execute function name_search_namespaces_removed();

-- What exists already.
insert into name_search (warehouse, whole, term, namespace, name)
select n.warehouse, t.whole, t.term, n.namespace, '' from namespaces n, name_search_terms(replace(n.namespace, chr(31), '.')) t
on conflict do nothing;
insert into name_search (warehouse, whole, term, namespace, name)
select b.warehouse, t.whole, t.term, b.namespace, b.name from tables b, name_search_terms(b.name) t
on conflict do nothing;
