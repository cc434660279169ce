-- A bulk load under way (src/families/utxo/bulkLoad.ts; src/indexer/bulk.ts): while the index is far behind
-- the head, groups go in by COPY and the read side's indexes are dropped; the address totals, the scripts and
-- the days' figures of the blocks from `from_block` up are made from the rows when it ends. This row says a
-- bulk load has begun and not ended, so that a restart (or one after a crash) resumes or finishes it, and
-- keeps the dropped indexes' definitions (pg_indexes.indexdef, as they were made) to build them again with.
create table if not exists bulk_load (
  id integer primary key default 1 check (id = 1),
  from_block bigint not null,
  index_names text[] not null,
  index_definitions text[] not null
);
